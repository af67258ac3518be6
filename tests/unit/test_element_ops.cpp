// core/element_ops.hpp, the one definition of what each element op does
// (both backends compile it): the op table, compute types, the NaN and
// wrap-around rules, and the accuracy of the library's own exp against long
// double expl (faithful: every result is one of the two floats around the
// exact value, the measured worst case is printed).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include "core/element_ops.hpp"

namespace {

using sm::ComputeKind;
using sm::DType;

// ---- the op table ------------------------------------------------------------------------

TEST(ElementOps, TableHasOneRowPerOpInEnumOrder) {
  const char* names[] = {"FILL", "ZERO", "ADD", "SUB", "MUL", "DIV",
                         "CLAMP", "RELU", "NEG", "ABS", "SQRT", "EXP", "SIGN"};
  for (int op = SM_OP_FILL; op <= SM_OP_SIGN; ++op) {
    const sm::OpTraits* t = sm::op_traits(op);
    ASSERT_NE(t, nullptr) << op;
    EXPECT_STREQ(t->name, names[op]);
    EXPECT_TRUE(t->scalar_form) << names[op];
  }
  EXPECT_EQ(sm::op_traits(-1), nullptr);
  EXPECT_EQ(sm::op_traits(SM_OP_SIGN + 1), nullptr);
  EXPECT_STREQ(sm::op_name(99), "unknown");
  // The forms and dtype rules the engine enforces (engine/inplace.cpp).
  for (int op : {SM_OP_FILL, SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_DIV})
    EXPECT_TRUE(sm::op_traits(op)->tensor_form) << op;
  for (int op : {SM_OP_ZERO, SM_OP_CLAMP, SM_OP_RELU, SM_OP_NEG, SM_OP_ABS, SM_OP_SQRT, SM_OP_EXP,
                 SM_OP_SIGN})
    EXPECT_FALSE(sm::op_traits(op)->tensor_form) << op;
  for (int op : {SM_OP_DIV, SM_OP_SQRT, SM_OP_EXP}) EXPECT_FALSE(sm::op_traits(op)->integral_result);
  for (int op = SM_OP_FILL; op <= SM_OP_SIGN; ++op)
    EXPECT_EQ(sm::op_traits(op)->on_bool,
              op == SM_OP_FILL || op == SM_OP_ZERO                ? sm::kBoolComputed
              : op == SM_OP_ABS || op == SM_OP_SIGN ? sm::kBoolIdentity
                                                    : sm::kBoolRefused)
        << op;
  EXPECT_TRUE(sm::op_traits(SM_OP_SIGN)->integral_result);
  for (int op = SM_OP_FILL; op <= SM_OP_SIGN; ++op)
    EXPECT_EQ(sm::op_traits(op)->takes_complex(),
              op != SM_OP_CLAMP && op != SM_OP_RELU && op != SM_OP_ABS && op != SM_OP_SIGN)
        << op;
  EXPECT_EQ(sm::op_traits(SM_OP_CLAMP)->whole_scalars, 2);
  EXPECT_EQ(sm::op_traits(SM_OP_ADD)->whole_scalars, 1);
  for (int op = SM_OP_FILL; op <= SM_OP_SIGN; ++op)
    EXPECT_EQ(sm::op_traits(op)->scales_by_alpha, op == SM_OP_ADD || op == SM_OP_SUB) << op;
}

// ---- compute types -------------------------------------------------------------------------

static_assert(std::is_same<sm::ScalarCompute<sm::Half>, float>::value, "f16 computes in float");
static_assert(std::is_same<sm::ScalarCompute<sm::BFloat16>, float>::value, "bf16 in float");
static_assert(std::is_same<sm::ScalarCompute<float>, float>::value, "f32 in float");
static_assert(std::is_same<sm::ScalarCompute<double>, double>::value, "f64 in double");
static_assert(std::is_same<sm::ScalarCompute<int8_t>, int64_t>::value, "integers in int64");
static_assert(std::is_same<sm::ScalarCompute<bool>, int64_t>::value, "bool in int64");
static_assert(std::is_same<sm::BinaryCompute<int32_t, double>, double>::value, "f64 wins");
static_assert(std::is_same<sm::BinaryCompute<sm::Half, int64_t>, float>::value, "floating wins");
static_assert(std::is_same<sm::BinaryCompute<int8_t, sm::BoolByte>, int64_t>::value, "ints");
static_assert(std::is_same<sm::BinaryCompute<float, double>, double>::value, "f64 wins");

TEST(ElementOps, RunTimeComputeKindsAgreeWithTheTypes) {
  const DType all[] = {DType::Bool, DType::U8, DType::I8, DType::I16, DType::I32,
                       DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64};
  auto kind_of = [](auto c) {
    using C = decltype(c);
    return std::is_same<C, int64_t>::value ? ComputeKind::Int64
           : std::is_same<C, float>::value ? ComputeKind::Float
                                           : ComputeKind::Double;
  };
  for (DType d : all) {
    sm::dispatch_dtype(d, [&](auto dv) {
      using D = decltype(dv);
      EXPECT_EQ(sm::scalar_compute(d), kind_of(sm::ScalarCompute<D>{}));
      for (DType s : all) {
        sm::dispatch_source_dtype(s, [&](auto sv) {
          using S = decltype(sv);
          EXPECT_EQ(sm::binary_compute(d, s), kind_of(sm::BinaryCompute<D, S>{}))
              << sm::dtype_name(d) << " " << sm::dtype_name(s);
        });
      }
    });
  }
}

// ---- op bodies ------------------------------------------------------------------------------

TEST(ElementOps, NanRulesOfClampReluAndScalarOperands) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto k = sm::make_scalar_args<float>(1.0, nan);  // CLAMP min 1, no max
  EXPECT_TRUE(k.has_lo);
  EXPECT_FALSE(k.has_hi);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_CLAMP, 0.5f, k), 1.0f);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_CLAMP, 1e30f, k), 1e30f);
  EXPECT_TRUE(std::isnan(sm::apply_scalar_op<float>(SM_OP_CLAMP, NAN, k))) << "NaN elements stay NaN";
  EXPECT_TRUE(std::isnan(sm::apply_scalar_op<float>(SM_OP_RELU, NAN, k))) << "RELU keeps NaN";
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_RELU, -2.0f, k), 0.0f);
  // A NaN operand of ADD is an ordinary operand: x + NaN is NaN (PyTorch),
  // not "no operand" (a divergence the CUDA kernels once had).
  const auto n = sm::make_scalar_args<float>(nan, 0.0);
  EXPECT_TRUE(std::isnan(sm::apply_scalar_op<float>(SM_OP_ADD, 2.0f, n)));
  const auto nd = sm::make_scalar_args<double>(nan, 0.0);
  EXPECT_TRUE(std::isnan(sm::apply_scalar_op<double>(SM_OP_MUL, 2.0, nd)));
  // Integers: a NaN bound is still no bound; a NaN operand converts to 0.
  const auto ki = sm::make_scalar_args<int64_t>(nan, 5.0);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_CLAMP, -100, ki), -100);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_CLAMP, 100, ki), 5);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_ADD, 7, ki), 7);
}

TEST(ElementOps, SignKeepsNanAndGivesPositiveZero) {
  const auto kf = sm::make_scalar_args<float>(0.0, 0.0);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_SIGN, -3.5f, kf), -1.0f);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_SIGN, 1e-45f, kf), 1.0f);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_SIGN, -INFINITY, kf), -1.0f);
  EXPECT_FALSE(std::signbit(sm::apply_scalar_op<float>(SM_OP_SIGN, -0.0f, kf))) << "-0.0 gives +0.0";
  const float neg_nan = -std::numeric_limits<float>::quiet_NaN();
  const float got = sm::apply_scalar_op<float>(SM_OP_SIGN, neg_nan, kf);
  EXPECT_TRUE(std::isnan(got) && std::signbit(got)) << "a NaN is returned as it is";
  const auto kd = sm::make_scalar_args<double>(0.0, 0.0);
  EXPECT_TRUE(std::isnan(sm::apply_scalar_op<double>(SM_OP_SIGN, NAN, kd)));
  EXPECT_EQ(sm::apply_scalar_op<double>(SM_OP_SIGN, 5e-324, kd), 1.0);
  const auto ki = sm::make_scalar_args<int64_t>(0.0, 0.0);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_SIGN, INT64_MIN, ki), -1);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_SIGN, 0, ki), 0);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_SIGN, INT64_MAX, ki), 1);
  const auto ku = sm::make_scalar_args<uint64_t>(0.0, 0.0);
  EXPECT_EQ(sm::apply_scalar_op<uint64_t>(SM_OP_SIGN, uint64_t(1) << 63, ku), 1u) << "unsigned";
  EXPECT_EQ(sm::apply_scalar_op<uint64_t>(SM_OP_SIGN, 0, ku), 0u);
  // Through storage types: int8 -128, float16 -0.0 (0x8000) and NaN (0xFE00).
  EXPECT_EQ(sm::scalar_op_element<int8_t>(SM_OP_SIGN, int8_t(-128), ki), int8_t(-1));
  const auto kh = sm::make_scalar_args<float>(0.0, 0.0);
  EXPECT_EQ(sm::scalar_op_element<sm::Half>(SM_OP_SIGN, sm::Half{0x8000}, kh).bits, 0x0000);
  EXPECT_EQ(sm::scalar_op_element<sm::Half>(SM_OP_SIGN, sm::Half{0xFE00}, kh).bits, 0xFE00);
  EXPECT_EQ(sm::scalar_op_element<sm::BFloat16>(SM_OP_SIGN, sm::BFloat16{0xC2F7}, kh).bits, 0xBF80);
}

TEST(ElementOps, FillAndZeroAreDefinedLikeEveryOtherOp) {
  // The backends write FILL and ZERO as fills (scalar_bits), never through
  // apply_scalar_op; its cases must still agree with them.
  const auto k = sm::make_scalar_args<float>(2.5, 0.0);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_FILL, 7.0f, k), 2.5f);
  EXPECT_EQ(sm::apply_scalar_op<float>(SM_OP_ZERO, 7.0f, k), 0.0f);
  unsigned char b[8] = {};
  sm::scalar_bits(DType::I16, 300.0, b);
  const auto ki = sm::make_scalar_args<int64_t>(300.0, 0.0);
  EXPECT_EQ(sm::scalar_op_element<int16_t>(SM_OP_FILL, int16_t{1}, ki), int16_t(b[0] | (b[1] << 8)));
}

TEST(ElementOps, IntegerArithmeticWrapsWithoutUndefinedBehaviour) {
  const auto k = sm::make_scalar_args<int64_t>(1.0, 0.0);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_ADD, INT64_MAX, k), INT64_MIN);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_NEG, INT64_MIN, k), INT64_MIN);
  EXPECT_EQ(sm::apply_scalar_op<int64_t>(SM_OP_ABS, INT64_MIN, k), INT64_MIN);
  EXPECT_EQ(sm::binary_apply<int64_t>(SM_OP_DIV, INT64_MIN, -1, 1), INT64_MIN);
  EXPECT_EQ(sm::binary_apply<int64_t>(SM_OP_DIV, 5, 0, 1), 0);
  EXPECT_EQ(sm::binary_apply<int64_t>(SM_OP_SUB, 0, INT64_MIN, -1), INT64_MIN);
  // int8 storage wraps like C's int64 -> int8 conversion.
  const auto k100 = sm::make_scalar_args<int64_t>(100.0, 0.0);
  EXPECT_EQ(sm::scalar_op_element<int8_t>(SM_OP_ADD, int8_t{100}, k100), int8_t{-56});
  // Mixed dtypes compute in the pair's type: int32 += 0.5 * f16(3) rounds
  // in float and truncates on the way back.
  EXPECT_EQ((sm::binary_op_element<int32_t, sm::Half>(SM_OP_ADD, 1, sm::Half{0x4200}, 0.5f)), 2);
}

TEST(ElementOps, SixteenBitResultsRoundOnceFromFloat) {
  // bf16 += 1 computed in float: 1 + 2^-9 rounds back to 1 (ties to even).
  const auto k = sm::make_scalar_args<float>(std::ldexp(1.0, -9), 0.0);
  const sm::BFloat16 one{0x3F80};
  EXPECT_EQ(sm::scalar_op_element<sm::BFloat16>(SM_OP_ADD, one, k).bits, 0x3F80);
  // The fast bf16 rounding is the exact one on every float with a nonzero
  // low half (sampled) and every special.
  std::mt19937 rng(3);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    ASSERT_EQ(sm::float_to_bf16_bits(f), sm::double_to_bf16_bits(f)) << std::hex << bits;
  }
}

TEST(ElementOps, ScalarBitsAreTheConvertedElement) {
  unsigned char b[8] = {};
  sm::scalar_bits(DType::F16, 1.0, b);
  EXPECT_EQ(b[0] | (b[1] << 8), 0x3C00);
  sm::scalar_bits(DType::I8, -1.0, b);
  EXPECT_EQ(b[0], 0xFF);
  sm::scalar_bits(DType::Bool, 0.25, b);
  EXPECT_EQ(b[0], 1);
}

// ---- exp accuracy -----------------------------------------------------------------------------

// The two values of T around the exact x (equal when x is representable);
// +inf above the largest finite value.
template <typename T>
void bracket(long double exact, T* lo, T* hi) {
  const T r = static_cast<T>(exact);  // round to nearest
  if (static_cast<long double>(r) == exact) {
    *lo = *hi = r;
  } else if (static_cast<long double>(r) < exact) {
    *lo = r;
    *hi = std::nextafter(r, std::numeric_limits<T>::infinity());
  } else {
    *hi = r;
    *lo = std::nextafter(r, -std::numeric_limits<T>::infinity());
  }
}

template <typename T>
struct ExpCheck {
  long long checked = 0, correctly_rounded = 0, off = 0;
  double worst_ulps = 0;
  T worst_x = 0;
  void at(T x) {
    const T y = sm::exp_rn(x);
    const long double exact = expl(static_cast<long double>(x));
    T lo, hi;
    bracket<T>(exact, &lo, &hi);
    ++checked;
    const T nearest = static_cast<T>(exact);
    if (y == nearest) ++correctly_rounded;
    if (!(y == lo || y == hi)) {
      if (off++ < 5) ADD_FAILURE() << "exp(" << std::hexfloat << x << ") = " << y << ", exact " << exact;
      return;
    }
    if (std::isfinite(y) && y != nearest) {
      const long double ulp = static_cast<long double>(hi) - static_cast<long double>(lo);
      const double e = static_cast<double>(fabsl(static_cast<long double>(y) - exact) / ulp);
      if (e > worst_ulps) worst_ulps = e, worst_x = x;
    }
  }
  void report(const char* what) const {
    std::printf("exp %s: %lld values, %.4f%% correctly rounded, worst %.3f ulp (x = %a)\n", what,
                checked, 100.0 * correctly_rounded / checked, worst_ulps, static_cast<double>(worst_x));
    EXPECT_EQ(off, 0);
    EXPECT_LT(worst_ulps, 1.0);
  }
};

TEST(ElementOps, ExpFloatIsFaithfulEverywhere) {
  ExpCheck<float> c;
  // Every 193rd float bit pattern (both signs, subnormals included), then every
  // float near 0, the overflow and the underflow edges.
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 193) {
    float x;
    const uint32_t u = static_cast<uint32_t>(b);
    std::memcpy(&x, &u, 4);
    if (std::isnan(x)) continue;
    c.at(x);
  }
  for (float center : {0.0f, 88.7228391f, -87.3365479f, -103.972076f}) {
    float x = center;
    for (int i = 0; i < 20000; ++i) x = std::nextafter(x, -INFINITY);
    for (int i = 0; i < 40000; ++i, x = std::nextafter(x, INFINITY)) c.at(x);
  }
  c.report("float");
}

TEST(ElementOps, ExpDoubleIsFaithfulEverywhere) {
  ExpCheck<double> c;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> range(-746.0, 710.0), small(-1.0, 1.0);
  for (int i = 0; i < 1000000; ++i) c.at(range(rng));
  for (int i = 0; i < 300000; ++i) c.at(small(rng) * std::ldexp(1.0, -static_cast<int>(rng() % 60)));
  for (double center : {709.782712893384, -708.3964185322641, -745.1332191019411}) {
    double x = center;
    for (int i = 0; i < 5000; ++i) x = std::nextafter(x, -INFINITY);
    for (int i = 0; i < 10000; ++i, x = std::nextafter(x, INFINITY)) c.at(x);
  }
  c.report("double");
}

TEST(ElementOps, ExpSpecialValues) {
  EXPECT_EQ(sm::exp_rn(0.0f), 1.0f);
  EXPECT_EQ(sm::exp_rn(-0.0), 1.0);
  EXPECT_EQ(sm::exp_rn(INFINITY), INFINITY);
  EXPECT_EQ(sm::exp_rn(-INFINITY), 0.0f);
  EXPECT_EQ(sm::exp_rn(static_cast<double>(INFINITY)), static_cast<double>(INFINITY));
  EXPECT_EQ(sm::exp_rn(1000.0f), INFINITY);
  EXPECT_EQ(sm::exp_rn(-1000.0), 0.0);
  EXPECT_TRUE(std::isnan(sm::exp_rn(NAN)));
  EXPECT_TRUE(std::isnan(sm::exp_rn(std::nan(""))));
  const float sub = sm::exp_rn(-103.28f);  // a subnormal result
  EXPECT_GT(sub, 0.0f);
  EXPECT_LT(sub, FLT_MIN);
  EXPECT_GT(sm::exp_rn(-745.0), 0.0) << "the smallest subnormal is reached";
}

}  // namespace
