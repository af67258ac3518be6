#include "memory/host_memory_limit.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

#include "core/error.hpp"

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

std::string human(size_t n) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%zu bytes", n);
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

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

void fail_over_host_memory_limit(const char* who, size_t nbytes, size_t limit) {
  fail(SM_ERR_OUT_OF_MEMORY,
       "%s: cannot allocate %s (%zu bytes): more than this machine's physical memory + swap, "
       "%s (%zu bytes), the most one host allocation may take, so it could never be backed "
       "(under overcommit the system may hand out the address space, and touching it would "
       "get the process killed); allocate less at once (smaller or split tensors, a smaller "
       "stack) or add memory or swap",
       who, human(nbytes).c_str(), nbytes, human(limit).c_str(), limit);
}

}  // namespace sm
