"""The Tensor class and the Storage class, which return each other
(``Tensor.storage()``, ``Storage.tensor()``), with what the pair needs: the
pickling of both (``_unpickle_tensor``, ``_unpickle_storage``), the sharing
descriptors (``_export_shared``) and repr's formatting.

Tensor puts together the mixins below it, each over _TensorHandle (_handle:
the handle, its lifetime and metadata): _views (views and copies), _inplace
(in-place arithmetic), _host_exchange (the NumPy side), _indexing and
_dlpack_export; it adds copying, pickling, sharing, repr, Python scalars and
comparisons. storage.py re-exports Storage and the unpickling functions under
the names that existing pickles use."""

from __future__ import annotations

import ctypes
import sys
from contextlib import closing as _closing
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple
from ctypes import byref, c_int, c_int64, c_uint64, c_void_p

from ._capi import (ERR_INVALID_ARGUMENT, ERR_INVALID_HANDLE, MAX_DIMS, SHARE_DESC_SIZE,
                    InvalidArgumentError, SmDevice, StrideMemError, UnsupportedError, _call,
                    error_for)
from .dtypes import _dtype_code, _np
from .devices import Device, _i64, _out
from ._handle import _Owner, _refuse_compare
from ._from_host import _empty_handle
from ._views import _Views
from ._inplace import _InPlace
from ._host_exchange import _HostExchange
from ._indexing import _Indexing
from ._dlpack_export import _DLPackExport


# --------------------------------------------------------------------------
# Pickling and sharing of tensors and storages
# --------------------------------------------------------------------------


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
    with _closing(Tensor._wrap(_empty_handle((len(data),), "uint8"))) as raw:
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
# Tensor
# --------------------------------------------------------------------------


class Tensor(_Indexing, _InPlace, _HostExchange, _Views, _DLPackExport):
    """A strided view over a storage; owns one reference to a C handle."""

    __slots__ = ()

    # -- copy, deepcopy, pickle ----------------------------------------------
    def __copy__(self) -> "Tensor":
        """copy.copy: a new owner of the same view (no data copied)."""
        return self.retain()

    def __deepcopy__(self, memo: Dict[Any, Any]) -> "Tensor":
        """copy.deepcopy: new data. As in PyTorch, the whole storage is copied
        once per deepcopy call and every view of it copied in the same call
        views the one new storage, with the same shape, strides and offset
        (so `copy.deepcopy([a, a[1:]])` keeps the two sharing). A tensor
        carved from a stack of views has no storage of its own: it is
        cloned (memory_format preserve)."""
        try:
            storage = self.storage()
        except UnsupportedError:
            return self.clone("preserve")
        with _closing(storage):
            nbytes = storage.nbytes
            key: Tuple[Any, ...] = ("stridemem.storage", storage.data_ptr,
                                    tuple(storage.device), nbytes)
            if nbytes == 0 or key[1] == 0:
                key = ("stridemem.storage.empty", id(self))
            new = memo.get(key)
            if new is None:
                with _closing(storage.tensor((nbytes,), (1,), 0, "uint8")) as raw:
                    with _closing(raw.clone()) as fresh:
                        new = fresh.storage()
                memo[key] = new
        return new.tensor(self.shape, self.strides, self.storage_offset, self.dtype)

    def __reduce__(self) -> Tuple[Any, ...]:
        """pickle by value: dtype, shape, device and the data; the strides
        too when they are non-overlapping and dense (a permuted or
        channels-last tensor unpickles with the same strides), else
        row-major. Views pickle independently (no storage sharing)."""
        dense = self.clone("preserve")  # keeps non-overlapping dense strides
        host = dense if dense.device == "cpu" else dense.to("cpu")
        with _closing(host.storage()) as st:
            nbytes = st.nbytes
            data = ctypes.string_at(st.data_ptr, nbytes) if nbytes else b""
        return (_unpickle_tensor, (1, self.dtype.name, host.shape, host.strides,
                                   host.storage_offset, str(self.device), data))

    def storage(self) -> "Storage":
        """A new owner of the storage this tensor views (no copy).
        UnsupportedError for a tensor carved from a stack of views."""
        out = _out()
        _call("sm_tensor_storage", self._h, byref(out))
        return Storage._wrap(out)

    # -- sharing with other processes (docs/SCALE_OUT.md) -------------------
    def share_memory_(self) -> "Tensor":
        """PyTorch's share_memory_(): moves this tensor's CPU storage into
        shared memory once (one copy; every view of it follows); a no-op when
        it is already shared and for CUDA tensors. Then pickling it through
        multiprocessing passes a file descriptor, not the bytes. Refused
        (UnsupportedError) for stack tensors (use Stack(..., shared=True)),
        memory stridemem does not own (from_numpy_blob, DLPack imports: use
        empty_shared and copy) and storages with a live DLPack export.
        Arrays taken before (np.asarray(t), data_ptr) point to freed memory
        afterwards: share first, then hand the memory out."""
        _call("sm_share_memory", self._h)
        return self

    def is_shared(self) -> bool:
        """True when this tensor's storage can go to another process as it
        is: shared CPU memory, or CUDA memory (through CUDA IPC)."""
        v = c_int()
        _call("sm_is_shared", self._h, byref(v))
        return bool(v.value)

    def _export(self) -> Tuple[bytes, int]:
        """(descriptor bytes, fd) of this tensor's shared storage, stack
        buffers included (Storage.export says the rest)."""
        return _export_shared("sm_tensor_export", self._h)

    @property
    def storage_id(self) -> int:
        """The id of the storage this tensor views (Storage.id): the
        ``storage`` of its block in memory_snapshot(). UnsupportedError for a
        tensor carved from a stack of views."""
        with self.storage() as s:
            return s.id

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        for i in range(len(self)):
            yield self.select(0, i)

    @property
    def is_view(self) -> bool:
        """True when this tensor does not see its storage as a fresh tensor
        would: a nonzero offset, strides other than row-major, or a storage
        larger than its elements (a slice, a permutation, an expansion...)."""
        return (self.storage_offset != 0 or not self.is_contiguous()
                or self.nbytes != self.storage_nbytes)

    def __repr__(self) -> str:
        """The values as NumPy prints them (abbreviated past NumPy's print
        threshold, without copying more than the printed edges to the host),
        then dtype, device, strides, and for views the offset and storage
        size. bfloat16 values print as floats."""
        if not self._h:
            return "<stridemem.Tensor (closed)>"
        try:
            shape, numel = self.shape, self.numel
        except StrideMemError as e:  # a repr never raises
            if e.status == ERR_INVALID_HANDLE and "Stack.pop_to()" in e.message:
                return ("<stridemem.Tensor (invalid: its stack region was popped by "
                        "Stack.pop_to(); only close() accepts it now)>")
            return "<stridemem.Tensor (invalid: %s)>" % (e.message,)
        try:
            body = _format_values(self, "tensor(")
        except Exception as e:  # never let a repr fail: show the metadata
            body = "tensor(<values unavailable: %s>" % (e,)
        meta = []
        if numel == 0 and len(shape) != 1:
            meta.append("shape=%s" % (shape,))
        meta += ["dtype=%s" % self.dtype.name, "device=%s" % (self.device,),
                 "strides=%s" % (self.strides,)]
        if self.is_view:
            meta.append("offset=%d, view of a %d-byte storage"
                        % (self.storage_offset, self.storage_nbytes))
        return "%s, %s)" % (body, ", ".join(meta))

    __str__ = __repr__

    # -- Python scalars -------------------------------------------------------
    def _one(self, what: str) -> Any:
        if self.numel != 1:
            raise TypeError("stridemem: only a one-element tensor converts to a Python "
                            "%s (this one has %d elements)" % (what, self.numel))
        return self.item()

    def __float__(self) -> float:
        return float(self._one("float"))

    def __int__(self) -> int:
        return int(self._one("int"))

    def __complex__(self) -> complex:
        return complex(self._one("complex"))

    def __bool__(self) -> bool:
        n = self.numel
        if n != 1:
            raise ValueError("stridemem: the truth value of a tensor with %d elements is "
                             "ambiguous (use a reduction on a NumPy copy)" % n)
        return bool(self.item())

    # -- comparisons ----------------------------------------------------------
    # The C library has no elementwise comparison, and Python's default ==
    # compares identity: a == a[:] and t == 1 would answer False, silently
    # and wrongly. They raise instead, saying how to compare. Hashing stays
    # by identity, so tensors still serve as dict keys and set members, and
    # `t in [t]` holds (containment checks identity before ==).
    def __eq__(self, other: object) -> bool:
        _refuse_compare("Tensor", "==")

    def __ne__(self, other: object) -> bool:
        _refuse_compare("Tensor", "!=")

    def __lt__(self, other: object) -> bool:
        _refuse_compare("Tensor", "<")

    def __le__(self, other: object) -> bool:
        _refuse_compare("Tensor", "<=")

    def __gt__(self, other: object) -> bool:
        _refuse_compare("Tensor", ">")

    def __ge__(self, other: object) -> bool:
        _refuse_compare("Tensor", ">=")

    __hash__ = _Owner.__hash__

    def record_stream(self, stream: int) -> None:
        """Marks the storage as used on a CUDA stream (its cudaStream_t as an
        int): its memory is not reused until the work queued there so far
        has finished."""
        _call("sm_record_stream", self._h, c_void_p(stream))


# --------------------------------------------------------------------------
# Storage
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


# --------------------------------------------------------------------------
# repr: NumPy's formatting of the values, fetching only the printed edges
# --------------------------------------------------------------------------


def _edge_view(t: Tensor, edge: int) -> Tuple[Tensor, List[int]]:
    """A view of t keeping, in every dim longer than 2*edge, only the first
    and last `edge` indices: that dim becomes two dims (2, edge) with
    strides (stride * (size - edge), stride). Returns the view and the dims
    of t that were split (those whose middle NumPy elides). Dims past the
    16-dim limit stay whole."""
    shape, strides = t.shape, t.strides
    new_shape: List[int] = []
    new_strides: List[int] = []
    split: List[int] = []
    for d, (n, st) in enumerate(zip(shape, strides)):
        if n > 2 * edge and len(shape) + len(split) < MAX_DIMS:
            new_shape += [2, edge]
            new_strides += [st * (n - edge), st]
            split.append(d)
        else:
            new_shape.append(n)
            new_strides.append(st)
    return t.as_strided(new_shape, new_strides, t.storage_offset), split


def _format_values(t: Tensor, prefix: str) -> str:
    """NumPy's array2string of t's values (np.get_printoptions honoured).
    Past the print threshold only the edges NumPy prints are copied to the
    host; a dummy element stands in for each elided middle, which NumPy
    never prints nor uses to choose the number format."""
    if _np is None:
        return prefix + "<install NumPy to print values>"
    opts = _np.get_printoptions()
    edge, numel = max(int(opts["edgeitems"]), 1), t.numel
    summarize = numel > opts["threshold"]
    split: List[int] = []
    src = t
    if summarize:
        src, split = _edge_view(t, edge)
    # NumPy has no bfloat16: print its values as float32. to() is a new
    # handle, no copy, when a CPU tensor keeps its dtype.
    with _closing(src.to("cpu", "float32" if t.dtype == "bfloat16" else None)) as h:
        arr = h.numpy()
    if src is not t:
        src.close()
    if split:
        # Each split dim d (two axes (2, edge); the splits before it are
        # merged back already, so they start at axis d) becomes 2*edge+1
        # long: the first edge, one dummy, the last edge.
        for axis in split:
            merged = arr.reshape(arr.shape[:axis] + (2 * edge,) + arr.shape[axis + 2:])
            dummy = _np.take(merged, [0], axis=axis)
            arr = _np.concatenate([_np.take(merged, range(edge), axis=axis), dummy,
                                   _np.take(merged, range(edge, 2 * edge), axis=axis)],
                                  axis=axis)
        threshold = 0  # the reduced array is small: make NumPy elide anyway
    else:
        threshold = sys.maxsize if not summarize else opts["threshold"]
    if arr.size == 0:
        return prefix + "[]"
    return prefix + _np.array2string(arr, separator=", ", prefix=prefix,
                                     threshold=threshold, edgeitems=edge)

