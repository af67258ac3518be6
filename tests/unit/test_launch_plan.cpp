// Planning for the CUDA kernels, checked on the CPU: fast division, the
// kernel each call gets, and, above all, that executing a plan moves every
// element where it belongs. The emulators below walk the plan exactly as the
// CUDA kernels do (same parameter structs, same SM_HOST_DEVICE index helpers,
// same tile loops), on host buffers, for random views, and compare the whole
// destination buffer with a naive reference (so a write outside the view is
// caught too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/dtype.hpp"
#include "backend/cuda/launch_plan.hpp"

namespace sm {
namespace {

// ---- the launch planners from descriptors ---------------------------------------------
// The planners start from an operation plan made for a CUDA device, as the
// backend's entry points hand them one; these build it as the engine does.
KernelPlan plan_copy(const TensorDesc& dst, const TensorDesc& src, const DeviceProps& props) {
  return sm::plan_copy(sm::plan_copy(dst, src, PlanTarget::Cuda), props);
}
KernelPlan plan_fill(const TensorDesc& dst, const DeviceProps& props) {
  return sm::plan_fill(sm::plan_fill(dst, 0.0, PlanTarget::Cuda), props);
}
// A scalar op's plan reads dst itself; its walk is a fill's (dst alone).
KernelPlan plan_unary(const TensorDesc& dst, const DeviceProps& props) {
  return sm::plan_unary(sm::plan_fill(dst, 0.0, PlanTarget::Cuda), props);
}
KernelPlan plan_binary(const TensorDesc& dst, const TensorDesc& other, bool allow_transpose,
                       const DeviceProps& props) {
  return sm::plan_binary(sm::plan_tensor_op(dst, SM_OP_ADD, other, 1.0, PlanTarget::Cuda),
                         allow_transpose, props);
}
KernelPlan plan_gather(const TensorDesc& dst, const TensorDesc& src, int dim,
                       const TensorDesc& index, const DeviceProps& props) {
  return sm::plan_gather(sm::plan_gather(dst, src, dim, index, PlanTarget::Cuda), props);
}

// ---- fast division ----------------------------------------------------------------

template <typename U>
void check_div(U d, U n) {
  const FastDivmod<U> f(d);
  const U q = f.div(n);
  ASSERT_EQ(q, n / d) << "n=" << n << " d=" << d;
  ASSERT_EQ(f.mod(n, q), n % d) << "n=" << n << " d=" << d;
}

TEST(FastDivmod, Exact32) {
  const uint32_t lim = uint32_t(1) << 31;
  std::mt19937 rng(1);
  std::vector<uint32_t> ds = {1, 2, 3, 5, 7, 10, 31, 32, 33, 64, 127, 1000, 65535, 65536, 65537,
                              (1u << 30) - 1, 1u << 30, (1u << 30) + 1, lim - 1, lim};
  for (int i = 0; i < 300; ++i) ds.push_back(1 + rng() % (lim - 1));
  for (int i = 0; i < 50; ++i) ds.push_back(1 + rng() % 300);
  for (uint32_t d : ds) {
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, lim - 1, lim - 2, lim - d})
      if (n < lim) check_div<uint32_t>(d, n);
    for (int k = 0; k < 200; ++k) check_div<uint32_t>(d, rng() % lim);
  }
  for (uint32_t n = 0; n < 5000; ++n)
    for (uint32_t d = 1; d < 70; ++d) check_div<uint32_t>(d, n);
}

TEST(FastDivmod, Exact64) {
  const uint64_t lim = uint64_t(1) << 63;
  std::mt19937_64 rng(2);
  std::vector<uint64_t> ds = {1, 2, 3, 7, 1000, (uint64_t(1) << 31) + 1, uint64_t(1) << 32,
                              (uint64_t(1) << 32) + 3, (uint64_t(1) << 62) + 1, lim - 1, lim};
  for (int i = 0; i < 300; ++i) ds.push_back(1 + rng() % (lim - 1));
  for (int i = 0; i < 100; ++i) ds.push_back(1 + rng() % 5000000);
  for (uint64_t d : ds) {
    for (uint64_t n : {uint64_t(0), uint64_t(1), d - 1, d, d + 1, lim - 1, lim - d})
      if (n < lim) check_div<uint64_t>(d, n);
    for (int k = 0; k < 200; ++k) check_div<uint64_t>(d, rng() % lim);
    for (int k = 0; k < 50; ++k) check_div<uint64_t>(d, rng() % (uint64_t(1) << 40));
  }
}

TEST(OffsetCalc, MatchesRowMajorDecomposition) {
  KernelPlan p;
  p.it.nops = 2;
  p.it.ndim = 3;
  const int64_t sizes[3] = {3, 5, 7};
  const int64_t s0[3] = {35, 7, 1}, s1[3] = {-2, 30, 0};
  for (int d = 0; d < 3; ++d) {
    p.it.sizes[d] = sizes[d];
    p.it.strides[0][d] = s0[d];
    p.it.strides[1][d] = s1[d];
  }
  const auto c32 = make_offset_calc<uint32_t, 2>(p);
  const auto c64 = make_offset_calc<uint64_t, 2>(p);
  uint32_t lin = 0;
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 5; ++b)
      for (int64_t c = 0; c < 7; ++c, ++lin) {
        int32_t o32[2];
        int64_t o64[2];
        c32.get(lin, o32);
        c64.get(lin, o64);
        EXPECT_EQ(o32[0], a * 35 + b * 7 + c);
        EXPECT_EQ(o32[1], a * -2 + b * 30);
        EXPECT_EQ(o64[0], o32[0]);
        EXPECT_EQ(o64[1], o32[1]);
      }
}

// ---- launch shapes ----------------------------------------------------------------

TEST(ElementwiseLaunch, FromDeviceProperties) {
  DeviceProps props;  // 132 SMs x 2048 threads
  Launch l = plan_elementwise_launch(1000, props);
  EXPECT_EQ(l.block, 256);
  EXPECT_EQ(l.items, 1);
  EXPECT_EQ(l.grid, 4);
  const int64_t wave = 132 * 2048;
  l = plan_elementwise_launch(4 * wave, props);
  EXPECT_EQ(l.items, 4);
  EXPECT_EQ(l.grid, 4 * wave / 1024);
  l = plan_elementwise_launch(4 * wave - 1, props);
  EXPECT_EQ(l.items, 1);
  props.max_grid_x = 1000;
  l = plan_elementwise_launch(int64_t(1) << 40, props);
  EXPECT_EQ(l.grid, 1000);  // the kernels' grid-stride loops cover the rest
  props.max_threads_per_block = 128;
  EXPECT_EQ(plan_elementwise_launch(10, props).block, 128);
  // A smaller device reaches the 4-units regime sooner.
  DeviceProps small;
  small.sm_count = 2;
  EXPECT_EQ(plan_elementwise_launch(4 * 2 * 2048, small).items, 4);
}

// ---- kernel choice --------------------------------------------------------------------

TensorDesc desc(void* data, DType dt, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  TensorDesc d;
  d.data = data;
  d.dtype = dt;
  d.ndim = static_cast<int>(sizes.size());
  for (int i = 0; i < d.ndim; ++i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = strides[i];
  }
  return d;
}

// Fake, well-aligned device addresses (planning never dereferences).
void* const kDst = reinterpret_cast<void*>(uintptr_t(0x7f0000000000));
void* const kSrc = reinterpret_cast<void*>(uintptr_t(0x7f1000000000));
void* at(void* base, int64_t bytes) { return static_cast<char*>(base) + bytes; }

TEST(PlanCopy, ContiguousIsOneMemcpy) {
  DeviceProps props;
  const KernelPlan p = plan_copy(desc(kDst, DType::F32, {4, 5, 6}, {30, 6, 1}),
                                 desc(kSrc, DType::F32, {4, 5, 6}, {30, 6, 1}), props);
  EXPECT_EQ(p.kind, KernelKind::Memcpy);
  EXPECT_EQ(p.memcpy_bytes, 4 * 5 * 6 * 4);
}

TEST(PlanCopy, EmptyAndSingleElement) {
  DeviceProps props;
  EXPECT_EQ(plan_copy(desc(kDst, DType::F32, {4, 0}, {0, 1}), desc(kSrc, DType::F32, {4, 0}, {0, 1}),
                      props).kind,
            KernelKind::Empty);
  const KernelPlan p = plan_copy(desc(kDst, DType::F64, {}, {}), desc(kSrc, DType::F64, {}, {}), props);
  EXPECT_EQ(p.kind, KernelKind::Memcpy);
  EXPECT_EQ(p.memcpy_bytes, 8);
}

TEST(PlanCopy, SharedStrideOneDimIsVectorized) {
  DeviceProps props;
  // Columns 0..63 of a [64, 128] f32 matrix: rows of 256 bytes, 16-byte units.
  KernelPlan p = plan_copy(desc(kDst, DType::F32, {64, 64}, {64, 1}),
                           desc(kSrc, DType::F32, {64, 64}, {128, 1}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_EQ(p.it.sizes[1], 16);
  EXPECT_EQ(p.it.strides[0][0], 16);
  EXPECT_EQ(p.it.strides[1][0], 32);
  EXPECT_EQ(p.numel, 64 * 16);
  EXPECT_TRUE(p.index32);
  // Source one element off 16-byte alignment: 4-byte units only.
  p = plan_copy(desc(kDst, DType::F32, {64, 64}, {64, 1}),
                desc(at(kSrc, 4), DType::F32, {64, 64}, {128, 1}), props);
  EXPECT_EQ(p.unit_bytes, 4);
  // Rows of 6 halves (12 bytes): 4-byte units.
  p = plan_copy(desc(kDst, DType::F16, {10, 6}, {6, 1}), desc(kSrc, DType::F16, {10, 6}, {8, 1}),
                props);
  EXPECT_EQ(p.unit_bytes, 4);
  EXPECT_EQ(p.it.sizes[1], 3);
  // A row broadcast down the columns still shares the stride-1 dim.
  p = plan_copy(desc(kDst, DType::BF16, {100, 256}, {256, 1}),
                desc(kSrc, DType::BF16, {100, 256}, {0, 1}), props);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_EQ(p.it.strides[1][0], 0);
}

TEST(PlanCopy, CrossedStrideOneDimsAreATiledTranspose) {
  DeviceProps props;
  // [512, 256] f32 destination from a transposed view.
  KernelPlan p = plan_copy(desc(kDst, DType::F32, {512, 256}, {256, 1}),
                           desc(kSrc, DType::F32, {512, 256}, {1, 512}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.dim_j, 1);
  EXPECT_EQ(p.dim_i, 0);
  // 4-byte elements: 64 along i (two loads per thread and row) by 32 along j.
  EXPECT_EQ(p.tile_i, 64);
  EXPECT_EQ(p.tile_j, 32);
  EXPECT_FALSE(p.pack_src || p.pack_dst);
  EXPECT_EQ(p.total_tiles, 8 * 8);
  EXPECT_EQ(p.launch.block, 256);
  EXPECT_EQ(p.launch.grid, 64);
  // fp16: 64-element tiles, both sides packed two halves to a 4-byte access.
  p = plan_copy(desc(kDst, DType::F16, {8, 512, 256}, {512 * 256, 256, 1}),
                desc(kSrc, DType::F16, {8, 512, 256}, {512 * 256, 1, 512}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.tile_i, 64);
  EXPECT_EQ(p.tile_j, 64);
  EXPECT_TRUE(p.pack_src);
  EXPECT_TRUE(p.pack_dst);
  EXPECT_EQ(p.total_tiles, 8 * 8 * 4);
  // An odd extent cannot be packed on that side.
  p = plan_copy(desc(kDst, DType::F16, {511, 256}, {256, 1}),
                desc(kSrc, DType::F16, {511, 256}, {1, 511}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_FALSE(p.pack_src);
  EXPECT_TRUE(p.pack_dst);
  // u8: 128-element tiles, 4 per packed access.
  p = plan_copy(desc(kDst, DType::U8, {256, 256}, {256, 1}),
                desc(kSrc, DType::U8, {256, 256}, {1, 256}), props);
  EXPECT_EQ(p.tile_i, 128);
  EXPECT_EQ(p.tile_j, 128);
  EXPECT_TRUE(p.pack_src && p.pack_dst);
  // NCHW -> NHWC (channels_last): C is the source's stride-1 candidate? No:
  // the source moves fastest along W; the destination along C.
  const int64_t N = 4, C = 64, H = 32, W = 32;
  p = plan_copy(desc(kDst, DType::F32, {N, C, H, W}, {H * W * C, 1, W * C, C}),
                desc(kSrc, DType::F32, {N, C, H, W}, {C * H * W, H * W, W, 1}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.it.ndim, 3);  // H and W merge
  EXPECT_EQ(p.it.sizes[p.dim_j], C);
  EXPECT_EQ(p.it.sizes[p.dim_i], H * W);
}

TEST(PlanCopy, ThinTransposesAndStridedSourcesAreElementwise) {
  DeviceProps props;
  // 3 channels: too thin for tiles.
  KernelPlan p = plan_copy(desc(kDst, DType::F32, {3, 1000}, {1000, 1}),
                           desc(kSrc, DType::F32, {3, 1000}, {1, 3}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 4);
  // Every other element of the source: no stride-1 dim on the source.
  p = plan_copy(desc(kDst, DType::F32, {100, 100}, {100, 1}),
                desc(kSrc, DType::F32, {100, 100}, {400, 2}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 4);
}

TEST(PlanCopy, ConversionsWithoutATransposePairAreElementwiseInElements) {
  DeviceProps props;
  KernelPlan p = plan_copy(desc(kDst, DType::BF16, {64, 64}, {64, 1}),
                           desc(kSrc, DType::F32, {64, 64}, {64, 1}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 0);
  EXPECT_TRUE(p.contiguous);
  EXPECT_EQ(p.numel, 4096);
  // 3 channels: too thin for tiles, whatever the dtypes.
  p = plan_copy(desc(kDst, DType::F16, {3, 1000}, {1000, 1}),
                desc(kSrc, DType::F32, {3, 1000}, {1, 3}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 0);
  EXPECT_FALSE(p.contiguous);
}

// Conversions get the same tiles as copies of their larger element, each
// side packing its own elements when they make 4 bytes.
TEST(PlanCopy, ConversionsAreTiledTransposes) {
  DeviceProps props;
  struct Case {
    DType dd, sd;
    int tile_i, tile_j;
    bool pack_src, pack_dst;
  };
  const Case cases[] = {
      {DType::F16, DType::F32, 64, 32, false, false},  // 4-byte loads, 2-byte stores
      {DType::BF16, DType::F32, 64, 32, false, false},
      {DType::F32, DType::F16, 64, 32, true, false},   // two halves per 4-byte load
      {DType::F16, DType::U8, 64, 64, false, true},    // two halves per 4-byte store
      {DType::I8, DType::Bool, 128, 128, true, true},  // four bytes each way
      {DType::Bool, DType::I8, 128, 128, true, true},
      {DType::C128, DType::C64, 32, 32, false, false},
      {DType::C64, DType::C128, 32, 32, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.dd)) + " <- " + dtype_name(c.sd));
    KernelPlan p = plan_copy(desc(kDst, c.dd, {512, 256}, {256, 1}),
                             desc(kSrc, c.sd, {512, 256}, {1, 512}), props);
    ASSERT_EQ(p.kind, KernelKind::Transpose);
    EXPECT_EQ(p.unit_bytes, 0);
    EXPECT_EQ(p.dim_i, 0);
    EXPECT_EQ(p.dim_j, 1);
    EXPECT_EQ(p.tile_i, c.tile_i);
    EXPECT_EQ(p.tile_j, c.tile_j);
    EXPECT_EQ(p.pack_src, c.pack_src);
    EXPECT_EQ(p.pack_dst, c.pack_dst);
    EXPECT_EQ(p.total_tiles, (512 / c.tile_i) * (256 / c.tile_j));
    // The shared tile (destination elements, padded by one per row) fits.
    const int64_t smem = int64_t(c.tile_j) * (c.tile_i + 1) * int64_t(dtype_size(c.dd));
    EXPECT_LE(smem, props.shared_mem_per_block);
  }
  // NCHW -> NHWC, f32 to f16: j over C, i over H * W.
  const int64_t N = 4, C = 64, H = 32, W = 32;
  KernelPlan p = plan_copy(desc(kDst, DType::F16, {N, C, H, W}, {H * W * C, 1, W * C, C}),
                           desc(kSrc, DType::F32, {N, C, H, W}, {C * H * W, H * W, W, 1}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.it.sizes[p.dim_j], C);
  EXPECT_EQ(p.it.sizes[p.dim_i], H * W);
  EXPECT_EQ(p.total_tiles, N * (H * W / 64) * (C / 32));
  // The source reversed along i: read forwards, each byte offset in its own
  // operand's element size.
  p = plan_copy(desc(kDst, DType::F16, {64, 48}, {48, 1}),
                desc(at(kSrc, 63 * 4), DType::F32, {64, 48}, {-1, 64}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.it.strides[1][p.dim_i], 1);
  EXPECT_EQ(p.byte_offset[1], -63 * 4);
  EXPECT_EQ(p.byte_offset[0], 63 * 48 * 2);
  // An odd extent or an odd start cannot be packed on that side.
  p = plan_copy(desc(kDst, DType::F32, {511, 256}, {256, 1}),
                desc(kSrc, DType::F16, {511, 256}, {1, 511}), props);
  EXPECT_FALSE(p.pack_src);
  p = plan_copy(desc(kDst, DType::F32, {512, 256}, {256, 1}),
                desc(at(kSrc, 2), DType::F16, {512, 256}, {1, 512}), props);
  EXPECT_FALSE(p.pack_src);
  // complex64 off an 8-byte boundary: the tiles' 8-byte words would be
  // misaligned; element by element instead.
  p = plan_copy(desc(kDst, DType::C128, {64, 64}, {64, 1}),
                desc(at(kSrc, 4), DType::C64, {64, 64}, {1, 64}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  p = plan_copy(desc(at(kDst, 4), DType::C64, {64, 64}, {64, 1}),
                desc(kSrc, DType::F32, {64, 64}, {1, 64}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  p = plan_copy(desc(at(kDst, 8), DType::C64, {64, 64}, {64, 1}),
                desc(at(kSrc, 8), DType::C128, {64, 64}, {1, 64}), props);
  EXPECT_EQ(p.kind, KernelKind::Transpose);
  // Index width: 2^31 elements need 64-bit math, 2^30 do not.
  p = plan_copy(desc(kDst, DType::F16, {1 << 16, 1 << 15}, {1 << 15, 1}),
                desc(kSrc, DType::F32, {1 << 16, 1 << 15}, {1, 1 << 16}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_FALSE(p.index32);
  p = plan_copy(desc(kDst, DType::F16, {1 << 15, 1 << 15}, {1 << 15, 1}),
                desc(kSrc, DType::F32, {1 << 15, 1 << 15}, {1, 1 << 15}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_TRUE(p.index32);
}

// One tiling rule, per target (backend/tiling.hpp): where either target
// tiles, its i is pick_tile_dim over the same iteration plan; where CUDA
// does not, there was no pair or one of CUDA's launch constraints failed;
// the launch planner tiles exactly where the rule says so for CUDA.
TEST(PlanCopy, TileDimIsTheOneRulePerTarget) {
  enum Expect { Tiled, NoPair, NotUnitStride, TooThin };
  struct Row {
    std::vector<int64_t> sizes, dst_strides, src_strides;
    Expect expect;
  };
  const std::vector<Row> rows = {
      {{512, 256}, {256, 1}, {1, 512}, Tiled},                               // 2-D transpose
      {{4, 64, 32, 32}, {65536, 1, 2048, 64}, {65536, 1024, 32, 1}, Tiled},  // NCHW -> NHWC
      {{4, 32, 32, 64}, {65536, 2048, 64, 1}, {65536, 32, 1, 1024}, Tiled},  // NHWC -> NCHW
      {{64, 48}, {48, 1}, {-1, 64}, Tiled},                                  // reversed source
      {{16, 20, 24}, {480, 24, 1}, {1, 16, 320}, Tiled},                     // (2,1,0)
      {{16, 20, 24}, {480, 24, 1}, {20, 1, 320}, Tiled},                     // i is the middle dim
      {{8, 16, 16, 8}, {2048, 128, 8, 1}, {1, 8, 128, 2048}, TooThin},       // reversed 4-D, 8 at both ends
      {{256, 256}, {256, 1}, {256, 1}, NoPair},                              // plain copy
      {{100, 100}, {100, 1}, {400, 2}, NoPair},                              // source strided everywhere
      {{100, 100}, {100, 1}, {2, 200}, NotUnitStride},                       // stride 2 along i
      {{100, 100}, {100, 1}, {1, 0}, NoPair},                                // broadcast along j
      {{3, 1000}, {1000, 1}, {1, 3}, TooThin},
      {{1000, 8}, {8, 1}, {1, 1000}, TooThin},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(::testing::PrintToString(r.sizes) + " dst " + ::testing::PrintToString(r.dst_strides) +
                 " src " + ::testing::PrintToString(r.src_strides));
    const int nd = static_cast<int>(r.sizes.size());
    const int64_t* strides[2] = {r.dst_strides.data(), r.src_strides.data()};
    const IterPlan it = plan_iteration(2, r.sizes.data(), nd, strides, true);
    const int cpu = pick_tile_dim(it, 1);
    EXPECT_EQ(cpu < 0, r.expect == NoPair);
    const Tiling cuda = plan_tiling(it, 4, 4, PlanTarget::Cuda);
    const Tiling host = plan_tiling(it, 4, 4, PlanTarget::Host);
    EXPECT_EQ(cuda.shape == IterShape::Transpose, r.expect == Tiled);
    const bool host_tiles = cpu >= 0 && it.sizes[cpu] >= kHostMinTileExtent &&
                            it.sizes[it.ndim - 1] >= kHostMinTileExtent;
    EXPECT_EQ(host.shape == IterShape::Transpose, host_tiles);
    if (r.expect == Tiled) EXPECT_TRUE(host_tiles);  // CUDA's limits are stricter
    if (cuda.shape == IterShape::Transpose) EXPECT_EQ(cuda.dim_i, cpu);
    if (host.shape == IterShape::Transpose) EXPECT_EQ(host.dim_i, cpu);
    if (r.expect == NotUnitStride) EXPECT_NE(std::abs(it.strides[1][cpu]), 1);
    if (r.expect == TooThin) {
      EXPECT_EQ(std::abs(it.strides[1][cpu]), 1);
      EXPECT_TRUE(it.sizes[cpu] < kMinTransposeExtent || it.sizes[it.ndim - 1] < kMinTransposeExtent);
    }
    for (DType dd : {DType::F32, DType::F16})
      for (DType sd : {DType::F32, DType::BF16}) {
        const KernelPlan p = plan_copy(desc(kDst, dd, r.sizes, r.dst_strides),
                                       desc(kSrc, sd, r.sizes, r.src_strides), DeviceProps{});
        EXPECT_EQ(p.kind == KernelKind::Transpose, r.expect == Tiled);
        if (p.kind != KernelKind::Transpose) continue;
        EXPECT_EQ(p.dim_i, cpu);
        EXPECT_EQ(p.it.ndim, it.ndim);
        for (int d = 0; d < it.ndim; ++d) EXPECT_EQ(p.it.sizes[d], it.sizes[d]);
      }
  }
}

// The launch planners carry out the operation plan's tiling decision: a
// plan changed by hand to Rows runs Elementwise where the layout would tile,
// and a Transpose whose sides are not the kernel's, or a plan made for the
// host, is refused rather than launched.
TEST(PlanCopy, TheOperationPlansTilingDecides) {
  const DeviceProps props;
  const TensorDesc d = desc(kDst, DType::F32, {512, 256}, {256, 1});
  const TensorDesc s = desc(kSrc, DType::F32, {512, 256}, {1, 512});
  OpPlan op = sm::plan_copy(d, s, PlanTarget::Cuda);
  ASSERT_EQ(op.tiling.shape, IterShape::Transpose);
  EXPECT_EQ(sm::plan_copy(op, props).kind, KernelKind::Transpose);
  OpPlan rows = op;
  rows.tiling.shape = IterShape::Rows;
  EXPECT_EQ(sm::plan_copy(rows, props).kind, KernelKind::Elementwise);
  OpPlan add = sm::plan_tensor_op(d, SM_OP_ADD, s, 1.0, PlanTarget::Cuda);
  EXPECT_EQ(sm::plan_binary(add, true, props).kind, KernelKind::Transpose);
  add.tiling.shape = IterShape::Rows;
  EXPECT_EQ(sm::plan_binary(add, true, props).kind, KernelKind::Elementwise);
  OpPlan wrong = op;
  wrong.tiling.side_i = 32;
  EXPECT_THROW(sm::plan_copy(wrong, props), Error);
  EXPECT_THROW(sm::plan_copy(sm::plan_copy(d, s, PlanTarget::Host), props), Error);
}

TEST(PlanCopy, NegativeStridesWalkTheDestinationForwards) {
  DeviceProps props;
  // Both flipped: one memcpy from the last element's address.
  KernelPlan p = plan_copy(desc(at(kDst, 99 * 4), DType::F32, {100}, {-1}),
                           desc(at(kSrc, 99 * 4), DType::F32, {100}, {-1}), props);
  EXPECT_EQ(p.kind, KernelKind::Memcpy);
  EXPECT_EQ(p.byte_offset[0], -99 * 4);
  EXPECT_EQ(p.byte_offset[1], -99 * 4);
  // Source flipped along its stride-1 dim of a transpose: the tile reads forwards.
  p = plan_copy(desc(kDst, DType::F32, {64, 48}, {48, 1}),
                desc(at(kSrc, 63 * 4), DType::F32, {64, 48}, {-1, 64}), props);
  ASSERT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.it.strides[1][p.dim_i], 1);
  EXPECT_EQ(p.it.strides[0][p.dim_i], -48);
  EXPECT_EQ(p.byte_offset[1], -63 * 4);
  EXPECT_EQ(p.byte_offset[0], 63 * 48 * 4);
}

TEST(PlanCopy, IndexWidthFollowsTheReach) {
  DeviceProps props;
  const int64_t big = int64_t(1) << 31;
  KernelPlan p = plan_copy(desc(kDst, DType::U8, {big / 1024, 1024}, {1024, 1}),
                           desc(kSrc, DType::U8, {big / 1024, 1024}, {1, big / 1024}), props);
  EXPECT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_FALSE(p.index32);
  p = plan_copy(desc(kDst, DType::F32, {1 << 20, 1024}, {1024, 1}),
                desc(kSrc, DType::F32, {1 << 20, 1024}, {1, 1 << 20}), props);
  EXPECT_TRUE(p.index32);  // 2^30 elements, every offset below 2^31
  p = plan_copy(desc(kDst, DType::F32, {1 << 14, 1024}, {1024, 1}),
                desc(kSrc, DType::F32, {1 << 14, 1024}, {1, 1 << 14}), props);
  EXPECT_TRUE(p.index32);
  // Few elements spread far apart: the offsets decide.
  p = plan_copy(desc(kDst, DType::F32, {4, 4}, {4, 1}),
                desc(kSrc, DType::F32, {4, 4}, {int64_t(1) << 30, 3}), props);
  EXPECT_FALSE(p.index32);
}

TEST(PlanFill, VectorizedWhenContiguous) {
  DeviceProps props;
  KernelPlan p = plan_fill(desc(kDst, DType::F16, {1000, 64}, {64, 1}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_TRUE(p.contiguous);
  EXPECT_EQ(p.numel, 1000 * 64 / 8);
  p = plan_fill(desc(kDst, DType::F32, {100, 3}, {3, 100}), props);
  EXPECT_EQ(p.unit_bytes, 4);
  EXPECT_FALSE(p.contiguous);
}

TEST(PlanBinary, TransposedInPlaceAdd) {
  DeviceProps props;
  // x.T += y: the destination's stride-1 dim is not other's.
  KernelPlan p = plan_binary(desc(kDst, DType::F32, {256, 512}, {1, 256}),
                             desc(kSrc, DType::F32, {256, 512}, {512, 1}), true, props);
  EXPECT_EQ(p.kind, KernelKind::Transpose);
  p = plan_binary(desc(kDst, DType::F32, {256, 512}, {1, 256}),
                  desc(kSrc, DType::F32, {256, 512}, {512, 1}), false, props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  // Mixed-dtype ops never tile.
  p = plan_binary(desc(kDst, DType::F32, {256, 512}, {1, 256}),
                  desc(kSrc, DType::F16, {256, 512}, {512, 1}), true, props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
}

// ---- index_select: the gather and the index check --------------------------------------

TEST(PlanGather, ThreeOperandsOverTheDestination) {
  DeviceProps props;
  void* const kIdx = reinterpret_cast<void*>(uintptr_t(0x7f2000000000));
  // Rows 0..3 of a [5, 6] f32 source chosen by a contiguous int64 index:
  // rows of 24 bytes move as 3 units of 8 bytes (16 does not divide 24).
  KernelPlan p = plan_gather(desc(kDst, DType::F32, {4, 6}, {6, 1}),
                             desc(kSrc, DType::F32, {5, 6}, {6, 1}), 0,
                             desc(kIdx, DType::I64, {4}, {1}), props);
  ASSERT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 8);
  EXPECT_EQ(p.numel, 12);
  ASSERT_EQ(p.it.ndim, 2);
  EXPECT_EQ(p.it.sizes[1], 3);
  EXPECT_EQ(p.it.strides[0][0], 3);  // units
  EXPECT_EQ(p.it.strides[0][1], 1);
  EXPECT_EQ(p.it.strides[1][0], 0);  // the source's dim is the index's business
  EXPECT_EQ(p.it.strides[1][1], 1);
  EXPECT_EQ(p.it.strides[2][0], 1);  // index elements, whatever the unit
  EXPECT_EQ(p.it.strides[2][1], 0);
  EXPECT_EQ(p.gather_size, 5);
  EXPECT_EQ(p.gather_stride, 3);  // units
  EXPECT_FALSE(p.contiguous);
  EXPECT_TRUE(p.index32);
  // Columns of a [3, 10] f16 source by a flipped int32 index: the index's
  // negative stride is kept (the destination's order decides the walk).
  p = plan_gather(desc(kDst, DType::F16, {3, 4}, {4, 1}), desc(kSrc, DType::F16, {3, 10}, {10, 1}),
                  1, desc(at(kIdx, 12), DType::I32, {4}, {-1}), props);
  ASSERT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.gather, GatherKind::Elements);
  EXPECT_EQ(p.unit_bytes, 2);
  EXPECT_EQ(p.it.strides[1][0], 10);
  EXPECT_EQ(p.it.strides[1][1], 0);
  EXPECT_EQ(p.it.strides[2][0], 0);
  EXPECT_EQ(p.it.strides[2][1], -1);
  EXPECT_EQ(p.gather_stride, 1);
  // An empty result plans nothing; a one-element one still has one dim.
  EXPECT_EQ(plan_gather(desc(kDst, DType::F32, {0, 4}, {4, 1}), desc(kSrc, DType::F32, {0, 9}, {9, 1}),
                        1, desc(kIdx, DType::I64, {4}, {0}), props)
                .kind,
            KernelKind::Empty);
  p = plan_gather(desc(kDst, DType::F64, {1}, {1}), desc(kSrc, DType::F64, {7}, {1}), 0,
                  desc(kIdx, DType::I64, {1}, {1}), props);
  ASSERT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.numel, 1);
  EXPECT_EQ(p.it.ndim, 1);
}

TEST(PlanGather, IndexWidthCountsTheSourceAlongDim) {
  DeviceProps props;
  void* const kIdx = reinterpret_cast<void*>(uintptr_t(0x7f2000000000));
  // A small result from rows far apart: the index may name any row, so the
  // source's whole reach along dim decides (2^22 rows of 2^12 elements: 2^30
  // units of 16 bytes).
  KernelPlan p = plan_gather(desc(kDst, DType::F32, {4, 8}, {8, 1}),
                             desc(kSrc, DType::F32, {1 << 22, 8}, {1 << 12, 1}), 0,
                             desc(kIdx, DType::I64, {4}, {1}), props);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_FALSE(p.index32);
  p = plan_gather(desc(kDst, DType::F32, {4, 8}, {8, 1}),
                  desc(kSrc, DType::F32, {1 << 10, 8}, {1 << 12, 1}), 0,
                  desc(kIdx, DType::I64, {4}, {1}), props);
  EXPECT_TRUE(p.index32);
  // The reach counts in units: 2^20 rows of 2^12 elements is 2^32 elements
  // but 2^28 units of 16 bytes; in elements (the source off 16- and 8-byte
  // alignment) it does not fit.
  p = plan_gather(desc(kDst, DType::F32, {4, 8}, {8, 1}),
                  desc(kSrc, DType::F32, {1 << 20, 8}, {1 << 12, 1}), 0,
                  desc(kIdx, DType::I64, {4}, {1}), props);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_EQ(p.gather_stride, 1 << 10);
  EXPECT_TRUE(p.index32);
  p = plan_gather(desc(kDst, DType::F32, {4, 8}, {8, 1}),
                  desc(at(kSrc, 4), DType::F32, {1 << 20, 8}, {1 << 12, 1}), 0,
                  desc(kIdx, DType::I64, {4}, {1}), props);
  EXPECT_EQ(p.unit_bytes, 4);
  EXPECT_FALSE(p.index32);
  // A source expanded along dim (stride 0) reaches nothing there, however long.
  p = plan_gather(desc(kDst, DType::F32, {4, 8}, {8, 1}),
                  desc(kSrc, DType::F32, {int64_t(1) << 40, 8}, {0, 1}), 0,
                  desc(kIdx, DType::I64, {4}, {1}), props);
  EXPECT_TRUE(p.index32);
  // The index's own reach counts too: 4 entries 2^30 apart.
  p = plan_gather(desc(kDst, DType::F32, {4, 8}, {8, 1}), desc(kSrc, DType::F32, {9, 8}, {8, 1}), 0,
                  desc(kIdx, DType::I32, {4}, {int64_t(1) << 30}), props);
  EXPECT_FALSE(p.index32);
}

// The cases: a 1-d scalar gather of 10^6 and 10^7 int64 indices from
// 10^7 fp32 values, and 10^5 rows of 256 fp32.
TEST(PlanGather, ScalarAndRowGathersOfTheBenchmark) {
  DeviceProps props;  // an H100: 132 SMs x 2048 threads
  void* const kIdx = reinterpret_cast<void*>(uintptr_t(0x7f2000000000));
  const int64_t n_src = 10000000;
  for (int64_t n : {int64_t(1000000), int64_t(10000000)}) {
    const KernelPlan p = plan_gather(desc(kDst, DType::F32, {n}, {1}),
                                     desc(kSrc, DType::F32, {n_src}, {1}), 0,
                                     desc(kIdx, DType::I64, {n}, {1}), props);
    ASSERT_EQ(p.kind, KernelKind::Elementwise);
    EXPECT_EQ(p.gather, GatherKind::Elements);  // one thread per output element
    EXPECT_EQ(p.unit_bytes, 4);
    EXPECT_EQ(p.numel, n);
    ASSERT_EQ(p.it.ndim, 1);
    EXPECT_EQ(p.it.strides[0][0], 1);
    EXPECT_EQ(p.it.strides[1][0], 0);
    EXPECT_EQ(p.it.strides[2][0], 1);
    EXPECT_EQ(p.gather_size, n_src);
    EXPECT_EQ(p.gather_stride, 1);
    EXPECT_TRUE(p.index32);
    EXPECT_EQ(p.launch.block, 256);
    // Below four waves (4 x 132 x 2048 = 1081344 threads): one element per
    // thread; above: four, a block apart, grid-stride beyond.
    EXPECT_EQ(p.launch.items, n < 1081344 ? 1 : 4);
    EXPECT_EQ(p.launch.grid, (n + 256 * p.launch.items - 1) / (256 * p.launch.items));
  }
  // int32 indices plan the same (the index is operand 2, in its own elements).
  KernelPlan p = plan_gather(desc(kDst, DType::F32, {1000000}, {1}),
                             desc(kSrc, DType::F32, {n_src}, {1}), 0,
                             desc(kIdx, DType::I32, {1000000}, {1}), props);
  EXPECT_EQ(p.gather, GatherKind::Elements);
  EXPECT_EQ(p.it.strides[2][0], 1);
  // 10^5 rows of 256 fp32 out of 10^6: 64 units of 16 bytes per row.
  p = plan_gather(desc(kDst, DType::F32, {100000, 256}, {256, 1}),
                  desc(kSrc, DType::F32, {1000000, 256}, {256, 1}), 0,
                  desc(kIdx, DType::I64, {100000}, {1}), props);
  ASSERT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_EQ(p.numel, 100000 * 64);
  ASSERT_EQ(p.it.ndim, 2);
  EXPECT_EQ(p.it.sizes[0], 100000);
  EXPECT_EQ(p.it.sizes[1], 64);
  EXPECT_EQ(p.it.strides[0][0], 64);
  EXPECT_EQ(p.it.strides[1][0], 0);
  EXPECT_EQ(p.it.strides[2][0], 1);
  EXPECT_EQ(p.gather_stride, 64);
  EXPECT_TRUE(p.index32);  // 2.56 x 10^8 elements, 6.4 x 10^7 units
  EXPECT_EQ(p.launch.items, 4);
}

// Which runs vectorize: only the innermost dim when it is stride 1 in dst
// and src and not the selected dim; widths follow the run length, both
// addresses, the outer strides and the source's stride along dim.
TEST(PlanGather, RowUnitsFollowLengthAlignmentAndStrides) {
  DeviceProps props;
  void* const kIdx = reinterpret_cast<void*>(uintptr_t(0x7f2000000000));
  const TensorDesc ix = desc(kIdx, DType::I32, {10}, {1});
  auto plan = [&](const TensorDesc& d, const TensorDesc& s, int dim) {
    return plan_gather(d, s, dim, ix, props);
  };
  // Rows of 6 halves (12 bytes): 4-byte units.
  KernelPlan p = plan(desc(kDst, DType::F16, {10, 6}, {6, 1}), desc(kSrc, DType::F16, {40, 6}, {8, 1}), 0);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 4);
  EXPECT_EQ(p.gather_stride, 4);  // 16 bytes
  // The source's rows 24 bytes apart: 8-byte units though the rows are 16.
  p = plan(desc(kDst, DType::F32, {10, 4}, {4, 1}), desc(kSrc, DType::F32, {40, 4}, {6, 1}), 0);
  EXPECT_EQ(p.unit_bytes, 8);
  EXPECT_EQ(p.gather_stride, 3);
  // The destination one element off 16-byte alignment: element units.
  p = plan(desc(at(kDst, 4), DType::F32, {10, 8}, {8, 1}), desc(kSrc, DType::F32, {40, 8}, {8, 1}), 0);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 4);
  EXPECT_EQ(p.gather_stride, 8);
  // A column slice of the source (rows of 64 out of 128 doubles): 16 bytes.
  p = plan(desc(kDst, DType::F64, {10, 64}, {64, 1}), desc(kSrc, DType::F64, {40, 64}, {128, 1}), 0);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_EQ(p.gather_stride, 64);
  // Along a middle dim of [A, B, C] (C contiguous in both): rows of C.
  p = plan(desc(kDst, DType::F32, {3, 10, 8}, {80, 8, 1}),
           desc(kSrc, DType::F32, {3, 20, 8}, {160, 8, 1}), 1);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 16);
  ASSERT_EQ(p.it.ndim, 3);
  EXPECT_EQ(p.it.strides[1][0], 40);  // 160 floats = 40 units
  EXPECT_EQ(p.it.strides[1][1], 0);
  EXPECT_EQ(p.it.strides[2][1], 1);
  EXPECT_EQ(p.gather_stride, 2);
  // The same dim of a permuted source ([A, B, C] from a [C, B, A] buffer):
  // no contiguous run, one element per unit.
  p = plan(desc(kDst, DType::F32, {3, 10, 8}, {80, 8, 1}),
           desc(kSrc, DType::F32, {3, 20, 8}, {1, 3, 60}), 1);
  EXPECT_EQ(p.gather, GatherKind::Elements);
  EXPECT_EQ(p.unit_bytes, 4);
  // Along the innermost dim (a column gather): the index varies there.
  p = plan(desc(kDst, DType::F32, {16, 10}, {10, 1}), desc(kSrc, DType::F32, {16, 64}, {64, 1}), 1);
  EXPECT_EQ(p.gather, GatherKind::Elements);
  EXPECT_EQ(p.unit_bytes, 4);
  // A source flipped along the innermost dim reads backwards: elements.
  p = plan(desc(kDst, DType::F32, {10, 8}, {8, 1}), desc(at(kSrc, 28), DType::F32, {40, 8}, {8, -1}), 0);
  EXPECT_EQ(p.gather, GatherKind::Elements);
  // One selected row (dims of size 1 vanish): one dim, still rows.
  p = plan_gather(desc(kDst, DType::F32, {1, 8}, {8, 1}), desc(kSrc, DType::F32, {40, 8}, {8, 1}), 0,
                  desc(kIdx, DType::I64, {1}, {1}), props);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 16);
  ASSERT_EQ(p.it.ndim, 1);
  EXPECT_EQ(p.it.sizes[0], 2);
  EXPECT_EQ(p.gather_stride, 2);
  // 16-byte elements keep the split rule (complex128 at 8 mod 16).
  p = plan(desc(kDst, DType::C128, {10, 4}, {4, 1}), desc(at(kSrc, 8), DType::C128, {40, 4}, {4, 1}), 0);
  EXPECT_EQ(p.gather, GatherKind::Rows);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_TRUE(p.split16);
  // Every other plan says None.
  EXPECT_EQ(plan_copy(desc(kDst, DType::F32, {10, 8}, {8, 1}), desc(kSrc, DType::F32, {10, 8}, {16, 1}),
                      props).gather,
            GatherKind::None);
}

TEST(PlanIndexCheck, ScansOnlyTheDistinctElements) {
  DeviceProps props;
  void* const kIdx = reinterpret_cast<void*>(uintptr_t(0x7f2000000000));
  // Expanded to 2^40 (or any length): one element, read back, no kernel.
  IndexCheckPlan c = plan_index_check(desc(kIdx, DType::I64, {int64_t(1) << 40}, {0}), props);
  EXPECT_EQ(c.count, 1);
  EXPECT_EQ(c.launch.grid, 0);
  EXPECT_EQ(plan_index_check(desc(kIdx, DType::I32, {0}, {1}), props).count, 0);
  EXPECT_EQ(plan_index_check(desc(kIdx, DType::I32, {0}, {0}), props).count, 0);
  EXPECT_EQ(plan_index_check(desc(kIdx, DType::I32, {1}, {7}), props).count, 1);
  c = plan_index_check(desc(kIdx, DType::I32, {1000}, {-3}), props);
  EXPECT_EQ(c.count, 1000);
  EXPECT_EQ(c.stride, -3);
  EXPECT_EQ(c.launch.block, 256);
  EXPECT_EQ(c.launch.grid, 4);
}

// ---- executing plans on the host ---------------------------------------------------------

// One element operation: copy (with conversion) or an in-place f32 add.
enum class Op { Copy, AddF32 };

// The buffers a test case owns: every access the emulators make must land
// inside one of them (a plan that strays is a failure, not a crash).
std::vector<std::pair<const unsigned char*, size_t>>& buffers() {
  static std::vector<std::pair<const unsigned char*, size_t>> b;
  return b;
}
bool in_bounds(const void* p, size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (const auto& b : buffers())
    if (c >= b.first && c + n <= b.first + b.second) return true;
  ADD_FAILURE() << "access outside the test buffers";
  return false;
}

void apply_elem(Op op, char* d, DType dd, const char* s, DType sd) {
  if (!in_bounds(d, dtype_size(dd)) || !in_bounds(s, dtype_size(sd))) return;
  if (op == Op::AddF32) {
    float a, b;
    std::memcpy(&a, d, 4);
    std::memcpy(&b, s, 4);
    a += b;
    std::memcpy(d, &a, 4);
    return;
  }
  if (dd == sd) {  // same dtype: bits move unchanged (NaN payloads included)
    std::memcpy(d, s, dtype_size(dd));
    return;
  }
  dispatch_dtype(dd, [&](auto dv) {
    using D = decltype(dv);
    dispatch_dtype(sd, [&](auto sv) {
      using S = decltype(sv);
      S x;
      std::memcpy(&x, s, sizeof(S));
      const D y = convert<D>(x);
      std::memcpy(d, &y, sizeof(D));
    });
  });
}

template <typename Index>
void run_elementwise(const KernelPlan& p, char* dst, DType dd, const char* src, DType sd, Op op) {
  const auto calc = make_offset_calc<Index, 2>(p);
  using Offset = typename std::make_signed<Index>::type;
  const int64_t ud = p.unit_bytes ? p.unit_bytes : int64_t(dtype_size(dd));
  const int64_t us = p.unit_bytes ? p.unit_bytes : int64_t(dtype_size(sd));
  for (int64_t lin = 0; lin < p.numel; ++lin) {
    Offset o[2];
    if (p.contiguous) {
      o[0] = o[1] = static_cast<Offset>(lin);
    } else {
      calc.get(static_cast<Index>(lin), o);
    }
    char* d = dst + o[0] * ud;
    const char* s = src + o[1] * us;
    if (p.unit_bytes) {
      // The kernels move whole units: aligned as planned.
      ASSERT_EQ(reinterpret_cast<uintptr_t>(d) % p.unit_bytes, 0u);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(s) % p.unit_bytes, 0u);
      ASSERT_EQ(op, Op::Copy);
      if (!in_bounds(d, p.unit_bytes) || !in_bounds(s, p.unit_bytes)) return;
      std::memcpy(d, s, static_cast<size_t>(p.unit_bytes));
    } else {
      apply_elem(op, d, dd, s, sd);
    }
  }
}

// The CUDA transpose kernel's loops: a 32 x 8 block per tile of tile_i x
// tile_j elements (sides from the larger element size), rows strided by 8;
// transpose_elems_i elements per thread along a source row when loading
// (one 4-byte access when packed), each converted into the shared tile of
// destination elements, padded by one element; transpose_elems_j along a
// destination row when storing.
template <typename Index>
void run_transpose(const KernelPlan& p, char* dst, DType dd, const char* src, DType sd, Op op) {
  const TransposeParams<Index> t = make_transpose_params<Index>(p);
  using Offset = typename TransposeParams<Index>::Offset;
  const int ed = static_cast<int>(dtype_size(dd)), es = static_cast<int>(dtype_size(sd));
  const int wide = ed > es ? ed : es;
  const int TI = p.tile_i, TJ = p.tile_j, PI = transpose_elems_i(wide), PJ = transpose_elems_j(wide);
  ASSERT_EQ(TI, transpose_tile_i(wide));
  ASSERT_EQ(TJ, transpose_tile_j(wide));
  ASSERT_EQ(TI, kTransposeBlockX * PI);  // a warp covers one tile row
  ASSERT_EQ(TJ, kTransposeBlockX * PJ);
  ASSERT_EQ(TI % kTransposeBlockY, 0);
  ASSERT_EQ(TJ % kTransposeBlockY, 0);
  // A packed side moves a thread's elements of a row as one 4-byte access.
  if (p.pack_src) ASSERT_TRUE(PI > 1 && PI * es == 4);
  if (p.pack_dst) ASSERT_TRUE(PJ > 1 && PJ * ed == 4);
  std::vector<char> smem(static_cast<size_t>(TJ) * (TI + 1) * ed);
  ASSERT_LE(static_cast<int64_t>(smem.size()), DeviceProps{}.shared_mem_per_block);
  buffers().push_back({reinterpret_cast<const unsigned char*>(smem.data()), smem.size()});
  struct Pop {
    ~Pop() { buffers().pop_back(); }
  } pop;
  auto sm_at = [&](int r, int c) { return &smem[(static_cast<size_t>(r) * (TI + 1) + c) * ed]; };
  for (Index tile = 0; tile < t.total_tiles; ++tile) {
    Index i0, j0;
    Offset off[2];
    t.tile_origin(tile, &i0, &j0, off, TI, TJ);
    // load: tile rows along j, threads along i
    for (int ty = 0; ty < kTransposeBlockY; ++ty)
      for (int r = ty; r < TJ; r += kTransposeBlockY) {
        const Index j = j0 + r;
        for (int tx = 0; tx < kTransposeBlockX; ++tx) {
          const Index ib = i0 + static_cast<Index>(tx * PI);
          if (t.pack_src && j < t.size_j && ib < t.size_i) {
            ASSERT_LE(ib + PI, t.size_i);  // a pack is all in or all out
            const char* s = src + (off[1] + static_cast<Offset>(ib) +
                                   static_cast<Offset>(j) * t.src_sj) * es;
            ASSERT_EQ(reinterpret_cast<uintptr_t>(s) % 4, 0u);
          }
          for (int q = 0; q < PI; ++q) {
            const Index i = ib + static_cast<Index>(q);
            if (j < t.size_j && i < t.size_i) {
              const char* sp =
                  src + (off[1] + static_cast<Offset>(i) + static_cast<Offset>(j) * t.src_sj) * es;
              // Elements move as words of up to 8 bytes, aligned.
              ASSERT_EQ(reinterpret_cast<uintptr_t>(sp) % static_cast<uintptr_t>(std::min(es, 8)), 0u);
              apply_elem(Op::Copy, sm_at(r, tx * PI + q), dd, sp, sd);
            }
          }
        }
      }
    // store: tile rows along i, threads along j
    for (int ty = 0; ty < kTransposeBlockY; ++ty)
      for (int r = ty; r < TI; r += kTransposeBlockY) {
        const Index i = i0 + r;
        for (int tx = 0; tx < kTransposeBlockX; ++tx) {
          const Index jb = j0 + static_cast<Index>(tx * PJ);
          if (t.pack_dst && i < t.size_i && jb < t.size_j) {
            ASSERT_LE(jb + PJ, t.size_j);
            const char* d = dst + (off[0] + static_cast<Offset>(i) * t.dst_si + static_cast<Offset>(jb)) * ed;
            ASSERT_EQ(reinterpret_cast<uintptr_t>(d) % 4, 0u);
          }
          for (int q = 0; q < PJ; ++q) {
            const Index j = jb + static_cast<Index>(q);
            if (i < t.size_i && j < t.size_j) {
              char* dp = dst + (off[0] + static_cast<Offset>(i) * t.dst_si + static_cast<Offset>(j)) * ed;
              ASSERT_EQ(reinterpret_cast<uintptr_t>(dp) % static_cast<uintptr_t>(std::min(ed, 8)), 0u);
              apply_elem(op, dp, dd, sm_at(tx * PJ + q, r), dd);
            }
          }
        }
      }
  }
}

template <typename Index>
void run_plan(const KernelPlan& p, const TensorDesc& dst, const TensorDesc& src, Op op) {
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  const char* s = static_cast<const char*>(src.data) + p.byte_offset[1];
  switch (p.kind) {
    case KernelKind::Empty: return;
    case KernelKind::Memcpy:
      ASSERT_EQ(op, Op::Copy);
      if (!in_bounds(d, p.memcpy_bytes) || !in_bounds(s, p.memcpy_bytes)) return;
      std::memcpy(d, s, static_cast<size_t>(p.memcpy_bytes));
      return;
    case KernelKind::Elementwise: run_elementwise<Index>(p, d, dst.dtype, s, src.dtype, op); return;
    case KernelKind::Transpose: run_transpose<Index>(p, d, dst.dtype, s, src.dtype, op); return;
  }
}

std::string describe(const TensorDesc& d) {
  std::string s = std::string(dtype_name(d.dtype)) + " sizes [";
  for (int i = 0; i < d.ndim; ++i) s += std::to_string(d.sizes[i]) + (i + 1 < d.ndim ? "," : "");
  s += "] strides [";
  for (int i = 0; i < d.ndim; ++i) s += std::to_string(d.strides[i]) + (i + 1 < d.ndim ? "," : "");
  return s + "] addr%16=" + std::to_string(reinterpret_cast<uintptr_t>(d.data) % 16);
}

std::string describe(const KernelPlan& p) {
  std::string s = "kind " + std::to_string(int(p.kind)) + " unit " + std::to_string(p.unit_bytes) +
                  " i " + std::to_string(p.dim_i) + " j " + std::to_string(p.dim_j) + " tile " +
                  std::to_string(p.tile_i) + "x" + std::to_string(p.tile_j) + (p.pack_src ? " ps" : "") +
                  (p.pack_dst ? " pd" : "") +
                  " off " + std::to_string(p.byte_offset[0]) + "/" + std::to_string(p.byte_offset[1]) +
                  " dims";
  for (int d = 0; d < p.it.ndim; ++d)
    s += " (" + std::to_string(p.it.sizes[d]) + ":" + std::to_string(p.it.strides[0][d]) + "," +
         std::to_string(p.it.strides[1][d]) + ")";
  return s;
}

// The naive reference: every multi-index, row-major.
void reference(const TensorDesc& dst, const TensorDesc& src, Op op) {
  const int64_t n = dst.numel();
  const int64_t ed = int64_t(dtype_size(dst.dtype)), es = int64_t(dtype_size(src.dtype));
  int64_t idx[kMaxDims] = {};
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t od = 0, os = 0;
    for (int d = 0; d < dst.ndim; ++d) {
      od += idx[d] * dst.strides[d];
      os += idx[d] * src.strides[d];
    }
    apply_elem(op, static_cast<char*>(dst.data) + od * ed, dst.dtype,
               static_cast<const char*>(src.data) + os * es, src.dtype);
    for (int d = dst.ndim - 1; d >= 0; --d) {
      if (++idx[d] < dst.sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// A random strided view of `sizes` over its own buffer: dims laid out in a
// random physical order, some stepped (2) or reversed, optionally shifted by
// one element off alignment, optionally broadcast (stride 0) in some dims.
struct View {
  std::vector<unsigned char> buf;
  TensorDesc d;
};

View random_view(std::mt19937& rng, const std::vector<int64_t>& sizes, DType dt, bool allow_broadcast) {
  const int nd = static_cast<int>(sizes.size());
  const int64_t elem = int64_t(dtype_size(dt));
  std::vector<int64_t> step(nd), phys(nd);
  std::vector<bool> bcast(nd, false);
  for (int i = 0; i < nd; ++i) {
    const int r = static_cast<int>(rng() % 10);
    step[i] = r < 6 ? 1 : r < 7 ? 2 : r < 9 ? -1 : -2;
    bcast[i] = allow_broadcast && rng() % 6 == 0;
    phys[i] = bcast[i] ? 1 : sizes[i] * (step[i] < 0 ? -step[i] : step[i]);
  }
  std::vector<int> order(nd);
  std::iota(order.begin(), order.end(), 0);
  if (rng() % 4 != 0) std::shuffle(order.begin(), order.end(), rng);  // else row-major
  std::vector<int64_t> pstride(nd);
  int64_t total = 1;
  for (int k = nd - 1; k >= 0; --k) {
    pstride[order[k]] = total;
    total *= phys[order[k]];
  }
  View v;
  const int64_t shift = rng() % 3 == 0 ? 1 : 0;
  v.buf.resize(static_cast<size_t>((total + 1) * elem + 64));
  for (auto& b : v.buf) b = static_cast<unsigned char>(rng());
  // 64-byte aligned start inside the buffer.
  const uintptr_t base = (reinterpret_cast<uintptr_t>(v.buf.data()) + 15) & ~uintptr_t(15);
  int64_t first = shift;
  v.d.dtype = dt;
  v.d.ndim = nd;
  for (int i = 0; i < nd; ++i) {
    v.d.sizes[i] = sizes[i];
    v.d.strides[i] = bcast[i] ? 0 : pstride[i] * step[i];
    if (step[i] < 0 && !bcast[i]) first += (sizes[i] - 1) * pstride[i] * -step[i];
  }
  v.d.data = reinterpret_cast<void*>(base + static_cast<uintptr_t>(first * elem));
  return v;
}

std::vector<int64_t> random_sizes(std::mt19937& rng) {
  const int nd = static_cast<int>(rng() % 6);  // 0..5 dims
  std::vector<int64_t> s(nd);
  for (auto& x : s) {
    const int r = static_cast<int>(rng() % 10);
    x = r == 0 ? 1 : r < 5 ? 1 + rng() % 6 : r < 9 ? 16 + rng() % 60 : 100 + rng() % 90;
  }
  // Keep the element count modest.
  int64_t n = 1;
  for (auto& x : s) {
    if (n * x > 60000) x = 1;
    n *= x;
  }
  return s;
}

const DType kAll[] = {DType::Bool, DType::U8,  DType::I8,   DType::I16, DType::I32,
                      DType::I64,  DType::F16, DType::BF16, DType::F32, DType::F64};

void check_copy(std::mt19937& rng, const std::vector<int64_t>& sizes, DType dd, DType sd,
                int* kinds) {
  View dst = random_view(rng, sizes, dd, false);
  View src = random_view(rng, sizes, sd, true);
  // Bool sources must hold 0/1 bytes to be valid bools.
  if (sd == DType::Bool)
    for (auto& b : src.buf) b &= 1;
  View expect = dst;
  expect.d.data = expect.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
  View got32 = dst;
  got32.d.data = got32.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
  buffers() = {{dst.buf.data(), dst.buf.size()}, {src.buf.data(), src.buf.size()},
               {expect.buf.data(), expect.buf.size()}, {got32.buf.data(), got32.buf.size()}};
  reference(expect.d, src.d, Op::Copy);
  DeviceProps props;
  const KernelPlan p = plan_copy(dst.d, src.d, props);
  SCOPED_TRACE("dst " + describe(dst.d) + " src " + describe(src.d) + " plan " + describe(p));
  kinds[static_cast<int>(p.kind)]++;
  if (p.kind == KernelKind::Transpose) {  // the CPU's tiling rule picked i
    const int64_t* strides[2] = {dst.d.strides, src.d.strides};
    ASSERT_EQ(p.dim_i, pick_tile_dim(plan_iteration(2, dst.d.sizes, dst.d.ndim, strides, true), 1));
  }
  run_plan<uint64_t>(p, dst.d, src.d, Op::Copy);
  if (p.index32) run_plan<uint32_t>(p, got32.d, src.d, Op::Copy);
  ASSERT_TRUE(dst.buf == expect.buf) << "64-bit plan, kind " << int(p.kind) << " sizes "
                                     << ::testing::PrintToString(sizes);
  if (p.index32) {
    ASSERT_TRUE(got32.buf == expect.buf) << "32-bit plan, kind " << int(p.kind);
  }
}

TEST(PlanExecution, RandomSameDtypeCopies) {
  std::mt19937 rng(7);
  int kinds[4] = {};
  for (int iter = 0; iter < 700; ++iter) {
    const DType dt = kAll[rng() % 10];
    check_copy(rng, random_sizes(rng), dt, dt, kinds);
    if (HasFatalFailure()) return;
  }
  // The random views reach every kernel.
  EXPECT_GT(kinds[int(KernelKind::Memcpy)], 20);
  EXPECT_GT(kinds[int(KernelKind::Elementwise)], 100);
  EXPECT_GT(kinds[int(KernelKind::Transpose)], 20);
}

TEST(PlanExecution, PermutationsOfDenseTensors) {
  // The benchmark's shapes, shrunk: every permutation of 2-5 dims.
  std::mt19937 rng(11);
  int kinds[4] = {};
  const std::vector<std::vector<int64_t>> shapes = {
      {67, 45}, {16, 33, 40}, {4, 20, 17, 18}, {2, 3, 16, 4, 20}, {2, 64, 9, 9}};
  for (const auto& shape : shapes) {
    std::vector<int> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (DType dt : {DType::F32, DType::F16, DType::U8, DType::F64}) {
        // src: a permuted view of a dense tensor; dst: dense in the permuted shape.
        const int nd = static_cast<int>(shape.size());
        int64_t dense[kMaxDims];
        int64_t acc = 1;
        for (int d = nd - 1; d >= 0; --d) {
          dense[d] = acc;
          acc *= shape[d];
        }
        std::vector<unsigned char> sbuf(static_cast<size_t>(acc) * dtype_size(dt));
        for (auto& b : sbuf) b = static_cast<unsigned char>(rng());
        TensorDesc src;
        src.data = sbuf.data();
        src.dtype = dt;
        src.ndim = nd;
        std::vector<int64_t> psizes(nd);
        for (int d = 0; d < nd; ++d) {
          src.sizes[d] = shape[perm[d]];
          src.strides[d] = dense[perm[d]];
          psizes[d] = shape[perm[d]];
        }
        std::vector<unsigned char> dbuf(sbuf.size(), 0), ebuf(sbuf.size(), 0);
        TensorDesc dst = src, exp = src;
        acc = 1;
        for (int d = nd - 1; d >= 0; --d) {
          dst.strides[d] = exp.strides[d] = acc;
          acc *= psizes[d];
        }
        dst.data = dbuf.data();
        exp.data = ebuf.data();
        buffers() = {{sbuf.data(), sbuf.size()}, {dbuf.data(), dbuf.size()}, {ebuf.data(), ebuf.size()}};
        reference(exp, src, Op::Copy);
        const KernelPlan p = plan_copy(dst, src, DeviceProps{});
        kinds[int(p.kind)]++;
        run_plan<uint32_t>(p, dst, src, Op::Copy);
        ASSERT_TRUE(dbuf == ebuf) << "perm of " << ::testing::PrintToString(shape);
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  EXPECT_GT(kinds[int(KernelKind::Transpose)], 100);
  EXPECT_GT(kinds[int(KernelKind::Memcpy)], 10);
}

TEST(PlanExecution, RandomConversions) {
  std::mt19937 rng(9);
  int kinds[4] = {};
  const DType all[] = {DType::Bool, DType::U8,  DType::I8,  DType::I16, DType::I32, DType::I64,
                       DType::F16,  DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128};
  for (int iter = 0; iter < 600; ++iter) {
    const DType dd = all[rng() % 12], sd = all[rng() % 12];
    if (dd == sd) continue;
    check_copy(rng, random_sizes(rng), dd, sd, kinds);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(kinds[int(KernelKind::Transpose)], 20);
  EXPECT_EQ(kinds[int(KernelKind::Memcpy)], 0);
}

// A view over its own buffer of random bytes: `first` elements past a
// 16-byte aligned start to the lowest element it reaches.
View make_view(std::mt19937& rng, DType dt, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& strides, int64_t first) {
  const int64_t elem = int64_t(dtype_size(dt));
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < sizes.size(); ++d)
    (strides[d] < 0 ? lo : hi) += (sizes[d] - 1) * strides[d];
  View v;
  v.buf.resize(static_cast<size_t>((hi - lo + 1 + first) * elem + 16));
  for (auto& b : v.buf) b = static_cast<unsigned char>(rng());
  if (dt == DType::Bool)
    for (auto& b : v.buf) b &= 1;
  const uintptr_t base = (reinterpret_cast<uintptr_t>(v.buf.data()) + 15) & ~uintptr_t(15);
  v.d.dtype = dt;
  v.d.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < v.d.ndim; ++d) {
    v.d.sizes[d] = sizes[d];
    v.d.strides[d] = strides[d];
  }
  v.d.data = reinterpret_cast<void*>(base + static_cast<uintptr_t>((first - lo) * elem));
  return v;
}

// The tiled conversions a framework does most (x.t().half(), NCHW ->
// NHWC), executed by the emulated kernel in both index widths: odd
// extents, a reversed source, a reversed destination, starts off the
// 4-byte alignment that packing needs.
TEST(PlanExecution, TiledConversions) {
  std::mt19937 rng(13);
  struct Layout {
    std::vector<int64_t> sizes, dst_strides, src_strides;
    int64_t dst_first, src_first;
  };
  const int64_t N = 2, C = 19, H = 5, W = 7;
  const std::vector<Layout> layouts = {
      {{67, 45}, {45, 1}, {1, 67}, 0, 0},                                    // x.t(), odd sides
      {{64, 48}, {48, 1}, {1, 64}, 0, 0},                                    // even: packed
      {{64, 48}, {48, 1}, {1, 64}, 1, 1},                                    // off alignment
      {{67, 45}, {45, 1}, {-1, 67}, 0, 0},                                   // reversed along i
      {{67, 45}, {-45, 1}, {1, 67}, 0, 2},                                   // dst reversed outside
      {{N, C, H, W}, {H * W * C, 1, W * C, C}, {C * H * W, H * W, W, 1}, 0, 0},  // NCHW -> NHWC
      {{N, C, H, W}, {H * W * C, 1, W * C, C}, {C * H * W, H * W, W, 1}, 3, 1},
      {{3, 40, 33}, {33 * 40, 1, 40}, {33 * 40, 33, 1}, 0, 0},               // batched x.t()
  };
  const std::pair<DType, DType> pairs[] = {
      {DType::F16, DType::F32}, {DType::BF16, DType::F32}, {DType::F32, DType::F16},
      {DType::I8, DType::Bool}, {DType::Bool, DType::I8},  {DType::C128, DType::C64},
      {DType::C64, DType::F32}, {DType::F16, DType::U8},
  };
  for (const auto& pr : pairs)
    for (const Layout& l : layouts) {
      View dst = make_view(rng, pr.first, l.sizes, l.dst_strides, l.dst_first);
      View src = make_view(rng, pr.second, l.sizes, l.src_strides, l.src_first);
      const ptrdiff_t at_d = static_cast<unsigned char*>(dst.d.data) - dst.buf.data();
      View expect = dst, got32 = dst;
      expect.d.data = expect.buf.data() + at_d;
      got32.d.data = got32.buf.data() + at_d;
      buffers() = {{dst.buf.data(), dst.buf.size()}, {src.buf.data(), src.buf.size()},
                   {expect.buf.data(), expect.buf.size()}, {got32.buf.data(), got32.buf.size()}};
      reference(expect.d, src.d, Op::Copy);
      const KernelPlan p = plan_copy(dst.d, src.d, DeviceProps{});
      SCOPED_TRACE("dst " + describe(dst.d) + " src " + describe(src.d) + " plan " + describe(p));
      ASSERT_EQ(p.kind, KernelKind::Transpose);
      ASSERT_TRUE(p.index32);
      run_plan<uint64_t>(p, dst.d, src.d, Op::Copy);
      run_plan<uint32_t>(p, got32.d, src.d, Op::Copy);
      ASSERT_TRUE(dst.buf == expect.buf) << "64-bit index math";
      ASSERT_TRUE(got32.buf == expect.buf) << "32-bit index math";
    }
}

TEST(PlanExecution, RandomFills) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 500; ++iter) {
    const DType dt = kAll[rng() % 10];
    View dst = random_view(rng, random_sizes(rng), dt, false);
    View expect = dst;
    expect.d.data = expect.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
    const int64_t elem = int64_t(dtype_size(dt));
    unsigned char value[8];
    buffers() = {{dst.buf.data(), dst.buf.size()}, {expect.buf.data(), expect.buf.size()},
                 {value, sizeof value}};
    for (auto& b : value) b = static_cast<unsigned char>(rng());
    TensorDesc vsrc = expect.d;
    vsrc.data = value;
    for (int d = 0; d < vsrc.ndim; ++d) vsrc.strides[d] = 0;
    reference(expect.d, vsrc, Op::Copy);
    const KernelPlan p = plan_fill(dst.d, DeviceProps{});
    if (p.kind == KernelKind::Empty) continue;
    ASSERT_EQ(p.kind, KernelKind::Elementwise);
    // The kernel writes units holding unit_bytes / elem copies of the value.
    const auto calc = make_offset_calc<uint64_t, 1>(p);
    char* base = static_cast<char*>(dst.d.data) + p.byte_offset[0];
    for (int64_t lin = 0; lin < p.numel; ++lin) {
      int64_t o[1];
      if (p.contiguous) o[0] = lin;
      else calc.get(static_cast<uint64_t>(lin), o);
      char* u = base + o[0] * p.unit_bytes;
      ASSERT_TRUE(in_bounds(u, p.unit_bytes));
      ASSERT_EQ(reinterpret_cast<uintptr_t>(u) % p.unit_bytes, 0u);
      for (int64_t k = 0; k < p.unit_bytes / elem; ++k) std::memcpy(u + k * elem, value, elem);
    }
    ASSERT_TRUE(dst.buf == expect.buf) << "fill of " << dtype_name(dt);
  }
}

// The scalar ops' walk (plan_unary): 16-byte units of dst where its runs
// allow, each element of a unit updated in place, else element by element.
// The emulation adds 1 to each element's first byte, so an element the walk
// misses or visits twice, and any byte outside the view, shows.
void bump_each_element(const TensorDesc& d, int dim, unsigned char* at) {
  if (dim == d.ndim) {
    ++*at;
    return;
  }
  const int64_t elem = int64_t(dtype_size(d.dtype));
  for (int64_t i = 0; i < d.sizes[dim]; ++i) bump_each_element(d, dim + 1, at + i * d.strides[dim] * elem);
}

TEST(PlanExecution, RandomScalarOps) {
  std::mt19937 rng(7);
  int units = 0, elements = 0;
  for (int iter = 0; iter < 500; ++iter) {
    const DType dt = kAll[rng() % 10];
    View dst = random_view(rng, random_sizes(rng), dt, false);
    View expect = dst;
    expect.d.data = expect.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
    buffers() = {{dst.buf.data(), dst.buf.size()}, {expect.buf.data(), expect.buf.size()}};
    bump_each_element(expect.d, 0, static_cast<unsigned char*>(expect.d.data));
    const KernelPlan p = plan_unary(dst.d, DeviceProps{});
    if (p.kind == KernelKind::Empty) continue;
    ASSERT_EQ(p.kind, KernelKind::Elementwise);
    const int64_t elem = int64_t(dtype_size(dt));
    // 16-byte units or single elements: the two kernels launch_scalar_op has.
    ASSERT_TRUE(p.unit_bytes == 0 || (p.unit_bytes == 16 && elem < 16 && !p.split16)) << p.unit_bytes;
    const int64_t step = p.unit_bytes ? p.unit_bytes : elem;
    (p.unit_bytes ? units : elements)++;
    const auto calc = make_offset_calc<uint64_t, 1>(p);
    unsigned char* base = static_cast<unsigned char*>(dst.d.data) + p.byte_offset[0];
    for (int64_t lin = 0; lin < p.numel; ++lin) {
      int64_t o[1];
      if (p.contiguous) o[0] = lin;
      else calc.get(static_cast<uint64_t>(lin), o);
      unsigned char* u = base + o[0] * step;
      ASSERT_TRUE(in_bounds(u, static_cast<size_t>(step)));
      ASSERT_EQ(reinterpret_cast<uintptr_t>(u) % static_cast<uintptr_t>(step == 16 ? 16 : 1), 0u);
      for (int64_t k = 0; k < step / elem; ++k) ++u[k * elem];
    }
    ASSERT_TRUE(dst.buf == expect.buf) << "scalar op on " << dtype_name(dt) << " " << describe(dst.d);
  }
  // Both kernels were planned (the random views include contiguous runs).
  EXPECT_GT(units, 20);
  EXPECT_GT(elements, 20);
}

TEST(PlanUnary, SixteenByteUnitsWhereDstRunsAllow) {
  DeviceProps props;
  KernelPlan p = plan_unary(desc(kDst, DType::F16, {1000, 64}, {64, 1}), props);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_TRUE(p.contiguous);
  EXPECT_EQ(p.numel, 1000 * 64 / 8);
  // rows of 48 floats in a buffer 64 wide: units per row
  p = plan_unary(desc(kDst, DType::F32, {64, 48}, {64, 1}), props);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_FALSE(p.contiguous);
  EXPECT_EQ(p.numel, 64 * 48 / 4);
  // a start 2 bytes past 16, a transposed view, 16-byte elements: elements
  EXPECT_EQ(plan_unary(desc(at(kDst, 2), DType::F16, {1000, 64}, {64, 1}), props).unit_bytes, 0);
  p = plan_unary(desc(kDst, DType::F32, {100, 3}, {3, 100}), props);
  EXPECT_EQ(p.unit_bytes, 0);
  EXPECT_EQ(p.numel, 300);
  EXPECT_EQ(plan_unary(desc(kDst, DType::C128, {64}, {1}), props).unit_bytes, 0);
}

TEST(PlanExecution, RandomInPlaceAdds) {
  std::mt19937 rng(3);
  int kinds[4] = {};
  for (int iter = 0; iter < 600; ++iter) {
    const std::vector<int64_t> sizes = random_sizes(rng);
    View dst = random_view(rng, sizes, DType::F32, false);
    View oth = random_view(rng, sizes, DType::F32, true);
    // Small integers: float sums are exact, whatever the order.
    for (View* v : {&dst, &oth})
      for (size_t k = 0; k + 4 <= v->buf.size(); k += 4) {
        const float f = static_cast<float>(rng() % 100);
        std::memcpy(&v->buf[k], &f, 4);
      }
    const uintptr_t da = reinterpret_cast<uintptr_t>(dst.d.data);
    const uintptr_t oa = reinterpret_cast<uintptr_t>(oth.d.data);
    // Keep element alignment for the float views.
    if (da % 4 != 0 || oa % 4 != 0) continue;
    View expect = dst;
    expect.d.data = expect.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
    buffers() = {{dst.buf.data(), dst.buf.size()}, {oth.buf.data(), oth.buf.size()},
                 {expect.buf.data(), expect.buf.size()}};
    reference(expect.d, oth.d, Op::AddF32);
    const KernelPlan p = plan_binary(dst.d, oth.d, true, DeviceProps{});
    SCOPED_TRACE("dst " + describe(dst.d) + " other " + describe(oth.d) + " plan " + describe(p));
    kinds[int(p.kind)]++;
    run_plan<uint64_t>(p, dst.d, oth.d, Op::AddF32);
    ASSERT_TRUE(dst.buf == expect.buf) << "kind " << int(p.kind);
  }
  EXPECT_GT(kinds[int(KernelKind::Transpose)], 10);
}


// ---- index_select executed on the host ------------------------------------------------

// The index check kernel's loop: a grid of launch.grid x launch.block threads
// striding over [0, count), each bad position lowering the word (atomicMin).
int64_t run_index_check(const IndexCheckPlan& c, const TensorDesc& index, int64_t size) {
  if (c.count == 0) return -1;
  auto value = [&](int64_t i) -> int64_t {
    const char* p = static_cast<const char*>(index.data) +
                    i * c.stride * static_cast<int64_t>(dtype_size(index.dtype));
    if (!in_bounds(p, dtype_size(index.dtype))) return 0;
    if (index.dtype == DType::I64) {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  };
  if (c.count == 1) return index_in_range(value(0), size) ? -1 : 0;
  uint64_t word = ~uint64_t(0);
  const int64_t threads = c.launch.grid * c.launch.block;
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t i = t; i < c.count; i += threads)
      if (!index_in_range(value(i), size)) word = std::min<uint64_t>(word, uint64_t(i));
  return word == ~uint64_t(0) ? -1 : static_cast<int64_t>(word);
}

// The gather kernel: the element-wise loop over three operands with the
// CUDA functor's body (GatherUnits in cuda_index.cu). Units are elements
// (Elements) or runs of a row (Rows, up to 16 bytes, aligned as planned);
// the index is always addressed in its own elements.
template <typename Index>
void run_gather(const KernelPlan& p, const TensorDesc& dst, const TensorDesc& src,
                const TensorDesc& index) {
  if (p.kind == KernelKind::Empty) return;
  ASSERT_EQ(p.kind, KernelKind::Elementwise);
  const int elem = int(dtype_size(dst.dtype));
  ASSERT_NE(p.gather, GatherKind::None);
  ASSERT_TRUE(p.unit_bytes == elem || (p.gather == GatherKind::Rows && p.unit_bytes > elem &&
                                       p.unit_bytes <= 16 && p.unit_bytes % elem == 0))
      << "unit " << p.unit_bytes << " elem " << elem;
  const bool vector = p.unit_bytes > elem || (p.unit_bytes == 16 && !p.split16);
  const auto calc = make_offset_calc<Index, 3>(p);
  using Offset = typename std::make_signed<Index>::type;
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  const char* s = static_cast<const char*>(src.data) + p.byte_offset[1];
  const char* ix = static_cast<const char*>(index.data) + p.byte_offset[2];
  const int64_t ie = int64_t(dtype_size(index.dtype));
  for (int64_t lin = 0; lin < p.numel; ++lin) {
    Offset o[3];
    if (p.contiguous) {
      o[0] = o[1] = o[2] = static_cast<Offset>(lin);
    } else {
      calc.get(static_cast<Index>(lin), o);
    }
    const char* ip = ix + o[2] * ie;
    if (!in_bounds(ip, static_cast<size_t>(ie))) return;
    int64_t v;
    if (index.dtype == DType::I64) {
      std::memcpy(&v, ip, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, ip, 4);
      v = v32;
    }
    const Offset so = gather_source_offset(o[1], v, p.gather_size, p.gather_stride);
    char* dp = d + o[0] * p.unit_bytes;
    const char* sp = s + so * p.unit_bytes;
    if (vector) {  // one access of unit_bytes: aligned to it
      ASSERT_EQ(reinterpret_cast<uintptr_t>(dp) % p.unit_bytes, 0u) << "dst unit at " << lin;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(sp) % p.unit_bytes, 0u) << "src unit at " << lin;
    }
    if (!in_bounds(dp, p.unit_bytes) || !in_bounds(sp, p.unit_bytes)) return;
    std::memcpy(dp, sp, static_cast<size_t>(p.unit_bytes));
  }
}

// The naive reference: every multi-index of dst, row-major.
void reference_gather(const TensorDesc& dst, const TensorDesc& src, int dim,
                      const std::vector<int64_t>& idx) {
  const int64_t es = int64_t(dtype_size(dst.dtype));
  int64_t c[kMaxDims] = {};
  for (int64_t lin = 0; lin < dst.numel(); ++lin) {
    int64_t od = 0, os = 0;
    for (int d = 0; d < dst.ndim; ++d) {
      od += c[d] * dst.strides[d];
      const int64_t sc = d == dim ? wrap_index(idx[static_cast<size_t>(c[d])], src.sizes[d]) : c[d];
      os += sc * src.strides[d];
    }
    std::memcpy(static_cast<char*>(dst.data) + od * es,
                static_cast<const char*>(src.data) + os * es, static_cast<size_t>(es));
    for (int d = dst.ndim - 1; d >= 0; --d) {
      if (++c[d] < dst.sizes[d]) break;
      c[d] = 0;
    }
  }
}

// Random sources (strided, reversed, broadcast), random result layouts, random
// 1-d indices (stepped, reversed, expanded) of either dtype with negative
// entries: executing the plan, with 64- and 32-bit math, writes exactly the
// reference's bytes, and the check finds exactly the first bad position.
TEST(PlanExecution, RandomGathers) {
  std::mt19937 rng(13);
  const DType dts[] = {DType::Bool, DType::I8, DType::F16, DType::F32, DType::F64, DType::I64};
  int expanded = 0, index32 = 0;
  for (int iter = 0; iter < 600; ++iter) {
    std::vector<int64_t> sizes = random_sizes(rng);
    if (sizes.empty()) sizes.push_back(1 + rng() % 5);
    const int nd = static_cast<int>(sizes.size());
    const int dim = static_cast<int>(rng() % nd);
    const int64_t n = rng() % 7 == 0 ? 0 : 1 + rng() % 12;  // the index's length
    const int64_t src_size = 1 + rng() % 9;
    std::vector<int64_t> ssizes = sizes, dsizes = sizes;
    ssizes[dim] = src_size;
    dsizes[dim] = n;
    const DType dt = dts[rng() % 6];
    const DType it = rng() % 2 ? DType::I64 : DType::I32;
    View src = random_view(rng, ssizes, dt, true);
    View dst = random_view(rng, dsizes, dt, false);
    View ind = random_view(rng, {n}, it, true);
    if (ind.d.strides[0] == 0 && n > 1) ++expanded;
    std::vector<int64_t> idx(static_cast<size_t>(n));
    const int64_t ie = int64_t(dtype_size(it));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = static_cast<int64_t>(rng() % (2 * src_size)) - src_size;  // [-size, size)
      char* p = static_cast<char*>(ind.d.data) + i * ind.d.strides[0] * ie;
      if (it == DType::I64) {
        std::memcpy(p, &v, 8);
      } else {
        const int32_t v32 = static_cast<int32_t>(v);
        std::memcpy(p, &v32, 4);
      }
    }
    for (int64_t i = 0; i < n; ++i) {  // what the index holds (an expanded one: its last write)
      const char* p = static_cast<const char*>(ind.d.data) + i * ind.d.strides[0] * ie;
      if (it == DType::I64) {
        std::memcpy(&idx[static_cast<size_t>(i)], p, 8);
      } else {
        int32_t v32;
        std::memcpy(&v32, p, 4);
        idx[static_cast<size_t>(i)] = v32;
      }
    }
    View expect = dst, got32 = dst;
    expect.d.data = expect.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
    got32.d.data = got32.buf.data() + (static_cast<unsigned char*>(dst.d.data) - dst.buf.data());
    buffers() = {{dst.buf.data(), dst.buf.size()},       {src.buf.data(), src.buf.size()},
                 {ind.buf.data(), ind.buf.size()},       {expect.buf.data(), expect.buf.size()},
                 {got32.buf.data(), got32.buf.size()}};
    const IndexCheckPlan c = plan_index_check(ind.d, DeviceProps{});
    ASSERT_EQ(run_index_check(c, ind.d, src_size), -1);
    reference_gather(expect.d, src.d, dim, idx);
    const KernelPlan p = plan_gather(dst.d, src.d, dim, ind.d, DeviceProps{});
    SCOPED_TRACE("dim " + std::to_string(dim) + " dst " + describe(dst.d) + " src " +
                 describe(src.d) + " index " + describe(ind.d) + " plan " + describe(p));
    run_gather<uint64_t>(p, dst.d, src.d, ind.d);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(dst.buf == expect.buf) << "64-bit plan";
    if (p.index32) {
      ++index32;
      run_gather<uint32_t>(p, got32.d, src.d, ind.d);
      if (HasFatalFailure()) return;
      ASSERT_TRUE(got32.buf == expect.buf) << "32-bit plan";
    }
    // One bad value at a random position: the check names the first one.
    if (n > 0) {
      const int64_t pos = static_cast<int64_t>(rng() % n);
      const int64_t bad = rng() % 2 ? src_size + static_cast<int64_t>(rng() % 3)
                                    : -src_size - 1 - static_cast<int64_t>(rng() % 3);
      char* bp = static_cast<char*>(ind.d.data) + pos * ind.d.strides[0] * ie;
      if (it == DType::I64) {
        std::memcpy(bp, &bad, 8);
      } else {
        const int32_t b32 = static_cast<int32_t>(bad);
        std::memcpy(bp, &b32, 4);
      }
      // An expanded index has one element: every position holds the bad value.
      const int64_t want = ind.d.strides[0] == 0 ? 0 : pos;
      EXPECT_EQ(run_index_check(c, ind.d, src_size), want);
    }
  }
  EXPECT_GT(expanded, 20);
  EXPECT_GT(index32, 300);
}

// Row gathers as they come from row-major tensors: contiguous runs in both
// operands, rows padded or not, bases shifted by whole elements, the
// selected dim anywhere but innermost (sometimes innermost: elements). The
// vectorized plans (units wider than an element, checked aligned by
// run_gather) write exactly the reference's bytes, with 64- and 32-bit math.
TEST(PlanExecution, RandomRowGathers) {
  std::mt19937 rng(29);
  const DType dts[] = {DType::I8, DType::F16, DType::F32, DType::F64, DType::C128};
  int widths[17] = {};
  for (int iter = 0; iter < 2000; ++iter) {
    const int nd = 1 + static_cast<int>(rng() % 3);
    std::vector<int64_t> sizes(static_cast<size_t>(nd));
    for (auto& x : sizes) x = 1 + static_cast<int64_t>(rng() % 12);
    const int64_t row_pick = rng() % 3;  // row length: multiples of 16 bytes, or anything
    const DType dt = dts[rng() % 5];
    const int64_t elem = int64_t(dtype_size(dt));
    if (row_pick == 0) sizes.back() = (1 + rng() % 4) * 16 / std::min<int64_t>(elem, 16);
    const int dim = rng() % 5 == 0 ? nd - 1 : static_cast<int>(rng() % nd);
    const int64_t n = rng() % 9 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 10);
    const int64_t src_size = 1 + static_cast<int64_t>(rng() % 9);
    std::vector<int64_t> ssizes = sizes, dsizes = sizes;
    ssizes[static_cast<size_t>(dim)] = src_size;
    dsizes[static_cast<size_t>(dim)] = n;
    // Row-major source with its innermost rows padded by `pad` elements.
    const int64_t pad = rng() % 2 ? 0 : static_cast<int64_t>(rng() % 5) * (rng() % 2 ? 16 / std::min<int64_t>(elem, 16) : 1);
    auto row_major = [&](const std::vector<int64_t>& sz, int64_t padding, int64_t shift,
                         std::vector<unsigned char>& buf, TensorDesc& d) {
      d.dtype = dt;
      d.ndim = nd;
      int64_t total = 1;
      for (int k = nd - 1; k >= 0; --k) {
        d.sizes[k] = sz[static_cast<size_t>(k)];
        d.strides[k] = total;
        total *= sz[static_cast<size_t>(k)] + (k == nd - 1 ? padding : 0);
      }
      buf.assign(static_cast<size_t>((total + shift) * elem + 32), 0);
      for (auto& b : buf) b = static_cast<unsigned char>(rng());
      const uintptr_t base = (reinterpret_cast<uintptr_t>(buf.data()) + 15) & ~uintptr_t(15);
      d.data = reinterpret_cast<void*>(base + static_cast<uintptr_t>(shift * elem));
    };
    std::vector<unsigned char> sbuf, dbuf;
    TensorDesc src, dst;
    row_major(ssizes, pad, rng() % 4 == 0 ? static_cast<int64_t>(rng() % 3) : 0, sbuf, src);
    row_major(dsizes, 0, rng() % 4 == 0 ? static_cast<int64_t>(rng() % 3) : 0, dbuf, dst);
    const DType it = rng() % 2 ? DType::I64 : DType::I32;
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::vector<int64_t> i64(static_cast<size_t>(n) + 1);
    std::vector<int32_t> i32(static_cast<size_t>(n) + 1);
    for (int64_t i = 0; i < n; ++i) {
      idx[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % (2 * src_size)) - src_size;
      i64[static_cast<size_t>(i)] = idx[static_cast<size_t>(i)];
      i32[static_cast<size_t>(i)] = static_cast<int32_t>(idx[static_cast<size_t>(i)]);
    }
    void* ip = it == DType::I64 ? static_cast<void*>(i64.data()) : static_cast<void*>(i32.data());
    const TensorDesc ind = desc(ip, it, {n}, {1});
    std::vector<unsigned char> ebuf = dbuf, gbuf = dbuf;
    TensorDesc expect = dst, got32 = dst;
    expect.data = ebuf.data() + (static_cast<unsigned char*>(dst.data) - dbuf.data());
    got32.data = gbuf.data() + (static_cast<unsigned char*>(dst.data) - dbuf.data());
    buffers() = {{dbuf.data(), dbuf.size()},
                 {sbuf.data(), sbuf.size()},
                 {ebuf.data(), ebuf.size()},
                 {gbuf.data(), gbuf.size()},
                 {static_cast<const unsigned char*>(ip), (static_cast<size_t>(n) + 1) * dtype_size(it)}};
    reference_gather(expect, src, dim, idx);
    const KernelPlan p = plan_gather(dst, src, dim, ind, DeviceProps{});
    SCOPED_TRACE("dim " + std::to_string(dim) + " dst " + describe(dst) + " src " + describe(src) +
                 " plan " + describe(p) + " gather_stride " + std::to_string(p.gather_stride));
    if (p.kind == KernelKind::Empty) continue;
    // An innermost dim contiguous in both and not selected is always rows.
    if (dim != nd - 1 && dst.sizes[nd - 1] > 1) EXPECT_EQ(p.gather, GatherKind::Rows);
    if (p.gather == GatherKind::Rows) ++widths[p.unit_bytes];
    run_gather<uint64_t>(p, dst, src, ind);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(dbuf == ebuf) << "64-bit plan";
    if (p.index32) {
      run_gather<uint32_t>(p, got32, src, ind);
      if (HasFatalFailure()) return;
      ASSERT_TRUE(gbuf == ebuf) << "32-bit plan";
    }
  }
  // Each unit width is exercised, 16-byte units of narrower elements most.
  for (int w : {2, 4, 8, 16}) EXPECT_GT(widths[w], 30) << "unit width " << w;
}

// A long index with bad entries near the end, checked by the emulated grid:
// the lowest bad position wins, whichever thread finds it first.
TEST(PlanExecution, IndexCheckFindsTheFirstBadPosition) {
  std::vector<int32_t> v(100000, 3);
  v[99999] = 50;
  v[77777] = -9;
  v[88888] = 8;
  buffers() = {{reinterpret_cast<const unsigned char*>(v.data()), v.size() * 4}};
  TensorDesc d = desc(v.data(), DType::I32, {100000}, {1});
  const IndexCheckPlan c = plan_index_check(d, DeviceProps{});
  EXPECT_EQ(run_index_check(c, d, 8), 77777);
  EXPECT_EQ(run_index_check(c, d, 51), -1);
  // Every other element, backwards from the end: 99999, 99997, ... (the odd
  // ones: 88888 is never read).
  d = desc(v.data() + 99999, DType::I32, {50000}, {-2});
  EXPECT_EQ(run_index_check(plan_index_check(d, DeviceProps{}), d, 8), 0);
  v[99999] = 3;
  EXPECT_EQ(run_index_check(plan_index_check(d, DeviceProps{}), d, 8), (99999 - 77777) / 2);
  v[77777] = 3;
  EXPECT_EQ(run_index_check(plan_index_check(d, DeviceProps{}), d, 8), -1);
}

}  // namespace
}  // namespace sm

namespace sm {
namespace {

// complex128: 16-byte elements aligned to 8 only. Units of 16 bytes are
// 128-bit accesses only when every operand starts at a multiple of 16;
// otherwise the plan says split16 (two 8-byte words per unit).
TEST(PlanCopy, SixteenByteElementsAtEightByteAddresses) {
  DeviceProps props;
  // strided (no shared stride-1 dim): element units
  KernelPlan p = plan_copy(desc(kDst, DType::C128, {4, 5}, {10, 2}),
                           desc(kSrc, DType::C128, {4, 5}, {10, 2}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_FALSE(p.split16);
  p = plan_copy(desc(at(kDst, 8), DType::C128, {4, 5}, {10, 2}),
                desc(kSrc, DType::C128, {4, 5}, {10, 2}), props);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_TRUE(p.split16);
  // shared stride-1 rows: 16-byte units, split when the source is at 8 mod 16
  p = plan_copy(desc(kDst, DType::C128, {4, 5}, {8, 1}),
                desc(at(kSrc, 24), DType::C128, {4, 5}, {8, 1}), props);
  EXPECT_EQ(p.kind, KernelKind::Elementwise);
  EXPECT_EQ(p.unit_bytes, 16);
  EXPECT_TRUE(p.split16);
  // 8-byte elements never split (vector_width checks wider units itself)
  p = plan_copy(desc(kDst, DType::F64, {4, 5}, {8, 1}),
                desc(at(kSrc, 8), DType::F64, {4, 5}, {8, 1}), props);
  EXPECT_FALSE(p.split16);
  // fills and gathers
  EXPECT_TRUE(plan_fill(desc(at(kDst, 8), DType::C128, {7}, {3}), props).split16);
  EXPECT_FALSE(plan_fill(desc(kDst, DType::C128, {7}, {3}), props).split16);
  const TensorDesc ix = desc(kSrc, DType::I64, {3}, {1});
  EXPECT_TRUE(plan_gather(desc(kDst, DType::C128, {3, 4}, {4, 1}),
                          desc(at(kSrc, 4096 + 8), DType::C128, {5, 4}, {4, 1}), 0, ix, props)
                  .split16);
  // the transposed copy of 16-byte elements: 32 x 32 tiles, no packing
  p = plan_copy(desc(kDst, DType::C128, {64, 64}, {64, 1}),
                desc(at(kSrc, 8), DType::C128, {64, 64}, {1, 64}), props);
  EXPECT_EQ(p.kind, KernelKind::Transpose);
  EXPECT_EQ(p.tile_i, 32);
  EXPECT_EQ(p.tile_j, 32);
  EXPECT_FALSE(p.pack_src || p.pack_dst);
}

}  // namespace
}  // namespace sm
