"""dtypes: names, aliases, codes, the DType class, NumPy's exchange dtype,
and the scalar kinds and promotion torch.tensor uses."""

from __future__ import annotations

from typing import Any, Optional

from ._capi import DTYPES, _COMPLEX_DTYPES, _DTYPE_ALIASES, _DTYPE_BY_CODE, lib

try:  # NumPy is needed only for the NumPy exchange functions.
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None  # type: ignore[assignment]


def dtype_name(dtype: Any) -> str:
    """Canonical dtype name for a name, alias, code or NumPy dtype."""
    if isinstance(dtype, str):
        name = _DTYPE_ALIASES.get(dtype, dtype)
        if name in DTYPES:
            return name
        raise _unknown_dtype(dtype)
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in _DTYPE_BY_CODE:
            return _DTYPE_BY_CODE[dtype]
        raise ValueError("stridemem: unknown dtype code %d" % dtype)
    if _np is not None:
        try:
            nd = _np.dtype(dtype)  # type: ignore[arg-type]
        except TypeError:
            nd = None
        if nd is not None:
            # .name ignores the byte order: callers that exchange data compare
            # the whole NumPy dtype with numpy_dtype() (native order).
            name = "bool" if nd == _np.bool_ else nd.name
            if name in DTYPES and nd.fields is None:
                return name
            raise ValueError("stridemem: NumPy's %s maps to no stridemem dtype (the "
                            "dtypes: %s)" % (nd, ", ".join(DTYPES)))
    raise _unknown_dtype(dtype)


def _unknown_dtype(dtype):
    return ValueError("stridemem: unknown dtype %r (the dtypes: %s; NumPy dtypes and "
                      "aliases such as 'f32' are accepted)" % (dtype, ", ".join(DTYPES)))


def _dtype_code(dtype):
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype  # raw codes pass through (the library validates them)
    return DTYPES[dtype_name(dtype)][0]


def numpy_dtype(dtype: Any) -> Any:
    """The NumPy dtype used to exchange a stridemem dtype (bfloat16 -> uint16)."""
    return _np.dtype(DTYPES[dtype_name(dtype)][1])


def dtype_size(dtype: Any) -> int:
    """Bytes per element of dtype (sm_dtype_size)."""
    return int(lib.sm_dtype_size(_dtype_code(dtype)))


class DType(str):
    """A stridemem dtype: its canonical name (a str, so ``t.dtype == "float32"``
    holds) that also compares equal to every other spelling of the same dtype:
    NumPy dtypes and scalar types (``t.dtype == np.float32``), aliases
    (``"f32"``) and codes. bfloat16 equals only itself (NumPy's uint16 is
    uint16)."""

    __slots__ = ()

    def __new__(cls, dtype: Any) -> "DType":
        return str.__new__(cls, dtype_name(dtype))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            if str.__eq__(self, other):
                return True
            if other in DTYPES:  # another canonical name: no lookup needed
                return False
        try:
            return str.__eq__(self, dtype_name(other))
        except (ValueError, TypeError):
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return "stridemem.%s" % str.__str__(self)

    @property
    def name(self) -> str:
        """The canonical name as a plain str."""
        return str.__str__(self)

    @property
    def code(self) -> int:
        """The C API's sm_dtype value."""
        return DTYPES[self.name][0]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return dtype_size(self.name)

    @property
    def is_complex(self) -> bool:
        """True for complex64 and complex128."""
        return self.name in _COMPLEX_DTYPES

    @property
    def numpy(self) -> Any:
        """The NumPy dtype this dtype is exchanged as (bfloat16 -> uint16)."""
        return numpy_dtype(self.name)


_DTYPE_OBJECTS = {code: DType(name) for name, (code, _) in DTYPES.items()}


def is_complex(dtype: Any) -> bool:
    """True for complex64 and complex128."""
    return dtype_name(dtype) in _COMPLEX_DTYPES


def _is_complex_scalar(value):
    return isinstance(value, complex) or (
        _np is not None and isinstance(value, _np.complexfloating))


def _real_scalar(value, what):
    """value as the C API's real double. A complex value is taken only when
    its imaginary part is 0 (nothing is lost); else TypeError."""
    if _is_complex_scalar(value):
        z = complex(value)
        if z.imag != 0:
            raise TypeError("stridemem: %s takes a real scalar (the C API's scalars are "
                            "doubles), got %r" % (what, value))
        return z.real
    return float(value)


def _is_scalar(value: Any) -> bool:
    """A Python or NumPy number (or a 0-d NumPy array)."""
    if isinstance(value, (bool, int, float, complex)):
        return True
    return _np is not None and (isinstance(value, _np.generic)
                                or (isinstance(value, _np.ndarray) and value.ndim == 0))


# PyTorch's dtypes for Python scalars, by kind (bool < int < float < complex).
_KIND_DEFAULTS = ("bool", "int64", "float32", "complex64")
_DTYPE_KIND = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1,
               "uint16": 1, "uint32": 1, "uint64": 1, "float16": 2, "bfloat16": 2,
               "float32": 2, "float64": 2, "complex64": 3, "complex128": 3}


def _python_kind(value: Any) -> int:
    """0 bool, 1 int, 2 float, 3 complex for a Python scalar (not a NumPy
    one: np.float64 subclasses float); -1 for anything else."""
    if _np is not None and isinstance(value, _np.generic):
        return -1
    for kind, cls in enumerate((bool, int, float, complex)):
        if isinstance(value, cls):
            return kind
    return -1


def _scalar_dtype(value: Any) -> str:
    """The dtype of a fill value given without dtype= (full): PyTorch's for
    Python scalars (bool, int64, float32, complex64); a NumPy scalar or 0-d
    array keeps its dtype."""
    if _np is not None and isinstance(value, (_np.generic, _np.ndarray)):
        name = _dtype_name_or_none(_np.asarray(value).dtype)
        if name is not None:
            return name
    kind = _python_kind(value)
    return _KIND_DEFAULTS[kind] if kind >= 0 else "float32"


def _promote(a: str, b: str) -> str:
    """PyTorch's promote_types for two dtypes: the higher kind wins as it
    is (int32 with float16 gives float16, not NumPy's float32), except that
    complex64 widens to complex128 for a float64; within one kind NumPy's
    promotion."""
    if a == b:
        return a
    ka, kb = _DTYPE_KIND[a], _DTYPE_KIND[b]
    if ka != kb:
        hi, lo = (a, b) if ka > kb else (b, a)
        return "complex128" if (hi, lo) == ("complex64", "float64") else hi
    if "bfloat16" in (a, b):
        other = b if a == "bfloat16" else a
        return other if other in ("float32", "float64") else "float32"
    return dtype_name(_np.result_type(a, b))


def _dtype_name_or_none(dtype: Any) -> Optional[str]:
    """dtype_name(dtype), or None when it names no stridemem dtype."""
    try:
        return dtype_name(dtype)
    except (ValueError, TypeError):
        return None
