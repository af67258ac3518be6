// Host-side helpers shared by the CUDA backend's .cpp and .cu files: error
// translation, the device guards, per-thread current streams, device
// properties (cuda_device.cpp), byte copies (cuda_transfers.cpp), pinned
// block tracking (cuda_memory.cpp), and the entry points the backend and the
// kernels give each other.
#pragma once

#include <cuda_runtime_api.h>

#include "backend/backend.hpp"
#include "backend/cuda/launch_plan.hpp"
#include "core/limits.hpp"

namespace sm {
namespace cuda {

constexpr int kMaxDevices = kMaxCudaDevices;

// Throws Error(SM_ERR_CUDA) naming the call and the CUDA error; clears the
// runtime's last-error slot so a later, unrelated call does not report it.
[[noreturn]] void fail_cuda(cudaError_t err, const char* what);
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fail_cuda(err, what);
}

// Makes `device` current for the scope (only calling cudaSetDevice when it
// is not already), restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
  bool switched_ = false;
};

// DeviceGuard for the noexcept paths (frees, events): errors are ignored,
// the work that follows reports its own.
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) {
    cudaGetDevice(&prev_);
    if (prev_ != device) cudaSetDevice(device);
    switched_ = prev_ != device && prev_ >= 0;
  }
  ~QuietDeviceGuard() {
    if (switched_) cudaSetDevice(prev_);
  }
  QuietDeviceGuard(const QuietDeviceGuard&) = delete;
  QuietDeviceGuard& operator=(const QuietDeviceGuard&) = delete;

 private:
  int prev_ = -1;
  bool switched_ = false;
};

// The calling thread's current stream for a device (nullptr: the legacy
// default stream). Set through Backend::set_stream (sm_set_stream), which
// checks the stream belongs to the device.
cudaStream_t current_stream(int device);
void set_current_stream(int device, cudaStream_t stream);

// Throws Error(SM_ERR_DEVICE): `what` needs a CUDA device and none is usable
// (the reason discovery found).
[[noreturn]] void fail_unusable(const char* what);

// Properties of a device, read once.
const DeviceProps& device_props(int device);

// Lowest compute capability (major * 10 + minor) the kernels were built for:
// older devices cannot run them. Defined in a .cu file from __CUDA_ARCH_LIST__.
int min_built_arch();

// Raw byte copies for every device pair that involves CUDA (see
// Backend::copy_bytes for the contract).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

// Pinned (CUDA_HOST) blocks read by asynchronous copies are not handed out
// again before the copy on `stream` of `device` is done. No-op for memory the
// pinned allocator does not own.
void pinned_record_use(const void* ptr, int device, cudaStream_t stream);

// The kernels of one device (cuda_kernels.cpp).
Kernels& device_kernels(int device);

}  // namespace cuda
}  // namespace sm
