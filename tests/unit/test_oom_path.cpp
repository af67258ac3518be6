// What an allocator's out-of-memory path costs in host memory: the report
// (oom_report) needs the segments, blocks and counters, never the history
// ring, which may hold up to 2^24 events (about 1.4 GiB). Copying the ring
// there, under the allocator's lock, while memory is short, would make the
// copy itself likely to fail, and the report fall back to the counters
// alone (no holders by tag) exactly when it is needed.
//
// Measured with glibc's mallinfo2 inside the OOM observer, which runs while
// the allocator's copy is alive; skipped where that count is not the
// process's (ASan's allocator, other C libraries).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fake_device.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/fault_injection.hpp"
#include "memory/out_of_memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SM_TEST_OTHER_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SM_TEST_OTHER_MALLOC 1
#endif
#endif

namespace sm {
namespace {

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) && \
    !defined(SM_TEST_OTHER_MALLOC)
#define SM_TEST_CAN_MEASURE 1
size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // arena blocks in use + mmapped blocks
}
#else
size_t heap_in_use() { return 0; }
#endif

struct Measure {
  size_t before = 0, during = 0;
  int calls = 0;
  std::string report;
};
void measuring_observer(const sm_oom_info* info, void* user) {
  auto* m = static_cast<Measure*>(user);
  m->during = heap_in_use();
  m->report = info->report;
  ++m->calls;
}

constexpr int64_t kEvents = 200000;  // a full ring of ~17 MB

template <class Alloc>
void expect_oom_path_copies_no_history(Alloc& alloc) {
#ifndef SM_TEST_CAN_MEASURE
  GTEST_SKIP() << "needs glibc's mallinfo2 and its allocator (not a sanitizer's)";
#endif
  alloc.record_history(kEvents);
  for (int64_t i = 0; i < kEvents / 2; ++i) alloc.deallocate(alloc.allocate(512, 1));
  ASSERT_EQ(alloc.snapshot().history.events.size(), static_cast<size_t>(kEvents)) << "the ring is full";
  Allocation live = alloc.allocate(4096, 2);
  Measure m;
  set_oom_observer(measuring_observer, &m);
  fault_injection_set(1);
  m.before = heap_in_use();
  try {
    alloc.allocate(1000, 3);
    ADD_FAILURE() << "the injected failure did not happen";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_OUT_OF_MEMORY);
  }
  set_oom_observer(nullptr, nullptr);
  fault_injection_set(0);
  ASSERT_EQ(m.calls, 1);
  // The copy of a few segments and the report: kilobytes. With the ring: ~17 MB.
  const size_t grown = m.during > m.before ? m.during - m.before : 0;
  EXPECT_LT(grown, size_t(1) << 20) << "the out-of-memory path took " << grown
                                    << " bytes of host memory with " << kEvents
                                    << " events of history recorded";
  EXPECT_NE(m.report.find("Held: "), std::string::npos) << m.report;
  alloc.deallocate(live);
  alloc.record_history(0);
}

TEST(OomPath, HostAllocatorCopiesNoHistory) {
  CachingHostAllocator alloc([](size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); },
                             "test");
  expect_oom_path_copies_no_history(alloc);
}

TEST(OomPath, DeviceAllocatorCopiesNoHistory) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  expect_oom_path_copies_no_history(alloc);
}

}  // namespace
}  // namespace sm
