// Memory statistics of the CPU caching allocator, empty_cache, peaks,
// the summary table, fault injection, live-handle counts.
#include <cstddef>
#include <cstring>
#include <string>

#include "api_test_util.hpp"

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
  EXPECT_EQ(s1.device_allocs, s0.device_allocs + 1) << "cache was emptied: a fresh block";
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

TEST(Memory, EmptyCacheReturnsOnlyUnusedBlocks) {
  Tensor live = iota<float>({4096});
  Tensor dead = floats(8192);
  dead.reset();
  const sm_memory_stats_t s0 = stats();
  EXPECT_GE(s0.reserved_bytes - s0.allocated_bytes, rounded(8192 * 4));
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const sm_memory_stats_t s1 = stats();
  EXPECT_LT(s1.reserved_bytes, s0.reserved_bytes);
  EXPECT_EQ(s1.reserved_bytes, s1.allocated_bytes) << "nothing cached is left";
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
  { Tensor cached = floats(1 << 16); }  // 256 KiB now cached, not live
  const sm_memory_stats_t before = stats();
  ASSERT_GT(before.reserved_bytes, before.allocated_bytes) << "the test needs a cached block";
  const int64_t shape[1] = {int64_t(1) << 43};  // 2^45 bytes: the system refuses
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_empty(shape, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  const sm_memory_stats_t after = stats();
  EXPECT_EQ(after.reserved_bytes, after.allocated_bytes) << "nothing cached any more";
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
