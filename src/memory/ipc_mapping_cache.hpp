// The importing side of CUDA IPC: segments opened from other processes'
// handles, one opening per (device, handle) in this process however many
// storages of the segment arrive, closed when the last of them dies. CUDA
// opens a handle once per process (PyTorch keeps the same cache), and two
// storages carved from one exporter segment arrive with the same handle.
// The device calls are injected (IpcOps), so the rule is unit-tested without
// a GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace sm {

using IpcHandle = std::array<uint8_t, 64>;

class IpcOps {
 public:
  virtual ~IpcOps() = default;
  // Maps the exporter's segment; throws sm::Error when the device refuses.
  virtual void* open(int device, const IpcHandle& handle) = 0;
  virtual void close(int device, void* base) noexcept = 0;
};

class IpcMappingCache {
 public:
  // ops must outlive the cache and every mapping it hands out.
  explicit IpcMappingCache(IpcOps* ops) : ops_(ops) {}
  IpcMappingCache(const IpcMappingCache&) = delete;
  IpcMappingCache& operator=(const IpcMappingCache&) = delete;

  // The segment's base in this process, held open while the returned
  // pointer (or a copy) lives. Counted under the cache's lock, opened at the
  // first holder and closed at the last: a handle is never opened again
  // before its close has finished.
  std::shared_ptr<void> acquire(int device, const IpcHandle& handle) {
    std::lock_guard<std::mutex> lock(mu_);
    const Key key{device, handle};
    auto it = open_.find(key);
    if (it == open_.end()) {
      void* base = ops_->open(device, handle);
      try {
        it = open_.emplace(key, Entry{base, 0}).first;
      } catch (...) {
        ops_->close(device, base);  // no memory to record it: the opening is undone
        throw;
      }
    }
    void* base = it->second.base;
    std::shared_ptr<void> holder;
    try {
      holder = std::shared_ptr<void>(base, [this, key](void*) { release(key); });
    } catch (...) {
      if (it->second.holders == 0) {
        ops_->close(device, base);
        open_.erase(it);
      }
      throw;
    }
    ++it->second.holders;
    return holder;
  }

  // Segments open now (tests, leak checks).
  size_t open_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return open_.size();
  }

 private:
  using Key = std::pair<int, IpcHandle>;
  struct Entry {
    void* base;
    int64_t holders;
  };

  void release(const Key& key) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(key);
    if (it == open_.end() || --it->second.holders > 0) return;
    ops_->close(key.first, it->second.base);
    open_.erase(it);
  }

  IpcOps* ops_;
  std::mutex mu_;
  std::map<Key, Entry> open_;
};

}  // namespace sm
