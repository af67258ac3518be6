// C entry points: memory statistics, the summary and the snapshot, tags,
// allocation history, the out-of-memory observer, the allocator cache.
#include <cstring>
#include <string>

#include "abi/abi.hpp"
#include "engine/memory_report.hpp"

using namespace sm;
using namespace sm::abi;

namespace {

// The "needed" convention (stridemem.h): buf may be NULL only with len 0.
void text_arg(const char* buf, size_t len) {
  if (!buf && len)
    fail(SM_ERR_INVALID_ARGUMENT, "buf is NULL but len is %zu (pass len 0 to ask for the size)",
         len);
}

// Writes the text and its NUL when they fit; always sets *needed.
void publish_text(const std::string& text, char* buf, size_t len, size_t* needed) {
  const size_t need = text.size() + 1;
  if (need > len && !needed)
    fail(SM_ERR_INVALID_ARGUMENT,
         "buf holds %zu bytes but the text needs %zu: pass `needed` to learn the size, then call "
         "again with a buffer that large",
         len, need);
  if (need <= len) std::memcpy(buf, text.c_str(), need);
  if (needed) *needed = need;
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
    const sm_memory_stats_t s = memory_stats(dev);
    // Only whole fields: past the 8-byte header every field is an int64, so a
    // struct_size ending inside one stops before it (a caller's older struct
    // must not get half a value).
    constexpr size_t kHeader = offsetof(sm_memory_stats_t, allocated_bytes);
    static_assert(kHeader == 8 && (sizeof s - kHeader) % sizeof(int64_t) == 0,
                  "int64 fields after the header");
    const size_t fit = size < sizeof s ? size : sizeof s;
    const size_t n = kHeader + (fit - kHeader) / sizeof(int64_t) * sizeof(int64_t);
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&s) + sizeof(uint32_t), n - sizeof(uint32_t));
  });
}

SM_API sm_status sm_reset_peak_stats(sm_device device) {
  return guard(__func__, [&] { reset_peak_stats(device_arg(device)); });
}

SM_API sm_status sm_empty_cache(sm_device device) {
  return guard(__func__, [&] { empty_cache(device_arg(device)); });
}

SM_API sm_status sm_memory_summary(sm_device device, char* buf, size_t len, size_t* needed) {
  return guard(__func__, [&] {
    const Device dev = device_arg(device);
    text_arg(buf, len);
    publish_text(memory_summary(dev), buf, len, needed);
  });
}

SM_API sm_status sm_memory_snapshot(sm_device device, char* buf, size_t len, size_t* needed) {
  return guard(__func__, [&] {
    const Device dev = device_arg(device);
    text_arg(buf, len);
    publish_text(memory_snapshot_json(dev), buf, len, needed);
  });
}

SM_API sm_status sm_push_tag(const char* tag) {
  return guard(__func__, [&] { push_alloc_tag(tag); });
}

SM_API sm_status sm_pop_tag(void) {
  return guard(__func__, [&] { pop_alloc_tag(); });
}

SM_API sm_status sm_memory_record_history(sm_device device, int64_t max_events) {
  return guard(__func__, [&] { record_memory_history(device_arg(device), max_events); });
}

SM_API sm_status sm_set_oom_observer(sm_oom_observer observer, void* user_data) {
  return guard(__func__, [&] { set_oom_observer_fn(observer, user_data); });
}

}  // extern "C"
