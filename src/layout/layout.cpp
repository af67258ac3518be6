// Pure layout logic (see layout.hpp). PyTorch's semantics are the reference
// (c10 contiguity, ATen's computeStride / inferExpandGeometry / MemoryOverlap),
// with NumPy's negative strides on top: every rule below works on |stride| or
// on the signed chain of strides, never assumes strides are positive.
#include "layout/layout.hpp"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <string>
#include <utility>

namespace sm {

namespace {

std::string dims_str(const int64_t* v, int n) { return format_dims(v, n); }
std::string shape_str(const Layout& l) { return format_dims(l.sizes, l.ndim); }
std::string strides_str(const Layout& l) { return format_dims(l.strides, l.ndim); }

// "shape [2, 3] strides [3, 1] offset 0", for messages.
std::string describe(const Layout& l) {
  return "shape " + shape_str(l) + " strides " + strides_str(l) + " offset " +
         std::to_string(l.offset);
}

void check_ndim(int ndim, const char* what) {
  if (ndim < 0 || ndim > kMaxDims)
    fail(SM_ERR_INVALID_ARGUMENT, "%s: ndim %d is out of range [0, %d]", what, ndim, kMaxDims);
}

int64_t mul_or_fail(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (mul_overflows(a, b, &r))
    fail(SM_ERR_OVERFLOW, "%s: %" PRId64 " * %" PRId64 " overflows int64", what, a, b);
  return r;
}

int64_t add_or_fail(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (add_overflows(a, b, &r))
    fail(SM_ERR_OVERFLOW, "%s: %" PRId64 " + %" PRId64 " overflows int64", what, a, b);
  return r;
}

bool has_zero_size(const Layout& l) {
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] == 0) return true;
  return false;
}

uint64_t uabs(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

// Element indices of a small layout, row-major order.
std::vector<int64_t> element_indices(const Layout& l) {
  std::vector<int64_t> out;
  if (has_zero_size(l)) return out;
  out.reserve(static_cast<size_t>(l.numel()));
  int64_t idx[kMaxDims] = {};
  int64_t cur = l.offset;
  for (;;) {
    out.push_back(cur);
    int d = l.ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < l.sizes[d]) {
        cur += l.strides[d];
        break;
      }
      cur -= (l.sizes[d] - 1) * l.strides[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

// A view with no elements must not get a negative offset from a negative
// stride (check_in_storage refuses negative offsets even when empty): it keeps
// the input's offset instead.
void settle_empty_offset(Layout& r, int64_t old_offset) {
  if (r.offset < 0 && has_zero_size(r)) r.offset = old_offset;
}

Layout copy_without_dim(const Layout& l, int dim) {
  Layout r;
  r.offset = l.offset;
  for (int i = 0; i < l.ndim; ++i) {
    if (i == dim) continue;
    r.sizes[r.ndim] = l.sizes[i];
    r.strides[r.ndim] = l.strides[i];
    ++r.ndim;
  }
  return r;
}

// Wraps each of n dims and refuses repeats (permute/flip/movedim/squeeze).
void wrap_unique_dims(const int32_t* dims, int n, int ndim, const char* what, int* out) {
  bool seen[kMaxDims] = {};
  for (int i = 0; i < n; ++i) {
    // A 0-d tensor accepts dim 0 and -1; both wrap to 0 and count once.
    int d = wrap_dim(dims[i], ndim, what);
    if (seen[d]) {
      std::vector<int64_t> all(dims, dims + n);
      fail(SM_ERR_INVALID_ARGUMENT, "%s: dim %d appears more than once in %s", what, dims[i],
           dims_str(all.data(), n).c_str());
    }
    seen[d] = true;
    out[i] = d;
  }
}

}  // namespace

// ---- Layout -------------------------------------------------------------------

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

// ---- arithmetic ---------------------------------------------------------------

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

// ---- dense layouts ---------------------------------------------------------------

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

// ---- bounds --------------------------------------------------------------------

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

// ---- overlap --------------------------------------------------------------------

Overlap internal_overlap(const Layout& l, int64_t exact_limit) {
  if (has_zero_size(l)) return Overlap::No;
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] > 1 && l.strides[i] == 0) return Overlap::Yes;
  if (is_non_overlapping_and_dense(l)) return Overlap::No;
  // Mixed-radix test: sorted by |stride|, each stride beyond the reach of all
  // smaller ones means every element index is distinct.
  int order[kMaxDims];
  int n = 0;
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] > 1) order[n++] = i;
  std::sort(order, order + n,
            [&](int a, int b) { return uabs(l.strides[a]) < uabs(l.strides[b]); });
  // reach saturates at UINT64_MAX: no later stride can then exceed it, which
  // only sends us on to the exact check.
  bool disjoint = true;
  uint64_t reach = 0;  // sum of (size-1)*|stride| of the smaller dims
  for (int k = 0; k < n; ++k) {
    uint64_t s = uabs(l.strides[order[k]]), span;
    if (s <= reach) {
      disjoint = false;
      break;
    }
    if (__builtin_mul_overflow(static_cast<uint64_t>(l.sizes[order[k]] - 1), s, &span) ||
        __builtin_add_overflow(reach, span, &reach))
      reach = UINT64_MAX;
  }
  if (disjoint) return Overlap::No;
  int64_t numel = l.numel();  // no overflow: sizes are valid and numel <= extent
  const Extent e = extent(l);
  const uint64_t span = static_cast<uint64_t>(e.hi) - static_cast<uint64_t>(e.lo) + 1;
  if (static_cast<uint64_t>(numel) > span) return Overlap::Yes;  // pigeonhole
  if (numel > exact_limit && span <= kOverlapBitmapLimit) {
    // Exact at any numel when the reached range is modest: one bit per
    // element index, walked in odometer order (no index division).
    std::vector<uint64_t> seen((span + 63) / 64, 0);
    int64_t counter[kMaxDims] = {};
    int64_t index = l.offset - e.lo;
    for (int64_t k = 0; k < numel; ++k) {
      const uint64_t bit = static_cast<uint64_t>(index);
      uint64_t& word = seen[bit / 64];
      const uint64_t mask = uint64_t(1) << (bit % 64);
      if (word & mask) return Overlap::Yes;
      word |= mask;
      for (int d = l.ndim - 1; d >= 0; --d) {
        if (++counter[d] < l.sizes[d]) {
          index += l.strides[d];
          break;
        }
        index -= (l.sizes[d] - 1) * l.strides[d];
        counter[d] = 0;
      }
    }
    return Overlap::No;
  }
  if (numel <= exact_limit) {
    std::vector<int64_t> idx = element_indices(l);
    std::sort(idx.begin(), idx.end());
    return std::adjacent_find(idx.begin(), idx.end()) != idx.end() ? Overlap::Yes : Overlap::No;
  }
  return Overlap::TooHard;
}

namespace {

// Ignoring size<=1 dims' strides: they never change an address.
bool same_walk(const Layout& a, const Layout& b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.sizes[i] != b.sizes[i]) return false;
    if (a.sizes[i] > 1 && a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

uint64_t gcd_u(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

}  // namespace

OverlapStatus overlap_status(const Layout& a, uintptr_t base_a, int64_t itemsize_a,
                             const Layout& b, uintptr_t base_b, int64_t itemsize_b,
                             int64_t exact_limit) {
  Extent ea = extent(a), eb = extent(b);
  if (ea.empty || eb.empty) return OverlapStatus::None;
  int64_t a_lo, a_hi, b_lo, b_hi, a_first, b_first;
  // Byte offsets relative to each base; an overflow here means the views are
  // not real memory: answer cautiously.
  if (mul_overflows(ea.lo, itemsize_a, &a_lo) || mul_overflows(ea.hi, itemsize_a, &a_hi) ||
      mul_overflows(eb.lo, itemsize_b, &b_lo) || mul_overflows(eb.hi, itemsize_b, &b_hi) ||
      mul_overflows(a.offset, itemsize_a, &a_first) ||
      mul_overflows(b.offset, itemsize_b, &b_first))
    return OverlapStatus::TooHard;
  // Addresses as unsigned (wrapping) sums: real memory never wraps.
  const uintptr_t a0 = base_a + static_cast<uintptr_t>(a_first);
  const uintptr_t b0 = base_b + static_cast<uintptr_t>(b_first);
  if (a0 == b0 && itemsize_a == itemsize_b && same_walk(a, b)) return OverlapStatus::Full;

  const uintptr_t a_begin = base_a + static_cast<uintptr_t>(a_lo);
  const uintptr_t a_end = base_a + static_cast<uintptr_t>(a_hi) + static_cast<uintptr_t>(itemsize_a);
  const uintptr_t b_begin = base_b + static_cast<uintptr_t>(b_lo);
  const uintptr_t b_end = base_b + static_cast<uintptr_t>(b_hi) + static_cast<uintptr_t>(itemsize_b);
  if (a_end <= b_begin || b_end <= a_begin) return OverlapStatus::None;

  // Both dense: each covers its whole byte range, so the ranges' intersection
  // is shared.
  const bool dense_a = is_non_overlapping_and_dense(a), dense_b = is_non_overlapping_and_dense(b);
  if (dense_a && dense_b) return OverlapStatus::Partial;
  // One dense: the other's lowest and highest elements are really touched, so
  // either one landing inside the dense range shares a byte.
  auto inside = [](uintptr_t p, uintptr_t begin, uintptr_t end) { return p >= begin && p < end; };
  if (dense_a && (inside(b_begin, a_begin, a_end) || inside(b_end - 1, a_begin, a_end)))
    return OverlapStatus::Partial;
  if (dense_b && (inside(a_begin, b_begin, b_end) || inside(a_end - 1, b_begin, b_end)))
    return OverlapStatus::Partial;

  // Residue test: every byte address of a view is (first address + a multiple
  // of g) + [0, itemsize), with g the gcd of all byte strides; if the two
  // residue windows mod g are disjoint, no byte is shared (a[::2] vs a[1::2]).
  uint64_t g = 0;
  for (int i = 0; i < a.ndim; ++i)
    if (a.sizes[i] > 1) g = gcd_u(g, uabs(a.strides[i]) * static_cast<uint64_t>(itemsize_a));
  for (int i = 0; i < b.ndim; ++i)
    if (b.sizes[i] > 1) g = gcd_u(g, uabs(b.strides[i]) * static_cast<uint64_t>(itemsize_b));
  if (g > 0 && static_cast<uint64_t>(itemsize_a) + static_cast<uint64_t>(itemsize_b) <= g) {
    uint64_t ra = a0 % g, rb = b0 % g;
    uint64_t d_ab = (rb + g - ra) % g;  // b's window start, seen from a's
    uint64_t d_ba = (ra + g - rb) % g;
    if (d_ab >= static_cast<uint64_t>(itemsize_a) && d_ba >= static_cast<uint64_t>(itemsize_b))
      return OverlapStatus::None;
  }

  int64_t na = a.numel(), nb = b.numel();
  if (na <= exact_limit && nb <= exact_limit && na + nb <= exact_limit) {
    std::vector<int64_t> ia = element_indices(a), ib = element_indices(b);
    std::vector<uintptr_t> sa(ia.size()), sb(ib.size());
    for (size_t i = 0; i < ia.size(); ++i)
      sa[i] = base_a + static_cast<uintptr_t>(ia[i] * itemsize_a);
    for (size_t i = 0; i < ib.size(); ++i)
      sb[i] = base_b + static_cast<uintptr_t>(ib[i] * itemsize_b);
    std::sort(sa.begin(), sa.end());
    // For each b interval [s, s+isb): the a interval with the largest start
    // below s+isb has the largest end (all a intervals are equally long).
    for (uintptr_t s : sb) {
      auto it = std::lower_bound(sa.begin(), sa.end(), s + static_cast<uintptr_t>(itemsize_b));
      if (it == sa.begin()) continue;
      --it;
      if (*it + static_cast<uintptr_t>(itemsize_a) > s) return OverlapStatus::Partial;
    }
    return OverlapStatus::None;
  }
  return OverlapStatus::TooHard;
}

// ---- broadcasting -------------------------------------------------------------------

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

// ---- views ------------------------------------------------------------------------------

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

bool view_strides(const Layout& l, const int64_t* shape, int ndim, int64_t* strides_out,
                  int* bad_dim_lo, int* bad_dim_hi) {
  if (bad_dim_lo) *bad_dim_lo = -1;
  if (bad_dim_hi) *bad_dim_hi = -1;
  int64_t numel = l.numel();
  {
    int64_t n = 1;
    bool zero = false;
    for (int i = 0; i < ndim; ++i) {
      if (shape[i] < 0) return false;
      if (shape[i] == 0) zero = true;
    }
    if (!zero)
      for (int i = 0; i < ndim; ++i)
        if (mul_overflows(n, shape[i], &n)) return false;
    if ((zero ? 0 : n) != numel) return false;
  }
  int64_t tmp[kMaxDims];
  if (l.ndim == 0) {
    for (int i = 0; i < ndim; ++i) strides_out[i] = 1;
    return true;
  }
  if (numel == 0) {
    bool same = ndim == l.ndim && std::equal(shape, shape + ndim, l.sizes);
    if (same) {
      std::copy(l.strides, l.strides + ndim, strides_out);
    } else {
      int64_t s = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        tmp[d] = s;
        if (mul_overflows(s, std::max<int64_t>(shape[d], 1), &s)) s = 0;  // unused further out
      }
      std::copy(tmp, tmp + ndim, strides_out);
    }
    return true;
  }
  // ATen's computeStride: walk old dims innermost-first in "chunks" whose
  // strides chain (stride[d-1] == numel(chunk) * base); each chunk must be
  // covered exactly by a run of new dims. The chain test is signed, so a
  // flipped (negative-stride) run merges when its strides chain too.
  int view_d = ndim - 1;
  int64_t chunk_base = l.strides[l.ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int td = l.ndim - 1; td >= 0; --td) {
    tensor_numel *= l.sizes[td];
    bool chunk_end = td == 0;
    if (!chunk_end && l.sizes[td - 1] != 1) {
      int64_t want;
      chunk_end = mul_overflows(tensor_numel, chunk_base, &want) || l.strides[td - 1] != want;
    }
    if (chunk_end) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        int64_t s;
        if (mul_overflows(view_numel, chunk_base, &s)) s = chunk_base;  // only for size-1 dims
        tmp[view_d] = s;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) {
        // A new dim spans this chunk and the next old dim outward.
        if (bad_dim_lo) *bad_dim_lo = td - 1;
        if (bad_dim_hi) *bad_dim_hi = td;
        return false;
      }
      if (td > 0) {
        chunk_base = l.strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  std::copy(tmp, tmp + ndim, strides_out);
  return true;
}

namespace {

Layout view_or_fail(const Layout& l, const int64_t* shape, int ndim, const char* what) {
  check_ndim(ndim, what);
  Layout r;
  r.ndim = ndim;
  r.offset = l.offset;
  std::copy(shape, shape + ndim, r.sizes);
  int lo, hi;
  if (!view_strides(l, shape, ndim, r.strides, &lo, &hi)) {
    if (lo >= 0)
      fail(SM_ERR_SHAPE,
           "%s: cannot view %s as shape %s without a copy: dims %d and %d (sizes %" PRId64
           " and %" PRId64 ", strides %" PRId64 " and %" PRId64
           ") cannot be merged because their strides do not chain; use sm_reshape, which "
           "copies when needed",
           what, describe(l).c_str(), dims_str(shape, ndim).c_str(), lo, hi, l.sizes[lo],
           l.sizes[hi], l.strides[lo], l.strides[hi]);
    fail(SM_ERR_SHAPE, "%s: shape %s is invalid for a tensor of shape %s", what,
         dims_str(shape, ndim).c_str(), shape_str(l).c_str());
  }
  return r;
}

}  // namespace

Layout view(const Layout& l, const int64_t* shape, int ndim) {
  check_ndim(ndim, "view");
  std::vector<int64_t> s = infer_shape(shape, ndim, l.numel());
  return view_or_fail(l, s.data(), ndim, "view");
}

Layout as_strided(const Layout& l, const int64_t* shape, const int64_t* strides, int ndim,
                  int64_t offset) {
  (void)l;
  checked_numel(shape, ndim);
  Layout r = strided_layout(shape, strides, ndim);
  r.offset = offset;
  if (offset < 0)
    fail(SM_ERR_OUT_OF_BOUNDS, "as_strided: storage offset %" PRId64 " is negative", offset);
  extent(r);  // SM_ERR_OVERFLOW when (size-1)*stride sums overflow
  return r;
}

Layout slice(const Layout& l, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  int d = wrap_dim(dim, l.ndim, "slice dim", false);
  if (step == 0) fail(SM_ERR_INVALID_ARGUMENT, "slice: step must not be 0");
  const int64_t n = l.sizes[d];
  int64_t len;
  if (step > 0) {
    if (start == SM_SLICE_NONE) start = 0;
    else if (start < 0) start = std::max<int64_t>(start + n, 0);
    else start = std::min(start, n);
    if (stop == SM_SLICE_NONE) stop = n;
    else if (stop < 0) stop = std::max<int64_t>(stop + n, 0);
    else stop = std::min(stop, n);
    len = stop > start ? (stop - start - 1) / step + 1 : 0;
  } else {
    // -1 stands for "before the first element" once clamped.
    if (start == SM_SLICE_NONE) start = n - 1;
    else if (start < 0) start = std::max<int64_t>(start + n, -1);
    else start = std::min(start, n - 1);
    if (stop == SM_SLICE_NONE) stop = -1;
    else if (stop < 0) stop = std::max<int64_t>(stop + n, -1);
    else stop = std::min(stop, n - 1);
    uint64_t ustep = uabs(step);
    len = start > stop ? static_cast<int64_t>(static_cast<uint64_t>(start - stop - 1) / ustep + 1)
                       : 0;
  }
  Layout r = l;
  r.sizes[d] = len;
  if (len > 0) {
    r.offset = add_or_fail(l.offset, mul_or_fail(start, l.strides[d], "slice"), "slice offset");
  } else {
    // Empty: PyTorch's offset when it is harmless, else keep ours (a
    // negative-stride dim could push it below 0).
    int64_t s = std::min(std::max<int64_t>(start, 0), n), p, o;
    if (!mul_overflows(s, l.strides[d], &p) && !add_overflows(l.offset, p, &o) && o >= 0)
      r.offset = o;
  }
  int64_t st;
  if (mul_overflows(l.strides[d], step, &st)) {
    if (len > 1)
      fail(SM_ERR_OVERFLOW, "slice: stride %" PRId64 " * step %" PRId64 " overflows int64",
           l.strides[d], step);
    st = l.strides[d];  // size <= 1: the stride never steps, any value is fine
  }
  r.strides[d] = st;
  settle_empty_offset(r, l.offset);
  return r;
}

Layout narrow(const Layout& l, int64_t dim, int64_t start, int64_t length) {
  int d = wrap_dim(dim, l.ndim, "narrow dim", false);
  const int64_t n = l.sizes[d];
  if (length < 0)
    fail(SM_ERR_SHAPE, "narrow: length %" PRId64 " is negative", length);
  // As PyTorch 2: start in [-n, n] (n: the end), negative from the end. A
  // size-0 dim takes only 0 ([torchdiff:narrow-start-range]: torch 1.13
  // wrapped it like a size-1 dim and took -1 too).
  if (start < -n || start > n)
    fail(SM_ERR_OUT_OF_BOUNDS, "narrow: start %" PRId64 " is out of range [%" PRId64
         ", %" PRId64 "] for dim %d of size %" PRId64, start, -n, n, d, n);
  if (start < 0) start += n;
  if (length > n - start)
    fail(SM_ERR_OUT_OF_BOUNDS, "narrow: start %" PRId64 " + length %" PRId64
         " exceeds size %" PRId64 " of dim %d", start, length, n, d);
  Layout r = l;
  r.sizes[d] = length;
  r.offset = add_or_fail(l.offset, mul_or_fail(start, l.strides[d], "narrow"), "narrow offset");
  settle_empty_offset(r, l.offset);
  return r;
}

Layout select(const Layout& l, int64_t dim, int64_t index) {
  int d = wrap_dim(dim, l.ndim, "select dim", false);
  const int64_t n = l.sizes[d];
  if (index < -n || index >= n)
    fail(SM_ERR_OUT_OF_BOUNDS, "select: index %" PRId64 " is out of range [%" PRId64
         ", %" PRId64 "] for dim %d of size %" PRId64, index, -n, n - 1, d, n);
  if (index < 0) index += n;
  Layout r = copy_without_dim(l, d);
  r.offset = add_or_fail(l.offset, mul_or_fail(index, l.strides[d], "select"), "select offset");
  settle_empty_offset(r, l.offset);
  return r;
}

Layout permute(const Layout& l, const int32_t* dims, int ndim) {
  if (ndim != l.ndim)
    fail(SM_ERR_INVALID_ARGUMENT, "permute: %d dims given for a %d-d tensor", ndim, l.ndim);
  int w[kMaxDims];
  wrap_unique_dims(dims, ndim, l.ndim, "permute", w);
  Layout r = l;
  for (int i = 0; i < ndim; ++i) {
    r.sizes[i] = l.sizes[w[i]];
    r.strides[i] = l.strides[w[i]];
  }
  return r;
}

Layout transpose(const Layout& l, int64_t dim0, int64_t dim1) {
  int a = wrap_dim(dim0, l.ndim, "transpose dim0");
  int b = wrap_dim(dim1, l.ndim, "transpose dim1");
  Layout r = l;
  if (l.ndim == 0) return r;
  std::swap(r.sizes[a], r.sizes[b]);
  std::swap(r.strides[a], r.strides[b]);
  return r;
}

Layout movedim(const Layout& l, const int32_t* src, const int32_t* dst, int n) {
  if (n < 0 || n > std::max(l.ndim, 1))
    fail(SM_ERR_INVALID_ARGUMENT, "movedim: %d dims given for a %d-d tensor", n, l.ndim);
  int s[kMaxDims], t[kMaxDims];
  wrap_unique_dims(src, n, l.ndim, "movedim source", s);
  wrap_unique_dims(dst, n, l.ndim, "movedim destination", t);
  if (l.ndim == 0) return l;
  int order[kMaxDims];
  bool used_src[kMaxDims] = {}, used_dst[kMaxDims] = {};
  for (int i = 0; i < n; ++i) {
    order[t[i]] = s[i];
    used_src[s[i]] = used_dst[t[i]] = true;
  }
  // The other dims keep their relative order in the free slots.
  int next = 0;
  for (int i = 0; i < l.ndim; ++i) {
    if (used_dst[i]) continue;
    while (used_src[next]) ++next;
    order[i] = next++;
  }
  Layout r = l;
  for (int i = 0; i < l.ndim; ++i) {
    r.sizes[i] = l.sizes[order[i]];
    r.strides[i] = l.strides[order[i]];
  }
  return r;
}

Layout expand(const Layout& l, const int64_t* shape, int ndim) {
  check_ndim(ndim, "expand");
  if (ndim < l.ndim)
    fail(SM_ERR_SHAPE, "expand: %d sizes %s given for a %d-d tensor of shape %s (need at least %d)",
         ndim, dims_str(shape, ndim).c_str(), l.ndim, shape_str(l).c_str(), l.ndim);
  Layout r;
  r.ndim = ndim;
  r.offset = l.offset;
  for (int i = ndim - 1; i >= 0; --i) {
    int od = l.ndim - ndim + i;  // matching old dim, < 0 for a new leading dim
    int64_t size = od >= 0 ? l.sizes[od] : 1;
    int64_t stride;
    if (od >= 0) {
      stride = l.strides[od];
    } else if (i == ndim - 1) {
      // Only a 0-d input has no dim to chain from: every dim of the result
      // is new and its one element repeats, so stride 0 throughout
      // (torch.tensor(5.).expand(3, 1).stride() is (0, 0)).
      stride = 0;
    } else if (mul_overflows(r.sizes[i + 1], r.strides[i + 1], &stride)) {
      stride = 0;  // a new size-1 dim: the value never matters
    }
    int64_t target = shape[i];
    if (target == -1) {
      if (od < 0)
        fail(SM_ERR_SHAPE, "expand: size -1 at dim %d of %s is not allowed for a new leading dim",
             i, dims_str(shape, ndim).c_str());
      target = size;
    } else if (target < 0) {
      fail(SM_ERR_SHAPE, "expand: size %" PRId64 " at dim %d of %s is negative", target, i,
           dims_str(shape, ndim).c_str());
    }
    if (size != target) {
      if (size != 1)
        fail(SM_ERR_SHAPE,
             "expand: cannot expand shape %s to %s: size %" PRId64
             " must match the existing size %" PRId64 " at non-singleton dim %d",
             shape_str(l).c_str(), dims_str(shape, ndim).c_str(), target, size, i);
      size = target;
      stride = 0;
    }
    r.sizes[i] = size;
    r.strides[i] = stride;
  }
  checked_numel(r.sizes, r.ndim);
  return r;
}

Layout squeeze(const Layout& l, const int32_t* dims, int n) {
  if (n < 0) fail(SM_ERR_INVALID_ARGUMENT, "squeeze: dim count %d is negative", n);
  if (n > std::max(l.ndim, 1))
    fail(SM_ERR_INVALID_ARGUMENT, "squeeze: %d dims given for a %d-d tensor", n, l.ndim);
  bool drop[kMaxDims] = {};
  if (n == 0) {
    for (int i = 0; i < l.ndim; ++i) drop[i] = l.sizes[i] == 1;
  } else {
    int w[kMaxDims];
    wrap_unique_dims(dims, n, l.ndim, "squeeze", w);
    if (l.ndim == 0) return l;
    for (int i = 0; i < n; ++i) drop[w[i]] = l.sizes[w[i]] == 1;
  }
  Layout r;
  r.offset = l.offset;
  for (int i = 0; i < l.ndim; ++i) {
    if (drop[i]) continue;
    r.sizes[r.ndim] = l.sizes[i];
    r.strides[r.ndim] = l.strides[i];
    ++r.ndim;
  }
  return r;
}

Layout unsqueeze(const Layout& l, int64_t dim) {
  if (l.ndim + 1 > kMaxDims)
    fail(SM_ERR_INVALID_ARGUMENT, "unsqueeze: a %d-d tensor cannot gain a dim (max %d)", l.ndim,
         kMaxDims);
  int d = wrap_dim(dim, l.ndim + 1, "unsqueeze dim");
  int64_t stride = 1;
  if (d < l.ndim && mul_overflows(l.sizes[d], l.strides[d], &stride)) stride = 1;
  Layout r;
  r.ndim = l.ndim + 1;
  r.offset = l.offset;
  for (int i = 0, j = 0; i < r.ndim; ++i) {
    if (i == d) {
      r.sizes[i] = 1;
      r.strides[i] = stride;
    } else {
      r.sizes[i] = l.sizes[j];
      r.strides[i] = l.strides[j];
      ++j;
    }
  }
  return r;
}

Layout flatten(const Layout& l, int64_t start_dim, int64_t end_dim) {
  int s = wrap_dim(start_dim, l.ndim, "flatten start_dim");
  int e = wrap_dim(end_dim, l.ndim, "flatten end_dim");
  if (s > e)
    fail(SM_ERR_INVALID_ARGUMENT, "flatten: start_dim %" PRId64 " (dim %d) comes after end_dim %"
         PRId64 " (dim %d)", start_dim, s, end_dim, e);
  if (l.ndim == 0) {
    Layout r;
    r.ndim = 1;
    r.sizes[0] = 1;
    r.strides[0] = 1;
    r.offset = l.offset;
    return r;
  }
  if (s == e) return l;
  int64_t shape[kMaxDims];
  int n = 0;
  for (int i = 0; i < s; ++i) shape[n++] = l.sizes[i];
  int64_t prod = 1;
  bool zero = false;
  for (int i = s; i <= e; ++i) zero |= l.sizes[i] == 0;
  if (zero) prod = 0;
  else
    for (int i = s; i <= e; ++i) prod = mul_or_fail(prod, l.sizes[i], "flatten");
  shape[n++] = prod;
  for (int i = e + 1; i < l.ndim; ++i) shape[n++] = l.sizes[i];
  return view_or_fail(l, shape, n, "flatten");
}

Layout unflatten(const Layout& l, int64_t dim, const int64_t* sizes, int n) {
  int d = wrap_dim(dim, l.ndim, "unflatten dim", false);
  if (n < 1) fail(SM_ERR_INVALID_ARGUMENT, "unflatten: sizes must not be empty (n = %d)", n);
  if (l.ndim - 1 + n > kMaxDims)
    fail(SM_ERR_INVALID_ARGUMENT, "unflatten: result would have %d dims (max %d)", l.ndim - 1 + n,
         kMaxDims);
  std::vector<int64_t> sz;
  try {
    sz = infer_shape(sizes, n, l.sizes[d]);
  } catch (const Error& err) {
    fail(err.status(), "unflatten: sizes %s do not split dim %d of size %" PRId64 ": %s",
         dims_str(sizes, n).c_str(), d, l.sizes[d], err.what());
  }
  // PyTorch's unflatten is a view() of the whole tensor to the new shape, so
  // its strides are view's, not a chain from the old stride alone: size-1
  // dims take the stride computeStride gives them (torch.arange(24).view(2,
  // 12).unflatten(1, (3, 1, 4)).stride() is (12, 4, 4, 1)) and an empty
  // tensor gets row-major strides unless the shape is unchanged. Splitting
  // one dim always is a view, so view_or_fail cannot refuse here.
  int64_t shape[kMaxDims];
  int nd = 0;
  for (int i = 0; i < l.ndim; ++i) {
    if (i == d)
      for (int k = 0; k < n; ++k) shape[nd++] = sz[static_cast<size_t>(k)];
    else
      shape[nd++] = l.sizes[i];
  }
  return view_or_fail(l, shape, nd, "unflatten");
}

Layout unfold(const Layout& l, int64_t dim, int64_t size, int64_t step) {
  int d = wrap_dim(dim, l.ndim, "unfold dim");
  if (l.ndim + 1 > kMaxDims)
    fail(SM_ERR_INVALID_ARGUMENT, "unfold: a %d-d tensor cannot gain a dim (max %d)", l.ndim,
         kMaxDims);
  if (size < 0) fail(SM_ERR_SHAPE, "unfold: window size %" PRId64 " is negative", size);
  if (step <= 0) fail(SM_ERR_INVALID_ARGUMENT, "unfold: step %" PRId64 " must be > 0", step);
  // A 0-d tensor acts as one element along dim 0 (PyTorch).
  const int64_t n = l.ndim == 0 ? 1 : l.sizes[d];
  const int64_t stride = l.ndim == 0 ? 1 : l.strides[d];
  if (size > n)
    fail(SM_ERR_OUT_OF_BOUNDS, "unfold: window size %" PRId64 " exceeds size %" PRId64
         " of dim %d", size, n, d);
  Layout r;
  r.offset = l.offset;
  if (l.ndim == 0) {
    r.ndim = 1;
    r.sizes[0] = size;
    r.strides[0] = 1;
    return r;
  }
  r = l;
  int64_t count = (n - size) / step + 1;
  int64_t st;
  if (mul_overflows(stride, step, &st)) {
    if (count > 1)
      fail(SM_ERR_OVERFLOW, "unfold: stride %" PRId64 " * step %" PRId64 " overflows int64",
           stride, step);
    st = stride;
  }
  r.sizes[d] = count;
  r.strides[d] = st;
  r.sizes[l.ndim] = size;
  r.strides[l.ndim] = stride;
  r.ndim = l.ndim + 1;
  return r;
}

Layout diagonal(const Layout& l, int64_t offset, int64_t dim1, int64_t dim2) {
  int d1 = wrap_dim(dim1, l.ndim, "diagonal dim1", false);
  int d2 = wrap_dim(dim2, l.ndim, "diagonal dim2", false);
  if (d1 == d2)
    fail(SM_ERR_INVALID_ARGUMENT, "diagonal: dim1 %" PRId64 " and dim2 %" PRId64
         " are the same dim %d", dim1, dim2, d1);
  const int64_t n1 = l.sizes[d1], n2 = l.sizes[d2];
  int64_t len;
  if (offset >= 0)
    len = std::max<int64_t>(std::min(n1, n2 - offset), 0);
  else
    len = std::max<int64_t>(std::min(n1 + offset, n2), 0);
  int64_t off = l.offset;
  if (len > 0)  // an empty diagonal keeps the offset (NumPy allows offsets off the end)
    off = offset >= 0 ? add_or_fail(off, mul_or_fail(offset, l.strides[d2], "diagonal"), "diagonal")
                      : add_or_fail(off, mul_or_fail(-offset, l.strides[d1], "diagonal"),
                                    "diagonal");
  int64_t st;
  if (add_overflows(l.strides[d1], l.strides[d2], &st)) {
    if (len > 1)
      fail(SM_ERR_OVERFLOW, "diagonal: strides %" PRId64 " + %" PRId64 " overflow int64",
           l.strides[d1], l.strides[d2]);
    st = l.strides[d1];
  }
  Layout r;
  r.offset = off;
  for (int i = 0; i < l.ndim; ++i) {
    if (i == d1 || i == d2) continue;
    r.sizes[r.ndim] = l.sizes[i];
    r.strides[r.ndim] = l.strides[i];
    ++r.ndim;
  }
  r.sizes[r.ndim] = len;
  r.strides[r.ndim] = st;
  ++r.ndim;
  settle_empty_offset(r, l.offset);
  return r;
}

Layout flip(const Layout& l, const int32_t* dims, int n) {
  if (n < 0 || n > std::max(l.ndim, 1))
    fail(SM_ERR_INVALID_ARGUMENT, "flip: %d dims given for a %d-d tensor", n, l.ndim);
  int w[kMaxDims];
  wrap_unique_dims(dims, n, l.ndim, "flip", w);
  if (l.ndim == 0) return l;
  Layout r = l;
  for (int i = 0; i < n; ++i) {
    int d = w[i];
    if (l.strides[d] == INT64_MIN)
      fail(SM_ERR_OVERFLOW, "flip: stride %" PRId64 " of dim %d cannot be negated", l.strides[d],
           d);
    if (l.sizes[d] > 1 && !has_zero_size(l))
      r.offset = add_or_fail(r.offset, mul_or_fail(l.sizes[d] - 1, l.strides[d], "flip"),
                             "flip offset");
    r.strides[d] = -l.strides[d];
  }
  return r;
}

std::vector<std::pair<int64_t, int64_t>> split_ranges(const Layout& l, int64_t dim,
                                                      int64_t split_size, int64_t* count_only) {
  int d = wrap_dim(dim, l.ndim, "split dim", false);
  const int64_t n = l.sizes[d];
  if (split_size < 0)
    fail(SM_ERR_INVALID_ARGUMENT, "split: split_size %" PRId64 " is negative", split_size);
  if (split_size == 0 && n > 0)
    fail(SM_ERR_INVALID_ARGUMENT, "split: split_size 0 is only allowed for a dim of size 0 "
         "(dim %d has size %" PRId64 ")", d, n);
  int64_t count = split_size == 0 ? 1 : std::max<int64_t>(n / split_size + (n % split_size != 0), 1);
  if (count > INT32_MAX)
    fail(SM_ERR_INVALID_ARGUMENT, "split: %" PRId64 " pieces of %" PRId64
         " along dim %d (size %" PRId64 ") is more than %d", count, split_size, d, n, INT32_MAX);
  if (count_only) {
    *count_only = count;
    return {};
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t start = i * split_size;
    out.emplace_back(start, std::min(split_size, n - start));
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> chunk_ranges(const Layout& l, int64_t dim,
                                                      int64_t chunks, int64_t* count_only) {
  int d = wrap_dim(dim, l.ndim, "chunk dim", false);
  if (chunks <= 0)
    fail(SM_ERR_INVALID_ARGUMENT, "chunk: chunks %" PRId64 " must be > 0", chunks);
  const int64_t n = l.sizes[d];
  if (n == 0) {
    // torch.chunk of an empty dim gives `chunks` empty pieces.
    if (chunks > INT32_MAX)
      fail(SM_ERR_INVALID_ARGUMENT, "chunk: %" PRId64 " chunks is more than %d", chunks,
           INT32_MAX);
    if (count_only) {
      *count_only = chunks;
      return {};
    }
    return std::vector<std::pair<int64_t, int64_t>>(static_cast<size_t>(chunks), {0, 0});
  }
  int64_t split_size = n / chunks + (n % chunks != 0);
  return split_ranges(l, d, split_size, count_only);
}

}  // namespace sm
