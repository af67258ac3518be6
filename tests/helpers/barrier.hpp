// A reusable barrier for lock-step rounds of test threads (std::barrier is
// C++20). What one thread did before wait() happens before what any thread
// does after it: the concurrency tests line their calls up with it so that
// calls really overlap (every call takes the handle table's lock).
#pragma once

#include <condition_variable>
#include <mutex>

namespace sm_test {

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lk(mu_);
    const int gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lk, [&] { return gen != gen_; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, count_ = 0, gen_ = 0;
};

}  // namespace sm_test
