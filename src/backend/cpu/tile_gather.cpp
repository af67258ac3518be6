#include "backend/cpu/tile_gather.hpp"

#include <cstring>

#include "backend/cpu/cpu_bits.hpp"
#include "backend/cpu/cpu_features.hpp"
#include "backend/cpu/prefetch.hpp"
#include "backend/cpu/stream_stores.hpp"
#include "backend/cpu/transpose_avx2.hpp"
#include "backend/cpu/transpose_sse2.hpp"


namespace sm {
namespace cpu {

namespace {

// ---- baseline (SSE2 or scalar) ------------------------------------------------

// Prefetches source rows [c0, c1) of the next tile, row_bytes from each row
// start, into L2 (prefetch_span's default locality).
__attribute__((always_inline)) inline void prefetch_rows(const char* next, int64_t c0, int64_t c1,
                                                         int64_t ssc_bytes, int64_t row_bytes) {
  if (!next) return;
  for (int64_t c = c0; c < c1; ++c) prefetch_span(next + c * ssc_bytes, row_bytes);
}

template <int N>
void gather_base(unsigned char* buf, const char* s, int64_t rows, int64_t cols, int64_t ssr,
                 int64_t ssc, const char* next) {
  using T = Bits<N>;
  T* b = reinterpret_cast<T*>(buf);
  const T* a = reinterpret_cast<const T*>(s);
  if (ssr == 1) {
    prefetch_rows(next, 0, cols, ssc * N, rows * N);
    transpose_tile(b, cols, a, ssc, rows, cols);
    return;
  }
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) b[r * cols + c] = a[r * ssr + c * ssc];
}

void rows_out_base(char* d, int64_t dstride, const unsigned char* buf, int64_t row_bytes,
                   int64_t rows, bool stream) {
  for (int64_t r = 0; r < rows; ++r) {
    if (stream) {
      stream_copy(d + r * dstride, buf + r * row_bytes, static_cast<size_t>(row_bytes));
    } else {
      std::memcpy(d + r * dstride, buf + r * row_bytes, static_cast<size_t>(row_bytes));
    }
  }
}

#if SM_HAVE_AVX2_TRANSPOSES

// ---- AVX2 ----------------------------------------------------------------------

// 1-byte elements: 32 x 16 blocks; the rows left over (< 32) go through
// transpose_tile (its SSE2 16 x 16 kernel, then scalar), as do the columns
// left over (< 16: scalar).
SM_AVX2 void gather_avx2_8(unsigned char* buf, const char* s, int64_t rows, int64_t cols,
                           int64_t ssr, int64_t ssc, const char* next) {
  uint8_t* b = buf;
  const uint8_t* a = reinterpret_cast<const uint8_t*>(s);
  if (ssr != 1) {
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r) b[r * cols + c] = a[r * ssr + c * ssc];
    return;
  }
  constexpr int64_t mr = 32, mc = 16;
  const int64_t rows_full = rows - rows % mr, cols_full = cols - cols % mc;
  for (int64_t c = 0; c < cols_full; c += mc) {
    prefetch_rows(next, c, c + mc, ssc, rows);
    for (int64_t r = 0; r < rows_full; r += mr)
      t32x16_8(b + r * cols + c, cols, a + c * ssc + r, ssc);
  }
  prefetch_rows(next, cols_full, cols, ssc, rows);
  if (rows_full < rows)
    transpose_tile(b + rows_full * cols, cols, a + rows_full, ssc, rows - rows_full, cols_full);
  if (cols_full < cols)
    transpose_tile(b + cols_full, cols, a + cols_full * ssc, ssc, rows, cols - cols_full);
}

template <int N>
SM_AVX2 void gather_avx2(unsigned char* buf, const char* s, int64_t rows, int64_t cols,
                         int64_t ssr, int64_t ssc, const char* next) {
  using T = Bits<N>;
  T* b = reinterpret_cast<T*>(buf);
  const T* a = reinterpret_cast<const T*>(s);
  if (ssr != 1) {
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r) b[r * cols + c] = a[r * ssr + c * ssc];
    return;
  }
  constexpr int64_t m = N == 4 ? 8 : N == 8 ? 4 : 16;
  const int64_t rows_full = rows - rows % m, cols_full = cols - cols % m;
  for (int64_t c = 0; c < cols_full; c += m) {
    prefetch_rows(next, c, c + m, ssc * N, rows * N);
    for (int64_t r = 0; r < rows_full; r += m) {
      if constexpr (N == 4) {
        t8x8_32(reinterpret_cast<uint32_t*>(b + r * cols + c), cols,
                reinterpret_cast<const uint32_t*>(a + c * ssc + r), ssc);
      } else if constexpr (N == 8) {
        t4x4_64(reinterpret_cast<uint64_t*>(b + r * cols + c), cols,
                reinterpret_cast<const uint64_t*>(a + c * ssc + r), ssc);
      } else {
        t16x16_16(reinterpret_cast<uint16_t*>(b + r * cols + c), cols,
                  reinterpret_cast<const uint16_t*>(a + c * ssc + r), ssc);
      }
    }
  }
  prefetch_rows(next, cols_full, cols, ssc * N, rows * N);
  transpose_edges(b, cols, a, ssc, rows, cols, rows_full, cols_full);
}

SM_AVX2 void rows_out_avx2(char* d, int64_t dstride, const unsigned char* buf, int64_t row_bytes,
                           int64_t rows, bool stream) {
  for (int64_t r = 0; r < rows; ++r) {
    char* dp = d + r * dstride;
    const unsigned char* sp = buf + r * row_bytes;
    int64_t i = 0;
    // Pieces stream whole, partial lines at their ends included, 32 bytes
    // a store where aligned, else 16 (NumPy's and the allocator's buffers
    // are 16-byte aligned, so short tile rows of permuted views are, while
    // their lines are not). Mixing a plain partial first line with streamed
    // whole lines is slower than either.
    const uintptr_t align = reinterpret_cast<uintptr_t>(dp);
    if (stream && (align & 31) == 0) {
      for (; i + 32 <= row_bytes; i += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(dp + i),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sp + i)));
    } else if (stream && (align & 15) == 0) {
      for (; i + 16 <= row_bytes; i += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(dp + i),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(sp + i)));
    } else {
      for (; i + 32 <= row_bytes; i += 32)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dp + i),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sp + i)));
    }
    if (i < row_bytes) std::memcpy(dp + i, sp + i, static_cast<size_t>(row_bytes - i));
  }
}

#endif  // SM_HAVE_AVX2_TRANSPOSES

bool use_avx2() { return cpu_has_avx2(); }

}  // namespace

GatherFn gather_fn(int n) { return gather_fn_for(n, true); }

GatherFn gather_fn_for(int n, bool avx2) {
#if SM_HAVE_AVX2_TRANSPOSES
  if (avx2 && use_avx2()) {
    switch (n) {
      case 1: return gather_avx2_8;
      case 2: return gather_avx2<2>;
      case 4: return gather_avx2<4>;
      case 8: return gather_avx2<8>;
      default: break;
    }
  }
#endif
  switch (n) {
    case 1: return gather_base<1>;
    case 2: return gather_base<2>;
    case 4: return gather_base<4>;
    case 8: return gather_base<8>;
    default: return gather_base<16>;
  }
}

RowsOutFn rows_out_fn() { return rows_out_fn_for(true); }

RowsOutFn rows_out_fn_for(bool avx2) {
#if SM_HAVE_AVX2_TRANSPOSES
  if (avx2 && use_avx2()) return rows_out_avx2;
#endif
  (void)avx2;
  return rows_out_base;
}

bool tile_kernels_use_avx2() { return use_avx2(); }

}  // namespace cpu
}  // namespace sm
