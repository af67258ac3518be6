// Should CPU storages go through the device block allocator? (issue 14)
//
// Side by side, in one run, over the same raw host memory (sm::cpu_host_alloc,
// the function the CPU backend gives its allocator):
//   (a) CachingHostAllocator, what CPU storages used until issue 14 and
//       pinned memory still uses (per-size pools, whole blocks, no splitting);
//   (b) DeviceCachingAllocator over sm::HostMemoryOps
//       (backend/cpu/host_memory.hpp), exactly what CPU storages use since
//       issue 14: host memory as its "device" (2 MiB small segments split into
//       blocks, 20 MiB medium segments, merge on free), no streams;
// and, as floors, what no caching costs: malloc/free, aligned_alloc/free
// (256 B, what cpu_host_alloc does below 4 MiB) and cpu_host_alloc/free.
//
// Three measurements:
//   1. hot cache: ns per allocate+deallocate pair of one size, repeated;
//   2. mixed: fixed-seed random walks of allocations and frees around 128
//      live blocks, sizes log-uniform 256 B..64 MiB (every size new, or 48
//      recurring sizes): ns/op, peak allocated vs peak reserved bytes, and
//      resident memory with every page of every block touched (a 20 MiB
//      segment for a 2 MiB request reserves address space that may or may not
//      ever be touched: RSS says which), and what empty_cache gives back with
//      blocks still live and with none;
//   3. two threads doing hot 4 KiB pairs on one allocator (its one mutex),
//      next to two threads that share nothing, which says whether both cores
//      were free for the bench (on a shared 2-core machine they often are not).
// Every measurement runs in a forked child of its own (in_child), so that no
// allocator inherits another's heap.
//
// Usage: bench_alloc_bench [--quick] [--reps N] [--only hot|history|mixed|threads]
// --quick finishes in well under 20 s, the default in under 2 min. Timings
// are best of the repetitions, median in brackets. Not a timed test.
//
// The allocators are used through allocate/deallocate/stats/empty_cache only
// (the Allocator interface is growing; these four stay).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cpu/host_memory.hpp"
#include "memory/alloc_tags.hpp"
#include "memory/caching_host_allocator.hpp"
#include "memory/device_caching_allocator.hpp"
#include "stridemem.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Keeps the compiler from proving an allocation unused and removing the
// malloc/free pair (GCC does for plain malloc/free).
inline void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

// The contenders behind one small interface, so the timing loops are shared.
// The two caching allocators are called through sm::Allocator&, virtually, as
// the engine calls them; the floors are plain inline calls.
struct CachingSubject {
  sm::Allocator* a;
  sm::Allocation allocate(size_t n) { return a->allocate(n); }
  void deallocate(const sm::Allocation& x) { a->deallocate(x); }
  bool has_stats() const { return true; }
  sm::AllocatorStats stats() { return a->stats(); }
  void empty_cache() { a->empty_cache(); }
};

template <void* (*Alloc)(size_t), void (*Free)(void*)>
struct FloorSubject {
  sm::Allocation allocate(size_t n) {
    sm::Allocation x;
    x.ptr = Alloc(n);
    x.size = x.requested = n;
    if (!x.ptr) {
      std::fprintf(stderr, "out of memory (%zu bytes)\n", n);
      std::exit(1);
    }
    return x;
  }
  void deallocate(const sm::Allocation& x) { Free(x.ptr); }
  bool has_stats() const { return false; }
  sm::AllocatorStats stats() { return {}; }
  void empty_cache() {}
};

void* malloc_fn(size_t n) { return std::malloc(n); }
void* aligned_fn(size_t n) { return std::aligned_alloc(SM_STACK_ALIGNMENT, (n + 255) / 256 * 256); }
void free_fn(void* p) { std::free(p); }

enum class Kind { kHost, kBlock, kMalloc, kAligned, kRawHost };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kHost: return "(a) CachingHostAllocator";
    case Kind::kBlock: return "(b) DeviceCachingAllocator on host";
    case Kind::kMalloc: return "malloc/free";
    case Kind::kAligned: return "aligned_alloc(256)/free";
    case Kind::kRawHost: return "cpu_host_alloc/free, no cache";
  }
  return "?";
}

// Calls f(subject) with a fresh subject of kind k, destroyed afterwards (the
// caching allocators return their cache to the system then).
template <class F>
auto with_subject(Kind k, F&& f) {
  switch (k) {
    case Kind::kHost: {
      sm::CachingHostAllocator a(sm::cpu_host_alloc, sm::cpu_host_free, "cpu");
      CachingSubject s{&a};
      return f(s);
    }
    case Kind::kBlock: {
      sm::HostMemoryOps ops;
      sm::DeviceCachingAllocator a(&ops);
      CachingSubject s{&a};
      return f(s);
    }
    case Kind::kMalloc: {
      FloorSubject<malloc_fn, free_fn> s;
      return f(s);
    }
    case Kind::kAligned: {
      FloorSubject<aligned_fn, free_fn> s;
      return f(s);
    }
    case Kind::kRawHost:
    default: {
      FloorSubject<sm::cpu_host_alloc, sm::cpu_host_free> s;
      return f(s);
    }
  }
}

struct Summary {
  double best = 0, median = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Summary{v.front(), v[v.size() / 2]};
}

std::string human(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1 << 30));
  else if (bytes >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  else if (bytes >= 1024.0) std::snprintf(buf, sizeof buf, "%.0f KiB", bytes / 1024);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::string cell(const Summary& s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f (%.1f)", s.best, s.median);
  return buf;
}

struct Options {
  bool quick = false;
  int reps = 0;  // 0: the mode's default
  std::string only;
};

// Runs fn() in a forked child and hands back what it returns (a plain
// struct, through a pipe). Every measurement runs this way, so each starts
// from the same fresh process: glibc's heap and its dynamic mmap threshold
// (raised by each free of an mmapped chunk up to 32 MiB) carry no history
// from the measurement before, and resident memory is the allocator's own.
template <class F>
auto in_child(F&& fn) {
  using R = decltype(fn());
  static_assert(std::is_trivially_copyable<R>::value, "results cross a pipe");
  int fd[2];
  if (pipe(fd) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    close(fd[0]);
    // A process using stridemem has threads (the CPU kernels' pool), and
    // glibc's malloc takes its locked paths from the first thread on, for
    // good; so do the children, before measuring anything.
    std::thread([] {}).join();
    const R r = fn();
    const ssize_t w = write(fd[1], &r, sizeof r);
    _exit(w == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fd[1]);
  R r{};
  const ssize_t got = read(fd[0], &r, sizeof r);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "a benchmark child failed (status %d)\n", status);
    std::exit(1);
  }
  return r;
}

// ---------------------------------------------------------------- 1. hot ----

template <class S>
double time_pairs(S& s, size_t size, size_t n) {
  const auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    sm::Allocation x = s.allocate(size);
    escape(x.ptr);
    s.deallocate(x);
  }
  return seconds_since(t0);
}

// ns per pair, best and median of reps batches; the batch length is chosen
// so that one batch takes about target_s (a 64 MiB malloc is an mmap+munmap,
// a cached block a few tens of ns).
template <class S>
Summary hot_pairs(S& s, size_t size, int reps, double target_s) {
  time_pairs(s, size, 16);  // first touch of the cache: one raw allocation
  size_t n = 64;
  while (n < (size_t(1) << 26)) {
    const double t = time_pairs(s, size, n);
    if (t >= target_s / 4) {
      n = static_cast<size_t>(static_cast<double>(n) * target_s / t) + 1;
      break;
    }
    n *= 2;
  }
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) ns.push_back(time_pairs(s, size, n) * 1e9 / static_cast<double>(n));
  return summarize(ns);
}

void bench_hot(const Options& o) {
  const int reps = o.reps ? o.reps : (o.quick ? 3 : 9);
  const double target = o.quick ? 0.01 : 0.03;
  const size_t sizes[] = {512, 4 << 10, 64 << 10, 1 << 20, 4 << 20, 64 << 20};
  const Kind kinds[] = {Kind::kHost, Kind::kBlock, Kind::kMalloc, Kind::kAligned};
  std::printf("\n### 1. Hot cache: ns per allocate+deallocate pair, same size repeatedly\n\n");
  std::printf("Best of %d batches of ~%.0f ms (median in brackets); memory never touched.\n\n",
              reps, target * 1e3);
  std::printf("| size | %s | %s | b / a | %s | %s |\n", kind_name(kinds[0]), kind_name(kinds[1]),
              kind_name(kinds[2]), kind_name(kinds[3]));
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (size_t size : sizes) {
    Summary r[4];
    for (int k = 0; k < 4; ++k)
      r[k] = in_child([&] {
        return with_subject(kinds[k], [&](auto& s) { return hot_pairs(s, size, reps, target); });
      });
    std::printf("| %s | %s | %s | %.2f | %s | %s |\n", human(static_cast<double>(size)).c_str(),
                cell(r[0]).c_str(), cell(r[1]).c_str(), r[1].best / r[0].best, cell(r[2]).c_str(),
                cell(r[3]).c_str());
    std::fflush(stdout);
  }
}

// ------------------------------------------------------ 1b. history ----

// What the snapshot records cost on the hot path (issue 14): hot pairs with
// history off, with a ring of 10000 events recording, and under a tag (a
// shared string whose reference count every block takes), for both
// allocators. Off is the default every user pays; the target is that it
// costs nothing measurable next to the allocator before the records existed
// (measured against a build of that commit, bench/RESULTS.md).
void bench_history(const Options& o) {
  const int reps = o.reps ? o.reps : (o.quick ? 3 : 9);
  const double target = o.quick ? 0.01 : 0.03;
  const size_t sizes[] = {4 << 10, 1 << 20};
  std::printf("\n### 1b. Records and history: ns per allocate+deallocate pair\n\n");
  std::printf("Best of %d batches of ~%.0f ms (median in brackets).\n\n", reps, target * 1e3);
  std::printf("| size | allocator | history off | history on (10000) | on / off | off, tagged |\n");
  std::printf("|---|---|---:|---:|---:|---:|\n");
  for (size_t size : sizes)
    for (Kind k : {Kind::kHost, Kind::kBlock}) {
      Summary r[3];
      for (int v = 0; v < 3; ++v)
        r[v] = in_child([&] {
          return with_subject(k, [&](auto& s) {
            if constexpr (std::is_same_v<std::decay_t<decltype(s)>, CachingSubject>) {
              if (v == 1) s.a->record_history(10000);
              if (v == 2) sm::push_tag("encoder");
            }
            return hot_pairs(s, size, reps, target);
          });
        });
      std::printf("| %s | %s | %s | %s | %.3f | %s |\n", human(static_cast<double>(size)).c_str(),
                  kind_name(k), cell(r[0]).c_str(), cell(r[1]).c_str(), r[1].best / r[0].best,
                  cell(r[2]).c_str());
      std::fflush(stdout);
    }
}

// -------------------------------------------------------------- 2. mixed ----

// splitmix64: a fixed, portable sequence (std:: distributions are not
// specified bit for bit across standard libraries).
struct Rng {
  uint64_t x;
  uint64_t next() {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

struct Op {
  uint32_t slot;
  uint64_t size;  // 0: free the block in slot
};

struct Sequence {
  std::vector<Op> ops;
  size_t slots = 0;
  uint64_t peak_requested = 0;  // most bytes live at once, as requested
  size_t peak_live = 0;
  size_t walk_end = 0;         // ops[walk_end] is the first of the final frees
  uint64_t end_requested = 0;  // bytes live then
};

// A random walk around `live` live blocks: allocate with probability
// 1 - L / (2 live) (L blocks live now), else free a random live block. Sizes
// are log-uniform between 256 B and 64 MiB (as many blocks in 256-512 B as in
// 32-64 MiB: many small tensors, a few large ones holding most bytes); with
// distinct = 0 every size is drawn afresh (no two alike: the worst case for a
// cache of whole blocks), with distinct = K they are drawn once into a menu of
// K sizes and each allocation picks one (a model's tensor shapes, recurring
// step after step). At the end every block still live is freed, in random
// order.
Sequence make_sequence(size_t nops, size_t live, size_t distinct, uint64_t seed) {
  Sequence q;
  Rng rng{seed};
  const double lo = std::log2(256.0), hi = std::log2(64.0 * 1024 * 1024);
  auto draw_size = [&] { return static_cast<uint64_t>(std::exp2(lo + (hi - lo) * rng.uniform())); };
  std::vector<uint64_t> menu;
  for (size_t i = 0; i < distinct; ++i) menu.push_back(draw_size());
  std::vector<uint32_t> live_slots, free_slots;
  std::vector<uint64_t> slot_size;
  uint64_t live_bytes = 0;
  auto free_one = [&] {
    const size_t i = rng.next() % live_slots.size();
    const uint32_t slot = live_slots[i];
    live_slots[i] = live_slots.back();
    live_slots.pop_back();
    q.ops.push_back(Op{slot, 0});
    live_bytes -= slot_size[slot];
    free_slots.push_back(slot);
  };
  while (q.ops.size() < nops) {
    const double p_alloc = 1.0 - static_cast<double>(live_slots.size()) / (2.0 * live);
    if (live_slots.empty() || rng.uniform() < p_alloc) {
      const uint64_t size = menu.empty() ? draw_size() : menu[rng.next() % menu.size()];
      uint32_t slot;
      if (free_slots.empty()) {
        slot = static_cast<uint32_t>(slot_size.size());
        slot_size.push_back(0);
      } else {
        slot = free_slots.back();
        free_slots.pop_back();
      }
      slot_size[slot] = size;
      live_slots.push_back(slot);
      live_bytes += size;
      q.ops.push_back(Op{slot, size});
      q.peak_requested = std::max(q.peak_requested, live_bytes);
      q.peak_live = std::max(q.peak_live, live_slots.size());
    } else {
      free_one();
    }
  }
  q.walk_end = q.ops.size();
  q.end_requested = live_bytes;
  while (!live_slots.empty()) free_one();
  q.slots = slot_size.size();
  return q;
}

// Writes one byte in every 4 KiB page of the block's requested bytes, as a
// tensor being filled would: makes the pages resident.
inline void touch(void* p, size_t n) {
  volatile char* c = static_cast<volatile char*>(p);
  for (size_t i = 0; i < n; i += 4096) c[i] = 1;
  if (n) c[n - 1] = 1;
}

// Where the blocks start: the stack of views promises SM_STACK_ALIGNMENT
// (256 B) in absolute addresses, and blocks of 4 MiB and more are meant to
// start on a 2 MiB boundary (cpu_host_alloc).
struct Placement {
  int64_t not_256_aligned = 0, large = 0, large_2mib_aligned = 0;
  void count(const void* p, size_t n) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    not_256_aligned += a % SM_STACK_ALIGNMENT != 0;
    if (n >= (size_t(4) << 20)) {
      large++;
      large_2mib_aligned += a % (size_t(2) << 20) == 0;
    }
  }
};

// Runs the sequence; at_walk_end() is called between the random walk and the
// final frees (outside the timing). With touch_pages, where each block starts
// is counted into *placement.
template <class S, class F>
double run_sequence(S& s, const Sequence& q, bool touch_pages, F&& at_walk_end,
                    Placement* placement) {
  std::vector<sm::Allocation> slot(q.slots);
  double secs = 0;
  auto t0 = Clock::now();
  for (size_t i = 0; i < q.ops.size(); ++i) {
    const Op& op = q.ops[i];
    if (i == q.walk_end) {
      secs += seconds_since(t0);
      at_walk_end();
      t0 = Clock::now();
    }
    if (op.size) {
      slot[op.slot] = s.allocate(op.size);
      escape(slot[op.slot].ptr);
      if (touch_pages) {
        touch(slot[op.slot].ptr, op.size);
        placement->count(slot[op.slot].ptr, op.size);
      }
    } else {
      s.deallocate(slot[op.slot]);
    }
  }
  return secs + seconds_since(t0);
}

// Resident bytes now (/proc/self/statm) and the peak since the last reset
// (VmHWM in /proc/self/status, reset by writing 5 to /proc/self/clear_refs).
int64_t rss_now() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident < 0 ? -1 : static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

// Anonymous memory on transparent huge pages (/proc/self/smaps_rollup).
int64_t thp_now() {
  FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return -1;
  char line[256];
  int64_t kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "AnonHugePages: %" SCNd64 " kB", &kb) == 1) break;
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

int64_t rss_peak() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int64_t kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %" SCNd64 " kB", &kb) == 1) break;
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

bool rss_peak_reset() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

int64_t page_faults() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return static_cast<int64_t>(ru.ru_minflt) + ru.ru_majflt;
}

struct MixedResult {
  double secs = 0;
  int64_t peak_allocated = 0, peak_reserved = 0, raw_allocs = 0, cache_hits = 0;
  int64_t rss_base = 0, rss_peak = 0, rss_after_free = 0, rss_after_empty = 0;
  int64_t page_faults = 0;  // minor + major, during the sequence
  // At the end of the walk, blocks still live: before and after empty_cache.
  int64_t live_reserved = 0, live_rss = 0, live_reserved_emptied = 0, live_rss_emptied = 0;
  int64_t live_thp = 0;  // of live_rss, on transparent huge pages
  Placement placement;
  bool peak_reset_ok = false;
};

// One run of the sequence in a fresh child. With empty_at_walk_end, the
// cache is also emptied once while the walk's last blocks are still live
// (what a user's sm_empty_cache gets back in the middle of a program): that
// changes what the final frees find, so the timed runs do not do it.
MixedResult mixed_once(Kind k, const Sequence& q, bool touch_pages, bool empty_at_walk_end) {
  return in_child([&] {
    return with_subject(k, [&](auto& s) {
      MixedResult r;
      r.peak_reset_ok = rss_peak_reset();
      r.rss_base = rss_now();
      const int64_t faults0 = page_faults(), thp0 = thp_now();
      r.secs = run_sequence(s, q, touch_pages, [&] {
        if (!empty_at_walk_end) return;
        r.live_reserved = s.stats().reserved_bytes;
        r.live_rss = rss_now() - r.rss_base;
        r.live_thp = thp_now() - thp0;
        s.empty_cache();
        r.live_reserved_emptied = s.stats().reserved_bytes;
        r.live_rss_emptied = rss_now() - r.rss_base;
      }, &r.placement);
      r.page_faults = page_faults() - faults0;
      r.rss_peak = rss_peak();
      r.rss_after_free = rss_now();
      if (s.has_stats()) {
        const sm::AllocatorStats st = s.stats();
        r.peak_allocated = st.peak_allocated_bytes;
        r.peak_reserved = st.peak_reserved_bytes;
        r.raw_allocs = st.device_allocs;
        r.cache_hits = st.cache_hits;
      }
      s.empty_cache();
      r.rss_after_empty = rss_now();
      return r;
    });
  });
}

std::string times_requested(double num, double den) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", num / den);
  return buf;
}

void mixed_table(const Sequence& q, int reps, bool floors) {
  std::vector<Kind> kinds = {Kind::kHost, Kind::kBlock};
  // The floors fault in fresh pages for nearly every block (page faults
  // column): seconds of system time here, so --quick leaves them out.
  if (floors) kinds.insert(kinds.end(), {Kind::kRawHost, Kind::kMalloc});
  std::vector<Summary> ns_of;
  std::vector<MixedResult> rss_of;
  for (Kind k : kinds) {
    std::vector<double> ns;
    for (int r = 0; r < reps; ++r)
      ns.push_back(mixed_once(k, q, false, false).secs * 1e9 / static_cast<double>(q.ops.size()));
    ns_of.push_back(summarize(ns));
    rss_of.push_back(mixed_once(k, q, true, true));
  }
  const double req = static_cast<double>(q.peak_requested);
  auto bytes = [](int64_t n) { return human(static_cast<double>(n)); };
  std::printf("| allocator | ns/op | raw allocs | cache hits | peak allocated | peak reserved "
              "| reserved / requested | peak RSS | RSS / requested | page faults |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < kinds.size(); ++i) {
    const MixedResult& t = rss_of[i];
    const bool stats = i < 2;
    const int64_t peak_rss = t.rss_peak - t.rss_base;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s%s | %s | %" PRId64 " |\n",
                kind_name(kinds[i]), cell(ns_of[i]).c_str(),
                stats ? std::to_string(t.raw_allocs).c_str() : "-",
                stats ? std::to_string(t.cache_hits).c_str() : "-",
                stats ? bytes(t.peak_allocated).c_str() : "-",
                stats ? bytes(t.peak_reserved).c_str() : "-",
                stats ? times_requested(static_cast<double>(t.peak_reserved), req).c_str() : "-",
                bytes(peak_rss).c_str(), t.peak_reset_ok ? "" : " (peak not reset)",
                times_requested(static_cast<double>(peak_rss), req).c_str(), t.page_faults);
  }
  std::printf("\nGiving memory back (the RSS run): at the end of the walk, %s requested still "
              "live, empty_cache called; then every block freed and empty_cache called again.\n\n",
              human(static_cast<double>(q.end_requested)).c_str());
  std::printf("| allocator | reserved | RSS | of which huge pages | after empty_cache: reserved "
              "| RSS | all freed + empty_cache: RSS |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < kinds.size(); ++i) {
    const MixedResult& t = rss_of[i];
    const bool stats = i < 2;
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", kind_name(kinds[i]),
                stats ? bytes(t.live_reserved).c_str() : "-", bytes(t.live_rss).c_str(),
                bytes(t.live_thp).c_str(),
                stats ? bytes(t.live_reserved_emptied).c_str() : "-",
                bytes(t.live_rss_emptied).c_str(), bytes(t.rss_after_empty - t.rss_base).c_str());
  }
  std::printf("\nWhere blocks start (every allocation of the RSS run):");
  for (size_t i = 0; i < kinds.size(); ++i) {
    const Placement& pl = rss_of[i].placement;
    std::printf("%s %s: %" PRId64 " not 256-byte aligned, %" PRId64 " of %" PRId64
                " blocks >= 4 MiB on a 2 MiB boundary",
                i ? ";" : "", kind_name(kinds[i]), pl.not_256_aligned, pl.large_2mib_aligned,
                pl.large);
  }
  std::printf(".\n");
  std::fflush(stdout);
}

void bench_mixed(const Options& o) {
  const int reps = o.reps ? o.reps : (o.quick ? 2 : 5);
  const size_t live = 128;
  const size_t nops = o.quick ? 10000 : 50000;
  const uint64_t seed = 14;
  std::printf("\n### 2. Mixed workload\n\n");
  std::printf("A fixed-seed (%" PRIu64 ") random walk of allocations and frees around %zu live "
              "blocks, sizes log-uniform 256 B..64 MiB, %zu operations, every block freed by the "
              "end.\n",
              seed, live, nops);
  std::printf("ns/op: allocate or deallocate, memory not touched, best of %d runs (median), each "
              "in a fresh child process. Other columns: one more run per allocator, in its own "
              "child, with one byte written in every 4 KiB page of every block when it is "
              "allocated (a tensor being filled): the allocator's stats, resident bytes above the "
              "child's start (peak: VmHWM), page faults during the run. Requested: the most bytes "
              "live at once, as requested.\n",
              reps);
  const struct {
    const char* name;
    size_t distinct;
  } workloads[] = {{"every size new", 0}, {"48 recurring sizes", 48}};
  for (const auto& w : workloads) {
    const Sequence q = make_sequence(nops, live, w.distinct, seed);
    size_t allocs = 0;
    for (const Op& op : q.ops) allocs += op.size != 0;
    std::printf("\n#### %s: %zu allocations, at most %zu live, requested %s\n\n", w.name, allocs,
                q.peak_live, human(static_cast<double>(q.peak_requested)).c_str());
    mixed_table(q, reps, !o.quick);
  }
}

// ------------------------------------------------------------ 3. threads ----

// ns per pair as seen by each thread: wall time of `threads` threads each
// doing n hot pairs of `size` on the same subject, divided by n.
template <class S>
double threaded_pairs(S& s, int threads, size_t size, size_t n) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      time_pairs(s, size, 16);  // warm this thread's path (thread-local caches)
      ready++;
      while (!go.load(std::memory_order_acquire)) {
      }
      time_pairs(s, size, n);
    });
  while (ready.load() < threads) {
  }
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return seconds_since(t0) * 1e9 / static_cast<double>(n);
}

// The reference row: the same wall-time measure for threads that share
// nothing (a chain of dependent floating-point operations each), in ns per
// 16 operations. About 1.0x when the two cores are both free for the bench;
// near 2x when another process holds one, and then the rows above it measure
// the machine, not the allocators.
double threaded_arith(int threads, size_t n) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      ready++;
      while (!go.load(std::memory_order_acquire)) {
      }
      double x = 1;
      for (size_t i = 0; i < 16 * n; ++i) {
        x = x * 1.0000001 + 1e-9;
        asm volatile("" : "+x"(x));
      }
      escape(&x);
    });
  while (ready.load() < threads) {
  }
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return seconds_since(t0) * 1e9 / static_cast<double>(n);
}

void bench_threads(const Options& o) {
  const int reps = o.reps ? o.reps : (o.quick ? 3 : 9);
  const size_t n = o.quick ? 200000 : 1000000;
  const size_t size = 4 << 10;
  const Kind kinds[] = {Kind::kHost, Kind::kBlock, Kind::kMalloc};
  std::printf("\n### 3. Two threads, hot 4 KiB pairs on one allocator\n\n");
  std::printf("ns per pair per thread (wall time / pairs each thread made), %zu pairs per thread, "
              "best of %d (median).\n\n", n, reps);
  std::printf("| allocator | 1 thread | 2 threads | 2 threads / 1 thread |\n|---|---:|---:|---:|\n");
  for (Kind k : kinds) {
    struct Pair {
      Summary one, two;
    };
    const Pair p = in_child([&] {
      return with_subject(k, [&](auto& s) {
        std::vector<double> one, two;
        for (int r = 0; r < reps; ++r) {
          one.push_back(threaded_pairs(s, 1, size, n));
          two.push_back(threaded_pairs(s, 2, size, n));
        }
        return Pair{summarize(one), summarize(two)};
      });
    });
    const Summary a = p.one, b = p.two;
    std::printf("| %s | %s | %s | %.1fx |\n", kind_name(k), cell(a).c_str(), cell(b).c_str(),
                b.best / a.best);
    std::fflush(stdout);
  }
  std::vector<double> one, two;
  for (int r = 0; r < reps; ++r) {
    one.push_back(threaded_arith(1, n));
    two.push_back(threaded_arith(2, n));
  }
  const Summary a = summarize(one), b = summarize(two);
  std::printf("| reference: no shared state (16 dependent FP ops) | %s | %s | %.1fx |\n",
              cell(a).c_str(), cell(b).c_str(), b.best / a.best);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--only" && i + 1 < argc &&
               (std::string(argv[i + 1]) == "hot" || std::string(argv[i + 1]) == "history" ||
                std::string(argv[i + 1]) == "mixed" ||
                std::string(argv[i + 1]) == "threads")) {
      o.only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--reps N] [--only hot|history|mixed|threads]\n", argv[0]);
      return 2;
    }
  }
  const auto t0 = Clock::now();
  std::printf("## alloc_bench (%s mode)\n", o.quick ? "quick" : "default");
  if (o.only.empty() || o.only == "hot") bench_hot(o);
  if (o.only.empty() || o.only == "history") bench_history(o);
  if (o.only.empty() || o.only == "mixed") bench_mixed(o);
  if (o.only.empty() || o.only == "threads") bench_threads(o);
  std::printf("\ntotal %.1f s\n", seconds_since(t0));
  return 0;
}
