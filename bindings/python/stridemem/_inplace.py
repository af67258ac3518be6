"""Tensor's in-place arithmetic (``fill_``, ``add_``, ..., ``+=``): the
_InPlace mixin over _TensorHandle (Tensor inherits it)."""

from __future__ import annotations

from typing import Any, Optional, TypeVar, Union

from ._capi import OPS, _COMPLEX_DTYPES, _call
from .dtypes import _is_complex_scalar, _real_scalar
from ._handle import _TensorHandle
from ._from_host import _complex_scalar_handle

_I = TypeVar("_I", bound="_InPlace")


def _scaled(value, alpha):
    if _is_complex_scalar(value) or _is_complex_scalar(alpha):
        return complex(value) * complex(alpha)
    return float(value) * alpha


class _InPlace(_TensorHandle):
    """In-place arithmetic; every method returns self."""

    __slots__ = ()

    def _inplace(self, op, value=None, alpha=1.0, b=0.0):
        name = op + "_"
        if _is_complex_scalar(value) and self.dtype in _COMPLEX_DTYPES:
            # The C API's scalars are real: a complex one travels as a 0-d
            # tensor of this dtype, broadcast by the tensor form of the op
            # (add_/sub_ have already scaled a scalar by alpha).
            value = self._new(_complex_scalar_handle(value, self.dtype, self.device))
            alpha = 1.0
        if isinstance(value, _TensorHandle):
            _call("sm_inplace_tensor", self._h, OPS[op], value._h,
                  _real_scalar(alpha, name + " alpha"), method=name + "()")
        else:
            a = 0.0 if value is None else _real_scalar(value, name)
            _call("sm_inplace_scalar", self._h, OPS[op], a, float(b), method=name + "()")
        return self

    def fill_(self: _I, value: Any) -> _I:
        """Every element set to value (a scalar, or a tensor broadcast and
        converted) in place; returns self."""
        return self._inplace("fill", value)

    def zero_(self: _I) -> _I:
        """Every element set to 0 in place; returns self."""
        return self._inplace("zero")

    def add_(self: _I, other: Any, alpha: Union[float, complex] = 1.0) -> _I:
        """self += alpha * other (a scalar, or a tensor broadcast to self) in
        place; returns self."""
        if not isinstance(other, _TensorHandle) and alpha != 1.0:
            other = _scaled(other, alpha)
        return self._inplace("add", other, alpha)

    def sub_(self: _I, other: Any, alpha: Union[float, complex] = 1.0) -> _I:
        """self -= alpha * other (a scalar, or a tensor broadcast to self) in
        place; returns self."""
        if not isinstance(other, _TensorHandle) and alpha != 1.0:
            other = _scaled(other, alpha)
        return self._inplace("sub", other, alpha)

    def mul_(self: _I, other: Any) -> _I:
        """self *= other (a scalar, or a tensor broadcast to self) in place;
        returns self."""
        return self._inplace("mul", other)

    def div_(self: _I, other: Any) -> _I:
        """self /= other (a scalar, or a tensor broadcast to self) in place;
        floating and complex tensors only. Returns self."""
        return self._inplace("div", other)

    def clamp_(self: _I, min: Optional[float] = None, max: Optional[float] = None) -> _I:
        """Every element clamped to [min, max] (None: no bound) in place; not
        for complex tensors. Returns self."""
        lo = float("nan") if min is None else _real_scalar(min, "clamp_")
        hi = float("nan") if max is None else _real_scalar(max, "clamp_")
        _call("sm_inplace_scalar", self._h, OPS["clamp"], lo, hi)
        return self

    def relu_(self: _I) -> _I:
        """Negative elements set to 0 in place (not for complex tensors);
        returns self."""
        return self._inplace("relu")

    def neg_(self: _I) -> _I:
        """Every element negated in place; returns self."""
        return self._inplace("neg")

    def abs_(self: _I) -> _I:
        """Every element replaced by its absolute value in place (not for
        complex tensors); returns self."""
        return self._inplace("abs")

    def sqrt_(self: _I) -> _I:
        """Every element replaced by its square root in place (floating and
        complex tensors); returns self."""
        return self._inplace("sqrt")

    def exp_(self: _I) -> _I:
        """Every element replaced by its exponential in place (floating and
        complex tensors); returns self."""
        return self._inplace("exp")

    def sign_(self: _I) -> _I:
        """Every element replaced by -1, 0 or +1 in place (torch's sign_):
        both zeros give +0.0, NaN stays NaN (as NumPy's sign; torch gives 0),
        bool tensors are unchanged; not for complex tensors (the complex sign
        x/|x| is torch's sgn, which stridemem lacks). Returns self."""
        return self._inplace("sign")

    def __iadd__(self: _I, other: Any) -> _I:
        return self.add_(other)

    def __isub__(self: _I, other: Any) -> _I:
        return self.sub_(other)

    def __imul__(self: _I, other: Any) -> _I:
        return self.mul_(other)

    def __itruediv__(self: _I, other: Any) -> _I:
        return self.div_(other)
