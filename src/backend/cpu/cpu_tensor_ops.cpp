// In-place ops with a tensor operand: dst[i] = op(dst[i], other[i]), each
// element through core/element_ops.hpp (one row kernel per dtype pair and op).
#include "backend/cpu/cpu_entry_points.hpp"
#include "backend/cpu/cpu_loops.hpp"
#include "backend/cpu/op_rows.hpp"
#include "core/element_ops.hpp"

namespace sm {
namespace cpu {

namespace {

template <typename D, typename S, int OP>
void binary_row(const void* ctx, char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  using C = BinaryCompute<D, S>;
  const C alpha = *static_cast<const C*>(ctx);
  D* dp = reinterpret_cast<D*>(d);
  const S* sp = reinterpret_cast<const S*>(s);
  if (ds == 1 && ss == 1) {
    for (int64_t i = 0; i < n; ++i) dp[i] = binary_op_element<D, S>(OP, dp[i], sp[i], alpha);
  } else {
    for (int64_t i = 0; i < n; ++i)
      dp[i * ds] = binary_op_element<D, S>(OP, dp[i * ds], sp[i * ss], alpha);
  }
}

// Row kernels exist for the ops with a tensor form (the planner makes FILL a
// copy).
template <typename D, typename S>
struct TensorOpRows {
  template <int OP, bool kScalarForm, bool kTensorForm>
  static constexpr RowFn row() {
    if constexpr (kTensorForm && OP != SM_OP_FILL) return binary_row<D, S, OP>;
    return nullptr;
  }
};

}  // namespace

void run_tensor_op(const OpPlan& plan) {
  const TensorDesc& dst = plan.dst;
  const TensorDesc& other = plan.src;
  const sm_op op = plan.op;
  const double alpha = plan.alpha;
  const IterPlan& p = plan.iter;
  LoopSpec spec;
  spec.dsize = static_cast<int>(dtype_size(dst.dtype));
  spec.ssize = static_cast<int>(dtype_size(other.dtype));
  spec.bytes_per_elem = 2 * spec.dsize + spec.ssize;
  spec.reads_dst = true;
  // alpha in the pair's compute type, alive until run_loops below returns.
  int64_t ai = 0;
  float af = 0;
  double ad = 0;
  Complex64 acf{0, 0};
  Complex128 acd{0, 0};
  dispatch_dtype(dst.dtype, [&](auto dv) {
    using D = decltype(dv);
    dispatch_source_dtype(other.dtype, [&](auto sv) {
      using S = decltype(sv);
      using C = BinaryCompute<D, S>;
      if constexpr (std::is_same<C, int64_t>::value) ai = to_compute<C>(alpha), spec.ctx = &ai;
      else if constexpr (std::is_same<C, float>::value) af = to_compute<C>(alpha), spec.ctx = &af;
      else if constexpr (std::is_same<C, double>::value) ad = to_compute<C>(alpha), spec.ctx = &ad;
      else if constexpr (std::is_same<C, Complex64>::value) acf = to_compute<C>(alpha), spec.ctx = &acf;
      else acd = to_compute<C>(alpha), spec.ctx = &acd;
      spec.row = pick_op_row<TensorOpRows<D, S>>(op);
    });
  });
  if (!spec.row) return;  // not an op of this family: the engine never sends one
  run_loops(p, plan.tiling, static_cast<char*>(dst.data), static_cast<const char*>(other.data),
            spec);
}

}  // namespace cpu
}  // namespace sm
