// Pure iteration planning for element-wise kernels over N strided operands of
// identical sizes (sources already expanded with stride 0). Shared by the CPU
// and CUDA backends: no devices, no allocation, no exceptions; small arrays in,
// a small struct out. Unit-tested in tests/unit/test_coalesce.cpp.
//
// What plan_iteration does, in order:
//   1. any size 0: the plan is empty (nothing to visit);
//   2. drops size-1 dims (their strides never matter);
//   3. when reordering is allowed, flips every dim whose operand-0 stride is
//      negative (all operands together: each operand's base moves to the
//      element that is visited first), so operand 0 is walked forwards;
//   4. orders dims by operand 0's |stride|, largest first, so the last dim is
//      the one operand 0 moves fastest in ("iterate in destination order");
//      ties go to the other operands' |strides|, then to the original order;
//   5. merges adjacent dims whose strides chain (outer == inner * size) for
//      ALL operands (stride-0 broadcast dims chain with each other).
// Steps 3 and 4 change the order in which elements are visited, never which
// element pairs meet: they are valid for any element-wise op whose operand 0
// (the destination) has no internal overlap, which the engine guarantees.
#pragma once

#include <cstdint>

#include "layout/layout.hpp"

namespace sm {

constexpr int kMaxOperands = 4;

// The product of ndim sizes (1 for ndim 0): the element count of a kernel
// operand or of a plan.
inline int64_t element_count(const int64_t* sizes, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= sizes[i];
  return n;
}

// Dims are row-major: dim 0 outermost, dim ndim-1 innermost (operand 0's
// smallest |stride|). Strides and offsets in elements of each operand.
struct IterPlan {
  int nops = 0;
  int ndim = 0;        // 0 with !empty: exactly one element
  bool empty = false;  // some input size was 0: visit nothing
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  // Element offset to add to each operand's data pointer (element [0,...,0])
  // to reach the first visited element; nonzero only where dims were flipped.
  int64_t offsets[kMaxOperands] = {};

  int64_t numel() const { return empty ? 0 : element_count(sizes, ndim); }
};

// strides[op] points to ndim strides of operand op (op 0 = destination).
// nops in [1, kMaxOperands], ndim in [0, kMaxDims]; sizes >= 0.
// allow_reorder = false keeps the logical (row-major) visiting order and
// only drops size-1 dims and merges (steps 1, 2, 5).
IterPlan plan_iteration(int nops, const int64_t* sizes, int ndim, const int64_t* const* strides,
                        bool allow_reorder = true);

// The dim (other than the innermost) where operand `op` moves fastest, when
// it moves faster there than in the innermost dim: the second axis of a
// cache-blocked 2-D tile (a transpose). -1 when the innermost dim is already
// the operand's best (or it is broadcast there and nowhere better) or the
// plan has fewer than 2 dims. Stride-0 dims never qualify. The pair of the
// one tiling rule (backend/tiling.hpp plan_tiling, which adds each target's
// extents, strides and tile sides): operation plans carry its decision to
// the CPU loops and the CUDA launch planners, which do not call this.
int pick_tile_dim(const IterPlan& p, int op);

// The order to walk the cells of a tiled copy in, slowest dim first: by
// operand `op`'s |stride|, largest first (ties keep the plan's order), so the
// cell walk moves fastest where `op` (the source) continues in memory. A tile
// reads short pieces of many source rows; visiting the tiles in source order
// makes each of those rows a sequential stream across consecutive tiles,
// which memory serves far better than a jump to fresh rows every tile (a
// 2-D f32 transpose on one core: +20-40%), while the destination pieces a
// tile writes are whole rows of the tile written with streaming stores.
// last >= 0: that dim stays last whatever its stride (the row dim of a row
// loop). order receives p.ndim dim indices.
void source_walk_order(const IterPlan& p, int op, int* order, int last);

// p with its dims taken in `order` (order[i] = the dim of p that becomes
// dim i): the same elements and pairings, visited in another order.
IterPlan reorder_dims(const IterPlan& p, const int* order);

// Elements along `dim` before operand `op`'s first element there reaches a
// 64-byte (cache line) boundary, when that is the same for every row along
// `dim`: dim has unit stride, every other dim's stride is a multiple of 64
// bytes, and the offset is a whole number of elements. 0 when the rows
// already start on a line, when they do not all start alike, or when the
// boundary lies past the dim's end. `first_addr`: the address of the
// operand's first visited element; esize: its element size in bytes. A
// tiled copy peels these elements off so that its tiles' pieces of rows
// start on cache lines.
int64_t elements_to_line(const IterPlan& p, int op, int dim, uintptr_t first_addr, int esize);

// Work decomposition for blocked iteration: dim d is cut into blocks of
// block[d] elements (1 for a plain loop dim); the grid has
// ceil(sizes[d] / block[d]) cells along d and total() cells in all, visited
// row-major. Linear cell indices can be split among threads; coords() turns a
// cell index into per-dim cell coordinates with one division per dim (done
// once per chunk of work, never per element).
struct BlockGrid {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};  // the plan's sizes
  int64_t block[kMaxDims] = {};
  int64_t cells[kMaxDims] = {};

  int64_t total() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= cells[i];
    return n;
  }
  void coords(int64_t linear, int64_t* out) const {
    for (int i = ndim - 1; i >= 0; --i) {
      out[i] = linear % cells[i];
      linear /= cells[i];
    }
  }
  // Elements of the cell at coordinate c along dim d (the last cell may be short).
  int64_t extent(int d, int64_t c) const {
    const int64_t start = c * block[d];
    const int64_t left = sizes[d] - start;
    return left < block[d] ? left : block[d];
  }
};

// A grid over p's dims with the given block sizes (values < 1 mean 1, values
// above the dim size mean the whole dim).
BlockGrid make_block_grid(const IterPlan& p, const int64_t* block);

}  // namespace sm
