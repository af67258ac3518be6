// AVX2 register transposes (8 x 8 of 32 bits, 4 x 4 of 64, 16 x 16 of 16,
// 32 x 16 of 8): B[r][c] = A[c][r], B rows ldb elements apart, A rows lda
// apart. Each function is compiled for AVX2 alone: call them only after
// cpu_has_avx2() (tile_gather.cpp picks them once per process).
#pragma once

#include <cstdint>

#include "backend/cpu/transpose_sse2.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SM_HAVE_AVX2_TRANSPOSES 1
#define SM_AVX2 __attribute__((target("avx2")))

namespace sm {
namespace cpu {


// 8 x 8 of 32-bit elements: b row j = a column j.
SM_AVX2 inline void t8x8_32(uint32_t* b, int64_t ldb, const uint32_t* a, int64_t lda) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(a + i * lda));
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  float* o = reinterpret_cast<float*>(b);
  _mm256_storeu_ps(o, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(o + ldb, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(o + 2 * ldb, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(o + 3 * ldb, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(o + 4 * ldb, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(o + 5 * ldb, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(o + 6 * ldb, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(o + 7 * ldb, _mm256_permute2f128_ps(s3, s7, 0x31));
}

// 4 x 4 of 64-bit elements.
SM_AVX2 inline void t4x4_64(uint64_t* b, int64_t ldb, const uint64_t* a, int64_t lda) {
  const double* x = reinterpret_cast<const double*>(a);
  const __m256d r0 = _mm256_loadu_pd(x), r1 = _mm256_loadu_pd(x + lda);
  const __m256d r2 = _mm256_loadu_pd(x + 2 * lda), r3 = _mm256_loadu_pd(x + 3 * lda);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  double* o = reinterpret_cast<double*>(b);
  _mm256_storeu_pd(o, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(o + ldb, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(o + 2 * ldb, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(o + 3 * ldb, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// 16 x 16 of 16-bit elements: two in-lane 8 x 8 transposes per register
// pair, then 128-bit lane swaps.
SM_AVX2 inline void t16x16_16(uint16_t* b, int64_t ldb, const uint16_t* a, int64_t lda) {
  __m256i r[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i * lda));
  __m256i t[16], u[16], v[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // rows 4g .. 4g+3
    u[4 * g + 0] = _mm256_unpacklo_epi32(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 1] = _mm256_unpackhi_epi32(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 2] = _mm256_unpacklo_epi32(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm256_unpackhi_epi32(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 8h .. 8h+7
    for (int j = 0; j < 4; ++j) {
      v[8 * h + 2 * j] = _mm256_unpacklo_epi64(u[8 * h + j], u[8 * h + 4 + j]);
      v[8 * h + 2 * j + 1] = _mm256_unpackhi_epi64(u[8 * h + j], u[8 * h + 4 + j]);
    }
  }
  // v[8h + j] lane 0 holds column j of rows 8h..8h+7, lane 1 column 8 + j.
  for (int j = 0; j < 8; ++j) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + j * ldb),
                        _mm256_permute2x128_si256(v[j], v[8 + j], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + (8 + j) * ldb),
                        _mm256_permute2x128_si256(v[j], v[8 + j], 0x31));
  }
}

// 32 x 16 of 8-bit elements (B; A is 16 rows of 32): whole 32-byte loads
// of the 16 A rows, the byte network of transpose_sse2.hpp inside each
// 128-bit lane, then lane 0 holds B rows 0..15 and lane 1 rows 16..31,
// stored 16 bytes at a time. Each A line is visited twice (rather than 4
// times with 16-byte loads of 32 rows).
SM_AVX2 inline void t32x16_8(uint8_t* b, int64_t ldb, const uint8_t* a, int64_t lda) {
  __m256i r[16], v[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i * lda));
  SM_BYTE_TRANSPOSE_NETWORK(__m256i, _mm256, r, v);
  for (int m = 0; m < 8; ++m) {
    const __m256i e = _mm256_unpacklo_epi64(v[m], v[8 + m]);
    const __m256i o = _mm256_unpackhi_epi64(v[m], v[8 + m]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + 2 * m * ldb), _mm256_castsi256_si128(e));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + (2 * m + 1) * ldb), _mm256_castsi256_si128(o));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + (16 + 2 * m) * ldb),
                     _mm256_extracti128_si256(e, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + (17 + 2 * m) * ldb),
                     _mm256_extracti128_si256(o, 1));
  }
}

}  // namespace cpu
}  // namespace sm

#endif  // __x86_64__ && __GNUC__
