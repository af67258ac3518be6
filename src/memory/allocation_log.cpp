#include "memory/allocation_log.hpp"

#include <chrono>
#include <ctime>
#include <type_traits>

#include "core/error.hpp"

namespace sm {

namespace {
// Both read at load time, together, so start_unix_us() names the instant
// that now_us() counts from.
const std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();
const int64_t g_start_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
}  // namespace

int64_t now_us() noexcept {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               g_start)
      .count();
}

int64_t coarse_now_us() noexcept {
#if defined(__linux__) && defined(CLOCK_MONOTONIC_COARSE)
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, which the coarse clock
  // follows at a lower resolution: the same origin, so the two mix.
  static_assert(std::is_same_v<std::chrono::steady_clock::duration, std::chrono::nanoseconds>,
                "steady_clock counts nanoseconds of CLOCK_MONOTONIC");
  timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0) {
    const int64_t ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    const int64_t us = (ns - g_start.time_since_epoch().count()) / 1000;
    return us > 0 ? us : 0;
  }
#endif
  return now_us();
}

int64_t start_unix_us() noexcept { return g_start_unix_us; }

const char* history_action_name(HistoryAction a) noexcept {
  switch (a) {
    case HistoryAction::alloc: return "alloc";
    case HistoryAction::free: return "free";
    case HistoryAction::segment_map: return "segment_map";
    case HistoryAction::segment_unmap: return "segment_unmap";
    case HistoryAction::empty_cache: return "empty_cache";
    case HistoryAction::oom: return "oom";
  }
  return "unknown";
}

void AllocationLog::set_capacity(int64_t n) {
  if (n < 0 || n > kMaxEvents)
    fail(SM_ERR_INVALID_ARGUMENT,
         "max_events = %lld: give 0 (stop recording) or 1 .. %lld events (each costs about "
         "%zu bytes of host memory)",
         static_cast<long long>(n), static_cast<long long>(kMaxEvents), sizeof(HistoryEvent));
  std::vector<HistoryEvent> ring;
  if (n) {
    try {
      ring.reserve(static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
      fail(SM_ERR_OUT_OF_MEMORY, "no host memory for a history of %lld events (%zu bytes each)",
           static_cast<long long>(n), sizeof(HistoryEvent));
    }
  }
  ring_.swap(ring);
  capacity_ = static_cast<size_t>(n);
  next_ = 0;
  recorded_ = 0;
}

void AllocationLog::append(HistoryAction action, size_t size, size_t requested,
                           const void* address, void* stream, const BlockMeta* block,
                           const AllocatorStats& stats) noexcept {
  HistoryEvent e;
  e.action = action;
  // An alloc event happens when its block was stamped (one clock read, not two).
  e.time_us = action == HistoryAction::alloc && block ? block->time_us : now_us();
  e.size = size;
  e.requested = requested;
  e.address = reinterpret_cast<uintptr_t>(address);
  e.stream = stream;
  if (block) {
    e.seq = block->seq;
    e.tag = block->tag;
  } else if (action == HistoryAction::oom) {
    e.tag = current_tag();  // who asked
  }
  e.allocated_bytes = stats.allocated_bytes;
  e.reserved_bytes = stats.reserved_bytes;
  // Room for capacity_ events was reserved when recording started, so
  // neither branch allocates (noexcept holds).
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(e));
  } else {
    ring_[next_] = std::move(e);
    next_ = (next_ + 1) % capacity_;
  }
  ++recorded_;
}

HistoryCopy AllocationLog::copy() const {
  HistoryCopy h;
  h.enabled = capacity_ != 0;
  h.capacity = capacity_;
  h.recorded = recorded_;
  h.events.reserve(ring_.size());
  // Oldest first: once full, the oldest is at next_.
  for (size_t i = 0; i < ring_.size(); ++i) h.events.push_back(ring_[(next_ + i) % ring_.size()]);
  return h;
}

}  // namespace sm
