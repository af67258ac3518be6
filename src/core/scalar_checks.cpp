#include "core/scalar_checks.hpp"

#include <cfloat>
#include <cmath>

#include "core/error.hpp"

namespace sm {

void dtype_range(DType d, double* lowest, double* max) {
  switch (d) {
    case DType::Bool: *lowest = 0; *max = 1; return;
    case DType::U8: *lowest = 0; *max = 255; return;
    case DType::I8: *lowest = -128; *max = 127; return;
    case DType::I16: *lowest = -32768; *max = 32767; return;
    case DType::I32: *lowest = -2147483648.0; *max = 2147483647.0; return;
    case DType::I64: *lowest = -9223372036854775808.0; *max = 9223372036854775807.0; return;
    case DType::F16: *lowest = -65504.0; *max = 65504.0; return;
    case DType::BF16: *lowest = -3.3895313892515355e38; *max = 3.3895313892515355e38; return;
    case DType::F32: *lowest = -FLT_MAX; *max = FLT_MAX; return;
    case DType::F64: *lowest = -DBL_MAX; *max = DBL_MAX; return;
    case DType::U16: *lowest = 0; *max = 65535; return;
    case DType::U32: *lowest = 0; *max = 4294967295.0; return;
    case DType::U64: *lowest = 0; *max = 18446744073709551615.0; return;  // 2^64 as a double
    case DType::C64: *lowest = -FLT_MAX; *max = FLT_MAX; return;  // each part: a real scalar is (v, 0)
    case DType::C128: *lowest = -DBL_MAX; *max = DBL_MAX; return;
  }
  *lowest = 0;
  *max = 0;
}

bool scalar_fits(DType d, double v) {
  if (d == DType::Bool) return true;
  if (is_floating(d) || is_complex(d)) {
    if (std::isnan(v) || std::isinf(v)) return true;
    double lo, hi;
    dtype_range(d, &lo, &hi);
    return v >= lo && v <= hi;
  }
  if (!std::isfinite(v)) return false;
  // The max of int64 and uint64 round up to a power of two as doubles:
  // compare with that power itself, exclusively.
  if (d == DType::I64) return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  if (d == DType::U64) return v >= 0 && v < 18446744073709551616.0;
  double lo, hi;
  dtype_range(d, &lo, &hi);
  return v >= lo && v <= hi;
}

bool integer_operand_fits(DType d, double v) {
  const double hi = d == DType::U64 ? 18446744073709551616.0 : 9223372036854775808.0;
  return v == std::floor(v) && v >= -9223372036854775808.0 && v < hi;  // false for NaN, inf
}

bool multiplier_fits(DType d, double v) {
  if (scalar_fits(d, v)) return true;
  double lo, hi;
  dtype_range(d, &lo, &hi);
  if (!is_unsigned(d) || !(v < 0)) return false;  // unsigned: whole negatives down to -max wrap
  return d == DType::U64 ? -v < 18446744073709551616.0 : -v <= hi;
}

void require_scalar_fits(DType d, double v, const char* what, const char* context,
                         bool multiplier) {
  if (multiplier ? multiplier_fits(d, v) : scalar_fits(d, v)) return;
  double lo, hi;
  dtype_range(d, &lo, &hi);
  if (multiplier && is_unsigned(d)) lo = -hi;
  fail(SM_ERR_DTYPE,
       "%s = %g cannot be converted to %s without overflow (%s holds [%.17g, %.17g]%s): %s; pass "
       "a value in range, or work in a wider dtype (sm_to converts)",
       what, v, dtype_name(d), dtype_name(d), lo, hi,
       is_floating(d) || is_complex(d) ? ", inf and NaN" : "",
       context);
}

}  // namespace sm
