// The CUDA runtime as the backend sees it: errors turned into sm::Error, the
// device guard, the per-thread current streams, which devices are usable and
// their properties (see cuda_common.hpp).
#include <cuda_runtime_api.h>
#include <link.h>

#include <mutex>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_common.hpp"
#include "core/error.hpp"

namespace sm {
namespace cuda {

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
thread_local cudaStream_t t_streams[kMaxDevices] = {};
}  // namespace

cudaStream_t current_stream(int device) { return t_streams[device]; }
void set_current_stream(int device, cudaStream_t stream) { t_streams[device] = stream; }

namespace {

struct Discovery {
  int count = 0;
  std::string reason;
};

// Whether this program has no dynamic loader (linked with -static or
// -static-pie): its own image, the first object dl_iterate_phdr reports, names
// no interpreter. The CUDA runtime reaches the driver by dlopen()ing
// libcuda.so.1, which exists only as a shared library; in such a program that
// library would run on a second C library of its own beside the program's
// static one (its own heap, thread-local storage and locks), which the driver
// does not survive. Such a program gets the CPU and this reason instead.
bool without_dynamic_loader() {
  bool interp = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_INTERP) *static_cast<bool*>(data) = true;
        return 1;
      },
      &interp);
  return !interp;
}

const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery r;
    if (without_dynamic_loader()) {
      r.reason =
          "this program is statically linked (no dynamic loader), and the NVIDIA driver "
          "(libcuda.so.1) is a shared library that cannot be loaded into it safely; link the C "
          "library dynamically to use a GPU (pkg-config: -Wl,-Bstatic -lstridemem -Wl,-Bdynamic)";
      return r;
    }
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

void fail_unusable(const char* what) {
  fail(SM_ERR_DEVICE, "%s: no usable CUDA device: %s", what, discovery().reason.c_str());
}

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

}  // namespace cuda

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

}  // namespace sm
