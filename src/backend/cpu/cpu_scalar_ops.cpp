// In-place ops with scalar operands: dst[i] = op(dst[i], a, b).
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_elem.hpp"
#include "backend/cpu/cpu_kernels_impl.hpp"
#include "backend/cpu/cpu_loops.hpp"

namespace sm {
namespace cpu {

namespace {

// Compute type of scalar ops: int64 for integers and bool, double for f64,
// float for the other floating types.
template <typename T>
using ScalarCompute =
    typename std::conditional<!IsFloatLike<T>::value, int64_t,
                              typename std::conditional<std::is_same<T, double>::value, double,
                                                        float>::type>::type;

template <typename C>
C scalar_to(double v) {
  if constexpr (std::is_same<C, int64_t>::value) {
    return saturating_float_to_int<int64_t>(v);
  } else {
    return static_cast<C>(v);
  }
}

template <typename C>
struct Args {
  C a, b;
  bool has_lo, has_hi;  // CLAMP: a NaN bound is no bound
};

template <typename C, int OP>
inline C apply(C x, const Args<C>& k) {
  constexpr bool is_int = std::is_same<C, int64_t>::value;
  if constexpr (OP == SM_OP_ADD) {
    if constexpr (is_int) return wrap_add(x, k.a); else return x + k.a;
  } else if constexpr (OP == SM_OP_SUB) {
    if constexpr (is_int) return wrap_sub(x, k.a); else return x - k.a;
  } else if constexpr (OP == SM_OP_MUL) {
    if constexpr (is_int) return wrap_mul(x, k.a); else return x * k.a;
  } else if constexpr (OP == SM_OP_DIV) {
    if constexpr (is_int) return safe_div(x, k.a); else return x / k.a;
  } else if constexpr (OP == SM_OP_CLAMP) {
    if constexpr (!is_int) {
      if (x != x) return x;  // NaN stays NaN
    }
    if (k.has_lo && x < k.a) x = k.a;
    if (k.has_hi && x > k.b) x = k.b;
    return x;
  } else if constexpr (OP == SM_OP_RELU) {
    return x < C(0) ? C(0) : x;  // NaN < 0 is false: NaN kept
  } else if constexpr (OP == SM_OP_NEG) {
    if constexpr (is_int) return wrap_sub(0, x); else return -x;
  } else if constexpr (OP == SM_OP_ABS) {
    if constexpr (is_int) return x < 0 ? wrap_sub(0, x) : x; else return std::fabs(x);
  } else if constexpr (OP == SM_OP_SQRT) {
    if constexpr (is_int) return saturating_float_to_int<int64_t>(std::sqrt(double(x)));
    else return std::sqrt(x);
  } else {  // SM_OP_EXP
    if constexpr (is_int) return saturating_float_to_int<int64_t>(std::exp(double(x)));
    else return std::exp(x);
  }
}

template <typename T, int OP>
void unary_row(const void* ctx, char* d, const char*, int64_t n, int64_t ds, int64_t) {
  using C = ScalarCompute<T>;
  const Args<C> k = *static_cast<const Args<C>*>(ctx);
  T* dp = reinterpret_cast<T*>(d);
  if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) dp[i] = store_as<T>(apply<C, OP>(load_as<C>(dp[i]), k));
  } else {
    for (int64_t i = 0; i < n; ++i)
      dp[i * ds] = store_as<T>(apply<C, OP>(load_as<C>(dp[i * ds]), k));
  }
}

template <typename T>
RowFn pick_row(sm_op op) {
  switch (op) {
    case SM_OP_ADD: return unary_row<T, SM_OP_ADD>;
    case SM_OP_SUB: return unary_row<T, SM_OP_SUB>;
    case SM_OP_MUL: return unary_row<T, SM_OP_MUL>;
    case SM_OP_DIV: return unary_row<T, SM_OP_DIV>;
    case SM_OP_CLAMP: return unary_row<T, SM_OP_CLAMP>;
    case SM_OP_RELU: return unary_row<T, SM_OP_RELU>;
    case SM_OP_NEG: return unary_row<T, SM_OP_NEG>;
    case SM_OP_ABS: return unary_row<T, SM_OP_ABS>;
    case SM_OP_SQRT: return unary_row<T, SM_OP_SQRT>;
    case SM_OP_EXP: return unary_row<T, SM_OP_EXP>;
    default: return nullptr;
  }
}

}  // namespace

void scalar_op(const TensorDesc& dst, sm_op op, double a, double b) {
  if (op == SM_OP_FILL || op == SM_OP_ZERO) {
    // A copy from one converted value broadcast everywhere (stride 0).
    alignas(8) unsigned char value[8] = {};
    const double v = op == SM_OP_ZERO ? 0.0 : a;
    dispatch_dtype(dst.dtype, [&](auto t) {
      using T = decltype(t);
      const T converted = Convert<T>::from_double(v);
      std::memcpy(value, &converted, sizeof(T));
    });
    TensorDesc src = dst;
    src.data = value;
    for (int i = 0; i < src.ndim; ++i) src.strides[i] = 0;
    copy(dst, src);
    return;
  }
  const int64_t* strides[1] = {dst.strides};
  IterPlan p = plan_iteration(1, dst.sizes, dst.ndim, strides, true);
  if (p.empty) return;
  // The driver walks two operands: give it the destination twice.
  p.nops = 2;
  p.offsets[1] = p.offsets[0];
  for (int i = 0; i < p.ndim; ++i) p.strides[1][i] = p.strides[0][i];

  LoopSpec spec;
  spec.dsize = spec.ssize = static_cast<int>(dtype_size(dst.dtype));
  spec.bytes_per_elem = 2 * spec.dsize;
  // Storage for the converted arguments outlives run_loops below.
  Args<int64_t> ai{};
  Args<float> af{};
  Args<double> ad{};
  dispatch_dtype(dst.dtype, [&](auto t) {
    using T = decltype(t);
    using C = ScalarCompute<T>;
    Args<C> k;
    // Only CLAMP reads has_lo / has_hi; a NaN a is an ordinary operand elsewhere.
    k.has_lo = !(a != a);
    k.has_hi = !(b != b);
    k.a = scalar_to<C>(a);  // NaN -> 0 for integers (saturating cast)
    k.b = scalar_to<C>(b);
    if constexpr (std::is_same<C, int64_t>::value) ai = k, spec.ctx = &ai;
    else if constexpr (std::is_same<C, float>::value) af = k, spec.ctx = &af;
    else ad = k, spec.ctx = &ad;
    spec.row = pick_row<T>(op);
  });
  if (!spec.row) return;  // not an op of this family: the engine never sends one
  run_loops(p, static_cast<char*>(dst.data), static_cast<const char*>(dst.data), spec);
}

}  // namespace cpu
}  // namespace sm
