#include "memory/fault_injection.hpp"

#include <atomic>
#include <cstdlib>

namespace sm {

namespace {
// Allocations left before the one that fails; <= 0: disabled.
std::atomic<int64_t>& countdown() {
  static std::atomic<int64_t> c{[] {
    const char* env = std::getenv("STRIDEMEM_FAIL_ALLOC");
    return env ? std::atoll(env) : 0LL;
  }()};
  return c;
}
}  // namespace

void fault_injection_set(int64_t nth) { countdown().store(nth > 0 ? nth : 0); }

bool fault_injection_should_fail() {
  auto& c = countdown();
  int64_t v = c.load(std::memory_order_relaxed);
  while (v > 0) {
    if (c.compare_exchange_weak(v, v - 1)) return v == 1;  // the n-th one fails, once
  }
  return false;
}

}  // namespace sm
