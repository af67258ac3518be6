// The pure figures computed from an allocator snapshot (memory/memory_snapshot.hpp:
// fragmentation, tag_totals, oom_report), on hand-made snapshots whose
// answers are worked out by hand below; the history ring (AllocationLog);
// and the byte units every message uses (human_bytes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "memory/alloc_tags.hpp"
#include "memory/allocation_log.hpp"
#include "memory/byte_units.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/memory_snapshot.hpp"

namespace sm {
namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

Tag tag(const char* s) { return std::make_shared<const std::string>(s); }

SnapshotBlock block(size_t offset, size_t size, BlockState state, size_t requested = 0,
                    Tag t = nullptr) {
  SnapshotBlock b;
  b.offset = offset;
  b.size = size;
  b.state = state;
  b.requested = state == BlockState::allocated ? (requested ? requested : size) : 0;
  b.meta.tag = std::move(t);
  if (state == BlockState::allocated) b.meta.seq = 1;
  return b;
}

// A segment at `address` made of `blocks` (offsets filled in).
SnapshotSegment segment(uintptr_t address, bool small, std::vector<SnapshotBlock> blocks) {
  SnapshotSegment s;
  s.address = address;
  s.small_pool = small;
  for (SnapshotBlock& b : blocks) {
    b.offset = s.size;
    s.size += b.size;
  }
  s.blocks = std::move(blocks);
  return s;
}

uint64_t unusable_for(const Fragmentation& f, uint64_t request) {
  for (const UnusableFigure& u : f.unusable)
    if (u.request == request) return u.unusable_bytes;
  ADD_FAILURE() << "no unusable figure for " << request;
  return 0;
}

TEST(Fragmentation, ProbeSizesAreTheDocumentedOnes) {
  // docs/MEMORY_SNAPSHOT.md: 512 B to 1 GiB in powers of 8, plus 1 MiB and 2 MiB.
  const std::vector<uint64_t> want = {512, 4 * KiB, 32 * KiB, 256 * KiB, 1 * MiB,
                                      2 * MiB, 16 * MiB, 128 * MiB, 1024 * MiB};
  EXPECT_EQ(kProbeSizes, want);
}

TEST(Fragmentation, NothingFreeIsRatioZero) {
  AllocatorSnapshot s;
  s.reuse = &DeviceCachingAllocator::reuses;
  s.segments.push_back(segment(0x1000, true, {block(0, 2 * MiB, BlockState::allocated)}));
  const Fragmentation f = fragmentation(s);
  EXPECT_EQ(f.free_bytes, 0u);
  EXPECT_EQ(f.largest_free_block, 0u);
  EXPECT_EQ(f.ratio, 0.0);
  EXPECT_EQ(f.small.ratio, 0.0);
  EXPECT_EQ(f.large.segments, 0u);
  for (const UnusableFigure& u : f.unusable) EXPECT_EQ(u.unusable_bytes, 0u);
  // And an empty snapshot.
  const Fragmentation e = fragmentation(AllocatorSnapshot());
  EXPECT_EQ(e.free_bytes, 0u);
  EXPECT_EQ(e.ratio, 0.0);
  EXPECT_EQ(e.unusable.size(), kProbeSizes.size());
}

// The device rule: a free block of the request's pool at least as large;
// pending_free blocks serve nobody.
TEST(Fragmentation, DeviceRuleWorkedExample) {
  const uint64_t small_rest = 2 * MiB - 1024;  // 2096128
  AllocatorSnapshot s;
  s.reuse = &DeviceCachingAllocator::reuses;
  s.segments.push_back(segment(0x10000000, true,
                               {block(0, 1024, BlockState::allocated, 1000),
                                block(0, small_rest, BlockState::inactive_split)}));
  s.segments.push_back(segment(0x20000000, false,
                               {block(0, 4 * MiB, BlockState::pending_free),
                                block(0, 6 * MiB, BlockState::allocated),
                                block(0, 10 * MiB, BlockState::inactive_split)}));
  s.segments.push_back(segment(0x30000000, false, {block(0, 12 * MiB, BlockState::cached_free)}));
  const Fragmentation f = fragmentation(s);

  const uint64_t free_all = small_rest + 26 * MiB;
  EXPECT_EQ(f.free_bytes, free_all);
  EXPECT_EQ(f.largest_free_block, 12 * MiB);
  EXPECT_DOUBLE_EQ(f.ratio, 1.0 - double(12 * MiB) / double(free_all));

  EXPECT_EQ(f.small.segments, 1u);
  EXPECT_EQ(f.small.reserved_bytes, 2 * MiB);
  EXPECT_EQ(f.small.allocated_bytes, 1024u);
  EXPECT_EQ(f.small.free_bytes, small_rest);
  EXPECT_EQ(f.small.largest_free_block, small_rest);
  EXPECT_EQ(f.small.ratio, 0.0) << "one free block is no fragmentation";

  EXPECT_EQ(f.large.segments, 2u);
  EXPECT_EQ(f.large.reserved_bytes, 32 * MiB);
  EXPECT_EQ(f.large.allocated_bytes, 6 * MiB);
  EXPECT_EQ(f.large.free_bytes, 26 * MiB);
  EXPECT_EQ(f.large.largest_free_block, 12 * MiB);
  EXPECT_DOUBLE_EQ(f.large.ratio, 1.0 - 12.0 / 26.0);

  // Small requests (<= 1 MiB) only use the small block: the large pool's 26 MiB are unusable.
  for (uint64_t r : {uint64_t{512}, 4 * KiB, 32 * KiB, 256 * KiB, 1 * MiB})
    EXPECT_EQ(unusable_for(f, r), 26 * MiB) << r;
  // 2 MiB is a large request: the small block and the pending 4 MiB cannot serve it.
  EXPECT_EQ(unusable_for(f, 2 * MiB), small_rest + 4 * MiB);
  // Nothing holds 16 MiB or more.
  for (uint64_t r : {16 * MiB, 128 * MiB, 1024 * MiB}) EXPECT_EQ(unusable_for(f, r), free_all) << r;
}

// A pending block as large as any request is still unusable.
TEST(Fragmentation, PendingFreeIsUnusableWhateverItsSize) {
  AllocatorSnapshot s;
  s.reuse = &DeviceCachingAllocator::reuses;
  s.segments.push_back(segment(0x1000, false, {block(0, 2048 * MiB, BlockState::pending_free)}));
  const Fragmentation f = fragmentation(s);
  EXPECT_EQ(f.free_bytes, 2048 * MiB) << "pending bytes are free bytes";
  EXPECT_EQ(f.largest_free_block, 2048 * MiB);
  for (const UnusableFigure& u : f.unusable) EXPECT_EQ(u.unusable_bytes, 2048 * MiB) << u.request;
}

// The host rule: the exact size class in the small pool; in the large pool a
// block wasting at most 1/8 of itself.
TEST(Fragmentation, HostRuleWorkedExample) {
  AllocatorSnapshot s;
  s.reuse = &CachingHostAllocator::reuses;
  uintptr_t a = 0x10000000;
  for (uint64_t size : {uint64_t{512}, 4 * KiB, 1 * MiB})
    s.segments.push_back(segment(a += 0x10000000, true, {block(0, size, BlockState::cached_free)}));
  s.segments.push_back(segment(a += 0x10000000, false,
                               {block(0, 2 * MiB + 256 * KiB, BlockState::cached_free)}));
  s.segments.push_back(segment(a += 0x10000000, false, {block(0, 16 * MiB, BlockState::allocated)}));
  s.segments.push_back(segment(a += 0x10000000, false, {block(0, 18 * MiB, BlockState::cached_free)}));
  const Fragmentation f = fragmentation(s);
  const uint64_t free_all = 512 + 4 * KiB + 1 * MiB + (2 * MiB + 256 * KiB) + 18 * MiB;
  EXPECT_EQ(f.free_bytes, free_all);
  EXPECT_EQ(f.largest_free_block, 18 * MiB);
  EXPECT_EQ(f.small.segments, 3u);
  EXPECT_EQ(f.small.free_bytes, 512 + 4 * KiB + 1 * MiB);
  EXPECT_EQ(f.small.largest_free_block, 1 * MiB);
  EXPECT_DOUBLE_EQ(f.small.ratio, 1.0 - double(1 * MiB) / double(512 + 4 * KiB + 1 * MiB));
  EXPECT_EQ(f.large.allocated_bytes, 16 * MiB);
  EXPECT_EQ(unusable_for(f, 512), free_all - 512) << "only the 512 B class";
  EXPECT_EQ(unusable_for(f, 4 * KiB), free_all - 4 * KiB);
  EXPECT_EQ(unusable_for(f, 32 * KiB), free_all) << "no 32 KiB class is cached";
  EXPECT_EQ(unusable_for(f, 256 * KiB), free_all);
  EXPECT_EQ(unusable_for(f, 1 * MiB), free_all - 1 * MiB);
  // 2.25 MiB wastes 0.25 MiB <= 2.25/8; 18 MiB would waste 16 MiB.
  EXPECT_EQ(unusable_for(f, 2 * MiB), free_all - (2 * MiB + 256 * KiB));
  // 18 MiB wastes 2 MiB <= 18/8 = 2.25 MiB.
  EXPECT_EQ(unusable_for(f, 16 * MiB), free_all - 18 * MiB);
  EXPECT_EQ(unusable_for(f, 128 * MiB), free_all);
  EXPECT_EQ(unusable_for(f, 1024 * MiB), free_all);
}

TEST(Fragmentation, ReuseRulesAtTheirEdges) {
  using D = DeviceCachingAllocator;
  using H = CachingHostAllocator;
  EXPECT_TRUE(D::reuses(true, 1 * MiB, 1 * MiB));
  EXPECT_FALSE(D::reuses(true, 2 * MiB, 1 * MiB + 512)) << "a large request never uses the small pool";
  EXPECT_FALSE(D::reuses(false, 20 * MiB, 512)) << "a small request never uses the large pool";
  EXPECT_FALSE(D::reuses(false, 2 * MiB - 512, 2 * MiB));
  EXPECT_TRUE(H::reuses(true, 1024, 1024));
  EXPECT_FALSE(H::reuses(true, 1536, 1024)) << "small pool: exact class only";
  EXPECT_TRUE(H::reuses(false, 8 * MiB, 7 * MiB)) << "waste 1 MiB == 8 MiB / 8";
  EXPECT_FALSE(H::reuses(false, 8 * MiB, 7 * MiB - 512)) << "waste just over 1/8";
  EXPECT_FALSE(H::reuses(false, 2 * MiB, 1 * MiB)) << "a small request never uses the large pool";
}

// ---- tag_totals -----------------------------------------------------------------------------

TEST(TagTotals, LargestFirstTiesByNameUntaggedLastEqualTextMerged) {
  AllocatorSnapshot s;
  // "b" pushed twice: two strings with the same text are one holder.
  const Tag b1 = tag("b"), b2 = tag("b"), a = tag("a"), c = tag("c"), big = tag("big");
  ASSERT_NE(b1.get(), b2.get());
  s.segments.push_back(segment(0x1000, true,
                               {block(0, 100, BlockState::allocated, 90, b1),
                                block(0, 200, BlockState::allocated, 150, b2),
                                block(0, 300, BlockState::allocated, 299, nullptr),
                                block(0, 300, BlockState::allocated, 280, a),
                                block(0, 50, BlockState::allocated, 1, c),
                                block(0, 999, BlockState::inactive_split, 0, big)}));
  s.segments.push_back(segment(0x100000, false, {block(0, 1000, BlockState::allocated, 1000, big)}));
  const std::vector<TagTotal> t = tag_totals(s);
  ASSERT_EQ(t.size(), 5u) << "the free block's tag is no holder";
  EXPECT_EQ(*t[0].tag, "big");
  EXPECT_EQ(t[0].allocated_bytes, 1000u);
  EXPECT_EQ(t[0].blocks, 1u);
  // 300 bytes each: "a", "b" (100 + 200), then untagged.
  EXPECT_EQ(*t[1].tag, "a");
  EXPECT_EQ(*t[2].tag, "b");
  EXPECT_EQ(t[2].allocated_bytes, 300u);
  EXPECT_EQ(t[2].requested_bytes, 240u);
  EXPECT_EQ(t[2].blocks, 2u);
  EXPECT_EQ(t[3].tag, nullptr);
  EXPECT_EQ(t[3].allocated_bytes, 300u);
  EXPECT_EQ(t[3].requested_bytes, 299u);
  EXPECT_EQ(*t[4].tag, "c");
  EXPECT_EQ(t[4].allocated_bytes, 50u);
}

TEST(TagTotals, UntaggedIsOrderedByItsBytesLikeAnyHolder) {
  AllocatorSnapshot s;
  s.segments.push_back(segment(0x1000, true,
                               {block(0, 512, BlockState::allocated, 1, tag("x")),
                                block(0, 4096, BlockState::allocated, 1, nullptr)}));
  const std::vector<TagTotal> t = tag_totals(s);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].tag, nullptr) << "most bytes first; untagged goes last only on a tie";
  EXPECT_EQ(*t[1].tag, "x");
  EXPECT_TRUE(tag_totals(AllocatorSnapshot()).empty());
}

TEST(TagLabel, CutsWithoutSplittingUtf8) {
  EXPECT_EQ(tag_label(nullptr, 10), "(untagged)");
  EXPECT_EQ(tag_label(tag("short"), 10), "short");
  EXPECT_EQ(tag_label(tag("exactly10!"), 10), "exactly10!");
  EXPECT_EQ(tag_label(tag("abcdefghijk"), 10), "abcdefg...");
  // "é" is 2 bytes: a cut at 7 bytes would fall inside the 4th "é".
  const std::string e4 = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  EXPECT_EQ(tag_label(tag(e4.c_str()), 10), "\xC3\xA9\xC3\xA9\xC3\xA9...");
  // A 4-byte sequence at the cut.
  const std::string emoji = std::string("ab") + "\xF0\x9F\x98\x80" + "cdefgh";
  EXPECT_EQ(tag_label(tag(emoji.c_str()), 8), "ab...");
}

// ---- oom_report -----------------------------------------------------------------------------

TEST(OomReport, SaysWhatWasAskedWhatIsHeldAndWhoHoldsIt) {
  AllocatorSnapshot s;
  s.stats.allocated_bytes = int64_t(3 * MiB + 512 * KiB);
  s.stats.reserved_bytes = int64_t(10 * MiB);
  s.reuse = &DeviceCachingAllocator::reuses;
  std::vector<SnapshotBlock> blocks;
  // Seven holders: the report shows five and says how many more.
  const char* names[] = {"h1", "h2", "h3", "h4", "h5", "h6", "h7"};
  for (int i = 0; i < 7; ++i)
    blocks.push_back(block(0, (8 - i) * 4096, BlockState::allocated, 1, tag(names[i])));
  blocks.push_back(block(0, 2 * MiB, BlockState::inactive_split));
  s.segments.push_back(segment(0x1000, false, blocks));
  s.segments.push_back(segment(0x90000000, false, {block(0, 5 * MiB, BlockState::cached_free)}));
  const std::string r = oom_report("fake:0", 1000000, 1000448, "the device refused", s);
  SCOPED_TRACE(r);
  for (const char* want : {"fake:0", "out of memory", "976.56 KiB", "1000000 bytes",
                           "rounded to 1000448", "the device refused", "Held: ",
                           "3.50 MiB allocated", "10.00 MiB reserved", "7.00 MiB cached free",
                           "largest free block 5.00 MiB", "fragmentation 0.29",
                           "h1 32.00 KiB", "h5 16.00 KiB", "and 2 more", "sm_push_tag",
                           "sm_memory_snapshot"})
    EXPECT_NE(r.find(want), std::string::npos) << "missing \"" << want << "\"";
  EXPECT_EQ(r.find("h6"), std::string::npos) << "only the 5 largest holders are named";
  // Holders come largest first.
  EXPECT_LT(r.find("h1"), r.find("h2"));
  EXPECT_LT(r.find("h4"), r.find("h5"));
}

TEST(OomReport, NoRoundingNoteNoHolders) {
  AllocatorSnapshot s;  // the counters alone (no copy could be made)
  s.stats.allocated_bytes = 0;
  s.stats.reserved_bytes = 0;
  const std::string r = oom_report("cpu:0", 4096, 4096, "injected fault", s);
  EXPECT_NE(r.find("4.00 KiB (4096 bytes)"), std::string::npos) << r;
  EXPECT_EQ(r.find("rounded"), std::string::npos) << r;
  EXPECT_EQ(r.find("Largest holders"), std::string::npos) << r;
  EXPECT_NE(r.find("0 B allocated"), std::string::npos) << r;
}

TEST(OomReport, LongTagsAreCutWithoutSplittingUtf8) {
  AllocatorSnapshot s;
  // The report cuts labels at 80 bytes ("..." included): 77 bytes of tag.
  // 100 bytes of "é": byte 77 is inside a sequence, so the cut backs off to 76.
  std::string even;
  for (int i = 0; i < 50; ++i) even += "\xC3\xA9";
  // "x" then "é": byte 77 starts a sequence, so the cut stays at 77.
  std::string odd = "x";
  for (int i = 0; i < 50; ++i) odd += "\xC3\xA9";
  s.segments.push_back(segment(0x1000, true,
                               {block(0, 8192, BlockState::allocated, 1, tag(even.c_str())),
                                block(0, 4096, BlockState::allocated, 1, tag(odd.c_str()))}));
  const std::string r = oom_report("cpu:0", 10, 512, "why", s);
  SCOPED_TRACE(r);
  EXPECT_EQ(r.find(even), std::string::npos) << "a 100-byte tag is cut";
  EXPECT_NE(r.find("Largest holders: " + even.substr(0, 76) + "... 8.00 KiB, " +
                   odd.substr(0, 77) + "... 4.00 KiB."),
            std::string::npos);
  // The whole report is valid UTF-8 (no lone lead or continuation byte).
  for (size_t i = 0; i < r.size();) {
    const unsigned char c = static_cast<unsigned char>(r[i]);
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    ASSERT_NE(len, 0u) << "stray byte at " << i;
    ASSERT_LE(i + len, r.size()) << "sequence cut at the end";
    for (size_t k = 1; k < len; ++k)
      ASSERT_EQ(static_cast<unsigned char>(r[i + k]) & 0xC0, 0x80) << "broken sequence at " << i;
    i += len;
  }
}

// ---- AllocationLog ---------------------------------------------------------------------------

AllocatorStats totals(int64_t allocated, int64_t reserved) {
  AllocatorStats s;
  s.allocated_bytes = allocated;
  s.reserved_bytes = reserved;
  return s;
}

TEST(AllocationLog, RingKeepsTheNewestOldestFirst) {
  AllocationLog log;
  EXPECT_FALSE(log.recording());
  log.set_capacity(3);
  EXPECT_TRUE(log.recording());
  for (int i = 1; i <= 10; ++i) {
    BlockMeta m = log.stamp(100 + i);
    log.record(HistoryAction::alloc, size_t(i) * 512, size_t(i) * 500,
               reinterpret_cast<void*>(uintptr_t(0x1000) * i), nullptr, &m, totals(i * 512, 4096));
  }
  const HistoryCopy h = log.copy();
  EXPECT_TRUE(h.enabled);
  EXPECT_EQ(h.capacity, 3u);
  EXPECT_EQ(h.recorded, 10u) << "every event counts, dropped or not";
  ASSERT_EQ(h.events.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const int i = 8 + k;  // events 8, 9, 10
    const HistoryEvent& e = h.events[static_cast<size_t>(k)];
    EXPECT_EQ(e.action, HistoryAction::alloc);
    EXPECT_EQ(e.size, size_t(i) * 512);
    EXPECT_EQ(e.requested, size_t(i) * 500);
    EXPECT_EQ(e.seq, uint64_t(i)) << "the block's sequence number";
    EXPECT_EQ(e.address, uintptr_t(0x1000) * i);
    EXPECT_EQ(e.allocated_bytes, i * 512) << "the totals after the event";
    EXPECT_EQ(e.reserved_bytes, 4096);
    if (k) EXPECT_GE(e.time_us, h.events[static_cast<size_t>(k) - 1].time_us);
  }
  EXPECT_STREQ(history_action_name(HistoryAction::segment_unmap), "segment_unmap");
  EXPECT_STREQ(history_action_name(HistoryAction::oom), "oom");
}

TEST(AllocationLog, PartlyFilledRingAndANewRingStartsFresh) {
  AllocationLog log;
  log.set_capacity(5);
  for (int i = 0; i < 2; ++i)
    log.record(HistoryAction::segment_map, 2 * MiB, 0, nullptr, nullptr, nullptr, totals(0, i));
  HistoryCopy h = log.copy();
  EXPECT_EQ(h.recorded, 2u);
  ASSERT_EQ(h.events.size(), 2u);
  EXPECT_EQ(h.events[0].reserved_bytes, 0);
  EXPECT_EQ(h.events[1].reserved_bytes, 1);
  EXPECT_EQ(h.events[0].seq, 0u) << "no block, no sequence number";
  log.set_capacity(2);  // a fresh ring: the events of the old one are dropped
  h = log.copy();
  EXPECT_EQ(h.capacity, 2u);
  EXPECT_EQ(h.recorded, 0u);
  EXPECT_TRUE(h.events.empty());
}

TEST(AllocationLog, CapacityZeroStopsAndDrops) {
  AllocationLog log;
  log.set_capacity(4);
  log.record(HistoryAction::empty_cache, 0, 0, nullptr, nullptr, nullptr, totals(0, 0));
  log.set_capacity(0);
  EXPECT_FALSE(log.recording());
  log.record(HistoryAction::empty_cache, 0, 0, nullptr, nullptr, nullptr, totals(0, 0));
  const HistoryCopy h = log.copy();
  EXPECT_FALSE(h.enabled);
  EXPECT_EQ(h.capacity, 0u);
  EXPECT_EQ(h.recorded, 0u) << "nothing is counted while off";
  EXPECT_TRUE(h.events.empty());
}

TEST(AllocationLog, BadCapacityThrowsAndChangesNothing) {
  AllocationLog log;
  log.set_capacity(3);
  for (int i = 0; i < 4; ++i)
    log.record(HistoryAction::alloc, 512, 1, nullptr, nullptr, nullptr, totals(i, 0));
  for (int64_t bad : {int64_t(-1), AllocationLog::kMaxEvents + 1, INT64_MIN, INT64_MAX}) {
    try {
      log.set_capacity(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), SM_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
    const HistoryCopy h = log.copy();
    EXPECT_TRUE(h.enabled);
    EXPECT_EQ(h.capacity, 3u);
    EXPECT_EQ(h.recorded, 4u);
    ASSERT_EQ(h.events.size(), 3u);
    EXPECT_EQ(h.events[0].allocated_bytes, 1);
    EXPECT_EQ(h.events[2].allocated_bytes, 3);
  }
  EXPECT_EQ(AllocationLog::kMaxEvents, int64_t(1) << 24) << "the header documents 2^24";
}

TEST(AllocationLog, StampNumbersFromOneWithTheThreadsTag) {
  AllocationLog log;
  BlockMeta m1 = log.stamp(7);
  EXPECT_EQ(m1.seq, 1u);
  EXPECT_EQ(m1.owner, 7u);
  EXPECT_EQ(m1.tag, nullptr);
  EXPECT_GE(m1.time_us, 0);
  push_tag("outer");
  push_tag("inner");
  BlockMeta m2 = log.stamp(8);
  // An oom event carries the tag of the thread that asked.
  log.set_capacity(4);
  log.record(HistoryAction::oom, 123, 123, nullptr, nullptr, nullptr, totals(0, 0));
  log.record(HistoryAction::free, 512, 10, nullptr, nullptr, &m1, totals(0, 0));
  pop_tag();
  pop_tag();
  EXPECT_EQ(m2.seq, 2u);
  ASSERT_NE(m2.tag, nullptr);
  EXPECT_EQ(*m2.tag, "outer/inner");
  EXPECT_GE(m2.time_us, m1.time_us);
  const HistoryCopy h = log.copy();
  ASSERT_EQ(h.events.size(), 2u);
  ASSERT_NE(h.events[0].tag, nullptr);
  EXPECT_EQ(*h.events[0].tag, "outer/inner");
  EXPECT_EQ(h.events[1].tag, nullptr) << "a free carries its block's tag, not the thread's";
  EXPECT_EQ(h.events[1].seq, 1u);
}

// ---- human_bytes ------------------------------------------------------------------------------

TEST(HumanBytes, UnitsAndRounding) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1), "1 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1024), "1.00 KiB");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(5 * KiB), "5.00 KiB");
  EXPECT_EQ(human_bytes(MiB - 1), "1.00 MiB") << "never \"1024.00 KiB\"";
  EXPECT_EQ(human_bytes(MiB - 6 * 1024 / 1000), "1023.99 KiB");
  EXPECT_EQ(human_bytes(MiB), "1.00 MiB");
  EXPECT_EQ(human_bytes(MiB + MiB / 2), "1.50 MiB");
  EXPECT_EQ(human_bytes(1024 * MiB - 1), "1.00 GiB");
  EXPECT_EQ(human_bytes(2 * 1024 * MiB), "2.00 GiB");
  EXPECT_EQ(human_bytes(uint64_t(13) << 38), "3.25 TiB");
  EXPECT_EQ(human_bytes(uint64_t(1) << 50), "1.00 PiB");
  EXPECT_EQ(human_bytes(UINT64_MAX), "16.00 EiB");
  // No value prints as 1024.00 of a unit, nor below 1 of it.
  for (uint64_t unit = 1024; unit <= (uint64_t(1) << 50); unit <<= 10)
    for (uint64_t n : {unit - 1, unit, unit + 1, unit * 1023 + unit / 2, unit * 1024 - 1}) {
      const std::string t = human_bytes(n);
      EXPECT_EQ(t.find("1024.00"), std::string::npos) << n << " -> " << t;
      EXPECT_NE(t.rfind("0.", 0), 0u) << n << " -> " << t;
    }
}

}  // namespace
}  // namespace sm
