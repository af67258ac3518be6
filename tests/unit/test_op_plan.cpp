// The operation plan (src/backend/op_plan.*): the rewrites, the exits, the
// compute type and the iteration shape every backend carries out, checked
// without a device; and the one promotion rule (core/dtype.hpp) the compute
// types and the in-place cast rule derive from.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "backend/op_plan.hpp"
#include "core/element_ops.hpp"

using sm::DType;
using sm::IterShape;
using sm::OpPlan;
using sm::PlanCompute;
using sm::PlanKind;
using sm::TensorDesc;

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
  const OpPlan same = sm::plan_copy(d, desc(g_b, DType::F32, {4, 8}, {8, 1}));
  EXPECT_EQ(same.kind, PlanKind::Copy);
  EXPECT_EQ(same.compute, PlanCompute::Bits);
  const OpPlan conv = sm::plan_copy(d, desc(g_b, DType::I16, {4, 8}, {8, 1}));
  EXPECT_EQ(conv.kind, PlanKind::Copy);
  EXPECT_EQ(conv.compute, PlanCompute::Float);
  EXPECT_EQ(sm::plan_copy(desc(g_a, DType::C128, {3}, {1}), desc(g_b, DType::U8, {3}, {1})).compute,
            PlanCompute::Complex128);
}

TEST(OpPlan, CopyOntoItselfIsNothing) {
  const TensorDesc d = desc(g_a, DType::I32, {4, 1, 8}, {8, 8, 1});
  EXPECT_EQ(sm::plan_copy(d, d).kind, PlanKind::Nothing);
  // A size-1 dim's stride never matters.
  EXPECT_EQ(sm::plan_copy(d, desc(g_a, DType::I32, {4, 1, 8}, {8, 77, 1})).kind, PlanKind::Nothing);
  // The same memory in another dtype is a conversion, another stride or
  // another start another copy.
  EXPECT_EQ(sm::plan_copy(d, desc(g_a, DType::F32, {4, 1, 8}, {8, 8, 1})).kind, PlanKind::Copy);
  EXPECT_EQ(sm::plan_copy(d, desc(g_a, DType::I32, {4, 1, 8}, {0, 8, 1})).kind, PlanKind::Copy);
  EXPECT_EQ(sm::plan_copy(d, desc(g_a + 4, DType::I32, {4, 1, 8}, {8, 8, 1})).kind, PlanKind::Copy);
  // The tensor-form FILL from itself: a copy onto itself too.
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_FILL, d, 1.0).kind, PlanKind::Nothing);
}

TEST(OpPlan, ZeroElementsAreNothingForEveryKind) {
  const TensorDesc d = desc(g_a, DType::F32, {3, 0}, {1, 3});
  const TensorDesc s = desc(g_b, DType::F64, {3, 0}, {0, 1});
  EXPECT_EQ(sm::plan_copy(d, s).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(d, SM_OP_FILL, 2.0, 0).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(d, SM_OP_ZERO, 0, 0).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(d, SM_OP_EXP, 0, 0).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_ADD, s, 1.0).kind, PlanKind::Nothing);
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_FILL, s, 1.0).kind, PlanKind::Nothing);
}

TEST(OpPlan, FillAndZeroAreFillsOfTheConvertedElement) {
  const OpPlan f = sm::plan_scalar_op(desc(g_a, DType::I8, {5}, {1}), SM_OP_FILL, -3.0, 0);
  EXPECT_EQ(f.kind, PlanKind::Fill);
  EXPECT_EQ(f.compute, PlanCompute::Bits);
  EXPECT_EQ(f.scalar_bits[0], 0xFD);
  const OpPlan h = sm::plan_scalar_op(desc(g_a, DType::F16, {2, 3}, {3, 1}), SM_OP_FILL, 1.0, 0);
  uint16_t bits = 0;
  std::memcpy(&bits, h.scalar_bits, 2);
  EXPECT_EQ(bits, 0x3C00);
  // The element is read with stride 0 everywhere.
  EXPECT_EQ(h.iter.nops, 2);
  for (int i = 0; i < h.iter.ndim; ++i) EXPECT_EQ(h.iter.strides[1][i], 0);
  std::memset(g_a, 0x5A, 16);  // stale bits must not leak into the zero
  const OpPlan z = sm::plan_scalar_op(desc(g_a, DType::C128, {2}, {1}), SM_OP_ZERO, 7.0, 8.0);
  EXPECT_EQ(z.kind, PlanKind::Fill);
  for (unsigned char c : z.scalar_bits) EXPECT_EQ(c, 0);
  EXPECT_EQ(sm::plan_fill(desc(g_a, DType::Bool, {1}, {1}), 0.5).scalar_bits[0], 1);
}

TEST(OpPlan, AbsAndSignOfBoolAreNothingAndOtherScalarOpsComputeInTheirType) {
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::Bool, {9}, {1}), SM_OP_ABS, 0, 0).kind,
            PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::Bool, {9}, {1}), SM_OP_SIGN, 0, 0).kind,
            PlanKind::Nothing);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::I8, {9}, {1}), SM_OP_SIGN, 0, 0).kind,
            PlanKind::ScalarOp);
  const OpPlan i8 = sm::plan_scalar_op(desc(g_a, DType::I8, {9}, {1}), SM_OP_ABS, 0, 0);
  EXPECT_EQ(i8.kind, PlanKind::ScalarOp);
  EXPECT_EQ(i8.op, SM_OP_ABS);
  EXPECT_EQ(i8.compute, PlanCompute::Int64);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::U64, {9}, {1}), SM_OP_ADD, 1, 0).compute,
            PlanCompute::UInt64);
  EXPECT_EQ(sm::plan_scalar_op(desc(g_a, DType::BF16, {9}, {1}), SM_OP_ADD, 1, 0).compute,
            PlanCompute::Float);
  const OpPlan c = sm::plan_scalar_op(desc(g_a, DType::F64, {2, 4}, {1, 2}), SM_OP_CLAMP, -1, 2);
  EXPECT_EQ(c.a, -1);
  EXPECT_EQ(c.b, 2);
  // The destination is read where it is written.
  for (int i = 0; i < c.iter.ndim; ++i) EXPECT_EQ(c.iter.strides[1][i], c.iter.strides[0][i]);
}

TEST(OpPlan, TensorOpsComputeInThePromotedKindAndTensorFillIsACopy) {
  const TensorDesc d = desc(g_a, DType::I32, {4}, {1});
  const OpPlan fill = sm::plan_tensor_op(d, SM_OP_FILL, desc(g_b, DType::F64, {4}, {1}), 1.0);
  EXPECT_EQ(fill.kind, PlanKind::Copy);
  EXPECT_EQ(fill.compute, PlanCompute::Int64);
  const OpPlan add = sm::plan_tensor_op(desc(g_a, DType::F16, {4}, {1}), SM_OP_ADD,
                                        desc(g_b, DType::I64, {4}, {1}), 2.5);
  EXPECT_EQ(add.kind, PlanKind::TensorOp);
  EXPECT_EQ(add.compute, PlanCompute::Float);
  EXPECT_EQ(add.alpha, 2.5);
  EXPECT_EQ(sm::plan_tensor_op(desc(g_a, DType::C64, {4}, {1}), SM_OP_MUL,
                               desc(g_b, DType::F64, {4}, {1}), 1.0)
                .compute,
            PlanCompute::Complex128);
  EXPECT_EQ(sm::plan_tensor_op(desc(g_a, DType::U64, {4}, {1}), SM_OP_SUB,
                               desc(g_b, DType::U64, {4}, {1}), 1.0)
                .compute,
            PlanCompute::Int64);  // wrap-around: every integer pair in int64
  // A tensor op always reads other, even when it is dst itself.
  EXPECT_EQ(sm::plan_tensor_op(d, SM_OP_ADD, d, 1.0).kind, PlanKind::TensorOp);
}

TEST(OpPlan, IterationShapeIsElementwiseRowsOrATransposePair) {
  // Contiguous on both sides: coalesced into one run.
  const OpPlan flat = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {8, 1}),
                                    desc(g_b, DType::F32, {4, 8}, {8, 1}));
  EXPECT_EQ(flat.iter.ndim, 1);
  EXPECT_EQ(flat.shape, IterShape::Elementwise);
  EXPECT_EQ(flat.tile_i, -1);
  // A padded destination: rows.
  const OpPlan rows = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {16, 1}),
                                    desc(g_b, DType::F32, {4, 8}, {8, 1}));
  EXPECT_EQ(rows.shape, IterShape::Rows);
  EXPECT_EQ(rows.iter.ndim, 2);
  // The source runs along dim 0: a transpose of (0, 1).
  const OpPlan tr = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {8, 1}),
                                  desc(g_b, DType::F32, {4, 8}, {1, 4}));
  EXPECT_EQ(tr.shape, IterShape::Transpose);
  EXPECT_EQ(tr.tile_i, 0);
  EXPECT_EQ(tr.tile_j, 1);
  EXPECT_EQ(tr.tile_i, sm::pick_tile_dim(tr.iter, 1));
  // A broadcast source along the row is rows of fills, never tiles.
  const OpPlan bc = sm::plan_copy(desc(g_a, DType::F32, {4, 8}, {8, 1}),
                                  desc(g_b, DType::F32, {4, 8}, {1, 0}));
  EXPECT_EQ(bc.shape, IterShape::Rows);
  // The original descriptors travel with the plan.
  EXPECT_EQ(tr.src.strides[1], 4);
  EXPECT_EQ(tr.dst.data, static_cast<void*>(g_a));
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
  const OpPlan p = sm::plan_gather(desc(g_a, DType::F64, {3, 4}, {4, 1}), src, 0, idx);
  EXPECT_EQ(p.kind, PlanKind::Gather);
  EXPECT_EQ(p.gather_size, 1);
  EXPECT_EQ(p.gather_stride, 0);
  const OpPlan q = sm::plan_gather(desc(g_a, DType::F64, {3, 4}, {4, 1}),
                                   desc(g_b, DType::F64, {2, 4}, {-4, 1}), 0, idx);
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
