// Software prefetch of a byte range for the CPU kernels.
#pragma once

#include <cstdint>

namespace sm {
namespace cpu {

// Prefetches every cache line that [p, p + bytes) touches, including the
// partial lines at both ends: a range that starts inside a line (NumPy's
// arrays start 16 bytes into a page) spans one line more than bytes / 64,
// and stepping 64 bytes from p itself would miss that last line. kLocality
// is __builtin_prefetch's: 2 (into L2) is the best for tiles and rows
// (bench/RESULTS.md, CPU kernels).
// Always inlined: GCC judges an out-of-line function of prefetches alone
// free of side effects and deletes the call.
template <int kLocality = 2>
__attribute__((always_inline)) inline void prefetch_span(const char* p, int64_t bytes) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes);
  for (uintptr_t a = first; a < end; a += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(a), 0, kLocality);
}

}  // namespace cpu
}  // namespace sm
