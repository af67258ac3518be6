// Devices, memory accounting, streams, threads and test hooks: the engine's
// face for the C API's runtime calls, so the C ABI never reaches into the
// backends or the allocators itself.
#pragma once

#include <string>

#include "core/device.hpp"
#include "engine/tensor.hpp"
#include "memory/allocator_stats.hpp"
#include "stridemem.h"

namespace sm {

// d itself when it exists and is usable; else SM_ERR_DEVICE saying why (no
// such index, built without CUDA, no GPU, driver error).
Device usable_device(Device d);
int cuda_devices();  // usable CUDA devices (0 without CUDA or GPU)

// The allocator's statistics and the live-object counters of a device, all
// fields filled (struct_size = sizeof).
sm_memory_stats_t memory_stats(Device d);
// The same from counters already read (a snapshot's, so they match its blocks).
sm_memory_stats_t memory_stats_from(Device d, const AllocatorStats& a);
void reset_peak_stats(Device d);
void empty_cache(Device d);

// The calling thread's current stream on d (CUDA; NULL only elsewhere).
void set_stream(Device d, void* stream);
void* get_stream(Device d);
void synchronize(Device d);
// t's memory is used by work on `stream`: not reused before that work is done.
void record_stream(const TensorPtr& t, void* stream);

// CPU worker threads (0 = one per core).
void set_num_threads(int n);
int num_threads();

// Fault injection: the n-th data allocation from now fails (n <= 0: off).
void fail_nth_allocation(int64_t n);

}  // namespace sm
