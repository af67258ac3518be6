// Allocator snapshots against a model kept by the test. Random sequences of
// allocate / free / record_stream + free (blocks held back by events) /
// finish a stream / empty_cache / tag push and pop drive the device caching
// allocator (on the fake device, several streams) and the caching host
// allocator (real malloc; its two-step free, hold then release_held, as the
// pinned allocator uses it for blocks that copies in flight read); after every step the snapshot must describe
// exactly what the model says the allocator holds: segments that tile
// exactly and add up to reserved_bytes (and to what the "device" has handed
// out), allocated blocks that are exactly the live allocations (address,
// size, requested size, owner, tag, sequence number), pending_free blocks
// that are exactly those waiting for events, the free states placed by the
// documented rule, and counters that agree with the blocks.
//
// Then the property that makes fragmentation()'s `unusable` figures worth
// reading: a request of a probe size is served from the cache (cache_hits
// grows, no new segment) exactly when some free block is usable by the
// allocator's own reuse rule, i.e. when unusable_bytes < cached free bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fake_device.hpp"
#include "memory/alloc_tags.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/device_caching_allocator.hpp"
#include "memory/memory_snapshot.hpp"

namespace sm {
namespace {

struct Rng {
  uint64_t x;
  explicit Rng(uint64_t seed) : x(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
  uint64_t below(uint64_t n) { return next() % n; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
};

// The calling thread's tag stack, mirrored: pushes go to the library's
// stack (sm::push_tag) and to `names`; the destructor pops what is left so
// that no tag leaks into the next test.
struct TagModel {
  std::vector<std::string> names;
  ~TagModel() {
    while (tag_depth() > 0) pop_tag();
  }
  void push(const std::string& n) {
    push_tag(n.c_str());
    names.push_back(n);
  }
  void pop() {
    pop_tag();
    names.pop_back();
  }
  // "" for untagged (a pushed name is never empty).
  std::string path() const {
    std::string p;
    for (const std::string& n : names) p += (p.empty() ? "" : "/") + n;
    return p;
  }
  void random_step(Rng& r) {
    static const char* const kNames[] = {"encoder", "attn", "kv", "w\xC3\xA9ights",
                                         "\xE2\x82\xAC", "x"};
    if (!names.empty() && r.chance(45)) pop();
    else if (names.size() < 4) push(kNames[r.below(6)]);
  }
};

std::string tag_text(const Tag& t) { return t ? *t : std::string(); }

// What the test knows about one live allocation.
struct Held {
  Allocation a;
  uint64_t owner = 0;
  std::string tag;
  uint64_t seq = 0;
  void* stream = nullptr;
  std::vector<void*> uses;  // streams given to record_stream
};

// A freed block that waits for events: one per stream of `uses`, each done
// or not.
struct Pending {
  size_t size = 0;
  void* stream = nullptr;
  std::vector<std::pair<void*, bool>> events;
  bool all_done() const {
    for (const auto& e : events)
      if (!e.second) return false;
    return true;
  }
};

// ---- device -------------------------------------------------------------------------------

struct DeviceModel {
  std::map<uintptr_t, Held> live;
  std::map<uintptr_t, Pending> pending;
  uint64_t allocs = 0, frees = 0;
};

// Checks one snapshot of the device allocator against the model; returns
// the number of problems (each reported with `where`).
void check_device(DeviceCachingAllocator& alloc, FakeDevice& dev, const DeviceModel& m,
                  const std::string& where) {
  SCOPED_TRACE(where);
  const AllocatorSnapshot s = alloc.snapshot();
  const AllocatorStats& st = s.stats;
  uint64_t reserved = 0, allocated = 0, requested = 0, free_blocks = 0, free_bytes = 0;
  size_t n_alloc = 0, n_pending = 0;
  uintptr_t prev_end = 0;
  std::vector<std::pair<uint64_t, int64_t>> seq_time;
  for (const SnapshotSegment& seg : s.segments) {
    ASSERT_GE(seg.address, prev_end) << "segments overlap or are not sorted by address";
    prev_end = seg.address + seg.size;
    ASSERT_FALSE(seg.blocks.empty());
    EXPECT_TRUE(seg.has_stream) << "device segments belong to a stream's pool";
    reserved += seg.size;
    size_t offset = 0;
    bool any_allocated = false;
    for (const SnapshotBlock& b : seg.blocks) any_allocated |= b.state == BlockState::allocated;
    const SnapshotBlock* prev = nullptr;
    for (const SnapshotBlock& b : seg.blocks) {
      EXPECT_EQ(b.offset, offset) << "blocks do not tile segment " << std::hex << seg.address;
      EXPECT_GT(b.size, 0u);
      offset += b.size;
      const uintptr_t addr = seg.address + b.offset;
      if (b.state == BlockState::allocated) {
        ++n_alloc;
        allocated += b.size;
        requested += b.requested;
        auto it = m.live.find(addr);
        if (it == m.live.end()) {
          ADD_FAILURE() << "allocated block at " << std::hex << addr << " is no live allocation";
          continue;
        }
        const Held& h = it->second;
        EXPECT_EQ(b.size, h.a.size) << std::hex << addr;
        EXPECT_EQ(b.requested, h.a.requested) << std::hex << addr;
        EXPECT_EQ(b.meta.owner, h.owner) << std::hex << addr;
        EXPECT_EQ(tag_text(b.meta.tag), h.tag) << std::hex << addr;
        EXPECT_EQ(b.meta.seq, h.seq) << std::hex << addr;
        EXPECT_EQ(seg.stream, h.stream) << "a block lives in its stream's segment";
        EXPECT_EQ(seg.small_pool,
                  DeviceCachingAllocator::round_size(h.a.requested) <= SM_SMALL_BLOCK_MAX);
        seq_time.emplace_back(b.meta.seq, b.meta.time_us);
      } else {
        free_bytes += b.size;
        EXPECT_EQ(b.requested, 0u);
        EXPECT_EQ(b.meta.seq, 0u);
        EXPECT_EQ(b.meta.owner, 0u);
        EXPECT_EQ(b.meta.tag, nullptr) << "a free block keeps no tag";
        if (b.state == BlockState::pending_free) {
          ++n_pending;
          auto it = m.pending.find(addr);
          if (it == m.pending.end()) {
            ADD_FAILURE() << "pending_free block at " << std::hex << addr
                          << " is not waiting for any event";
            continue;
          }
          EXPECT_EQ(b.size, it->second.size) << "a pending block is never merged";
          EXPECT_EQ(seg.stream, it->second.stream);
        } else {
          ++free_blocks;
          EXPECT_EQ(m.pending.count(addr), 0u) << "block at " << std::hex << addr
                                               << " still waits for events but shows as free";
          if (b.state == BlockState::cached_free)
            EXPECT_FALSE(any_allocated) << "cached_free in a segment with an allocated block";
          else if (b.state == BlockState::inactive_split)
            EXPECT_TRUE(any_allocated) << "inactive_split in a segment with no allocated block";
          // Free neighbours are merged when a block is freed.
          if (prev && prev->state != BlockState::allocated &&
              prev->state != BlockState::pending_free)
            ADD_FAILURE() << "two free neighbours at " << std::hex << addr;
        }
      }
      prev = &b;
    }
    EXPECT_EQ(offset, seg.size) << "block sizes do not add up to the segment's";
  }
  EXPECT_EQ(n_alloc, m.live.size()) << "allocated blocks vs live allocations";
  EXPECT_EQ(n_pending, m.pending.size()) << "pending_free blocks vs blocks waiting for events";
  EXPECT_EQ(static_cast<uint64_t>(st.reserved_bytes), reserved);
  EXPECT_EQ(dev.used(), reserved) << "the device holds what the segments say";
  EXPECT_EQ(static_cast<uint64_t>(st.allocated_bytes), allocated);
  EXPECT_EQ(static_cast<uint64_t>(st.requested_bytes), requested);
  EXPECT_EQ(static_cast<uint64_t>(st.num_allocs), m.allocs);
  EXPECT_EQ(static_cast<uint64_t>(st.num_frees), m.frees);
  EXPECT_EQ(static_cast<size_t>(st.device_allocs - st.device_frees), s.segments.size());
  EXPECT_EQ(dev.live_segments(), s.segments.size());
  EXPECT_GE(st.peak_allocated_bytes, st.allocated_bytes);
  EXPECT_GE(st.peak_reserved_bytes, st.reserved_bytes);
  const DeviceCachingAllocator::CacheInfo ci = alloc.cache_info();
  EXPECT_EQ(ci.segments, s.segments.size());
  EXPECT_EQ(ci.pending_blocks, m.pending.size());
  EXPECT_EQ(ci.free_blocks, free_blocks);
  EXPECT_EQ(ci.free_bytes + [&] {
    uint64_t p = 0;
    for (const auto& kv : m.pending) p += kv.second.size;
    return p;
  }(), free_bytes);
  // Sequence numbers: the n-th allocation served is n; times follow them.
  std::sort(seq_time.begin(), seq_time.end());
  for (size_t i = 1; i < seq_time.size(); ++i) {
    EXPECT_LT(seq_time[i - 1].first, seq_time[i].first) << "two blocks share a sequence number";
    EXPECT_LE(seq_time[i - 1].second, seq_time[i].second) << "a later allocation has an earlier time";
  }
  // The figures computed from the snapshot agree with the counters.
  const Fragmentation f = fragmentation(s);
  EXPECT_EQ(f.free_bytes, reserved - allocated);
  EXPECT_EQ(f.small.reserved_bytes + f.large.reserved_bytes, reserved);
  EXPECT_EQ(f.small.allocated_bytes + f.large.allocated_bytes, allocated);
  EXPECT_EQ(f.small.segments + f.large.segments, s.segments.size());
}

void* const kStreams[] = {nullptr, kStreamA, kStreamB};

size_t random_device_size(Rng& r) {
  switch (r.below(6)) {
    case 0: return 1 + r.below(512);                   // one unit
    case 1: return 512 * (1 + r.below(16));            // exact units
    case 2: return 1 + r.below(64 << 10);              // small
    case 3: return (1 << 20) - r.below(4096);          // at the small-pool limit
    case 4: return (1 << 20) + 1 + r.below(9 << 20);   // large, medium segments
    default: return 1 + r.below(24 << 20);             // anything up to 24 MiB
  }
}

void run_device_sequence(uint64_t seed, int steps) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  DeviceModel m;
  TagModel tags;
  Rng r(seed);
  uint64_t next_owner = 1;
  for (int step = 0; step < steps; ++step) {
    const uint64_t op = r.below(100);
    std::string what;
    if (op < 40 || m.live.empty()) {
      void* stream = kStreams[r.below(3)];
      StreamScope scope(stream);
      const size_t n = random_device_size(r);
      // An allocation first collects the blocks whose events are all done.
      for (auto it = m.pending.begin(); it != m.pending.end();)
        it = it->second.all_done() ? m.pending.erase(it) : std::next(it);
      Held h;
      h.owner = next_owner++;
      h.a = alloc.allocate(n, h.owner);
      ASSERT_NE(h.a.ptr, nullptr);
      ASSERT_GE(h.a.size, n);
      h.tag = tags.path();
      h.seq = ++m.allocs;
      h.stream = stream;
      const uintptr_t p = reinterpret_cast<uintptr_t>(h.a.ptr);
      ASSERT_EQ(m.live.count(p), 0u) << "handed out twice";
      ASSERT_EQ(m.pending.count(p), 0u) << "a block waiting for events was handed out";
      m.live[p] = h;
      what = "allocate " + std::to_string(n);
    } else if (op < 75) {
      auto it = std::next(m.live.begin(), static_cast<long>(r.below(m.live.size())));
      Held h = it->second;
      // Sometimes other streams used it: the free then waits for their events.
      if (r.chance(35)) {
        const int n_uses = 1 + static_cast<int>(r.below(2));
        for (int k = 0; k < n_uses; ++k) {
          void* s = kStreams[r.below(3)];
          alloc.record_stream(h.a, s);
          if (s != h.stream && std::find(h.uses.begin(), h.uses.end(), s) == h.uses.end())
            h.uses.push_back(s);
        }
      }
      alloc.deallocate(h.a);
      m.live.erase(it);
      ++m.frees;
      if (!h.uses.empty()) {
        Pending pd;
        pd.size = h.a.size;
        pd.stream = h.stream;
        for (void* s : h.uses) pd.events.emplace_back(s, false);
        m.pending[reinterpret_cast<uintptr_t>(h.a.ptr)] = pd;
      }
      what = "free" + std::string(h.uses.empty() ? "" : " after record_stream");
    } else if (op < 85) {
      void* s = kStreams[r.below(3)];
      dev.finish_stream(s);
      for (auto& kv : m.pending)
        for (auto& e : kv.second.events)
          if (e.first == s) e.second = true;
      what = "finish a stream";
    } else if (op < 90) {
      alloc.empty_cache();  // waits for every event, then returns free segments
      m.pending.clear();
      what = "empty_cache";
    } else {
      tags.random_step(r);
      what = "tag -> \"" + tags.path() + "\"";
    }
    check_device(alloc, dev, m, "seed " + std::to_string(seed) + " step " +
                                    std::to_string(step) + ": " + what);
    if (::testing::Test::HasFailure()) return;  // the first broken step says most
  }
  for (auto& kv : m.live) alloc.deallocate(kv.second.a);
  alloc.empty_cache();
  EXPECT_EQ(dev.live_segments(), 0u);
  EXPECT_EQ(dev.bad_frees, 0);
}

TEST(AllocatorSnapshot, DeviceSnapshotMatchesTheModelAfterEveryStep) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) run_device_sequence(seed, 2500);
}

// ---- host ---------------------------------------------------------------------------------

// Raw host memory seen by the allocator under test: what it holds from the
// "system" right now.
std::map<uintptr_t, size_t> g_raw;
void* raw_alloc(size_t n) {
  void* p = std::malloc(n);
  if (p) g_raw[reinterpret_cast<uintptr_t>(p)] = n;
  return p;
}
void raw_free(void* p) {
  g_raw.erase(reinterpret_cast<uintptr_t>(p));
  std::free(p);
}
uint64_t raw_bytes() {
  uint64_t n = 0;
  for (const auto& kv : g_raw) n += kv.second;
  return n;
}

struct HostModel {
  std::map<uintptr_t, Held> live;
  std::map<uintptr_t, Allocation> held;  // freed with hold(), not yet released
  uint64_t allocs = 0, frees = 0;
};

void check_host(CachingHostAllocator& alloc, const HostModel& m, const std::string& where) {
  SCOPED_TRACE(where);
  const AllocatorSnapshot s = alloc.snapshot();
  const AllocatorStats& st = s.stats;
  uint64_t reserved = 0, allocated = 0, requested = 0;
  size_t n_alloc = 0, n_held = 0;
  uintptr_t prev_end = 0;
  for (const SnapshotSegment& seg : s.segments) {
    ASSERT_GE(seg.address, prev_end) << "segments overlap or are not sorted by address";
    prev_end = seg.address + seg.size;
    EXPECT_FALSE(seg.has_stream) << "host memory has no stream";
    ASSERT_EQ(seg.blocks.size(), 1u) << "host segments are one block each";
    const SnapshotBlock& b = seg.blocks[0];
    EXPECT_EQ(b.offset, 0u);
    EXPECT_EQ(b.size, seg.size);
    EXPECT_EQ(seg.small_pool, seg.size <= SM_SMALL_BLOCK_MAX);
    auto raw = g_raw.find(seg.address);
    if (raw == g_raw.end()) ADD_FAILURE() << "segment " << std::hex << seg.address << " was never allocated";
    else EXPECT_EQ(raw->second, seg.size);
    reserved += seg.size;
    const auto it = m.live.find(seg.address);
    if (b.state == BlockState::allocated) {
      ++n_alloc;
      allocated += b.size;
      requested += b.requested;
      if (it == m.live.end()) {
        ADD_FAILURE() << "allocated block at " << std::hex << seg.address << " is no live allocation";
        continue;
      }
      EXPECT_EQ(b.size, it->second.a.size);
      EXPECT_EQ(b.requested, it->second.a.requested);
      EXPECT_EQ(b.meta.owner, it->second.owner);
      EXPECT_EQ(b.meta.seq, it->second.seq);
      EXPECT_EQ(tag_text(b.meta.tag), it->second.tag);
    } else if (b.state == BlockState::pending_free) {
      ++n_held;
      EXPECT_EQ(m.held.count(seg.address), 1u) << "pending_free block at " << std::hex << seg.address
                                                 << " was never held back";
      EXPECT_EQ(it, m.live.end()) << "a live allocation shows as pending_free";
      EXPECT_EQ(b.requested, 0u);
      EXPECT_EQ(b.meta.seq, 0u);
      EXPECT_EQ(b.meta.tag, nullptr);
    } else {
      EXPECT_EQ(b.state, BlockState::cached_free) << "host blocks are never split";
      EXPECT_EQ(it, m.live.end()) << "a live allocation shows as free";
      EXPECT_EQ(m.held.count(seg.address), 0u) << "a held-back block shows as reusable";
      EXPECT_EQ(b.requested, 0u);
      EXPECT_EQ(b.meta.seq, 0u);
      EXPECT_EQ(b.meta.tag, nullptr);
    }
  }
  EXPECT_EQ(n_alloc, m.live.size());
  EXPECT_EQ(n_held, m.held.size()) << "held-back blocks stay reserved, out of the pools";
  EXPECT_EQ(s.segments.size(), g_raw.size()) << "every system allocation is a segment";
  EXPECT_EQ(reserved, raw_bytes());
  EXPECT_EQ(static_cast<uint64_t>(st.reserved_bytes), reserved);
  EXPECT_EQ(static_cast<uint64_t>(st.allocated_bytes), allocated);
  EXPECT_EQ(static_cast<uint64_t>(st.requested_bytes), requested);
  EXPECT_EQ(static_cast<uint64_t>(st.num_allocs), m.allocs);
  EXPECT_EQ(static_cast<uint64_t>(st.num_frees), m.frees);
  EXPECT_EQ(static_cast<size_t>(st.device_allocs - st.device_frees), s.segments.size());
  const Fragmentation f = fragmentation(s);
  EXPECT_EQ(f.free_bytes, reserved - allocated);
  EXPECT_EQ(f.small.segments + f.large.segments, s.segments.size());
}

size_t random_host_size(Rng& r) {
  switch (r.below(5)) {
    case 0: return 1 + r.below(512);
    case 1: return 512 * (1 + r.below(8));  // few classes: many cache hits
    case 2: return 1 + r.below(256 << 10);
    case 3: return (1 << 20) - r.below(2048);
    default: return (1 << 20) + 1 + r.below(3 << 20);  // large pool, 1/8 waste rule
  }
}

void run_host_sequence(uint64_t seed, int steps) {
  g_raw.clear();
  {
    CachingHostAllocator alloc(raw_alloc, raw_free, "test");
    HostModel m;
    TagModel tags;
    Rng r(seed);
    uint64_t next_owner = 1;
    for (int step = 0; step < steps; ++step) {
      const uint64_t op = r.below(100);
      std::string what;
      if ((op < 45 && m.live.size() < 40) || m.live.empty()) {
        const size_t n = random_host_size(r);
        Held h;
        h.owner = next_owner++;
        h.a = alloc.allocate(n, h.owner);
        ASSERT_NE(h.a.ptr, nullptr);
        ASSERT_GE(h.a.size, n);
        h.tag = tags.path();
        h.seq = ++m.allocs;
        const uintptr_t p = reinterpret_cast<uintptr_t>(h.a.ptr);
        ASSERT_EQ(m.live.count(p), 0u) << "handed out twice";
        ASSERT_EQ(m.held.count(p), 0u) << "a held-back block handed out";
        m.live[p] = h;
        what = "allocate " + std::to_string(n);
      } else if (op < 80) {
        auto it = std::next(m.live.begin(), static_cast<long>(r.below(m.live.size())));
        const bool hold = r.chance(25);
        if (hold) {
          alloc.hold(it->second.a);
          m.held[it->first] = it->second.a;
        } else {
          alloc.deallocate(it->second.a);
        }
        m.live.erase(it);
        ++m.frees;
        what = hold ? "free, held back" : "free";
      } else if (op < 88) {
        if (m.held.empty()) continue;
        auto it = std::next(m.held.begin(), static_cast<long>(r.below(m.held.size())));
        alloc.release_held(it->second);
        m.held.erase(it);
        what = "release a held block";
      } else if (op < 92) {
        alloc.empty_cache();
        what = "empty_cache";
      } else {
        tags.random_step(r);
        what = "tag -> \"" + tags.path() + "\"";
      }
      check_host(alloc, m, "seed " + std::to_string(seed) + " step " + std::to_string(step) +
                               ": " + what);
      if (::testing::Test::HasFailure()) break;
    }
    for (auto& kv : m.live) alloc.deallocate(kv.second.a);
    for (auto& kv : m.held) alloc.release_held(kv.second);
  }
  EXPECT_TRUE(g_raw.empty()) << "the destructor returns the cache";
}

TEST(AllocatorSnapshot, HostSnapshotMatchesTheModelAfterEveryStep) {
  for (uint64_t seed : {11, 12, 13, 14}) run_host_sequence(seed, 2000);
}

// ---- the reuse rule against what the allocators do -------------------------------------------

// Is some block of the snapshot usable for `request` (already rounded) by the
// allocator's rule? Pending blocks serve nobody until their events are done.
bool usable_by_rule(const AllocatorSnapshot& s, size_t request) {
  for (const SnapshotSegment& seg : s.segments)
    for (const SnapshotBlock& b : seg.blocks)
      if (b.state != BlockState::allocated && b.state != BlockState::pending_free &&
          s.reuse(seg.small_pool, b.size, request))
        return true;
  return false;
}

const UnusableFigure* probe_figure(const Fragmentation& f, uint64_t request) {
  for (const UnusableFigure& u : f.unusable)
    if (u.request == request) return &u;
  return nullptr;
}

// One stream throughout (the figures ignore streams, the allocator does
// not). Events are never completed here, so blocks freed after
// record_stream stay pending: the figures must count them unusable, and the
// allocator must not hand them out.
TEST(AllocatorSnapshot, DeviceCacheHitExactlyWhenTheReuseRuleSaysSo) {
  FakeDevice dev;
  DeviceCachingAllocator alloc(&dev);
  Rng r(77);
  std::vector<Allocation> held;
  int hits = 0, misses = 0;
  for (int step = 0; step < 1500; ++step) {
    // Shape the cache: random allocations and frees.
    if (held.empty() || r.chance(55)) {
      held.push_back(alloc.allocate(random_device_size(r)));
    } else {
      const size_t k = r.below(held.size());
      if (r.chance(20)) alloc.record_stream(held[k], kStreamB);
      alloc.deallocate(held[k]);
      held[k] = held.back();
      held.pop_back();
    }
    if (r.chance(3)) alloc.empty_cache();  // completes the events: pending blocks come back
    // Probe: a documented probe size, or any size.
    const bool documented = r.chance(50);
    const size_t request = documented ? kProbeSizes[r.below(kProbeSizes.size())]
                                      : random_device_size(r);
    const AllocatorSnapshot s = alloc.snapshot();
    const bool usable = usable_by_rule(s, DeviceCachingAllocator::round_size(request));
    const Fragmentation f = fragmentation(s);
    if (documented) {
      const UnusableFigure* u = probe_figure(f, request);
      ASSERT_NE(u, nullptr);
      EXPECT_EQ(usable, u->unusable_bytes < f.free_bytes)
          << "step " << step << ": request " << request << ", unusable " << u->unusable_bytes
          << " of " << f.free_bytes << " free";
    }
    const AllocatorStats before = alloc.stats();
    Allocation a = alloc.allocate(request);
    const AllocatorStats after = alloc.stats();
    const bool hit = after.cache_hits == before.cache_hits + 1;
    EXPECT_EQ(hit, usable) << "step " << step << ": request " << request;
    EXPECT_EQ(after.device_allocs, before.device_allocs + (hit ? 0 : 1)) << "step " << step;
    hits += hit;
    misses += !hit;
    if (r.chance(50)) held.push_back(a);
    else alloc.deallocate(a);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(hits, 100) << "the sequence must exercise both outcomes";
  EXPECT_GT(misses, 100);
  for (const Allocation& a : held) alloc.deallocate(a);
  alloc.empty_cache();
  EXPECT_EQ(dev.live_segments(), 0u);
}

TEST(AllocatorSnapshot, HostCacheHitExactlyWhenTheReuseRuleSaysSo) {
  g_raw.clear();
  CachingHostAllocator alloc(raw_alloc, raw_free, "test");
  Rng r(78);
  std::vector<Allocation> held, held_back;
  int hits = 0, misses = 0;
  for (int step = 0; step < 1500; ++step) {
    if (held.empty() || (r.chance(50) && held.size() < 40)) {
      held.push_back(alloc.allocate(random_host_size(r)));
    } else {
      const size_t k = r.below(held.size());
      if (r.chance(20)) {
        alloc.hold(held[k]);  // out of reuse until released: the figures must say so
        held_back.push_back(held[k]);
      } else {
        alloc.deallocate(held[k]);
      }
      held[k] = held.back();
      held.pop_back();
    }
    if (r.chance(2)) {
      // As the pinned allocator does: what is held back is released first.
      for (const Allocation& a : held_back) alloc.release_held(a);
      held_back.clear();
      alloc.empty_cache();
    }
    // Real memory here: the documented probes up to 16 MiB only.
    size_t request;
    bool documented = r.chance(50);
    if (documented) {
      request = kProbeSizes[r.below(kProbeSizes.size())];
      if (request > (16u << 20)) documented = false, request = random_host_size(r);
    } else {
      request = random_host_size(r);
    }
    const AllocatorSnapshot s = alloc.snapshot();
    const bool usable = usable_by_rule(s, CachingHostAllocator::round_size(request));
    const Fragmentation f = fragmentation(s);
    if (documented) {
      const UnusableFigure* u = probe_figure(f, request);
      ASSERT_NE(u, nullptr);
      EXPECT_EQ(usable, u->unusable_bytes < f.free_bytes)
          << "step " << step << ": request " << request;
    }
    const AllocatorStats before = alloc.stats();
    Allocation a = alloc.allocate(request);
    const AllocatorStats after = alloc.stats();
    const bool hit = after.cache_hits == before.cache_hits + 1;
    EXPECT_EQ(hit, usable) << "step " << step << ": request " << request;
    EXPECT_EQ(after.device_allocs, before.device_allocs + (hit ? 0 : 1)) << "step " << step;
    hits += hit;
    misses += !hit;
    if (r.chance(40) && held.size() < 40) held.push_back(a);
    else alloc.deallocate(a);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(hits, 100);
  EXPECT_GT(misses, 100);
  for (const Allocation& a : held) alloc.deallocate(a);
  for (const Allocation& a : held_back) alloc.release_held(a);
}

}  // namespace
}  // namespace sm
