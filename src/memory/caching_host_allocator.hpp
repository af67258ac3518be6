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
// of one block. A request larger than the machine's RAM + swap
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
  void empty_cache() override;

  // Rounding rule, public for tests: multiple of SM_ALLOC_ROUND, at least one unit.
  static size_t round_size(size_t nbytes);
  // Reuse rule: may a cached block of block_size serve a rounded request?
  static bool reuses(bool small_pool, size_t block_size, size_t request);

 private:
  struct Block;  // one system allocation: live (in the live list) or cached (in a pool)
  using Pool = std::multimap<size_t, Block*>;

  Block* take_cached_locked(size_t size);
  void link_live_locked(Block* b) noexcept;
  void unlink_live_locked(Block* b) noexcept;
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
};

}  // namespace sm
