// Storage: a refcounted block of bytes on one device (c10's StorageImpl).
// Tensors share it through std::shared_ptr (atomic refcounts); the bytes go
// back to their owner (caching allocator, a from_blob deleter, a DLPack
// producer) when the last tensor over them dies.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/device.hpp"
#include "memory/allocator.hpp"

namespace sm {

// Live-object counters per device, for sm_memory_stats.
struct DeviceCounters {
  std::atomic<int64_t> active_views{0};
  std::atomic<int64_t> active_storages{0};
};
// Throws SM_ERR_DEVICE for device types/indices without counters.
DeviceCounters& device_counters(Device d);

class Storage {
 public:
  // Owned by an allocator; id: the one the block was allocated for
  // (next_storage_id()), so a snapshot's block names its storage.
  Storage(Device device, Allocator* allocator, Allocation alloc, int64_t nbytes, uint64_t id);
  // External memory; on_free (may be empty) runs exactly once at destruction.
  Storage(Device device, void* data, int64_t nbytes, std::function<void()> on_free,
          bool read_only);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Unique for the life of the process, from 1 (sm_storage_id).
  uint64_t id() const { return id_; }
  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool read_only() const { return read_only_; }
  // PyTorch's _version: one counter per storage, shared by every view.
  int64_t version() const { return version_.load(std::memory_order_acquire); }
  void bump_version() { version_.fetch_add(1, std::memory_order_acq_rel); }
  // For record_stream on allocator-owned storages (nullptr otherwise).
  Allocator* allocator() const { return allocator_; }
  const Allocation& allocation() const { return alloc_; }
  // Gives external memory back to its owner without calling on_free: for a
  // call that fails after wrapping caller memory (the caller keeps ownership).
  void disown() { on_free_ = nullptr; }

 private:
  uint64_t id_;
  Device device_;
  void* data_ = nullptr;
  int64_t nbytes_ = 0;
  Allocator* allocator_ = nullptr;
  Allocation alloc_;
  std::function<void()> on_free_;
  bool read_only_ = false;
  std::atomic<int64_t> version_{0};
};

using StoragePtr = std::shared_ptr<Storage>;

// A storage id never handed out before.
uint64_t next_storage_id() noexcept;

// nbytes from the device's caching allocator (SM_ERR_OUT_OF_MEMORY / DEVICE).
StoragePtr allocate_storage(Device device, int64_t nbytes);

}  // namespace sm
