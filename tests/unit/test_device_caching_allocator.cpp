// The device caching allocator's block logic, driven by a fake device
// (fake_device.hpp): fake addresses, a capacity to simulate running out,
// events whose completion the test controls.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "fake_device.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/fault_injection.hpp"

namespace sm {
namespace {

uintptr_t addr(const Allocation& a) { return reinterpret_cast<uintptr_t>(a.ptr); }

TEST(DeviceCachingAllocator, RoundingAndSegmentSizes) {
  using A = DeviceCachingAllocator;
  EXPECT_EQ(A::round_size(0), 0u);
  EXPECT_EQ(A::round_size(1), 512u);
  EXPECT_EQ(A::round_size(512), 512u);
  EXPECT_EQ(A::round_size(513), 1024u);
  EXPECT_EQ(A::round_size(SIZE_MAX), SIZE_MAX);
  EXPECT_EQ(A::segment_size(512), 2 * MiB);
  EXPECT_EQ(A::segment_size(1 * MiB), 2 * MiB);
  EXPECT_EQ(A::segment_size(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(A::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(A::segment_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(A::segment_size(11 * MiB), 12 * MiB);
  EXPECT_EQ(A::segment_size(SIZE_MAX - 100), SIZE_MAX);
}

TEST(DeviceCachingAllocator, ZeroBytesIsNoBlock) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(0);
  EXPECT_EQ(a.ptr, nullptr);
  EXPECT_EQ(a.size, 0u);
  alloc.deallocate(a);
  EXPECT_EQ(dev.raw_allocs, 0);
  EXPECT_EQ(alloc.stats().num_allocs, 0);
}

TEST(DeviceCachingAllocator, SmallRequestsShareOneTwoMiBSegment) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(100);
  Allocation b = alloc.allocate(1000);
  Allocation c = alloc.allocate(512);
  EXPECT_EQ(a.size, 512u);
  EXPECT_EQ(b.size, 1024u);
  EXPECT_EQ(dev.raw_allocs, 1);
  EXPECT_EQ(addr(b), addr(a) + 512);  // carved one after the other
  EXPECT_EQ(addr(c), addr(b) + 1024);
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.reserved_bytes, int64_t(2 * MiB));
  EXPECT_EQ(s.allocated_bytes, 512 + 1024 + 512);
  EXPECT_EQ(s.requested_bytes, 100 + 1000 + 512);
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.device_allocs, 1);
  EXPECT_EQ(s.cache_hits, 2);
  alloc.deallocate(a);
  alloc.deallocate(b);
  alloc.deallocate(c);
  s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.requested_bytes, 0);
  EXPECT_EQ(s.num_frees, 3);
  // Everything merged back into one free block: the whole segment.
  DeviceCachingAllocator::CacheInfo ci = alloc.cache_info();
  EXPECT_EQ(ci.segments, 1u);
  EXPECT_EQ(ci.free_blocks, 1u);
  EXPECT_EQ(ci.free_bytes, 2 * MiB);
}

TEST(DeviceCachingAllocator, FreedBlockIsReusedWithoutTouchingTheDevice) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(3 * MiB);
  const uintptr_t p = addr(a);
  alloc.deallocate(a);
  for (int i = 0; i < 100; ++i) {
    Allocation b = alloc.allocate(3 * MiB);
    EXPECT_EQ(addr(b), p);
    alloc.deallocate(b);
  }
  EXPECT_EQ(dev.raw_allocs, 1);
  EXPECT_EQ(dev.raw_frees, 0);  // the hot path never frees device memory
  EXPECT_EQ(dev.waits, 0);      // nor waits
  EXPECT_EQ(alloc.stats().cache_hits, 100);
}

TEST(DeviceCachingAllocator, CoalescesNeighboursInAnyOrder) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(4096);
  Allocation b = alloc.allocate(4096);
  Allocation c = alloc.allocate(4096);
  alloc.deallocate(b);
  EXPECT_EQ(alloc.cache_info().free_blocks, 2u);  // b, and the tail after c
  alloc.deallocate(a);                            // merges with b
  EXPECT_EQ(alloc.cache_info().free_blocks, 2u);
  // a+b (8 KiB) is reused for a request that fits, from its start.
  Allocation d = alloc.allocate(8192);
  EXPECT_EQ(addr(d), addr(a));
  alloc.deallocate(d);
  alloc.deallocate(c);  // merges both sides: the segment is whole again
  DeviceCachingAllocator::CacheInfo ci = alloc.cache_info();
  EXPECT_EQ(ci.free_blocks, 1u);
  EXPECT_EQ(ci.free_bytes, 2 * MiB);
  alloc.empty_cache();
  EXPECT_EQ(dev.raw_frees, 1);
  EXPECT_EQ(dev.bad_frees, 0);
  EXPECT_EQ(alloc.cache_info().segments, 0u);
  EXPECT_EQ(alloc.stats().reserved_bytes, 0);
  EXPECT_EQ(alloc.stats().device_frees, 1);
}

TEST(DeviceCachingAllocator, LargeRequestsUseMediumSegmentsAndSplitOnlyLargeRests) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(5 * MiB);  // 20 MiB segment, 15 MiB left
  Allocation b = alloc.allocate(5 * MiB);  // from the same segment
  EXPECT_EQ(dev.raw_allocs, 1);
  EXPECT_EQ(addr(b), addr(a) + 5 * MiB);
  Allocation c = alloc.allocate(10 * MiB - 512 * 1024);  // 9.5 MiB: rest 0.5 MiB stays attached
  EXPECT_EQ(dev.raw_allocs, 1);
  EXPECT_EQ(c.size, 10 * MiB);  // the whole remainder: a 512 KiB tail is not split off
  EXPECT_EQ(alloc.cache_info().free_blocks, 0u);
  // A small request never comes from the large pool.
  Allocation s = alloc.allocate(1000);
  EXPECT_EQ(dev.raw_allocs, 2);
  EXPECT_EQ(alloc.stats().reserved_bytes, int64_t(22 * MiB));
  // 12 MiB: its own segment, rounded to 2 MiB.
  Allocation big = alloc.allocate(11 * MiB + 1);
  EXPECT_EQ(big.size, 12 * MiB);  // the < 1 MiB rest is not split off
  EXPECT_EQ(alloc.stats().reserved_bytes, int64_t(34 * MiB));
  for (Allocation* x : {&a, &b, &c, &s, &big}) alloc.deallocate(*x);
  alloc.empty_cache();
  EXPECT_EQ(dev.live_segments(), 0u);
  EXPECT_EQ(dev.bad_frees, 0);
}

TEST(DeviceCachingAllocator, BlocksAreReusedOnlyOnTheStreamThatFreedThem) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  uintptr_t pa;
  {
    StreamScope s(kStreamA);
    Allocation a = alloc.allocate(4 * MiB);
    pa = addr(a);
    alloc.deallocate(a);
  }
  {
    StreamScope s(kStreamB);
    Allocation b = alloc.allocate(4 * MiB);
    EXPECT_NE(addr(b), pa);  // A's block is not handed to B
    EXPECT_EQ(dev.raw_allocs, 2);
    alloc.deallocate(b);
  }
  {
    StreamScope s(kStreamA);
    Allocation a2 = alloc.allocate(4 * MiB);
    EXPECT_EQ(addr(a2), pa);
    alloc.deallocate(a2);
  }
  EXPECT_EQ(dev.raw_allocs, 2);
}

TEST(DeviceCachingAllocator, RecordStreamDefersReuseUntilTheEventCompletes) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  StreamScope s(kStreamA);
  Allocation a = alloc.allocate(4 * MiB);
  const uintptr_t pa = addr(a);
  alloc.record_stream(a, kStreamB);
  alloc.record_stream(a, kStreamB);  // once is enough
  alloc.record_stream(a, kStreamA);  // its own stream: nothing to do
  alloc.deallocate(a);
  EXPECT_EQ(dev.records, 1);
  EXPECT_EQ(alloc.cache_info().pending_blocks, 1u);
  EXPECT_EQ(alloc.stats().allocated_bytes, 0);  // freed as far as the user is concerned

  Allocation b = alloc.allocate(4 * MiB);  // B's work may still read it
  EXPECT_NE(addr(b), pa);
  EXPECT_GT(dev.queries, 0);
  dev.finish_stream(kStreamB);
  Allocation c = alloc.allocate(4 * MiB);
  EXPECT_EQ(addr(c), pa);
  EXPECT_EQ(alloc.cache_info().pending_blocks, 0u);
  EXPECT_EQ(dev.waits, 0);  // polled, never waited for
  alloc.deallocate(b);
  alloc.deallocate(c);
  // Events are recycled, not created per free.
  Allocation d = alloc.allocate(4 * MiB);
  alloc.record_stream(d, kStreamB);
  alloc.deallocate(d);
  dev.finish_stream(kStreamB);
  Allocation e = alloc.allocate(4 * MiB);
  EXPECT_EQ(dev.events_created, 1);
  alloc.deallocate(e);
}

TEST(DeviceCachingAllocator, PendingBlocksAreNotMergedUntilFree) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  StreamScope s(kStreamA);
  Allocation a = alloc.allocate(4096);
  Allocation b = alloc.allocate(4096);
  alloc.record_stream(a, kStreamB);
  alloc.deallocate(a);  // pending
  alloc.deallocate(b);  // must not swallow a
  EXPECT_EQ(alloc.cache_info().free_blocks, 1u);
  EXPECT_EQ(alloc.cache_info().free_bytes, 2 * MiB - 4096);
  dev.finish_stream(kStreamB);
  Allocation c = alloc.allocate(512);  // processes events: a merges back
  alloc.deallocate(c);
  EXPECT_EQ(alloc.cache_info().free_blocks, 1u);
  EXPECT_EQ(alloc.cache_info().free_bytes, 2 * MiB);
}

TEST(DeviceCachingAllocator, EmptyCacheWaitsForPendingAndKeepsLiveBlocks) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  StreamScope s(kStreamA);
  Allocation live = alloc.allocate(1000);        // small segment with a live block
  Allocation other = alloc.allocate(2000);       // same segment
  Allocation big = alloc.allocate(30 * MiB);     // its own segment
  alloc.record_stream(big, kStreamB);
  alloc.deallocate(big);
  alloc.deallocate(other);
  alloc.empty_cache();
  EXPECT_EQ(dev.waits, 1);                        // waited for B's event
  EXPECT_EQ(dev.raw_frees, 1);                    // only the big segment
  EXPECT_EQ(alloc.cache_info().segments, 1u);
  EXPECT_EQ(alloc.stats().reserved_bytes, int64_t(2 * MiB));
  EXPECT_EQ(alloc.stats().allocated_bytes, 1024);
  alloc.deallocate(live);
  alloc.empty_cache();
  EXPECT_EQ(dev.live_segments(), 0u);
  EXPECT_EQ(dev.bad_frees, 0);
}

TEST(DeviceCachingAllocator, RetriesAfterFreeingTheCacheBeforeReportingOom) {
  FakeDevice dev(64 * MiB);
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(40 * MiB);
  alloc.deallocate(a);  // cached: 40 MiB reserved, none live
  Allocation b = alloc.allocate(50 * MiB);  // does not fit beside the cache
  EXPECT_NE(b.ptr, nullptr);
  EXPECT_EQ(dev.raw_frees, 1);
  EXPECT_EQ(alloc.stats().reserved_bytes, int64_t(50 * MiB));
  try {
    alloc.allocate(20 * MiB);
    FAIL() << "expected out of memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("fake:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("20.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("50.00 MiB"), std::string::npos) << msg;
  }
  // Nothing changed by the failed call.
  EXPECT_EQ(alloc.stats().allocated_bytes, int64_t(50 * MiB));
  EXPECT_EQ(alloc.stats().num_allocs, 2);
  alloc.deallocate(b);
  Allocation c = alloc.allocate(20 * MiB);  // served from the cached 50 MiB block
  EXPECT_NE(c.ptr, nullptr);
  alloc.deallocate(c);
}

TEST(DeviceCachingAllocator, OverflowingSizeIsOutOfMemory) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  try {
    alloc.allocate(SIZE_MAX - 3);
    FAIL() << "expected out of memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY);
  }
  EXPECT_EQ(dev.raw_allocs, 0);
}

TEST(DeviceCachingAllocator, FaultInjectionFailsTheNthAllocation) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation warm = alloc.allocate(1000);
  alloc.deallocate(warm);
  fault_injection_set(2);
  Allocation first = alloc.allocate(1000);  // 1st: fine (a cache hit)
  try {
    alloc.allocate(1000);
    FAIL() << "expected the injected failure";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos);
  }
  Allocation third = alloc.allocate(1000);  // once only
  EXPECT_NE(third.ptr, nullptr);
  alloc.deallocate(first);
  alloc.deallocate(third);
  fault_injection_set(0);
  EXPECT_EQ(alloc.stats().num_allocs, 3);
}

TEST(DeviceCachingAllocator, PeaksAndReset) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Allocation a = alloc.allocate(3 * MiB);
  Allocation b = alloc.allocate(3 * MiB);
  alloc.deallocate(a);
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.peak_allocated_bytes, int64_t(6 * MiB));
  EXPECT_EQ(s.allocated_bytes, int64_t(3 * MiB));
  EXPECT_EQ(s.peak_reserved_bytes, int64_t(20 * MiB));
  alloc.reset_peak();
  s = alloc.stats();
  EXPECT_EQ(s.peak_allocated_bytes, int64_t(3 * MiB));
  alloc.deallocate(b);
}

TEST(DeviceCachingAllocator, ThreadsOnTheirOwnStreams) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  std::vector<std::thread> ts;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      StreamScope s(reinterpret_cast<void*>(uintptr_t(0x100 + t)));
      std::vector<Allocation> held;
      for (int i = 0; i < 2000; ++i) {
        const size_t n = size_t(1 + (i * 7919 + t * 104729) % (3 * MiB));
        held.push_back(alloc.allocate(n));
        if (held.back().size < n) errors++;
        if (held.size() > 8) {
          alloc.deallocate(held.front());
          held.erase(held.begin());
        }
      }
      for (auto& a : held) alloc.deallocate(a);
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(errors, 0);
  AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.num_allocs, s.num_frees);
  alloc.empty_cache();
  EXPECT_EQ(dev.live_segments(), 0u);
  EXPECT_EQ(dev.bad_frees, 0);
}

// Live blocks never overlap, whatever the order of requests and frees.
TEST(DeviceCachingAllocator, RandomizedBlocksNeverOverlap) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  std::map<uintptr_t, size_t> live;
  std::vector<Allocation> held;
  uint64_t x = 12345;
  auto rnd = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 20000; ++i) {
    if (held.empty() || rnd() % 3 != 0) {
      const size_t n = (rnd() % 4 == 0) ? 1 + rnd() % (24 * MiB) : 1 + rnd() % 8192;
      Allocation a = alloc.allocate(n);
      ASSERT_GE(a.size, n);
      const uintptr_t p = addr(a);
      auto it = live.lower_bound(p);
      if (it != live.end()) {
        ASSERT_GE(it->first, p + a.size);
      }
      if (it != live.begin()) {
        --it;
        ASSERT_LE(it->first + it->second, p);
      }
      live[p] = a.size;
      held.push_back(a);
    } else {
      const size_t k = rnd() % held.size();
      live.erase(addr(held[k]));
      alloc.deallocate(held[k]);
      held[k] = held.back();
      held.pop_back();
    }
  }
  for (auto& a : held) alloc.deallocate(a);
  EXPECT_EQ(alloc.stats().allocated_bytes, 0);
  alloc.empty_cache();
  EXPECT_EQ(dev.live_segments(), 0u);
  EXPECT_EQ(dev.bad_frees, 0);
}

}  // namespace
}  // namespace sm
