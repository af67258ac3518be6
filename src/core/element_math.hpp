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
#include <type_traits>
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

#if defined(__CUDA_ARCH__)
SM_HOST_DEVICE SM_INLINE float sqrt_rn(float a) { return __fsqrt_rn(a); }
SM_HOST_DEVICE SM_INLINE double sqrt_rn(double a) { return __dsqrt_rn(a); }
#else
SM_HOST_DEVICE SM_INLINE float sqrt_rn(float a) { return std::sqrt(a); }
SM_HOST_DEVICE SM_INLINE double sqrt_rn(double a) { return std::sqrt(a); }
#endif

// The bit layout of float and double, for the helpers below that work on
// the bits (no library calls, no traps, no branch on the value): U is the
// unsigned integer as wide as T; the masks of the sign, of the exponent
// (all its bits set: infinity) and of 1.0.
template <typename T>
struct FloatBits {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "float or double");
  using U = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
  static constexpr U kSign = U(1) << (8 * sizeof(U) - 1);
  static constexpr U kExp = sizeof(T) == 4 ? U(0x7F800000u) : U(0x7FF0000000000000ull);
  static constexpr U kOne = sizeof(T) == 4 ? U(0x3F800000u) : U(0x3FF0000000000000ull);
  SM_HOST_DEVICE SM_INLINE static U get(T a) {
    U u;
    memcpy(&u, &a, sizeof u);
    return u;
  }
  SM_HOST_DEVICE SM_INLINE static T put(U u) {
    T a;
    memcpy(&a, &u, sizeof a);
    return a;
  }
};

// sign(a) from its bits alone: -1 or +1 by the sign bit, +0 for both zeros,
// a NaN as it is. Integer masks, no jump on the value: an op on memory nobody
// wrote (sm_empty's) must not branch on it (valgrind's rule), and
// comparisons of floats let the compiler branch.
template <typename T>
SM_HOST_DEVICE SM_INLINE T sign_bits(T a) {
  using B = FloatBits<T>;
  using U = typename B::U;
  const U u = B::get(a);
  const U nan = U(0) - static_cast<U>((u & ~B::kSign) > B::kExp);
  const U zero = U(0) - static_cast<U>((u & ~B::kSign) == 0);
  return B::put((u & nan) | ((B::kOne | (u & B::kSign)) & ~zero & ~nan));
}

// |a| by clearing the sign bit (NaN payloads kept).
template <typename T>
SM_HOST_DEVICE SM_INLINE T abs_bits(T a) {
  return FloatBits<T>::put(FloatBits<T>::get(a) & ~FloatBits<T>::kSign);
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

// ---- helpers of the complex functions ------------------------------------------

// Bit-level predicates and sign transfer (no library calls, no traps).
SM_HOST_DEVICE SM_INLINE bool is_nan_bits(float a) { return a != a; }
SM_HOST_DEVICE SM_INLINE bool is_nan_bits(double a) { return a != a; }
template <typename T>
SM_HOST_DEVICE SM_INLINE bool is_inf_bits(T a) {
  using B = FloatBits<T>;
  return (B::get(a) & ~B::kSign) == B::kExp;
}
template <typename T>
SM_HOST_DEVICE SM_INLINE T copysign_bits(T mag, T sgn) {
  using B = FloatBits<T>;
  return B::put((B::get(mag) & ~B::kSign) | (B::get(sgn) & B::kSign));
}
template <typename T>
SM_HOST_DEVICE SM_INLINE T inf_value() {
  return detail::pow2(T(0), detail::ExpConstants<T>::max_exp()) * T(2);
}
template <typename T>
SM_HOST_DEVICE SM_INLINE T nan_value() {
  const T inf = inf_value<T>();
  return sub_rn(inf, inf);
}

// sqrt(a^2 + b^2) without intermediate overflow or underflow for finite a,
// b: the larger magnitude times sqrt(1 + r^2), r the ratio (within 2 ulp;
// the same bits on every device).
template <typename T>
SM_HOST_DEVICE SM_INLINE T hypot_rn(T a, T b) {
  T x = abs_bits(a), y = abs_bits(b);
  if (x < y) {
    const T t = x;
    x = y;
    y = t;
  }
  if (x == T(0)) return T(0);
  const T r = div_rn(y, x);
  return mul_rn(x, sqrt_rn(add_rn(T(1), mul_rn(r, r))));
}

// sin and cos of a finite double, from IEEE operations only (so CPU and GPU
// agree bit for bit). x = k pi/2 + r, |r| <= pi/4, with pi/2 in three parts
// (the first two of 33 bits, so k * part is exact for |k| < 2^20): accurate
// to a few ulp for |x| < 2^20 pi/2 (about 1.6e6), degrading gradually past
// that (no Payne-Hanek reduction); |x| >= 2^50 is first reduced by fmod
// against 2 pi rounded to double (exact operation, inexact modulus). Then
// the Taylor series of sin and cos on |r| <= pi/4, truncated where the next
// term is below 2^-60 of the result.
SM_HOST_DEVICE inline void sincos_rn(double x, double* s, double* c) {
  constexpr double kPio2_1 = 0x1.921fb544p+0;        // pi/2, top 33 bits
  constexpr double kPio2_2 = 0x1.0b4611a6p-34;       // the next 33 bits
  constexpr double kPio2_3 = 0x1.3198a2e037073p-69;  // the rest
  constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
  constexpr double kShifter = 0x1.8p52;
  if (abs_bits(x) >= 0x1p50) {
#if defined(__CUDA_ARCH__)
    x = fmod(x, 0x1.921fb54442d18p+2);
#else
    x = std::fmod(x, 0x1.921fb54442d18p+2);
#endif
  }
  const double kf = sub_rn(add_rn(mul_rn(x, kTwoOverPi), kShifter), kShifter);
  const int q = static_cast<int>(static_cast<int64_t>(kf) & 3);
  const double r = sub_rn(sub_rn(sub_rn(x, mul_rn(kf, kPio2_1)), mul_rn(kf, kPio2_2)),
                          mul_rn(kf, kPio2_3));
  const double z = mul_rn(r, r);
  // sin r = r + r z (S1 + z (S2 + ...)), S_n = (-1)^n / (2n+1)!
  double ps = add_rn(-1.0 / 1307674368000.0, mul_rn(z, 1.0 / 355687428096000.0));
  ps = add_rn(1.0 / 6227020800.0, mul_rn(z, ps));
  ps = add_rn(-1.0 / 39916800.0, mul_rn(z, ps));
  ps = add_rn(1.0 / 362880.0, mul_rn(z, ps));
  ps = add_rn(-1.0 / 5040.0, mul_rn(z, ps));
  ps = add_rn(1.0 / 120.0, mul_rn(z, ps));
  ps = add_rn(-1.0 / 6.0, mul_rn(z, ps));
  const double sr = add_rn(r, mul_rn(mul_rn(r, z), ps));
  // cos r = 1 + z (C1 + z (C2 + ...)), C_n = (-1)^n / (2n)!
  double pc = add_rn(1.0 / 20922789888000.0, mul_rn(z, -1.0 / 6402373705728000.0));
  pc = add_rn(-1.0 / 87178291200.0, mul_rn(z, pc));
  pc = add_rn(1.0 / 479001600.0, mul_rn(z, pc));
  pc = add_rn(-1.0 / 3628800.0, mul_rn(z, pc));
  pc = add_rn(1.0 / 40320.0, mul_rn(z, pc));
  pc = add_rn(-1.0 / 720.0, mul_rn(z, pc));
  pc = add_rn(1.0 / 24.0, mul_rn(z, pc));
  pc = add_rn(-0.5, mul_rn(z, pc));
  const double cr = add_rn(1.0, mul_rn(z, pc));
  switch (q) {
    case 0: *s = sr, *c = cr; break;
    case 1: *s = cr, *c = -sr; break;
    case 2: *s = -sr, *c = -cr; break;
    default: *s = -cr, *c = sr; break;
  }
}

}  // namespace sm
