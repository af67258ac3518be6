// What a device's memory looks like, for people and programs: the JSON
// snapshot (sm_memory_snapshot, format in docs/MEMORY_SNAPSHOT.md) and the
// readable table (sm_memory_summary), both built from one allocator snapshot
// plus the device's live-object counters. Tags and history recording are
// passed through to the memory layer.
#pragma once

#include <cstdint>
#include <string>

#include "core/device.hpp"
#include "stridemem.h"

namespace sm {

std::string memory_snapshot_json(Device d);
std::string memory_summary(Device d);
// The history ring of d's allocator (0: off).
void record_memory_history(Device d, int64_t max_events);

void push_alloc_tag(const char* name);
void pop_alloc_tag();
void set_oom_observer_fn(sm_oom_observer observer, void* user_data);

}  // namespace sm
