// The raw host memory behind the CPU device's allocator (cpu_backend.cpp),
// named here so that bench/cpu/alloc_bench.cpp can put other allocators over
// exactly the same function. Library code allocates through the backend's
// Allocator, never through these.
#pragma once

#include <cstddef>

namespace sm {

// nbytes rounded up to 256 bytes and 256-byte aligned (SM_STACK_ALIGNMENT);
// from 4 MiB up, rounded up to 2 MiB, 2 MiB aligned and hinted onto
// transparent huge pages. nullptr on failure.
void* cpu_host_alloc(size_t nbytes);
void cpu_host_free(void* ptr);

}  // namespace sm
