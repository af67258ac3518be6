// Process-wide allocation fault injection (sm_debug_fail_alloc and the
// STRIDEMEM_FAIL_ALLOC environment variable), consulted by every allocator.
#pragma once

#include <cstdint>

namespace sm {

// True when this allocation must fail: the n-th allocation after
// fault_injection_set(n) (1-based) fails once; n <= 0 disables.
bool fault_injection_should_fail();
void fault_injection_set(int64_t nth);

}  // namespace sm
