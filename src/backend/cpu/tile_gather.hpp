// The tile steps of the CPU loop driver: gathering a source tile into a
// buffer in destination order (over the register transposes of
// transpose_avx2.hpp where the CPU has AVX2, of transpose_sse2.hpp
// otherwise: SSE2 is the x86-64 baseline, so the library still runs on any
// x86-64; other targets get scalar loops) and writing the buffer's rows out.
// Both are picked once per process for the CPU it runs on.
#pragma once

#include <cstdint>

namespace sm {
namespace cpu {

// buf (rows x cols, dense, row r = destination row r of the tile) = the
// source tile whose element (r, c) is at s + (r*ssr + c*ssc) * n bytes, for
// n = 1, 2, 4 or 8 byte elements. next (may be NULL): the next tile's
// source, same shape; its lines are prefetched while this tile is gathered,
// so memory works while the registers shuffle.
using GatherFn = void (*)(unsigned char* buf, const char* s, int64_t rows, int64_t cols,
                          int64_t ssr, int64_t ssc, const char* next);
GatherFn gather_fn(int n);
// The variant for a given instruction set (tests run both on AVX2 machines);
// avx2 is ignored where the AVX2 kernels are not built or not supported.
GatherFn gather_fn_for(int n, bool avx2);

// Copies `rows` rows of row_bytes from the dense buffer to d, rows
// dstride_bytes apart; stream: non-temporal stores (the caller fences).
using RowsOutFn = void (*)(char* d, int64_t dstride_bytes, const unsigned char* buf,
                           int64_t row_bytes, int64_t rows, bool stream);
RowsOutFn rows_out_fn();
RowsOutFn rows_out_fn_for(bool avx2);

// True when the AVX2 kernels are in use (reported by the benchmark).
bool tile_kernels_use_avx2();

}  // namespace cpu
}  // namespace sm
