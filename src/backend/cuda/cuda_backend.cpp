// The CUDA devices and pinned host memory: discovery (with the reason when
// no GPU is usable), per-device backends with the caching allocator over
// cudaMalloc, per-thread current streams, byte copies between every device
// pair that involves CUDA, and the pinned host allocator.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_common.hpp"
#include "core/error.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/pinned_host_allocator.hpp"

namespace sm {
namespace cuda {

// ---- errors, guard, streams -----------------------------------------------------

void fail_cuda(cudaError_t err, const char* what) {
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  fail(SM_ERR_CUDA, "%s failed: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&prev_), "cudaGetDevice");
  if (prev_ != device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    switched_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (switched_) cudaSetDevice(prev_);
}

namespace {
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
}  // namespace

namespace {
thread_local cudaStream_t t_streams[kMaxDevices] = {};
}  // namespace

cudaStream_t current_stream(int device) { return t_streams[device]; }

// ---- discovery ----------------------------------------------------------------------

namespace {

struct Discovery {
  int count = 0;
  std::string reason;
};

const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery r;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      cudaGetLastError();
      r.reason = std::string("the CUDA runtime cannot use a GPU: ") + cudaGetErrorName(err) + " (" +
                 cudaGetErrorString(err) + ")";
      if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
        r.reason += "; is an NVIDIA GPU with a recent driver installed?";
      return r;
    }
    if (n <= 0) {
      r.reason = "no CUDA device found";
      return r;
    }
    // Devices older than the kernels' build targets cannot run them; count
    // the usable ones up to the first that is not (ordinals stay CUDA's).
    const int need = min_built_arch();
    for (int i = 0; i < n && i < kMaxDevices; ++i) {
      int major = 0, minor = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, i) != cudaSuccess ||
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, i) != cudaSuccess) {
        cudaGetLastError();
        r.reason = "cannot read the compute capability of cuda:" + std::to_string(i);
        break;
      }
      if (major * 10 + minor < need) {
        r.reason = "cuda:" + std::to_string(i) + " has compute capability " +
                   std::to_string(major) + "." + std::to_string(minor) +
                   " but stridemem's kernels were built for " + std::to_string(need / 10) + "." +
                   std::to_string(need % 10) + " and newer (set CMAKE_CUDA_ARCHITECTURES)";
        break;
      }
      r.count = i + 1;
    }
    return r;
  }();
  return d;
}

}  // namespace

const DeviceProps& device_props(int device) {
  static std::once_flag once[kMaxDevices];
  static DeviceProps props[kMaxDevices];
  std::call_once(once[device], [device] {
    DeviceProps p;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device) == cudaSuccess) p.sm_count = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, device) == cudaSuccess)
      p.max_threads_per_sm = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, device) == cudaSuccess)
      p.max_threads_per_block = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxGridDimX, device) == cudaSuccess) p.max_grid_x = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlock, device) == cudaSuccess)
      p.shared_mem_per_block = v;
    cudaGetLastError();
    props[device] = p;
  });
  return props[device];
}

// ---- the device allocator's view of a GPU ---------------------------------------------

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
    t_streams[index_] = static_cast<cudaStream_t>(stream);
  }
  void* get_stream() override { return t_streams[index_]; }

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

// ---- pinned host memory -------------------------------------------------------------------

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

[[noreturn]] void fail_unusable(const char* what) {
  fail(SM_ERR_DEVICE, "%s: no usable CUDA device: %s", what, discovery().reason.c_str());
}

}  // namespace

void pinned_record_use(const void* ptr, int device, cudaStream_t stream) {
  if (PinnedBackend* b = g_pinned.load(std::memory_order_acquire))
    b->pinned().record_use(ptr, device, stream);
}

// ---- byte copies ----------------------------------------------------------------------------

namespace {

// Peer access between two devices, enabled once per ordered pair.
bool peer_access(int dst, int src) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, bool> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find({dst, src});
  if (it != known.end()) return it->second;
  int can = 0;
  bool ok = cudaDeviceCanAccessPeer(&can, dst, src) == cudaSuccess && can;
  if (ok) {
    DeviceGuard g(dst);
    const cudaError_t err = cudaDeviceEnablePeerAccess(src, 0);
    ok = err == cudaSuccess || err == cudaErrorPeerAccessAlreadyEnabled;
  }
  cudaGetLastError();
  known[{dst, src}] = ok;
  return ok;
}

// Makes `waiter` wait for the work queued so far on `signaller` (events are
// recorded on the signalling stream's device).
void stream_wait(cudaStream_t waiter, int waiter_dev, cudaStream_t signaller, int signaller_dev) {
  cudaEvent_t e = nullptr;
  {
    DeviceGuard g(signaller_dev);
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    const cudaError_t err = cudaEventRecord(e, signaller);
    if (err != cudaSuccess) {
      cudaEventDestroy(e);
      fail_cuda(err, "cudaEventRecord");
    }
  }
  DeviceGuard g(waiter_dev);
  const cudaError_t err = cudaStreamWaitEvent(waiter, e, 0);
  cudaEventDestroy(e);  // released once it has completed
  check(err, "cudaStreamWaitEvent");
}

}  // namespace

void copy_bytes(void* dst, Device dd, const void* src, Device sd, size_t n) {
  if (n == 0) return;
  const bool d_gpu = dd.type == SM_DEVICE_CUDA, s_gpu = sd.type == SM_DEVICE_CUDA;
  if (d_gpu && s_gpu) {
    if (dd.index == sd.index) {
      DeviceGuard g(dd.index);
      check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, current_stream(dd.index)),
            "cudaMemcpyAsync (device to device)");
      return;
    }
    // Across GPUs, ordered after the work already queued on both sides'
    // current streams; the source's stream then waits for the copy, so its
    // memory is not reused (the caching allocator reuses it on that stream)
    // while the copy still reads it. Without peer access the runtime stages
    // the copy through host memory.
    peer_access(dd.index, sd.index);
    cudaStream_t ds = current_stream(dd.index), ss = current_stream(sd.index);
    stream_wait(ds, dd.index, ss, sd.index);
    {
      DeviceGuard g(dd.index);
      check(cudaMemcpyPeerAsync(dst, dd.index, src, sd.index, n, ds), "cudaMemcpyPeerAsync");
    }
    stream_wait(ss, sd.index, ds, dd.index);
    return;
  }
  if (d_gpu) {  // host -> device
    DeviceGuard g(dd.index);
    cudaStream_t s = current_stream(dd.index);
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync (host to device)");
    if (sd.type == SM_DEVICE_CUDA_HOST) {
      // Pinned: asynchronous; the block stays out of reuse until the copy is done.
      pinned_record_use(src, dd.index, s);
    } else {
      // Pageable: the caller may free or change the source as soon as we return.
      check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    }
    return;
  }
  if (s_gpu) {  // device -> host: host destinations are readable on return
    DeviceGuard g(sd.index);
    cudaStream_t s = current_stream(sd.index);
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (device to host)");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    return;
  }
  std::memmove(dst, src, n);
}

}  // namespace cuda

// ---- the backend.hpp entry points ----------------------------------------------------------------

int cuda_device_count() noexcept {
  try {
    return cuda::discovery().count;
  } catch (...) {
    return 0;
  }
}

const char* cuda_unavailable_reason() noexcept {
  try {
    const auto& d = cuda::discovery();
    return d.count > 0 ? "" : d.reason.c_str();
  } catch (...) {
    return "CUDA discovery failed";
  }
}

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
