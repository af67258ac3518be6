// Element helpers for the CPU kernels: conversions into and out of the
// compute types of backend.hpp's contract, with fast paths that give the
// same bits as sm::convert<> (tests/unit/test_cpu_kernels.cpp checks them).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.hpp"

namespace sm {
namespace cpu {

// Element-sized bit containers allowed to alias any element type: plain
// copies move bits through these whatever the dtype. Structs, because a
// may_alias typedef loses its attribute as a template argument.
template <int N>
struct Bits;
template <> struct __attribute__((may_alias)) Bits<1> { uint8_t v; };
template <> struct __attribute__((may_alias)) Bits<2> { uint16_t v; };
template <> struct __attribute__((may_alias)) Bits<4> { uint32_t v; };
template <> struct __attribute__((may_alias)) Bits<8> { uint64_t v; };

// float -> bfloat16, round to nearest even: the same bits as
// double_to_bf16_bits(f) (a float is exact in double and bf16 shares its
// exponent range, so one rounding of the low 16 bits is the whole story).
// Branch-free so the contiguous loop vectorizes. NaN -> sign | quiet NaN.
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
  return static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

// Element conversion used by copies: convert<D>(S) with fast paths.
template <typename D, typename S>
inline D cvt(S v) {
  if constexpr (std::is_same<D, BFloat16>::value && std::is_same<S, float>::value) {
    return BFloat16{float_to_bf16_bits(v)};
  } else if constexpr (std::is_same<D, float>::value && std::is_same<S, BFloat16>::value) {
    return bf16_bits_to_float(v.bits);
  } else if constexpr (std::is_same<D, float>::value && std::is_same<S, Half>::value) {
    return half_bits_to_float(v.bits);
  } else {
    return convert<D>(v);
  }
}

// ---- compute types ----------------------------------------------------------
// int64 (wrapping) for integers and bool, float for f16/bf16/f32, double for f64.

template <typename T>
inline float to_f32(T v) {
  if constexpr (std::is_same<T, Half>::value) {
    return half_bits_to_float(v.bits);
  } else if constexpr (std::is_same<T, BFloat16>::value) {
    return bf16_bits_to_float(v.bits);
  } else if constexpr (std::is_same<T, bool>::value) {
    return v ? 1.0f : 0.0f;
  } else if constexpr (std::is_same<T, BoolByte>::value) {
    return v.v ? 1.0f : 0.0f;
  } else {
    return static_cast<float>(v);  // integers round once, as PyTorch's cast
  }
}

template <typename T>
inline double to_f64(T v) {
  return Convert<T>::to_double(v);
}

template <typename T>
inline int64_t to_i64(T v) {
  return Convert<T>::to_int(v);
}

// Loads v as compute type C.
template <typename C, typename T>
inline C load_as(T v) {
  if constexpr (std::is_same<C, float>::value) {
    return to_f32(v);
  } else if constexpr (std::is_same<C, double>::value) {
    return to_f64(v);
  } else {
    return to_i64(v);
  }
}

// Stores compute value c into T.
template <typename T, typename C>
inline T store_as(C c) {
  if constexpr (std::is_same<C, int64_t>::value) {
    return Convert<T>::from_int(c);
  } else if constexpr (std::is_same<T, float>::value) {
    return static_cast<float>(c);
  } else if constexpr (std::is_same<T, BFloat16>::value && std::is_same<C, float>::value) {
    return BFloat16{float_to_bf16_bits(c)};
  } else {
    return Convert<T>::from_double(static_cast<double>(c));
  }
}

// Wrapping int64 arithmetic without UB.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Truncating division; x / 0 gives 0 and INT64_MIN / -1 wraps to INT64_MIN
// (the engine refuses integer DIV; this only keeps the kernel free of UB).
inline int64_t safe_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);
  return a / b;
}

}  // namespace cpu
}  // namespace sm
