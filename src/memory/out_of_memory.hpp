// How every allocator fails for lack of memory: one report (oom_report: what
// was asked, what is held, fragmentation, the largest holders by tag, what to
// do), the process-wide observer (sm_set_oom_observer) told first, then
// Error(SM_ERR_OUT_OF_MEMORY) with the report as its message.
//
// The allocator calls fail_out_of_memory() after releasing its lock, so the
// observer may call back into the library (take a snapshot, free memory). An
// out-of-memory failure inside the observer does not call it again.
#pragma once

#include <mutex>
#include <string>

#include "memory/memory_snapshot.hpp"
#include "stridemem.h"

namespace sm {

// Returns once the calls of the replaced observers have returned (except the
// caller's own and those replacing the observer themselves: see stridemem.h).
void set_oom_observer(sm_oom_observer observer, void* user_data) noexcept;

// s: the allocator's snapshot taken under its lock when the request failed,
// without the history ring (its stats alone when no copy could be made).
[[noreturn]] void fail_out_of_memory(sm_device device, const std::string& device_name,
                                     size_t request, size_t rounded, const std::string& why,
                                     const AllocatorSnapshot& s);

// The same from inside an allocator holding `lock`: take() copies its
// snapshot (without the history ring, which the report does not read); when
// even that copy finds no host memory, the counters alone (`stats`) go into
// the report. Then the lock is released and the failure reported.
template <class TakeSnapshot>
[[noreturn]] void fail_out_of_memory_unlocking(std::unique_lock<std::mutex>& lock,
                                               TakeSnapshot&& take, const AllocatorStats& stats,
                                               sm_device device, const std::string& device_name,
                                               size_t request, size_t rounded,
                                               const std::string& why) {
  AllocatorSnapshot s;
  try {
    s = take();
  } catch (...) {
    s = AllocatorSnapshot();
    s.stats = stats;
  }
  lock.unlock();
  fail_out_of_memory(device, device_name, request, rounded, why, s);
}

}  // namespace sm
