// Dense layouts per memory format (row-major, channels-last 2D/3D, PyTorch's
// preserve-format empty_like) and the contiguity questions asked of a layout:
// is it contiguous in a format, is it non-overlapping and dense.
#pragma once

#include <cstdint>

#include "layout/layout.hpp"
#include "stridemem.h"

namespace sm {

// The layout of sizes with the given strides (NULL: row-major, as
// dense_layout), offset 0. Checks nothing of its own: callers validate.
Layout strided_layout(const int64_t* sizes, const int64_t* strides, int ndim);

// Dense strides of sizes in memory format (SM_CONTIGUOUS, SM_CHANNELS_LAST
// needs ndim 4, SM_CHANNELS_LAST_3D needs ndim 5: else SM_ERR_SHAPE).
// Size-0 and size-1 dims get the strides PyTorch gives them: products of
// max(size, 1) for SM_CONTIGUOUS, plain products for the channels-last
// formats (a size-0 dim zeroes the strides outside it). SM_PRESERVE is
// SM_ERR_INVALID_ARGUMENT here.
void dense_strides(const int64_t* sizes, int ndim, sm_memory_format format, int64_t* strides);
Layout dense_layout(const int64_t* sizes, int ndim, sm_memory_format format);

// PyTorch's empty_like(preserve_format) layout for `l`, offset 0, strides
// all positive: a non-overlapping and dense `l` keeps its |strides| exactly
// (size-1 dims and empty layouts included); any other gets
// infer_dense_strides: dims sorted by |stride| (equal |strides|: the smaller
// size inside; stride-0 dims stay in place), dense strides in that order.
Layout dense_like(const Layout& l);

// PyTorch's is_contiguous(memory_format): true if every dim of size > 1 has
// the dense stride of that format (size-1 dims ignored). Numel 0 is always
// SM_CONTIGUOUS; channels-last checks an empty tensor's strides like any
// other's (size-0 dims included, as dense_strides makes them).
// SM_CHANNELS_LAST with ndim != 4 (3D: != 5) is false. SM_PRESERVE: true if
// non-overlapping and dense in some dim order.
bool is_contiguous(const Layout& l, sm_memory_format format);
// PyTorch's is_non_overlapping_and_dense, accepting negative strides (a
// flipped dense tensor is dense).
bool is_non_overlapping_and_dense(const Layout& l);

}  // namespace sm
