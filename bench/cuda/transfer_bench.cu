// Host <-> device copies through stridemem against the CUDA runtime moving the
// same bytes between the same buffers (a program, not a timed test).
//
//   bench_transfer_bench [--mib 256] [--iters 20] [--warmup 3] [--quick]
//
// For each size (the given one and 4 MiB, where the fixed cost of a call
// shows), four directions:
//   pinned -> device    sm_copy_into(gpu, pinned)    vs cudaMemcpyAsync H2D
//   device -> pinned    sm_copy_into(pinned, gpu)    vs cudaMemcpyAsync D2H
//   pageable -> device  sm_copy_into(gpu, cpu blob)  vs cudaMemcpyAsync H2D
//   device -> pageable  sm_copy_to_host(gpu, buffer) vs cudaMemcpyAsync D2H
// Each timed call is the copy and a synchronisation of the default stream
// (stridemem's stream unless one is set), wall clock, median of --iters; the
// reference gets the same synchronisation. "ratio" is the reference's time
// over ours (1.0: as fast as the runtime on the same buffers). Each row says
// which path stridemem took; every copy's bytes are compared with the source
// once after the timing. Target: pinned copies >= 0.9 of the runtime's at
// the given size.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_checks.hpp"
#include "stridemem.h"

namespace {

const sm_device kGpu = {SM_DEVICE_CUDA, 0};
const sm_device kPinned = {SM_DEVICE_CUDA_HOST, 0};
const sm_device kCpu = {SM_DEVICE_CPU, 0};

struct Options {
  double mib = 256;
  int iters = 20;
  int warmup = 3;
};

// Median wall-clock milliseconds of f() followed by a default-stream sync.
template <class F>
double time_ms(const Options& o, F f) {
  std::vector<double> ms;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    CK(cudaStreamSynchronize(nullptr));
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= o.warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void* data_of(sm_tensor t) {
  void* p = nullptr;
  SK(sm_data_ptr(t, &p));
  return p;
}

struct Row {
  std::string name, path;
  double ours_ms = 0, ref_ms = 0;
  bool ok = false;
  bool pinned = false;
};

void print_row(const Row& r, size_t bytes) {
  const double gb = static_cast<double>(bytes) / 1e6;
  std::printf("%-20s %9.1f %9.1f %7.3f  %-5s %s\n", r.name.c_str(), gb / r.ours_ms, gb / r.ref_ms,
              r.ref_ms / r.ours_ms, r.ok ? "ok" : "WRONG", r.path.c_str());
}

// One size: returns the rows (pinned ones flagged for the target).
std::vector<Row> run_size(const Options& o, size_t bytes) {
  const int64_t shape[1] = {static_cast<int64_t>(bytes)};
  sm_tensor gpu = nullptr, gpu2 = nullptr, pinned = nullptr, pinned2 = nullptr, blob = nullptr;
  SK(sm_empty(shape, 1, SM_UINT8, kGpu, &gpu));
  SK(sm_empty(shape, 1, SM_UINT8, kGpu, &gpu2));
  SK(sm_empty(shape, 1, SM_UINT8, kPinned, &pinned));
  SK(sm_empty(shape, 1, SM_UINT8, kPinned, &pinned2));
  std::vector<uint8_t> pageable(bytes), back(bytes);
  for (size_t i = 0; i < bytes; ++i) pageable[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
  SK(sm_from_blob(pageable.data(), shape, nullptr, 1, SM_UINT8, kCpu, nullptr, nullptr, &blob));
  std::memcpy(data_of(pinned), pageable.data(), bytes);
  void *g = data_of(gpu), *g2 = data_of(gpu2), *p = data_of(pinned), *p2 = data_of(pinned2);

  std::vector<Row> rows;
  auto gpu_equals = [&](sm_tensor t) {
    std::vector<uint8_t> h(bytes);
    CK(cudaMemcpy(h.data(), data_of(t), bytes, cudaMemcpyDeviceToHost));
    return std::memcmp(h.data(), pageable.data(), bytes) == 0;
  };
  {
    Row r{"pinned -> device", "cudaMemcpyAsync, asynchronous; the pinned block stays out of reuse until done"};
    r.pinned = true;
    r.ours_ms = time_ms(o, [&] { SK(sm_copy_into(gpu, pinned)); });
    r.ref_ms = time_ms(o, [&] { CK(cudaMemcpyAsync(g2, p, bytes, cudaMemcpyHostToDevice, nullptr)); });
    r.ok = gpu_equals(gpu);
    rows.push_back(r);
  }
  {
    Row r{"device -> pinned", "cudaMemcpyAsync, then the stream is synchronised (readable on return)"};
    r.pinned = true;
    std::memset(p2, 0, bytes);
    r.ours_ms = time_ms(o, [&] { SK(sm_copy_into(pinned2, gpu)); });
    r.ok = std::memcmp(p2, pageable.data(), bytes) == 0;
    r.ref_ms = time_ms(o, [&] { CK(cudaMemcpyAsync(p2, g2, bytes, cudaMemcpyDeviceToHost, nullptr)); });
    rows.push_back(r);
  }
  {
    Row r{"pageable -> device",
          "cudaMemcpyAsync from pageable memory (the driver stages it), then the stream is synchronised"};
    CK(cudaMemset(g, 0, bytes));
    r.ours_ms = time_ms(o, [&] { SK(sm_copy_into(gpu, blob)); });
    r.ref_ms = time_ms(o, [&] { CK(cudaMemcpyAsync(g2, pageable.data(), bytes, cudaMemcpyHostToDevice, nullptr)); });
    r.ok = gpu_equals(gpu);
    rows.push_back(r);
  }
  {
    Row r{"device -> pageable", "cudaMemcpyAsync to pageable memory, then the stream is synchronised"};
    r.ours_ms = time_ms(o, [&] { SK(sm_copy_to_host(gpu, back.data(), bytes)); });
    r.ok = std::memcmp(back.data(), pageable.data(), bytes) == 0;
    r.ref_ms = time_ms(o, [&] { CK(cudaMemcpyAsync(back.data(), g2, bytes, cudaMemcpyDeviceToHost, nullptr)); });
    rows.push_back(r);
  }
  for (sm_tensor t : {gpu, gpu2, pinned, pinned2, blob}) SK(sm_tensor_release(t));
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool mib_given = false, iters_given = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mib" && i + 1 < argc) o.mib = std::atof(argv[++i]), mib_given = true;
    else if (a == "--iters" && i + 1 < argc) o.iters = std::max(1, std::atoi(argv[++i])), iters_given = true;
    else if (a == "--warmup" && i + 1 < argc) o.warmup = std::max(0, std::atoi(argv[++i]));
    else if (a == "--quick") quick = true;
    else {
      std::fprintf(stderr, "usage: %s [--mib 256] [--iters 20] [--warmup 3] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (quick) {
    if (!mib_given) o.mib = 16;
    if (!iters_given) o.iters = 5;
  }
  if (!(o.mib > 0 && o.mib <= 65536)) {
    std::fprintf(stderr, "--mib must be in (0, 65536]\n");
    return 2;
  }
  int32_t ndev = 0;
  SK(sm_cuda_device_count(&ndev));
  if (ndev == 0) {
    std::printf("NOT RUN: no usable CUDA device (asked: %g MiB, median of %d iterations)\n", o.mib, o.iters);
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, median of %d iterations, wall clock, copy + default-stream sync\n", prop.name,
              o.iters);
  const size_t big = static_cast<size_t>(o.mib * 1048576.0);
  std::vector<size_t> sizes = {big};
  if (big > (4u << 20)) sizes.push_back(4u << 20);
  bool ok = true, target = true;
  for (size_t bytes : sizes) {
    std::printf("\n%.1f MiB\n%-20s %9s %9s %7s  %-5s %s\n", static_cast<double>(bytes) / 1048576.0, "direction",
                "ours GB/s", "cuda GB/s", "ratio", "check", "stridemem's path");
    for (const Row& r : run_size(o, bytes)) {
      print_row(r, bytes);
      ok = ok && r.ok;
      if (bytes == big && r.pinned && r.ref_ms / r.ours_ms < 0.9) target = false;
    }
  }
  std::printf("\ntargets:\n  %s pinned host<->device copies >= 0.9 of cudaMemcpyAsync (%.1f MiB)\n",
              target ? "PASS" : "FAIL", static_cast<double>(big) / 1048576.0);
  std::printf("  %s every copy's bytes equal the source's\n", ok ? "PASS" : "FAIL");
  SK(sm_empty_cache(kGpu));
  SK(sm_empty_cache(kPinned));
  return ok ? 0 : 1;
}
