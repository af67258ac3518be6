#include "backend/cpu/simd_convert.hpp"

#include <cstring>

#include "backend/cpu/cpu_features.hpp"
#include "core/dtype.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SM_SIMD_CONVERT 1
#endif

namespace sm {
namespace cpu {

#if SM_SIMD_CONVERT

namespace {

#define SM_AVX2 __attribute__((target("avx2")))
#define SM_F16C __attribute__((target("avx2,f16c")))

// 8 floats -> 8 bf16 in the low 128 bits' worth of 32-bit lanes (values
// <= 0xFFFF), rounding to nearest even; NaN -> dtype.hpp's (small_float_nan_bits).
SM_AVX2 inline __m256i bf16_lanes(__m256i u) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i is_nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
  const __m256i nan = _mm256_or_si256(
      _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
      _mm256_set1_epi32(small_float_nan_bits<8, 7>(0)));
  return _mm256_blendv_epi8(rounded, nan, is_nan);
}

SM_AVX2 void f32_to_bf16_avx2(uint16_t* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = bf16_lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    const __m256i b = bf16_lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 8)));
    // packus works per 128-bit lane: put the halves back in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), packed);
  }
  for (; i < n; ++i) d[i] = double_to_bf16_bits(s[i]);
}

// vcvtps2ph rounds like dtype.hpp (IEEE, nearest even) except NaNs, whose
// payload it keeps: those lanes become dtype.hpp's NaN (small_float_nan_bits).
SM_F16C void f32_to_f16_f16c(uint16_t* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m128i h = _mm256_cvtps_ph(_mm256_castsi256_ps(u), _MM_FROUND_TO_NEAREST_INT);
    const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i is_nan32 = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
    if (_mm256_testz_si256(is_nan32, is_nan32)) {  // no NaN: the usual case, half the work
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
      continue;
    }
    const __m256i nan32 = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
        _mm256_set1_epi32(small_float_nan_bits<5, 10>(0)));
    const __m128i is_nan = _mm_packs_epi32(_mm256_castsi256_si128(is_nan32),
                                           _mm256_extracti128_si256(is_nan32, 1));
    const __m128i nan = _mm_packus_epi32(_mm256_castsi256_si128(nan32),
                                         _mm256_extracti128_si256(nan32, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_blendv_epi8(h, nan, is_nan));
  }
  for (; i < n; ++i) d[i] = double_to_half_bits(s[i]);
}

// vcvtph2ps is exact except that it quiets signaling NaNs; dtype.hpp keeps
// every NaN bit: rebuild those lanes as sign | exponent | mantissa << 13.
SM_F16C void f16_to_f32_f16c(float* d, const uint16_t* s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m256 f = _mm256_cvtph_ps(h);
    const __m256i h32 = _mm256_cvtepu16_epi32(h);
    const __m256i abs = _mm256_and_si256(h32, _mm256_set1_epi32(0x7FFF));
    const __m256i is_nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7C00));
    if (_mm256_testz_si256(is_nan, is_nan)) {
      _mm256_storeu_ps(d + i, f);
      continue;
    }
    const __m256i nan = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(h32, _mm256_set1_epi32(0x8000)), 16),
                        _mm256_set1_epi32(0x7F800000)),
        _mm256_slli_epi32(_mm256_and_si256(h32, _mm256_set1_epi32(0x3FF)), 13));
    _mm256_storeu_ps(d + i, _mm256_blendv_ps(f, _mm256_castsi256_ps(nan),
                                             _mm256_castsi256_ps(is_nan)));
  }
  for (; i < n; ++i) d[i] = half_bits_to_float(s[i]);
}

#undef SM_AVX2
#undef SM_F16C

}  // namespace

bool f32_to_bf16_simd(uint16_t* d, const float* s, int64_t n) {
  if (!cpu_has_avx2()) return false;
  f32_to_bf16_avx2(d, s, n);
  return true;
}
bool f32_to_f16_simd(uint16_t* d, const float* s, int64_t n) {
  if (!cpu_has_f16c()) return false;
  f32_to_f16_f16c(d, s, n);
  return true;
}
bool f16_to_f32_simd(float* d, const uint16_t* s, int64_t n) {
  if (!cpu_has_f16c()) return false;
  f16_to_f32_f16c(d, s, n);
  return true;
}

#else

bool f32_to_bf16_simd(uint16_t*, const float*, int64_t) { return false; }
bool f32_to_f16_simd(uint16_t*, const float*, int64_t) { return false; }
bool f16_to_f32_simd(float*, const uint16_t*, int64_t) { return false; }

#endif

}  // namespace cpu
}  // namespace sm
