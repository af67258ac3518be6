"""Zero-copy tensors over foreign memory: ``from_blob`` over caller memory
(the owner kept alive in the keep-alive registry until the library's last
view of it dies), ``from_numpy_blob`` (``as_tensor``) over a NumPy array's.
Tensor's own NumPy side (``numpy()``, the array interfaces, ``__array__``,
``tolist``, ``item``) is in _host_exchange.py."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Optional, Sequence
from ctypes import CFUNCTYPE, byref, c_void_p

from ._capi import _error, last_error, lib
from .dtypes import _dtype_code, _np, dtype_name, numpy_dtype
from .devices import DeviceLike, _dev, _i64, _out
from ._registry import _registry
from ._tensor import Tensor


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
    return Tensor._wrap(out)


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
