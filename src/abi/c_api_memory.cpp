// C entry points: memory statistics, the memory summary, the allocator cache.
#include <cstring>
#include <string>

#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

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

SM_API sm_status sm_memory_summary(sm_device device, char* buf, size_t len) {
  return guard(__func__, [&] {
    const Device dev = device_arg(device);
    if (!buf || len == 0) fail(SM_ERR_INVALID_ARGUMENT, "buf is NULL or len is 0");
    const std::string text = memory_summary(dev);
    const size_t n = text.size() < len - 1 ? text.size() : len - 1;  // truncated to fit
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  });
}

}  // extern "C"
