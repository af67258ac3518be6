// DLPack round-trip cost (issue 5): nanoseconds for one
//   sm_to_dlpack(t) + sm_from_dlpack(managed) + sm_tensor_release(imported)
// (the release runs our own export's deleter: the whole exchange, start to
// end), legacy and versioned, on a CPU tensor. Target: <= 200 ns.
// Also, for the breakdown: export + deleter alone, import of a hand-built
// producer tensor + release alone, and a plain view (sm_transpose + release)
// as the floor that any handle-producing call pays.
//
// Public API only (include/stridemem.h), although the program is linked with
// the engine archive like every bench/cpu program.
//
// Usage: bench_dlpack_bench [--json] [--reps N] [--iters N] [--ndim D]
// Each case: one warm-up batch, then N batches (default 101) of M iterations
// (default 5000); the time per iteration of each batch is computed and the
// median and the best batch are reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "stridemem.h"
#include "stridemem_dlpack.h"

namespace {

void check(sm_status st, const char* what) {
  if (st != SM_OK) {
    std::fprintf(stderr, "%s failed: %s: %s\n", what, sm_status_string(st), sm_last_error());
    std::exit(1);
  }
}

struct Result {
  std::string name;
  double median_ns;
  double best_ns;
};

Result measure(const std::string& name, int reps, int iters, const std::function<void()>& body) {
  using clock = std::chrono::steady_clock;
  std::vector<double> per_iter;
  for (int r = -1; r < reps; ++r) {  // r == -1: warm-up
    const auto t0 = clock::now();
    for (int i = 0; i < iters; ++i) body();
    const auto t1 = clock::now();
    if (r >= 0)
      per_iter.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
  }
  std::sort(per_iter.begin(), per_iter.end());
  return Result{name, per_iter[per_iter.size() / 2], per_iter.front()};
}

// A producer tensor the benchmark hands to sm_from_dlpack over and over: its
// deleter only counts (the memory and the struct are reused).
int64_t g_producer_deletes = 0;
void count_legacy(sm_DLManagedTensor*) { ++g_producer_deletes; }
void count_versioned(sm_DLManagedTensorVersioned*) { ++g_producer_deletes; }

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  int reps = 101, iters = 5000, ndim = 2;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--ndim") && i + 1 < argc) ndim = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--json] [--reps N] [--iters N] [--ndim D (1..8)]\n",
                   argv[0]);
      return 2;
    }
  }
  if (reps < 1 || iters < 1 || ndim < 1 || ndim > 8) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }

  const sm_device cpu{SM_DEVICE_CPU, 0};
  // A small ndim-D float32 tensor, transposed (non-trivial strides); the
  // cost does not depend on the element count.
  std::vector<int64_t> shape(ndim, 4);
  shape[0] = 64;
  sm_tensor base = nullptr, t = nullptr;
  check(sm_zeros(shape.data(), ndim, SM_FLOAT32, cpu, &base), "sm_zeros");
  if (ndim >= 2) check(sm_transpose(base, 0, ndim - 1, &t), "sm_transpose");
  else check(sm_tensor_retain(base), "retain"), t = base;

  std::vector<Result> results;
  for (int versioned = 0; versioned <= 1; ++versioned) {
    const std::string kind = versioned ? "versioned" : "legacy";
    results.push_back(measure("round trip export+import+release (" + kind + ")", reps, iters,
                              [&] {
                                void* m = nullptr;
                                sm_tensor u = nullptr;
                                check(sm_to_dlpack(t, versioned, &m), "sm_to_dlpack");
                                check(sm_from_dlpack(m, versioned, &u), "sm_from_dlpack");
                                check(sm_tensor_release(u), "sm_tensor_release");
                              }));
  }
  for (int versioned = 0; versioned <= 1; ++versioned) {
    const std::string kind = versioned ? "versioned" : "legacy";
    results.push_back(measure("export + consumer's deleter (" + kind + ")", reps, iters, [&] {
      void* m = nullptr;
      check(sm_to_dlpack(t, versioned, &m), "sm_to_dlpack");
      if (versioned) {
        auto* mv = static_cast<sm_DLManagedTensorVersioned*>(m);
        mv->deleter(mv);
      } else {
        auto* ml = static_cast<sm_DLManagedTensor*>(m);
        ml->deleter(ml);
      }
    }));
  }
  // Import of a foreign producer's tensor (its deleter only counts).
  static float data[64 * 4];
  int64_t pshape[2] = {64, 4};
  int64_t pstrides[2] = {1, 64};
  sm_DLManagedTensor legacy{};
  sm_DLManagedTensorVersioned vers{};
  for (sm_DLTensor* dl : {&legacy.dl_tensor, &vers.dl_tensor}) {
    dl->data = data;
    dl->device = sm_DLDevice{sm_kDLCPU, 0};
    dl->ndim = 2;
    dl->dtype = sm_DLDataType{sm_kDLFloat, 32, 1};
    dl->shape = pshape;
    dl->strides = pstrides;
    dl->byte_offset = 0;
  }
  legacy.deleter = count_legacy;
  vers.version = sm_DLPackVersion{SM_DLPACK_MAJOR_VERSION, SM_DLPACK_MINOR_VERSION};
  vers.deleter = count_versioned;
  int64_t expected_deletes = 0;
  for (int versioned = 0; versioned <= 1; ++versioned) {
    const std::string kind = versioned ? "versioned" : "legacy";
    void* m = versioned ? static_cast<void*>(&vers) : static_cast<void*>(&legacy);
    results.push_back(measure("import foreign + release (" + kind + ")", reps, iters, [&] {
      sm_tensor u = nullptr;
      check(sm_from_dlpack(m, versioned, &u), "sm_from_dlpack");
      check(sm_tensor_release(u), "sm_tensor_release");
    }));
    expected_deletes += static_cast<int64_t>(reps + 1) * iters;
  }
  if (g_producer_deletes != expected_deletes) {
    std::fprintf(stderr, "producer deleter ran %lld times, expected %lld\n",
                 static_cast<long long>(g_producer_deletes),
                 static_cast<long long>(expected_deletes));
    return 1;
  }
  results.push_back(measure("floor: sm_transpose + release (a view)", reps, iters, [&] {
    sm_tensor u = nullptr;
    check(sm_transpose(t, 0, ndim >= 2 ? 1 : 0, &u), "sm_transpose");
    check(sm_tensor_release(u), "sm_tensor_release");
  }));

  // Nothing may leak: every storage and handle back to the start.
  sm_tensor_release(t);
  sm_tensor_release(base);
  int64_t th = -1, sh = -1, kh = -1;
  check(sm_debug_live_handles(&th, &sh, &kh), "sm_debug_live_handles");
  if (th != 0 || sh != 0 || kh != 0) {
    std::fprintf(stderr, "live handles left: tensors %lld storages %lld stacks %lld\n",
                 static_cast<long long>(th), static_cast<long long>(sh),
                 static_cast<long long>(kh));
    return 1;
  }

  const double target = 200.0;
  if (json) {
    std::printf("{\"ndim\": %d, \"reps\": %d, \"iters\": %d, \"target_ns\": %.0f, \"cases\": [",
                ndim, reps, iters, target);
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s{\"name\": \"%s\", \"median_ns\": %.1f, \"best_ns\": %.1f}",
                  i ? ", " : "", results[i].name.c_str(), results[i].median_ns,
                  results[i].best_ns);
    std::printf("]}\n");
  } else {
    std::printf("DLPack round trip, %d-D float32 CPU tensor; %d batches x %d iterations\n", ndim,
                reps, iters);
    std::printf("%-52s %10s %10s\n", "case", "median ns", "best ns");
    for (const Result& r : results)
      std::printf("%-52s %10.1f %10.1f\n", r.name.c_str(), r.median_ns, r.best_ns);
    for (int i = 0; i < 2; ++i)
      std::printf("%s round trip: %s the %.0f ns target\n", i ? "versioned" : "legacy",
                  results[i].median_ns <= target ? "within" : "OVER", target);
  }
  return 0;
}
