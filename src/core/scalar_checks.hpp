// Which double scalars a dtype can take: the value range of each dtype. The
// engine checks every scalar that enters a tensor (fill values, clamp bounds, alpha, arange values) here
// before any kernel runs, so an out-of-range scalar is SM_ERR_DTYPE instead
// of a wrapped or saturated element (PyTorch's "value cannot be converted
// to type int8_t without overflow").
#pragma once

#include "core/dtype.hpp"

namespace sm {

// Whether v converts to an element of d without overflow, PyTorch's rule
// (c10::overflows): integers take values in [lowest, max] (a fraction inside
// the range truncates, so 1.5 fits int8 but 127.5 does not), never NaN or
// infinity; bool takes every value (nonzero, NaN included, is true); floats
// take NaN, infinities and finite values up to their largest finite value
// (65504 for float16: 65519 would round to it but is refused, as PyTorch
// refuses it); complex types take what their part type takes (a real scalar
// is (v, 0)).
bool scalar_fits(DType d, double v);

// Whether v is an operand of integer arithmetic on a d tensor (ADD, SUB,
// MUL scalars, alpha, CLAMP bounds before their fit): a whole number of the
// compute type, int64, or for uint64 tensors int64 and uint64 together
// ([-2^63, 2^64)), so that values >= 2^63 can be added. Results wrap.
bool integer_operand_fits(DType d, double v);

// scalar_fits for a multiplier in wrap-around arithmetic (alpha): an
// unsigned integer type also takes whole negatives down to -max, which
// wrap (PyTorch's rule for integer scalars: sub with alpha = -1 on uint8).
bool multiplier_fits(DType d, double v);

// Throws SM_ERR_DTYPE unless scalar_fits(d, v) (multiplier_fits(d, v) when
// multiplier): "<what> = v cannot be converted to <d> without overflow (<d>
// holds [lo, hi]): <context>".
void require_scalar_fits(DType d, double v, const char* what, const char* context,
                         bool multiplier = false);

// The closed range of d's finite values, as doubles (int64's max is 2^63 - 1,
// which a double cannot hold: scalar_fits compares exactly, not through this).
void dtype_range(DType d, double* lowest, double* max);

// promote_types (core/dtype.hpp) decides the dtype alpha is converted to,
// so alpha must fit it.

}  // namespace sm
