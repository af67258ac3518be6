// Dense strides and contiguity (see contiguity.hpp). c10's contiguity rules
// are the reference, extended to negative strides.
#include "layout/contiguity.hpp"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <vector>

#include "layout/layout_internal.hpp"

namespace sm {

using namespace layout_internal;

namespace {

// Fills strides innermost-first along `order` (order[0] outermost). A product
// can pass int64 only when the tensor is empty (it is at most numel, which
// checked_numel bounds otherwise): an empty tensor addresses no element, so
// its strides are free and the product saturates at INT64_MAX rather than
// making an empty tensor impossible to create or copy. Row-major
// takes the product of max(size, 1) of the dims inside (PyTorch's
// contiguous strides: a size-0 dim does not zero the dims outside it);
// channels_last(_3d) takes the plain product, as PyTorch's
// get_channels_last_strides_2d/3d do, so a size-0 dim zeroes every stride
// outside it (torch.empty(2,0,4,5, memory_format=torch.channels_last).stride()
// is (0, 1, 0, 0)).
void strides_in_order(const int64_t* sizes, int ndim, const int* order, bool zero_collapses,
                      int64_t* strides) {
  const bool empty = std::any_of(sizes, sizes + ndim, [](int64_t n) { return n == 0; });
  int64_t s = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    int d = order[k];
    strides[d] = s;
    if (k == 0) break;
    const int64_t f = zero_collapses ? sizes[d] : std::max<int64_t>(sizes[d], 1);
    int64_t next;
    if (mul_overflows(s, f, &next)) {
      if (!empty)
        fail(SM_ERR_OVERFLOW, "dense strides of shape %s overflow int64",
             dims_str(sizes, ndim).c_str());
      next = INT64_MAX;
    }
    s = next;
  }
}

}  // namespace

void dense_strides(const int64_t* sizes, int ndim, sm_memory_format format, int64_t* strides) {
  check_ndim(ndim, "dense_strides");
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] < 0)
      fail(SM_ERR_SHAPE, "shape %s: size %" PRId64 " at dim %d is negative",
           dims_str(sizes, ndim).c_str(), sizes[i], i);
  int order[kMaxDims];
  switch (format) {
    case SM_CONTIGUOUS:
      for (int i = 0; i < ndim; ++i) order[i] = i;
      break;
    case SM_CHANNELS_LAST: {
      if (ndim != 4)
        fail(SM_ERR_SHAPE, "channels_last needs a 4-d shape, got %s (%d-d)",
             dims_str(sizes, ndim).c_str(), ndim);
      const int o[4] = {0, 2, 3, 1};  // N H W C
      std::copy(o, o + 4, order);
      break;
    }
    case SM_CHANNELS_LAST_3D: {
      if (ndim != 5)
        fail(SM_ERR_SHAPE, "channels_last_3d needs a 5-d shape, got %s (%d-d)",
             dims_str(sizes, ndim).c_str(), ndim);
      const int o[5] = {0, 2, 3, 4, 1};  // N D H W C
      std::copy(o, o + 5, order);
      break;
    }
    case SM_PRESERVE:
      fail(SM_ERR_INVALID_ARGUMENT, "memory format preserve has no strides of its own");
    default:
      fail(SM_ERR_INVALID_ARGUMENT, "unknown memory format %d", static_cast<int>(format));
  }
  strides_in_order(sizes, ndim, order, format != SM_CONTIGUOUS, strides);
}

Layout dense_layout(const int64_t* sizes, int ndim, sm_memory_format format) {
  Layout l;
  dense_strides(sizes, ndim, format, l.strides);
  l.ndim = ndim;
  std::copy(sizes, sizes + ndim, l.sizes);
  return l;
}

Layout strided_layout(const int64_t* sizes, const int64_t* strides, int ndim) {
  if (!strides) return dense_layout(sizes, ndim, SM_CONTIGUOUS);
  Layout l;
  l.ndim = ndim;
  std::copy(sizes, sizes + ndim, l.sizes);
  std::copy(strides, strides + ndim, l.strides);
  return l;
}

Layout dense_like(const Layout& l) {
  Layout r;
  r.ndim = l.ndim;
  std::copy(l.sizes, l.sizes + l.ndim, r.sizes);
  // A non-overlapping and dense input keeps its strides exactly, those of
  // size-1 dims and of empty tensors included, as PyTorch's clone and
  // empty_like(preserve_format) do (torch.empty_strided((4,1,2),(1,7,4))
  // .clone().stride() is (1, 7, 4)). Only the signs go: the copy starts at
  // offset 0, and |strides| of a dense layout are dense too.
  if (is_non_overlapping_and_dense(l)) {
    bool all_fit = true;
    for (int i = 0; i < l.ndim; ++i) {
      // INT64_MIN has no positive twin; it can only sit on a size <= 1 dim
      // or in an empty tensor (a dense layout bounds the others by numel).
      if (l.strides[i] == INT64_MIN) {
        all_fit = false;
        break;
      }
      r.strides[i] = l.strides[i] < 0 ? -l.strides[i] : l.strides[i];
    }
    if (all_fit) return r;
  }
  // Otherwise PyTorch's infer_dense_strides, on |stride|: an insertion sort
  // from the innermost dim outward. A dim moves inside another when its
  // |stride| is smaller, or, at equal |strides|, when its size is smaller;
  // a stride-0 dim and equal (|stride|, size) pairs compare as "ambiguous":
  // no move, but the scan goes on past them, so expanded dims keep their
  // row-major place. Size 0 and 1 dims add no factor to the strides outside.
  int perm[kMaxDims];  // perm[0] innermost
  for (int i = 0; i < l.ndim; ++i) perm[i] = l.ndim - 1 - i;
  // > 0: a belongs outside b; < 0: inside; 0: ambiguous.
  auto compare = [&](int a, int b) {
    const uint64_t sa = uabs(l.strides[a]), sb = uabs(l.strides[b]);
    if (sa == 0 || sb == 0) return 0;
    if (sa != sb) return sa > sb ? 1 : -1;
    return l.sizes[a] > l.sizes[b] ? 1 : 0;
  };
  for (int i = 1; i < l.ndim; ++i) {
    int pos = i;
    for (int j = i - 1; j >= 0; --j) {
      const int c = compare(perm[j], perm[pos]);
      if (c > 0) {
        std::swap(perm[j], perm[pos]);
        pos = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  int order[kMaxDims];  // outermost first
  for (int i = 0; i < l.ndim; ++i) order[i] = perm[l.ndim - 1 - i];
  strides_in_order(l.sizes, l.ndim, order, false, r.strides);
  return r;
}

bool is_contiguous(const Layout& l, sm_memory_format format) {
  const int* order = nullptr;
  static const int cl2[4] = {0, 2, 3, 1};
  static const int cl3[5] = {0, 2, 3, 4, 1};
  int idx[kMaxDims];
  switch (format) {
    case SM_CONTIGUOUS:
      for (int i = 0; i < l.ndim; ++i) idx[i] = i;
      order = idx;
      break;
    case SM_CHANNELS_LAST:
      if (l.ndim != 4) return false;
      order = cl2;
      break;
    case SM_CHANNELS_LAST_3D:
      if (l.ndim != 5) return false;
      order = cl3;
      break;
    case SM_PRESERVE:
      return is_non_overlapping_and_dense(l);
    default:
      fail(SM_ERR_INVALID_ARGUMENT, "unknown memory format %d", static_cast<int>(format));
  }
  // Row-major: every empty tensor is contiguous (c10's compute_contiguous).
  // Channels-last has no such rule in PyTorch (compute_channels_last_
  // contiguous_2d/3d): an empty tensor is channels-last contiguous only when
  // its strides are the plain products, a size-0 dim zeroing the ones outside
  // it (torch.empty(0,3,1,5).is_contiguous(memory_format=torch.channels_last)
  // is False), which is what dense_strides gives it.
  if (format == SM_CONTIGUOUS && has_zero_size(l)) return true;
  int64_t expected = 1;
  for (int k = l.ndim - 1; k >= 0; --k) {
    int d = order[k];
    if (l.sizes[d] == 1) continue;  // any stride is fine for a size-1 dim
    if (l.strides[d] != expected) return false;
    if (mul_overflows(expected, l.sizes[d], &expected)) {
      // Only an empty tensor's product can pass int64 without its layout
      // reaching past it: saturate as strides_in_order does.
      if (!has_zero_size(l)) return false;
      expected = INT64_MAX;
    }
  }
  return true;
}

bool is_non_overlapping_and_dense(const Layout& l) {
  if (has_zero_size(l)) return true;
  int order[kMaxDims];
  int n = 0;
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] > 1) order[n++] = i;  // size-1 dims never matter
  std::sort(order, order + n,
            [&](int a, int b) { return uabs(l.strides[a]) < uabs(l.strides[b]); });
  uint64_t expected = 1;
  for (int k = 0; k < n; ++k) {
    int d = order[k];
    if (uabs(l.strides[d]) != expected) return false;
    // Past 2^64 no later |stride| can match: only the outermost may overflow.
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(l.sizes[d]), &expected))
      return k == n - 1;
  }
  return true;
}

}  // namespace sm
