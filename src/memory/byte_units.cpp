#include "memory/byte_units.hpp"

#include <cinttypes>
#include <cstdio>

namespace sm {

std::string human_bytes(uint64_t n) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  char buf[48];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", n);
    return buf;
  }
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
  // 1023.999 KiB would print as "1024.00 KiB": move up a unit instead.
  if (v >= 1023.995 && u < 6) v /= 1024.0, ++u;
  std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[u]);
  return buf;
}

}  // namespace sm
