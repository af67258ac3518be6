// In-place ops with a tensor operand on one GPU: dst = op(dst, other) for
// ADD, SUB (alpha * other), MUL, DIV. One kernel per (dst dtype, compute
// type) with other's dtype read at run time; a transposed destination with
// a same-dtype floating operand goes through the tiled transpose kernel
// (dst read and written along its stride-1 dim, other along its own).
#include "backend/cuda/cuda_kernels.hpp"
#include "backend/cuda/kernel_common.cuh"

namespace sm {
namespace cuda {

namespace {

template <typename C>
C alpha_to(double v) {
  if constexpr (std::is_same<C, int64_t>::value) {
    return saturating_float_to_int<int64_t>(v);
  } else {
    return static_cast<C>(v);
  }
}

// Same dtype on both sides (the common case): everything typed.
template <typename D>
struct TensorOpSame {
  using C = typename std::conditional<
      std::is_same<D, double>::value, double,
      typename std::conditional<IsFloatLike<D>::value, float, int64_t>::type>::type;
  using Value = D;
  char* dst;
  const char* other;
  int op;
  C alpha;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    const C x = load_as<C>(reinterpret_cast<const D*>(dst)[o[0]]);
    const C y = load_as<C>(reinterpret_cast<const D*>(other)[o[1]]);
    return store_as<D>(binary_apply<C>(op, x, y, alpha));
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    reinterpret_cast<D*>(dst)[o[0]] = v;
  }
};

// Mixed dtypes: both read at run time, in the pair's compute type (0: int64,
// 1: float, 2: double). A float result is carried as a double: storing it
// from there gives the same bits as storing the float (store_as goes
// through double for every non-float target).
struct TensorOpAny {
  struct Value {
    double f;
    int64_t i;
  };
  char* dst;
  const char* other;
  DType dd, od;
  int dsize, osize;
  int op;
  int compute;
  int64_t alpha_i;
  float alpha_f;
  double alpha_d;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    const char* pd = dst + static_cast<int64_t>(o[0]) * dsize;
    const char* po = other + static_cast<int64_t>(o[1]) * osize;
    Value r{0.0, 0};
    if (compute == 0) {
      r.i = binary_apply<int64_t>(op, load_as_dyn<int64_t>(dd, pd), load_as_dyn<int64_t>(od, po), alpha_i);
    } else if (compute == 1) {
      r.f = binary_apply<float>(op, load_as_dyn<float>(dd, pd), load_as_dyn<float>(od, po), alpha_f);
    } else {
      r.f = binary_apply<double>(op, load_as_dyn<double>(dd, pd), load_as_dyn<double>(od, po), alpha_d);
    }
    return r;
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value r) const {
    char* pd = dst + static_cast<int64_t>(o[0]) * dsize;
    dispatch_dtype(dd, [&](auto t) {
      using D = decltype(t);
      store_elem<D>(pd, compute == 0 ? store_as<D>(r.i) : store_as<D>(r.f));
      return 0;
    });
  }
};

bool transposable(DType d) {
  return d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64;
}

void launch_transposed(const KernelPlan& p, char* d, const char* o, DType dt, sm_op op, double alpha,
                       cudaStream_t st) {
  switch (dt) {
    case DType::F32:
      launch_transpose<4>(p, d, o, OpEpilogue<float, float>{op, static_cast<float>(alpha)}, st);
      break;
    case DType::F16:
      launch_transpose<2>(p, d, o, OpEpilogue<Half, float>{op, static_cast<float>(alpha)}, st);
      break;
    case DType::BF16:
      launch_transpose<2>(p, d, o, OpEpilogue<BFloat16, float>{op, static_cast<float>(alpha)}, st);
      break;
    default:
      launch_transpose<8>(p, d, o, OpEpilogue<double, double>{op, alpha}, st);
      break;
  }
}

}  // namespace

void launch_tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha,
                      int device) {
  if (op == SM_OP_FILL) {
    launch_copy(dst, other, device);
    return;
  }
  if (op != SM_OP_ADD && op != SM_OP_SUB && op != SM_OP_MUL && op != SM_OP_DIV) return;
  const bool allow_transpose = dst.dtype == other.dtype && transposable(dst.dtype);
  const KernelPlan p = plan_binary(dst, other, allow_transpose, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  cudaStream_t st = current_stream(device);
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  const char* o = static_cast<const char*>(other.data) + p.byte_offset[1];
  if (p.kind == KernelKind::Transpose) {
    launch_transposed(p, d, o, dst.dtype, op, alpha, st);
    return;
  }
  if (dst.dtype == other.dtype) {
    host_dispatch(dst.dtype, [&](auto t) {
      using D = decltype(t);
      if constexpr (!std::is_same<D, bool>::value) {  // the engine refuses arithmetic on bool
        using F = TensorOpSame<D>;
        launch_elementwise<2>(p, F{d, o, op, alpha_to<typename F::C>(alpha)}, st);
      }
      return 0;
    });
    return;
  }
  TensorOpAny f;
  f.dst = d;
  f.other = o;
  f.dd = dst.dtype;
  f.od = other.dtype;
  f.dsize = static_cast<int>(dtype_size(dst.dtype));
  f.osize = static_cast<int>(dtype_size(other.dtype));
  f.op = op;
  // Compute type (backend.hpp): double if either is f64; float if either is floating; else int64.
  f.compute = (dst.dtype == DType::F64 || other.dtype == DType::F64)       ? 2
              : (is_floating(dst.dtype) || is_floating(other.dtype)) ? 1
                                                                      : 0;
  f.alpha_i = saturating_float_to_int<int64_t>(alpha);
  f.alpha_f = static_cast<float>(alpha);
  f.alpha_d = alpha;
  launch_elementwise<2, 1>(p, f, st);
}

}  // namespace cuda
}  // namespace sm
