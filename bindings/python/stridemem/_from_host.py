"""New tensor handles from host values: a NumPy array, nested lists, a
scalar, a complex scalar, an empty buffer. Each function returns the new
handle (a ``c_void_p`` the caller wraps at once: ``Tensor._wrap(h)``, or
``self._new(h)`` in the modules below Tensor, which cannot name it). The
public constructors of creation.py wrap the same calls as Tensors."""

from __future__ import annotations

import ctypes
from typing import Any, Sequence
from ctypes import byref, c_double, c_void_p

from ._capi import _call
from .dtypes import (_dtype_code, _dtype_name_or_none, _is_complex_scalar, _np, _real_scalar,
                     dtype_name, numpy_dtype)
from .devices import DeviceLike, _dev, _i64, _out


def _empty_handle(shape: Sequence[int], dtype: Any, device: DeviceLike = "cpu") -> c_void_p:
    """sm_empty: a new row-major tensor, values unset."""
    a, n = _i64(shape)
    out = _out()
    _call("sm_empty", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return out


def _from_numpy_handle(arr: Any, device: DeviceLike = "cpu", dtype: Any = None) -> c_void_p:
    """from_numpy's copy of a NumPy array (any layout, any byte order) on
    device, of the array's dtype or converted to dtype as NumPy's astype
    does. dtype='bfloat16' takes a uint16 array of bfloat16 bit patterns."""
    arr = _np.asarray(arr)
    if dtype is None:
        dtype = dtype_name(arr.dtype)
    want = numpy_dtype(dtype)
    if arr.dtype != want:  # another dtype, or the same in non-native byte order
        if dtype_name(dtype) == "bfloat16" and (arr.dtype.kind, arr.dtype.itemsize) != ("u", 2):
            raise ValueError("stridemem: bfloat16 data must be a uint16 array of "
                             "bit patterns, got %s" % arr.dtype)
        arr = arr.astype(want)
    if not arr.flags.c_contiguous:
        # Not ascontiguousarray: it makes a 0-d array 1-d.
        arr = _np.array(arr, order="C")
    a, n = _i64(arr.shape)
    out = _out()
    _call("sm_from_host", c_void_p(arr.ctypes.data), a, n, _dtype_code(dtype),
          _dev(device), byref(out))
    return out


def _complex_scalar_handle(value: Any, dtype: Any, device: DeviceLike) -> c_void_p:
    """A 0-d complex tensor holding value (no NumPy needed): (re, im) as two
    floats or doubles, the element layout of complex64/complex128."""
    z = complex(value)
    part = ctypes.c_float if dtype_name(dtype) == "complex64" else c_double
    data = (part * 2)(z.real, z.imag)
    out = _out()
    _call("sm_from_host", ctypes.cast(data, c_void_p), None, 0, _dtype_code(dtype),
          _dev(device), byref(out))
    return out


def _host_handle(value: Any) -> c_void_p:
    """A CPU tensor of what NumPy makes of value (array, nested list...),
    for an assignment that copy_into broadcasts and converts."""
    if _np is None:
        raise TypeError("stridemem: assigning a %s needs NumPy (or pass a Tensor)"
                        % type(value).__name__)
    arr = _np.asarray(value)
    if arr.dtype == object or _dtype_name_or_none(arr.dtype) is None:
        raise TypeError("stridemem: cannot assign a %s holding %s values"
                        % (type(value).__name__, arr.dtype))
    return _from_numpy_handle(arr)


def _list_handle(values: Any, dtype: Any, device: DeviceLike = "cpu") -> c_void_p:
    """A 1-d (or nested) tensor of dtype holding values (index_select's
    indices)."""
    arr = _np.asarray(values, dtype=numpy_dtype(dtype))
    return _from_numpy_handle(arr, device=device, dtype=dtype)


def _copy_source_handle(value: Any, dtype: Any) -> c_void_p:
    """A source for copy_: arrays as they are, a complex scalar as a 0-d
    complex128 (copy_into converts: into a real tensor, the real part), any
    other scalar as a 0-d CPU tensor of dtype (sm_full, as full((), value,
    dtype))."""
    if _np is not None and isinstance(value, _np.ndarray):
        return _from_numpy_handle(value)
    if _is_complex_scalar(value):
        return _complex_scalar_handle(value, "complex128", "cpu")
    a, n = _i64(())
    out = _out()
    _call("sm_full", a, n, _real_scalar(float(value), "full"), _dtype_code(dtype), _dev("cpu"),
          byref(out))
    return out
