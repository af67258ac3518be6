// Fault-injection walk (SQLite's test_malloc.c method): for each scenario,
// a fault-free run counts its data allocations K and records a fingerprint
// of every result; then for n = 1 .. K+1 the scenario runs again with
// sm_debug_fail_alloc(n) armed. Around every call the walk checks:
//  - a failing call fails with SM_ERR_OUT_OF_MEMORY (nothing else), its
//    message says the fault was injected, it wrote none of its outputs, and
//    it changed nothing: allocated/requested bytes, live views, storages and
//    handles, and the bytes, layout and version counter of every tensor that
//    existed before it (a "world" created before the fault is armed, plus
//    every tensor the scenario made so far) are as they were;
//  - the fault is spent: the same call retried succeeds;
//  - exactly one call fails for n <= K, none for n = K+1;
//  - the run ends with the same fingerprint as the fault-free run, and after
//    releasing what it made, the state is back where it started (no leak).
//
// --new: the same walk over every C++ operator new the library makes inside
// the scenario's calls (its metadata: handles, views, vectors, messages),
// through a replacement operator new in this program that throws
// std::bad_alloc at the n-th one. Same rules, except that the library may
// absorb a failure internally (the call then succeeds and nothing differs).
//
//   reliability_faults [--new] [--scenario NAME] [--list] [--env-check]
// --env-check: the process was started with STRIDEMEM_FAIL_ALLOC=1; the very
// first data allocation must fail, the next one succeed.
#include <dlfcn.h>

#include <functional>
#include <cstddef>
#include <new>
#include <string>

#include "rel_util.hpp"
#include "stridemem_dlpack.h"

// ---- operator new fault injection (--new) ---------------------------------
// Whether this process uses the shared C++ runtime (libstdc++.so.6, or
// libc++.so.1 with clang): only then do the library's operator new calls
// resolve to the replacement below.
static bool shared_cxx_runtime() {
  for (const char* name : {"libstdc++.so.6", "libc++.so.1"}) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(h);
      return true;
    }
  }
  return false;
}

namespace nf {
bool enabled = false;      // --new mode
thread_local int depth = 0;  // > 0 while the walk is inside a library call
int64_t counted = 0, fail_at = 0, injected = 0;
}  // namespace nf

static void* nf_alloc(std::size_t n, std::size_t align) {
  if (nf::enabled && nf::depth > 0) {
    ++nf::counted;
    if (nf::fail_at > 0 && nf::counted == nf::fail_at) {
      ++nf::injected;
      throw std::bad_alloc();
    }
  }
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) p = std::malloc(n ? n : 1);
  else if (posix_memalign(&p, align, n ? n : 1) != 0) p = nullptr;
  if (!p) throw std::bad_alloc();
  return p;
}
// noinline: valgrind replaces operator new/delete by symbol; an inlined
// delete would pair its free() with valgrind's new ("mismatched free").
#define NF_REPLACE __attribute__((noinline))
NF_REPLACE void* operator new(std::size_t n) { return nf_alloc(n, 0); }
NF_REPLACE void* operator new[](std::size_t n) { return nf_alloc(n, 0); }
NF_REPLACE void* operator new(std::size_t n, std::align_val_t a) { return nf_alloc(n, static_cast<std::size_t>(a)); }
NF_REPLACE void* operator new[](std::size_t n, std::align_val_t a) { return nf_alloc(n, static_cast<std::size_t>(a)); }
NF_REPLACE void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return nf_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
NF_REPLACE void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return nf_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
NF_REPLACE void operator delete(void* p) noexcept { std::free(p); }
NF_REPLACE void operator delete[](void* p) noexcept { std::free(p); }
NF_REPLACE void operator delete(void* p, std::size_t) noexcept { std::free(p); }
NF_REPLACE void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
NF_REPLACE void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
NF_REPLACE void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
NF_REPLACE void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
NF_REPLACE void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

sm_tensor const kSentinel = reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0xDEAD0000BEEFull));

struct TensorSnap {
  rel::Meta m;
  std::vector<uint8_t> bytes;
  bool operator==(const TensorSnap& o) const {
    if (m.ndim != o.m.ndim || m.offset != o.m.offset || m.dtype != o.m.dtype ||
        m.version != o.m.version || m.storage_nbytes != o.m.storage_nbytes || bytes != o.bytes)
      return false;
    for (int i = 0; i < m.ndim; ++i)
      if (m.shape[i] != o.m.shape[i] || m.strides[i] != o.m.strides[i]) return false;
    return true;
  }
};

TensorSnap snap(sm_tensor t) {
  TensorSnap s;
  if (rel::meta_of(t, &s.m)) s.bytes = rel::gather_bytes(s.m);  // raw reads: no allocation
  return s;
}

class Walk {
 public:
  Walk(const char* scenario, int64_t n) : scenario_(scenario), n_(n) {}
  ~Walk() { cleanup(); }

  // A tensor made before the fault is armed: must survive every failure.
  void add_world(sm_tensor t) { world_.push_back(t); }

  // Any call: checks the failure rules above, retries once after the fault.
  template <class F>
  sm_status call(const char* what, F&& f) {
    const rel::State s0 = rel::state();
    std::vector<TensorSnap> before = snap_all();
    ++nf::depth;
    sm_status st = f();
    --nf::depth;
    ++calls_;
    if (st == SM_OK) return st;
    if (st != SM_ERR_OUT_OF_MEMORY) {
      REL_CHECK(false, "[%s, n=%lld] %s -> %s, expected SM_OK or SM_ERR_OUT_OF_MEMORY", scenario_,
                (long long)n_, what, sm_status_string(st));
      return st;
    }
    ++ooms_;
    REL_CHECK(n_ > 0, "[%s] %s -> SM_ERR_OUT_OF_MEMORY with no fault armed", scenario_, what);
    REL_CHECK(ooms_ == 1, "[%s, n=%lld] %s: a second allocation failure in one run", scenario_,
              (long long)n_, what);
    REL_CHECK(std::strstr(sm_last_error(), nf::enabled ? "memory" : "injected") != nullptr,
              "[%s, n=%lld] %s: the message \"%s\" does not say what failed", scenario_,
              (long long)n_, what, sm_last_error());
    const rel::State s1 = rel::state();
    REL_CHECK(s1 == s0, "[%s, n=%lld] %s failed but changed the state: %s -> %s", scenario_,
              (long long)n_, what, s0.str().c_str(), s1.str().c_str());
    const std::vector<TensorSnap> after = snap_all();
    for (size_t i = 0; i < before.size(); ++i)
      REL_CHECK(before[i] == after[i],
                "[%s, n=%lld] %s failed but changed existing tensor #%zu (layout, version or bytes)",
                scenario_, (long long)n_, what, i);
    ++nf::depth;
    st = f();
    --nf::depth;
    ++calls_;
    REL_CHECK(st == SM_OK, "[%s, n=%lld] %s retried after the injected fault -> %s", scenario_,
              (long long)n_, what, sm_status_string(st));
    return st;
  }

  // A call with one tensor output: the output is untouched on failure and
  // owned by the walk on success.
  template <class F>
  sm_tensor make(const char* what, F&& f) {
    sm_tensor out = kSentinel;
    const sm_status st = call(what, [&] {
      out = kSentinel;
      const sm_status s = f(&out);
      if (s != SM_OK)
        REL_CHECK(out == kSentinel, "[%s, n=%lld] failing %s wrote its output", scenario_,
                  (long long)n_, what);
      return s;
    });
    if (st != SM_OK) return nullptr;
    owned_.push_back(out);
    return out;
  }

  sm_stack make_stack(int64_t capacity) {
    sm_stack s = reinterpret_cast<sm_stack>(kSentinel);
    const sm_status st = call("sm_stack_create", [&] {
      s = reinterpret_cast<sm_stack>(kSentinel);
      const sm_status r = sm_stack_create(rel::cpu(), capacity, &s);
      if (r != SM_OK)
        REL_CHECK(s == reinterpret_cast<sm_stack>(kSentinel), "failing sm_stack_create wrote its output");
      return r;
    });
    if (st != SM_OK) return nullptr;
    stacks_.push_back(s);
    return s;
  }

  // Releases a tensor the walk made (it stops being checked); the release
  // itself is a checked call.
  void drop(sm_tensor t) {
    for (size_t i = 0; i < owned_.size(); ++i)
      if (owned_[i] == t) {
        owned_.erase(owned_.begin() + static_cast<std::ptrdiff_t>(i));
        call("sm_tensor_release", [&] { return sm_tensor_release(t); });
        return;
      }
    REL_CHECK(false, "test bug: drop of a tensor the walk does not own");
  }
  // Stops checking t (e.g. its stack region is about to be popped) and releases it.
  void forget(sm_tensor t) { drop(t); }

  // Appends what a tensor holds to the run's fingerprint.
  void record(sm_tensor t) {
    const TensorSnap s = snap(t);
    fp_ += "|" + std::to_string(s.m.ndim) + ":" + std::to_string(s.m.dtype) + ":";
    for (int i = 0; i < s.m.ndim; ++i)
      fp_ += std::to_string(s.m.shape[i]) + "/" + std::to_string(s.m.strides[i]) + ",";
    fp_ += std::to_string(s.m.version) + ":";
    static const char* hex = "0123456789abcdef";
    for (uint8_t b : s.bytes) {
      fp_ += hex[b >> 4];
      fp_ += hex[b & 15];
    }
  }
  void note(const std::string& s) { fp_ += "|" + s; }

  // Fingerprint of every live tensor, world included, in order.
  std::string finish() {
    for (sm_tensor t : world_) record(t);
    for (sm_tensor t : owned_) record(t);
    return fp_;
  }

  void cleanup() {
    for (sm_tensor t : owned_) REL_OK(sm_tensor_release(t));
    owned_.clear();
    for (sm_stack s : stacks_) REL_OK(sm_stack_release(s));
    stacks_.clear();
    for (auto& fn : after_cleanup_) fn();
    after_cleanup_.clear();
  }
  // A check to run once everything the walk made is released.
  void after_cleanup(std::function<void()> fn) { after_cleanup_.push_back(std::move(fn)); }
  int64_t n() const { return n_; }

  int64_t ooms() const { return ooms_; }
  int64_t calls() const { return calls_; }

 private:
  std::vector<TensorSnap> snap_all() {
    std::vector<TensorSnap> v;
    for (sm_tensor t : world_) v.push_back(snap(t));
    for (sm_tensor t : owned_) v.push_back(snap(t));
    return v;
  }

  const char* scenario_;
  int64_t n_;
  std::vector<sm_tensor> world_, owned_;
  std::vector<sm_stack> stacks_;
  std::string fp_;
  int64_t ooms_ = 0, calls_ = 0;
  std::vector<std::function<void()>> after_cleanup_;
};

// The world: tensors made before the fault is armed, used as inputs and as
// in-place targets by the scenarios.
struct World {
  sm_tensor a = nullptr;    // f32 [4, 6], 0..23
  sm_tensor b = nullptr;    // f64 [6], 1..6
  sm_tensor img = nullptr;  // f32 [2, 3, 4, 5] NCHW, 0..119
  sm_tensor idx = nullptr;  // i64 [3] = {2, 0, -1}
  void make() {
    float av[24];
    for (int i = 0; i < 24; ++i) av[i] = static_cast<float>(i);
    const int64_t as[2] = {4, 6};
    REL_OK(sm_from_host(av, as, 2, SM_FLOAT32, rel::cpu(), &a));
    const double bv[6] = {1, 2, 3, 4, 5, 6};
    const int64_t bs[1] = {6};
    REL_OK(sm_from_host(bv, bs, 1, SM_FLOAT64, rel::cpu(), &b));
    const int64_t is[4] = {2, 3, 4, 5};
    REL_OK(sm_arange(0, 1, 120, SM_FLOAT32, rel::cpu(), &img));
    sm_tensor v = nullptr;
    REL_OK(sm_view(img, is, 4, &v));
    REL_OK(sm_tensor_release(img));
    img = v;
    const int64_t iv[3] = {2, 0, -1};
    const int64_t ishape[1] = {3};
    REL_OK(sm_from_host(iv, ishape, 1, SM_INT64, rel::cpu(), &idx));
  }
  void release() {
    for (sm_tensor t : {a, b, img, idx}) REL_OK(sm_tensor_release(t));
  }
};

using Scenario = std::function<void(Walk&, World&)>;

struct Named {
  const char* name;
  Scenario fn;
};

// ---- scenarios ------------------------------------------------------------

void creation(Walk& w, World&) {
  const int64_t s2[2] = {3, 5}, s1[1] = {1000}, big[1] = {300000}, zero[2] = {0, 7};
  for (sm_dtype dt = 0; dt < SM_NUM_DTYPES; ++dt) {
    w.make("sm_zeros", [&](sm_tensor* o) { return sm_zeros(s2, 2, dt, rel::cpu(), o); });
    w.make("sm_full", [&](sm_tensor* o) { return sm_full(s2, 2, 1.0, dt, rel::cpu(), o); });
  }
  sm_tensor e = w.make("sm_empty", [&](sm_tensor* o) { return sm_empty(s1, 1, SM_INT32, rel::cpu(), o); });
  if (e) w.call("fill empty", [&] { return sm_inplace_scalar(e, SM_OP_FILL, 7, 0); });
  w.make("sm_empty 0-size", [&](sm_tensor* o) { return sm_empty(zero, 2, SM_FLOAT32, rel::cpu(), o); });
  w.make("sm_zeros 0-d", [&](sm_tensor* o) { return sm_zeros(nullptr, 0, SM_FLOAT64, rel::cpu(), o); });
  w.make("sm_arange", [&](sm_tensor* o) { return sm_arange(-3, 0.5, 17, SM_FLOAT16, rel::cpu(), o); });
  w.make("sm_full large", [&](sm_tensor* o) { return sm_full(big, 1, -2.5, SM_FLOAT32, rel::cpu(), o); });
  const int64_t shape[2] = {3, 4}, strides[2] = {-4, 1};
  sm_tensor es = w.make("sm_empty_strided", [&](sm_tensor* o) {
    return sm_empty_strided(shape, strides, 2, SM_INT16, rel::cpu(), o);
  });
  if (es) w.call("fill strided", [&] { return sm_inplace_scalar(es, SM_OP_FILL, -9, 0); });
  const uint16_t h[6] = {0x3C00, 0xC000, 0x7C00, 0x0001, 0x7E00, 0x8000};
  const int64_t hs[2] = {2, 3};
  w.make("sm_from_host f16", [&](sm_tensor* o) { return sm_from_host(h, hs, 2, SM_FLOAT16, rel::cpu(), o); });
  const uint8_t bools[4] = {0, 1, 1, 0};
  const int64_t bs[1] = {4};
  w.make("sm_from_host bool", [&](sm_tensor* o) { return sm_from_host(bools, bs, 1, SM_BOOL, rel::cpu(), o); });
}

void copies(Walk& w, World& W) {
  sm_tensor at = w.make("sm_transpose", [&](sm_tensor* o) { return sm_transpose(W.a, 0, 1, o); });
  if (!at) return;
  w.make("sm_contiguous (copy)", [&](sm_tensor* o) { return sm_contiguous(at, SM_CONTIGUOUS, o, nullptr); });
  w.make("sm_contiguous (no copy)", [&](sm_tensor* o) { return sm_contiguous(W.a, SM_CONTIGUOUS, o, nullptr); });
  w.make("sm_clone contiguous", [&](sm_tensor* o) { return sm_clone(at, SM_CONTIGUOUS, o); });
  w.make("sm_clone preserve", [&](sm_tensor* o) { return sm_clone(at, SM_PRESERVE, o); });
  sm_tensor cl = w.make("sm_contiguous channels_last", [&](sm_tensor* o) {
    return sm_contiguous(W.img, SM_CHANNELS_LAST, o, nullptr);
  });
  if (cl) w.make("sm_clone preserve of channels_last", [&](sm_tensor* o) { return sm_clone(cl, SM_PRESERVE, o); });
  const int64_t flat[1] = {-1};
  int copied = -1;
  sm_tensor r = w.make("sm_reshape (copy)", [&](sm_tensor* o) { return sm_reshape(at, flat, 1, o, &copied); });
  if (r) w.note("reshape copied=" + std::to_string(copied));
  w.make("sm_reshape (view)", [&](sm_tensor* o) { return sm_reshape(W.a, flat, 1, o, nullptr); });
  w.make("sm_to f16", [&](sm_tensor* o) { return sm_to(at, rel::cpu(), SM_FLOAT16, o, nullptr); });
  w.make("sm_to bf16", [&](sm_tensor* o) { return sm_to(W.b, rel::cpu(), SM_BFLOAT16, o, nullptr); });
  w.make("sm_to i64", [&](sm_tensor* o) { return sm_to(W.img, rel::cpu(), SM_INT64, o, nullptr); });
  w.make("sm_to same", [&](sm_tensor* o) { return sm_to(W.b, rel::cpu(), SM_FLOAT64, o, nullptr); });
  w.make("sm_index_select", [&](sm_tensor* o) { return sm_index_select(W.a, 1, W.idx, o); });
  w.make("sm_index_select dim0", [&](sm_tensor* o) { return sm_index_select(at, 0, W.idx, o); });
  const int64_t ex[2] = {5, 6};
  sm_tensor e = w.make("sm_expand", [&](sm_tensor* o) { return sm_expand(W.b, ex, 2, o); });
  if (e) w.make("sm_clone of expanded", [&](sm_tensor* o) { return sm_clone(e, SM_CONTIGUOUS, o); });
  sm_tensor f = w.make("sm_flip", [&](sm_tensor* o) {
    const int32_t d[2] = {0, 1};
    return sm_flip(W.a, d, 2, o);
  });
  if (f) w.make("sm_clone of flipped", [&](sm_tensor* o) { return sm_clone(f, SM_PRESERVE, o); });
}

void writes(Walk& w, World& W) {
  // In place into the world, through views; copies with conversion.
  sm_tensor row = w.make("sm_select", [&](sm_tensor* o) { return sm_select(W.a, 0, 1, o); });
  if (!row) return;
  w.call("inplace scalar add", [&] { return sm_inplace_scalar(row, SM_OP_ADD, 10, 0); });
  w.call("inplace tensor add (f64 into f32)", [&] { return sm_inplace_tensor(row, SM_OP_ADD, W.b, 2.0); });
  sm_tensor at = w.make("sm_transpose", [&](sm_tensor* o) { return sm_transpose(W.a, 0, 1, o); });
  if (!at) return;
  sm_tensor bcol = w.make("sm_unsqueeze", [&](sm_tensor* o) { return sm_unsqueeze(W.b, 1, o); });
  if (bcol) w.call("inplace tensor mul broadcast", [&] { return sm_inplace_tensor(at, SM_OP_MUL, bcol, 1.0); });
  w.call("copy_into transpose of itself? (clone first)", [&] { return SM_OK; });
  sm_tensor c = w.make("sm_clone", [&](sm_tensor* o) { return sm_clone(at, SM_CONTIGUOUS, o); });
  if (c) w.call("copy_into world from clone", [&] { return sm_copy_into(at, c); });
  sm_tensor h = w.make("sm_zeros f16", [&](sm_tensor* o) {
    const int64_t s[2] = {6, 4};
    return sm_zeros(s, 2, SM_FLOAT16, rel::cpu(), o);
  });
  if (h) w.call("copy_into f16 from f32 view", [&] { return sm_copy_into(h, at); });
  sm_tensor cl = w.make("sm_empty channels_last target", [&](sm_tensor* o) {
    const int64_t s[4] = {2, 3, 4, 5}, st[4] = {60, 1, 15, 3};
    return sm_empty_strided(s, st, 4, SM_FLOAT64, rel::cpu(), o);
  });
  if (cl) w.call("copy_into NHWC from NCHW f32", [&] { return sm_copy_into(cl, W.img); });
  w.call("inplace clamp", [&] { return sm_inplace_scalar(W.img, SM_OP_CLAMP, 10, 100); });
  w.call("inplace sqrt", [&] { return sm_inplace_scalar(W.img, SM_OP_SQRT, 0, 0); });
  w.call("inplace div by tensor", [&] { return sm_inplace_tensor(W.b, SM_OP_DIV, W.b, 1.0); });
}

void stacks(Walk& w, World& W) {
  sm_stack s = w.make_stack(8192);
  if (!s) return;
  int64_t mark = -1;
  w.call("sm_stack_mark", [&] { return sm_stack_mark(s, &mark); });
  const int64_t s1[2] = {4, 6};
  sm_tensor p = w.make("sm_stack_push", [&](sm_tensor* o) { return sm_stack_push(s, s1, 2, SM_FLOAT32, o); });
  if (!p) return;
  w.call("copy_into stack tensor", [&] { return sm_copy_into(p, W.a); });
  sm_tensor c = w.make("sm_clone of stack tensor", [&](sm_tensor* o) { return sm_clone(p, SM_CONTIGUOUS, o); });
  (void)c;
  const int64_t s2[1] = {100};
  sm_tensor q = w.make("sm_stack_push 2", [&](sm_tensor* o) { return sm_stack_push(s, s2, 1, SM_INT8, o); });
  if (q) w.call("fill", [&] { return sm_inplace_scalar(q, SM_OP_FILL, 3, 0); });
  if (q) w.forget(q);
  w.forget(p);
  w.call("sm_stack_pop_to", [&] { return sm_stack_pop_to(s, mark); });
  w.make_stack(0);  // an empty stack: no data allocation
}

// DLPack: zero-copy export and import, plus a normalizing export that copies.
void dlpack(Walk& w, World& W) {
  void* m = nullptr;
  sm_status st = w.call("sm_to_dlpack", [&] { return sm_to_dlpack(W.a, 1, &m); });
  if (st == SM_OK) {
    sm_tensor t = w.make("sm_from_dlpack", [&](sm_tensor* o) { return sm_from_dlpack(m, 1, o); });
    if (t) w.make("sm_clone of import", [&](sm_tensor* o) { return sm_clone(t, SM_CONTIGUOUS, o); });
    else static_cast<sm_DLManagedTensorVersioned*>(m)->deleter(static_cast<sm_DLManagedTensorVersioned*>(m));
  }
  sm_tensor f = w.make("sm_flip", [&](sm_tensor* o) {
    const int32_t d[1] = {0};
    return sm_flip(W.b, d, 1, o);
  });
  if (!f) return;
  void* n = nullptr;
  int copied = -1;
  st = w.call("sm_to_dlpack_ex normalize", [&] {
    n = nullptr;
    copied = -1;
    const sm_status r = sm_to_dlpack_ex(f, SM_DLPACK_NORMALIZE, nullptr, &n, &copied);
    if (r != SM_OK) REL_CHECK(n == nullptr && copied == -1, "failing sm_to_dlpack_ex wrote its outputs");
    return r;
  });
  if (st == SM_OK) {
    w.note("normalize copied=" + std::to_string(copied));
    auto* mt = static_cast<sm_DLManagedTensor*>(n);
    sm_tensor t = w.make("sm_from_dlpack legacy", [&](sm_tensor* o) { return sm_from_dlpack(mt, 0, o); });
    if (!t) mt->deleter(mt);
  }
}

// Views allocate no data: K must be 0 (checked by the walk's caller).
void views(Walk& w, World& W) {
  const int64_t v2[2] = {6, -1};
  w.make("sm_view", [&](sm_tensor* o) { return sm_view(W.a, v2, 2, o); });
  w.make("sm_slice", [&](sm_tensor* o) { return sm_slice(W.a, 1, 5, SM_SLICE_NONE, -2, o); });
  w.make("sm_narrow", [&](sm_tensor* o) { return sm_narrow(W.a, 0, 1, 2, o); });
  const int32_t perm[4] = {0, 2, 3, 1};
  w.make("sm_permute", [&](sm_tensor* o) { return sm_permute(W.img, perm, 4, o); });
  w.make("sm_unfold", [&](sm_tensor* o) { return sm_unfold(W.b, 0, 3, 1, o); });
  w.make("sm_diagonal", [&](sm_tensor* o) { return sm_diagonal(W.a, 1, 0, 1, o); });
  w.make("sm_flatten", [&](sm_tensor* o) { return sm_flatten(W.img, 1, 3, o); });
  const int64_t uf[2] = {2, 3};
  w.make("sm_unflatten", [&](sm_tensor* o) { return sm_unflatten(W.a, 1, uf, 2, o); });
  w.make("sm_squeeze", [&](sm_tensor* o) { return sm_squeeze(W.a, nullptr, 0, o); });
  const int32_t src[1] = {0}, dst[1] = {-1};
  w.make("sm_movedim", [&](sm_tensor* o) { return sm_movedim(W.img, src, dst, 1, o); });
  const int64_t shape[2] = {2, 2}, strides[2] = {1, 1};
  w.make("sm_as_strided (overlapping)", [&](sm_tensor* o) { return sm_as_strided(W.a, shape, strides, 2, 3, o); });
  sm_tensor outs[8];
  int32_t count = 0;
  const sm_status st = w.call("sm_chunk", [&] { return sm_chunk(W.a, 4, 1, outs, 8, &count); });
  if (st == SM_OK)
    for (int i = 0; i < count; ++i) REL_OK(sm_tensor_release(outs[i]));
  sm_storage s = nullptr;
  if (w.call("sm_tensor_storage", [&] { return sm_tensor_storage(W.a, &s); }) == SM_OK) {
    const int64_t s3[1] = {3};
    w.make("sm_tensor_from_storage", [&](sm_tensor* o) {
      return sm_tensor_from_storage(s, s3, nullptr, 1, 2, SM_INT32, o);
    });
    REL_OK(sm_storage_release(s));
  }
  static float blob[12];
  const int64_t bs[2] = {3, 4};
  w.make("sm_from_blob", [&](sm_tensor* o) {
    return sm_from_blob(blob, bs, nullptr, 2, SM_FLOAT32, rel::cpu(), nullptr, nullptr, o);
  });
  int would = -1;
  const int64_t flat[1] = {24};
  w.call("sm_reshape_would_copy", [&] { return sm_reshape_would_copy(W.a, flat, 1, &would); });
}

// External memory: sm_from_blob with a deleter, and a DLPack producer's
// managed tensor. A failing call must not call the deleter (the memory stays
// the caller's); the deleter runs exactly once after the last view dies.
struct External {
  int calls = 0;
  float data[12];
};
External g_blob, g_producer;
void blob_deleter(void* data, void* ctx) {
  auto* e = static_cast<External*>(ctx);
  REL_CHECK(data == e->data, "blob deleter: wrong data pointer");
  e->calls++;
}
int64_t g_dl_shape[2] = {3, 4};
sm_DLManagedTensor g_managed;
void producer_deleter(sm_DLManagedTensor* m) {
  REL_CHECK(m == &g_managed, "producer deleter: wrong managed tensor");
  g_producer.calls++;
}

void external(Walk& w, World&) {
  g_blob = External{};
  g_producer = External{};
  for (int i = 0; i < 12; ++i) g_blob.data[i] = g_producer.data[i] = static_cast<float>(i);
  const int64_t bs[2] = {3, 4};
  const int64_t n = w.n();
  sm_tensor b = w.make("sm_from_blob with a deleter", [&](sm_tensor* o) {
    const sm_status st = sm_from_blob(g_blob.data, bs, nullptr, 2, SM_FLOAT32, rel::cpu(), blob_deleter,
                                      &g_blob, o);
    if (st != SM_OK) {
      REL_CHECK(g_blob.calls == 0, "[external, n=%lld] failing sm_from_blob called the deleter (the "
                "memory is still the caller's)", (long long)n);
      g_blob.calls = 0;
    }
    return st;
  });
  std::memset(&g_managed, 0, sizeof g_managed);
  g_managed.dl_tensor.data = g_producer.data;
  g_managed.dl_tensor.device.device_type = sm_kDLCPU;
  g_managed.dl_tensor.ndim = 2;
  g_managed.dl_tensor.dtype.code = 2;  // kDLFloat
  g_managed.dl_tensor.dtype.bits = 32;
  g_managed.dl_tensor.dtype.lanes = 1;
  g_managed.dl_tensor.shape = g_dl_shape;
  g_managed.deleter = producer_deleter;
  sm_tensor d = w.make("sm_from_dlpack (foreign producer)", [&](sm_tensor* o) {
    const sm_status st = sm_from_dlpack(&g_managed, 0, o);
    if (st != SM_OK) {
      REL_CHECK(g_producer.calls == 0, "[external, n=%lld] failing sm_from_dlpack called the "
                "producer's deleter (ownership stays with the caller)", (long long)n);
      g_producer.calls = 0;
    }
    return st;
  });
  if (b && d) {
    sm_tensor bt = w.make("sm_transpose", [&](sm_tensor* o) { return sm_transpose(b, 0, 1, o); });
    w.call("copy_into import from blob", [&] { return sm_copy_into(d, b); });
    if (bt) w.make("sm_clone of blob view", [&](sm_tensor* o) { return sm_clone(bt, SM_CONTIGUOUS, o); });
    w.call("inplace on import", [&] { return sm_inplace_scalar(d, SM_OP_MUL, 2, 0); });
    w.drop(b);  // the transposed view keeps the blob alive
    w.note("blob deleter calls while a view lives: " + std::to_string(g_blob.calls));
  }
  w.after_cleanup([n] {
    REL_CHECK(g_blob.calls == 1, "[external, n=%lld] blob deleter ran %d times after the last view died",
              (long long)n, g_blob.calls);
    REL_CHECK(g_producer.calls == 1, "[external, n=%lld] producer deleter ran %d times after the last "
              "view died", (long long)n, g_producer.calls);
  });
}

// The seeds' "hidden reference": a small slice pins a big storage; cloning
// the slice frees it.
void hidden_reference(Walk& w, World&) {
  const int64_t s[2] = {512, 512};
  sm_tensor big = w.make("sm_full big", [&](sm_tensor* o) { return sm_full(s, 2, 1.5, SM_FLOAT32, rel::cpu(), o); });
  if (!big) return;
  sm_tensor sl = w.make("sm_slice", [&](sm_tensor* o) { return sm_slice(big, 0, 10, 12, 1, o); });
  if (!sl) return;
  sm_tensor c = w.make("sm_clone slice", [&](sm_tensor* o) { return sm_clone(sl, SM_CONTIGUOUS, o); });
  w.drop(sl);
  w.drop(big);
  if (c) w.call("add", [&] { return sm_inplace_scalar(c, SM_OP_ADD, 1, 0); });
  sm_tensor t = w.make("sm_arange", [&](sm_tensor* o) { return sm_arange(0, 1, 4096, SM_INT32, rel::cpu(), o); });
  if (t) w.make("sm_to f64", [&](sm_tensor* o) { return sm_to(t, rel::cpu(), SM_FLOAT64, o, nullptr); });
}

const Named kScenarios[] = {
    {"creation", creation}, {"copies", copies},   {"writes", writes},
    {"stacks", stacks},     {"views", views},     {"hidden_reference", hidden_reference},
    {"external", external}, {"dlpack", dlpack},
};

struct Result {
  int64_t allocations = 0, faults = 0, calls = 0, absorbed = 0;
};

// One run: world made before arming (nth <= 0: no fault).
std::string run_once(const Named& sc, int64_t nth, Result* res, int64_t* allocs_made) {
  const rel::State base = rel::state();
  World world;
  world.make();
  std::string fp;
  {
    Walk w(sc.name, nth);
    for (sm_tensor t : {world.a, world.b, world.img, world.idx}) w.add_world(t);
    const rel::State s0 = rel::state();
    const int64_t allocs0 = rel::stats().num_allocs;
    nf::counted = nf::injected = 0;
    if (nf::enabled) nf::fail_at = nth;
    else REL_OK(sm_debug_fail_alloc(nth));
    sc.fn(w, world);
    nf::fail_at = 0;
    REL_OK(sm_debug_fail_alloc(0));
    if (allocs_made) *allocs_made = nf::enabled ? nf::counted : rel::stats().num_allocs - allocs0;
    fp = w.finish();
    res->calls += w.calls();
    res->faults += nf::enabled ? nf::injected : w.ooms();
    if (nf::enabled) res->absorbed += nf::injected - w.ooms();
    if (nf::enabled && nth > 0 && nth <= res->allocations) {
      REL_CHECK(nf::injected == 1, "[%s, n=%lld] operator new #%lld was never reached", sc.name,
                (long long)nth, (long long)nth);
      REL_CHECK(w.ooms() <= 1, "[%s, n=%lld] %lld calls failed for one failed operator new",
                sc.name, (long long)nth, (long long)w.ooms());
    } else if (nth > 0 && nth <= res->allocations) {
      REL_CHECK(w.ooms() == 1, "[%s, n=%lld] the injected fault hit %lld calls, expected 1",
                sc.name, (long long)nth, (long long)w.ooms());
    }
    if (nth > res->allocations)
      REL_CHECK(w.ooms() == 0, "[%s, n=%lld] past the last allocation, yet %lld calls failed",
                sc.name, (long long)nth, (long long)w.ooms());
    w.cleanup();
    const rel::State s1 = rel::state();
    REL_CHECK(s1 == s0, "[%s, n=%lld] after releasing the run's handles: %s, before the run: %s",
              sc.name, (long long)nth, s1.str().c_str(), s0.str().c_str());
  }
  world.release();
  const rel::State end = rel::state();
  REL_CHECK(end == base, "[%s, n=%lld] leak: state %s, at the start %s", sc.name, (long long)nth,
            end.str().c_str(), base.str().c_str());
  return fp;
}

int env_check() {
  // STRIDEMEM_FAIL_ALLOC=1 in the environment: the first data allocation fails.
  const char* env = std::getenv("STRIDEMEM_FAIL_ALLOC");
  REL_CHECK(env && std::strcmp(env, "1") == 0, "run with STRIDEMEM_FAIL_ALLOC=1 (got %s)", env ? env : "unset");
  const rel::State s0 = rel::state();
  const int64_t shape[1] = {10};
  sm_tensor t = kSentinel;
  REL_STATUS(sm_zeros(shape, 1, SM_FLOAT32, rel::cpu(), &t), SM_ERR_OUT_OF_MEMORY);
  REL_CHECK(t == kSentinel, "the failing sm_zeros wrote its output");
  REL_CHECK(rel::state() == s0, "the failing sm_zeros changed the state");
  t = nullptr;
  REL_OK(sm_zeros(shape, 1, SM_FLOAT32, rel::cpu(), &t));
  REL_OK(sm_tensor_release(t));
  REL_CHECK(rel::state() == s0, "leak after the env check");
  std::printf("faults --env-check: %lld checks, %lld failures\n", (long long)rel::checks().load(),
              (long long)rel::failures().load());
  return rel::failures() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive a sanitizer abort
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--env-check") == 0) return env_check();
    if (std::strcmp(argv[i], "--new") == 0) nf::enabled = true;
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const Named& s : kScenarios) std::printf("%s\n", s.name);
      return 0;
    }
  }
  if (nf::enabled && !shared_cxx_runtime()) {
    // A toolchain whose C++ runtime is only available as an archive (seen on
    // the CUDA image of our GPU machines: Ubuntu's GCC 13 there links
    // libstdc++.a) gives the library its own, hidden operator new, which no
    // program can replace. That is the toolchain's choice, not a defect of
    // the library; where libstdc++.so is loaded, a missed operator new is.
    std::printf("faults (operator new): skipped: libstdc++.so is not loaded, so the library "
                "carries its own C++ runtime and its operator new cannot be replaced\n");
    return 77;
  }
  const char* only = rel::arg_str(argc, argv, "--scenario", nullptr);
  int64_t total_faults = 0, total_allocs = 0, total_calls = 0, total_runs = 0;
  bool matched = false;
  for (const Named& sc : kScenarios) {
    if (only && std::strcmp(only, sc.name) != 0) continue;
    matched = true;
    const int64_t fails0 = rel::failures();
    Result res;
    int64_t k = 0;
    // Twice: the first run may include one-time initializations.
    run_once(sc, 0, &res, &k);
    res.calls = 0;
    const std::string ref = run_once(sc, 0, &res, &k);
    res.allocations = k;
    if (nf::enabled)
      REL_CHECK(k > 0, "[%s] no operator new inside the library's calls: is the replacement "
                "operator new in use?", sc.name);
    else if (std::strcmp(sc.name, "views") == 0)
      REL_CHECK(k == 0, "[views] views and metadata calls made %lld data allocations", (long long)k);
    else
      REL_CHECK(k > 0, "[%s] no data allocation to fail: the scenario tests nothing", sc.name);
    for (int64_t n = 1; n <= k + 1; ++n) {
      Result r = res;
      r.calls = r.faults = r.absorbed = 0;
      const std::string fp = run_once(sc, n, &r, nullptr);
      REL_CHECK(fp == ref, "[%s, n=%lld] results differ from the fault-free run", sc.name, (long long)n);
      res.faults += r.faults;
      res.calls += r.calls;
      res.absorbed += r.absorbed;
      ++total_runs;
    }
    REL_CHECK(res.faults == k, "[%s] %lld faults injected for %lld allocations", sc.name,
              (long long)res.faults, (long long)k);
    std::printf("faults%s: %-17s %5lld allocations, %5lld faults injected and survived (%lld absorbed), "
                "%7lld calls checked%s\n",
                nf::enabled ? " (operator new)" : "", sc.name, (long long)k, (long long)res.faults,
                (long long)res.absorbed, (long long)res.calls, rel::failures() == fails0 ? "" : "  FAILED");
    total_faults += res.faults;
    total_allocs += k;
    total_calls += res.calls;
  }
  if (!matched) {
    std::fprintf(stderr, "no scenario named %s (--list)\n", only);
    return 2;
  }
  std::printf("faults%s: total %lld allocations walked, %lld faults injected, %lld runs, %lld calls, "
              "%lld checks, %lld failures\n",
              nf::enabled ? " (operator new)" : "", (long long)total_allocs, (long long)total_faults, (long long)total_runs,
              (long long)total_calls, (long long)rel::checks().load(), (long long)rel::failures().load());
  return rel::failures() == 0 ? 0 : 1;
}
