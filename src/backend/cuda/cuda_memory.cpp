// The memory of CUDA devices: the device backends with their caching
// allocators (and CUDA IPC of their segments), and the pinned host backend
// (cuda_host) with the events that keep its blocks out of reuse while copies
// read them.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_common.hpp"
#include "core/error.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/pinned_host_allocator.hpp"

namespace sm {
namespace cuda {

// ---- device memory and the device backends ----------------------------------

namespace {

class CudaMemoryOps final : public DeviceMemoryOps {
 public:
  explicit CudaMemoryOps(int device) : device_(device) {}

  void* raw_alloc(size_t nbytes) override {
    DeviceGuard g(device_);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    check(err, "cudaMalloc");
    return p;
  }
  void raw_free(void* ptr) noexcept override {
    QuietDeviceGuard g(device_);
    cudaFree(ptr);
  }
  void* current_stream() override { return cuda::current_stream(device_); }
  void* event_create() override {
    DeviceGuard g(device_);
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    return e;
  }
  void event_destroy(void* e) noexcept override { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }
  void event_record(void* e, void* stream) override {
    DeviceGuard g(device_);
    check(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(stream)),
          "cudaEventRecord");
  }
  bool event_query(void* e) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (err == cudaErrorNotReady) return false;
    check(err, "cudaEventQuery");
    return true;
  }
  void event_synchronize(void* e) override {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize");
  }
  std::string device_name() const override { return "cuda:" + std::to_string(device_); }
  int device_index() const override { return device_; }

 private:
  int device_;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : index_(index), ops_(index), alloc_(&ops_) {}
  Device device() const override { return Device{SM_DEVICE_CUDA, index_}; }
  Allocator& allocator() override { return alloc_; }
  Kernels& kernels() override { return device_kernels(index_); }
  void copy_bytes(void* dst, Device dd, const void* src, Device sd, size_t n) override {
    cuda::copy_bytes(dst, dd, src, sd, n);
  }
  void synchronize() override {
    DeviceGuard g(index_);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  void set_stream(void* stream) override {
    if (stream) {
      int dev = -1;
      const cudaError_t err = cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &dev);
      if (err != cudaSuccess) {
        cudaGetLastError();
        fail(SM_ERR_INVALID_ARGUMENT, "sm_set_stream: %p is not a usable CUDA stream (%s)", stream,
             cudaGetErrorName(err));
      }
      if (dev != index_)
        fail(SM_ERR_INVALID_ARGUMENT, "sm_set_stream: the stream belongs to cuda:%d, not cuda:%d",
             dev, index_);
    }
    set_current_stream(index_, static_cast<cudaStream_t>(stream));
  }
  void* get_stream() override { return current_stream(index_); }

  // A cudaIpcMemHandle_t is 64 opaque bytes; the engine carries them as such.
  static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(IpcHandle), "cudaIpcMemHandle_t is 64 bytes");
  IpcHandle ipc_handle(void* segment_base) override {
    DeviceGuard g(index_);
    cudaIpcMemHandle_t h;
    check(cudaIpcGetMemHandle(&h, segment_base), "cudaIpcGetMemHandle");
    IpcHandle out;
    std::memcpy(out.data(), &h, sizeof h);
    return out;
  }
  void* ipc_open(const IpcHandle& handle) override {
    DeviceGuard g(index_);
    cudaIpcMemHandle_t h;
    std::memcpy(&h, handle.data(), sizeof h);
    void* p = nullptr;
    // Lazy peer access: a segment of another GPU becomes reachable when used.
    check(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
    return p;
  }
  void ipc_close(void* base) noexcept override {
    QuietDeviceGuard g(index_);
    cudaIpcCloseMemHandle(base);
  }

 private:
  int index_;
  CudaMemoryOps ops_;
  DeviceCachingAllocator alloc_;
};

std::atomic<CudaBackend*> g_backends[kMaxDevices];
std::mutex g_backends_mu;

}  // namespace

// ---- pinned host memory -------------------------------------------------------

namespace {

void* pinned_raw_alloc(size_t n) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, n, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}
void pinned_raw_free(void* p) { cudaFreeHost(p); }

// What the pinned allocator (memory/pinned_host_allocator.hpp) needs of CUDA:
// events on the streams that copies ran on.
class CudaStreamEvents final : public StreamEvents {
 public:
  void* record(int device, void* stream) noexcept override {
    cudaEvent_t e = nullptr;
    bool ok;
    {
      QuietDeviceGuard g(device);
      ok = cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess &&
           cudaEventRecord(e, static_cast<cudaStream_t>(stream)) == cudaSuccess;
    }
    if (ok) return e;
    cudaGetLastError();
    if (e) cudaEventDestroy(e);
    return nullptr;
  }
  bool done(void* event, bool wait) noexcept override {
    const cudaEvent_t e = static_cast<cudaEvent_t>(event);
    const cudaError_t err = wait ? cudaEventSynchronize(e) : cudaEventQuery(e);
    if (err == cudaErrorNotReady) return false;
    if (err != cudaSuccess) cudaGetLastError();  // a broken device: let the block go
    return true;
  }
  void destroy(void* event) noexcept override { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
  void synchronize_device(int device) noexcept override {
    QuietDeviceGuard g(device);
    if (cudaDeviceSynchronize() != cudaSuccess) cudaGetLastError();
  }
  int stream_device(void* stream) override {
    int dev = 0;
    if (stream) {
      if (cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &dev) != cudaSuccess) {
        cudaGetLastError();
        fail(SM_ERR_INVALID_ARGUMENT, "sm_record_stream: %p is not a usable CUDA stream", stream);
      }
    } else {
      check(cudaGetDevice(&dev), "cudaGetDevice");
    }
    return dev;
  }
};

class PinnedBackend final : public Backend {
 public:
  PinnedBackend() : alloc_(pinned_raw_alloc, pinned_raw_free, &events_) {}
  Device device() const override { return Device{SM_DEVICE_CUDA_HOST, 0}; }
  Allocator& allocator() override { return alloc_; }
  Kernels& kernels() override { return cpu_kernels(); }  // pinned memory is host memory
  void copy_bytes(void* dst, Device dd, const void* src, Device sd, size_t n) override {
    if (dd.type == SM_DEVICE_CUDA || sd.type == SM_DEVICE_CUDA) {
      cuda::copy_bytes(dst, dd, src, sd, n);
    } else if (n) {
      std::memmove(dst, src, n);
    }
  }
  void synchronize() override {
    // Pinned memory may be in flight to or from any GPU this process uses.
    for (int i = 0; i < kMaxDevices; ++i) {
      if (!g_backends[i].load(std::memory_order_acquire)) continue;
      DeviceGuard g(i);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
  }
  void set_stream(void* stream) override {
    if (stream)
      fail(SM_ERR_INVALID_ARGUMENT,
           "sm_set_stream: pinned host memory (cuda_host) has no streams of its own (pass NULL; "
           "copies use the GPU's current stream)");
  }
  void* get_stream() override { return nullptr; }
  PinnedHostAllocator& pinned() { return alloc_; }

 private:
  CudaStreamEvents events_;
  PinnedHostAllocator alloc_;
};

std::atomic<PinnedBackend*> g_pinned{nullptr};
std::once_flag g_pinned_once;

}  // namespace

void pinned_record_use(const void* ptr, int device, cudaStream_t stream) {
  if (PinnedBackend* b = g_pinned.load(std::memory_order_acquire))
    b->pinned().record_use(ptr, device, stream);
}

}  // namespace cuda

Backend& cuda_backend(int index) {
  const int count = cuda_device_count();
  if (count == 0) cuda::fail_unusable(("cuda:" + std::to_string(index)).c_str());
  if (index < 0 || index >= count)
    fail(SM_ERR_DEVICE, "device cuda:%d does not exist (%d usable CUDA device%s: cuda:0..cuda:%d)",
         index, count, count == 1 ? "" : "s", count - 1);
  cuda::CudaBackend* b = cuda::g_backends[index].load(std::memory_order_acquire);
  if (b) return *b;
  std::lock_guard<std::mutex> lock(cuda::g_backends_mu);
  b = cuda::g_backends[index].load(std::memory_order_relaxed);
  if (!b) {
    // Leaked on purpose: storages released during static destruction must
    // still find their allocator, and cudaFree after the runtime has shut
    // down would fail anyway.
    b = new cuda::CudaBackend(index);
    cuda::g_backends[index].store(b, std::memory_order_release);
  }
  return *b;
}

Backend& cuda_host_backend() {
  if (cuda_device_count() == 0) cuda::fail_unusable("cuda_host");
  std::call_once(cuda::g_pinned_once, [] { cuda::g_pinned.store(new cuda::PinnedBackend()); });
  return *cuda::g_pinned.load(std::memory_order_acquire);
}

}  // namespace sm
