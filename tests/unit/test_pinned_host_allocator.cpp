// The pinned host allocator's hold-back logic, with a fake device: a block
// that an asynchronous copy still reads is not handed out again until the
// events recorded on the copying streams are done; a copy that cannot be
// tracked makes the free wait for its device; memory the allocator does not
// own is ignored; empty_cache waits for everything held back. A held block
// leaves allocated_bytes when it is freed (no storage holds it), stays in
// reserved_bytes, and shows as pending_free until its copies are done.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "memory/pinned_host_allocator.hpp"

using namespace sm;

namespace {

int g_live_blocks = 0;
void* raw_alloc(size_t n) {
  ++g_live_blocks;
  return std::malloc(n);
}
void raw_free(void* p) {
  --g_live_blocks;
  std::free(p);
}

// Events are numbers; a test decides when each is done.
struct FakeEvents final : StreamEvents {
  std::map<intptr_t, bool> done_;  // event -> done
  std::vector<std::pair<int, void*>> recorded;
  std::vector<int> synchronized;
  intptr_t next = 1;
  bool refuse = false;  // record() fails (an event cannot be made)
  int waits = 0, destroyed = 0;

  void* record(int device, void* stream) noexcept override {
    if (refuse) return nullptr;
    recorded.emplace_back(device, stream);
    done_[next] = false;
    return reinterpret_cast<void*>(next++);
  }
  bool done(void* e, bool wait) noexcept override {
    const intptr_t k = reinterpret_cast<intptr_t>(e);
    if (wait) {
      ++waits;
      done_[k] = true;
    }
    return done_[k];
  }
  void destroy(void* e) noexcept override {
    ++destroyed;
    done_.erase(reinterpret_cast<intptr_t>(e));
  }
  void synchronize_device(int device) noexcept override { synchronized.push_back(device); }
  int stream_device(void* stream) override {
    if (stream == reinterpret_cast<void*>(0xBAD)) fail(SM_ERR_INVALID_ARGUMENT, "not a stream");
    return stream ? 1 : 0;
  }
  void finish_all() {
    for (auto& kv : done_) kv.second = true;
  }
};

void* stream(int i) { return reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 * i)); }

}  // namespace

TEST(PinnedHostAllocator, UnusedBlocksGoStraightBackToTheCache) {
  FakeEvents ev;
  PinnedHostAllocator a(raw_alloc, raw_free, &ev);
  Allocation x = a.allocate(1000);
  void* p = x.ptr;
  a.deallocate(x);
  EXPECT_EQ(a.pending_blocks(), 0u);
  Allocation y = a.allocate(1000);
  EXPECT_EQ(y.ptr, p) << "reused at once: nothing was reading it";
  EXPECT_EQ(a.stats().cache_hits, 1);
  a.deallocate(y);
  EXPECT_TRUE(ev.recorded.empty());
}

TEST(PinnedHostAllocator, BlocksReadByCopiesWaitForTheirEvents) {
  FakeEvents ev;
  PinnedHostAllocator a(raw_alloc, raw_free, &ev);
  Allocation x = a.allocate(4096);
  void* p = x.ptr;
  // Two copies on two streams read it (one use recorded twice counts once),
  // through a pointer inside the block.
  a.record_use(static_cast<char*>(p) + 100, 0, stream(1));
  a.record_use(p, 0, stream(1));
  a.record_use(p, 1, stream(2));
  a.deallocate(x);
  ASSERT_EQ(ev.recorded.size(), 2u);
  EXPECT_EQ(ev.recorded[0], std::make_pair(0, stream(1)));
  EXPECT_EQ(ev.recorded[1], std::make_pair(1, stream(2)));
  EXPECT_EQ(a.pending_blocks(), 1u);
  EXPECT_EQ(a.stats().allocated_bytes, 0) << "no storage holds it any more";
  EXPECT_EQ(a.stats().reserved_bytes, 4096) << "still out of circulation";
  Allocation y = a.allocate(4096);
  EXPECT_NE(y.ptr, p) << "handed out while a copy may still read it";
  ev.done_[1] = true;  // one of the two copies is done: still held
  Allocation z = a.allocate(4096);
  EXPECT_NE(z.ptr, p);
  EXPECT_EQ(a.pending_blocks(), 1u);
  ev.finish_all();
  Allocation w = a.allocate(4096);
  EXPECT_EQ(w.ptr, p) << "reused once every copy is done";
  EXPECT_EQ(a.pending_blocks(), 0u);
  EXPECT_EQ(ev.destroyed, 2);
  for (Allocation* b : {&y, &z, &w}) a.deallocate(*b);
}

TEST(PinnedHostAllocator, AnUntrackableCopyMakesTheFreeWaitForItsDevice) {
  FakeEvents ev;
  ev.refuse = true;
  PinnedHostAllocator a(raw_alloc, raw_free, &ev);
  Allocation x = a.allocate(512);
  void* p = x.ptr;
  a.record_use(p, 3, stream(1));
  a.deallocate(x);
  EXPECT_EQ(ev.synchronized, std::vector<int>{3});
  EXPECT_EQ(a.pending_blocks(), 0u);
  Allocation y = a.allocate(512);
  EXPECT_EQ(y.ptr, p);
  a.deallocate(y);
}

TEST(PinnedHostAllocator, ForeignMemoryAndStreamsOfOtherDevices) {
  FakeEvents ev;
  PinnedHostAllocator a(raw_alloc, raw_free, &ev);
  char outside[64];
  a.record_use(outside, 0, stream(1));  // not ours: ignored
  Allocation x = a.allocate(512);
  a.record_stream(x, stream(5));  // the stream's device (1 for the fake)
  EXPECT_THROW(a.record_stream(x, reinterpret_cast<void*>(0xBAD)), Error);
  a.deallocate(x);
  ASSERT_EQ(ev.recorded.size(), 1u);
  EXPECT_EQ(ev.recorded[0], std::make_pair(1, stream(5)));
  ev.finish_all();
  a.empty_cache();
}

TEST(PinnedHostAllocator, EmptyCacheWaitsForHeldBlocksAndFreesThem) {
  const int before = g_live_blocks;
  {
    FakeEvents ev;
    PinnedHostAllocator a(raw_alloc, raw_free, &ev);
    Allocation x = a.allocate(8192);
    a.record_use(x.ptr, 0, nullptr);
    a.deallocate(x);
    EXPECT_EQ(a.pending_blocks(), 1u);
    a.empty_cache();
    EXPECT_EQ(ev.waits, 1);
    EXPECT_EQ(a.pending_blocks(), 0u);
    EXPECT_EQ(a.stats().reserved_bytes, 0);
    EXPECT_EQ(g_live_blocks, before);
  }
}

namespace {

const SnapshotBlock* block_at(const AllocatorSnapshot& s, const void* p) {
  for (const SnapshotSegment& seg : s.segments)
    if (seg.address == reinterpret_cast<uintptr_t>(p)) return &seg.blocks.at(0);
  return nullptr;
}

}  // namespace

// What a staging buffer of an asynchronous host-to-device copy goes through:
// the copy reads it, its tensor goes, the copy completes, and no pinned
// allocation follows. The counters must say that nothing is allocated
// without waiting for a later allocation to notice the finished copy.
TEST(PinnedHostAllocator, AHeldBlockIsCountedFreeAtOnceAndShownPending) {
  FakeEvents ev;
  PinnedHostAllocator a(raw_alloc, raw_free, &ev);
  const AllocatorStats s0 = a.stats();
  Allocation x = a.allocate(192, 7);
  Allocation y = a.allocate(1000, 8);
  a.record_use(x.ptr, 0, stream(1));
  a.deallocate(x);
  ASSERT_EQ(a.pending_blocks(), 1u);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes - s0.allocated_bytes, 1024) << "only y is held by a storage";
  EXPECT_EQ(s.requested_bytes - s0.requested_bytes, 1000);
  EXPECT_EQ(s.reserved_bytes - s0.reserved_bytes, 1536) << "x is not reusable yet";
  EXPECT_EQ(s.num_frees - s0.num_frees, 1);
  AllocatorSnapshot snap = a.snapshot();
  const SnapshotBlock* bx = block_at(snap, x.ptr);
  const SnapshotBlock* by = block_at(snap, y.ptr);
  ASSERT_TRUE(bx && by);
  EXPECT_EQ(bx->state, BlockState::pending_free);
  EXPECT_EQ(bx->requested, 0u);
  EXPECT_EQ(bx->meta.owner, 0u) << "no storage holds it";
  EXPECT_EQ(by->state, BlockState::allocated);
  EXPECT_EQ(by->meta.owner, 8u);
  EXPECT_EQ(static_cast<uint64_t>(snap.stats.allocated_bytes), by->size)
      << "the totals are the allocated blocks";

  ev.finish_all();  // the copy completes; nothing allocates pinned memory
  EXPECT_EQ(a.stats().allocated_bytes - s0.allocated_bytes, 1024);
  a.deallocate(y);
  EXPECT_EQ(a.stats().allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(a.stats().requested_bytes, s0.requested_bytes);

  // The block comes back to the pool once its copy is done, no earlier.
  Allocation z = a.allocate(192);
  EXPECT_EQ(z.ptr, x.ptr) << "reused once the copy is done";
  EXPECT_EQ(a.pending_blocks(), 0u);
  EXPECT_EQ(a.stats().allocated_bytes - s0.allocated_bytes, 512);
  a.deallocate(z);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes, s0.reserved_bytes);
}

// A held block is not handed out while its copy runs, and empty_cache (which
// waits for the copy) gives it back to the system: the counters never count
// it twice or below zero.
TEST(PinnedHostAllocator, AHeldBlockIsNeitherReusedNorLostBeforeItsCopyEnds) {
  const int before = g_live_blocks;
  {
    FakeEvents ev;
    PinnedHostAllocator a(raw_alloc, raw_free, &ev);
    Allocation x = a.allocate(512);
    a.record_use(x.ptr, 0, stream(1));
    a.deallocate(x);
    Allocation y = a.allocate(512);
    EXPECT_NE(y.ptr, x.ptr) << "handed out while a copy may still read it";
    EXPECT_EQ(a.stats().allocated_bytes, 512);
    EXPECT_EQ(a.stats().reserved_bytes, 1024);
    a.deallocate(y);
    EXPECT_EQ(a.stats().allocated_bytes, 0);
    a.empty_cache();
    EXPECT_EQ(ev.waits, 1);
    const AllocatorStats s = a.stats();
    EXPECT_EQ(s.allocated_bytes, 0);
    EXPECT_EQ(s.reserved_bytes, 0);
    EXPECT_EQ(s.num_frees, 2) << "one free per storage, however late the block came back";
    EXPECT_TRUE(a.snapshot().segments.empty());
  }
  EXPECT_EQ(g_live_blocks, before);
}
