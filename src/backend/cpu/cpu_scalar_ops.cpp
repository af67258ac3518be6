// In-place ops with scalar operands: dst[i] = op(dst[i], a, b), each element
// through core/element_ops.hpp (one row kernel per dtype and op, the op a
// template constant so the rows vectorize).
#include <cstring>

#include "backend/cpu/cpu_entry_points.hpp"
#include "backend/cpu/cpu_loops.hpp"
#include "backend/cpu/op_rows.hpp"
#include "core/element_ops.hpp"

namespace sm {
namespace cpu {

namespace {

template <typename T, int OP>
void unary_row(const void* ctx, char* d, const char*, int64_t n, int64_t ds, int64_t) {
  const auto k = *static_cast<const ScalarArgs<ScalarCompute<T>>*>(ctx);
  T* dp = reinterpret_cast<T*>(d);
  if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) dp[i] = scalar_op_element<T>(OP, dp[i], k);
  } else {
    for (int64_t i = 0; i < n; ++i) dp[i * ds] = scalar_op_element<T>(OP, dp[i * ds], k);
  }
}

// Row kernels exist for the ops with a scalar form (the planner makes FILL
// and ZERO fills).
template <typename T>
struct ScalarOpRows {
  template <int OP, bool kScalarForm, bool kTensorForm>
  static constexpr RowFn row() {
    if constexpr (kScalarForm && OP != SM_OP_FILL && OP != SM_OP_ZERO) return unary_row<T, OP>;
    return nullptr;
  }
};

}  // namespace

void run_scalar_op(const OpPlan& plan) {
  const TensorDesc& dst = plan.dst;
  const sm_op op = plan.op;
  const double a = plan.a, b = plan.b;
  // The plan's operand 1 is the destination itself (read, then written).
  const IterPlan& p = plan.iter;

  LoopSpec spec;
  spec.dsize = spec.ssize = static_cast<int>(dtype_size(dst.dtype));
  spec.bytes_per_elem = 2 * spec.dsize;
  // The converted arguments, alive until run_loops below returns.
  ScalarArgs<int64_t> ai{};
  ScalarArgs<uint64_t> au{};
  ScalarArgs<float> af{};
  ScalarArgs<double> ad{};
  ScalarArgs<Complex64> acf{};
  ScalarArgs<Complex128> acd{};
  dispatch_dtype(dst.dtype, [&](auto t) {
    using T = decltype(t);
    using C = ScalarCompute<T>;
    const ScalarArgs<C> k = make_scalar_args<C>(a, b);
    if constexpr (std::is_same<C, int64_t>::value) ai = k, spec.ctx = &ai;
    else if constexpr (std::is_same<C, uint64_t>::value) au = k, spec.ctx = &au;
    else if constexpr (std::is_same<C, float>::value) af = k, spec.ctx = &af;
    else if constexpr (std::is_same<C, double>::value) ad = k, spec.ctx = &ad;
    else if constexpr (std::is_same<C, Complex64>::value) acf = k, spec.ctx = &acf;
    else acd = k, spec.ctx = &acd;
    spec.row = pick_op_row<ScalarOpRows<T>>(op);
  });
  if (!spec.row) return;  // not an op of this family: the engine never sends one
  run_loops(p, plan.tiling, static_cast<char*>(dst.data), static_cast<const char*>(dst.data),
            spec);
}

}  // namespace cpu
}  // namespace sm
