#include "memory/device_caching_allocator.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "core/error.hpp"
#include "memory/fault_injection.hpp"
#include "memory/out_of_memory.hpp"

namespace sm {

// A run of bytes inside one segment (a device allocation). Segments are the
// chains linked by prev/next; a block with neither is a whole segment.
struct DeviceCachingAllocator::Block {
  void* stream = nullptr;  // the stream it was allocated on (its pool key)
  size_t size = 0;
  char* ptr = nullptr;
  size_t requested = 0;
  bool allocated = false;
  bool small = false;  // lives in the small pool (its segment is a small one)
  Block* prev = nullptr;
  Block* next = nullptr;
  std::vector<void*> stream_uses;  // other streams that used it (record_stream)
  int event_count = 0;             // outstanding events before it may be reused
  BlockMeta meta;                  // while allocated
  // Out of the pools (allocated, pending), the pool node it goes back into:
  // freeing a block never allocates, so it can never lose one.
  Pool::node_type node;
};

bool DeviceCachingAllocator::BlockLess::operator()(const Block* a, const Block* b) const {
  // By stream, then size (best fit = lower_bound), then address.
  const std::less<const void*> lt;
  if (a->stream != b->stream) return lt(a->stream, b->stream);
  if (a->size != b->size) return a->size < b->size;
  return lt(a->ptr, b->ptr);
}

DeviceCachingAllocator::~DeviceCachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    wait_all_events_locked();
  } catch (...) {
    // The device is gone or broken: blocks still pending are simply dropped.
  }
  release_cached_locked();
  for (void* e : spare_events_) ops_->event_destroy(e);
  spare_events_.clear();
  delete spare_block_;
}

size_t DeviceCachingAllocator::round_size(size_t nbytes) {
  if (nbytes == 0) return 0;
  if (nbytes > SIZE_MAX - (kRound - 1)) return SIZE_MAX;
  return (nbytes + kRound - 1) / kRound * kRound;
}

size_t DeviceCachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallMax) return kSmallSegment;
  if (rounded < kMediumLimit) return kMediumSegment;
  if (rounded > SIZE_MAX - (kSegmentRound - 1)) return SIZE_MAX;
  return (rounded + kSegmentRound - 1) / kSegmentRound * kSegmentRound;
}

bool DeviceCachingAllocator::reuses(bool small_pool, size_t block_size, size_t request) {
  return (request <= kSmallMax) == small_pool && block_size >= request;
}

Allocation DeviceCachingAllocator::allocate(size_t nbytes, uint64_t owner) {
  Allocation a;
  a.requested = nbytes;
  if (nbytes == 0) return a;  // zero-size storages are ordinary: no block
  const size_t size = round_size(nbytes);
  void* const stream = has_streams_ ? ops_->current_stream() : nullptr;
  std::unique_lock<std::mutex> lock(mu_);
  if (fault_injection_should_fail()) fail_oom(lock, nbytes, size, "injected fault (sm_debug_fail_alloc)");
  if (!pending_.empty()) process_events_locked();
  // What a split (or a new segment's first block) needs, taken before anything
  // changes: a failed operator new leaves the allocator as it was.
  if (!spare_block_) spare_block_ = new Block();
  if (spare_node_.empty()) spare_node_ = make_node(spare_block_);

  Block* b = find_free_locked(size, stream);
  if (b) {
    st_.cache_hits++;
  } else {
    size_t seg = segment_size(size);
    // The device's limit on one request (host memory: RAM + swap). A request
    // over it could never be backed and is refused before the device is
    // asked; no retry can help, but the cache is given back all the same, so
    // that every out-of-memory failure leaves the one documented state
    // (sm_empty_cache in stridemem.h). A request under it whose segment would
    // not fit gets a segment of its own size.
    const size_t limit = ops_->request_limit();
    if (seg > limit) {
      if (size > limit) {
        wait_all_events_locked();
        release_cached_locked();
        fail_oom(lock, nbytes, size, ops_->over_request_limit(limit));
      }
      seg = size;
    }
    void* p = seg == SIZE_MAX ? nullptr : ops_->raw_alloc(seg);
    if (!p && seg != SIZE_MAX) {
      // Give back every cached segment (after the events holding blocks have
      // completed) and retry once before reporting.
      wait_all_events_locked();
      release_cached_locked();
      p = ops_->raw_alloc(seg);
    }
    if (!p)
      fail_oom(lock, nbytes, size,
               seg == SIZE_MAX ? "the size overflows"
                               : "the device refused, after every cached segment was returned "
                                 "to it and the request retried");
    try {
      b = new Block();
      b->node = make_node(b);
      segment_heads_.insert(b);
    } catch (...) {
      delete b;
      ops_->raw_free(p);
      throw;
    }
    b->stream = stream;
    b->size = seg;
    b->ptr = static_cast<char*>(p);
    b->small = size <= kSmallMax;
    if (marks_) ops_->mark_no_access(p, seg);
    st_.device_allocs++;
    st_.reserved_bytes += static_cast<int64_t>(seg);
    st_.peak_reserved_bytes = std::max(st_.peak_reserved_bytes, st_.reserved_bytes);
    log_.record(HistoryAction::segment_map, seg, 0, p, stream, nullptr, st_);
  }
  b = split_locked(b, size);
  b->allocated = true;
  b->requested = nbytes;
  b->meta = log_.stamp(owner);
  st_.num_allocs++;
  st_.allocated_bytes += static_cast<int64_t>(b->size);
  st_.requested_bytes += static_cast<int64_t>(nbytes);
  st_.peak_allocated_bytes = std::max(st_.peak_allocated_bytes, st_.allocated_bytes);
  log_.record(HistoryAction::alloc, b->size, nbytes, b->ptr, b->stream, &b->meta, st_);
  if (marks_) ops_->mark_usable(b->ptr, nbytes);  // the slack up to b->size stays marked
  a.ptr = b->ptr;
  a.size = b->size;
  a.ctx = b;
  return a;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::find_free_locked(size_t size, void* stream) {
  Pool& pool = size <= kSmallMax ? small_ : large_;
  Block key;
  key.stream = stream;
  key.size = size;
  key.ptr = nullptr;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  b->node = pool.extract(it);
  return b;
}

DeviceCachingAllocator::Pool::node_type DeviceCachingAllocator::make_node(Block* b) {
  Pool one;
  one.insert(b);  // the only element: nothing is compared
  return one.extract(one.begin());
}

void DeviceCachingAllocator::recycle_locked(Block* b) noexcept {
  if (spare_node_.empty() && !b->node.empty()) spare_node_ = std::move(b->node);
  if (spare_block_) {
    delete b;
    return;
  }
  b->node = Pool::node_type();
  b->prev = b->next = nullptr;
  b->requested = 0;
  b->allocated = false;
  b->event_count = 0;
  spare_block_ = b;
}

void DeviceCachingAllocator::pool_insert_locked(Block* b) noexcept {
  b->node.value() = b;
  (b->small ? small_ : large_).insert(std::move(b->node));
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::split_locked(Block* b, size_t size) {
  const size_t rest = b->size - size;
  // Small pool: any remainder that can hold a request is worth keeping. Large
  // pool: only remainders that are themselves large, so small requests never
  // fragment large segments.
  const bool split = b->small ? rest >= kRound : rest > kSmallMax;
  if (!split) return b;
  Block* r = spare_block_;  // allocate() made sure of both
  spare_block_ = nullptr;
  r->node = std::move(spare_node_);
  r->stream = b->stream;
  r->small = b->small;
  r->ptr = b->ptr + size;
  r->size = rest;
  r->prev = b;
  r->next = b->next;
  if (b->next) b->next->prev = r;
  b->next = r;
  b->size = size;
  pool_insert_locked(r);
  return b;
}

void DeviceCachingAllocator::absorb_next_locked(Block* b) noexcept {
  Block* n = b->next;
  b->size += n->size;
  b->next = n->next;
  if (n->next) n->next->prev = b;
  recycle_locked(n);
}

void DeviceCachingAllocator::free_block_locked(Block* b) noexcept {
  Pool& pool = b->small ? small_ : large_;
  b->stream_uses.clear();
  // A neighbour merges when it is free and no stream still uses it.
  auto mergeable = [](const Block* x) { return x && !x->allocated && x->event_count == 0; };
  if (Block* p = b->prev; mergeable(p)) {
    p->node = pool.extract(p);
    absorb_next_locked(p);
    b = p;
  }
  if (Block* n = b->next; mergeable(n)) {
    n->node = pool.extract(n);
    absorb_next_locked(b);
  }
  pool_insert_locked(b);
}

void DeviceCachingAllocator::deallocate(const Allocation& a) noexcept {
  if (!a.ptr) return;
  Block* b = static_cast<Block*>(a.ctx);
  std::lock_guard<std::mutex> lock(mu_);
  b->allocated = false;
  st_.num_frees++;
  st_.allocated_bytes -= static_cast<int64_t>(b->size);
  st_.requested_bytes -= static_cast<int64_t>(b->requested);
  log_.record(HistoryAction::free, b->size, b->requested, b->ptr, b->stream, &b->meta, st_);
  b->requested = 0;
  b->meta = BlockMeta();  // drops the tag reference
  if (marks_) ops_->mark_no_access(b->ptr, b->size);
  if (!b->stream_uses.empty()) {
    insert_events_locked(b);
    return;
  }
  free_block_locked(b);  // never allocates: the block kept its pool node
}

void* DeviceCachingAllocator::take_event_locked() {
  if (!spare_events_.empty()) {
    void* e = spare_events_.back();
    spare_events_.pop_back();
    return e;
  }
  return ops_->event_create();
}

void DeviceCachingAllocator::insert_events_locked(Block* b) noexcept {
  try {
    pending_.reserve(pending_.size() + b->stream_uses.size());
    spare_events_.reserve(spare_events_.size() + pending_.size() + b->stream_uses.size());
    for (void* s : b->stream_uses) {
      void* e = take_event_locked();
      try {
        ops_->event_record(e, s);
      } catch (...) {
        spare_events_.push_back(e);  // room reserved above
        throw;
      }
      pending_.push_back(PendingEvent{e, b});
      b->event_count++;
    }
    b->stream_uses.clear();
  } catch (...) {
    // An event could not be recorded, so nothing proves when that stream is
    // done with the block: keep it out of circulation for good (an extra
    // count no event will ever clear). Leaking beats a silent data race.
    b->event_count++;
  }
  if (b->event_count == 0) free_block_locked(b);
}

void DeviceCachingAllocator::process_events_locked() {
  for (size_t i = 0; i < pending_.size();) {
    PendingEvent pe = pending_[i];
    if (!ops_->event_query(pe.event)) {
      ++i;
      continue;
    }
    pending_[i] = pending_.back();
    pending_.pop_back();
    spare_events_.push_back(pe.event);
    if (--pe.block->event_count == 0) free_block_locked(pe.block);
  }
}

void DeviceCachingAllocator::wait_all_events_locked() {
  for (const PendingEvent& pe : pending_) ops_->event_synchronize(pe.event);
  process_events_locked();
}

void DeviceCachingAllocator::release_cached_locked() {
  for (Pool* pool : {&small_, &large_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev || b->next) {  // part of a segment that still has live blocks
        ++it;
        continue;
      }
      it = pool->erase(it);
      segment_heads_.erase(b);
      if (marks_) ops_->mark_usable(b->ptr, b->size);  // as the device handed it out
      ops_->raw_free(b->ptr);
      st_.device_frees++;
      st_.reserved_bytes -= static_cast<int64_t>(b->size);
      log_.record(HistoryAction::segment_unmap, b->size, 0, b->ptr, b->stream, nullptr, st_);
      delete b;
    }
  }
}

void DeviceCachingAllocator::fail_oom(std::unique_lock<std::mutex>& lock, size_t nbytes,
                                      size_t size, const std::string& why) {
  log_.record(HistoryAction::oom, nbytes, nbytes, nullptr,
              has_streams_ ? ops_->current_stream() : nullptr, nullptr, st_);
  const AllocatorStats stats = st_;
  fail_out_of_memory_unlocking(lock, [&] { return snapshot_locked(false); }, stats,
                               sm_device{ops_->device_type(), ops_->device_index()},
                               ops_->device_name(), nbytes, size, why);
}

AllocatorSnapshot DeviceCachingAllocator::snapshot_locked(bool with_history) const {
  AllocatorSnapshot s;
  s.stats = st_;
  s.reuse = &DeviceCachingAllocator::reuses;
  s.segments.reserve(segment_heads_.size());
  for (const Block* head : segment_heads_) {
    SnapshotSegment seg;
    seg.address = reinterpret_cast<uintptr_t>(head->ptr);
    seg.small_pool = head->small;
    seg.has_stream = has_streams_;
    seg.stream = head->stream;
    bool any_allocated = false;
    for (const Block* b = head; b; b = b->next) any_allocated |= b->allocated;
    for (const Block* b = head; b; b = b->next) {
      SnapshotBlock blk;
      blk.offset = static_cast<size_t>(b->ptr - head->ptr);
      blk.size = b->size;
      if (b->allocated) {
        blk.state = BlockState::allocated;
        blk.requested = b->requested;
        blk.meta = b->meta;
      } else if (b->event_count > 0) {
        blk.state = BlockState::pending_free;
      } else {
        blk.state = any_allocated ? BlockState::inactive_split : BlockState::cached_free;
      }
      seg.size += b->size;
      seg.blocks.push_back(std::move(blk));
    }
    s.segments.push_back(std::move(seg));
  }
  sort_by_address(s.segments);
  if (with_history) s.history = log_.copy();
  return s;
}

void DeviceCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  wait_all_events_locked();
  release_cached_locked();
  log_.record(HistoryAction::empty_cache, 0, 0, nullptr, nullptr, nullptr, st_);
}

void DeviceCachingAllocator::record_stream(const Allocation& a, void* stream) {
  if (!a.ptr || !has_streams_) return;  // no streams (the CPU): nothing to wait for
  Block* b = static_cast<Block*>(a.ctx);
  std::lock_guard<std::mutex> lock(mu_);
  if (stream == b->stream) return;  // its own stream orders every later reuse already
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
}

bool DeviceCachingAllocator::segment_of(const Allocation& a, void** base, size_t* size) {
  if (!a.ptr) return false;
  const Block* b = static_cast<const Block*>(a.ctx);
  std::lock_guard<std::mutex> lock(mu_);  // splits and merges relink the chain
  while (b->prev) b = b->prev;
  *base = b->ptr;
  size_t total = 0;
  for (const Block* x = b; x; x = x->next) total += x->size;
  *size = total;
  return true;
}

DeviceCachingAllocator::CacheInfo DeviceCachingAllocator::cache_info() {
  std::lock_guard<std::mutex> lock(mu_);
  CacheInfo ci;
  ci.segments = segment_heads_.size();
  for (Pool* pool : {&small_, &large_}) {
    ci.free_blocks += pool->size();
    for (const Block* b : *pool) ci.free_bytes += b->size;
  }
  std::vector<const Block*> seen;
  for (const PendingEvent& pe : pending_)
    if (std::find(seen.begin(), seen.end(), pe.block) == seen.end()) seen.push_back(pe.block);
  ci.pending_blocks = seen.size();
  return ci;
}

}  // namespace sm
