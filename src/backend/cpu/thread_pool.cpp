#include "backend/cpu/thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace sm {

namespace {

constexpr int kMaxThreads = 256;

int clamp_threads(long n) {
  if (n < 0) return 0;
  return n > kMaxThreads ? kMaxThreads : static_cast<int>(n);
}

int read_env_threads() {
  const char* s = std::getenv("STRIDEMEM_NUM_THREADS");
  if (!s || !*s) return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*end != '\0') return 0;
  return clamp_threads(v);
}

std::atomic<int>& setting() {
  static std::atomic<int> value{read_env_threads()};
  return value;
}

// Cores this process may run on (its affinity mask, as taskset or a
// container's cpuset sets it), else the machine's.
int core_count() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  const unsigned h = std::thread::hardware_concurrency();
  return h ? static_cast<int>(h) : 1;
}

// Set in a forked child: the parent's workers do not exist there.
std::atomic<bool> g_forked{false};
// Set once the pool is destroyed (at process exit): late callers run serially.
std::atomic<bool> g_pool_dead{false};
thread_local bool t_in_worker = false;

class Pool {
 public:
  ~Pool() {
    std::lock_guard<std::mutex> run(run_mu_);
    resize_locked(0);
  }

  // Runs the job with `threads` threads in all; false if the pool is busy.
  bool try_run(int threads, int64_t n, int64_t chunk, RangeFn fn, void* ctx) {
    std::unique_lock<std::mutex> run(run_mu_, std::try_to_lock);
    if (!run.owns_lock()) return false;
    resize_locked(threads - 1);
    int helpers;
    {
      std::lock_guard<std::mutex> lk(mu_);
      fn_ = fn;
      ctx_ = ctx;
      n_ = n;
      chunk_ = chunk;
      next_.store(0, std::memory_order_relaxed);
      helpers = static_cast<int>(workers_.size());
      pending_ = helpers;
      ++generation_;
    }
    if (helpers > 0) wake_cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return pending_ == 0; });
    return true;
  }

 private:
  // Takes chunks until none is left.
  void work() {
    for (;;) {
      const int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (begin >= n_) return;
      const int64_t end = n_ - begin < chunk_ ? n_ : begin + chunk_;
      fn_(ctx_, begin, end);
    }
  }

  void worker_main(uint64_t seen) {
    t_in_worker = true;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      wake_cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      lk.unlock();
      work();
      lk.lock();
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  // Caller holds run_mu_, so no job is in flight.
  void resize_locked(int want) {
    if (want == static_cast<int>(workers_.size())) return;
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    wake_cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = false;
    for (int i = 0; i < want; ++i) {
      try {
        workers_.emplace_back(&Pool::worker_main, this, generation_);
      } catch (...) {
        break;  // fewer threads than asked: still correct
      }
    }
  }

  std::mutex run_mu_;  // owned by the caller running a job (or resizing)
  std::mutex mu_;      // guards everything below except next_
  std::condition_variable wake_cv_, done_cv_;
  std::vector<std::thread> workers_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  int pending_ = 0;
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  std::atomic<int64_t> next_{0};
};

void on_fork_child() { g_forked.store(true); }

// Owns the pool: joins the workers when the process exits (static
// destruction), except in a forked child (no workers there to join). The
// library is linked -z nodelete, so dlclose never unloads it under them.
struct PoolOwner {
  Pool* pool = nullptr;
  std::once_flag once;
  ~PoolOwner() {
    g_pool_dead.store(true);
    if (pool && !g_forked.load()) delete pool;
  }
};
PoolOwner g_owner;

Pool* get_pool() {
  std::call_once(g_owner.once, [] {
    pthread_atfork(nullptr, nullptr, on_fork_child);
    g_owner.pool = new Pool();
  });
  return g_owner.pool;
}

}  // namespace

void set_cpu_threads(int n) { setting().store(clamp_threads(n)); }

int get_cpu_threads() {
  const int n = setting().load();
  if (n > 0) return n;
  static const int cores = core_count();
  return cores < kMaxThreads ? cores : kMaxThreads;
}

void parallel_for(int64_t n, int64_t grain, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int threads = get_cpu_threads();
  const int64_t max_useful = (n + grain - 1) / grain;
  if (max_useful < threads) threads = static_cast<int>(max_useful);
  if (threads <= 1 || t_in_worker || g_forked.load(std::memory_order_relaxed) ||
      g_pool_dead.load(std::memory_order_relaxed)) {
    fn(ctx, 0, n);
    return;
  }
  // Many chunks per thread: when another process takes a core from one of
  // our threads, the others pick up its share instead of waiting for it.
  int64_t chunk = (n + 16 * threads - 1) / (16 * threads);
  if (chunk < grain) chunk = grain;
  if (!get_pool()->try_run(threads, n, chunk, fn, ctx)) fn(ctx, 0, n);
}

}  // namespace sm
