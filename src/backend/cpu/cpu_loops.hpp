// The CPU loop driver: runs a planned (coalesced) iteration over a
// destination and one source with two kinds of typed kernels, threading large
// work over the pool. Kernels see raw pointers and element strides only.
//
// Modes, picked once per call:
//  - rows: the innermost dim (the destination's fastest) is handed to a 1-D
//    row kernel; the outer dims are walked with an odometer (no division),
//    in source order unless the source is broadcast. Short unit-stride
//    source rows are prefetched ~2 KiB ahead, unless each row continues the
//    last in the source (plan_prefetch).
//  - tiles: where the plan's tiling (backend/tiling.hpp, decided with the
//    operation plan) is a transpose pair (k, inner), that pair is cut into
//    tiles of the plan's sides (32 x 64 for 4-byte elements, wider for 1- and
//    2-byte ones); each tile of the source is transposed into a
//    small buffer in destination order by a register micro-kernel keyed by
//    element size (tile_gather.hpp) while the next tile is prefetched, then
//    the buffer's rows are written out whole (non-temporal stores for large
//    copies; conversions convert the whole buffer first) or fed to the row
//    kernel (in-place ops). Tiles are visited in source order
//    (layout/coalesce.hpp source_walk_order), so the short source pieces a
//    tile reads continue in the next tile (in blocks of two dims where that
//    order would jump destination pages: block_tile_walk); long rows that
//    start inside a cache line have their first elements run apart
//    (elements_to_line), so the tiles after them are line-aligned.
// Work cells (rows, row pieces or tiles) are split into contiguous
// ranges of cells between threads; a range start is turned into coordinates
// by one division per dim, once per range.
#pragma once

#include <cstdint>

#include "backend/tiling.hpp"
#include "layout/coalesce.hpp"

namespace sm {
namespace cpu {

// d[i*ds] = f(d[i*ds], s[i*ss]) for i < n (strides in elements; ss may be 0).
using RowFn = void (*)(const void* ctx, char* d, const char* s, int64_t n, int64_t ds,
                       int64_t ss);

struct LoopSpec {
  RowFn row = nullptr;
  const void* ctx = nullptr;
  int dsize = 1;  // bytes per destination element
  int ssize = 1;  // bytes per source element
  // Bytes moved per element for the threading decision (read + write).
  int bytes_per_elem = 2;
  // The row kernel is a plain copy of same-size elements: tiles move the
  // buffer rows out directly, with non-temporal stores when stream_tiles.
  bool plain_copy = false;
  bool stream_tiles = false;
  // The row kernel reads the destination (in-place ops): tiles prefetch the
  // next tile's destination rows as well as its source.
  bool reads_dst = false;
};

// p: a plan with 2 operands (0 = destination, 1 = source), offsets not yet
// applied; t: its tiling for the host (plan_tiling's: an operation plan's
// `tiling`, or that of a copy the CPU gather derives), read as it is: the
// loops never choose a pair or sides themselves;
// d / s: the operands' element [0, ..., 0].
void run_loops(const IterPlan& p, const Tiling& t, char* d, const char* s, const LoopSpec& spec);

// The tile buffers' size (the host sides of backend/tiling.hpp fit it).
constexpr int64_t kTileBufBytes = kHostTileBufBytes;

// Tiles walked in source order step from tile to tile along the walk's
// last dim other than the tile's own two, S. Where a step of S moves the
// source by less than a page but the destination by a page or more, while
// another dim D (the one of least destination stride) does the opposite,
// as the 4-D reversal's two middle dims do, each tile writes its rows to
// pages the walk comes back to only after thousands of others: a TLB miss
// per destination row with 4 KiB pages. block_tile_walk then cuts S and D
// into blocks of kWalkBlock and walks a block of both before the next
// (D_hi where D was; S_hi, D_lo, S_lo where S was), so the pages a block
// touches fit the TLB and each is visited kWalkBlock times within it
// (bench/RESULTS.md, architecture round 2). w: the walk (dims in visiting
// order, outermost first), block: its cell sides, tile_dim / inner: w's
// dims of the tile rows and columns; all updated in place. No change where
// S or D is not a multiple of kWalkBlock of at least two blocks, or the
// plan has no room for two more dims.
constexpr int64_t kWalkBlock = 16;
constexpr int64_t kPageBytes = 4096;
void block_tile_walk(IterPlan* w, int64_t* block, int* tile_dim, int* inner, int dsize, int ssize);

// How far ahead the loops prefetch the source: `ahead` cells (0: not at
// all), and in rows mode `bytes` of each row. Tiles: the next tile, while
// this one is gathered. Rows: short unit-stride rows (under 2 KiB, either
// direction), which the hardware prefetcher cannot see coming when they
// jump, ~2 KiB ahead; none where the rows read the source as one stream
// (each an ascending unit-stride run, the next one, a step of the innermost
// dim with more than one cell, starting where it ends: a permutation that
// keeps the inner dim, walked in source order). The hardware prefetcher
// follows such a walk on its own, and prefetching it in software measured
// slower (bench/RESULTS.md, architecture round 2, fifth pass). Tiles keep
// their prefetch even where their source is one stream: on two threads,
// dropping it measured slower. g: the walk's grid; sstrides: the source's
// strides along its dims (elements); tile_dim: the grid dim of the tile
// rows, -1 in rows mode; inner: the grid dim of the destination's inner
// dim; ssize: bytes per source element.
struct Prefetch {
  int64_t ahead = 0;
  int64_t bytes = 0;
};
constexpr int64_t kRowPrefetchBytes = 2048;
Prefetch plan_prefetch(const BlockGrid& g, const int64_t* sstrides, int tile_dim, int inner,
                       int ssize);

// Work smaller than this (bytes read + written) stays on the calling thread.
constexpr int64_t kParallelMinBytes = 1 << 20;
// Aim for at least this many bytes per range handed to a thread: less is not
// worth a wake-up.
constexpr int64_t kMinRangeBytes = 256 << 10;

}  // namespace cpu
}  // namespace sm
