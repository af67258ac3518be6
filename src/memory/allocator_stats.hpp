// The counters every allocator keeps (sm_memory_stats reads them).
#pragma once

#include <cstdint>

namespace sm {

struct AllocatorStats {
  int64_t allocated_bytes = 0, reserved_bytes = 0;
  int64_t peak_allocated_bytes = 0, peak_reserved_bytes = 0;
  int64_t num_allocs = 0, num_frees = 0, cache_hits = 0;
  int64_t device_allocs = 0, device_frees = 0;
  int64_t requested_bytes = 0;
};

}  // namespace sm
