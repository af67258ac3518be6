// The block-splitting caching allocator, written without any device API: the
// raw allocation, stream and event functions are injected through
// DeviceMemoryOps. It serves every GPU (the CUDA backend plugs in
// cudaMalloc/cudaFree/cudaEvent*) and the CPU device (host memory, no
// streams: backend/cpu/host_memory.hpp); the block logic is unit-tested with
// a fake device (tests/unit/test_device_caching_allocator.cpp).
//
// The design PyTorch's CUDACachingAllocator made familiar:
//  - requests round up to SM_ALLOC_ROUND (512 B);
//  - small requests (<= SM_SMALL_BLOCK_MAX, 1 MiB) are carved from 2 MiB
//    segments; large ones from segments of 20 MiB (requests under 10 MiB) or
//    of the request rounded up to 2 MiB;
//  - a free block is split when the rest is worth keeping (>= 512 B in the
//    small pool, > 1 MiB in the large pool) and merged with free neighbours
//    of its segment when freed;
//  - a freed block goes back to the pool of the stream it was allocated on
//    and is only handed out again for that stream: work queued on that stream
//    is ordered after every earlier use. record_stream() adds other streams;
//    freeing such a block records an event on each of them and the block
//    waits (in `pending`) until all have completed;
//  - the hot path (a cached allocate/deallocate) never frees device memory
//    and never synchronizes: raw_free and event waits happen only in
//    empty_cache() and in the retry after a failed raw_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "memory/caching_allocator_base.hpp"
#include "stridemem.h"

namespace sm {

// What a device offers the allocator. Streams and events are opaque handles;
// nullptr is a valid stream (the device's default stream).
class DeviceMemoryOps {
 public:
  virtual ~DeviceMemoryOps() = default;
  // The device's type (SM_DEVICE_*): the OOM observer's sm_device.
  virtual int32_t device_type() const { return SM_DEVICE_CUDA; }
  // False for a device without streams (the CPU): current_stream() is always
  // nullptr, record_stream() is a no-op, snapshots show no stream.
  virtual bool has_streams() const { return true; }
  // The most one request may take on this device (SIZE_MAX: no limit), and
  // why more is refused. Checked (read at each new segment) before raw_alloc:
  // a request whose rounded size is larger fails with SM_ERR_OUT_OF_MEMORY
  // after the cache is returned, with the reason in the report, and the
  // device is not asked; no segment larger than the limit is asked for (a
  // request under it whose usual segment is larger gets a segment of its
  // own size). Host memory: RAM + swap (memory/host_memory_limit.hpp).
  virtual size_t request_limit() const { return SIZE_MAX; }
  virtual std::string over_request_limit(size_t limit) const {
    return "more than " + std::to_string(limit) + " bytes, the most one request may take";
  }
  // For memory checkers (AddressSanitizer, valgrind), host memory only:
  // whether to call the two below (read once, at construction), which mark
  // bytes no storage may touch (free blocks, the slack between a block's
  // requested and rounded size) and make a block's requested bytes usable
  // again when it is handed out.
  virtual bool marks_access() const { return false; }
  virtual void mark_no_access(void* ptr, size_t nbytes) noexcept { (void)ptr, (void)nbytes; }
  virtual void mark_usable(void* ptr, size_t nbytes) noexcept { (void)ptr, (void)nbytes; }
  // nullptr when the device has no room; throws sm::Error for other failures.
  virtual void* raw_alloc(size_t nbytes) = 0;
  virtual void raw_free(void* ptr) noexcept = 0;
  // The calling thread's current stream on this device.
  virtual void* current_stream() = 0;
  virtual void* event_create() = 0;
  virtual void event_destroy(void* event) noexcept = 0;
  // Marks the point in `stream` after all work queued there so far.
  virtual void event_record(void* event, void* stream) = 0;
  // True once the work before the recorded point has finished.
  virtual bool event_query(void* event) = 0;
  virtual void event_synchronize(void* event) = 0;
  // "cuda:0", for messages.
  virtual std::string device_name() const = 0;
  // The device's index (its sm_device is {SM_DEVICE_CUDA, index}).
  virtual int device_index() const = 0;
};

class DeviceCachingAllocator final : public CachingAllocatorBase {
 public:
  static constexpr size_t kRound = SM_ALLOC_ROUND;
  static constexpr size_t kSmallMax = SM_SMALL_BLOCK_MAX;
  static constexpr size_t kSmallSegment = 2u << 20;
  static constexpr size_t kMediumSegment = 20u << 20;  // for large requests < 10 MiB
  static constexpr size_t kMediumLimit = 10u << 20;
  static constexpr size_t kSegmentRound = 2u << 20;

  // ops must outlive the allocator.
  explicit DeviceCachingAllocator(DeviceMemoryOps* ops)
      : ops_(ops), has_streams_(ops->has_streams()), marks_(ops->marks_access()) {}
  // Returns cached segments to the device. Blocks still live are left alone
  // (their storages own them).
  ~DeviceCachingAllocator() override;
  DeviceCachingAllocator(const DeviceCachingAllocator&) = delete;
  DeviceCachingAllocator& operator=(const DeviceCachingAllocator&) = delete;

  // On the calling thread's current stream.
  using Allocator::allocate;
  Allocation allocate(size_t nbytes, uint64_t owner) override;
  void deallocate(const Allocation& a) noexcept override;
  // Waits for pending events, then frees every segment with no live block.
  void empty_cache() override;
  void record_stream(const Allocation& a, void* stream) override;
  bool segment_of(const Allocation& a, void** base, size_t* size) override;

  // Rounding rules, public for tests. round_size: multiple of kRound (0 for
  // 0, SIZE_MAX when it would overflow). segment_size: bytes reserved from
  // the device for a rounded request that finds no cached block.
  static size_t round_size(size_t nbytes);
  static size_t segment_size(size_t rounded);
  // Reuse rule (what find_free_locked's lower_bound picks): a free block of
  // the request's pool at least as large, streams aside.
  static bool reuses(bool small_pool, size_t block_size, size_t request);

  // Introspection for tests and the memory summary.
  struct CacheInfo {
    size_t segments = 0;        // device allocations held
    size_t free_blocks = 0;     // blocks in the pools
    size_t free_bytes = 0;
    size_t pending_blocks = 0;  // freed, waiting for events
  };
  CacheInfo cache_info();

 private:
  struct Block;
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockLess>;
  struct PendingEvent {
    void* event;
    Block* block;
  };

  Pool& pool_for(size_t size) { return size <= kSmallMax ? small_ : large_; }
  Block* find_free_locked(size_t size, void* stream);
  Block* split_locked(Block* b, size_t size);
  void free_block_locked(Block* b) noexcept;
  // Merges b->next (out of its pool) into b, in the same segment.
  void absorb_next_locked(Block* b) noexcept;
  static Pool::node_type make_node(Block* b);
  void recycle_locked(Block* b) noexcept;
  void pool_insert_locked(Block* b) noexcept;
  void insert_events_locked(Block* b) noexcept;
  void process_events_locked();
  void wait_all_events_locked();
  void release_cached_locked();
  void* take_event_locked();
  AllocatorSnapshot snapshot_locked(bool with_history) const override;
  [[noreturn]] void fail_oom(std::unique_lock<std::mutex>& lock, size_t nbytes, size_t size,
                             const std::string& why);

  DeviceMemoryOps* ops_;
  const bool has_streams_;
  const bool marks_;  // ops_->marks_access()
  Pool small_, large_;
  // The first block of every segment. A segment's first block never changes:
  // merging keeps the left block and deletes the right one.
  std::set<Block*> segment_heads_;
  std::vector<PendingEvent> pending_;
  std::vector<void*> spare_events_;
  // One Block record and one pool node kept for the next split, so that a
  // cached allocate/deallocate pair allocates nothing, and so that nothing
  // after allocate's first lines can fail for want of host memory.
  Block* spare_block_ = nullptr;
  Pool::node_type spare_node_;
};

}  // namespace sm
