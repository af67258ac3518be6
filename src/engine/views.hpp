// Views of a tensor: the layout function of the same name (layout/layout.hpp,
// PyTorch's rules) applied to t's layout, then derive_view (bounds-checked
// against t's storage, t's stack lease inherited). No data moves.
#pragma once

#include <vector>

#include "engine/tensor.hpp"

namespace sm {

TensorPtr view(const TensorPtr& t, const int64_t* shape, int ndim);
TensorPtr as_strided(const TensorPtr& t, const int64_t* shape, const int64_t* strides, int ndim,
                     int64_t storage_offset);
TensorPtr slice(const TensorPtr& t, int64_t dim, int64_t start, int64_t stop, int64_t step);
TensorPtr narrow(const TensorPtr& t, int64_t dim, int64_t start, int64_t length);
TensorPtr select(const TensorPtr& t, int64_t dim, int64_t index);
TensorPtr permute(const TensorPtr& t, const int32_t* dims, int ndim);
TensorPtr transpose(const TensorPtr& t, int64_t dim0, int64_t dim1);
TensorPtr movedim(const TensorPtr& t, const int32_t* src, const int32_t* dst, int n);
TensorPtr expand(const TensorPtr& t, const int64_t* shape, int ndim);
TensorPtr squeeze(const TensorPtr& t, const int32_t* dims, int n);  // n == 0: all size-1 dims
TensorPtr unsqueeze(const TensorPtr& t, int64_t dim);
TensorPtr flatten(const TensorPtr& t, int64_t start_dim, int64_t end_dim);
TensorPtr unflatten(const TensorPtr& t, int64_t dim, const int64_t* sizes, int n);
TensorPtr unfold(const TensorPtr& t, int64_t dim, int64_t size, int64_t step);
TensorPtr diagonal(const TensorPtr& t, int64_t offset, int64_t dim1, int64_t dim2);
TensorPtr flip(const TensorPtr& t, const int32_t* dims, int n);

// The pieces of split (pieces of split_size) or chunk (`chunks` pieces) along
// dim, as views. *count is always set; the views are built only when
// *count <= max_views (else none: a count query, or a caller's array that is
// too small, costs no view and no allocation per piece).
std::vector<TensorPtr> split(const TensorPtr& t, int64_t split_size, int64_t dim, int64_t max_views,
                             int64_t* count);
std::vector<TensorPtr> chunk(const TensorPtr& t, int64_t chunks, int64_t dim, int64_t max_views,
                             int64_t* count);

// Metadata questions about views.
bool is_contiguous(const TensorPtr& t, sm_memory_format format);
bool same_storage(const TensorPtr& a, const TensorPtr& b);

}  // namespace sm
