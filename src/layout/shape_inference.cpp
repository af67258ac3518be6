// Broadcasting and -1 inference (see shape_inference.hpp).
#include "layout/shape_inference.hpp"

#include <algorithm>
#include <cinttypes>

#include "layout/layout_internal.hpp"

namespace sm {

using namespace layout_internal;

std::vector<int64_t> broadcast_shapes(const int64_t* a, int na, const int64_t* b, int nb) {
  check_ndim(na, "broadcast");
  check_ndim(nb, "broadcast");
  int n = std::max(na, nb);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1;
    int64_t sb = ib >= 0 ? b[ib] : 1;
    if (sa < 0 || sb < 0)
      fail(SM_ERR_SHAPE, "cannot broadcast shapes %s and %s: negative size",
           dims_str(a, na).c_str(), dims_str(b, nb).c_str());
    if (sa == sb || sb == 1) {
      out[static_cast<size_t>(i)] = sa;
    } else if (sa == 1) {
      out[static_cast<size_t>(i)] = sb;
    } else {
      fail(SM_ERR_SHAPE,
           "cannot broadcast shapes %s and %s: size %" PRId64 " vs %" PRId64
           " at dim %d of the result",
           dims_str(a, na).c_str(), dims_str(b, nb).c_str(), sa, sb, i);
    }
  }
  return out;
}

bool broadcastable_to(const int64_t* from, int nfrom, const int64_t* to, int nto) {
  if (nfrom > nto || nfrom < 0) return false;
  for (int i = 0; i < nfrom; ++i) {
    int64_t f = from[nfrom - 1 - i], t = to[nto - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

std::vector<int64_t> infer_shape(const int64_t* shape, int ndim, int64_t numel) {
  check_ndim(ndim, "shape");
  std::vector<int64_t> out(shape, shape + ndim);
  int infer = -1;
  int64_t prod = 1;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == -1) {
      if (infer >= 0)
        fail(SM_ERR_SHAPE, "shape %s: only one dim can be -1 (dims %d and %d are)",
             dims_str(shape, ndim).c_str(), infer, i);
      infer = i;
    } else if (shape[i] < 0) {
      fail(SM_ERR_SHAPE, "shape %s: size %" PRId64 " at dim %d is negative",
           dims_str(shape, ndim).c_str(), shape[i], i);
    } else if (mul_overflows(prod, shape[i], &prod)) {
      fail(SM_ERR_OVERFLOW, "shape %s: number of elements overflows int64",
           dims_str(shape, ndim).c_str());
    }
  }
  if (infer >= 0) {
    if (prod == 0)
      fail(SM_ERR_SHAPE,
           "shape %s: the -1 at dim %d is ambiguous because the other sizes multiply to 0",
           dims_str(shape, ndim).c_str(), infer);
    if (numel % prod != 0)
      fail(SM_ERR_SHAPE, "shape %s is invalid for %" PRId64 " elements",
           dims_str(shape, ndim).c_str(), numel);
    out[static_cast<size_t>(infer)] = numel / prod;
  } else if (prod != numel) {
    fail(SM_ERR_SHAPE, "shape %s (%" PRId64 " elements) is invalid for %" PRId64 " elements",
         dims_str(shape, ndim).c_str(), prod, numel);
  }
  return out;
}

}  // namespace sm
