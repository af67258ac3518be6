// The view operations with PyTorch's semantics: each maps a Layout to a new
// Layout over the same storage, with the same offset unless stated (split /
// chunk give start/length ranges instead).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "layout/layout.hpp"

namespace sm {

// PyTorch's computeStride: strides for viewing l as shape (numel must match),
// or false when impossible; *bad_dim_lo/hi (may be NULL) receive the first
// range of l's dims that cannot be merged.
bool view_strides(const Layout& l, const int64_t* shape, int ndim, int64_t* strides_out,
                  int* bad_dim_lo = nullptr, int* bad_dim_hi = nullptr);
// view(): infer_shape + view_strides; SM_ERR_SHAPE naming the dims that
// cannot be merged and suggesting sm_reshape.
Layout view(const Layout& l, const int64_t* shape, int ndim);
Layout as_strided(const Layout& l, const int64_t* shape, const int64_t* strides, int ndim,
                  int64_t offset);  // offset >= 0 (else SM_ERR_OUT_OF_BOUNDS); no storage check
// Python slicing; start/stop may be SM_SLICE_NONE; step != 0.
Layout slice(const Layout& l, int64_t dim, int64_t start, int64_t stop, int64_t step);
Layout narrow(const Layout& l, int64_t dim, int64_t start, int64_t length);
Layout select(const Layout& l, int64_t dim, int64_t index);
Layout permute(const Layout& l, const int32_t* dims, int ndim);
Layout transpose(const Layout& l, int64_t dim0, int64_t dim1);
Layout movedim(const Layout& l, const int32_t* src, const int32_t* dst, int n);
Layout expand(const Layout& l, const int64_t* shape, int ndim);
Layout squeeze(const Layout& l, const int32_t* dims, int n);  // n == 0: all size-1 dims
Layout unsqueeze(const Layout& l, int64_t dim);
Layout flatten(const Layout& l, int64_t start_dim, int64_t end_dim);  // SM_ERR_SHAPE if no view
Layout unflatten(const Layout& l, int64_t dim, const int64_t* sizes, int n);
Layout unfold(const Layout& l, int64_t dim, int64_t size, int64_t step);
Layout diagonal(const Layout& l, int64_t offset, int64_t dim1, int64_t dim2);
Layout flip(const Layout& l, const int32_t* dims, int n);
// Start/length pairs of split / chunk along a (wrapped) dim.
// With count_only, only *count_only is written and no range is built (a count
// query must not allocate one entry per piece).
std::vector<std::pair<int64_t, int64_t>> split_ranges(const Layout& l, int64_t dim,
                                                      int64_t split_size,
                                                      int64_t* count_only = nullptr);
std::vector<std::pair<int64_t, int64_t>> chunk_ranges(const Layout& l, int64_t dim,
                                                      int64_t chunks,
                                                      int64_t* count_only = nullptr);

}  // namespace sm
