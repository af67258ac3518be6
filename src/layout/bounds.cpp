// Elements reached and storage fit (see bounds.hpp).
#include "layout/bounds.hpp"

#include <cinttypes>

#include "layout/layout_internal.hpp"

namespace sm {

using namespace layout_internal;

Extent extent(const Layout& l) {
  Extent e;
  if (has_zero_size(l)) return e;
  e.empty = false;
  int64_t lo = l.offset, hi = l.offset;
  for (int i = 0; i < l.ndim; ++i) {
    int64_t span;
    if (mul_overflows(l.sizes[i] - 1, l.strides[i], &span) ||
        add_overflows(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
      fail(SM_ERR_OVERFLOW, "%s: element index range overflows int64 at dim %d",
           describe(l).c_str(), i);
  }
  e.lo = lo;
  e.hi = hi;
  return e;
}

void check_in_storage(const Layout& l, int64_t itemsize, int64_t storage_nbytes) {
  if (itemsize <= 0)
    fail(SM_ERR_INVALID_ARGUMENT, "itemsize %" PRId64 " must be positive", itemsize);
  if (l.offset < 0)
    fail(SM_ERR_OUT_OF_BOUNDS, "%s: storage offset %" PRId64 " is negative",
         describe(l).c_str(), l.offset);
  Extent e = extent(l);
  if (e.empty) return;
  int64_t capacity = storage_nbytes < 0 ? 0 : storage_nbytes / itemsize;
  if (e.lo < 0 || e.hi >= capacity)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "%s reaches elements [%" PRId64 ", %" PRId64 "] but the storage holds %" PRId64
         " elements (%" PRId64 " bytes, itemsize %" PRId64 ")",
         describe(l).c_str(), e.lo, e.hi, capacity, storage_nbytes, itemsize);
}

ByteSpan byte_span(const Layout& l, int64_t itemsize) {
  const Extent e = extent(l);
  ByteSpan s;
  if (e.empty) return s;
  // Overflow here means the strides reach further than any address space.
  if (__builtin_sub_overflow(e.hi, e.lo, &s.nbytes) || __builtin_add_overflow(s.nbytes, 1, &s.nbytes) ||
      __builtin_mul_overflow(s.nbytes, itemsize, &s.nbytes) ||
      __builtin_mul_overflow(e.lo, itemsize, &s.lo_bytes))
    fail(SM_ERR_OVERFLOW,
         "byte span overflows int64: shape %s with strides %s spans more than 2^63 bytes",
         format_dims(l.sizes, l.ndim).c_str(), format_dims(l.strides, l.ndim).c_str());
  return s;
}

int64_t required_storage_bytes(const Layout& l, int64_t itemsize) {
  Extent e = extent(l);
  if (e.empty || e.hi < 0) return 0;
  int64_t n = add_or_fail(e.hi, 1, "required storage");
  return mul_or_fail(n, itemsize, "required storage bytes");
}

}  // namespace sm
