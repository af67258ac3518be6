// Memory you can see (issue 14) through the C API: sm_memory_snapshot's
// "needed" convention and JSON (parsed by a test-only reader and checked
// against sm_memory_stats and against figures recomputed here from the
// blocks, by the rules of docs/MEMORY_SNAPSHOT.md), tags and storage ids on
// blocks, the history ring, the out-of-memory report in sm_last_error and
// the observer (sm_set_oom_observer).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api_test_util.hpp"
#include "json_reader.hpp"

using namespace smt;

namespace {

// ---- helpers --------------------------------------------------------------------------------

// The snapshot text, by the loop the header shows.
std::string snapshot_text(sm_device dev = cpu()) {
  std::vector<char> buf;
  size_t need = 0;
  do {
    buf.resize(need);
    const sm_status st = sm_memory_snapshot(dev, buf.empty() ? nullptr : buf.data(), buf.size(), &need);
    EXPECT_EQ(st, SM_OK) << sm_last_error();
    if (st != SM_OK) return std::string();
  } while (need > buf.size());
  EXPECT_EQ(buf[need - 1], '\0');
  return std::string(buf.data(), need - 1);
}

json::Value snapshot(sm_device dev = cpu()) {
  const std::string text = snapshot_text(dev);
  try {
    return json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << text.substr(0, 2000);
    return json::Value();
  }
}

// The documented units: below 1 KiB the exact count, above it two decimals
// in the largest binary unit that keeps the number >= 1, never "1024.00".
std::string human(uint64_t n) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  char buf[48];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    return buf;
  }
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
  char probe[48];
  std::snprintf(probe, sizeof probe, "%.2f", v);
  if (std::string(probe) == "1024.00" && u < 6) v /= 1024.0, ++u;
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

uint64_t address_of(const json::Value& v) {
  const std::string& s = v.str();
  EXPECT_EQ(s.rfind("0x", 0), 0u) << "addresses are \"0x...\" strings: " << s;
  EXPECT_EQ(s.find_first_not_of("0123456789abcdef", 2), std::string::npos) << s;
  return std::stoull(s.substr(2), nullptr, 16);
}

// Reuse rules (docs/MEMORY_SNAPSHOT.md, "unusable"): cpu and cuda (the block
// allocator): a free block of the request's pool at least as large;
// cuda_host (whole blocks): the exact size class in the small pool, a block
// wasting at most 1/8 in the large pool.
bool usable(bool whole_blocks, bool small_pool, uint64_t block, uint64_t request) {
  if ((request <= SM_SMALL_BLOCK_MAX) != small_pool || block < request) return false;
  if (!whole_blocks) return true;
  return small_pool ? block == request : block - request <= block / 8;
}

struct Recount {
  uint64_t reserved = 0, allocated = 0, requested = 0, free_bytes = 0, largest = 0;
};

// Checks every documented relation of a snapshot against the statistics read
// right after it (the test is single-threaded: they are equal) and against
// figures recomputed here from the blocks.
void check_snapshot(const json::Value& j, sm_device dev, const sm_memory_stats_t& s) {
  const bool host = dev.type != SM_DEVICE_CUDA;                // no streams
  const bool whole_blocks = dev.type == SM_DEVICE_CUDA_HOST;  // never split (issue 14: not the CPU)
  EXPECT_EQ(j["format"].str(), "stridemem.memory_snapshot");
  EXPECT_EQ(j["version"].i64(), 1);
  const std::string name = (dev.type == SM_DEVICE_CPU ? "cpu:" : dev.type == SM_DEVICE_CUDA ? "cuda:" : "cuda_host:") +
                           std::to_string(dev.index);
  EXPECT_EQ(j["device"].str(), name);
  EXPECT_EQ(j["device_type"].i64(), dev.type);
  EXPECT_EQ(j["device_index"].i64(), dev.index);
  EXPECT_GE(j["time_us"].i64(), 0);
  EXPECT_GT(j["start_unix_us"].i64(), int64_t(1577836800) * 1000000) << "after 2020";

  const json::Value& t = j["totals"];
  EXPECT_EQ(t["allocated_bytes"].i64(), s.allocated_bytes);
  EXPECT_EQ(t["reserved_bytes"].i64(), s.reserved_bytes);
  EXPECT_EQ(t["peak_allocated_bytes"].i64(), s.peak_allocated_bytes);
  EXPECT_EQ(t["peak_reserved_bytes"].i64(), s.peak_reserved_bytes);
  EXPECT_EQ(t["num_allocs"].i64(), s.num_allocs);
  EXPECT_EQ(t["num_frees"].i64(), s.num_frees);
  EXPECT_EQ(t["cache_hits"].i64(), s.cache_hits);
  EXPECT_EQ(t["device_allocs"].i64(), s.device_allocs);
  EXPECT_EQ(t["device_frees"].i64(), s.device_frees);
  EXPECT_EQ(t["active_views"].i64(), s.active_views);
  EXPECT_EQ(t["active_storages"].i64(), s.active_storages);
  EXPECT_EQ(t["requested_bytes"].i64(), s.requested_bytes);

  Recount all, pool[2];  // pool[1]: small
  std::map<std::string, std::vector<uint64_t>> by_tag;  // "\x01": untagged -> {bytes, requested, blocks}
  std::vector<std::pair<bool, std::pair<bool, uint64_t>>> free_blocks;  // (pending, (small, size))
  uint64_t prev_end = 0;
  size_t nseg[2] = {0, 0};
  for (const json::Value& seg : j["segments"].items) {
    const uint64_t a = address_of(seg["address"]);
    const uint64_t size = seg["size"].u64();
    EXPECT_GE(a, prev_end) << "segments sorted by address, never overlapping";
    prev_end = a + size;
    const std::string& p = seg["pool"].str();
    EXPECT_TRUE(p == "small" || p == "large") << p;
    const bool small = p == "small";
    if (host)
      EXPECT_TRUE(seg["stream"].is_null()) << "host memory has no stream";
    else
      address_of(seg["stream"]);
    if (whole_blocks) {
      EXPECT_EQ(seg["blocks"].size(), 1u) << "pinned host segments are one block";
      EXPECT_EQ(small, size <= SM_SMALL_BLOCK_MAX);
    } else if (small) {
      EXPECT_EQ(size, uint64_t(2) << 20) << "small segments are 2 MiB";
    } else {
      EXPECT_GT(size, uint64_t(SM_SMALL_BLOCK_MAX));
      EXPECT_EQ(size % (uint64_t(2) << 20), 0u) << "large segments are multiples of 2 MiB";
    }
    ++nseg[small];
    all.reserved += size;
    pool[small].reserved += size;
    uint64_t offset = 0, seg_allocated = 0;
    bool any_allocated = false;
    for (const json::Value& b : seg["blocks"].items) any_allocated |= b["state"].str() == "allocated";
    for (const json::Value& b : seg["blocks"].items) {
      EXPECT_EQ(b["offset"].u64(), offset) << "blocks tile the segment";
      const uint64_t bs = b["size"].u64();
      EXPECT_GT(bs, 0u);
      offset += bs;
      const std::string& state = b["state"].str();
      if (state == "allocated") {
        seg_allocated += bs;
        all.allocated += bs;
        pool[small].allocated += bs;
        all.requested += b["requested"].u64();
        EXPECT_LE(b["requested"].u64(), bs);
        EXPECT_GE(b["seq"].i64(), 1);
        EXPECT_GE(b["time_us"].i64(), 0);
        EXPECT_LE(b["time_us"].i64(), j["time_us"].i64());
        if (!b["storage"].is_null()) EXPECT_GE(b["storage"].i64(), 1);
        std::vector<uint64_t>& agg = by_tag[b["tag"].is_null() ? std::string("\x01") : b["tag"].str()];
        agg.resize(3);
        agg[0] += bs;
        agg[1] += b["requested"].u64();
        agg[2] += 1;
      } else {
        EXPECT_TRUE(state == "pending_free" || state == "inactive_split" || state == "cached_free") << state;
        if (state == "cached_free") EXPECT_FALSE(any_allocated);
        if (state == "inactive_split") EXPECT_TRUE(any_allocated);
        if (whole_blocks) EXPECT_NE(state, "inactive_split") << "pinned blocks are never split";
        if (dev.type == SM_DEVICE_CPU) EXPECT_NE(state, "pending_free") << "the CPU has no streams";
        EXPECT_EQ(b["requested"].u64(), 0u);
        for (const char* k : {"storage", "tag", "seq", "time_us"}) EXPECT_TRUE(b[k].is_null()) << k;
        all.free_bytes += bs;
        pool[small].free_bytes += bs;
        all.largest = std::max(all.largest, bs);
        pool[small].largest = std::max(pool[small].largest, bs);
        free_blocks.push_back({state == "pending_free", {small, bs}});
      }
    }
    EXPECT_EQ(offset, size) << "block sizes add up to the segment's";
    EXPECT_EQ(seg["allocated_bytes"].u64(), seg_allocated);
  }
  EXPECT_EQ(all.reserved, static_cast<uint64_t>(s.reserved_bytes)) << "reserved = sum of segments";
  EXPECT_EQ(all.allocated, static_cast<uint64_t>(s.allocated_bytes)) << "allocated = sum of allocated blocks";
  EXPECT_EQ(all.requested, static_cast<uint64_t>(s.requested_bytes));

  // fragmentation, recomputed.
  const json::Value& f = j["fragmentation"];
  auto ratio = [](const Recount& r) {
    return r.free_bytes ? 1.0 - double(r.largest) / double(r.free_bytes) : 0.0;
  };
  EXPECT_EQ(f["cached_free_bytes"].u64(), all.free_bytes);
  EXPECT_EQ(f["largest_free_block"].u64(), all.largest);
  EXPECT_NEAR(f["ratio"].num(), ratio(all), 1e-6);
  for (int small : {0, 1}) {
    const json::Value& p = f["pools"][small ? "small" : "large"];
    EXPECT_EQ(p["segments"].u64(), nseg[small]);
    EXPECT_EQ(p["reserved_bytes"].u64(), pool[small].reserved);
    EXPECT_EQ(p["allocated_bytes"].u64(), pool[small].allocated);
    EXPECT_EQ(p["free_bytes"].u64(), pool[small].free_bytes);
    EXPECT_EQ(p["largest_free_block"].u64(), pool[small].largest);
    EXPECT_NEAR(p["ratio"].num(), ratio(pool[small]), 1e-6);
  }
  const std::vector<uint64_t> probes = {512, 4096, 32768, 262144, 1 << 20,
                                        2 << 20, 16 << 20, 128 << 20, 1 << 30};
  ASSERT_EQ(f["unusable"].size(), probes.size());
  for (size_t i = 0; i < probes.size(); ++i) {
    uint64_t unusable = 0;
    for (const auto& fb : free_blocks)
      if (fb.first || !usable(whole_blocks, fb.second.first, fb.second.second, probes[i])) unusable += fb.second.second;
    EXPECT_EQ(f["unusable"][i]["request"].u64(), probes[i]);
    EXPECT_EQ(f["unusable"][i]["unusable_bytes"].u64(), unusable) << "request " << probes[i];
  }

  // tags: the holders recomputed from the blocks, most bytes first (ties:
  // by name, untagged last).
  std::vector<std::pair<std::string, std::vector<uint64_t>>> want(by_tag.begin(), by_tag.end());
  std::stable_sort(want.begin(), want.end(), [](const auto& x, const auto& y) {
    if (x.second[0] != y.second[0]) return x.second[0] > y.second[0];
    if ((x.first == "\x01") != (y.first == "\x01")) return y.first == "\x01";
    return x.first < y.first;
  });
  const json::Value& tags = j["tags"];
  ASSERT_EQ(tags.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const json::Value& g = tags[i];
    if (want[i].first == "\x01") EXPECT_TRUE(g["tag"].is_null()) << i;
    else EXPECT_EQ(g["tag"].str(), want[i].first) << i;
    EXPECT_EQ(g["allocated_bytes"].u64(), want[i].second[0]) << i;
    EXPECT_EQ(g["requested_bytes"].u64(), want[i].second[1]) << i;
    EXPECT_EQ(g["blocks"].u64(), want[i].second[2]) << i;
  }

  if (j.has("history")) {
    const json::Value& h = j["history"];
    EXPECT_TRUE(h["enabled"].b);
    EXPECT_LE(h["events"].size(), h["capacity"].u64());
    EXPECT_EQ(h["dropped"].u64(), h["recorded"].u64() - h["events"].size());
    int64_t prev_time = -1;
    for (const json::Value& e : h["events"].items) {
      const std::string& act = e["action"].str();
      EXPECT_TRUE(act == "alloc" || act == "free" || act == "segment_map" || act == "segment_unmap" ||
                  act == "empty_cache" || act == "oom") << act;
      EXPECT_EQ(e["seq"].is_null(), act != "alloc" && act != "free") << act;
      EXPECT_GE(e["time_us"].i64(), prev_time) << "events oldest first";
      prev_time = e["time_us"].i64();
      if (host) EXPECT_TRUE(e["stream"].is_null());
      EXPECT_GE(e["allocated_bytes"].i64(), 0);
      EXPECT_GE(e["reserved_bytes"].i64(), e["allocated_bytes"].i64());
    }
  }
}

json::Value checked_snapshot(sm_device dev = cpu()) {
  json::Value j = snapshot(dev);
  const sm_memory_stats_t s = stats(dev);
  if (j.kind == json::Value::Object) check_snapshot(j, dev, s);
  return j;
}

Tensor floats(int64_t n, sm_device dev = cpu()) {
  Tensor t;
  const sm_status st = sm_empty(&n, 1, SM_FLOAT32, dev, t.out());
  EXPECT_EQ(st, SM_OK) << sm_last_error();
  return t;
}

uint64_t storage_id_of(sm_tensor t) {
  Storage s;
  EXPECT_EQ(sm_tensor_storage(t, s.out()), SM_OK) << sm_last_error();
  uint64_t id = 0;
  EXPECT_EQ(sm_storage_id(s, &id), SM_OK) << sm_last_error();
  return id;
}

// The allocated block held by storage `id` (nullptr when there is none).
const json::Value* block_of(const json::Value& j, uint64_t id) {
  const json::Value* found = nullptr;
  for (const json::Value& seg : j["segments"].items)
    for (const json::Value& b : seg["blocks"].items)
      if (!b["storage"].is_null() && b["storage"].u64() == id) {
        EXPECT_EQ(found, nullptr) << "two blocks name storage " << id;
        found = &b;
      }
  return found;
}

// Leaves no tag pushed on this thread, whatever the test did.
struct PopAllTags {
  ~PopAllTags() {
    while (sm_pop_tag() == SM_OK) {
    }
  }
};
// Stops history recording on the CPU at the end of a test.
struct HistoryOff {
  ~HistoryOff() { EXPECT_EQ(sm_memory_record_history(cpu(), 0), SM_OK) << sm_last_error(); }
};

// What an out-of-memory observer saw.
struct Seen {
  int calls = 0;
  sm_oom_info info{};
  std::string report;
  std::thread::id thread;
  int phase_at_call = -1;
  int phase = 0;  // set by the test around the failing call
  std::function<void(Seen&)> inside;  // run inside the observer
};
void observer(const sm_oom_info* info, void* user) {
  Seen& s = *static_cast<Seen*>(user);
  ++s.calls;
  s.info = *info;
  s.report = info->report ? info->report : "(null)";
  s.thread = std::this_thread::get_id();
  s.phase_at_call = s.phase;
  if (s.inside) s.inside(s);
}
// Installs the observer for one test; removed at the end.
struct ObserverScope {
  explicit ObserverScope(Seen* s) { EXPECT_EQ(sm_set_oom_observer(observer, s), SM_OK); }
  ~ObserverScope() {
    EXPECT_EQ(sm_set_oom_observer(nullptr, nullptr), SM_OK);
    EXPECT_EQ(sm_debug_fail_alloc(0), SM_OK);
  }
};

// The library still works after a failure: a tensor made, written, read.
void expect_library_works() {
  Tensor t = iota({5});
  ASSERT_TRUE(t);
  SM_EXPECT_OK(sm_inplace_scalar(t, SM_OP_ADD, 1, 0));
  EXPECT_EQ(read<float>(t), (std::vector<float>{1, 2, 3, 4, 5}));
  checked_snapshot();
}

}  // namespace

// ---- the needed convention -----------------------------------------------------------------

TEST(MemorySnapshot, FollowsTheNeededConvention) {
  Tensor keep = floats(1000);
  size_t need = 0;
  SM_ASSERT_OK(sm_memory_snapshot(cpu(), nullptr, 0, &need));
  ASSERT_GT(need, 200u) << "a document, not a word";
  // A buffer one byte short, or of any smaller size: nothing but needed is
  // written. (The text only grows between calls, when the clock gains a digit.)
  for (size_t n : {size_t(1), size_t(2), size_t(64), need - 1}) {
    std::vector<char> small(n + 8, 'Z');
    size_t got = 0;
    SM_ASSERT_OK(sm_memory_snapshot(cpu(), small.data(), n, &got));
    EXPECT_GE(got, need) << n;
    EXPECT_LE(got, need + 1) << n;
    for (size_t k = 0; k < small.size(); ++k) ASSERT_EQ(small[k], 'Z') << n << " byte " << k;
  }
  // Exactly needed: written whole, NUL at needed - 1, nothing after it. The
  // time in the text may gain a digit between two calls: try again then.
  bool exact_done = false;
  for (int attempt = 0; attempt < 3 && !exact_done; ++attempt) {
    size_t n = 0;
    SM_ASSERT_OK(sm_memory_snapshot(cpu(), nullptr, 0, &n));
    std::vector<char> exact(n + 8, 'Z');
    size_t got = 0;
    SM_ASSERT_OK(sm_memory_snapshot(cpu(), exact.data(), n, &got));
    if (got != n) continue;
    exact_done = true;
    EXPECT_EQ(exact[n - 1], '\0');
    EXPECT_EQ(std::strlen(exact.data()), n - 1);
    for (size_t k = n; k < exact.size(); ++k) EXPECT_EQ(exact[k], 'Z') << "byte " << k;
    EXPECT_NO_THROW(json::parse(std::string(exact.data())));
    // The same with needed NULL.
    std::vector<char> again(n + 64, 'Z');
    const sm_status st = sm_memory_snapshot(cpu(), again.data(), again.size(), nullptr);
    EXPECT_EQ(st, SM_OK) << sm_last_error();
    EXPECT_NO_THROW(json::parse(std::string(again.data())));
  }
  EXPECT_TRUE(exact_done);
  // Too short without needed: refused, says how many bytes, writes nothing.
  char four[4] = {'Z', 'Z', 'Z', 'Z'};
  SM_EXPECT_STATUS(sm_memory_snapshot(cpu(), four, sizeof four, nullptr), SM_ERR_INVALID_ARGUMENT);
  const std::string msg = sm_last_error();
  EXPECT_NE(msg.find("sm_memory_snapshot"), std::string::npos) << msg;
  size_t n_now = 0;
  SM_ASSERT_OK(sm_memory_snapshot(cpu(), nullptr, 0, &n_now));
  EXPECT_TRUE(msg.find(std::to_string(n_now)) != std::string::npos ||
              msg.find(std::to_string(n_now - 1)) != std::string::npos)
      << "the message names the size needed (" << n_now << "): " << msg;
  for (char ch : four) EXPECT_EQ(ch, 'Z');
  // NULL with len 0 and no needed: nothing can be written or said.
  SM_EXPECT_STATUS(sm_memory_snapshot(cpu(), nullptr, 0, nullptr), SM_ERR_INVALID_ARGUMENT);
  // buf NULL with len > 0.
  size_t untouched = 12345;
  SM_EXPECT_STATUS(sm_memory_snapshot(cpu(), nullptr, 100, &untouched), SM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sm_last_error()).find("buf"), std::string::npos) << sm_last_error();
  EXPECT_EQ(untouched, 12345u);
}

TEST(MemorySnapshot, BadDeviceWritesNothing) {
  for (sm_device d : {sm_device{42, 0}, sm_device{SM_DEVICE_CPU, 1}, sm_device{SM_DEVICE_CPU, -1},
                      sm_device{SM_DEVICE_CUDA, 1000}, sm_device{SM_DEVICE_CUDA, -1}}) {
    std::vector<char> buf(4096, 'Z');
    size_t need = 777;
    SM_EXPECT_STATUS(sm_memory_snapshot(d, buf.data(), buf.size(), &need), SM_ERR_DEVICE);
    EXPECT_NE(std::string(sm_last_error()).find("sm_memory_snapshot"), std::string::npos);
    EXPECT_EQ(need, 777u) << "needed untouched";
    EXPECT_EQ(std::count(buf.begin(), buf.end(), 'Z'), 4096) << "buf untouched";
  }
}

// ---- the document ----------------------------------------------------------------------------

TEST(MemorySnapshot, AgreesWithTheStatsAndItsOwnBlocks) {
  // Live tensors of many sizes (both pools), cached blocks, views.
  std::vector<Tensor> live;
  for (int64_t n : {int64_t(1), int64_t(100), int64_t(128), int64_t(5000), int64_t(300000),
                    int64_t(1) << 18, int64_t(700000)})
    live.push_back(floats(n));
  { Tensor gone = floats(4096); }
  { Tensor gone = floats(600000); }
  { Tensor gone = floats(6 << 20); }  // 24 MiB: a segment of its own, then wholly free
  Tensor v;
  SM_ASSERT_OK(sm_slice(live[3], 0, 10, 20, 1, v.out()));
  const json::Value j = checked_snapshot();
  EXPECT_FALSE(j.has("history")) << "no history unless recorded";
  EXPECT_GE(j["fragmentation"]["cached_free_bytes"].u64(), uint64_t(24) << 20);
  // An empty cache returns every segment without a live block; the free
  // parts of segments that hold one stay (inactive_split).
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const json::Value e = checked_snapshot();
  EXPECT_LE(e["fragmentation"]["cached_free_bytes"].u64(),
            j["fragmentation"]["cached_free_bytes"].u64() - (uint64_t(24) << 20));
  for (const json::Value& seg : e["segments"].items) {
    bool any_allocated = false;
    for (const json::Value& b : seg["blocks"].items) {
      any_allocated |= b["state"].str() == "allocated";
      EXPECT_NE(b["state"].str(), "cached_free");
    }
    EXPECT_TRUE(any_allocated) << "a segment without a live block survived sm_empty_cache";
  }
}

TEST(MemorySnapshot, BlocksNameTheirStorageAndTag) {
  PopAllTags pop;
  SM_ASSERT_OK(sm_push_tag("model"));
  SM_ASSERT_OK(sm_push_tag("layer 0"));
  Tensor a = floats(250);  // 1000 bytes
  SM_ASSERT_OK(sm_pop_tag());
  SM_ASSERT_OK(sm_push_tag("head"));
  Tensor b = floats(300000);  // large pool
  SM_ASSERT_OK(sm_pop_tag());
  SM_ASSERT_OK(sm_pop_tag());
  Tensor c = floats(10);  // untagged
  Tensor view;  // a view shares its base's storage (and block)
  SM_ASSERT_OK(sm_slice(a, 0, 1, 5, 2, view.out()));

  const uint64_t ia = storage_id_of(a), ib = storage_id_of(b), ic = storage_id_of(c);
  EXPECT_EQ(storage_id_of(view), ia);
  EXPECT_NE(ia, ib);
  EXPECT_LT(ia, ib) << "ids count up";
  EXPECT_LT(ib, ic);
  const json::Value j = checked_snapshot();
  const json::Value* ba = block_of(j, ia);
  const json::Value* bb = block_of(j, ib);
  const json::Value* bc = block_of(j, ic);
  ASSERT_TRUE(ba && bb && bc);
  EXPECT_EQ((*ba)["tag"].str(), "model/layer 0");
  EXPECT_EQ((*ba)["requested"].u64(), 1000u);
  EXPECT_EQ((*ba)["size"].u64(), 1024u);
  EXPECT_EQ((*bb)["tag"].str(), "model/head");
  EXPECT_EQ((*bb)["requested"].u64(), 1200000u);
  EXPECT_TRUE((*bc)["tag"].is_null());
  EXPECT_LT((*ba)["seq"].i64(), (*bb)["seq"].i64()) << "sequence numbers in allocation order";
  EXPECT_LT((*bb)["seq"].i64(), (*bc)["seq"].i64());
  bool listed = false;
  for (const json::Value& t : j["tags"].items)
    if (!t["tag"].is_null() && t["tag"].str() == "model/head") listed = true;
  EXPECT_TRUE(listed) << "model/head is among the holders";
  // A released storage's block no longer names it; ids are never reused.
  b.reset();
  const json::Value k = checked_snapshot();
  EXPECT_EQ(block_of(k, ib), nullptr);
  Tensor d = floats(300000);
  EXPECT_GT(storage_id_of(d), ic);
}

// Tags reach the JSON exactly: quotes, backslashes, "</script>", every
// UTF-8 length. The reader above decodes escapes, so this compares text.
TEST(MemorySnapshot, NastyTagsRoundTrip) {
  PopAllTags pop;
  const std::vector<std::string> nasty = {
      "quote\"d", "back\\slash", "</script><script>alert(1)</script>", "\xC3\xA9t\xC3\xA9",
      "\xE2\x82\xAC \xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80", "a/b", "{\"json\": [1]}",
      "\\u0041", "~!@#$%^&*()_+`-={}|[]:;'<>?,."};
  std::vector<std::pair<Tensor, std::string>> held;
  for (const std::string& n : nasty) {
    SM_ASSERT_OK(sm_push_tag(n.c_str()));
    held.emplace_back(floats(16), n);
    SM_ASSERT_OK(sm_pop_tag());
  }
  // (JSON needs no escape for "</script>"; a page that embeds the document
  // in a <script> element must escape "</" itself.)
  const json::Value j = json::parse(snapshot_text());
  for (const auto& h : held) {
    const json::Value* b = block_of(j, storage_id_of(h.first));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ((*b)["tag"].str(), h.second);
  }
}

// ---- tags ------------------------------------------------------------------------------------

TEST(MemoryTags, PopOnAnEmptyStackIsInvalidArgument) {
  PopAllTags pop;
  SM_EXPECT_STATUS(sm_pop_tag(), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_pop_tag", "no tag"});
  SM_ASSERT_OK(sm_push_tag("x"));
  SM_EXPECT_OK(sm_pop_tag());
  SM_EXPECT_STATUS(sm_pop_tag(), SM_ERR_INVALID_ARGUMENT);
}

TEST(MemoryTags, RefusedTagsPushNothing) {
  PopAllTags pop;
  SM_ASSERT_OK(sm_push_tag("kept"));
  const std::string long_tag(257, 'a');
  for (const char* bad : {static_cast<const char*>(nullptr), "", "a\nb", "\x7f", "\xC3", "\xC0\xAF",
                          "\xED\xA0\x80", long_tag.c_str()}) {
    SM_EXPECT_STATUS(sm_push_tag(bad), SM_ERR_INVALID_ARGUMENT);
    expect_error_mentions({"sm_push_tag"});
  }
  // Still exactly one tag pushed: the next allocation says "kept".
  Tensor t = floats(8);
  const json::Value* b = nullptr;
  const json::Value j = snapshot();
  b = block_of(j, storage_id_of(t));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)["tag"].str(), "kept");
  SM_EXPECT_OK(sm_pop_tag());
  SM_EXPECT_STATUS(sm_pop_tag(), SM_ERR_INVALID_ARGUMENT);
}

TEST(MemoryTags, PerThreadStacks) {
  PopAllTags pop;
  SM_ASSERT_OK(sm_push_tag("main"));
  Tensor from_thread;
  std::thread th([&] {
    PopAllTags pop_there;
    EXPECT_EQ(sm_pop_tag(), SM_ERR_INVALID_ARGUMENT) << "the main thread's tag is not this thread's";
    EXPECT_EQ(sm_push_tag("worker"), SM_OK);
    int64_t n = 64;
    EXPECT_EQ(sm_empty(&n, 1, SM_FLOAT32, cpu(), from_thread.out()), SM_OK);
  });
  th.join();
  Tensor here = floats(64);
  const json::Value j = snapshot();
  const json::Value* bt = block_of(j, storage_id_of(from_thread));
  const json::Value* bh = block_of(j, storage_id_of(here));
  ASSERT_TRUE(bt && bh);
  EXPECT_EQ((*bt)["tag"].str(), "worker");
  EXPECT_EQ((*bh)["tag"].str(), "main");
}

// ---- history ---------------------------------------------------------------------------------

TEST(MemoryHistory, RingOfFiveKeepsTheNewestOldestFirst) {
  HistoryOff off;
  SM_ASSERT_OK(sm_memory_record_history(cpu(), 5));
  int64_t n = 250;
  for (int i = 0; i < 20; ++i) {
    Tensor t;
    SM_ASSERT_OK(sm_empty(&n, 1, SM_FLOAT32, cpu(), t.out()));
  }
  const json::Value j = checked_snapshot();
  ASSERT_TRUE(j.has("history"));
  const json::Value& h = j["history"];
  EXPECT_TRUE(h["enabled"].b);
  EXPECT_EQ(h["capacity"].u64(), 5u);
  EXPECT_GE(h["recorded"].u64(), 40u) << "20 allocations and 20 frees at least";
  EXPECT_EQ(h["dropped"].u64(), h["recorded"].u64() - 5);
  ASSERT_EQ(h["events"].size(), 5u);
  // The newest is the last free; alloc and free alternate, each free naming
  // the block its alloc made (same seq, address, size), seq counting up.
  const json::Value& ev = h["events"];
  EXPECT_EQ(ev[4]["action"].str(), "free");
  const sm_memory_stats_t s = stats();
  EXPECT_EQ(ev[4]["allocated_bytes"].i64(), s.allocated_bytes) << "totals right after the event";
  EXPECT_EQ(ev[4]["reserved_bytes"].i64(), s.reserved_bytes);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(ev[i]["action"].str(), i % 2 ? "alloc" : "free") << i;
    EXPECT_EQ(ev[i]["size"].u64(), 1024u);
    EXPECT_EQ(ev[i]["requested"].u64(), 1000u);
    if (i > 0) EXPECT_GE(ev[i]["seq"].u64(), ev[i - 1]["seq"].u64());
  }
  for (size_t i = 1; i < 5; i += 2) {
    EXPECT_EQ(ev[i]["seq"].u64(), ev[i + 1]["seq"].u64()) << "the free of the block just allocated";
    EXPECT_EQ(ev[i]["address"].str(), ev[i + 1]["address"].str());
    EXPECT_EQ(ev[i + 1]["allocated_bytes"].i64(), ev[i]["allocated_bytes"].i64() - 1024);
  }
}

TEST(MemoryHistory, ZeroTurnsItOffAndBadSizesChangeNothing) {
  HistoryOff off;
  SM_ASSERT_OK(sm_memory_record_history(cpu(), 3));
  { Tensor t = floats(10); }
  const json::Value before = snapshot();
  ASSERT_TRUE(before.has("history"));
  for (int64_t bad : {int64_t(-1), (int64_t(1) << 24) + 1, INT64_MIN, INT64_MAX}) {
    SM_EXPECT_STATUS(sm_memory_record_history(cpu(), bad), SM_ERR_INVALID_ARGUMENT);
    expect_error_mentions({"sm_memory_record_history", std::to_string(bad).c_str()});
    const json::Value now = snapshot();
    ASSERT_TRUE(now.has("history")) << "still recording after " << bad;
    EXPECT_EQ(now["history"]["capacity"].u64(), 3u);
    EXPECT_EQ(now["history"]["recorded"].u64(), before["history"]["recorded"].u64());
    EXPECT_EQ(now["history"]["events"].size(), before["history"]["events"].size());
  }
  SM_EXPECT_STATUS(sm_memory_record_history(sm_device{42, 0}, 4), SM_ERR_DEVICE);
  SM_ASSERT_OK(sm_memory_record_history(cpu(), 0));
  EXPECT_FALSE(snapshot().has("history")) << "0 turns recording off";
  { Tensor t = floats(10); }
  EXPECT_FALSE(snapshot().has("history"));
  // Turned on again: a fresh ring.
  SM_ASSERT_OK(sm_memory_record_history(cpu(), 4));
  const json::Value fresh = snapshot();
  ASSERT_TRUE(fresh.has("history"));
  EXPECT_EQ(fresh["history"]["recorded"].u64(), 0u);
  EXPECT_EQ(fresh["history"]["events"].size(), 0u);
}

TEST(MemoryHistory, EventsCarryTotalsTagsAndFailures) {
  HistoryOff off;
  PopAllTags pop;
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const sm_memory_stats_t s0 = stats();
  SM_ASSERT_OK(sm_memory_record_history(cpu(), 100));
  SM_ASSERT_OK(sm_push_tag("hist"));
  Tensor a = floats(1000);             // a small segment, which a keeps
  { Tensor b = floats(3 << 20); }      // 12 MiB: a segment of its own, freed whole
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  Tensor c;
  int64_t n = 3000;
  SM_EXPECT_STATUS(sm_empty(&n, 1, SM_FLOAT32, cpu(), c.out()), SM_ERR_OUT_OF_MEMORY);
  SM_ASSERT_OK(sm_pop_tag());
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const json::Value j = checked_snapshot();
  const json::Value& ev = j["history"]["events"];
  // Replay: allocated and reserved after each event follow from the events.
  int64_t allocated = s0.allocated_bytes, reserved = s0.reserved_bytes;
  std::vector<std::string> actions;
  for (const json::Value& e : ev.items) {
    const std::string& act = e["action"].str();
    actions.push_back(act);
    const int64_t size = e["size"].i64();
    if (act == "alloc") allocated += size;
    if (act == "free") allocated -= size;
    if (act == "segment_map") reserved += size;
    if (act == "segment_unmap") reserved -= size;
    EXPECT_EQ(e["allocated_bytes"].i64(), allocated) << act;
    EXPECT_EQ(e["reserved_bytes"].i64(), reserved) << act;
    if (act == "alloc" || act == "free" || act == "oom") EXPECT_EQ(e["tag"].str(), "hist") << act;
    if (act == "oom") {
      EXPECT_EQ(size, 12000) << "an oom event's size is the request";
      EXPECT_TRUE(e["address"].is_null());
    }
  }
  const std::vector<std::string> want = {"segment_map", "alloc", "segment_map", "alloc", "free",
                                         "oom", "segment_unmap", "empty_cache"};
  EXPECT_EQ(actions, want);
}

// ---- out of memory: the report and the observer -----------------------------------------------

TEST(OutOfMemory, InjectedFailureReportNamesRequestHoldersAndUnits) {
  PopAllTags pop;
  Seen seen;
  ObserverScope scope(&seen);
  SM_ASSERT_OK(sm_push_tag("big-holder"));
  Tensor big = floats(1 << 20);  // 4 MiB
  SM_ASSERT_OK(sm_pop_tag());
  SM_ASSERT_OK(sm_push_tag("small-holder"));
  Tensor small = floats(1000);
  SM_ASSERT_OK(sm_pop_tag());
  SM_ASSERT_OK(sm_push_tag("asker"));
  const sm_memory_stats_t before = stats();
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  int64_t n = 250000;  // 1,000,000 bytes
  sm_tensor out = sentinel_tensor();
  seen.phase = 1;
  const sm_status st = sm_empty(&n, 1, SM_FLOAT32, cpu(), &out);
  seen.phase = 2;
  const std::string err = sm_last_error();
  SM_ASSERT_OK(sm_pop_tag());
  EXPECT_EQ(st, SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  const sm_memory_stats_t after = stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  SCOPED_TRACE(err);
  for (const std::string& want :
       {std::string("sm_empty"), std::string("1000000 bytes"), std::string("rounded to 1000448"),
        std::string("976.56 KiB"), std::string("injected"), std::string("Held: "),
        human(static_cast<uint64_t>(after.allocated_bytes)) + " allocated",
        human(static_cast<uint64_t>(after.reserved_bytes)) + " reserved",
        std::string("big-holder 4.00 MiB"), std::string("small-holder")})
    EXPECT_NE(err.find(want), std::string::npos) << "missing \"" << want << "\"";
  EXPECT_LT(err.find("big-holder"), err.find("small-holder")) << "largest holder first";

  // The observer: once, during the call, with the report sm_last_error gives.
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.phase_at_call, 1) << "called before the failing call returned";
  EXPECT_EQ(seen.thread, std::this_thread::get_id());
  EXPECT_EQ(err, "sm_empty: " + seen.report) << "the report is sm_last_error()'s text";
  EXPECT_GE(seen.info.struct_size, sizeof(sm_oom_info));
  EXPECT_EQ(seen.info.device.type, SM_DEVICE_CPU);
  EXPECT_EQ(seen.info.device.index, 0);
  EXPECT_EQ(seen.info.requested_bytes, 1000000);
  EXPECT_EQ(seen.info.allocated_bytes, after.allocated_bytes);
  EXPECT_EQ(seen.info.reserved_bytes, after.reserved_bytes);
  EXPECT_EQ(seen.info.cached_free_bytes, after.reserved_bytes - after.allocated_bytes);
  EXPECT_LE(seen.info.largest_free_block, seen.info.cached_free_bytes);
  EXPECT_GE(seen.info.largest_free_block, 0);
  expect_library_works();
}

TEST(OutOfMemory, ObserverThatFailsToAllocateIsNotCalledAgain) {
  Seen seen;
  ObserverScope scope(&seen);
  sm_status inner = SM_OK, inner_ok = SM_ERR_INTERNAL;
  std::string inner_error;
  seen.inside = [&](Seen&) {
    // The observer may call the library: an allocation that works...
    int64_t m = 16;
    sm_tensor t = nullptr;
    inner_ok = sm_empty(&m, 1, SM_FLOAT32, cpu(), &t);
    if (inner_ok == SM_OK) sm_tensor_release(t);
    // ...and one that fails: reported to its caller, not to the observer.
    sm_debug_fail_alloc(1);
    t = nullptr;
    inner = sm_empty(&m, 1, SM_FLOAT32, cpu(), &t);
    inner_error = sm_last_error();
  };
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  int64_t n = 100;
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_empty(&n, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(seen.calls, 1) << "not re-entered by the failure inside it";
  EXPECT_EQ(inner_ok, SM_OK);
  EXPECT_EQ(inner, SM_ERR_OUT_OF_MEMORY);
  EXPECT_NE(inner_error.find("injected"), std::string::npos) << inner_error;
  EXPECT_NE(std::string(sm_last_error()).find("400 bytes"), std::string::npos)
      << "the outer call's own error is the last one: " << sm_last_error();
  // And the next failure calls it again (the guard was lifted).
  seen.inside = nullptr;
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  SM_EXPECT_STATUS(sm_empty(&n, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(seen.calls, 2);
  expect_library_works();
}

TEST(OutOfMemory, ObserverMayTakeASnapshot) {
  HistoryOff off;
  SM_ASSERT_OK(sm_memory_record_history(cpu(), 16));
  Seen seen;
  ObserverScope scope(&seen);
  json::Value inside;
  seen.inside = [&](Seen&) { inside = snapshot(); };  // would deadlock under the allocator's lock
  Tensor keep = floats(5000);
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  int64_t n = 7;
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_empty(&n, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  ASSERT_EQ(seen.calls, 1);
  ASSERT_EQ(inside.kind, json::Value::Object);
  EXPECT_EQ(inside["totals"]["allocated_bytes"].i64(), seen.info.allocated_bytes);
  EXPECT_EQ(inside["totals"]["reserved_bytes"].i64(), seen.info.reserved_bytes);
  EXPECT_EQ(inside["fragmentation"]["cached_free_bytes"].i64(), seen.info.cached_free_bytes);
  EXPECT_EQ(inside["fragmentation"]["largest_free_block"].i64(), seen.info.largest_free_block);
  // The failed request is already in the history the observer sees.
  const json::Value& ev = inside["history"]["events"];
  ASSERT_GT(ev.size(), 0u);
  EXPECT_EQ(ev[ev.size() - 1]["action"].str(), "oom");
  EXPECT_EQ(ev[ev.size() - 1]["size"].i64(), 28);
  expect_library_works();
}

TEST(OutOfMemory, RemovedObserverIsNotCalled) {
  Seen seen;
  ObserverScope scope(&seen);
  SM_ASSERT_OK(sm_set_oom_observer(nullptr, &seen));
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  int64_t n = 7;
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_empty(&n, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(seen.calls, 0);
  EXPECT_NE(std::string(sm_last_error()).find("Held:"), std::string::npos)
      << "the report is there with no observer too: " << sm_last_error();
  // Replaced: the newest observer (and its user_data) is the one called.
  Seen other;
  SM_ASSERT_OK(sm_set_oom_observer(observer, &other));
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  SM_EXPECT_STATUS(sm_empty(&n, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(seen.calls, 0);
  EXPECT_EQ(other.calls, 1);
  expect_library_works();
}

// The request over the machine's RAM + swap (refused before the system is
// asked) goes through the same report and observer.
TEST(OutOfMemory, HugeRequestGivesTheReportToo) {
  PopAllTags pop;
  Seen seen;
  ObserverScope scope(&seen);
  SM_ASSERT_OK(sm_push_tag("huge-holder"));
  Tensor keep = floats(4096);
  SM_ASSERT_OK(sm_pop_tag());
  const int64_t shape[1] = {int64_t(1) << 43};  // 2^45 bytes of float32
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_empty(shape, 1, SM_FLOAT32, cpu(), &out), SM_ERR_OUT_OF_MEMORY);
  const std::string err = sm_last_error();
  EXPECT_EQ(out, sentinel_tensor());
  const sm_memory_stats_t s = stats();
  for (const std::string& want :
       {std::string("sm_empty"), std::string("32.00 TiB"), std::string("35184372088832 bytes"),
        std::string("Held: "), human(static_cast<uint64_t>(s.allocated_bytes)) + " allocated",
        std::string("huge-holder")})
    EXPECT_NE(err.find(want), std::string::npos) << "missing \"" << want << "\" in " << err;
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.info.requested_bytes, int64_t(1) << 45);
  EXPECT_EQ(err, "sm_empty: " + seen.report);
  EXPECT_EQ(seen.info.reserved_bytes, s.reserved_bytes) << "the cache was returned before the report";
  expect_library_works();
}

TEST(OutOfMemory, ObserverRunsOnTheThreadThatAsked) {
  Seen seen;
  ObserverScope scope(&seen);
  std::thread::id worker;
  sm_status st = SM_OK;
  std::thread th([&] {
    worker = std::this_thread::get_id();
    sm_debug_fail_alloc(1);
    int64_t n = 3;
    sm_tensor out = nullptr;
    st = sm_empty(&n, 1, SM_FLOAT32, cpu(), &out);
  });
  th.join();
  EXPECT_EQ(st, SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.thread, worker);
  expect_library_works();
}

// ---- replacing an observer while it runs -------------------------------------------------------

namespace {


// A request larger than any machine: fails with SM_ERR_OUT_OF_MEMORY on any
// thread, every time, without the process-wide fault countdown.
sm_status fail_huge_request() {
  const int64_t shape[1] = {int64_t(1) << 43};
  sm_tensor out = nullptr;
  return sm_empty(shape, 1, SM_FLOAT32, cpu(), &out);
}

// Waits for pred up to a deadline; a deadlock fails the test instead of
// hanging it (the stuck thread cannot be joined, so the process ends).
template <class Pred>
void wait_or_abort(std::mutex& mu, std::condition_variable& cv, Pred pred, const char* what) {
  std::unique_lock<std::mutex> lock(mu);
  if (!cv.wait_for(lock, std::chrono::seconds(30), pred)) {
    std::fprintf(stderr, "deadlock: %s after 30 s\n", what);
    std::abort();
  }
}

struct Blocking {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, released = false;
  std::atomic<bool> returned{false};
};
void blocking_observer(const sm_oom_info*, void* user) {
  Blocking& b = *static_cast<Blocking*>(user);
  std::unique_lock<std::mutex> lock(b.mu);
  b.entered = true;
  b.cv.notify_all();
  b.cv.wait(lock, [&] { return b.released; });
  lock.unlock();
  b.returned = true;  // the observer's last touch of its user_data
}

TEST(OutOfMemory, ReplacingWaitsForTheObserverInFlight) {
  Blocking b;
  SM_ASSERT_OK(sm_set_oom_observer(blocking_observer, &b));
  sm_status failing = SM_OK;
  std::thread failer([&] { failing = fail_huge_request(); });
  wait_or_abort(b.mu, b.cv, [&] { return b.entered; }, "the observer was not called");
  std::atomic<bool> replaced{false}, observer_done_at_return{false};
  std::thread replacer([&] {
    EXPECT_EQ(sm_set_oom_observer(nullptr, nullptr), SM_OK);
    observer_done_at_return = b.returned.load();
    replaced = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(replaced.load())
      << "sm_set_oom_observer returned while the observer it replaced was still running";
  {
    std::lock_guard<std::mutex> lock(b.mu);
    b.released = true;
  }
  b.cv.notify_all();
  replacer.join();
  failer.join();
  EXPECT_TRUE(observer_done_at_return.load())
      << "the replacement returned before the replaced observer did";
  EXPECT_EQ(failing, SM_ERR_OUT_OF_MEMORY);
  // A failure after the replacement calls no observer.
  EXPECT_EQ(fail_huge_request(), SM_ERR_OUT_OF_MEMORY);
  expect_library_works();
}

// An observer that removes itself, allocates and fails again from inside
// returns; the failing call reports its own error.
TEST(OutOfMemory, ObserverThatReplacesItselfDoesNotDeadlock) {
  Seen seen;
  ObserverScope scope(&seen);
  sm_status removed = SM_ERR_INTERNAL, inner = SM_OK;
  seen.inside = [&](Seen&) {
    removed = sm_set_oom_observer(nullptr, nullptr);
    int64_t m = 16;
    sm_tensor t = nullptr;
    if (sm_empty(&m, 1, SM_FLOAT32, cpu(), &t) == SM_OK) sm_tensor_release(t);
    inner = fail_huge_request();
  };
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  sm_status outer = SM_OK;
  std::thread th([&] {
    outer = fail_huge_request();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  wait_or_abort(mu, cv, [&] { return done; }, "an observer removing itself");
  th.join();
  EXPECT_EQ(outer, SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(removed, SM_OK);
  EXPECT_EQ(inner, SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(fail_huge_request(), SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(seen.calls, 1) << "removed from inside: not called again";
  expect_library_works();
}

// Two observers in flight on two threads, each replacing the observer while
// the other still runs: neither waits for the other.
struct Pair {
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0, replaced = 0;
};
void replacing_observer(const sm_oom_info*, void* user) {
  Pair& p = *static_cast<Pair*>(user);
  {
    std::unique_lock<std::mutex> lock(p.mu);
    ++p.entered;
    p.cv.notify_all();
    p.cv.wait(lock, [&] { return p.entered == 2; });
  }
  EXPECT_EQ(sm_set_oom_observer(replacing_observer, user), SM_OK);
  std::lock_guard<std::mutex> lock(p.mu);
  ++p.replaced;
  p.cv.notify_all();
}

TEST(OutOfMemory, ObserversReplacingEachOtherDoNotDeadlock) {
  Pair p;
  SM_ASSERT_OK(sm_set_oom_observer(replacing_observer, &p));
  sm_status st[2] = {SM_OK, SM_OK};
  std::thread a([&] { st[0] = fail_huge_request(); });
  std::thread b([&] { st[1] = fail_huge_request(); });
  wait_or_abort(p.mu, p.cv, [&] { return p.replaced == 2; }, "two observers replacing each other");
  a.join();
  b.join();
  EXPECT_EQ(st[0], SM_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(st[1], SM_ERR_OUT_OF_MEMORY);
  SM_EXPECT_OK(sm_set_oom_observer(nullptr, nullptr));
}

}  // namespace

// ---- CUDA (where a GPU is usable) -----------------------------------------------------------

TEST(MemorySnapshot, CudaDeviceSnapshot) {
  int32_t ncuda = 0;
  SM_ASSERT_OK(sm_cuda_device_count(&ncuda));
  if (ncuda <= 0) GTEST_SKIP() << "no usable CUDA device";
  PopAllTags pop;
  SM_ASSERT_OK(sm_push_tag("gpu"));
  Tensor a = floats(1000, cuda(0));
  Tensor b = floats(1 << 20, cuda(0));
  SM_ASSERT_OK(sm_pop_tag());
  { Tensor c = floats(300, cuda(0)); }
  const json::Value j = checked_snapshot(cuda(0));
  const json::Value* ba = block_of(j, storage_id_of(a));
  ASSERT_NE(ba, nullptr);
  EXPECT_EQ((*ba)["tag"].str(), "gpu");
  EXPECT_EQ((*ba)["requested"].u64(), 4000u);
  SM_EXPECT_STATUS(sm_memory_snapshot(cuda(ncuda), nullptr, 0, nullptr), SM_ERR_DEVICE);
}

// A strided pinned view sent to a GPU goes through a pinned staging copy that
// the asynchronous host-to-device copy reads after the staging tensor is
// gone. That block is held back until the copy is done, but no storage holds
// it: allocated_bytes leaves it out at once (it is in reserved_bytes), the
// snapshot shows it pending_free, and once every tensor is closed the pinned
// pool is back where it started with no pinned allocation in between.
TEST(MemorySnapshot, PinnedStagingBlockIsPendingNotAllocated) {
  int32_t ncuda = 0;
  SM_ASSERT_OK(sm_cuda_device_count(&ncuda));
  if (ncuda <= 0) GTEST_SKIP() << "no usable CUDA device";
  const sm_device pinned{SM_DEVICE_CUDA_HOST, 0};
  SM_ASSERT_OK(sm_synchronize(pinned));
  SM_ASSERT_OK(sm_empty_cache(pinned));
  const sm_memory_stats_t s0 = stats(pinned);
  const int64_t shape[2] = {6, 8};  // 192 bytes: one 512-byte block
  Tensor h, t, g;
  SM_ASSERT_OK(sm_full(shape, 2, 3.0, SM_FLOAT32, pinned, h.out()));
  SM_ASSERT_OK(sm_transpose(h, 0, 1, t.out()));
  SM_ASSERT_OK(sm_to(t, cuda(0), SM_FLOAT32, g.out(), nullptr));  // stages t in pinned memory
  const sm_memory_stats_t s1 = stats(pinned);
  EXPECT_EQ(s1.active_storages - s0.active_storages, 1) << "h only: the staging copy is gone";
  EXPECT_EQ(s1.allocated_bytes - s0.allocated_bytes, SM_ALLOC_ROUND) << "h's block only";
  EXPECT_EQ(s1.num_allocs - s0.num_allocs, 2) << "h and the staging copy";
  EXPECT_EQ(s1.num_frees - s0.num_frees, 1) << "the staging copy";
  EXPECT_EQ(s1.reserved_bytes - s0.reserved_bytes, 2 * SM_ALLOC_ROUND);
  const json::Value j = checked_snapshot(pinned);
  size_t allocated = 0, pending = 0;
  for (const json::Value& seg : j["segments"].items)
    for (const json::Value& b : seg["blocks"].items) {
      allocated += b["state"].str() == "allocated";
      pending += b["state"].str() == "pending_free";
    }
  EXPECT_EQ(allocated, 1u);
  EXPECT_EQ(pending, 1u) << "held back for the copy until the next pinned allocation looks";
  SM_ASSERT_OK(sm_synchronize(cuda(0)));
  h.reset();
  t.reset();
  g.reset();
  const sm_memory_stats_t s2 = stats(pinned);
  EXPECT_EQ(s2.active_storages, s0.active_storages);
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s2.requested_bytes, s0.requested_bytes);
  checked_snapshot(pinned);
  SM_ASSERT_OK(sm_empty_cache(pinned));
  EXPECT_EQ(stats(pinned).reserved_bytes, s0.reserved_bytes) << "the held block went back too";
}

// The reader is strict, so that a malformed snapshot cannot pass the tests above.
TEST(JsonReader, AcceptsJsonAndRejectsWhatIsNot) {
  const json::Value v = json::parse(
      " {\"a\": [1, -2, 3.5e2, true, false, null], \"s\": \"q\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\xC3\xA9\"} ");
  EXPECT_EQ(v["a"][1].i64(), -2);
  EXPECT_DOUBLE_EQ(v["a"][2].num(), 350.0);
  EXPECT_TRUE(v["a"][5].is_null());
  EXPECT_EQ(v["s"].str(), "q\"\\/\n\xC3\xA9\xF0\x9F\x98\x80\xC3\xA9");
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{\"a\":1,\"a\":2}",
                          "[01]", "[1.]", "[-]", "\"a\x01\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"",
                          "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xC3\"", "[1] x", "nul", "[tru]",
                          "'a'", "{a:1}"})
    EXPECT_THROW(json::parse(bad), std::runtime_error) << bad;
}
