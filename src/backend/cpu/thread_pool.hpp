// A small process-wide pool of worker threads for large CPU copies.
//
// Rules that keep it safe to embed in other people's programs:
//  - The caller always works too; the pool adds get_cpu_threads() - 1 workers.
//  - One job at a time: a call that finds the pool busy (another user thread,
//    or a nested call from a worker) runs its whole job on its own thread, so
//    concurrent callers never wait on each other and never oversubscribe.
//  - In a child process after fork() the pool is never used (work runs on the
//    calling thread), as the parent's workers do not exist there.
//  - Workers are joined at process exit (the library is linked -z nodelete:
//    dlclose never unloads the code they run).
#pragma once

#include <cstdint>
#include <type_traits>

#include "backend/backend.hpp"  // set_cpu_threads, get_cpu_threads

namespace sm {

// Calls fn(ctx, begin, end) on disjoint ranges covering [0, n), each of at
// least `grain` items (except possibly the last), on up to get_cpu_threads()
// threads; returns when all are done. fn must not throw.
using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);
void parallel_for(int64_t n, int64_t grain, RangeFn fn, void* ctx);

// Convenience over any callable f(begin, end).
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  using Fn = typename std::remove_reference<F>::type;
  parallel_for(
      n, grain, [](void* c, int64_t b, int64_t e) { (*static_cast<Fn*>(c))(b, e); },
      static_cast<void*>(&f));
}

}  // namespace sm
