// Helpers the layout/*.cpp files share: layouts and shapes written out for
// error messages, ndim and int64 checks that fail with a status naming the
// operation. Not part of the layout interface: include only from src/layout/.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "layout/layout.hpp"

namespace sm {
namespace layout_internal {

inline std::string dims_str(const int64_t* v, int n) { return format_dims(v, n); }
inline std::string shape_str(const Layout& l) { return format_dims(l.sizes, l.ndim); }
inline std::string strides_str(const Layout& l) { return format_dims(l.strides, l.ndim); }

// "shape [2, 3] strides [3, 1] offset 0", for messages.
inline std::string describe(const Layout& l) {
  return "shape " + shape_str(l) + " strides " + strides_str(l) + " offset " +
         std::to_string(l.offset);
}

inline void check_ndim(int ndim, const char* what) {
  if (ndim < 0 || ndim > kMaxDims)
    fail(SM_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range [0, %d]", what, ndim, kMaxDims);
}

inline int64_t mul_or_fail(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (mul_overflows(a, b, &r))
    fail(SM_ERR_OVERFLOW, "%s: %" PRId64 " * %" PRId64 " overflows int64", what, a, b);
  return r;
}

inline int64_t add_or_fail(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (add_overflows(a, b, &r))
    fail(SM_ERR_OVERFLOW, "%s: %" PRId64 " + %" PRId64 " overflows int64", what, a, b);
  return r;
}

inline bool has_zero_size(const Layout& l) {
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] == 0) return true;
  return false;
}

inline uint64_t uabs(int64_t v) {
  return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

}  // namespace layout_internal
}  // namespace sm
