// C entry points: memory statistics, the stack of views, streams, threads,
// DLPack, testing hooks.
#include <cstdio>
#include <cstring>

#include "abi/abi.hpp"
#include "backend/cpu/thread_pool.hpp"
#include "engine/dlpack.hpp"

using namespace sm;
using namespace sm::abi;

namespace {

sm_memory_stats_t collect_stats(Device dev) {
  const AllocatorStats a = backend_for(dev).allocator().stats();
  DeviceCounters& c = device_counters(dev);
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

const char* device_type_name(int32_t t) {
  switch (t) {
    case SM_DEVICE_CPU: return "cpu";
    case SM_DEVICE_CUDA: return "cuda";
    case SM_DEVICE_CUDA_HOST: return "cuda_host";
    default: return "?";
  }
}

}  // namespace

extern "C" {

SM_API sm_status sm_memory_stats(sm_device device, struct sm_memory_stats* out) {
  return guard(__func__, [&] {
    const Device dev = device_arg(device);
    require_out(out, "out");
    const uint32_t size = out->struct_size;
    if (size < offsetof(sm_memory_stats_t, allocated_bytes) + sizeof(int64_t))
      fail(SM_ERR_INVALID_ARGUMENT,
           "out->struct_size = %u is too small: set it to sizeof(sm_memory_stats_t) (%zu)", size,
           sizeof(sm_memory_stats_t));
    const sm_memory_stats_t s = collect_stats(dev);
    const size_t n = size < sizeof s ? size : sizeof s;
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&s) + sizeof(uint32_t), n - sizeof(uint32_t));
  });
}

SM_API sm_status sm_reset_peak_stats(sm_device device) {
  return guard(__func__, [&] { backend_for(device_arg(device)).allocator().reset_peak(); });
}

SM_API sm_status sm_empty_cache(sm_device device) {
  return guard(__func__, [&] { backend_for(device_arg(device)).allocator().empty_cache(); });
}

SM_API sm_status sm_memory_summary(sm_device device, char* buf, size_t len) {
  return guard(__func__, [&] {
    const Device dev = device_arg(device);
    if (!buf || len == 0) fail(SM_ERR_INVALID_ARGUMENT, "buf is NULL or len is 0");
    const sm_memory_stats_t s = collect_stats(dev);
    auto mib = [](int64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
    std::snprintf(buf, len,
                  "stridemem memory summary: %s:%d\n"
                  "  %-22s %16s %12s\n"
                  "  %-22s %16lld %10.2f MiB\n"
                  "  %-22s %16lld %10.2f MiB\n"
                  "  %-22s %16lld %10.2f MiB\n"
                  "  %-22s %16lld %10.2f MiB\n"
                  "  %-22s %16lld %10.2f MiB\n"
                  "  %-22s %16lld\n  %-22s %16lld\n  %-22s %16lld\n"
                  "  %-22s %16lld\n  %-22s %16lld\n  %-22s %16lld\n  %-22s %16lld\n",
                  device_type_name(dev.type), dev.index, "metric", "bytes/count", "",
                  "allocated", (long long)s.allocated_bytes, mib(s.allocated_bytes),
                  "requested", (long long)s.requested_bytes, mib(s.requested_bytes),
                  "reserved (cached+used)", (long long)s.reserved_bytes, mib(s.reserved_bytes),
                  "peak allocated", (long long)s.peak_allocated_bytes, mib(s.peak_allocated_bytes),
                  "peak reserved", (long long)s.peak_reserved_bytes, mib(s.peak_reserved_bytes),
                  "allocations", (long long)s.num_allocs, "frees", (long long)s.num_frees,
                  "cache hits", (long long)s.cache_hits, "system allocations",
                  (long long)s.device_allocs, "system frees", (long long)s.device_frees,
                  "active views", (long long)s.active_views, "active storages",
                  (long long)s.active_storages);
  });
}

// ---- stack of views ----

SM_API sm_status sm_stack_create(sm_device device, int64_t capacity_bytes, sm_stack* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    auto st = std::make_shared<StackState>(device_arg(device), capacity_bytes);
    *out = static_cast<sm_stack>(stacks().insert(std::move(st)));
  });
}

SM_API sm_status sm_stack_push(sm_stack s, const int64_t* shape, int32_t ndim, sm_dtype dtype,
                               sm_tensor* out) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    TensorPtr t = st->push(shape, n, dtype_arg(dtype));
    *out = publish(std::move(t));
  });
}

SM_API sm_status sm_stack_mark(sm_stack s, int64_t* mark) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(mark, "mark");
    *mark = st->mark();
  });
}

SM_API sm_status sm_stack_pop_to(sm_stack s, int64_t mark) {
  return guard(__func__, [&] { stacks().get(s, "s")->pop_to(mark); });
}

SM_API sm_status sm_stack_used(sm_stack s, int64_t* used_bytes, int64_t* capacity_bytes) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(used_bytes, "used_bytes");
    require_out(capacity_bytes, "capacity_bytes");
    *used_bytes = st->used();
    *capacity_bytes = st->capacity();
  });
}

SM_API sm_status sm_stack_release(sm_stack s) {
  if (!s) return SM_OK;
  return guard(__func__, [&] { stacks().release(s, "s"); });
}

// ---- streams, devices, threads ----

SM_API sm_status sm_set_stream(sm_device device, void* cuda_stream) {
  return guard(__func__, [&] { backend_for(device_arg(device)).set_stream(cuda_stream); });
}

SM_API sm_status sm_get_stream(sm_device device, void** cuda_stream) {
  return guard(__func__, [&] {
    Backend& b = backend_for(device_arg(device));
    require_out(cuda_stream, "cuda_stream");
    *cuda_stream = b.get_stream();
  });
}

SM_API sm_status sm_synchronize(sm_device device) {
  return guard(__func__, [&] { backend_for(device_arg(device)).synchronize(); });
}

SM_API sm_status sm_record_stream(sm_tensor t, void* cuda_stream) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    Allocator* a = x->storage()->allocator();
    if (a) a->record_stream(x->storage()->allocation(), cuda_stream);
  });
}

SM_API sm_status sm_set_num_threads(int32_t n) {
  return guard(__func__, [&] {
    if (n < 0) fail(SM_ERR_INVALID_ARGUMENT, "n = %d must be >= 0 (0 = one per core)", n);
    set_cpu_threads(n);
  });
}

SM_API sm_status sm_get_num_threads(int32_t* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    *out = get_cpu_threads();
  });
}

// ---- DLPack ----

SM_API sm_status sm_to_dlpack(sm_tensor t, int versioned, void** managed) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(managed, "managed");
    DLPackExport how;
    how.versioned = versioned != 0;
    bool c = false;
    *managed = to_dlpack(x, how, &c);
  });
}

SM_API sm_status sm_to_dlpack_ex(sm_tensor t, uint32_t flags, const sm_device* device,
                                 void** managed, int* copied) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(managed, "managed");
    constexpr uint32_t kKnown = SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE | SM_DLPACK_COPY | SM_DLPACK_NO_COPY;
    if (flags & ~kKnown) fail(SM_ERR_INVALID_ARGUMENT, "unknown flags 0x%x", flags & ~kKnown);
    if ((flags & SM_DLPACK_COPY) && (flags & SM_DLPACK_NO_COPY))
      fail(SM_ERR_INVALID_ARGUMENT, "SM_DLPACK_COPY and SM_DLPACK_NO_COPY contradict each other");
    DLPackExport how;
    how.versioned = (flags & SM_DLPACK_VERSIONED) != 0;
    how.normalize = (flags & SM_DLPACK_NORMALIZE) != 0;
    how.copy = (flags & SM_DLPACK_COPY)      ? DLPackExport::Copy::Always
               : (flags & SM_DLPACK_NO_COPY) ? DLPackExport::Copy::Never
                                             : DLPackExport::Copy::IfNeeded;
    if (device) {
      how.to_device = true;
      how.device = device_arg(*device);
    }
    bool c = false;
    *managed = to_dlpack(x, how, &c);
    if (copied) *copied = c ? 1 : 0;
  });
}

SM_API sm_status sm_from_dlpack(void* managed, int versioned, sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    if (!managed) fail(SM_ERR_INVALID_ARGUMENT, "managed is NULL");
    TensorPtr t = from_dlpack(managed, versioned != 0);
    try {
      *out = publish(t);
    } catch (...) {
      t->storage()->disown();  // the call fails: ownership stays with the caller
      throw;
    }
  });
}

// ---- testing hooks ----

SM_API sm_status sm_debug_fail_alloc(int64_t n) {
  return guard(__func__, [&] { fault_injection_set(n); });
}

SM_API sm_status sm_debug_live_handles(int64_t* t, int64_t* s, int64_t* k) {
  return guard(__func__, [&] {
    require_out(t, "tensors");
    require_out(s, "storages");
    require_out(k, "stacks");
    *t = tensors().live();
    *s = storages().live();
    *k = stacks().live();
  });
}

}  // extern "C"
