#include "memory/caching_host_allocator.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "memory/fault_injection.hpp"
#include "memory/host_memory_limit.hpp"
#include "memory/out_of_memory.hpp"

namespace sm {

// One system allocation. The record travels with the memory (pool entry
// while cached, Allocation::ctx and the live list while a storage holds it),
// so a cache hit allocates nothing.
struct CachingHostAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;
  BlockMeta meta;
  Block* prev = nullptr;  // live list
  Block* next = nullptr;
};

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

bool CachingHostAllocator::reuses(bool small_pool, size_t block_size, size_t request) {
  if ((request <= SM_SMALL_BLOCK_MAX) != small_pool || block_size < request) return false;
  // Small pool: exact size classes only. Large pool: best fit wasting <= 1/8.
  return small_pool ? block_size == request : block_size - request <= block_size / 8;
}

CachingHostAllocator::Block* CachingHostAllocator::take_cached_locked(size_t size) {
  const bool small = size <= SM_SMALL_BLOCK_MAX;
  Pool& pool = small ? small_free_ : large_free_;
  auto it = pool.lower_bound(size);  // the best fit, if any fits
  if (it == pool.end() || !reuses(small, it->first, size)) return nullptr;
  Block* b = it->second;
  pool.erase(it);
  return b;
}

void CachingHostAllocator::link_locked(Block*& head, Block* b) noexcept {
  b->prev = nullptr;
  b->next = head;
  if (head) head->prev = b;
  head = b;
}

void CachingHostAllocator::unlink_locked(Block*& head, Block* b) noexcept {
  if (b->prev) b->prev->next = b->next;
  else head = b->next;
  if (b->next) b->next->prev = b->prev;
  b->prev = b->next = nullptr;
}

Allocation CachingHostAllocator::allocate(size_t nbytes, uint64_t owner) {
  Allocation a;
  a.requested = nbytes;
  if (nbytes == 0) return a;  // zero-size storages are ordinary: no block
  const size_t size = round_size(nbytes);
  std::unique_lock<std::mutex> lock(mu_);
  if (fault_injection_should_fail())
    fail_oom(lock, nbytes, size, "injected fault (sm_debug_fail_alloc)");
  // More than RAM + swap could never be backed, whatever the system says now
  // (memory/host_memory_limit.hpp). No retry can help, but the cache is given
  // back all the same, so that every out-of-memory failure leaves the one
  // documented state (sm_empty_cache in stridemem.h).
  const size_t limit = host_memory_limit();
  if (size > limit) {
    release_all_cached_locked();
    fail_oom(lock, nbytes, size, over_host_memory_limit(limit));
  }
  Block* b = take_cached_locked(size);
  if (b) {
    st_.cache_hits++;
  } else {
    b = new Block();  // std::bad_alloc: SM_ERR_OUT_OF_MEMORY at the ABI, nothing changed
    void* p = size != SIZE_MAX ? raw_alloc_(size) : nullptr;
    if (!p) {
      // Give the cache back and retry once before reporting.
      release_all_cached_locked();
      if (size != SIZE_MAX) p = raw_alloc_(size);
    }
    if (!p) {
      delete b;
      fail_oom(lock, nbytes, size,
               "the system refused, after the cache was returned to it and the request retried");
    }
    b->ptr = static_cast<char*>(p);
    b->size = size;
    st_.device_allocs++;
    st_.reserved_bytes += static_cast<int64_t>(size);
    st_.peak_reserved_bytes = std::max(st_.peak_reserved_bytes, st_.reserved_bytes);
    log_.record(HistoryAction::segment_map, size, 0, p, nullptr, nullptr, st_);
  }
  b->requested = nbytes;
  b->meta = log_.stamp(owner);
  link_locked(live_, b);
  st_.num_allocs++;
  st_.allocated_bytes += static_cast<int64_t>(b->size);
  st_.requested_bytes += static_cast<int64_t>(nbytes);
  st_.peak_allocated_bytes = std::max(st_.peak_allocated_bytes, st_.allocated_bytes);
  log_.record(HistoryAction::alloc, b->size, nbytes, b->ptr, nullptr, &b->meta, st_);
  a.ptr = b->ptr;
  a.size = b->size;
  a.ctx = b;
  return a;
}

void CachingHostAllocator::count_free_locked(Block* b) noexcept {
  unlink_locked(live_, b);
  st_.num_frees++;
  st_.allocated_bytes -= static_cast<int64_t>(b->size);
  st_.requested_bytes -= static_cast<int64_t>(b->requested);
  log_.record(HistoryAction::free, b->size, b->requested, b->ptr, nullptr, &b->meta, st_);
  b->requested = 0;
  b->meta = BlockMeta();  // drops the tag reference
}

void CachingHostAllocator::pool_insert_locked(Block* b) noexcept {
  Pool& pool = b->size <= SM_SMALL_BLOCK_MAX ? small_free_ : large_free_;
  try {
    pool.emplace(b->size, b);
  } catch (...) {
    // Could not even record the block: hand it back to the system.
    release_block_locked(b);
  }
}

void CachingHostAllocator::deallocate(const Allocation& a) noexcept {
  if (!a.ptr) return;
  Block* b = static_cast<Block*>(a.ctx);
  std::lock_guard<std::mutex> lock(mu_);
  count_free_locked(b);
  pool_insert_locked(b);
}

void CachingHostAllocator::hold(const Allocation& a) noexcept {
  if (!a.ptr) return;
  Block* b = static_cast<Block*>(a.ctx);
  std::lock_guard<std::mutex> lock(mu_);
  count_free_locked(b);
  link_locked(held_, b);
}

void CachingHostAllocator::release_held(const Allocation& a) noexcept {
  if (!a.ptr) return;
  Block* b = static_cast<Block*>(a.ctx);
  std::lock_guard<std::mutex> lock(mu_);
  unlink_locked(held_, b);
  pool_insert_locked(b);
}

void CachingHostAllocator::release_block_locked(Block* b) noexcept {
  raw_free_(b->ptr);
  st_.device_frees++;
  st_.reserved_bytes -= static_cast<int64_t>(b->size);
  log_.record(HistoryAction::segment_unmap, b->size, 0, b->ptr, nullptr, nullptr, st_);
  delete b;
}

void CachingHostAllocator::release_all_cached_locked() {
  for (Pool* pool : {&small_free_, &large_free_}) {
    for (auto& kv : *pool) release_block_locked(kv.second);
    pool->clear();
  }
}

AllocatorSnapshot CachingHostAllocator::snapshot_locked(bool with_history) const {
  AllocatorSnapshot s;
  s.stats = st_;
  s.reuse = &CachingHostAllocator::reuses;
  auto add = [&](const Block* b, BlockState state) {
    SnapshotSegment seg;
    seg.address = reinterpret_cast<uintptr_t>(b->ptr);
    seg.size = b->size;
    seg.small_pool = b->size <= SM_SMALL_BLOCK_MAX;
    SnapshotBlock blk;
    blk.size = b->size;
    blk.state = state;
    if (state == BlockState::allocated) {
      blk.requested = b->requested;
      blk.meta = b->meta;
    }
    seg.blocks.push_back(std::move(blk));
    s.segments.push_back(std::move(seg));
  };
  for (const Block* b = live_; b; b = b->next) add(b, BlockState::allocated);
  for (const Block* b = held_; b; b = b->next) add(b, BlockState::pending_free);
  for (const Pool* pool : {&small_free_, &large_free_})
    for (const auto& kv : *pool) add(kv.second, BlockState::cached_free);
  sort_by_address(s.segments);
  if (with_history) s.history = log_.copy();
  return s;
}

void CachingHostAllocator::fail_oom(std::unique_lock<std::mutex>& lock, size_t nbytes,
                                    size_t size, const std::string& why) {
  log_.record(HistoryAction::oom, nbytes, nbytes, nullptr, nullptr, nullptr, st_);
  const AllocatorStats stats = st_;
  fail_out_of_memory_unlocking(lock, [&] { return snapshot_locked(false); }, stats, device_,
                               name_, nbytes, size, why);
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_all_cached_locked();
  log_.record(HistoryAction::empty_cache, 0, 0, nullptr, nullptr, nullptr, st_);
}

}  // namespace sm
