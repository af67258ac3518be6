// In-place ops with scalar operands on one GPU: FILL/ZERO write one
// converted value (vectorized when the destination is contiguous); the rest
// compute in the contract's compute type (int64 wrapping for integers and
// bool, float for f16/bf16/f32, double for f64), one kernel per dtype with
// the op chosen at run time.
#include <cstring>

#include "backend/cuda/cuda_kernels.hpp"
#include "backend/cuda/kernel_common.cuh"

namespace sm {
namespace cuda {

namespace {

template <int W>
struct FillUnits {
  using Value = unsigned char;  // nothing to load
  char* dst;
  Unit<W> value;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off*) const {
    return 0;
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value) const {
    reinterpret_cast<Unit<W>*>(dst)[o[0]] = value;
  }
};

template <typename T>
using ScalarCompute =
    typename std::conditional<!IsFloatLike<T>::value, int64_t,
                              typename std::conditional<std::is_same<T, double>::value, double,
                                                        float>::type>::type;

template <typename T>
struct ScalarOpF {
  using C = ScalarCompute<T>;
  using Value = T;
  char* dst;
  int op;
  C a, b;
  bool has_lo, has_hi;  // CLAMP: a NaN bound is no bound

  __device__ __forceinline__ C apply(C x) const {
    constexpr bool is_int = std::is_same<C, int64_t>::value;
    switch (op) {
      case SM_OP_ADD:
        if constexpr (is_int) return wrap_add(x, a); else return add_rn(x, a);
      case SM_OP_SUB:
        if constexpr (is_int) return wrap_sub(x, a); else return sub_rn(x, a);
      case SM_OP_MUL:
        if constexpr (is_int) return wrap_mul(x, a); else return mul_rn(x, a);
      case SM_OP_DIV:
        if constexpr (is_int) return safe_div(x, a); else return div_rn(x, a);
      case SM_OP_CLAMP:
        if constexpr (!is_int) {
          if (x != x) return x;  // NaN stays NaN
        }
        if (has_lo && x < a) x = a;
        if (has_hi && x > b) x = b;
        return x;
      case SM_OP_RELU: return x < C(0) ? C(0) : x;  // NaN < 0 is false: NaN kept
      case SM_OP_NEG:
        if constexpr (is_int) return wrap_sub(0, x); else return -x;
      case SM_OP_ABS:
        if constexpr (is_int) return x < 0 ? wrap_sub(0, x) : x;
        else if constexpr (std::is_same<C, float>::value) return fabsf(x);
        else return fabs(x);
      case SM_OP_SQRT:
        if constexpr (is_int) return saturating_float_to_int<int64_t>(sqrt(static_cast<double>(x)));
        else if constexpr (std::is_same<C, float>::value) return sqrtf(x);  // IEEE-rounded (-prec-sqrt=true)
        else return sqrt(x);
      default:  // SM_OP_EXP: through double, so the float result is rounded once
        if constexpr (is_int) return saturating_float_to_int<int64_t>(exp(static_cast<double>(x)));
        else return static_cast<C>(exp(static_cast<double>(x)));
    }
  }
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    const T x = load_elem<T>(dst + static_cast<int64_t>(o[0]) * static_cast<int64_t>(sizeof(T)));
    return store_as<T>(apply(load_as<C>(x)));
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    store_elem<T>(dst + static_cast<int64_t>(o[0]) * static_cast<int64_t>(sizeof(T)), v);
  }
};

template <typename C>
C scalar_to(double v) {
  if constexpr (std::is_same<C, int64_t>::value) {
    return saturating_float_to_int<int64_t>(v);
  } else {
    return static_cast<C>(v);
  }
}

void launch_fill(const TensorDesc& dst, double v, cudaStream_t st, int device) {
  const KernelPlan p = plan_fill(dst, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  // The converted element, repeated across a 16-byte pattern.
  unsigned char elem[8] = {};
  const size_t esize = dtype_size(dst.dtype);
  host_dispatch(dst.dtype, [&](auto t) {
    using T = decltype(t);
    const T c = Convert<T>::from_double(v);
    std::memcpy(elem, &c, sizeof(T));
    return 0;
  });
  unsigned char pattern[16];
  for (size_t k = 0; k < 16; ++k) pattern[k] = elem[k % esize];
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  switch (p.unit_bytes) {
    case 1: {
      FillUnits<1> f{d, {}};
      std::memcpy(&f.value, pattern, 1);
      launch_elementwise<1>(p, f, st);
      break;
    }
    case 2: {
      FillUnits<2> f{d, {}};
      std::memcpy(&f.value, pattern, 2);
      launch_elementwise<1>(p, f, st);
      break;
    }
    case 4: {
      FillUnits<4> f{d, {}};
      std::memcpy(&f.value, pattern, 4);
      launch_elementwise<1>(p, f, st);
      break;
    }
    case 8: {
      FillUnits<8> f{d, {}};
      std::memcpy(&f.value, pattern, 8);
      launch_elementwise<1>(p, f, st);
      break;
    }
    default: {
      FillUnits<16> f{d, {}};
      std::memcpy(&f.value, pattern, 16);
      launch_elementwise<1>(p, f, st);
      break;
    }
  }
}

}  // namespace

void launch_scalar_op(const TensorDesc& dst, sm_op op, double a, double b, int device) {
  cudaStream_t st = current_stream(device);
  if (op == SM_OP_FILL || op == SM_OP_ZERO) {
    launch_fill(dst, op == SM_OP_ZERO ? 0.0 : a, st, device);
    return;
  }
  switch (op) {
    case SM_OP_ADD: case SM_OP_SUB: case SM_OP_MUL: case SM_OP_DIV: case SM_OP_CLAMP:
    case SM_OP_RELU: case SM_OP_NEG: case SM_OP_ABS: case SM_OP_SQRT: case SM_OP_EXP: break;
    default: return;  // not a scalar op: the engine never sends one
  }
  const KernelPlan p = plan_unary(dst, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  host_dispatch(dst.dtype, [&](auto t) {
    using T = decltype(t);
    using C = ScalarCompute<T>;
    ScalarOpF<T> f;
    f.dst = d;
    f.op = op;
    f.has_lo = !(a != a);
    f.has_hi = !(b != b);
    f.a = f.has_lo ? scalar_to<C>(a) : C(0);
    f.b = f.has_hi ? scalar_to<C>(b) : C(0);
    launch_elementwise<1, 1>(p, f, st);
    return 0;
  });
}

}  // namespace cuda
}  // namespace sm
