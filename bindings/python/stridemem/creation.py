"""Making tensors: empty/zeros/ones/full and their _like forms, arange,
tensor() from Python values, from_numpy, and equal/copy_into."""

from __future__ import annotations

import math
from contextlib import closing as _closing
from typing import Any, Dict, Optional, Sequence
from ctypes import byref

from ._capi import _COMPLEX_DTYPES, _DTYPE_BY_CODE, _call
from .dtypes import (_KIND_DEFAULTS, _dtype_code, _dtype_name_or_none, _is_complex_scalar,
                     _np, _promote, _python_kind, _real_scalar, _scalar_dtype, dtype_name,
                     numpy_dtype)
from .devices import DeviceLike, _dev, _i64, _out, _shape_arg, _shape_tuple
from ._from_host import _from_numpy_handle
from ._tensor import Tensor


def empty(*shape: Any, dtype: Any = "float32", device: DeviceLike = "cpu") -> Tensor:
    """A new row-major tensor, values unset. Shapes: empty(2, 3) or
    empty((2, 3))."""
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_empty", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def empty_shared(*shape: Any, dtype: Any = "float32") -> Tensor:
    """A new row-major CPU tensor in shared memory (zero-filled): pickled
    through multiprocessing it travels as a file descriptor, and every
    process that receives it sees the same bytes."""
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_empty_shared", a, n, _dtype_code(dtype), byref(out))
    return Tensor._wrap(out)


def empty_strided(shape: Any, strides: Sequence[int], dtype: Any = "float32",
                  device: DeviceLike = "cpu") -> Tensor:
    """A new tensor with these strides (in elements), values unset."""
    a, n = _i64(_shape_tuple(shape))
    s, m = _i64(strides)
    if n != m:
        raise ValueError("stridemem: shape and strides differ in length")
    out = _out()
    _call("sm_empty_strided", a, s, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def zeros(*shape: Any, dtype: Any = "float32", device: DeviceLike = "cpu") -> Tensor:
    """A new row-major tensor of zeros: zeros(2, 3) or zeros((2, 3))."""
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_zeros", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def ones(*shape: Any, dtype: Any = "float32", device: DeviceLike = "cpu") -> Tensor:
    """A new row-major tensor of ones: ones(2, 3) or ones((2, 3))."""
    return full(_shape_arg(shape), 1, dtype=dtype, device=device)


def full(shape: Any, value: Any, dtype: Any = None, device: DeviceLike = "cpu") -> Tensor:
    """Every element value (sm_full); shape is an int or a sequence, as
    NumPy's full. dtype None: PyTorch's rule, the value's kind (a Python
    bool gives bool, an int int64, a float float32, a complex complex64; a
    NumPy scalar keeps its dtype). A value the dtype cannot hold raises
    DTypeError. A complex value for a complex dtype is written by fill_
    (sm_full takes a real double)."""
    shape = _shape_tuple(shape)
    if dtype is None:
        dtype = _scalar_dtype(value)
    if _is_complex_scalar(value) and _DTYPE_BY_CODE.get(_dtype_code(dtype)) in _COMPLEX_DTYPES:
        return empty(shape, dtype=dtype, device=device).fill_(value)
    a, n = _i64(shape)
    out = _out()
    _call("sm_full", a, n, _real_scalar(value, "full"), _dtype_code(dtype), _dev(device),
          byref(out))
    return Tensor._wrap(out)


def _like(t: Tensor, dtype: Any, device: Any) -> Dict[str, Any]:
    """The dtype and device of a *_like call: t's unless given."""
    return {"dtype": t.dtype if dtype is None else dtype,
            "device": t.device if device is None else device}


def empty_like(t: Tensor, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """A new row-major tensor of t's shape (t's dtype and device unless
    given), values unset."""
    return empty(t.shape, **_like(t, dtype, device))


def zeros_like(t: Tensor, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """zeros of t's shape (t's dtype and device unless given)."""
    return zeros(t.shape, **_like(t, dtype, device))


def ones_like(t: Tensor, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """ones of t's shape (t's dtype and device unless given)."""
    return ones(t.shape, **_like(t, dtype, device))


def full_like(t: Tensor, value: Any, dtype: Any = None,
              device: Optional[DeviceLike] = None) -> Tensor:
    """full of t's shape (t's dtype and device unless given)."""
    return full(t.shape, value, **_like(t, dtype, device))


def _all_integers(*values: Any) -> bool:
    """Python or NumPy integers (a bool is one, as in NumPy's arange)."""
    return all(isinstance(v, int) or (_np is not None and isinstance(v, _np.integer))
               for v in values)


def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """NumPy's element count: ceil((stop - start) / step), at least 0;
    exact for integers."""
    if _all_integers(start, stop, step):
        start, stop, step = int(start), int(stop), int(step)
        return max(0, -((start - stop) // step))
    n = (float(stop) - float(start)) / float(step)
    if math.isnan(n) or math.isinf(n):
        raise ValueError("stridemem: arange(%r, %r, %r) has no finite length"
                         % (start, stop, step))
    return max(0, math.ceil(n))


def arange(start: Any, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: DeviceLike = "cpu") -> Tensor:
    """NumPy's signature: arange(stop), arange(start, stop[, step]); the
    values start + i*step for i < ceil((stop - start) / step). dtype None:
    int64 when start, stop and step are all integers, else float32 (the
    library's default float, as PyTorch; NumPy would pick float64). A value
    the dtype cannot hold raises DTypeError (see docs/PYTORCH_DIFFERENCES.md).
    arange_n is the C API's (start, step, count) form."""
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        _real_scalar(v, "arange")  # a complex bound is refused here
    if step == 0:
        raise ValueError("stridemem: arange step must not be zero")
    n = _arange_length(start, stop, step)
    if dtype is None:
        dtype = "int64" if _all_integers(start, stop, step) else "float32"
    return arange_n(start, step, n, dtype=dtype, device=device)


def arange_n(start: Any, step: Any, n: int, dtype: Any = None,
             device: DeviceLike = "cpu") -> Tensor:
    """n elements start, start + step, ... (sm_arange's argument order).
    dtype None: int64 when start and step are integers, else float32 (as
    arange)."""
    if dtype is None:
        dtype = "int64" if _all_integers(start, step) else "float32"
    out = _out()
    _call("sm_arange", _real_scalar(start, "arange"), _real_scalar(step, "arange"), int(n),
          _dtype_code(dtype),
          _dev(device), byref(out))
    return Tensor._wrap(out)


def from_numpy(arr: Any, device: DeviceLike = "cpu", dtype: Any = None) -> Tensor:
    """A copy of a NumPy array (any layout, any byte order) on device, of the
    array's dtype or converted to dtype as NumPy's astype does.
    dtype='bfloat16' takes a uint16 array of bfloat16 bit patterns."""
    return Tensor._wrap(_from_numpy_handle(arr, device, dtype))


def tensor(values: Any, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """A new tensor (always a copy) of values: nested lists and scalars, a
    NumPy array (as from_numpy) or a tensor. Without dtype, PyTorch's rule:
    Python floats give float32, ints int64, bools bool, complex numbers
    complex64; NumPy arrays, NumPy scalars and tensors keep their dtype;
    mixed values promote as torch.tensor does (an empty list is float32).
    Given dtype, values are converted. dtype bfloat16 converts values, not
    bits, of Python numbers and of NumPy arrays of any dtype (a uint16 array
    too, as torch.tensor does): the library rounds each value to nearest
    even once, from the float64 of a Python number or the array's own dtype
    (from_numpy(bits, dtype='bfloat16') takes uint16 bit patterns).
    device None: a tensor's own device (as torch.tensor keeps it), else the
    CPU."""
    if device is None:
        device = values.device if isinstance(values, Tensor) else "cpu"
    if isinstance(values, Tensor):
        r, copied = values.to(device=device, dtype=dtype, return_copied=True)
        if copied:
            return r
        with _closing(r):
            return r.clone()
    bf16 = dtype is not None and dtype_name(dtype) == "bfloat16"
    if _np is not None and isinstance(values, _np.ndarray):
        if bf16:
            return _bfloat16_values(values, device)
        return from_numpy(values, device=device, dtype=dtype)
    if dtype is None:
        dtype = _values_dtype(values)
    if dtype is None:
        arr = _np.asarray(values)
    elif bf16:
        # float64 holds every Python float exactly: one rounding, in the library.
        return _bfloat16_values(_np.asarray(values, dtype=_np.float64), device)
    else:
        arr = _np.asarray(values, dtype=numpy_dtype(dtype))
    return from_numpy(arr, device=device, dtype=dtype)


def _bfloat16_values(arr: Any, device: DeviceLike) -> Tensor:
    """A bfloat16 tensor of arr's values: arr copied in its own dtype, then
    converted by the library (NumPy has no bfloat16 to convert with). A
    dtype the library lacks (long double, object) goes through float64, as
    does an add-on bfloat16 (ml_dtypes'), whose values float64 holds exactly
    and whose name alone would make from_numpy expect uint16 bits."""
    if _dtype_name_or_none(arr.dtype) in (None, "bfloat16"):
        arr = arr.astype(_np.float64)
    with _closing(from_numpy(arr, device=device)) as src:
        return src.to(dtype="bfloat16")


def _host_values(x: Any) -> Any:
    """A NumPy array of x's values: a host copy of a tensor (bfloat16 as
    float32), else what NumPy makes of x."""
    if isinstance(x, Tensor):
        with _closing(x.to("cpu", "float32" if x.dtype == "bfloat16" else None)) as h:
            return h.numpy()
    return _np.asarray(x)


def equal(a: Any, b: Any) -> bool:
    """True when a and b have the same shape and equal values (PyTorch's
    torch.equal; NaN equals nothing). a and b are tensors (any device,
    copied to the host to compare), NumPy arrays or nested lists; values
    compare as numbers, whatever the dtypes (an int64 2 equals a float32
    2.0). Tensors have no ==: it raises TypeError rather than compare the
    Python objects. For an elementwise answer use NumPy:
    numpy.asarray(a) == numpy.asarray(b)."""
    if _np is None:
        raise TypeError("stridemem: equal() needs NumPy")
    x, y = _host_values(a), _host_values(b)
    return x.shape == y.shape and bool(_np.array_equal(x, y))


def copy_into(dst: Tensor, src: Tensor) -> Tensor:
    """dst[...] = src, broadcast and converted (sm_copy_into). Returns dst."""
    _call("sm_copy_into", dst._h, src._h)
    return dst


def _values_dtype(values: Any) -> Optional[str]:
    """torch.tensor's dtype for a scalar or nested lists/tuples: every Python
    scalar counts as its kind's default (bool, int64, float32, complex64),
    every NumPy scalar or array and every tensor inside as its own dtype,
    promoted as PyTorch promotes; an empty list is float32. None when a leaf
    is something else (NumPy then says what it makes of it)."""
    dtype: Optional[str] = None
    todo = [values]
    while todo:
        v = todo.pop()
        if isinstance(v, (list, tuple)):
            todo.extend(v)
            continue
        if isinstance(v, Tensor):
            name: Optional[str] = v.dtype.name
        elif _np is not None and isinstance(v, (_np.generic, _np.ndarray)):
            name = _dtype_name_or_none(v.dtype)
        else:
            kind = _python_kind(v)
            name = _KIND_DEFAULTS[kind] if kind >= 0 else None
        if name is None:
            return None
        dtype = name if dtype is None else _promote(dtype, name)
    return "float32" if dtype is None else dtype
