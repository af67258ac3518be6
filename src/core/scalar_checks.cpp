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
  }
  *lowest = 0;
  *max = 0;
}

bool scalar_fits(DType d, double v) {
  if (d == DType::Bool) return true;
  if (is_floating(d)) {
    if (std::isnan(v) || std::isinf(v)) return true;
    double lo, hi;
    dtype_range(d, &lo, &hi);
    return v >= lo && v <= hi;
  }
  if (!std::isfinite(v)) return false;
  if (d == DType::I64)  // 2^63 - 1 rounds up to 2^63 as a double: compare with 2^63 itself
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  double lo, hi;
  dtype_range(d, &lo, &hi);
  return v >= lo && v <= hi;
}

bool multiplier_fits(DType d, double v) {
  if (scalar_fits(d, v)) return true;
  double lo, hi;
  dtype_range(d, &lo, &hi);
  return is_integral(d) && lo == 0 && v < 0 && -v <= hi;  // unsigned: negatives wrap
}

void require_scalar_fits(DType d, double v, const char* what, const char* context,
                         bool multiplier) {
  if (multiplier ? multiplier_fits(d, v) : scalar_fits(d, v)) return;
  double lo, hi;
  dtype_range(d, &lo, &hi);
  if (multiplier && is_integral(d) && lo == 0) lo = -hi;
  fail(SM_ERR_DTYPE,
       "%s = %g cannot be converted to %s without overflow (%s holds [%.17g, %.17g]%s): %s; pass "
       "a value in range, or work in a wider dtype (sm_to converts)",
       what, v, dtype_name(d), dtype_name(d), lo, hi, is_floating(d) ? ", inf and NaN" : "",
       context);
}

namespace {

bool range_contains(DType outer, DType inner) {
  double olo, ohi, ilo, ihi;
  dtype_range(outer, &olo, &ohi);
  dtype_range(inner, &ilo, &ihi);
  return olo <= ilo && ihi <= ohi;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b || b == DType::Bool) return a;
  if (a == DType::Bool) return b;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {  // two different floats
    if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))
      return DType::F32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (range_contains(a, b)) return a;
  if (range_contains(b, a)) return b;
  // Mixed signedness, neither holds the other: the smallest signed type that
  // holds both (int64 when none does).
  for (DType c : {DType::I16, DType::I32, DType::I64})
    if (range_contains(c, a) && range_contains(c, b)) return c;
  return DType::I64;
}

}  // namespace sm
