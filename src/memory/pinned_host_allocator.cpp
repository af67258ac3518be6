#include "memory/pinned_host_allocator.hpp"

namespace sm {

Allocation PinnedHostAllocator::allocate(size_t nbytes, uint64_t owner) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    process_pending_locked(false);
  }
  Allocation a = inner_.allocate(nbytes, owner);
  if (!a.ptr) return a;
  try {
    std::lock_guard<std::mutex> lock(mu_);
    live_[reinterpret_cast<uintptr_t>(a.ptr)] = Live{a.size, {}};
  } catch (...) {
    inner_.deallocate(a);
    throw;
  }
  return a;
}

void PinnedHostAllocator::deallocate(const Allocation& a) noexcept {
  if (!a.ptr) return;
  std::vector<Use> uses;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(a.ptr));
    if (it != live_.end()) {
      uses.swap(it->second.uses);
      live_.erase(it);
    }
  }
  Pending p;
  p.alloc = a;
  try {
    for (const Use& u : uses) {
      void* e = events_->record(u.device, u.stream);
      if (!e) {
        // No proof of when that copy finishes: wait for its device instead.
        events_->synchronize_device(u.device);
        continue;
      }
      try {
        p.events.push_back(e);
      } catch (...) {
        events_->done(e, true);
        events_->destroy(e);
        throw;
      }
    }
    if (!p.events.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.push_back(std::move(p));
      // Under mu_, so that no reaping of pending_ releases it before it is held.
      inner_.hold(a);
      return;
    }
  } catch (...) {
    // Out of host memory while holding the block back: wait for the copies
    // here instead, then let the block go.
    for (void* e : p.events) {
      events_->done(e, true);
      events_->destroy(e);
    }
  }
  inner_.deallocate(a);
}

void PinnedHostAllocator::empty_cache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    process_pending_locked(true);
  }
  inner_.empty_cache();
}

void PinnedHostAllocator::record_stream(const Allocation& a, void* stream) {
  if (!a.ptr) return;
  record_use(a.ptr, events_->stream_device(stream), stream);
}

void PinnedHostAllocator::record_use(const void* ptr, int device, void* stream) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(p);
  if (it == live_.begin()) return;
  --it;
  if (p >= it->first + it->second.size) return;  // not ours (from_blob, registered memory)
  for (const Use& u : it->second.uses)
    if (u.device == device && u.stream == stream) return;
  it->second.uses.push_back(Use{device, stream});
}

size_t PinnedHostAllocator::pending_blocks() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

void PinnedHostAllocator::process_pending_locked(bool wait) {
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    bool done = true;
    for (void* e : p.events) {
      if (!events_->done(e, wait)) {
        done = false;
        break;
      }
    }
    if (!done) {
      ++i;
      continue;
    }
    for (void* e : p.events) events_->destroy(e);
    inner_.release_held(p.alloc);
    pending_[i] = std::move(pending_.back());
    pending_.pop_back();
  }
}

}  // namespace sm
