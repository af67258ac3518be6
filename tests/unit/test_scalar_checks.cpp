// Which scalars each dtype takes (PyTorch's c10::overflows) and the
// promotion that decides alpha's type, without a device.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/scalar_checks.hpp"

namespace sm {
namespace {

TEST(ScalarChecks, IntegersTakeFiniteValuesInTheirClosedRange) {
  EXPECT_TRUE(scalar_fits(DType::I8, -128));
  EXPECT_TRUE(scalar_fits(DType::I8, 127));
  EXPECT_TRUE(scalar_fits(DType::I8, 126.9));  // truncates to 126
  EXPECT_TRUE(scalar_fits(DType::I8, -128.0 + 0.5));
  EXPECT_FALSE(scalar_fits(DType::I8, 127.5));  // beyond max, as c10 compares
  EXPECT_FALSE(scalar_fits(DType::I8, -128.5));
  EXPECT_FALSE(scalar_fits(DType::I8, 300));
  EXPECT_FALSE(scalar_fits(DType::U8, -1));
  EXPECT_FALSE(scalar_fits(DType::U8, -0.5));
  EXPECT_TRUE(scalar_fits(DType::U8, 255));
  EXPECT_FALSE(scalar_fits(DType::U8, 256));
  EXPECT_TRUE(scalar_fits(DType::I16, -32768));
  EXPECT_FALSE(scalar_fits(DType::I16, 32768));
  EXPECT_TRUE(scalar_fits(DType::I32, 2147483647.0));
  EXPECT_FALSE(scalar_fits(DType::I32, 2147483648.0));
  // int64: the largest double below 2^63 fits, 2^63 (what 2^63 - 1 rounds to) does not.
  EXPECT_TRUE(scalar_fits(DType::I64, -9223372036854775808.0));
  EXPECT_TRUE(scalar_fits(DType::I64, std::nextafter(9223372036854775808.0, 0.0)));
  EXPECT_FALSE(scalar_fits(DType::I64, 9223372036854775808.0));
  EXPECT_FALSE(scalar_fits(DType::I64, std::nextafter(-9223372036854775808.0, -INFINITY)));
  for (DType d : {DType::U8, DType::I8, DType::I16, DType::I32, DType::I64}) {
    EXPECT_FALSE(scalar_fits(d, NAN)) << dtype_name(d);
    EXPECT_FALSE(scalar_fits(d, INFINITY)) << dtype_name(d);
    EXPECT_FALSE(scalar_fits(d, -INFINITY)) << dtype_name(d);
  }
}

TEST(ScalarChecks, WideUnsignedTypesTakeTheirWholeRange) {
  EXPECT_TRUE(scalar_fits(DType::U16, 65535));
  EXPECT_FALSE(scalar_fits(DType::U16, 65536));
  EXPECT_TRUE(scalar_fits(DType::U32, 4294967295.0));
  EXPECT_FALSE(scalar_fits(DType::U32, 4294967296.0));
  EXPECT_FALSE(scalar_fits(DType::U32, -1));
  // uint64: 2^64 - 1 rounds up to 2^64 as a double; the largest double below fits.
  EXPECT_TRUE(scalar_fits(DType::U64, std::nextafter(18446744073709551616.0, 0.0)));
  EXPECT_TRUE(scalar_fits(DType::U64, 9223372036854775808.0));  // 2^63: above int64, fine here
  EXPECT_FALSE(scalar_fits(DType::U64, 18446744073709551616.0));
  EXPECT_FALSE(scalar_fits(DType::U64, -1));
  EXPECT_FALSE(scalar_fits(DType::U64, NAN));
  EXPECT_TRUE(multiplier_fits(DType::U64, -9223372036854775808.0));
  EXPECT_FALSE(multiplier_fits(DType::U64, -18446744073709551616.0));
  EXPECT_TRUE(multiplier_fits(DType::U16, -65535));
  EXPECT_FALSE(multiplier_fits(DType::U16, -65536));
}

TEST(ScalarChecks, ComplexTypesTakeWhatTheirPartTakes) {
  EXPECT_TRUE(scalar_fits(DType::C64, 3.4028234663852886e38));
  EXPECT_FALSE(scalar_fits(DType::C64, 1e300));
  EXPECT_TRUE(scalar_fits(DType::C128, 1e300));
  for (DType d : {DType::C64, DType::C128}) {
    EXPECT_TRUE(scalar_fits(d, NAN)) << dtype_name(d);
    EXPECT_TRUE(scalar_fits(d, -INFINITY)) << dtype_name(d);
  }
}

TEST(ScalarChecks, IntegerOperandsAreWholeNumbersOfTheComputeType) {
  EXPECT_TRUE(integer_operand_fits(DType::I8, 300));  // wraps: an operand, not an element
  EXPECT_TRUE(integer_operand_fits(DType::I8, -9223372036854775808.0));
  EXPECT_FALSE(integer_operand_fits(DType::I8, 9223372036854775808.0));
  EXPECT_FALSE(integer_operand_fits(DType::I32, 2.5));
  EXPECT_FALSE(integer_operand_fits(DType::I32, NAN));
  EXPECT_FALSE(integer_operand_fits(DType::I32, INFINITY));
  EXPECT_TRUE(integer_operand_fits(DType::U64, 9223372036854775808.0));  // 2^63 on uint64
  EXPECT_TRUE(integer_operand_fits(DType::U64, -9223372036854775808.0));
  EXPECT_FALSE(integer_operand_fits(DType::U64, 18446744073709551616.0));
  EXPECT_FALSE(integer_operand_fits(DType::U32, 9223372036854775808.0));
}

TEST(ScalarChecks, BoolTakesEverything) {
  for (double v : {0.0, 1.0, 2.0, -1.0, 0.5, 1e300, double(INFINITY), double(NAN)})
    EXPECT_TRUE(scalar_fits(DType::Bool, v)) << v;
}

TEST(ScalarChecks, FloatsTakeNanInfAndFiniteValuesUpToTheirMax) {
  EXPECT_TRUE(scalar_fits(DType::F16, 65504));
  EXPECT_FALSE(scalar_fits(DType::F16, 65504.5));  // would round to 65504; PyTorch refuses it
  EXPECT_FALSE(scalar_fits(DType::F16, 65520));
  EXPECT_FALSE(scalar_fits(DType::F16, -1e6));
  EXPECT_TRUE(scalar_fits(DType::BF16, 3.3895313892515355e38));  // 0x7F7F
  EXPECT_FALSE(scalar_fits(DType::BF16, 3.4e38));
  EXPECT_TRUE(scalar_fits(DType::F32, 3.4028234663852886e38));
  EXPECT_FALSE(scalar_fits(DType::F32, 3.4028235677973366e38));
  EXPECT_TRUE(scalar_fits(DType::F64, 1.7976931348623157e308));
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    EXPECT_TRUE(scalar_fits(d, NAN)) << dtype_name(d);
    EXPECT_TRUE(scalar_fits(d, INFINITY)) << dtype_name(d);
    EXPECT_TRUE(scalar_fits(d, -INFINITY)) << dtype_name(d);
    EXPECT_TRUE(scalar_fits(d, 1e-300)) << dtype_name(d);  // underflow is no overflow
  }
}

TEST(ScalarChecks, UnsignedMultipliersTakeNegativesDownToMinusMax) {
  EXPECT_TRUE(multiplier_fits(DType::U8, -1));
  EXPECT_TRUE(multiplier_fits(DType::U8, -255));
  EXPECT_FALSE(multiplier_fits(DType::U8, -256));
  EXPECT_FALSE(multiplier_fits(DType::U8, 256));
  EXPECT_FALSE(multiplier_fits(DType::I8, -129));  // signed: the plain range
  EXPECT_FALSE(multiplier_fits(DType::F16, 1e6));
  EXPECT_FALSE(multiplier_fits(DType::U8, NAN));
}

TEST(ScalarChecks, RequireNamesTheValueTheDtypeAndItsRange) {
  try {
    require_scalar_fits(DType::I8, 300, "value", "sm_full refuses it");
    FAIL() << "300 fits int8?";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_DTYPE);
    const std::string m = e.what();
    for (const char* part : {"value = 300", "int8", "[-128, 127]", "sm_full refuses it", "sm_to"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  }
  EXPECT_NO_THROW(require_scalar_fits(DType::U8, -3, "alpha", "x", /*multiplier=*/true));
}

// PyTorch's promote_types table for the dtypes both libraries have
// (torch.promote_types(torch.int8, torch.uint8) == torch.int16, ...).
TEST(ScalarChecks, PromoteTypesFollowsPyTorch) {
  struct Case {
    DType a, b, want;
  };
  const Case cases[] = {
      {DType::I8, DType::U8, DType::I16},    {DType::U8, DType::I16, DType::I16},
      {DType::U8, DType::I64, DType::I64},   {DType::I32, DType::I8, DType::I32},
      {DType::Bool, DType::U8, DType::U8},   {DType::F16, DType::Bool, DType::F16},
      {DType::I64, DType::F16, DType::F16},  {DType::F16, DType::BF16, DType::F32},
      {DType::BF16, DType::F32, DType::F32}, {DType::F32, DType::F64, DType::F64},
      {DType::Bool, DType::Bool, DType::Bool}, {DType::U8, DType::U8, DType::U8},
      // torch.promote_types(torch.complex64, torch.float64) == torch.complex128, ...
      {DType::C64, DType::F64, DType::C128},  {DType::C64, DType::F32, DType::C64},
      {DType::C64, DType::I64, DType::C64},   {DType::C64, DType::C128, DType::C128},
      {DType::F16, DType::C64, DType::C64},   {DType::Bool, DType::C128, DType::C128},
      // NumPy's rules for the unsigned types PyTorch 1.13 lacks: uint16 with
      // int8 is int32, uint32 with int32 is int64, uint16 with uint64 is uint64.
      {DType::U16, DType::I8, DType::I32},    {DType::U32, DType::I32, DType::I64},
      {DType::U16, DType::U64, DType::U64},   {DType::U32, DType::F16, DType::F16},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.want) << dtype_name(c.a) << ", " << dtype_name(c.b);
    EXPECT_EQ(promote_types(c.b, c.a), c.want) << dtype_name(c.b) << ", " << dtype_name(c.a);
  }
}

}  // namespace
}  // namespace sm
