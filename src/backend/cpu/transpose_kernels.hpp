// Register micro-kernels (SSE2: 16 x 16 bytes, 8 x 8 of 16 bits, 4 x 4 of
// 32, 2 x 2 of 64) for out-of-place transposes of 1/2/4/8-byte elements:
// B[r][c] = A[c][r] with B rows ldb elements apart and A rows lda elements
// apart, both unit-stride inside a row. Bit moves only (copies without
// conversion go through here keyed by element size).
//
// SSE2 is the x86-64 baseline, so no run-time dispatch is needed; other
// targets get the scalar loops (the tiling around them still does the cache
// work).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace sm {
namespace cpu {

template <typename T>
inline void transpose_scalar(T* b, int64_t ldb, const T* a, int64_t lda, int64_t rows,
                             int64_t cols, int64_t r0, int64_t c0) {
  for (int64_t r = r0; r < rows; ++r)
    for (int64_t c = c0; c < cols; ++c) b[r * ldb + c] = a[c * lda + r];
}

// Handles the edges a micro-kernel of br x bc leaves: columns past the last
// full block for the full rows, then the remaining rows.
template <typename T>
inline void transpose_edges(T* b, int64_t ldb, const T* a, int64_t lda, int64_t rows,
                            int64_t cols, int64_t rows_full, int64_t cols_full) {
  if (cols_full < cols) {
    for (int64_t r = 0; r < rows_full; ++r)
      for (int64_t c = cols_full; c < cols; ++c) b[r * ldb + c] = a[c * lda + r];
  }
  transpose_scalar(b, ldb, a, lda, rows, cols, rows_full, 0);
}

#if defined(__SSE2__)

// 4 x 4 of 32-bit elements.
inline void transpose_4x4_32(uint32_t* b, int64_t ldb, const uint32_t* a, int64_t lda) {
  __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + lda));
  __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 2 * lda));
  __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 3 * lda));
  const __m128i t0 = _mm_unpacklo_epi32(r0, r1);
  const __m128i t1 = _mm_unpacklo_epi32(r2, r3);
  const __m128i t2 = _mm_unpackhi_epi32(r0, r1);
  const __m128i t3 = _mm_unpackhi_epi32(r2, r3);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b), _mm_unpacklo_epi64(t0, t1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b + ldb), _mm_unpackhi_epi64(t0, t1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b + 2 * ldb), _mm_unpacklo_epi64(t2, t3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b + 3 * ldb), _mm_unpackhi_epi64(t2, t3));
}

// 8 x 8 of 16-bit elements.
inline void transpose_8x8_16(uint16_t* b, int64_t ldb, const uint16_t* a, int64_t lda) {
  __m128i r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * lda));
  const __m128i t0 = _mm_unpacklo_epi16(r[0], r[1]), t1 = _mm_unpackhi_epi16(r[0], r[1]);
  const __m128i t2 = _mm_unpacklo_epi16(r[2], r[3]), t3 = _mm_unpackhi_epi16(r[2], r[3]);
  const __m128i t4 = _mm_unpacklo_epi16(r[4], r[5]), t5 = _mm_unpackhi_epi16(r[4], r[5]);
  const __m128i t6 = _mm_unpacklo_epi16(r[6], r[7]), t7 = _mm_unpackhi_epi16(r[6], r[7]);
  const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
  const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
  const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
  const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
  __m128i o[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4),
                  _mm_unpacklo_epi64(u1, u5), _mm_unpackhi_epi64(u1, u5),
                  _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                  _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
  for (int i = 0; i < 8; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i * ldb), o[i]);
}

// 16 x 16 of 8-bit elements: unpacks of ever wider units (8, 16, 32, then
// 64 bits) merge pairs of row groups until each register holds one column.
inline void transpose_16x16_8(uint8_t* b, int64_t ldb, const uint8_t* a, int64_t lda) {
  __m128i r[16], t[16], u[16], v[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * lda));
  // t[2i]: columns 0..7 of rows 2i, 2i+1 as byte pairs; t[2i+1]: columns 8..15.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + q]: columns 4q..4q+3 of rows 4g..4g+3, 4 bytes per column.
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm_unpacklo_epi16(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 1] = _mm_unpackhi_epi16(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 2] = _mm_unpacklo_epi16(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm_unpackhi_epi16(t[4 * g + 1], t[4 * g + 3]);
  }
  // v[8h + m]: columns 2m, 2m+1 of rows 8h..8h+7, 8 bytes per column.
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) {
      v[8 * h + 2 * j] = _mm_unpacklo_epi32(u[8 * h + j], u[8 * h + 4 + j]);
      v[8 * h + 2 * j + 1] = _mm_unpackhi_epi32(u[8 * h + j], u[8 * h + 4 + j]);
    }
  }
  for (int m = 0; m < 8; ++m) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + 2 * m * ldb),
                     _mm_unpacklo_epi64(v[m], v[8 + m]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + (2 * m + 1) * ldb),
                     _mm_unpackhi_epi64(v[m], v[8 + m]));
  }
}

// 2 x 2 of 64-bit elements.
inline void transpose_2x2_64(uint64_t* b, int64_t ldb, const uint64_t* a, int64_t lda) {
  const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + lda));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b), _mm_unpacklo_epi64(r0, r1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b + ldb), _mm_unpackhi_epi64(r0, r1));
}

#endif  // __SSE2__

// B (rows x cols, row stride ldb) = transpose of A (cols x rows, row stride lda).
// Sweeps A's rows a micro-kernel height at a time, front to back, so every
// cache line of A is used up while it is hot even when A's rows are a large
// power of two apart (where a cache set holds only a few of them); B should
// be a small contiguous buffer (the tile buffer of cpu_loops.cpp).
template <typename T>
inline void transpose_tile(T* b, int64_t ldb, const T* a, int64_t lda, int64_t rows,
                           int64_t cols) {
#if defined(__SSE2__)
  constexpr int64_t m = sizeof(T) == 4   ? 4
                      : sizeof(T) == 2 ? 8
                      : sizeof(T) == 8 ? 2
                      : sizeof(T) == 1 ? 16
                                       : 0;
  if constexpr (m > 0) {
    const int64_t rows_full = rows - rows % m, cols_full = cols - cols % m;
    for (int64_t c = 0; c < cols_full; c += m) {
      for (int64_t r = 0; r < rows_full; r += m) {
        if constexpr (sizeof(T) == 4) {
          transpose_4x4_32(reinterpret_cast<uint32_t*>(b + r * ldb + c), ldb,
                           reinterpret_cast<const uint32_t*>(a + c * lda + r), lda);
        } else if constexpr (sizeof(T) == 1) {
          transpose_16x16_8(reinterpret_cast<uint8_t*>(b + r * ldb + c), ldb,
                            reinterpret_cast<const uint8_t*>(a + c * lda + r), lda);
        } else if constexpr (sizeof(T) == 2) {
          transpose_8x8_16(reinterpret_cast<uint16_t*>(b + r * ldb + c), ldb,
                           reinterpret_cast<const uint16_t*>(a + c * lda + r), lda);
        } else {
          transpose_2x2_64(reinterpret_cast<uint64_t*>(b + r * ldb + c), ldb,
                           reinterpret_cast<const uint64_t*>(a + c * lda + r), lda);
        }
      }
    }
    transpose_edges(b, ldb, a, lda, rows, cols, rows_full, cols_full);
    return;
  }
#endif
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) b[r * ldb + c] = a[c * lda + r];
}

// Streams n bytes to d with non-temporal stores (no read-for-ownership of
// the destination lines); the caller issues stream_fence() before anyone
// else may read d. Unaligned head and tail go through memcpy.
inline void stream_copy(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
#if defined(__SSE2__)
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), x0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), x1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), x2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), x3);
  }
  for (; n >= 16; n -= 16, d += 16, s += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
#endif
  std::memcpy(d, s, n);
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace cpu
}  // namespace sm
