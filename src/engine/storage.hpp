// Storage: a refcounted block of bytes on one device (c10's StorageImpl).
// Tensors share it through std::shared_ptr (atomic refcounts); the bytes go
// back to their owner (caching allocator, a from_blob deleter, a DLPack
// producer) when the last tensor over them dies.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "core/device.hpp"
#include "memory/allocator.hpp"
#include "memory/ipc_mapping_cache.hpp"
#include "memory/shared_host_memory.hpp"

namespace sm {

// Live-object counters per device, for sm_memory_stats.
struct DeviceCounters {
  std::atomic<int64_t> active_views{0};
  std::atomic<int64_t> active_storages{0};
};
// Throws SM_ERR_DEVICE for device types/indices without counters.
DeviceCounters& device_counters(Device d);

// How another process finds a storage's bytes (engine/sharing.*): shared
// host memory, or a CUDA IPC segment this process opened (an import, which
// can be exported again as the same segment + offset). A storage the CUDA
// caching allocator owns needs none: its segment is looked up at export.
struct ShareOrigin {
  std::shared_ptr<SharedHostMemory> host;  // a memfd mapping
  std::shared_ptr<void> ipc_segment;       // an opened CUDA IPC segment, held
  IpcHandle ipc_handle{};
  int64_t ipc_offset = 0;        // the storage's start in the segment
  int64_t ipc_object_bytes = 0;  // the segment's size
};

class Storage {
 public:
  // Owned by an allocator; id: the one the block was allocated for
  // (next_storage_id()), so a snapshot's block names its storage.
  Storage(Device device, Allocator* allocator, Allocation alloc, int64_t nbytes, uint64_t id);
  // External memory; on_free (may be empty) runs exactly once at destruction.
  Storage(Device device, void* data, int64_t nbytes, std::function<void()> on_free,
          bool read_only);
  // Memory another process can map too (shared host memory, CUDA IPC
  // imports); origin holds it.
  Storage(Device device, void* data, int64_t nbytes, std::shared_ptr<const ShareOrigin> origin);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Unique for the life of the process, from 1 (sm_storage_id).
  uint64_t id() const { return id_; }
  // Atomic: share_memory_ may move the bytes (move_to) while other views of
  // the storage are read on other threads.
  void* data() const { return data_.load(std::memory_order_acquire); }
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

  // ---- sharing with other processes (engine/sharing.cpp) ----
  // Where other processes find the bytes; null when only this process can.
  std::shared_ptr<const ShareOrigin> share_origin() const {
    return std::atomic_load(&origin_);
  }
  // Held while the storage's bytes move into shared memory (one mover).
  std::mutex& move_mutex() { return move_mu_; }
  // True when the storage owns its bytes through an allocator (so they may
  // move), false for external memory.
  bool owns_bytes() const { return allocator_ != nullptr; }
  // With move_mutex held: every view now reads and writes `data` (a copy of
  // the bytes, kept alive by origin); the old block goes back to its
  // allocator.
  void move_to(void* data, std::shared_ptr<const ShareOrigin> origin);
  // Consumers holding the data address outside the library (DLPack
  // exports); a storage with pins does not move.
  void pin_address() { address_pins_.fetch_add(1, std::memory_order_acq_rel); }
  void unpin_address() { address_pins_.fetch_sub(1, std::memory_order_acq_rel); }
  int64_t address_pins() const { return address_pins_.load(std::memory_order_acquire); }

 private:
  uint64_t id_;
  Device device_;
  std::atomic<void*> data_{nullptr};
  int64_t nbytes_ = 0;
  Allocator* allocator_ = nullptr;
  Allocation alloc_;
  std::function<void()> on_free_;
  bool read_only_ = false;
  std::atomic<int64_t> version_{0};
  std::shared_ptr<const ShareOrigin> origin_;  // atomic_load/atomic_store only
  std::mutex move_mu_;
  std::atomic<int64_t> address_pins_{0};
};

using StoragePtr = std::shared_ptr<Storage>;

// A storage id never handed out before.
uint64_t next_storage_id() noexcept;

// nbytes from the device's caching allocator (SM_ERR_OUT_OF_MEMORY / DEVICE).
StoragePtr allocate_storage(Device device, int64_t nbytes);

}  // namespace sm
