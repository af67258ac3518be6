// libFuzzer harness for the C API. The input bytes are decoded into a
// sequence of API calls over a small pool of handles: creation (hostile
// shapes, strides, dtypes, huge sizes), views, copies, in-place writes
// (overlapping views included), retain/release (stale, forged, NULL and
// wrong-kind handles too), storages, stacks of views (popped tensors),
// DLPack export/import (hostile producers included), fault injection.
//
// The harness keeps its own model of every handle, storage, stack and
// external buffer, and after every call checks:
//  - the status is a known code and never SM_ERR_INTERNAL; a failure has a
//    message, writes none of its outputs and changes nothing: allocated and
//    requested bytes, live views and storages, live handles, and the bytes
//    and version of the storage it could have written;
//  - a stale/forged/NULL/popped handle is refused (getters: exactly
//    SM_ERR_INVALID_HANDLE), never crashes;
//  - success: every new view lies inside its storage, shares its parent's
//    base address, dtype and version; copies are new storages holding the
//    same bytes; sm_copy_to_host equals the bytes read from memory; an
//    in-place write or copy_into changes no byte outside its target's
//    elements, and a same-dtype copy_into writes exactly the broadcast source;
//  - the memory statistics match the model after every call: requested
//    bytes = the sum of live allocator-owned storages, allocated bytes within
//    the documented rounding of it, active storages and live handle counts
//    exact; external deleters run exactly once, exactly when the model says
//    the last reference died;
//  - at the end, after releasing everything, the state is back to its start.
// Op bytes 238..255 select ops written for bug classes found after the
// first fuzzing round (each call's status is predicted exactly):
//  - GEN: a handle's slot aged with sm_debug_age_handle_slot and walked to
//    its generation limit; every new tensor/storage/stack handle (here and
//    in every other op) differs from every live and every released one, a
//    slot's generations only grow (white-box, rel::handle_bits), a retired
//    slot is never handed out or aged again, released handles stay refused;
//    bad hook arguments have their documented statuses and change nothing;
//  - REVIEW: bytes at an odd / 2-mod-4 address (sm_from_blob, DLPack with an
//    odd byte_offset) re-viewed with every dtype (sm_tensor_from_storage,
//    also over the pool's storages): refused exactly when the storage's
//    address is not a multiple of the dtype's size, else the bounds rules;
//  - DLADDR: DLPack data/byte_offset no buffer can have (offsets past
//    PTRDIFF_MAX, sums past 2^64, NULL with an offset, spans past the top of
//    the address space or below 0): the exact refusal, nothing changed, the
//    producer's deleter not called;
//  - EMPTYHUGE: empty shapes whose dense strides pass int64: creation,
//    clone, to, contiguous, copy_into and reshape all succeed;
//  - STATS: sm_memory_stats with any struct_size writes exactly the whole
//    fields within it (op 16 kind 2 checks the same);
//  - EXPIDX: sm_index_select through a 1-element index expanded to a long
//    length (see SM_FUZZ_HUGE_EXPANDED_INDEX).
// Op MISC with a kind byte >= 240 (issue 14; kind bytes below 240 decode
// as before) exercises tags, history and the snapshot, with the thread's tag
// stack and the history ring's size modelled: sm_push_tag with valid names
// (bursts up to the 256-deep limit) and invalid ones (NULL, empty, control
// characters, invalid UTF-8, 257 bytes), sm_pop_tag (on an empty stack too),
// sm_memory_record_history with valid and invalid sizes, and a whole snapshot
// parsed (tests/api/json_reader.hpp) and checked: totals equal to
// sm_memory_stats and to the sums of the segments and blocks, every block's
// tag a path of names the harness pushed, the history present exactly while
// recording, with the modelled capacity and its newest event's totals equal
// to the statistics. Each call's status is predicted exactly; a failure
// changes nothing.
// Op bytes 59, 178 and 229 (kWideOpBytes) select op WIDE, the dtypes a
// dtype byte never decodes to (uint16, uint32, uint64, complex64,
// complex128): creation every way, sm_to into them and on into any dtype,
// sm_copy_into fresh (flipped) tensors both ways, typed re-views of storages
// (a complex type aligns to its part), in-place scalar and tensor ops on
// them. Statuses predicted exactly; elements checked against a model of the
// conversion contract built here (convert_elem), as are in-place results
// where the contract fixes them. The tensors join the pool, so the other ops
// view, copy, write, export and re-import them as well.
// Any failed check aborts, so libFuzzer keeps the input.
//
// Built two ways: with clang -fsanitize=fuzzer (STRIDEMEM_FUZZ=ON), and as
// reliability_fuzz_replay (SM_FUZZ_STANDALONE) that runs corpus files, so the
// seed corpus is a regression test in every build (ASan, valgrind, plain).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../api/json_reader.hpp"
#include "rel_util.hpp"
#include "stridemem_dlpack.h"

#if defined(__SANITIZE_ADDRESS__)
#define SM_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SM_FUZZ_ASAN 1
#endif
#endif

#ifdef SM_FUZZ_ASAN
// Allocations the harness asks for as "huge" (>= 2^40 bytes) must fail with
// SM_ERR_OUT_OF_MEMORY, not abort the process: let malloc return NULL, and
// cap single allocations (the harness never asks for 16 MiB .. 1 TiB).
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1";
}
#endif

// Decoding a byte into a dtype picks among the 10 dtypes the corpus was
// recorded with, so that dtypes appended later (uint16..complex128) do not
// change what an existing corpus input does; op WIDE (kWideOpBytes) is how
// inputs reach those.
constexpr int kCorpusDTypes = 10;

namespace {

using i128 = __int128;

constexpr int64_t kMaxBytes = 1 << 20;                // largest storage the harness makes
constexpr int64_t kHuge = int64_t(1) << 40;           // from here on, sizes must be refused
constexpr int64_t kMaxTouch = int64_t(1) << 16;       // element-wise checks up to this numel
constexpr size_t kMaxTensors = 24;
// Op bytes from here on select the ops added for the bug classes of 75f5c06,
// 86a34a6 and f17a581 (generation walks, misaligned re-views, DLPack address
// arithmetic, empty tensors with huge sizes, memory-stats struct sizes,
// expanded indices); bytes below it decode as they always did, but for
// kWideOpBytes.
constexpr uint8_t kFirstNewOp = 238;
// Op bytes that select op WIDE (the dtypes in.dtype() never yields). All 256
// byte values had a meaning, so these three are taken from `op % 17 == 8`, a
// second range for op_write(false), which `op % 17 == 7` selects as well: no
// op loses its only byte values, and no seed but seed-wide-* has any of them
// where an op byte is read (so the others decode as they did without op WIDE).
constexpr uint8_t kWideOpBytes[] = {59, 178, 229};

// Lengths an expanded (stride-0) index of sm_index_select is given (op
// EXPIDX). The library checks and gathers an index through its stride, so
// 2^27 and 2^40 entries cost one element (before that rewrite it copied the
// whole index to the host: 1 GiB, or an abort under ASan). Build with
// -DSM_FUZZ_HUGE_EXPANDED_INDEX=0 to fuzz a library without it.
#ifndef SM_FUZZ_HUGE_EXPANDED_INDEX
#define SM_FUZZ_HUGE_EXPANDED_INDEX 1
#endif
#if SM_FUZZ_HUGE_EXPANDED_INDEX
constexpr int64_t kExpandedIndexLengths[] = {1, 7, int64_t(1) << 12, int64_t(1) << 27, int64_t(1) << 40};
#else
constexpr int64_t kExpandedIndexLengths[] = {1, 7, int64_t(1) << 12, int64_t(1) << 12, int64_t(1) << 12};
#endif

sm_tensor const kSentT = reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0x5E7100000001ull));
sm_storage const kSentS = reinterpret_cast<sm_storage>(static_cast<uintptr_t>(0x5E7100000002ull));
sm_stack const kSentK = reinterpret_cast<sm_stack>(static_cast<uintptr_t>(0x5E7100000003ull));

// ---- input decoding ---------------------------------------------------------

class In {
 public:
  In(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool empty() const { return n_ == 0; }
  uint8_t u8() {
    if (!n_) return 0;
    --n_;
    return *p_++;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | u8();
    return v;
  }
  // Small values mostly, hostile ones sometimes.
  int64_t size() {
    static const int64_t hostile[] = {-1, -2, 0, 1, 65536, 1 << 20, int64_t(1) << 31,
                                      int64_t(1) << 32, kHuge, int64_t(1) << 62, INT64_MAX,
                                      INT64_MIN, int64_t(3) << 40, 100000};
    const uint8_t b = u8();
    if (b < 224) return b % 9;
    return hostile[b % (sizeof hostile / sizeof hostile[0])];
  }
  int64_t stride() {
    static const int64_t hostile[] = {0, -1, INT64_MAX, INT64_MIN, int64_t(1) << 40, -(int64_t(1) << 40),
                                      int64_t(1) << 62, 1 << 20};
    const uint8_t b = u8();
    if (b < 224) return static_cast<int64_t>(b % 19) - 9;
    return hostile[b % (sizeof hostile / sizeof hostile[0])];
  }
  int64_t index() {
    static const int64_t hostile[] = {SM_SLICE_NONE, INT64_MAX, INT64_MIN + 1, int64_t(1) << 40,
                                      -(int64_t(1) << 40), 1000, -1000};
    const uint8_t b = u8();
    if (b < 224) return static_cast<int64_t>(b % 21) - 10;
    return hostile[b % (sizeof hostile / sizeof hostile[0])];
  }
  int32_t dim() {
    static const int32_t hostile[] = {INT32_MIN, INT32_MAX, 16, -17, 100};
    const uint8_t b = u8();
    if (b < 232) return static_cast<int32_t>(b % 11) - 5;
    return hostile[b % (sizeof hostile / sizeof hostile[0])];
  }
  int32_t ndim() {
    static const int32_t hostile[] = {-1, 17, SM_MAX_DIMS, INT32_MIN, INT32_MAX, 15};
    const uint8_t b = u8();
    if (b < 240) return b % 6;
    return hostile[b % (sizeof hostile / sizeof hostile[0])];
  }
  sm_dtype dtype() {
    const uint8_t b = u8();
    if (b < 248) return b % kCorpusDTypes;
    static const sm_dtype hostile[] = {-1, SM_NUM_DTYPES, 99, INT32_MIN};
    return hostile[b % 4];
  }
  double scalar() {
    static const double table[] = {0, 1, -1, 2.5, -3, 1e10, -1e10, 0.5, 65504, 1e-10, 300, -129,
                                   7, 1e300, -0.0, __builtin_nan(""), __builtin_inf(), -__builtin_inf()};
    return table[u8() % (sizeof table / sizeof table[0])];
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

// A shape array of exactly min(max(nd, 0), SM_MAX_DIMS) entries on the heap,
// so a library that reads past ndim (or trusts a bad ndim) trips ASan.
struct Dims {
  std::vector<int64_t> v;
  const int64_t* ptr(bool null_when_empty) const {
    return v.empty() && null_when_empty ? nullptr : v.data();
  }
};

// ---- the model ------------------------------------------------------------

struct StorageM {
  int64_t nbytes = 0;
  bool alloc = false;   // from the caching allocator (counted in requested_bytes)
  int holds = -1;       // another storage kept alive while this one lives
  int ext = -1;         // external-deleter record that must run when it dies
  bool alive = true;
};
struct TensorM {
  sm_tensor h;
  int owners;
  int storage;
  int lease;  // -1: not from a stack
};
struct StorageHM {
  sm_storage h;
  int owners;
  int storage;
};
struct StackM {
  sm_stack h;
  int storage;
  bool released = false;
  bool alive = true;
  std::vector<int> entries;          // lease ids, bottom to top
  std::vector<std::pair<int64_t, size_t>> marks;  // library mark -> entry count then
};
struct LeaseM {
  int stack;
  bool valid;
};
struct ExportM {
  void* m;
  bool versioned;
  int storage;
};
// External memory (sm_from_blob with a deleter, hostile DLPack producers).
struct ExtM {
  void* mem = nullptr;   // what malloc returned
  void* data = nullptr;  // what the library was given (may point inside mem)
  int calls = 0;
  bool has_deleter = true;
};

// Sizes of 1 TiB and more must be refused. Where the kernel overcommits
// without limit (vm.overcommit_memory = 1) malloc would say yes, so the
// harness does not ask there (ASan builds cap allocations themselves).
bool huge_allowed() {
#ifdef SM_FUZZ_ASAN
  return true;
#else
  static const bool ok = [] {
    FILE* f = std::fopen("/proc/sys/vm/overcommit_memory", "r");
    int mode = 0;
    if (f) {
      if (std::fscanf(f, "%d", &mode) != 1) mode = 0;
      std::fclose(f);
    }
    return mode != 1;
  }();
  return ok;
#endif
}

void blob_deleter(void* data, void* ctx) {
  auto* e = static_cast<ExtM*>(ctx);
  e->calls++;
  REL_CHECK(data == e->data, "blob deleter got %p, expected %p", data, e->data);
  std::free(e->mem);
}

// A hostile producer's managed tensor (legacy or versioned) with its own
// memory and arrays; the deleter counts and frees.
struct Producer {
  ExtM* ext;
  std::vector<int64_t> shape, strides;
  union {
    sm_DLManagedTensor legacy;
    sm_DLManagedTensorVersioned versioned;
  } u;
};
void producer_free(Producer* p) {
  p->ext->calls++;
  std::free(p->ext->mem);
  delete p;
}
void producer_deleter_legacy(sm_DLManagedTensor* m) { producer_free(static_cast<Producer*>(m->manager_ctx)); }
void producer_deleter_versioned(sm_DLManagedTensorVersioned* m) {
  producer_free(static_cast<Producer*>(m->manager_ctx));
}

// p's managed tensor around dl, legacy or versioned (version 1.minor, flags):
// what a producer hands to sm_from_dlpack.
void* producer_managed(Producer* p, const sm_DLTensor& dl, bool versioned, uint32_t major = 1,
                       uint32_t minor = 0, uint64_t flags = 0) {
  if (versioned) {
    p->u.versioned.version = {major, minor};
    p->u.versioned.manager_ctx = p;
    p->u.versioned.deleter = producer_deleter_versioned;
    p->u.versioned.flags = flags;
    p->u.versioned.dl_tensor = dl;
    return &p->u.versioned;
  }
  p->u.legacy.dl_tensor = dl;
  p->u.legacy.manager_ctx = p;
  p->u.legacy.deleter = producer_deleter_legacy;
  return &p->u.legacy;
}

// Saturating arithmetic for the harness's own size computations: anything
// past 2^100 is simply "huge" (and never overflows __int128).
constexpr i128 kSat = i128(1) << 100;
i128 sat(i128 x) { return x > kSat ? kSat : (x < -kSat ? -kSat : x); }
i128 sat_mul(i128 a, i128 b) {
  a = sat(a);
  b = sat(b);
  if (a == 0 || b == 0) return 0;
  const i128 ma = a < 0 ? -a : a, mb = b < 0 ? -b : b;
  if (ma > kSat / mb) return (a < 0) != (b < 0) ? -kSat : kSat;
  return a * b;
}

// Element offsets a layout reaches relative to element [0, ..., 0]: [lo, hi].
// strides NULL: row-major. *negative: a size < 0; *empty: a size == 0.
void reach(const std::vector<int64_t>& shape, const std::vector<int64_t>* strides, i128* lo, i128* hi,
           bool* empty, bool* negative) {
  *lo = *hi = 0;
  *empty = *negative = false;
  i128 rm = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const int64_t n = shape[i];
    if (n < 0) *negative = true;
    if (n == 0) *empty = true;
    const i128 s = strides ? i128((*strides)[i]) : rm;
    if (n > 0) {
      const i128 ext = sat_mul(n - 1, s);
      if (ext < 0) *lo = sat(*lo + ext);
      else *hi = sat(*hi + ext);
    }
    if (!strides) rm = sat_mul(rm, n > 0 ? n : 1);
  }
  if (*empty) *lo = *hi = 0;
}

bool mul_ok(i128 a, i128 b, i128* out) {
  *out = a * b;
  return *out <= INT64_MAX && *out >= INT64_MIN;
}

// ---- element values: the conversion contract, computed independently ------
// (op WIDE checks the library's results against it). An element's exact
// value: integers (bool, signed, unsigned) as __int128, real floats as a
// double, complex numbers as two doubles; conversions as include/stridemem.h
// states them (sm_to).
struct Elem {
  enum Kind { Int, Real, Cplx } kind = Int;
  i128 i = 0;
  double re = 0, im = 0;
};
Elem real_elem(double v) {
  Elem e;
  e.kind = Elem::Real;
  e.re = v;
  return e;
}

bool dt_integral(sm_dtype d) {  // bool included
  return d == SM_BOOL || d == SM_UINT8 || d == SM_INT8 || d == SM_INT16 || d == SM_INT32 || d == SM_INT64 ||
         d == SM_UINT16 || d == SM_UINT32 || d == SM_UINT64;
}
bool dt_unsigned(sm_dtype d) { return d == SM_UINT8 || d == SM_UINT16 || d == SM_UINT32 || d == SM_UINT64; }
bool dt_complex(sm_dtype d) { return d == SM_COMPLEX64 || d == SM_COMPLEX128; }
bool dt_floating(sm_dtype d) {
  return d == SM_FLOAT16 || d == SM_BFLOAT16 || d == SM_FLOAT32 || d == SM_FLOAT64;
}
// The address alignment an element needs: its size; a complex type's, the
// size of one part (complex128 needs 8).
size_t dt_align(sm_dtype d) { return dt_complex(d) ? sm_dtype_size(d) / 2 : sm_dtype_size(d); }

// A binary floating-point format: p significant bits, normal exponents emin..emax.
struct FloatFormat {
  int p, emin, emax;
};
constexpr FloatFormat kFmtF16{11, -14, 15}, kFmtBF16{8, -126, 127}, kFmtF32{24, -126, 127},
    kFmtF64{53, -1022, 1023};
FloatFormat format_of(sm_dtype d) {  // a complex type: its part's
  switch (d) {
    case SM_FLOAT16: return kFmtF16;
    case SM_BFLOAT16: return kFmtBF16;
    case SM_FLOAT32: case SM_COMPLEX64: return kFmtF32;
    default: return kFmtF64;
  }
}
double largest_finite(const FloatFormat& f) { return std::ldexp(2.0 - std::ldexp(1.0, 1 - f.p), f.emax); }

// x rounded once to the nearest value of f (ties to even), subnormals kept,
// past the largest finite value: infinity.
double round_to(double x, const FloatFormat& f) {
  if (std::isnan(x) || std::isinf(x) || x == 0 || f.p == 53) return x;
  int e;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  const int q = std::max(e - 1, f.emin) - (f.p - 1);  // exponent of the last bit kept
  const double k = std::nearbyint(std::ldexp(std::fabs(x), -q));  // exact scaling; ties to even
  double r = std::ldexp(k, q);
  if (r > largest_finite(f)) r = HUGE_VAL;
  return std::copysign(r, x);
}
// An integer (|v| < 2^65) rounded once to f.
double round_int_to(i128 v, const FloatFormat& f) {
  if (v == 0) return 0.0;
  using u128 = unsigned __int128;
  u128 m = v < 0 ? u128(0) - static_cast<u128>(v) : static_cast<u128>(v);
  int bits = 0;
  for (u128 t = m; t; t >>= 1) ++bits;
  double r;
  if (bits <= f.p) {
    r = static_cast<double>(static_cast<uint64_t>(m));
  } else {
    const int s = bits - f.p;
    u128 kept = m >> s;
    const u128 rem = m & ((u128(1) << s) - 1), half = u128(1) << (s - 1);
    if (rem > half || (rem == half && (kept & 1))) ++kept;
    r = std::ldexp(static_cast<double>(static_cast<uint64_t>(kept)), s);
  }
  if (r > largest_finite(f)) r = HUGE_VAL;
  return v < 0 ? -r : r;
}

// v wrapped to d's bits (two's complement), as d's value.
i128 wrap_to(i128 v, sm_dtype d) {
  using u128 = unsigned __int128;
  const int n = static_cast<int>(sm_dtype_size(d)) * 8;
  const u128 u = static_cast<u128>(v) & ((u128(1) << n) - 1);
  if (!dt_unsigned(d) && ((u >> (n - 1)) & 1)) return static_cast<i128>(u) - (i128(1) << n);
  return static_cast<i128>(u);
}
// A float converted to integer dtype d: truncated toward zero, NaN 0; out of
// range, int64 saturates and narrower types saturate to int64 and wrap;
// uint64 takes [0, 2^64) as it is, wraps [-2^63, 0), saturates beyond.
i128 float_to_int(double x, sm_dtype d) {
  if (std::isnan(x)) return 0;
  constexpr double k63 = 9223372036854775808.0, k64 = 18446744073709551616.0;
  if (d == SM_UINT64) {
    if (x >= k64) return static_cast<i128>(UINT64_MAX);
    if (x >= k63) return static_cast<i128>(static_cast<uint64_t>(x));
  }
  i128 w;
  if (x >= k63) w = INT64_MAX;
  else if (x < -k63) w = INT64_MIN;
  else w = static_cast<i128>(static_cast<int64_t>(x));
  return wrap_to(w, d);
}

// v converted to dtype d.
Elem convert_elem(const Elem& v, sm_dtype d) {
  Elem r;
  if (d == SM_BOOL) {
    r.i = v.kind == Elem::Int ? v.i != 0 : (v.re != 0 || (v.kind == Elem::Cplx && v.im != 0));
    return r;
  }
  if (dt_integral(d)) {
    r.i = v.kind == Elem::Int ? wrap_to(v.i, d) : float_to_int(v.re, d);
    return r;
  }
  const FloatFormat f = format_of(d);
  r.kind = dt_complex(d) ? Elem::Cplx : Elem::Real;
  r.re = v.kind == Elem::Int ? round_int_to(v.i, f) : round_to(v.re, f);
  if (dt_complex(d) && v.kind == Elem::Cplx) r.im = round_to(v.im, f);
  return r;
}

double half_value(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : HUGE_VAL) : std::ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}
double bf16_value(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// The element of dtype d stored at p.
Elem load_elem(sm_dtype d, const uint8_t* p) {
  Elem e;
  auto rd = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (d) {
    case SM_BOOL: e.i = p[0] != 0; break;
    case SM_UINT8: e.i = p[0]; break;
    case SM_INT8: e.i = rd(int8_t()); break;
    case SM_INT16: e.i = rd(int16_t()); break;
    case SM_INT32: e.i = rd(int32_t()); break;
    case SM_INT64: e.i = rd(int64_t()); break;
    case SM_UINT16: e.i = rd(uint16_t()); break;
    case SM_UINT32: e.i = rd(uint32_t()); break;
    case SM_UINT64: e.i = rd(uint64_t()); break;
    case SM_FLOAT16: e = real_elem(half_value(rd(uint16_t()))); break;
    case SM_BFLOAT16: e = real_elem(bf16_value(rd(uint16_t()))); break;
    case SM_FLOAT32: e = real_elem(rd(float())); break;
    case SM_FLOAT64: e = real_elem(rd(double())); break;
    case SM_COMPLEX64:
      e.kind = Elem::Cplx;
      e.re = rd(float());
      e.im = rd(std::array<float, 2>())[1];
      break;
    default:
      e.kind = Elem::Cplx;
      e.re = rd(double());
      e.im = rd(std::array<double, 2>())[1];
      break;
  }
  return e;
}
bool same_double(double a, double b) {  // NaNs alike whatever their payload; signed zeros differ
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}
bool same_elem(const Elem& a, const Elem& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Elem::Int) return a.i == b.i;
  return same_double(a.re, b.re) && same_double(a.im, b.im);
}
std::string elem_str(const Elem& e) {
  char buf[96];
  if (e.kind == Elem::Int)
    std::snprintf(buf, sizeof buf, "%s0x%016llx%016llx", e.i < 0 ? "-" : "",
                  (unsigned long long)((e.i < 0 ? -e.i : e.i) >> 64),
                  (unsigned long long)(e.i < 0 ? -e.i : e.i));
  else if (e.kind == Elem::Real)
    std::snprintf(buf, sizeof buf, "%a", e.re);
  else
    std::snprintf(buf, sizeof buf, "(%a, %a)", e.re, e.im);
  return buf;
}

// Scalars a dtype takes as an element (sm_full, FILL, CLAMP bounds): bool
// any; floats and complex NaN, infinities and finite values up to the
// largest finite one; integers finite values in [lowest, max] (a fraction
// inside truncates).
bool scalar_fits_dtype(sm_dtype d, double v) {
  if (d == SM_BOOL) return true;
  if (!dt_integral(d)) return std::isnan(v) || std::isinf(v) || std::fabs(v) <= largest_finite(format_of(d));
  if (!std::isfinite(v)) return false;
  constexpr double k63 = 9223372036854775808.0, k64 = 18446744073709551616.0;
  if (d == SM_INT64) return v >= -k63 && v < k63;
  if (d == SM_UINT64) return v >= 0 && v < k64;
  const int bits = static_cast<int>(sm_dtype_size(d)) * 8;
  const double lo = dt_unsigned(d) ? 0 : -std::ldexp(1.0, bits - 1);
  const double hi = dt_unsigned(d) ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
  return v >= lo && v <= hi;
}
// An operand of integer arithmetic (ADD/SUB/MUL scalars, alpha, CLAMP
// bounds): a whole number of int64, or for uint64 of [-2^63, 2^64).
bool whole_operand(sm_dtype d, double v) {
  const double hi = d == SM_UINT64 ? 18446744073709551616.0 : 9223372036854775808.0;
  return v == std::floor(v) && v >= -9223372036854775808.0 && v < hi;
}

// The dtypes in.dtype() never yields (it keeps to the corpus's ten): op WIDE's.
constexpr sm_dtype kWideDTypes[5] = {SM_UINT16, SM_UINT32, SM_UINT64, SM_COMPLEX64, SM_COMPLEX128};
bool is_wide(sm_dtype d) { return std::find(std::begin(kWideDTypes), std::end(kWideDTypes), d) != std::end(kWideDTypes); }

struct Fuzz {
  explicit Fuzz(In in) : in(in) {}
  In in;
  std::vector<StorageM> storages;
  std::vector<TensorM> tensors;
  std::vector<StorageHM> shandles;
  std::vector<StackM> stacks;
  std::vector<LeaseM> leases;
  std::vector<ExportM> exports;
  std::vector<std::unique_ptr<ExtM>> exts;
  std::vector<sm_tensor> tgrave;
  std::vector<sm_storage> sgrave;
  std::vector<sm_stack> kgrave;
  rel::State base;
  int64_t base_allocated = 0, base_requested = 0;
  bool fault_armed = false;
  int64_t calls = 0;

  // ---- model queries ----
  bool lease_valid(int lease) const { return lease < 0 || leases[static_cast<size_t>(lease)].valid; }
  int find_tensor(sm_tensor h) const {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].h == h) return static_cast<int>(i);
    return -1;
  }
  int new_storage(int64_t nbytes, bool alloc, int holds = -1, int ext = -1) {
    StorageM s;
    s.nbytes = nbytes;
    s.alloc = alloc;
    s.holds = holds;
    s.ext = ext;
    storages.push_back(s);
    return static_cast<int>(storages.size() - 1);
  }
  int new_ext(void* mem, bool has_deleter) {
    exts.emplace_back(new ExtM);
    exts.back()->mem = mem;
    exts.back()->has_deleter = has_deleter;
    return static_cast<int>(exts.size() - 1);
  }
  void add_tensor(sm_tensor h, int storage, int lease) {
    REL_CHECK(find_tensor(h) < 0, "a new tensor handle %p equals a live one", (void*)h);
    check_new_handle(h, rel::kTagTensor, "a new tensor");
    tensors.push_back(TensorM{h, 1, storage, lease});
  }

  // ---- handle freshness ----
  // A handle value is never issued twice (include/stridemem.h): every new
  // handle differs from every live one and from every released one the
  // harness keeps (the graveyards). White-box (rel::handle_bits): a slot's
  // generations only grow within an input, so a generation that wrapped, or
  // a retired slot handed out again, is caught even when the value it repeats
  // was issued before this input began.
  std::map<uint64_t, uint32_t> max_gen;  // (kind, slot) -> highest generation issued
  template <class H>
  static void bury(std::vector<H>& grave, H h) {
    grave.push_back(h);
    if (grave.size() > 64) grave.erase(grave.begin());
  }
  bool handle_is_live(const void* h, uint32_t kind) const {
    if (kind == rel::kTagTensor) return find_tensor(static_cast<sm_tensor>(const_cast<void*>(h))) >= 0;
    if (kind == rel::kTagStorage) {
      for (const StorageHM& s : shandles)
        if (s.h == h) return true;
      return false;
    }
    for (const StackM& k : stacks)
      if (!k.released && k.h == h) return true;
    return false;
  }
  bool handle_in_grave(const void* h, uint32_t kind) const {
    if (kind == rel::kTagTensor) return std::find(tgrave.begin(), tgrave.end(), h) != tgrave.end();
    if (kind == rel::kTagStorage) return std::find(sgrave.begin(), sgrave.end(), h) != sgrave.end();
    return std::find(kgrave.begin(), kgrave.end(), h) != kgrave.end();
  }
  // `live_too`: also check it against the live handles (false when the
  // caller has already put it among them).
  void check_new_handle(const void* h, uint32_t kind, const char* what, bool live_too = false) {
    const rel::HandleBits b = rel::handle_bits(h);
    REL_CHECK(b.kind == kind && b.slot != 0 && b.generation != 0,
              "%s handle %p is no handle of kind %u", what, h, kind);
    if (live_too) REL_CHECK(!handle_is_live(h, kind), "%s handle %p equals a live one", what, h);
    REL_CHECK(!handle_in_grave(h, kind), "%s handle %p equals a released one (issued twice)", what, h);
    const uint64_t key = (static_cast<uint64_t>(kind) << 32) | b.slot;
    const auto it = max_gen.find(key);
    if (it != max_gen.end())
      REL_CHECK(b.generation > it->second,
                "%s handle %p: slot %u issued generation %u after generation %u (wrapped, or "
                "handed out again after retiring)",
                what, h, b.slot, b.generation, it->second);
    if (it == max_gen.end() || b.generation > it->second) max_gen[key] = b.generation;
  }

  // Storage liveness from the roots; checks external deleters ran exactly
  // when the last reference died.
  void recompute_liveness() {
    std::vector<char> live(storages.size(), 0), stack_live(stacks.size(), 0);
    for (const TensorM& t : tensors) {
      live[static_cast<size_t>(t.storage)] = 1;
      if (t.lease >= 0) stack_live[static_cast<size_t>(leases[static_cast<size_t>(t.lease)].stack)] = 1;
    }
    for (const StorageHM& s : shandles) live[static_cast<size_t>(s.storage)] = 1;
    for (size_t i = 0; i < stacks.size(); ++i) {
      if (!stacks[i].released) stack_live[i] = 1;
      if (stack_live[i]) live[static_cast<size_t>(stacks[i].storage)] = 1;
      stacks[i].alive = stack_live[i] != 0;
    }
    for (const ExportM& e : exports) live[static_cast<size_t>(e.storage)] = 1;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < storages.size(); ++i)
        if (live[i] && storages[i].holds >= 0 && !live[static_cast<size_t>(storages[i].holds)]) {
          live[static_cast<size_t>(storages[i].holds)] = 1;
          changed = true;
        }
    }
    for (size_t i = 0; i < storages.size(); ++i) {
      StorageM& s = storages[i];
      if (s.alive && !live[i]) s.alive = false;
      REL_CHECK(s.alive == (live[i] != 0), "model bug: storage %zu came back to life", i);
      if (s.ext >= 0) {
        const ExtM& e = *exts[static_cast<size_t>(s.ext)];
        if (e.has_deleter)
          REL_CHECK(e.calls == (s.alive ? 0 : 1),
                    "external deleter of storage %zu ran %d times while the storage is %s", i,
                    e.calls, s.alive ? "alive" : "dead");
      }
    }
  }

  // The statistics must match the model.
  void check_accounting() {
    recompute_liveness();
    int64_t requested = 0, rounded = 0, nstorages = 0;
    for (const StorageM& s : storages) {
      if (!s.alive) continue;
      ++nstorages;
      if (!s.alloc) continue;
      requested += s.nbytes;
      rounded += (s.nbytes + SM_ALLOC_ROUND - 1) / SM_ALLOC_ROUND * SM_ALLOC_ROUND;
    }
    // Exports that normalized to a copy hold an allocator storage no handle sees.
    const rel::State g = rel::state();
    REL_CHECK(g.requested_bytes - base.requested_bytes == requested,
              "requested_bytes %lld (start %lld), but live storages hold %lld",
              (long long)g.requested_bytes, (long long)base.requested_bytes, (long long)requested);
    const int64_t alloc = g.allocated_bytes - base.allocated_bytes;
    // Blocks are rounded to SM_ALLOC_ROUND; a cached large block is reused
    // when it wastes at most 1/8 of itself.
    REL_CHECK(alloc >= rounded && alloc * 7 <= rounded * 8,
              "allocated_bytes %lld above the start, live storages need %lld (rounded)",
              (long long)alloc, (long long)rounded);
    REL_CHECK(g.active_storages - base.active_storages == nstorages,
              "active_storages %lld above the start, model has %lld live storages",
              (long long)(g.active_storages - base.active_storages), (long long)nstorages);
    int64_t nstacks = 0;
    for (const StackM& k : stacks) nstacks += !k.released;
    REL_CHECK(g.tensors - base.tensors == static_cast<int64_t>(tensors.size()),
              "live tensor handles %lld above the start, model has %zu",
              (long long)(g.tensors - base.tensors), tensors.size());
    REL_CHECK(g.storages - base.storages == static_cast<int64_t>(shandles.size()),
              "live storage handles %lld above the start, model has %zu",
              (long long)(g.storages - base.storages), shandles.size());
    REL_CHECK(g.stacks - base.stacks == nstacks, "live stack handles %lld above the start, model has %lld",
              (long long)(g.stacks - base.stacks), (long long)nstacks);
    REL_CHECK(g.active_views >= base.active_views, "active_views fell below its start");
  }

  // ---- handle picking ----
  struct Pick {
    sm_tensor h = nullptr;
    int slot = -1;       // index in tensors, -1 when not a live handle
    bool valid = false;  // live and not popped
  };
  Pick pick_tensor() {
    Pick p;
    const uint8_t b = in.u8();
    if (!tensors.empty() && b < 216) {
      p.slot = b % static_cast<int>(tensors.size());
    } else {
      switch (b % 6) {
        case 0: p.h = nullptr; break;
        case 1: p.h = tgrave.empty() ? nullptr : tgrave[b % tgrave.size()]; break;
        case 2: p.h = reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(in.u64())); break;
        case 3:  // another kind's handle
          if (!shandles.empty()) p.h = reinterpret_cast<sm_tensor>(shandles[0].h);
          else if (!stacks.empty()) p.h = reinterpret_cast<sm_tensor>(stacks[0].h);
          else p.h = reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0x2000000100000001ull));
          break;
        case 4:  // a live handle with another generation
          p.h = tensors.empty() ? reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0x1000000100000001ull))
                                : reinterpret_cast<sm_tensor>(reinterpret_cast<uintptr_t>(tensors[0].h) ^
                                                              (uint64_t(1) << 33));
          break;
        default:  // an index past every slot
          p.h = reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0x10000001000F0000ull));
          break;
      }
      p.slot = find_tensor(p.h);  // a forgery that names a live handle is that handle
    }
    if (p.slot >= 0) {
      p.h = tensors[static_cast<size_t>(p.slot)].h;
      p.valid = lease_valid(tensors[static_cast<size_t>(p.slot)].lease);
    }
    return p;
  }
  // A storage handle: live or not.
  int pick_shandle(sm_storage* h) {
    const uint8_t b = in.u8();
    if (!shandles.empty() && b < 200) {
      const int i = b % static_cast<int>(shandles.size());
      *h = shandles[static_cast<size_t>(i)].h;
      return i;
    }
    if (b % 3 == 0) *h = nullptr;
    else if (b % 3 == 1 && !sgrave.empty()) *h = sgrave[b % sgrave.size()];
    else *h = reinterpret_cast<sm_storage>(tensors.empty() ? static_cast<uintptr_t>(0x77)
                                                           : reinterpret_cast<uintptr_t>(tensors[0].h));
    for (size_t i = 0; i < shandles.size(); ++i)
      if (shandles[i].h == *h) return static_cast<int>(i);
    return -1;
  }
  int pick_stack(sm_stack* h) {
    const uint8_t b = in.u8();
    std::vector<int> open;
    for (size_t i = 0; i < stacks.size(); ++i)
      if (!stacks[i].released) open.push_back(static_cast<int>(i));
    if (!open.empty() && b < 216) {
      const int i = open[b % open.size()];
      *h = stacks[static_cast<size_t>(i)].h;
      return i;
    }
    if (b % 3 == 0) *h = nullptr;
    else if (b % 3 == 1 && !kgrave.empty()) *h = kgrave[b % kgrave.size()];
    else *h = reinterpret_cast<sm_stack>(static_cast<uintptr_t>(0x3000000100000009ull));
    for (size_t i = 0; i < stacks.size(); ++i)
      if (!stacks[i].released && stacks[i].h == *h) return static_cast<int>(i);
    return -1;
  }

  Dims dims(int32_t nd, bool strides) {
    Dims d;
    const int n = nd < 0 ? 0 : (nd > SM_MAX_DIMS ? SM_MAX_DIMS : nd);
    d.v.resize(static_cast<size_t>(n));
    for (int64_t& x : d.v) x = strides ? in.stride() : in.size();
    return d;
  }

  // ---- generic result checks ----

  // Every call: a known status, a message on failure.
  void check_status(sm_status st, const char* what) {
    ++calls;
    static const bool trace = std::getenv("SM_FUZZ_TRACE") != nullptr;
    if (trace)
      std::fprintf(stderr, "  %-34s -> %-2d %s\n", what, (int)st, st ? sm_last_error() : "");
    REL_CHECK(st >= SM_OK && st <= SM_ERR_READ_ONLY, "%s returned unknown status %d", what, (int)st);
    REL_CHECK(st != SM_ERR_INTERNAL, "%s -> SM_ERR_INTERNAL", what);
    if (st != SM_OK) REL_CHECK(sm_last_error()[0] != '\0', "%s failed without a message", what);
  }

  // A failure changed nothing global.
  void check_unchanged(const rel::State& before, const char* what) {
    const rel::State now = rel::state();
    REL_CHECK(now == before, "failing %s changed the state: %s -> %s", what, before.str().c_str(),
              now.str().c_str());
  }

  // A new tensor that views storage `storage` (parent's meta given, or null).
  bool check_view(sm_tensor out, const rel::Meta* parent, const char* what, rel::Meta* m) {
    if (!rel::meta_of(out, m)) return false;
    bool ok = m->ndim >= 0 && m->ndim <= SM_MAX_DIMS;
    i128 numel = 1;
    for (int i = 0; ok && i < m->ndim; ++i) {
      ok = m->shape[i] >= 0;
      numel *= m->shape[i];
      if (numel > INT64_MAX) numel = INT64_MAX;  // (reported below)
    }
    REL_CHECK(ok, "%s: bad ndim/shape", what);
    REL_CHECK(numel == m->numel, "%s: numel %lld != product of the shape", what, (long long)m->numel);
    REL_CHECK(i128(m->numel) * i128(m->itemsize) == m->nbytes, "%s: nbytes %lld != numel * itemsize",
              what, (long long)m->nbytes);
    if (m->numel > 0) {
      i128 lo, hi;
      bool empty, negative;
      const std::vector<int64_t> shape(m->shape, m->shape + m->ndim), strides(m->strides, m->strides + m->ndim);
      reach(shape, &strides, &lo, &hi, &empty, &negative);
      lo += m->offset;
      hi += m->offset;
      REL_CHECK(lo >= 0 && (hi + 1) * i128(m->itemsize) <= m->storage_nbytes,
                "%s: the view reaches elements [%lld, %lld] outside its storage of %lld bytes", what,
                (long long)lo, (long long)hi, (long long)m->storage_nbytes);
    }
    if (parent) {
      REL_CHECK(rel::storage_base(*m) == rel::storage_base(*parent) || parent->storage_nbytes == 0,
                "%s: the view's storage base differs from its parent's", what);
      REL_CHECK(m->storage_nbytes == parent->storage_nbytes, "%s: storage size changed", what);
      REL_CHECK(m->version == parent->version, "%s: version counter differs from the parent's", what);
    }
    return true;
  }

  // Same bytes, read straight from memory.
  void check_same_elements(const rel::Meta& a, const rel::Meta& b, const char* what) {
    if (a.numel > kMaxTouch || a.numel != b.numel || a.itemsize != b.itemsize) return;
    REL_CHECK(rel::gather_bytes(a) == rel::gather_bytes(b), "%s: elements differ from the source", what);
  }

  // Whole-storage byte snapshot of a CPU tensor (storages are <= kMaxBytes
  // unless they are empty or the view is a huge import of a tiny buffer).
  std::vector<uint8_t> storage_bytes(const rel::Meta& m) {
    const char* base = rel::storage_base(m);
    if (m.storage_nbytes <= 0 || m.storage_nbytes > kMaxBytes) return {};
    std::vector<uint8_t> v(base, base + m.storage_nbytes);
    rel::mark_defined(v.data(), v.size());
    return v;
  }

  // ---- ops ----
  void run() {
    base = rel::state();
    for (int steps = 0; !in.empty() && steps < 200; ++steps) {
      const uint8_t op = in.u8();
      if (op >= kFirstNewOp) {  // (below it: op WIDE, or op % 17)
        switch ((op - kFirstNewOp) % 6) {
          case 0: op_generations(); break;
          case 1: op_review(); break;
          case 2: op_dlpack_address(); break;
          case 3: op_empty_huge(); break;
          case 4: op_stats(); break;
          default: op_expanded_index(); break;
        }
        check_accounting();
        continue;
      }
      if (std::find(std::begin(kWideOpBytes), std::end(kWideOpBytes), op) != std::end(kWideOpBytes)) {
        op_wide();
        check_accounting();
        continue;
      }
      switch (op % 17) {
        case 0: op_create(); break;
        case 1: op_from_blob(); break;
        case 2: op_view_a(); break;
        case 3: op_view_b(); break;
        case 4: op_view_c(); break;
        case 5: op_copy(); break;
        case 6: op_write(true); break;
        case 7: op_write(false); break;
        case 8: op_write(false); break;
        case 9: op_release(); break;
        case 10: op_retain(); break;
        case 11: op_storage(); break;
        case 12: op_stack(); break;
        case 13: op_meta(); break;
        case 14: op_fault(); break;
        case 15: op_dlpack(); break;
        default: op_misc(); break;
      }
      check_accounting();
    }
    teardown();
  }

  // Bytes a dense tensor of this shape needs; -1 when a dim is negative, -2 on overflow.
  static i128 dense_bytes(const Dims& d, int32_t nd, sm_dtype dt) {
    if (nd < 0 || nd > SM_MAX_DIMS) return -1;
    i128 n = static_cast<i128>(dt >= 0 && dt < SM_NUM_DTYPES ? sm_dtype_size(dt) : 1);
    bool over = false;
    for (int64_t x : d.v) {
      if (x < 0) return -1;
      if (!over && !mul_ok(n, x, &n)) over = true;
    }
    if (over) {
      for (int64_t x : d.v)
        if (x == 0) return 0;
      return -2;
    }
    return n;
  }
  // Sizes the harness does not ask for: valid but slow (1 MiB .. 1 TiB).
  static bool mid_size(i128 bytes) { return bytes > kMaxBytes && bytes < kHuge; }

  void op_create() {
    const int kind = in.u8() % 6;
    const int32_t nd = in.ndim();
    const Dims shape = dims(nd, false);
    const sm_dtype dt = in.dtype();
    const bool dt_ok = dt >= 0 && dt < SM_NUM_DTYPES;
    const size_t item = dt_ok ? sm_dtype_size(dt) : 0;
    const bool shape_null = in.u8() % 4 == 0;
    sm_tensor out = kSentT;
    sm_status st;
    int64_t expect_nbytes = -1;  // storage size the contract implies
    const rel::State before = rel::state();
    const i128 bytes = dense_bytes(shape, nd, dt);
    if (kind == 5) {  // empty_strided
      const Dims strides = dims(nd, true);
      // Span in elements: 1 + sum (size-1)*|stride|; 0 when empty.
      i128 lo, hi;
      bool empty, negative;
      reach(shape.v, &strides.v, &lo, &hi, &empty, &negative);
      const i128 span = hi - lo + 1;
      const bool neg = bytes == -1;
      const bool over = !empty && span > INT64_MAX;  // no element: the strides reach nothing
      const i128 sbytes = empty ? 0 : sat_mul(span, item ? item : 1);
      if (!neg && !over && dt_ok && mid_size(sbytes)) return;
      if (!neg && !over && dt_ok && sbytes >= kHuge && !huge_allowed()) return;
      if (!neg && !over && dt_ok && sbytes <= INT64_MAX) expect_nbytes = static_cast<int64_t>(sbytes);
      st = sm_empty_strided(shape.ptr(shape_null), strides.ptr(shape_null), nd, dt, rel::cpu(), &out);
    } else if (kind == 4) {  // from_host: the harness owns numel*itemsize bytes when it can
      if (mid_size(bytes) || (bytes >= kHuge && !huge_allowed())) return;
      const bool fits = bytes >= 0 && bytes <= kMaxBytes;
      std::vector<uint8_t> data(fits ? static_cast<size_t>(bytes) : 16);
      for (uint8_t& x : data) x = in.u8();
      if (dt == SM_BOOL)
        for (uint8_t& x : data) x &= 1;
      const bool null_data = in.u8() % 8 == 0;
      // (NULL data is fine for zero bytes.)
      if (fits && dt_ok && (!null_data || bytes == 0)) expect_nbytes = static_cast<int64_t>(bytes);
      st = sm_from_host(null_data ? nullptr : data.data(), shape.ptr(shape_null), nd, dt, rel::cpu(), &out);
      if (st == SM_OK && fits && bytes > 0) {
        std::vector<uint8_t> back;
        if (rel::copy_out(out, static_cast<int64_t>(bytes), &back))
          REL_CHECK(back == data, "sm_from_host then sm_copy_to_host: bytes differ");
      }
    } else if (kind == 3) {  // arange
      const int64_t n = in.size();
      const double start = in.scalar(), step = in.scalar();
      i128 b = i128(n) * i128(item ? item : 1);
      if (n >= 0 && dt_ok && (mid_size(b) || (b >= kHuge && !huge_allowed()))) return;
      if (n >= 0 && dt_ok && b <= INT64_MAX) expect_nbytes = static_cast<int64_t>(b);
      st = sm_arange(start, step, n, dt, rel::cpu(), &out);
    } else {
      if (bytes >= 0 && dt_ok && (mid_size(bytes) || (bytes >= kHuge && !huge_allowed()))) return;
      if (bytes >= 0 && dt_ok) expect_nbytes = static_cast<int64_t>(bytes);
      const double v = in.scalar();
      if (kind == 0) st = sm_empty(shape.ptr(shape_null), nd, dt, rel::cpu(), &out);
      else if (kind == 1) st = sm_zeros(shape.ptr(shape_null), nd, dt, rel::cpu(), &out);
      else st = sm_full(shape.ptr(shape_null), nd, v, dt, rel::cpu(), &out);
    }
    check_status(st, "creation");
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing creation (kind %d) wrote its output", kind);
      check_unchanged(before, "creation");
      return;
    }
    REL_CHECK(expect_nbytes >= 0 && expect_nbytes < kHuge,
              "creation kind %d succeeded for a request the contract refuses (ndim %d, dtype %d)",
              kind, nd, dt);
    rel::Meta m;
    if (!check_view(out, nullptr, "creation", &m)) return;
    if (expect_nbytes >= 0)
      REL_CHECK(m.storage_nbytes == expect_nbytes, "creation kind %d: storage of %lld bytes, expected %lld",
                kind, (long long)m.storage_nbytes, (long long)expect_nbytes);
    if (tensors.size() >= kMaxTensors) {  // keep the pool small: drop it again
      check_new_handle(out, rel::kTagTensor, "a new tensor", true);
      REL_OK(sm_tensor_release(out));
      bury(tgrave, out);
      return;
    }
    add_tensor(out, new_storage(m.storage_nbytes, true), -1);
  }

  void op_from_blob() {
    const int32_t nd = in.ndim();
    const Dims shape = dims(nd, false);
    const bool with_strides = in.u8() & 1;
    const Dims strides = dims(nd, true);
    const sm_dtype dt = in.dtype();
    const bool with_deleter = in.u8() % 4 != 0;
    const size_t misalign = in.u8() % 8 == 0 ? 1 : 0;  // an odd address: refused, or no UB
    const bool dt_ok = dt >= 0 && dt < SM_NUM_DTYPES;
    // Elements the layout reaches (row-major when no strides): min/max offset.
    i128 lo, hi;
    bool empty, negative;
    reach(shape.v, with_strides ? &strides.v : nullptr, &lo, &hi, &empty, &negative);
    const bool bad = nd < 0 || nd > SM_MAX_DIMS || !dt_ok || negative;
    // The element at offset 0 is data[0]: the buffer covers [lo, hi].
    const i128 span_bytes = sat_mul(hi - lo + 1, dt_ok ? sm_dtype_size(dt) : 1);
    if (!bad && (span_bytes > kMaxBytes || hi > INT64_MAX || lo < INT64_MIN)) return;  // cannot own it
    if (bad && span_bytes > kMaxBytes) return;
    const size_t nb = static_cast<size_t>(span_bytes > 0 ? span_bytes : 1) + misalign;
    char* mem = static_cast<char*>(std::malloc(nb));
    std::memset(mem, 0x11, nb);
    void* data = mem + misalign - static_cast<int64_t>(lo) * static_cast<int64_t>(dt_ok ? sm_dtype_size(dt) : 1);
    const int e = new_ext(mem, with_deleter);
    ExtM* ext = exts[static_cast<size_t>(e)].get();
    ext->data = data;
    sm_tensor out = kSentT;
    const rel::State before = rel::state();
    const sm_status st =
        sm_from_blob(data, shape.ptr(true), with_strides ? strides.ptr(true) : nullptr, nd, dt,
                     rel::cpu(), with_deleter ? blob_deleter : nullptr, ext, &out);
    check_status(st, "sm_from_blob");
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing sm_from_blob wrote its output");
      REL_CHECK(ext->calls == 0, "failing sm_from_blob called the deleter");
      check_unchanged(before, "sm_from_blob");
      std::free(mem);
      ext->mem = nullptr;
      ext->has_deleter = false;
      return;
    }
    REL_CHECK(!bad, "sm_from_blob accepted ndim %d / dtype %d / a negative size", nd, dt);
    rel::Meta m;
    check_view(out, nullptr, "sm_from_blob", &m);
    REL_CHECK(m.data == data || m.numel == 0, "sm_from_blob: data pointer moved");
    const int s = new_storage(m.storage_nbytes, false, -1, e);
    add_tensor(out, s, -1);
    if (!with_deleter) blobs_without_deleter.push_back(mem);
  }
  std::vector<void*> blobs_without_deleter;

  // A view op on a picked tensor; `call` gets the handle and the out pointer.
  template <class F>
  void view_op(const char* what, F&& call) {
    const Pick p = pick_tensor();
    rel::Meta pm;
    if (p.valid) rel::meta_of(p.h, &pm);
    sm_tensor out = kSentT;
    const rel::State before = rel::state();
    const sm_status st = call(p.h, &out);
    check_status(st, what);
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing %s wrote its output", what);
      check_unchanged(before, what);
      return;
    }
    REL_CHECK(p.valid, "%s accepted an invalid handle %p", what, (void*)p.h);
    if (!p.valid) return;
    rel::Meta m;
    if (check_view(out, &pm, what, &m)) REL_CHECK(m.dtype == pm.dtype, "%s changed the dtype", what);
    const TensorM& t = tensors[static_cast<size_t>(p.slot)];
    add_tensor(out, t.storage, t.lease);
  }

  void op_view_a() {
    const int kind = in.u8() % 5;
    const int32_t nd = in.ndim();
    const Dims shape = dims(nd, false);
    if (kind == 0) {
      Dims s = shape;
      if (!s.v.empty() && in.u8() % 2) s.v[in.u8() % s.v.size()] = -1;
      view_op("sm_view", [&](sm_tensor t, sm_tensor* o) { return sm_view(t, s.ptr(true), nd, o); });
    } else if (kind == 1) {
      const Dims strides = dims(nd, true);
      const int64_t off = in.index();
      view_op("sm_as_strided", [&](sm_tensor t, sm_tensor* o) {
        return sm_as_strided(t, shape.ptr(true), strides.ptr(true), nd, off, o);
      });
    } else if (kind == 2) {
      const int32_t d = in.dim();
      const int64_t a = in.index(), b = in.index(), step = in.index();
      view_op("sm_slice", [&](sm_tensor t, sm_tensor* o) { return sm_slice(t, d, a, b, step, o); });
    } else if (kind == 3) {
      const int32_t d = in.dim();
      const int64_t a = in.index(), len = in.index();
      view_op("sm_narrow", [&](sm_tensor t, sm_tensor* o) { return sm_narrow(t, d, a, len, o); });
    } else {
      const int32_t d = in.dim();
      const int64_t i = in.index();
      view_op("sm_select", [&](sm_tensor t, sm_tensor* o) { return sm_select(t, d, i, o); });
    }
  }

  std::vector<int32_t> dim_list(int32_t n) {
    std::vector<int32_t> v(static_cast<size_t>(n < 0 ? 0 : std::min(n, SM_MAX_DIMS)));
    for (int32_t& x : v) x = in.dim();
    return v;
  }

  void op_view_b() {
    const int kind = in.u8() % 6;
    if (kind == 0) {
      const int32_t n = in.ndim();
      std::vector<int32_t> perm = dim_list(n);
      if (in.u8() % 2)  // a real permutation, more often accepted
        for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int32_t>((i + perm.size() - 1) % perm.size());
      view_op("sm_permute", [&](sm_tensor t, sm_tensor* o) { return sm_permute(t, perm.empty() ? nullptr : perm.data(), n, o); });
    } else if (kind == 1) {
      const int32_t a = in.dim(), b = in.dim();
      view_op("sm_transpose", [&](sm_tensor t, sm_tensor* o) { return sm_transpose(t, a, b, o); });
    } else if (kind == 2) {
      const int32_t n = in.ndim();
      const std::vector<int32_t> s = dim_list(n), d = dim_list(n);
      view_op("sm_movedim", [&](sm_tensor t, sm_tensor* o) {
        return sm_movedim(t, s.empty() ? nullptr : s.data(), d.empty() ? nullptr : d.data(), n, o);
      });
    } else if (kind == 3) {
      const int32_t nd = in.ndim();
      Dims s = dims(nd, false);
      for (int64_t& x : s.v)
        if (in.u8() % 3 == 0) x = -1;
      view_op("sm_expand", [&](sm_tensor t, sm_tensor* o) { return sm_expand(t, s.ptr(true), nd, o); });
    } else if (kind == 4) {
      const int32_t n = in.ndim();
      const std::vector<int32_t> d = dim_list(n);
      view_op("sm_squeeze", [&](sm_tensor t, sm_tensor* o) { return sm_squeeze(t, d.empty() ? nullptr : d.data(), n, o); });
    } else {
      const int32_t d = in.dim();
      view_op("sm_unsqueeze", [&](sm_tensor t, sm_tensor* o) { return sm_unsqueeze(t, d, o); });
    }
  }

  void op_view_c() {
    const int kind = in.u8() % 7;
    if (kind == 0) {
      const int32_t a = in.dim(), b = in.dim();
      view_op("sm_flatten", [&](sm_tensor t, sm_tensor* o) { return sm_flatten(t, a, b, o); });
    } else if (kind == 1) {
      const int32_t d = in.dim(), n = in.ndim();
      Dims s = dims(n, false);
      if (!s.v.empty() && in.u8() % 2) s.v[0] = -1;
      view_op("sm_unflatten", [&](sm_tensor t, sm_tensor* o) { return sm_unflatten(t, d, s.ptr(true), n, o); });
    } else if (kind == 2) {
      const int32_t d = in.dim();
      const int64_t size = in.index(), step = in.index();
      view_op("sm_unfold", [&](sm_tensor t, sm_tensor* o) { return sm_unfold(t, d, size, step, o); });
    } else if (kind == 3) {
      const int64_t off = in.index();
      const int32_t a = in.dim(), b = in.dim();
      view_op("sm_diagonal", [&](sm_tensor t, sm_tensor* o) { return sm_diagonal(t, off, a, b, o); });
    } else if (kind == 4) {
      const int32_t n = in.ndim();
      const std::vector<int32_t> d = dim_list(n);
      view_op("sm_flip", [&](sm_tensor t, sm_tensor* o) { return sm_flip(t, d.empty() ? nullptr : d.data(), n, o); });
    } else {
      split_op(kind == 5);
    }
  }

  // sm_split / sm_chunk: outs untouched on failure, exactly *count written.
  void split_op(bool split) {
    const Pick p = pick_tensor();
    const int64_t size = in.index();
    const int32_t d = in.dim();
    const int32_t cap = static_cast<int32_t>(in.u8() % 12) - 1;
    const bool null_outs = in.u8() % 5 == 0;
    std::vector<sm_tensor> outs(static_cast<size_t>(cap > 0 ? cap : 0) + 4, kSentT);
    int32_t count = -7;
    rel::Meta pm;
    if (p.valid) rel::meta_of(p.h, &pm);
    const rel::State before = rel::state();
    const sm_status st = split ? sm_split(p.h, size, d, null_outs ? nullptr : outs.data(), cap, &count)
                               : sm_chunk(p.h, static_cast<int32_t>(size), d, null_outs ? nullptr : outs.data(), cap, &count);
    const char* what = split ? "sm_split" : "sm_chunk";
    check_status(st, what);
    if (st != SM_OK) {
      for (sm_tensor o : outs) REL_CHECK(o == kSentT, "failing %s wrote an output", what);
      REL_CHECK(count == -7, "failing %s wrote *count", what);
      check_unchanged(before, what);
      return;
    }
    REL_CHECK(p.valid, "%s accepted an invalid handle", what);
    REL_CHECK(count >= 0, "%s: count %d", what, count);
    if (null_outs) {
      for (sm_tensor o : outs) REL_CHECK(o == kSentT, "%s with outs == NULL wrote outputs", what);
      return;
    }
    REL_CHECK(count <= cap, "%s wrote %d views into capacity %d", what, count, cap);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (static_cast<int32_t>(i) >= count) {
        REL_CHECK(outs[i] == kSentT, "%s wrote past *count", what);
        continue;
      }
      rel::Meta m;
      check_view(outs[i], &pm, what, &m);
      if (p.valid && tensors.size() < kMaxTensors) {
        const TensorM& t = tensors[static_cast<size_t>(p.slot)];
        add_tensor(outs[i], t.storage, t.lease);
      } else {
        check_new_handle(outs[i], rel::kTagTensor, what, true);
        REL_OK(sm_tensor_release(outs[i]));
        bury(tgrave, outs[i]);
      }
    }
  }

  // Copies: a new storage (or, where the contract allows, the same data).
  void op_copy() {
    const int kind = in.u8() % 6;
    const Pick p = pick_tensor();
    rel::Meta pm;
    const bool have = p.valid && rel::meta_of(p.h, &pm);
    const sm_memory_format fmt = static_cast<sm_memory_format>(static_cast<int>(in.u8() % 6) - 1);
    const int32_t nd = in.ndim();
    const Dims shape = dims(nd, false);
    const sm_dtype dt = in.dtype();
    Pick idx;
    int32_t d = 0;
    if (kind == 4) {
      idx = pick_tensor();
      d = in.dim();
    }
    // Never ask for a slow copy: the bytes it may allocate are small, or so
    // huge that the allocation must fail at once.
    if (have) {
      i128 out_numel = pm.numel;
      if (kind == 4) {
        rel::Meta im;
        if (!idx.valid || !rel::meta_of(idx.h, &im)) {
          out_numel = 0;
        } else {
          if (im.numel > kMaxTouch * 16) return;  // the library reads every index
          const int dd = d < 0 ? d + pm.ndim : d;
          out_numel = im.numel;
          for (int j = 0; j < pm.ndim; ++j)
            if (j != dd) out_numel = sat_mul(out_numel, pm.shape[j]);
        }
      }
      const i128 b = out_numel * 8;
      if (b < kHuge && (mid_size(b) || out_numel > kMaxTouch * 16)) return;
      if (b >= kHuge && !huge_allowed()) return;
    }
    sm_tensor out = kSentT;
    int copied = -5;
    int would = -5;
    const char* what = "copy";
    const rel::State before = rel::state();
    sm_status st;
    switch (kind) {
      case 0:
        what = "sm_reshape";
        st = sm_reshape(p.h, shape.ptr(true), nd, &out, in.u8() % 4 ? &copied : nullptr);
        break;
      case 1: what = "sm_contiguous"; st = sm_contiguous(p.h, fmt, &out, nullptr); break;
      case 2: what = "sm_clone"; st = sm_clone(p.h, fmt, &out); break;
      case 3: what = "sm_to"; st = sm_to(p.h, rel::cpu(), dt, &out, nullptr); break;
      case 4: what = "sm_index_select"; st = sm_index_select(p.h, d, idx.h, &out); break;
      default:
        what = "sm_reshape_would_copy";
        st = sm_reshape_would_copy(p.h, shape.ptr(true), nd, &would);
        check_status(st, what);
        if (st != SM_OK) {
          REL_CHECK(would == -5, "failing sm_reshape_would_copy wrote its output");
          check_unchanged(before, what);
        } else {
          REL_CHECK(p.valid && (would == 0 || would == 1), "sm_reshape_would_copy: %d", would);
        }
        return;
    }
    check_status(st, what);
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing %s wrote its output", what);
      REL_CHECK(copied == -5, "failing %s wrote *copied", what);
      check_unchanged(before, what);
      return;
    }
    REL_CHECK(p.valid && (kind != 4 || idx.valid), "%s accepted an invalid handle", what);
    if (!have) return;
    const TensorM t = tensors[static_cast<size_t>(p.slot)];
    rel::Meta m;
    if (!rel::meta_of(out, &m)) return;
    int same = -1;
    REL_OK(sm_same_storage(out, p.h, &same));
    if (kind == 2 || kind == 4) REL_CHECK(same == 0, "%s shares its source's storage", what);
    if (kind == 0 && copied != -5) REL_CHECK(copied == !same, "sm_reshape: *copied = %d but same storage = %d", copied, same);
    if (same == 1) {
      check_view(out, &pm, what, &m);
      add_tensor(out, t.storage, t.lease);
    } else {
      check_view(out, nullptr, what, &m);
      REL_CHECK(m.storage_nbytes == m.nbytes, "%s: a fresh copy of %lld bytes has a storage of %lld",
                what, (long long)m.nbytes, (long long)m.storage_nbytes);
      if (kind != 3 || m.dtype == pm.dtype) {
        if (kind != 4) check_same_elements(m, pm, what);
      }
      if (kind == 4 && idx.valid && m.numel <= kMaxTouch) check_index_select(pm, m, idx.h, d);
      add_tensor(out, new_storage(m.storage_nbytes, true), -1);
    }
    if (kind == 1 && fmt != SM_PRESERVE) {
      int c = -1;
      REL_OK(sm_is_contiguous(out, fmt, &c));
      REL_CHECK(c == 1, "sm_contiguous(format %d) result is not dense in that format", fmt);
    }
  }

  void check_index_select(const rel::Meta& src, const rel::Meta& out, sm_tensor index, int32_t dim) {
    rel::Meta im;
    if (!rel::meta_of(index, &im)) return;
    const std::vector<uint8_t> ib = rel::gather_bytes(im);
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < im.numel; ++i) {
      if (im.dtype == SM_INT64) {
        int64_t v;
        std::memcpy(&v, ib.data() + i * 8, 8);
        idx.push_back(v);
      } else {
        int32_t v;
        std::memcpy(&v, ib.data() + i * 4, 4);
        idx.push_back(v);
      }
    }
    const int d = dim < 0 ? dim + src.ndim : dim;
    if (d < 0 || d >= src.ndim || out.ndim != src.ndim) return;
    // Expected bytes: out[..., i, ...] = src[..., idx[i] (wrapped), ...].
    std::vector<uint8_t> want;
    const char* base = rel::storage_base(src);
    int64_t mi[SM_MAX_DIMS] = {0};
    for (int64_t k = 0; k < out.numel; ++k) {
      int64_t off = src.offset;
      for (int j = 0; j < src.ndim; ++j) {
        int64_t v = mi[j];
        if (j == d) {
          v = idx[static_cast<size_t>(mi[j])];
          if (v < 0) v += src.shape[d];
        }
        off += v * src.strides[j];
      }
      const char* q = base + off * static_cast<int64_t>(src.itemsize);
      want.insert(want.end(), q, q + src.itemsize);
      for (int j = out.ndim - 1; j >= 0; --j) {
        if (++mi[j] < out.shape[j]) break;
        mi[j] = 0;
      }
    }
    REL_CHECK(rel::gather_bytes(out) == want, "sm_index_select: gathered elements differ");
  }

  // Element offsets (in the storage) of every element of m, row-major.
  static std::vector<int64_t> offsets(const rel::Meta& m) {
    std::vector<int64_t> v;
    rel::for_each_offset(m.shape, m.strides, m.ndim, m.offset, [&](int64_t o) { v.push_back(o); });
    return v;
  }

  // In-place writes: scalar ops, tensor ops, copy_into. Checks confinement.
  void op_write(bool copy_into) {
    const bool tensor_op = !copy_into && in.u8() % 2;
    const Pick p = pick_tensor();
    const Pick q = (copy_into || tensor_op) ? pick_tensor() : Pick{};
    const sm_op op = static_cast<sm_op>(in.u8() % 14 - 1);
    const double a = in.scalar(), b = in.scalar();
    rel::Meta dm, sm;
    const bool have = p.valid && rel::meta_of(p.h, &dm);
    const bool have_src = q.valid && rel::meta_of(q.h, &sm);
    if (have) {
      // Overlapping destinations are refused quickly; others must be bounded.
      bool zero_stride = false;
      for (int i = 0; i < dm.ndim; ++i) zero_stride |= dm.shape[i] > 1 && dm.strides[i] == 0;
      if (dm.numel > kMaxTouch * 16 && !zero_stride) return;
    }
    if (have_src && sm.numel > kMaxTouch * 16 && !(have && dm.numel <= kMaxTouch * 16)) return;
    std::vector<uint8_t> dst_before, src_storage;
    int64_t version_before = -1;
    if (have) {
      dst_before = storage_bytes(dm);
      version_before = dm.version;
    }
    if (have_src) src_storage = storage_bytes(sm);
    const rel::State before = rel::state();
    sm_status st;
    const char* what;
    if (copy_into) {
      what = "sm_copy_into";
      st = sm_copy_into(p.h, q.h);
    } else if (tensor_op) {
      what = "sm_inplace_tensor";
      st = sm_inplace_tensor(p.h, op, q.h, a);
    } else {
      what = "sm_inplace_scalar";
      st = sm_inplace_scalar(p.h, op, a, b);
    }
    check_status(st, what);
    rel::Meta after;
    const bool have_after = have && rel::meta_of(p.h, &after);
    if (st != SM_OK) {
      check_unchanged(before, what);
      if (have_after) {
        REL_CHECK(storage_bytes(after) == dst_before, "failing %s changed bytes of the storage", what);
        REL_CHECK(after.version == version_before, "failing %s bumped the version counter", what);
      }
      return;
    }
    REL_CHECK(p.valid && ((!copy_into && !tensor_op) || q.valid), "%s accepted an invalid handle", what);
    if (!have_after || dst_before.empty()) return;
    if (after.numel > 0)
      REL_CHECK(after.version > version_before, "%s did not bump the version counter", what);
    // No byte outside the destination's elements changed.
    const std::vector<uint8_t> now = storage_bytes(after);
    std::vector<char> covered(dst_before.size(), 0);
    const std::vector<int64_t> offs = offsets(after);
    for (int64_t o : offs)
      for (size_t k = 0; k < after.itemsize; ++k) {
        const size_t at = static_cast<size_t>(o) * after.itemsize + k;
        if (o >= 0 && at < covered.size()) covered[at] = 1;
      }
    size_t outside = 0;
    for (size_t i = 0; i < now.size(); ++i) outside += !covered[i] && now[i] != dst_before[i];
    REL_CHECK(outside == 0, "%s changed %zu bytes outside its destination's elements", what, outside);
    // A same-dtype copy_into writes exactly the broadcast source (when the
    // result is defined: distinct destination elements, and a source in
    // another storage or laid out exactly as the destination).
    std::vector<int64_t> sorted = offs;
    std::sort(sorted.begin(), sorted.end());
    const bool distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    bool same_layout = have_src && sm.ndim == after.ndim && sm.offset == after.offset;
    for (int j = 0; same_layout && j < sm.ndim; ++j)
      same_layout = sm.shape[j] == after.shape[j] && sm.strides[j] == after.strides[j];
    const bool other_storage = have_src && rel::storage_base(sm) != rel::storage_base(after);
    if (copy_into && have_src && sm.dtype == after.dtype && !src_storage.empty() && distinct &&
        (other_storage || same_layout) && static_cast<int64_t>(offs.size()) <= kMaxTouch) {
      std::vector<uint8_t> want;
      int64_t mi[SM_MAX_DIMS] = {0};
      const int lead = after.ndim - sm.ndim;
      for (size_t k = 0; k < offs.size(); ++k) {
        int64_t so = sm.offset;
        for (int j = 0; j < sm.ndim; ++j)
          if (sm.shape[j] != 1) so += mi[lead + j] * sm.strides[j];
        const uint8_t* s = src_storage.data() + so * static_cast<int64_t>(sm.itemsize);
        want.insert(want.end(), s, s + sm.itemsize);
        for (int j = after.ndim - 1; j >= 0; --j) {
          if (++mi[j] < after.shape[j]) break;
          mi[j] = 0;
        }
      }
      REL_CHECK(rel::gather_bytes(after) == want, "sm_copy_into (same dtype): elements differ from the source");
    }
  }

  void op_release() {
    const int kind = in.u8() % 4;
    if (kind == 0) {  // storage handle
      sm_storage h = nullptr;
      const int i = pick_shandle(&h);
      const rel::State before = rel::state();
      const sm_status st = sm_storage_release(h);
      check_status(st, "sm_storage_release");
      if (i < 0) {
        REL_CHECK(st == (h ? SM_ERR_INVALID_HANDLE : SM_OK), "sm_storage_release of a dead handle -> %d", st);
        check_unchanged(before, "sm_storage_release of a dead handle");
        return;
      }
      REL_CHECK(st == SM_OK, "sm_storage_release of a live handle -> %d", st);
      if (--shandles[static_cast<size_t>(i)].owners == 0) {
        bury(sgrave, h);
        shandles.erase(shandles.begin() + i);
      }
      return;
    }
    const Pick p = pick_tensor();
    const rel::State before = rel::state();
    const sm_status st = sm_tensor_release(p.h);
    check_status(st, "sm_tensor_release");
    if (p.slot < 0) {
      REL_CHECK(st == (p.h ? SM_ERR_INVALID_HANDLE : SM_OK), "sm_tensor_release of a dead handle %p -> %d",
                (void*)p.h, st);
      check_unchanged(before, "sm_tensor_release of a dead handle");
      return;
    }
    // A popped tensor is released like any other.
    REL_CHECK(st == SM_OK, "sm_tensor_release of a live handle -> %d", st);
    if (--tensors[static_cast<size_t>(p.slot)].owners == 0) {
      bury(tgrave, p.h);
      tensors.erase(tensors.begin() + p.slot);
    }
  }

  void op_retain() {
    const bool storage = in.u8() % 4 == 0;
    if (storage) {
      sm_storage h = nullptr;
      const int i = pick_shandle(&h);
      const rel::State before = rel::state();
      const sm_status st = sm_storage_retain(h);
      check_status(st, "sm_storage_retain");
      if (i < 0) {
        REL_CHECK(st == SM_ERR_INVALID_HANDLE, "sm_storage_retain of a dead handle -> %d", st);
        check_unchanged(before, "sm_storage_retain");
      } else if (st == SM_OK) {
        shandles[static_cast<size_t>(i)].owners++;
      }
      return;
    }
    const Pick p = pick_tensor();
    const rel::State before = rel::state();
    const sm_status st = sm_tensor_retain(p.h);
    check_status(st, "sm_tensor_retain");
    if (!p.valid) {
      REL_CHECK(st == SM_ERR_INVALID_HANDLE, "sm_tensor_retain of an invalid/popped handle -> %d", st);
      check_unchanged(before, "sm_tensor_retain");
      return;
    }
    REL_CHECK(st == SM_OK, "sm_tensor_retain of a valid handle -> %d", st);
    if (st == SM_OK) tensors[static_cast<size_t>(p.slot)].owners++;
  }

  void op_storage() {
    const int kind = in.u8() % 3;
    if (kind == 0) {  // sm_tensor_storage
      const Pick p = pick_tensor();
      sm_storage out = kSentS;
      const rel::State before = rel::state();
      const sm_status st = sm_tensor_storage(p.h, &out);
      check_status(st, "sm_tensor_storage");
      if (p.valid && tensors[static_cast<size_t>(p.slot)].lease >= 0)
        REL_CHECK(st == SM_ERR_UNSUPPORTED, "sm_tensor_storage of a stack tensor -> %d", st);
      if (!p.valid) REL_CHECK(st == SM_ERR_INVALID_HANDLE, "sm_tensor_storage of an invalid handle -> %d", st);
      if (st != SM_OK) {
        REL_CHECK(out == kSentS, "failing sm_tensor_storage wrote its output");
        check_unchanged(before, "sm_tensor_storage");
        return;
      }
      const int s = tensors[static_cast<size_t>(p.slot)].storage;
      int64_t nb = -1;
      REL_OK(sm_storage_size(out, &nb));
      REL_CHECK(nb == storages[static_cast<size_t>(s)].nbytes, "sm_storage_size %lld, model %lld",
                (long long)nb, (long long)storages[static_cast<size_t>(s)].nbytes);
      for (const StorageHM& h : shandles) REL_CHECK(h.h != out, "a new storage handle equals a live one");
      check_new_handle(out, rel::kTagStorage, "a new storage");
      shandles.push_back(StorageHM{out, 1, s});
      return;
    }
    sm_storage h = nullptr;
    const int i = pick_shandle(&h);
    if (kind == 1) {  // tensor over a storage
      const int32_t nd = in.ndim();
      const Dims shape = dims(nd, false);
      const bool with_strides = in.u8() & 1;
      const Dims strides = dims(nd, true);
      const int64_t off = in.index();
      const sm_dtype dt = in.dtype();
      from_storage(h, i, nd, shape, with_strides ? &strides : nullptr, off, dt);
      return;
    }
    // getters
    int64_t nb = -3;
    void* ptr = reinterpret_cast<void*>(3);
    sm_device dev{-3, -3};
    const sm_status s1 = sm_storage_size(h, &nb), s2 = sm_storage_data_ptr(h, &ptr), s3 = sm_storage_device(h, &dev);
    check_status(s1, "sm_storage_size");
    if (i < 0) {
      REL_CHECK(s1 == SM_ERR_INVALID_HANDLE && s2 == SM_ERR_INVALID_HANDLE && s3 == SM_ERR_INVALID_HANDLE,
                "storage getters on a dead handle -> %d %d %d", s1, s2, s3);
      REL_CHECK(nb == -3 && ptr == reinterpret_cast<void*>(3) && dev.type == -3, "failing storage getters wrote outputs");
    } else {
      REL_CHECK(s1 == SM_OK && s2 == SM_OK && s3 == SM_OK, "storage getters on a live handle -> %d %d %d", s1, s2, s3);
      REL_CHECK(dev.type == SM_DEVICE_CPU, "storage device type %d", dev.type);
    }
  }

  // The status sm_tensor_from_storage must return, its checks in the
  // library's order (include/stridemem.h): the handle; ndim; dtype; sizes
  // (negative: SHAPE, numel or bytes past int64: OVERFLOW); a negative
  // offset (OUT_OF_BOUNDS); the storage's data address not a multiple of the
  // dtype's alignment, dt_align (INVALID_ARGUMENT, empty views too); the element range
  // (past int64: OVERFLOW; outside the storage: OUT_OF_BOUNDS).
  static sm_status predict_from_storage(bool live, uintptr_t base, int64_t nbytes, int32_t nd,
                                        const Dims& shape, const Dims* strides, int64_t off, sm_dtype dt) {
    if (!live) return SM_ERR_INVALID_HANDLE;
    if (nd < 0 || nd > SM_MAX_DIMS) return SM_ERR_INVALID_ARGUMENT;
    if (dt < 0 || dt >= SM_NUM_DTYPES) return SM_ERR_INVALID_ARGUMENT;
    const int64_t item = static_cast<int64_t>(sm_dtype_size(dt));
    bool empty = false;
    for (int64_t x : shape.v) {
      if (x < 0) return SM_ERR_SHAPE;
      empty |= x == 0;
    }
    if (!empty) {
      i128 n = 1;
      for (int64_t x : shape.v) n = sat_mul(n, x);
      if (n > INT64_MAX || sat_mul(n, item) > INT64_MAX) return SM_ERR_OVERFLOW;
    }
    if (off < 0) return SM_ERR_OUT_OF_BOUNDS;
    if (base % dt_align(dt) != 0) return SM_ERR_INVALID_ARGUMENT;
    if (empty) return SM_OK;
    std::vector<int64_t> st(shape.v.size());
    int64_t rm = 1;  // row-major strides: they fit, numel does
    for (size_t k = st.size(); k-- > 0;) {
      st[k] = strides && !strides->v.empty() ? strides->v[k] : rm;
      rm *= shape.v[k];
    }
    i128 lo = off, hi = off;  // accumulated as the library does, overflow at any step
    for (size_t k = 0; k < st.size(); ++k) {
      const i128 span = i128(shape.v[k] - 1) * st[k];
      if (span > INT64_MAX || span < INT64_MIN) return SM_ERR_OVERFLOW;
      i128& end = span < 0 ? lo : hi;
      end += span;
      if (end > INT64_MAX || end < INT64_MIN) return SM_ERR_OVERFLOW;
    }
    if (lo < 0 || hi >= nbytes / item) return SM_ERR_OUT_OF_BOUNDS;
    return SM_OK;
  }

  // sm_tensor_from_storage over storage handle h (model index i, -1: not a
  // live handle): exactly the predicted status; on success a view of that
  // storage with exactly the requested layout and every element aligned.
  // Returns whether it succeeded.
  bool from_storage(sm_storage h, int i, int32_t nd, const Dims& shape, const Dims* strides,
                    int64_t off, sm_dtype dt) {
    uintptr_t base = 0;
    int64_t nbytes = 0;
    if (i >= 0) {
      void* p = nullptr;
      REL_OK(sm_storage_data_ptr(h, &p));
      base = reinterpret_cast<uintptr_t>(p);
      nbytes = storages[static_cast<size_t>(shandles[static_cast<size_t>(i)].storage)].nbytes;
    }
    const sm_status want = predict_from_storage(i >= 0, base, nbytes, nd, shape, strides, off, dt);
    sm_tensor out = kSentT;
    const rel::State before = rel::state();
    const sm_status st = sm_tensor_from_storage(h, shape.ptr(true), strides ? strides->ptr(true) : nullptr,
                                                nd, off, dt, &out);
    check_status(st, "sm_tensor_from_storage");
    REL_CHECK(st == want,
              "sm_tensor_from_storage(storage at %p of %lld bytes, ndim %d, offset %lld, dtype %d) -> %d, "
              "expected %d",
              (void*)base, (long long)nbytes, nd, (long long)off, dt, st, want);
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing sm_tensor_from_storage wrote its output");
      check_unchanged(before, "sm_tensor_from_storage");
      return false;
    }
    REL_CHECK(i >= 0, "sm_tensor_from_storage accepted a dead storage handle");
    if (i < 0 || want != SM_OK) {  // (reported) not a view to keep: its elements may be misaligned
      REL_OK(sm_tensor_release(out));
      return false;
    }
    rel::Meta m;
    if (check_view(out, nullptr, "sm_tensor_from_storage", &m)) {
      REL_CHECK(m.dtype == dt && m.ndim == nd && m.offset == off && m.storage_nbytes == nbytes,
                "sm_tensor_from_storage: dtype %d ndim %d offset %lld storage %lld, asked for %d %d %lld %lld",
                m.dtype, m.ndim, (long long)m.offset, (long long)m.storage_nbytes, dt, nd, (long long)off,
                (long long)nbytes);
      for (int k = 0; k < m.ndim && k < nd; ++k) REL_CHECK(m.shape[k] == shape.v[static_cast<size_t>(k)], "sm_tensor_from_storage: shape differs");
      const uintptr_t item = m.itemsize ? m.itemsize : 1, align = m.itemsize ? dt_align(m.dtype) : 1;
      if (m.numel > 0) {
        REL_CHECK(reinterpret_cast<uintptr_t>(m.data) % align == 0, "sm_tensor_from_storage: data %p is not aligned to %zu bytes", m.data, (size_t)align);
        REL_CHECK(reinterpret_cast<uintptr_t>(rel::storage_base(m)) == base, "sm_tensor_from_storage: the view's storage base moved");
      }
      const uintptr_t got_base = reinterpret_cast<uintptr_t>(rel::storage_base(m));
      if (m.numel > 0 && m.numel <= kMaxTouch)
        for (int64_t o : offsets(m))
          REL_CHECK((got_base + static_cast<uintptr_t>(o) * item) % align == 0,
                    "sm_tensor_from_storage: element at storage offset %lld is not aligned to %zu bytes", (long long)o, (size_t)align);
    }
    if (tensors.size() >= kMaxTensors) {
      check_new_handle(out, rel::kTagTensor, "sm_tensor_from_storage", true);
      REL_OK(sm_tensor_release(out));
      bury(tgrave, out);
      return true;
    }
    add_tensor(out, shandles[static_cast<size_t>(i)].storage, -1);
    return true;
  }

  void op_stack() {
    const int kind = in.u8() % 6;
    if (kind == 0) {  // create
      int64_t cap = in.size();
      if (cap >= 0 && cap < 100) cap *= 1024;
      if (mid_size(cap)) return;
      sm_stack out = kSentK;
      const rel::State before = rel::state();
      const sm_status st = sm_stack_create(rel::cpu(), cap, &out);
      check_status(st, "sm_stack_create");
      if (st != SM_OK) {
        REL_CHECK(out == kSentK, "failing sm_stack_create wrote its output");
        check_unchanged(before, "sm_stack_create");
        return;
      }
      REL_CHECK(cap >= 0 && cap < kHuge, "sm_stack_create accepted capacity %lld", (long long)cap);
      check_new_handle(out, rel::kTagStack, "a new stack", true);
      StackM k;
      k.h = out;
      k.storage = new_storage(cap, true);
      stacks.push_back(k);
      return;
    }
    sm_stack h = nullptr;
    const int i = pick_stack(&h);
    StackM* k = i >= 0 ? &stacks[static_cast<size_t>(i)] : nullptr;
    const rel::State before = rel::state();
    if (kind == 1) {  // push
      const int32_t nd = in.ndim();
      const Dims shape = dims(nd, false);
      const sm_dtype dt = in.dtype();
      int64_t used0 = -1, cap = -1;
      if (k) REL_OK(sm_stack_used(h, &used0, &cap));
      sm_tensor out = kSentT;
      const sm_status st = sm_stack_push(h, shape.ptr(true), nd, dt, &out);
      check_status(st, "sm_stack_push");
      if (!k) REL_CHECK(st == SM_ERR_INVALID_HANDLE, "sm_stack_push on a dead stack -> %d", st);
      if (st != SM_OK) {
        REL_CHECK(out == kSentT, "failing sm_stack_push wrote its output");
        check_unchanged(before, "sm_stack_push");
        if (k) {
          int64_t used1 = -1;
          REL_OK(sm_stack_used(h, &used1, &cap));
          REL_CHECK(used1 == used0, "failing sm_stack_push changed the stack's use");
        }
        return;
      }
      rel::Meta m;
      check_view(out, nullptr, "sm_stack_push", &m);
      REL_CHECK(reinterpret_cast<uintptr_t>(m.data) % SM_STACK_ALIGNMENT == 0 || m.nbytes == 0,
                "sm_stack_push: %p is not aligned", m.data);
      int c = -1;
      REL_OK(sm_is_contiguous(out, SM_CONTIGUOUS, &c));
      REL_CHECK(c == 1, "a pushed tensor is not contiguous");
      leases.push_back(LeaseM{i, true});
      k->entries.push_back(static_cast<int>(leases.size() - 1));
      add_tensor(out, k->storage, static_cast<int>(leases.size() - 1));
    } else if (kind == 2) {  // mark
      int64_t mark = -9;
      const sm_status st = sm_stack_mark(h, &mark);
      check_status(st, "sm_stack_mark");
      if (!k) {
        REL_CHECK(st == SM_ERR_INVALID_HANDLE && mark == -9, "sm_stack_mark on a dead stack -> %d", st);
        return;
      }
      REL_CHECK(st == SM_OK, "sm_stack_mark -> %d", st);
      k->marks.push_back({mark, k->entries.size()});
    } else if (kind == 3) {  // pop_to
      int64_t mark;
      size_t keep = 0;
      bool known = false;
      if (k && !k->marks.empty() && in.u8() < 224) {
        const auto& mk = k->marks[in.u8() % k->marks.size()];
        mark = mk.first;
        keep = mk.second;
        known = true;
      } else {
        static const int64_t never[] = {-1, INT64_MIN, INT64_MAX, int64_t(1) << 40};
        mark = never[in.u8() % 4];  // no stack hands these out
      }
      const sm_status st = sm_stack_pop_to(h, mark);
      check_status(st, "sm_stack_pop_to");
      if (!k) {
        REL_CHECK(st == SM_ERR_INVALID_HANDLE, "sm_stack_pop_to on a dead stack -> %d", st);
        return;
      }
      if (known && keep <= k->entries.size()) REL_CHECK(st == SM_OK, "sm_stack_pop_to(a mark still on the stack) -> %d", st);
      if (st != SM_OK) {
        check_unchanged(before, "sm_stack_pop_to");
        return;
      }
      REL_CHECK(known, "sm_stack_pop_to accepted a mark %lld that was never handed out", (long long)mark);
      if (!known) return;
      for (size_t j = keep; j < k->entries.size(); ++j) leases[static_cast<size_t>(k->entries[j])].valid = false;
      if (keep < k->entries.size()) k->entries.resize(keep);
      // Marks above the new top are stale now.
      k->marks.erase(std::remove_if(k->marks.begin(), k->marks.end(),
                                    [&](const std::pair<int64_t, size_t>& x) { return x.second > keep; }),
                     k->marks.end());
    } else if (kind == 4) {  // used
      int64_t used = -9, cap = -9;
      const sm_status st = sm_stack_used(h, &used, &cap);
      check_status(st, "sm_stack_used");
      if (!k) REL_CHECK(st == SM_ERR_INVALID_HANDLE && used == -9, "sm_stack_used on a dead stack -> %d", st);
      else REL_CHECK(st == SM_OK && cap == storages[static_cast<size_t>(k->storage)].nbytes && used >= 0 && used <= cap,
                     "sm_stack_used -> %d, used %lld cap %lld", st, (long long)used, (long long)cap);
    } else {  // release
      const sm_status st = sm_stack_release(h);
      check_status(st, "sm_stack_release");
      if (!k) {
        REL_CHECK(st == (h ? SM_ERR_INVALID_HANDLE : SM_OK), "sm_stack_release of a dead stack -> %d", st);
        check_unchanged(before, "sm_stack_release of a dead stack");
        return;
      }
      REL_CHECK(st == SM_OK, "sm_stack_release -> %d", st);
      k->released = true;
      bury(kgrave, h);
    }
  }

  // Every getter on a picked handle; invalid handles: exactly SM_ERR_INVALID_HANDLE.
  void op_meta() {
    const Pick p = pick_tensor();
    int32_t nd = -9;
    int64_t v64 = -9;
    sm_dtype dt = -9;
    sm_device dev{-9, -9};
    void* ptr = reinterpret_cast<void*>(9);
    int flag = -9;
    int64_t dims[SM_MAX_DIMS];
    std::fill(dims, dims + SM_MAX_DIMS, -9);
    const int32_t cap = static_cast<int32_t>(in.u8() % 18) - 1;
    const sm_memory_format fmt = static_cast<sm_memory_format>(static_cast<int>(in.u8() % 6) - 1);
    const Pick q = pick_tensor();
    sm_status st[16];
    st[0] = sm_ndim(p.h, &nd);
    st[1] = sm_numel(p.h, &v64);
    st[2] = sm_nbytes(p.h, &v64);
    st[3] = sm_storage_offset(p.h, &v64);
    st[4] = sm_storage_nbytes(p.h, &v64);
    st[5] = sm_version_counter(p.h, &v64);
    st[6] = sm_dtype_of(p.h, &dt);
    st[7] = sm_device_of(p.h, &dev);
    st[8] = sm_data_ptr(p.h, &ptr);
    st[9] = sm_is_read_only(p.h, &flag);
    for (int i = 0; i < 10; ++i) check_status(st[i], "getter");
    if (!p.valid) {
      for (int i = 0; i < 10; ++i)
        REL_CHECK(st[i] == SM_ERR_INVALID_HANDLE, "getter %d on an invalid handle %p -> %d", i, (void*)p.h, st[i]);
      REL_CHECK(nd == -9 && v64 == -9 && dt == -9 && dev.type == -9 && ptr == reinterpret_cast<void*>(9) && flag == -9,
                "failing getters wrote their outputs");
    } else {
      for (int i = 0; i < 10; ++i) REL_CHECK(st[i] == SM_OK, "getter %d on a valid handle -> %d", i, st[i]);
    }
    // Shape/strides with a capacity that may be too small.
    const sm_status ss = sm_shape(p.h, cap < 0 ? nullptr : dims, cap);
    check_status(ss, "sm_shape");
    if (ss != SM_OK)
      for (int64_t x : dims) REL_CHECK(x == -9, "failing sm_shape wrote its output");
    if (p.valid) REL_CHECK((ss == SM_OK) == (nd == 0 || (cap >= nd)), "sm_shape(capacity %d) with ndim %d -> %d", cap, nd, ss);
    // Format queries and storage identity.
    flag = -9;
    const sm_status sc = sm_is_contiguous(p.h, fmt, &flag);
    check_status(sc, "sm_is_contiguous");
    if (sc == SM_OK) REL_CHECK(flag == 0 || flag == 1, "sm_is_contiguous wrote %d", flag);
    else REL_CHECK(flag == -9, "failing sm_is_contiguous wrote its output");
    flag = -9;
    const sm_status sq = sm_same_storage(p.h, q.h, &flag);
    check_status(sq, "sm_same_storage");
    if (p.valid && q.valid) {
      REL_CHECK(sq == SM_OK, "sm_same_storage of valid handles -> %d", sq);
      const int ps = tensors[static_cast<size_t>(p.slot)].storage, qs = tensors[static_cast<size_t>(q.slot)].storage;
      // Identity is exact: a re-imported export of ours is modelled as a
      // view of the exporting storage, any other import as a new storage.
      REL_CHECK(flag == (ps == qs), "sm_same_storage -> %d, model says %d", flag, ps == qs);
    } else {
      REL_CHECK(sq == SM_ERR_INVALID_HANDLE && flag == -9, "sm_same_storage with an invalid handle -> %d", sq);
    }
    // copy_to_host: right size, too small, NULL.
    if (p.valid) {
      rel::Meta m;
      if (!rel::meta_of(p.h, &m) || m.nbytes > kMaxBytes) return;
      const int mode = in.u8() % 4;
      const size_t n = static_cast<size_t>(m.nbytes);
      std::vector<uint8_t> buf(n + 16, 0xA5);
      const size_t give = mode == 1 && n > 0 ? n - 1 : (mode == 2 ? n + 8 : n);
      const sm_status sh = sm_copy_to_host(p.h, mode == 3 && n > 0 ? nullptr : buf.data(), give);
      check_status(sh, "sm_copy_to_host");
      if (mode == 1 && n > 0) REL_CHECK(sh == SM_ERR_INVALID_ARGUMENT, "sm_copy_to_host into too small a buffer -> %d", sh);
      if (mode == 3 && n > 0) REL_CHECK(sh == SM_ERR_INVALID_ARGUMENT, "sm_copy_to_host into NULL -> %d", sh);
      if (sh != SM_OK) {
        for (uint8_t x : buf) REL_CHECK(x == 0xA5, "failing sm_copy_to_host wrote to the buffer");
        return;
      }
      rel::mark_defined(buf.data(), n);
      for (size_t i = n; i < buf.size(); ++i) REL_CHECK(buf[i] == 0xA5, "sm_copy_to_host wrote past sm_nbytes");
      if (m.numel <= kMaxTouch && mode != 3) {
        buf.resize(n);
        REL_CHECK(buf == rel::gather_bytes(m), "sm_copy_to_host differs from the tensor's memory");
      }
    }
  }

  void op_fault() {
    const int64_t n = in.u8() % 6;  // 0 disarms
    REL_OK(sm_debug_fail_alloc(n));
    fault_armed = n > 0;
  }

  void op_dlpack() {
    const int kind = in.u8() % 4;
    if (kind == 0) {  // export
      const Pick p = pick_tensor();
      const uint32_t flags = in.u8() % 4;
      void* m = reinterpret_cast<void*>(0x5E7);
      int copied = -5;
      rel::Meta pm;
      const bool have = p.valid && rel::meta_of(p.h, &pm);
      if (have && (flags & SM_DLPACK_NORMALIZE) && mid_size(i128(pm.nbytes))) return;
      const rel::State before = rel::state();
      const sm_status st = sm_to_dlpack_ex(p.h, flags, nullptr, &m, &copied);
      check_status(st, "sm_to_dlpack_ex");
      if (have && tensors[static_cast<size_t>(p.slot)].lease >= 0)
        REL_CHECK(st == SM_ERR_UNSUPPORTED, "sm_to_dlpack of a stack tensor -> %d", st);
      if (st != SM_OK) {
        REL_CHECK(m == reinterpret_cast<void*>(0x5E7) && copied == -5, "failing sm_to_dlpack_ex wrote outputs");
        check_unchanged(before, "sm_to_dlpack_ex");
        return;
      }
      REL_CHECK(have, "sm_to_dlpack_ex accepted an invalid handle");
      if (!have) return;
      REL_CHECK(copied == 0 || copied == 1, "sm_to_dlpack_ex: copied = %d", copied);
      bool neg = false;
      for (int i = 0; i < pm.ndim; ++i) neg |= pm.strides[i] < 0 && pm.shape[i] > 1;
      if (!(flags & SM_DLPACK_NORMALIZE) || !neg) REL_CHECK(copied == 0, "sm_to_dlpack_ex copied without a reason");
      int s = tensors[static_cast<size_t>(p.slot)].storage;
      const sm_DLTensor& dl = (flags & SM_DLPACK_VERSIONED) ? static_cast<sm_DLManagedTensorVersioned*>(m)->dl_tensor
                                                            : static_cast<sm_DLManagedTensor*>(m)->dl_tensor;
      REL_CHECK(dl.ndim == pm.ndim, "DLPack ndim %d, tensor ndim %d", dl.ndim, pm.ndim);
      if (copied == 1) {
        s = new_storage(pm.nbytes, true);
        for (int i = 0; i < dl.ndim; ++i) REL_CHECK(dl.strides[i] >= 0, "normalized export has a negative stride");
      } else {
        REL_CHECK(dl.data == pm.data, "zero-copy export: data %p, tensor data %p", dl.data, pm.data);
      }
      exports.push_back(ExportM{m, (flags & SM_DLPACK_VERSIONED) != 0, s});
      return;
    }
    if (kind == 1 && !exports.empty()) {  // import one of ours, or delete it
      const size_t i = in.u8() % exports.size();
      const ExportM e = exports[i];
      if (in.u8() % 4 == 0) {
        exports.erase(exports.begin() + static_cast<std::ptrdiff_t>(i));
        if (e.versioned) static_cast<sm_DLManagedTensorVersioned*>(e.m)->deleter(static_cast<sm_DLManagedTensorVersioned*>(e.m));
        else static_cast<sm_DLManagedTensor*>(e.m)->deleter(static_cast<sm_DLManagedTensor*>(e.m));
        return;
      }
      sm_tensor out = kSentT;
      const rel::State before = rel::state();
      const sm_status st = sm_from_dlpack(e.m, e.versioned, &out);
      check_status(st, "sm_from_dlpack");
      if (st != SM_OK) {
        REL_CHECK(out == kSentT, "failing sm_from_dlpack wrote its output");
        check_unchanged(before, "sm_from_dlpack");
        return;  // still ours
      }
      exports.erase(exports.begin() + static_cast<std::ptrdiff_t>(i));
      rel::Meta m;
      check_view(out, nullptr, "sm_from_dlpack", &m);
      // Our own export came back: a view of the exporting storage itself.
      add_tensor(out, e.storage, -1);
      return;
    }
    hostile_import();
  }

  // A producer with hostile metadata. The harness owns a buffer covering the
  // layout it describes whenever that layout is valid; invalid ones must be refused.
  void hostile_import() {
    const bool versioned = in.u8() & 1;
    auto* p = new Producer;
    const int32_t nd = in.ndim();
    const Dims shape = dims(nd, false), strides = dims(nd, true);
    p->shape = shape.v;
    p->strides = strides.v;
    const bool with_strides = in.u8() % 3 != 0;
    const uint8_t code = in.u8() % 8, bits = static_cast<uint8_t>(8u << (in.u8() % 5));
    const uint16_t lanes = in.u8() % 8 == 0 ? 2 : 1;
    const int32_t devtype = in.u8() % 8 == 0 ? static_cast<int32_t>(in.u8()) : SM_DEVICE_CPU;
    const uint64_t byte_offset = in.u8() % 8 == 0 ? in.u64() % 4096 : 0;
    const uint64_t vflags = in.u8() % 4;
    // What the harness can back with memory: bytes per element <= 8.
    const int64_t item = (bits / 8) * lanes;
    i128 lo, hi;
    bool empty, negative;
    reach(shape.v, with_strides ? &strides.v : nullptr, &lo, &hi, &empty, &negative);
    const bool invalid = nd < 0 || nd > SM_MAX_DIMS || negative;
    const i128 span = sat_mul(hi - lo + 1, item) + i128(byte_offset);
    if (!invalid && span > kMaxBytes) {  // cannot back it: not a fair call
      delete p;
      return;
    }
    const size_t nb = static_cast<size_t>(invalid ? 64 : span);
    char* mem = static_cast<char*>(std::malloc(nb ? nb : 1));
    std::memset(mem, 0x22, nb ? nb : 1);
    p->ext = exts[static_cast<size_t>(new_ext(mem, true))].get();
    sm_DLTensor dl;
    dl.data = invalid ? mem : mem - static_cast<int64_t>(lo) * item;
    dl.device.device_type = static_cast<decltype(dl.device.device_type)>(devtype);
    dl.device.device_id = 0;
    dl.ndim = nd;
    dl.dtype.code = code;
    dl.dtype.bits = bits;
    dl.dtype.lanes = lanes;
    dl.shape = p->shape.empty() ? (in.u8() & 1 ? nullptr : p->shape.data()) : p->shape.data();
    dl.strides = with_strides ? (p->strides.empty() ? nullptr : p->strides.data()) : nullptr;
    dl.byte_offset = byte_offset;
    void* managed;
    if (versioned) {
      // Input bytes read in the order they always were: minor, then major.
      const uint32_t minor = static_cast<uint32_t>(in.u8() % 3);
      const uint32_t major = in.u8() % 8 == 0 ? 2 + in.u8() % 3 : 1;
      managed = producer_managed(p, dl, true, major, minor, vflags);
    } else {
      managed = producer_managed(p, dl, false);
    }
    ExtM* ext = p->ext;
    const int e = static_cast<int>(exts.size() - 1);
    sm_tensor out = kSentT;
    const rel::State before = rel::state();
    const sm_status st = sm_from_dlpack(managed, versioned, &out);
    check_status(st, "sm_from_dlpack (hostile producer)");
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing sm_from_dlpack wrote its output");
      REL_CHECK(ext->calls == 0, "failing sm_from_dlpack called the producer's deleter");
      check_unchanged(before, "sm_from_dlpack (hostile)");
      producer_free(p);  // ownership stayed with us
      return;
    }
    REL_CHECK(!invalid, "sm_from_dlpack accepted ndim %d or a negative size", nd);
    if (devtype == SM_DEVICE_CUDA_HOST) {  // host memory: acceptable, counted on another device
      REL_OK(sm_tensor_release(out));
      REL_CHECK(ext->calls == 1, "producer deleter ran %d times after the last view died", ext->calls);
      exts[static_cast<size_t>(e)]->has_deleter = true;
      return;
    }
    REL_CHECK(devtype == SM_DEVICE_CPU, "sm_from_dlpack accepted device type %d on a CPU-only build", devtype);
    rel::Meta m;
    check_view(out, nullptr, "sm_from_dlpack (hostile)", &m);
    REL_CHECK(static_cast<int64_t>(m.itemsize) * 1 == item || m.numel == 0,
              "import: itemsize %zu for DLPack dtype of %lld bytes", m.itemsize, (long long)item);
    add_tensor(out, new_storage(m.storage_nbytes, false, -1, e), -1);
  }

  // ===== Ops 238..255: the bug classes of 75f5c06, 86a34a6, f17a581 and the
  // index_select rewrite, each as an op whose every call has an exact verdict.

  // ---- handle generations (op GEN) ----
  // One new handle of `kind` (a tensor: sm_empty({0}); a storage: of `t`; a
  // stack of capacity 0): no data allocation, so it cannot fail. Checked fresh.
  void* gen_issue(uint32_t kind, sm_tensor t) {
    void* h = nullptr;
    sm_status st;
    const int64_t zero[1] = {0};
    if (kind == rel::kTagTensor) {
      sm_tensor o = nullptr;
      st = sm_empty(zero, 1, SM_UINT8, rel::cpu(), &o);
      h = o;
    } else if (kind == rel::kTagStorage) {
      sm_storage o = nullptr;
      st = sm_tensor_storage(t, &o);
      h = o;
    } else {
      sm_stack o = nullptr;
      st = sm_stack_create(rel::cpu(), 0, &o);
      h = o;
    }
    check_status(st, "a handle for the generation walk");
    REL_CHECK(st == SM_OK, "creating a handle of kind %u (no data to allocate) -> %d", kind, st);
    if (st != SM_OK) return nullptr;
    check_new_handle(h, kind, "a new", true);
    return h;
  }
  // Any call on a released handle: SM_ERR_INVALID_HANDLE, no output written.
  void gen_check_refused(uint32_t kind, const void* h) {
    sm_status st;
    bool untouched;
    if (kind == rel::kTagTensor) {
      int32_t nd = -9;
      st = sm_ndim(static_cast<sm_tensor>(const_cast<void*>(h)), &nd);
      untouched = nd == -9;
    } else if (kind == rel::kTagStorage) {
      int64_t n = -9;
      st = sm_storage_size(static_cast<sm_storage>(const_cast<void*>(h)), &n);
      untouched = n == -9;
    } else {
      int64_t u = -9, c = -9;
      st = sm_stack_used(static_cast<sm_stack>(const_cast<void*>(h)), &u, &c);
      untouched = u == -9 && c == -9;
    }
    check_status(st, "a getter on a released handle");
    REL_CHECK(st == SM_ERR_INVALID_HANDLE && untouched, "released handle %p (kind %u) -> %d, not refused", h,
              kind, st);
  }
  void gen_release(uint32_t kind, void* h) {
    if (kind == rel::kTagTensor) {
      REL_OK(sm_tensor_release(static_cast<sm_tensor>(h)));
      bury(tgrave, static_cast<sm_tensor>(h));
    } else if (kind == rel::kTagStorage) {
      REL_OK(sm_storage_release(static_cast<sm_storage>(h)));
      bury(sgrave, static_cast<sm_storage>(h));
    } else {
      REL_OK(sm_stack_release(static_cast<sm_stack>(h)));
      bury(kgrave, static_cast<sm_stack>(h));
    }
    gen_check_refused(kind, h);
  }
  // sm_debug_age_handle_slot: `want` exactly, or (want < 0) OK or
  // INVALID_ARGUMENT; it never changes any live state.
  sm_status gen_hook(const void* h, int64_t k, int want) {
    const rel::State before = rel::state();
    const sm_status st = sm_debug_age_handle_slot(h, k);
    check_status(st, "sm_debug_age_handle_slot");
    if (want >= 0)
      REL_CHECK(st == want, "sm_debug_age_handle_slot(%p, %lld) -> %d, expected %d", h, (long long)k, st, want);
    else
      REL_CHECK(st == SM_OK || st == SM_ERR_INVALID_ARGUMENT, "sm_debug_age_handle_slot(%p, %lld) -> %d", h,
                (long long)k, st);
    check_unchanged(before, "sm_debug_age_handle_slot");
    return st;
  }

  // A handle released, its slot aged to a few generations before its limit
  // (sm_debug_age_handle_slot), then walked there: each aging makes it the
  // next slot reused, so the walk issues exactly generations limit-k ..
  // limit on that slot; after that the slot is retired: further
  // create/release cycles never hand it out again (every new handle differs
  // from every live and every released one), aging it is refused, and every
  // released handle stays refused. Bad uses of the hook (negative or too
  // many generations, a live handle, values that are no handle) have exact
  // statuses and change nothing.
  void op_generations() {
    const uint32_t kind = 1 + in.u8() % 3;  // rel::kTagTensor, kTagStorage, kTagStack
    const int mode = in.u8() % 10;
    const uint8_t arg = in.u8();
    const int extra = in.u8() % 4;
    sm_tensor t = nullptr;  // a live tensor: storage handles are made from it
    if (kind == rel::kTagStorage) {
      const int64_t zero[1] = {0};
      REL_OK(sm_empty(zero, 1, SM_UINT8, rel::cpu(), &t));
      if (!t) return;
      check_new_handle(t, rel::kTagTensor, "a helper tensor", true);
    }
    // A live handle of this kind for mode 7, made before any aging (a
    // creation after it would take the aged slot).
    void* live = nullptr;
    bool live_temp = false;
    if (mode == 7) {
      std::vector<void*> open;
      if (kind == rel::kTagTensor)
        for (const TensorM& x : tensors) open.push_back(x.h);
      else if (kind == rel::kTagStorage)
        for (const StorageHM& x : shandles) open.push_back(x.h);
      else
        for (const StackM& x : stacks)
          if (!x.released) open.push_back(x.h);
      if (!open.empty() && arg % 2) {
        live = open[arg % open.size()];
      } else {
        live = gen_issue(kind, t);
        live_temp = live != nullptr;
      }
    }
    void* h0 = gen_issue(kind, t);
    if (h0) gen_release(kind, h0);
    const rel::HandleBits b0 = rel::handle_bits(h0);
    int64_t walk = -1;       // generations left after a successful aging: walked below
    uint32_t aged_slot = 0;  // the slot aged
    if (h0) switch (mode) {
        case 0: case 1: case 2: case 3: case 4: {  // h0's slot is free (retired if h0 had the last generation)
          if (b0.generation >= rel::kHandleGenLimit) {
            gen_hook(h0, mode, SM_ERR_INVALID_ARGUMENT);
            break;
          }
          // Never below the slot's next generation: aging can set a slot back
          // (a test-hook artefact), which would hand out generations again.
          const int64_t k = std::min<int64_t>(mode, rel::kHandleGenLimit - 1 - b0.generation);
          if (gen_hook(h0, k, SM_OK) == SM_OK) {
            walk = k;
            aged_slot = b0.slot;
          }
          break;
        }
        case 5: {  // negative generations_left
          static const int64_t neg[] = {-1, INT64_MIN, -(int64_t(1) << 28)};
          gen_hook(h0, neg[arg % 3], SM_ERR_INVALID_ARGUMENT);
          break;
        }
        case 6: {  // more than the 2^28 - 2 a slot can have left
          static const int64_t big[] = {int64_t(rel::kHandleGenLimit), int64_t(1) << 28, INT64_MAX};
          gen_hook(h0, big[arg % 3], SM_ERR_INVALID_ARGUMENT);
          break;
        }
        case 7:  // a live slot: aging it would make its live handle stale
          if (live) gen_hook(live, arg % 5, SM_ERR_INVALID_ARGUMENT);
          break;
        case 8: {  // values that are no handle
          void* forged[] = {nullptr, rel::make_handle(0, 1, 1), rel::make_handle(5 + arg % 11, 1, 1),
                            rel::make_handle(kind, 1, 0), rel::make_handle(kind, 1, 0xFFFFFFFFu)};
          gen_hook(forged[(arg / 8) % 5], arg % 5, SM_ERR_INVALID_HANDLE);
          break;
        }
        default: {  // an older released handle: its slot may be live (reused), free or retired
          std::vector<const void*> grave;
          if (kind == rel::kTagTensor) grave.assign(tgrave.begin(), tgrave.end());
          else if (kind == rel::kTagStorage) grave.assign(sgrave.begin(), sgrave.end());
          else grave.assign(kgrave.begin(), kgrave.end());
          const void* g = grave[grave.size() - 1 - arg % grave.size()];  // newest first; h0 at least
          const uint32_t slot = rel::handle_bits(g).slot;
          bool slot_live = false;
          std::vector<const void*> lives;
          if (kind == rel::kTagTensor)
            for (const TensorM& x : tensors) lives.push_back(x.h);
          else if (kind == rel::kTagStorage)
            for (const StorageHM& x : shandles) lives.push_back(x.h);
          else
            for (const StackM& x : stacks)
              if (!x.released) lives.push_back(x.h);
          for (const void* x : lives) slot_live |= rel::handle_bits(x).slot == slot;
          // 0 left: the limit itself, never below any slot's generation.
          if (gen_hook(g, 0, slot_live ? SM_ERR_INVALID_ARGUMENT : -1) == SM_OK) {
            walk = 0;
            aged_slot = slot;
          }
          break;
        }
      }
    // The walk: k + 1 handles on the aged slot, re-aged after each release
    // (freed slots are reused oldest-first, so without it the next cycle
    // would take another slot).
    void* last = nullptr;
    for (int64_t c = 0; walk >= 0 && c <= walk; ++c) {
      void* h = gen_issue(kind, t);
      if (!h) break;
      const rel::HandleBits b = rel::handle_bits(h);
      const uint32_t want_gen = rel::kHandleGenLimit - static_cast<uint32_t>(walk - c);
      REL_CHECK(b.slot == aged_slot && b.generation == want_gen,
                "aged slot %u: handle %d of the walk is %p (slot %u, generation %u), expected generation %u there",
                aged_slot, (int)c, h, b.slot, b.generation, want_gen);
      gen_release(kind, h);
      last = h;
      if (c < walk && gen_hook(h, walk - c - 1, SM_OK) != SM_OK) break;
    }
    // Plain cycles (k + 2 and more in all): the retired slot is never handed out again.
    for (int c = 0; c < 1 + extra + (walk < 0); ++c) {
      void* h = gen_issue(kind, t);
      if (!h) break;
      if (last)
        REL_CHECK(rel::handle_bits(h).slot != aged_slot,
                  "slot %u reached its last generation and was released, yet %p names it again", aged_slot, h);
      gen_release(kind, h);
    }
    // The retired slot cannot be aged again.
    if (last) gen_hook(last, arg % 3, SM_ERR_INVALID_ARGUMENT);
    // Every released handle of this kind stays refused.
    std::vector<const void*> grave;
    if (kind == rel::kTagTensor) grave.assign(tgrave.begin(), tgrave.end());
    else if (kind == rel::kTagStorage) grave.assign(sgrave.begin(), sgrave.end());
    else grave.assign(kgrave.begin(), kgrave.end());
    for (const void* g : grave)
      if (!handle_is_live(g, kind)) gen_check_refused(kind, g);
    if (live_temp) gen_release(kind, live);
    if (t) {
      REL_OK(sm_tensor_release(t));
      bury(tgrave, t);
    }
  }

  // ---- typed re-views of reinterpreted bytes (op REVIEW) ----
  // A 1-byte tensor of n bytes at an address `mis` bytes past a 16-aligned
  // one: sm_from_blob, or a DLPack import whose byte_offset is `mis`. Kept in
  // the model; returns its model index or -1.
  int misaligned_bytes(bool dlpack, size_t mis, sm_dtype dt1, int64_t n, bool versioned) {
    char* mem = static_cast<char*>(std::malloc(static_cast<size_t>(n) + 16));
    for (int64_t k = 0; k < n + 16; ++k) mem[k] = static_cast<char>(dt1 == SM_BOOL ? k & 1 : k * 37 + 11);
    const int e = new_ext(mem, true);
    ExtM* ext = exts[static_cast<size_t>(e)].get();
    const int64_t shape[1] = {n};
    sm_tensor t = kSentT;
    sm_status st;
    if (!dlpack) {
      ext->data = mem + mis;
      st = sm_from_blob(mem + mis, shape, nullptr, 1, dt1, rel::cpu(), blob_deleter, ext, &t);
      check_status(st, "sm_from_blob (bytes at a misaligned address)");
      REL_CHECK(st == SM_OK, "sm_from_blob of %lld %s bytes at %p -> %d", (long long)n,
                dt1 == SM_BOOL ? "bool" : "1-byte", (void*)(mem + mis), st);
      if (st != SM_OK) {
        std::free(mem);
        ext->mem = nullptr;
        ext->has_deleter = false;
        return -1;
      }
    } else {
      auto* p = new Producer;
      p->ext = ext;
      p->shape.assign(1, n);
      sm_DLTensor dl;
      std::memset(&dl, 0, sizeof dl);
      dl.data = mem;
      dl.device.device_type = static_cast<decltype(dl.device.device_type)>(SM_DEVICE_CPU);
      dl.ndim = 1;
      dl.dtype.code = dt1 == SM_BOOL ? sm_kDLBool : (dt1 == SM_INT8 ? sm_kDLInt : sm_kDLUInt);
      dl.dtype.bits = 8;
      dl.dtype.lanes = 1;
      dl.shape = p->shape.data();
      dl.strides = nullptr;
      dl.byte_offset = mis;
      void* managed = producer_managed(p, dl, versioned);
      st = sm_from_dlpack(managed, versioned, &t);
      check_status(st, "sm_from_dlpack (bytes at an odd byte_offset)");
      REL_CHECK(st == SM_OK, "sm_from_dlpack of %lld 1-byte elements at byte_offset %zu -> %d", (long long)n, mis,
                st);
      if (st != SM_OK) {
        REL_CHECK(ext->calls == 0, "failing sm_from_dlpack called the producer's deleter");
        producer_free(p);
        return -1;
      }
    }
    rel::Meta m;
    check_view(t, nullptr, "misaligned bytes", &m);
    if (n > 0) REL_CHECK(m.data == mem + mis, "bytes imported at %p, data pointer %p", (void*)(mem + mis), m.data);
    add_tensor(t, new_storage(n, false, -1, e), -1);
    return static_cast<int>(tensors.size() - 1);
  }

  // Storages whose data address is not aligned for wider dtypes (bytes at
  // an odd or 2-mod-4 address), or any storage of the pool, re-viewed with
  // every dtype through sm_tensor_from_storage: refused exactly when the
  // address is not a multiple of the dtype's size (empty views too), else
  // the bounds rules; a view made has every element aligned.
  struct ReView {
    int32_t nd;
    Dims shape, strides;
    bool with_strides;
    int64_t off;
    sm_dtype dt;
  };
  void op_review() {
    // Decoded first: whatever fails below, the next op starts where it should.
    const int src = in.u8() % 3;
    sm_storage h = nullptr;
    int i = -1;
    size_t mis = 0;
    sm_dtype dt1 = SM_UINT8;
    int64_t n = 0;
    bool keep = false, versioned = false;
    if (src == 2) {
      i = pick_shandle(&h);
    } else {
      mis = 1 + in.u8() % 7;
      static const sm_dtype kBytes[] = {SM_UINT8, SM_INT8, SM_BOOL};
      dt1 = kBytes[in.u8() % 3];
      n = in.u8() % 25;
      keep = in.u8() & 1;
      versioned = in.u8() & 1;
    }
    std::vector<ReView> views(1 + in.u8() % 3);
    for (ReView& r : views) {
      r.nd = in.u8() % 3;
      r.shape.v.resize(static_cast<size_t>(r.nd));
      r.strides.v.resize(static_cast<size_t>(r.nd));
      for (int64_t& x : r.shape.v) x = in.u8() % 5;
      r.with_strides = in.u8() & 1;
      for (int64_t& x : r.strides.v) x = static_cast<int64_t>(in.u8() % 7) - 3;
      r.off = in.u8() % 9;
      r.dt = static_cast<sm_dtype>(in.u8() % kCorpusDTypes);
    }
    if (src != 2) {
      const int ti = misaligned_bytes(src == 1, mis, dt1, n, versioned);
      if (ti < 0) return;
      const sm_tensor t = tensors[static_cast<size_t>(ti)].h;
      sm_storage sh = kSentS;
      REL_OK(sm_tensor_storage(t, &sh));
      if (sh == kSentS) return;
      check_new_handle(sh, rel::kTagStorage, "a new storage", true);
      shandles.push_back(StorageHM{sh, 1, tensors[static_cast<size_t>(ti)].storage});
      i = static_cast<int>(shandles.size() - 1);
      h = sh;
      void* p = nullptr;
      REL_OK(sm_storage_data_ptr(sh, &p));
      if (n > 0) REL_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == mis, "storage of bytes at +%zu has data %p", mis, p);
      if (!keep) {  // only the storage handle holds the bytes now
        REL_OK(sm_tensor_release(t));
        bury(tgrave, t);
        tensors.erase(tensors.begin() + ti);
      }
    }
    for (const ReView& r : views) from_storage(h, i, r.nd, r.shape, r.with_strides ? &r.strides : nullptr, r.off, r.dt);
  }

  // ---- DLPack data + byte_offset arithmetic (op DLADDR) ----
  // The status sm_from_dlpack must return for valid metadata (CPU, a known
  // dtype of `item` bytes, sizes >= 0 reaching elements [lo, hi] from
  // element 0, or none) at data + byte_offset, in the library's order
  // (include/stridemem.h): NULL data with an offset; an offset past
  // PTRDIFF_MAX; data + offset past 2^64; NULL data with elements; a
  // misaligned address; a span starting below address 0; a span ending past
  // the top of the address space.
  static sm_status predict_dlpack_address(uint64_t data, uint64_t off, uint64_t item, i128 lo, i128 hi, bool empty) {
    if (data == 0 && off != 0) return SM_ERR_INVALID_ARGUMENT;
    if (off > static_cast<uint64_t>(PTRDIFF_MAX)) return SM_ERR_OUT_OF_BOUNDS;
    if (off > UINT64_MAX - data) return SM_ERR_OUT_OF_BOUNDS;
    const uint64_t first = data + off;
    if (!empty && first == 0) return SM_ERR_INVALID_ARGUMENT;
    if (first % item != 0) return SM_ERR_INVALID_ARGUMENT;
    if (empty) return SM_OK;
    const i128 below = -lo * i128(item), nbytes = (hi - lo + 1) * i128(item);
    if (below > i128(first)) return SM_ERR_OUT_OF_BOUNDS;
    const i128 start = i128(first) - below;
    if (start + nbytes > i128(UINT64_MAX)) return SM_ERR_OUT_OF_BOUNDS;
    return SM_OK;
  }

  // A producer whose data and byte_offset no buffer can have: offsets of
  // 2^64 - 4, 2^63 (PTRDIFF_MAX + 1), 2^64 - data (+ a little: wraps back
  // into the buffer), PTRDIFF_MAX or 256.. on data near 2^63 / 2^64 (the sum
  // wraps), NULL data with an offset, a span passing the top of the address
  // space, a span reaching below address 0 through a negative stride. Every
  // one is refused with its exact status, writes no output, changes nothing
  // and leaves the producer's deleter alone. Only refusals are asked for:
  // these address ranges are nobody's memory.
  void op_dlpack_address() {
    const bool versioned = in.u8() & 1;
    const int mode = in.u8() % 8;
    static const struct { uint8_t code, bits; } kTypes[] = {
        {sm_kDLInt, 8}, {sm_kDLUInt, 8}, {sm_kDLBool, 8}, {sm_kDLInt, 16}, {sm_kDLInt, 32},
        {sm_kDLInt, 64}, {sm_kDLFloat, 16}, {sm_kDLFloat, 32}, {sm_kDLFloat, 64}, {sm_kDLBfloat, 16}};
    const auto ty = kTypes[in.u8() % 10];
    const uint64_t item = ty.bits / 8;
    int32_t nd = in.u8() % 4;
    std::vector<int64_t> shape(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
    for (int64_t& x : shape) x = in.u8() % 5;
    bool with_strides = in.u8() & 1;
    for (int64_t& x : strides) x = static_cast<int64_t>(in.u8() % 7) - 3;
    const uint8_t a = in.u8(), b = in.u8();
    if (mode == 5 && !(b & 1)) {  // NULL data with an offset, mostly with zero elements
      if (nd == 0) {
        nd = 1;
        shape.assign(1, 0);
        strides.assign(1, 1);
      }
      shape[b / 2 % shape.size()] = 0;
    }
    if (mode >= 6) {  // elements, and a span that can pass the top or go below 0
      if (nd == 0) {
        nd = 1;
        shape.assign(1, 2);
        strides.assign(1, 1);
      }
      for (int64_t& x : shape) x = std::max<int64_t>(x, 1);
      if (mode == 6) {  // row-major, at least two elements
        with_strides = false;
        shape[0] = std::max<int64_t>(shape[0], 2);
      } else {  // a negative stride over 3.. elements
        with_strides = true;
        shape[0] = 3 + a % 6;
        strides[0] = -(1 + b % 3);
      }
    }
    i128 lo, hi;
    bool empty, negative;
    reach(shape, with_strides ? &strides : nullptr, &lo, &hi, &empty, &negative);
    const i128 nbytes = empty ? 0 : (hi - lo + 1) * i128(item);
    const i128 below = empty ? 0 : -lo * i128(item);
    // A real buffer covering the layout (what data points into in modes 0..2).
    const size_t nb = static_cast<size_t>(nbytes) + 64;
    char* mem = static_cast<char*>(std::malloc(nb));
    std::memset(mem, 0x33, nb);
    const uint64_t real = reinterpret_cast<uintptr_t>(mem) + static_cast<uint64_t>(below);
    uint64_t data = real, off = 0;
    switch (mode) {
      case 0: off = UINT64_MAX - 3; break;                    // 2^64 - 4: 4 bytes before the buffer if wrapped
      case 1: off = uint64_t(1) << 63; break;                 // PTRDIFF_MAX + 1
      case 2: off = (0 - real) + item * (a % 4); break;       // wraps back into the buffer
      case 3: data = (uint64_t(1) << 63) + 64 * (1 + a % 16); off = PTRDIFF_MAX; break;
      case 4: data = UINT64_MAX - 255; off = 256 + item * (a % 4); break;
      case 5: {
        static const uint64_t offs[] = {1, 8, 4096, uint64_t(1) << 63, UINT64_MAX - 3};
        data = 0;
        off = offs[a % 5];
        break;
      }
      case 6: {  // the span's last byte past 2^64 - 1
        const uint64_t n = static_cast<uint64_t>(nbytes), elems = n / item;
        data = (0 - n) + item * (1 + a % (elems - 1));
        off = item * (b % 4);
        data -= off;
        break;
      }
      default: {  // the lowest element below address 0
        const uint64_t lows = static_cast<uint64_t>(below) / item;  // >= 2
        data = item * (1 + a % (lows - 1));
        break;
      }
    }
    const sm_status want = predict_dlpack_address(data, off, item, lo, hi, empty);
    if (want == SM_OK) {  // (never: every mode is out of reach) not memory to hand over
      std::free(mem);
      return;
    }
    auto* p = new Producer;
    p->ext = exts[static_cast<size_t>(new_ext(mem, true))].get();
    p->shape = shape;
    p->strides = strides;
    sm_DLTensor dl;
    std::memset(&dl, 0, sizeof dl);
    dl.data = reinterpret_cast<void*>(static_cast<uintptr_t>(data));
    dl.device.device_type = static_cast<decltype(dl.device.device_type)>(SM_DEVICE_CPU);
    dl.ndim = nd;
    dl.dtype.code = ty.code;
    dl.dtype.bits = ty.bits;
    dl.dtype.lanes = 1;
    dl.shape = p->shape.empty() ? nullptr : p->shape.data();
    dl.strides = with_strides && !p->strides.empty() ? p->strides.data() : nullptr;
    dl.byte_offset = off;
    void* managed = producer_managed(p, dl, versioned);
    ExtM* ext = p->ext;
    sm_tensor out = kSentT;
    const rel::State before = rel::state();
    const sm_status st = sm_from_dlpack(managed, versioned, &out);
    check_status(st, "sm_from_dlpack (hostile address)");
    REL_CHECK(st == want,
              "sm_from_dlpack: data %#llx + byte_offset %#llx, %lld-byte elements [%lld, %lld]%s -> %d, expected %d",
              (unsigned long long)data, (unsigned long long)off, (long long)item, (long long)lo, (long long)hi,
              empty ? " (empty)" : "", st, want);
    if (st == SM_OK) {  // (reported) a tensor over no one's memory: drop it untouched
      REL_OK(sm_tensor_release(out));
      REL_CHECK(ext->calls == 1, "producer deleter ran %d times after the only view died", ext->calls);
      return;
    }
    REL_CHECK(out == kSentT, "failing sm_from_dlpack wrote its output");
    REL_CHECK(ext->calls == 0, "failing sm_from_dlpack called the producer's deleter");
    check_unchanged(before, "sm_from_dlpack (hostile address)");
    producer_free(p);  // ownership stayed with us
  }

  // ---- empty tensors with overflowing dense strides (op EMPTYHUGE) ----
  // A 0 in one dim and huge sizes in the others (the dense strides pass
  // int64): every creation succeeds with an empty storage, and so do clone,
  // to, contiguous (every format valid for the ndim), copy_into both ways,
  // reshape, and copies of transposed views.
  void op_empty_huge() {
    const int nd = 2 + in.u8() % 4;
    const int zero_at = in.u8() % nd;
    static const int64_t kSizes[] = {int64_t(1) << 62, INT64_MAX, kHuge, int64_t(1) << 32,
                                     6, 3, 1, int64_t(1) << 31};
    std::vector<int64_t> shape(static_cast<size_t>(nd));
    for (int k = 0; k < nd; ++k) {
      const uint8_t b = in.u8();
      shape[static_cast<size_t>(k)] = k == zero_at ? 0 : kSizes[b % 8];
    }
    const sm_dtype dt = static_cast<sm_dtype>(in.u8() % kCorpusDTypes);
    const int how = in.u8() % 5;
    std::vector<int64_t> strides(static_cast<size_t>(nd));
    if (how == 3)
      for (int64_t& x : strides) x = in.stride();  // anything: no element is reached
    // (decoded first: whatever fails below, the next op starts where it should)
    std::vector<std::pair<int, uint8_t>> ops(1 + in.u8() % 4);
    for (auto& o : ops) {
      o.first = in.u8() % 6;
      o.second = in.u8();
    }
    sm_tensor t = kSentT;
    sm_status st;
    const rel::State before = rel::state();
    const char* what = "sm_empty";
    if (how == 0) {
      st = sm_empty(shape.data(), nd, dt, rel::cpu(), &t);
    } else if (how == 1) {
      what = "sm_zeros";
      st = sm_zeros(shape.data(), nd, dt, rel::cpu(), &t);
    } else if (how == 2) {
      what = "sm_full";
      st = sm_full(shape.data(), nd, 7.0, dt, rel::cpu(), &t);
    } else if (how == 3) {
      what = "sm_empty_strided";
      st = sm_empty_strided(shape.data(), strides.data(), nd, dt, rel::cpu(), &t);
    } else {
      what = "sm_from_host";
      st = sm_from_host(nullptr, shape.data(), nd, dt, rel::cpu(), &t);
    }
    check_status(st, what);
    REL_CHECK(st == SM_OK, "%s of an empty shape (a 0 at dim %d of %d, huge other sizes) -> %d", what, zero_at, nd,
              st);
    if (st != SM_OK) {
      REL_CHECK(t == kSentT, "failing %s wrote its output", what);
      check_unchanged(before, what);
      return;
    }
    rel::Meta m;
    if (!check_view(t, nullptr, what, &m)) return;
    check_empty_like(m, shape, dt, what);
    add_tensor(t, new_storage(0, true), -1);
    for (const auto& op : ops) {
      const int kind = op.first;
      const uint8_t b = op.second;
      sm_tensor out = kSentT, dst = kSentT, v = kSentT;
      sm_dtype out_dt = dt;
      std::vector<int64_t> out_shape = shape;
      if (kind == 0) {
        const sm_memory_format f[] = {SM_CONTIGUOUS, SM_PRESERVE, nd == 4 ? SM_CHANNELS_LAST : SM_CONTIGUOUS,
                                      nd == 5 ? SM_CHANNELS_LAST_3D : SM_PRESERVE};
        what = "sm_clone";
        st = sm_clone(t, f[b % 4], &out);
      } else if (kind == 1) {
        what = "sm_to";
        out_dt = static_cast<sm_dtype>(b % kCorpusDTypes);
        st = sm_to(t, rel::cpu(), out_dt, &out, nullptr);
      } else if (kind == 2) {
        const sm_memory_format f[] = {SM_CONTIGUOUS, nd == 4 ? SM_CHANNELS_LAST : SM_CONTIGUOUS,
                                      nd == 5 ? SM_CHANNELS_LAST_3D : SM_CONTIGUOUS};
        what = "sm_contiguous";
        st = sm_contiguous(t, f[b % 3], &out, nullptr);
      } else if (kind == 3) {  // into a second empty tensor of the same shape (another dtype), and back
        what = "sm_empty (copy_into destination)";
        out_dt = static_cast<sm_dtype>(b % kCorpusDTypes);
        st = sm_empty(shape.data(), nd, out_dt, rel::cpu(), &dst);
        check_status(st, what);
        REL_CHECK(st == SM_OK, "%s -> %d", what, st);
        if (st != SM_OK) continue;
        what = "sm_copy_into";
        st = sm_copy_into(dst, t);
        check_status(st, what);
        REL_CHECK(st == SM_OK, "sm_copy_into(empty, empty of a huge shape) -> %d", st);
        st = sm_copy_into(t, dst);
        out = dst;
      } else if (kind == 4) {  // a transposed view, copied
        what = "sm_transpose";
        st = sm_transpose(t, 0, nd - 1, &v);
        check_status(st, what);
        REL_CHECK(st == SM_OK, "%s -> %d", what, st);
        if (st != SM_OK) continue;
        std::swap(out_shape[0], out_shape[static_cast<size_t>(nd - 1)]);
        what = b & 1 ? "sm_clone (transposed)" : "sm_contiguous (transposed)";
        st = b & 1 ? sm_clone(v, b & 2 ? SM_PRESERVE : SM_CONTIGUOUS, &out) : sm_contiguous(v, SM_CONTIGUOUS, &out, nullptr);
      } else {
        what = "sm_reshape";
        const int64_t flat[1] = {0};
        out_shape.assign(1, 0);
        st = sm_reshape(t, flat, 1, &out, nullptr);
      }
      check_status(st, what);
      REL_CHECK(st == SM_OK, "%s of an empty tensor with huge sizes -> %d", what, st);
      if (st == SM_OK) {
        rel::Meta r;
        if (check_view(out, nullptr, what, &r)) check_empty_like(r, out_shape, out_dt, what);
      }
      for (sm_tensor x : {out, v})
        if (x != kSentT && x) {
          check_new_handle(x, rel::kTagTensor, what, true);
          REL_OK(sm_tensor_release(x));
          bury(tgrave, x);
        }
    }
  }
  void check_empty_like(const rel::Meta& m, const std::vector<int64_t>& shape, sm_dtype dt, const char* what) {
    REL_CHECK(m.numel == 0 && m.nbytes == 0 && m.storage_nbytes == 0 && m.dtype == dt &&
                  m.ndim == static_cast<int32_t>(shape.size()),
              "%s: numel %lld, storage %lld bytes, dtype %d, ndim %d for an empty result of dtype %d", what,
              (long long)m.numel, (long long)m.storage_nbytes, m.dtype, m.ndim, dt);
    for (int k = 0; k < m.ndim && k < static_cast<int>(shape.size()); ++k)
      REL_CHECK(m.shape[k] == shape[static_cast<size_t>(k)], "%s: size %lld at dim %d, expected %lld", what,
                (long long)m.shape[k], k, (long long)shape[static_cast<size_t>(k)]);
  }

  // ---- sm_memory_stats and struct_size (op STATS) ----
  // Into a buffer filled with `pattern` (struct_size = size): below the end
  // of the first field refused, nothing written; else exactly the whole
  // fields within min(size, sizeof) are written (equal to a full call's),
  // struct_size and every byte after them untouched.
  void check_stats(uint32_t size, uint8_t pattern, bool null_out) {
    constexpr size_t kFull = sizeof(sm_memory_stats_t);
    constexpr size_t kHeader = offsetof(sm_memory_stats_t, allocated_bytes);
    std::vector<uint8_t> buf(kFull + 64, pattern);
    std::memcpy(buf.data(), &size, sizeof size);
    const sm_status st =
        sm_memory_stats(rel::cpu(), null_out ? nullptr : reinterpret_cast<sm_memory_stats_t*>(buf.data()));
    check_status(st, "sm_memory_stats");
    const bool ok = !null_out && size >= kHeader + sizeof(int64_t);
    REL_CHECK(st == (ok ? SM_OK : SM_ERR_INVALID_ARGUMENT), "sm_memory_stats(struct_size %u%s) -> %d", size,
              null_out ? ", NULL" : "", st);
    const size_t fit = std::min<size_t>(size, kFull);
    const size_t n = st == SM_OK && fit >= kHeader ? kHeader + (fit - kHeader) / 8 * 8 : sizeof(uint32_t);
    const sm_memory_stats_t full = rel::stats();
    uint32_t size_after;
    std::memcpy(&size_after, buf.data(), sizeof size_after);
    REL_CHECK(size_after == size, "sm_memory_stats changed struct_size from %u to %u", size, size_after);
    if (n > sizeof(uint32_t))
      REL_CHECK(std::memcmp(buf.data() + 4, reinterpret_cast<const char*>(&full) + 4, n - 4) == 0,
                "sm_memory_stats(struct_size %u): fields differ from a full call's", size);
    size_t past = 0;
    for (size_t k = n; k < buf.size(); ++k) past += buf[k] != pattern;
    REL_CHECK(past == 0, "sm_memory_stats(struct_size %u) changed %zu bytes past the %zu bytes of whole fields", size,
              past, n);
  }
  void op_stats() {
    const int mode = in.u8() % 4;
    const uint8_t a = in.u8(), b = in.u8();
    constexpr uint32_t kFull = sizeof(sm_memory_stats_t);
    uint32_t size = 0;
    if (mode == 0) size = a % (kFull + 16);
    else if (mode == 1) size = 8 + 8 * (a % ((kFull - 8) / 8 + 1)) + 1 + b % 7;  // ends inside a field
    else if (mode == 2) {
      static const uint32_t big[] = {kFull, kFull + 1, kFull + 7, 0xFFFFFFFFu, 0x80000000u};
      size = big[a % 5];
    }
    check_stats(size, 0xC3, mode == 3);  // two patterns: any byte written differs from one of them
    check_stats(size, 0x3C, mode == 3);
  }

  // ---- index_select through an expanded index (op EXPIDX) ----
  // A 1-element int32/int64 index expanded (stride 0) to a long length, over
  // a fresh source (some other dim possibly 0: an empty result) or one of the
  // pool. Exactly OUT_OF_BOUNDS for a value outside [-size, size) (also when
  // the result is empty), else a new tensor of the right shape holding the
  // gathered elements.
  void op_expanded_index() {
    const sm_dtype idt = in.u8() & 1 ? SM_INT64 : SM_INT32;
    const int64_t len = kExpandedIndexLengths[in.u8() % (sizeof kExpandedIndexLengths / sizeof kExpandedIndexLengths[0])];
    const bool idx0d = in.u8() % 4 == 0;
    const int vmode = in.u8() % 5;
    const uint8_t vb = in.u8();
    const bool fresh = in.u8() % 3 != 0;
    // The source.
    sm_tensor src = nullptr;
    bool src_owned = false;  // a fresh source, released at the end
    int32_t d = 0;
    rel::Meta pm;
    bool valid = true;
    if (fresh) {
      const int32_t nd = in.u8() % 4;
      std::vector<int64_t> shape(static_cast<size_t>(nd));
      for (int64_t& x : shape) x = in.u8() % 4;
      const sm_dtype dt = static_cast<sm_dtype>(in.u8() % kCorpusDTypes);
      d = static_cast<int32_t>(in.u8() % 5) - 2;
      i128 n = 1;
      for (int64_t x : shape) n *= x;
      std::vector<uint8_t> bytes(static_cast<size_t>(n) * sm_dtype_size(dt));
      for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(dt == SM_BOOL ? k & 1 : k * 29 + 5);
      const sm_status st = sm_from_host(bytes.data(), shape.empty() ? nullptr : shape.data(), nd, dt, rel::cpu(), &src);
      check_status(st, "sm_from_host (index_select source)");
      REL_CHECK(st == SM_OK || (st == SM_ERR_OUT_OF_MEMORY && fault_armed), "sm_from_host -> %d", st);
      if (st != SM_OK) return;
      check_new_handle(src, rel::kTagTensor, "an index_select source", true);
      src_owned = true;
      valid = rel::meta_of(src, &pm);
    } else {
      const Pick p = pick_tensor();
      d = in.dim();
      src = p.h;
      valid = p.valid && rel::meta_of(p.h, &pm);
    }
    // The index: one value, expanded. (A 0-d source indexes as 1 element.)
    const int nds = valid ? std::max(pm.ndim, 1) : 1;
    const bool dim_ok = d >= -nds && d < nds;
    const int dd = dim_ok ? (d < 0 ? d + nds : d) : 0;
    const int64_t dsize = !valid || !dim_ok ? 0 : (pm.ndim == 0 ? 1 : pm.shape[dd]);
    i128 v128;
    switch (vmode) {
      case 0: v128 = dsize > 0 ? vb % dsize : 0; break;           // in range (if any is)
      case 1: v128 = dsize > 0 ? -1 - vb % dsize : -1; break;     // negative, in range (if any is)
      case 2: v128 = i128(dsize) + vb % 3; break;                 // past the end
      case 3: v128 = -i128(dsize) - 1 - vb % 3; break;            // before the start
      default: v128 = idt == SM_INT64 ? (vb & 1 ? INT64_MIN : INT64_MAX) : (vb & 1 ? INT32_MIN : INT32_MAX); break;
    }
    // (Clamped to int64: still outside [-size, size) when it was.)
    int64_t v = static_cast<int64_t>(std::min<i128>(std::max<i128>(v128, INT64_MIN), INT64_MAX));
    std::vector<uint8_t> vbytes(8);
    if (idt == SM_INT64) std::memcpy(vbytes.data(), &v, 8);
    else {
      const int32_t v32 = static_cast<int32_t>(v);
      v = v32;
      std::memcpy(vbytes.data(), &v32, 4);
    }
    const int64_t one[1] = {1};
    sm_tensor i1 = nullptr, idx = nullptr;
    sm_status st = sm_from_host(vbytes.data(), idx0d ? nullptr : one, idx0d ? 0 : 1, idt, rel::cpu(), &i1);
    check_status(st, "sm_from_host (index)");
    REL_CHECK(st == SM_OK || (st == SM_ERR_OUT_OF_MEMORY && fault_armed), "sm_from_host (index) -> %d", st);
    if (st == SM_OK) {
      check_new_handle(i1, rel::kTagTensor, "an index", true);
      const int64_t l[1] = {len};
      st = sm_expand(i1, l, 1, &idx);
      check_status(st, "sm_expand (index)");
      REL_CHECK(st == SM_OK, "sm_expand of a 1-element index to %lld -> %d", (long long)len, st);
      if (st == SM_OK) check_new_handle(idx, rel::kTagTensor, "an expanded index", true);
    }
    if (st == SM_OK) {
      const bool in_range = dim_ok && v >= -dsize && v < dsize;
      // The result: the source's shape (a 0-d one as 1 element) with len at dim.
      i128 out_numel = len;
      if (valid)
        for (int k = 0; k < pm.ndim; ++k)
          if (k != dd) out_numel = sat_mul(out_numel, pm.shape[k]);
      // A 0-d source takes exactly one index value (and gives a 0-d result).
      const bool scalar_src = valid && pm.ndim == 0;
      const sm_status want = !valid                           ? SM_ERR_INVALID_HANDLE
                             : !dim_ok                        ? SM_ERR_OUT_OF_BOUNDS
                             : scalar_src && len != 1         ? SM_ERR_SHAPE
                             : !in_range                      ? SM_ERR_OUT_OF_BOUNDS
                                                              : SM_OK;
      // Never ask for a big result (the harness compares it element by element).
      if (!(want == SM_OK && out_numel > kMaxTouch)) {
        sm_tensor out = kSentT;
        const rel::State before = rel::state();
        st = sm_index_select(src, d, idx, &out);
        check_status(st, "sm_index_select (expanded index)");
        const bool oom_ok = fault_armed && want == SM_OK && out_numel > 0;
        REL_CHECK(st == want || (st == SM_ERR_OUT_OF_MEMORY && oom_ok),
                  "sm_index_select(dim %d of a %d-d source, index %lld expanded to %lld) -> %d, expected %d", d,
                  valid ? pm.ndim : -1, (long long)v, (long long)len, st, want);
        if (st != SM_OK) {
          REL_CHECK(out == kSentT, "failing sm_index_select wrote its output");
          check_unchanged(before, "sm_index_select (expanded index)");
        } else if (valid) {
          rel::Meta m;
          const bool have_m = check_view(out, nullptr, "sm_index_select (expanded index)", &m);
          if (have_m) {
            const int want_nd = pm.ndim;  // a 0-d source gives a 0-d result
            REL_CHECK(m.ndim == want_nd && m.dtype == pm.dtype && m.numel == static_cast<int64_t>(out_numel) &&
                          m.storage_nbytes == m.nbytes,
                      "sm_index_select (expanded index): ndim %d dtype %d numel %lld, expected %d %d %lld", m.ndim,
                      m.dtype, (long long)m.numel, want_nd, pm.dtype, (long long)out_numel);
            if (m.ndim == nds && m.ndim > 0) REL_CHECK(m.shape[dd] == len, "sm_index_select: size %lld at dim %d, expected %lld",
                                         (long long)m.shape[dd], dd, (long long)len);
            if (len <= kMaxTouch && m.numel > 0 && m.numel <= kMaxTouch) check_index_select(pm, m, idx, d);
          }
          int same = -1;
          REL_OK(sm_same_storage(out, src, &same));
          REL_CHECK(same == 0, "sm_index_select shares its source's storage");
          if (have_m && tensors.size() < kMaxTensors) {
            add_tensor(out, new_storage(m.storage_nbytes, true), -1);
          } else {
            check_new_handle(out, rel::kTagTensor, "sm_index_select", true);
            REL_OK(sm_tensor_release(out));
            bury(tgrave, out);
          }
        }
      }
    }
    for (sm_tensor x : {idx, i1})
      if (x) {
        REL_OK(sm_tensor_release(x));
        bury(tgrave, x);
      }
    if (src_owned) {
      REL_OK(sm_tensor_release(src));
      bury(tgrave, src);
    }
  }

  // ---- tags, history, snapshot (issue 14) ----
  std::vector<std::string> tag_names;  // this thread's tag stack, as pushed by the harness
  int64_t history_cap = 0;             // the CPU history ring's size; 0: not recording

  // Valid names; none holds a '/', so a block's tag splits back into them.
  static const std::vector<std::string>& good_tags() {
    static const std::vector<std::string> t = {"encoder", "attn", "\xC3\xA9t\xC3\xA9",
                                               "quote\"back\\slash", "<script>",
                                               "\xF0\x9F\x98\x80", std::string(256, 'n')};
    return t;
  }

  void push_tag_checked(const char* name, bool valid) {
    const rel::State before = rel::state();
    const sm_status st = sm_push_tag(name);
    check_status(st, "sm_push_tag");
    const sm_status want = valid && tag_names.size() < 256 ? SM_OK : SM_ERR_INVALID_ARGUMENT;
    REL_CHECK(st == want, "sm_push_tag (%s, depth %zu) -> %d, expected %d", valid ? "valid" : "invalid",
              tag_names.size(), st, want);
    if (st == SM_OK) tag_names.push_back(name);
    else check_unchanged(before, "sm_push_tag");
  }

  void op_memory_introspection(int sub) {
    if (sub < 4) {  // a valid name
      push_tag_checked(good_tags()[in.u8() % good_tags().size()].c_str(), true);
    } else if (sub == 4) {  // a burst: the depth limit is within reach of one input
      const int n = 1 + in.u8() % 128;
      for (int i = 0; i < n; ++i) push_tag_checked(good_tags()[static_cast<size_t>(i) % 2].c_str(), true);
    } else if (sub < 7) {  // an invalid name
      static const std::string kLong(257, 'l');
      const char* const bad[] = {nullptr, "", "a\tb", "\x7f", "\xC3", "\xC0\xAF", "\xED\xA0\x80",
                                 "\xF4\x90\x80\x80", "ok\xFF", kLong.c_str()};
      push_tag_checked(bad[in.u8() % (sizeof bad / sizeof bad[0])], false);
    } else if (sub < 10) {  // pop (one, or all that are left and one more)
      const int n = in.u8() % 4 == 0 ? static_cast<int>(tag_names.size()) + 1 : 1;
      for (int i = 0; i < n; ++i) {
        const rel::State before = rel::state();
        const sm_status st = sm_pop_tag();
            check_status(st, "sm_pop_tag");
        REL_CHECK(st == (tag_names.empty() ? SM_ERR_INVALID_ARGUMENT : SM_OK),
                  "sm_pop_tag at depth %zu -> %d", tag_names.size(), st);
        if (st == SM_OK) tag_names.pop_back();
        else check_unchanged(before, "sm_pop_tag");
      }
    } else if (sub < 12) {  // history: valid and invalid ring sizes. (Not 2^24, the
      // largest valid one: its ring is reserved at once, past the 1 GiB cap of
      // single allocations this harness runs under with ASan.)
      static const int64_t kSizes[] = {0, 1, 3, 64, 1000, 0, -1, INT64_MIN, (int64_t(1) << 24) + 1,
                                       INT64_MAX, -(int64_t(1) << 24)};
      const int64_t n = kSizes[in.u8() % (sizeof kSizes / sizeof kSizes[0])];
      const rel::State before = rel::state();
      const sm_status st = sm_memory_record_history(rel::cpu(), n);
        check_status(st, "sm_memory_record_history");
      const bool valid = n >= 0 && n <= (int64_t(1) << 24);
      REL_CHECK(st == (valid ? SM_OK : SM_ERR_INVALID_ARGUMENT), "sm_memory_record_history(%lld) -> %d",
                (long long)n, st);
      if (st == SM_OK) history_cap = n;
      check_unchanged(before, "sm_memory_record_history");
    } else {
      snapshot_checked();
    }
  }

  // A whole snapshot, parsed and checked against the statistics and the model.
  void snapshot_checked() {
    std::vector<char> buf;
    size_t need = 0;
    do {
      buf.resize(need);
      const sm_status st = sm_memory_snapshot(rel::cpu(), buf.empty() ? nullptr : buf.data(), buf.size(), &need);
        check_status(st, "sm_memory_snapshot");
      if (st != SM_OK) return;
    } while (need > buf.size());
    const sm_memory_stats_t s = rel::stats();
    smt::json::Value j;
    try {
      j = smt::json::parse(std::string(buf.data(), need - 1));
    } catch (const std::exception& e) {
      REL_CHECK(false, "sm_memory_snapshot: not JSON: %s", e.what());
      return;
    }
    try {
      const smt::json::Value& t = j["totals"];
      REL_CHECK(t["allocated_bytes"].i64() == s.allocated_bytes && t["reserved_bytes"].i64() == s.reserved_bytes &&
                    t["requested_bytes"].i64() == s.requested_bytes && t["num_allocs"].i64() == s.num_allocs &&
                    t["active_storages"].i64() == s.active_storages && t["active_views"].i64() == s.active_views,
                "snapshot totals differ from sm_memory_stats");
      int64_t reserved = 0, allocated = 0, requested = 0;
      for (const smt::json::Value& seg : j["segments"].items) {
        reserved += seg["size"].i64();
        int64_t offset = 0;
        for (const smt::json::Value& b : seg["blocks"].items) {
          REL_CHECK(b["offset"].i64() == offset, "snapshot blocks do not tile their segment");
          offset += b["size"].i64();
          if (b["state"].str() != "allocated") continue;
          allocated += b["size"].i64();
          requested += b["requested"].i64();
          if (b["tag"].is_null()) continue;
          // A path of names the harness pushed ("/" appears in none of them).
          const std::string& tag = b["tag"].str();
          for (size_t at = 0; at <= tag.size();) {
            const size_t slash = std::min(tag.find('/', at), tag.size());
            const std::string part = tag.substr(at, slash - at);
            REL_CHECK(std::find(good_tags().begin(), good_tags().end(), part) != good_tags().end(),
                      "a block's tag \"%s\" holds a name never pushed", tag.c_str());
            at = slash + 1;
          }
        }
        REL_CHECK(offset == seg["size"].i64(), "snapshot blocks do not add up to their segment");
      }
      REL_CHECK(reserved == s.reserved_bytes && allocated == s.allocated_bytes && requested == s.requested_bytes,
                "snapshot segments/blocks (%lld reserved, %lld allocated, %lld requested) differ from the totals",
                (long long)reserved, (long long)allocated, (long long)requested);
      REL_CHECK(j.has("history") == (history_cap > 0), "history %s while the model says %lld",
                j.has("history") ? "present" : "absent", (long long)history_cap);
      if (j.has("history")) {
        const smt::json::Value& h = j["history"];
        REL_CHECK(h["capacity"].i64() == history_cap, "history capacity %lld, model %lld",
                  (long long)h["capacity"].i64(), (long long)history_cap);
        const smt::json::Value& ev = h["events"];
        REL_CHECK(static_cast<int64_t>(ev.size()) <= history_cap &&
                      h["dropped"].u64() == h["recorded"].u64() - ev.size(),
                  "history counts");
        if (ev.size() > 0) {
          const smt::json::Value& last = ev[ev.size() - 1];
          REL_CHECK(last["allocated_bytes"].i64() == s.allocated_bytes && last["reserved_bytes"].i64() == s.reserved_bytes,
                    "the newest history event's totals differ from the statistics");
        }
      }
    } catch (const std::exception& e) {
      REL_CHECK(false, "sm_memory_snapshot: a documented field is missing or mistyped: %s", e.what());
    }
  }

  // ===== Op WIDE (op bytes kWideOpBytes): the dtypes in.dtype() never
  // yields (uint16, uint32, uint64, complex64, complex128), each call's
  // status predicted exactly and every element checked against the
  // conversion contract (convert_elem). The tensors it makes join the pool,
  // so every other op (views, copies, writes, getters, storages, stacks,
  // DLPack) then works on them too.
  //   byte 1: mode % 6 — 0 creation (empty, zeros, full, arange, from_host),
  //     1 sm_to into the dtype and on to any dtype, 2 sm_copy_into a fresh
  //     tensor of the dtype (flipped or not) and on into any dtype,
  //     3 sm_tensor_from_storage with the dtype, 4 sm_inplace_scalar and
  //     5 sm_inplace_tensor on a tensor of the dtype (from the pool);
  //   byte 2: the dtype, kWideDTypes[byte % 5]; then the mode's bytes.

  // The elements of m, row-major.
  static std::vector<Elem> elems_of(const rel::Meta& m) {
    const std::vector<uint8_t> b = rel::gather_bytes(m);
    std::vector<Elem> v;
    for (size_t k = 0; k + m.itemsize <= b.size() && m.itemsize; k += m.itemsize)
      v.push_back(load_elem(m.dtype, b.data() + k));
    return v;
  }
  static std::vector<Elem> converted(const std::vector<Elem>& v, sm_dtype d) {
    std::vector<Elem> r;
    for (const Elem& e : v) r.push_back(convert_elem(e, d));
    return r;
  }
  // m's elements equal `want` (row-major). A bool result converted from
  // another dtype holds bytes 0 and 1 only (`from`: the source's dtype; a
  // bool source is copied byte for byte, and any nonzero byte is true).
  void check_elems(const rel::Meta& m, const std::vector<Elem>& want, const char* what, sm_dtype from = -1) {
    if (m.numel > kMaxTouch) return;
    const std::vector<Elem> got = elems_of(m);
    REL_CHECK(got.size() == want.size(), "%s: %zu elements, expected %zu", what, got.size(), want.size());
    for (size_t k = 0; k < got.size() && k < want.size(); ++k)
      if (!same_elem(got[k], want[k])) {
        REL_CHECK(false, "%s: element %zu of %s is %s, expected %s", what, k, sm_dtype_name(m.dtype),
                  elem_str(got[k]).c_str(), elem_str(want[k]).c_str());
        return;
      }
    if (m.dtype == SM_BOOL && from != SM_BOOL)
      for (uint8_t x : rel::gather_bytes(m))
        REL_CHECK(x <= 1, "%s: a bool element converted from %s holds byte %u", what, sm_dtype_name(from), x);
  }
  // A status that must be `want`; an allocation may fail instead while an
  // injected fault is armed.
  void expect_status(sm_status st, sm_status want, const char* what) {
    REL_CHECK(st == want || (want == SM_OK && st == SM_ERR_OUT_OF_MEMORY && fault_armed),
              "%s -> %d (%s), expected %d", what, st, st ? sm_last_error() : "", want);
  }
  // A new handle into the pool over model storage s, or released when the pool is full.
  void keep(sm_tensor out, int s, int lease, const char* what) {
    if (tensors.size() >= kMaxTensors) {
      check_new_handle(out, rel::kTagTensor, what, true);
      REL_OK(sm_tensor_release(out));
      bury(tgrave, out);
      return;
    }
    add_tensor(out, s, lease);
  }
  // A fresh dense tensor for the op to write into (not in the pool yet).
  sm_tensor fresh_tensor(const std::vector<int64_t>& shape, sm_dtype dt, rel::Meta* m) {
    sm_tensor t = nullptr;
    const sm_status st = sm_empty(shape.empty() ? nullptr : shape.data(), static_cast<int32_t>(shape.size()), dt,
                                  rel::cpu(), &t);
    check_status(st, "sm_empty (a destination)");
    expect_status(st, SM_OK, "sm_empty (a destination)");
    if (st != SM_OK) return nullptr;
    if (!rel::meta_of(t, m)) return nullptr;
    return t;
  }

  void op_wide() {
    const int mode = in.u8() % 6;
    const sm_dtype dt = kWideDTypes[in.u8() % 5];
    switch (mode) {
      case 0: wide_create(dt); break;
      case 1: wide_convert(dt); break;
      case 2: wide_copy_into(dt); break;
      case 3: wide_review(dt); break;
      case 4: wide_inplace(dt, false); break;
      default: wide_inplace(dt, true); break;
    }
  }

  // bytes: how % 5, ndim % 4, each size % 5, then full: a scalar; arange:
  // n % 9, start, step (scalars); from_host: a byte b, then the first 32
  // data bytes (the rest: byte k = k * 167 + b).
  void wide_create(sm_dtype dt) {
    const int how = in.u8() % 5;
    std::vector<int64_t> shape(in.u8() % 4);
    for (int64_t& x : shape) x = in.u8() % 5;
    int64_t n = 1;
    for (int64_t x : shape) n *= x;
    const size_t item = sm_dtype_size(dt);
    double v = 0, start = 0, step = 0;
    int64_t count = 0;
    std::vector<uint8_t> data;
    if (how == 2) {
      v = in.scalar();
    } else if (how == 3) {
      count = in.u8() % 9;
      start = in.scalar();
      step = in.scalar();
    } else if (how == 4) {
      data.resize(static_cast<size_t>(n) * item);
      const uint8_t b = in.u8();
      for (size_t k = 0; k < data.size(); ++k) data[k] = k < 32 ? in.u8() : static_cast<uint8_t>(k * 167 + b);
    }
    // The status and the elements the contract gives.
    sm_status want = SM_OK;
    std::vector<Elem> expect;
    if (how == 1) expect.assign(static_cast<size_t>(n), convert_elem(Elem(), dt));
    if (how == 2) {
      if (scalar_fits_dtype(dt, v)) expect.assign(static_cast<size_t>(n), convert_elem(real_elem(v), dt));
      else want = SM_ERR_DTYPE;
    }
    if (how == 3) {  // integer values must fit: the first and the last bound them all
      const double last = start + step * static_cast<double>(count - 1);
      if (dt_integral(dt) && count > 0 && (!scalar_fits_dtype(dt, start) || !scalar_fits_dtype(dt, last)))
        want = SM_ERR_DTYPE;
      for (int64_t k = 0; k < count; ++k)
        expect.push_back(convert_elem(real_elem(start + step * static_cast<double>(k)), dt));
    }
    const int64_t* sp = shape.empty() ? nullptr : shape.data();
    const int32_t nd = static_cast<int32_t>(shape.size());
    static const char* const kWhat[] = {"sm_empty (wide dtype)", "sm_zeros (wide dtype)", "sm_full (wide dtype)",
                                        "sm_arange (wide dtype)", "sm_from_host (wide dtype)"};
    const char* what = kWhat[how];
    sm_tensor out = kSentT;
    const rel::State before = rel::state();
    sm_status st;
    switch (how) {
      case 0: st = sm_empty(sp, nd, dt, rel::cpu(), &out); break;
      case 1: st = sm_zeros(sp, nd, dt, rel::cpu(), &out); break;
      case 2: st = sm_full(sp, nd, v, dt, rel::cpu(), &out); break;
      case 3: st = sm_arange(start, step, count, dt, rel::cpu(), &out); break;
      default: st = sm_from_host(data.empty() ? nullptr : data.data(), sp, nd, dt, rel::cpu(), &out); break;
    }
    check_status(st, what);
    expect_status(st, want, what);
    if (st != SM_OK) {
      REL_CHECK(out == kSentT, "failing %s wrote its output", what);
      check_unchanged(before, what);
      return;
    }
    rel::Meta m;
    if (!check_view(out, nullptr, what, &m)) return;
    const int64_t numel = how == 3 ? count : n;
    REL_CHECK(m.dtype == dt && m.numel == numel && m.storage_nbytes == numel * static_cast<int64_t>(item),
              "%s: dtype %d, %lld elements, storage of %lld bytes; expected %d, %lld, %lld", what, m.dtype,
              (long long)m.numel, (long long)m.storage_nbytes, dt, (long long)numel,
              (long long)(numel * static_cast<int64_t>(item)));
    if (how == 4) REL_CHECK(rel::gather_bytes(m) == data, "%s: the tensor's bytes differ from the data", what);
    else if (how != 0) check_elems(m, expect, what);
    keep(out, new_storage(m.storage_nbytes, true), -1, what);
  }

  // sm_to from src (meta sm) into dtype d: exactly the converted elements;
  // no copy, and the same storage, when the dtype is already d. Returns the
  // new tensor (not in the pool yet; *same: it shares src's storage).
  sm_tensor convert_checked(sm_tensor src, bool valid, const rel::Meta& sm, sm_dtype d, const char* what, int* same) {
    sm_tensor out = kSentT;
    int copied = -5;
    const rel::State before = rel::state();
    const sm_status st = sm_to(src, rel::cpu(), d, &out, &copied);
    check_status(st, what);
    expect_status(st, valid ? SM_OK : SM_ERR_INVALID_HANDLE, what);
    if (st != SM_OK) {
      REL_CHECK(out == kSentT && copied == -5, "failing %s wrote its outputs", what);
      check_unchanged(before, what);
      return nullptr;
    }
    if (!valid) return nullptr;  // (reported)
    rel::Meta m;
    check_view(out, nullptr, what, &m);
    bool shape_ok = m.ndim == sm.ndim;
    for (int k = 0; shape_ok && k < m.ndim; ++k) shape_ok = m.shape[k] == sm.shape[k];
    REL_CHECK(m.dtype == d && shape_ok, "%s: dtype %d ndim %d, expected dtype %d and the source's shape", what,
              m.dtype, m.ndim, d);
    REL_CHECK(copied == (sm.dtype != d), "%s from %s to %s: *copied = %d", what, sm_dtype_name(sm.dtype),
              sm_dtype_name(d), copied);
    *same = -1;
    REL_OK(sm_same_storage(out, src, same));
    REL_CHECK(*same == !copied, "%s: *copied = %d, but same storage = %d", what, copied, *same);
    check_elems(m, converted(elems_of(sm), d), what, sm.dtype);
    return out;
  }

  // bytes: a tensor (pick), then the second dtype (% 15).
  void wide_convert(sm_dtype dt) {
    const Pick p = pick_tensor();
    const sm_dtype back = static_cast<sm_dtype>(in.u8() % SM_NUM_DTYPES);
    rel::Meta pm;
    if (p.valid && (!rel::meta_of(p.h, &pm) || pm.numel > kMaxTouch)) return;  // never a slow copy
    int same = -1;
    sm_tensor out = convert_checked(p.h, p.valid, pm, dt, "sm_to (into a wide dtype)", &same);
    if (!out) return;
    const TensorM t = tensors[static_cast<size_t>(p.slot)];
    rel::Meta om;
    rel::meta_of(out, &om);
    const int s = same == 1 ? t.storage : new_storage(om.storage_nbytes, true);
    const int lease = same == 1 ? t.lease : -1;
    int same2 = -1;
    sm_tensor out2 = convert_checked(out, true, om, back, "sm_to (out of a wide dtype)", &same2);
    keep(out, s, lease, "sm_to (into a wide dtype)");
    if (out2) {
      rel::Meta m2;
      rel::meta_of(out2, &m2);
      keep(out2, same2 == 1 ? s : new_storage(m2.storage_nbytes, true), same2 == 1 ? lease : -1,
           "sm_to (out of a wide dtype)");
    }
  }

  // sm_copy_into dst <- src into a fresh dst: the state, dst's bytes and
  // version unchanged on failure; else dst holds src's elements converted.
  bool copy_into_checked(sm_tensor dst, const rel::Meta& dm, sm_tensor src, bool valid, const rel::Meta& sm,
                         const char* what) {
    const std::vector<uint8_t> bytes = storage_bytes(dm);
    const rel::State before = rel::state();
    const sm_status st = sm_copy_into(dst, src);
    check_status(st, what);
    expect_status(st, valid ? SM_OK : SM_ERR_INVALID_HANDLE, what);
    rel::Meta after;
    rel::meta_of(dst, &after);
    if (st != SM_OK) {
      check_unchanged(before, what);
      REL_CHECK(storage_bytes(after) == bytes && after.version == dm.version,
                "failing %s changed its destination", what);
      return false;
    }
    if (!valid) return false;
    if (after.numel > 0) REL_CHECK(after.version > dm.version, "%s did not bump the version counter", what);
    check_elems(after, converted(elems_of(sm), after.dtype), what, sm.dtype);
    return true;
  }

  // bytes: a tensor (pick; the source), flags (bit 0: the destination is
  // flipped along dim 0, bit 1: so is the second one), the second dtype (% 15).
  void wide_copy_into(sm_dtype dt) {
    const Pick p = pick_tensor();
    const uint8_t flags = in.u8();
    const sm_dtype back = static_cast<sm_dtype>(in.u8() % SM_NUM_DTYPES);
    rel::Meta pm;
    if (p.valid && (!rel::meta_of(p.h, &pm) || pm.numel > kMaxTouch)) return;
    std::vector<int64_t> shape(1, 1);  // (the destination of a call that must be refused)
    if (p.valid) shape.assign(pm.shape, pm.shape + pm.ndim);
    // Two fresh destinations, each flipped along dim 0 or not.
    sm_tensor base[2] = {nullptr, nullptr}, dst[2] = {nullptr, nullptr};
    int s[2] = {-1, -1};
    rel::Meta dm[2];
    const sm_dtype dts[2] = {dt, back};
    for (int k = 0; k < 2; ++k) {
      rel::Meta bm;
      base[k] = fresh_tensor(shape, dts[k], &bm);
      if (!base[k]) break;
      s[k] = new_storage(bm.storage_nbytes, true);
      dst[k] = base[k];
      if (((flags >> k) & 1) && !shape.empty()) {
        const int32_t d0 = 0;
        REL_OK(sm_flip(base[k], &d0, 1, &dst[k]));
      }
      rel::meta_of(dst[k], &dm[k]);
    }
    if (base[0] && copy_into_checked(dst[0], dm[0], p.h, p.valid, pm, "sm_copy_into (into a wide dtype)") &&
        base[1]) {
      rel::Meta src;
      rel::meta_of(dst[0], &src);
      copy_into_checked(dst[1], dm[1], dst[0], true, src, "sm_copy_into (out of a wide dtype)");
    }
    for (int k = 0; k < 2; ++k) {
      if (!base[k]) continue;
      keep(base[k], s[k], -1, "a copy_into destination");
      if (dst[k] != base[k]) keep(dst[k], s[k], -1, "a flipped copy_into destination");
    }
  }

  // bytes: a storage handle (pick), ndim % 3, each size % 5, strides given
  // (bit 0), each stride (% 7 - 3), the offset % 9.
  void wide_review(sm_dtype dt) {
    sm_storage h = nullptr;
    const int i = pick_shandle(&h);
    const int32_t nd = in.u8() % 3;
    Dims shape, strides;
    shape.v.resize(static_cast<size_t>(nd));
    strides.v.resize(static_cast<size_t>(nd));
    for (int64_t& x : shape.v) x = in.u8() % 5;
    const bool with_strides = in.u8() & 1;
    for (int64_t& x : strides.v) x = static_cast<int64_t>(in.u8() % 7) - 3;
    const int64_t off = in.u8() % 9;
    from_storage(h, i, nd, shape, with_strides ? &strides : nullptr, off, dt);
  }

  // The in-place target: byte b < 240 picks among the pool's valid tensors
  // of dtype dt (any of kWideDTypes when none has it), else any tensor (pick).
  Pick pick_wide(sm_dtype dt) {
    const uint8_t b = in.u8();
    std::vector<int> of_dt, wide;
    for (size_t k = 0; k < tensors.size(); ++k) {
      if (!lease_valid(tensors[k].lease)) continue;
      sm_dtype d = -1;
      REL_OK(sm_dtype_of(tensors[k].h, &d));
      if (d == dt) of_dt.push_back(static_cast<int>(k));
      for (sm_dtype w : kWideDTypes)
        if (d == w) wide.push_back(static_cast<int>(k));
    }
    const std::vector<int>& from = of_dt.empty() ? wide : of_dt;
    if (b >= 240 || from.empty()) return pick_tensor();
    Pick p;
    p.slot = from[b % from.size()];
    p.h = tensors[static_cast<size_t>(p.slot)].h;
    p.valid = true;
    return p;
  }

  // The status of sm_inplace_scalar(t of dtype d, op, a, b) from the op
  // table's dtype rules and the scalar rules, before writability.
  static sm_status predict_scalar_op(sm_dtype d, sm_op op, double a, double b) {
    if (op < SM_OP_FILL || op > SM_OP_SIGN) return SM_ERR_INVALID_ARGUMENT;
    const bool arith = op == SM_OP_ADD || op == SM_OP_SUB || op == SM_OP_MUL;
    const bool fractional = op == SM_OP_DIV || op == SM_OP_SQRT || op == SM_OP_EXP;
    if (d == SM_BOOL && !(op == SM_OP_FILL || op == SM_OP_ZERO || op == SM_OP_ABS || op == SM_OP_SIGN))
      return SM_ERR_DTYPE;
    if (dt_integral(d) && fractional) return SM_ERR_DTYPE;
    if (dt_complex(d) && (op == SM_OP_CLAMP || op == SM_OP_RELU || op == SM_OP_ABS || op == SM_OP_SIGN))
      return SM_ERR_DTYPE;
    if (dt_integral(d)) {
      if (arith && !whole_operand(d, a)) return SM_ERR_DTYPE;
      if (op == SM_OP_CLAMP && ((!std::isnan(a) && !whole_operand(d, a)) || (!std::isnan(b) && !whole_operand(d, b))))
        return SM_ERR_DTYPE;
    }
    if (op == SM_OP_FILL && !scalar_fits_dtype(d, a)) return SM_ERR_DTYPE;
    if (op == SM_OP_CLAMP && ((!std::isnan(a) && !scalar_fits_dtype(d, a)) || (!std::isnan(b) && !scalar_fits_dtype(d, b))))
      return SM_ERR_DTYPE;
    return SM_OK;
  }
  // What sm_inplace_scalar makes of element x of a wide dtype d, where the
  // contract fixes it bit for bit (false: not checked, e.g. complex MUL).
  static bool scalar_op_result(sm_dtype d, sm_op op, const Elem& x, double a, double b, Elem* r) {
    if (!is_wide(d)) return false;
    if (op == SM_OP_ZERO) return *r = convert_elem(Elem(), d), true;
    if (op == SM_OP_FILL) return *r = convert_elem(real_elem(a), d), true;
    if (dt_unsigned(d)) {  // wrap-around arithmetic modulo 2^bits, unsigned order
      const auto as_u64 = [](double v) {
        return v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
      };
      const uint64_t t = static_cast<uint64_t>(x.i);
      uint64_t v;
      switch (op) {
        case SM_OP_ADD: v = t + as_u64(a); break;
        case SM_OP_SUB: v = t - as_u64(a); break;
        case SM_OP_MUL: v = t * as_u64(a); break;
        case SM_OP_NEG: v = 0 - t; break;
        case SM_OP_ABS: case SM_OP_RELU: v = t; break;
        case SM_OP_SIGN: v = t != 0; break;
        case SM_OP_CLAMP: {
          i128 c = x.i;
          if (!std::isnan(a) && c < static_cast<i128>(a)) c = static_cast<i128>(a);
          if (!std::isnan(b) && c > static_cast<i128>(b)) c = static_cast<i128>(b);
          v = static_cast<uint64_t>(c);
          break;
        }
        default: return false;
      }
      r->kind = Elem::Int;
      r->i = wrap_to(static_cast<i128>(v), d);
      return true;
    }
    if (!dt_complex(d)) return false;
    r->kind = Elem::Cplx;
    if (op == SM_OP_NEG) {
      r->re = -x.re;
      r->im = -x.im;
      return true;
    }
    if (op != SM_OP_ADD && op != SM_OP_SUB) return false;
    const double s = op == SM_OP_ADD ? 1 : -1;  // (a, 0) added or subtracted part by part
    if (d == SM_COMPLEX64) {  // computed in float
      const float fa = static_cast<float>(a), re = static_cast<float>(x.re), im = static_cast<float>(x.im);
      r->re = s > 0 ? re + fa : re - fa;
      r->im = s > 0 ? im + 0.0f : im - 0.0f;
    } else {
      r->re = s > 0 ? x.re + a : x.re - a;
      r->im = s > 0 ? x.im + 0.0 : x.im - 0.0;
    }
    return true;
  }
  // PyTorch's promote_types (the dtype alpha must fit).
  static sm_dtype promote(sm_dtype a, sm_dtype b) {
    if (a == b || b == SM_BOOL) return a;
    if (a == SM_BOOL) return b;
    if (dt_complex(a) || dt_complex(b))
      return a == SM_COMPLEX128 || b == SM_COMPLEX128 || a == SM_FLOAT64 || b == SM_FLOAT64 ? SM_COMPLEX128
                                                                                          : SM_COMPLEX64;
    if (dt_floating(a) != dt_floating(b)) return dt_floating(a) ? a : b;
    if (dt_floating(a)) {
      if ((a == SM_FLOAT16 && b == SM_BFLOAT16) || (a == SM_BFLOAT16 && b == SM_FLOAT16)) return SM_FLOAT32;
      return sm_dtype_size(a) >= sm_dtype_size(b) ? a : b;
    }
    const auto range = [](sm_dtype d, i128* lo, i128* hi) {
      const int bits = static_cast<int>(sm_dtype_size(d)) * 8;
      *lo = dt_unsigned(d) ? 0 : -(i128(1) << (bits - 1));
      *hi = dt_unsigned(d) ? (i128(1) << bits) - 1 : (i128(1) << (bits - 1)) - 1;
    };
    i128 alo, ahi, blo, bhi;
    range(a, &alo, &ahi);
    range(b, &blo, &bhi);
    if (alo <= blo && bhi <= ahi) return a;
    if (blo <= alo && ahi <= bhi) return b;
    for (sm_dtype c : {SM_INT16, SM_INT32, SM_INT64}) {
      i128 clo, chi;
      range(c, &clo, &chi);
      if (clo <= std::min(alo, blo) && std::max(ahi, bhi) <= chi) return c;
    }
    return SM_INT64;
  }
  // alpha as a multiplier of dtype d: what d takes, and for an unsigned d
  // whole negatives down to -max too (they wrap).
  static bool multiplier_fits(sm_dtype d, double v) {
    if (scalar_fits_dtype(d, v)) return true;
    if (!dt_unsigned(d) || !(v < 0)) return false;
    const int bits = static_cast<int>(sm_dtype_size(d)) * 8;
    return d == SM_UINT64 ? -v < 18446744073709551616.0 : -v <= std::ldexp(1.0, bits) - 1;
  }
  static bool broadcasts(const rel::Meta& from, const rel::Meta& to) {
    if (from.ndim > to.ndim) return false;
    for (int k = 0; k < from.ndim; ++k) {
      const int64_t f = from.shape[from.ndim - 1 - k], t = to.shape[to.ndim - 1 - k];
      if (f != 1 && f != t) return false;
    }
    return true;
  }
  // src's elements broadcast to dst's shape, row-major, read from memory.
  static std::vector<Elem> broadcast_elems(const rel::Meta& src, const rel::Meta& dst) {
    std::vector<Elem> v;
    const char* base = rel::storage_base(src);
    int64_t mi[SM_MAX_DIMS] = {0};
    const int lead = dst.ndim - src.ndim;
    for (int64_t k = 0; k < dst.numel; ++k) {
      int64_t o = src.offset;
      for (int j = 0; j < src.ndim; ++j)
        if (src.shape[j] != 1) o += mi[lead + j] * src.strides[j];
      uint8_t e[16];
      std::memcpy(e, base + o * static_cast<int64_t>(src.itemsize), src.itemsize);
      rel::mark_defined(e, src.itemsize);
      v.push_back(load_elem(src.dtype, e));
      for (int j = dst.ndim - 1; j >= 0; --j) {
        if (++mi[j] < dst.shape[j]) break;
        mi[j] = 0;
      }
    }
    return v;
  }

  // bytes: the target (pick_wide), then sm_inplace_scalar: op (% 14 - 1),
  // a, b (scalars); sm_inplace_tensor: the other tensor (pick), op
  // (% 14 - 1), alpha (scalar). Statuses exactly as predicted (a partial
  // overlap of other with the target: OVERLAP or success); a failure
  // changes nothing; a success changes no byte outside the target's
  // elements, bumps its version and, where the contract fixes each
  // element's result, writes exactly that.
  void wide_inplace(sm_dtype dt, bool tensor_form) {
    const Pick p = pick_wide(dt);
    const Pick q = tensor_form ? pick_tensor() : Pick{};
    const sm_op op = static_cast<sm_op>(in.u8() % 14 - 1);
    const double a = in.scalar(), b = tensor_form ? 0.0 : in.scalar();
    const char* what = tensor_form ? "sm_inplace_tensor (wide dtype)" : "sm_inplace_scalar (wide dtype)";
    rel::Meta dm, om;
    if (p.valid) rel::meta_of(p.h, &dm);
    if (q.valid) rel::meta_of(q.h, &om);
    // Bounded work: a large target only when its elements overlap (refused at once).
    bool zero_stride = false;
    for (int k = 0; p.valid && k < dm.ndim; ++k) zero_stride |= dm.shape[k] > 1 && dm.strides[k] == 0;
    if (p.valid && dm.numel > kMaxTouch && !zero_stride) return;
    if (q.valid && om.numel > kMaxTouch && !(p.valid && dm.numel <= kMaxTouch)) return;
    // Whether the target's elements overlap each other: -1 unknown.
    int overlap = -1;
    std::vector<int64_t> offs;
    if (p.valid && dm.numel <= kMaxTouch) {
      offs = offsets(dm);
      std::vector<int64_t> sorted = offs;
      std::sort(sorted.begin(), sorted.end());
      overlap = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    } else if (zero_stride) {
      overlap = 1;
    }
    int read_only = 0;
    if (p.valid) REL_OK(sm_is_read_only(p.h, &read_only));
    // The predicted status; `either`: OVERLAP is allowed in its place
    // (other partly overlapping the target, or the target's overlap unknown).
    sm_status want = SM_OK;
    bool either = false;
    if (!p.valid || (tensor_form && !q.valid)) {
      want = SM_ERR_INVALID_HANDLE;
    } else if (!tensor_form) {
      want = predict_scalar_op(dm.dtype, op, a, b);
    } else {
      const sm_dtype d = dm.dtype, od = om.dtype;
      const bool arith = op == SM_OP_ADD || op == SM_OP_SUB || op == SM_OP_MUL;
      if (op != SM_OP_FILL && !arith && op != SM_OP_DIV) want = SM_ERR_INVALID_ARGUMENT;
      else if (op != SM_OP_FILL && ((d == SM_BOOL) || (dt_integral(d) && op == SM_OP_DIV) ||
                                    (dt_integral(d) && dt_floating(od)) || (dt_complex(od) && !dt_complex(d)) ||
                                    (op == SM_OP_SUB && od == SM_BOOL)))
        want = SM_ERR_DTYPE;
      else if ((op == SM_OP_ADD || op == SM_OP_SUB) &&
               ((dt_integral(d) && !whole_operand(d, a)) || !multiplier_fits(promote(d, od), a)))
        want = SM_ERR_DTYPE;
      else if (!broadcasts(om, dm))
        want = SM_ERR_SHAPE;
      either = rel::storage_base(om) == rel::storage_base(dm) && om.storage_nbytes > 0;
    }
    if (want == SM_OK && read_only) want = SM_ERR_READ_ONLY;
    if (want == SM_OK && overlap == 1) want = SM_ERR_OVERLAP;
    either |= want == SM_OK && overlap < 0;
    const std::vector<uint8_t> bytes = p.valid ? storage_bytes(dm) : std::vector<uint8_t>();
    // The expected elements (read before the call: other may be the target).
    std::vector<Elem> expect;
    bool check_values = want == SM_OK && overlap == 0 && !bytes.empty();
    if (check_values && !tensor_form) {
      for (const Elem& x : elems_of(dm)) {
        Elem r;
        if (!scalar_op_result(dm.dtype, op, x, a, b, &r)) {
          check_values = false;
          break;
        }
        expect.push_back(r);
      }
    } else if (check_values) {  // FILL from another storage: other's elements converted
      check_values = op == SM_OP_FILL && !either && om.numel <= kMaxTouch;
      if (check_values) expect = converted(broadcast_elems(om, dm), dm.dtype);
    }
    const rel::State before = rel::state();
    const sm_status st = tensor_form ? sm_inplace_tensor(p.h, op, q.h, a) : sm_inplace_scalar(p.h, op, a, b);
    check_status(st, what);
    REL_CHECK(st == want || (want == SM_OK && either && st == SM_ERR_OVERLAP) ||
                  (want == SM_OK && st == SM_ERR_OUT_OF_MEMORY && fault_armed),
              "%s(%s tensor, op %d, %g, %g%s%s) -> %d (%s), expected %d", what,
              p.valid ? sm_dtype_name(dm.dtype) : "no", op, a, b,
              q.valid ? ", other of " : "", q.valid ? sm_dtype_name(om.dtype) : "", st, st ? sm_last_error() : "",
              want);
    if (!p.valid) {
      check_unchanged(before, what);
      return;
    }
    rel::Meta after;
    rel::meta_of(p.h, &after);
    if (st != SM_OK) {
      check_unchanged(before, what);
      REL_CHECK(storage_bytes(after) == bytes && after.version == dm.version, "failing %s changed its target", what);
      return;
    }
    if (after.numel > 0) REL_CHECK(after.version > dm.version, "%s did not bump the version counter", what);
    if (bytes.empty() || offs.empty()) return;
    const std::vector<uint8_t> now = storage_bytes(after);
    std::vector<char> covered(bytes.size(), 0);
    for (int64_t o : offs)
      for (size_t k = 0; k < after.itemsize; ++k) {
        const size_t at = static_cast<size_t>(o) * after.itemsize + k;
        if (o >= 0 && at < covered.size()) covered[at] = 1;
      }
    size_t outside = 0;
    for (size_t k = 0; k < now.size() && k < bytes.size(); ++k) outside += !covered[k] && now[k] != bytes[k];
    REL_CHECK(outside == 0, "%s changed %zu bytes outside its target's elements", what, outside);
    if (check_values) check_elems(after, expect, what, tensor_form ? om.dtype : dm.dtype);
  }

  void op_misc() {
    const uint8_t kind_byte = in.u8();
    if (kind_byte >= 240) {  // (kind bytes below 240 decode as they always did)
      op_memory_introspection(kind_byte - 240);
      return;
    }
    const int kind = kind_byte % 6;
    if (kind == 0) {
      REL_OK(sm_empty_cache(rel::cpu()));
    } else if (kind == 1) {  // a summary or a snapshot into a buffer of any size
      const size_t len = in.u8() % 2 ? in.u8() % 40 : 1u << (in.u8() % 16);
      std::vector<char> buf(len ? len : 1, 'x');
      size_t need = 0;
      const bool snap = in.u8() % 2;
      const sm_status st = snap ? sm_memory_snapshot(rel::cpu(), len ? buf.data() : nullptr, len, &need)
                                : sm_memory_summary(rel::cpu(), len ? buf.data() : nullptr, len, &need);
      check_status(st, snap ? "sm_memory_snapshot" : "sm_memory_summary");
      if (st == SM_OK && need <= len)
        REL_CHECK(buf[need - 1] == '\0' && std::strlen(buf.data()) == need - 1, "text not NUL-terminated at needed");
      if (st == SM_OK && need > len)
        REL_CHECK(std::count(buf.begin(), buf.end(), 'x') == static_cast<std::ptrdiff_t>(buf.size()), "a short buffer was written");
    } else if (kind == 2) {  // stats with an old (small) or bad struct_size
      const uint32_t size = static_cast<uint32_t>(in.u8() % (sizeof(sm_memory_stats_t) + 8));
      check_stats(size, 'y', false);
    } else if (kind == 3) {  // devices that do not exist here
      sm_device d{static_cast<int32_t>(in.u8() % 5), static_cast<int32_t>(in.u8() % 3) - 1};
      sm_tensor out = kSentT;
      const int64_t s[1] = {4};
      const rel::State before = rel::state();
      const sm_status st = sm_zeros(s, 1, SM_FLOAT32, d, &out);
      check_status(st, "sm_zeros on another device");
      if (d.type != SM_DEVICE_CPU || d.index != 0) {
        int32_t ncuda = -1;
        REL_OK(sm_cuda_device_count(&ncuda));
        if (!(d.type == SM_DEVICE_CPU && d.index == 0) && ncuda == 0)
          REL_CHECK(st == SM_ERR_DEVICE || (st == SM_OK && d.type == SM_DEVICE_CUDA_HOST) ||
                        (st == SM_ERR_OUT_OF_MEMORY && fault_armed),
                    "sm_zeros on device (%d, %d) with no GPU -> %d", d.type, d.index, st);
      }
      if (st != SM_OK) {
        REL_CHECK(out == kSentT, "failing sm_zeros wrote its output");
        check_unchanged(before, "sm_zeros on another device");
      } else {
        REL_OK(sm_tensor_release(out));  // not modeled: other device's counters
      }
    } else if (kind == 4) {
      REL_OK(sm_reset_peak_stats(rel::cpu()));
    } else {
      const int32_t n = static_cast<int32_t>(in.u8() % 4);
      REL_OK(sm_set_num_threads(n));
    }
  }

  void teardown() {
    REL_OK(sm_debug_fail_alloc(0));
    // Tags and history are per-thread / per-device state: the next input starts without them.
    for (; !tag_names.empty(); tag_names.pop_back()) REL_OK(sm_pop_tag());
    REL_STATUS(sm_pop_tag(), SM_ERR_INVALID_ARGUMENT);
    if (history_cap) REL_OK(sm_memory_record_history(rel::cpu(), 0));
    history_cap = 0;
    while (!tensors.empty()) {
      REL_OK(sm_tensor_release(tensors.back().h));
      if (--tensors.back().owners == 0) tensors.pop_back();
    }
    while (!shandles.empty()) {
      REL_OK(sm_storage_release(shandles.back().h));
      if (--shandles.back().owners == 0) shandles.pop_back();
    }
    for (StackM& k : stacks)
      if (!k.released) {
        REL_OK(sm_stack_release(k.h));
        k.released = true;
      }
    for (const ExportM& e : exports) {
      if (e.versioned) static_cast<sm_DLManagedTensorVersioned*>(e.m)->deleter(static_cast<sm_DLManagedTensorVersioned*>(e.m));
      else static_cast<sm_DLManagedTensor*>(e.m)->deleter(static_cast<sm_DLManagedTensor*>(e.m));
    }
    exports.clear();
    check_accounting();
    for (size_t i = 0; i < storages.size(); ++i) REL_CHECK(!storages[i].alive, "model: storage %zu alive at the end", i);
    for (const auto& e : exts)
      if (e->has_deleter) REL_CHECK(e->calls == 1, "an external deleter ran %d times", e->calls);
    for (void* m : blobs_without_deleter) std::free(m);
    REL_OK(sm_set_num_threads(0));
    const rel::State end = rel::state();
    REL_CHECK(end == base, "after releasing everything: %s, at the start %s", end.str().c_str(), base.str().c_str());
  }
};

}  // namespace

int64_t g_fuzz_calls = 0, g_fuzz_inputs = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rel::abort_on_failure() = true;
  Fuzz f(In(data, size));
  f.run();
  g_fuzz_calls += f.calls;
  ++g_fuzz_inputs;
  return 0;
}

#ifndef SM_FUZZ_STANDALONE
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rel::abort_on_failure() = true;
  // libFuzzer ends a timed run with exit(): report what was fuzzed.
  std::atexit([] {
    std::printf("fuzz: %lld inputs run, %lld API calls checked, %lld checks\n",
                (long long)g_fuzz_inputs, (long long)g_fuzz_calls, (long long)rel::checks().load());
    std::fflush(stdout);
  });
  return 0;
}
#endif

#ifdef SM_FUZZ_STANDALONE
// Replays files (or every file in directories) given on the command line.
#include <dirent.h>
#include <sys/stat.h>

static int replay(const std::string& path, int64_t* inputs) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "cannot stat %s\n", path.c_str());
    return 1;
  }
  if (S_ISDIR(st.st_mode)) {
    DIR* d = opendir(path.c_str());
    if (!d) return 1;
    std::vector<std::string> names;
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    int rc = 0;
    for (const std::string& n : names) rc |= replay(path + "/" + n, inputs);
    return rc;
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 1;
  std::vector<uint8_t> buf;
  uint8_t chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) buf.insert(buf.end(), chunk, chunk + n);
  std::fclose(f);
  const int64_t fails0 = rel::failures();
  rel::abort_on_failure() = false;
  Fuzz fz(In(buf.data(), buf.size()));
  fz.run();
  g_fuzz_calls += fz.calls;
  ++*inputs;
  if (rel::failures() != fails0) std::fprintf(stderr, "  ^ in %s\n", path.c_str());
  return rel::failures() != fails0;
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive a sanitizer abort
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  int64_t inputs = 0;
  int rc = 0;
  for (int i = 1; i < argc; ++i) rc |= replay(argv[i], &inputs);
  std::printf("fuzz replay: %lld inputs, %lld API calls, %lld checks, %lld failures\n", (long long)inputs,
              (long long)g_fuzz_calls, (long long)rel::checks().load(), (long long)rel::failures().load());
  return rc || inputs == 0 ? 1 : 0;
}
#endif
