// The small interface every device backend implements (CPU in
// src/backend/cpu, CUDA in src/backend/cuda). The engine above it knows
// nothing of C handles; backends know nothing of tensors or storages: they
// see raw pointers, dtypes and strided descriptors only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/host_device.hpp"
#include "core/limits.hpp"
#include "core/error.hpp"
#include "backend/tiling.hpp"
#include "layout/coalesce.hpp"
#include "memory/allocator.hpp"
#include "memory/ipc_mapping_cache.hpp"
#include "stridemem.h"

namespace sm {

// One strided operand of a kernel: `data` is the address of logical element
// [0, ..., 0] (storage base + offset * itemsize); strides in elements, any
// sign, 0 for broadcast dims of sources.
struct TensorDesc {
  void* data = nullptr;
  DType dtype = DType::F32;
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  int64_t numel() const { return element_count(sizes, ndim); }
};

struct OpPlan;  // backend/op_plan.hpp

// Data-moving kernels. Preconditions the engine guarantees before planning
// (index_select states its own, below): operands have identical sizes
// (sources already expanded with stride 0); dst has no internal overlap; a
// source either does not overlap dst or is identical to it (same data,
// strides, dtype); numel may be 0; ndim may be 0.
// Calls may be asynchronous on the device's current stream (CUDA); the CPU
// backend returns when done.
class Kernels {
 public:
  virtual ~Kernels() = default;

  // Carries out an operation plan (backend/op_plan.hpp), each element exactly
  // as core/element_ops.hpp defines it; a plan of kind Nothing does nothing.
  virtual void run(const OpPlan& plan) = 0;
  // What the plans this backend runs are made for (the tiling rule's
  // parameters, backend/tiling.hpp).
  virtual PlanTarget target() const = 0;

  // The plan of each call, run (backend/op_plan.cpp):
  // dst[i] = convert<dst.dtype>(src[i]); same-dtype copies move the bits
  // unchanged (NaN payloads included).
  void copy(const TensorDesc& dst, const TensorDesc& src);
  // dst[i] = op(dst[i], a, b) for the ops the op table gives a scalar form
  // (core/element_ops.hpp). The engine has already checked the op is valid
  // for dst.dtype.
  void scalar_op(const TensorDesc& dst, sm_op op, double a, double b);
  // dst[i] = op(dst[i], other[i]) for the ops with a tensor form: FILL
  // (= other, a copy), ADD (dst + alpha*other), SUB (dst - alpha*other), MUL,
  // DIV.
  void tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha);

  // ---- index_select (the index is read where it lives, through its stride) ----
  // `index`: a 1-d int32 or int64 operand of this device, any stride (0 and
  // negative included), any length (0 included). Returns the position of the
  // first element outside [-size, size), or -1 when every one is inside. Only
  // the distinct elements are read (index_scan_length): an expanded index of
  // any length costs one element. Synchronous (CUDA: waits for the current
  // stream); allocates nothing index-sized (CUDA: at most one small scratch
  // block, through the device's allocator).
  virtual int64_t first_out_of_range(const TensorDesc& index, int64_t size) = 0;

  // dst[..., i, ...] = src[..., wrap_index(index[i], src.sizes[dim]), ...]
  // along dim. Preconditions: dst and src have the same dtype and ndim >= 1
  // (the engine presents 0-d operands as one-element vectors), the same sizes
  // except along dim, where dst.sizes[dim] == index.sizes[0]; 0 <= dim < ndim;
  // index is 1-d int32/int64 on this device and every element already passed
  // first_out_of_range; dst has no internal overlap and overlaps neither src
  // nor index (it is a fresh tensor). numel may be 0. Runs plan_gather's
  // plan.
  void index_select(const TensorDesc& dst, const TensorDesc& src, int dim,
                    const TensorDesc& index);
};

// The index rules every backend applies, one definition for host and device
// (PyTorch's: -size <= v < size, negative values count from the end).
SM_HOST_DEVICE inline bool index_in_range(int64_t v, int64_t size) { return v >= -size && v < size; }
SM_HOST_DEVICE inline int64_t wrap_index(int64_t v, int64_t size) { return v < 0 ? v + size : v; }

// How many leading elements of a 1-d index hold all of its distinct
// positions: an expanded (stride-0) index repeats element 0, so its length
// never decides what validation costs.
inline int64_t index_scan_length(const TensorDesc& index) {
  const int64_t n = index.sizes[0];
  return index.strides[0] == 0 && n > 1 ? 1 : n;
}

// Everything the engine needs from one device.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;
  virtual Kernels& kernels() = 0;
  // Raw byte copies between any two devices where this backend is involved
  // (the engine asks the CUDA backend whenever either side is CUDA, else the
  // CPU backend). Returns when dst may be read from the host for host
  // destinations; device destinations are ordered on the current stream.
  virtual void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                          size_t nbytes) = 0;
  virtual void synchronize() = 0;
  // Per-thread current stream (CPU: only NULL accepted).
  virtual void set_stream(void* stream) = 0;
  virtual void* get_stream() = 0;

  // Sharing device memory with other processes (CUDA IPC; other devices
  // share host memory through the OS, engine/sharing.*, and refuse these).
  // The handle of a whole device allocation (a caching-allocator segment's
  // base), and opening / closing another process's handle in this one.
  virtual IpcHandle ipc_handle(void* segment_base) {
    (void)segment_base;
    fail(SM_ERR_UNSUPPORTED, "%s memory has no IPC handles", device_type_name(device().type));
  }
  virtual void* ipc_open(const IpcHandle& handle) {
    (void)handle;
    fail(SM_ERR_UNSUPPORTED, "%s memory has no IPC handles", device_type_name(device().type));
  }
  virtual void ipc_close(void* base) noexcept { (void)base; }
};

// The backend for a device; throws Error(SM_ERR_DEVICE) for a device type that
// does not exist, an index out of range, or CUDA when no GPU is usable (the
// message says why: not built with CUDA, no device, driver error).
Backend& backend_for(Device device);
// CPU-side backends and pieces other backends reuse.
Backend& cpu_backend();
Kernels& cpu_kernels();  // also serves pinned host memory (SM_DEVICE_CUDA_HOST)
Backend& cuda_host_backend();   // pinned host memory (throws SM_ERR_DEVICE without CUDA)
Backend& cuda_backend(int index);  // throws SM_ERR_DEVICE when unusable
int cuda_device_count() noexcept;  // 0 when not built with CUDA or no GPU
// Why CUDA is unusable ("" when usable).
const char* cuda_unavailable_reason() noexcept;

// Number of threads (caller included) large CPU copies may use. 0 = one per
// core available to the process. The initial value comes from the environment
// variable STRIDEMEM_NUM_THREADS (unset, empty or invalid: 0). Negative values
// are treated as 0; values above 256 as 256. Thread-safe.
void set_cpu_threads(int n);
// The effective count (>= 1): the setting, with 0 resolved to the core count.
int get_cpu_threads();

}  // namespace sm
