// Copies on one GPU: memcpy, vectorized unit copies (1 to 16 bytes per
// access, the same kernel for strided same-dtype copies), the tiled
// transpose, and dtype conversions, element-wise or tiled (a few hot pairs
// compiled for their types, the rest through run-time dtype dispatch, to
// keep the build small).
#include "backend/cuda/cuda_kernels.hpp"
#include "backend/cuda/kernel_common.cuh"

namespace sm {
namespace cuda {

#define SM_STR2(...) #__VA_ARGS__
#define SM_STR(...) SM_STR2(__VA_ARGS__)

int min_built_arch() {
#if defined(__CUDA_ARCH_LIST__)
  // e.g. "900" or "800,900": the first entry is the lowest.
  const char* list = SM_STR(__CUDA_ARCH_LIST__);
  int v = 0;
  for (const char* c = list; *c >= '0' && *c <= '9'; ++c) v = v * 10 + (*c - '0');
  return v / 10;  // 900 -> 90 (major * 10 + minor)
#else
  return 0;
#endif
}

namespace {

template <int W>
struct CopyUnits {
  using Value = Unit<W>;
  char* dst;
  const char* src;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    return load_at<Value>(src, o[1]);
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    store_at<Value>(dst, o[0], v);
  }
};

// Any dtype pair: through sm::WideElement (core/dtype.hpp: the source held
// exactly, narrow<D>(widen(v)) == convert<D>(v)).
struct ConvertAny {
  using Value = WideElement;
  char* dst;
  const char* src;
  DType dd, sd;
  int dsize, ssize;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    const char* p = src + static_cast<int64_t>(o[1]) * ssize;
    return dispatch_source_dtype(sd, [&](auto t) -> Value {
      using S = decltype(t);
      return widen(load_at<S>(p, 0));
    });
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value w) const {
    char* p = dst + static_cast<int64_t>(o[0]) * dsize;
    dispatch_dtype(dd, [&](auto t) {
      using D = decltype(t);
      store_at<D>(p, 0, narrow<D>(w));
    });
  }
};

// Hot pairs with their types known: sm::cvt, the same bits as ConvertAny.
template <typename D, typename S>
struct ConvertTyped {
  using Value = D;
  char* dst;
  const char* src;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    return cvt<D>(load_at<S>(src, o[1]));
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    store_at<D>(dst, o[0], v);
  }
};

// Contiguous typed conversions, four elements per access (16-byte f32
// loads, 8-byte 16-bit stores, or the reverse); the n % 4 tail by the first
// threads of the grid.
template <typename T>
struct alignas(4 * sizeof(T)) Vec4 {
  T v[4];
};

template <typename D, typename S>
__global__ void __launch_bounds__(kElementwiseBlock)
    convert_contiguous_kernel(D* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  const int64_t nv = n / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < nv; i += stride) {
    const Vec4<S> a = reinterpret_cast<const Vec4<S>*>(src)[i];
    Vec4<D> b;
#pragma unroll
    for (int k = 0; k < 4; ++k) b.v[k] = cvt<D>(a.v[k]);
    reinterpret_cast<Vec4<D>*>(dst)[i] = b;
  }
  if (first < n - nv * 4) dst[nv * 4 + first] = cvt<D>(src[nv * 4 + first]);
}

template <typename D, typename S>
bool try_convert_contiguous(const KernelPlan& p, char* d, const char* s, cudaStream_t st,
                            int device) {
  if (!p.contiguous || reinterpret_cast<uintptr_t>(d) % (4 * sizeof(D)) != 0 ||
      reinterpret_cast<uintptr_t>(s) % (4 * sizeof(S)) != 0)
    return false;
  const Launch l = plan_elementwise_launch((p.numel + 3) / 4, device_props(device));
  convert_contiguous_kernel<D, S><<<static_cast<unsigned>(l.grid), l.block, 0, st>>>(
      reinterpret_cast<D*>(d), reinterpret_cast<const S*>(s), p.numel);
  check(cudaGetLastError(), "conversion kernel launch");
  return true;
}

template <typename D, typename S>
void launch_typed_convert(const KernelPlan& p, char* d, const char* s, cudaStream_t st, int device) {
  if (!try_convert_contiguous<D, S>(p, d, s, st, device))
    launch_elementwise<2>(p, ConvertTyped<D, S>{d, s}, st);
}

void launch_units(const KernelPlan& p, char* d, const char* s, cudaStream_t st) {
  switch (p.unit_bytes) {
    case 1: launch_elementwise<2>(p, CopyUnits<1>{d, s}, st); break;
    case 2: launch_elementwise<2>(p, CopyUnits<2>{d, s}, st); break;
    case 4: launch_elementwise<2>(p, CopyUnits<4>{d, s}, st); break;
    case 8: launch_elementwise<2>(p, CopyUnits<8>{d, s}, st); break;
    default:
      if (p.split16) launch_elementwise<2>(p, CopyUnits<kUnit16At8>{d, s}, st);
      else launch_elementwise<2>(p, CopyUnits<16>{d, s}, st);
      break;
  }
}

// f(std::integral_constant<int, bytes>) for an element size of 1 to 16.
template <typename F>
void with_elem_size(int bytes, F&& f) {
  switch (bytes) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    default: f(std::integral_constant<int, 16>{}); break;
  }
}

void launch_transpose_copy(const KernelPlan& p, char* d, const char* s, int elem, cudaStream_t st) {
  with_elem_size(elem, [&](auto e) {
    constexpr int E = decltype(e)::value;
    launch_transpose<E>(p, d, s, CopyEpilogue<E>{}, st);
  });
}

// Transpose tiles converting on the way, with the element-wise path's
// conversions (cvt; widen and narrow) applied to bit containers.
template <typename D, typename S>
struct ConvertBitsTyped {
  __device__ __forceinline__ ElemUnit<sizeof(D)> operator()(ElemUnit<sizeof(S)> v) const {
    return bit_cast_dev<ElemUnit<sizeof(D)>>(cvt<D>(bit_cast_dev<S>(v)));
  }
};

// Any pair with ES- and ED-byte elements, as ConvertAny (through
// WideElement). The rare pairs are built small: the conversion is not
// inlined into the unrolled tile loops, and the index math is 64-bit only.
template <int ES, int ED>
struct ConvertBitsAny {
  DType dd, sd;
  __device__ __noinline__ ElemUnit<ED> operator()(ElemUnit<ES> v) const {
    const WideElement w = dispatch_source_dtype(sd, [&](auto t) -> WideElement {
      using S = decltype(t);
      if constexpr (sizeof(S) == ES) return widen(bit_cast_dev<S>(v));
      else return WideElement{};
    });
    ElemUnit<ED> out{};
    dispatch_dtype(dd, [&](auto t) {
      using D = decltype(t);
      if constexpr (sizeof(D) == ED) out = bit_cast_dev<ElemUnit<ED>>(narrow<D>(w));
    });
    return out;
  }
};

void launch_transpose_convert(const KernelPlan& p, char* d, DType dd, const char* s, DType sd,
                              cudaStream_t st) {
  if (dd == DType::BF16 && sd == DType::F32) {
    launch_transpose_tiles<4, 2>(p, d, s, ConvertBitsTyped<BFloat16, float>{}, CopyEpilogue<2>{}, st);
  } else if (dd == DType::F32 && sd == DType::BF16) {
    launch_transpose_tiles<2, 4>(p, d, s, ConvertBitsTyped<float, BFloat16>{}, CopyEpilogue<4>{}, st);
  } else if (dd == DType::F32 && sd == DType::F16) {
    launch_transpose_tiles<2, 4>(p, d, s, ConvertBitsTyped<float, Half>{}, CopyEpilogue<4>{}, st);
  } else if (dd == DType::F16 && sd == DType::F32) {
    launch_transpose_tiles<4, 2>(p, d, s, ConvertBitsTyped<Half, float>{}, CopyEpilogue<2>{}, st);
  } else {
    with_elem_size(static_cast<int>(dtype_size(sd)), [&](auto es) {
      with_elem_size(static_cast<int>(dtype_size(dd)), [&](auto ed) {
        constexpr int ES = decltype(es)::value, ED = decltype(ed)::value;
        launch_transpose_tiles<ES, ED, false>(p, d, s, ConvertBitsAny<ES, ED>{dd, sd},
                                              CopyEpilogue<ED>{}, st);
      });
    });
  }
}

void launch_convert(const KernelPlan& p, char* d, DType dd, const char* s, DType sd, cudaStream_t st,
                    int device) {
  if (dd == DType::BF16 && sd == DType::F32) {
    launch_typed_convert<BFloat16, float>(p, d, s, st, device);
  } else if (dd == DType::F32 && sd == DType::BF16) {
    launch_typed_convert<float, BFloat16>(p, d, s, st, device);
  } else if (dd == DType::F32 && sd == DType::F16) {
    launch_typed_convert<float, Half>(p, d, s, st, device);
  } else if (dd == DType::F16 && sd == DType::F32) {
    launch_typed_convert<Half, float>(p, d, s, st, device);
  } else {
    ConvertAny f{d, s, dd, sd, static_cast<int>(dtype_size(dd)), static_cast<int>(dtype_size(sd))};
    launch_elementwise<2, 1>(p, f, st);
  }
}

}  // namespace

void launch_copy(const OpPlan& plan, int device) {
  const TensorDesc& dst = plan.dst;
  const TensorDesc& src = plan.src;
  const KernelPlan p = plan_copy(plan, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  cudaStream_t st = current_stream(device);
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  const char* s = static_cast<const char*>(src.data) + p.byte_offset[1];
  switch (p.kind) {
    case KernelKind::Memcpy:
      check(cudaMemcpyAsync(d, s, static_cast<size_t>(p.memcpy_bytes), cudaMemcpyDeviceToDevice, st),
            "cudaMemcpyAsync (copy)");
      return;
    case KernelKind::Transpose:
      if (dst.dtype == src.dtype) {
        launch_transpose_copy(p, d, s, static_cast<int>(dtype_size(dst.dtype)), st);
      } else {
        launch_transpose_convert(p, d, dst.dtype, s, src.dtype, st);
      }
      return;
    case KernelKind::Elementwise:
      if (p.unit_bytes > 0) {
        launch_units(p, d, s, st);
      } else {
        launch_convert(p, d, dst.dtype, s, src.dtype, st, device);
      }
      return;
    case KernelKind::Empty: return;
  }
}

}  // namespace cuda
}  // namespace sm
