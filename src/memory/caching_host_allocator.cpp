#include "memory/caching_host_allocator.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "memory/fault_injection.hpp"
#include "memory/host_memory_limit.hpp"

namespace sm {

namespace {
// Block record kept in Allocation::ctx: the size class the block belongs to.
struct HostBlock {
  size_t size;
};
}  // namespace

CachingHostAllocator::~CachingHostAllocator() {
  // Process exit: cached blocks go back; live ones belong to live storages
  // (leaked on purpose rather than freed under a user's feet).
  std::lock_guard<std::mutex> lock(mu_);
  release_all_cached_locked();
}

size_t CachingHostAllocator::round_size(size_t nbytes) {
  const size_t unit = SM_ALLOC_ROUND;
  if (nbytes == 0) return 0;
  if (nbytes > SIZE_MAX - unit) return SIZE_MAX;  // caller reports OOM
  return (nbytes + unit - 1) / unit * unit;
}

void* CachingHostAllocator::take_cached_locked(size_t size, size_t* got) {
  auto& pool = size <= SM_SMALL_BLOCK_MAX ? small_free_ : large_free_;
  auto it = pool.lower_bound(size);
  if (it == pool.end()) return nullptr;
  // Small pool: exact size classes only. Large pool: best fit wasting <= 1/8.
  if (size <= SM_SMALL_BLOCK_MAX ? it->first != size : it->first - size > it->first / 8)
    return nullptr;
  void* p = it->second;
  *got = it->first;
  pool.erase(it);
  return p;
}

Allocation CachingHostAllocator::allocate(size_t nbytes) {
  Allocation a;
  a.requested = nbytes;
  if (nbytes == 0) return a;  // zero-size storages are ordinary: no block
  const size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (fault_injection_should_fail())
    fail(SM_ERR_OUT_OF_MEMORY, "%s: allocation of %zu bytes failed (injected fault)", name_, nbytes);
  // More than RAM + swap could never be backed, whatever the system says now
  // (memory/host_memory_limit.hpp). No retry can help, but the cache is given
  // back all the same, so that every out-of-memory failure leaves the one
  // documented state (sm_empty_cache in stridemem.h).
  const size_t limit = host_memory_limit();
  if (size > limit) {
    release_all_cached_locked();
    fail_over_host_memory_limit(name_, nbytes, limit);
  }
  size_t got = 0;
  void* p = take_cached_locked(size, &got);
  if (p) {
    st_.cache_hits++;
  } else {
    got = size;
    if (size != SIZE_MAX) p = raw_alloc_(size);
    if (!p) {
      // Give the cache back and retry once before reporting.
      release_all_cached_locked();
      if (size != SIZE_MAX) p = raw_alloc_(size);
    }
    if (!p)
      fail(SM_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes (the system refused)", name_, nbytes);
    st_.device_allocs++;
    st_.reserved_bytes += static_cast<int64_t>(got);
    st_.peak_reserved_bytes = std::max(st_.peak_reserved_bytes, st_.reserved_bytes);
  }
  st_.num_allocs++;
  st_.allocated_bytes += static_cast<int64_t>(got);
  st_.requested_bytes += static_cast<int64_t>(nbytes);
  st_.peak_allocated_bytes = std::max(st_.peak_allocated_bytes, st_.allocated_bytes);
  a.ptr = p;
  a.size = got;
  return a;
}

void CachingHostAllocator::deallocate(const Allocation& a) noexcept {
  if (!a.ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  st_.num_frees++;
  st_.allocated_bytes -= static_cast<int64_t>(a.size);
  st_.requested_bytes -= static_cast<int64_t>(a.requested);
  auto& pool = a.size <= SM_SMALL_BLOCK_MAX ? small_free_ : large_free_;
  try {
    pool.emplace(a.size, a.ptr);
  } catch (...) {
    // Could not even record the block: hand it back to the system.
    raw_free_(a.ptr);
    st_.device_frees++;
    st_.reserved_bytes -= static_cast<int64_t>(a.size);
  }
}

void CachingHostAllocator::release_all_cached_locked() {
  for (auto* pool : {&small_free_, &large_free_}) {
    for (auto& kv : *pool) {
      raw_free_(kv.second);
      st_.device_frees++;
      st_.reserved_bytes -= static_cast<int64_t>(kv.first);
    }
    pool->clear();
  }
}

AllocatorStats CachingHostAllocator::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return st_;
}

void CachingHostAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  st_.peak_allocated_bytes = st_.allocated_bytes;
  st_.peak_reserved_bytes = st_.reserved_bytes;
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_all_cached_locked();
}

}  // namespace sm
