// The CPU device: the block-splitting caching allocator over host memory
// (backend/cpu/host_memory.hpp), the CPU kernels, and memcpy for byte copies
// between host memories.
#include <cstring>

#include "backend/backend.hpp"
#include "backend/cpu/host_memory.hpp"
#include "core/error.hpp"
#include "memory/device_caching_allocator.hpp"

namespace sm {

namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend() : alloc_(&ops_) {}
  Device device() const override { return Device{SM_DEVICE_CPU, 0}; }
  Allocator& allocator() override { return alloc_; }
  Kernels& kernels() override { return cpu_kernels(); }
  void copy_bytes(void* dst, Device, const void* src, Device, size_t n) override {
    if (n) std::memmove(dst, src, n);
  }
  void synchronize() override {}
  void set_stream(void* stream) override {
    if (stream) fail(SM_ERR_INVALID_ARGUMENT, "sm_set_stream: the CPU device has no streams (pass NULL)");
  }
  void* get_stream() override { return nullptr; }

 private:
  HostMemoryOps ops_;  // before alloc_, which uses it
  DeviceCachingAllocator alloc_;
};

}  // namespace

Backend& cpu_backend() {
  // Leaked on purpose: storages released during static destruction (a host
  // language's GC at exit) must still find their allocator.
  static CpuBackend* b = new CpuBackend();
  return *b;
}

}  // namespace sm
