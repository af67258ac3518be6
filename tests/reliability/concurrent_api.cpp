// Every function of include/stridemem.h, called from several threads at once.
//
// The header says "every call is thread-safe". This program holds each of
// its functions to that: T threads (default 8) go through the same phases in
// lock-step, a barrier before each small group of calls, so that they enter
// the same calls at the same moment, on shared objects (one tensor read by
// all, one storage exported by all, one tensor moved into shared memory by
// all, one stack pushed by all, the process-wide settings) and on private
// ones; then a mixed phase without barriers where each thread picks groups at
// random, so that different functions overlap too. Every result is checked
// exactly (values, layouts, statuses, deleters run once, nothing left behind
// at the end).
//
// Why lock-step: TSan (scripts/reliability.sh tsan) reports a race only
// between two accesses that no lock orders, and every call takes the handle
// table's lock; calls that do not overlap in time are ordered through it.
//
// Coverage is recorded at run time, not read from the source: every library
// call goes through CALL(fn, ...), which notes (thread, phase, "fn") and then
// calls fn; a phase is the stretch between two barriers, so two threads that
// called fn in one phase were ordered by nothing in this program. At the end
// the program reads every SM_API declaration of stridemem.h and fails, naming
// it, for each function that no two threads called within one phase: a
// function added to the header fails this test until it is called here.
//
// What the header allows and no more: sm_stack_pop_to and sm_share_memory
// never run while another thread uses a tensor they invalidate or move
// (barriers order them); fault injection (one countdown for the process)
// runs in its own phase, since any thread's allocation may be the one that
// fails.
//
// File descriptors: the count at the end must equal the count at the start.
// The CUDA driver opens descriptors of its own on the first use of a device
// (/dev/nvidia*, eventfds, pipes) and keeps them for the life of the process;
// the baseline is therefore taken after every device has been used once, so
// what is compared is what the run itself left open. --plant-fd-leak 1 makes
// thread 0 leave one descriptor open per round (reliability.concurrency_fd_leak
// shows the check catches it).
//
//   reliability_concurrency [--threads 8] [--rounds 2] [--mixed 40] [--seed 1]
//                           [--header include/stridemem.h] [--plant-fd-leak 0]
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "../api/json_reader.hpp"
#include "rel_util.hpp"
#include "../helpers/header_functions.hpp"
#include "stridemem_dlpack.h"

namespace {

// ---- the run-time registry ---------------------------------------------------------------

// One per thread, never shared while the threads run (merged after they are
// joined): recording adds no synchronization that could hide a race.
struct Recorder {
  int phase = 0;
  int64_t calls = 0;
  std::set<std::pair<int, const char*>> hits;  // (phase, function name)
};
thread_local Recorder* t_rec = nullptr;

inline void hit(const char* fn) {
  if (!t_rec) return;
  ++t_rec->calls;
  t_rec->hits.insert({t_rec->phase, fn});
}

// The name recorded is the function called: the same token.
#define CALL(fn, ...) (hit(#fn), fn(__VA_ARGS__))
#define CALL0(fn) (hit(#fn), fn())
#define OK(fn, ...) REL_OK(CALL(fn, __VA_ARGS__))
#define IS(want, fn, ...) REL_STATUS(CALL(fn, __VA_ARGS__), want)

// ---- fixtures -----------------------------------------------------------------------------

constexpr int64_t kD0 = 4, kD1 = 6, kD2 = 8, kSN = kD0 * kD1 * kD2;  // S: f32 [4, 6, 8]
constexpr int64_t kRowW = 64;                                        // W: f64 [T, 64], thread k owns row k
constexpr int64_t kShRow = 256;    // SH: shared-memory f32 [T, 256], thread k writes row k
constexpr int64_t kBig = 1 << 18;  // f32: 1 MiB, the CPU thread pool's threshold
constexpr int64_t kBlob = 64;
const int64_t kIdx[5] = {3, -1, 0, 2, 3};  // IDX, along S's dim 1 (size 6)

float s_at(int64_t i, int64_t j, int64_t k) { return static_cast<float>(i * kD1 * kD2 + j * kD2 + k); }
float s_flat(int64_t n) { return static_cast<float>(n); }

// What one thread hands to another: written before a barrier, read after it.
struct Slot {
  void* managed = nullptr;  // a DLPack export of S
  int versioned = 0;
  sm_share_desc desc{};  // an export of SH's storage
  int fd = -1;
  sm_tensor producer = nullptr;  // a DLPack import of a foreign producer's memory
  sm_tensor blob = nullptr;      // a from_blob tensor over heap memory
  std::atomic<int> producer_deletes{0}, blob_deletes{0};
  int64_t mark = -1;  // this thread's sm_stack_mark of the shared stack
};

struct OomTally {
  std::atomic<int64_t> calls{0};
};

struct Shared {
  int threads = 8;
  int rounds = 2;
  int64_t mixed = 40;
  uint64_t seed = 1;
  sm_tensor S = nullptr;  // read by everyone, never written
  sm_tensor W = nullptr;
  sm_tensor IDX = nullptr;  // i64 [5]
  sm_tensor SH = nullptr;   // in shared memory
  sm_tensor MV = nullptr;   // moved into shared memory by every thread at once (one per round)
  sm_stack SS = nullptr;    // pushed by every thread at once
  void* s_data = nullptr;
  uint64_t s_storage_id = 0;
  int64_t s_version = -1;
  int cores = 1;
  bool plant_fd_leak = false;
  float blob[kBlob];  // wrapped by every thread (sm_from_blob), never written after the start
  rel::Barrier* bar = nullptr;
  std::vector<Slot> slots;
  std::vector<OomTally> tallies;
  std::atomic<int64_t> arms{0}, ooms{0}, aged_ok{0};
  explicit Shared(int t) : threads(t), slots(static_cast<size_t>(t)), tallies(static_cast<size_t>(t)) {}
};

// The out-of-memory observer: counts on the calling thread ("on the thread
// that asked") and in its user_data, which must be one of the tallies.
thread_local int64_t t_observed = 0;
thread_local int64_t t_observed_request = -1;
Shared* g_shared = nullptr;
void observe(const sm_oom_info* info, void* user) {
  ++t_observed;
  t_observed_request = info->requested_bytes;
  const OomTally* first = g_shared->tallies.data();
  const OomTally* t = static_cast<const OomTally*>(user);
  const bool known = t >= first && t < first + g_shared->tallies.size();
  REL_CHECK(known, "the observer got user_data %p, which no thread set", user);
  REL_CHECK(info->report && std::strstr(info->report, "injected"), "observer report: %s",
            info->report ? info->report : "(null)");
  if (known) static_cast<OomTally*>(user)->calls++;
}

// Counts into its user_data, which its thread frees after removing it.
void count_call(const sm_oom_info*, void* user) { static_cast<OomTally*>(user)->calls++; }

// A DLPack producer outside the library: its own memory, its deleter counts.
struct Producer {
  sm_DLManagedTensorVersioned m;
  int64_t shape[1] = {32};
  float data[32];
  std::atomic<int>* deletes = nullptr;
};
void producer_deleter(sm_DLManagedTensorVersioned* m) {
  Producer* p = static_cast<Producer*>(m->manager_ctx);
  p->deletes->fetch_add(1);
  delete p;
}

struct Blob {
  float data[kBlob];
  std::atomic<int>* deletes = nullptr;
};
void blob_deleter(void* data, void* ctx) {
  Blob* b = static_cast<Blob*>(ctx);
  REL_CHECK(data == b->data, "the blob deleter got another pointer");
  b->deletes->fetch_add(1);
  delete b;
}

// The process's open descriptors and what each one is (readlink of
// /proc/self/fd/N), without the one that reads the directory.
std::map<int, std::string> open_fds() {
  std::map<int, std::string> fds;
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (const dirent* e = readdir(d)) {
      if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
      const int fd = std::atoi(e->d_name);
      if (fd == own) continue;
      char link[64], target[PATH_MAX];
      std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      const ssize_t n = readlink(link, target, sizeof target - 1);
      fds[fd] = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string("?");
    }
    closedir(d);
  }
  return fds;
}

// Uses every CUDA device once (a copy there and back, a synchronize), so that
// the descriptors the driver keeps for the process are open before the
// baseline is counted. Without a usable GPU this does nothing.
void use_every_cuda_device() {
  int32_t n = 0;
  REL_OK(sm_cuda_device_count(&n));
  const float host[4] = {1, 2, 3, 4};
  const int64_t four = 4;
  for (int32_t i = 0; i < n; ++i) {
    const sm_device cuda{SM_DEVICE_CUDA, i};
    sm_tensor c = nullptr, g = nullptr, back = nullptr;
    REL_OK(sm_from_host(host, &four, 1, SM_FLOAT32, rel::cpu(), &c));
    REL_OK(sm_to(c, cuda, SM_FLOAT32, &g, nullptr));
    REL_OK(sm_to(g, rel::cpu(), SM_FLOAT32, &back, nullptr));
    REL_OK(sm_synchronize(cuda));
    for (sm_tensor t : {back, g, c})
      if (t) REL_OK(sm_tensor_release(t));
  }
}

int affinity_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const unsigned h = std::thread::hardware_concurrency();
  return h ? static_cast<int>(h) : 1;
}

class Worker {
 public:
  Worker(Shared& sh, int k)
      : sh_(sh),
        k_(k),
        rng_(sh.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(k) + 1),
        expW_(kRowW, 0.0) {}

  void run() {
    t_rec = &rec_;
    for (int r = 0; r < sh_.rounds; ++r) {
      round_ = r;
      sync();
      meta();
      sync();
      views();
      sync();
      copies();
      sync();
      storages();
      sync();
      own_stack();
      shared_stack_round();
      sync();
      own_shared_stack();
      own_sharing();
      common_sharing();
      sync();
      own_dlpack();
      dlpack_handoff();
      sync();
      runtime();
      sync();
      faults();
      sync();
      aging();
      sync();
      mixed();
    }
    sync();
    t_rec = nullptr;
  }

  const Recorder& recorder() const { return rec_; }
  int32_t cuda_devices() const { return cuda_devices_; }
  const std::vector<double>& expW() const { return expW_; }

 private:
  void sync() {
    sh_.bar->wait();
    ++rec_.phase;
  }
  // In the lock-step phases, a barrier before each group of calls, so that
  // the threads enter the same calls at the same moment: TSan sees a race
  // only between accesses that no lock taken in between orders, and every
  // call takes the handle table's lock. The mixed phase runs without.
  void step() {
    if (lockstep_) sync();
  }
  Slot& mine() { return sh_.slots[static_cast<size_t>(k_)]; }
  Slot& next() { return sh_.slots[static_cast<size_t>((k_ + 1) % sh_.threads)]; }

  // t must have this dtype and shape, and element idx must equal f(idx)
  // for every idx (read through sm_copy_to_host).
  template <class T, class F>
  void expect(sm_tensor t, sm_dtype dtype, std::vector<int64_t> shape, F f, const char* what) {
    if (!t) {
      REL_CHECK(false, "%s: no tensor", what);
      return;
    }
    int32_t nd = -1;
    sm_dtype dt = -1;
    int64_t got[SM_MAX_DIMS];
    OK(sm_ndim, t, &nd);
    OK(sm_dtype_of, t, &dt);
    OK(sm_shape, t, got, SM_MAX_DIMS);
    bool same = nd == static_cast<int32_t>(shape.size()) && dt == dtype;
    for (int i = 0; same && i < nd; ++i) same = got[i] == shape[static_cast<size_t>(i)];
    REL_CHECK(same, "thread %d: %s: dtype %d ndim %d, expected dtype %d ndim %zu (or another shape)", k_,
              what, dt, nd, dtype, shape.size());
    if (!same) return;
    const int64_t n = rel::numel_of(shape.data(), nd);
    std::vector<T> host(static_cast<size_t>(n));
    OK(sm_copy_to_host, t, host.data(), host.size() * sizeof(T));
    std::vector<int64_t> idx(shape.size(), 0);
    int64_t bad = 0;
    for (int64_t e = 0; e < n; ++e) {
      if (host[static_cast<size_t>(e)] != f(idx.data())) ++bad;
      for (int d = nd - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
    REL_CHECK(bad == 0, "thread %d: %s: %lld of %lld elements differ", k_, what, (long long)bad,
              (long long)n);
  }

  // Views of S are views: same storage as S.
  void expect_view_of_s(sm_tensor v, std::vector<int64_t> shape, std::function<float(const int64_t*)> f,
                        const char* what) {
    expect<float>(v, SM_FLOAT32, std::move(shape), f, what);
    int same = 0;
    OK(sm_same_storage, v, sh_.S, &same);
    REL_CHECK(same == 1, "%s does not share S's storage", what);
    OK(sm_tensor_release, v);
  }

  void release(sm_tensor t) { OK(sm_tensor_release, t); }

  // ---- metadata, constants, errors -------------------------------------------------------
  void meta() {
    step();
    sm_tensor S = sh_.S;
    int32_t nd = -1;
    int64_t shape[SM_MAX_DIMS], strides[SM_MAX_DIMS], v = -1;
    OK(sm_ndim, S, &nd);
    OK(sm_shape, S, shape, SM_MAX_DIMS);
    OK(sm_strides, S, strides, SM_MAX_DIMS);
    REL_CHECK(nd == 3 && shape[0] == kD0 && shape[1] == kD1 && shape[2] == kD2 && strides[0] == kD1 * kD2 &&
                  strides[1] == kD2 && strides[2] == 1,
              "S's layout");
    OK(sm_storage_offset, S, &v);
    REL_CHECK(v == 0, "S's offset %lld", (long long)v);
    sm_dtype dt = -1;
    OK(sm_dtype_of, S, &dt);
    REL_CHECK(dt == SM_FLOAT32, "S's dtype %d", dt);
    sm_device dev{-1, -1};
    OK(sm_device_of, S, &dev);
    REL_CHECK(dev.type == SM_DEVICE_CPU && dev.index == 0, "S's device");
    OK(sm_numel, S, &v);
    REL_CHECK(v == kSN, "S's numel");
    OK(sm_nbytes, S, &v);
    REL_CHECK(v == kSN * 4, "S's nbytes");
    OK(sm_storage_nbytes, S, &v);
    REL_CHECK(v == kSN * 4, "S's storage_nbytes");
    void* p = nullptr;
    OK(sm_data_ptr, S, &p);
    REL_CHECK(p == sh_.s_data, "S's data pointer moved");
    OK(sm_version_counter, S, &v);
    REL_CHECK(v == sh_.s_version, "S's version %lld changed (nobody writes S)", (long long)v);
    int flag = -1;
    OK(sm_is_read_only, S, &flag);
    REL_CHECK(flag == 0, "S read-only");
    step();
    sm_tensor tr = nullptr;
    OK(sm_transpose, S, 0, 2, &tr);
    OK(sm_is_contiguous, S, SM_CONTIGUOUS, &flag);
    REL_CHECK(flag == 1, "S not contiguous");
    OK(sm_is_contiguous, tr, SM_CONTIGUOUS, &flag);
    REL_CHECK(flag == 0, "S^T contiguous");
    OK(sm_is_contiguous, tr, SM_PRESERVE, &flag);
    REL_CHECK(flag == 1, "S^T is dense in some order");
    OK(sm_same_storage, tr, S, &flag);
    REL_CHECK(flag == 1, "S^T's storage");
    OK(sm_same_storage, sh_.W, S, &flag);
    REL_CHECK(flag == 0, "W and S share a storage");
    release(tr);

    step();
    REL_CHECK(CALL(sm_dtype_size, SM_COMPLEX128) == 16 && CALL(sm_dtype_size, 99) == 0, "sm_dtype_size");
    REL_CHECK(std::strcmp(CALL(sm_dtype_name, SM_BFLOAT16), "bfloat16") == 0 &&
                  std::strcmp(CALL(sm_dtype_name, -3), "unknown") == 0,
              "sm_dtype_name");
    const char* s1 = CALL(sm_status_string, SM_ERR_SHAPE);
    const char* s2 = CALL(sm_status_string, 1000);
    REL_CHECK(s1 && std::strstr(s1, "SM_ERR_SHAPE") && s2 && *s2, "sm_status_string");
    int a = -1, b = -1, c = -1;
    OK(sm_version, &a, &b, &c);
    REL_CHECK(a == SM_VERSION_MAJOR && b == SM_VERSION_MINOR && c == SM_VERSION_PATCH, "sm_version");
    int32_t n = -1;
    OK(sm_cuda_device_count, &n);
    // The first calls of the process are these, on every thread at once.
    if (cuda_devices_ < 0) cuda_devices_ = n;
    REL_CHECK(n >= 0 && n == cuda_devices_, "sm_cuda_device_count %d, %d before", n, cuda_devices_);
    step();
    last_error_is_mine();
  }

  // A failing call's message is the calling thread's own, whatever the
  // others fail with meanwhile.
  void last_error_is_mine() {
    const int64_t bad = 1000000 + k_ * 100000 + rng_.below(100000);
    sm_tensor out = nullptr;
    IS(SM_ERR_OUT_OF_BOUNDS, sm_select, sh_.S, 0, bad, &out);
    REL_CHECK(out == nullptr, "a failing sm_select wrote its output");
    std::this_thread::yield();
    const std::string msg = CALL0(sm_last_error);
    REL_CHECK(msg.find(std::to_string(bad)) != std::string::npos,
              "thread %d: sm_last_error \"%s\" does not name its own index %lld", k_, msg.c_str(),
              (long long)bad);
  }

  // ---- every view of the one shared tensor ------------------------------------------------
  void views() {
    sm_tensor S = sh_.S, v = nullptr;
    step();
    {
      const int64_t shape[2] = {kD0 * kD1, kD2};
      OK(sm_view, S, shape, 2, &v);
      expect_view_of_s(
          v, {kD0 * kD1, kD2}, [](const int64_t* i) { return s_flat(i[0] * kD2 + i[1]); }, "view");
    }
    step();
    {
      const int64_t shape[2] = {2, 3}, strides[2] = {48, 1};
      OK(sm_as_strided, S, shape, strides, 2, 5, &v);
      expect_view_of_s(
          v, {2, 3}, [](const int64_t* i) { return s_flat(5 + 48 * i[0] + i[1]); }, "as_strided");
    }
    step();
    OK(sm_slice, S, 2, 1, 7, 2, &v);
    expect_view_of_s(
        v, {kD0, kD1, 3}, [](const int64_t* i) { return s_at(i[0], i[1], 1 + 2 * i[2]); }, "slice");
    step();
    OK(sm_narrow, S, 1, 2, 3, &v);
    expect_view_of_s(
        v, {kD0, 3, kD2}, [](const int64_t* i) { return s_at(i[0], i[1] + 2, i[2]); }, "narrow");
    const int64_t row = (k_ + round_) % kD0;
    step();
    OK(sm_select, S, 0, row, &v);
    expect_view_of_s(
        v, {kD1, kD2}, [row](const int64_t* i) { return s_at(row, i[0], i[1]); }, "select");
    step();
    {
      const int32_t dims[3] = {2, 0, 1};
      OK(sm_permute, S, dims, 3, &v);
      expect_view_of_s(
          v, {kD2, kD0, kD1}, [](const int64_t* i) { return s_at(i[1], i[2], i[0]); }, "permute");
    }
    step();
    OK(sm_transpose, S, 0, 2, &v);
    expect_view_of_s(
        v, {kD2, kD1, kD0}, [](const int64_t* i) { return s_at(i[2], i[1], i[0]); }, "transpose");
    step();
    {
      const int32_t src[1] = {0}, dst[1] = {2};
      OK(sm_movedim, S, src, dst, 1, &v);
      expect_view_of_s(
          v, {kD1, kD2, kD0}, [](const int64_t* i) { return s_at(i[2], i[0], i[1]); }, "movedim");
    }
    step();
    {
      sm_tensor first = nullptr;
      OK(sm_narrow, S, 0, 0, 1, &first);
      const int64_t shape[4] = {2, 5, kD1, kD2};
      OK(sm_expand, first, shape, 4, &v);
      expect_view_of_s(
          v, {2, 5, kD1, kD2}, [](const int64_t* i) { return s_at(0, i[2], i[3]); }, "expand");
      OK(sm_squeeze, first, nullptr, 0, &v);
      expect_view_of_s(
          v, {kD1, kD2}, [](const int64_t* i) { return s_at(0, i[0], i[1]); }, "squeeze");
      release(first);
    }
    step();
    OK(sm_unsqueeze, S, 1, &v);
    expect_view_of_s(
        v, {kD0, 1, kD1, kD2}, [](const int64_t* i) { return s_at(i[0], i[2], i[3]); }, "unsqueeze");
    step();
    OK(sm_flatten, S, 0, 1, &v);
    expect_view_of_s(
        v, {kD0 * kD1, kD2}, [](const int64_t* i) { return s_flat(i[0] * kD2 + i[1]); }, "flatten");
    step();
    {
      const int64_t sizes[2] = {2, -1};
      OK(sm_unflatten, S, 2, sizes, 2, &v);
      expect_view_of_s(
          v, {kD0, kD1, 2, 4}, [](const int64_t* i) { return s_at(i[0], i[1], i[2] * 4 + i[3]); },
          "unflatten");
    }
    step();
    OK(sm_unfold, S, 2, 3, 2, &v);
    expect_view_of_s(
        v, {kD0, kD1, 3, 3}, [](const int64_t* i) { return s_at(i[0], i[1], i[2] * 2 + i[3]); }, "unfold");
    step();
    OK(sm_diagonal, S, 1, 1, 2, &v);
    expect_view_of_s(
        v, {kD0, kD1}, [](const int64_t* i) { return s_at(i[0], i[1], i[1] + 1); }, "diagonal");
    step();
    {
      sm_tensor parts[4] = {nullptr, nullptr, nullptr, nullptr};
      int32_t count = -1;
      OK(sm_split, S, 3, 2, nullptr, 0, &count);
      REL_CHECK(count == 3, "split count %d", count);
      OK(sm_split, S, 3, 2, parts, 4, &count);
      for (int32_t p = 0; p < count && p < 4; ++p)
        expect_view_of_s(
            parts[p], {kD0, kD1, p < 2 ? 3 : 2},
            [p](const int64_t* i) { return s_at(i[0], i[1], 3 * p + i[2]); }, "split");
      OK(sm_chunk, S, 4, 1, parts, 4, &count);
      REL_CHECK(count == 3, "chunk count %d", count);
      for (int32_t p = 0; p < count && p < 4; ++p)
        expect_view_of_s(
            parts[p], {kD0, 2, kD2}, [p](const int64_t* i) { return s_at(i[0], 2 * p + i[1], i[2]); },
            "chunk");
    }
    step();
    {
      const int32_t dims[2] = {0, 2};
      OK(sm_flip, S, dims, 2, &v);
      expect_view_of_s(
          v, {kD0, kD1, kD2}, [](const int64_t* i) { return s_at(kD0 - 1 - i[0], i[1], kD2 - 1 - i[2]); },
          "flip");
    }
    step();
    OK(sm_tensor_retain, S);
    OK(sm_tensor_release, S);
  }

  // ---- copies, creation, writes to the thread's own row -------------------------------------
  void copies() {
    step();
    sm_tensor S = sh_.S, tr = nullptr, c = nullptr;
    int copied = -1, flag = -1;
    OK(sm_transpose, S, 0, 2, &tr);
    const int64_t flat[1] = {-1}, rows[2] = {kD0 * kD1, kD2};
    OK(sm_reshape_would_copy, tr, flat, 1, &flag);
    REL_CHECK(flag == 1, "reshape of S^T needs no copy?");
    OK(sm_reshape_would_copy, S, rows, 2, &flag);
    REL_CHECK(flag == 0, "reshape of S needs a copy?");
    OK(sm_reshape, S, rows, 2, &c, &copied);
    REL_CHECK(copied == 0, "reshape of S copied");
    expect_view_of_s(
        c, {kD0 * kD1, kD2}, [](const int64_t* i) { return s_flat(i[0] * kD2 + i[1]); }, "reshape");
    auto tr_at = [](const int64_t* i) { return s_at(i[2], i[1], i[0]); };  // S^T[a][b][c]
    step();
    OK(sm_reshape, tr, flat, 1, &c, &copied);
    REL_CHECK(copied == 1, "reshape of S^T did not copy");
    expect<float>(
        c, SM_FLOAT32, {kSN},
        [](const int64_t* i) {
          const int64_t a = i[0] / (kD1 * kD0), b = i[0] / kD0 % kD1, d = i[0] % kD0;
          return s_at(d, b, a);
        },
        "reshape copy");
    release(c);
    step();
    OK(sm_contiguous, tr, SM_CONTIGUOUS, &c, &copied);
    REL_CHECK(copied == 1, "contiguous of S^T did not copy");
    expect<float>(c, SM_FLOAT32, {kD2, kD1, kD0}, tr_at, "contiguous");
    release(c);
    OK(sm_contiguous, S, SM_CONTIGUOUS, &c, &copied);
    REL_CHECK(copied == 0, "contiguous of S copied");
    release(c);
    step();
    OK(sm_clone, tr, SM_PRESERVE, &c);
    int64_t strides[SM_MAX_DIMS];
    OK(sm_strides, c, strides, SM_MAX_DIMS);
    REL_CHECK(strides[0] == 1 && strides[1] == kD2 && strides[2] == kD1 * kD2,
              "clone(SM_PRESERVE) of S^T: strides %lld %lld %lld", (long long)strides[0],
              (long long)strides[1], (long long)strides[2]);
    OK(sm_same_storage, c, S, &flag);
    REL_CHECK(flag == 0, "a clone shares S's storage");
    expect<float>(c, SM_FLOAT32, {kD2, kD1, kD0}, tr_at, "clone");
    release(c);
    release(tr);
    step();
    OK(sm_to, S, rel::cpu(), SM_FLOAT64, &c, &copied);
    REL_CHECK(copied == 1, "to(f64) did not copy");
    expect<double>(
        c, SM_FLOAT64, {kD0, kD1, kD2}, [](const int64_t* i) { return double(s_at(i[0], i[1], i[2])); },
        "to f64");
    release(c);
    OK(sm_to, S, rel::cpu(), SM_FLOAT32, &c, &copied);
    REL_CHECK(copied == 0, "to(f32) of f32 copied");
    release(c);
    step();
    OK(sm_index_select, S, 1, sh_.IDX, &c);
    expect<float>(
        c, SM_FLOAT32, {kD0, 5, kD2},
        [](const int64_t* i) {
          const int64_t j = kIdx[i[1]] < 0 ? kIdx[i[1]] + kD1 : kIdx[i[1]];
          return s_at(i[0], j, i[2]);
        },
        "index_select");
    release(c);

    step();
    // Into private tensors: S itself, then one row of S broadcast.
    const int64_t shape[3] = {kD0, kD1, kD2};
    OK(sm_zeros, shape, 3, SM_FLOAT64, rel::cpu(), &c);
    OK(sm_copy_into, c, S);
    expect<double>(
        c, SM_FLOAT64, {kD0, kD1, kD2}, [](const int64_t* i) { return double(s_at(i[0], i[1], i[2])); },
        "copy_into");
    sm_tensor r1 = nullptr;
    OK(sm_select, S, 0, 1, &r1);
    OK(sm_copy_into, c, r1);
    expect<double>(
        c, SM_FLOAT64, {kD0, kD1, kD2}, [](const int64_t* i) { return double(s_at(1, i[1], i[2])); },
        "copy_into broadcast");
    release(r1);
    release(c);

    write_own_row();
    creation();
  }

  // In-place writes to row k of W, interleaved in one storage with every
  // other thread's row, against this thread's model.
  void write_own_row() {
    step();
    sm_tensor row = nullptr;
    OK(sm_select, sh_.W, 0, k_, &row);
    const double a = static_cast<double>(rng_.range(-9, 9));
    switch (rng_.below(4)) {
      case 0:
        OK(sm_inplace_scalar, row, SM_OP_ADD, a, 0);
        for (double& x : expW_) x += a;
        break;
      case 1:
        OK(sm_inplace_scalar, row, SM_OP_FILL, a, 0);
        for (double& x : expW_) x = a;
        break;
      case 2: {
        std::vector<double> src(kRowW);
        for (double& x : src) x = static_cast<double>(rng_.range(-50, 50));
        sm_tensor s = nullptr;
        OK(sm_from_host, src.data(), &kRowW, 1, SM_FLOAT64, rel::cpu(), &s);
        OK(sm_inplace_tensor, row, SM_OP_ADD, s, 2.0);
        for (size_t i = 0; i < src.size(); ++i) expW_[i] += 2.0 * src[i];
        release(s);
        break;
      }
      default: {
        sm_tensor s = nullptr;
        OK(sm_arange, a, 1, kRowW, SM_INT32, rel::cpu(), &s);
        OK(sm_copy_into, row, s);
        for (size_t i = 0; i < expW_.size(); ++i) expW_[i] = a + static_cast<double>(i);
        release(s);
        break;
      }
    }
    expect<double>(
        row, SM_FLOAT64, {kRowW}, [this](const int64_t* i) { return expW_[static_cast<size_t>(i[0])]; },
        "own row of W");
    release(row);
  }

  void creation() {
    step();
    sm_tensor t = nullptr;
    const int64_t shape[2] = {3, 5}, strides[2] = {1, 3};
    OK(sm_empty, shape, 2, SM_INT32, rel::cpu(), &t);
    OK(sm_inplace_scalar, t, SM_OP_FILL, k_, 0);
    expect<int32_t>(
        t, SM_INT32, {3, 5}, [this](const int64_t*) { return k_; }, "empty + FILL");
    release(t);
    step();
    OK(sm_empty_strided, shape, strides, 2, SM_FLOAT32, rel::cpu(), &t);
    int64_t got[SM_MAX_DIMS], nb = -1;
    OK(sm_strides, t, got, SM_MAX_DIMS);
    OK(sm_storage_nbytes, t, &nb);
    REL_CHECK(got[0] == 1 && got[1] == 3 && nb == 15 * 4, "empty_strided");
    release(t);
    step();
    OK(sm_zeros, shape, 2, SM_INT64, rel::cpu(), &t);
    expect<int64_t>(
        t, SM_INT64, {3, 5}, [](const int64_t*) { return int64_t{0}; }, "zeros");
    release(t);
    step();
    OK(sm_full, shape, 2, k_ + 0.5, SM_FLOAT64, rel::cpu(), &t);
    expect<double>(
        t, SM_FLOAT64, {3, 5}, [this](const int64_t*) { return k_ + 0.5; }, "full");
    release(t);
    step();
    OK(sm_arange, k_, 2, 10, SM_INT64, rel::cpu(), &t);
    expect<int64_t>(
        t, SM_INT64, {10}, [this](const int64_t* i) { return k_ + 2 * i[0]; }, "arange");
    release(t);
    step();
    const int16_t host[4] = {int16_t(k_), -1, 7, int16_t(-k_)};
    const int64_t four = 4;
    OK(sm_from_host, host, &four, 1, SM_INT16, rel::cpu(), &t);
    expect<int16_t>(
        t, SM_INT16, {4}, [&host](const int64_t* i) { return host[i[0]]; }, "from_host");
    release(t);
    step();
    // The same caller memory wrapped by every thread at once.
    OK(sm_from_blob, sh_.blob, &kBlob, nullptr, 1, SM_FLOAT32, rel::cpu(), nullptr, nullptr, &t);
    expect<float>(
        t, SM_FLOAT32, {kBlob}, [](const int64_t* i) { return 0.25f * static_cast<float>(i[0]); },
        "from_blob of shared memory");
    release(t);
    step();
    // Private memory with a deleter: it runs once, at the last view's release.
    std::atomic<int> deletes{0};
    Blob* b = new Blob;
    b->deletes = &deletes;
    for (int64_t i = 0; i < kBlob; ++i) b->data[i] = static_cast<float>(k_ * 100 + i);
    sm_tensor v = nullptr;
    OK(sm_from_blob, b->data, &kBlob, nullptr, 1, SM_FLOAT32, rel::cpu(), blob_deleter, b, &t);
    OK(sm_slice, t, 0, 10, 20, 1, &v);
    release(t);
    REL_CHECK(deletes.load() == 0, "blob deleter ran with a view alive");
    expect<float>(
        v, SM_FLOAT32, {10}, [this](const int64_t* i) { return static_cast<float>(k_ * 100 + 10 + i[0]); },
        "view of a from_blob tensor");
    release(v);
    REL_CHECK(deletes.load() == 1, "blob deleter ran %d times", deletes.load());
  }

  // ---- storages ---------------------------------------------------------------------------
  void storages() {
    step();
    sm_storage st = nullptr;
    OK(sm_tensor_storage, sh_.S, &st);
    OK(sm_storage_retain, st);
    int64_t nb = -1;
    OK(sm_storage_size, st, &nb);
    REL_CHECK(nb == kSN * 4, "S's storage size %lld", (long long)nb);
    void* p = nullptr;
    OK(sm_storage_data_ptr, st, &p);
    REL_CHECK(p == sh_.s_data, "S's storage data pointer");
    sm_device dev{-1, -1};
    OK(sm_storage_device, st, &dev);
    REL_CHECK(dev.type == SM_DEVICE_CPU && dev.index == 0, "S's storage device");
    uint64_t id = 0;
    OK(sm_storage_id, st, &id);
    REL_CHECK(id == sh_.s_storage_id, "S's storage id %llu", (unsigned long long)id);
    int shared = -1;
    OK(sm_storage_is_shared, st, &shared);
    REL_CHECK(shared == 0, "S's storage is not in shared memory");
    step();
    sm_tensor t = nullptr;
    const int64_t shape[2] = {8, 24};
    OK(sm_tensor_from_storage, st, shape, nullptr, 2, 0, SM_FLOAT32, &t);
    expect_view_of_s(
        t, {8, 24}, [](const int64_t* i) { return s_flat(i[0] * 24 + i[1]); }, "tensor_from_storage");
    const int64_t two = 2, three = 3;
    OK(sm_tensor_from_storage, st, &two, &three, 1, 5, SM_FLOAT32, &t);
    expect_view_of_s(
        t, {2}, [](const int64_t* i) { return s_flat(5 + 3 * i[0]); }, "tensor_from_storage strided");
    OK(sm_storage_release, st);
    OK(sm_storage_release, st);
    int64_t tensors = -1, storages = -1, stacks = -1;
    OK(sm_debug_live_handles, &tensors, &storages, &stacks);
    REL_CHECK(tensors >= 4 && storages >= 0 && stacks >= 1, "live handles %lld %lld %lld", (long long)tensors,
              (long long)storages, (long long)stacks);
  }

  // ---- stacks -----------------------------------------------------------------------------
  void own_stack() {
    step();
    sm_stack s = nullptr;
    OK(sm_stack_create, rel::cpu(), 8192, &s);
    int64_t mark = -1, used = -1, cap = -1;
    OK(sm_stack_mark, s, &mark);
    sm_tensor a = nullptr, b = nullptr;
    const int64_t n = rng_.range(1, 200);
    OK(sm_stack_push, s, &n, 1, SM_INT32, &a);
    OK(sm_stack_push, s, &n, 1, SM_FLOAT64, &b);
    OK(sm_inplace_scalar, a, SM_OP_FILL, k_, 0);
    OK(sm_inplace_scalar, b, SM_OP_FILL, -k_, 0);
    OK(sm_stack_used, s, &used, &cap);
    REL_CHECK(cap == 8192 && used >= n * 12 && used <= cap, "stack used %lld of %lld", (long long)used,
              (long long)cap);
    expect<int32_t>(
        a, SM_INT32, {n}, [this](const int64_t*) { return k_; }, "own stack push");
    expect<double>(
        b, SM_FLOAT64, {n}, [this](const int64_t*) { return double(-k_); }, "own stack push");
    step();
    OK(sm_stack_pop_to, s, mark);
    int32_t nd = -1;
    IS(SM_ERR_INVALID_HANDLE, sm_ndim, a, &nd);
    release(a);
    release(b);
    OK(sm_stack_used, s, &used, &cap);
    REL_CHECK(used == mark, "own stack after the pop: %lld used", (long long)used);
    OK(sm_stack_release, s);
  }

  // Every thread pushes onto one stack at once; then one pop (ordered after
  // every use of the popped tensors by the barrier, as the header asks).
  void shared_stack_round() {
    int64_t used = -1, cap = -1;
    OK(sm_stack_mark, sh_.SS, &mine().mark);
    OK(sm_stack_used, sh_.SS, &used, &cap);
    sync();
    REL_CHECK(mine().mark == next().mark, "two marks of the idle shared stack differ");
    sm_tensor ts[2] = {nullptr, nullptr};
    int64_t sizes[2];
    for (int i = 0; i < 2; ++i) {
      sizes[i] = rng_.range(1, 64);
      OK(sm_stack_push, sh_.SS, &sizes[i], 1, SM_FLOAT64, &ts[i]);
      if (ts[i]) OK(sm_inplace_scalar, ts[i], SM_OP_FILL, k_ * 10 + i, 0);
    }
    sync();
    for (int i = 0; i < 2; ++i)
      expect<double>(
          ts[i], SM_FLOAT64, {sizes[i]}, [this, i](const int64_t*) { return double(k_ * 10 + i); },
          "shared stack push");
    sync();
    if (k_ == 0) OK(sm_stack_pop_to, sh_.SS, mine().mark);
    sync();
    for (sm_tensor t : ts) {
      if (!t) continue;
      int64_t n = -1;
      IS(SM_ERR_INVALID_HANDLE, sm_numel, t, &n);
      release(t);
    }
  }

  // A stack in shared memory: its buffer exported and imported in this
  // process, a push rebuilt from its offset and written through the import.
  void own_shared_stack() {
    step();
    sm_stack s = nullptr;
    OK(sm_stack_create_shared, 1 << 14, &s);
    sm_tensor first = nullptr, a = nullptr;  // a: the second push, past the first one's bytes
    const int64_t n = 100;
    OK(sm_stack_push, s, &n, 1, SM_FLOAT32, &first);
    OK(sm_stack_push, s, &n, 1, SM_FLOAT32, &a);
    release(first);
    OK(sm_inplace_scalar, a, SM_OP_FILL, k_, 0);
    sm_storage st = nullptr, imp = nullptr;
    step();
    OK(sm_stack_storage, s, &st);
    sm_share_desc d;
    int fd = -1;
    OK(sm_storage_export, st, &d, &fd);
    OK(sm_storage_import, &d, fd, &imp);
    if (fd >= 0) ::close(fd);
    void* base = nullptr;
    void* at = nullptr;
    OK(sm_storage_data_ptr, st, &base);
    OK(sm_data_ptr, a, &at);
    const int64_t offset = (static_cast<char*>(at) - static_cast<char*>(base)) / 4;
    REL_CHECK(offset > 0 && offset * 4 % SM_STACK_ALIGNMENT == 0, "second push at byte %lld",
              (long long)offset * 4);
    sm_tensor view = nullptr;
    OK(sm_tensor_from_storage, imp, &n, nullptr, 1, offset, SM_FLOAT32, &view);
    expect<float>(
        view, SM_FLOAT32, {n}, [this](const int64_t*) { return float(k_); }, "shared stack import");
    OK(sm_inplace_scalar, view, SM_OP_ADD, 1, 0);
    expect<float>(
        a, SM_FLOAT32, {n}, [this](const int64_t*) { return float(k_ + 1); },
        "a write through the import, read through the push");
    release(view);
    release(a);
    OK(sm_storage_release, imp);
    OK(sm_storage_release, st);
    OK(sm_stack_release, s);
  }

  // ---- shared memory ----------------------------------------------------------------------
  void own_sharing() {
    step();
    sm_tensor t = nullptr, v = nullptr;
    OK(sm_empty_shared, &kShRow, 1, SM_FLOAT32, &t);
    int flag = -1;
    OK(sm_is_shared, t, &flag);
    REL_CHECK(flag == 1, "sm_empty_shared: not shared");
    expect<float>(
        t, SM_FLOAT32, {kShRow}, [](const int64_t*) { return 0.0f; }, "empty_shared is zero-filled");
    step();
    sm_share_desc d;
    int fd = -1;
    OK(sm_tensor_export, t, &d, &fd);
    REL_CHECK(d.kind == SM_SHARE_MEMFD && fd >= 0 && d.nbytes == kShRow * 4, "tensor_export");
    sm_storage imp = nullptr;
    OK(sm_storage_import, &d, fd, &imp);
    if (fd >= 0) ::close(fd);
    OK(sm_tensor_from_storage, imp, &kShRow, nullptr, 1, 0, SM_FLOAT32, &v);
    OK(sm_inplace_scalar, v, SM_OP_FILL, k_ + 3, 0);
    expect<float>(
        t, SM_FLOAT32, {kShRow}, [this](const int64_t*) { return float(k_ + 3); }, "write through an import");
    release(v);
    OK(sm_storage_release, imp);
    release(t);

    step();
    // A private tensor moved into shared memory; a view taken before follows it.
    const int64_t n = 64;
    OK(sm_full, &n, 1, 3 + k_, SM_FLOAT64, rel::cpu(), &t);
    OK(sm_slice, t, 0, 8, 16, 1, &v);
    OK(sm_is_shared, v, &flag);
    REL_CHECK(flag == 0, "a fresh tensor is shared");
    step();
    OK(sm_share_memory, t);
    OK(sm_is_shared, v, &flag);
    REL_CHECK(flag == 1, "share_memory: the view does not follow");
    expect<double>(
        v, SM_FLOAT64, {8}, [this](const int64_t*) { return double(3 + k_); }, "view after the move");
    sm_storage st = nullptr;
    OK(sm_tensor_storage, v, &st);
    OK(sm_storage_is_shared, st, &flag);
    REL_CHECK(flag == 1, "share_memory: the storage is not shared");
    OK(sm_storage_release, st);
    release(v);
    release(t);
  }

  void common_sharing() {
    // One tensor moved by every thread at once: one moves it, the others
    // find it shared. Nobody reads it until every move has returned.
    if (k_ == 0) {
      std::vector<float> host(64);
      for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
      const int64_t n = 64;
      OK(sm_from_host, host.data(), &n, 1, SM_FLOAT32, rel::cpu(), &sh_.MV);
    }
    sync();
    OK(sm_share_memory, sh_.MV);
    OK(sm_share_memory, sh_.MV);
    sync();
    int flag = -1;
    OK(sm_is_shared, sh_.MV, &flag);
    REL_CHECK(flag == 1, "MV is not shared after every thread moved it");
    expect<float>(
        sh_.MV, SM_FLOAT32, {64}, [](const int64_t* i) { return float(i[0]); }, "MV after the moves");

    // One storage exported by every thread at once; each imports another's.
    sm_storage st = nullptr;
    OK(sm_tensor_storage, sh_.SH, &st);
    Slot& m = mine();
    if (k_ % 2)
      OK(sm_storage_export, st, &m.desc, &m.fd);
    else
      OK(sm_tensor_export, sh_.SH, &m.desc, &m.fd);
    OK(sm_storage_release, st);
    sync();
    if (k_ == 0) OK(sm_tensor_release, sh_.MV);
    Slot& o = next();
    sm_storage imp = nullptr;
    OK(sm_storage_import, &o.desc, o.fd, &imp);
    if (o.fd >= 0) ::close(o.fd);
    o.fd = -1;
    sm_tensor through = nullptr, row = nullptr;
    OK(sm_tensor_from_storage, imp, &kShRow, nullptr, 1, k_ * kShRow, SM_FLOAT32, &through);
    const float val = static_cast<float>(k_ * 10 + round_);
    OK(sm_inplace_scalar, through, SM_OP_FILL, val, 0);
    OK(sm_select, sh_.SH, 0, k_, &row);
    expect<float>(
        row, SM_FLOAT32, {kShRow}, [val](const int64_t*) { return val; }, "SH row written through an import");
    release(row);
    release(through);
    OK(sm_storage_release, imp);
  }

  // ---- DLPack -----------------------------------------------------------------------------
  void own_dlpack() {
    step();
    void* m = nullptr;
    int copied = -1;
    OK(sm_to_dlpack_ex, sh_.S, SM_DLPACK_VERSIONED | SM_DLPACK_COPY, nullptr, &m, &copied);
    if (m) {
      auto* mv = static_cast<sm_DLManagedTensorVersioned*>(m);
      REL_CHECK(
          copied == 1 && (mv->flags & SM_DLPACK_FLAG_BITMASK_IS_COPIED) && mv->dl_tensor.data != sh_.s_data,
          "to_dlpack_ex COPY");
      mv->deleter(mv);
    }
    step();
    sm_tensor fl = nullptr;
    const int32_t d0[1] = {0};
    OK(sm_flip, sh_.S, d0, 1, &fl);
    OK(sm_to_dlpack_ex, fl, SM_DLPACK_NORMALIZE, nullptr, &m, &copied);
    REL_CHECK(copied == 1, "NORMALIZE of negative strides did not copy");
    if (m) static_cast<sm_DLManagedTensor*>(m)->deleter(static_cast<sm_DLManagedTensor*>(m));
    release(fl);
    step();
    const sm_device cpu = rel::cpu();
    OK(sm_to_dlpack_ex, sh_.S, SM_DLPACK_NO_COPY | SM_DLPACK_VERSIONED, &cpu, &m, &copied);
    REL_CHECK(copied == 0, "NO_COPY export copied");
    sm_tensor back = nullptr;
    OK(sm_from_dlpack, m, 1, &back);  // our own export: a view of S's storage
    expect_view_of_s(
        back, {kD0, kD1, kD2}, [](const int64_t* i) { return s_at(i[0], i[1], i[2]); },
        "own DLPack export, imported");
  }

  // Exports of S and foreign producers' memory made on one thread, consumed
  // and released on another.
  void dlpack_handoff() {
    Slot& m = mine();
    m.versioned = (k_ + round_) % 2;
    OK(sm_to_dlpack, sh_.S, m.versioned, &m.managed);
    Producer* p = new Producer;
    p->deletes = &m.producer_deletes;
    m.producer_deletes.store(0);
    for (int i = 0; i < 32; ++i) p->data[i] = static_cast<float>(k_ * 1000 + i);
    std::memset(&p->m, 0, sizeof p->m);
    p->m.version = {SM_DLPACK_MAJOR_VERSION, SM_DLPACK_MINOR_VERSION};
    p->m.manager_ctx = p;
    p->m.deleter = producer_deleter;
    p->m.flags = SM_DLPACK_FLAG_BITMASK_READ_ONLY;
    p->m.dl_tensor.data = p->data;
    p->m.dl_tensor.device = {sm_kDLCPU, 0};
    p->m.dl_tensor.ndim = 1;
    p->m.dl_tensor.dtype = {sm_kDLFloat, 32, 1};
    p->m.dl_tensor.shape = p->shape;
    OK(sm_from_dlpack, &p->m, 1, &m.producer);
    int ro = -1;
    OK(sm_is_read_only, m.producer, &ro);
    REL_CHECK(ro == 1, "a read-only producer's tensor is writable");
    IS(SM_ERR_READ_ONLY, sm_inplace_scalar, m.producer, SM_OP_ZERO, 0, 0);
    Blob* b = new Blob;
    b->deletes = &m.blob_deletes;
    m.blob_deletes.store(0);
    for (int64_t i = 0; i < kBlob; ++i) b->data[i] = static_cast<float>(k_ - i);
    OK(sm_from_blob, b->data, &kBlob, nullptr, 1, SM_FLOAT32, rel::cpu(), blob_deleter, b, &m.blob);
    sync();
    Slot& o = next();
    const int from = (k_ + 1) % sh_.threads;
    sm_tensor t = nullptr;
    OK(sm_from_dlpack, o.managed, o.versioned, &t);
    o.managed = nullptr;
    expect_view_of_s(
        t, {kD0, kD1, kD2}, [](const int64_t* i) { return s_at(i[0], i[1], i[2]); },
        "another thread's DLPack export");
    expect<float>(
        o.producer, SM_FLOAT32, {32}, [from](const int64_t* i) { return float(from * 1000 + i[0]); },
        "another thread's producer import");
    expect<float>(
        o.blob, SM_FLOAT32, {kBlob}, [from](const int64_t* i) { return float(from - i[0]); },
        "another thread's from_blob");
    release(o.producer);
    release(o.blob);
    o.producer = o.blob = nullptr;
    sync();
    REL_CHECK(m.producer_deletes.load() == 1 && m.blob_deletes.load() == 1,
              "thread %d: deleters released by another thread ran %d and %d times", k_,
              m.producer_deletes.load(), m.blob_deletes.load());
  }

  // ---- process-wide settings, devices, memory ------------------------------------------------
  void runtime() {
    step();
    // The CPU thread count changes while copies run on the pool.
    static const int32_t kCounts[4] = {1, 2, 4, 0};
    OK(sm_set_num_threads, kCounts[(k_ + round_) % 4]);
    int32_t n = -1;
    OK(sm_get_num_threads, &n);
    REL_CHECK(n == 1 || n == 2 || n == 4 || n == sh_.cores, "sm_get_num_threads %d: nobody set it", n);
    step();
    sm_tensor big = nullptr, c = nullptr;
    const float v = static_cast<float>(k_ + 1);
    OK(sm_full, &kBig, 1, v, SM_FLOAT32, rel::cpu(), &big);
    OK(sm_clone, big, SM_CONTIGUOUS, &c);
    OK(sm_inplace_tensor, c, SM_OP_ADD, big, 1.0);
    expect<float>(
        c, SM_FLOAT32, {kBig}, [v](const int64_t*) { return 2 * v; }, "large copy on the pool");
    release(c);
    release(big);

    step();
    // Streams: the CPU has none; CUDA where a device is usable, else its refusal.
    void* stream = reinterpret_cast<void*>(0x1);
    OK(sm_set_stream, rel::cpu(), nullptr);
    IS(SM_ERR_INVALID_ARGUMENT, sm_set_stream, rel::cpu(), reinterpret_cast<void*>(0x10));
    OK(sm_get_stream, rel::cpu(), &stream);
    REL_CHECK(stream == nullptr, "the CPU has a stream");
    OK(sm_synchronize, rel::cpu());
    OK(sm_record_stream, sh_.S, nullptr);
    if (sh_.plant_fd_leak && k_ == 0) (void)::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const sm_device cuda{SM_DEVICE_CUDA, 0};
    const sm_status want = cuda_devices_ > 0 ? SM_OK : SM_ERR_DEVICE;
    IS(want, sm_set_stream, cuda, nullptr);
    stream = reinterpret_cast<void*>(0x1);
    IS(want, sm_get_stream, cuda, &stream);
    REL_CHECK(want != SM_OK || stream == nullptr, "this thread's CUDA stream is not the one it set");
    IS(want, sm_synchronize, cuda);
    step();
    // A CUDA tensor and its way back, or the refusal where no GPU is usable.
    sm_tensor g = nullptr, h = nullptr;
    IS(want, sm_to, sh_.S, cuda, SM_FLOAT32, &g, nullptr);
    if (want == SM_OK) {
      OK(sm_to, g, rel::cpu(), SM_FLOAT64, &h, nullptr);
      expect<double>(
          h, SM_FLOAT64, {kD0, kD1, kD2}, [](const int64_t* i) { return double(s_at(i[0], i[1], i[2])); },
          "S through the GPU");
      release(h);
      release(g);
    } else {
      REL_CHECK(g == nullptr, "a refused sm_to wrote its output");
    }

    step();
    // Statistics, caches, history, while the other threads allocate.
    sm_memory_stats_t s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    OK(sm_memory_stats, rel::cpu(), &s);
    REL_CHECK(s.allocated_bytes > 0 && s.peak_allocated_bytes >= s.allocated_bytes &&
                  s.reserved_bytes >= s.allocated_bytes,
              "stats: allocated %lld peak %lld reserved %lld", (long long)s.allocated_bytes,
              (long long)s.peak_allocated_bytes, (long long)s.reserved_bytes);
    step();
    OK(sm_reset_peak_stats, rel::cpu());
    OK(sm_empty_cache, rel::cpu());
    step();
    static const int64_t kRings[3] = {0, 16, 200};
    OK(sm_memory_record_history, rel::cpu(), kRings[(k_ + round_) % 3]);
    step();
    std::string text;
    if (read_text(true, &text)) {
      try {
        const smt::json::Value j = smt::json::parse(text);
        REL_CHECK(j.has("segments") && j.has("totals"), "snapshot without segments or totals");
      } catch (const std::exception& e) {
        REL_CHECK(false, "concurrent snapshot: %s", e.what());
      }
    }
    if (read_text(false, &text)) REL_CHECK(!text.empty(), "empty summary");

    step();
    // Tags are per thread.
    const std::string tag = "c" + std::to_string(k_);
    OK(sm_push_tag, tag.c_str());
    OK(sm_push_tag, "inner");
    OK(sm_empty, &kRowW, 1, SM_FLOAT32, rel::cpu(), &c);
    release(c);
    REL_OK(CALL0(sm_pop_tag));
    REL_OK(CALL0(sm_pop_tag));
    REL_STATUS(CALL0(sm_pop_tag), SM_ERR_INVALID_ARGUMENT);
  }

  // The "needed" loop of the header: memory changes between the calls.
  bool read_text(bool snapshot, std::string* out) {
    std::vector<char> buf;
    size_t need = 0;
    do {
      buf.resize(need);
      char* p = buf.empty() ? nullptr : buf.data();
      const sm_status st = snapshot ? CALL(sm_memory_snapshot, rel::cpu(), p, buf.size(), &need)
                                    : CALL(sm_memory_summary, rel::cpu(), p, buf.size(), &need);
      REL_CHECK(st == SM_OK, "%s -> %d", snapshot ? "sm_memory_snapshot" : "sm_memory_summary", st);
      if (st != SM_OK) return false;
    } while (need > buf.size());
    out->assign(buf.data(), need - 1);
    return true;
  }

  // ---- fault injection and the out-of-memory observer ----------------------------------------
  // One countdown for the process: the allocation that fails may be any
  // thread's, so this phase allocates nothing else and accepts either
  // status, but a failure must be an injected one, leave no output, and be
  // told to the observer once, on the failing thread.
  void faults() {
    OomTally* mine_tally = &sh_.tallies[static_cast<size_t>(k_)];
    OK(sm_set_oom_observer, observe, mine_tally);
    sync();
    for (int it = 0; it < 4; ++it) {
      OK(sm_debug_fail_alloc, 1 + (it % 2));
      sh_.arms++;
      for (int a = 0; a < 2; ++a) {
        const int64_t before = t_observed, n = 64 + k_;
        sm_tensor t = reinterpret_cast<sm_tensor>(0x5);
        const sm_status st = CALL(sm_empty, &n, 1, SM_FLOAT32, rel::cpu(), &t);
        if (st == SM_OK) {
          REL_CHECK(t_observed == before, "the observer was told of a success");
          release(t);
          continue;
        }
        REL_CHECK(st == SM_ERR_OUT_OF_MEMORY, "sm_empty under fault injection -> %d", st);
        REL_CHECK(t == reinterpret_cast<sm_tensor>(0x5), "a failing sm_empty wrote its output");
        REL_CHECK(std::strstr(sm_last_error(), "injected") != nullptr, "not an injected fault: %s",
                  sm_last_error());
        REL_CHECK(t_observed == before + 1 && t_observed_request == n * 4,
                  "thread %d: the observer saw %lld failures (request %lld) for 1 of %lld bytes", k_,
                  (long long)(t_observed - before), (long long)t_observed_request, (long long)(n * 4));
        sh_.ooms++;
      }
      if (it == 1) OK(sm_set_oom_observer, observe, mine_tally);  // replaced while others fail
    }
    // Every thread's last word is 0, so the countdown is off after the barrier.
    OK(sm_debug_fail_alloc, 0);
    sync();
    if (k_ == 0) {
      int64_t told = 0;
      for (const OomTally& t : sh_.tallies) told += t.calls.load();
      REL_CHECK(sh_.ooms.load() >= 1 && sh_.ooms.load() <= sh_.arms.load(),
                "%lld injected failures for %lld arms", (long long)sh_.ooms.load(),
                (long long)sh_.arms.load());
      REL_CHECK(told == sh_.ooms.load(), "the observers were told %lld times of %lld failures",
                (long long)told, (long long)sh_.ooms.load());
    }
    OK(sm_set_oom_observer, nullptr, nullptr);
    sync();
    if (k_ == 0) {  // removed: a failure is no longer told
      const int64_t before = t_observed, n = 8;
      sm_tensor t = nullptr;
      REL_OK(sm_debug_fail_alloc(1));
      REL_STATUS(sm_empty(&n, 1, SM_FLOAT32, rel::cpu(), &t), SM_ERR_OUT_OF_MEMORY);
      REL_OK(sm_debug_fail_alloc(0));
      REL_CHECK(t_observed == before, "a removed observer was told");
    }
    // A replaced observer's calls are over when the replacement returns:
    // every thread frees its user_data right after removing the observer,
    // while the other threads' failures may be calling it (TSan and ASan
    // report a free racing with the observer's access to it).
    sync();
    auto* box = new OomTally;
    OK(sm_set_oom_observer, count_call, box);
    for (int i = 0; i < 4; ++i) {
      const int64_t huge = int64_t(1) << 43;  // over any machine's memory: fails on every thread
      sm_tensor t = nullptr;
      REL_STATUS(sm_empty(&huge, 1, SM_FLOAT32, rel::cpu(), &t), SM_ERR_OUT_OF_MEMORY);
    }
    OK(sm_set_oom_observer, nullptr, nullptr);
    delete box;
    sync();
  }

  // ---- aging handle slots while other threads create handles -----------------------------------
  void aging() {
    for (int it = 0; it < 3; ++it) {
      step();
      sm_stack s = nullptr, live = nullptr;
      OK(sm_stack_create, rel::cpu(), 256, &s);
      OK(sm_stack_create, rel::cpu(), 256, &live);
      OK(sm_stack_release, s);
      age_released(s);
      IS(SM_ERR_INVALID_ARGUMENT, sm_debug_age_handle_slot, live, 5);  // a live slot
      OK(sm_stack_release, live);
      step();
      sm_tensor t = nullptr;
      OK(sm_zeros, &kRowW, 1, SM_INT8, rel::cpu(), &t);
      release(t);
      age_released(t);
    }
    IS(SM_ERR_INVALID_HANDLE, sm_debug_age_handle_slot, rel::make_handle(9, 1, 1), 0);
  }

  // A released handle's slot, aged to the generation it has now (so no slot
  // is used up): SM_OK, or SM_ERR_INVALID_ARGUMENT when another thread took
  // the slot first; moving it back is refused either way.
  void age_released(const void* h) {
    const uint32_t gen = rel::handle_bits(h).generation;
    const sm_status st = CALL(sm_debug_age_handle_slot, h, rel::kHandleGenLimit - (gen + 1));
    REL_CHECK(st == SM_OK || st == SM_ERR_INVALID_ARGUMENT, "age to the current generation -> %d", st);
    if (st == SM_OK) sh_.aged_ok++;
    IS(SM_ERR_INVALID_ARGUMENT, sm_debug_age_handle_slot, h, rel::kHandleGenLimit - gen);
  }

  // ---- everything at once --------------------------------------------------------------------
  void mixed() {
    lockstep_ = false;
    for (int64_t i = 0; i < sh_.mixed; ++i) {
      switch (rng_.below(13)) {
        case 0:
          meta();
          break;
        case 1:
          views();
          break;
        case 2:
          copies();
          break;
        case 3:
          storages();
          break;
        case 4:
          own_stack();
          break;
        case 5:
          own_shared_stack();
          break;
        case 6:
          own_sharing();
          break;
        case 7:
          own_dlpack();
          break;
        case 8:
          runtime();
          break;
        case 9:
          aging();
          break;
        case 10:
          creation();
          break;
        case 11:
          write_own_row();
          break;
        default:
          last_error_is_mine();
          break;
      }
    }
    lockstep_ = true;
  }

  Shared& sh_;
  int k_;
  int round_ = 0;
  int32_t cuda_devices_ = -1;
  bool lockstep_ = true;
  rel::Rng rng_;
  std::vector<double> expW_;
  Recorder rec_;
};

}  // namespace

#ifndef SM_REL_PUBLIC_HEADER
#define SM_REL_PUBLIC_HEADER "include/stridemem.h"
#endif

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive a sanitizer abort
  const int T = static_cast<int>(rel::arg_int(argc, argv, "--threads", 8));
  const int64_t rounds = rel::arg_int(argc, argv, "--rounds", 2);
  const int64_t mixed = rel::arg_int(argc, argv, "--mixed", 40);
  const char* header = rel::arg_str(argc, argv, "--header", SM_REL_PUBLIC_HEADER);
  if (T < 2 || T > 64 || rounds < 1 || rounds > 1000 || mixed < 0) {
    std::fprintf(stderr,
                 "usage: %s [--threads 2..64] [--rounds N>0] [--mixed N>=0] [--seed S] [--header PATH] "
                 "[--plant-fd-leak 0|1]\n",
                 argv[0]);
    return 2;
  }
  const std::set<std::string> declared = sm_test::header_functions(header);
  if (declared.size() < 80) {
    std::fprintf(stderr, "FAIL: %zu functions read from %s: not the public header\n", declared.size(),
                 header);
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Shared sh(T);
  g_shared = &sh;
  sh.rounds = static_cast<int>(rounds);
  sh.mixed = mixed;
  sh.seed = static_cast<uint64_t>(rel::arg_int(argc, argv, "--seed", 1));
  sh.cores = affinity_cores();
  sh.plant_fd_leak = rel::arg_int(argc, argv, "--plant-fd-leak", 0) != 0;
  for (int64_t i = 0; i < kBlob; ++i) sh.blob[i] = 0.25f * static_cast<float>(i);
  int32_t threads0 = -1;
  REL_OK(sm_get_num_threads(&threads0));
  use_every_cuda_device();
  if (rel::failures() != 0) return 1;
  const rel::State start = rel::state();
  const std::map<int, std::string> fds0 = open_fds();

  sm_tensor flat = nullptr;
  REL_OK(sm_arange(0, 1, kSN, SM_FLOAT32, rel::cpu(), &flat));
  const int64_t sshape[3] = {kD0, kD1, kD2}, wshape[2] = {T, kRowW}, shshape[2] = {T, kShRow}, five = 5;
  REL_OK(sm_view(flat, sshape, 3, &sh.S));
  REL_OK(sm_tensor_release(flat));
  REL_OK(sm_zeros(wshape, 2, SM_FLOAT64, rel::cpu(), &sh.W));
  REL_OK(sm_from_host(kIdx, &five, 1, SM_INT64, rel::cpu(), &sh.IDX));
  REL_OK(sm_empty_shared(shshape, 2, SM_FLOAT32, &sh.SH));
  REL_OK(sm_stack_create(rel::cpu(), 1 << 16, &sh.SS));
  REL_OK(sm_data_ptr(sh.S, &sh.s_data));
  REL_OK(sm_version_counter(sh.S, &sh.s_version));
  sm_storage sst = nullptr;
  REL_OK(sm_tensor_storage(sh.S, &sst));
  REL_OK(sm_storage_id(sst, &sh.s_storage_id));
  REL_OK(sm_storage_release(sst));
  if (rel::failures() != 0) return 1;

  const std::vector<Worker> workers = rel::run_workers<Worker>(sh, T);

  for (const Worker& wk : workers)
    REL_CHECK(wk.cuda_devices() == workers[0].cuda_devices(), "threads disagree on sm_cuda_device_count");
  // The rows of W, exactly as each thread's model says.
  std::vector<double> w(static_cast<size_t>(T * kRowW));
  REL_OK(sm_copy_to_host(sh.W, w.data(), w.size() * sizeof(double)));
  int64_t bad = 0;
  for (int k = 0; k < T; ++k)
    for (int64_t i = 0; i < kRowW; ++i)
      bad += w[static_cast<size_t>(k * kRowW + i)] !=
             workers[static_cast<size_t>(k)].expW()[static_cast<size_t>(i)];
  REL_CHECK(bad == 0, "%lld elements of W differ from the threads' models", (long long)bad);
  int64_t version = -1;
  REL_OK(sm_version_counter(sh.S, &version));
  REL_CHECK(version == sh.s_version, "S was written (version %lld, %lld at the start)", (long long)version,
            (long long)sh.s_version);
  REL_CHECK(sh.aged_ok.load() >= 1, "no slot was ever aged (every attempt found it taken)");

  // Back to the start: settings, handles, memory, file descriptors.
  REL_OK(sm_set_num_threads(threads0));
  REL_OK(sm_memory_record_history(rel::cpu(), 0));
  for (sm_tensor t : {sh.S, sh.W, sh.IDX, sh.SH}) REL_OK(sm_tensor_release(t));
  REL_OK(sm_stack_release(sh.SS));
  for (const Slot& s : sh.slots)
    REL_CHECK(s.fd == -1 && !s.managed && !s.producer && !s.blob, "a hand-over slot was not consumed");
  const rel::State end = rel::state();
  REL_CHECK(end == start, "state after the run %s differs from the start %s", end.str().c_str(),
            start.str().c_str());
  const std::map<int, std::string> fds1 = open_fds();
  std::string opened;
  for (const auto& f : fds1)
    if (!fds0.count(f.first) || fds0.at(f.first) != f.second)
      opened += " " + std::to_string(f.first) + " -> " + f.second + ";";
  REL_CHECK(fds1.size() == fds0.size() && opened.empty(),
            "%zu file descriptors open, %zu at the start (after every CUDA device was used once); "
            "open now and not then:%s",
            fds1.size(), fds0.size(), opened.empty() ? " none" : opened.c_str());

  // Coverage: which functions two threads called within one phase.
  std::map<std::string, std::map<int, std::set<int>>> by_fn;  // name -> phase -> threads
  int64_t calls = 0;
  for (int k = 0; k < T; ++k) {
    const Recorder& r = workers[static_cast<size_t>(k)].recorder();
    calls += r.calls;
    for (const auto& h : r.hits) by_fn[h.second][h.first].insert(k);
  }
  int covered = 0;
  for (const std::string& fn : declared) {
    bool concurrent = false;
    for (const auto& phase : by_fn[fn]) concurrent = concurrent || phase.second.size() >= 2;
    if (concurrent) {
      ++covered;
    } else {
      ++rel::failures();
      std::fprintf(stderr,
                   "FAIL coverage: %s is declared in stridemem.h, but no two threads of this test called it "
                   "between the same two barriers (%s): call it from every thread in a phase of "
                   "tests/reliability/concurrent_api.cpp\n",
                   fn.c_str(), by_fn[fn].empty() ? "never called" : "called by one thread at a time");
    }
  }
  for (const auto& f : by_fn)
    if (!declared.count(f.first) && !f.second.empty())
      std::fprintf(stderr, "note: %s was called but is not in %s\n", f.first.c_str(), header);

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "concurrency: %d threads x %lld rounds (+%lld mixed ops each, seed %llu): %lld API calls, %lld "
      "checks, %lld failures, %.2f s; coverage: %d of %zu stridemem.h functions called by >= 2 "
      "threads between the same two barriers; %lld injected faults, %lld slots aged\n",
      T, (long long)rounds, (long long)mixed, (unsigned long long)sh.seed, (long long)calls,
      (long long)rel::checks().load(), (long long)rel::failures().load(), secs, covered, declared.size(),
      (long long)sh.ooms.load(), (long long)sh.aged_ok.load());
  return rel::failures() == 0 ? 0 : 1;
}
