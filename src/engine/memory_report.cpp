#include "engine/memory_report.hpp"

#include <cinttypes>
#include <cstdio>

#include "backend/backend.hpp"
#include "engine/runtime.hpp"
#include "engine/storage.hpp"
#include "memory/alloc_tags.hpp"
#include "memory/byte_units.hpp"
#include "memory/memory_snapshot.hpp"
#include "memory/out_of_memory.hpp"

namespace sm {

namespace {

// A JSON writer just big enough for the snapshot: objects, arrays, strings,
// integers, ratios. Commas are placed by remembering whether the current
// container already has an element.
class Json {
 public:
  std::string take() { return std::move(out_); }

  Json& begin_object() { return open('{'); }
  Json& end_object() { return close('}'); }
  Json& begin_array() { return open('['); }
  Json& end_array() { return close(']'); }
  Json& key(const char* k) {
    comma();
    string(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  Json& value(const char* s) {
    comma();
    string(s);
    return *this;
  }
  Json& value(const Tag& t) {
    if (!t) return null();
    comma();
    string(t->c_str(), t->size());
    return *this;
  }
  Json& value(int64_t v) { return raw(std::to_string(v)); }
  Json& value(uint64_t v) { return raw(std::to_string(v)); }
  Json& value(bool v) { return raw(v ? "true" : "false"); }
  Json& ratio(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return raw(buf);
  }
  // Addresses and stream handles: strings, since a JavaScript number cannot
  // hold every 64-bit value.
  Json& address(uintptr_t a) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, a);
    return value(buf);
  }
  Json& null() { return raw("null"); }

 private:
  Json& open(char c) {
    comma();
    out_ += c;
    first_ = true;
    return *this;
  }
  Json& close(char c) {
    out_ += c;
    first_ = false;
    return *this;
  }
  Json& raw(const std::string& s) {
    comma();
    out_ += s;
    return *this;
  }
  void comma() {
    if (after_key_) {
      after_key_ = false;
    } else if (!first_) {
      out_ += ',';
    }
    first_ = false;
  }
  void string(const char* s, size_t n) {
    out_ += '"';
    for (size_t i = 0; i < n; ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += static_cast<char>(c);  // tags are checked UTF-8 (memory/alloc_tags.cpp)
      }
    }
    out_ += '"';
  }
  void string(const char* s) { string(s, std::char_traits<char>::length(s)); }

  std::string out_;
  bool first_ = true;
  bool after_key_ = false;
};

struct DeviceMemory {
  AllocatorSnapshot snap;
  sm_memory_stats_t stats;
};

DeviceMemory read_device(Device d) {
  DeviceMemory m;
  m.snap = backend_for(d).allocator().snapshot();
  m.stats = memory_stats_from(d, m.snap.stats);
  return m;
}

void write_pool(Json& j, const PoolFigures& p) {
  j.begin_object()
      .key("segments").value(static_cast<uint64_t>(p.segments))
      .key("reserved_bytes").value(p.reserved_bytes)
      .key("allocated_bytes").value(p.allocated_bytes)
      .key("free_bytes").value(p.free_bytes)
      .key("largest_free_block").value(p.largest_free_block)
      .key("ratio").ratio(p.ratio)
      .end_object();
}

void write_stream(Json& j, bool has_stream, void* stream) {
  if (has_stream) j.address(reinterpret_cast<uintptr_t>(stream));
  else j.null();
}

}  // namespace

std::string memory_snapshot_json(Device d) {
  const DeviceMemory m = read_device(d);
  const sm_memory_stats_t& s = m.stats;
  const Fragmentation f = fragmentation(m.snap);
  const bool device_memory = d.type == SM_DEVICE_CUDA;
  Json j;
  j.begin_object();
  j.key("format").value("stridemem.memory_snapshot");
  j.key("version").value(int64_t{1});
  j.key("device").value(device_name(d).c_str());
  j.key("device_type").value(int64_t{d.type});
  j.key("device_index").value(int64_t{d.index});
  j.key("time_us").value(now_us());
  j.key("start_unix_us").value(start_unix_us());

  // Each total under the name of its sm_memory_stats_t field, so the two
  // cannot drift apart.
  j.key("totals").begin_object();
#define SM_TOTAL(field) j.key(#field).value(s.field)
  SM_TOTAL(allocated_bytes), SM_TOTAL(reserved_bytes), SM_TOTAL(peak_allocated_bytes);
  SM_TOTAL(peak_reserved_bytes), SM_TOTAL(num_allocs), SM_TOTAL(num_frees);
  SM_TOTAL(cache_hits), SM_TOTAL(device_allocs), SM_TOTAL(device_frees);
  SM_TOTAL(active_views), SM_TOTAL(active_storages), SM_TOTAL(requested_bytes);
#undef SM_TOTAL
  j.end_object();

  j.key("fragmentation").begin_object();
  j.key("cached_free_bytes").value(f.free_bytes);
  j.key("largest_free_block").value(f.largest_free_block);
  j.key("ratio").ratio(f.ratio);
  j.key("pools").begin_object();
  j.key("small");
  write_pool(j, f.small);
  j.key("large");
  write_pool(j, f.large);
  j.end_object();
  j.key("unusable").begin_array();
  for (const UnusableFigure& u : f.unusable)
    j.begin_object().key("request").value(u.request).key("unusable_bytes").value(u.unusable_bytes).end_object();
  j.end_array();
  j.end_object();

  j.key("tags").begin_array();
  for (const TagTotal& t : tag_totals(m.snap))
    j.begin_object()
        .key("tag").value(t.tag)
        .key("allocated_bytes").value(t.allocated_bytes)
        .key("requested_bytes").value(t.requested_bytes)
        .key("blocks").value(static_cast<uint64_t>(t.blocks))
        .end_object();
  j.end_array();

  j.key("segments").begin_array();
  for (const SnapshotSegment& seg : m.snap.segments) {
    uint64_t allocated = 0;
    for (const SnapshotBlock& b : seg.blocks)
      if (b.state == BlockState::allocated) allocated += b.size;
    j.begin_object();
    j.key("address").address(seg.address);
    j.key("size").value(static_cast<uint64_t>(seg.size));
    j.key("pool").value(seg.small_pool ? "small" : "large");
    j.key("stream");
    write_stream(j, seg.has_stream, seg.stream);
    j.key("allocated_bytes").value(allocated);
    j.key("blocks").begin_array();
    for (const SnapshotBlock& b : seg.blocks) {
      const bool live = b.state == BlockState::allocated;
      j.begin_object();
      j.key("offset").value(static_cast<uint64_t>(b.offset));
      j.key("size").value(static_cast<uint64_t>(b.size));
      j.key("requested").value(static_cast<uint64_t>(b.requested));
      j.key("state").value(block_state_name(b.state));
      j.key("storage");
      if (live && b.meta.owner) j.value(b.meta.owner);
      else j.null();
      j.key("tag").value(b.meta.tag);
      j.key("seq");
      if (live) j.value(b.meta.seq);
      else j.null();
      j.key("time_us");
      if (live) j.value(b.meta.time_us);
      else j.null();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();

  const HistoryCopy& h = m.snap.history;
  if (h.enabled) {
    j.key("history").begin_object();
    j.key("enabled").value(true);
    j.key("capacity").value(static_cast<uint64_t>(h.capacity));
    j.key("recorded").value(h.recorded);
    j.key("dropped").value(h.recorded - static_cast<uint64_t>(h.events.size()));
    j.key("events").begin_array();
    for (const HistoryEvent& e : h.events) {
      j.begin_object();
      j.key("seq");
      if (e.seq) j.value(e.seq);
      else j.null();
      j.key("time_us").value(e.time_us);
      j.key("action").value(history_action_name(e.action));
      j.key("size").value(static_cast<uint64_t>(e.size));
      j.key("requested").value(static_cast<uint64_t>(e.requested));
      j.key("address");
      if (e.address) j.address(e.address);
      else j.null();
      j.key("tag").value(e.tag);
      j.key("stream");
      write_stream(j, device_memory, e.stream);
      j.key("allocated_bytes").value(e.allocated_bytes);
      j.key("reserved_bytes").value(e.reserved_bytes);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_object();
  std::string out = j.take();
  out += '\n';
  return out;
}

namespace {
void row(std::string& out, const char* name, int64_t bytes) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-32s %14s %20lld\n", name,
                human_bytes(static_cast<uint64_t>(bytes < 0 ? 0 : bytes)).c_str(),
                static_cast<long long>(bytes));
  out += buf;
}
void count(std::string& out, const char* name, int64_t n) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-32s %14lld\n", name, static_cast<long long>(n));
  out += buf;
}
}  // namespace

std::string memory_summary(Device d) {
  const DeviceMemory m = read_device(d);
  const sm_memory_stats_t& s = m.stats;
  const Fragmentation f = fragmentation(m.snap);
  std::string out = "stridemem memory summary: " + device_name(d) + "\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-32s %14s %20s\n", "", "size", "bytes");
  out += buf;
  row(out, "allocated (live storages)", s.allocated_bytes);
  row(out, "requested (before rounding)", s.requested_bytes);
  row(out, "reserved (allocated + cached)", s.reserved_bytes);
  row(out, "cached free", static_cast<int64_t>(f.free_bytes));
  row(out, "largest free block", static_cast<int64_t>(f.largest_free_block));
  row(out, "peak allocated", s.peak_allocated_bytes);
  row(out, "peak reserved", s.peak_reserved_bytes);
  std::snprintf(buf, sizeof buf, "  %-32s %14.2f   (0: one free block, near 1: scattered)\n",
                "fragmentation", f.ratio);
  out += buf;
  count(out, "segments", static_cast<int64_t>(m.snap.segments.size()));
  count(out, "allocations", s.num_allocs);
  count(out, "frees", s.num_frees);
  count(out, "cache hits", s.cache_hits);
  count(out, "system allocations", s.device_allocs);
  count(out, "system frees", s.device_frees);
  count(out, "active views", s.active_views);
  count(out, "active storages", s.active_storages);
  const std::vector<TagTotal> tags = tag_totals(m.snap);
  if (!tags.empty()) {
    out += "  largest holders (sm_push_tag):\n";
    const size_t shown = tags.size() < 8 ? tags.size() : 8;
    for (size_t i = 0; i < shown; ++i) {
      const std::string name = tag_label(tags[i].tag, 30);
      std::snprintf(buf, sizeof buf, "    %-30s %14s %20llu   %zu block%s\n", name.c_str(),
                    human_bytes(tags[i].allocated_bytes).c_str(),
                    static_cast<unsigned long long>(tags[i].allocated_bytes), tags[i].blocks,
                    tags[i].blocks == 1 ? "" : "s");
      out += buf;
    }
    if (tags.size() > shown) out += "    ... " + std::to_string(tags.size() - shown) + " more\n";
  }
  return out;
}

void record_memory_history(Device d, int64_t max_events) {
  backend_for(d).allocator().record_history(max_events);
}

void push_alloc_tag(const char* name) { push_tag(name); }
void pop_alloc_tag() { pop_tag(); }
void set_oom_observer_fn(sm_oom_observer observer, void* user_data) {
  set_oom_observer(observer, user_data);
}

}  // namespace sm
