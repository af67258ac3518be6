// A caching allocator for host memory with whole blocks, the inside of the
// pinned host allocator (CUDA_HOST; the raw allocation functions are
// injected). The CPU device uses DeviceCachingAllocator over host memory
// instead, for its lower peak memory under varied sizes
// (backend/cpu/host_memory.hpp; bench/RESULTS.md, "Why the code is shaped as
// it is"). Freed
// blocks are kept in a small pool (<= SM_SMALL_BLOCK_MAX, exact size classes
// of SM_ALLOC_ROUND bytes) or a large pool (best fit, reused only if the block
// wastes at most 1/8 of it), and returned to the system by empty_cache().
// Blocks are never split: in a snapshot every system allocation is a segment
// of one block. A block that work in flight may still read is freed in two
// steps (hold, then release_held): no storage holds it any more, so it leaves
// allocated_bytes at once, as a device block waiting for other streams does,
// but until release_held it joins no pool and a snapshot shows it
// pending_free. A request larger than the machine's RAM + swap
// (memory/host_memory_limit.hpp) is refused here.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "memory/caching_allocator_base.hpp"
#include "stridemem.h"

namespace sm {

class CachingHostAllocator final : public CachingAllocatorBase {
 public:
  using RawAlloc = void* (*)(size_t nbytes);  // nullptr on failure
  using RawFree = void (*)(void* ptr);
  // name: "cpu", "cuda_host" (messages, snapshots); device: for the OOM observer.
  CachingHostAllocator(RawAlloc raw_alloc, RawFree raw_free, const char* name,
                       sm_device device = sm_device{SM_DEVICE_CPU, 0})
      : raw_alloc_(raw_alloc), raw_free_(raw_free), name_(name), device_(device) {}
  ~CachingHostAllocator() override;

  using Allocator::allocate;
  Allocation allocate(size_t nbytes, uint64_t owner) override;
  void deallocate(const Allocation& a) noexcept override;
  // The first step of a held-back free: the counters and the history of
  // deallocate, the block kept out of reuse (and of empty_cache).
  void hold(const Allocation& a) noexcept;
  // The second step: a held block joins its pool, reusable.
  void release_held(const Allocation& a) noexcept;
  void empty_cache() override;

  // Rounding rule, public for tests: multiple of SM_ALLOC_ROUND, at least one unit.
  static size_t round_size(size_t nbytes);
  // Reuse rule: may a cached block of block_size serve a rounded request?
  static bool reuses(bool small_pool, size_t block_size, size_t request);

 private:
  struct Block;  // one system allocation: live (in the live list) or cached (in a pool)
  using Pool = std::multimap<size_t, Block*>;

  Block* take_cached_locked(size_t size);
  static void link_locked(Block*& head, Block* b) noexcept;
  static void unlink_locked(Block*& head, Block* b) noexcept;
  // What every free counts: the block leaves the live list and the allocated bytes.
  void count_free_locked(Block* b) noexcept;
  void pool_insert_locked(Block* b) noexcept;
  void release_block_locked(Block* b) noexcept;
  void release_all_cached_locked();
  AllocatorSnapshot snapshot_locked(bool with_history) const override;
  [[noreturn]] void fail_oom(std::unique_lock<std::mutex>& lock, size_t nbytes, size_t size,
                             const std::string& why);

  RawAlloc raw_alloc_;
  RawFree raw_free_;
  const char* name_;
  sm_device device_;
  Pool small_free_, large_free_;
  Block* live_ = nullptr;  // doubly linked list of the blocks storages hold
  Block* held_ = nullptr;  // doubly linked list of the blocks freed but held back
};

}  // namespace sm
