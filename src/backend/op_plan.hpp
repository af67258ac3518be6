// The operation plan: what one data-moving call does, decided once on the host
// by the engine for every backend. Backends carry a plan out (Kernels::run)
// and decide nothing a plan says: which op runs after the rewrites (FILL and
// ZERO are fills of one converted element, ABS and SIGN of bool and a copy
// onto itself are nothing, the tensor-form FILL is a copy), whether anything runs at all
// (zero elements, identical operands), the compute type, the operands
// coalesced for iteration, and, for the target the plan is for (the host's
// CPU loops or a CUDA device), its tiling (the iteration shape, with the
// transpose pair and its tile sides), by the one tiling rule of
// backend/tiling.hpp. The CPU loops tile with the plan's pair and sides; the
// CUDA launch planners start from its coalesced operands and its Transpose
// decision, adding only launch geometry and the address checks of their
// kernels. Pure host code, unit-tested without a device
// (tests/unit/test_op_plan.cpp).
#pragma once

#include <cstdint>

#include "backend/backend.hpp"
#include "backend/tiling.hpp"
#include "core/element_ops.hpp"
#include "layout/coalesce.hpp"

namespace sm {

enum class PlanKind {
  Nothing,   // no element changes: nothing to launch
  Copy,      // dst[i] = convert<dst.dtype>(src[i])
  Fill,      // dst[i] = the element in scalar_bits
  ScalarOp,  // dst[i] = op(dst[i], a, b)
  TensorOp,  // dst[i] = op(dst[i], other[i]) scaled by alpha where the op says
  Gather,    // index_select: dst[.., i, ..] = src[.., wrap_index(index[i]), ..] along gather_dim
};

struct OpPlan {
  PlanKind kind = PlanKind::Nothing;
  sm_op op = SM_OP_FILL;  // ScalarOp / TensorOp
  // Elements moved unchanged (a copy within one dtype, a fill, a gather):
  // no element is computed, and the CPU moves raw bytes.
  bool bits = true;
  // Otherwise the type elements are computed in (core/element_ops.hpp): the
  // destination's for a conversion or a scalar op, the promoted pair's for a
  // tensor op. Backends dispatch their typed kernels on the dtypes, which
  // fix it; the plan states it so that it is tested once, here.
  ComputeKind compute = ComputeKind::Int64;
  // The operands as the engine described them (the backends take their data
  // pointers and dtypes from these; the walk is iter's). dst is written; src
  // is the copy's source or the tensor op's other (unused by Fill and
  // ScalarOp).
  TensorDesc dst;
  TensorDesc src;
  // Gather: the 1-d index (elements already checked by first_out_of_range).
  TensorDesc index;
  // dst (operand 0) and what is read with it (operand 1: the source, other,
  // dst itself for a scalar op, or the fill element with stride 0),
  // coalesced by plan_iteration. A gather has 3 operands over dst's sizes:
  // dst, src with stride 0 along gather_dim, and the index (stride 0 except
  // along gather_dim); the source element of each is operand 1's plus
  // wrap_index(index value, gather_size) * gather_stride.
  IterPlan iter;
  // The target the plan is for, and the walk of iter there: plan_tiling(iter,
  // ...), for a Transpose with the pair (dim_i, dim_j) and the tile sides in
  // elements along each (side_i, side_j). A gather's is Rows or Elementwise
  // (backend/tiling.hpp says why); the CPU's gather tiles only the copies it
  // derives from it (a slice per index entry), by the same rule.
  PlanTarget target = PlanTarget::Host;
  Tiling tiling;
  double a = 0, b = 0;  // ScalarOp
  double alpha = 1;     // TensorOp
  int gather_dim = -1;  // Gather, in dst's dims
  int64_t gather_size = 0, gather_stride = 0;  // src.sizes / src.strides at gather_dim
  // Fill: the fill value converted to dst.dtype (its first dtype_size bytes).
  alignas(16) unsigned char scalar_bits[kMaxElementBytes] = {};
};

// Every plan is for one target (Kernels::target() of the backend that runs it).
//
// dst = src converted (same sizes; src may be expanded with stride 0).
// A source that is dst itself (same data, dtype and strides wherever a size
// exceeds 1) is Nothing.
OpPlan plan_copy(const TensorDesc& dst, const TensorDesc& src, PlanTarget target);
// dst = value converted to dst's dtype (the engine checked it fits).
OpPlan plan_fill(const TensorDesc& dst, double value, PlanTarget target);
// An op with a scalar form (the engine checked it takes dst's dtype).
OpPlan plan_scalar_op(const TensorDesc& dst, sm_op op, double a, double b, PlanTarget target);
// An op with a tensor form; FILL is a copy.
OpPlan plan_tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha,
                      PlanTarget target);
// index_select (the preconditions of Kernels::index_select).
OpPlan plan_gather(const TensorDesc& dst, const TensorDesc& src, int dim, const TensorDesc& index,
                   PlanTarget target);

}  // namespace sm
