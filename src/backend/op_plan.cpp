#include "backend/op_plan.hpp"

namespace sm {

namespace {

// The same elements in the same dtype: a copy onto itself.
bool same_elements(const TensorDesc& a, const TensorDesc& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.sizes[i] != b.sizes[i]) return false;
    if (a.sizes[i] > 1 && a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

// The walk of p.iter on p's target, by the one rule (backend/tiling.hpp),
// for every kind of plan; operand 1 has elements of read_dtype.
void set_tiling(OpPlan& p, DType read_dtype) {
  p.tiling = plan_tiling(p.iter, static_cast<int>(dtype_size(p.dst.dtype)),
                         static_cast<int>(dtype_size(read_dtype)), p.target);
}

// dst and one operand read with it, coalesced, with their tiling.
void plan_operands(OpPlan& p, const int64_t* read_strides, DType read_dtype) {
  const int64_t* strides[2] = {p.dst.strides, read_strides};
  p.iter = plan_iteration(2, p.dst.sizes, p.dst.ndim, strides, true);
  if (p.iter.empty) {
    p.kind = PlanKind::Nothing;
    return;
  }
  set_tiling(p, read_dtype);
}

}  // namespace

OpPlan plan_copy(const TensorDesc& dst, const TensorDesc& src, PlanTarget target) {
  OpPlan p;
  p.target = target;
  p.dst = dst;
  p.src = src;
  if (same_elements(dst, src)) return p;  // Nothing
  p.kind = PlanKind::Copy;
  // A conversion computes in the destination's type; one dtype moves bits.
  p.bits = dst.dtype == src.dtype;
  if (!p.bits) p.compute = scalar_compute(dst.dtype);
  plan_operands(p, src.strides, src.dtype);
  return p;
}

OpPlan plan_fill(const TensorDesc& dst, double value, PlanTarget target) {
  OpPlan p;
  p.target = target;
  p.dst = dst;
  p.kind = PlanKind::Fill;
  p.a = value;
  scalar_bits(dst.dtype, value, p.scalar_bits);
  const int64_t zero[kMaxDims] = {};
  plan_operands(p, zero, dst.dtype);
  return p;
}

OpPlan plan_scalar_op(const TensorDesc& dst, sm_op op, double a, double b, PlanTarget target) {
  if (op == SM_OP_FILL) return plan_fill(dst, a, target);
  if (op == SM_OP_ZERO) return plan_fill(dst, 0.0, target);
  OpPlan p;
  p.target = target;
  p.dst = dst;
  const OpTraits* traits = op_traits(op);
  // Ops that are the identity on truth values (the op table's kBoolIdentity)
  // have nothing to compute on bool, and no bool element is then loaded as a
  // C++ bool (a byte other than 0 or 1, which from_blob and DLPack can hand
  // over, would be undefined behaviour there).
  const bool bool_identity = dst.dtype == DType::Bool && traits && traits->on_bool == kBoolIdentity;
  if (!traits || !traits->scalar_form || bool_identity) return p;
  p.kind = PlanKind::ScalarOp;
  p.op = op;
  p.a = a;
  p.b = b;
  p.bits = false;
  p.compute = scalar_compute(dst.dtype);
  plan_operands(p, dst.strides, dst.dtype);
  return p;
}

OpPlan plan_tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha,
                      PlanTarget target) {
  if (op == SM_OP_FILL) return plan_copy(dst, other, target);
  OpPlan p;
  p.target = target;
  p.dst = dst;
  p.src = other;
  const OpTraits* traits = op_traits(op);
  if (!traits || !traits->tensor_form) return p;
  p.kind = PlanKind::TensorOp;
  p.op = op;
  p.alpha = alpha;
  p.bits = false;
  p.compute = binary_compute(dst.dtype, other.dtype);
  plan_operands(p, other.strides, other.dtype);
  return p;
}

OpPlan plan_gather(const TensorDesc& dst, const TensorDesc& src, int dim, const TensorDesc& index,
                   PlanTarget target) {
  OpPlan p;
  p.target = target;
  p.dst = dst;
  p.src = src;
  p.index = index;
  p.kind = PlanKind::Gather;
  p.gather_dim = dim;
  p.gather_size = src.sizes[dim];
  // A dim of one element is never stepped along (every index wraps to 0), and
  // its stride may be anything a view allows, INT64_MIN included: scaling it
  // to bytes would overflow.
  p.gather_stride = src.sizes[dim] > 1 ? src.strides[dim] : 0;
  // The source without dim and the index along dim only, both over dst's
  // sizes: every operand's offset is then linear in dst's coordinates, so
  // coalescing and reordering apply unchanged.
  int64_t ss[kMaxDims] = {}, is[kMaxDims] = {};
  for (int d = 0; d < dst.ndim; ++d) {
    ss[d] = d == dim ? 0 : src.strides[d];
    is[d] = d == dim ? index.strides[0] : 0;
  }
  const int64_t* strides[3] = {dst.strides, ss, is};
  p.iter = plan_iteration(3, dst.sizes, dst.ndim, strides, true);
  if (p.iter.empty) p.kind = PlanKind::Nothing;
  // Rows or Elementwise: the rule never tiles a walk with an index operand.
  set_tiling(p, src.dtype);
  return p;
}

void Kernels::copy(const TensorDesc& dst, const TensorDesc& src) {
  run(plan_copy(dst, src, target()));
}

void Kernels::scalar_op(const TensorDesc& dst, sm_op op, double a, double b) {
  run(plan_scalar_op(dst, op, a, b, target()));
}

void Kernels::index_select(const TensorDesc& dst, const TensorDesc& src, int dim,
                           const TensorDesc& index) {
  run(plan_gather(dst, src, dim, index, target()));
}

void Kernels::tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha) {
  run(plan_tensor_op(dst, op, other, alpha, target()));
}

}  // namespace sm
