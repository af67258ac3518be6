#include "memory/host_memory_limit.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

#include "memory/byte_units.hpp"

namespace sm {

namespace {

size_t machine_memory() {
#if defined(__linux__)
  struct sysinfo si;
  if (sysinfo(&si) != 0) return SIZE_MAX;
  const size_t unit = si.mem_unit ? si.mem_unit : 1;  // kernels before 2.3.23 report bytes
  size_t units = 0, bytes = 0;
  // Saturate: a machine whose RAM + swap does not fit size_t has no limit here.
  if (__builtin_add_overflow(static_cast<size_t>(si.totalram), static_cast<size_t>(si.totalswap),
                             &units) ||
      __builtin_mul_overflow(units, unit, &bytes) || bytes == 0)
    return SIZE_MAX;
  return bytes;
#else
  return SIZE_MAX;
#endif
}

// 0: no override.
std::atomic<size_t> g_override{0};

}  // namespace

size_t host_memory_limit() {
  const size_t forced = g_override.load(std::memory_order_relaxed);
  if (forced) return forced;
  // RAM and swap are read once: added swap or hot-plugged memory after start
  // is not seen, which only keeps the limit on the safe side.
  static const size_t machine = machine_memory();
  return machine;
}

void host_memory_limit_set(size_t bytes) { g_override.store(bytes, std::memory_order_relaxed); }

std::string over_host_memory_limit(size_t limit) {
  return "more than this machine's physical memory + swap, " + human_bytes(limit) + " (" +
         std::to_string(limit) +
         " bytes), the most one host allocation may take, so it could never be backed (under "
         "overcommit the system may hand out the address space, and touching it would get the "
         "process killed); allocate less at once (smaller or split tensors, a smaller stack) or "
         "add memory or swap";
}

}  // namespace sm
