#include "engine/runtime.hpp"

#include <cstring>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "memory/fault_injection.hpp"

namespace sm {

Device usable_device(Device d) {
  backend_for(d);  // throws SM_ERR_DEVICE with the reason
  device_counters(d);
  return d;
}

int cuda_devices() { return cuda_device_count(); }

sm_memory_stats_t memory_stats(Device d) {
  return memory_stats_from(d, backend_for(d).allocator().stats());
}

sm_memory_stats_t memory_stats_from(Device d, const AllocatorStats& a) {
  DeviceCounters& c = device_counters(d);
  sm_memory_stats_t s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.allocated_bytes = a.allocated_bytes;
  s.reserved_bytes = a.reserved_bytes;
  s.peak_allocated_bytes = a.peak_allocated_bytes;
  s.peak_reserved_bytes = a.peak_reserved_bytes;
  s.num_allocs = a.num_allocs;
  s.num_frees = a.num_frees;
  s.cache_hits = a.cache_hits;
  s.device_allocs = a.device_allocs;
  s.device_frees = a.device_frees;
  s.active_views = c.active_views.load();
  s.active_storages = c.active_storages.load();
  s.requested_bytes = a.requested_bytes;
  return s;
}

void reset_peak_stats(Device d) { backend_for(d).allocator().reset_peak(); }

void empty_cache(Device d) { backend_for(d).allocator().empty_cache(); }

void set_stream(Device d, void* stream) { backend_for(d).set_stream(stream); }

void* get_stream(Device d) { return backend_for(d).get_stream(); }

void synchronize(Device d) { backend_for(d).synchronize(); }

void record_stream(const TensorPtr& t, void* stream) {
  Allocator* a = t->storage()->allocator();
  if (a) a->record_stream(t->storage()->allocation(), stream);
}

void set_num_threads(int n) {
  if (n < 0) fail(SM_ERR_INVALID_ARGUMENT, "n = %d must be >= 0 (0 = one per core)", n);
  set_cpu_threads(n);
}

int num_threads() { return get_cpu_threads(); }

void fail_nth_allocation(int64_t n) { fault_injection_set(n); }

}  // namespace sm
