// The raw host memory behind the CPU device's allocator (cpu_backend.cpp),
// and host memory seen as the block allocator's device (HostMemoryOps), named
// here so that bench/cpu/alloc_bench.cpp measures exactly what CPU storages
// use. Library code allocates through the backend's Allocator, never through
// these.
#pragma once

#include <cstddef>
#include <string>

#include "memory/device_caching_allocator.hpp"

namespace sm {

// nbytes rounded up to 256 bytes and 256-byte aligned (SM_STACK_ALIGNMENT);
// from 4 MiB up, rounded up to 2 MiB, 2 MiB aligned and hinted onto
// transparent huge pages. nullptr on failure.
void* cpu_host_alloc(size_t nbytes);
void cpu_host_free(void* ptr);

// Host memory as a DeviceCachingAllocator's device: segments from
// cpu_host_alloc; no streams (current_stream nullptr, record_stream a no-op)
// and events complete the moment they are recorded (the CPU has no queued
// work; the allocator never asks for them without streams); one request may
// take at most RAM + swap (memory/host_memory_limit.hpp, refused with its
// message). Under AddressSanitizer (and under valgrind, where its headers
// were found at build time) free blocks and the slack between a block's
// requested and rounded size are marked inaccessible, so an access past a
// CPU tensor's bytes is still reported although blocks share segments.
class HostMemoryOps final : public DeviceMemoryOps {
 public:
  int32_t device_type() const override { return SM_DEVICE_CPU; }
  bool has_streams() const override { return false; }
  size_t request_limit() const override;
  std::string over_request_limit(size_t limit) const override;
  bool marks_access() const override;
  void mark_no_access(void* ptr, size_t nbytes) noexcept override;
  void mark_usable(void* ptr, size_t nbytes) noexcept override;
  void* raw_alloc(size_t nbytes) override { return cpu_host_alloc(nbytes); }
  void raw_free(void* ptr) noexcept override { cpu_host_free(ptr); }
  void* current_stream() override { return nullptr; }
  void* event_create() override { return &event_; }
  void event_destroy(void*) noexcept override {}
  void event_record(void*, void*) override {}
  bool event_query(void*) override { return true; }
  void event_synchronize(void*) override {}
  std::string device_name() const override { return "cpu"; }
  int device_index() const override { return 0; }

 private:
  char event_ = 0;  // every event handle: a dummy, never nullptr
};

}  // namespace sm
