// The host memory limit (memory/host_memory_limit.hpp): one host allocation
// larger than the machine's RAM + swap is refused with SM_ERR_OUT_OF_MEMORY
// before the system is asked, even where overcommit would say yes. The limit
// is injected here, so the rule is exercised on any machine: a request over it
// fails cleanly (nothing asked of the system, statistics unchanged, a message
// with the request, the limit and the advice), one at it succeeds, and every
// host path goes through it (the caching host allocator, pinned memory, the
// CPU backend's block allocator over HostMemoryOps, sm::empty and a stack of
// views).
#include <gtest/gtest.h>

#include <sys/sysinfo.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "backend/backend.hpp"
#include "backend/cpu/host_memory.hpp"
#include "core/error.hpp"
#include "engine/ops.hpp"
#include "engine/stack.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/host_memory_limit.hpp"
#include "memory/out_of_memory.hpp"
#include "memory/pinned_host_allocator.hpp"

using namespace sm;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

int g_raw_calls = 0;  // every call, granted or not
void* counting_alloc(size_t n) {
  ++g_raw_calls;
  return std::malloc(n);
}
void counting_free(void* p) { std::free(p); }

// Sets the limit for one test and always restores the machine's own.
struct Limit {
  explicit Limit(size_t bytes) { host_memory_limit_set(bytes); }
  ~Limit() { host_memory_limit_set(0); }
};

bool same(const AllocatorStats& a, const AllocatorStats& b) {
  return a.allocated_bytes == b.allocated_bytes && a.reserved_bytes == b.reserved_bytes &&
         a.peak_allocated_bytes == b.peak_allocated_bytes &&
         a.peak_reserved_bytes == b.peak_reserved_bytes && a.num_allocs == b.num_allocs &&
         a.num_frees == b.num_frees && a.cache_hits == b.cache_hits &&
         a.device_allocs == b.device_allocs && a.device_frees == b.device_frees &&
         a.requested_bytes == b.requested_bytes;
}

// The refusal: SM_ERR_OUT_OF_MEMORY whose message names what was asked, the
// limit and what to do. Returns the message ("" when nothing was thrown).
std::string expect_refused(const std::function<void()>& fn, size_t asked, size_t limit) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY) << m;
    EXPECT_NE(m.find(std::to_string(asked) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(limit) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("physical memory + swap"), std::string::npos) << m;
    EXPECT_NE(m.find("allocate less"), std::string::npos) << m;
    return m;
  }
  ADD_FAILURE() << "a request of " << asked << " bytes over a limit of " << limit
                << " was not refused";
  return "";
}

struct NoEvents final : StreamEvents {
  void* record(int, void*) noexcept override { return nullptr; }
  bool done(void*, bool) noexcept override { return true; }
  void destroy(void*) noexcept override {}
  void synchronize_device(int) noexcept override {}
  int stream_device(void*) override { return 0; }
};

}  // namespace

// The machine's limit is its RAM + swap, as sysinfo(2) tells it.
TEST(HostMemoryLimit, MachineLimitIsRamPlusSwap) {
  host_memory_limit_set(0);
  struct sysinfo si;
  ASSERT_EQ(sysinfo(&si), 0);
  const unsigned __int128 want =
      (static_cast<unsigned __int128>(si.totalram) + si.totalswap) * (si.mem_unit ? si.mem_unit : 1);
  ASSERT_LT(want, static_cast<unsigned __int128>(SIZE_MAX));
  EXPECT_EQ(host_memory_limit(), static_cast<size_t>(want));
  EXPECT_EQ(host_memory_limit(), host_memory_limit()) << "read once";
  {
    Limit l(5 * kMiB);
    EXPECT_EQ(host_memory_limit(), 5 * kMiB) << "the override wins";
  }
  EXPECT_EQ(host_memory_limit(), static_cast<size_t>(want)) << "0 restores the machine's";
}

// Over the limit: refused before the system is asked, nothing changes.
// At the limit: an ordinary allocation.
TEST(HostMemoryLimit, OverTheLimitFailsCleanlyAtTheLimitSucceeds) {
  Limit l(4 * kMiB);
  g_raw_calls = 0;
  CachingHostAllocator a(counting_alloc, counting_free, "test");
  Allocation live = a.allocate(1000);  // some live state the failure must not touch
  const AllocatorStats before = a.stats();
  const int raw_before = g_raw_calls;

  for (size_t asked : {4 * kMiB + 1, 5 * kMiB, size_t(1) << 45, SIZE_MAX}) {
    const std::string m = expect_refused([&] { a.allocate(asked); }, asked, 4 * kMiB);
    EXPECT_EQ(m.rfind("test: ", 0), 0u) << "names the allocator: " << m;
    EXPECT_TRUE(same(a.stats(), before)) << "statistics changed by a refusal of " << asked;
    EXPECT_EQ(g_raw_calls, raw_before) << "the system was asked for " << asked;
  }

  Allocation at = a.allocate(4 * kMiB);  // exactly the limit: allowed
  EXPECT_NE(at.ptr, nullptr);
  EXPECT_EQ(at.size, 4 * kMiB);
  EXPECT_EQ(a.stats().allocated_bytes, before.allocated_bytes + int64_t(4 * kMiB));
  Allocation under = a.allocate(4 * kMiB - 1);  // rounds up to exactly the limit
  EXPECT_NE(under.ptr, nullptr);
  a.deallocate(at);
  a.deallocate(under);
  a.deallocate(live);
  a.empty_cache();
}

// A refusal gives the cache back like any out-of-memory failure (the state
// documented at sm_empty_cache), and never touches a live block.
TEST(HostMemoryLimit, RefusalEmptiesTheCacheLikeAnyOutOfMemory) {
  Limit l(4 * kMiB);
  CachingHostAllocator a(counting_alloc, counting_free, "test");
  Allocation live = a.allocate(2048);
  a.deallocate(a.allocate(3 * kMiB));  // cached, not live
  const AllocatorStats before = a.stats();
  ASSERT_GT(before.reserved_bytes, before.allocated_bytes);
  expect_refused([&] { a.allocate(8 * kMiB); }, 8 * kMiB, 4 * kMiB);
  const AllocatorStats after = a.stats();
  EXPECT_EQ(after.reserved_bytes, after.allocated_bytes) << "cache given back";
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.requested_bytes, before.requested_bytes);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(after.device_frees, before.device_frees + 1);
  a.deallocate(live);
}

// Pinned memory is a CachingHostAllocator inside: the same rule.
TEST(HostMemoryLimit, PinnedHostMemoryToo) {
  Limit l(4 * kMiB);
  NoEvents ev;
  g_raw_calls = 0;
  PinnedHostAllocator p(counting_alloc, counting_free, &ev);
  const AllocatorStats before = p.stats();
  expect_refused([&] { p.allocate(4 * kMiB + SM_ALLOC_ROUND); }, 4 * kMiB + SM_ALLOC_ROUND,
                 4 * kMiB);
  EXPECT_TRUE(same(p.stats(), before));
  EXPECT_EQ(g_raw_calls, 0);
  Allocation ok = p.allocate(4 * kMiB);
  EXPECT_NE(ok.ptr, nullptr);
  p.deallocate(ok);
  p.empty_cache();
}

// The real CPU paths: the CPU backend's allocator, sm::empty and the buffer of
// a stack of views are all refused over the limit and work under it.
TEST(HostMemoryLimit, CpuTensorsAndStacksGoThroughIt) {
  Allocator& cpu = cpu_backend().allocator();
  cpu.empty_cache();
  Limit l(4 * kMiB);
  const AllocatorStats before = cpu.stats();
  const size_t over = 8 * kMiB;
  const std::string m = expect_refused([&] { cpu.allocate(over); }, over, 4 * kMiB);
  EXPECT_EQ(m.rfind("cpu: ", 0), 0u) << m;
  const int64_t shape[1] = {int64_t(over / 4)};
  expect_refused([&] { empty(shape, 1, DType::F32, Device{SM_DEVICE_CPU, 0}); }, over,
                 4 * kMiB);
  expect_refused([&] { StackState s(Device{SM_DEVICE_CPU, 0}, int64_t(over)); }, over, 4 * kMiB);
  EXPECT_TRUE(same(cpu.stats(), before));

  const int64_t small[1] = {int64_t(kMiB / 4)};
  TensorPtr t = empty(small, 1, DType::F32, Device{SM_DEVICE_CPU, 0});
  EXPECT_NE(t, nullptr);
  StackState s(Device{SM_DEVICE_CPU, 0}, int64_t(2 * kMiB));
  EXPECT_EQ(s.capacity(), int64_t(2 * kMiB));
}

// The CPU's allocator: DeviceCachingAllocator over HostMemoryOps. The limit is
// on the request, as for the host allocators: a request over it is refused
// after the cache is returned (segments without a live block), with the
// limit's message and the CPU as the device; a request under it whose usual
// segment would not fit (3 MiB: a 20 MiB segment) gets a segment of its own
// size instead, so no segment over the limit is ever asked for.
TEST(HostMemoryLimit, CpuBlockAllocatorRefusesOverTheLimitAfterReturningTheCache) {
  Limit l(4 * kMiB);
  HostMemoryOps ops;
  DeviceCachingAllocator a(&ops);
  Allocation live = a.allocate(2048);  // pins a 2 MiB small segment
  EXPECT_EQ(a.stats().reserved_bytes, int64_t(2 * kMiB));
  Allocation mid = a.allocate(3 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, int64_t(5 * kMiB)) << "a 3 MiB segment, not 20 MiB";
  a.deallocate(mid);
  Allocation at = a.allocate(4 * kMiB);  // exactly the limit: allowed, its own segment
  EXPECT_NE(at.ptr, nullptr);
  a.deallocate(at);
  const AllocatorStats before = a.stats();
  ASSERT_EQ(before.reserved_bytes, int64_t(9 * kMiB));
  for (size_t asked : {4 * kMiB + 1, 8 * kMiB, size_t(1) << 45, SIZE_MAX}) {
    const std::string m = expect_refused([&] { a.allocate(asked); }, asked, 4 * kMiB);
    EXPECT_EQ(m.rfind("cpu: ", 0), 0u) << "names the device: " << m;
  }
  const AllocatorStats after = a.stats();
  EXPECT_EQ(after.reserved_bytes, int64_t(2 * kMiB)) << "the free segments went back";
  EXPECT_EQ(after.device_frees, before.device_frees + 2);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  a.deallocate(live);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes, 0);
}

// Host memory has no streams: record_stream is a no-op (the block is free
// again at once, no event), snapshots show no stream, and an out-of-memory
// failure is reported for the CPU device.
TEST(HostMemoryOps, NoStreamsAndTheCpuDevice) {
  HostMemoryOps ops;
  EXPECT_EQ(ops.device_type(), SM_DEVICE_CPU);
  EXPECT_EQ(ops.device_name(), "cpu");
  DeviceCachingAllocator a(&ops);
  Allocation x = a.allocate(1000);
  a.record_stream(x, reinterpret_cast<void*>(0x1234));
  AllocatorSnapshot s = a.snapshot();
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_FALSE(s.segments[0].has_stream);
  EXPECT_EQ(s.segments[0].size, 2 * kMiB);
  a.deallocate(x);
  DeviceCachingAllocator::CacheInfo ci = a.cache_info();
  EXPECT_EQ(ci.pending_blocks, 0u) << "no event to wait for";
  EXPECT_EQ(ci.free_blocks, 1u) << "merged back into the whole segment";
  static sm_device seen;
  seen = sm_device{0, -1};
  set_oom_observer([](const sm_oom_info* info, void*) { seen = info->device; }, nullptr);
  Limit l(1 * kMiB);
  EXPECT_THROW(a.allocate(2 * kMiB), Error);
  set_oom_observer(nullptr, nullptr);
  EXPECT_EQ(seen.type, SM_DEVICE_CPU);
  EXPECT_EQ(seen.index, 0);
  a.empty_cache();
}
