// Vectorized conversions for the hot 16-bit float pairs, with the same bits
// as sm::convert<> (NaNs included: see simd_convert.cpp). Each returns false
// when this CPU lacks the instructions; the caller then runs the scalar loop.
#pragma once

#include <cstdint>

namespace sm {
namespace cpu {

bool f32_to_bf16_simd(uint16_t* d, const float* s, int64_t n);  // AVX2
bool f32_to_f16_simd(uint16_t* d, const float* s, int64_t n);   // AVX2 + F16C
bool f16_to_f32_simd(float* d, const uint16_t* s, int64_t n);   // AVX2 + F16C

}  // namespace cpu
}  // namespace sm
