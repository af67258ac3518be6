#include "engine/views.hpp"

#include "layout/contiguity.hpp"
#include "layout/view_ops.hpp"

namespace sm {

TensorPtr view(const TensorPtr& t, const int64_t* shape, int ndim) {
  return derive_view(t, view(t->layout(), shape, ndim));
}
TensorPtr as_strided(const TensorPtr& t, const int64_t* shape, const int64_t* strides, int ndim,
                     int64_t storage_offset) {
  return derive_view(t, as_strided(t->layout(), shape, strides, ndim, storage_offset));
}
TensorPtr slice(const TensorPtr& t, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  return derive_view(t, slice(t->layout(), dim, start, stop, step));
}
TensorPtr narrow(const TensorPtr& t, int64_t dim, int64_t start, int64_t length) {
  return derive_view(t, narrow(t->layout(), dim, start, length));
}
TensorPtr select(const TensorPtr& t, int64_t dim, int64_t index) {
  return derive_view(t, select(t->layout(), dim, index));
}
TensorPtr permute(const TensorPtr& t, const int32_t* dims, int ndim) {
  return derive_view(t, permute(t->layout(), dims, ndim));
}
TensorPtr transpose(const TensorPtr& t, int64_t dim0, int64_t dim1) {
  return derive_view(t, transpose(t->layout(), dim0, dim1));
}
TensorPtr movedim(const TensorPtr& t, const int32_t* src, const int32_t* dst, int n) {
  return derive_view(t, movedim(t->layout(), src, dst, n));
}
TensorPtr expand(const TensorPtr& t, const int64_t* shape, int ndim) {
  return derive_view(t, expand(t->layout(), shape, ndim));
}
TensorPtr squeeze(const TensorPtr& t, const int32_t* dims, int n) {
  return derive_view(t, squeeze(t->layout(), dims, n));
}
TensorPtr unsqueeze(const TensorPtr& t, int64_t dim) {
  return derive_view(t, unsqueeze(t->layout(), dim));
}
TensorPtr flatten(const TensorPtr& t, int64_t start_dim, int64_t end_dim) {
  return derive_view(t, flatten(t->layout(), start_dim, end_dim));
}
TensorPtr unflatten(const TensorPtr& t, int64_t dim, const int64_t* sizes, int n) {
  return derive_view(t, unflatten(t->layout(), dim, sizes, n));
}
TensorPtr unfold(const TensorPtr& t, int64_t dim, int64_t size, int64_t step) {
  return derive_view(t, unfold(t->layout(), dim, size, step));
}
TensorPtr diagonal(const TensorPtr& t, int64_t offset, int64_t dim1, int64_t dim2) {
  return derive_view(t, diagonal(t->layout(), offset, dim1, dim2));
}
TensorPtr flip(const TensorPtr& t, const int32_t* dims, int n) {
  return derive_view(t, flip(t->layout(), dims, n));
}

namespace {

// Split and chunk differ only in how the ranges are cut.
using Ranges = std::vector<std::pair<int64_t, int64_t>> (*)(const Layout&, int64_t, int64_t,
                                                            int64_t*);

std::vector<TensorPtr> pieces(const TensorPtr& t, Ranges ranges, int64_t arg, int64_t dim_arg,
                              int64_t max_views, int64_t* count) {
  const Layout& l = t->layout();
  const int dim = wrap_dim(dim_arg, l.ndim, "dim", false);
  ranges(l, dim, arg, count);  // count first: no allocation per piece
  std::vector<TensorPtr> out;
  if (*count > max_views) return out;
  for (const auto& r : ranges(l, dim, arg, nullptr)) out.push_back(derive_view(t, narrow(l, dim, r.first, r.second)));
  return out;
}

}  // namespace

std::vector<TensorPtr> split(const TensorPtr& t, int64_t split_size, int64_t dim, int64_t max_views,
                             int64_t* count) {
  return pieces(t, split_ranges, split_size, dim, max_views, count);
}

std::vector<TensorPtr> chunk(const TensorPtr& t, int64_t chunks, int64_t dim, int64_t max_views,
                             int64_t* count) {
  return pieces(t, chunk_ranges, chunks, dim, max_views, count);
}

bool is_contiguous(const TensorPtr& t, sm_memory_format format) {
  return is_contiguous(t->layout(), format);
}

bool same_storage(const TensorPtr& a, const TensorPtr& b) { return a->storage() == b->storage(); }

}  // namespace sm
