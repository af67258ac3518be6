// Thread safety: concurrent views of one storage, concurrent retain/release,
// concurrent in-place writes to disjoint views, a thread-local last error,
// from_blob's deleter under concurrent releases.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "api_test_util.hpp"
#include "barrier.hpp"

using namespace smt;

namespace {

constexpr int kThreads = 8;

using sm_test::Barrier;

}  // namespace

TEST(Threads, ConcurrentViewsOfOneStorage) {
  const Live l0 = live();
  const sm_memory_stats_t s0 = stats();
  Tensor base = iota<float>({64, 64});
  std::atomic<int> failures{0};
  std::vector<std::thread> ths;
  for (int k = 0; k < kThreads; ++k) {
    ths.emplace_back([&, k] {
      for (int it = 0; it < 500; ++it) {
        const int64_t row = (k * 7 + it) % 64;
        sm_tensor tr = nullptr, r = nullptr, e = nullptr, f = nullptr;
        if (sm_transpose(base, 0, 1, &tr) != SM_OK) { ++failures; continue; }
        if (sm_select(tr, 1, row, &r) != SM_OK) { ++failures; }         // row `row` of base
        if (r && sm_select(r, 0, 3, &e) != SM_OK) { ++failures; }       // base[row][3]
        if (r && sm_flip(r, std::vector<int32_t>{0}.data(), 1, &f) != SM_OK) { ++failures; }
        float v = -1;
        if (e && sm_copy_to_host(e, &v, sizeof v) != SM_OK) ++failures;
        if (v != static_cast<float>(row * 64 + 3)) ++failures;
        float w = -1;
        sm_tensor f0 = nullptr;
        if (f && sm_select(f, 0, 0, &f0) == SM_OK) {
          if (sm_copy_to_host(f0, &w, sizeof w) != SM_OK) ++failures;
          if (w != static_cast<float>(row * 64 + 63)) ++failures;
        } else {
          ++failures;
        }
        int same = 0;
        if (sm_same_storage(base, f0, &same) != SM_OK || same != 1) ++failures;
        for (sm_tensor h : {f0, f, e, r, tr})
          if (h && sm_tensor_release(h) != SM_OK) ++failures;
      }
    });
  }
  for (auto& t : ths) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(stats().active_views, s0.active_views + 1);
  base.reset();
  EXPECT_EQ(live(), l0);
}

TEST(Threads, ConcurrentRetainReleaseOfOneHandle) {
  Tensor t = iota({16});
  const Live l0 = live();
  std::atomic<int> failures{0};
  std::vector<std::thread> ths;
  for (int k = 0; k < kThreads; ++k) {
    ths.emplace_back([&] {
      for (int it = 0; it < 5000; ++it) {
        if (sm_tensor_retain(t) != SM_OK) ++failures;
        int64_t n = 0;
        if (sm_numel(t, &n) != SM_OK || n != 16) ++failures;
        if (sm_tensor_release(t) != SM_OK) ++failures;
      }
    });
  }
  for (auto& th : ths) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(live(), l0);
  EXPECT_EQ(numel_of(t), 16) << "exactly one owner left";
}

TEST(Threads, ConcurrentReleasesRunTheBlobDeleterOnce) {
  for (int round = 0; round < 20; ++round) {
    std::vector<float> mem(256, 1.0f);
    std::atomic<int> calls{0};
    const int64_t shape[1] = {256};
    sm_tensor base = nullptr;
    SM_ASSERT_OK(sm_from_blob(
        mem.data(), shape, nullptr, 1, SM_FLOAT32, cpu(),
        [](void*, void* ctx) { static_cast<std::atomic<int>*>(ctx)->fetch_add(1); }, &calls, &base));
    std::vector<sm_tensor> views(kThreads, nullptr);
    for (int k = 0; k < kThreads; ++k)
      SM_ASSERT_OK(sm_slice(base, 0, k * 32, (k + 1) * 32, 1, &views[k]));
    Barrier bar(kThreads + 1);
    std::vector<std::thread> ths;
    for (int k = 0; k < kThreads; ++k) {
      ths.emplace_back([&, k] {
        bar.wait();
        sm_inplace_scalar(views[k], SM_OP_ADD, 1, 0);
        sm_tensor_release(views[k]);
      });
    }
    bar.wait();
    sm_tensor_release(base);
    for (auto& th : ths) th.join();
    EXPECT_EQ(calls.load(), 1) << "round " << round;
    EXPECT_EQ(mem[0], 2.0f);
    EXPECT_EQ(mem[255], 2.0f);
  }
}

TEST(Threads, ConcurrentInplaceWritesToDisjointRows) {
  Tensor base;
  const int64_t shape[2] = {kThreads, 100};
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_INT64, cpu(), base.out()));
  const int64_t v0 = version_of(base);
  std::atomic<int> failures{0};
  std::vector<std::thread> ths;
  for (int k = 0; k < kThreads; ++k) {
    ths.emplace_back([&, k] {
      sm_tensor row = nullptr;
      if (sm_select(base, 0, k, &row) != SM_OK) {
        ++failures;
        return;
      }
      for (int it = 0; it < 200; ++it)
        if (sm_inplace_scalar(row, SM_OP_ADD, k + 1, 0) != SM_OK) ++failures;
      sm_tensor_release(row);
    });
  }
  for (auto& th : ths) th.join();
  EXPECT_EQ(failures.load(), 0);
  const std::vector<int64_t> v = read<int64_t>(base);
  ASSERT_EQ(v.size(), static_cast<size_t>(kThreads * 100));
  for (int k = 0; k < kThreads; ++k)
    for (int j = 0; j < 100; ++j) ASSERT_EQ(v[k * 100 + j], 200 * (k + 1)) << k << "," << j;
  EXPECT_EQ(version_of(base), v0 + kThreads * 200) << "the version counter is atomic";
}

TEST(Threads, ConcurrentAllocationsBalance) {
  SM_ASSERT_OK(sm_empty_cache(cpu()));
  const sm_memory_stats_t s0 = stats();
  std::atomic<int> failures{0};
  std::vector<std::thread> ths;
  for (int k = 0; k < kThreads; ++k) {
    ths.emplace_back([&, k] {
      for (int it = 0; it < 300; ++it) {
        const int64_t n = 1 + ((k * 131 + it * 17) % 5000);
        sm_tensor a = nullptr, b = nullptr;
        if (sm_full(&n, 1, k, SM_FLOAT32, cpu(), &a) != SM_OK) {
          ++failures;
          continue;
        }
        if (sm_clone(a, SM_CONTIGUOUS, &b) != SM_OK) ++failures;
        float last = -1;
        sm_tensor e = nullptr;
        if (b && sm_select(b, 0, n - 1, &e) == SM_OK) {
          sm_copy_to_host(e, &last, sizeof last);
          sm_tensor_release(e);
        }
        if (last != static_cast<float>(k)) ++failures;
        sm_tensor_release(a);
        sm_tensor_release(b);
      }
    });
  }
  for (auto& th : ths) th.join();
  EXPECT_EQ(failures.load(), 0);
  const sm_memory_stats_t s1 = stats();
  EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s1.active_views, s0.active_views);
  EXPECT_EQ(s1.active_storages, s0.active_storages);
  EXPECT_EQ(s1.num_allocs - s0.num_allocs, s1.num_frees - s0.num_frees);
  EXPECT_EQ(s1.num_allocs - s0.num_allocs, 2 * kThreads * 300);
  EXPECT_GE(s1.peak_allocated_bytes, s1.allocated_bytes);
}

TEST(Threads, LastErrorIsThreadLocal) {
  Tensor t = iota({2, 3});
  Barrier bar(2);
  std::string a_msg_after, b_msg;
  std::thread a([&] {
    sm_tensor o = nullptr;
    EXPECT_EQ(sm_select(t, 1, 77, &o), SM_ERR_OUT_OF_BOUNDS);
    bar.wait();  // 1: A has failed
    bar.wait();  // 2: B has failed too
    a_msg_after = sm_last_error();
  });
  std::thread b([&] {
    bar.wait();  // 1
    sm_tensor o = nullptr;
    EXPECT_EQ(sm_unsqueeze(t, 99, &o), SM_ERR_OUT_OF_BOUNDS);
    b_msg = sm_last_error();
    bar.wait();  // 2
  });
  a.join();
  b.join();
  EXPECT_NE(a_msg_after.find("sm_select"), std::string::npos) << a_msg_after;
  EXPECT_NE(a_msg_after.find("77"), std::string::npos) << a_msg_after;
  EXPECT_EQ(a_msg_after.find("sm_unsqueeze"), std::string::npos) << "clobbered by another thread";
  EXPECT_NE(b_msg.find("sm_unsqueeze"), std::string::npos) << b_msg;
  EXPECT_NE(b_msg.find("99"), std::string::npos) << b_msg;
  // This thread's own message is untouched by both.
  EXPECT_EQ(sm_numel(nullptr, nullptr), SM_ERR_INVALID_HANDLE);
  const std::string mine = sm_last_error();
  std::thread c([] {
    sm_tensor o = nullptr;
    sm_select(nullptr, 0, 0, &o);
  });
  c.join();
  EXPECT_EQ(mine, sm_last_error());
}

TEST(Threads, ConcurrentStacksAreIndependent) {
  std::atomic<int> failures{0};
  std::vector<std::thread> ths;
  for (int k = 0; k < kThreads; ++k) {
    ths.emplace_back([&, k] {
      sm_stack s = nullptr;
      if (sm_stack_create(cpu(), 1 << 16, &s) != SM_OK) {
        ++failures;
        return;
      }
      for (int it = 0; it < 100; ++it) {
        int64_t m = -1;
        sm_stack_mark(s, &m);
        const int64_t n = 1 + (it % 50);
        sm_tensor a = nullptr;
        if (sm_stack_push(s, &n, 1, SM_INT32, &a) != SM_OK) {
          ++failures;
          continue;
        }
        sm_inplace_scalar(a, SM_OP_FILL, k * 1000 + it, 0);
        std::vector<int32_t> v(static_cast<size_t>(n));
        sm_copy_to_host(a, v.data(), v.size() * 4);
        for (int32_t x : v)
          if (x != k * 1000 + it) ++failures;
        if (sm_stack_pop_to(s, m) != SM_OK) ++failures;
        if (sm_tensor_release(a) != SM_OK) ++failures;
      }
      if (sm_stack_release(s) != SM_OK) ++failures;
    });
  }
  for (auto& th : ths) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// The documented pop rule across threads (stridemem.h, sm_stack_pop_to):
// uses ordered before the pop land in the popped tensor; every call that
// starts after the pop has returned is refused and never reaches the bytes
// the next push reuses. Rounds are ordered by a barrier, as the header asks.
TEST(Threads, StackPopOrdersUsesByTheCallersSynchronization) {
  sm_stack s = nullptr;
  SM_ASSERT_OK(sm_stack_create(cpu(), 4096, &s));
  const int64_t n = 64;
  Barrier round(2);
  std::atomic<int> failures{0};
  sm_tensor shared = nullptr;  // handed from the main thread to the worker each round
  std::thread worker([&] {
    for (int it = 0; it < 200; ++it) {
      round.wait();  // pushed
      if (sm_inplace_scalar(shared, SM_OP_FILL, 1000 + it, 0) != SM_OK) ++failures;
      round.wait();  // the main thread pops after this
      round.wait();  // popped, next push made and filled
      // After the pop: refused, and the next push's bytes are untouched.
      if (sm_inplace_scalar(shared, SM_OP_FILL, -1, 0) != SM_ERR_INVALID_HANDLE) ++failures;
      if (sm_tensor_release(shared) != SM_OK) ++failures;
      round.wait();  // the main thread checks the next push
    }
  });
  for (int it = 0; it < 200; ++it) {
    int64_t mark = -1;
    SM_EXPECT_OK(sm_stack_mark(s, &mark));
    SM_EXPECT_OK(sm_stack_push(s, &n, 1, SM_INT32, &shared));
    round.wait();
    round.wait();  // the worker's write is done
    std::vector<int32_t> v(n, 0);
    SM_EXPECT_OK(sm_copy_to_host(shared, v.data(), v.size() * 4));
    for (int32_t x : v) EXPECT_EQ(x, 1000 + it);
    SM_EXPECT_OK(sm_stack_pop_to(s, mark));
    Tensor next;  // reuses the popped bytes
    SM_EXPECT_OK(sm_stack_push(s, &n, 1, SM_INT32, next.out()));
    SM_EXPECT_OK(sm_inplace_scalar(next, SM_OP_FILL, 7, 0));
    round.wait();
    round.wait();  // the worker tried to write through the popped handle
    SM_EXPECT_OK(sm_copy_to_host(next, v.data(), v.size() * 4));
    for (int32_t x : v) EXPECT_EQ(x, 7) << "round " << it << ": a refused write reached the next push";
    next.reset();
    SM_EXPECT_OK(sm_stack_pop_to(s, mark));
  }
  worker.join();
  EXPECT_EQ(failures.load(), 0);
  SM_EXPECT_OK(sm_stack_release(s));
}
