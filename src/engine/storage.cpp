#include "engine/storage.hpp"

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"

namespace sm {

DeviceCounters& device_counters(Device d) {
  static DeviceCounters cpu, pinned, cuda[kMaxCudaDevices];
  switch (d.type) {
    case SM_DEVICE_CPU: return cpu;
    case SM_DEVICE_CUDA_HOST: return pinned;
    case SM_DEVICE_CUDA:
      if (d.index >= 0 && d.index < kMaxCudaDevices) return cuda[d.index];
      break;
    default: break;
  }
  fail(SM_ERR_DEVICE, "device (type %d, index %d) does not exist", d.type, d.index);
}

uint64_t next_storage_id() noexcept {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Storage::Storage(Device device, Allocator* allocator, Allocation alloc, int64_t nbytes,
                 uint64_t id)
    : id_(id),
      device_(device), data_(alloc.ptr), nbytes_(nbytes), allocator_(allocator), alloc_(alloc) {
  device_counters(device_).active_storages++;
}

Storage::Storage(Device device, void* data, int64_t nbytes, std::function<void()> on_free,
                 bool read_only)
    : id_(next_storage_id()),
      device_(device), data_(data), nbytes_(nbytes), on_free_(std::move(on_free)),
      read_only_(read_only) {
  device_counters(device_).active_storages++;
}

Storage::Storage(Device device, void* data, int64_t nbytes,
                 std::shared_ptr<const ShareOrigin> origin)
    : id_(next_storage_id()), device_(device), data_(data), nbytes_(nbytes),
      origin_(std::move(origin)) {
  device_counters(device_).active_storages++;
}

void Storage::move_to(void* data, std::shared_ptr<const ShareOrigin> origin) {
  Allocator* old_allocator = allocator_;
  const Allocation old = alloc_;
  std::atomic_store(&origin_, std::move(origin));
  data_.store(data, std::memory_order_release);
  allocator_ = nullptr;
  alloc_ = Allocation{};
  if (old_allocator) old_allocator->deallocate(old);
}

Storage::~Storage() {
  device_counters(device_).active_storages--;
  if (allocator_) allocator_->deallocate(alloc_);
  if (on_free_) on_free_();
}

StoragePtr allocate_storage(Device device, int64_t nbytes) {
  Backend& b = backend_for(device);
  device_counters(device);  // validates the index before allocating
  const uint64_t id = next_storage_id();
  Allocation a = b.allocator().allocate(static_cast<size_t>(nbytes), id);
  try {
    return std::make_shared<Storage>(device, &b.allocator(), a, nbytes, id);
  } catch (...) {
    b.allocator().deallocate(a);
    throw;
  }
}

}  // namespace sm
