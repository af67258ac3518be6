// View operations (see view_ops.hpp). ATen's computeStride and
// inferExpandGeometry are the reference, with NumPy's negative strides on top:
// every rule here works on |stride| or on the signed chain of strides, never
// assumes strides are positive.
#include "layout/view_ops.hpp"

#include <algorithm>
#include <cinttypes>
#include <string>
#include <vector>

#include "layout/bounds.hpp"
#include "layout/contiguity.hpp"
#include "layout/layout_internal.hpp"
#include "layout/shape_inference.hpp"

namespace sm {

using namespace layout_internal;

namespace {

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
