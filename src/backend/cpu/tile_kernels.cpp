#include "backend/cpu/tile_kernels.hpp"

#include <cstring>

#include "backend/cpu/cpu_bits.hpp"
#include "backend/cpu/cpu_features.hpp"
#include "backend/cpu/prefetch.hpp"
#include "backend/cpu/transpose_kernels.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SM_HAVE_AVX2_PATH 1
#endif

namespace sm {
namespace cpu {

namespace {

// ---- baseline (SSE2 or scalar) ------------------------------------------------

// Prefetches source rows [c0, c1) of the next tile, row_bytes from each row
// start (into L2: T1 measured best, T0 and NTA did not help).
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

#if SM_HAVE_AVX2_PATH

// ---- AVX2 ----------------------------------------------------------------------

#define SM_AVX2 __attribute__((target("avx2")))

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
// of the 16 A rows, the 16 x 16 network of transpose_16x16_8 inside each 128-bit lane,
// then lane 0 holds B rows 0..15 and lane 1 rows 16..31, stored 16 bytes
// at a time. Measured against the other split (32 A rows of 16 bytes, rows
// i and 16 + i in one register, 32-byte stores): 10-15% faster on the u8
// 8192 x 2048 transpose (bench_copy_bench, best of 15, shared machine), each
// A line being visited twice rather than 4 times. Loading all 64 bytes of
// each row at once (one visit) was no better: +10% with 8 KiB source
// strides, -10% on that bench case.
SM_AVX2 inline void t32x16_8(uint8_t* b, int64_t ldb, const uint8_t* a, int64_t lda) {
  __m256i r[16], t[16], u[16], v[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i * lda));
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm256_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm256_unpacklo_epi16(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 1] = _mm256_unpackhi_epi16(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 2] = _mm256_unpacklo_epi16(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm256_unpackhi_epi16(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) {
      v[8 * h + 2 * j] = _mm256_unpacklo_epi32(u[8 * h + j], u[8 * h + 4 + j]);
      v[8 * h + 2 * j + 1] = _mm256_unpackhi_epi32(u[8 * h + j], u[8 * h + 4 + j]);
    }
  }
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
    // Only line-aligned pieces stream (tiled copies peel their rows to make
    // them so): streaming whole lines and writing a partial first line with
    // plain stores measured slower where rows start at differing offsets
    // (4100^2 f32 transpose, one thread: 21 -> 14.5 GB/s).
    if (stream && (reinterpret_cast<uintptr_t>(dp) & 31) == 0) {
      for (; i + 32 <= row_bytes; i += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(dp + i),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sp + i)));
    } else {
      for (; i + 32 <= row_bytes; i += 32)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dp + i),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sp + i)));
    }
    if (i < row_bytes) std::memcpy(dp + i, sp + i, static_cast<size_t>(row_bytes - i));
  }
}

#undef SM_AVX2

#endif  // SM_HAVE_AVX2_PATH

bool use_avx2() { return cpu_has_avx2(); }

}  // namespace

GatherFn gather_fn(int n) { return gather_fn_for(n, true); }

GatherFn gather_fn_for(int n, bool avx2) {
#if SM_HAVE_AVX2_PATH
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
#if SM_HAVE_AVX2_PATH
  if (avx2 && use_avx2()) return rows_out_avx2;
#endif
  (void)avx2;
  return rows_out_base;
}

bool tile_kernels_use_avx2() { return use_avx2(); }

}  // namespace cpu
}  // namespace sm
