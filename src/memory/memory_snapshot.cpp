#include "memory/memory_snapshot.hpp"

#include <algorithm>
#include <cstdio>

#include "memory/byte_units.hpp"

namespace sm {

const char* block_state_name(BlockState s) noexcept {
  switch (s) {
    case BlockState::allocated: return "allocated";
    case BlockState::pending_free: return "pending_free";
    case BlockState::inactive_split: return "inactive_split";
    case BlockState::cached_free: return "cached_free";
  }
  return "unknown";
}

// Powers of 8 from 512 B to 1 GiB, plus the two sizes where the device
// allocator's rules change (the small-pool limit, 1 MiB, and a small segment, 2 MiB).
const std::vector<uint64_t> kProbeSizes = {512,       4096,      32768,      262144,    1u << 20,
                                           2u << 20, 16u << 20, 128u << 20, 1u << 30};

namespace {
double spread(uint64_t free_bytes, uint64_t largest) {
  return free_bytes ? 1.0 - static_cast<double>(largest) / static_cast<double>(free_bytes) : 0.0;
}
}  // namespace

void sort_by_address(std::vector<SnapshotSegment>& segments) {
  std::sort(segments.begin(), segments.end(),
            [](const SnapshotSegment& x, const SnapshotSegment& y) { return x.address < y.address; });
}

std::string tag_label(const Tag& t, size_t max_bytes) {
  if (!t) return "(untagged)";
  if (t->size() <= max_bytes) return *t;
  size_t n = max_bytes > 3 ? max_bytes - 3 : 0;
  while (n > 0 && (static_cast<unsigned char>((*t)[n]) & 0xC0) == 0x80) --n;
  return t->substr(0, n) + "...";
}

Fragmentation fragmentation(const AllocatorSnapshot& s) {
  Fragmentation f;
  for (const SnapshotSegment& seg : s.segments) {
    PoolFigures& p = seg.small_pool ? f.small : f.large;
    p.segments++;
    p.reserved_bytes += seg.size;
    for (const SnapshotBlock& b : seg.blocks) {
      if (b.state == BlockState::allocated) {
        p.allocated_bytes += b.size;
        continue;
      }
      p.free_bytes += b.size;
      p.largest_free_block = std::max<uint64_t>(p.largest_free_block, b.size);
    }
  }
  for (PoolFigures* p : {&f.small, &f.large}) p->ratio = spread(p->free_bytes, p->largest_free_block);
  f.free_bytes = f.small.free_bytes + f.large.free_bytes;
  f.largest_free_block = std::max(f.small.largest_free_block, f.large.largest_free_block);
  f.ratio = spread(f.free_bytes, f.largest_free_block);
  for (uint64_t request : kProbeSizes) {
    UnusableFigure u;
    u.request = request;
    for (const SnapshotSegment& seg : s.segments)
      for (const SnapshotBlock& b : seg.blocks) {
        // A block waiting for other streams serves nobody until their work is done.
        if (b.state == BlockState::allocated) continue;
        const bool usable = b.state != BlockState::pending_free && s.reuse &&
                            s.reuse(seg.small_pool, b.size, static_cast<size_t>(request));
        if (!usable) u.unusable_bytes += b.size;
      }
    f.unusable.push_back(u);
  }
  return f;
}

std::vector<TagTotal> tag_totals(const AllocatorSnapshot& s) {
  std::vector<TagTotal> out;
  for (const SnapshotSegment& seg : s.segments)
    for (const SnapshotBlock& b : seg.blocks) {
      if (b.state != BlockState::allocated) continue;
      // Tags are shared strings: equal pointers are the common case, equal
      // text under different pointers (pushed twice) is the same holder.
      auto it = std::find_if(out.begin(), out.end(), [&](const TagTotal& t) {
        if (t.tag == b.meta.tag) return true;
        return t.tag && b.meta.tag && *t.tag == *b.meta.tag;
      });
      if (it == out.end()) {
        out.push_back(TagTotal{b.meta.tag, 0, 0, 0});
        it = out.end() - 1;
      }
      it->allocated_bytes += b.size;
      it->requested_bytes += b.requested;
      it->blocks++;
    }
  std::sort(out.begin(), out.end(), [](const TagTotal& a, const TagTotal& b) {
    if (a.allocated_bytes != b.allocated_bytes) return a.allocated_bytes > b.allocated_bytes;
    if (!a.tag || !b.tag) return a.tag != nullptr;  // untagged last
    return *a.tag < *b.tag;
  });
  return out;
}

std::string oom_report(const std::string& device, size_t request, size_t rounded,
                       const std::string& why, const AllocatorSnapshot& s) {
  const Fragmentation f = fragmentation(s);
  std::string r = device + ": out of memory: tried to allocate " + human_bytes(request) + " (" +
                  std::to_string(request) + " bytes";
  if (rounded != request) r += ", rounded to " + std::to_string(rounded);
  r += "): " + why + ". Held: " + human_bytes(static_cast<uint64_t>(s.stats.allocated_bytes)) +
       " allocated in live storages, " +
       human_bytes(static_cast<uint64_t>(s.stats.reserved_bytes)) + " reserved, " +
       human_bytes(f.free_bytes) + " cached free (largest free block " +
       human_bytes(f.largest_free_block);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", f.ratio);
  r += std::string(", fragmentation ") + ratio + ").";
  const std::vector<TagTotal> tags = tag_totals(s);
  if (!tags.empty()) {
    r += " Largest holders:";
    const size_t shown = std::min<size_t>(tags.size(), 5);
    for (size_t i = 0; i < shown; ++i) {
      r += i ? ", " : " ";
      r += tag_label(tags[i].tag, 80) + " " +
           human_bytes(tags[i].allocated_bytes);
    }
    if (tags.size() > shown) r += ", and " + std::to_string(tags.size() - shown) + " more";
    r += ".";
  }
  r += " What to do: release tensors you no longer need, allocate less at once, tag your "
       "allocations (sm_push_tag) and look at sm_memory_snapshot to see who holds memory";
  return r;
}

}  // namespace sm
