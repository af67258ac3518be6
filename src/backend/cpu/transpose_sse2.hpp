// SSE2 register transposes (16 x 16 bytes, 8 x 8 of 16 bits, 4 x 4 of 32,
// 2 x 2 of 64) for out-of-place transposes of 1/2/4/8-byte elements, and
// transpose_tile, the loop over them with scalar edges:
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

// The 16-row byte transpose network, written once for 128-bit registers
// (T __m128i, OP _mm) and 256-bit ones (T __m256i, OP _mm256, where it runs
// inside each 128-bit lane): unpacks of ever wider units (8, 16, then 32
// bits) merge pairs of row groups. In: r[16], 16 rows of 16 bytes (per
// lane). Out: v[16], v[8h + m] holding columns 2m and 2m + 1 of rows
// 8h..8h+7, 8 bytes per column; a final 64-bit unpack of v[m] with v[8 + m]
// gives whole columns.
#define SM_BYTE_TRANSPOSE_NETWORK(T, OP, r, v)                                         \
  do {                                                                                 \
    T t_[16], u_[16];                                                                  \
    /* t_[2i]: columns 0..7 of rows 2i, 2i+1 as byte pairs; t_[2i+1]: 8..15. */        \
    for (int i_ = 0; i_ < 8; ++i_) {                                                   \
      t_[2 * i_] = OP##_unpacklo_epi8(r[2 * i_], r[2 * i_ + 1]);                       \
      t_[2 * i_ + 1] = OP##_unpackhi_epi8(r[2 * i_], r[2 * i_ + 1]);                   \
    }                                                                                  \
    /* u_[4g + q]: columns 4q..4q+3 of rows 4g..4g+3, 4 bytes per column. */           \
    for (int g_ = 0; g_ < 4; ++g_) {                                                   \
      u_[4 * g_ + 0] = OP##_unpacklo_epi16(t_[4 * g_ + 0], t_[4 * g_ + 2]);            \
      u_[4 * g_ + 1] = OP##_unpackhi_epi16(t_[4 * g_ + 0], t_[4 * g_ + 2]);            \
      u_[4 * g_ + 2] = OP##_unpacklo_epi16(t_[4 * g_ + 1], t_[4 * g_ + 3]);            \
      u_[4 * g_ + 3] = OP##_unpackhi_epi16(t_[4 * g_ + 1], t_[4 * g_ + 3]);            \
    }                                                                                  \
    for (int h_ = 0; h_ < 2; ++h_) {                                                   \
      for (int j_ = 0; j_ < 4; ++j_) {                                                 \
        v[8 * h_ + 2 * j_] = OP##_unpacklo_epi32(u_[8 * h_ + j_], u_[8 * h_ + 4 + j_]);     \
        v[8 * h_ + 2 * j_ + 1] = OP##_unpackhi_epi32(u_[8 * h_ + j_], u_[8 * h_ + 4 + j_]); \
      }                                                                                \
    }                                                                                  \
  } while (0)

// 16 x 16 of 8-bit elements.
inline void transpose_16x16_8(uint8_t* b, int64_t ldb, const uint8_t* a, int64_t lda) {
  __m128i r[16], v[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * lda));
  SM_BYTE_TRANSPOSE_NETWORK(__m128i, _mm, r, v);
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
// be a small contiguous buffer (a tile buffer of cpu_loops.cpp).
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

}  // namespace cpu
}  // namespace sm
