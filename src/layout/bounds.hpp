// Which elements a layout reaches and whether a storage holds them: the
// extent in elements, the storage check, the byte span of foreign memory.
#pragma once

#include <cstdint>

#include "layout/layout.hpp"

namespace sm {

struct Extent {
  bool empty = true;   // numel == 0: touches no element
  int64_t lo = 0;      // lowest element index reached (offset + negative strides)
  int64_t hi = 0;      // highest element index reached (inclusive)
};
// Elements reached by the layout; SM_ERR_OVERFLOW if any (size-1)*stride or
// sum overflows.
Extent extent(const Layout& l);
// Checks every element reached lies in [0, storage_nbytes / itemsize), with
// offset >= 0: else SM_ERR_OUT_OF_BOUNDS naming the shape, strides, offset and
// the storage size.
void check_in_storage(const Layout& l, int64_t itemsize, int64_t storage_nbytes);
// For wrapping foreign memory given the address of element [0, ..., 0]: the
// byte offset (<= 0) of the lowest element reached and the bytes from there to
// the end of the highest one (both 0 when empty). SM_ERR_OVERFLOW past int64.
struct ByteSpan {
  int64_t lo_bytes = 0;
  int64_t nbytes = 0;
};
ByteSpan byte_span(const Layout& l, int64_t itemsize);
// Bytes a storage needs to hold every element of l (0 when empty).
int64_t required_storage_bytes(const Layout& l, int64_t itemsize);

}  // namespace sm
