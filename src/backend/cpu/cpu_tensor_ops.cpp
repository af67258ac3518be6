// In-place ops with a tensor operand: dst[i] = op(dst[i], other[i]).
#include "backend/cpu/cpu_elem.hpp"
#include "backend/cpu/cpu_kernels_impl.hpp"
#include "backend/cpu/cpu_loops.hpp"

namespace sm {
namespace cpu {

namespace {

// double if either is f64; float if either is floating; else int64.
template <typename D, typename S>
using BinaryCompute = typename std::conditional<
    std::is_same<D, double>::value || std::is_same<S, double>::value, double,
    typename std::conditional<IsFloatLike<D>::value || IsFloatLike<S>::value, float,
                              int64_t>::type>::type;

template <typename C, int OP>
inline C apply(C x, C y, C alpha) {
  constexpr bool is_int = std::is_same<C, int64_t>::value;
  if constexpr (OP == SM_OP_ADD) {
    if constexpr (is_int) return wrap_add(x, wrap_mul(alpha, y)); else return x + alpha * y;
  } else if constexpr (OP == SM_OP_SUB) {
    if constexpr (is_int) return wrap_sub(x, wrap_mul(alpha, y)); else return x - alpha * y;
  } else if constexpr (OP == SM_OP_MUL) {
    if constexpr (is_int) return wrap_mul(x, y); else return x * y;
  } else {  // SM_OP_DIV
    if constexpr (is_int) return safe_div(x, y); else return x / y;
  }
}

template <typename D, typename S, int OP>
void binary_row(const void* ctx, char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  using C = BinaryCompute<D, S>;
  const C alpha = *static_cast<const C*>(ctx);
  D* dp = reinterpret_cast<D*>(d);
  const S* sp = reinterpret_cast<const S*>(s);
  if (ds == 1 && ss == 1) {
    for (int64_t i = 0; i < n; ++i)
      dp[i] = store_as<D>(apply<C, OP>(load_as<C>(dp[i]), load_as<C>(sp[i]), alpha));
  } else if (ss == 0) {
    const C y = load_as<C>(sp[0]);
    for (int64_t i = 0; i < n; ++i)
      dp[i * ds] = store_as<D>(apply<C, OP>(load_as<C>(dp[i * ds]), y, alpha));
  } else {
    for (int64_t i = 0; i < n; ++i)
      dp[i * ds] = store_as<D>(apply<C, OP>(load_as<C>(dp[i * ds]), load_as<C>(sp[i * ss]), alpha));
  }
}

}  // namespace

void tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha) {
  if (op == SM_OP_FILL) {
    copy(dst, other);
    return;
  }
  if (op != SM_OP_ADD && op != SM_OP_SUB && op != SM_OP_MUL && op != SM_OP_DIV) return;
  const int64_t* strides[2] = {dst.strides, other.strides};
  const IterPlan p = plan_iteration(2, dst.sizes, dst.ndim, strides, true);
  if (p.empty) return;
  LoopSpec spec;
  spec.dsize = static_cast<int>(dtype_size(dst.dtype));
  spec.ssize = static_cast<int>(dtype_size(other.dtype));
  spec.bytes_per_elem = 2 * spec.dsize + spec.ssize;
  spec.reads_dst = true;
  int64_t ai = 0;
  float af = 0;
  double ad = 0;
  dispatch_dtype(dst.dtype, [&](auto dv) {
    using D = decltype(dv);
    dispatch_source_dtype(other.dtype, [&](auto sv) {
      using S = decltype(sv);
      using C = BinaryCompute<D, S>;
      if constexpr (std::is_same<C, int64_t>::value) {
        ai = saturating_float_to_int<int64_t>(alpha);
        spec.ctx = &ai;
      } else if constexpr (std::is_same<C, float>::value) {
        af = static_cast<float>(alpha);
        spec.ctx = &af;
      } else {
        ad = alpha;
        spec.ctx = &ad;
      }
      switch (op) {
        case SM_OP_ADD: spec.row = binary_row<D, S, SM_OP_ADD>; break;
        case SM_OP_SUB: spec.row = binary_row<D, S, SM_OP_SUB>; break;
        case SM_OP_MUL: spec.row = binary_row<D, S, SM_OP_MUL>; break;
        default: spec.row = binary_row<D, S, SM_OP_DIV>; break;
      }
    });
  });
  run_loops(p, static_cast<char*>(dst.data), static_cast<const char*>(other.data), spec);
}

}  // namespace cpu
}  // namespace sm
