// What every element op does: the one definition both backends compile (the
// CPU kernels with the host compiler, the CUDA kernels with nvcc), as ATen's
// ufunc headers define each op once for every backend. The backends only
// decide how elements are visited; everything about what one element becomes
// is here:
//  - the op table (SM_ELEMENT_OPS): which ops exist, their forms and the
//    dtypes they accept (the engine's checks read it);
//  - compute types: int64 with wrap-around for integers and bool (uint64
//    scalar ops in uint64, so that values >= 2^63 compare as unsigned),
//    float for f16/bf16/f32, double for f64, complex float / complex double
//    for complex64 / complex128; binary ops: complex if either operand is
//    complex (complex double if either is f64 or complex128), else double if
//    either is f64, float if either is floating, else int64 (wrap-around
//    arithmetic gives the same bits for every integer pair, uint64 included);
//  - loading an element into its compute type and storing one back (bool
//    sources are read as bytes, any nonzero byte is true; 16-bit floats round
//    to nearest even once);
//  - the op bodies: wrap-around integer arithmetic without undefined
//    behaviour, IEEE float arithmetic (core/element_math.hpp), CLAMP's and
//    RELU's NaN rules.
// Adding an op: a row in SM_ELEMENT_OPS and a case in apply_scalar_op or
// binary_apply. Unit-tested in tests/unit/test_element_ops.cpp.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/dtype.hpp"
#include "core/element_math.hpp"
#include "core/host_device.hpp"
#include "stridemem.h"

namespace sm {

// ---- the op table -------------------------------------------------------------------
// X(NAME, scalar form, tensor form, integral result, on bool, whole scalars,
//   alpha, on complex):
//  - scalar form: sm_inplace_scalar takes it; tensor form: sm_inplace_tensor;
//  - integral result: an integer tensor can hold the result (DIV, SQRT and
//    EXP produce fractions, so integer tensors refuse them);
//  - on bool (kBoolRefused, kBoolComputed, kBoolIdentity): whether bool
//    tensors take the op, and whether it then changes anything: ABS and SIGN
//    map every truth value to itself, so the plan runs nothing for them;
//  - whole scalars: how many scalar operands (a, then b) must be whole
//    numbers on an integer tensor (a NaN CLAMP bound means no bound);
//  - alpha: the tensor form scales other by alpha (a whole number on an
//    integer tensor);
//  - on complex: nullptr where complex tensors take the op, else why they
//    do not (the refusal's message; PyTorch refuses the same four).
#define SM_ELEMENT_OPS(X)                                                                  \
  X(FILL, 1, 1, 1, kBoolComputed, 0, 0, nullptr)                                           \
  X(ZERO, 1, 0, 1, kBoolComputed, 0, 0, nullptr)                                           \
  X(ADD, 1, 1, 1, kBoolRefused, 1, 1, nullptr)                                             \
  X(SUB, 1, 1, 1, kBoolRefused, 1, 1, nullptr)                                             \
  X(MUL, 1, 1, 1, kBoolRefused, 1, 0, nullptr)                                             \
  X(DIV, 1, 1, 0, kBoolRefused, 0, 0, nullptr)                                             \
  X(CLAMP, 1, 0, 1, kBoolRefused, 2, 0, "CLAMP needs an order, which complex numbers lack") \
  X(RELU, 1, 0, 1, kBoolRefused, 0, 0, "RELU needs an order, which complex numbers lack")   \
  X(NEG, 1, 0, 1, kBoolRefused, 0, 0, nullptr)                                             \
  X(ABS, 1, 0, 1, kBoolIdentity, 0, 0,                                                     \
    "the absolute value of a complex number is real, which a complex tensor cannot hold "  \
    "in place")                                                                            \
  X(SQRT, 1, 0, 0, kBoolRefused, 0, 0, nullptr)                                            \
  X(EXP, 1, 0, 0, kBoolRefused, 0, 0, nullptr)                                             \
  X(SIGN, 1, 0, 1, kBoolIdentity, 0, 0,                                                    \
    "as in PyTorch: the sign of a complex number is sgn, x/|x|, which stridemem does not " \
    "provide")

// What an op does to a bool tensor (the table's "on bool" column).
enum BoolRule { kBoolRefused, kBoolComputed, kBoolIdentity };

struct OpTraits {
  const char* name;  // "ADD"
  bool scalar_form;
  bool tensor_form;
  bool integral_result;
  BoolRule on_bool;
  int whole_scalars;
  bool scales_by_alpha;
  const char* not_on_complex;  // nullptr: complex tensors take it

  bool takes_bool() const { return on_bool != kBoolRefused; }
  bool takes_complex() const { return not_on_complex == nullptr; }
};

// Traits of op, or nullptr for a code that is no op.
inline const OpTraits* op_traits(sm_op op) {
#define SM_OP_ROW(NAME, S, T, I, B, W, A, C) {#NAME, S != 0, T != 0, I != 0, B, W, A != 0, C},
  static constexpr OpTraits kTable[] = {SM_ELEMENT_OPS(SM_OP_ROW)};
#undef SM_OP_ROW
  constexpr int kCount = static_cast<int>(sizeof kTable / sizeof kTable[0]);
  static_assert(kCount == SM_OP_SIGN + 1, "one row per sm_op, in enum order");
  return op >= 0 && op < kCount ? &kTable[op] : nullptr;
}
inline const char* op_name(sm_op op) {
  const OpTraits* t = op_traits(op);
  return t ? t->name : "unknown";
}

// ---- compute types --------------------------------------------------------------------

enum class ComputeKind { Int64, UInt64, Float, Double, ComplexFloat, ComplexDouble };

SM_HOST_DEVICE constexpr ComputeKind scalar_compute(DType d) {
  return d == DType::F64    ? ComputeKind::Double
         : d == DType::C128 ? ComputeKind::ComplexDouble
         : d == DType::C64  ? ComputeKind::ComplexFloat
         : d == DType::U64  ? ComputeKind::UInt64
         : is_floating(d)   ? ComputeKind::Float
                            : ComputeKind::Int64;
}
// Binary ops compute in the promoted type's kind (promote_types, core/dtype.hpp),
// with every integer pair in int64: wrap-around arithmetic gives the same
// bits for each of them, uint64 included.
SM_HOST_DEVICE constexpr ComputeKind binary_compute(DType d, DType s) {
  return scalar_compute(promote_types(d, s)) == ComputeKind::UInt64
             ? ComputeKind::Int64
             : scalar_compute(promote_types(d, s));
}

template <ComputeKind K>
using ComputeType = typename std::conditional<
    K == ComputeKind::Int64, int64_t,
    typename std::conditional<
        K == ComputeKind::UInt64, uint64_t,
        typename std::conditional<
            K == ComputeKind::Float, float,
            typename std::conditional<
                K == ComputeKind::Double, double,
                typename std::conditional<K == ComputeKind::ComplexFloat, Complex64,
                                          Complex128>::type>::type>::type>::type>::type;
// In-place scalar ops on T compute in ScalarCompute<T>.
template <typename T>
using ScalarCompute = ComputeType<scalar_compute(DTypeOf<T>::value)>;
// dst op= other (dst of D, other of S) computes in BinaryCompute<D, S>.
template <typename D, typename S>
using BinaryCompute = ComputeType<binary_compute(DTypeOf<D>::value, DTypeOf<S>::value)>;

// A double argument (a scalar, alpha, a clamp bound) in compute type C:
// integers saturate (NaN gives 0; uint64 as saturating_float_to_int says),
// floats round once, complex types take it as (v, 0).
template <typename C>
SM_HOST_DEVICE SM_INLINE C to_compute(double v) {
  if constexpr (std::is_same<C, int64_t>::value || std::is_same<C, uint64_t>::value) {
    return saturating_float_to_int<C>(v);
  } else if constexpr (IsComplex<C>::value) {
    return Convert<C>::from_double(v);
  } else {
    return static_cast<C>(v);
  }
}

// ---- loads and stores -------------------------------------------------------------------

// float -> bfloat16, round to nearest even: the same bits as
// double_to_bf16_bits(f) (a float is exact in double and bfloat16 shares its
// exponent range, so one rounding of the low 16 bits is the whole story).
// Branch-free so contiguous CPU loops vectorize. NaN -> sign | quiet NaN.
SM_HOST_DEVICE SM_INLINE uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = small_float_nan_bits<8, 7>(static_cast<uint16_t>((u >> 16) & 0x8000u));
  return static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

// Element conversion S -> D: sm::convert<D>(v), through the shortest exact
// path for the hot 16-bit float pairs (the same bits, fewer instructions).
template <typename D, typename S>
SM_HOST_DEVICE SM_INLINE D cvt(S v) {
  if constexpr (std::is_same<D, BFloat16>::value && std::is_same<S, float>::value) {
    return BFloat16{float_to_bf16_bits(v)};
  } else if constexpr (std::is_same<D, float>::value && std::is_same<S, BFloat16>::value) {
    return bf16_bits_to_float(v.bits);
  } else if constexpr (std::is_same<D, float>::value && std::is_same<S, Half>::value) {
    return half_bits_to_float(v.bits);
  } else if constexpr (std::is_same<D, Half>::value && std::is_same<S, float>::value) {
    return Half{float_to_half_bits(v)};
  } else {
    return convert<D>(v);
  }
}

// v as a float compute value: integers round once (as PyTorch's cast).
template <typename T>
SM_HOST_DEVICE SM_INLINE float to_f32(T v) {
  if constexpr (std::is_same<T, Half>::value) {
    return half_bits_to_float(v.bits);
  } else if constexpr (std::is_same<T, BFloat16>::value) {
    return bf16_bits_to_float(v.bits);
  } else if constexpr (std::is_same<T, bool>::value) {
    return v ? 1.0f : 0.0f;
  } else if constexpr (std::is_same<T, BoolByte>::value) {
    return v.v ? 1.0f : 0.0f;
  } else if constexpr (IsComplex<T>::value) {
    return static_cast<float>(v.re);  // never asked for: the engine refuses complex into real
  } else {
    return static_cast<float>(v);
  }
}

// Loads v as compute type C.
template <typename C, typename T>
SM_HOST_DEVICE SM_INLINE C load_as(T v) {
  if constexpr (std::is_same<C, float>::value) {
    return to_f32(v);
  } else if constexpr (std::is_same<C, double>::value) {
    return Convert<T>::to_double(v);
  } else if constexpr (std::is_same<C, int64_t>::value) {
    return Convert<T>::to_int(v);
  } else {
    return convert<C>(v);  // uint64 and complex
  }
}

// Stores compute value c into T.
template <typename T, typename C>
SM_HOST_DEVICE SM_INLINE T store_as(C c) {
  if constexpr (std::is_same<C, uint64_t>::value || IsComplex<C>::value) {
    return convert<T>(c);
  } else if constexpr (std::is_same<C, int64_t>::value) {
    return Convert<T>::from_int(c);
  } else if constexpr (std::is_same<T, float>::value) {
    return static_cast<float>(c);
  } else if constexpr (std::is_same<T, BFloat16>::value && std::is_same<C, float>::value) {
    return BFloat16{float_to_bf16_bits(c)};
  } else if constexpr (std::is_same<T, Half>::value && std::is_same<C, float>::value) {
    return Half{float_to_half_bits(c)};
  } else {
    return Convert<T>::from_double(static_cast<double>(c));
  }
}

// The bytes of value v stored as one element of dtype d (fills), in the
// first dtype_size(d) bytes of out (kMaxElementBytes always suffice).
constexpr int kMaxElementBytes = 16;
inline void scalar_bits(DType d, double v, void* out) {
  dispatch_dtype(d, [&](auto t) {
    using T = decltype(t);
    const T converted = Convert<T>::from_double(v);
    memcpy(out, &converted, sizeof(T));
  });
}

// ---- integer arithmetic ------------------------------------------------------------------

// Wrapping int64 arithmetic without undefined behaviour.
SM_HOST_DEVICE SM_INLINE int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
SM_HOST_DEVICE SM_INLINE int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
SM_HOST_DEVICE SM_INLINE int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Truncating division; x / 0 gives 0 and INT64_MIN / -1 wraps to INT64_MIN
// (the engine refuses integer DIV; this only keeps the kernels free of UB).
SM_HOST_DEVICE SM_INLINE int64_t safe_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);
  return a / b;
}
// uint64 scalar ops (uint64 tensors): unsigned arithmetic is defined to wrap.
SM_HOST_DEVICE SM_INLINE uint64_t safe_div(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }

// ---- complex arithmetic ---------------------------------------------------------------------
// On (re, im) pairs of float or double, from the rounded IEEE operations of
// element_math.hpp (never fused), so CPU and GPU give the same bits.

template <typename Z>
using Part = typename ComplexPart<Z>::type;

template <typename Z>
SM_HOST_DEVICE SM_INLINE Z c_add(Z x, Z y) {
  return Z{add_rn(x.re, y.re), add_rn(x.im, y.im)};
}
template <typename Z>
SM_HOST_DEVICE SM_INLINE Z c_sub(Z x, Z y) {
  return Z{sub_rn(x.re, y.re), sub_rn(x.im, y.im)};
}
// The textbook product (NumPy's and PyTorch's: no C99 Annex G recovery of
// infinities from NaN results).
template <typename Z>
SM_HOST_DEVICE SM_INLINE Z c_mul(Z x, Z y) {
  return Z{sub_rn(mul_rn(x.re, y.re), mul_rn(x.im, y.im)),
           add_rn(mul_rn(x.re, y.im), mul_rn(x.im, y.re))};
}
// Smith's algorithm (scaled by the larger part of the divisor, so that
// |y|^2 never overflows or underflows), as NumPy and PyTorch divide. A zero
// divisor gives x's parts divided by +0 (inf or NaN, as NumPy).
template <typename Z>
SM_HOST_DEVICE SM_INLINE Z c_div(Z x, Z y) {
  using R = Part<Z>;
  const R ar = abs_bits(y.re), ai = abs_bits(y.im);
  if (ar >= ai) {
    if (ar == R(0) && ai == R(0)) return Z{div_rn(x.re, ar), div_rn(x.im, ai)};
    const R t = div_rn(y.im, y.re);
    const R den = add_rn(y.re, mul_rn(y.im, t));
    return Z{div_rn(add_rn(x.re, mul_rn(x.im, t)), den),
             div_rn(sub_rn(x.im, mul_rn(x.re, t)), den)};
  }
  const R t = div_rn(y.re, y.im);
  const R den = add_rn(mul_rn(y.re, t), y.im);
  return Z{div_rn(add_rn(mul_rn(x.re, t), x.im), den),
           div_rn(sub_rn(mul_rn(x.im, t), x.re), den)};
}
template <typename Z>
SM_HOST_DEVICE SM_INLINE Z c_neg(Z x) {
  return Z{-x.re, -x.im};
}

// Principal square root (branch cut along the negative real axis, the sign
// of the imaginary part kept: csqrt(-4 - 0i) = 0 - 2i), with C99's special
// values. t = sqrt((|re| + |z|) / 2) on inputs scaled by a power of 4 away
// from overflow and underflow; the other part is |im| / (2t).
template <typename Z>
SM_HOST_DEVICE inline Z c_sqrt(Z z) {
  using R = Part<Z>;
  const R a = z.re, b = z.im;
  const R inf = inf_value<R>();
  if (is_inf_bits(b)) return Z{inf, b};
  if (is_nan_bits(a)) return Z{a, is_nan_bits(b) ? b : a};
  if (is_inf_bits(a)) {
    if (a > R(0)) return Z{a, is_nan_bits(b) ? b : copysign_bits(R(0), b)};
    return Z{is_nan_bits(b) ? b : R(0), copysign_bits(inf, b)};
  }
  if (is_nan_bits(b)) return Z{b, b};
  if (a == R(0) && b == R(0)) return Z{R(0), b};
  // Scale by 4^-k / 4^k (exact) when the larger part is near the top or the
  // bottom of the range; the root then scales by 2^k / 2^-k.
  constexpr bool dbl = sizeof(R) == 8;
  const R big = dbl ? R(0x1p1020) : R(0x1p124);
  const R small = dbl ? R(0x1p-1000) : R(0x1p-120);
  const R m = abs_bits(a) > abs_bits(b) ? abs_bits(a) : abs_bits(b);
  R sa = a, sb = b, unscale = R(1);
  if (m >= big) {
    sa = mul_rn(a, R(0.25)), sb = mul_rn(b, R(0.25)), unscale = R(2);
  } else if (m < small) {
    const R up = dbl ? R(0x1p600) : R(0x1p60), down = dbl ? R(0x1p-300) : R(0x1p-30);
    sa = mul_rn(a, up), sb = mul_rn(b, up), unscale = down;
  }
  const R t = sqrt_rn(mul_rn(add_rn(abs_bits(sa), hypot_rn(sa, sb)), R(0.5)));
  const R other = div_rn(abs_bits(sb), add_rn(t, t));
  if (sa >= R(0)) return Z{mul_rn(t, unscale), copysign_bits(mul_rn(other, unscale), b)};
  return Z{mul_rn(other, unscale), copysign_bits(mul_rn(t, unscale), b)};
}

// e^re (cos im + i sin im), with C99's special values for non-finite parts.
// e^re in the tensor's precision (the library's exp_rn); cos and sin from
// sincos_rn in double, rounded once for complex64.
template <typename Z>
SM_HOST_DEVICE inline Z c_exp(Z z) {
  using R = Part<Z>;
  const R a = z.re, b = z.im;
  if (b == R(0)) return Z{exp_rn(a), b};  // real input: exact imaginary zero kept
  if (is_nan_bits(a)) return Z{a, a};
  if (is_inf_bits(b) || is_nan_bits(b)) {
    if (is_inf_bits(a) && a < R(0)) return Z{R(0), R(0)};
    if (is_inf_bits(a)) return Z{a, nan_value<R>()};
    return Z{nan_value<R>(), nan_value<R>()};
  }
  const R e = exp_rn(a);
  double s, c;
  sincos_rn(static_cast<double>(b), &s, &c);
  return Z{mul_rn(e, static_cast<R>(c)), mul_rn(e, static_cast<R>(s))};
}

// ---- the ops ----------------------------------------------------------------------------------

// Scalar operands of an in-place scalar op in compute type C.
template <typename C>
struct ScalarArgs {
  C a, b;
  bool has_lo, has_hi;  // CLAMP: a NaN bound is no bound
};
template <typename C>
SM_HOST_DEVICE SM_INLINE ScalarArgs<C> make_scalar_args(double a, double b) {
  ScalarArgs<C> k;
  k.has_lo = !(a != a);
  k.has_hi = !(b != b);
  k.a = to_compute<C>(a);  // a NaN operand of ADD etc. stays NaN for floats (0 for integers)
  k.b = to_compute<C>(b);
  return k;
}

// dst = op(x, a, b) for the scalar forms (FILL and ZERO included, though the
// backends write those as fills) in a real compute type (int64, float,
// double); apply_scalar_op below adds uint64 and complex. Inlined with a
// constant op, the switch folds away.
template <typename C>
SM_HOST_DEVICE SM_INLINE C apply_real_scalar_op(int op, C x, const ScalarArgs<C>& k) {
  constexpr bool is_int = std::is_same<C, int64_t>::value;
  switch (op) {
    case SM_OP_FILL: return k.a;
    case SM_OP_ZERO: return C(0);
    case SM_OP_ADD:
      if constexpr (is_int) return wrap_add(x, k.a); else return add_rn(x, k.a);
    case SM_OP_SUB:
      if constexpr (is_int) return wrap_sub(x, k.a); else return sub_rn(x, k.a);
    case SM_OP_MUL:
      if constexpr (is_int) return wrap_mul(x, k.a); else return mul_rn(x, k.a);
    case SM_OP_DIV:
      if constexpr (is_int) return safe_div(x, k.a); else return div_rn(x, k.a);
    case SM_OP_CLAMP:
      if constexpr (!is_int) {
        if (x != x) return x;  // NaN stays NaN
      }
      if (k.has_lo && x < k.a) x = k.a;
      if (k.has_hi && x > k.b) x = k.b;
      return x;
    case SM_OP_RELU: return x < C(0) ? C(0) : x;  // NaN < 0 is false: NaN kept
    case SM_OP_NEG:
      if constexpr (is_int) return wrap_sub(0, x); else return -x;
    case SM_OP_ABS:
      if constexpr (is_int) return x < 0 ? wrap_sub(0, x) : x; else return abs_bits(x);
    case SM_OP_SQRT:
      // Integer tensors refuse SQRT and EXP (fractions); the integer forms
      // only keep every instantiation defined.
      if constexpr (is_int) return saturating_float_to_int<int64_t>(sqrt_rn(static_cast<double>(x)));
      else return sqrt_rn(x);
    case SM_OP_SIGN:
      // NaN is returned as it is; both zeros give +0.
      if constexpr (is_int) return static_cast<C>((x > 0) - (x < 0));
      else return sign_bits(x);
    default:  // SM_OP_EXP
      if constexpr (is_int) return saturating_float_to_int<int64_t>(exp_rn(static_cast<double>(x)));
      else return exp_rn(x);
  }
}

template <typename C>
SM_HOST_DEVICE SM_INLINE C apply_scalar_op(int op, C x, const ScalarArgs<C>& k) {
  if constexpr (IsComplex<C>::value) {
    // The scalar is (a, 0), combined by the complex operations (as NumPy and
    // PyTorch promote a real scalar). CLAMP, RELU, ABS and SIGN are refused
    // for complex tensors; they leave the value as it is here.
    switch (op) {
      case SM_OP_FILL: return k.a;
      case SM_OP_ZERO: return C{0, 0};
      case SM_OP_ADD: return c_add(x, k.a);
      case SM_OP_SUB: return c_sub(x, k.a);
      case SM_OP_MUL: return c_mul(x, k.a);
      case SM_OP_DIV: return c_div(x, k.a);
      case SM_OP_NEG: return c_neg(x);
      case SM_OP_SQRT: return c_sqrt(x);
      case SM_OP_EXP: return c_exp(x);
      default: return x;
    }
  } else if constexpr (std::is_same<C, uint64_t>::value) {
    // uint64 tensors: unsigned wrap-around arithmetic and unsigned order.
    switch (op) {
      case SM_OP_FILL: return k.a;
      case SM_OP_ZERO: return 0;
      case SM_OP_ADD: return x + k.a;
      case SM_OP_SUB: return x - k.a;
      case SM_OP_MUL: return x * k.a;
      case SM_OP_DIV: return safe_div(x, k.a);
      case SM_OP_CLAMP:
        // Bounds are in [0, 2^64): the engine refuses others (core/scalar_checks).
        if (k.has_lo && x < k.a) x = k.a;
        if (k.has_hi && x > k.b) x = k.b;
        return x;
      case SM_OP_NEG: return 0 - x;
      case SM_OP_SQRT:  // refused for integer tensors: defined only for the build
        return saturating_float_to_int<uint64_t>(sqrt_rn(static_cast<double>(x)));
      case SM_OP_EXP: return saturating_float_to_int<uint64_t>(exp_rn(static_cast<double>(x)));
      case SM_OP_SIGN: return x != 0 ? 1 : 0;
      default: return x;  // RELU and ABS: identity on unsigned values
    }
  } else {
    return apply_real_scalar_op(op, x, k);
  }
}

// dst = op(x, y) for the tensor forms: ADD and SUB scale y by alpha first
// (rounded: x + alpha*y rounds twice, never fused), MUL, DIV.
template <typename C>
SM_HOST_DEVICE SM_INLINE C binary_apply(int op, C x, C y, C alpha) {
  if constexpr (IsComplex<C>::value) {
    switch (op) {
      case SM_OP_ADD: return c_add(x, c_mul(alpha, y));
      case SM_OP_SUB: return c_sub(x, c_mul(alpha, y));
      case SM_OP_MUL: return c_mul(x, y);
      default: return c_div(x, y);
    }
  } else if constexpr (std::is_same<C, int64_t>::value) {
    switch (op) {
      case SM_OP_ADD: return wrap_add(x, wrap_mul(alpha, y));
      case SM_OP_SUB: return wrap_sub(x, wrap_mul(alpha, y));
      case SM_OP_MUL: return wrap_mul(x, y);
      default: return safe_div(x, y);
    }
  } else {
    switch (op) {
      case SM_OP_ADD: return add_rn(x, mul_rn(alpha, y));
      case SM_OP_SUB: return sub_rn(x, mul_rn(alpha, y));
      case SM_OP_MUL: return mul_rn(x, y);
      default: return div_rn(x, y);
    }
  }
}

// One element of a scalar op, from storage type to storage type.
template <typename T>
SM_HOST_DEVICE SM_INLINE T scalar_op_element(int op, T v, const ScalarArgs<ScalarCompute<T>>& k) {
  using C = ScalarCompute<T>;
  return store_as<T>(apply_scalar_op<C>(op, load_as<C>(v), k));
}

// One element of a tensor op: d = op(d, s) in the pair's compute type.
template <typename D, typename S>
SM_HOST_DEVICE SM_INLINE D binary_op_element(int op, D d, S s, BinaryCompute<D, S> alpha) {
  using C = BinaryCompute<D, S>;
  return store_as<D>(binary_apply<C>(op, load_as<C>(d), load_as<C>(s), alpha));
}

}  // namespace sm
