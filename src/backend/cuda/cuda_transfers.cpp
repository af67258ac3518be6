// Byte copies between CUDA devices and the host: same-device and host copies
// on the current stream, peer copies ordered against both devices' streams,
// with peer access enabled once per pair.
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_common.hpp"

namespace sm {
namespace cuda {

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
}  // namespace sm
