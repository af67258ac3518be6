"""Storage (a refcounted block of bytes) and sharing between processes:
exported descriptors and the pickling of tensors and storages."""

from __future__ import annotations

import ctypes
from contextlib import closing as _closing
from typing import Any, Optional, Sequence, Tuple
from ctypes import byref, c_int, c_int64, c_uint64, c_void_p

from ._capi import (ERR_INVALID_ARGUMENT, InvalidArgumentError, SHARE_DESC_SIZE, SmDevice,
                    StrideMemError, _call, error_for)
from .dtypes import _dtype_code
from .devices import Device, _i64, _out
from ._tensor import Tensor, _Owner, _refuse_compare
from .creation import empty


def _unpickle_storage(*tensor_args: Any) -> "Storage":
    """Rebuilds a pickled storage (Storage.__reduce__): the storage of the
    pickled uint8 tensor of all its bytes."""
    with _closing(_unpickle_tensor(*tensor_args)) as t:
        return t.storage()


def _export_shared(fn: str, handle: Any) -> Tuple[bytes, int]:
    """sm_storage_export / sm_tensor_export: (the SHARE_DESC_SIZE descriptor
    bytes, a new fd the caller closes; -1 for CUDA)."""
    desc = ctypes.create_string_buffer(SHARE_DESC_SIZE)
    fd = c_int(-1)
    _call(fn, handle, desc, byref(fd))
    return desc.raw, fd.value


def _unpickle_tensor(fmt: int, dtype: str, shape: Sequence[int], strides: Sequence[int],
                     offset: int, device: str, data: bytes) -> Tensor:
    """Rebuilds a pickled tensor (Tensor.__reduce__): the bytes go into a new
    CPU storage, viewed with the pickled shape, strides and offset, then
    moved to the pickled device."""
    if fmt != 1:
        raise ValueError("stridemem: pickle format %r comes from a newer stridemem; "
                         "this one reads format 1" % (fmt,))
    with _closing(empty(len(data), dtype="uint8")) as raw:
        if data:
            ctypes.memmove(raw.data_ptr, data, len(data))
        with _closing(raw.storage()) as st:
            t = st.tensor(shape, strides, offset, dtype)
    dev = Device(device)
    if dev == "cpu":
        return t
    with _closing(t):
        try:
            return t.to(dev)
        except StrideMemError as e:
            raise error_for(e.status, "%s (the tensor was pickled on %s; this process "
                            "cannot allocate there: unpickle where that device exists, "
                            "or pickle t.cpu())" % (e.message, dev), e.function) from None


# --------------------------------------------------------------------------
# Storage and stack handles
# --------------------------------------------------------------------------


class Storage(_Owner):
    """A refcounted block of bytes (sm_storage); close() drops this owner,
    the bytes live on while a tensor views them."""

    __slots__ = ("_h",)
    _RELEASE = "sm_storage_release"

    @classmethod
    def _wrap(cls, handle):
        s = object.__new__(cls)
        s._h = handle.value if isinstance(handle, c_void_p) else handle
        return s

    # Each t.storage() is a new Python owner: identity (Python's default ==)
    # would call two owners of one storage different. Refused; hashing
    # stays by identity.
    def __eq__(self, other: object) -> bool:
        _refuse_compare("Storage", "==")

    def __ne__(self, other: object) -> bool:
        _refuse_compare("Storage", "!=")

    __hash__ = _Owner.__hash__

    @property
    def handle(self) -> Optional[int]:
        """The raw sm_storage handle (int) or None once closed."""
        return self._h

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        v = c_int64()
        _call("sm_storage_size", self._h, byref(v))
        return v.value

    @property
    def data_ptr(self) -> int:
        """Address of the first byte; 0 when there is no memory."""
        p = c_void_p()
        _call("sm_storage_data_ptr", self._h, byref(p))
        return p.value or 0

    @property
    def device(self) -> Device:
        """The :class:`Device` the bytes live on."""
        d = SmDevice()
        _call("sm_storage_device", self._h, byref(d))
        return Device(d)

    @property
    def id(self) -> int:
        """A number no other storage of this process has had (from 1;
        sm_storage_id): memory_snapshot() names the storage holding each
        allocated block by it."""
        v = c_uint64()
        _call("sm_storage_id", self._h, byref(v))
        return v.value

    def __reduce__(self) -> Tuple[Any, ...]:
        """pickle by value: the device and a copy of the bytes (the raw
        handle means nothing in another process, and unpickled here it would
        be a second owner of one reference). multiprocessing sends a shared
        storage by fd instead (stridemem.multiprocessing)."""
        with _closing(self.tensor((self.nbytes,), (1,), 0, "uint8")) as raw:
            return (_unpickle_storage, raw.__reduce__()[1])

    @property
    def is_shared(self) -> bool:
        """True when another process can map these bytes (shared CPU memory,
        CUDA memory through CUDA IPC, an imported storage)."""
        v = c_int()
        _call("sm_storage_is_shared", self._h, byref(v))
        return bool(v.value)

    def export(self) -> Tuple[bytes, int]:
        """(descriptor, fd): the SHARE_DESC_SIZE bytes of an sm_share_desc
        and a new close-on-exec file descriptor that the caller owns and
        closes once it has been sent (-1 for CUDA, whose handle travels in
        the descriptor). Send both by any means that passes fds
        (multiprocessing pickling does it for tensors and storages;
        socket.send_fds); Storage.from_shared opens them on the other side.
        UnsupportedError for CPU memory that is not shared
        (Tensor.share_memory_ first)."""
        return _export_shared("sm_storage_export", self._h)

    @classmethod
    def from_shared(cls, desc: bytes, fd: int = -1) -> "Storage":
        """A storage over another process's export (desc, fd as export()
        gave them): the same pages, so writes show on both sides. fd stays
        the caller's (close it when done). A forged, corrupted or foreign
        descriptor, a wrong fd or a regular file raise with nothing mapped
        and no fd kept."""
        raw = bytes(desc)
        if len(raw) != SHARE_DESC_SIZE:
            raise InvalidArgumentError(ERR_INVALID_ARGUMENT,
                                       "stridemem: a share descriptor is %d bytes, got %d"
                                       % (SHARE_DESC_SIZE, len(raw)), "Storage.from_shared")
        buf = ctypes.create_string_buffer(raw, SHARE_DESC_SIZE)
        out = _out()
        _call("sm_storage_import", buf, int(fd), byref(out))
        return cls._wrap(out)

    def tensor(self, shape: Sequence[int], strides: Sequence[int], storage_offset: int,
               dtype: Any) -> Tensor:
        """A tensor of any dtype viewing this storage (no copy): shape,
        strides and storage_offset in elements of dtype, bounds-checked as
        as_strided."""
        sh, n = _i64(shape)
        st, m = _i64(strides)
        if n != m:
            raise ValueError("stridemem: shape and strides differ in length")
        out = _out()
        _call("sm_tensor_from_storage", self._h, sh, st, n, int(storage_offset),
              _dtype_code(dtype), byref(out))
        return Tensor._wrap(out)
