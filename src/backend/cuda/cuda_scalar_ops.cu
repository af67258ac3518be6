// In-place ops with scalar operands on one GPU: fills write one converted
// element (vectorized when the destination is contiguous); the other ops run
// scalar_op_element (core/element_ops.hpp, the CPU's definition) in one
// kernel per dtype with the op chosen at run time, on 16-byte units of a
// contiguous destination where plan_unary finds them, else element by element.
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
    store_at<Unit<W>>(dst, o[0], value);
  }
};

// scalar_op_element on the elements of T in one Value loaded and stored
// whole: one element (Value = T), or a 16-byte unit of a contiguous run
// (Value = uint4, plan_unary's units).
template <typename T, typename Value_ = T>
struct ScalarOpF {
  using Value = Value_;
  static constexpr int kElems = static_cast<int>(sizeof(Value) / sizeof(T));
  static_assert(sizeof(Value) % sizeof(T) == 0, "whole elements per unit");
  char* dst;
  int op;
  ScalarArgs<ScalarCompute<T>> args;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    Value u = load_at<Value>(dst, o[0]);
    T e[kElems];
    memcpy(e, &u, sizeof u);
#pragma unroll
    for (int k = 0; k < kElems; ++k) e[k] = scalar_op_element<T>(op, e[k], args);
    memcpy(&u, e, sizeof u);
    return u;
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    store_at<Value>(dst, o[0], v);
  }
};

template <int W>
void launch_fill_units(const KernelPlan& p, char* d, const unsigned char* pattern, cudaStream_t st) {
  FillUnits<W> f{d, {}};
  std::memcpy(&f.value, pattern, sizeof f.value);
  launch_elementwise<1>(p, f, st);
}

}  // namespace

void launch_fill(const OpPlan& plan, int device) {
  const TensorDesc& dst = plan.dst;
  const unsigned char* elem = plan.scalar_bits;
  const KernelPlan p = plan_fill(plan, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  cudaStream_t st = current_stream(device);
  // The converted element, repeated across a 16-byte pattern.
  const size_t esize = dtype_size(dst.dtype);
  unsigned char pattern[16];
  for (size_t k = 0; k < 16; ++k) pattern[k] = elem[k % esize];
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  switch (p.unit_bytes) {
    case 1: launch_fill_units<1>(p, d, pattern, st); break;
    case 2: launch_fill_units<2>(p, d, pattern, st); break;
    case 4: launch_fill_units<4>(p, d, pattern, st); break;
    case 8: launch_fill_units<8>(p, d, pattern, st); break;
    default:
      if (p.split16) launch_fill_units<kUnit16At8>(p, d, pattern, st);
      else launch_fill_units<16>(p, d, pattern, st);
      break;
  }
}

void launch_scalar_op(const OpPlan& plan, int device) {
  const TensorDesc& dst = plan.dst;
  const sm_op op = plan.op;
  const double a = plan.a, b = plan.b;
  cudaStream_t st = current_stream(device);
  const KernelPlan p = plan_unary(plan, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  dispatch_dtype(dst.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (sizeof(T) < 16) {
      if (p.unit_bytes == 16) {
        const ScalarOpF<T, uint4> f{d, op, make_scalar_args<ScalarCompute<T>>(a, b)};
        launch_elementwise<1, 1>(p, f, st);
        return;
      }
    }
    const ScalarOpF<T> f{d, op, make_scalar_args<ScalarCompute<T>>(a, b)};
    launch_elementwise<1, 1>(p, f, st);
  });
}

}  // namespace cuda
}  // namespace sm
