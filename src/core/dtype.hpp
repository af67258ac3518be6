// Element types and exact conversions. Pure; usable from host code and, via
// SM_HOST_DEVICE, from CUDA kernels. What the element ops compute lives in
// core/element_ops.hpp, on top of these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/host_device.hpp"
#include "stridemem.h"

namespace sm {

enum class DType : int32_t {
  Bool = SM_BOOL,
  U8 = SM_UINT8,
  I8 = SM_INT8,
  I16 = SM_INT16,
  I32 = SM_INT32,
  I64 = SM_INT64,
  F16 = SM_FLOAT16,
  BF16 = SM_BFLOAT16,
  F32 = SM_FLOAT32,
  F64 = SM_FLOAT64,
  U16 = SM_UINT16,
  U32 = SM_UINT32,
  U64 = SM_UINT64,
  C64 = SM_COMPLEX64,
  C128 = SM_COMPLEX128,
};
constexpr int kNumDTypes = SM_NUM_DTYPES;

inline bool dtype_valid(int32_t d) { return d >= 0 && d < kNumDTypes; }
size_t dtype_size(DType d);
// The address alignment an element needs: its size, except complex types,
// which are two components and need the component's alignment (complex128:
// 8, as NumPy's and std::complex<double>'s), so buffers NumPy hands over at
// an 8-byte boundary are taken as they are.
size_t dtype_alignment(DType d);
const char* dtype_name(DType d);
// Real floating types (complex types are not: see is_complex).
SM_HOST_DEVICE constexpr bool is_floating(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64;
}
SM_HOST_DEVICE constexpr bool is_complex(DType d) { return d == DType::C64 || d == DType::C128; }
SM_HOST_DEVICE constexpr bool is_unsigned(DType d) {
  return d == DType::U8 || d == DType::U16 || d == DType::U32 || d == DType::U64;
}
// Integer types (bool and complex are not).
SM_HOST_DEVICE constexpr bool is_integral(DType d) {
  return !is_floating(d) && !is_complex(d) && d != DType::Bool;
}

// ---- type promotion: the one definition (compute types, alpha's type and the
// in-place cast rule all derive from it) ----

// Value bits of an integer type (sign bit excluded), for range comparisons.
SM_HOST_DEVICE constexpr int integer_value_bits(DType d) {
  return d == DType::U8 ? 8 : d == DType::I8 ? 7 : d == DType::I16 ? 15 : d == DType::U16 ? 16
       : d == DType::I32 ? 31 : d == DType::U32 ? 32 : d == DType::I64 ? 63 : 64;
}
// Whether every value of integer type `inner` is a value of integer type `outer`.
SM_HOST_DEVICE constexpr bool integer_range_contains(DType outer, DType inner) {
  return (!is_unsigned(outer) || is_unsigned(inner)) &&
         integer_value_bits(outer) >= integer_value_bits(inner);
}
SM_HOST_DEVICE constexpr int floating_rank(DType d) {
  return d == DType::F64 ? 3 : d == DType::F32 ? 2 : 1;  // f16 and bf16 share rank 1
}
// The smallest signed type holding two integer types of mixed signedness
// where neither holds the other (int64 when none does).
SM_HOST_DEVICE constexpr DType signed_holding(DType a, DType b) {
  return integer_range_contains(DType::I16, a) && integer_range_contains(DType::I16, b) ? DType::I16
       : integer_range_contains(DType::I32, a) && integer_range_contains(DType::I32, b) ? DType::I32
                                                                                          : DType::I64;
}

// PyTorch's promote_types for two tensor operands: bool yields to the other;
// integers of one signedness promote to the wider; uint8 with a signed type
// to the smallest signed type holding both; a float with an integer to the
// float; float16 with bfloat16 to float32; otherwise the wider float; a
// complex type with anything to complex128 if either side is float64 or
// complex128, else complex64. (uint64 with a signed type has no integer
// type holding both: int64, as the compute type.)
SM_HOST_DEVICE constexpr DType promote_types(DType a, DType b) {
  return a == b || b == DType::Bool ? a
       : a == DType::Bool           ? b
       : is_complex(a) || is_complex(b)
           ? (a == DType::C128 || b == DType::C128 || a == DType::F64 || b == DType::F64
                  ? DType::C128
                  : DType::C64)
       : is_floating(a) != is_floating(b) ? (is_floating(a) ? a : b)
       : is_floating(a)
           ? (floating_rank(a) == floating_rank(b) ? DType::F32  // f16 with bf16
              : floating_rank(a) > floating_rank(b) ? a
                                                    : b)
       : integer_range_contains(a, b) ? a
       : integer_range_contains(b, a) ? b
                                      : signed_holding(a, b);
}

// PyTorch's can_cast: whether an in-place op may store a `from` result into
// a `to` tensor (never complex into real, floating into integral, or
// anything but bool into bool).
SM_HOST_DEVICE constexpr bool can_cast(DType from, DType to) {
  return !(is_complex(from) && !is_complex(to)) && !(is_floating(from) && is_integral(to)) &&
         !(from != DType::Bool && to == DType::Bool);
}

// 16-bit float storage types: plain bit containers; arithmetic happens in float.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Complex storage types: (re, im) pairs laid out as NumPy's, C99's and
// std::complex's, aligned as their component. Also the compute types of
// complex arithmetic (core/element_ops.hpp).
struct Complex64 {
  float re, im;
};
struct Complex128 {
  double re, im;
};
static_assert(sizeof(Complex64) == 8 && alignof(Complex64) == 4, "complex64 layout");
static_assert(sizeof(Complex128) == 16 && alignof(Complex128) == 8, "complex128 layout");

// The NaN a conversion to a small binary float (EB exponent and MB mantissa
// bits) gives: the sign kept (as the sign bit of the result), quiet, no
// payload.
template <int EB, int MB>
SM_HOST_DEVICE constexpr uint16_t small_float_nan_bits(uint16_t sign) {
  return static_cast<uint16_t>(sign | (((1u << EB) - 1u) << MB) | (1u << (MB - 1)));
}

// Rounds a double to a small binary float with EB exponent and MB mantissa
// bits (IEEE binary16: 5/10, bfloat16: 8/7), round to nearest even, in one
// step (so f64 sources are rounded once, as NumPy does for float16).
template <int EB, int MB>
SM_HOST_DEVICE inline uint16_t double_to_small_float_bits(double value) {
  constexpr int bias = (1 << (EB - 1)) - 1;
  constexpr uint32_t exp_all_ones = (1u << EB) - 1u;
  uint64_t x;
  memcpy(&x, &value, 8);
  const uint16_t sign = static_cast<uint16_t>((x >> 63) << (EB + MB));
  const uint64_t abs = x & 0x7FFFFFFFFFFFFFFFull;
  if (abs > 0x7FF0000000000000ull) return small_float_nan_bits<EB, MB>(sign);
  if (abs == 0x7FF0000000000000ull) return static_cast<uint16_t>(sign | (exp_all_ones << MB));
  if ((abs >> 52) == 0) return sign;  // zero or double subnormal: rounds to +-0
  const int exp = static_cast<int>(abs >> 52) - 1023;
  if (exp > bias) return static_cast<uint16_t>(sign | (exp_all_ones << MB));
  const uint64_t mant = (abs & 0xFFFFFFFFFFFFFull) | (1ull << 52);
  int shift = 52 - MB;
  uint32_t biased = static_cast<uint32_t>(exp + bias);
  if (exp < 1 - bias) {  // target subnormal
    shift += (1 - bias) - exp;
    biased = 0;
    if (shift > 60) return sign;  // below a quarter of the smallest subnormal
  }
  uint64_t kept = mant >> shift;
  const uint64_t rem = mant & ((1ull << shift) - 1);
  const uint64_t half_way = 1ull << (shift - 1);
  if (rem > half_way || (rem == half_way && (kept & 1))) ++kept;
  uint32_t result;
  if (biased == 0) {
    result = static_cast<uint32_t>(kept);  // a carry lands on the smallest normal: still right
  } else {
    result = (biased << MB) + static_cast<uint32_t>(kept - (1ull << MB));
    if (result >= (exp_all_ones << MB)) result = exp_all_ones << MB;  // rounded to inf
  }
  return static_cast<uint16_t>(sign | result);
}

SM_HOST_DEVICE inline uint16_t double_to_half_bits(double v) {
  return double_to_small_float_bits<5, 10>(v);
}
SM_HOST_DEVICE inline uint16_t double_to_bf16_bits(double v) {
  return double_to_small_float_bits<8, 7>(v);
}

// float -> binary16 bits, round to nearest even: the f16 store of every float
// computation (f16 arithmetic computes in float) and of f32 -> f16 copies.
// On the host the double path above (a float is exactly a double: one
// rounding). On the GPU the same rounding is one instruction, PTX
// cvt.rn.f16.f32 (IEEE round to nearest even, overflow to inf, subnormal
// results kept), where the double path costs some forty 64-bit integer
// instructions an element (the suspect in f16 in-place ops on the GPU running
// at a third of the f32 ones' speed: bench/RESULTS.md); NaNs are not left to
// the instruction, whose NaN is not the contract's. api.CudaConversions
// checks the device's results against the host's.
SM_HOST_DEVICE inline uint16_t float_to_half_bits(float v) {
#if defined(__CUDA_ARCH__)
  uint32_t u;
  memcpy(&u, &v, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
    return small_float_nan_bits<5, 10>(static_cast<uint16_t>((u >> 16) & 0x8000u));
  }
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
#else
  return double_to_half_bits(static_cast<double>(v));
#endif
}

// binary16 bits -> float, exact; infinities and NaNs (payload and quiet bit
// as they were) by the first branch. Finite values on the GPU: one
// instruction, PTX cvt.f32.f16 (exact, subnormals included), in place of the
// bit manipulation (see float_to_half_bits).
SM_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(h)));
    return f;
#else
    if (exp == 0) {
      if (mant == 0) {
        bits = sign;
      } else {  // subnormal: normalize
        int e = -1;
        do {
          mant <<= 1;
          ++e;
        } while ((mant & 0x400u) == 0);
        bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
      }
    } else {
      bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
#endif
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

SM_HOST_DEVICE inline float bf16_bits_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// Calls f(T{}) with the C++ type of d: bool, uint8_t, ..., Half, BFloat16,
// float, double. The one dtype switch of the library, host and device.
SM_EXEC_CHECK_DISABLE
template <typename F>
SM_HOST_DEVICE inline auto dispatch_dtype(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(bool{});
    case DType::U8: return f(uint8_t{});
    case DType::I8: return f(int8_t{});
    case DType::I16: return f(int16_t{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    case DType::F32: return f(float{});
    case DType::U16: return f(uint16_t{});
    case DType::U32: return f(uint32_t{});
    case DType::U64: return f(uint64_t{});
    case DType::C64: return f(Complex64{});
    case DType::C128: return f(Complex128{});
    default: return f(double{});
  }
}

// Exact-as-possible element conversions through a common "wide" value.
// Signed integers and bool travel as int64, uint64 as itself (its values
// above INT64_MAX reach floats as they are), real floats as double, complex
// numbers as their two components (no precision loss anywhere).
template <typename T>
struct Convert;

template <>
struct Convert<bool> {
  SM_HOST_DEVICE static double to_double(bool v) { return v ? 1.0 : 0.0; }
  SM_HOST_DEVICE static int64_t to_int(bool v) { return v ? 1 : 0; }
  SM_HOST_DEVICE static bool from_double(double v) { return v != 0.0; }
  SM_HOST_DEVICE static bool from_int(int64_t v) { return v != 0; }
};

// Float -> integer: NaN gives 0, out-of-range values saturate (C++ leaves it
// undefined; NumPy/PyTorch give platform values). In-range values truncate
// toward zero as every reference does.
// Unsigned targets: uint8/16/32 as every narrow integer (saturate to int64,
// then wrap: -1.0 -> 0xFF..., as NumPy on x86). uint64 extends the same rule
// to the range both signed and unsigned 64-bit values cover: [0, 2^64)
// truncates exactly, [-2^63, 0) wraps (-1.0 -> 2^64 - 1), beyond saturates
// (>= 2^64 -> 2^64 - 1, < -2^63 -> 2^63, the bits of INT64_MIN).
template <typename I>
SM_HOST_DEVICE inline I saturating_float_to_int(double v) {
  if (v != v) return 0;
  if constexpr (std::is_same<I, uint64_t>::value) {
    if (v >= 18446744073709551616.0) return UINT64_MAX;
    if (v >= 9223372036854775808.0) return static_cast<I>(static_cast<uint64_t>(v));
  }
  if (sizeof(I) == 8) {
    if (v >= 9223372036854775807.0) return static_cast<I>(INT64_MAX);
    if (v < -9223372036854775808.0) return static_cast<I>(INT64_MIN);
    return static_cast<I>(static_cast<int64_t>(v));
  }
  // Narrow integers wrap like the C int64 -> narrow conversion (NumPy does the
  // same through its int64 intermediate on x86 for in-range int64 values).
  int64_t w;
  if (v >= 9223372036854775807.0) w = INT64_MAX;
  else if (v < -9223372036854775808.0) w = INT64_MIN;
  else w = static_cast<int64_t>(v);
  return static_cast<I>(static_cast<uint64_t>(w));
}

#define SM_INT_CONVERT(T)                                                              \
  template <>                                                                          \
  struct Convert<T> {                                                                  \
    SM_HOST_DEVICE static double to_double(T v) { return static_cast<double>(v); }     \
    SM_HOST_DEVICE static int64_t to_int(T v) { return static_cast<int64_t>(v); }      \
    SM_HOST_DEVICE static T from_double(double v) { return saturating_float_to_int<T>(v); } \
    SM_HOST_DEVICE static T from_int(int64_t v) {                                      \
      return static_cast<T>(static_cast<uint64_t>(v));                                 \
    }                                                                                  \
  };
SM_INT_CONVERT(uint8_t)
SM_INT_CONVERT(int8_t)
SM_INT_CONVERT(int16_t)
SM_INT_CONVERT(int32_t)
SM_INT_CONVERT(int64_t)
SM_INT_CONVERT(uint16_t)
SM_INT_CONVERT(uint32_t)
#undef SM_INT_CONVERT

// uint64: to_int keeps the bits (integer targets wrap, so the bits are all
// they need); to_double is the unsigned value (the one path that differs).
template <>
struct Convert<uint64_t> {
  SM_HOST_DEVICE static double to_double(uint64_t v) { return static_cast<double>(v); }
  SM_HOST_DEVICE static int64_t to_int(uint64_t v) { return static_cast<int64_t>(v); }
  SM_HOST_DEVICE static uint64_t from_double(double v) {
    return saturating_float_to_int<uint64_t>(v);
  }
  SM_HOST_DEVICE static uint64_t from_int(int64_t v) { return static_cast<uint64_t>(v); }
};

// Half and BFloat16: widened through their float value; narrowed from double
// with one rounding to nearest even.
template <typename T, float (*kToFloat)(uint16_t), uint16_t (*kFromDouble)(double)>
struct SmallFloatConvert {
  SM_HOST_DEVICE static double to_double(T v) { return kToFloat(v.bits); }
  SM_HOST_DEVICE static int64_t to_int(T v) {
    return saturating_float_to_int<int64_t>(kToFloat(v.bits));
  }
  SM_HOST_DEVICE static T from_double(double v) { return T{kFromDouble(v)}; }
  SM_HOST_DEVICE static T from_int(int64_t v) { return T{kFromDouble(static_cast<double>(v))}; }
};
template <>
struct Convert<Half> : SmallFloatConvert<Half, half_bits_to_float, double_to_half_bits> {};
template <>
struct Convert<BFloat16> : SmallFloatConvert<BFloat16, bf16_bits_to_float, double_to_bf16_bits> {};
template <>
struct Convert<float> {
  SM_HOST_DEVICE static double to_double(float v) { return v; }
  SM_HOST_DEVICE static int64_t to_int(float v) { return saturating_float_to_int<int64_t>(v); }
  SM_HOST_DEVICE static float from_double(double v) { return static_cast<float>(v); }
  SM_HOST_DEVICE static float from_int(int64_t v) { return static_cast<float>(v); }
};
template <>
struct Convert<double> {
  SM_HOST_DEVICE static double to_double(double v) { return v; }
  SM_HOST_DEVICE static int64_t to_int(double v) { return saturating_float_to_int<int64_t>(v); }
  SM_HOST_DEVICE static double from_double(double v) { return v; }
  SM_HOST_DEVICE static double from_int(int64_t v) { return static_cast<double>(v); }
};
// Complex as a real value: the real part (what NumPy's astype and PyTorch's
// .to keep; convert() below handles the complex-specific pairs).
template <>
struct Convert<Complex64> {
  SM_HOST_DEVICE static double to_double(Complex64 v) { return v.re; }
  SM_HOST_DEVICE static int64_t to_int(Complex64 v) { return saturating_float_to_int<int64_t>(v.re); }
  SM_HOST_DEVICE static Complex64 from_double(double v) {
    return Complex64{static_cast<float>(v), 0.0f};
  }
  SM_HOST_DEVICE static Complex64 from_int(int64_t v) {
    return Complex64{static_cast<float>(v), 0.0f};
  }
};
template <>
struct Convert<Complex128> {
  SM_HOST_DEVICE static double to_double(Complex128 v) { return v.re; }
  SM_HOST_DEVICE static int64_t to_int(Complex128 v) { return saturating_float_to_int<int64_t>(v.re); }
  SM_HOST_DEVICE static Complex128 from_double(double v) { return Complex128{v, 0.0}; }
  SM_HOST_DEVICE static Complex128 from_int(int64_t v) {
    return Complex128{static_cast<double>(v), 0.0};
  }
};

// A bool element as stored: any nonzero byte is true. Kernels read bool
// sources through it, so bytes other than 0/1 (foreign memory, DLPack) are
// never loaded as a C++ bool, which would be undefined behaviour.
struct BoolByte {
  uint8_t v;
};
template <>
struct Convert<BoolByte> {
  SM_HOST_DEVICE static double to_double(BoolByte b) { return b.v ? 1.0 : 0.0; }
  SM_HOST_DEVICE static int64_t to_int(BoolByte b) { return b.v ? 1 : 0; }
  SM_HOST_DEVICE static BoolByte from_double(double v) { return BoolByte{v != 0.0}; }
  SM_HOST_DEVICE static BoolByte from_int(int64_t v) { return BoolByte{v != 0}; }
};

// dispatch_dtype for operands that are only read: bool comes as BoolByte.
SM_EXEC_CHECK_DISABLE
template <typename F>
SM_HOST_DEVICE inline auto dispatch_source_dtype(DType d, F&& f) {
  if (d == DType::Bool) return f(BoolByte{});
  return dispatch_dtype(d, f);
}

// The dtype of an element type (BoolByte reads bool elements).
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<BoolByte> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::I8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::I16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::U16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::U32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::U64; };
template <> struct DTypeOf<Complex64> { static constexpr DType value = DType::C64; };
template <> struct DTypeOf<Complex128> { static constexpr DType value = DType::C128; };

// A real floating element type (Half, BFloat16, float, double).
template <typename T>
struct IsFloatLike {
  static constexpr bool value = is_floating(DTypeOf<T>::value);
};
// A complex element type (Complex64, Complex128).
template <typename T>
struct IsComplex {
  static constexpr bool value = is_complex(DTypeOf<T>::value);
};
// The component type of a complex type.
template <typename T> struct ComplexPart;
template <> struct ComplexPart<Complex64> { using type = float; };
template <> struct ComplexPart<Complex128> { using type = double; };

// Element conversion S -> D: exact for every pair that the target can hold;
// integer -> integer wraps (two's complement), float -> integer truncates
// (saturating), anything -> 16-bit float rounds to nearest even once.
// Complex: real -> complex has imaginary part 0; complex -> real keeps the
// real part (imaginary discarded, as NumPy's astype and PyTorch's .to);
// complex -> bool is true when either part is nonzero; complex64 <->
// complex128 converts each component (rounding once).
template <typename D, typename S>
SM_HOST_DEVICE inline D convert(S v) {
  if constexpr (IsComplex<S>::value && IsComplex<D>::value) {
    using R = typename ComplexPart<D>::type;
    return D{static_cast<R>(v.re), static_cast<R>(v.im)};
  } else if constexpr (IsComplex<S>::value && (std::is_same<D, bool>::value ||
                                               std::is_same<D, BoolByte>::value)) {
    return Convert<D>::from_int(v.re != 0 || v.im != 0 ? 1 : 0);
  } else if constexpr (IsComplex<S>::value) {
    return Convert<D>::from_double(v.re);
  } else if constexpr (IsComplex<D>::value) {
    using R = typename ComplexPart<D>::type;
    return D{convert<R>(v), R(0)};
  } else if constexpr (IsFloatLike<S>::value) {
    return Convert<D>::from_double(Convert<S>::to_double(v));
  } else if constexpr (std::is_same<S, uint64_t>::value && IsFloatLike<D>::value) {
    // Values above INT64_MAX: the unsigned value, rounded once for float.
    if constexpr (std::is_same<D, float>::value) return static_cast<float>(v);
    else return Convert<D>::from_double(static_cast<double>(v));
  } else {
    return Convert<D>::from_int(Convert<S>::to_int(v));
  }
}

// Any element held exactly in one of four wide types (int64 for signed
// integers and bool, uint64, double for real floats, Complex128 for complex),
// for converters whose dtypes are known only at run time (the CUDA
// mixed-dtype kernels): narrow<D>(widen(v)) == convert<D>(v) for every pair
// (tests/unit/test_dtype.cpp checks each).
struct WideElement {
  enum Kind : int { Int, UInt, Real, Cplx } kind;
  int64_t i;
  uint64_t u;
  double f;
  Complex128 c;
};
template <typename S>
SM_HOST_DEVICE inline WideElement widen(S v) {
  WideElement w{WideElement::Int, 0, 0, 0.0, Complex128{0.0, 0.0}};
  if constexpr (IsComplex<S>::value) {
    w.kind = WideElement::Cplx;
    w.c = convert<Complex128>(v);
  } else if constexpr (IsFloatLike<S>::value) {
    w.kind = WideElement::Real;
    w.f = Convert<S>::to_double(v);
  } else if constexpr (std::is_same<S, uint64_t>::value) {
    w.kind = WideElement::UInt;
    w.u = v;
  } else {
    w.i = Convert<S>::to_int(v);
  }
  return w;
}
template <typename D>
SM_HOST_DEVICE inline D narrow(const WideElement& w) {
  switch (w.kind) {
    case WideElement::Cplx: return convert<D>(w.c);
    case WideElement::Real: return convert<D>(w.f);
    case WideElement::UInt: return convert<D>(w.u);
    default: return convert<D>(w.i);
  }
}

}  // namespace sm
