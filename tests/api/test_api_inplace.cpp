// In-place ops: every op on every kind of dtype, through strided views
// (transposed, negative strides, 0-d, empty), dtype rules, overlap
// refusals, version counters.
#include <cstring>
#include <limits>

#include "api_test_util.hpp"

using namespace smt;

namespace {

template <class T>
std::vector<T> after_scalar(const std::vector<T>& in, sm_op op, double a, double b = 0,
                            sm_dtype dtype = DT<T>::value) {
  Tensor t = make<T>(in, {static_cast<int64_t>(in.size())}, dtype);
  const int64_t v0 = version_of(t);
  const sm_status st = sm_inplace_scalar(t, op, a, b);
  EXPECT_EQ(st, SM_OK) << "op " << op << ": " << sm_last_error();
  EXPECT_EQ(version_of(t), v0 + 1) << "op " << op;
  return read<T>(t);
}

// Expects the op to be refused with `code`, the tensor and its version untouched.
template <class T>
void expect_refused(const std::vector<T>& in, sm_op op, double a, double b, sm_status code,
                    sm_dtype dtype = DT<T>::value) {
  Tensor t = make<T>(in, {static_cast<int64_t>(in.size())}, dtype);
  const TensorSnap before = snap(t);
  const sm_status st = sm_inplace_scalar(t, op, a, b);
  EXPECT_EQ(st, code) << "op " << op << " a " << a << " on " << sm_dtype_name(dtype) << " -> "
                      << status_name(st) << ": " << sm_last_error();
  if (st != SM_OK) expect_error_mentions({"sm_inplace_scalar"});
  EXPECT_EQ(snap(t), before);
}

}  // namespace

TEST(InplaceScalar, FloatOps) {
  const std::vector<float> x = {-2, -0.5f, 0, 1.5f, 4};
  EXPECT_EQ(after_scalar(x, SM_OP_FILL, 3), std::vector<float>(5, 3));
  EXPECT_EQ(after_scalar(x, SM_OP_ZERO, 0), std::vector<float>(5, 0));
  EXPECT_EQ(after_scalar(x, SM_OP_ADD, 1.5), (std::vector<float>{-0.5f, 1, 1.5f, 3, 5.5f}));
  EXPECT_EQ(after_scalar(x, SM_OP_SUB, 1), (std::vector<float>{-3, -1.5f, -1, 0.5f, 3}));
  EXPECT_EQ(after_scalar(x, SM_OP_MUL, -2), (std::vector<float>{4, 1, 0, -3, -8}));
  EXPECT_EQ(after_scalar(x, SM_OP_DIV, 2), (std::vector<float>{-1, -0.25f, 0, 0.75f, 2}));
  EXPECT_EQ(after_scalar(x, SM_OP_CLAMP, -1, 1), (std::vector<float>{-1, -0.5f, 0, 1, 1}));
  EXPECT_EQ(after_scalar(x, SM_OP_CLAMP, NAN, 1), (std::vector<float>{-2, -0.5f, 0, 1, 1}))
      << "NaN min = no lower bound";
  EXPECT_EQ(after_scalar(x, SM_OP_CLAMP, -1, NAN), (std::vector<float>{-1, -0.5f, 0, 1.5f, 4}))
      << "NaN max = no upper bound";
  EXPECT_EQ(after_scalar(x, SM_OP_RELU, 0), (std::vector<float>{0, 0, 0, 1.5f, 4}));
  EXPECT_EQ(after_scalar(x, SM_OP_NEG, 0), (std::vector<float>{2, 0.5f, 0, -1.5f, -4}));
  EXPECT_EQ(after_scalar(x, SM_OP_ABS, 0), (std::vector<float>{2, 0.5f, 0, 1.5f, 4}));
  EXPECT_EQ(after_scalar(std::vector<float>{0, 1, 4, 2.25f}, SM_OP_SQRT, 0),
            (std::vector<float>{0, 1, 2, 1.5f}));
  const std::vector<float> s = after_scalar(std::vector<float>{-1}, SM_OP_SQRT, 0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(std::isnan(s[0]));
  const std::vector<float> e = after_scalar(std::vector<float>{0, 1, -1}, SM_OP_EXP, 0);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], 1.0f);
  EXPECT_FLOAT_EQ(e[1], 2.7182817f);
  EXPECT_FLOAT_EQ(e[2], 0.36787945f);
  // NaN elements stay NaN through clamp.
  const std::vector<float> cn = after_scalar(std::vector<float>{NAN}, SM_OP_CLAMP, 0, 1);
  ASSERT_EQ(cn.size(), 1u);
  EXPECT_TRUE(std::isnan(cn[0]));
}

TEST(InplaceScalar, DoubleOps) {
  const std::vector<double> x = {-2, 0.1, 9};
  EXPECT_EQ(after_scalar(x, SM_OP_ADD, 0.2), (std::vector<double>{-1.8, 0.1 + 0.2, 9.2}));
  EXPECT_EQ(after_scalar(x, SM_OP_DIV, 3), (std::vector<double>{-2 / 3.0, 0.1 / 3, 3}));
  EXPECT_EQ(after_scalar(std::vector<double>{9, 2}, SM_OP_SQRT, 0),
            (std::vector<double>{3, std::sqrt(2.0)}));
  // EXP is the library's own (the same bits on every backend), faithful: within
  // one ulp of the exact value (tests/unit/test_element_ops.cpp measures it).
  const std::vector<double> e = after_scalar(std::vector<double>{1, -20}, SM_OP_EXP, 0);
  ASSERT_EQ(e.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const double want = std::exp(i == 0 ? 1.0 : -20.0);
    EXPECT_LE(e[i], std::nextafter(want, INFINITY)) << i;
    EXPECT_GE(e[i], std::nextafter(want, -INFINITY)) << i;
  }
}

TEST(InplaceScalar, IntegerOpsAndWrapAround) {
  const std::vector<int32_t> x = {-7, -1, 0, 5, 100};
  EXPECT_EQ(after_scalar(x, SM_OP_ADD, 3), (std::vector<int32_t>{-4, 2, 3, 8, 103}));
  EXPECT_EQ(after_scalar(x, SM_OP_SUB, 2), (std::vector<int32_t>{-9, -3, -2, 3, 98}));
  EXPECT_EQ(after_scalar(x, SM_OP_MUL, -3), (std::vector<int32_t>{21, 3, 0, -15, -300}));
  EXPECT_EQ(after_scalar(x, SM_OP_CLAMP, -2, 50), (std::vector<int32_t>{-2, -1, 0, 5, 50}));
  EXPECT_EQ(after_scalar(x, SM_OP_RELU, 0), (std::vector<int32_t>{0, 0, 0, 5, 100}));
  EXPECT_EQ(after_scalar(x, SM_OP_NEG, 0), (std::vector<int32_t>{7, 1, 0, -5, -100}));
  EXPECT_EQ(after_scalar(x, SM_OP_ABS, 0), (std::vector<int32_t>{7, 1, 0, 5, 100}));
  EXPECT_EQ(after_scalar(x, SM_OP_FILL, -9), std::vector<int32_t>(5, -9));
  EXPECT_EQ(after_scalar(x, SM_OP_ZERO, 0), std::vector<int32_t>(5, 0));
  // Integer arithmetic wraps.
  EXPECT_EQ(after_scalar(std::vector<int8_t>{127, -128, 100}, SM_OP_ADD, 1),
            (std::vector<int8_t>{-128, -127, 101}));
  EXPECT_EQ(after_scalar(std::vector<int8_t>{100}, SM_OP_MUL, 2), std::vector<int8_t>{-56});
  EXPECT_EQ(after_scalar(std::vector<int8_t>{-128}, SM_OP_NEG, 0), std::vector<int8_t>{-128});
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{250, 0}, SM_OP_ADD, 10),
            (std::vector<uint8_t>{4, 10}));
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0}, SM_OP_SUB, 1), std::vector<uint8_t>{255});
  EXPECT_EQ(after_scalar(std::vector<int16_t>{32767}, SM_OP_ADD, 1), std::vector<int16_t>{-32768});
  EXPECT_EQ(after_scalar(std::vector<int64_t>{1}, SM_OP_ADD, 1099511627776.0),
            std::vector<int64_t>{1099511627777});
}

TEST(InplaceScalar, SixteenBitFloatsComputeInFloat32) {
  // 1 + 2^-11 rounds (ties to even) back to 1.0; 1 + 3*2^-11 to 1 + 2^-9.
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0x3C00}, SM_OP_ADD, std::ldexp(1.0, -11), 0,
                         SM_FLOAT16),
            std::vector<uint16_t>{0x3C00});
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0x3C00}, SM_OP_ADD, 3 * std::ldexp(1.0, -11), 0,
                         SM_FLOAT16),
            std::vector<uint16_t>{0x3C02});
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0x7BFF}, SM_OP_MUL, 2, 0, SM_FLOAT16),
            std::vector<uint16_t>{0x7C00})
      << "65504 * 2 overflows to inf";
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0x4400}, SM_OP_SQRT, 0, 0, SM_FLOAT16),
            std::vector<uint16_t>{0x4000});  // sqrt(4) = 2
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0x4080}, SM_OP_SQRT, 0, 0, SM_BFLOAT16),
            std::vector<uint16_t>{0x4000});  // bfloat16 sqrt(4) = 2
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0x3F80}, SM_OP_ADD, std::ldexp(1.0, -8), 0,
                         SM_BFLOAT16),
            std::vector<uint16_t>{0x3F80});
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0xC000, 0x3C00}, SM_OP_RELU, 0, 0, SM_FLOAT16),
            (std::vector<uint16_t>{0x0000, 0x3C00}));
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0xC000}, SM_OP_ABS, 0, 0, SM_BFLOAT16),
            std::vector<uint16_t>{0x4000});
}

// Bool tensors take FILL, ZERO and ABS (the identity, as NumPy's abs and
// PyTorch 2's abs_ of bool); arithmetic and the ordered ops are refused.
TEST(InplaceScalar, BoolOnlyFillsZeroesAndAbs) {
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0, 1, 0}, SM_OP_FILL, 1, 0, SM_BOOL),
            (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0, 1, 1}, SM_OP_ZERO, 0, 0, SM_BOOL),
            (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0, 1, 1, 0}, SM_OP_ABS, 0, 0, SM_BOOL),
            (std::vector<uint8_t>{0, 1, 1, 0}));
  {  // a byte other than 0 and 1 (true) stays as it is; the version moves
    Tensor b = make_bool({2, 0, 255}, {3});
    const int64_t v = version_of(b);
    SM_ASSERT_OK(sm_inplace_scalar(b, SM_OP_ABS, 0, 0));
    EXPECT_EQ(read_bool(b), (std::vector<uint8_t>{2, 0, 255}));
    EXPECT_EQ(version_of(b), v + 1);
  }
  for (sm_op op : {SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_DIV, SM_OP_NEG, SM_OP_SQRT, SM_OP_EXP,
                   SM_OP_CLAMP, SM_OP_RELU})
    expect_refused<uint8_t>({0, 1}, op, 1, 0, SM_ERR_DTYPE, SM_BOOL);
  // The refusal names the ops bool takes, read from the op table.
  expect_error_mentions({"only FILL, ZERO, ABS, SIGN"});
}

TEST(InplaceScalar, DtypeRefusals) {
  // Floating-only ops on integers.
  for (sm_op op : {SM_OP_DIV, SM_OP_SQRT, SM_OP_EXP})
    expect_refused<int32_t>({4, 9}, op, 2, 0, SM_ERR_DTYPE);
  expect_refused<int64_t>({4}, SM_OP_DIV, 1, 0, SM_ERR_DTYPE);
  expect_refused<uint8_t>({4}, SM_OP_SQRT, 0, 0, SM_ERR_DTYPE);
  // Fractional scalars on integers.
  expect_refused<int32_t>({1, 2}, SM_OP_ADD, 2.5, 0, SM_ERR_DTYPE);
  expect_refused<int32_t>({1, 2}, SM_OP_SUB, 0.1, 0, SM_ERR_DTYPE);
  expect_refused<int8_t>({1, 2}, SM_OP_MUL, 1.5, 0, SM_ERR_DTYPE);
  expect_refused<int32_t>({1, 2}, SM_OP_CLAMP, 0.5, 3, SM_ERR_DTYPE);
  expect_refused<int16_t>({1, 2}, SM_OP_ADD, NAN, 0, SM_ERR_DTYPE);
  // The message names the dtype.
  Tensor t = make<int32_t>({1}, {1});
  EXPECT_EQ(sm_inplace_scalar(t, SM_OP_ADD, 2.5, 0), SM_ERR_DTYPE);
  expect_error_mentions({"sm_inplace_scalar", "int32", "2.5"});
  // Unknown op.
  expect_refused<float>({1}, SM_OP_SIGN + 1, 0, 0, SM_ERR_INVALID_ARGUMENT);
  expect_refused<float>({1}, -1, 0, 0, SM_ERR_INVALID_ARGUMENT);
}

TEST(InplaceScalar, ThroughStridedViews) {
  Tensor base = iota({3, 4});
  // A column (stride 4).
  Tensor col;
  SM_ASSERT_OK(sm_select(base, 1, 1, col.out()));
  SM_ASSERT_OK(sm_inplace_scalar(col, SM_OP_MUL, 10, 0));
  EXPECT_EQ(read<float>(base), (std::vector<float>{0, 10, 2, 3, 4, 50, 6, 7, 8, 90, 10, 11}));
  // A transposed, reversed, step-2 view: base[::-1, ::2].T.
  Tensor r, s, t;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0}.data(), 1, r.out()));
  SM_ASSERT_OK(sm_slice(r, 1, 0, 4, 2, s.out()));
  SM_ASSERT_OK(sm_transpose(s, 0, 1, t.out()));
  expect_layout(t, {2, 3}, {2, -4}, 8);
  SM_ASSERT_OK(sm_inplace_scalar(t, SM_OP_NEG, 0, 0));
  EXPECT_EQ(read<float>(base), (std::vector<float>{-0.0f, 10, -2, 3, -4, 50, -6, 7, -8, 90, -10, 11}));
  // A 0-d view.
  Tensor e;
  SM_ASSERT_OK(sm_select(col, 0, 2, e.out()));
  SM_ASSERT_OK(sm_inplace_scalar(e, SM_OP_ADD, 1, 0));
  EXPECT_EQ(read<float>(base)[9], 91.0f);
  // Non-dense but non-overlapping (padded rows): allowed.
  Tensor pad;
  SM_ASSERT_OK(sm_as_strided(base, std::vector<int64_t>{2, 2}.data(),
                             std::vector<int64_t>{5, 1}.data(), 2, 1, pad.out()));
  SM_ASSERT_OK(sm_inplace_scalar(pad, SM_OP_FILL, 0, 0));
  EXPECT_EQ(read<float>(base), (std::vector<float>{-0.0f, 0, 0, 3, -4, 50, 0, 0, -8, 91, -10, 11}));
}

TEST(InplaceScalar, ZeroDimAndEmpty) {
  Tensor s = make<float>({4}, {});
  for (sm_op op : {SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_DIV, SM_OP_CLAMP, SM_OP_RELU, SM_OP_NEG,
                   SM_OP_ABS, SM_OP_SQRT, SM_OP_EXP, SM_OP_FILL, SM_OP_ZERO})
    SM_EXPECT_OK(sm_inplace_scalar(s, op, 1, 2));
  EXPECT_EQ(read<float>(s), std::vector<float>{0});
  const int64_t shape[2] = {2, 0};
  Tensor e;
  SM_ASSERT_OK(sm_empty(shape, 2, SM_INT32, cpu(), e.out()));
  for (sm_op op : {SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_CLAMP, SM_OP_RELU, SM_OP_NEG, SM_OP_ABS,
                   SM_OP_FILL, SM_OP_ZERO})
    SM_EXPECT_OK(sm_inplace_scalar(e, op, 1, 2));
  // Dtype rules hold even with nothing to write.
  EXPECT_EQ(sm_inplace_scalar(e, SM_OP_SQRT, 0, 0), SM_ERR_DTYPE);
}

TEST(InplaceScalar, OverlappingDestinationIsRefused) {
  Tensor one = iota({1}), e;
  SM_ASSERT_OK(sm_expand(one, std::vector<int64_t>{5}.data(), 1, e.out()));
  const TensorSnap before = snap(one);
  for (sm_op op : {SM_OP_FILL, SM_OP_ZERO, SM_OP_ADD, SM_OP_NEG}) {
    EXPECT_EQ(sm_inplace_scalar(e, op, 1, 0), SM_ERR_OVERLAP) << "op " << op;
    expect_error_mentions({"sm_inplace_scalar"});
  }
  EXPECT_EQ(snap(one), before) << "values and version unchanged";
  // as_strided with a zero stride over a size > 1 dim likewise.
  Tensor base = iota({4}), z;
  SM_ASSERT_OK(sm_as_strided(base, std::vector<int64_t>{2, 2}.data(),
                             std::vector<int64_t>{0, 1}.data(), 2, 0, z.out()));
  EXPECT_EQ(sm_inplace_scalar(z, SM_OP_ADD, 1, 0), SM_ERR_OVERLAP);
  // A stride-0 dim of size 1 is no overlap.
  Tensor ok;
  SM_ASSERT_OK(sm_as_strided(base, std::vector<int64_t>{1, 2}.data(),
                             std::vector<int64_t>{0, 1}.data(), 2, 0, ok.out()));
  SM_EXPECT_OK(sm_inplace_scalar(ok, SM_OP_ADD, 1, 0));
}

TEST(InplaceTensor, OpsWithBroadcastAndAlpha) {
  const int64_t shape[2] = {2, 3};
  Tensor t;
  SM_ASSERT_OK(sm_full(shape, 2, 10, SM_FLOAT32, cpu(), t.out()));
  Tensor row = make<float>({1, 2, 4}, {3});
  const int64_t v0 = version_of(t);
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_ADD, row, 2.0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{12, 14, 18, 12, 14, 18}));
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_SUB, row, 0.5));
  EXPECT_EQ(read<float>(t), (std::vector<float>{11.5f, 13, 16, 11.5f, 13, 16}));
  Tensor col = make<float>({2, -1}, {2, 1});
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_MUL, col, 1.0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{23, 26, 32, -11.5f, -13, -16}));
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_DIV, row, 1.0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{23, 13, 8, -11.5f, -6.5f, -4}));
  Tensor s = make<double>({0.25}, {});
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_FILL, s, 1.0));
  EXPECT_EQ(read<float>(t), std::vector<float>(6, 0.25f));
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_FILL, row, 1.0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{1, 2, 4, 1, 2, 4}));
  EXPECT_EQ(version_of(t), v0 + 6);
}

TEST(InplaceTensor, MixedDtypes) {
  // Integer other into a float tensor: fine.
  Tensor f = make<float>({0.5f, 1.5f}, {2});
  Tensor i = make<int32_t>({1, 2}, {2});
  SM_ASSERT_OK(sm_inplace_tensor(f, SM_OP_ADD, i, 1.0));
  EXPECT_EQ(read<float>(f), (std::vector<float>{1.5f, 3.5f}));
  // Integer + integer with integral alpha: fine, wraps.
  Tensor a = make<int8_t>({120, -3}, {2});
  Tensor b = make<int64_t>({4, 5}, {2});
  SM_ASSERT_OK(sm_inplace_tensor(a, SM_OP_ADD, b, 2.0));
  EXPECT_EQ(read<int8_t>(a), (std::vector<int8_t>{-128, 7}));
  // f16 destination, f64 source: computed in float32, rounded once more.
  Tensor h = make<uint16_t>({0x3C00}, {1}, SM_FLOAT16);
  Tensor d = make<double>({std::ldexp(1.0, -10)}, {1});
  SM_ASSERT_OK(sm_inplace_tensor(h, SM_OP_ADD, d, 1.0));
  EXPECT_EQ(read<uint16_t>(h), std::vector<uint16_t>{0x3C01});
}

TEST(InplaceTensor, DtypeRefusals) {
  Tensor i = make<int32_t>({1, 2}, {2});
  Tensor f = make<float>({1, 2}, {2});
  Tensor i2 = make<int32_t>({1, 2}, {2});
  Tensor b = make_bool({1, 0}, {2});
  const TensorSnap before = snap(i);
  EXPECT_EQ(sm_inplace_tensor(i, SM_OP_ADD, f, 1.0), SM_ERR_DTYPE) << "float other into int";
  expect_error_mentions({"sm_inplace_tensor", "float32", "int32"});
  EXPECT_EQ(sm_inplace_tensor(i, SM_OP_MUL, f, 1.0), SM_ERR_DTYPE);
  EXPECT_EQ(sm_inplace_tensor(i, SM_OP_DIV, i2, 1.0), SM_ERR_DTYPE) << "DIV is floating only";
  EXPECT_EQ(sm_inplace_tensor(i, SM_OP_ADD, i2, 0.5), SM_ERR_DTYPE) << "fractional alpha";
  EXPECT_EQ(sm_inplace_tensor(b, SM_OP_ADD, b, 1.0), SM_ERR_DTYPE) << "bool arithmetic";
  EXPECT_EQ(snap(i), before);
  // Ops without a tensor form.
  for (sm_op op : std::vector<sm_op>{SM_OP_ZERO, SM_OP_CLAMP, SM_OP_RELU, SM_OP_NEG, SM_OP_ABS, SM_OP_SQRT,
                   SM_OP_EXP, SM_OP_SIGN, SM_OP_SIGN + 1, -1}) {
    EXPECT_EQ(sm_inplace_tensor(f, op, f, 1.0), SM_ERR_INVALID_ARGUMENT) << "op " << op;
  }
  // Bool fill from bool is fine.
  Tensor b2 = make_bool({0, 1}, {2});
  SM_EXPECT_OK(sm_inplace_tensor(b, SM_OP_FILL, b2, 1.0));
  EXPECT_EQ(read_bool(b), (std::vector<uint8_t>{0, 1}));
}

TEST(InplaceTensor, ThroughTransposedAndNegativeStrideViews) {
  Tensor base = iota({3, 4});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));  // (4,3)
  Tensor add = make<float>({100, 200, 300}, {3});
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_ADD, add, 1.0));
  EXPECT_EQ(read<float>(base),
            (std::vector<float>{100, 101, 102, 103, 204, 205, 206, 207, 308, 309, 310, 311}));
  Tensor f;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{1}.data(), 1, f.out()));
  Tensor ramp = make<float>({0, 1, 2, 3}, {4});
  SM_ASSERT_OK(sm_inplace_tensor(f, SM_OP_SUB, ramp, 1.0));  // base[i][k] -= 3 - k
  EXPECT_EQ(read<float>(base),
            (std::vector<float>{97, 99, 101, 103, 201, 203, 205, 207, 305, 307, 309, 311}));
  // Source with negative strides and a transposed layout.
  Tensor src = iota({4, 3}), srct, srcf;
  SM_ASSERT_OK(sm_transpose(src, 0, 1, srct.out()));  // (3,4) strides (1,3)
  SM_ASSERT_OK(sm_flip(srct, std::vector<int32_t>{0}.data(), 1, srcf.out()));
  SM_ASSERT_OK(sm_inplace_tensor(base, SM_OP_FILL, srcf, 1.0));
  // srcf[i][j] = src[j][2 - i] = 3j + 2 - i
  EXPECT_EQ(read<float>(base), (std::vector<float>{2, 5, 8, 11, 1, 4, 7, 10, 0, 3, 6, 9}));
}

TEST(InplaceTensor, SelfAndIdenticalViewsAreAllowed) {
  Tensor t = make<float>({1, 2, 3}, {3});
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_ADD, t, 1.0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{2, 4, 6}));
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_MUL, t, 1.0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{4, 16, 36}));
  Tensor same;
  SM_ASSERT_OK(sm_slice(t, 0, SM_SLICE_NONE, SM_SLICE_NONE, 1, same.out()));
  SM_ASSERT_OK(sm_inplace_tensor(t, SM_OP_SUB, same, 0.5));
  EXPECT_EQ(read<float>(t), (std::vector<float>{2, 8, 18}));
}

TEST(InplaceTensor, OverlapRefusals) {
  Tensor base = iota({6});
  Tensor a, b;
  SM_ASSERT_OK(sm_slice(base, 0, 0, 4, 1, a.out()));
  SM_ASSERT_OK(sm_slice(base, 0, 1, 5, 1, b.out()));
  const TensorSnap before = snap(base);
  EXPECT_EQ(sm_inplace_tensor(a, SM_OP_ADD, b, 1.0), SM_ERR_OVERLAP);
  expect_error_mentions({"sm_inplace_tensor"});
  EXPECT_EQ(sm_inplace_tensor(a, SM_OP_FILL, b, 1.0), SM_ERR_OVERLAP);
  EXPECT_EQ(snap(base), before);
  Tensor one, e;
  SM_ASSERT_OK(sm_slice(base, 0, 5, 6, 1, one.out()));
  SM_ASSERT_OK(sm_expand(one, std::vector<int64_t>{4}.data(), 1, e.out()));
  Tensor src = iota({4});
  EXPECT_EQ(sm_inplace_tensor(e, SM_OP_ADD, src, 1.0), SM_ERR_OVERLAP);
  EXPECT_EQ(snap(base), before);
  // An expanded *source* is fine (it is only read).
  Tensor dst = iota({4});
  SM_ASSERT_OK(sm_inplace_tensor(dst, SM_OP_ADD, e, 1.0));
  EXPECT_EQ(read<float>(dst), (std::vector<float>{5, 6, 7, 8}));
}

TEST(InplaceTensor, ShapeRefusals) {
  Tensor t = iota({2, 3});
  const TensorSnap before = snap(t);
  Tensor bad = iota({2});
  EXPECT_EQ(sm_inplace_tensor(t, SM_OP_ADD, bad, 1.0), SM_ERR_SHAPE);
  expect_error_mentions({"sm_inplace_tensor", "[2]", "[2, 3]"});
  Tensor big = iota({4, 2, 3});
  EXPECT_EQ(sm_inplace_tensor(t, SM_OP_ADD, big, 1.0), SM_ERR_SHAPE)
      << "other cannot be broadcast to a larger shape than t";
  EXPECT_EQ(snap(t), before);
}

TEST(InplaceTensor, ZeroDimAndEmpty) {
  Tensor s = make<float>({2}, {}), o = make<float>({3}, {});
  SM_ASSERT_OK(sm_inplace_tensor(s, SM_OP_MUL, o, 1.0));
  EXPECT_EQ(read<float>(s), std::vector<float>{6});
  const int64_t shape[2] = {0, 3};
  Tensor e, eo;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT32, cpu(), e.out()));
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT32, cpu(), eo.out()));
  SM_EXPECT_OK(sm_inplace_tensor(e, SM_OP_ADD, eo, 1.0));
  SM_EXPECT_OK(sm_inplace_tensor(e, SM_OP_ADD, o, 1.0));  // 0-d broadcasts to (0, 3)
}

// Scalars that become elements must fit the dtype, as PyTorch refuses them
// ("value cannot be converted to type int8_t without overflow"):
// torch.zeros(2, dtype=torch.int8).fill_(300), .fill_(-129), .fill_(inf);
// int32 .fill_(nan); int64 .fill_(1e30); uint8 .clamp_(0, 300); int8
// .clamp_(-1000, 1000); float16 .fill_(1e6); float32 .clamp_(-1e300, 1e300).
// A NaN clamp bound is no bound (the C API's way to leave one out).
TEST(InplaceScalar, ValuesThatBecomeElementsMustFitTheDtype) {
  expect_refused<int8_t>({1, 2}, SM_OP_FILL, 300, 0, SM_ERR_DTYPE);
  expect_error_mentions({"sm_inplace_scalar", "300", "int8", "without overflow"});
  expect_refused<int8_t>({1, 2}, SM_OP_FILL, -129, 0, SM_ERR_DTYPE);
  expect_refused<int8_t>({1, 2}, SM_OP_FILL, INFINITY, 0, SM_ERR_DTYPE);
  expect_refused<int8_t>({1, 2}, SM_OP_FILL, 127.5, 0, SM_ERR_DTYPE);
  expect_refused<int32_t>({1, 2}, SM_OP_FILL, NAN, 0, SM_ERR_DTYPE);
  expect_refused<int64_t>({1, 2}, SM_OP_FILL, 1e30, 0, SM_ERR_DTYPE);
  expect_refused<int64_t>({1, 2}, SM_OP_FILL, 9223372036854775808.0, 0, SM_ERR_DTYPE);
  expect_refused<uint8_t>({1, 2}, SM_OP_FILL, -1, 0, SM_ERR_DTYPE);
  expect_refused<uint8_t>({1, 2}, SM_OP_CLAMP, 300, NAN, SM_ERR_DTYPE);
  expect_refused<uint8_t>({1, 2}, SM_OP_CLAMP, NAN, -5, SM_ERR_DTYPE);
  expect_refused<uint8_t>({1, 2}, SM_OP_CLAMP, 0, 300, SM_ERR_DTYPE);
  expect_refused<int8_t>({1, 2}, SM_OP_CLAMP, -1000, 1000, SM_ERR_DTYPE);
  expect_refused<uint16_t>({0, 0}, SM_OP_FILL, 1e6, 0, SM_ERR_DTYPE, SM_FLOAT16);
  expect_refused<uint16_t>({0, 0}, SM_OP_FILL, 65520, 0, SM_ERR_DTYPE, SM_FLOAT16);
  expect_refused<float>({0, 0}, SM_OP_CLAMP, -1e300, 1e300, SM_ERR_DTYPE);
  expect_refused<uint16_t>({0, 0}, SM_OP_CLAMP, -1e300, NAN, SM_ERR_DTYPE, SM_BFLOAT16);
  // The edges and the fill rules that do fit.
  EXPECT_EQ(after_scalar(std::vector<int8_t>{0}, SM_OP_FILL, -128), std::vector<int8_t>{-128});
  EXPECT_EQ(after_scalar(std::vector<int8_t>{0}, SM_OP_FILL, 1.5), std::vector<int8_t>{1})
      << "a fraction in range truncates (torch int8 .fill_(1.5) gives 1)";
  EXPECT_EQ(after_scalar(std::vector<int64_t>{0}, SM_OP_FILL, -9223372036854775808.0),
            std::vector<int64_t>{INT64_MIN});
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0, 1}, SM_OP_FILL, NAN, 0, SM_BOOL),
            (std::vector<uint8_t>{1, 1}))
      << "bool takes everything; NaN is nonzero (torch bool .fill_(nan) gives True)";
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0}, SM_OP_FILL, INFINITY, 0, SM_FLOAT16),
            std::vector<uint16_t>{0x7C00});
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0, 9, 200}, SM_OP_CLAMP, NAN, 5),
            (std::vector<uint8_t>{0, 5, 5}));
  // Arithmetic operands are not elements: integer ADD 300 on int8 wraps in
  // the int64 compute type, as torch int8 .add_(300) gives 44.
  EXPECT_EQ(after_scalar(std::vector<int8_t>{0}, SM_OP_ADD, 300), std::vector<int8_t>{44});
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0}, SM_OP_ADD, -1), std::vector<uint8_t>{255});
}

// alpha is converted to the promoted type of the two operands, as PyTorch
// does: int8 + int8 refuses alpha 300 (int8_t overflow), int8 + uint8
// promotes to int16 (alpha 1000 fine, 40000 refused), int8 + int64 takes 300;
// float16 + float16 refuses 1e6, float16 + float32 takes it. Unsigned types
// take negative multipliers down to -max, which wrap (torch uint8
// .add_(uint8, alpha=-255) works, -256 does not).
TEST(InplaceTensor, AlphaMustFitThePromotedType) {
  const auto refused = [](Tensor& t, Tensor& o, double alpha) {
    const TensorSnap before = snap(t);
    EXPECT_EQ(sm_inplace_tensor(t, SM_OP_ADD, o, alpha), SM_ERR_DTYPE)
        << "alpha " << alpha << " for " << sm_dtype_name(dtype_of(t)) << " + "
        << sm_dtype_name(dtype_of(o));
    EXPECT_EQ(snap(t), before);
  };
  Tensor i8 = make<int8_t>({1, 2}, {2}), o8 = make<int8_t>({1, 1}, {2});
  Tensor u8 = make<uint8_t>({1, 1}, {2}, SM_UINT8), i64 = make<int64_t>({1, 1}, {2});
  refused(i8, o8, 300);
  expect_error_mentions({"sm_inplace_tensor", "alpha", "int8"});
  refused(i8, u8, 40000);
  expect_error_mentions({"int16"});
  SM_EXPECT_OK(sm_inplace_tensor(i8, SM_OP_ADD, u8, 1000));  // 1 + 1000, 2 + 1000 wrap in int8
  EXPECT_EQ(read<int8_t>(i8), (std::vector<int8_t>{static_cast<int8_t>(1001 - 1024),
                                                   static_cast<int8_t>(1002 - 1024)}));
  SM_EXPECT_OK(sm_inplace_tensor(i8, SM_OP_ADD, i64, 300));
  Tensor uu = make<uint8_t>({5, 6}, {2}, SM_UINT8);
  SM_EXPECT_OK(sm_inplace_tensor(uu, SM_OP_ADD, u8, -1));
  EXPECT_EQ(read<uint8_t>(uu), (std::vector<uint8_t>{4, 5}));
  SM_EXPECT_OK(sm_inplace_tensor(uu, SM_OP_SUB, u8, -255));
  EXPECT_EQ(read<uint8_t>(uu), (std::vector<uint8_t>{3, 4}));  // x + 255*1 wraps to x - 1
  refused(uu, u8, -256);
  Tensor h = make<uint16_t>({0, 0}, {2}, SM_FLOAT16), h2 = make<uint16_t>({0x3C00, 0x3C00}, {2}, SM_FLOAT16);
  Tensor f = make<float>({1, 1}, {2});
  refused(h, h2, 1e6);
  SM_EXPECT_OK(sm_inplace_tensor(h, SM_OP_ADD, f, 1e6));  // promoted to float32
  Tensor f2 = make<float>({1, 1}, {2});
  refused(f2, f, 1e300);
}

// PyTorch refuses SUB with a bool operand ("Subtraction, the `-` operator,
// with a bool tensor is not supported"), for any destination dtype; ADD and
// MUL with a bool operand are fine (bool promotes to the other type).
TEST(InplaceTensor, SubOfABoolOperandIsRefused) {
  Tensor b = make_bool({1, 0}, {2});
  for (sm_dtype d : {SM_INT32, SM_UINT8, SM_FLOAT32, SM_FLOAT64}) {
    Tensor t;
    const int64_t shape[1] = {2};
    SM_ASSERT_OK(sm_zeros(shape, 1, d, cpu(), t.out()));
    const TensorSnap before = snap(t);
    EXPECT_EQ(sm_inplace_tensor(t, SM_OP_SUB, b, 1.0), SM_ERR_DTYPE) << sm_dtype_name(d);
    expect_error_mentions({"sm_inplace_tensor", "SUB", "bool"});
    EXPECT_EQ(snap(t), before);
  }
  Tensor i = make<int32_t>({5, 5}, {2});
  SM_EXPECT_OK(sm_inplace_tensor(i, SM_OP_ADD, b, 2.0));
  EXPECT_EQ(read<int32_t>(i), (std::vector<int32_t>{7, 5}));
  SM_EXPECT_OK(sm_inplace_tensor(i, SM_OP_MUL, b, 1.0));
  EXPECT_EQ(read<int32_t>(i), (std::vector<int32_t>{7, 0}));
}

// ---- the exchanged dtypes (issue 13) ---------------------------------------------------------

namespace {

using C128 = std::pair<double, double>;

Tensor make_c128(const std::vector<C128>& v) {
  Tensor t;
  const int64_t shape[1] = {static_cast<int64_t>(v.size())};
  std::vector<double> flat;
  for (const C128& z : v) flat.push_back(z.first), flat.push_back(z.second);
  EXPECT_EQ(sm_from_host(flat.data(), shape, 1, SM_COMPLEX128, cpu(), t.out()), SM_OK);
  return t;
}

// The parts of a complex tensor (re, im, re, ...), as doubles.
std::vector<double> parts(sm_tensor t) {
  const std::vector<uint8_t> b = read_bytes(t);
  std::vector<double> out;
  if (dtype_of(t) == SM_COMPLEX64) {
    std::vector<float> f(b.size() / 4);
    memcpy(f.data(), b.data(), b.size());
    out.assign(f.begin(), f.end());
  } else {
    out.resize(b.size() / 8);
    memcpy(out.data(), b.data(), b.size());
  }
  return out;
}

// Within 4 ulp of NumPy's value per part (NaN matches NaN, infinities exactly).
void expect_near_numpy(sm_tensor t, const std::vector<C128>& want, const char* what) {
  const std::vector<double> got = parts(t);
  ASSERT_EQ(got.size(), 2 * want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const double w = k % 2 ? want[k / 2].second : want[k / 2].first, g = got[k];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << k / 2;
    } else if (std::isinf(w) || w == 0) {
      EXPECT_EQ(g, w) << what << " element " << k / 2 << (k % 2 ? " imag" : " real");
    } else {
      EXPECT_NEAR(g, w, 4 * std::abs(w) * std::numeric_limits<double>::epsilon())
          << what << " element " << k / 2 << (k % 2 ? " imag" : " real");
    }
  }
}

const std::vector<C128> kX = {{1.5, -2}, {-4, 0}, {-4, 0}, {3, 4}, {1e-3, 1e3}, {-2.5, 0.25}, {0, 0}, {1e300, 1e300}};
const std::vector<C128> kY = {{2, -1}, {0.5, 0.5}, {-3, 1e-3}, {1e-300, 1e300}, {1, 1}, {2, 0}, {1, -1}, {1e300, -1e300}};

}  // namespace

// Complex128 results against NumPy 1.24 (np.sqrt, np.exp, x / y, x * y,
// x - 2.5 * y on these values).
TEST(ExchangeDtypes, ComplexOpsMatchNumpy) {
  {
    Tensor x = make_c128(kX);
    SM_ASSERT_OK(sm_inplace_scalar(x, SM_OP_SQRT, 0, 0));
    expect_near_numpy(x, {{1.4142135623730951, -0.7071067811865475}, {0.0, 2.0}, {0.0, 2.0}, {2.0, 1.0},
                          {22.36069095534058, 22.360668594660805}, {0.07895855013936923, 1.5831091095183905},
                          {0.0, 0.0}, {1.09868411346781e+150, 4.550898605622274e+149}}, "sqrt");
  }
  {
    Tensor x = make_c128(std::vector<C128>(kX.begin(), kX.begin() + 6));
    SM_ASSERT_OK(sm_inplace_scalar(x, SM_OP_EXP, 0, 0));
    expect_near_numpy(x, {{-1.8650407290090891, -4.075188339491183}, {0.01831563888873418, 0.0},
                          {0.01831563888873418, 0.0}, {-13.128783081462158, -15.200784463067954},
                          {0.5629417366502851, 0.8277068336501525}, {0.07953317480279673, 0.02030815365495463}},
                      "exp");
  }
  Tensor y = make_c128(kY);
  {
    Tensor x = make_c128(kX);
    SM_ASSERT_OK(sm_inplace_tensor(x, SM_OP_DIV, y, 1.0));
    expect_near_numpy(x, {{1.0, -0.5}, {-4.0, 4.0}, {1.3333331851852017, 0.00044444439506173387}, {4e-300, -3e-300},
                          {500.0005, 499.9995}, {-1.25, 0.125}, {0.0, 0.0}, {0.0, 1.0}}, "div");
  }
  {
    Tensor x = make_c128(kX);
    SM_ASSERT_OK(sm_inplace_tensor(x, SM_OP_MUL, y, 1.0));
    expect_near_numpy(x, {{1.0, -5.5}, {-2.0, -2.0}, {12.0, -0.004}, {-4e+300, 3e+300}, {-999.999, 1000.001},
                          {-5.0, 0.5}, {0.0, 0.0}, {INFINITY, NAN}}, "mul");
  }
  {
    Tensor x = make_c128(kX);
    SM_ASSERT_OK(sm_inplace_tensor(x, SM_OP_SUB, y, 2.5));
    expect_near_numpy(x, {{-3.5, 0.5}, {-5.25, -1.25}, {3.5, -0.0025}, {3.0, -2.5e+300}, {-2.499, 997.5},
                          {-7.5, 0.25}, {-2.5, 2.5}, {-1.5e+300, 3.5e+300}}, "sub alpha");
  }
  {  // real scalars: (a, 0) as NumPy promotes them; complex64 computes in float
    Tensor x = make_c128({{1, 2}, {-3, 0.5}});
    SM_ASSERT_OK(sm_inplace_scalar(x, SM_OP_MUL, 2.0, 0));
    SM_ASSERT_OK(sm_inplace_scalar(x, SM_OP_ADD, 1.0, 0));
    SM_ASSERT_OK(sm_inplace_scalar(x, SM_OP_NEG, 0, 0));
    expect_near_numpy(x, {{-3, -4}, {5, -1}}, "mul add neg");
    Tensor f;
    SM_ASSERT_OK(sm_to(x, cpu(), SM_COMPLEX64, f.out(), nullptr));
    SM_ASSERT_OK(sm_inplace_scalar(f, SM_OP_DIV, 4.0, 0));
    EXPECT_EQ(parts(f), (std::vector<double>{-0.75, -1.0, 1.25, -0.25}));
  }
}

// Complex tensors refuse the ops PyTorch refuses; a complex operand cannot
// be written into a real tensor except by FILL (a copy: the real part).
TEST(ExchangeDtypes, ComplexRefusals) {
  Tensor x = make_c128({{1, 2}});
  for (sm_op op : {SM_OP_CLAMP, SM_OP_RELU, SM_OP_ABS}) {
    EXPECT_EQ(sm_inplace_scalar(x, op, 0, 1), SM_ERR_DTYPE) << op;
    expect_error_mentions({"complex128"});
    EXPECT_EQ(version_of(x), 0);
  }
  Tensor f = make<float>({7.0f}, {1});
  EXPECT_EQ(sm_inplace_tensor(f, SM_OP_ADD, x, 1.0), SM_ERR_DTYPE);
  expect_error_mentions({"complex128", "float32"});
  EXPECT_EQ(read<float>(f), (std::vector<float>{7.0f}));
  SM_ASSERT_OK(sm_inplace_tensor(f, SM_OP_FILL, x, 1.0));
  EXPECT_EQ(read<float>(f), (std::vector<float>{1.0f}));
  // complex <- real works (imaginary part 0 in the operand)
  SM_ASSERT_OK(sm_inplace_tensor(x, SM_OP_ADD, f, 2.0));
  EXPECT_EQ(parts(x), (std::vector<double>{3.0, 2.0}));
}

// Unsigned dtypes: wrap-around arithmetic, NEG wraps, ABS and RELU are the
// identity, CLAMP compares as unsigned (2^63 and above are not negative).
TEST(ExchangeDtypes, UnsignedOps) {
  const uint64_t top = 1ull << 63;
  Tensor u = make<uint64_t>({top + 5, 1, UINT64_MAX, 0}, {4});
  SM_ASSERT_OK(sm_inplace_scalar(u, SM_OP_CLAMP, 9223372036854775808.0, NAN));
  EXPECT_EQ(read<uint64_t>(u), (std::vector<uint64_t>{top + 5, top, UINT64_MAX, top}));
  SM_ASSERT_OK(sm_inplace_scalar(u, SM_OP_RELU, 0, 0));
  SM_ASSERT_OK(sm_inplace_scalar(u, SM_OP_ABS, 0, 0));
  EXPECT_EQ(read<uint64_t>(u), (std::vector<uint64_t>{top + 5, top, UINT64_MAX, top}));
  SM_ASSERT_OK(sm_inplace_scalar(u, SM_OP_ADD, 9223372036854775808.0, 0));  // 2^63: wraps
  EXPECT_EQ(read<uint64_t>(u), (std::vector<uint64_t>{5, 0, top - 1, 0}));
  SM_ASSERT_OK(sm_inplace_scalar(u, SM_OP_NEG, 0, 0));
  EXPECT_EQ(read<uint64_t>(u), (std::vector<uint64_t>{0 - 5ull, 0, top + 1, 0}));
  SM_ASSERT_OK(sm_inplace_scalar(u, SM_OP_CLAMP, NAN, 100.0));
  EXPECT_EQ(read<uint64_t>(u), (std::vector<uint64_t>{100, 0, 100, 0}));
  EXPECT_EQ(sm_inplace_scalar(u, SM_OP_SQRT, 0, 0), SM_ERR_DTYPE);
  EXPECT_EQ(sm_inplace_scalar(u, SM_OP_ADD, 18446744073709551616.0, 0), SM_ERR_DTYPE);
  // A negative CLAMP bound does not fit uint64: refused, as on every unsigned type.
  EXPECT_EQ(sm_inplace_scalar(u, SM_OP_CLAMP, -1, NAN), SM_ERR_DTYPE);
  EXPECT_EQ(sm_inplace_scalar(u, SM_OP_CLAMP, NAN, -1), SM_ERR_DTYPE);
  EXPECT_EQ(read<uint64_t>(u), (std::vector<uint64_t>{100, 0, 100, 0}));

  Tensor w = make<uint32_t>({4000000000u, 7}, {2});
  SM_ASSERT_OK(sm_inplace_scalar(w, SM_OP_MUL, 2, 0));
  EXPECT_EQ(read<uint32_t>(w), (std::vector<uint32_t>{3705032704u, 14}));
  SM_ASSERT_OK(sm_inplace_scalar(w, SM_OP_CLAMP, 10, 3705032703.0));
  EXPECT_EQ(read<uint32_t>(w), (std::vector<uint32_t>{3705032703u, 14}));
  Tensor h = make<uint16_t>({1, 65535}, {2});
  Tensor i8 = make<int8_t>({-1, 1}, {2});
  SM_ASSERT_OK(sm_inplace_tensor(h, SM_OP_ADD, i8, 3));  // 1 - 3, 65535 + 3: wrap
  EXPECT_EQ(read<uint16_t>(h), (std::vector<uint16_t>{65534, 2}));
  // float64 * uint64 computes in double: the unsigned value, not its int64 bits.
  Tensor big = make<uint64_t>({UINT64_MAX - 2047}, {1});
  Tensor half = make<double>({0.5}, {1});
  SM_ASSERT_OK(sm_inplace_tensor(half, SM_OP_MUL, big, 1));
  EXPECT_EQ(read<double>(half), (std::vector<double>{9223372036854774784.0}));
}

// ---- SIGN: PyTorch's sign_ (NaN kept, as NumPy's sign) -----------------------------------------

namespace {
uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}
uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
// After SIGN, element by element: -1, +1, +0.0 for both zeros (no sign bit),
// and a NaN left with the bits it had.
template <class F>
void expect_float_sign(const std::vector<F>& in, const std::vector<F>& out) {
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const F x = in[i];
    if (x != x) EXPECT_EQ(bits_of(out[i]), bits_of(x)) << "NaN at " << i << " kept as it was";
    else if (x > 0) EXPECT_EQ(out[i], F(1)) << i;
    else if (x < 0) EXPECT_EQ(out[i], F(-1)) << i;
    else EXPECT_EQ(bits_of(out[i]), bits_of(F(0))) << "zero at " << i << " gives +0.0";
  }
}
}  // namespace

TEST(InplaceSign, Floating) {
  const float fmin = std::numeric_limits<float>::denorm_min();
  const std::vector<float> f = {-2.5f, -0.0f, 0.0f, 3.0f, INFINITY, -INFINITY, NAN, -NAN,
                                fmin, -fmin, std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::lowest()};
  expect_float_sign(f, after_scalar(f, SM_OP_SIGN, 0));
  const double dmin = std::numeric_limits<double>::denorm_min();
  const std::vector<double> d = {-1e300, -0.0, 0.0, 1e-300, INFINITY, -INFINITY, NAN, -NAN,
                                 dmin, -dmin};
  expect_float_sign(d, after_scalar(d, SM_OP_SIGN, 0));
  // float16 / bfloat16 bit patterns: -2, -0, +0, 65504, inf, -inf, NaN, -NaN, smallest subnormal.
  const std::vector<uint16_t> h = {0xC000, 0x8000, 0x0000, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00,
                                   0x0001};
  EXPECT_EQ(after_scalar(h, SM_OP_SIGN, 0, 0, SM_FLOAT16),
            (std::vector<uint16_t>{0xBC00, 0x0000, 0x0000, 0x3C00, 0x3C00, 0xBC00, 0x7E00, 0xFE00,
                                   0x3C00}));
  const std::vector<uint16_t> bf = {0xC000, 0x8000, 0x0000, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0,
                                    0xFFC0, 0x0001};
  EXPECT_EQ(after_scalar(bf, SM_OP_SIGN, 0, 0, SM_BFLOAT16),
            (std::vector<uint16_t>{0xBF80, 0x0000, 0x0000, 0x3F80, 0x3F80, 0xBF80, 0x7FC0, 0xFFC0,
                                   0x3F80}));
}

TEST(InplaceSign, IntegersUnsignedAndBool) {
  EXPECT_EQ(after_scalar(std::vector<int8_t>{INT8_MIN, -1, 0, 1, INT8_MAX}, SM_OP_SIGN, 0),
            (std::vector<int8_t>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<int16_t>{INT16_MIN, -7, 0, 7, INT16_MAX}, SM_OP_SIGN, 0),
            (std::vector<int16_t>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<int32_t>{INT32_MIN, -7, 0, 7, INT32_MAX}, SM_OP_SIGN, 0),
            (std::vector<int32_t>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<int64_t>{INT64_MIN, -7, 0, 7, INT64_MAX}, SM_OP_SIGN, 0),
            (std::vector<int64_t>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<uint8_t>{0, 1, 128, 255}, SM_OP_SIGN, 0),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<uint16_t>{0, 1, 0x8000, 0xFFFF}, SM_OP_SIGN, 0, 0, SM_UINT16),
            (std::vector<uint16_t>{0, 1, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<uint32_t>{0, 1, 0x80000000u, UINT32_MAX}, SM_OP_SIGN, 0),
            (std::vector<uint32_t>{0, 1, 1, 1}));
  EXPECT_EQ(after_scalar(std::vector<uint64_t>{0, 1, 1ull << 63, UINT64_MAX}, SM_OP_SIGN, 0),
            (std::vector<uint64_t>{0, 1, 1, 1}))
      << "2^63 and above are positive, not negative";
  // bool: the identity (torch.sign of bool is bool); bytes other than 0 and
  // 1 stay as they are, and the version moves.
  Tensor b = make_bool({2, 0, 1, 255}, {4});
  const int64_t v = version_of(b);
  SM_ASSERT_OK(sm_inplace_scalar(b, SM_OP_SIGN, 0, 0));
  EXPECT_EQ(read_bool(b), (std::vector<uint8_t>{2, 0, 1, 255}));
  EXPECT_EQ(version_of(b), v + 1);
}

TEST(InplaceSign, ComplexIsRefusedNamingSgn) {
  for (sm_dtype dt : {SM_COMPLEX64, SM_COMPLEX128}) {
    const int64_t n = 2;
    Tensor x;
    SM_ASSERT_OK(sm_zeros(&n, 1, dt, cpu(), x.out()));
    const TensorSnap before = snap(x);
    EXPECT_EQ(sm_inplace_scalar(x, SM_OP_SIGN, 0, 0), SM_ERR_DTYPE);
    expect_error_mentions({"sm_inplace_scalar", "SIGN", sm_dtype_name(dt), "sgn"});
    EXPECT_EQ(snap(x), before);
  }
  // No tensor form.
  Tensor f = make<float>({1, -1}, {2});
  EXPECT_EQ(sm_inplace_tensor(f, SM_OP_SIGN, f, 1.0), SM_ERR_INVALID_ARGUMENT);
  // An overlapping destination is refused as for every op.
  Tensor one = make<float>({-3}, {1}), wide;
  const int64_t four = 4;
  SM_ASSERT_OK(sm_expand(one, &four, 1, wide.out()));
  EXPECT_EQ(sm_inplace_scalar(wide, SM_OP_SIGN, 0, 0), SM_ERR_OVERLAP);
  EXPECT_EQ(read<float>(one), std::vector<float>{-3});
}

TEST(InplaceSign, ThroughTransposedAndNegativeStrideViews) {
  // base[::-1, ::2].T of a 3x4 tensor: strides (2, -4), offset 8.
  std::vector<float> vals = {-0.0f, 5, -2, NAN, 4, -5, 0, 7, -8, 9, INFINITY, -11};
  Tensor base = make<float>(vals, {3, 4});
  Tensor r, s, t;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0}.data(), 1, r.out()));
  SM_ASSERT_OK(sm_slice(r, 1, 0, 4, 2, s.out()));
  SM_ASSERT_OK(sm_transpose(s, 0, 1, t.out()));
  expect_layout(t, {2, 3}, {2, -4}, 8);
  SM_ASSERT_OK(sm_inplace_scalar(t, SM_OP_SIGN, 0, 0));
  std::vector<float> want = vals;
  for (size_t i : {0u, 2u, 4u, 6u, 8u, 10u}) want[i] = vals[i] > 0 ? 1.0f : vals[i] < 0 ? -1.0f : 0.0f;
  const std::vector<float> got = read<float>(base);
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
    else EXPECT_EQ(bits_of(got[i]), bits_of(want[i])) << i << ": only the view's elements change";
  }
  // A transposed int32 view.
  Tensor ib = make<int32_t>({INT32_MIN, 3, 0, -4, 5, -6}, {2, 3});
  Tensor it;
  SM_ASSERT_OK(sm_transpose(ib, 0, 1, it.out()));
  SM_ASSERT_OK(sm_inplace_scalar(it, SM_OP_SIGN, 0, 0));
  EXPECT_EQ(read<int32_t>(ib), (std::vector<int32_t>{-1, 1, 0, -1, 1, -1}));
}
