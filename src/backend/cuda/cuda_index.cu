// index_select on one GPU, whatever its length, layout or dim: one check of
// the index, then one gather launch. The check runs where the index lives
// (a kernel over its distinct elements lowering one device word to the first
// bad position, read back once; nothing is written before it returns): the
// position, not just a min/max, so the refusal names the same element and
// value as the CPU's. The gather is the element-wise kernel over three
// operands planned by plan_gather: runs of rows contiguous in both operands
// move in vector units of up to 16 bytes (GatherKind::Rows), scalar gathers
// one element per thread (Elements), 32- or 64-bit index math as planned.
// The index never leaves the device; the only allocation is the check's
// scratch word, through the device's caching allocator (so statistics and
// fault injection see it).
#include <climits>

#include "backend/cuda/cuda_kernels.hpp"
#include "backend/cuda/kernel_common.cuh"

namespace sm {
namespace cuda {

namespace {

// Lowers *first to the position of every element outside [-size, size).
template <typename I>
__global__ void __launch_bounds__(kElementwiseBlock)
    index_check_kernel(const I* index, int64_t stride, int64_t count, int64_t size,
                       unsigned long long* first) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    if (!index_in_range(static_cast<int64_t>(index[i * stride]), size))
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

// The scratch word goes back to the allocator however the check ends; its
// reuse is ordered on this stream after the work that used it.
struct ScratchBlock {
  Allocator& alloc;
  Allocation a;
  ~ScratchBlock() { alloc.deallocate(a); }
};

// dst[o0] = src[gather_source_offset(o1, index[o2])] in units of E bytes (an
// element, or a vector of a row's elements: o0, o1 and the plan's gather
// stride are in units, o2 in index elements).
template <int E, typename I>
struct GatherUnits {
  using Value = Unit<E>;
  char* dst;
  const char* src;
  const char* index;
  int64_t size, stride;
  template <typename Off>
  __device__ __forceinline__ Value load(const Off* o) const {
    const int64_t v = load_at<I>(index, o[2]);
    return load_at<Value>(src, gather_source_offset(o[1], v, size, stride));
  }
  template <typename Off>
  __device__ __forceinline__ void store(const Off* o, Value v) const {
    store_at<Value>(dst, o[0], v);
  }
};

template <typename I>
void launch_gather_units(const KernelPlan& p, char* d, const char* s, const char* ix,
                         cudaStream_t st) {
  switch (p.unit_bytes) {
    case 1: launch_elementwise<3>(p, GatherUnits<1, I>{d, s, ix, p.gather_size, p.gather_stride}, st); break;
    case 2: launch_elementwise<3>(p, GatherUnits<2, I>{d, s, ix, p.gather_size, p.gather_stride}, st); break;
    case 4: launch_elementwise<3>(p, GatherUnits<4, I>{d, s, ix, p.gather_size, p.gather_stride}, st); break;
    case 8: launch_elementwise<3>(p, GatherUnits<8, I>{d, s, ix, p.gather_size, p.gather_stride}, st); break;
    default:
      if (p.split16)
        launch_elementwise<3>(p, GatherUnits<kUnit16At8, I>{d, s, ix, p.gather_size, p.gather_stride}, st);
      else
        launch_elementwise<3>(p, GatherUnits<16, I>{d, s, ix, p.gather_size, p.gather_stride}, st);
      break;
  }
}

}  // namespace

int64_t index_first_out_of_range(const TensorDesc& index, int64_t size, int device) {
  const IndexCheckPlan p = plan_index_check(index, device_props(device));
  if (p.count == 0) return -1;
  cudaStream_t st = current_stream(device);
  const bool i64 = index.dtype == DType::I64;
  if (p.count == 1) {
    // One distinct element (a one-element or expanded index): read it back
    // and check it here, whatever the index's length.
    int64_t v64 = 0;
    int32_t v32 = 0;
    void* host = i64 ? static_cast<void*>(&v64) : static_cast<void*>(&v32);
    check(cudaMemcpyAsync(host, index.data, i64 ? 8 : 4, cudaMemcpyDeviceToHost, st),
          "cudaMemcpyAsync (index element to host)");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    return index_in_range(i64 ? v64 : v32, size) ? -1 : 0;
  }
  Allocator& alloc = cuda_backend(device).allocator();
  ScratchBlock scratch{alloc, alloc.allocate(sizeof(unsigned long long))};
  auto* word = static_cast<unsigned long long*>(scratch.a.ptr);
  // All bits set: ULLONG_MAX, "no bad position yet".
  check(cudaMemsetAsync(word, 0xFF, sizeof *word, st), "cudaMemsetAsync (index check)");
  const dim3 grid(static_cast<unsigned>(p.launch.grid)), block(static_cast<unsigned>(p.launch.block));
  if (i64) {
    index_check_kernel<int64_t><<<grid, block, 0, st>>>(static_cast<const int64_t*>(index.data),
                                                        p.stride, p.count, size, word);
  } else {
    index_check_kernel<int32_t><<<grid, block, 0, st>>>(static_cast<const int32_t*>(index.data),
                                                        p.stride, p.count, size, word);
  }
  check(cudaGetLastError(), "index check kernel launch");
  unsigned long long first = 0;
  check(cudaMemcpyAsync(&first, word, sizeof first, cudaMemcpyDeviceToHost, st),
        "cudaMemcpyAsync (index check result)");
  check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
  return first == ULLONG_MAX ? -1 : static_cast<int64_t>(first);
}

void launch_index_select(const OpPlan& plan, int device) {
  const TensorDesc& dst = plan.dst;
  const TensorDesc& src = plan.src;
  const TensorDesc& index = plan.index;
  const KernelPlan p = plan_gather(plan, device_props(device));
  if (p.kind == KernelKind::Empty) return;
  cudaStream_t st = current_stream(device);
  char* d = static_cast<char*>(dst.data) + p.byte_offset[0];
  const char* s = static_cast<const char*>(src.data) + p.byte_offset[1];
  const char* ix = static_cast<const char*>(index.data) + p.byte_offset[2];
  if (index.dtype == DType::I64) {
    launch_gather_units<int64_t>(p, d, s, ix, st);
  } else {
    launch_gather_units<int32_t>(p, d, s, ix, st);
  }
}

}  // namespace cuda
}  // namespace sm
