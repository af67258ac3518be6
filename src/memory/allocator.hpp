// The interface every allocator implements (caching host, pinned host,
// caching device) and the backends hand to the engine. Knows no device API:
// what an allocator needs from a device is injected into it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/allocator_stats.hpp"
#include "memory/memory_snapshot.hpp"

namespace sm {

// One block handed out by an Allocator.
struct Allocation {
  void* ptr = nullptr;  // nullptr for size 0
  size_t size = 0;      // rounded size actually reserved for it
  size_t requested = 0;
  void* ctx = nullptr;  // allocator-private (block record)
};

// Caching allocator per device. Thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Throws Error(SM_ERR_OUT_OF_MEMORY) when the system refuses, after freeing
  // the cache and retrying once; the message is oom_report()'s, and the OOM
  // observer has seen it. Size 0 gives {nullptr, 0}. owner: the id of the
  // storage the block is for, shown by snapshots (0: none); the calling
  // thread's tag is recorded too.
  virtual Allocation allocate(size_t nbytes, uint64_t owner) = 0;
  Allocation allocate(size_t nbytes) { return allocate(nbytes, 0); }
  virtual void deallocate(const Allocation& a) noexcept = 0;
  virtual AllocatorStats stats() = 0;
  // Every segment and block with the counters, in one instant.
  virtual AllocatorSnapshot snapshot() = 0;
  // History ring of max_events (AllocationLog::set_capacity; 0: off).
  virtual void record_history(int64_t max_events) = 0;
  virtual void reset_peak() = 0;
  virtual void empty_cache() = 0;
  // The block will not be reused before the work queued on stream so far is
  // done (device memory, pinned memory); a no-op for plain host memory.
  virtual void record_stream(const Allocation& a, void* stream) { (void)a, (void)stream; }
  // The system allocation (segment) a live block was carved from: its base
  // and size, so that a block can be shared as segment + offset (CUDA IPC
  // hands out whole cudaMalloc allocations only). False where blocks are not
  // carved from segments.
  virtual bool segment_of(const Allocation& a, void** base, size_t* size) {
    (void)a, (void)base, (void)size;
    return false;
  }
};

}  // namespace sm
