// The caching host allocator: rounding, pools, cache hits, honest stats,
// empty_cache, the retry after freeing the cache, fault injection.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "core/error.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/fault_injection.hpp"

using namespace sm;

namespace {
int g_raw_allocs = 0;
int64_t g_fail_above = -1;  // refuse raw allocations larger than this
void* counting_alloc(size_t n) {
  if (g_fail_above >= 0 && static_cast<int64_t>(n) > g_fail_above) return nullptr;
  ++g_raw_allocs;
  return std::malloc(n);
}
void counting_free(void* p) {
  --g_raw_allocs;
  std::free(p);
}
struct Reset {
  Reset() {
    g_raw_allocs = 0;
    g_fail_above = -1;
  }
};
}  // namespace

TEST(HostAllocator, Rounding) {
  EXPECT_EQ(CachingHostAllocator::round_size(0), 0u);
  EXPECT_EQ(CachingHostAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingHostAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingHostAllocator::round_size(513), 1024u);
}

TEST(HostAllocator, ZeroSizeIsOrdinary) {
  Reset r;
  CachingHostAllocator a(counting_alloc, counting_free, "test");
  Allocation x = a.allocate(0);
  EXPECT_EQ(x.ptr, nullptr);
  EXPECT_EQ(x.size, 0u);
  a.deallocate(x);
  EXPECT_EQ(a.stats().num_allocs, 0);
  EXPECT_EQ(g_raw_allocs, 0);
}

TEST(HostAllocator, CacheHitsAndStats) {
  Reset r;
  {
    CachingHostAllocator a(counting_alloc, counting_free, "test");
    Allocation x = a.allocate(1000);
    AllocatorStats s = a.stats();
    EXPECT_EQ(s.allocated_bytes, 1024);
    EXPECT_EQ(s.requested_bytes, 1000);
    EXPECT_EQ(s.reserved_bytes, 1024);
    EXPECT_EQ(s.device_allocs, 1);
    a.deallocate(x);
    s = a.stats();
    EXPECT_EQ(s.allocated_bytes, 0);
    EXPECT_EQ(s.reserved_bytes, 1024);  // cached, still held
    Allocation y = a.allocate(1024);    // same size class: served from the cache
    EXPECT_EQ(y.ptr, x.ptr);
    s = a.stats();
    EXPECT_EQ(s.cache_hits, 1);
    EXPECT_EQ(s.device_allocs, 1);
    EXPECT_EQ(s.num_allocs, 2);
    EXPECT_EQ(s.num_frees, 1);
    EXPECT_EQ(s.peak_allocated_bytes, 1024);
    Allocation z = a.allocate(2048);  // different class: a new block
    EXPECT_NE(z.ptr, y.ptr);
    EXPECT_EQ(a.stats().peak_allocated_bytes, 1024 + 2048);
    a.deallocate(z);
    a.reset_peak();
    EXPECT_EQ(a.stats().peak_allocated_bytes, 1024);
    a.empty_cache();  // frees the cached 2048 block, never the live one
    s = a.stats();
    EXPECT_EQ(s.reserved_bytes, 1024);
    EXPECT_EQ(s.device_frees, 1);
    EXPECT_EQ(g_raw_allocs, 1);
    EXPECT_EQ(s.peak_reserved_bytes, 1024 + 2048);
    a.reset_peak();  // the reserved peak restarts too
    EXPECT_EQ(a.stats().peak_reserved_bytes, 1024);
    a.deallocate(y);
  }
  EXPECT_EQ(g_raw_allocs, 0);  // the destructor returned the cache
}

TEST(HostAllocator, LargePoolBestFitWithBoundedWaste) {
  Reset r;
  CachingHostAllocator a(counting_alloc, counting_free, "test");
  Allocation big = a.allocate(8 << 20);
  a.deallocate(big);
  Allocation slightly_smaller = a.allocate((8 << 20) - 4096);  // wastes < 1/8: reused
  EXPECT_EQ(slightly_smaller.ptr, big.ptr);
  a.deallocate(slightly_smaller);
  Allocation half = a.allocate(4 << 20);  // would waste half: fresh block
  EXPECT_NE(half.ptr, big.ptr);
  a.deallocate(half);
  a.empty_cache();
  EXPECT_EQ(g_raw_allocs, 0);
}

TEST(HostAllocator, RetriesAfterFreeingCacheThenReportsOom) {
  Reset r;
  CachingHostAllocator a(counting_alloc, counting_free, "test");
  Allocation x = a.allocate(4096);
  a.deallocate(x);
  g_fail_above = 1 << 20;
  try {
    a.allocate(size_t(1) << 30);
    FAIL() << "expected OOM";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("1073741824"), std::string::npos) << e.what();
  }
  // The failed attempt released the cache first.
  EXPECT_EQ(a.stats().reserved_bytes, 0);
  EXPECT_EQ(a.stats().allocated_bytes, 0);
  EXPECT_EQ(g_raw_allocs, 0);
}

TEST(HostAllocator, FaultInjectionFailsTheNthAllocationOnce) {
  Reset r;
  CachingHostAllocator a(counting_alloc, counting_free, "test");
  fault_injection_set(2);
  Allocation x = a.allocate(100);
  EXPECT_THROW(a.allocate(100), Error);
  Allocation y = a.allocate(100);  // only the 2nd failed
  EXPECT_EQ(a.stats().num_allocs, 2);
  a.deallocate(x);
  a.deallocate(y);
  fault_injection_set(0);
  a.empty_cache();
}
