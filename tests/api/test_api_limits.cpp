// Arguments at the int64 limits: Python-style clamping and range checks must
// not overflow internally (run under UBSan to see it), and results follow
// Python/PyTorch.
#include <limits>

#include "api_test_util.hpp"

using namespace smt;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

TEST(Limits, SliceClampsExtremeBounds) {
  Tensor t = iota({10});
  Tensor s;
  SM_ASSERT_OK(sm_slice(t, 0, 0, kMax, kMax, s.out()));
  EXPECT_EQ(read<float>(s), std::vector<float>{0});
  SM_ASSERT_OK(sm_slice(t, 0, kMin + 1, kMax, 1, s.out()));
  EXPECT_EQ(numel_of(s), 10);
  SM_ASSERT_OK(sm_slice(t, 0, kMax, kMin + 1, -1, s.out()));
  EXPECT_EQ(read<float>(s), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  SM_ASSERT_OK(sm_slice(t, 0, SM_SLICE_NONE, SM_SLICE_NONE, kMin + 1, s.out()));
  EXPECT_EQ(read<float>(s), std::vector<float>{9});
  SM_ASSERT_OK(sm_slice(t, 0, 3, kMax, 4, s.out()));
  EXPECT_EQ(read<float>(s), (std::vector<float>{3, 7}));
  SM_ASSERT_OK(sm_slice(t, 0, kMax - 1, kMax, 1, s.out()));
  EXPECT_EQ(numel_of(s), 0);
}

TEST(Limits, RangeChecksDoNotOverflow) {
  Tensor t = iota({3, 4});
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_narrow(t, 0, 1, kMax, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm_narrow(t, 0, kMin, 1, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm_select(t, 0, kMin, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm_select(t, 1, kMax, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_status_in(sm_unfold(t, 1, kMax, 1, &out), {SM_ERR_SHAPE, SM_ERR_OUT_OF_BOUNDS},
                   "unfold size INT64_MAX");
  expect_status_in(sm_as_strided(t, std::vector<int64_t>{1}.data(), std::vector<int64_t>{1}.data(),
                                 1, kMax, &out),
                   {SM_ERR_OUT_OF_BOUNDS, SM_ERR_OVERFLOW}, "as_strided offset INT64_MAX");
  expect_status_in(sm_as_strided(t, std::vector<int64_t>{2}.data(),
                                 std::vector<int64_t>{kMin}.data(), 1, 0, &out),
                   {SM_ERR_OUT_OF_BOUNDS, SM_ERR_OVERFLOW}, "as_strided stride INT64_MIN");
  EXPECT_EQ(out, sentinel_tensor());
  // A window step past the end: one window.
  Tensor u;
  SM_ASSERT_OK(sm_unfold(t, 1, 2, kMax, u.out()));
  EXPECT_EQ(shape_of(u), (Shape{3, 1, 2}));
}

TEST(Limits, DiagonalFarOffsetsAreEmpty) {
  Tensor t = iota({3, 4});
  for (int64_t off : {kMax, kMin, kMax - 1, kMin + 1, int64_t(1) << 40}) {
    Tensor d;
    SM_ASSERT_OK(sm_diagonal(t, off, 0, 1, d.out()));
    EXPECT_EQ(shape_of(d), Shape{0}) << off;
  }
}

TEST(Limits, SplitAndChunkWithHugeSizes) {
  Tensor t = iota({10});
  int32_t count = -1;
  SM_ASSERT_OK(sm_split(t, kMax, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 1);
  SM_ASSERT_OK(sm_chunk(t, std::numeric_limits<int32_t>::max(), 0, nullptr, 0, &count));
  EXPECT_EQ(count, 10);
  sm_tensor one = nullptr;
  SM_ASSERT_OK(sm_split(t, kMax, 0, &one, 1, &count));
  EXPECT_EQ(shape_of(one), Shape{10});
  sm_tensor_release(one);
}

// An expanded view must keep numel * itemsize representable (sm_nbytes).
TEST(Limits, ExpandRefusesUnrepresentableNbytes) {
  Tensor one = iota({1});
  sm_tensor out = sentinel_tensor();
  const int64_t big[1] = {int64_t(1) << 62};  // numel fits, bytes (x4) do not
  const sm_status st = sm_expand(one, big, 1, &out);
  EXPECT_EQ(st, SM_ERR_OVERFLOW);
  if (st == SM_OK) {
    int64_t nb = -1;
    const sm_status nst = sm_nbytes(out, &nb);
    ADD_FAILURE() << "expand accepted; sm_nbytes -> " << status_name(nst) << ", " << nb;
    sm_tensor_release(out);
  } else {
    expect_error_mentions({"sm_expand"});
    EXPECT_EQ(out, sentinel_tensor());
  }
  const int64_t ok[1] = {int64_t(1) << 60};  // 2^62 bytes: representable
  Tensor e;
  SM_ASSERT_OK(sm_expand(one, ok, 1, e.out()));
  EXPECT_EQ(nbytes_of(e), int64_t(1) << 62);
}

TEST(Limits, ShapeWritesOnlyNdimValues) {
  Tensor t = iota({2, 3});
  int64_t buf[5] = {kSentinel64, kSentinel64, kSentinel64, kSentinel64, kSentinel64};
  SM_ASSERT_OK(sm_shape(t, buf, 5));
  EXPECT_EQ(buf[0], 2);
  EXPECT_EQ(buf[1], 3);
  EXPECT_EQ(buf[2], kSentinel64);
  SM_ASSERT_OK(sm_strides(t, buf, 5));
  EXPECT_EQ(buf[0], 3);
  EXPECT_EQ(buf[1], 1);
  EXPECT_EQ(buf[2], kSentinel64);
}

TEST(Limits, MaxDimsWorks) {
  int64_t shape[SM_MAX_DIMS];
  for (auto& s : shape) s = 1;
  shape[0] = 2;
  shape[SM_MAX_DIMS - 1] = 3;
  Tensor t;
  SM_ASSERT_OK(sm_zeros(shape, SM_MAX_DIMS, SM_FLOAT32, cpu(), t.out()));
  EXPECT_EQ(ndim_of(t), SM_MAX_DIMS);
  Tensor tr, c;
  SM_ASSERT_OK(sm_transpose(t, 0, -1, tr.out()));
  SM_ASSERT_OK(sm_contiguous(tr, SM_CONTIGUOUS, c.out(), nullptr));
  EXPECT_EQ(numel_of(c), 6);
  sm_tensor out = sentinel_tensor();
  expect_status_in(sm_unsqueeze(t, 0, &out), {SM_ERR_INVALID_ARGUMENT, SM_ERR_SHAPE},
                   "unsqueeze past SM_MAX_DIMS");
  EXPECT_EQ(out, sentinel_tensor());
  const int64_t s2[2] = {1, 1};
  expect_status_in(sm_unflatten(t, 1, s2, 2, &out), {SM_ERR_INVALID_ARGUMENT, SM_ERR_SHAPE},
                   "unflatten past SM_MAX_DIMS");
  EXPECT_EQ(out, sentinel_tensor());
}
