// Shared helpers for the reliability programs (stress test, fault-injection
// walk, fuzz harness). Only the public header: these programs link the shared
// library (or, for the fuzzer, the engine built into the same binary) and
// talk to it through the C ABI alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stridemem.h"
#include "../helpers/barrier.hpp"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define REL_HAVE_MEMCHECK 1
#endif
#endif

namespace rel {

// The harnesses copy whole storages (uninitialized parts included: sm_empty,
// strided gaps, stack padding) to compare them before/after a call. Under
// valgrind those copies are declared defined: comparing garbage with itself
// is the point, not a bug. The library's own memory is left as it is.
inline void mark_defined(void* p, size_t n) {
#ifdef REL_HAVE_MEMCHECK
  (void)VALGRIND_MAKE_MEM_DEFINED(p, n);
#else
  (void)p;
  (void)n;
#endif
}

// ---------------------------------------------------------------------------
// Checks. A failed check prints where and why (with the library's last error)
// and counts; the fuzzer turns every failure into an abort so libFuzzer keeps
// the input.
// ---------------------------------------------------------------------------

inline std::atomic<int64_t>& failures() {
  static std::atomic<int64_t> n{0};
  return n;
}
inline std::atomic<int64_t>& checks() {
  static std::atomic<int64_t> n{0};
  return n;
}
inline bool& abort_on_failure() {
  static bool v = false;
  return v;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline void report_failure(const char* file, int line, const char* fmt, ...) {
  const int64_t n = ++failures();
  if (n <= 50 || abort_on_failure()) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "FAIL %s:%d: %s\n      sm_last_error: \"%s\"\n", file, line, msg,
                 sm_last_error());
  } else if (n == 51) {
    std::fprintf(stderr, "(further failures not printed)\n");
  }
  if (abort_on_failure()) std::abort();
}

#define REL_CHECK(cond, ...)                                          \
  do {                                                                \
    ++rel::checks();                                                  \
    if (!(cond)) rel::report_failure(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

// status must be `want`.
#define REL_STATUS(expr, want)                                                           \
  do {                                                                                   \
    const sm_status rel_st_ = (expr);                                                    \
    REL_CHECK(rel_st_ == (want), "%s -> %d (%s), expected %d (%s)", #expr, (int)rel_st_, \
              sm_status_string(rel_st_), (int)(want), sm_status_string(want));           \
  } while (0)
#define REL_OK(expr) REL_STATUS(expr, SM_OK)

inline sm_device cpu() { return sm_device{SM_DEVICE_CPU, 0}; }

// Lock-step rounds: tests/helpers/barrier.hpp.
using Barrier = sm_test::Barrier;

// T workers W(shared, k), each run() on its own thread, sharing one barrier
// (shared.bar) for their lock-step rounds; returns them once all have
// finished, for the caller's final checks (shared.bar is reset then).
template <class W, class S>
std::vector<W> run_workers(S& shared, int T) {
  Barrier bar(T);
  shared.bar = &bar;
  std::vector<W> workers;
  workers.reserve(static_cast<size_t>(T));
  for (int k = 0; k < T; ++k) workers.emplace_back(shared, k);
  std::vector<std::thread> threads;
  for (int k = 0; k < T; ++k) threads.emplace_back([&workers, k] { workers[static_cast<size_t>(k)].run(); });
  for (auto& th : threads) th.join();
  shared.bar = nullptr;
  return workers;
}

// ---------------------------------------------------------------------------
// Deterministic random numbers (splitmix64): same seed, same run.
// ---------------------------------------------------------------------------

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  // Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(int percent) { return below(100) < percent; }

 private:
  uint64_t s_;
};

// ---------------------------------------------------------------------------
// Global state snapshots
// ---------------------------------------------------------------------------

inline sm_memory_stats_t stats(sm_device dev = cpu()) {
  sm_memory_stats_t s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  REL_OK(sm_memory_stats(dev, &s));
  return s;
}

// What a failing call must leave exactly as it was, and what must come back
// to its starting value once every handle is released. Allocation counters
// (num_allocs, cache hits, reserved bytes) are statistics, not state.
struct State {
  int64_t allocated_bytes = -1, requested_bytes = -1, active_views = -1, active_storages = -1;
  int64_t tensors = -1, storages = -1, stacks = -1;
  bool operator==(const State& o) const {
    return allocated_bytes == o.allocated_bytes && requested_bytes == o.requested_bytes &&
           active_views == o.active_views && active_storages == o.active_storages &&
           tensors == o.tensors && storages == o.storages && stacks == o.stacks;
  }
  bool operator!=(const State& o) const { return !(*this == o); }
  std::string str() const {
    char b[256];
    std::snprintf(b, sizeof b,
                  "{allocated %lld, requested %lld, views %lld, storages %lld, handles: tensors "
                  "%lld storages %lld stacks %lld}",
                  (long long)allocated_bytes, (long long)requested_bytes, (long long)active_views,
                  (long long)active_storages, (long long)tensors, (long long)storages,
                  (long long)stacks);
    return b;
  }
};

inline State state() {
  State g;
  const sm_memory_stats_t s = stats();
  g.allocated_bytes = s.allocated_bytes;
  g.requested_bytes = s.requested_bytes;
  g.active_views = s.active_views;
  g.active_storages = s.active_storages;
  REL_OK(sm_debug_live_handles(&g.tensors, &g.storages, &g.stacks));
  return g;
}

// ---------------------------------------------------------------------------
// Layout helpers (independent of the library's own layout code)
// ---------------------------------------------------------------------------

inline int64_t numel_of(const int64_t* shape, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= shape[i];
  return n;
}

// Calls fn(element_offset) for every element of a strided layout, row-major.
template <class F>
void for_each_offset(const int64_t* shape, const int64_t* strides, int nd, int64_t offset, F&& fn) {
  for (int i = 0; i < nd; ++i)
    if (shape[i] == 0) return;
  int64_t idx[SM_MAX_DIMS] = {0};
  int64_t pos = offset;
  for (;;) {
    fn(pos);
    int d = nd - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        pos += strides[d];
        break;
      }
      pos -= (shape[d] - 1) * strides[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Everything the ABI says about one tensor's layout.
struct Meta {
  int32_t ndim = -1;
  int64_t shape[SM_MAX_DIMS] = {0};
  int64_t strides[SM_MAX_DIMS] = {0};
  int64_t offset = -1, numel = -1, nbytes = -1, storage_nbytes = -1, version = -1;
  sm_dtype dtype = -1;
  size_t itemsize = 0;
  void* data = nullptr;
};

// false (and checks recorded) if any getter fails on a tensor believed valid.
inline bool meta_of(sm_tensor t, Meta* m) {
  bool ok = true;
  auto get = [&](sm_status st, const char* what) {
    REL_CHECK(st == SM_OK, "%s on a valid tensor -> %s", what, sm_status_string(st));
    ok = ok && st == SM_OK;
  };
  get(sm_ndim(t, &m->ndim), "sm_ndim");
  if (!ok) return false;
  get(sm_shape(t, m->shape, SM_MAX_DIMS), "sm_shape");
  get(sm_strides(t, m->strides, SM_MAX_DIMS), "sm_strides");
  get(sm_storage_offset(t, &m->offset), "sm_storage_offset");
  get(sm_numel(t, &m->numel), "sm_numel");
  get(sm_nbytes(t, &m->nbytes), "sm_nbytes");
  get(sm_storage_nbytes(t, &m->storage_nbytes), "sm_storage_nbytes");
  get(sm_version_counter(t, &m->version), "sm_version_counter");
  get(sm_dtype_of(t, &m->dtype), "sm_dtype_of");
  get(sm_data_ptr(t, &m->data), "sm_data_ptr");
  m->itemsize = sm_dtype_size(m->dtype);
  return ok;
}

// Minimum and maximum element offsets a layout reaches (numel > 0).
inline void offset_range(const Meta& m, int64_t* lo, int64_t* hi) {
  *lo = *hi = m.offset;
  for (int i = 0; i < m.ndim; ++i) {
    if (m.shape[i] == 0) continue;
    const int64_t ext = (m.shape[i] - 1) * m.strides[i];
    if (ext < 0) *lo += ext;
    else *hi += ext;
  }
}

// Address of storage element 0 of a CPU tensor.
// (Integer arithmetic: the data pointer of an empty view may be NULL.)
inline char* storage_base(const Meta& m) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(m.data) -
                                 static_cast<uintptr_t>(m.offset) * m.itemsize);
}

// The bytes of a CPU tensor's elements, row-major, read straight from memory
// (the reference sm_copy_to_host must agree with).
inline std::vector<uint8_t> gather_bytes(const Meta& m) {
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(m.nbytes > 0 ? m.nbytes : 0));
  const char* base = storage_base(m);
  for_each_offset(m.shape, m.strides, m.ndim, m.offset, [&](int64_t off) {
    const char* p = base + off * static_cast<int64_t>(m.itemsize);
    out.insert(out.end(), p, p + m.itemsize);
  });
  if (!out.empty()) mark_defined(out.data(), out.size());
  return out;
}

// sm_copy_to_host into an exact-size buffer with guard bytes on both sides.
inline bool copy_out(sm_tensor t, int64_t nbytes, std::vector<uint8_t>* out) {
  const size_t n = static_cast<size_t>(nbytes);
  std::vector<uint8_t> buf(n + 32, 0xA5);
  const sm_status st = sm_copy_to_host(t, buf.data() + 16, n);
  REL_CHECK(st == SM_OK, "sm_copy_to_host -> %s", sm_status_string(st));
  for (size_t i = 0; i < 16; ++i) {
    REL_CHECK(buf[i] == 0xA5, "sm_copy_to_host wrote before the buffer");
    REL_CHECK(buf[16 + n + i] == 0xA5, "sm_copy_to_host wrote past nbytes");
  }
  out->assign(buf.begin() + 16, buf.begin() + 16 + static_cast<std::ptrdiff_t>(n));
  if (!out->empty()) mark_defined(out->data(), out->size());
  return st == SM_OK;
}

// ---------------------------------------------------------------------------
// Handle values, white-box. The ABI only promises that a handle value is never
// issued twice; how it keeps that promise is src/abi/handles.hpp's layout
// [kind:4][generation:28][slot index + 1:32]: each release moves the slot to
// its next generation, a slot that reached kHandleGenLimit retires. The fuzz
// harness decodes handles to check the mechanism too (a slot's generations
// only grow; a retired slot never comes back), which catches a wrap-around
// even when the handle it repeats was issued before the harness saw it.
// ---------------------------------------------------------------------------

constexpr uint32_t kHandleGenLimit = (1u << 28) - 1;  // last generation of a slot
enum HandleKindTag : uint32_t { kTagTensor = 1, kTagStorage = 2, kTagStack = 3 };

struct HandleBits {
  uint32_t kind = 0;        // top 4 bits
  uint32_t generation = 0;  // 28 bits
  uint32_t slot = 0;        // low 32 bits (index + 1)
};
inline HandleBits handle_bits(const void* h) {
  const uint64_t v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
  HandleBits b;
  b.kind = static_cast<uint32_t>(v >> 60);
  b.generation = static_cast<uint32_t>((v >> 32) & kHandleGenLimit);
  b.slot = static_cast<uint32_t>(v & 0xFFFFFFFFu);
  return b;
}
// A value with that layout (forged handles for the tests).
inline void* make_handle(uint32_t kind, uint32_t generation, uint32_t slot) {
  const uint64_t v = (static_cast<uint64_t>(kind) << 60) |
                     (static_cast<uint64_t>(generation & kHandleGenLimit) << 32) | slot;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
}

// Parses "--name value" options (integers) with defaults.
inline int64_t arg_int(int argc, char** argv, const char* name, int64_t dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
  return dflt;
}
inline const char* arg_str(int argc, char** argv, const char* name, const char* dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return dflt;
}

}  // namespace rel
