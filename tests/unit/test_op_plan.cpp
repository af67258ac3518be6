// The operation plan (src/backend/op_plan.*): the rewrites, the exits, the
// compute type and the iteration shape every backend carries out, checked
// without a device; and the one promotion rule (core/dtype.hpp) the compute
// types and the in-place cast rule derive from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_loops.hpp"
#include "backend/op_plan.hpp"
#include "core/element_ops.hpp"

using sm::DType;
using sm::IterShape;
using sm::OpPlan;
using sm::ComputeKind;
using sm::PlanKind;
using sm::TensorDesc;
using sm::Tiling;
constexpr sm::PlanTarget kHost = sm::PlanTarget::Host;
constexpr sm::PlanTarget kCuda = sm::PlanTarget::Cuda;

namespace {

alignas(16) unsigned char g_a[1 << 12];
alignas(16) unsigned char g_b[1 << 12];

TensorDesc desc(void* data, DType d, std::initializer_list<int64_t> sizes,
                std::initializer_list<int64_t> strides) {
  TensorDesc t;
  t.data = data;
  t.dtype = d;
  t.ndim = static_cast<int>(sizes.size());
  int i = 0;
  for (int64_t s : sizes) t.sizes[i++] = s;
  i = 0;
  for (int64_t s : strides) t.strides[i++] = s;
  return t;
}

}  // namespace

TEST(OpPlan, CopyOfOneDtypeMovesBitsAndConversionsComputeInTheDestinationType) {
  const TensorDesc d = desc(g_a, DType::F32, {4, 8}, {8, 1});
  const OpPlan same = sm::plan_copy(d, desc(g_b, DType::F32, {4, 8}, {8, 1}), kHost);
  EXPECT_EQ(same.kind, PlanKind::Copy);
  EXPECT_TRUE(same.bits);
  const OpPlan conv = sm::plan_copy(d, desc(g_b, DType::I16, {4, 8}, {8, 1}), kHost);
  EXPECT_EQ(conv.kind, PlanKind::Copy);
  EXPECT_FALSE(conv.bits);
  EXPECT_EQ(conv.compute, ComputeKind::Float);
  EXPECT_EQ(sm::plan_copy(desc(g_a, DType::C128, {3}, {1}), desc(g_b, DType::U8, {3}, {1}), kHost).compute,
            ComputeKind::ComplexDouble);
}

TEST(OpPlan, CopyOntoItselfIsNothing) {
  const TensorDesc d = desc(g_a, DType::I32, {4, 1, 8}, {8, 8, 1});
  EXPECT_EQ(sm::plan_copy(d, d, kHost).kind, PlanKind::Nothing);
  // A size-1 dim's stride never matters.
  EXPECT_EQ(sm::plan_copy(d, desc(g_a, DType::I32, {4, 1, 8}, {8, 77, 1}), kHost).kind, PlanKind::Nothing);
  // The same memory in another dtype is a conversion, another stride or
  // another start another copy.
  EXPECT_EQ(sm::plan_copy(d, desc(g_a, DType::F32, {4, 1, 8}, {8, 8, 1}), kHost).kind, PlanKind::Copy);
  EXPECT_EQ(sm::plan_copy(d, desc(g_a, DType::I32, {4, 1, 8}, {0, 8, 1}), kHost).kind, PlanKind::Copy);
  EXPECT_EQ(sm::plan_copy(d, desc(g_a + 4, DType::I32, {4, 1, 8}, {8, 8, 1}), kHost).kind, PlanKind::Copy);
  // The tensor-form FILL from itself: a copy onto itself too.
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_FILL, d, 1.0, kHost).kind, PlanKind::Nothing);
}

TEST(OpPlan, ZeroElementsAreNothingForEveryKind) {
  const TensorDesc d = desc(g_a, DType::F32, {3, 0}, {1, 3});
  const TensorDesc s = desc(g_b, DType::F64, {3, 0}, {0, 1});
  EXPECT_EQ(sm::plan_copy(d, s, kHost).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(d, SM_OP_FILL, 2.0, 0, kHost).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(d, SM_OP_ZERO, 0, 0, kHost).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(d, SM_OP_EXP, 0, 0, kHost).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_ADD, s, 1.0, kHost).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_FILL, s, 1.0, kHost).kind, PlanKind::Nothing);
}

TEST(OpPlan, FillAndZeroAreFillsOfTheConvertedElement) {
  const OpPlan f = sm::plan_scalar_op(desc(g_a, DType::I8, {5}, {1}), SM_OP_FILL, -3.0, 0, kHost);
  EXPECT_EQ(f.kind, PlanKind::Fill);
  EXPECT_TRUE(f.bits);
  EXPECT_EQ(f.scalar_bits[0], 0xFD);
  const OpPlan h = sm::plan_scalar_op(desc(g_a, DType::F16, {2, 3}, {3, 1}), SM_OP_FILL, 1.0, 0, kHost);
  uint16_t bits = 0;
  std::memcpy(&bits, h.scalar_bits, 2);
  EXPECT_EQ(bits, 0x3C00);
  // The element is read with stride 0 everywhere.
  EXPECT_EQ(h.iter.nops, 2);
  for (int i = 0; i < h.iter.ndim; ++i) EXPECT_EQ(h.iter.strides[1][i], 0);
  std::memset(g_a, 0x5A, 16);  // stale bits must not leak into the zero
  const OpPlan z = sm::plan_scalar_op(desc(g_a, DType::C128, {2}, {1}), SM_OP_ZERO, 7.0, 8.0, kHost);
  EXPECT_EQ(z.kind, PlanKind::Fill);
  for (unsigned char c : z.scalar_bits) EXPECT_EQ(c, 0);
  EXPECT_EQ(sm::plan_fill(desc(g_a, DType::Bool, {1}, {1}), 0.5, kHost).scalar_bits[0], 1);
}

TEST(OpPlan, AbsAndSignOfBoolAreNothingAndOtherScalarOpsComputeInTheirType) {
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::Bool, {9}, {1}), SM_OP_ABS, 0, 0, kHost).kind,
            PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::Bool, {9}, {1}), SM_OP_SIGN, 0, 0, kHost).kind,
            PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::I8, {9}, {1}), SM_OP_SIGN, 0, 0, kHost).kind,
            PlanKind::ScalarOp);
  const OpPlan i8 = sm::plan_scalar_op(desc(g_a, DType::I8, {9}, {1}), SM_OP_ABS, 0, 0, kHost);
  EXPECT_EQ(i8.kind, PlanKind::ScalarOp);
  EXPECT_EQ(i8.op, SM_OP_ABS);
  EXPECT_FALSE(i8.bits);
  EXPECT_EQ(i8.compute, ComputeKind::Int64);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::U64, {9}, {1}), SM_OP_ADD, 1, 0, kHost).compute,
            ComputeKind::UInt64);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::BF16, {9}, {1}), SM_OP_ADD, 1, 0, kHost).compute,
            ComputeKind::Float);
  const OpPlan c = sm::plan_scalar_op(desc(g_a, DType::F64, {2, 4}, {1, 2}), SM_OP_CLAMP, -1, 2, kHost);
  EXPECT_EQ(c.a, -1);
  EXPECT_EQ(c.b, 2);
  // The destination is read where it is written.
  for (int i = 0; i < c.iter.ndim; ++i) EXPECT_EQ(c.iter.strides[1][i], c.iter.strides[0][i]);
}

TEST(OpPlan, TensorOpsComputeInThePromotedKindAndTensorFillIsACopy) {
  const TensorDesc d = desc(g_a, DType::I32, {4}, {1});
  const OpPlan fill = sm::plan_tensor_op(d, SM_OP_FILL, desc(g_b, DType::F64, {4}, {1}), 1.0, kHost);
  EXPECT_EQ(fill.kind, PlanKind::Copy);
  EXPECT_FALSE(fill.bits);
  EXPECT_EQ(fill.compute, ComputeKind::Int64);
  const OpPlan add = sm::plan_tensor_op(desc(g_a, DType::F16, {4}, {1}), SM_OP_ADD,
                                        desc(g_b, DType::I64, {4}, {1}), 2.5, kHost);
  EXPECT_EQ(add.kind, PlanKind::TensorOp);
  EXPECT_FALSE(add.bits);
  EXPECT_EQ(add.compute, ComputeKind::Float);
  EXPECT_EQ(add.alpha, 2.5);
  EXPECT_EQ(sm::plan_tensor_op(desc(g_a, DType::C64, {4}, {1}), SM_OP_MUL,
                               desc(g_b, DType::F64, {4}, {1}), 1.0, kHost)
                .compute,
            ComputeKind::ComplexDouble);
  EXPECT_EQ(sm::plan_tensor_op(desc(g_a, DType::U64, {4}, {1}), SM_OP_SUB,
                               desc(g_b, DType::U64, {4}, {1}), 1.0, kHost)
                .compute,
            ComputeKind::Int64);  // wrap-around: every integer pair in int64
  // A tensor op always reads other, even when it is dst itself.
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_ADD, d, 1.0, kHost).kind, PlanKind::TensorOp);
}

TEST(OpPlan, IterationShapeIsElementwiseRowsOrATransposePair) {
  // Contiguous on both sides: coalesced into one run.
  const OpPlan flat = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {8, 1}),
                                    desc(g_b, DType::F32, {4, 8}, {8, 1}), kHost);
  EXPECT_EQ(flat.iter.ndim, 1);
  EXPECT_EQ(flat.tiling.shape, IterShape::Elementwise);
  EXPECT_EQ(flat.tiling.dim_i, -1);
  // A padded destination: rows.
  const OpPlan rows = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {16, 1}),
                                    desc(g_b, DType::F32, {4, 8}, {8, 1}), kHost);
  EXPECT_EQ(rows.tiling.shape, IterShape::Rows);
  EXPECT_EQ(rows.iter.ndim, 2);
  // The source runs along dim 0: a transpose of (0, 1).
  const OpPlan tr = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {8, 1}),
                                  desc(g_b, DType::F32, {4, 8}, {1, 4}), kHost);
  EXPECT_EQ(tr.tiling.shape, IterShape::Transpose);
  EXPECT_EQ(tr.tiling.dim_i, 0);
  EXPECT_EQ(tr.tiling.dim_j, 1);
  EXPECT_EQ(tr.tiling.dim_i, sm::pick_tile_dim(tr.iter, 1));
  // A broadcast source along the row is rows of fills, never tiles.
  const OpPlan bc = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {8, 1}),
                                  desc(g_b, DType::F32, {4, 8}, {1, 0}), kHost);
  EXPECT_EQ(bc.tiling.shape, IterShape::Rows);
  // The original descriptors travel with the plan.
  EXPECT_EQ(tr.src.strides[1], 4);
  EXPECT_EQ(tr.dst.data, static_cast<void*>(g_a));
}

// ---- the tiling rule, per target ----

static TensorDesc vdesc(void* data, DType d, const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides) {
  TensorDesc t;
  t.data = data;
  t.dtype = d;
  t.ndim = static_cast<int>(sizes.size());
  for (int i = 0; i < t.ndim; ++i) t.sizes[i] = sizes[i], t.strides[i] = strides[i];
  return t;
}

// The shape, pair and sides of copy plans over a table of layouts and
// dtype pairs, for the host and for a CUDA device; the expected values are
// written out, not recomputed from the rule.
TEST(OpPlanTiling, ShapePairAndSidesPerTargetOverLayoutsAndDtypes) {
  enum class S { E, R, T };  // Elementwise, Rows, Transpose
  struct Layout {
    const char* name;
    std::vector<int64_t> sizes, dst_strides, src_strides;
    S host, cuda;
    int i, j;  // the pair where either target tiles
  };
  const std::vector<Layout> layouts = {
      {"2-d transpose", {512, 256}, {256, 1}, {1, 512}, S::T, S::T, 0, 1},
      {"NCHW to NHWC", {4, 64, 32, 32}, {65536, 1, 2048, 64}, {65536, 1024, 32, 1}, S::T, S::T, 1, 2},
      {"reversed source", {64, 48}, {48, 1}, {-1, 64}, S::T, S::T, 0, 1},
      {"source stride 2 along i", {100, 100}, {100, 1}, {2, 200}, S::T, S::R, 0, 1},
      {"thin j for CUDA", {1000, 8}, {8, 1}, {1, 1000}, S::T, S::R, 0, 1},
      {"thin i for both", {3, 1000}, {1000, 1}, {1, 3}, S::R, S::R, -1, -1},
      {"4 x 4, the host's least", {4, 4}, {4, 1}, {1, 4}, S::T, S::R, 0, 1},
      {"padded destination", {64, 64}, {128, 1}, {64, 1}, S::R, S::R, -1, -1},
      {"broadcast along j", {100, 100}, {100, 1}, {1, 0}, S::R, S::R, -1, -1},
      {"contiguous", {256, 256}, {256, 1}, {256, 1}, S::E, S::E, -1, -1},
  };
  // Sides (along i, along j) by the larger element size.
  struct Sides {
    int wide;
    int64_t host_i, host_j, cuda_i, cuda_j;
  };
  const Sides sides[] = {{1, 64, 256, 128, 128}, {2, 64, 128, 64, 64}, {4, 32, 64, 64, 32},
                         {8, 16, 64, 64, 32},    {16, 8, 64, 32, 32}};
  const std::pair<DType, DType> pairs[] = {  // (dst, src)
      {DType::F32, DType::F32}, {DType::F16, DType::F32}, {DType::U8, DType::U8},
      {DType::I8, DType::Bool}, {DType::BF16, DType::F16}, {DType::F64, DType::I8},
      {DType::I64, DType::I64}, {DType::C128, DType::C128}, {DType::C128, DType::F32},
      {DType::U8, DType::C64}};
  for (const Layout& l : layouts) {
    for (const auto& pr : pairs) {
      const int wide = static_cast<int>(std::max(sm::dtype_size(pr.first), sm::dtype_size(pr.second)));
      const Sides* sd = nullptr;
      for (const Sides& x : sides)
        if (x.wide == wide) sd = &x;
      ASSERT_NE(sd, nullptr);
      for (sm::PlanTarget target : {kHost, kCuda}) {
        SCOPED_TRACE(std::string(l.name) + (target == kHost ? " host " : " cuda ") +
                     sm::dtype_name(pr.first) + " <- " + sm::dtype_name(pr.second));
        const OpPlan p = sm::plan_copy(vdesc(g_a, pr.first, l.sizes, l.dst_strides),
                                       vdesc(g_b, pr.second, l.sizes, l.src_strides), target);
        ASSERT_EQ(p.kind, PlanKind::Copy);
        EXPECT_EQ(p.target, target);
        const S want = target == kHost ? l.host : l.cuda;
        const IterShape shape = want == S::E   ? IterShape::Elementwise
                                : want == S::R ? IterShape::Rows
                                               : IterShape::Transpose;
        EXPECT_EQ(p.tiling.shape, shape);
        if (want != S::T) {
          EXPECT_EQ(p.tiling.dim_i, -1);
          EXPECT_EQ(p.tiling.side_i, 0);
          continue;
        }
        EXPECT_EQ(p.tiling.dim_i, l.i);
        EXPECT_EQ(p.tiling.dim_j, l.j);
        EXPECT_EQ(p.tiling.dim_j, p.iter.ndim - 1);
        EXPECT_EQ(p.tiling.side_i, target == kHost ? sd->host_i : sd->cuda_i);
        EXPECT_EQ(p.tiling.side_j, target == kHost ? sd->host_j : sd->cuda_j);
        if (target == kHost)  // a tile and its converted copy fit the CPU's buffer
          EXPECT_LE(p.tiling.side_i * p.tiling.side_j * wide, sm::cpu::kTileBufBytes);
      }
    }
  }
}

// Tensor ops tile as copies do; scalar ops and fills (operand 1 is dst
// itself or broadcast) and gathers never do, on either target.
TEST(OpPlanTiling, TensorOpsTileLikeCopiesAndOtherKindsNever) {
  const TensorDesc d = desc(g_a, DType::F32, {64, 64}, {64, 1});
  const TensorDesc t = desc(g_b, DType::F64, {64, 64}, {1, 64});
  for (sm::PlanTarget target : {kHost, kCuda}) {
    const OpPlan add = sm::plan_tensor_op(d, SM_OP_ADD, t, 1.0, target);
    const OpPlan copy = sm::plan_copy(d, t, target);
    EXPECT_EQ(add.tiling.shape, IterShape::Transpose);
    EXPECT_EQ(add.tiling.dim_i, copy.tiling.dim_i);
    EXPECT_EQ(add.tiling.side_i, copy.tiling.side_i);
    EXPECT_EQ(add.tiling.side_j, copy.tiling.side_j);
    const TensorDesc padded = desc(g_a, DType::F32, {64, 64}, {128, 1});
    const OpPlan abs = sm::plan_scalar_op(padded, SM_OP_ABS, 0, 0, target);
    EXPECT_EQ(abs.kind, PlanKind::ScalarOp);
    EXPECT_EQ(abs.tiling.shape, IterShape::Rows);
    EXPECT_EQ(sm::plan_fill(padded, 1.0, target).tiling.shape, IterShape::Rows);
    alignas(8) int64_t index[4] = {0, 1, 2, 3};
    const OpPlan g = sm::plan_gather(desc(g_a, DType::F32, {4, 64}, {1, 4}),
                                     desc(g_b, DType::F32, {64, 64}, {1, 64}), 0,
                                     desc(index, DType::I64, {4}, {1}), target);
    EXPECT_EQ(g.kind, PlanKind::Gather);
    EXPECT_NE(g.tiling.shape, IterShape::Transpose);
  }
}

// A gather's tiling comes from the one rule, which walks a plan with an
// index operand untiled: Elementwise in 1-d, Rows in 2-d and 3-d, on either
// target, even where operand 1 moves fastest along a dim other than the
// innermost and a copy of the same strides tiles.
TEST(OpPlanTiling, GathersAreElementwiseIn1dAndRowsAboveOnEitherTarget) {
  alignas(8) int64_t index[32];
  for (int k = 0; k < 32; ++k) index[k] = (k * 7) % 32;
  const TensorDesc idx = desc(index, DType::I64, {16}, {2});
  const auto expect_untiled = [](const OpPlan& p, int ndim, IterShape shape) {
    ASSERT_EQ(p.kind, PlanKind::Gather);
    EXPECT_EQ(p.iter.ndim, ndim);
    EXPECT_EQ(p.tiling.shape, shape);
    EXPECT_EQ(p.tiling.dim_i, -1);
    EXPECT_EQ(p.tiling.dim_j, -1);
    EXPECT_EQ(p.tiling.side_i, 0);
    EXPECT_EQ(p.tiling.side_j, 0);
  };
  for (sm::PlanTarget target : {kHost, kCuda}) {
    SCOPED_TRACE(target == kHost ? "host" : "cuda");
    expect_untiled(sm::plan_gather(desc(g_a, DType::F32, {16}, {1}),
                                   desc(g_b, DType::F32, {32}, {1}), 0, idx, target),
                   1, IterShape::Elementwise);
    // Rows of a matrix.
    expect_untiled(sm::plan_gather(desc(g_a, DType::F32, {16, 24}, {24, 1}),
                                   desc(g_b, DType::F32, {32, 24}, {24, 1}), 0, idx, target),
                   2, IterShape::Rows);
    // Planes whose source moves fastest along dim 1: operand 1's strides are
    // (0, 1, 16), which a copy tiles as the pair (1, 2) on both targets.
    const TensorDesc dst = desc(g_a, DType::F32, {16, 16, 16}, {256, 16, 1});
    const TensorDesc src = desc(g_b, DType::F32, {32, 16, 16}, {256, 1, 16});
    const OpPlan copy = sm::plan_copy(dst, desc(g_b, DType::F32, {16, 16, 16}, {0, 1, 16}), target);
    ASSERT_EQ(copy.tiling.shape, IterShape::Transpose);
    EXPECT_EQ(copy.tiling.dim_i, 1);
    expect_untiled(sm::plan_gather(dst, src, 0, idx, target), 3, IterShape::Rows);
  }
}

// A row kernel that converts f32 to f32 (a copy) and records the longest
// run it was handed: the CPU's tile path converts each whole tile in one
// call, so that run is the largest tile the loops cut.
struct Recorder {
  int64_t longest = 0;
};
static void record_row(const void* ctx, char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  auto* r = const_cast<Recorder*>(static_cast<const Recorder*>(ctx));
  r->longest = std::max(r->longest, n);
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds * 4, s + i * ss * 4, 4);
}

// The CPU loops cut tiles of the sides they are given (the plan's), never
// of sides of their own: tiles of 3 x 5 are 15 elements at most.
TEST(OpPlanTiling, CpuLoopsCutTilesOfThePlansSides) {
  constexpr int64_t kI = 40, kJ = 50;
  alignas(64) static float src[kI * kJ], dst[kI * kJ];
  for (int64_t k = 0; k < kI * kJ; ++k) src[k] = static_cast<float>(k) + 0.25f;
  // dst[i][j] = src[j][i]: the source moves fastest along i.
  OpPlan p = sm::plan_copy(desc(dst, DType::F32, {kI, kJ}, {kJ, 1}),
                           desc(src, DType::F32, {kI, kJ}, {1, kI}), kHost);
  ASSERT_EQ(p.tiling.shape, IterShape::Transpose);
  p.tiling.side_i = 3;
  p.tiling.side_j = 5;
  Recorder rec;
  sm::cpu::LoopSpec spec;
  spec.row = record_row;
  spec.ctx = &rec;
  spec.dsize = spec.ssize = 4;
  spec.bytes_per_elem = 8;
  sm::cpu::run_loops(p.iter, p.tiling, reinterpret_cast<char*>(dst),
                     reinterpret_cast<const char*>(src), spec);
  EXPECT_EQ(rec.longest, 15);
  for (int64_t i = 0; i < kI; ++i)
    for (int64_t j = 0; j < kJ; ++j) ASSERT_EQ(dst[i * kJ + j], src[j * kI + i]) << i << "," << j;
  // The same plan as rows: one run per destination row.
  rec.longest = 0;
  Tiling rows = p.tiling;
  rows.shape = IterShape::Rows;
  sm::cpu::run_loops(p.iter, rows, reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src),
                     spec);
  EXPECT_EQ(rec.longest, kJ);
}

// Plans whose sides were changed by hand still copy every element exactly
// (against the same copy walked as rows) and write nothing past the
// destination, through the CPU backend's run: same-dtype moves of 1, 2, 8
// and 16 bytes and conversions, sides that do and do not divide the extents.
TEST(OpPlanTiling, CpuCopiesAreExactWithAnySides) {
  std::mt19937_64 rng(31);
  const std::pair<DType, DType> pairs[] = {{DType::U8, DType::U8},   {DType::F16, DType::F16},
                                           {DType::F64, DType::F64}, {DType::C128, DType::C128},
                                           {DType::F16, DType::F32}, {DType::F64, DType::I8}};
  const int64_t side_pairs[][2] = {{1, 1}, {3, 5}, {7, 2}, {4, 64}, {16, 9}};
  constexpr int64_t kI = 37, kJ = 45;
  for (const auto& pr : pairs) {
    const size_t ds = sm::dtype_size(pr.first), ss = sm::dtype_size(pr.second);
    constexpr size_t kGuard = 64;  // elements of slack past both operands
    std::vector<unsigned char> src((kI * kJ + kGuard) * ss);
    for (auto& b : src) b = static_cast<unsigned char>(rng());
    if (pr.second == DType::F32)  // finite values: NaN payloads are not the subject here
      for (size_t k = 0; k < kI * kJ; ++k) {
        const float v = static_cast<float>(static_cast<int32_t>(rng() % 200001) - 100000) / 7.0f;
        std::memcpy(&src[k * 4], &v, 4);
      }
    const TensorDesc s = desc(src.data(), pr.second, {kI, kJ}, {1, kI});
    std::vector<unsigned char> want((kI * kJ + kGuard) * ds, 0xA5), got(want.size());
    OpPlan ref = sm::plan_copy(desc(want.data(), pr.first, {kI, kJ}, {kJ, 1}), s, kHost);
    ASSERT_EQ(ref.tiling.shape, IterShape::Transpose);
    ref.tiling.shape = IterShape::Rows;
    sm::cpu_kernels().run(ref);
    for (const auto& sp : side_pairs) {
      SCOPED_TRACE(std::string(sm::dtype_name(pr.first)) + " <- " + sm::dtype_name(pr.second) +
                   " sides " + std::to_string(sp[0]) + "x" + std::to_string(sp[1]));
      std::fill(got.begin(), got.end(), 0xA5);
      OpPlan p = sm::plan_copy(desc(got.data(), pr.first, {kI, kJ}, {kJ, 1}), s, kHost);
      p.tiling.side_i = sp[0];
      p.tiling.side_j = sp[1];
      sm::cpu_kernels().run(p);
      ASSERT_TRUE(got == want);
    }
  }
}

// ---- the promotion rule ----

static_assert(sm::promote_types(DType::U8, DType::I8) == DType::I16, "uint8 with int8");
static_assert(sm::promote_types(DType::U64, DType::I8) == DType::I64, "no type holds both");
static_assert(sm::promote_types(DType::F16, DType::BF16) == DType::F32, "f16 with bf16");
static_assert(sm::promote_types(DType::I64, DType::F16) == DType::F16, "the float wins");
static_assert(sm::promote_types(DType::C64, DType::F64) == DType::C128, "complex, f64 wide");
static_assert(sm::promote_types(DType::Bool, DType::U16) == DType::U16, "bool yields");
static_assert(sm::promote_types(DType::U8, DType::I32) == DType::I32, "int32 holds uint8");
static_assert(sm::promote_types(DType::U32, DType::U16) == DType::U32, "the wider unsigned");
static_assert(sm::promote_types(DType::I8, DType::U64) == DType::I64, "none holds both");

TEST(OpPlan, GatherAlongADimOfOneElementNeverStepsItsStride) {
  // Any stride is valid on a dim of one element, INT64_MIN included; the
  // plan must not hand it on to be scaled to bytes.
  const TensorDesc src = desc(g_b, DType::F64, {1, 4}, {INT64_MIN, 1});
  const TensorDesc idx = desc(g_a + 2048, DType::I64, {3}, {1});
  const OpPlan p =
      sm::plan_gather(desc(g_a, DType::F64, {3, 4}, {4, 1}), src, 0, idx, sm::PlanTarget::Host);
  EXPECT_EQ(p.kind, PlanKind::Gather);
  EXPECT_EQ(p.gather_size, 1);
  EXPECT_EQ(p.gather_stride, 0);
  const OpPlan q = sm::plan_gather(desc(g_a, DType::F64, {3, 4}, {4, 1}),
                                   desc(g_b, DType::F64, {2, 4}, {-4, 1}), 0, idx,
                                   sm::PlanTarget::Host);
  EXPECT_EQ(q.gather_stride, -4);
}

TEST(Promotion, BinaryComputeIsThePromotedTypesKind) {
  constexpr DType all[] = {DType::Bool, DType::U8,  DType::I8,  DType::I16, DType::I32,
                           DType::I64,  DType::F16, DType::BF16, DType::F32, DType::F64,
                           DType::U16,  DType::U32, DType::U64, DType::C64, DType::C128};
  for (DType a : all) {
    for (DType b : all) {
      // The rule as the compute types state it (core/element_ops.hpp).
      const bool cx = sm::is_complex(a) || sm::is_complex(b);
      const bool f64 = a == DType::F64 || b == DType::F64;
      const sm::ComputeKind want =
          cx ? (f64 || a == DType::C128 || b == DType::C128 ? sm::ComputeKind::ComplexDouble
                                                             : sm::ComputeKind::ComplexFloat)
          : f64                                       ? sm::ComputeKind::Double
          : sm::is_floating(a) || sm::is_floating(b) ? sm::ComputeKind::Float
                                                      : sm::ComputeKind::Int64;
      EXPECT_EQ(sm::binary_compute(a, b), want) << sm::dtype_name(a) << ", " << sm::dtype_name(b);
      EXPECT_EQ(sm::promote_types(a, b), sm::promote_types(b, a));
    }
  }
}

TEST(Promotion, CanCastIsPyTorchs) {
  EXPECT_FALSE(sm::can_cast(DType::F16, DType::I64));   // floating into integral
  EXPECT_FALSE(sm::can_cast(DType::C64, DType::F64));   // complex into real
  EXPECT_FALSE(sm::can_cast(DType::U8, DType::Bool));   // anything but bool into bool
  EXPECT_TRUE(sm::can_cast(DType::I64, DType::I8));     // integers narrow (wrap)
  EXPECT_TRUE(sm::can_cast(DType::F64, DType::F16));
  EXPECT_TRUE(sm::can_cast(DType::F64, DType::C64));
  EXPECT_TRUE(sm::can_cast(DType::Bool, DType::Bool));
  // The in-place rule: the promoted result must cast to the destination.
  EXPECT_FALSE(sm::can_cast(sm::promote_types(DType::I32, DType::F16), DType::I32));
  EXPECT_TRUE(sm::can_cast(sm::promote_types(DType::I32, DType::I64), DType::I32));
  EXPECT_FALSE(sm::can_cast(sm::promote_types(DType::F32, DType::C64), DType::F32));
}
