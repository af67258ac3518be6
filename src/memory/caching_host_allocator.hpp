// A caching allocator for host memory (pageable for the CPU device, pinned
// for CUDA_HOST: the raw allocation functions are injected). Freed blocks are
// kept in a small pool (<= SM_SMALL_BLOCK_MAX, exact size classes of
// SM_ALLOC_ROUND bytes) or a large pool (best fit, reused only if the block
// wastes at most 1/8 of it), and returned to the system by empty_cache().
// Every host allocation comes through here, so this is where a request larger
// than the machine's RAM + swap (memory/host_memory_limit.hpp) is refused.
#pragma once

#include <map>
#include <mutex>

#include "memory/allocator.hpp"
#include "stridemem.h"

namespace sm {

class CachingHostAllocator final : public Allocator {
 public:
  using RawAlloc = void* (*)(size_t nbytes);  // nullptr on failure
  using RawFree = void (*)(void* ptr);
  CachingHostAllocator(RawAlloc raw_alloc, RawFree raw_free, const char* name)
      : raw_alloc_(raw_alloc), raw_free_(raw_free), name_(name) {}
  ~CachingHostAllocator() override;

  Allocation allocate(size_t nbytes) override;
  void deallocate(const Allocation& a) noexcept override;
  AllocatorStats stats() override;
  void reset_peak() override;
  void empty_cache() override;

  // Rounding rule, public for tests: multiple of SM_ALLOC_ROUND, at least one unit.
  static size_t round_size(size_t nbytes);

 private:
  void* take_cached_locked(size_t size, size_t* got);
  void release_all_cached_locked();

  RawAlloc raw_alloc_;
  RawFree raw_free_;
  const char* name_;
  std::mutex mu_;
  std::multimap<size_t, void*> small_free_;  // size -> block
  std::multimap<size_t, void*> large_free_;
  AllocatorStats st_;
};

}  // namespace sm
