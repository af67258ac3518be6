// Concurrency stress test: T threads (default 8) share storages and, for a
// fixed number of operations each, create and release views, write disjoint
// slices in place through random view chains, copy (small and large: the
// large ones go through the CPU thread pool), push and pop their own stacks
// and, in lock-step rounds, one shared stack. Every thread keeps an exact
// model of the elements it owns; at the end the main thread checks every
// element, then releases everything and checks that the memory statistics
// and live-handle counts are back to their starting values.
//
// Memory introspection (issue 14) runs under the same load: each worker
// sometimes pushes its own tags (nested), allocates under them and, now and
// then, finds its block in a snapshot carrying exactly its own thread's tag
// path, never another thread's; meanwhile a watcher thread keeps taking
// snapshots (parsed with tests/api/json_reader.hpp: blocks tile their
// segments, the totals equal the sums of the blocks, every tag is a path of
// names the workers push) and summaries, and turns the allocation history on
// and off with rings of several sizes.
//
// Values are small integers (exact in f64 and i32), so every check is exact.
// Run under TSan (scripts/reliability.sh tsan) and in the normal suite.
//
//   reliability_stress [--threads 8] [--ops 4000] [--seed 1]
#include <atomic>
#include <chrono>
#include <thread>

#include "../api/json_reader.hpp"
#include "rel_util.hpp"

using rel::Rng;

namespace {

constexpr int64_t kRow = 1024;       // elements of W per thread (f64)
constexpr int64_t kBig = 1 << 18;    // elements of B per thread (f32): 1 MiB, threaded copies
constexpr int64_t kRO = 64;          // RO is kRO x kRO f32, RO[i][j] = i * kRO + j
constexpr int64_t kSharedStackCap = 64 << 10;

struct Shared {
  int threads = 8;
  int64_t ops = 4000;
  uint64_t seed = 1;
  sm_tensor W = nullptr;   // f64 [T, kRow]: thread k owns row k
  sm_tensor Wi = nullptr;  // i32 [kRow, T]: thread k owns column k (interleaved in memory)
  sm_tensor B = nullptr;   // f32 [T, kBig]: thread k owns row k (large copies)
  sm_tensor RO = nullptr;  // f32 [kRO, kRO], never written: everyone reads it
  sm_stack SS = nullptr;   // shared stack, pushed concurrently in rounds
  rel::Barrier* bar = nullptr;
  std::atomic<int64_t> calls{0};
};

// A model of a view's layout in storage elements, kept next to the library's.
struct Lay {
  int nd = 0;
  int64_t shape[4] = {0}, strides[4] = {0}, off = 0;
  int64_t numel() const { return rel::numel_of(shape, nd); }
};

// The library's layout of t must equal the model's.
bool same_layout(sm_tensor t, const Lay& m, const char* what) {
  int32_t nd = -1;
  int64_t shape[SM_MAX_DIMS], strides[SM_MAX_DIMS], off = -1;
  if (sm_ndim(t, &nd) != SM_OK || sm_shape(t, shape, SM_MAX_DIMS) != SM_OK ||
      sm_strides(t, strides, SM_MAX_DIMS) != SM_OK || sm_storage_offset(t, &off) != SM_OK) {
    REL_CHECK(false, "%s: metadata getters failed", what);
    return false;
  }
  bool ok = nd == m.nd && off == m.off;
  for (int i = 0; ok && i < nd; ++i) ok = shape[i] == m.shape[i] && strides[i] == m.strides[i];
  REL_CHECK(ok, "%s: layout differs from the model (ndim %d vs %d, offset %lld vs %lld)", what, nd,
            m.nd, (long long)off, (long long)m.off);
  return ok;
}

class Worker {
 public:
  Worker(Shared& sh, int k)
      : sh_(sh), k_(k), rng_(sh.seed * 0x100000001B3ull + static_cast<uint64_t>(k) + 1),
        expW_(kRow, 0.0), expWi_(kRow, 0) {}

  void run() {
    REL_OK(sm_stack_create(rel::cpu(), 32 << 10, &own_stack_));
    const int64_t round_every = sh_.ops >= 8 ? sh_.ops / 4 : sh_.ops + 1;
    for (int64_t it = 0; it < sh_.ops; ++it) {
      if ((it + 1) % round_every == 0) shared_stack_round(it);
      switch (rng_.below(21)) {
        case 0: case 1: case 2: case 3: case 4: case 5: write_W(); break;
        case 6: case 7: case 8: write_Wi(); break;
        case 9: case 10: case 11: read_RO(); break;
        case 12: case 13: own_stack(); break;
        case 14: churn(); break;
        case 15: error_is_thread_local(it); break;
        case 16: verify_row(); break;
        case 17: stats_and_clone(); break;
        case 18: if (rng_.chance(40)) big_copy(); else write_W(); break;
        case 19: write_Wi(); break;
        default: tagged_allocations(); break;
      }
    }
    REL_OK(sm_stack_release(own_stack_));
    sh_.calls += calls_;
  }

  const std::vector<double>& expW() const { return expW_; }
  const std::vector<int32_t>& expWi() const { return expWi_; }
  float expB() const { return expB_; }

 private:
  // ---- random view chains over one owned 1-D slice ----------------------
  // Applies 0..3 random view steps to *t (owned; replaced), updating the model.
  void random_chain(sm_tensor* t, Lay* m, bool allow_unfold) {
    const int steps = static_cast<int>(rng_.below(4));
    for (int s = 0; s < steps; ++s) {
      sm_tensor out = nullptr;
      Lay n = *m;
      const int kind = static_cast<int>(rng_.below(allow_unfold ? 6 : 5));
      const int d = static_cast<int>(rng_.below(m->nd));
      const int64_t size = m->shape[d];
      sm_status st = SM_OK;
      if (kind == 0 && size >= 2) {  // slice [a:b:step], step 1..3
        const int64_t a = rng_.below(size - 1), b = rng_.range(a + 1, size), step = rng_.range(1, 3);
        st = sm_slice(*t, d, a, b, step, &out);
        n.shape[d] = (b - a - 1) / step + 1;
        n.off += a * m->strides[d];
        n.strides[d] *= step;
      } else if (kind == 1) {  // flip: negative stride
        const int32_t dims[1] = {d};
        st = sm_flip(*t, dims, 1, &out);
        n.off += (size - 1) * m->strides[d];
        n.strides[d] = -m->strides[d];
      } else if (kind == 2 && m->nd == 1 && size % 4 == 0 && size >= 8) {  // view [4, -1]
        const int64_t shape[2] = {4, -1};
        st = sm_view(*t, shape, 2, &out);
        n.nd = 2;
        n.shape[0] = 4;
        n.shape[1] = size / 4;
        n.strides[0] = m->strides[0] * (size / 4);
        n.strides[1] = m->strides[0];
      } else if (kind == 3 && m->nd == 2) {
        st = sm_transpose(*t, 0, 1, &out);
        std::swap(n.shape[0], n.shape[1]);
        std::swap(n.strides[0], n.strides[1]);
      } else if (kind == 4 && m->nd == 2) {  // select
        const int64_t i = rng_.below(size);
        st = sm_select(*t, d, i, &out);
        n.off += i * m->strides[d];
        n.nd = 1;
        n.shape[0] = m->shape[1 - d];
        n.strides[0] = m->strides[1 - d];
      } else if (kind == 5 && m->nd == 1 && size >= 4) {  // non-overlapping windows
        const int64_t w = rng_.range(1, 3), step = rng_.range(w, w + 2);
        st = sm_unfold(*t, 0, w, step, &out);
        n.nd = 2;
        n.shape[0] = (size - w) / step + 1;
        n.strides[0] = m->strides[0] * step;
        n.shape[1] = w;
        n.strides[1] = m->strides[0];
      } else {
        continue;
      }
      ++calls_;
      REL_CHECK(st == SM_OK, "view step %d -> %s", kind, sm_status_string(st));
      if (st != SM_OK) continue;
      if (!same_layout(out, n, "view chain")) {
        sm_tensor_release(out);
        continue;
      }
      REL_OK(sm_tensor_release(*t));
      *t = out;
      *m = n;
      calls_ += 2;
    }
  }

  // Elements (as positions in the owned slice) of a model layout over a slice
  // that starts at `base` with element stride `unit`.
  std::vector<int64_t> positions(const Lay& m, int64_t base, int64_t unit) {
    std::vector<int64_t> pos;
    rel::for_each_offset(m.shape, m.strides, m.nd, m.off,
                         [&](int64_t off) { pos.push_back((off - base) / unit); });
    return pos;
  }

  template <class T>
  void expect_values(sm_tensor t, const std::vector<T>& want, const char* what) {
    std::vector<uint8_t> got;
    if (!rel::copy_out(t, static_cast<int64_t>(want.size() * sizeof(T)), &got)) return;
    ++calls_;
    const bool same = want.empty() || std::memcmp(got.data(), want.data(), got.size()) == 0;
    REL_CHECK(same, "thread %d: %s: values differ from the model", k_, what);
  }

  // An in-place write through a random view of row k of W, then a read-back.
  void write_W() {
    sm_tensor t = nullptr;
    REL_OK(sm_select(sh_.W, 0, k_, &t));
    if (!t) return;
    Lay m;
    m.nd = 1;
    m.shape[0] = kRow;
    m.strides[0] = 1;
    m.off = k_ * kRow;
    random_chain(&t, &m, true);
    const std::vector<int64_t> pos = positions(m, k_ * kRow, 1);
    const int op = static_cast<int>(rng_.below(6));
    if (op == 0) {
      const double c = static_cast<double>(rng_.range(-5, 5));
      REL_OK(sm_inplace_scalar(t, SM_OP_ADD, c, 0));
      for (int64_t p : pos) expW_[p] += c;
    } else if (op == 1) {
      REL_OK(sm_inplace_scalar(t, SM_OP_NEG, 0, 0));
      for (int64_t p : pos) expW_[p] = -expW_[p];
    } else if (op == 2) {
      const double v = static_cast<double>(rng_.range(-100, 100));
      REL_OK(sm_inplace_scalar(t, SM_OP_FILL, v, 0));
      for (int64_t p : pos) expW_[p] = v;
    } else if (op == 3 || op == 4) {  // from a private tensor: same shape, or broadcast last dim
      const bool bcast = op == 4 && m.nd >= 1;
      int64_t shape[4];
      for (int i = 0; i < m.nd; ++i) shape[i] = m.shape[i];
      std::vector<double> src(static_cast<size_t>(bcast ? m.shape[m.nd - 1] : m.numel()));
      for (double& v : src) v = static_cast<double>(rng_.range(-50, 50));
      sm_tensor s = nullptr;
      const int64_t* sshape = bcast ? &shape[m.nd - 1] : shape;
      REL_OK(sm_from_host(src.data(), sshape, bcast ? 1 : m.nd, SM_FLOAT64, rel::cpu(), &s));
      if (op == 3) {
        const int64_t alpha = rng_.range(-2, 2);
        REL_OK(sm_inplace_tensor(t, SM_OP_ADD, s, static_cast<double>(alpha)));
        for (size_t i = 0; i < pos.size(); ++i) expW_[pos[i]] += static_cast<double>(alpha) * src[i];
      } else {
        REL_OK(sm_copy_into(t, s));
        const size_t inner = src.size();
        for (size_t i = 0; i < pos.size(); ++i) expW_[pos[i]] = src[i % inner];
      }
      REL_OK(sm_tensor_release(s));
      calls_ += 3;
    } else {
      // Conversion through a private i32 copy and back.
      sm_tensor c = nullptr;
      REL_OK(sm_to(t, rel::cpu(), SM_INT32, &c, nullptr));
      if (c) {
        REL_OK(sm_inplace_scalar(c, SM_OP_ADD, 1, 0));
        REL_OK(sm_copy_into(t, c));
        for (int64_t p : pos) expW_[p] += 1;
        REL_OK(sm_tensor_release(c));
      }
      calls_ += 4;
    }
    std::vector<double> want;
    for (int64_t p : pos) want.push_back(expW_[p]);
    expect_values(t, want, "W view after write");
    REL_OK(sm_tensor_release(t));
    calls_ += 3;
  }

  // Column k of Wi (stride T, interleaved with every other thread's column).
  void write_Wi() {
    sm_tensor t = nullptr;
    REL_OK(sm_select(sh_.Wi, 1, k_, &t));
    if (!t) return;
    Lay m;
    m.nd = 1;
    m.shape[0] = kRow;
    m.strides[0] = sh_.threads;
    m.off = k_;
    random_chain(&t, &m, true);
    std::vector<int64_t> pos = positions(m, k_, sh_.threads);
    const int op = static_cast<int>(rng_.below(3));
    if (op == 0) {
      const int32_t c = static_cast<int32_t>(rng_.range(-7, 7));
      REL_OK(sm_inplace_scalar(t, SM_OP_ADD, c, 0));
      for (int64_t p : pos) expWi_[p] += c;
    } else if (op == 1) {
      REL_OK(sm_inplace_scalar(t, SM_OP_NEG, 0, 0));
      for (int64_t p : pos) expWi_[p] = -expWi_[p];
    } else {  // f64 source converted to i32
      std::vector<double> src(pos.size());
      for (double& v : src) v = static_cast<double>(rng_.range(-1000, 1000));
      sm_tensor s = nullptr;
      REL_OK(sm_from_host(src.data(), m.shape, m.nd, SM_FLOAT64, rel::cpu(), &s));
      REL_OK(sm_copy_into(t, s));
      for (size_t i = 0; i < pos.size(); ++i) expWi_[pos[i]] = static_cast<int32_t>(src[i]);
      REL_OK(sm_tensor_release(s));
      calls_ += 3;
    }
    std::vector<int32_t> want;
    for (int64_t p : pos) want.push_back(expWi_[p]);
    expect_values(t, want, "Wi view after write");
    REL_OK(sm_tensor_release(t));
    calls_ += 3;
  }

  // Random views and copies of the shared read-only tensor, retained and
  // released concurrently by every thread.
  void read_RO() {
    REL_OK(sm_tensor_retain(sh_.RO));
    sm_tensor t = nullptr;
    REL_OK(sm_select(sh_.RO, 0, rng_.below(kRO), &t));
    if (t) {
      Lay m;
      int64_t row = -1;
      sm_storage_offset(t, &row);
      m.nd = 1;
      m.shape[0] = kRO;
      m.strides[0] = 1;
      m.off = row;
      if (rng_.chance(50)) {  // a column instead
        REL_OK(sm_tensor_release(t));
        t = nullptr;
        sm_tensor tr = nullptr;
        REL_OK(sm_transpose(sh_.RO, 0, 1, &tr));
        const int64_t j = rng_.below(kRO);
        REL_OK(sm_select(tr, 0, j, &t));
        REL_OK(sm_tensor_release(tr));
        m.strides[0] = kRO;
        m.off = j;
        calls_ += 3;
      }
      if (t) {
        random_chain(&t, &m, true);
        std::vector<float> want;
        rel::for_each_offset(m.shape, m.strides, m.nd, m.off,
                             [&](int64_t off) { want.push_back(static_cast<float>(off)); });
        sm_tensor c = nullptr;
        switch (rng_.below(4)) {
          case 0: REL_OK(sm_clone(t, SM_CONTIGUOUS, &c)); break;
          case 1: REL_OK(sm_contiguous(t, SM_CONTIGUOUS, &c, nullptr)); break;
          case 2: {
            const int64_t flat[1] = {-1};
            REL_OK(sm_reshape(t, flat, 1, &c, nullptr));
            break;
          }
          default: REL_OK(sm_tensor_retain(t)); c = t; break;
        }
        if (c) {
          expect_values(c, want, "RO copy");
          REL_OK(sm_tensor_release(c));
        }
        REL_OK(sm_tensor_release(t));
        calls_ += 4;
      }
    }
    REL_OK(sm_tensor_release(sh_.RO));
    calls_ += 3;
  }

  // Own stack: mark, push a few tensors, fill and check them, keep one past
  // the pop and check it is refused, pop.
  void own_stack() {
    int64_t mark = -1, used0 = -1, cap = -1, used1 = -1;
    REL_OK(sm_stack_mark(own_stack_, &mark));
    REL_OK(sm_stack_used(own_stack_, &used0, &cap));
    const int n = static_cast<int>(rng_.range(1, 4));
    sm_tensor ts[4] = {nullptr, nullptr, nullptr, nullptr};
    int64_t sizes[4];
    for (int i = 0; i < n; ++i) {
      sizes[i] = rng_.range(1, 300);
      const sm_dtype dt = rng_.chance(50) ? SM_INT32 : SM_FLOAT64;
      REL_OK(sm_stack_push(own_stack_, &sizes[i], 1, dt, &ts[i]));
      if (ts[i]) REL_OK(sm_inplace_scalar(ts[i], SM_OP_FILL, k_ * 100 + i, 0));
    }
    for (int i = 0; i < n; ++i) {
      if (!ts[i]) continue;
      sm_tensor f = nullptr;
      REL_OK(sm_to(ts[i], rel::cpu(), SM_FLOAT64, &f, nullptr));
      if (f) {
        expect_values(f, std::vector<double>(static_cast<size_t>(sizes[i]), k_ * 100.0 + i),
                      "own stack push");
        REL_OK(sm_tensor_release(f));
      }
    }
    const int keep = rng_.chance(30) ? 0 : -1;
    for (int i = 0; i < n; ++i)
      if (i != keep && ts[i]) REL_OK(sm_tensor_release(ts[i]));
    REL_OK(sm_stack_pop_to(own_stack_, mark));
    REL_OK(sm_stack_used(own_stack_, &used1, &cap));
    REL_CHECK(used1 == used0, "own stack: used %lld after pop, %lld before the pushes",
              (long long)used1, (long long)used0);
    if (keep == 0 && ts[0]) {
      int64_t numel = -1;
      REL_STATUS(sm_numel(ts[0], &numel), SM_ERR_INVALID_HANDLE);
      REL_OK(sm_tensor_release(ts[0]));
    }
    calls_ += 6 + 4 * n;
  }

  // Retain/release of the shared handles, views of whole shared tensors.
  void churn() {
    sm_tensor v = nullptr;
    REL_OK(sm_tensor_retain(sh_.W));
    REL_OK(sm_transpose(sh_.W, 0, 1, &v));
    int same = 0;
    REL_OK(sm_same_storage(v, sh_.W, &same));
    REL_CHECK(same == 1, "transpose of W does not share W's storage");
    REL_OK(sm_tensor_retain(v));
    REL_OK(sm_tensor_release(v));
    REL_OK(sm_tensor_release(v));
    REL_OK(sm_tensor_release(sh_.W));
    sm_storage s = nullptr;
    REL_OK(sm_tensor_storage(sh_.Wi, &s));
    int64_t nb = -1;
    REL_OK(sm_storage_size(s, &nb));
    REL_CHECK(nb == kRow * sh_.threads * 4, "Wi storage size %lld", (long long)nb);
    REL_OK(sm_storage_release(s));
    calls_ += 10;
  }

  // A failing call's message is the calling thread's own.
  void error_is_thread_local(int64_t it) {
    const int64_t bad = 1000000 + k_ * 100000 + it;
    sm_tensor out = nullptr;
    REL_STATUS(sm_select(sh_.W, 0, bad, &out), SM_ERR_OUT_OF_BOUNDS);
    REL_CHECK(out == nullptr, "failing sm_select wrote its output");
    std::this_thread::yield();
    const std::string msg = sm_last_error();
    REL_CHECK(msg.find(std::to_string(bad)) != std::string::npos,
              "thread %d: last error \"%s\" does not name its own index %lld", k_, msg.c_str(),
              (long long)bad);
    calls_ += 2;
  }

  void verify_row() {
    sm_tensor t = nullptr;
    REL_OK(sm_select(sh_.W, 0, k_, &t));
    if (t) {
      expect_values(t, expW_, "whole W row");
      REL_OK(sm_tensor_release(t));
    }
    calls_ += 3;
  }

  void stats_and_clone() {
    const sm_memory_stats_t s = rel::stats();
    REL_CHECK(s.allocated_bytes > 0 && s.active_views > 0 && s.active_storages > 0,
              "concurrent stats: allocated %lld views %lld storages %lld",
              (long long)s.allocated_bytes, (long long)s.active_views,
              (long long)s.active_storages);
    char buf[256];
    size_t need = 0;
    REL_OK(sm_memory_summary(rel::cpu(), buf, sizeof buf, &need));
    // A clone of the own row in channels-preserving order, compared.
    sm_tensor row = nullptr, c = nullptr;
    REL_OK(sm_select(sh_.W, 0, k_, &row));
    REL_OK(sm_clone(row, SM_PRESERVE, &c));
    if (c) {
      expect_values(c, expW_, "clone of W row");
      int same = 1;
      REL_OK(sm_same_storage(c, row, &same));
      REL_CHECK(same == 0, "clone shares its source's storage");
    }
    REL_OK(sm_tensor_release(c));
    REL_OK(sm_tensor_release(row));
    calls_ += 7;
  }

  // 1 MiB per row: large enough for the CPU thread pool; several threads
  // at once (the pool serves one job, the others run on their own thread).
  void big_copy() {
    sm_tensor row = nullptr, src = nullptr;
    const float v = static_cast<float>(rng_.range(-1000, 1000));
    REL_OK(sm_select(sh_.B, 0, k_, &row));
    REL_OK(sm_full(&kBig, 1, v, SM_FLOAT32, rel::cpu(), &src));
    if (row && src) {
      if (rng_.chance(50)) {
        REL_OK(sm_copy_into(row, src));
        expB_ = v;
      } else {
        REL_OK(sm_inplace_tensor(row, SM_OP_ADD, src, 1.0));
        expB_ += v;
      }
      expect_values(row, std::vector<float>(kBig, expB_), "B row after a large write");
    }
    REL_OK(sm_tensor_release(src));
    REL_OK(sm_tensor_release(row));
    calls_ += 6;
  }

  // Tags are per thread: allocations under this thread's tags carry its path
  // (checked in a snapshot now and then), whatever the other threads push.
  void tagged_allocations() {
    const std::string mine = "w" + std::to_string(k_);
    REL_OK(sm_push_tag(mine.c_str()));
    const bool nested = rng_.chance(50);
    if (nested) REL_OK(sm_push_tag("inner"));
    const std::string path = nested ? mine + "/inner" : mine;
    sm_tensor t = nullptr;
    const int64_t n = rng_.chance(20) ? rng_.range(1 << 17, 1 << 19) : rng_.range(1, 4096);
    REL_OK(sm_empty(&n, 1, SM_FLOAT32, rel::cpu(), &t));
    if (nested) REL_OK(sm_pop_tag());
    REL_OK(sm_pop_tag());
    calls_ += 4 + nested * 2;
    if (t && rng_.chance(10)) {
      sm_storage st = nullptr;
      uint64_t id = 0;
      REL_OK(sm_tensor_storage(t, &st));
      REL_OK(sm_storage_id(st, &id));
      REL_OK(sm_storage_release(st));
      int found = 0;
      std::string tag;
      for_snapshot_block(id, &found, &tag);
      REL_CHECK(found == 1, "thread %d: storage %llu is in %d snapshot blocks", k_, (unsigned long long)id,
                found);
      REL_CHECK(found != 1 || tag == path, "thread %d: its block is tagged \"%s\", pushed \"%s\"", k_,
                tag.c_str(), path.c_str());
      calls_ += 5;
    }
    REL_OK(sm_tensor_release(t));
    ++calls_;
  }

  // How many allocated blocks of a snapshot name storage `id`, and the tag of the last one.
  static void for_snapshot_block(uint64_t id, int* found, std::string* tag) {
    std::string text;
    if (!snapshot_text(&text)) return;
    try {
      const smt::json::Value j = smt::json::parse(text);
      for (const smt::json::Value& seg : j["segments"].items)
        for (const smt::json::Value& b : seg["blocks"].items)
          if (!b["storage"].is_null() && b["storage"].u64() == id) {
            ++*found;
            *tag = b["tag"].is_null() ? std::string("(untagged)") : b["tag"].str();
          }
    } catch (const std::exception& e) {
      REL_CHECK(false, "snapshot: %s", e.what());
    }
  }

 public:
  // The snapshot text, by the loop the header shows (memory changes between calls).
  static bool snapshot_text(std::string* out) {
    std::vector<char> buf;
    size_t need = 0;
    do {
      buf.resize(need);
      const sm_status st = sm_memory_snapshot(rel::cpu(), buf.empty() ? nullptr : buf.data(), buf.size(), &need);
      REL_CHECK(st == SM_OK, "sm_memory_snapshot -> %s: %s", sm_status_string(st), sm_last_error());
      if (st != SM_OK) return false;
    } while (need > buf.size());
    out->assign(buf.data(), need - 1);
    return true;
  }

 private:
  // Lock-step: every thread pushes onto the shared stack at once, fills its
  // pushes, checks them after everyone has written; thread 0 pops to the
  // mark; everyone checks its tensors are refused and releases them.
  void shared_stack_round(int64_t it) {
    static int64_t mark;  // written by thread 0 between barriers
    if (k_ == 0) REL_OK(sm_stack_mark(sh_.SS, &mark));
    sh_.bar->wait();
    sm_tensor ts[4] = {nullptr, nullptr, nullptr, nullptr};
    int64_t sizes[4];
    for (int i = 0; i < 4; ++i) {
      sizes[i] = rng_.range(1, 64);
      REL_OK(sm_stack_push(sh_.SS, &sizes[i], 1, SM_FLOAT64, &ts[i]));
      if (ts[i]) REL_OK(sm_inplace_scalar(ts[i], SM_OP_FILL, k_ * 1000 + i + it % 7, 0));
    }
    sh_.bar->wait();
    for (int i = 0; i < 4; ++i)
      if (ts[i])
        expect_values(ts[i], std::vector<double>(static_cast<size_t>(sizes[i]), k_ * 1000.0 + i + it % 7),
                      "shared stack push");
    sh_.bar->wait();
    if (k_ == 0) REL_OK(sm_stack_pop_to(sh_.SS, mark));
    sh_.bar->wait();
    for (int i = 0; i < 4; ++i) {
      if (!ts[i]) continue;
      int32_t nd = -1;
      REL_STATUS(sm_ndim(ts[i], &nd), SM_ERR_INVALID_HANDLE);
      REL_OK(sm_tensor_release(ts[i]));
    }
    calls_ += 4 * 5;
  }

  Shared& sh_;
  int k_;
  Rng rng_;
  std::vector<double> expW_;
  std::vector<int32_t> expWi_;
  float expB_ = 0;
  sm_stack own_stack_ = nullptr;
  int64_t calls_ = 0;
};

// Snapshots, summaries and history toggles while the workers run. Each
// snapshot is one instant of the allocator: its own totals equal the sums of
// its segments and blocks, whatever the workers do at the same time.
struct Watcher {
  std::atomic<bool> stop{false};
  int64_t snapshots = 0, toggles = 0;

  void run() {
    rel::Rng rng(12345);
    while (!stop.load()) {
      check_one_snapshot();
      ++snapshots;
      if (rng.chance(30)) {
        static const int64_t kRings[] = {0, 1, 16, 1000};
        REL_OK(sm_memory_record_history(rel::cpu(), kRings[rng.below(4)]));
        ++toggles;
      }
      if (rng.chance(20)) {
        size_t need = 0;
        REL_OK(sm_memory_summary(rel::cpu(), nullptr, 0, &need));
      }
      std::this_thread::yield();
    }
    REL_OK(sm_memory_record_history(rel::cpu(), 0));
  }

  static void check_one_snapshot() {
    std::string text;
    if (!Worker::snapshot_text(&text)) return;
    try {
      const smt::json::Value j = smt::json::parse(text);
      int64_t reserved = 0, allocated = 0, requested = 0;
      for (const smt::json::Value& seg : j["segments"].items) {
        reserved += seg["size"].i64();
        int64_t offset = 0;
        for (const smt::json::Value& b : seg["blocks"].items) {
          REL_CHECK(b["offset"].i64() == offset, "concurrent snapshot: blocks do not tile a segment");
          offset += b["size"].i64();
          if (b["state"].str() != "allocated") continue;
          allocated += b["size"].i64();
          requested += b["requested"].i64();
          if (b["tag"].is_null()) continue;
          const std::string& tag = b["tag"].str();  // "w<k>" or "w<k>/inner"
          const bool ok = tag.size() >= 2 && tag[0] == 'w' &&
                          (tag.find('/') == std::string::npos || tag.substr(tag.find('/')) == "/inner");
          REL_CHECK(ok, "concurrent snapshot: tag \"%s\" was never pushed", tag.c_str());
        }
      }
      const smt::json::Value& t = j["totals"];
      REL_CHECK(reserved == t["reserved_bytes"].i64() && allocated == t["allocated_bytes"].i64() &&
                    requested == t["requested_bytes"].i64(),
                "concurrent snapshot: totals (%lld, %lld, %lld) differ from its blocks (%lld, %lld, %lld)",
                (long long)t["reserved_bytes"].i64(), (long long)t["allocated_bytes"].i64(),
                (long long)t["requested_bytes"].i64(), (long long)reserved, (long long)allocated,
                (long long)requested);
      if (j.has("history")) {
        const smt::json::Value& h = j["history"];
        REL_CHECK(h["events"].size() <= h["capacity"].u64() &&
                      h["dropped"].u64() == h["recorded"].u64() - h["events"].size(),
                  "concurrent snapshot: history counts");
        const smt::json::Value& ev = h["events"];
        if (ev.size() > 0)
          REL_CHECK(ev[ev.size() - 1]["allocated_bytes"].i64() == t["allocated_bytes"].i64(),
                    "concurrent snapshot: the newest event's totals are not the snapshot's");
      }
    } catch (const std::exception& e) {
      REL_CHECK(false, "concurrent snapshot: %s", e.what());
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive a sanitizer abort
  Shared sh;
  sh.threads = static_cast<int>(rel::arg_int(argc, argv, "--threads", 8));
  sh.ops = rel::arg_int(argc, argv, "--ops", 4000);
  sh.seed = static_cast<uint64_t>(rel::arg_int(argc, argv, "--seed", 1));
  if (sh.threads < 1 || sh.threads > 64 || sh.ops < 1) {
    std::fprintf(stderr, "usage: %s [--threads 1..64] [--ops N>0] [--seed S]\n", argv[0]);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const rel::State start = rel::state();
  const int T = sh.threads;

  const int64_t wshape[2] = {T, kRow}, wishape[2] = {kRow, T}, bshape[2] = {T, kBig};
  REL_OK(sm_zeros(wshape, 2, SM_FLOAT64, rel::cpu(), &sh.W));
  REL_OK(sm_zeros(wishape, 2, SM_INT32, rel::cpu(), &sh.Wi));
  REL_OK(sm_zeros(bshape, 2, SM_FLOAT32, rel::cpu(), &sh.B));
  sm_tensor flat = nullptr;
  REL_OK(sm_arange(0, 1, kRO * kRO, SM_FLOAT32, rel::cpu(), &flat));
  const int64_t roshape[2] = {kRO, kRO};
  REL_OK(sm_view(flat, roshape, 2, &sh.RO));
  REL_OK(sm_tensor_release(flat));
  REL_OK(sm_stack_create(rel::cpu(), kSharedStackCap, &sh.SS));
  if (rel::failures() != 0) return 1;

  // The watcher snapshots memory while the workers run (started first, so it
  // is there for their whole run).
  Watcher watcher;
  std::thread watching([&watcher] { watcher.run(); });
  const std::vector<Worker> workers = rel::run_workers<Worker>(sh, T);
  watcher.stop = true;
  watching.join();
  REL_CHECK(watcher.snapshots > 0, "the watcher took no snapshot");
  std::string last;
  REL_CHECK(Worker::snapshot_text(&last) && last.find("\"history\"") == std::string::npos,
            "history still recorded after the watcher turned it off");
  REL_STATUS(sm_pop_tag(), SM_ERR_INVALID_ARGUMENT);  // the main thread pushed nothing

  // Final values, exactly.
  std::vector<double> w(static_cast<size_t>(T * kRow));
  std::vector<int32_t> wi(static_cast<size_t>(T * kRow));
  REL_OK(sm_copy_to_host(sh.W, w.data(), w.size() * sizeof(double)));
  REL_OK(sm_copy_to_host(sh.Wi, wi.data(), wi.size() * sizeof(int32_t)));
  std::vector<float> b(static_cast<size_t>(kBig));
  int64_t bad_w = 0, bad_wi = 0, bad_b = 0;
  for (int k = 0; k < T; ++k) {
    const Worker& wk = workers[static_cast<size_t>(k)];
    for (int64_t i = 0; i < kRow; ++i) {
      bad_w += w[static_cast<size_t>(k * kRow + i)] != wk.expW()[static_cast<size_t>(i)];
      bad_wi += wi[static_cast<size_t>(i * T + k)] != wk.expWi()[static_cast<size_t>(i)];
    }
    sm_tensor row = nullptr;
    REL_OK(sm_select(sh.B, 0, k, &row));
    REL_OK(sm_copy_to_host(row, b.data(), b.size() * sizeof(float)));
    REL_OK(sm_tensor_release(row));
    for (float x : b) bad_b += x != wk.expB();
  }
  REL_CHECK(bad_w == 0, "%lld elements of W differ from the threads' models", (long long)bad_w);
  REL_CHECK(bad_wi == 0, "%lld elements of Wi differ from the threads' models", (long long)bad_wi);
  REL_CHECK(bad_b == 0, "%lld elements of B differ from the threads' models", (long long)bad_b);
  int64_t used = -1, cap = -1;
  REL_OK(sm_stack_used(sh.SS, &used, &cap));
  REL_CHECK(used == 0, "shared stack: %lld bytes still used", (long long)used);

  for (sm_tensor t : {sh.W, sh.Wi, sh.B, sh.RO}) REL_OK(sm_tensor_release(t));
  REL_OK(sm_stack_release(sh.SS));
  const rel::State end = rel::state();
  REL_CHECK(end == start, "state after the run %s differs from the start %s", end.str().c_str(),
            start.str().c_str());

  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("stress: %d threads x %lld ops (seed %llu): %lld API calls, %lld checks, %lld "
              "failures, %.2f s; watcher: %lld snapshots, %lld history toggles\n",
              T, (long long)sh.ops, (unsigned long long)sh.seed, (long long)sh.calls.load(),
              (long long)rel::checks().load(), (long long)rel::failures().load(), secs,
              (long long)watcher.snapshots, (long long)watcher.toggles);
  return rel::failures() == 0 ? 0 : 1;
}
