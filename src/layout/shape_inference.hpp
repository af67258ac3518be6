// Shapes computed from other shapes: NumPy/PyTorch broadcasting and the
// resolution of one -1 against an element count.
#pragma once

#include <cstdint>
#include <vector>

namespace sm {

// NumPy/PyTorch broadcasting of two shapes; SM_ERR_SHAPE naming both shapes.
std::vector<int64_t> broadcast_shapes(const int64_t* a, int na, const int64_t* b, int nb);
// True if `from` broadcasts to `to` (to.size() >= from.size()).
bool broadcastable_to(const int64_t* from, int nfrom, const int64_t* to, int nto);
// Resolves one -1 in shape against numel; SM_ERR_SHAPE for more than one -1,
// other negatives, or a product that does not match numel.
std::vector<int64_t> infer_shape(const int64_t* shape, int ndim, int64_t numel);

}  // namespace sm
