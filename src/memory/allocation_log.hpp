// What every allocator records about its blocks, in one place: the
// allocation sequence number, time and tag of each block (shown by
// snapshots), and the optional bounded history of events
// (sm_memory_record_history). An allocator owns one AllocationLog and calls
// it under its own lock, so events are in the order the allocator served them
// and the totals an event carries are exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory/alloc_tags.hpp"
#include "memory/allocator_stats.hpp"

namespace sm {

// Microseconds on a monotonic clock that starts when the library is loaded.
int64_t now_us() noexcept;
// The same clock read cheaply (Linux: CLOCK_MONOTONIC_COARSE), to the
// kernel's tick (1-4 ms): what every block records when no history is
// recorded, since a precise read would dominate the allocator's hot path
// (bench/RESULTS.md, "Why the code is shaped as it is").
int64_t coarse_now_us() noexcept;
// When that clock started, in microseconds since the Unix epoch.
int64_t start_unix_us() noexcept;

// Recorded for a block when it is handed out.
struct BlockMeta {
  uint64_t seq = 0;    // this allocator's allocations numbered from 1
  int64_t time_us = 0;
  uint64_t owner = 0;  // id of the storage it is for (0: none)
  Tag tag;
};

enum class HistoryAction : uint8_t { alloc, free, segment_map, segment_unmap, empty_cache, oom };
const char* history_action_name(HistoryAction a) noexcept;

struct HistoryEvent {
  HistoryAction action = HistoryAction::alloc;
  uint64_t seq = 0;  // the block's sequence number (alloc, free), else 0
  int64_t time_us = 0;
  size_t size = 0;   // block / segment / request bytes
  size_t requested = 0;
  uintptr_t address = 0;
  void* stream = nullptr;
  Tag tag;
  int64_t allocated_bytes = 0;  // the allocator's totals right after the event
  int64_t reserved_bytes = 0;
};

// The history ring, as a snapshot reports it.
struct HistoryCopy {
  bool enabled = false;
  size_t capacity = 0;
  uint64_t recorded = 0;             // every event since recording started
  std::vector<HistoryEvent> events;  // the newest `capacity`, oldest first
};

class AllocationLog {
 public:
  // Largest ring sm_memory_record_history accepts.
  static constexpr int64_t kMaxEvents = int64_t(1) << 24;

  // The record of a block handed out now for `owner`, under the calling
  // thread's tag.
  BlockMeta stamp(uint64_t owner) {
    BlockMeta m;
    m.seq = ++seq_;
    m.time_us = capacity_ ? now_us() : coarse_now_us();
    m.owner = owner;
    m.tag = current_tag();
    return m;
  }

  bool recording() const noexcept { return capacity_ != 0; }
  // Appends an event (a no-op while not recording: one predictable branch,
  // so history off costs nothing measurable). stats: the totals after it.
  void record(HistoryAction action, size_t size, size_t requested, const void* address,
              void* stream, const BlockMeta* block, const AllocatorStats& stats) noexcept {
    if (capacity_) append(action, size, requested, address, stream, block, stats);
  }
  // 0 stops recording and drops the events; n > 0 starts a fresh ring of n
  // events (dropping what an earlier ring held). Throws for n outside
  // [0, kMaxEvents] and when the ring cannot be allocated (nothing changes).
  void set_capacity(int64_t n);
  HistoryCopy copy() const;

 private:
  void append(HistoryAction action, size_t size, size_t requested, const void* address,
              void* stream, const BlockMeta* block, const AllocatorStats& stats) noexcept;

  uint64_t seq_ = 0;
  size_t capacity_ = 0;
  std::vector<HistoryEvent> ring_;  // reserved to capacity_ when recording
  size_t next_ = 0;                 // slot of the next event once the ring is full
  uint64_t recorded_ = 0;
};

}  // namespace sm
