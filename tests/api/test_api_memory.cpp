// Memory statistics of the CPU caching allocator, empty_cache, peaks,
// the summary table, fault injection, live-handle counts; that memory
// checkers (AddressSanitizer, valgrind) still see the bounds of CPU tensors
// carved from shared segments.
#include <cstddef>
#include <cstring>
#include <string>

#include "api_test_util.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define SMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SMT_ASAN 1
#endif
#endif
#if !defined(SMT_ASAN) && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SMT_VALGRIND 1
#endif
#endif

using namespace smt;

namespace {

Tensor floats(int64_t n) {
  Tensor t;
  const sm_status st = sm_empty(&n, 1, SM_FLOAT32, cpu(), t.out());
  EXPECT_EQ(st, SM_OK) << sm_last_error();
  return t;
}

// Rounding documented in the header.
int64_t rounded(int64_t nbytes) {
  return (nbytes + SM_ALLOC_ROUND - 1) / SM_ALLOC_ROUND * SM_ALLOC_ROUND;
}

constexpr int64_t kMiB = int64_t(1) << 20;

// The CPU snapshot as text.
std::string cpu_snapshot() {
  size_t need = 0, len = 0;
  std::string buf;
  do {
    len = need;
    buf.assign(len, '\0');
    if (sm_memory_snapshot(cpu(), len ? &buf[0] : nullptr, len, &need) != SM_OK) {
      ADD_FAILURE() << sm_last_error();
      return "";
    }
  } while (need > len);
  buf.resize(need - 1);
  return buf;
}

// Blocks in state cached_free: whole segments without a live block, which
// sm_empty_cache returns.
size_t cached_free_segments() {
  const std::string snap = cpu_snapshot();
  size_t n = 0;
  for (size_t at = snap.find("\"cached_free\""); at != std::string::npos;
       at = snap.find("\"cached_free\"", at + 1))
    ++n;
  return n;
}

}  // namespace

TEST(Memory, StatsStructSizeIsHonoured) {
  sm_memory_stats_t s;
  std::memset(&s, 0x77, sizeof s);
  s.struct_size = offsetof(sm_memory_stats_t, reserved_bytes);  // only up to allocated_bytes
  SM_ASSERT_OK(sm_memory_stats(cpu(), &s));
  EXPECT_GE(s.allocated_bytes, 0);
  int64_t untouched;
  std::memset(&untouched, 0x77, sizeof untouched);
  EXPECT_EQ(s.reserved_bytes, untouched) << "fields past struct_size must not be written";
  EXPECT_EQ(s.active_views, untouched);
}

TEST(Memory, AllocatedGrowsAndShrinksWithRounding) {
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const sm_memory_stats_t s0 = stats();
  EXPECT_GE(s0.reserved_bytes, s0.allocated_bytes);
  Tensor t = floats(250);  // 1000 bytes -> 1024
  const sm_memory_stats_t s1 = stats();
  EXPECT_EQ(s1.allocated_bytes - s0.allocated_bytes, rounded(1000));
  EXPECT_EQ(s1.requested_bytes - s0.requested_bytes, 1000);
  EXPECT_EQ(s1.num_allocs, s0.num_allocs + 1);
  EXPECT_EQ(s1.active_storages, s0.active_storages + 1);
  EXPECT_EQ(s1.active_views, s0.active_views + 1);
  EXPECT_GE(s1.reserved_bytes, s1.allocated_bytes);
  // After sm_empty_cache the only cached bytes left are the free parts of
  // segments that hold a live block: the block comes from one of those (a
  // cache hit) or from a fresh 2 MiB small segment.
  EXPECT_EQ((s1.device_allocs - s0.device_allocs) + (s1.cache_hits - s0.cache_hits), 1);
  if (s1.device_allocs > s0.device_allocs)
    EXPECT_EQ(s1.reserved_bytes - s0.reserved_bytes, 2 * kMiB) << "a whole small segment";
  else
    EXPECT_EQ(s1.reserved_bytes, s0.reserved_bytes);
  Tensor v;
  SM_ASSERT_OK(sm_slice(t, 0, 0, 10, 1, v.out()));
  EXPECT_EQ(stats().allocated_bytes, s1.allocated_bytes) << "a view allocates nothing";
  EXPECT_EQ(stats().active_views, s1.active_views + 1);
  t.reset();
  EXPECT_EQ(stats().allocated_bytes, s1.allocated_bytes) << "the view pins the storage";
  v.reset();
  const sm_memory_stats_t s2 = stats();
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s2.requested_bytes, s0.requested_bytes);
  EXPECT_EQ(s2.num_frees, s0.num_frees + 1);
  EXPECT_EQ(s2.active_storages, s0.active_storages);
  EXPECT_EQ(s2.active_views, s0.active_views);
  EXPECT_EQ(s2.reserved_bytes, s1.reserved_bytes) << "the freed block stays cached";
}

TEST(Memory, FreeThenAllocSameSizeIsACacheHit) {
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  Tensor a = floats(3000);
  void* p = data_ptr_of(a);
  a.reset();
  const sm_memory_stats_t s0 = stats();
  Tensor b = floats(3000);
  const sm_memory_stats_t s1 = stats();
  EXPECT_EQ(s1.cache_hits, s0.cache_hits + 1);
  EXPECT_EQ(s1.device_allocs, s0.device_allocs);
  EXPECT_EQ(s1.reserved_bytes, s0.reserved_bytes);
  EXPECT_EQ(data_ptr_of(b), p) << "the cached block is reused";
  // Large pool too.
  Tensor c = floats(SM_SMALL_BLOCK_MAX);  // 4 MiB
  c.reset();
  const sm_memory_stats_t s2 = stats();
  Tensor d = floats(SM_SMALL_BLOCK_MAX);
  EXPECT_EQ(stats().cache_hits, s2.cache_hits + 1);
  EXPECT_EQ(stats().device_allocs, s2.device_allocs);
}

// sm_empty_cache returns every segment without a live block; a segment that
// holds one keeps its free parts (reserved - allocated may stay above 0).
TEST(Memory, EmptyCacheReturnsOnlySegmentsWithoutALiveBlock) {
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  Tensor live = iota<float>({4096});  // 16 KiB: a small segment it pins
  Tensor neighbour = floats(8192);    // 32 KiB in the same small segment
  const sm_memory_stats_t sd = stats();
  Tensor dead = floats(6 * kMiB);  // 24 MiB: a large segment of its own
  ASSERT_EQ(stats().device_allocs, sd.device_allocs + 1) << "the test needs a fresh segment";
  EXPECT_EQ(stats().reserved_bytes - sd.reserved_bytes, 24 * kMiB) << "rounded to 2 MiB";
  dead.reset();
  neighbour.reset();
  const sm_memory_stats_t s0 = stats();
  EXPECT_GE(s0.reserved_bytes - s0.allocated_bytes, 24 * kMiB + rounded(8192 * 4));
  EXPECT_GE(cached_free_segments(), 1u);
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const sm_memory_stats_t s1 = stats();
  EXPECT_LE(s1.reserved_bytes, s0.reserved_bytes - 24 * kMiB) << "the dead segment went back";
  EXPECT_EQ(cached_free_segments(), 0u) << "no segment without a live block is left";
  EXPECT_GE(s1.reserved_bytes - s1.allocated_bytes, rounded(8192 * 4))
      << "the neighbour's bytes stay in the segment the live tensor pins";
  EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes) << "live blocks are kept";
  EXPECT_GT(s1.device_frees, s0.device_frees);
  // The live tensor is intact and usable.
  const std::vector<float> v = read<float>(live);
  ASSERT_EQ(v.size(), 4096u);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[4095], 4095.0f);
  SM_ASSERT_OK(sm_inplace_scalar(live, SM_OP_ADD, 1, 0));
  EXPECT_EQ(read<float>(live)[4095], 4096.0f);
  // Emptying twice is harmless.
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  EXPECT_EQ(stats().reserved_bytes, s1.reserved_bytes);
}

TEST(Memory, PeaksAndReset) {
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  SM_ASSERT_OK(sm_reset_peak_stats(cpu()));
  const sm_memory_stats_t s0 = stats();
  EXPECT_EQ(s0.peak_allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s0.peak_reserved_bytes, s0.reserved_bytes);
  {
    Tensor big = floats(1 << 20);  // 4 MiB
    const sm_memory_stats_t s1 = stats();
    EXPECT_EQ(s1.peak_allocated_bytes, s1.allocated_bytes);
    EXPECT_GE(s1.peak_allocated_bytes, s0.allocated_bytes + (4 << 20));
  }
  const sm_memory_stats_t s2 = stats();
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes);
  EXPECT_GE(s2.peak_allocated_bytes, s0.allocated_bytes + (4 << 20)) << "peak survives the free";
  EXPECT_GE(s2.peak_reserved_bytes, s2.reserved_bytes);
  SM_ASSERT_OK(sm_reset_peak_stats(cpu()));
  const sm_memory_stats_t s3 = stats();
  EXPECT_EQ(s3.peak_allocated_bytes, s3.allocated_bytes);
  EXPECT_EQ(s3.peak_reserved_bytes, s3.reserved_bytes);
  // Reset does not touch the other counters.
  EXPECT_EQ(s3.num_allocs, s2.num_allocs);
  EXPECT_EQ(s3.cache_hits, s2.cache_hits);
}

TEST(Memory, ActiveViewsCountTensorObjects) {
  const sm_memory_stats_t s0 = stats();
  Tensor a = iota({4, 4});
  Tensor b, c;
  SM_ASSERT_OK(sm_transpose(a, 0, 1, b.out()));
  SM_ASSERT_OK(sm_select(b, 0, 1, c.out()));
  EXPECT_EQ(stats().active_views, s0.active_views + 3);
  EXPECT_EQ(stats().active_storages, s0.active_storages + 1);
  // A retained handle is still one object.
  SM_ASSERT_OK(sm_tensor_retain(c));
  EXPECT_EQ(stats().active_views, s0.active_views + 3);
  SM_ASSERT_OK(sm_tensor_release(c));
  a.reset();
  b.reset();
  EXPECT_EQ(stats().active_views, s0.active_views + 1);
  c.reset();
  EXPECT_EQ(stats().active_views, s0.active_views);
  EXPECT_EQ(stats().active_storages, s0.active_storages);
}

TEST(Memory, SummaryIsReadableAndFollowsTheNeededConvention) {
  Tensor keep = floats(1000);
  size_t need = 0;
  SM_ASSERT_OK(sm_memory_summary(cpu(), nullptr, 0, &need));
  ASSERT_GT(need, 40u) << "a table, not a word";
  std::vector<char> buf(need + 16, 'Z');
  size_t need2 = 0;
  SM_ASSERT_OK(sm_memory_summary(cpu(), buf.data(), buf.size(), &need2));
  const size_t len = std::strlen(buf.data());
  EXPECT_EQ(len + 1, need2) << "needed counts the text and its NUL";
  for (size_t k = need2; k < buf.size(); ++k) EXPECT_EQ(buf[k], 'Z') << "byte " << k;
  std::string text(buf.data());
  std::string lower = text;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  EXPECT_NE(lower.find("alloc"), std::string::npos) << text;
  EXPECT_NE(lower.find("reserved"), std::string::npos) << text;
  EXPECT_NE(lower.find("cpu"), std::string::npos) << text;
  EXPECT_NE(text.find('\n'), std::string::npos) << "several lines";
  for (char ch : text) EXPECT_TRUE(ch == '\n' || ch == '\t' || (ch >= 32 && ch < 127)) << int(ch);

  // A buffer one byte short, or of any smaller size: nothing but needed is written.
  for (size_t n : {size_t(1), size_t(2), size_t(10), need2 - 1}) {
    std::vector<char> small(n + 8, 'Z');
    size_t got = 0;
    SM_ASSERT_OK(sm_memory_summary(cpu(), small.data(), n, &got));
    EXPECT_EQ(got, need2) << n;
    for (size_t k = 0; k < small.size(); ++k) EXPECT_EQ(small[k], 'Z') << n << " byte " << k;
  }
  // Exactly needed: written whole.
  std::vector<char> exact(need2, 'Z');
  SM_ASSERT_OK(sm_memory_summary(cpu(), exact.data(), exact.size(), nullptr));
  EXPECT_EQ(std::string(exact.data()), text);
  // Too short without needed: refused, says how much, writes nothing.
  char one[4] = {'Z', 'Z', 'Z', 'Z'};
  EXPECT_EQ(sm_memory_summary(cpu(), one, sizeof one, nullptr), SM_ERR_INVALID_ARGUMENT);
  const std::string need_text = std::to_string(need2);
  expect_error_mentions({"sm_memory_summary", need_text.c_str()});
  for (char ch : one) EXPECT_EQ(ch, 'Z');
}

TEST(Memory, HugeAllocationFailsCleanly) {
  const GlobalSnap g0 = global_snap();
  const int64_t shape[1] = {int64_t(1) << 43};  // 2^45 bytes of float32
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_empty(shape, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  expect_error_mentions({"sm_empty"});
  EXPECT_EQ(global_snap(), g0);
  // And everything still works afterwards.
  Tensor t = iota({3});
  EXPECT_EQ(read<float>(t), (std::vector<float>{0, 1, 2}));
}

// A struct_size that ends inside a field writes only the whole fields before
// it: never half a value.
TEST(Memory, StatsStructSizeCuttingAFieldWritesOnlyWholeFields) {
  Tensor keep = floats(100);  // allocated_bytes > 0, with bytes in both halves of the field
  for (uint32_t cut = 1; cut < 8; ++cut) {
    sm_memory_stats_t s;
    std::memset(&s, 0x77, sizeof s);
    s.struct_size = static_cast<uint32_t>(offsetof(sm_memory_stats_t, reserved_bytes)) + cut;
    SM_ASSERT_OK(sm_memory_stats(cpu(), &s));
    int64_t untouched;
    std::memset(&untouched, 0x77, sizeof untouched);
    EXPECT_GT(s.allocated_bytes, 0) << "cut " << cut;
    EXPECT_NE(s.allocated_bytes, untouched);
    EXPECT_EQ(s.reserved_bytes, untouched) << "cut " << cut << ": half a field was written";
    EXPECT_EQ(s.peak_allocated_bytes, untouched);
  }
  // The last field cut the same way.
  sm_memory_stats_t s;
  std::memset(&s, 0x77, sizeof s);
  s.struct_size = sizeof s - 3;
  SM_ASSERT_OK(sm_memory_stats(cpu(), &s));
  int64_t untouched;
  std::memset(&untouched, 0x77, sizeof untouched);
  EXPECT_EQ(s.reserved[7], untouched);
  EXPECT_EQ(s.requested_bytes, stats().requested_bytes);
}

// The one state change an out-of-memory failure makes (documented at
// sm_empty_cache): the cache is given back to the system before giving up.
TEST(Memory, OutOfMemoryFirstEmptiesTheCache) {
  { Tensor cached = floats(6 << 20); }  // 24 MiB: a segment of its own, now cached, not live
  const sm_memory_stats_t before = stats();
  ASSERT_GT(before.reserved_bytes, before.allocated_bytes) << "the test needs a cached block";
  const int64_t shape[1] = {int64_t(1) << 43};  // 2^45 bytes: the system refuses
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_empty(shape, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  const sm_memory_stats_t after = stats();
  EXPECT_EQ(cached_free_segments(), 0u) << "no segment without a live block is left";
  EXPECT_LT(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes) << "no live block changed";
  EXPECT_GT(after.device_frees, before.device_frees);
  EXPECT_EQ(after.active_storages, before.active_storages);
}

TEST(Memory, FaultInjectionFailsTheNthAllocation) {
  // With an empty cache every allocation reaches the system, whichever level
  // the hook sits at.
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  SM_ASSERT_OK(sm_debug_fail_alloc(2));
  const int64_t shape[1] = {16};
  Tensor a;
  SM_ASSERT_OK(sm_zeros(shape, 1, SM_FLOAT32, cpu(), a.out()));
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_zeros(shape, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(global_snap(), g0);
  // Only that one: the next succeeds.
  Tensor c;
  SM_ASSERT_OK(sm_zeros(shape, 1, SM_FLOAT32, cpu(), c.out()));
  // A copy op fails cleanly too, leaving its input as it was.
  Tensor src = iota({2, 3}), t;
  SM_ASSERT_OK(sm_transpose(src, 0, 1, t.out()));
  const TensorSnap before = snap(t);
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  const GlobalSnap g1 = global_snap();
  EXPECT_EQ(sm_contiguous(t, SM_CONTIGUOUS, &out, nullptr), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(global_snap(), g1);
  EXPECT_EQ(snap(t), before);
  // Disabled.
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  SM_ASSERT_OK(sm_debug_fail_alloc(0));
  Tensor d;
  SM_ASSERT_OK(sm_clone(t, SM_CONTIGUOUS, d.out()));
}

TEST(Memory, LiveHandlesCountEveryKind) {
  const Live l0 = live();
  EXPECT_GE(l0.tensors, 0);
  EXPECT_GE(l0.storages, 0);
  EXPECT_GE(l0.stacks, 0);
  Tensor t = iota({4});
  Storage s;
  SM_ASSERT_OK(sm_tensor_storage(t, s.out()));
  Stack k;
  SM_ASSERT_OK(sm_stack_create(cpu(), 1024, k.out()));
  const Live l1 = live();
  EXPECT_EQ(l1.tensors, l0.tensors + 1);
  EXPECT_EQ(l1.storages, l0.storages + 1);
  EXPECT_EQ(l1.stacks, l0.stacks + 1);
  t.reset();
  s.reset();
  k.reset();
  EXPECT_EQ(live(), l0);
  int64_t a = kSentinel64;
  EXPECT_EQ(sm_debug_live_handles(&a, nullptr, nullptr), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, kSentinel64);
}

// CPU blocks are carved from shared segments, so the allocator tells the
// memory checkers what the system allocator no longer can: under
// AddressSanitizer every byte past a block's requested size (its slack up to
// the 512-byte rounding) and every free block is poisoned, and unpoisoned
// when handed out. Proof: writes past a tensor's requested bytes, into its
// slack and into the free block next to it, are reported. (What cannot be
// caught: a write into a neighbouring *live* block right after a block with
// no slack, as with any caching allocator.)
TEST(MemoryDeathTest, AddressSanitizerCatchesWritesPastACpuTensor) {
#if !defined(SMT_ASAN)
  GTEST_SKIP() << "needs an AddressSanitizer build (scripts/reliability.sh asan)";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the CPU thread pool runs
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  Tensor a = floats(25);   // 100 bytes requested, a 512-byte block
  Tensor b = floats(128);  // 512 bytes, carved right after a
  volatile char* pa = static_cast<volatile char*>(data_ptr_of(a));
  volatile char* pb = static_cast<volatile char*>(data_ptr_of(b));
  ASSERT_EQ(pb, pa + SM_ALLOC_ROUND) << "the test needs b next to a in one segment";
  pa[0] = 1;
  pa[99] = 1;  // the last requested byte
  pb[511] = 1;
  EXPECT_DEATH(pa[100] = 1, "use-after-poison") << "a's slack";
  EXPECT_DEATH(pa[SM_ALLOC_ROUND - 1] = 1, "use-after-poison") << "the end of a's slack";
  b.reset();  // b's block is free: merged with the rest of the segment
  EXPECT_DEATH(pa[SM_ALLOC_ROUND] = 1, "use-after-poison") << "the free block after a";
  EXPECT_DEATH((void)pa[SM_ALLOC_ROUND + 4096], "use-after-poison") << "reads too";
  a.reset();
  EXPECT_DEATH(pa[0] = 1, "use-after-poison") << "a freed tensor's block";
  // Handed out again, the requested bytes are usable.
  Tensor c = floats(200);
  volatile char* pc = static_cast<volatile char*>(data_ptr_of(c));
  pc[0] = 1;
  pc[799] = 1;
  EXPECT_DEATH(pc[800] = 1, "use-after-poison");
#endif
}

// The same under valgrind (memcheck), where its headers were found: the
// bytes past a CPU tensor's request and free blocks are not addressable.
// Asked with VALGRIND_GET_VBITS, which reports nothing itself.
TEST(Memory, ValgrindSeesCpuTensorBounds) {
#if !defined(SMT_VALGRIND)
  GTEST_SKIP() << "built without valgrind/memcheck.h";
#else
  if (!RUNNING_ON_VALGRIND) GTEST_SKIP() << "not running under valgrind";
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  Tensor a = floats(25);  // 100 bytes requested
  char* pa = static_cast<char*>(data_ptr_of(a));
  std::memset(pa, 0, 100);
  unsigned char vbits[1];
  EXPECT_EQ(VALGRIND_GET_VBITS(pa + 99, vbits, 1), 1) << "the last requested byte";
  EXPECT_EQ(VALGRIND_GET_VBITS(pa + 100, vbits, 1), 3) << "the slack is not addressable";
  EXPECT_EQ(VALGRIND_GET_VBITS(pa + 4096, vbits, 1), 3) << "nor the free rest of the segment";
#endif
}
