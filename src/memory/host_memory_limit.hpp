// The most memory one host allocation may ask for: what this machine could
// ever back, its physical RAM + swap. Under overcommit (vm.overcommit_memory
// = 1) the kernel hands out address space it cannot back, and the process is
// killed when the pages are touched; a request past RAM + swap can only end
// that way, so every host allocation refuses it up front with
// SM_ERR_OUT_OF_MEMORY instead: CachingHostAllocator::allocate (pinned
// memory) and DeviceCachingAllocator::allocate through
// DeviceMemoryOps::request_limit (the CPU device: tensors, stacks of views;
// backend/cpu/host_memory.hpp). The rule is applied there; this is where the
// number comes from, and the reason that refusal gives.
#pragma once

#include <cstddef>
#include <string>

namespace sm {

// RAM + swap in bytes, read from the system once (sysinfo(2)) and cached;
// SIZE_MAX where it cannot be read (the system alone decides then). An
// override set by host_memory_limit_set() wins.
size_t host_memory_limit();

// For tests: pretend the machine has `bytes` of RAM + swap, so the rule can be
// exercised without a huge machine; 0 goes back to the machine's own size.
void host_memory_limit_set(size_t bytes);

// Why a request over `limit` is refused, and what to do instead (the middle
// of the out-of-memory report, memory/out_of_memory.hpp).
std::string over_host_memory_limit(size_t limit);

}  // namespace sm
