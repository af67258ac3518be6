// CPU copy engine benchmark (issue 6): GB/s (bytes read + written) of the
// CPU kernels on the cases of bench/RESULTS.md next to memcpy of the same
// bytes. Not a timed test. bench/numpy_copy_bench.py runs this program and
// NumPy's versions of the same copies in one run and prints the ratios.
//
// Usage: bench_copy_bench [--json] [--reps N] [--threads N] [--only NAME]
// Each case runs once to warm up (first touch, thread start), then N times;
// the median and the best time are reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/thread_pool.hpp"
#include "backend/cpu/tile_kernels.hpp"

namespace {

using sm::DType;
using sm::TensorDesc;

// Tensor memory comes from the library's own CPU allocator, as sm_empty's
// does, so the figures include its alignment and page choices.
struct Buffer {
  explicit Buffer(size_t n) : bytes(n) {
    block = sm::cpu_backend().allocator().allocate(n);
    data = static_cast<unsigned char*>(block.ptr);
    // Touch every page (and give floats harmless values) outside the timings.
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>((i * 7) & 0x3F);
  }
  ~Buffer() { sm::cpu_backend().allocator().deallocate(block); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  sm::Allocation block;
  unsigned char* data;
  size_t bytes;
};

TensorDesc desc(void* data, DType dt, const std::vector<int64_t>& sizes,
                const std::vector<int64_t>& strides) {
  TensorDesc t;
  t.data = data;
  t.dtype = dt;
  t.ndim = static_cast<int>(sizes.size());
  for (int i = 0; i < t.ndim; ++i) t.sizes[i] = sizes[i], t.strides[i] = strides[i];
  return t;
}

std::vector<int64_t> row_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) st[i] = acc, acc *= sizes[i];
  return st;
}

// The view of a row-major `sizes` buffer permuted by perm (numpy.transpose).
void permuted(const std::vector<int64_t>& sizes, const std::vector<int>& perm,
              std::vector<int64_t>* psizes, std::vector<int64_t>* pstrides) {
  const std::vector<int64_t> st = row_major(sizes);
  psizes->clear();
  pstrides->clear();
  for (int p : perm) psizes->push_back(sizes[p]), pstrides->push_back(st[p]);
}

struct Timing {
  double median_s, best_s;
};

Timing time_it(int reps, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
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
    if (a == "--json") json = true;
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) sm::set_cpu_threads(std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--json] [--reps N] [--threads N] [--only NAME]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  sm::Kernels& k = sm::cpu_kernels();
  std::vector<Result> results;

  // memcpy of n bytes between the case's own buffers (both at least n long).
  auto memcpy_ref = [&](Buffer& to, const Buffer& from, size_t n) {
    return time_it(reps, [&] { std::memcpy(to.data, from.data, n); });
  };

  auto run_copy = [&](const std::string& name, DType dt, DType st,
                      const std::vector<int64_t>& dsizes, const std::vector<int64_t>& ssizes,
                      const std::vector<int64_t>& sstrides) {
    if (!only.empty() && name != only) return;
    int64_t numel = 1;
    for (auto s : dsizes) numel *= s;
    const size_t dbytes = numel * sm::dtype_size(dt), sbytes = numel * sm::dtype_size(st);
    const size_t mbytes = std::max(dbytes, sbytes);
    Buffer src(mbytes), dst(mbytes);
    const TensorDesc d = desc(dst.data, dt, dsizes, row_major(dsizes));
    const TensorDesc s = desc(src.data, st, ssizes, sstrides);
    Result r;
    r.name = name;
    r.bytes = static_cast<double>(dbytes + sbytes);
    r.ours = time_it(reps, [&] { k.copy(d, s); });
    r.memcpy_t = memcpy_ref(dst, src, mbytes);
    r.memcpy_bytes = 2.0 * mbytes;
    results.push_back(r);
  };

  const int64_t N2 = 4096, N4 = 64;
  // A plain contiguous copy (64 MiB): the engine against memcpy itself.
  run_copy("contiguous_copy_64MiB_f32", DType::F32, DType::F32, {16 << 20}, {16 << 20}, {1});
  // 2-D transposes: dst[i][j] = src[j][i].
  run_copy("transpose2d_4096_f32", DType::F32, DType::F32, {N2, N2}, {N2, N2}, {1, N2});
  run_copy("transpose2d_4096_f16", DType::F16, DType::F16, {N2, N2}, {N2, N2}, {1, N2});
  // 4-D permutations of a row-major 64^4 fp32 tensor.
  const std::vector<std::vector<int>> perms = {
      {0, 1, 3, 2}, {3, 2, 1, 0}, {0, 2, 1, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}};
  for (const auto& p : perms) {
    std::vector<int64_t> ps, pst;
    permuted({N4, N4, N4, N4}, p, &ps, &pst);
    std::string name = "permute4d_64_f32_(";
    for (size_t i = 0; i < p.size(); ++i) name += std::to_string(p[i]) + (i + 1 < p.size() ? "," : ")");
    run_copy(name, DType::F32, DType::F32, ps, ps, pst);
  }
  {
    // NCHW -> NHWC: the NHWC-ordered view of an NCHW buffer, made dense.
    std::vector<int64_t> ps, pst;
    permuted({32, 64, 112, 112}, {0, 2, 3, 1}, &ps, &pst);
    run_copy("nchw_to_nhwc_32x64x112x112_f32", DType::F32, DType::F32, ps, ps, pst);
  }
  run_copy("copy_into_f32_to_bf16_4096x4096", DType::BF16, DType::F32, {N2, N2}, {N2, N2}, {N2, 1});
  run_copy("copy_into_f32_to_f16_4096x4096", DType::F16, DType::F32, {N2, N2}, {N2, N2}, {N2, 1});
  if (only.empty() || only == "inplace_add_transposed_4096_f32") {
    // a.T += b: dst is the transposed view of a, other is row-major.
    const size_t n = static_cast<size_t>(N2 * N2) * 4;
    Buffer a(n), b(n);
    const TensorDesc d = desc(a.data, DType::F32, {N2, N2}, {1, N2});
    const TensorDesc o = desc(b.data, DType::F32, {N2, N2}, {N2, 1});
    Result r;
    r.name = "inplace_add_transposed_4096_f32";
    r.bytes = 3.0 * n;  // read a, read b, write a
    r.ours = time_it(reps, [&] { k.tensor_op(d, SM_OP_ADD, o, 1.0); });
    r.memcpy_t = memcpy_ref(a, b, n);
    r.memcpy_bytes = 2.0 * n;
    results.push_back(r);
  }

  const bool avx2 = sm::cpu::tile_kernels_use_avx2();
  if (json) {
    std::printf("{\"threads\": %d, \"reps\": %d, \"avx2\": %s, \"cases\": [\n",
                sm::get_cpu_threads(), reps, avx2 ? "true" : "false");
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
              "GB/s, read+write\n", sm::get_cpu_threads(), avx2 ? "AVX2" : "baseline", reps);
  std::printf("%-36s %16s %16s %8s\n", "case", "stridemem", "memcpy", "ratio");
  for (const Result& r : results) {
    const double g = r.bytes / r.ours.median_s / 1e9, gb = r.bytes / r.ours.best_s / 1e9;
    const double m = r.memcpy_bytes / r.memcpy_t.median_s / 1e9;
    const double mb = r.memcpy_bytes / r.memcpy_t.best_s / 1e9;
    std::printf("%-36s %7.2f (%6.2f) %7.2f (%6.2f) %7.0f%%\n", r.name.c_str(), g, gb, m, mb,
                100.0 * g / m);
  }
  return 0;
}
