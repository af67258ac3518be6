// Allocation tags (memory/alloc_tags.hpp): paths of the thread's stack,
// what a name may hold (so that every tag reaches JSON and HTML as
// well-formed text), the depth limit, and that the stack is per thread:
// two threads tagging and allocating at once each get their own tag on
// their blocks.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "fake_device.hpp"
#include "memory/alloc_tags.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/device_caching_allocator.hpp"

namespace sm {
namespace {

// Leaves this thread's stack empty whatever a test did.
struct EmptyStackAfter {
  ~EmptyStackAfter() {
    while (tag_depth() > 0) pop_tag();
  }
};

std::string top() { return current_tag() ? *current_tag() : std::string("(none)"); }

// push_tag must refuse `name` with SM_ERR_INVALID_ARGUMENT, mention `needle`,
// and push nothing.
void expect_refused(const char* name, const char* needle, const char* what) {
  const size_t depth = tag_depth();
  const Tag before = current_tag();
  try {
    push_tag(name);
    ADD_FAILURE() << what << ": accepted";
    pop_tag();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_INVALID_ARGUMENT) << what;
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << what << ": \"" << e.what() << "\" does not mention \"" << needle << "\"";
  }
  EXPECT_EQ(tag_depth(), depth) << what;
  EXPECT_EQ(current_tag(), before) << what;
}

TEST(AllocTags, PathsNest) {
  EmptyStackAfter guard;
  EXPECT_EQ(current_tag(), nullptr);
  EXPECT_EQ(tag_depth(), 0u);
  push_tag("encoder");
  EXPECT_EQ(top(), "encoder");
  push_tag("attn");
  EXPECT_EQ(top(), "encoder/attn");
  push_tag("q");
  EXPECT_EQ(top(), "encoder/attn/q");
  EXPECT_EQ(tag_depth(), 3u);
  pop_tag();
  EXPECT_EQ(top(), "encoder/attn");
  pop_tag();
  push_tag("mlp");
  EXPECT_EQ(top(), "encoder/mlp");
  pop_tag();
  pop_tag();
  EXPECT_EQ(current_tag(), nullptr);
}

TEST(AllocTags, PopOnAnEmptyStackThrows) {
  try {
    pop_tag();
    FAIL() << "popped an empty stack";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("no tag is pushed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(tag_depth(), 0u);
}

TEST(AllocTags, NamesAreValidated) {
  EmptyStackAfter guard;
  push_tag("outer");  // refusals leave a non-empty stack as it was, too
  expect_refused(nullptr, "NULL", "NULL");
  expect_refused("", "empty", "empty");
  const std::string max(kMaxTagBytes, 'a'), over(kMaxTagBytes + 1, 'a'), far(5000, 'a');
  expect_refused(over.c_str(), "256", "257 bytes");
  expect_refused(far.c_str(), "256", "5000 bytes");
  // Control characters (C0 and DEL), anywhere.
  for (const char* s : {"\x01", "a\tb", "a\nb", "\x1f", "x\x7f", "\x1b[31m"})
    expect_refused(s, "control character", "control character");
  // C1 controls (U+0080..U+009F, two bytes each), named with their position.
  for (const char* s : {"\xC2\x80", "a\xC2\x85" "b", "\xC2\x9B[31m", "abc\xC2\x9F"})
    expect_refused(s, "control character (U+00", "C1 control character");
  expect_refused("a\xC2\x85" "b", "U+0085, bytes 0xc2 0x85 at 1", "NEL at byte 1");
  // A malformed sequence starting with C2 is refused as not UTF-8, not as a control.
  expect_refused("\xC2\x41", "UTF-8", "C2 without its continuation byte");
  // Not UTF-8: stray continuation, truncated sequences, bad continuation,
  // overlong forms, surrogates, past U+10FFFF, bytes that never appear.
  for (const char* s :
       {"\x80", "a\xBF", "\xC3", "ab\xE2\x82", "\xF0\x9F\x98", "\xC3\x28", "\xE2\x28\xA1",
        "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xE0\x9F\xBF", "\xF0\x80\x80\xAF",
        "\xF0\x8F\xBF\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xF4\x90\x80\x80",
        "\xF5\x80\x80\x80", "\xF8\x88\x80\x80\x80", "\xFE", "\xFF"})
    expect_refused(s, "UTF-8", "invalid UTF-8");
  EXPECT_EQ(top(), "outer");
  // Valid: the edges of each sequence length, and names of exactly 256 bytes.
  const std::string e128 = [] {
    std::string s;
    for (int i = 0; i < 128; ++i) s += "\xC3\xA9";  // 256 bytes, 128 characters
    return s;
  }();
  const std::string e4 = [] {
    std::string s;
    for (int i = 0; i < 64; ++i) s += "\xF0\x9F\x98\x80";  // 256 bytes
    return s;
  }();
  for (const std::string& s :
       {std::string("~"), std::string("\xC2\xA0"), std::string("\xDF\xBF"),
        std::string("\xE0\xA0\x80"), std::string("\xED\x9F\xBF"), std::string("\xEE\x80\x80"),
        std::string("\xEF\xBF\xBF"), std::string("\xF0\x90\x80\x80"),
        std::string("\xF4\x8F\xBF\xBF"), std::string("\xE2\x82\xAC"),
        std::string("quote\" back\\slash </script>"), max, e128, e4}) {
    push_tag(s.c_str());
    EXPECT_EQ(top(), "outer/" + s);
    pop_tag();
  }
  EXPECT_EQ(top(), "outer");
}

TEST(AllocTags, DepthIsLimited) {
  EmptyStackAfter guard;
  for (size_t i = 0; i < kMaxTagDepth; ++i) push_tag(i % 2 ? "b" : "a");
  EXPECT_EQ(tag_depth(), kMaxTagDepth);
  EXPECT_EQ(current_tag()->size(), 2 * kMaxTagDepth - 1) << "a/b/a/...: 256 names";
  expect_refused("c", "sm_pop_tag is missing", "257th push");
  EXPECT_EQ(tag_depth(), kMaxTagDepth);
  for (size_t i = 0; i < kMaxTagDepth; ++i) pop_tag();
  EXPECT_EQ(tag_depth(), 0u);
  EXPECT_THROW(pop_tag(), Error);
}

// Two threads, each with its own tag, allocate from one allocator at the
// same time: every block carries its own thread's tag, never the other's,
// and neither thread's stack shows on the main thread.
template <class Alloc>
void two_threads_tag_their_own_blocks(Alloc& alloc) {
  constexpr int kPerThread = 400;
  std::atomic<int> ready{0};
  std::vector<std::vector<Allocation>> held(2);
  auto worker = [&](int k) {
    EmptyStackAfter guard;
    push_tag(k == 0 ? "zero" : "one");
    if (k == 1) push_tag("inner");
    ready++;
    while (ready.load() < 2) std::this_thread::yield();  // allocate at once
    for (int i = 0; i < kPerThread; ++i) {
      held[static_cast<size_t>(k)].push_back(
          alloc.allocate(512 * size_t(1 + i % 5), uint64_t(k) * 1000000 + uint64_t(i) + 1));
      if (i % 50 == 25) {  // tags change under the other thread's feet
        pop_tag();
        push_tag(k == 0 ? "zero" : (tag_depth() == 1 ? "inner" : "one"));
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  EXPECT_EQ(current_tag(), nullptr) << "the main thread pushed nothing";
  const AllocatorSnapshot s = alloc.snapshot();
  int seen[2] = {0, 0};
  for (const SnapshotSegment& seg : s.segments)
    for (const SnapshotBlock& blk : seg.blocks) {
      if (blk.state != BlockState::allocated) continue;
      const int k = blk.meta.owner >= 1000000 ? 1 : 0;
      ++seen[k];
      ASSERT_NE(blk.meta.tag, nullptr);
      EXPECT_EQ(*blk.meta.tag, k == 0 ? "zero" : "one/inner") << "owner " << blk.meta.owner;
    }
  EXPECT_EQ(seen[0], kPerThread);
  EXPECT_EQ(seen[1], kPerThread);
  for (auto& v : held)
    for (const Allocation& x : v) alloc.deallocate(x);
}

TEST(AllocTags, PerThreadStacksOnTheDeviceAllocator) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  two_threads_tag_their_own_blocks(alloc);
}

TEST(AllocTags, PerThreadStacksOnTheHostAllocator) {
  CachingHostAllocator alloc([](size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); },
                             "test");
  two_threads_tag_their_own_blocks(alloc);
}

}  // namespace
}  // namespace sm
