// The CPU device: caching host allocator over aligned malloc, the CPU
// kernels, and memcpy for byte copies between host memories.
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

#include "backend/backend.hpp"
#include "backend/cpu/host_memory.hpp"
#include "core/error.hpp"
#include "memory/caching_host_allocator.hpp"

namespace sm {

// 256-byte alignment: covers cache lines and SIMD loads, and lets a stack of
// views promise SM_STACK_ALIGNMENT in absolute addresses (blocks are multiples
// of SM_ALLOC_ROUND = 512 bytes, so no padding is wasted).
void* cpu_host_alloc(size_t n) {
  constexpr size_t kHuge = size_t(2) << 20;
  if (n < 2 * kHuge) return std::aligned_alloc(SM_STACK_ALIGNMENT, (n + 255) / 256 * 256);
  // Large blocks: 2 MiB aligned and hinted onto transparent huge pages, for
  // fewer TLB misses in strided copies (NumPy does the same); only a hint.
  const size_t size = (n + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, size);
  if (p) madvise(p, size, MADV_HUGEPAGE);
  return p;
}
void cpu_host_free(void* p) { std::free(p); }

namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend() : alloc_(cpu_host_alloc, cpu_host_free, "cpu") {}
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
  CachingHostAllocator alloc_;
};

}  // namespace

Backend& cpu_backend() {
  // Leaked on purpose: storages released during static destruction (a host
  // language's GC at exit) must still find their allocator.
  static CpuBackend* b = new CpuBackend();
  return *b;
}

}  // namespace sm
