// In-place ops through views: the dtype rules of the op table
// (core/element_ops.hpp; PyTorch's: the result must be representable in the
// destination's dtype), the write rules (copies.cpp), version bumps.
#include <cmath>
#include <string>

#include "backend/op_plan.hpp"
#include "core/element_ops.hpp"
#include "core/error.hpp"
#include "core/scalar_checks.hpp"
#include "engine/ops.hpp"
#include "layout/shape_inference.hpp"

namespace sm {

namespace {

// An integer tensor takes a scalar operand only if it is a whole number its
// compute type can hold (core/scalar_checks: integer_operand_fits).
void check_integral_scalar(double v, const char* what, DType d, sm_op op) {
  if (!integer_operand_fits(d, v))
    fail(SM_ERR_DTYPE,
         "%s = %g is not a whole number representable in %s: in-place %s on an integer tensor "
         "would need a floating result",
         what, v, dtype_name(d), op_name(op));
}

// A scalar that becomes an element of dtype d (a fill value, a clamp bound)
// must fit it: PyTorch refuses it rather than wrapping or saturating, and so
// do we. alpha is a multiplier in the promoted type: an unsigned type also
// takes -max..-1 (they wrap, as PyTorch's integer alpha does).
void check_scalar_fits(double v, const char* what, DType d, sm_op op, bool multiplier = false) {
  const std::string context = std::string("in-place ") + op_name(op) + " refuses it";
  require_scalar_fits(d, v, what, context.c_str(), multiplier);
}

// The ops the table marks for bool tensors, for messages: "FILL, ZERO, ...".
std::string ops_on_bool() {
  std::string names;
  for (int i = 0; const OpTraits* t = op_traits(static_cast<sm_op>(i)); ++i)
    if (t->takes_bool()) names += (names.empty() ? "" : ", ") + std::string(t->name);
  return names;
}

// The dtype rules every op form shares: bool tensors take only the ops marked
// for them, integer tensors only ops with integral results.
void check_dtype_takes(const OpTraits& op, DType d) {
  if (d == DType::Bool && !op.takes_bool())
    fail(SM_ERR_DTYPE, "in-place %s is not defined for bool tensors (only %s)", op.name,
         ops_on_bool().c_str());
  if (is_integral(d) && !op.integral_result)
    fail(SM_ERR_DTYPE,
         "in-place %s on a %s tensor would produce floating results that %s cannot hold", op.name,
         dtype_name(d), dtype_name(d));
  if (is_complex(d) && !op.takes_complex())
    fail(SM_ERR_DTYPE, "in-place %s is not defined for %s tensors (%s)", op.name, dtype_name(d),
         op.not_on_complex);
}

}  // namespace

void inplace_scalar(const TensorPtr& t, sm_op op, double a, double b) {
  const OpTraits* traits = op_traits(op);
  if (!traits || !traits->scalar_form) fail(SM_ERR_INVALID_ARGUMENT, "unknown op %d", op);
  const DType d = t->dtype();
  check_dtype_takes(*traits, d);
  const bool bounds = op == SM_OP_CLAMP;  // a NaN bound means no bound
  if (is_integral(d)) {
    // Operands of integer arithmetic are whole numbers of the int64 compute
    // type (ADD 300 on int8 wraps as PyTorch's add_ does).
    if (traits->whole_scalars >= 1 && !(bounds && std::isnan(a)))
      check_integral_scalar(a, bounds ? "a (min)" : "a", d, op);
    if (traits->whole_scalars >= 2 && !(bounds && std::isnan(b)))
      check_integral_scalar(b, bounds ? "b (max)" : "b", d, op);
  }
  // Values that become elements must fit the dtype.
  if (op == SM_OP_FILL) check_scalar_fits(a, "a (the fill value)", d, op);
  if (bounds && !std::isnan(a)) check_scalar_fits(a, "a (min)", d, op);
  if (bounds && !std::isnan(b)) check_scalar_fits(b, "b (max)", d, op);
  check_writable(*t, "the tensor");
  Kernels& k = kernels_for(t->device());
  k.run(plan_scalar_op(t->desc(), op, a, b, k.target()));
  t->storage()->bump_version();
}

void inplace_tensor(const TensorPtr& t, sm_op op, const TensorPtr& other_in, double alpha) {
  const OpTraits* traits = op_traits(op);
  if (!traits || !traits->tensor_form)
    fail(SM_ERR_INVALID_ARGUMENT,
         "op %s (%d) does not take a tensor operand (FILL, ADD, SUB, MUL, DIV do)", op_name(op), op);
  const DType d = t->dtype();
  const DType od = other_in->dtype();
  if (op != SM_OP_FILL) {  // FILL converts like a copy
    check_dtype_takes(*traits, d);
    if (!can_cast(promote_types(d, od), d))
      fail(SM_ERR_DTYPE,
           "in-place %s of a %s operand into a %s tensor: the %s result cannot be cast to %s",
           traits->name, dtype_name(od), dtype_name(d), dtype_name(od), dtype_name(d));
    if (op == SM_OP_SUB && od == DType::Bool)
      fail(SM_ERR_DTYPE,
           "in-place SUB of a bool operand is not defined (as in PyTorch): subtracting truth "
           "values is ambiguous; convert other to an integer dtype with sm_to first");
    if (traits->scales_by_alpha) {
      // alpha scales other in the promoted type of the two operands (PyTorch
      // converts it to that type), so it must be whole for integers and fit.
      if (is_integral(d)) check_integral_scalar(alpha, "alpha", d, op);
      check_scalar_fits(alpha, "alpha", promote_types(d, od), op, /*multiplier=*/true);
    }
  }
  const Layout& tl = t->layout();
  if (!broadcastable_to(other_in->layout().sizes, other_in->layout().ndim, tl.sizes, tl.ndim))
    fail(SM_ERR_SHAPE, "other of shape %s does not broadcast to the tensor's shape %s",
         format_dims(other_in->layout().sizes, other_in->layout().ndim).c_str(),
         format_dims(tl.sizes, tl.ndim).c_str());
  check_writable(*t, "the tensor");
  // FILL reads other as a copy reads its source.
  const ReadSource s = read_source(*t, other_in, op == SM_OP_FILL ? "the source" : "other");
  Kernels& k = kernels_for(t->device());
  k.run(plan_tensor_op(t->desc(), op, s.desc, alpha, k.target()));
  t->storage()->bump_version();
}

}  // namespace sm
