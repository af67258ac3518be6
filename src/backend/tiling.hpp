// The tiling rule: how an operation plan's coalesced iteration is walked,
// elementwise, as rows, or as a transpose cut into tiles, and the tile sides.
// One rule with per-target parameters, read by the plan functions
// (backend/op_plan.cpp) for the target the plan is for; the CPU loops
// (backend/cpu/cpu_loops.cpp) and the CUDA launch planners
// (backend/cuda/launch_plan.cpp) carry out what it decided. Header-only and
// free of any device, so the CUDA launch planning layer (which links below
// the backend) and the kernels (which need the sides at compile time) read
// the same definitions. Unit-tested in tests/unit/test_op_plan.cpp and
// tests/unit/test_launch_plan.cpp.
//
// The rule, for a plan whose operand 0 is written and operand 1 read:
//  - the pair: i = pick_tile_dim(it, 1) (layout/coalesce.hpp), the dim where
//    the source moves fastest when that is not the innermost, and j = the
//    innermost dim (where the destination moves fastest);
//  - the host tiles the pair when both extents reach kHostMinTileExtent;
//  - a CUDA device tiles it when the destination has unit stride along j,
//    the source unit stride (either sign) along i, and both extents reach
//    kMinTransposeExtent (below, tiles would be mostly idle threads);
//  - the sides follow the larger of the two element sizes, so a converted
//    tile fits as a same-dtype tile of that size does;
//  - a gather's iteration (a third operand, the index, whose value moves the
//    source along the gathered dim where operand 1 has stride 0) is never
//    tiled: operand 1's strides do not say where its source moves fastest.
//    It is walked as rows or elementwise; the CPU's gather tiles the plain
//    copies it derives from it (backend/cpu/cpu_index.cpp), by this rule.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "layout/coalesce.hpp"

namespace sm {

// Who carries a plan out: the host's CPU loops or a CUDA device's kernels.
enum class PlanTarget { Host, Cuda };

// How the coalesced iteration is walked: one run of elements, rows (the
// inner dim per row, outer dims around it), or a transpose: the source
// moves fastest along dim i, the destination along j (the inner dim), so
// (i, j) is cut into tiles.
enum class IterShape { Elementwise, Rows, Transpose };

struct Tiling {
  IterShape shape = IterShape::Elementwise;
  int dim_i = -1, dim_j = -1;              // Transpose: the pair
  int64_t side_i = 0, side_j = 0;          // Transpose: tile sides in elements
};

// ---- host parameters -------------------------------------------------------------
// A CPU tile is gathered into a buffer of at most this many bytes (and a
// conversion converts it into a second one).
constexpr int64_t kHostTileBufBytes = 16 << 10;
// Below this extent on either side of the pair, tiles would be slivers:
// such plans run as rows.
constexpr int64_t kHostMinTileExtent = 4;

// Host tile sides for elements of esize bytes: along i (rows of the tile,
// the source's fastest dim) and along j (columns, the destination's inner
// dim); rows * cols * esize stays within kHostTileBufBytes.
constexpr int64_t host_tile_side_j(int esize) {
  // 64 destination columns for 4 bytes and more; smaller elements keep
  // 256-byte destination pieces (the widths measured best:
  // bench/RESULTS.md, CPU kernels).
  return esize >= 4 ? 64 : esize == 1 ? 256 : 128;
}
constexpr int64_t host_tile_side_i(int esize) {
  // 4 bytes and more: 128-byte pieces of each source row (32 f32, 16 f64),
  // which continue from tile to tile when tiles are visited in source
  // order, and an 8 KiB buffer that leaves L1 room for the source lines in
  // flight. Smaller elements: as many rows as the 16 KiB buffer holds (one
  // cache line of each source row for 1-byte ones).
  return esize >= 4 ? 128 / esize : kHostTileBufBytes / (host_tile_side_j(esize) * esize);
}

// ---- CUDA parameters ---------------------------------------------------------------
constexpr int kTransposeBlockX = 32;  // one warp along a tile row
constexpr int kTransposeBlockY = 8;   // warps per block; each does tile/8 rows
constexpr int64_t kMinTransposeExtent = 16;

// Elements each thread of the transpose kernel moves per tile row: along i
// when it loads (the source's stride-1 dim), along j when it stores, for
// elements of elem_bytes (a conversion: the larger side's). 1- and 2-byte
// elements: one 4-byte pack each way (square tiles of 128 or 64). 4- and
// 8-byte elements: two loads per row and one store (tiles of 64 along i by 32
// along j), which keeps short-j tiles at copy speed (bench/RESULTS.md).
// 16-byte elements: one each way.
SM_HOST_DEVICE constexpr int transpose_elems_i(int elem_bytes) {
  return elem_bytes < 4 ? 4 / elem_bytes : elem_bytes <= 8 ? 2 : 1;
}
SM_HOST_DEVICE constexpr int transpose_elems_j(int elem_bytes) {
  return elem_bytes < 4 ? 4 / elem_bytes : 1;
}
// CUDA tile sides (elements): a warp covers one tile row in each phase. The
// kernels instantiate their tiles with these at compile time; the launch
// planner checks that the plan's sides are these.
SM_HOST_DEVICE constexpr int transpose_tile_i(int elem_bytes) {
  return kTransposeBlockX * transpose_elems_i(elem_bytes);
}
SM_HOST_DEVICE constexpr int transpose_tile_j(int elem_bytes) {
  return kTransposeBlockX * transpose_elems_j(elem_bytes);
}

// ---- the rule ------------------------------------------------------------------------
// Whether the pair (i, j) of `it` is tiled on `target`, given the pair
// pick_tile_dim found. Also what the CPU loops ask of a part of a plan
// when they split it (a part may be too short to tile).
inline bool tiles_fit(const IterPlan& it, int i, int j, PlanTarget target) {
  if (i < 0 || j < 0) return false;
  if (target == PlanTarget::Host)
    return it.sizes[i] >= kHostMinTileExtent && it.sizes[j] >= kHostMinTileExtent;
  const int64_t si = it.strides[1][i];
  return it.strides[0][j] == 1 && (si == 1 || si == -1) && it.sizes[i] >= kMinTransposeExtent &&
         it.sizes[j] >= kMinTransposeExtent;
}

// The tiling of a plan over `it` (operand 0 written, operand 1 read, of
// dsize- and ssize-byte elements; a gather's index as operand 2) on `target`.
inline Tiling plan_tiling(const IterPlan& it, int dsize, int ssize, PlanTarget target) {
  Tiling t;
  t.shape = it.ndim <= 1 ? IterShape::Elementwise : IterShape::Rows;
  if (it.empty || it.ndim < 2 || it.nops > 2) return t;
  const int i = pick_tile_dim(it, 1), j = it.ndim - 1;
  if (!tiles_fit(it, i, j, target)) return t;
  const int wide = dsize > ssize ? dsize : ssize;
  t.shape = IterShape::Transpose;
  t.dim_i = i;
  t.dim_j = j;
  t.side_i = target == PlanTarget::Host ? host_tile_side_i(wide) : transpose_tile_i(wide);
  t.side_j = target == PlanTarget::Host ? host_tile_side_j(wide) : transpose_tile_j(wide);
  return t;
}

}  // namespace sm
