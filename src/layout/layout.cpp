// The Layout record and the checked arithmetic under every layout rule.
#include "layout/layout.hpp"

#include "layout/layout_internal.hpp"

namespace sm {

using namespace layout_internal;

int64_t Layout::numel() const {
  // A zero dim makes the product 0 even when the other sizes' product would
  // overflow (shape [2^62, 6, 0] is a valid empty tensor).
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] == 0) return 0;
  uint64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= static_cast<uint64_t>(sizes[i]);
  return static_cast<int64_t>(n);
}

bool Layout::operator==(const Layout& o) const {
  if (ndim != o.ndim || offset != o.offset) return false;
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] != o.sizes[i] || strides[i] != o.strides[i]) return false;
  return true;
}

bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }

int64_t checked_numel(const int64_t* sizes, int ndim, int64_t itemsize) {
  check_ndim(ndim, "shape");
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] < 0)
      fail(SM_ERR_SHAPE, "shape %s: size %" PRId64 " at dim %d is negative",
           dims_str(sizes, ndim).c_str(), sizes[i], i);
  // A zero anywhere makes numel 0 even if the other sizes would overflow.
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i)
    if (mul_overflows(n, sizes[i], &n))
      fail(SM_ERR_OVERFLOW, "shape %s: number of elements overflows int64",
           dims_str(sizes, ndim).c_str());
  if (itemsize > 0) {
    int64_t bytes;
    if (mul_overflows(n, itemsize, &bytes))
      fail(SM_ERR_OVERFLOW, "shape %s: %" PRId64 " elements of %" PRId64 " bytes overflow int64",
           dims_str(sizes, ndim).c_str(), n, itemsize);
  }
  return n;
}

int wrap_dim(int64_t dim, int ndim, const char* what, bool allow_scalar) {
  int64_t n = ndim;
  if (n == 0 && allow_scalar) n = 1;
  if (n == 0)
    fail(SM_ERR_OUT_OF_BOUNDS, "%s %" PRId64 " is out of range: the tensor is 0-d (no dims)",
         what, dim);
  if (dim < -n || dim >= n)
    fail(SM_ERR_OUT_OF_BOUNDS, "%s %" PRId64 " is out of range [%" PRId64 ", %" PRId64
         "] for a %d-d tensor", what, dim, -n, n - 1, ndim);
  return static_cast<int>(dim < 0 ? dim + n : dim);
}

}  // namespace sm
