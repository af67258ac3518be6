// Tile-transpose variants, measured side by side against a device copy: the
// experiment behind the layout of src/backend/cuda/kernel_common.cuh's
// transpose kernel (bench/RESULTS.md, CUDA section). Standalone (no library):
// one 32 x BY block per tile of TI = 32*P (source-contiguous i) by TJ
// (destination-contiguous j) elements, every load of a thread issued into
// registers before any is stored into the shared tile; tile order j-fastest,
// i-fastest or 8x8 supertiles; one tile per block or a persistent grid.
// Outputs are spot-checked (100000 random elements) against the input.
//
// Then the library's own kernel (src/backend/cuda/kernel_common.cuh, planned
// by launch_plan as the library plans it), one factor changed at a time:
// its 2-byte tiles with the 4-byte packed accesses the plan picks, without
// them (2-byte accesses, as the lab kernel above), or packed on one side
// only; and its in-place add on a transposed view (f16, bf16, f32) reading
// the destination all rows first (the library's form) or row by row (a copy
// of the library's kernel with that one change, below). Every ratio
// is printed against both references: the lab's float4 copy kernel and
// cudaMemcpyAsync (the one bench_cuda_bench divides by).
//
//   bench_transpose_variants      (prints NOT RUN and exits 0 without a GPU)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include <algorithm>

#include "backend/cuda/kernel_common.cuh"
#include "backend/cuda/launch_plan.hpp"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

// src is [SJ][SI] row-major (i fastest), dst is [SI][SJ] (j fastest).
// Load: a warp reads source row j along i, P elements per thread (P*32 = TI).
// Store: a warp writes destination row i along j, thread tx at j = tx + 32*q.
template <typename T, int P, int TJ, int BY, int ORDER>
__global__ void __launch_bounds__(32 * BY) tk(T* dst, const T* src, int SI, int SJ, int tiles_i, int tiles_j, int total) {
  constexpr int TI = 32 * P;
  __shared__ T tile[TJ][TI + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int t = blockIdx.x; t < total; t += gridDim.x) {
    int ti, tj;
    if (ORDER == 0) { tj = t % tiles_j; ti = t / tiles_j; }
    else if (ORDER == 1) { ti = t % tiles_i; tj = t / tiles_i; }
    else { // 8x8 supertiles, j fastest inside
      const int G = 8;
      int sj_tiles = (tiles_j + G - 1) / G;
      int st = t / (G * G), in = t % (G * G);
      int sti = st / sj_tiles, stj = st % sj_tiles;
      ti = sti * G + in / G; tj = stj * G + in % G;
      if (ti >= tiles_i || tj >= tiles_j) continue;
    }
    const int i0 = ti * TI, j0 = tj * TJ;
    constexpr int R = TJ / BY;
    T v[R][P];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      const int j = j0 + ty + rr * BY;
      const int ib = i0 + tx * P;
#pragma unroll
      for (int q = 0; q < P; ++q) v[rr][q] = (j < SJ && ib + q < SI) ? src[(size_t)j * SI + ib + q] : T();
    }
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int q = 0; q < P; ++q) tile[ty + rr * BY][tx * P + q] = v[rr][q];
    __syncthreads();
    constexpr int RS = TI / BY;  // i rows per thread in store
#pragma unroll
    for (int rr = 0; rr < RS; ++rr) {
      const int r = ty + rr * BY;
      const int i = i0 + r;
#pragma unroll
      for (int q = 0; q < TJ / 32; ++q) {
        const int j = j0 + tx + 32 * q;
        if (i < SI && j < SJ) dst[(size_t)i * SJ + j] = tile[tx + 32 * q][r];
      }
    }
    __syncthreads();
  }
}

__global__ void copyk(float4* d, const float4* s, size_t n) {
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) d[k] = s[k];
}

template <typename T>
__global__ void fillk(T* p, size_t n) { for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) p[k] = (T)(k * 2654435761u); }

static float time_fn(const std::function<void()>& f, int iters) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int w = 0; w < 3; ++w) f();
  std::vector<float> ms;
  for (int k = 0; k < iters; ++k) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float m; CK(cudaEventElapsedTime(&m, a, b)); ms.push_back(m); }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
static float timeit(void (*f)(void*), void* ctx, int iters) { return time_fn([&] { f(ctx); }, iters); }

struct Ctx { void* d; const void* s; int SI, SJ; size_t bytes; int grid_cap; float memcpy_ms; };
template <typename T, int P, int TJ, int BY, int ORDER>
void run(void* c_) {
  Ctx* c = (Ctx*)c_;
  constexpr int TI = 32 * P;
  int ti = (c->SI + TI - 1) / TI, tj = (c->SJ + TJ - 1) / TJ;
  int total = ti * tj;
  if (ORDER == 2) { int G = 8; total = ((ti + G - 1) / G) * ((tj + G - 1) / G) * G * G; }
  int grid = c->grid_cap ? std::min(total, c->grid_cap) : total;
  tk<T, P, TJ, BY, ORDER><<<grid, dim3(32, BY)>>>((T*)c->d, (const T*)c->s, c->SI, c->SJ, ti, tj, total);
}
void runcopy(void* c_) { Ctx* c = (Ctx*)c_; size_t n = c->bytes / 16; copyk<<<132 * 16, 256>>>((float4*)c->d, (const float4*)c->s, n); }

template <typename T>
bool verify(const T* hd, const T* hs, int SI, int SJ) {
  for (int k = 0; k < 100000; ++k) { size_t i = (size_t)rand() % SI, j = (size_t)rand() % SJ; if (hd[i * SJ + j] != hs[j * SI + i]) return false; }
  return true;
}

template <typename T, int P, int TJ, int BY, int ORDER>
void variant(const char* name, Ctx& c, float copy_ms, int grid_cap, std::vector<T>& hs, std::vector<T>& hd) {
  c.grid_cap = grid_cap;
  CK(cudaMemset(c.d, 0xff, c.bytes));
  run<T, P, TJ, BY, ORDER>(&c); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hd.data(), c.d, c.bytes, cudaMemcpyDeviceToHost));
  bool ok = verify(hd.data(), hs.data(), c.SI, c.SJ);
  float ms = timeit(run<T, P, TJ, BY, ORDER>, &c, 30);
  printf("%-44s grid %-7d %8.3f ms  %7.1f GB/s  ratio %.3f  vs memcpy %.3f %s\n", name, grid_cap, ms, 2.0 * c.bytes / ms / 1e6, copy_ms / ms, c.memcpy_ms / ms, ok ? "ok" : "WRONG");
}

// ---- the library's kernel ----------------------------------------------------------

// dst [SI][SJ] = transpose of src [SJ][SI], planned as the library plans it.
sm::KernelPlan library_copy_plan(void* d, const void* s, int SI, int SJ, sm::DType dt) {
  sm::TensorDesc dd, sd;
  dd.data = d; dd.dtype = dt; dd.ndim = 2;
  dd.sizes[0] = SI; dd.sizes[1] = SJ; dd.strides[0] = SJ; dd.strides[1] = 1;
  sd = dd;
  sd.data = const_cast<void*>(s); sd.strides[0] = 1; sd.strides[1] = SI;
  return sm::plan_copy(sm::plan_copy(dd, sd, sm::PlanTarget::Cuda), sm::DeviceProps{});
}

template <int E, typename Epi>
void launch_library(const sm::KernelPlan& p, void* d, const void* s, const Epi& epi) {
  sm::cuda::launch_transpose<E>(p, static_cast<char*>(d) + p.byte_offset[0],
                                static_cast<const char*>(s) + p.byte_offset[1], epi, 0);
}

// The library's transpose kernel with one change, for in-place ops: the
// store phase reads each destination row just before writing it (one
// destination row in flight per thread) instead of all of a thread's rows
// first. Same dtype on both sides.
template <int E, typename Index, typename Epi>
__global__ void __launch_bounds__(sm::kTransposeBlockX * sm::kTransposeBlockY)
    row_by_row_dst_kernel(char* dst, const char* src, sm::TransposeParams<Index> p, Epi epi) {
  using namespace sm;
  using namespace sm::cuda;
  constexpr int PI = transpose_elems_i(E), PJ = transpose_elems_j(E);
  constexpr int TI = kTransposeBlockX * PI, TJ = kTransposeBlockX * PJ;
  constexpr int kLoadRows = TJ / kTransposeBlockY, kStoreRows = TI / kTransposeBlockY;
  using W = ElemUnit<E>;
  using RowI = Unit<E * PI>;
  using RowJ = Unit<E * PJ>;
  using Offset = typename TransposeParams<Index>::Offset;
  __shared__ W tile[TJ][TI + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool pack_src = E * PI == 4 && PI > 1 && p.pack_src;
  const bool pack_dst = E * PJ == 4 && PJ > 1 && p.pack_dst;
  for (Index t = blockIdx.x; t < p.total_tiles; t += gridDim.x) {
    Index i0, j0;
    Offset off[2];
    p.tile_origin(t, &i0, &j0, off, TI, TJ);
    const W* s = reinterpret_cast<const W*>(src) + off[1];
    W* d = reinterpret_cast<W*>(dst) + off[0];
    RowI v[kLoadRows];
    const Index ib = i0 + static_cast<Index>(tx * PI);
    load_tile_rows<E, PI, kLoadRows>(s, j0 + static_cast<Index>(ty), p.size_j, p.src_sj, ib, p.size_i,
                                     pack_src, v);
#pragma unroll
    for (int rr = 0; rr < kLoadRows; ++rr) {
      W e[PI];
      memcpy(e, &v[rr], sizeof(RowI));
#pragma unroll
      for (int q = 0; q < PI; ++q) tile[ty + rr * kTransposeBlockY][tx * PI + q] = e[q];
    }
    __syncthreads();
    const Index jb = j0 + static_cast<Index>(tx * PJ);
#pragma unroll
    for (int rr = 0; rr < kStoreRows; ++rr) {
      const int r = ty + rr * kTransposeBlockY;
      const Index i = i0 + static_cast<Index>(r);
      if (i >= p.size_i) continue;
      W* row = d + static_cast<Offset>(i) * p.dst_si;
      const RowJ old = load_row_elems<E, PJ>(row, jb, p.size_j, pack_dst);
      W c[PJ], w[PJ];
      memcpy(c, &old, sizeof(RowJ));
#pragma unroll
      for (int q = 0; q < PJ; ++q) w[q] = epi(c[q], tile[tx * PJ + q][r]);
      if (pack_dst) {
        if (jb < p.size_j) {
          RowJ pk;
          memcpy(&pk, w, sizeof(RowJ));
          *reinterpret_cast<RowJ*>(row + jb) = pk;
        }
      } else {
#pragma unroll
        for (int q = 0; q < PJ; ++q)
          if (jb + q < p.size_j) row[jb + q] = w[q];
      }
    }
    __syncthreads();
  }
}

template <int E, typename Epi>
void launch_row_by_row_dst(const sm::KernelPlan& p, void* d, const void* s, const Epi& epi) {
  char* dp = static_cast<char*>(d) + p.byte_offset[0];
  const char* sp = static_cast<const char*>(s) + p.byte_offset[1];
  const dim3 grid(static_cast<unsigned>(p.launch.grid)), block(sm::kTransposeBlockX, sm::kTransposeBlockY);
  if (p.index32) {
    row_by_row_dst_kernel<E, uint32_t, Epi><<<grid, block>>>(dp, sp, sm::make_transpose_params<uint32_t>(p), epi);
  } else {
    row_by_row_dst_kernel<E, uint64_t, Epi><<<grid, block>>>(dp, sp, sm::make_transpose_params<uint64_t>(p), epi);
  }
  CK(cudaGetLastError());
}

// The library's copy tile on the suite's arrays, packed as planned, packed on
// one side only, or not at all (pack_src / pack_dst: -1 as planned, 0 off).
template <typename T>
void library_copy_variant(const char* name, Ctx& c, float copy_ms, int pack_src, int pack_dst,
                          std::vector<T>& hs, std::vector<T>& hd) {
  const sm::DType dt = sizeof(T) == 2 ? sm::DType::F16 : sm::DType::F32;
  sm::KernelPlan p = library_copy_plan(c.d, c.s, c.SI, c.SJ, dt);
  if (p.kind != sm::KernelKind::Transpose) { printf("%-44s not planned as a transpose\n", name); return; }
  if (pack_src == 0) p.pack_src = false;
  if (pack_dst == 0) p.pack_dst = false;
  auto run = [&] { launch_library<sizeof(T)>(p, c.d, c.s, sm::cuda::CopyEpilogue<sizeof(T)>{}); };
  CK(cudaMemset(c.d, 0xff, c.bytes));
  run(); CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hd.data(), c.d, c.bytes, cudaMemcpyDeviceToHost));
  const bool ok = verify(hd.data(), hs.data(), c.SI, c.SJ);
  const float ms = time_fn(run, 30);
  printf("%-44s pack %d/%d   %8.3f ms  %7.1f GB/s  ratio %.3f  vs memcpy %.3f %s\n", name,
         p.pack_src ? 1 : 0, p.pack_dst ? 1 : 0, ms, 2.0 * c.bytes / ms / 1e6, copy_ms / ms,
         c.memcpy_ms / ms, ok ? "ok" : "WRONG");
}

// x.T += y by the library's in-place tile, the destination read all rows
// first (the library's form) or row by row.
template <typename Elem>
void launch_library_add(const sm::KernelPlan& p, void* x, const void* y, bool row_by_row) {
  const sm::cuda::OpEpilogue<Elem> e{SM_OP_ADD, 1.0f};
  if (row_by_row) launch_row_by_row_dst<sizeof(Elem)>(p, x, y, e);
  else launch_library<sizeof(Elem)>(p, x, y, e);
}

float elem_to_float(uint16_t b, bool bf16) { return bf16 ? sm::bf16_bits_to_float(b) : sm::half_bits_to_float(b); }
uint16_t float_to_elem(float f, bool bf16) { return bf16 ? sm::float_to_bf16_bits(f) : sm::float_to_half_bits(f); }

// x.T += y through the library's in-place tile (x [R][C], y [C][R]), the
// destination read all rows first or row by row; 3 x the bytes of x move.
// Checked: both forms give the same bits, and 100000 random elements match
// the host's x + y rounded once.
template <typename T>
void library_add_suite(const char* tn, int R, int C, sm::DType dt) {
  const size_t n = (size_t)R * C, bytes = n * sizeof(T);
  void *x, *y, *x0, *ref;
  CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes)); CK(cudaMalloc(&x0, bytes)); CK(cudaMalloc(&ref, bytes));
  // Values k/64 (x) and k/32 (y), |k| <= 1000: every sum is finite.
  std::vector<T> hx(n), hy(n), h1(n), h2(n);
  for (size_t k = 0; k < n; ++k) {
    if (sizeof(T) == 4) { float f = (float)(rand() % 2001 - 1000) / 64.0f; memcpy(&hx[k], &f, 4); f = (float)(rand() % 2001 - 1000) / 32.0f; memcpy(&hy[k], &f, 4); }
    else { uint16_t a = float_to_elem((float)(rand() % 2001 - 1000) / 64.0f, dt == sm::DType::BF16), b = float_to_elem((float)(rand() % 2001 - 1000) / 32.0f, dt == sm::DType::BF16); memcpy(&hx[k], &a, 2); memcpy(&hy[k], &b, 2); }
  }
  CK(cudaMemcpy(x0, hx.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(y, hy.data(), bytes, cudaMemcpyHostToDevice));
  // The add moves 3 x bytes; a copy of `bytes` moves 2 x: scaled to the same traffic.
  const float memcpy_ms = time_fn([&] { CK(cudaMemcpyAsync(ref, x0, bytes, cudaMemcpyDeviceToDevice)); }, 30) * 1.5f;
  printf("== library in-place add on a transposed view, %s x [%d x %d] (%.0f MiB); memcpy of the same bytes %.3f ms\n",
         tn, R, C, bytes / 1048576.0, memcpy_ms);
  sm::TensorDesc xt, yd;
  xt.data = x; xt.dtype = dt; xt.ndim = 2; xt.sizes[0] = C; xt.sizes[1] = R; xt.strides[0] = 1; xt.strides[1] = C;
  yd = xt; yd.data = y; yd.strides[0] = R; yd.strides[1] = 1;
  const sm::KernelPlan p =
      sm::plan_binary(sm::plan_tensor_op(xt, SM_OP_ADD, yd, 1.0, sm::PlanTarget::Cuda), true,
                      sm::DeviceProps{});
  auto run_form = [&](bool row_by_row) {
    if (dt == sm::DType::F32) launch_library_add<float>(p, x, y, row_by_row);
    else if (dt == sm::DType::F16) launch_library_add<sm::Half>(p, x, y, row_by_row);
    else launch_library_add<sm::BFloat16>(p, x, y, row_by_row);
  };
  for (int form = 0; form < 2 && p.kind == sm::KernelKind::Transpose; ++form) {
    CK(cudaMemcpy(x, x0, bytes, cudaMemcpyDeviceToDevice));
    run_form(form == 1);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(form == 0 ? h1.data() : h2.data(), x, bytes, cudaMemcpyDeviceToHost));
  }
  if (p.kind != sm::KernelKind::Transpose) printf("not planned as a transpose\n");
  bool ok = p.kind == sm::KernelKind::Transpose && memcmp(h1.data(), h2.data(), bytes) == 0;
  for (int k = 0; k < 100000 && ok; ++k) {
    const size_t r = (size_t)rand() % R, col = (size_t)rand() % C, xi = r * C + col, yi = col * R + r;
    if (sizeof(T) == 4) {
      float a, b, got; memcpy(&a, &hx[xi], 4); memcpy(&b, &hy[yi], 4); memcpy(&got, &h1[xi], 4);
      ok = got == a + b;
    } else {
      uint16_t a, b, got; memcpy(&a, &hx[xi], 2); memcpy(&b, &hy[yi], 2); memcpy(&got, &h1[xi], 2);
      const bool bf = dt == sm::DType::BF16;
      ok = got == float_to_elem(elem_to_float(a, bf) + elem_to_float(b, bf), bf);
    }
  }
  for (int form = 0; form < 2 && p.kind == sm::KernelKind::Transpose; ++form) {
    const float ms = time_fn([&] { run_form(form == 1); }, 30);
    printf("%-44s %8.3f ms  %7.1f GB/s  vs memcpy %.3f %s\n",
           form == 0 ? "all destination rows first (library)" : "destination row by row", ms,
           3.0 * bytes / ms / 1e6, memcpy_ms / ms, ok ? "ok" : "WRONG");
  }
  CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(x0)); CK(cudaFree(ref));
}

template <typename T>
void suite(int SJ, int SI, const char* tn) {
  Ctx c; c.SI = SI; c.SJ = SJ; c.bytes = (size_t)SI * SJ * sizeof(T);
  void *d, *s; CK(cudaMalloc(&d, c.bytes)); CK(cudaMalloc(&s, c.bytes)); c.d = d; c.s = s;
  fillk<T><<<1024, 256>>>((T*)s, (size_t)SI * SJ); CK(cudaDeviceSynchronize());
  std::vector<T> hs((size_t)SI * SJ), hd((size_t)SI * SJ);
  CK(cudaMemcpy(hs.data(), s, c.bytes, cudaMemcpyDeviceToHost));
  float copy_ms = timeit(runcopy, &c, 30);
  c.memcpy_ms = time_fn([&] { CK(cudaMemcpyAsync(d, s, c.bytes, cudaMemcpyDeviceToDevice)); }, 30);
  printf("== %s [%d x %d], %.0f MiB; float4 copy %.3f ms = %.1f GB/s; cudaMemcpy %.3f ms = %.1f GB/s\n", tn, SJ,
         SI, c.bytes / 1048576.0, copy_ms, 2.0 * c.bytes / copy_ms / 1e6, c.memcpy_ms, 2.0 * c.bytes / c.memcpy_ms / 1e6);
  int cap = 132 * 8;
  if (sizeof(T) == 4) {
    variant<T, 1, 32, 8, 0>("P1 TJ32 BY8 order-j (current fp32)", c, copy_ms, 0, hs, hd);
    variant<T, 1, 32, 8, 1>("P1 TJ32 BY8 order-i", c, copy_ms, 0, hs, hd);
    variant<T, 1, 32, 8, 2>("P1 TJ32 BY8 supertile8", c, copy_ms, 0, hs, hd);
    variant<T, 1, 64, 8, 0>("P1 TJ64 BY8 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 1, 128, 8, 0>("P1 TJ128 BY8 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 1, 64, 8, 2>("P1 TJ64 BY8 supertile8", c, copy_ms, 0, hs, hd);
    variant<T, 1, 64, 16, 0>("P1 TJ64 BY16 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 1, 64, 8, 0>("P1 TJ64 BY8 order-j persistent", c, copy_ms, cap, hs, hd);
    variant<T, 2, 64, 8, 0>("P2 TJ64 BY8 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 2, 32, 8, 0>("P2 TJ32 BY8 order-j", c, copy_ms, 0, hs, hd);
  } else {
    variant<T, 2, 64, 8, 0>("P2 TJ64 BY8 order-j (current fp16)", c, copy_ms, 0, hs, hd);
    variant<T, 2, 128, 8, 0>("P2 TJ128 BY8 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 2, 64, 8, 2>("P2 TJ64 BY8 supertile8", c, copy_ms, 0, hs, hd);
    variant<T, 4, 64, 8, 0>("P4 TJ64 BY8 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 2, 128, 16, 0>("P2 TJ128 BY16 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 1, 64, 8, 0>("P1 TJ64 BY8 order-j", c, copy_ms, 0, hs, hd);
    variant<T, 1, 128, 8, 0>("P1 TJ128 BY8 order-j", c, copy_ms, 0, hs, hd);
  }
  if (sizeof(T) == 4) {
    library_copy_variant<T>("library tile (64 x 32, as planned)", c, copy_ms, -1, -1, hs, hd);
  } else {
    library_copy_variant<T>("library tile (as planned: 4-byte packs)", c, copy_ms, -1, -1, hs, hd);
    library_copy_variant<T>("library tile, 2-byte accesses both sides", c, copy_ms, 0, 0, hs, hd);
    library_copy_variant<T>("library tile, packed loads only", c, copy_ms, -1, 0, hs, hd);
    library_copy_variant<T>("library tile, packed stores only", c, copy_ms, 0, -1, hs, hd);
  }
  CK(cudaFree(d)); CK(cudaFree(s));
}

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("NOT RUN: no usable CUDA device\n");
    return 0;
  }
  suite<float>(8192, 8192, "fp32");
  suite<float>(16, 4194304, "fp32 thin: dst rows of 16");  // like a 5-D reversal's short j
  suite<unsigned short>(16384, 8192, "fp16");
  // The benchmark's in-place cases: x [8192 x 8192] f32, [8192 x 16384] 16-bit.
  library_add_suite<float>("fp32", 8192, 8192, sm::DType::F32);
  library_add_suite<uint16_t>("fp16", 8192, 16384, sm::DType::F16);
  library_add_suite<uint16_t>("bf16", 8192, 16384, sm::DType::BF16);
  return 0;
}
