// float16 <-> float32 on the GPU, bit for bit against the CPU backend (whose
// conversions the unit tests check against core/dtype.hpp's rule and NumPy).
// The GPU converts finite values with one PTX instruction each (cvt.f32.f16,
// cvt.rn.f16.f32) and NaNs by the library's own rule (core/dtype.hpp), so
// these tests cover what that instruction must agree on: every binary16
// value to float32, and to binary16 every float32 at and beside each rounding
// boundary (the exact binary16 values, the midpoints between neighbours,
// where ties go to even, and one float32 step either side of both), the
// overflow threshold, subnormals of both formats, NaNs with payloads, and
// random bit patterns. NaNs included: the contract's conversions give NaNs
// of fixed bits (float16 -> float32 keeps payload and quiet bit, float32 ->
// float16 keeps only the sign), unlike arithmetic, whose NaN bits it leaves
// open. Skipped, with the reason, without a usable GPU.
#include "test_cuda_util.hpp"

#include <cmath>
#include <limits>

namespace smt {
namespace {

Tensor host_tensor(const void* data, int64_t n, sm_dtype dt) {
  Tensor t;
  const int64_t shape[1] = {n};
  const sm_status st = sm_from_host(data, shape, 1, dt, cpu(), t.out());
  EXPECT_EQ(st, SM_OK) << "sm_from_host: " << sm_last_error();
  return t;
}

// src converted to dtype `to` by the CPU backend and by the GPU (the same
// bytes uploaded first), through sm_to and through sm_copy_into into a
// transposed view (the strided element-wise path); both must give the CPU's
// bytes exactly. n must be a multiple of 64 (the view is [64, n / 64]).
void expect_gpu_converts_like_cpu(sm_tensor src_cpu, sm_dtype to, const std::string& what) {
  Tensor c, g_src, g;
  SM_ASSERT_OK(sm_to(src_cpu, cpu(), to, c.out(), nullptr));
  g_src = to_device(src_cpu, cuda(0));
  SM_ASSERT_OK(sm_to(g_src.get(), cuda(0), to, g.out(), nullptr));
  expect_same(c.get(), g.get(), what + " (sm_to)");

  const int64_t n = numel_of(src_cpu);
  ASSERT_EQ(n % 64, 0) << what;
  const int64_t rows[2] = {64, n / 64}, cols[2] = {n / 64, 64};
  Tensor src2, dst, dst_t, back;
  SM_ASSERT_OK(sm_reshape(g_src.get(), rows, 2, src2.out(), nullptr));
  SM_ASSERT_OK(sm_empty(cols, 2, to, cuda(0), dst.out()));
  SM_ASSERT_OK(sm_transpose(dst.get(), 0, 1, dst_t.out()));
  SM_ASSERT_OK(sm_copy_into(dst_t.get(), src2.get()));
  // dst_t is the row-major [64, n/64] result viewed through a transpose:
  // its contiguous copy holds the elements in the source's order.
  SM_ASSERT_OK(sm_contiguous(dst_t.get(), SM_CONTIGUOUS, back.out(), nullptr));
  Tensor flat;
  const int64_t one[1] = {n};
  SM_ASSERT_OK(sm_reshape(back.get(), one, 1, flat.out(), nullptr));
  expect_same(c.get(), flat.get(), what + " (copy_into a transposed view)");
}

TEST(CudaConversions, EveryHalfToFloat) {
  SMT_REQUIRE_CUDA();
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  Tensor h = host_tensor(all.data(), 65536, SM_FLOAT16);
  expect_gpu_converts_like_cpu(h.get(), SM_FLOAT32, "every float16 -> float32");
  expect_gpu_converts_like_cpu(h.get(), SM_FLOAT64, "every float16 -> float64");
}

TEST(CudaConversions, FloatToHalfAtEveryRoundingBoundary) {
  SMT_REQUIRE_CUDA();
  std::vector<float> v;
  auto around = [&v](float x) {  // x and one float32 step either side
    v.push_back(x);
    v.push_back(std::nextafter(x, std::numeric_limits<float>::infinity()));
    v.push_back(std::nextafter(x, -std::numeric_limits<float>::infinity()));
  };
  // Every finite binary16 value and the midpoint to its upper neighbour (the
  // largest, 65504, has 65520 above it: from there on, infinity). The
  // midpoints have at most 12 significant bits: exact in float32.
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const double lo = half_to_double(static_cast<uint16_t>(h));
    const double hi = h + 1 < 0x7C00 ? half_to_double(static_cast<uint16_t>(h + 1)) : 65536.0;
    for (double sign : {1.0, -1.0}) {
      around(static_cast<float>(sign * lo));
      around(static_cast<float>(sign * (lo + hi) / 2));
    }
  }
  for (float x : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                  1e-45f, 1e-40f, 2.9802322e-08f /* 2^-25: half the smallest subnormal */,
                  65519.996f, 65520.0f, 1e5f, 3e38f}) {
    around(x);
    around(-x);
  }
  // NaNs, both signs, quiet and signalling, with payloads.
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0x7FBFFFFFu, 0x7FC00001u, 0x7FFFFFFFu, 0x7FA5A5A5u}) {
    v.push_back(bits_to_float(nan));
    v.push_back(bits_to_float(nan | 0x80000000u));
  }
  std::mt19937 rng(2026);
  for (int i = 0; i < (1 << 20); ++i) v.push_back(bits_to_float(rng()));
  while (v.size() % 64) v.push_back(0.0f);
  Tensor f = host_tensor(v.data(), static_cast<int64_t>(v.size()), SM_FLOAT32);
  expect_gpu_converts_like_cpu(f.get(), SM_FLOAT16, "float32 -> float16 at every boundary");
  // The same floats as float64 sources: rounded once from the double.
  std::vector<double> d(v.begin(), v.end());
  Tensor fd = host_tensor(d.data(), static_cast<int64_t>(d.size()), SM_FLOAT64);
  expect_gpu_converts_like_cpu(fd.get(), SM_FLOAT16, "float64 -> float16 at every boundary");
}

// Arithmetic on float16 computes in float32 and rounds once on the store: the
// scalar add over every binary16 value, in place, on both backends. The sums
// that are NaN compare as values (their bits are not the contract's).
TEST(CudaConversions, HalfArithmeticRoundsOnceOnTheStore) {
  SMT_REQUIRE_CUDA();
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  for (double a : {0.0, 1.0, -0.000244140625, 3.140625, 1e-7, 65504.0, 65519.0}) {
    Tensor c = host_tensor(all.data(), 65536, SM_FLOAT16);
    Tensor g = to_device(c.get(), cuda(0));
    SM_ASSERT_OK(sm_inplace_scalar(c.get(), SM_OP_ADD, a, 0));
    SM_ASSERT_OK(sm_inplace_scalar(g.get(), SM_OP_ADD, a, 0));
    expect_same_values(c.get(), g.get(), "every float16 + " + std::to_string(a));
  }
}

}  // namespace
}  // namespace smt
