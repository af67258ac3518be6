// CUDA benchmark (a program, not a timed test). One run prints, for each
// case, GB/s (bytes read + written) and the ratio to a plain device copy
// (cudaMemcpyAsync D2D) of the same number of bytes measured in the same run;
// then the allocator: median ns of a cached alloc+free pair against
// cudaMalloc+cudaFree; then the issue's targets, PASS or FAIL. index_select
// cases (a 1-D scalar gather of 10^6 and 10^7 random int64 indices from 10^7
// fp32 values, and 10^5 random rows of 256 fp32; a tenth of each with
// --quick) count the bytes read and written, the index included, and print
// the median time per call; their comparison with torch.index_select and
// cupy.take is bench/torch_cupy_bench.py. Before exiting, the device's cache
// is emptied (sm_empty_cache), so compute-sanitizer's leak check sees no
// cached blocks.
//
//   bench_cuda_bench [--mib 256] [--iters 20] [--warmup 3] [--json out.json] [--quick] [--no-extra]
//   bench_cuda_bench --conversion-tiles [--mib 256] [--iters 20] [--warmup 3] [--quick]
//
// --conversion-tiles runs only the converting permutations (the tiled
// transpose converting on the way): f32->f16, f32->bf16 and f16->f32 of a
// 2-D transpose [8192, 8192] and of NCHW->NHWC (0,2,3,1) [64, 256, 64, 64],
// copy_into a dense destination from the permuted view; "ratio" is the time
// of a device copy of the larger side's bytes over the case's time (1.0:
// as fast as moving the f32 side alone). Every element of 4096 random ones
// is checked bit for bit against the host models below. Not in the JSON.
//
// --json writes every case with its parameters, so bench/torch_cupy_bench.py
// can run PyTorch and CuPy on exactly the same cases. Each case's output is
// also spot-checked against the input on the host (4096 random elements).
//
// After the issue's cases come extra cases, outside its targets: printed
// under "extra cases (not in the issue's targets)", "extra": true in the
// JSON, never counted in the permutation targets (those stay over the 24
// fp32/fp16 permutations) nor in the target line on the spot checks (they
// get a line of their own; a wrong extra output still makes the exit status
// 1); --no-extra leaves them out. Sizes for the default 256 MiB (--mib
// scales them; --quick makes the default 16 MiB):
//   permute + contiguous, the bytes of the fp32 cases: 2-D transpose uint8
//     [32768, 8192] and bool, 4-D NCHW->NHWC (0,2,3,1) uint8 [256,256,64,64]
//     and bool (bools random 0/1), 2-D transpose bf16 [16384, 8192]; an
//     image-like uint8 [8, 3, H, H] -> NHWC, H = round(sqrt(mib MiB / 24))
//     (3344 at 256 MiB; 836 with --quick);
//   copy_into f32->f16, f16->f32, bf16->f32, [8192, 8192] (the f32 -> bf16
//     case's shape): every element checked (the first 64 and 4096 random)
//     bit for bit against host models (round to nearest even, subnormals,
//     overflow to infinity; a NaN may become any NaN); the f32 -> f16 source
//     spans half's range with the edge cases first, half and bfloat16
//     sources are any bits (infinities, NaNs, subnormals);
//   in-place add on a transposed view bf16, x [8192, 16384] (as fp16);
//   in-place scalar add t += 1.5 (sm_inplace_scalar ADD) on a contiguous
//     fp32 [8192, 8192] and fp16 [8192, 16384]: GB/s counts t read and
//     written, the ratio is to a copy of t's bytes; checked bit for bit
//     (fp32 x + 1.5f; fp16 the float sum rounded to half).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "bench_checks.hpp"
#include "stridemem.h"

namespace {

struct Options {
  double mib = 256;
  int iters = 20;
  int warmup = 3;
  const char* json = nullptr;
  bool quick = false;  // smaller tensors: a smoke run, not results
  bool extra = true;   // --no-extra: only the issue's cases
  bool conversion_tiles = false;  // --conversion-tiles: only those cases
};

const sm_device kGpu = {SM_DEVICE_CUDA, 0};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Median milliseconds of one call of f, timed with events on the default
// stream (where stridemem runs unless told otherwise).
template <class F>
double time_ms(const Options& o, F f) {
  for (int i = 0; i < o.warmup; ++i) f();
  std::vector<cudaEvent_t> ev(static_cast<size_t>(o.iters) + 1);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  CK(cudaEventRecord(ev[0], nullptr));
  for (int i = 0; i < o.iters; ++i) {
    f();
    CK(cudaEventRecord(ev[static_cast<size_t>(i) + 1], nullptr));
  }
  CK(cudaEventSynchronize(ev.back()));
  std::vector<double> ms;
  for (int i = 0; i < o.iters; ++i) {
    float t = 0;
    CK(cudaEventElapsedTime(&t, ev[static_cast<size_t>(i)], ev[static_cast<size_t>(i) + 1]));
    ms.push_back(t);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return median(ms);
}

// GB/s of a plain device-to-device copy of `bytes` bytes (2 * bytes moved),
// cached per size.
double copy_gbps(const Options& o, size_t bytes) {
  static std::vector<std::pair<size_t, double>> cache;
  for (auto& c : cache)
    if (c.first == bytes) return c.second;
  void *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  const double ms = time_ms(o, [&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, nullptr)); });
  CK(cudaFree(a));
  CK(cudaFree(b));
  const double g = 2.0 * static_cast<double>(bytes) / (ms * 1e6);
  cache.push_back({bytes, g});
  return g;
}

uint64_t g_rng = 0x9E3779B97F4A7C15ull;
uint64_t next_rand() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

// A GPU tensor of random bits (finite floats: the sign and the top exponent
// bit cleared, unless any_bits; bools 0 or 1), with its host copy for checks.
sm_tensor random_tensor(const std::vector<int64_t>& shape, sm_dtype dt, std::vector<uint8_t>* host,
                        bool any_bits = false) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const size_t es = sm_dtype_size(dt);
  host->resize(static_cast<size_t>(n) * es);
  uint64_t* w = reinterpret_cast<uint64_t*>(host->data());
  for (size_t i = 0; i < host->size() / 8; ++i) w[i] = next_rand();
  for (size_t i = host->size() / 8 * 8; i < host->size(); ++i) (*host)[i] = static_cast<uint8_t>(next_rand());
  if (dt == SM_FLOAT32 && !any_bits)
    for (size_t i = 0; i < host->size(); i += 4) (*host)[i + 3] &= 0x3F;
  if ((dt == SM_FLOAT16 || dt == SM_BFLOAT16) && !any_bits)
    for (size_t i = 0; i < host->size(); i += 2) (*host)[i + 1] &= 0x3F;
  if (dt == SM_BOOL)
    for (auto& b : *host) b &= 1;
  sm_tensor t = nullptr;
  SK(sm_from_host(host->data(), shape.data(), static_cast<int32_t>(shape.size()), dt, kGpu, &t));
  return t;
}

std::vector<uint8_t> to_host(sm_tensor t) {
  int64_t nb = 0;
  SK(sm_nbytes(t, &nb));
  std::vector<uint8_t> v(static_cast<size_t>(nb));
  SK(sm_copy_to_host(t, v.data(), v.size()));
  return v;
}

struct Case {
  std::string name, kind, dtype;
  std::vector<int64_t> shape, perm, src_shape;
  std::string src_dtype;
  double gbps = 0, copy = 0, ratio = 0;
  bool checked = false;
  bool is_permutation = false;
  bool is_2d_fp16 = false;
  // Cases added after the issue's list: measured and checked, but outside
  // its targets (printed under their own heading; "extra" in the JSON).
  bool extra = false;
  double scalar = 0;  // scalar_add: t += scalar
  // index_select: out = index_select(src [src_shape], dim, index of
  // num_indices random values in [0, src_shape[dim]) of index_dtype);
  // shape is the result's. ms: the median time of one call.
  int dim = -1;
  int64_t num_indices = 0;
  std::string index_dtype;
  double ms = 0;
};

std::string dims(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// out = contiguous(permute(x, perm)); checks 4096 random elements.
void run_permute(const Options& o, Case& c, sm_dtype dt) {
  std::vector<uint8_t> hx;
  sm_tensor x = random_tensor(c.shape, dt, &hx);
  const int nd = static_cast<int>(c.shape.size());
  std::vector<int32_t> perm(c.perm.begin(), c.perm.end());
  sm_tensor v = nullptr;
  SK(sm_permute(x, perm.data(), nd, &v));
  int64_t nbytes = 0;
  SK(sm_nbytes(x, &nbytes));
  const double ms = time_ms(o, [&] {
    sm_tensor out = nullptr;
    SK(sm_contiguous(v, SM_CONTIGUOUS, &out, nullptr));
    SK(sm_tensor_release(out));
  });
  c.gbps = 2.0 * static_cast<double>(nbytes) / (ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>(nbytes));
  c.ratio = c.gbps / c.copy;
  // check
  sm_tensor out = nullptr;
  SK(sm_contiguous(v, SM_CONTIGUOUS, &out, nullptr));
  const std::vector<uint8_t> hy = to_host(out);
  std::vector<int64_t> vs(static_cast<size_t>(nd)), vst(static_cast<size_t>(nd));
  SK(sm_shape(v, vs.data(), nd));
  SK(sm_strides(v, vst.data(), nd));
  const size_t es = sm_dtype_size(dt);
  const int64_t n = static_cast<int64_t>(hy.size() / es);
  bool ok = true;
  for (int k = 0; k < 4096 && ok; ++k) {
    int64_t lin = static_cast<int64_t>(next_rand() % static_cast<uint64_t>(n)), rem = lin, src = 0;
    for (int d = nd - 1; d >= 0; --d) {
      src += (rem % vs[static_cast<size_t>(d)]) * vst[static_cast<size_t>(d)];
      rem /= vs[static_cast<size_t>(d)];
    }
    ok = std::memcmp(&hy[static_cast<size_t>(lin) * es], &hx[static_cast<size_t>(src) * es], es) == 0;
  }
  c.checked = ok;
  SK(sm_tensor_release(out));
  SK(sm_tensor_release(v));
  SK(sm_tensor_release(x));
}

// copy_into(dst, src) with src broadcast along rows (dst [R, C], src [1, C]).
void run_copy_broadcast(const Options& o, Case& c, sm_dtype dt) {
  std::vector<uint8_t> hs;
  sm_tensor src = random_tensor(c.src_shape, dt, &hs);
  sm_tensor dst = nullptr;
  SK(sm_empty(c.shape.data(), static_cast<int32_t>(c.shape.size()), dt, kGpu, &dst));
  int64_t db = 0, sb = 0;
  SK(sm_nbytes(dst, &db));
  SK(sm_nbytes(src, &sb));
  const double ms = time_ms(o, [&] { SK(sm_copy_into(dst, src)); });
  c.gbps = static_cast<double>(db + sb) / (ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>((db + sb) / 2));
  c.ratio = c.gbps / c.copy;
  const std::vector<uint8_t> hd = to_host(dst);
  bool ok = true;
  for (int k = 0; k < 4096 && ok; ++k) {
    const size_t i = static_cast<size_t>(next_rand() % (hd.size() / static_cast<size_t>(sb)));
    ok = std::memcmp(&hd[i * static_cast<size_t>(sb)], hs.data(), static_cast<size_t>(sb)) == 0;
  }
  c.checked = ok;
  SK(sm_tensor_release(dst));
  SK(sm_tensor_release(src));
}

uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// float -> IEEE half, round to nearest even: subnormal results, values from
// 65520 up (the tie above 65504 rounds to the even 65536) to infinity, NaN to
// a quiet NaN (the check accepts any NaN for a NaN).
uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520: infinity
  if (a >= 0x38800000u)  // >= 2^-14: normal; rebias the exponent by 127 - 15
    return static_cast<uint16_t>(sign | ((a + 0xFFFu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
  if (a < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25: rounds to zero
  // Subnormal result: the value in units of 2^-24 is the 24-bit significand
  // shifted right by 126 - exponent (14..24), rounded to nearest even; a
  // carry into 0x400 is the smallest normal, as it should be.
  const int shift = 126 - static_cast<int>(a >> 23);
  const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

// IEEE half -> float bits, exactly (subnormals, infinities, NaN payloads).
uint32_t f16_to_f32_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 31) return sign | 0x7F800000u | (m << 13);
  if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
  const float f = std::ldexp(static_cast<float>(m), -24);  // exact: a normal float
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return sign | u;
}

bool is_nan_bits(uint32_t b, sm_dtype dt) {
  if (dt == SM_FLOAT32) return (b & 0x7FFFFFFFu) > 0x7F800000u;
  if (dt == SM_FLOAT16) return (b & 0x7FFFu) > 0x7C00u;
  return (b & 0x7FFFu) > 0x7F80u;  // bfloat16
}

// The bits copy_into must write for one element at p converted from -> to
// (the pairs the benchmark runs; anything else exits).
uint32_t convert_bits(const uint8_t* p, sm_dtype from, sm_dtype to) {
  if (from == SM_FLOAT32) {
    float f;
    std::memcpy(&f, p, 4);
    if (to == SM_BFLOAT16) return f32_to_bf16(f);
    if (to == SM_FLOAT16) return f32_to_f16(f);
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (to == SM_FLOAT32 && from == SM_FLOAT16) return f16_to_f32_bits(h);
  if (to == SM_FLOAT32 && from == SM_BFLOAT16) return static_cast<uint32_t>(h) << 16;
  std::fprintf(stderr, "convert_bits: no host model for this pair\n");
  std::exit(2);
}

// A float32 tensor for the f32 -> f16 check: random signs and significands
// with exponents from 2^-27 to 2^18 (zero, subnormal, normal and overflowing
// half results), and the first 16 elements the edge cases: infinities, NaNs,
// the largest half and the ties around it, the subnormal ties.
sm_tensor f16_range_f32_tensor(const std::vector<int64_t>& shape, std::vector<uint8_t>* host) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  host->resize(static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = next_rand();
    const uint32_t u = static_cast<uint32_t>(r & 0x807FFFFFu) | static_cast<uint32_t>(100 + (r >> 32) % 46) << 23;
    std::memcpy(&(*host)[static_cast<size_t>(i) * 4], &u, 4);
  }
  const uint32_t edge[16] = {
      0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFA00001u,  // +-inf, NaNs (quiet, signalling)
      0x477FE000u, 0x477FF000u, 0x477FEFFFu, 0xC77FF001u,  // 65504, 65520 (tie: inf), below, -above
      0x33000000u, 0x33400000u, 0x33C00000u, 0x387FE000u,  // 2^-25 (tie: 0), 1.5*2^-25, 1.5*2^-24 (tie: 2^-23), tie below 2^-14
      0x38800000u, 0x00000001u, 0x80000000u, 0x3F801000u,  // 2^-14, float subnormal, -0, tie at 1 + 2^-11
  };
  for (int64_t i = 0; i < n && i < 16; ++i) std::memcpy(&(*host)[static_cast<size_t>(i) * 4], &edge[i], 4);
  sm_tensor t = nullptr;
  SK(sm_from_host(host->data(), shape.data(), static_cast<int32_t>(shape.size()), SM_FLOAT32, kGpu, &t));
  return t;
}

// copy_into(dst, src), both [R, C], dst of dtype to, src of dtype from.
// Checks the first 64 elements and 4096 random ones bit for bit against the
// host model (a NaN may come out as any NaN). The f32 -> bf16 source is
// finite and below 2 (random_tensor's default); the f32 -> f16 source is
// f16_range_f32_tensor's; half and bfloat16 sources are any bits at all.
void run_copy_convert(const Options& o, Case& c, sm_dtype to, sm_dtype from) {
  std::vector<uint8_t> hs;
  sm_tensor src = from == SM_FLOAT32 && to == SM_FLOAT16 ? f16_range_f32_tensor(c.shape, &hs)
                                                         : random_tensor(c.shape, from, &hs, from != SM_FLOAT32);
  sm_tensor dst = nullptr;
  SK(sm_empty(c.shape.data(), static_cast<int32_t>(c.shape.size()), to, kGpu, &dst));
  int64_t db = 0, sb = 0;
  SK(sm_nbytes(dst, &db));
  SK(sm_nbytes(src, &sb));
  const double ms = time_ms(o, [&] { SK(sm_copy_into(dst, src)); });
  c.gbps = static_cast<double>(db + sb) / (ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>((db + sb) / 2));
  c.ratio = c.gbps / c.copy;
  const std::vector<uint8_t> hd = to_host(dst);
  const size_t es = sm_dtype_size(from), ed = sm_dtype_size(to), n = hd.size() / ed;
  bool ok = true;
  for (int k = 0; k < 64 + 4096 && ok; ++k) {
    const size_t i = k < 64 ? static_cast<size_t>(k) % n : static_cast<size_t>(next_rand() % n);
    const uint32_t want = convert_bits(&hs[i * es], from, to);
    uint32_t got = 0;
    std::memcpy(&got, &hd[i * ed], ed);  // little-endian: the low ed bytes
    ok = got == want || (is_nan_bits(want, to) && is_nan_bits(got, to));
    if (!ok)
      std::fprintf(stderr, "%s: element %zu: got 0x%x, want 0x%x\n", c.name.c_str(), i, got, want);
  }
  c.checked = ok;
  SK(sm_tensor_release(dst));
  SK(sm_tensor_release(src));
}

float to_f32(const uint8_t* p, sm_dtype dt) {
  if (dt == SM_FLOAT32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (dt == SM_BFLOAT16) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  float v = e == 0 ? std::ldexp(static_cast<float>(m), -24) : std::ldexp(static_cast<float>(1024 + m), e - 25);
  return (h & 0x8000) ? -v : v;
}

// copy_into(dst, permute(x, perm)), x [shape] of dtype from, dst dense in the
// permuted shape of dtype to. c.copy: the GB/s of a device copy of the
// larger side's bytes; c.ratio: that copy's time over this case's.
void run_permute_convert(const Options& o, Case& c, sm_dtype to, sm_dtype from) {
  std::vector<uint8_t> hx;
  sm_tensor x = from == SM_FLOAT32 && to == SM_FLOAT16 ? f16_range_f32_tensor(c.shape, &hx)
                                                       : random_tensor(c.shape, from, &hx, from != SM_FLOAT32);
  const int nd = static_cast<int>(c.shape.size());
  std::vector<int32_t> perm(c.perm.begin(), c.perm.end());
  sm_tensor v = nullptr;
  SK(sm_permute(x, perm.data(), nd, &v));
  std::vector<int64_t> vs(static_cast<size_t>(nd)), vst(static_cast<size_t>(nd));
  SK(sm_shape(v, vs.data(), nd));
  SK(sm_strides(v, vst.data(), nd));
  sm_tensor dst = nullptr;
  SK(sm_empty(vs.data(), nd, to, kGpu, &dst));
  int64_t db = 0, sb = 0;
  SK(sm_nbytes(dst, &db));
  SK(sm_nbytes(x, &sb));
  const double ms = time_ms(o, [&] { SK(sm_copy_into(dst, v)); });
  const int64_t larger = std::max(db, sb);
  c.gbps = static_cast<double>(db + sb) / (ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>(larger));
  c.ratio = 2.0 * static_cast<double>(larger) / (c.copy * 1e6) / ms;
  const std::vector<uint8_t> hd = to_host(dst);
  const size_t es = sm_dtype_size(from), ed = sm_dtype_size(to);
  const int64_t n = static_cast<int64_t>(hd.size() / ed);
  bool ok = true;
  for (int k = 0; k < 4096 && ok; ++k) {
    const int64_t lin = static_cast<int64_t>(next_rand() % static_cast<uint64_t>(n));
    int64_t rem = lin, src = 0;
    for (int d = nd - 1; d >= 0; --d) {
      src += (rem % vs[static_cast<size_t>(d)]) * vst[static_cast<size_t>(d)];
      rem /= vs[static_cast<size_t>(d)];
    }
    const uint32_t want = convert_bits(&hx[static_cast<size_t>(src) * es], from, to);
    uint32_t got = 0;
    std::memcpy(&got, &hd[static_cast<size_t>(lin) * ed], ed);  // little-endian: the low ed bytes
    ok = got == want || (is_nan_bits(want, to) && is_nan_bits(got, to));
    if (!ok)
      std::fprintf(stderr, "%s: element %lld: got 0x%x, want 0x%x\n", c.name.c_str(),
                   static_cast<long long>(lin), got, want);
  }
  c.checked = ok;
  SK(sm_tensor_release(dst));
  SK(sm_tensor_release(v));
  SK(sm_tensor_release(x));
}

// x.T += y: x [R, C] row-major, y [C, R] row-major.
void run_add_transposed(const Options& o, Case& c, sm_dtype dt) {
  std::vector<uint8_t> hx, hy;
  sm_tensor x = random_tensor(c.shape, dt, &hx);
  const std::vector<int64_t> yshape = {c.shape[1], c.shape[0]};
  sm_tensor y = random_tensor(yshape, dt, &hy);
  sm_tensor xt = nullptr;
  SK(sm_transpose(x, 0, 1, &xt));
  int64_t nb = 0;
  SK(sm_nbytes(x, &nb));
  // Check first, on the untouched input: one add.
  SK(sm_inplace_tensor(xt, SM_OP_ADD, y, 1.0));
  const std::vector<uint8_t> hr = to_host(x);
  const size_t es = sm_dtype_size(dt);
  const int64_t R = c.shape[0], C = c.shape[1];
  bool ok = true;
  for (int k = 0; k < 4096 && ok; ++k) {
    const int64_t r = static_cast<int64_t>(next_rand() % static_cast<uint64_t>(R));
    const int64_t col = static_cast<int64_t>(next_rand() % static_cast<uint64_t>(C));
    const size_t xi = static_cast<size_t>(r * C + col), yi = static_cast<size_t>(col * R + r);
    const float want = to_f32(&hx[xi * es], dt) + to_f32(&hy[yi * es], dt);
    const float got = to_f32(&hr[xi * es], dt);
    ok = std::fabs(got - want) <= 1e-2f * std::max(1.0f, std::fabs(want));
  }
  c.checked = ok;
  const double ms = time_ms(o, [&] { SK(sm_inplace_tensor(xt, SM_OP_ADD, y, 1.0)); });
  c.gbps = 3.0 * static_cast<double>(nb) / (ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>(3 * nb / 2));
  c.ratio = c.gbps / c.copy;
  SK(sm_tensor_release(xt));
  SK(sm_tensor_release(x));
  SK(sm_tensor_release(y));
}

// t += c.scalar on a contiguous tensor (sm_inplace_scalar ADD: t = t + a).
// GB/s counts t read and written; the ratio is to a device copy of t's
// bytes. Checked first, on the untouched input, after one add: fp32 is
// x + a in float, fp16 the sum in float rounded to half (RNE), bit for bit.
void run_scalar_add(const Options& o, Case& c, sm_dtype dt) {
  std::vector<uint8_t> hx;
  sm_tensor x = random_tensor(c.shape, dt, &hx);
  int64_t nb = 0;
  SK(sm_nbytes(x, &nb));
  SK(sm_inplace_scalar(x, SM_OP_ADD, c.scalar, 0.0));
  const std::vector<uint8_t> hr = to_host(x);
  const size_t es = sm_dtype_size(dt), n = hr.size() / es;
  const float a = static_cast<float>(c.scalar);
  bool ok = true;
  for (int k = 0; k < 4096 && ok; ++k) {
    const size_t i = static_cast<size_t>(next_rand() % n);
    uint32_t want = 0, got = 0;
    if (dt == SM_FLOAT32) {
      const float w = to_f32(&hx[i * 4], dt) + a;
      std::memcpy(&want, &w, 4);
    } else {
      want = f32_to_f16(to_f32(&hx[i * 2], dt) + a);
    }
    std::memcpy(&got, &hr[i * es], es);
    ok = got == want;
    if (!ok) std::fprintf(stderr, "%s: element %zu: got 0x%x, want 0x%x\n", c.name.c_str(), i, got, want);
  }
  c.checked = ok;
  const double ms = time_ms(o, [&] { SK(sm_inplace_scalar(x, SM_OP_ADD, c.scalar, 0.0)); });
  c.gbps = 2.0 * static_cast<double>(nb) / (ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>(nb));
  c.ratio = c.gbps / c.copy;
  SK(sm_tensor_release(x));
}

// out = index_select(src, dim, index) with random int64 indices in range
// (uploaded once; each call checks them on the device, as any user's call
// does). GB/s counts the index read, the selected elements read and the
// result written. Checks 4096 random elements of the result against the
// host copy of the source.
void run_index_select(const Options& o, Case& c) {
  std::vector<uint8_t> hs;
  sm_tensor src = random_tensor(c.src_shape, SM_FLOAT32, &hs);
  const int64_t size = c.src_shape[static_cast<size_t>(c.dim)];
  std::vector<int64_t> hi(static_cast<size_t>(c.num_indices));
  for (auto& v : hi) v = static_cast<int64_t>(next_rand() % static_cast<uint64_t>(size));
  sm_tensor idx = nullptr;
  const int64_t ishape[1] = {c.num_indices};
  SK(sm_from_host(hi.data(), ishape, 1, SM_INT64, kGpu, &idx));
  sm_tensor out = nullptr;
  SK(sm_index_select(src, c.dim, idx, &out));
  int64_t ob = 0;
  SK(sm_nbytes(out, &ob));
  const int nd = static_cast<int>(c.src_shape.size());
  c.shape.assign(static_cast<size_t>(nd), 0);
  SK(sm_shape(out, c.shape.data(), nd));
  // Check: the result is row-major [outer, num_indices, inner].
  const std::vector<uint8_t> ho = to_host(out);
  int64_t inner = 1, outer = 1;
  for (int d = c.dim + 1; d < nd; ++d) inner *= c.src_shape[static_cast<size_t>(d)];
  for (int d = 0; d < c.dim; ++d) outer *= c.src_shape[static_cast<size_t>(d)];
  const int64_t n_out = ob / 4;
  bool ok = n_out == outer * c.num_indices * inner;
  for (int k = 0; k < 4096 && ok; ++k) {
    const int64_t lin = static_cast<int64_t>(next_rand() % static_cast<uint64_t>(n_out));
    const int64_t in = lin % inner, i = lin / inner % c.num_indices, ou = lin / inner / c.num_indices;
    const int64_t s = (ou * size + hi[static_cast<size_t>(i)]) * inner + in;
    ok = std::memcmp(&ho[static_cast<size_t>(lin) * 4], &hs[static_cast<size_t>(s) * 4], 4) == 0;
  }
  c.checked = ok;
  SK(sm_tensor_release(out));
  c.ms = time_ms(o, [&] {
    sm_tensor r = nullptr;
    SK(sm_index_select(src, c.dim, idx, &r));
    SK(sm_tensor_release(r));
  });
  const double bytes = 2.0 * static_cast<double>(ob) + 8.0 * static_cast<double>(c.num_indices);
  c.gbps = bytes / (c.ms * 1e6);
  c.copy = copy_gbps(o, static_cast<size_t>(bytes / 2));
  c.ratio = c.gbps / c.copy;
  SK(sm_tensor_release(idx));
  SK(sm_tensor_release(src));
}

struct AllocResult {
  size_t bytes;
  double cached_ns, api_ns, cuda_ns;
};

// Median ns per alloc+free pair: the CUDA caching allocator itself, the full
// public path (sm_empty + sm_tensor_release: handles and storage included),
// and cudaMalloc + cudaFree.
AllocResult bench_alloc(size_t bytes, int pairs) {
  AllocResult r{bytes, 0, 0, 0};
  sm::Allocator& a = sm::backend_for(sm::Device{SM_DEVICE_CUDA, 0}).allocator();
  a.deallocate(a.allocate(bytes));  // warm: the block is cached
  const int batch = 1000;
  std::vector<double> v;
  for (int b = 0; b < pairs / batch; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) a.deallocate(a.allocate(bytes));
    const auto t1 = std::chrono::steady_clock::now();
    v.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
  }
  r.cached_ns = median(v);
  v.clear();
  const int64_t shape[1] = {static_cast<int64_t>(bytes)};
  for (int b = 0; b < pairs / batch; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) {
      sm_tensor t = nullptr;
      SK(sm_empty(shape, 1, SM_UINT8, kGpu, &t));
      SK(sm_tensor_release(t));
    }
    const auto t1 = std::chrono::steady_clock::now();
    v.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
  }
  r.api_ns = median(v);
  v.clear();
  for (int i = 0; i < 200; ++i) {
    void* p = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    CK(cudaMalloc(&p, bytes));
    CK(cudaFree(p));
    const auto t1 = std::chrono::steady_clock::now();
    v.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  r.cuda_ns = median(v);
  return r;
}

void write_json(const char* path, const std::vector<Case>& cases, const std::vector<AllocResult>& al,
                const Options& o) {
  FILE* f = std::fopen(path, "w");
  if (!f) {
    std::perror(path);
    return;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::fprintf(f, "{\n  \"device\": \"%s\", \"iters\": %d, \"mib\": %g,\n  \"cases\": [\n", prop.name,
               o.iters, o.mib);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", \"shape\": %s, "
                 "\"perm\": %s, \"src_shape\": %s, \"src_dtype\": \"%s\", \"gbps\": %.2f, "
                 "\"copy_gbps\": %.2f, \"ratio\": %.4f, \"checked\": %s, \"dim\": %d, "
                 "\"num_indices\": %lld, \"index_dtype\": \"%s\", \"ms\": %.6f, "
                 "\"scalar\": %g, \"extra\": %s}%s\n",
                 c.name.c_str(), c.kind.c_str(), c.dtype.c_str(), dims(c.shape).c_str(),
                 dims(c.perm).c_str(), dims(c.src_shape).c_str(), c.src_dtype.c_str(), c.gbps, c.copy,
                 c.ratio, c.checked ? "true" : "false", c.dim, static_cast<long long>(c.num_indices),
                 c.index_dtype.c_str(), c.ms, c.scalar, c.extra ? "true" : "false",
                 i + 1 < cases.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"allocator\": [\n");
  for (size_t i = 0; i < al.size(); ++i)
    std::fprintf(f, "    {\"bytes\": %zu, \"cached_ns\": %.1f, \"api_ns\": %.1f, \"cuda_ns\": %.1f}%s\n",
                 al[i].bytes, al[i].cached_ns, al[i].api_ns, al[i].cuda_ns, i + 1 < al.size() ? "," : "");
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool mib_given = false, iters_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mib" && i + 1 < argc) o.mib = std::atof(argv[++i]), mib_given = true;
    else if (a == "--iters" && i + 1 < argc) o.iters = std::atoi(argv[++i]), iters_given = true;
    else if (a == "--warmup" && i + 1 < argc) o.warmup = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) o.json = argv[++i];
    else if (a == "--quick") o.quick = true;
    else if (a == "--no-extra") o.extra = false;
    else if (a == "--conversion-tiles") o.conversion_tiles = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--mib 256] [--iters 20] [--warmup 3] [--json FILE] [--quick] [--no-extra]"
                   " [--conversion-tiles]\n",
                   argv[0]);
      return 2;
    }
  }
  // --quick changes the defaults only: gpu-check's sanitizer passes ask for
  // --quick --mib 4 --iters 1 and get that (they got 16 MiB and 5
  // iterations before, four times the data and five times the launches
  // under each tool).
  if (o.quick) {
    if (!mib_given) o.mib = 16;
    if (!iters_given) o.iters = 5;
  }
  int32_t ndev = 0;
  SK(sm_cuda_device_count(&ndev));
  if (ndev == 0) {
    sm_tensor t = nullptr;
    const int64_t one[1] = {1};
    sm_empty(one, 1, SM_FLOAT32, kGpu, &t);
    std::printf("NOT RUN: no usable CUDA device: %s (asked: %g MiB per tensor, median of %d iterations)\n",
                sm_last_error(), o.mib, o.iters);
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (%d SMs), %g MiB per tensor, median of %d iterations\n\n", prop.name,
              prop.multiProcessorCount, o.mib, o.iters);

  // Element counts: `mib` MiB of fp32; fp16 cases double one dim to keep the bytes.
  const double scale = o.mib / 256.0;  // shapes below are for 256 MiB of fp32 (2^26 elements)
  auto sc = [&](int64_t v) { return std::max<int64_t>(1, static_cast<int64_t>(std::llround(v * scale))); };
  if (o.conversion_tiles) {
    struct Conv {
      const char* name;
      sm_dtype to, from;
      std::vector<int64_t> shape, perm;
    };
    const std::vector<int64_t> t2 = {8192, sc(8192)}, nchw = {sc(64), 256, 64, 64};
    const std::vector<Conv> convs = {
        {"2-D transpose f32->f16", SM_FLOAT16, SM_FLOAT32, t2, {1, 0}},
        {"2-D transpose f32->bf16", SM_BFLOAT16, SM_FLOAT32, t2, {1, 0}},
        {"2-D transpose f16->f32", SM_FLOAT32, SM_FLOAT16, t2, {1, 0}},
        {"4-D NCHW->NHWC (0,2,3,1) f32->f16", SM_FLOAT16, SM_FLOAT32, nchw, {0, 2, 3, 1}},
        {"4-D NCHW->NHWC (0,2,3,1) f32->bf16", SM_BFLOAT16, SM_FLOAT32, nchw, {0, 2, 3, 1}},
        {"4-D NCHW->NHWC (0,2,3,1) f16->f32", SM_FLOAT32, SM_FLOAT16, nchw, {0, 2, 3, 1}},
    };
    std::printf("%-44s %-22s %9s %16s %7s %s\n", "converting permutation", "source shape", "GB/s",
                "copy(larger) GB/s", "ratio", "check");
    bool ok = true;
    for (const Conv& v : convs) {
      Case c;
      c.name = v.name;
      c.shape = v.shape;
      c.perm = v.perm;
      run_permute_convert(o, c, v.to, v.from);
      ok = ok && c.checked;
      std::printf("%-44s %-22s %9.1f %16.1f %7.3f %s\n", c.name.c_str(), dims(c.shape).c_str(), c.gbps,
                  c.copy, c.ratio, c.checked ? "ok" : "WRONG");
    }
    SK(sm_empty_cache(kGpu));
    return ok ? 0 : 1;
  }
  struct Perm {
    const char* name;
    std::vector<int64_t> shape, perm;
  };
  const std::vector<Perm> perms = {
      {"2-D transpose", {8192, sc(8192)}, {1, 0}},
      {"3-D (0,2,1) batched transpose", {64, sc(1024), 1024}, {0, 2, 1}},
      {"3-D (2,1,0)", {256, sc(256), 1024}, {2, 1, 0}},
      {"3-D (1,0,2) inner kept", {1024, sc(256), 256}, {1, 0, 2}},
      {"4-D NCHW->NHWC (0,2,3,1)", {sc(64), 256, 64, 64}, {0, 2, 3, 1}},
      {"4-D NHWC->NCHW (0,3,1,2)", {sc(64), 64, 64, 256}, {0, 3, 1, 2}},
      {"4-D (3,2,1,0)", {sc(32), 64, 128, 256}, {3, 2, 1, 0}},
      {"4-D (0,2,1,3) heads, inner kept", {sc(64), 512, 16, 128}, {0, 2, 1, 3}},
      {"4-D (1,0,2,3) inner kept", {sc(64), 64, 128, 128}, {1, 0, 2, 3}},
      {"5-D NCDHW->NDHWC (0,2,3,4,1)", {sc(8), 64, 32, 64, 64}, {0, 2, 3, 4, 1}},
      {"5-D (4,3,2,1,0)", {sc(16), 32, 32, 64, 64}, {4, 3, 2, 1, 0}},
      {"5-D (0,1,3,2,4) inner kept", {sc(16), 32, 64, 64, 32}, {0, 1, 3, 2, 4}},
  };
  std::vector<Case> cases;
  for (sm_dtype dt : {SM_FLOAT32, SM_FLOAT16}) {
    for (const Perm& p : perms) {
      Case c;
      c.name = std::string(p.name) + (dt == SM_FLOAT32 ? " fp32" : " fp16");
      c.kind = "permute";
      c.dtype = dt == SM_FLOAT32 ? "float32" : "float16";
      c.shape = p.shape;
      if (dt == SM_FLOAT16) c.shape[0] *= 2;  // same bytes as fp32
      c.perm = p.perm;
      c.is_permutation = true;
      c.is_2d_fp16 = dt == SM_FLOAT16 && p.shape.size() == 2;
      run_permute(o, c, dt);
      cases.push_back(c);
    }
  }
  {
    Case c;
    c.name = "copy_into broadcast [1,C]->[R,C] fp32";
    c.kind = "copy_broadcast";
    c.dtype = c.src_dtype = "float32";
    c.shape = {sc(8192), 8192};
    c.src_shape = {1, 8192};
    run_copy_broadcast(o, c, SM_FLOAT32);
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "copy_into f32->bf16";
    c.kind = "copy_convert";
    c.dtype = "bfloat16";
    c.src_dtype = "float32";
    c.shape = {sc(8192), 8192};
    c.src_shape = c.shape;
    run_copy_convert(o, c, SM_BFLOAT16, SM_FLOAT32);
    cases.push_back(c);
  }
  for (sm_dtype dt : {SM_FLOAT32, SM_FLOAT16}) {
    Case c;
    c.name = std::string("in-place add on a transposed view ") + (dt == SM_FLOAT32 ? "fp32" : "fp16");
    c.kind = "add_transposed";
    c.dtype = c.src_dtype = dt == SM_FLOAT32 ? "float32" : "float16";
    c.shape = {sc(8192), dt == SM_FLOAT32 ? 8192 : 16384};
    c.src_shape = {c.shape[1], c.shape[0]};
    run_add_transposed(o, c, dt);
    cases.push_back(c);
  }

  // index_select (the issue: 10^6 scalar indices within 2x of
  // torch.index_select; the comparison is bench/torch_cupy_bench.py). The
  // issue names the sizes, so --mib does not scale them; --quick takes a tenth.
  {
    const int64_t k = o.quick ? 10 : 1;
    struct Gather {
      const char* what;
      std::vector<int64_t> src_shape;
      int64_t n;
    };
    const std::vector<Gather> gathers = {
        {"1-D", {10000000 / k}, 1000000 / k},
        {"1-D", {10000000 / k}, 10000000 / k},
        {"rows of 256", {1000000 / k, 256}, 100000 / k},
    };
    for (const Gather& g : gathers) {
      Case c;
      c.name = std::string("index_select ") + g.what + ", " + std::to_string(g.n) + " int64 idx";
      c.kind = "index_select";
      c.dtype = c.src_dtype = "float32";
      c.index_dtype = "int64";
      c.src_shape = g.src_shape;
      c.dim = 0;
      c.num_indices = g.n;
      run_index_select(o, c);
      cases.push_back(c);
    }
  }

  // Extra cases, outside the issue's targets (is_permutation false, extra
  // true): other dtypes for the permutations (same bytes as the fp32 cases),
  // more conversions, bf16 in the transposed add, a scalar in-place add.
  if (o.extra) {
    struct Extra {
      const char* name;
      sm_dtype dt;
      const char* dtype;
      std::vector<int64_t> shape, perm;
    };
    // The image case: [8, 3, H, W] uint8 with H = W and about `mib` MiB.
    const int64_t hw = std::max<int64_t>(1, std::llround(std::sqrt(o.mib * 1048576.0 / 24.0)));
    const std::vector<Extra> extras = {
        {"2-D transpose uint8", SM_UINT8, "uint8", {4 * 8192, sc(8192)}, {1, 0}},
        {"4-D NCHW->NHWC (0,2,3,1) uint8", SM_UINT8, "uint8", {4 * sc(64), 256, 64, 64}, {0, 2, 3, 1}},
        {"2-D transpose bool", SM_BOOL, "bool", {4 * 8192, sc(8192)}, {1, 0}},
        {"4-D NCHW->NHWC (0,2,3,1) bool", SM_BOOL, "bool", {4 * sc(64), 256, 64, 64}, {0, 2, 3, 1}},
        {"image [8,3,H,W] NCHW->NHWC uint8", SM_UINT8, "uint8", {8, 3, hw, hw}, {0, 2, 3, 1}},
        {"2-D transpose bf16", SM_BFLOAT16, "bfloat16", {2 * 8192, sc(8192)}, {1, 0}},
    };
    for (const Extra& e : extras) {
      Case c;
      c.name = e.name;
      c.kind = "permute";
      c.dtype = e.dtype;
      c.shape = e.shape;
      c.perm = e.perm;
      c.extra = true;
      run_permute(o, c, e.dt);
      cases.push_back(c);
    }
    struct Conv {
      const char* name;
      sm_dtype to, from;
      const char *dtype, *src_dtype;
    };
    const std::vector<Conv> convs = {
        {"copy_into f32->f16", SM_FLOAT16, SM_FLOAT32, "float16", "float32"},
        {"copy_into f16->f32", SM_FLOAT32, SM_FLOAT16, "float32", "float16"},
        {"copy_into bf16->f32", SM_FLOAT32, SM_BFLOAT16, "float32", "bfloat16"},
    };
    for (const Conv& v : convs) {
      Case c;
      c.name = v.name;
      c.kind = "copy_convert";
      c.dtype = v.dtype;
      c.src_dtype = v.src_dtype;
      c.shape = {sc(8192), 8192};
      c.src_shape = c.shape;
      c.extra = true;
      run_copy_convert(o, c, v.to, v.from);
      cases.push_back(c);
    }
    {
      Case c;
      c.name = "in-place add on a transposed view bf16";
      c.kind = "add_transposed";
      c.dtype = c.src_dtype = "bfloat16";
      c.shape = {sc(8192), 16384};
      c.src_shape = {c.shape[1], c.shape[0]};
      c.extra = true;
      run_add_transposed(o, c, SM_BFLOAT16);
      cases.push_back(c);
    }
    for (sm_dtype dt : {SM_FLOAT32, SM_FLOAT16}) {
      Case c;
      c.name = std::string("in-place scalar add t += 1.5 ") + (dt == SM_FLOAT32 ? "fp32" : "fp16");
      c.kind = "scalar_add";
      c.dtype = dt == SM_FLOAT32 ? "float32" : "float16";
      c.shape = {sc(8192), dt == SM_FLOAT32 ? 8192 : 16384};
      c.scalar = 1.5;
      c.extra = true;
      run_scalar_add(o, c, dt);
      cases.push_back(c);
    }
  }

  std::printf("%-44s %-30s %9s %9s %7s %-5s %s\n", "case", "shape", "GB/s", "copy GB/s", "ratio", "check",
              "us/call");
  for (bool extra : {false, true}) {
    if (extra && o.extra) std::printf("\nextra cases (not in the issue's targets):\n");
    for (const Case& c : cases) {
      if (c.extra != extra) continue;
      std::printf("%-44s %-30s %9.1f %9.1f %7.3f %-5s", c.name.c_str(), dims(c.shape).c_str(), c.gbps,
                  c.copy, c.ratio, c.checked ? "ok" : "WRONG");
      if (c.ms > 0) std::printf(" %.1f", c.ms * 1000.0);
      std::printf("\n");
    }
  }

  std::vector<AllocResult> al;
  for (size_t bytes : {size_t(4096), size_t(1) << 20, size_t(64) << 20}) al.push_back(bench_alloc(bytes, o.quick ? 20000 : 200000));
  std::printf("\n%-12s %16s %22s %18s %8s\n", "alloc size", "cached pair ns", "sm_empty+release ns",
              "cudaMalloc+Free ns", "speedup");
  for (const AllocResult& r : al)
    std::printf("%-12zu %16.1f %22.1f %18.1f %7.0fx\n", r.bytes, r.cached_ns, r.api_ns, r.cuda_ns,
                r.cuda_ns / r.cached_ns);

  // Targets (issue 3); the PyTorch comparisons are in bench/torch_cupy_bench.py.
  double log_sum = 0, worst = 1e9;
  int np = 0;
  bool all_checked = true, extra_checked = true;
  int n_extra = 0;
  for (const Case& c : cases) {
    if (c.extra) {
      extra_checked = extra_checked && c.checked;
      ++n_extra;
      continue;
    }
    all_checked = all_checked && c.checked;
    if (!c.is_permutation) continue;
    log_sum += std::log(c.ratio);
    worst = std::min(worst, c.ratio);
    ++np;
  }
  const double geo = std::exp(log_sum / np);
  bool alloc_fast = true, alloc_50x = true;
  for (const AllocResult& r : al) {
    alloc_fast = alloc_fast && r.cached_ns <= 1000.0;
    alloc_50x = alloc_50x && r.cuda_ns >= 50.0 * r.cached_ns;
  }
  std::printf("\ntargets%s:\n", o.quick ? " (quick run: sizes too small to count)" : "");
  std::printf("  %s every permutation >= 80%% of device-copy bandwidth (worst %.1f%%)\n",
              worst >= 0.8 ? "PASS" : "FAIL", 100 * worst);
  std::printf("  %s geometric mean of permutations >= 90%% (%.1f%% over %d cases)\n",
              geo >= 0.9 ? "PASS" : "FAIL", 100 * geo, np);
  std::printf("  %s cached alloc+free <= 1 us\n", alloc_fast ? "PASS" : "FAIL");
  std::printf("  %s cached alloc+free >= 50x faster than cudaMalloc+cudaFree\n", alloc_50x ? "PASS" : "FAIL");
  std::printf("  %s every output spot-checked against its input\n", all_checked ? "PASS" : "FAIL");
  if (o.extra)
    std::printf("extra cases (not in the issue's targets): %s\n",
                extra_checked ? ("all " + std::to_string(n_extra) + " outputs spot-checked ok").c_str()
                              : "some output WRONG (see the table)");
  if (o.json) write_json(o.json, cases, al, o);
  // Every tensor is released by now: give the cached blocks back, so a leak
  // check (compute-sanitizer --leak-check full) sees only real leaks.
  SK(sm_empty_cache(kGpu));
  return all_checked && extra_checked ? 0 : 1;
}
