// What an allocator holds, copied out under its lock in one instant
// (Allocator::snapshot), and the figures computed from such a copy: pool
// totals, fragmentation, holders by tag, the out-of-memory report. Pure
// functions of the copy, so they are unit-tested on hand-made snapshots;
// the engine turns a snapshot into JSON (sm_memory_snapshot) and text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memory/allocation_log.hpp"
#include "memory/allocator_stats.hpp"

namespace sm {

enum class BlockState : uint8_t {
  allocated,       // held by a live storage
  pending_free,    // freed, waiting for other streams' work (record_stream)
  inactive_split,  // free, in a segment that still has an allocated block
  cached_free,     // free, the whole segment: empty_cache would return it
};
const char* block_state_name(BlockState s) noexcept;

struct SnapshotBlock {
  size_t offset = 0;  // from the segment's address
  size_t size = 0;
  size_t requested = 0;  // 0 unless allocated
  BlockState state = BlockState::cached_free;
  BlockMeta meta;  // seq 0 unless allocated
};

struct SnapshotSegment {
  uintptr_t address = 0;
  size_t size = 0;
  bool small_pool = false;
  bool has_stream = false;  // device memory: stream is its pool's stream
  void* stream = nullptr;
  std::vector<SnapshotBlock> blocks;  // tile the segment, in address order
};

// The allocator's reuse rule: would a free block of block_size bytes in the
// given pool serve a request of `request` bytes (already rounded)?
using ReuseRule = bool (*)(bool small_pool, size_t block_size, size_t request);

struct AllocatorSnapshot {
  AllocatorStats stats;                   // the counters in the same instant
  std::vector<SnapshotSegment> segments;  // by address
  ReuseRule reuse = nullptr;
  HistoryCopy history;
};

// Segments in address order, as snapshots list them.
void sort_by_address(std::vector<SnapshotSegment>& segments);

// ---- figures computed from a snapshot -------------------------------------------------------

struct PoolFigures {
  size_t segments = 0;
  uint64_t reserved_bytes = 0, allocated_bytes = 0, free_bytes = 0;
  uint64_t largest_free_block = 0;
  double ratio = 0;  // 1 - largest_free_block / free_bytes (0 when nothing is free)
};
struct UnusableFigure {
  uint64_t request = 0;
  uint64_t unusable_bytes = 0;  // cached free bytes a request of this size could not use
};
struct Fragmentation {
  PoolFigures small, large;
  uint64_t free_bytes = 0, largest_free_block = 0;
  double ratio = 0;
  std::vector<UnusableFigure> unusable;
};
// Free = every state but allocated. unusable: for kProbeSizes.
Fragmentation fragmentation(const AllocatorSnapshot& s);
// Request sizes the `unusable` figures are given for: 512 B .. 1 GiB.
extern const std::vector<uint64_t> kProbeSizes;

struct TagTotal {
  Tag tag;  // nullptr: untagged
  uint64_t allocated_bytes = 0, requested_bytes = 0;
  size_t blocks = 0;
};
// Allocated blocks by tag, most bytes first (ties: by name, untagged last).
std::vector<TagTotal> tag_totals(const AllocatorSnapshot& s);

// A tag for one line of text: "(untagged)" for none, cut to at most
// max_bytes with "..." (never inside a UTF-8 sequence). Snapshots carry the
// whole tag.
std::string tag_label(const Tag& t, size_t max_bytes);

// The text of an out-of-memory error: what was asked (request bytes,
// rounded to `rounded`), why it failed, what the allocator holds (allocated,
// reserved, cached free, the largest free block and fragmentation) and the
// largest holders by tag, then what to do.
std::string oom_report(const std::string& device, size_t request, size_t rounded,
                       const std::string& why, const AllocatorSnapshot& s);

}  // namespace sm
