// The allocator for pinned (page-locked) host memory, SM_DEVICE_CUDA_HOST: a
// CachingHostAllocator over the injected pinned raw allocation, plus what
// asynchronous copies need: a block that an in-flight copy still reads is not
// handed out again until events recorded on the copying streams have
// completed (as PyTorch's CachingHostAllocator does). Written without any
// device API (streams and events come through StreamEvents), so the event
// logic is unit-tested on the CPU with a fake (tests/unit/test_host_allocator.cpp);
// the CUDA backend plugs in cudaEvent*.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "memory/allocator.hpp"
#include "memory/caching_host_allocator.hpp"

namespace sm {

// What the pinned allocator needs of the device runtime. Streams and events
// are opaque; nullptr is a valid stream (the device's default one).
class StreamEvents {
 public:
  virtual ~StreamEvents() = default;
  // An event after the work queued on (device, stream) so far, or nullptr
  // when none could be recorded.
  virtual void* record(int device, void* stream) noexcept = 0;
  // True once the work before the event is done (wait: blocks until then).
  // A failing device counts as done: nothing will read the block any more.
  virtual bool done(void* event, bool wait) noexcept = 0;
  virtual void destroy(void* event) noexcept = 0;
  // Waits for everything queued on the device (when no event could be recorded).
  virtual void synchronize_device(int device) noexcept = 0;
  // The device a stream belongs to (nullptr: the calling thread's current
  // device); throws sm::Error(SM_ERR_INVALID_ARGUMENT) for an unusable stream.
  virtual int stream_device(void* stream) = 0;
};

class PinnedHostAllocator final : public Allocator {
 public:
  // events must outlive the allocator.
  PinnedHostAllocator(CachingHostAllocator::RawAlloc raw_alloc,
                      CachingHostAllocator::RawFree raw_free, StreamEvents* events)
      : inner_(raw_alloc, raw_free, "cuda_host", sm_device{SM_DEVICE_CUDA_HOST, 0}),
        events_(events) {}

  using Allocator::allocate;
  Allocation allocate(size_t nbytes, uint64_t owner) override;
  void deallocate(const Allocation& a) noexcept override;
  // A block held back for copies in flight is no storage's any more: it
  // leaves allocated_bytes when its storage goes (stays in reserved_bytes)
  // and shows as pending_free until the copies are done, as a device block
  // waiting for other streams does. Counting it until the next allocation
  // reaped it would report bytes that nothing holds for as long as no one
  // allocates pinned memory again.
  AllocatorStats stats() override { return inner_.stats(); }
  AllocatorSnapshot snapshot() override { return inner_.snapshot(); }
  void record_history(int64_t max_events) override { inner_.record_history(max_events); }
  void reset_peak() override { inner_.reset_peak(); }
  // Waits for the blocks held back by copies, then frees every cached block.
  void empty_cache() override;
  // A pinned tensor used by work on `stream` (of the stream's device).
  void record_stream(const Allocation& a, void* stream) override;
  // A copy on (device, stream) reads memory at ptr: if one of this
  // allocator's live blocks holds it, the block waits for that copy when it is
  // freed. Memory the allocator does not own (from_blob) is ignored.
  void record_use(const void* ptr, int device, void* stream);

  // Blocks freed but held back by copies still in flight (for tests).
  size_t pending_blocks();

 private:
  struct Use {
    int device;
    void* stream;
  };
  struct Live {
    size_t size;
    std::vector<Use> uses;
  };
  struct Pending {
    Allocation alloc;
    std::vector<void*> events;
  };

  void process_pending_locked(bool wait);

  CachingHostAllocator inner_;
  StreamEvents* events_;
  std::mutex mu_;
  std::map<uintptr_t, Live> live_;  // block address -> its uses
  std::vector<Pending> pending_;
};

}  // namespace sm
