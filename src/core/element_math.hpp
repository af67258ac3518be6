// The floating-point arithmetic of the element ops, written once for host and
// device so that the CPU and every GPU produce the same bits:
//  - + - * / and sqrt are IEEE operations rounded to nearest: on the device
//    through the _rn intrinsics (never contracted into an FMA, which would
//    round once where the host rounds twice), on the host as plain operators
//    (the build never contracts across them: ISO C++ mode, no -ffast-math);
//  - exp is this library's own, from those operations only, computed in the
//    tensor's precision (float for f16/bf16/f32, as PyTorch does; double for
//    f64). glibc's expf and CUDA's expf differ in the last bit for some
//    inputs; a shared implementation cannot. Accuracy: faithful (under one
//    ulp) over the whole range; measured against long double expl by
//    tests/unit/test_element_ops.cpp: float 99.6% correctly rounded, worst
//    0.89 ulp; double 92.8%, worst 0.86 ulp (PyTorch's vectorized CPU exp is
//    a 1-ulp SLEEF routine; CUDA's exp and expf promise 1 and 2 ulp).
// NaN results are NaN; their payload is not part of the contract (x86 and
// NVIDIA GPUs propagate different ones).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.hpp"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace sm {

// a OP b rounded to nearest, for float and double: the device's _rn
// intrinsic, the host's operator.
#if defined(__CUDA_ARCH__)
#define SM_RN_OP(name, op, float_rn, double_rn)                                          \
  SM_HOST_DEVICE SM_INLINE float name(float a, float b) { return float_rn(a, b); }      \
  SM_HOST_DEVICE SM_INLINE double name(double a, double b) { return double_rn(a, b); }
#else
#define SM_RN_OP(name, op, float_rn, double_rn)                                  \
  SM_HOST_DEVICE SM_INLINE float name(float a, float b) { return a op b; }      \
  SM_HOST_DEVICE SM_INLINE double name(double a, double b) { return a op b; }
#endif
SM_RN_OP(add_rn, +, __fadd_rn, __dadd_rn)
SM_RN_OP(sub_rn, -, __fsub_rn, __dsub_rn)
SM_RN_OP(mul_rn, *, __fmul_rn, __dmul_rn)
SM_RN_OP(div_rn, /, __fdiv_rn, __ddiv_rn)
#undef SM_RN_OP

SM_HOST_DEVICE SM_INLINE float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
SM_HOST_DEVICE SM_INLINE double sqrt_rn(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// |a| by clearing the sign bit (NaN payloads kept).
SM_HOST_DEVICE SM_INLINE float abs_bits(float a) {
  uint32_t u;
  memcpy(&u, &a, 4);
  u &= 0x7FFFFFFFu;
  memcpy(&a, &u, 4);
  return a;
}
SM_HOST_DEVICE SM_INLINE double abs_bits(double a) {
  uint64_t u;
  memcpy(&u, &a, 8);
  u &= 0x7FFFFFFFFFFFFFFFull;
  memcpy(&a, &u, 8);
  return a;
}

// ---- exp ----------------------------------------------------------------------
// The classic scheme (Cody and Waite's reduction, Tang's and fdlibm's
// rational form): x = k ln2 + r with |r| <= ln2/2, and
//   e^r = 1 + r + r c / (2 - c),  c = r - (R(r^2) - 2),
// where R(z) = r coth(r/2) = 2 + sum P_n z^n, P_n = 2 B_2n / (2n)! (Bernoulli
// numbers). Written as 1 - ((lo - r c / (2 - c)) - hi) with r = hi - lo, so
// the rounding of r never reaches the result. Truncated after z^4 (float) or
// z^7 (double): the next term is below 2^-30 of an ulp. 2^k is applied in at
// most two exact steps plus one rounding, so subnormal and overflowing
// results round once.

namespace detail {

// 2^n for a normal exponent n.
SM_HOST_DEVICE SM_INLINE float pow2(float, int n) {
  const uint32_t b = static_cast<uint32_t>(n + 127) << 23;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
SM_HOST_DEVICE SM_INLINE double pow2(double, int n) {
  const uint64_t b = static_cast<uint64_t>(n + 1023) << 52;
  double f;
  memcpy(&f, &b, 8);
  return f;
}

// R(z) - 2 for z = r^2.
SM_HOST_DEVICE SM_INLINE float exp_series(float z) {
  constexpr float P1 = 1.0f / 6, P2 = -1.0f / 360, P3 = 1.0f / 15120, P4 = -1.0f / 604800;
  return mul_rn(z, add_rn(P1, mul_rn(z, add_rn(P2, mul_rn(z, add_rn(P3, mul_rn(z, P4)))))));
}
SM_HOST_DEVICE SM_INLINE double exp_series(double z) {
  constexpr double P1 = 1.0 / 6, P2 = -1.0 / 360, P3 = 1.0 / 15120, P4 = -1.0 / 604800,
                   P5 = 1.0 / 23950080, P6 = -691.0 / 653837184000, P7 = 1.0 / 37362124800;
  double p = add_rn(P6, mul_rn(z, P7));
  p = add_rn(P5, mul_rn(z, p));
  p = add_rn(P4, mul_rn(z, p));
  p = add_rn(P3, mul_rn(z, p));
  p = add_rn(P2, mul_rn(z, p));
  p = add_rn(P1, mul_rn(z, p));
  return mul_rn(z, p);
}

// Constants per precision: ln2 split so that k * ln2_hi is exact for every k
// reached (ln2_hi has 16 / 32 significant bits), 1.5 * 2^(mantissa bits) to
// round to an integer by one addition, and the inputs past which the result
// is +inf or +0 whatever the rounding.
template <typename T>
struct ExpConstants;
template <>
struct ExpConstants<float> {
  static constexpr float log2e() { return 1.44269502f; }
  static constexpr float ln2_hi() { return 0x1.62e4p-1f; }
  static constexpr float ln2_lo() { return 0x1.7f7d1cp-20f; }
  static constexpr float shifter() { return 0x1.8p23f; }
  static constexpr float overflow() { return 89.0f; }
  static constexpr float underflow() { return -104.0f; }
  static constexpr int max_exp() { return 127; }
  static constexpr int min_exp() { return -126; }
};
template <>
struct ExpConstants<double> {
  static constexpr double log2e() { return 0x1.71547652b82fep+0; }
  static constexpr double ln2_hi() { return 0x1.62e42ffp-1; }
  static constexpr double ln2_lo() { return -0x1.718432a1b0e26p-35; }
  static constexpr double shifter() { return 0x1.8p52; }
  static constexpr double overflow() { return 710.0; }
  static constexpr double underflow() { return -746.0; }
  static constexpr int max_exp() { return 1023; }
  static constexpr int min_exp() { return -1022; }
};

}  // namespace detail

template <typename T>
SM_HOST_DEVICE inline T exp_rn(T x) {
  using K = detail::ExpConstants<T>;
  if (x != x) return x;
  if (x > K::overflow()) return detail::pow2(T(0), K::max_exp()) * T(2);  // +inf
  if (x < K::underflow()) return T(0);
  const T kf = sub_rn(add_rn(mul_rn(x, K::log2e()), K::shifter()), K::shifter());
  const int k = static_cast<int>(kf);
  const T hi = sub_rn(x, mul_rn(kf, K::ln2_hi()));  // exact
  const T lo = mul_rn(kf, K::ln2_lo());
  const T r = sub_rn(hi, lo);
  const T c = sub_rn(r, detail::exp_series(mul_rn(r, r)));
  const T y = sub_rn(T(1), sub_rn(sub_rn(lo, div_rn(mul_rn(r, c), sub_rn(T(2), c))), hi));
  // y * 2^k: exact steps while the result stays normal, one rounding at the end.
  if (k > K::max_exp())
    return mul_rn(mul_rn(y, detail::pow2(T(0), K::max_exp())), detail::pow2(T(0), k - K::max_exp()));
  if (k < K::min_exp() + 1) {
    constexpr int kShift = 100;
    return mul_rn(mul_rn(y, detail::pow2(T(0), k + kShift)), detail::pow2(T(0), -kShift));
  }
  return mul_rn(y, detail::pow2(T(0), k));
}

}  // namespace sm
