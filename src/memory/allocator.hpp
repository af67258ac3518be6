// The interface every allocator implements (caching host, pinned host,
// caching device) and the backends hand to the engine. Knows no device API:
// what an allocator needs from a device is injected into it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sm {

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
  // done (device memory, pinned memory); a no-op for plain host memory.
  virtual void record_stream(const Allocation& a, void* stream) { (void)a, (void)stream; }
};

}  // namespace sm
