// Tile-transpose variants, measured side by side against a device copy: the
// experiment behind the layout of src/backend/cuda/kernel_common.cuh's
// transpose kernel (bench/RESULTS.md, CUDA section). Standalone (no library):
// one 32 x BY block per tile of TI = 32*P (source-contiguous i) by TJ
// (destination-contiguous j) elements, every load of a thread issued into
// registers before any is stored into the shared tile; tile order j-fastest,
// i-fastest or 8x8 supertiles; one tile per block or a persistent grid.
// Outputs are spot-checked (100000 random elements) against the input.
//
//   bench_transpose_variants      (prints NOT RUN and exits 0 without a GPU)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
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

static float timeit(void (*f)(void*), void* ctx, int iters) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int w = 0; w < 3; ++w) f(ctx);
  std::vector<float> ms;
  for (int k = 0; k < iters; ++k) { CK(cudaEventRecord(a)); f(ctx); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float m; CK(cudaEventElapsedTime(&m, a, b)); ms.push_back(m); }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Ctx { void* d; const void* s; int SI, SJ; size_t bytes; int grid_cap; };
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
  printf("%-44s grid %-7d %8.3f ms  %7.1f GB/s  ratio %.3f %s\n", name, grid_cap, ms, 2.0 * c.bytes / ms / 1e6, copy_ms / ms, ok ? "ok" : "WRONG");
}

template <typename T>
void suite(int SJ, int SI, const char* tn) {
  Ctx c; c.SI = SI; c.SJ = SJ; c.bytes = (size_t)SI * SJ * sizeof(T);
  void *d, *s; CK(cudaMalloc(&d, c.bytes)); CK(cudaMalloc(&s, c.bytes)); c.d = d; c.s = s;
  fillk<T><<<1024, 256>>>((T*)s, (size_t)SI * SJ); CK(cudaDeviceSynchronize());
  std::vector<T> hs((size_t)SI * SJ), hd((size_t)SI * SJ);
  CK(cudaMemcpy(hs.data(), s, c.bytes, cudaMemcpyDeviceToHost));
  float copy_ms = timeit(runcopy, &c, 30);
  printf("== %s [%d x %d], %.0f MiB; copy %.3f ms = %.1f GB/s\n", tn, SJ, SI, c.bytes / 1048576.0, copy_ms, 2.0 * c.bytes / copy_ms / 1e6);
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
  return 0;
}
