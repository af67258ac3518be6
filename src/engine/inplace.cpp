// In-place ops through views: dtype rules (PyTorch's: the result must be
// representable in the destination's dtype), overlap refusals, version bumps.
#include <cmath>

#include "core/error.hpp"
#include "engine/ops.hpp"

namespace sm {

namespace {

const char* op_name(sm_op op) {
  static const char* names[] = {"FILL", "ZERO", "ADD",  "SUB", "MUL", "DIV",
                                "CLAMP", "RELU", "NEG", "ABS", "SQRT", "EXP"};
  return op >= 0 && op <= SM_OP_EXP ? names[op] : "unknown";
}

void check_writable(const TensorImpl& t) {
  if (t.storage()->read_only())
    fail(SM_ERR_READ_ONLY, "the tensor is read-only (imported from a read-only DLPack tensor)");
  if (internal_overlap(t.layout()) == Overlap::Yes)
    fail(SM_ERR_OVERLAP,
         "the tensor has elements that overlap each other (shape %s, strides %s): an in-place "
         "write through it is ambiguous; clone it first",
         format_dims(t.layout().sizes, t.layout().ndim).c_str(),
         format_dims(t.layout().strides, t.layout().ndim).c_str());
}

// An integer tensor takes a scalar only if it is a whole number its compute
// type (int64) can hold.
void check_integral_scalar(double v, const char* what, DType d, sm_op op) {
  if (!(v == std::floor(v)) || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    fail(SM_ERR_DTYPE,
         "%s = %g is not a whole number representable in %s: in-place %s on an integer tensor "
         "would need a floating result",
         what, v, dtype_name(d), op_name(op));
}

}  // namespace

void inplace_scalar(const TensorPtr& t, sm_op op, double a, double b) {
  if (op < SM_OP_FILL || op > SM_OP_EXP) fail(SM_ERR_INVALID_ARGUMENT, "unknown op %d", op);
  const DType d = t->dtype();
  if (d == DType::Bool && op != SM_OP_FILL && op != SM_OP_ZERO)
    fail(SM_ERR_DTYPE, "in-place %s is not defined for bool tensors (only FILL and ZERO)", op_name(op));
  if (is_integral(d)) {
    switch (op) {
      case SM_OP_DIV:
      case SM_OP_SQRT:
      case SM_OP_EXP:
        fail(SM_ERR_DTYPE,
             "in-place %s on a %s tensor would produce floating results that %s cannot hold",
             op_name(op), dtype_name(d), dtype_name(d));
      case SM_OP_ADD:
      case SM_OP_SUB:
      case SM_OP_MUL: check_integral_scalar(a, "a", d, op); break;
      case SM_OP_CLAMP:
        if (!std::isnan(a)) check_integral_scalar(a, "a (min)", d, op);
        if (!std::isnan(b)) check_integral_scalar(b, "b (max)", d, op);
        break;
      default: break;  // FILL converts like copy; unary ops stay integral
    }
  }
  check_writable(*t);
  if (t->numel() > 0) {
    if (op == SM_OP_ZERO) {
      kernels_for(t->device()).scalar_op(t->desc(), SM_OP_FILL, 0.0, 0.0);
    } else {
      kernels_for(t->device()).scalar_op(t->desc(), op, a, b);
    }
  }
  t->storage()->bump_version();
}

void inplace_tensor(const TensorPtr& t, sm_op op, const TensorPtr& other_in, double alpha) {
  if (op != SM_OP_FILL && op != SM_OP_ADD && op != SM_OP_SUB && op != SM_OP_MUL && op != SM_OP_DIV)
    fail(SM_ERR_INVALID_ARGUMENT,
         "op %s (%d) does not take a tensor operand (FILL, ADD, SUB, MUL, DIV do)", op_name(op), op);
  const DType d = t->dtype();
  const DType od = other_in->dtype();
  if (op != SM_OP_FILL) {
    if (d == DType::Bool)
      fail(SM_ERR_DTYPE, "in-place %s is not defined for bool tensors", op_name(op));
    if (is_integral(d) && is_floating(od))
      fail(SM_ERR_DTYPE,
           "in-place %s of a %s operand into a %s tensor: the %s result cannot be cast to %s",
           op_name(op), dtype_name(od), dtype_name(d), dtype_name(od), dtype_name(d));
    if (is_integral(d) && op == SM_OP_DIV)
      fail(SM_ERR_DTYPE, "in-place DIV on a %s tensor would produce floating results", dtype_name(d));
    if (is_integral(d) && (op == SM_OP_ADD || op == SM_OP_SUB)) check_integral_scalar(alpha, "alpha", d, op);
  }
  const Layout& tl = t->layout();
  if (!broadcastable_to(other_in->layout().sizes, other_in->layout().ndim, tl.sizes, tl.ndim))
    fail(SM_ERR_SHAPE, "other of shape %s does not broadcast to the tensor's shape %s",
         format_dims(other_in->layout().sizes, other_in->layout().ndim).c_str(),
         format_dims(tl.sizes, tl.ndim).c_str());
  check_writable(*t);
  if (t->numel() > 0) {
    if (op == SM_OP_FILL) {
      copy_into(t, other_in);  // bumps the version
      return;
    }
    // Bring other to t's kernels (another device: a staged copy).
    TensorPtr other = other_in;
    bool copied = false;
    if (!(other->device() == t->device() ||
          (host_accessible(other->device()) && host_accessible(t->device()))))
      other = to(other_in, t->device(), other_in->dtype(), &copied);
    Layout ol = expand(other->layout(), tl.sizes, tl.ndim);
    const OverlapStatus st = overlap_status(tl, t->base_address(), t->itemsize(), ol,
                                            other->base_address(), other->itemsize());
    if (st == OverlapStatus::Partial)
      fail(SM_ERR_OVERLAP,
           "other partially overlaps the tensor (it would be read after being written); clone it first");
    if (st == OverlapStatus::TooHard) {
      other = clone(other, SM_CONTIGUOUS);
      ol = expand(other->layout(), tl.sizes, tl.ndim);
    }
    TensorDesc od_desc;
    od_desc.data = static_cast<char*>(other->storage()->data()) +
                   ol.offset * static_cast<int64_t>(other->itemsize());
    od_desc.dtype = other->dtype();
    od_desc.ndim = ol.ndim;
    for (int i = 0; i < ol.ndim; ++i) {
      od_desc.sizes[i] = ol.sizes[i];
      od_desc.strides[i] = ol.strides[i];
    }
    kernels_for(t->device()).tensor_op(t->desc(), op, od_desc, alpha);
  }
  t->storage()->bump_version();
}

}  // namespace sm
