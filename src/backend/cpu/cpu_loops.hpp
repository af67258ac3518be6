// The CPU loop driver: runs a planned (coalesced) iteration over a
// destination and one source with two kinds of typed kernels, threading large
// work over the pool. Kernels see raw pointers and element strides only.
//
// Modes, picked once per call:
//  - rows: the innermost dim (the destination's fastest) is handed to a 1-D
//    row kernel; the outer dims are walked with an odometer (no division).
//  - tiles: when the source moves fastest along another dim k, (k, inner)
//    is cut into cache-sized 2-D tiles handed to a tile kernel (a transpose
//    micro-kernel for plain copies), the other dims walked as above.
// Work cells (rows, row pieces or tiles) are split into contiguous ranges of
// cells between threads; a range start is turned into coordinates by one
// division per dim, once per range.
#pragma once

#include <cstdint>

#include "layout/coalesce.hpp"

namespace sm {
namespace cpu {

// d[i*ds] = f(d[i*ds], s[i*ss]) for i < n (strides in elements; ss may be 0).
using RowFn = void (*)(const void* ctx, char* d, const char* s, int64_t n, int64_t ds,
                       int64_t ss);
// The same over a rows x cols tile: element (r, c) is d[r*dsr + c*dsc],
// s[r*ssr + c*ssc]; c is the destination's inner dim.
using TileFn = void (*)(const void* ctx, char* d, const char* s, int64_t rows, int64_t cols,
                        int64_t dsr, int64_t dsc, int64_t ssr, int64_t ssc);

struct LoopSpec {
  RowFn row = nullptr;
  TileFn tile = nullptr;  // nullptr: tiles run as rows of the row kernel
  const void* ctx = nullptr;
  int dsize = 1;  // bytes per destination element
  int ssize = 1;  // bytes per source element
  // Bytes moved per element for the threading decision (read + write).
  int bytes_per_elem = 2;
};

// p: a plan with 2 operands (0 = destination, 1 = source), offsets not yet
// applied; d / s: the operands' element [0, ..., 0].
void run_loops(const IterPlan& p, char* d, const char* s, const LoopSpec& spec);

// Tile edge (elements) used for elements of `bytes` bytes: 64 x 64 for 4-byte
// elements, 256 bytes of the larger operand per tile row. Public for tests.
int64_t tile_edge(int bytes);

// Work smaller than this (bytes read + written) stays on the calling thread.
constexpr int64_t kParallelMinBytes = 1 << 20;

}  // namespace cpu
}  // namespace sm
