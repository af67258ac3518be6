// CPU copy engine benchmark (issue 6): GB/s (bytes read + written) of the
// public calls users make (sm_copy_into from permuted / transposed views,
// sm_copy_into with a dtype change, sm_inplace_tensor on a transposed view)
// next to memcpy of the same bytes between the same buffers. Not a timed
// test; kept as a plain C++ program to run under perf. The issue-16 driver,
// bench/cpu_engine_bench.py, times these cases (and more) against PyTorch,
// NumPy and the best 2-thread copy of the same bytes (see bench/RESULTS.md).
//
// Usage: bench_copy_bench [--json] [--reps N] [--threads N] [--only NAME]
// Each case runs once to warm up (first touch, thread start), then N times
// alternating with its memcpy reference, every run from cold caches; the
// median and the best time of each are reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/tile_gather.hpp"  // which tile kernels run (reported only)
#include "stridemem.h"

namespace {

void check(sm_status st, const char* what) {
  if (st != SM_OK) {
    std::fprintf(stderr, "%s failed: %s\n", what, sm_last_error());
    std::exit(1);
  }
}

// Owns one tensor handle.
struct Handle {
  explicit Handle(sm_tensor h = nullptr) : t(h) {}
  ~Handle() { sm_tensor_release(t); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  sm_tensor t;
};

// A row-major tensor from sm_empty (the library's allocator) with every byte
// touched, and given harmless float bits, outside the timings.
struct Buffer {
  Buffer(const std::vector<int64_t>& shape, sm_dtype dt) {
    check(sm_empty(shape.data(), static_cast<int32_t>(shape.size()), dt,
                   sm_device{SM_DEVICE_CPU, 0}, &h.t),
          "sm_empty");
    int64_t n = 0;
    void* p = nullptr;
    check(sm_nbytes(h.t, &n), "sm_nbytes");
    check(sm_data_ptr(h.t, &p), "sm_data_ptr");
    data = static_cast<unsigned char*>(p);
    bytes = static_cast<size_t>(n);
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>((i * 7) & 0x3F);
  }
  // A row-major view of `shape` and dtype dt over this buffer's bytes.
  sm_tensor view_as(const std::vector<int64_t>& shape, sm_dtype dt) const {
    sm_storage s = nullptr;
    sm_tensor t = nullptr;
    check(sm_tensor_storage(h.t, &s), "sm_tensor_storage");
    check(sm_tensor_from_storage(s, shape.data(), nullptr, static_cast<int32_t>(shape.size()), 0,
                                 dt, &t),
          "sm_tensor_from_storage");
    sm_storage_release(s);
    return t;
  }
  Handle h;
  unsigned char* data = nullptr;
  size_t bytes = 0;
};

struct Timing {
  double median_s, best_s;
};

// Reads 96 MiB of clean memory, so the next timed run starts with none of
// its operands in cache (the 32 MiB L3 would otherwise favour whichever
// call follows one that touched the same buffers). Reading, not writing:
// the dirty lines of the previous run are written back here, not later.
uint64_t flush_caches() {
  static std::vector<uint64_t> junk((96u << 20) / 8, 1);
  uint64_t sum = 0;
  for (size_t i = 0; i < junk.size(); i += 8) sum += junk[i];  // one load per line
  return sum;
}
volatile uint64_t g_sink;

// Times f and g alternately (f, g, f, g, ...) so both see the same
// background load, which on a shared machine changes from second to second.
std::pair<Timing, Timing> time_pair(int reps, const std::function<void()>& f,
                                    const std::function<void()>& g) {
  f();  // warm-up
  g();
  std::vector<double> tf, tg;
  for (int i = 0; i < reps; ++i) {
    for (int which = 0; which < 2; ++which) {
      g_sink = flush_caches();
      const auto a = std::chrono::steady_clock::now();
      (which ? g : f)();
      const auto b = std::chrono::steady_clock::now();
      (which ? tg : tf).push_back(std::chrono::duration<double>(b - a).count());
    }
  }
  std::sort(tf.begin(), tf.end());
  std::sort(tg.begin(), tg.end());
  return {Timing{tf[tf.size() / 2], tf.front()}, Timing{tg[tg.size() / 2], tg.front()}};
}

int threads() {
  int32_t n = 0;
  check(sm_get_num_threads(&n), "sm_get_num_threads");
  return n;
}

struct Result {
  std::string name;
  double bytes;  // read + written
  Timing ours;
  Timing memcpy_t;  // memcpy of the larger operand's bytes, between the same buffers
  double memcpy_bytes;
};

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  int reps = 7;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      check(sm_set_num_threads(std::atoi(argv[++i])), "sm_set_num_threads");
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--json] [--reps N] [--threads N] [--only NAME]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  std::vector<Result> results;

  // The engine's call and memcpy of n bytes between the same two buffers.
  auto measure = [&](Result& r, const std::function<void()>& ours, Buffer& to, const Buffer& from,
                     size_t n) {
    const auto t = time_pair(reps, ours, [&] { std::memcpy(to.data, from.data, n); });
    r.ours = t.first;
    r.memcpy_t = t.second;
    r.memcpy_bytes = 2.0 * static_cast<double>(n);
  };

  // sm_copy_into(dst, src.permute(perm)): dst row-major of dtype dt, src a
  // row-major src_shape tensor of dtype st.
  auto run_copy = [&](const std::string& name, sm_dtype dt, sm_dtype st,
                      const std::vector<int64_t>& src_shape, const std::vector<int32_t>& perm) {
    if (!only.empty() && name != only) return;
    std::vector<int64_t> shape;
    for (int32_t p : perm) shape.push_back(src_shape[p]);
    // Both buffers hold the larger operand, for the memcpy reference.
    const sm_dtype big = sm_dtype_size(dt) >= sm_dtype_size(st) ? dt : st;
    Buffer dbuf(shape, big), sbuf(src_shape, big);
    Handle d(dbuf.view_as(shape, dt)), s(sbuf.view_as(src_shape, st)), v;
    check(sm_permute(s.t, perm.data(), static_cast<int32_t>(perm.size()), &v.t), "sm_permute");
    int64_t numel = 0;
    check(sm_numel(d.t, &numel), "sm_numel");
    const size_t dbytes = numel * sm_dtype_size(dt), sbytes = numel * sm_dtype_size(st);
    Result r;
    r.name = name;
    r.bytes = static_cast<double>(dbytes + sbytes);
    measure(r, [&] { check(sm_copy_into(d.t, v.t), "sm_copy_into"); }, dbuf, sbuf,
            std::max(dbytes, sbytes));
    results.push_back(r);
  };

  const int64_t N2 = 4096, N4 = 64;
  // A plain contiguous copy (64 MiB): the engine against memcpy itself.
  run_copy("contiguous_copy_64MiB_f32", SM_FLOAT32, SM_FLOAT32, {16 << 20}, {0});
  // 2-D transposes: dst = src.T made dense.
  run_copy("transpose2d_4096_f32", SM_FLOAT32, SM_FLOAT32, {N2, N2}, {1, 0});
  run_copy("transpose2d_4096_f16", SM_FLOAT16, SM_FLOAT16, {N2, N2}, {1, 0});
  run_copy("transpose2d_4096_bf16", SM_BFLOAT16, SM_BFLOAT16, {N2, N2}, {1, 0});
  // 1-byte elements (16 MiB each way): bool, int8 and uint8 share one kernel
  // (bits moved as bytes), each timed so a dtype left off that path shows.
  run_copy("transpose2d_8192x2048_u8", SM_UINT8, SM_UINT8, {8192, 2048}, {1, 0});
  run_copy("transpose2d_8192x2048_i8", SM_INT8, SM_INT8, {8192, 2048}, {1, 0});
  run_copy("transpose2d_8192x2048_bool", SM_BOOL, SM_BOOL, {8192, 2048}, {1, 0});
  // 4-D permutations of a row-major 64^4 fp32 tensor.
  const std::vector<std::vector<int32_t>> perms = {
      {0, 1, 3, 2}, {3, 2, 1, 0}, {0, 2, 1, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}};
  for (const auto& p : perms) {
    std::string name = "permute4d_64_f32_(";
    for (size_t i = 0; i < p.size(); ++i)
      name += std::to_string(p[i]) + (i + 1 < p.size() ? "," : ")");
    run_copy(name, SM_FLOAT32, SM_FLOAT32, {N4, N4, N4, N4}, p);
  }
  // NCHW -> NHWC: the NHWC-ordered view of an NCHW tensor, made dense.
  run_copy("nchw_to_nhwc_32x64x112x112_f32", SM_FLOAT32, SM_FLOAT32, {32, 64, 112, 112},
           {0, 2, 3, 1});
  // Conversions from a transposed view: one pass through the tile path.
  run_copy("transpose2d_4096_f32_to_f16", SM_FLOAT16, SM_FLOAT32, {N2, N2}, {1, 0});
  run_copy("transpose2d_4096_f32_to_bf16", SM_BFLOAT16, SM_FLOAT32, {N2, N2}, {1, 0});
  run_copy("transpose2d_4096_f16_to_f32", SM_FLOAT32, SM_FLOAT16, {N2, N2}, {1, 0});
  // 8-byte elements, and permutations that move every dim.
  run_copy("transpose2d_2048x4096_f64", SM_FLOAT64, SM_FLOAT64, {2048, N2}, {1, 0});
  run_copy("rotate3d_256_f64_(1,2,0)", SM_FLOAT64, SM_FLOAT64, {256, 256, 256}, {1, 2, 0});
  run_copy("rotate3d_256_f64_(2,0,1)", SM_FLOAT64, SM_FLOAT64, {256, 256, 256}, {2, 0, 1});
  run_copy("rotate5d_f32_(1,2,3,4,0)", SM_FLOAT32, SM_FLOAT32, {16, 16, 16, 64, 64},
           {1, 2, 3, 4, 0});
  run_copy("rotate5d_f32_(4,0,1,2,3)", SM_FLOAT32, SM_FLOAT32, {16, 16, 16, 64, 64},
           {4, 0, 1, 2, 3});
  run_copy("copy_into_f32_to_bf16_4096x4096", SM_BFLOAT16, SM_FLOAT32, {N2, N2}, {0, 1});
  run_copy("copy_into_f32_to_f16_4096x4096", SM_FLOAT16, SM_FLOAT32, {N2, N2}, {0, 1});
  if (only.empty() || only == "inplace_add_transposed_4096_f32") {
    // a.T += b: sm_inplace_tensor on the transposed view of a; b row-major.
    Buffer a({N2, N2}, SM_FLOAT32), b({N2, N2}, SM_FLOAT32);
    Handle at;
    check(sm_transpose(a.h.t, 0, 1, &at.t), "sm_transpose");
    Result r;
    r.name = "inplace_add_transposed_4096_f32";
    r.bytes = 3.0 * static_cast<double>(a.bytes);  // read a, read b, write a
    measure(r, [&] { check(sm_inplace_tensor(at.t, SM_OP_ADD, b.h.t, 1.0), "sm_inplace_tensor"); },
            a, b, a.bytes);
    results.push_back(r);
  }

  const bool avx2 = sm::cpu::tile_kernels_use_avx2();
  if (json) {
    std::printf("{\"threads\": %d, \"reps\": %d, \"avx2\": %s, \"cases\": [\n", threads(), reps,
                avx2 ? "true" : "false");
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::printf(
          "  {\"name\": \"%s\", \"bytes\": %.0f, \"median_s\": %.6f, \"best_s\": %.6f, "
          "\"memcpy_bytes\": %.0f, \"memcpy_median_s\": %.6f, \"memcpy_best_s\": %.6f}%s\n",
          r.name.c_str(), r.bytes, r.ours.median_s, r.ours.best_s, r.memcpy_bytes,
          r.memcpy_t.median_s, r.memcpy_t.best_s, i + 1 < results.size() ? "," : "");
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("stridemem CPU copy bench: %d thread(s), %s tile kernels, %d reps, median (best) "
              "GB/s, read+write\n",
              threads(), avx2 ? "AVX2" : "baseline", reps);
  std::printf("%-36s %16s %16s %8s\n", "case", "stridemem", "memcpy", "ratio");
  for (const Result& r : results) {
    const double g = r.bytes / r.ours.median_s / 1e9, gb = r.bytes / r.ours.best_s / 1e9;
    const double m = r.memcpy_bytes / r.memcpy_t.median_s / 1e9;
    const double mb = r.memcpy_bytes / r.memcpy_t.best_s / 1e9;
    std::printf("%-36s %7.2f (%6.2f) %7.2f (%6.2f) %7.0f%%\n", r.name.c_str(), g, gb, m, mb,
                100.0 * gb / mb);
  }
  return 0;
}
