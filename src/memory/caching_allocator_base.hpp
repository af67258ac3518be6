// What the caching allocators (host and device) share: one mutex over their
// state, their statistics and their history log, and the Allocator calls
// that only read or reset those. Each allocator says how its blocks appear
// in a snapshot (snapshot_locked).
#pragma once

#include <cstdint>
#include <mutex>

#include "memory/allocation_log.hpp"
#include "memory/allocator.hpp"

namespace sm {

class CachingAllocatorBase : public Allocator {
 public:
  AllocatorStats stats() override {
    std::lock_guard<std::mutex> lock(mu_);
    return st_;
  }
  AllocatorSnapshot snapshot() override {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshot_locked(true);
  }
  void record_history(int64_t max_events) override {
    std::lock_guard<std::mutex> lock(mu_);
    log_.set_capacity(max_events);
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(mu_);
    st_.peak_allocated_bytes = st_.allocated_bytes;
    st_.peak_reserved_bytes = st_.reserved_bytes;
  }

 protected:
  // The snapshot, mu_ held. with_history false: no copy of the history ring
  // (the out-of-memory report does not use it, and it may hold 2^24 events).
  virtual AllocatorSnapshot snapshot_locked(bool with_history) const = 0;

  std::mutex mu_;
  AllocatorStats st_;
  AllocationLog log_;
};

}  // namespace sm
