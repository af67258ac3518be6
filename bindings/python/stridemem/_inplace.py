"""Tensor's in-place arithmetic (``fill_``, ``add_``, ..., ``+=``): the
functions taking ``self`` are Tensor's methods (assigned in _tensor.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from ._capi import OPS, _COMPLEX_DTYPES, _call
from .dtypes import _is_complex_scalar, _real_scalar
from . import _tensor

if TYPE_CHECKING:
    from ._tensor import Tensor


def _inplace(self: Tensor, op, value=None, alpha=1.0, b=0.0):
    name = op + "_"
    if _is_complex_scalar(value) and self.dtype in _COMPLEX_DTYPES:
        # The C API's scalars are real: a complex one travels as a 0-d
        # tensor of this dtype, broadcast by the tensor form of the op
        # (add_/sub_ have already scaled a scalar by alpha).
        from .creation import _complex_scalar_tensor  # imports _tensor.py
        value, alpha = _complex_scalar_tensor(value, self.dtype, self.device), 1.0
    if isinstance(value, _tensor.Tensor):
        _call("sm_inplace_tensor", self._h, OPS[op], value._h,
              _real_scalar(alpha, name + " alpha"), method=name + "()")
    else:
        a = 0.0 if value is None else _real_scalar(value, name)
        _call("sm_inplace_scalar", self._h, OPS[op], a, float(b), method=name + "()")
    return self


def fill_(self: Tensor, value: Any) -> Tensor:
    """Every element set to value (a scalar, or a tensor broadcast and
    converted) in place; returns self."""
    return self._inplace("fill", value)


def zero_(self: Tensor) -> Tensor:
    """Every element set to 0 in place; returns self."""
    return self._inplace("zero")


def add_(self: Tensor, other: Any, alpha: Union[float, complex] = 1.0) -> Tensor:
    """self += alpha * other (a scalar, or a tensor broadcast to self) in
    place; returns self."""
    if not isinstance(other, _tensor.Tensor) and alpha != 1.0:
        other = _scaled(other, alpha)
    return self._inplace("add", other, alpha)


def sub_(self: Tensor, other: Any, alpha: Union[float, complex] = 1.0) -> Tensor:
    """self -= alpha * other (a scalar, or a tensor broadcast to self) in
    place; returns self."""
    if not isinstance(other, _tensor.Tensor) and alpha != 1.0:
        other = _scaled(other, alpha)
    return self._inplace("sub", other, alpha)


def _scaled(value, alpha):
    if _is_complex_scalar(value) or _is_complex_scalar(alpha):
        return complex(value) * complex(alpha)
    return float(value) * alpha


def mul_(self: Tensor, other: Any) -> Tensor:
    """self *= other (a scalar, or a tensor broadcast to self) in place;
    returns self."""
    return self._inplace("mul", other)


def div_(self: Tensor, other: Any) -> Tensor:
    """self /= other (a scalar, or a tensor broadcast to self) in place;
    floating and complex tensors only. Returns self."""
    return self._inplace("div", other)


def clamp_(self: Tensor, min: Optional[float] = None, max: Optional[float] = None) -> Tensor:
    """Every element clamped to [min, max] (None: no bound) in place; not
    for complex tensors. Returns self."""
    lo = float("nan") if min is None else _real_scalar(min, "clamp_")
    hi = float("nan") if max is None else _real_scalar(max, "clamp_")
    _call("sm_inplace_scalar", self._h, OPS["clamp"], lo, hi)
    return self


def relu_(self: Tensor) -> Tensor:
    """Negative elements set to 0 in place (not for complex tensors);
    returns self."""
    return self._inplace("relu")


def neg_(self: Tensor) -> Tensor:
    """Every element negated in place; returns self."""
    return self._inplace("neg")


def abs_(self: Tensor) -> Tensor:
    """Every element replaced by its absolute value in place (not for
    complex tensors); returns self."""
    return self._inplace("abs")


def sqrt_(self: Tensor) -> Tensor:
    """Every element replaced by its square root in place (floating and
    complex tensors); returns self."""
    return self._inplace("sqrt")


def exp_(self: Tensor) -> Tensor:
    """Every element replaced by its exponential in place (floating and
    complex tensors); returns self."""
    return self._inplace("exp")


def sign_(self: Tensor) -> Tensor:
    """Every element replaced by -1, 0 or +1 in place (torch's sign_):
    both zeros give +0.0, NaN stays NaN (as NumPy's sign; torch gives 0),
    bool tensors are unchanged; not for complex tensors (the complex sign
    x/|x| is torch's sgn, which stridemem lacks). Returns self."""
    return self._inplace("sign")


def __iadd__(self: Tensor, other: Any) -> Tensor:
    return self.add_(other)


def __isub__(self: Tensor, other: Any) -> Tensor:
    return self.sub_(other)


def __imul__(self: Tensor, other: Any) -> Tensor:
    return self.mul_(other)


def __itruediv__(self: Tensor, other: Any) -> Tensor:
    return self.div_(other)
