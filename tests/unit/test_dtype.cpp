// Exact f16/bf16 conversions: every bit pattern round-trips, and rounding from
// double is the nearest representable value with ties to even (checked
// against a brute-force search over the neighbouring encodings).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/dtype.hpp"

using namespace sm;

namespace {

double half_value(uint16_t h) { return half_bits_to_float(h); }
double bf16_value(uint16_t b) { return bf16_bits_to_float(b); }

// The nearest finite encoding by brute force (positive values; ties to even),
// with IEEE overflow: values >= max + half an ulp go to infinity.
template <typename ToValue>
uint16_t brute_round(double x, ToValue value, uint16_t max_finite, uint16_t inf) {
  const double maxv = value(max_finite);
  const double ulp = maxv - value(static_cast<uint16_t>(max_finite - 1));
  if (x >= maxv + ulp / 2) return inf;
  uint16_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  // Binary search for the first encoding >= x, then compare neighbours.
  uint32_t lo = 0, hi = max_finite;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (value(static_cast<uint16_t>(mid)) < x) lo = mid + 1; else hi = mid;
  }
  for (int64_t c = static_cast<int64_t>(lo) - 1; c <= static_cast<int64_t>(lo) + 1; ++c) {
    if (c < 0 || c > max_finite) continue;
    const double err = std::fabs(value(static_cast<uint16_t>(c)) - x);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = static_cast<uint16_t>(c);
      best_err = err;
    }
  }
  return best;
}

}  // namespace

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_STREQ(dtype_name(DType::BF16), "bfloat16");
  EXPECT_TRUE(is_floating(DType::F16));
  EXPECT_TRUE(is_integral(DType::U8));
  EXPECT_FALSE(is_integral(DType::Bool));
}

TEST(DType, HalfRoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_bits_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_value(double_to_half_bits(f))));
      continue;
    }
    ASSERT_EQ(double_to_half_bits(f), h) << std::hex << h;
  }
}

TEST(DType, Bf16RoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_bits_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_value(double_to_bf16_bits(f))));
      continue;
    }
    ASSERT_EQ(double_to_bf16_bits(f), b) << std::hex << b;
  }
}

TEST(DType, HalfKnownValues) {
  EXPECT_EQ(double_to_half_bits(1.0), 0x3C00);
  EXPECT_EQ(double_to_half_bits(-2.0), 0xC000);
  EXPECT_EQ(double_to_half_bits(65504.0), 0x7BFF);
  EXPECT_EQ(double_to_half_bits(65520.0), 0x7C00);  // ties at the top round to inf
  EXPECT_EQ(double_to_half_bits(65519.99), 0x7BFF);
  EXPECT_EQ(double_to_half_bits(1.0 + std::ldexp(1.0, -11)), 0x3C00);  // tie -> even
  EXPECT_EQ(double_to_half_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.0, -25)), 0x0000);  // tie -> even (zero)
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(double_to_half_bits(-0.0), 0x8000);
  EXPECT_EQ(double_to_half_bits(INFINITY), 0x7C00);
  EXPECT_EQ(double_to_half_bits(-INFINITY), 0xFC00);
  EXPECT_EQ(double_to_half_bits(1e-300), 0x0000);
}

TEST(DType, Bf16KnownValues) {
  EXPECT_EQ(double_to_bf16_bits(1.0), 0x3F80);
  EXPECT_EQ(double_to_bf16_bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);      // tie -> even
  EXPECT_EQ(double_to_bf16_bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);  // tie -> even (up)
  // Just above a tie in double, but the tie in float: a double-rounding trap.
  EXPECT_EQ(double_to_bf16_bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3F81);
  EXPECT_EQ(double_to_bf16_bits(3.4e38), 0x7F80);  // beyond bf16 max rounds to inf
}

TEST(DType, RandomDoublesRoundToNearestEven) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex16(-26, 16), ex_bf(-134, 128);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(mant(rng), ex16(rng));
    ASSERT_EQ(double_to_half_bits(x), brute_round(x, half_value, 0x7BFF, 0x7C00)) << x;
    const double y = std::ldexp(mant(rng), ex_bf(rng));
    ASSERT_EQ(double_to_bf16_bits(y), brute_round(y, bf16_value, 0x7F7F, 0x7F80)) << y;
    ASSERT_EQ(double_to_half_bits(-x), 0x8000 | brute_round(x, half_value, 0x7BFF, 0x7C00));
  }
}

TEST(DType, ConvertIntegersWrapAndFloatsSaturate) {
  EXPECT_EQ((convert<uint8_t, int64_t>(257)), 1);
  EXPECT_EQ((convert<int8_t, int32_t>(200)), -56);
  EXPECT_EQ((convert<int32_t, double>(-3.9)), -3);
  EXPECT_EQ((convert<int64_t, double>(1e30)), INT64_MAX);
  EXPECT_EQ((convert<int64_t, double>(NAN)), 0);
  EXPECT_EQ((convert<bool, float>(0.5f)), true);
  EXPECT_EQ((convert<bool, int64_t>(0)), false);
  EXPECT_EQ((convert<int64_t, int64_t>(INT64_MIN)), INT64_MIN);
  EXPECT_EQ((convert<double, int64_t>((int64_t(1) << 53) + 1)), 9007199254740992.0);
  EXPECT_EQ((convert<Half, float>(1.5f)).bits, 0x3E00);
  EXPECT_EQ((convert<float, BFloat16>(BFloat16{0x3F80})), 1.0f);
}

// The exchanged dtypes (issue 13): sizes, alignment, names, classes.
TEST(DType, ExchangedDtypes) {
  EXPECT_EQ(dtype_size(DType::U16), 2u);
  EXPECT_EQ(dtype_size(DType::U32), 4u);
  EXPECT_EQ(dtype_size(DType::U64), 8u);
  EXPECT_EQ(dtype_size(DType::C64), 8u);
  EXPECT_EQ(dtype_size(DType::C128), 16u);
  EXPECT_EQ(dtype_alignment(DType::C64), 4u);
  EXPECT_EQ(dtype_alignment(DType::C128), 8u);
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType t = static_cast<DType>(d);
    EXPECT_EQ(dtype_size(t) % dtype_alignment(t), 0u) << d;
    if (!is_complex(t)) EXPECT_EQ(dtype_alignment(t), dtype_size(t)) << d;
  }
  EXPECT_STREQ(dtype_name(DType::U16), "uint16");
  EXPECT_STREQ(dtype_name(DType::C128), "complex128");
  EXPECT_TRUE(is_integral(DType::U64));
  EXPECT_FALSE(is_integral(DType::C64));
  EXPECT_FALSE(is_floating(DType::C64));
  EXPECT_TRUE(is_complex(DType::C128));
}

namespace {

// Sample elements of each type (bit patterns of every kind: signs, extremes,
// NaN, values above INT64_MAX, complex with both parts).
template <typename T>
std::vector<T> samples() {
  std::vector<T> out;
  const double vals[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.75, 255.0, 65504.0, 1e10, -1e10, 3e38,
                         1e300, 9223372036854775808.0, 18446744073709549568.0, std::nan(""),
                         -INFINITY};
  if constexpr (IsComplex<T>::value) {
    for (double a : vals)
      for (double b : {0.0, -3.5, 1e-3}) out.push_back(convert<T>(Complex128{a, b}));
  } else if constexpr (std::is_same<T, bool>::value) {
    out = {false, true};
  } else if constexpr (IsFloatLike<T>::value) {
    for (double a : vals) out.push_back(convert<T>(a));
  } else {
    for (double a : vals) out.push_back(saturating_float_to_int<T>(a));
    out.push_back(static_cast<T>(~static_cast<uint64_t>(0)));
    out.push_back(static_cast<T>(static_cast<uint64_t>(1) << (8 * sizeof(T) - 1)));
  }
  return out;
}

}  // namespace

// narrow<D>(widen(v)) is convert<D>(v) for every pair: the CUDA mixed-dtype
// conversion kernel (widen/narrow) and the typed paths agree bit for bit.
TEST(DType, WideElementIsConvert) {
  int checked = 0;
  for (int s = 0; s < kNumDTypes; ++s)
    for (int d = 0; d < kNumDTypes; ++d)
      dispatch_dtype(static_cast<DType>(s), [&](auto sv) {
        using S = decltype(sv);
        dispatch_dtype(static_cast<DType>(d), [&](auto dv) {
          using D = decltype(dv);
          for (const S v : samples<S>()) {
            const D a = convert<D>(v), b = narrow<D>(widen(v));
            EXPECT_EQ(std::memcmp(&a, &b, sizeof(D)), 0) << s << " -> " << d;
            ++checked;
          }
        });
      });
  EXPECT_GT(checked, 2000);
}

// uint64 values above INT64_MAX reach floats as unsigned values.
TEST(DType, Uint64ToFloat) {
  EXPECT_EQ(convert<double>(UINT64_MAX), 18446744073709551616.0);
  EXPECT_EQ(convert<float>(static_cast<uint64_t>(1) << 63), 9223372036854775808.0f);
  EXPECT_EQ(convert<Complex128>(UINT64_MAX).re, 18446744073709551616.0);
  EXPECT_EQ(half_bits_to_float(convert<Half>(UINT64_MAX).bits), INFINITY);
  EXPECT_EQ(convert<uint64_t>(-1.0), UINT64_MAX);
  EXPECT_EQ(convert<uint64_t>(std::nan("")), 0u);
}

// NaNs: a conversion to a 16-bit float keeps only the sign (quiet, no
// payload); binary16 -> float keeps every bit. The CPU's SIMD conversions
// and the GPU's cvt instructions repair their NaN lanes to these bits.
TEST(DType, NaNBitsOfConversions) {
  const double qnan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(double_to_half_bits(qnan), 0x7E00);
  EXPECT_EQ(double_to_half_bits(-qnan), 0xFE00);
  EXPECT_EQ(double_to_bf16_bits(qnan), 0x7FC0);
  EXPECT_EQ(double_to_bf16_bits(-qnan), 0xFFC0);
  EXPECT_EQ((small_float_nan_bits<5, 10>(0x8000)), 0xFE00);
  EXPECT_EQ((small_float_nan_bits<8, 7>(0)), 0x7FC0);
  uint32_t snan = 0x7F800001u;  // signalling, payload 1
  float f;
  std::memcpy(&f, &snan, 4);
  EXPECT_EQ(float_to_half_bits(f), 0x7E00);
  const float back = half_bits_to_float(0xFD01);  // negative signalling NaN, payload 0x101
  uint32_t bits;
  std::memcpy(&bits, &back, 4);
  EXPECT_EQ(bits, 0xFF800000u | (0x101u << 13));
}

// float_to_half_bits (the store of float arithmetic and f32 -> f16 copies)
// at every rounding boundary: each finite binary16 value maps to itself, the
// midpoint above it to the even neighbour (65520 to infinity). The GPU's
// instruction path is checked against the host on the device
// (api.CudaConversions).
TEST(DType, FloatToHalfAtEveryBoundary) {
  for (uint32_t h = 0; h < 0x7C00; ++h) {  // every finite value and the midpoint above it
    const float v = half_bits_to_float(static_cast<uint16_t>(h));
    const float mid = static_cast<float>((static_cast<double>(v) +
                                          (h + 1 < 0x7C00 ? half_bits_to_float(static_cast<uint16_t>(h + 1)) : 65536.0)) / 2);
    ASSERT_EQ(float_to_half_bits(v), h);
    ASSERT_EQ(float_to_half_bits(mid), (h & 1) ? h + 1 : h) << h;  // ties to even
  }
}
