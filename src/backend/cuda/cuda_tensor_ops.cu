// In-place ops with a tensor operand on one GPU: dst = op(dst, other) for
// ADD, SUB (alpha * other), MUL, DIV, each element through binary_op_element
// (core/element_ops.hpp, the CPU's definition). One kernel per dtype for
// same-dtype pairs, one run-time dispatching kernel for mixed pairs; a
// transposed destination with a same-dtype floating operand goes through the
// tiled transpose kernel (dst read and written along its stride-1 dim, other
// along its own).
#include "backend/cuda/cuda_kernels.hpp"
#include "backend/cuda/kernel_common.cuh"

namespace sm {
namespace cuda {

namespace {

// Same dtype on both sides (the common case): everything typed.
template <typename D>
struct TensorOpSame {
  using Value = D;
  char* dst;
  const char* other;
  int op;
  BinaryCompute<D, D> alpha;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    return binary_op_element<D, D>(op, load_at<D>(dst, o[0]), load_at<D>(other, o[1]), alpha);
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    store_at<D>(dst, o[0], v);
  }
};

// Mixed dtypes: both read at run time, in the pair's compute type. A float
// result is carried as a double: storing it from there gives the same bits
// as storing the float (store_as goes through double for every non-float
// target).
struct TensorOpAny {
  struct Value {
    double f;
    int64_t i;
    Complex64 cf;
    Complex128 cd;
  };
  char* dst;
  const char* other;
  DType dd, od;
  int dsize, osize;
  int op;
  ComputeKind compute;
  int64_t alpha_i;
  float alpha_f;
  double alpha_d;
  Complex64 alpha_cf;
  Complex128 alpha_cd;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    const char* pd = dst + static_cast<int64_t>(o[0]) * dsize;
    const char* po = other + static_cast<int64_t>(o[1]) * osize;
    Value r{0.0, 0, Complex64{0, 0}, Complex128{0, 0}};
    switch (compute) {
      case ComputeKind::ComplexFloat:
        r.cf = binary_apply<Complex64>(op, load_as_dyn<Complex64>(dd, pd),
                                       load_as_dyn<Complex64>(od, po), alpha_cf);
        break;
      case ComputeKind::ComplexDouble:
        r.cd = binary_apply<Complex128>(op, load_as_dyn<Complex128>(dd, pd),
                                        load_as_dyn<Complex128>(od, po), alpha_cd);
        break;
      case ComputeKind::Int64:
        r.i = binary_apply<int64_t>(op, load_as_dyn<int64_t>(dd, pd), load_as_dyn<int64_t>(od, po), alpha_i);
        break;
      case ComputeKind::Float:
        r.f = binary_apply<float>(op, load_as_dyn<float>(dd, pd), load_as_dyn<float>(od, po), alpha_f);
        break;
      default:
        r.f = binary_apply<double>(op, load_as_dyn<double>(dd, pd), load_as_dyn<double>(od, po), alpha_d);
        break;
    }
    return r;
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value r) const {
    char* pd = dst + static_cast<int64_t>(o[0]) * dsize;
    dispatch_dtype(dd, [&](auto t) {
      using D = decltype(t);
      D v;
      switch (compute) {
        case ComputeKind::Int64: v = store_as<D>(r.i); break;
        case ComputeKind::ComplexFloat: v = store_as<D>(r.cf); break;
        case ComputeKind::ComplexDouble: v = store_as<D>(r.cd); break;
        default: v = store_as<D>(r.f); break;
      }
      store_at<D>(pd, 0, v);
    });
  }
};

bool transposable(DType d) {
  return d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64;
}

template <typename T>
void launch_transposed_typed(const KernelPlan& p, char* d, const char* o, sm_op op, double alpha,
                             cudaStream_t st) {
  launch_transpose<sizeof(T)>(p, d, o, OpEpilogue<T>{op, to_compute<BinaryCompute<T, T>>(alpha)}, st);
}

void launch_transposed(const KernelPlan& p, char* d, const char* o, DType dt, sm_op op, double alpha,
                       cudaStream_t st) {
  switch (dt) {
    case DType::F32: launch_transposed_typed<float>(p, d, o, op, alpha, st); break;
    case DType::F16: launch_transposed_typed<Half>(p, d, o, op, alpha, st); break;
    case DType::BF16: launch_transposed_typed<BFloat16>(p, d, o, op, alpha, st); break;
    default: launch_transposed_typed<double>(p, d, o, op, alpha, st); break;
  }
}

}  // namespace

void launch_tensor_op(const OpPlan& plan, int device) {
  const TensorDesc& dst = plan.dst;
  const TensorDesc& other = plan.src;
  const sm_op op = plan.op;
  const double alpha = plan.alpha;
  const bool allow_transpose = dst.dtype == other.dtype && transposable(dst.dtype);
  const KernelPlan p = plan_binary(plan, allow_transpose, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  cudaStream_t st = current_stream(device);
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  const char* o = static_cast<const char*>(other.data) + p.byte_offset[1];
  if (p.kind == KernelKind::Transpose) {
    launch_transposed(p, d, o, dst.dtype, op, alpha, st);
    return;
  }
  if (dst.dtype == other.dtype) {
    dispatch_dtype(dst.dtype, [&](auto t) {
      using D = decltype(t);
      if constexpr (!std::is_same<D, bool>::value) {  // the engine refuses arithmetic on bool
        const TensorOpSame<D> f{d, o, op, to_compute<BinaryCompute<D, D>>(alpha)};
        launch_elementwise<2>(p, f, st);
      }
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
  f.compute = binary_compute(dst.dtype, other.dtype);
  f.alpha_i = to_compute<int64_t>(alpha);
  f.alpha_f = to_compute<float>(alpha);
  f.alpha_d = to_compute<double>(alpha);
  f.alpha_cf = to_compute<Complex64>(alpha);
  f.alpha_cd = to_compute<Complex128>(alpha);
  launch_elementwise<2, 1>(p, f, st);
}

}  // namespace cuda
}  // namespace sm
