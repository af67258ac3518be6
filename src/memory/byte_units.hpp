// Byte counts for people: one rule for every message and table the library
// writes (allocator errors, the memory summary, OOM reports).
#pragma once

#include <cstdint>
#include <string>

namespace sm {

// "0 B", "999 B", "1.00 KiB", "5.00 KiB", "1.50 MiB", "2.00 GiB", "3.25 TiB":
// below 1 KiB the exact count, above it two decimals in the largest binary
// unit that keeps the number >= 1 (so 5 KiB never reads "0.00 MiB").
std::string human_bytes(uint64_t n);

}  // namespace sm
