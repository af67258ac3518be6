"""Zero-copy exchange with NumPy and foreign memory: the keep-alive registry,
``from_blob``/``from_numpy_blob`` over caller memory, and Tensor's NumPy side
(``numpy()``, ``__array_interface__``, ``__cuda_array_interface__``,
``__array__``, ``tolist``, ``item``: the functions taking ``self`` are Tensor's
methods, assigned in _tensor.py)."""

from __future__ import annotations

import ctypes
import itertools
import struct
import sys
import threading
from contextlib import closing as _closing
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence
from ctypes import CFUNCTYPE, byref, c_size_t, c_void_p

from ._capi import (DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, ERR_UNSUPPORTED, OK, _call,
                    _error, last_error, lib)
from .dtypes import _dtype_code, _np, dtype_name, dtype_size, numpy_dtype
from .devices import DeviceLike, _dev, _i64, _out, get_stream
from . import _tensor

if TYPE_CHECKING:
    from ._tensor import Tensor


# --------------------------------------------------------------------------
# The keep-alive registry: Python objects that memory shared with the library
# depends on. One object, one lock, one key space, per-kind statistics.
# --------------------------------------------------------------------------


class _Registry(object):
    """Holds Python objects under unique integer keys until they may go.

    Two kinds of entries share it:

    * ``"blob"``: the owner of memory wrapped by :func:`from_blob` (and its
      ``on_free``). The key is the ctx of the C deleter, which drops the entry
      when the library's last view of the memory dies, from any thread.
    * ``"capsule"``: an exported DLPack capsule, dropped by :meth:`sweep` once
      nothing but the registry refers to it (see :func:`dlpack_collect`).

    The lock is reentrant: dropping a capsule can free a storage whose blob
    deleter then drops a blob entry on the same thread, and a garbage
    collection inside a locked section can do the same. Objects released by
    :meth:`sweep` die after the lock is let go."""

    def __init__(self, stats):
        self.lock = threading.RLock()
        self._keys = itertools.count(1)
        self._held = {kind: {} for kind in stats}
        self.stats = {kind: dict.fromkeys(names, 0) for kind, names in stats.items()}

    def hold(self, kind, obj, extra=None):
        """Keeps obj (and extra) alive under a new key, which is returned."""
        entry = (obj, extra)
        with self.lock:
            key = next(self._keys)
            self._held[kind][key] = entry
        return key

    def drop(self, kind, key, stat=None, missing=None):
        """Removes key's entry and returns it as (obj, extra), or None when
        there is none; counts `stat` or `missing` in the same locked step."""
        with self.lock:
            entry = self._held[kind].pop(key, None)
            name = stat if entry is not None else missing
            if name is not None:
                self.stats[kind][name] += 1
        return entry

    def count(self, kind):
        with self.lock:
            return len(self._held[kind])

    def bump(self, kind, stat):
        with self.lock:
            self.stats[kind][stat] += 1

    def sweep(self, kind):
        """Drops the entries of `kind` whose object only the registry still
        refers to; returns how many."""
        with self.lock:
            held = self._held[kind]
            # getrefcount sees the entry tuple's reference and its own argument.
            dead = [k for k, e in list(held.items()) if sys.getrefcount(e[0]) <= 2]
            released = [held.pop(k) for k in dead]
        n = len(released)
        del released  # the objects die here, outside the lock
        return n


_registry = _Registry({
    "blob": ("wrapped", "freed", "unknown_key"),
    "capsule": ("exported", "destructor_deleted", "destructor_consumed"),
})
BLOB_STATS = _registry.stats["blob"]        # from_blob: wrapped, freed, unknown_key
DLPACK_STATS = _registry.stats["capsule"]   # __dlpack__ capsules and their destructor

# --------------------------------------------------------------------------
# Zero-copy wrapping of caller memory (sm_from_blob) with a Python deleter
# --------------------------------------------------------------------------


def _blob_deleter_impl(data, ctx):
    # Runs when the last tensor over the wrapped memory dies (any thread).
    try:
        entry = _registry.drop("blob", ctx or 0, stat="freed", missing="unknown_key")
        if entry is None:
            return
        owner, on_free = entry
        del owner, entry
        if on_free is not None:
            on_free()
    except Exception:  # pragma: no cover - must never propagate into C
        pass


_DELETER_T = CFUNCTYPE(None, c_void_p, c_void_p)
_blob_deleter = _DELETER_T(_blob_deleter_impl)
# The callback must outlive every tensor, even at interpreter shutdown: leak one
# reference on purpose so that the thunk is never freed.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_blob_deleter))


def blob_live_count() -> int:
    """Number of wrapped blobs whose deleter has not run yet."""
    return _registry.count("blob")


def from_blob(address: int, shape: Sequence[int], dtype: Any,
              strides: Optional[Sequence[int]] = None, device: DeviceLike = "cpu",
              owner: Any = None, on_free: Optional[Callable[[], Any]] = None) -> Tensor:
    """Zero copy over memory at `address` (element [0,...,0]); strides in
    elements (None: row-major). `owner` is kept alive, and `on_free()`
    called, exactly once when the last view dies."""
    shape = tuple(int(s) for s in shape)
    sh, n = _i64(shape)
    st = None
    if strides is not None:
        if len(strides) != len(shape):
            raise ValueError("stridemem: strides and shape differ in length")
        st, _ = _i64(strides)
    key = _registry.hold("blob", owner, on_free)
    out = _out()
    status = lib.sm_from_blob(c_void_p(address), sh, st, n, _dtype_code(dtype),
                              _dev(device), ctypes.cast(_blob_deleter, c_void_p),
                              c_void_p(key), byref(out))
    if status != 0:
        msg = last_error()
        _registry.drop("blob", key)  # on failure the deleter is not called
        raise _error(status, "sm_from_blob", raw=msg)
    _registry.bump("blob", "wrapped")
    return _tensor.Tensor._wrap(out)


def from_numpy_blob(arr: Any, device: DeviceLike = "cpu", dtype: Any = None) -> Tensor:
    """Zero copy over a NumPy array's memory (CPU). The array is kept alive
    until the last view dies. Writes through the tensor are visible in the
    array. Read-only arrays are refused (use from_numpy to copy)."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError("stridemem: from_numpy_blob needs a numpy.ndarray")
    if not arr.flags.writeable:
        raise ValueError("stridemem: the array is read-only; a zero-copy tensor "
                         "would allow writes (use from_numpy to copy)")
    if dtype is None:
        dtype = dtype_name(arr.dtype)
    if not arr.dtype.isnative:
        raise ValueError("stridemem: the array's byte order is not the machine's (%s): "
                         "wrapping it would misread every value; from_numpy converts "
                         "(a copy), or pass arr.astype(arr.dtype.newbyteorder('='))"
                         % arr.dtype.str)
    if numpy_dtype(dtype) != arr.dtype:
        raise ValueError("stridemem: array dtype %s cannot hold %s"
                         % (arr.dtype.str, dtype_name(dtype)))
    item = arr.itemsize
    if any(s % item for s in arr.strides):
        raise ValueError("stridemem: strides %r are not multiples of the item size %d"
                         % (arr.strides, item))
    strides = [s // item for s in arr.strides]
    return from_blob(arr.ctypes.data, arr.shape, dtype, strides, device, owner=arr)


as_tensor = from_numpy_blob


# The address a size-0 tensor without memory shows in its array interfaces.
_NO_ELEMENTS = ctypes.create_string_buffer(16)


class _InterfaceView(object):
    """What ``np.asarray`` reads in __array__: an owner of its own handle, so
    the array stays valid when the tensor it came from is closed."""

    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, t: _tensor.Tensor) -> None:
        self.tensor = t.retain()
        self.__array_interface__ = self.tensor._interface(cuda=False)


# NumPy typestrs of the exchange dtypes (little-endian hosts), for the array
# interfaces when NumPy itself is not installed.
_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4",
            "int64": "<i8", "float16": "<f2", "bfloat16": "<u2", "float32": "<f4",
            "float64": "<f8", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
            "complex64": "<c8", "complex128": "<c16"}

# struct formats of one element (native order), for item() without NumPy.
_STRUCT = {"bool": "?", "uint8": "B", "int8": "b", "int16": "h", "int32": "i",
           "int64": "q", "float16": "e", "float32": "f", "float64": "d", "uint16": "H",
           "uint32": "I", "uint64": "Q", "complex64": "ff", "complex128": "dd"}


def _decode_scalar(name: str, raw: bytes) -> Any:
    """One element's bytes as the Python scalar NumPy's item() gives."""
    if name == "bfloat16":  # the high half of a float32
        return struct.unpack("=f", struct.pack("=I", struct.unpack("=H", raw)[0] << 16))[0]
    v = struct.unpack("=" + _STRUCT[name], raw)
    return complex(v[0], v[1]) if len(v) == 2 else v[0]


def numpy(self: Tensor) -> Any:
    """A NumPy copy (row-major) of the same dtype. bfloat16 comes out as
    uint16 bit patterns."""
    arr = _np.empty(self.shape, dtype=numpy_dtype(self.dtype))
    _call("sm_copy_to_host", self._h, c_void_p(arr.ctypes.data), c_size_t(arr.nbytes))
    return arr


def _stack_carved(self: Tensor) -> bool:
    """A tensor carved from a stack of views: its bytes are reused after
    sm_stack_pop_to, so no foreign array may keep pointing at them."""
    out = _out()
    status = lib.sm_tensor_storage(self._h, byref(out))
    if status == OK:
        lib.sm_storage_release(out)
        return False
    if status == ERR_UNSUPPORTED:
        return True
    raise _error(status, "sm_tensor_storage")


def _interface(self: Tensor, cuda: bool) -> Dict[str, Any]:
    """The __array_interface__ / __cuda_array_interface__ dict (v3):
    shape, byte strides (None when row-major), the typestr of the NumPy
    exchange dtype (bfloat16 as '<u2' bit patterns) and the data address
    with the read-only flag. Pins this object's handle (see close())."""
    shape, strides, item = self.shape, self.strides, self.itemsize
    row_major = self.is_contiguous()
    d = {"shape": shape,
         "typestr": numpy_dtype(self.dtype).str if _np is not None
         else _TYPESTR[self.dtype.name],
         # NumPy refuses a NULL address even with no element to read.
         "data": (self.data_ptr or ctypes.addressof(_NO_ELEMENTS), self.is_read_only),
         "strides": None if row_major else tuple(s * item for s in strides),
         "version": 3}
    if cuda:
        # v3: the stream the data is produced on (1 = the legacy default
        # stream; 0 is not allowed); the consumer orders its work after it.
        d["stream"] = get_stream(self.device) or 1
    if self._pin is None:
        self._pin = True
    return d


def __array_interface__(self: Tensor) -> Dict[str, Any]:
    """NumPy's array interface (v3) for a zero-copy view of a CPU or
    pinned-host tensor: ``np.asarray(t)`` shares memory, writes show both
    ways, a read-only tensor gives a read-only array. Absent
    (AttributeError, so NumPy falls back to __array__, a copy) for CUDA
    tensors and for tensors carved from a stack of views, whose memory is
    reused after a pop."""
    return self._exported_interface(cuda=False)


def __cuda_array_interface__(self: Tensor) -> Dict[str, Any]:
    """The CUDA array interface (v3) of a CUDA tensor, for CuPy, Numba and
    PyTorch: zero copy, with the current stream of the tensor's device
    (``stream``; 1 for the legacy default stream). Absent for CPU
    tensors and for tensors carved from a stack of views."""
    return self._exported_interface(cuda=True)


def _exported_interface(self: Tensor, cuda: bool) -> Dict[str, Any]:
    """_interface when this tensor may be shared that way, else the
    AttributeError that tells the consumer to take another way (or
    copy)."""
    name = "__cuda_array_interface__" if cuda else "__array_interface__"
    if not self._h:
        raise AttributeError("%s of a closed tensor" % name)
    dev = self.device
    if cuda and dev[0] != DEVICE_CUDA:
        raise AttributeError("%s: the tensor is on %s, not CUDA" % (name, dev))
    if not cuda and dev[0] not in (DEVICE_CPU, DEVICE_CUDA_HOST):
        raise AttributeError("%s: the tensor is on %s; use __cuda_array_interface__, "
                             "numpy() or np.array(t)" % (name, dev))
    if self._stack_carved():
        raise AttributeError("%s: the tensor is carved from a stack of views whose "
                             "memory is reused after a pop; np.array(t) copies" % name)
    return self._interface(cuda)


def __array__(self: Tensor, dtype: Any = None, copy: Optional[bool] = None) -> Any:
    """NumPy 2's protocol (NumPy 1.x calls it without copy): copy=None
    shares memory when it can (a CPU or pinned tensor, NumPy's dtype)
    and copies otherwise; copy=True always copies; copy=False never does
    and raises ValueError when a copy is needed (a CUDA tensor, a
    tensor carved from a stack of views, another dtype)."""
    want = None if dtype is None else _np.dtype(dtype)
    shareable = (self.device[0] in (DEVICE_CPU, DEVICE_CUDA_HOST)
                 and not self._stack_carved())
    if copy is False:
        if not shareable:
            raise ValueError("stridemem: a NumPy array of this %s tensor needs a copy "
                             "(copy=False forbids it)" % (self.device,))
        if want is not None and want != numpy_dtype(self.dtype):
            raise ValueError("stridemem: dtype %s needs a copy of this %s tensor "
                             "(copy=False forbids it)" % (want, self.dtype.name))
    if shareable and not copy:
        arr = _np.asarray(_InterfaceView(self))
    else:
        arr = self.numpy()
    if want is not None and want != arr.dtype:
        arr = arr.astype(want)
    return arr


def tolist(self: Tensor) -> Any:
    """The values as nested Python lists (bfloat16 as floats)."""
    if self.dtype == "bfloat16":
        with _closing(self.to(dtype="float32")) as f:
            return f.numpy().tolist()
    return self.numpy().tolist()


def item(self: Tensor) -> Any:
    """The one element as a Python bool, int, float or complex (bfloat16
    as its float value). Does not need NumPy."""
    if self.numel != 1:
        raise ValueError("stridemem: item() needs exactly one element (this tensor has "
                         "%d)" % self.numel)
    name = self.dtype.name
    one = self if self.ndim == 0 else self.reshape(())
    raw = ctypes.create_string_buffer(dtype_size(name))
    _call("sm_copy_to_host", one._h, ctypes.cast(raw, c_void_p), c_size_t(len(raw)))
    return _decode_scalar(name, raw.raw)
