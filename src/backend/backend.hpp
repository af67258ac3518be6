// The small interface every device backend implements (CPU in
// src/backend/cpu, CUDA in src/backend/cuda). The engine above it knows
// nothing of C handles; backends know nothing of tensors or storages: they
// see raw pointers, dtypes and strided descriptors only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"
#include "layout/layout.hpp"
#include "stridemem.h"

namespace sm {

struct Device {
  int32_t type = SM_DEVICE_CPU;
  int32_t index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// One strided operand of a kernel: `data` is the address of logical element
// [0, ..., 0] (storage base + offset * itemsize); strides in elements, any
// sign, 0 for broadcast dims of sources.
struct TensorDesc {
  void* data = nullptr;
  DType dtype = DType::F32;
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= sizes[i];
    return n;
  }
};

// Data-moving kernels. Preconditions the engine guarantees before calling:
// operands have identical sizes (sources already expanded with stride 0);
// dst has no internal overlap; a source either does not overlap dst or is
// identical to it (same data, strides, dtype); numel may be 0; ndim may be 0.
// Calls may be asynchronous on the device's current stream (CUDA); the CPU
// backend returns when done.
class Kernels {
 public:
  virtual ~Kernels() = default;

  // dst[i] = convert<dst.dtype>(src[i]); same-dtype copies move the bits
  // unchanged (NaN payloads included).
  virtual void copy(const TensorDesc& dst, const TensorDesc& src) = 0;

  // dst[i] = op(dst[i], a, b) for the scalar ops of sm_op (FILL, ZERO, ADD,
  // SUB, MUL, DIV, CLAMP, RELU, NEG, ABS, SQRT, EXP). The engine has already
  // checked the op is valid for dst.dtype (see engine/inplace.cpp). Compute
  // type: int64 with wrap-around for integers (bool only FILL/ZERO), float
  // for f16/bf16/f32, double for f64; a and b are cast to the compute type.
  // CLAMP: a = min, b = max, NaN bound means no bound, NaN elements stay NaN.
  // RELU keeps NaN.
  virtual void scalar_op(const TensorDesc& dst, sm_op op, double a, double b) = 0;

  // dst[i] = op(dst[i], other[i]) for FILL (= other), ADD (dst + alpha*other),
  // SUB (dst - alpha*other), MUL, DIV. Compute type: double if either dtype
  // is f64; float if either is floating; else int64 (wrapping). Result cast
  // to dst.dtype with convert<>.
  virtual void tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other,
                         double alpha) = 0;
};

// One block handed out by an Allocator.
struct Allocation {
  void* ptr = nullptr;  // nullptr for size 0
  size_t size = 0;      // rounded size actually reserved for it
  size_t requested = 0;
  void* ctx = nullptr;  // allocator-private (block record)
};

struct AllocatorStats {
  int64_t allocated_bytes = 0, reserved_bytes = 0;
  int64_t peak_allocated_bytes = 0, peak_reserved_bytes = 0;
  int64_t num_allocs = 0, num_frees = 0, cache_hits = 0;
  int64_t device_allocs = 0, device_frees = 0;
  int64_t requested_bytes = 0;
};

// Caching allocator per device. Thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Throws Error(SM_ERR_OUT_OF_MEMORY) when the system refuses, after freeing
  // the cache and retrying once. Size 0 gives {nullptr, 0}.
  virtual Allocation allocate(size_t nbytes) = 0;
  virtual void deallocate(const Allocation& a) noexcept = 0;
  virtual AllocatorStats stats() = 0;
  virtual void reset_peak() = 0;
  virtual void empty_cache() = 0;
  // The block will not be reused before the work queued on stream so far is
  // done (CUDA); CPU: no-op.
  virtual void record_stream(const Allocation& a, void* stream) { (void)a, (void)stream; }
};

// Process-wide fault injection shared by every allocator: returns true when
// this allocation must fail (see sm_debug_fail_alloc).
bool fault_injection_should_fail();
void fault_injection_set(int64_t nth);

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

}  // namespace sm
