// Device-side building blocks of the CUDA kernels: bit containers, element
// semantics identical to the CPU kernels (compute types, wrapping integer
// math, conversions through src/core/dtype.hpp), the element-wise kernel
// template and the tiled transpose kernel template. Which kernel runs, with
// which parameters, is decided by src/backend/cuda/launch_plan (host, unit-tested);
// these templates only execute a plan.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_common.hpp"
#include "core/element_ops.hpp"
#include "backend/cuda/launch_plan.hpp"

namespace sm {
namespace cuda {

// ---- bit containers ------------------------------------------------------------------

template <int N>
struct UnitOf;
template <> struct UnitOf<1> { using type = uint8_t; };
template <> struct UnitOf<2> { using type = uint16_t; };
template <> struct UnitOf<4> { using type = uint32_t; };
template <> struct UnitOf<8> { using type = unsigned long long; };
template <> struct UnitOf<16> { using type = uint4; };
// 16 bytes at an 8-byte aligned address (KernelPlan::split16: complex128
// elements): two 8-byte accesses.
struct alignas(8) Words2 {
  unsigned long long lo, hi;
};
constexpr int kUnit16At8 = -16;  // the unit key of Words2
template <> struct UnitOf<kUnit16At8> { using type = Words2; };
// The container of one E-byte element (tiles of the transpose kernel): a
// 16-byte element is complex128, aligned to 8 only.
template <int E>
using ElemUnit = typename std::conditional<E == 16, Words2, typename UnitOf<E>::type>::type;
// N bytes moved by one load/store instruction (128-bit for 16).
template <int N>
using Unit = typename UnitOf<N>::type;

template <typename To, typename From>
__device__ __forceinline__ To bit_cast_dev(From v) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  memcpy(&t, &v, sizeof(To));
  return t;
}

// ---- typed access to untyped operands ----------------------------------------------------

// Element o (in elements of T) of an operand given as bytes. Sources are read
// with the types of dispatch_source_dtype: bool comes as BoolByte, so a byte
// other than 0 or 1 is never loaded as a C++ bool.
template <typename T, typename Off>
__device__ __forceinline__ T load_at(const char* base, Off o) {
  return reinterpret_cast<const T*>(base)[o];
}
template <typename T, typename Off>
__device__ __forceinline__ void store_at(char* base, Off o, T v) {
  reinterpret_cast<T*>(base)[o] = v;
}

// Compute-type value of the element at byte address p, its dtype known only
// at run time (the mixed-dtype kernels, which keep the build small).
template <typename C>
__device__ __forceinline__ C load_as_dyn(DType dt, const char* p) {
  return dispatch_source_dtype(dt, [&](auto t) -> C {
    using T = decltype(t);
    return load_as<C>(*reinterpret_cast<const T*>(p));
  });
}

// ---- the element-wise kernel ------------------------------------------------------------------

// One unit per thread per step (the plan's items, 1 or 4, capped at MaxItems:
// a block apart, all loaded before any is stored for memory-level
// parallelism), grid-stride beyond. Functors whose dtypes are fixed at
// compile time (unit copies, fills, typed conversions, same-dtype tensor ops)
// are built with MaxItems 4; the scalar ops (one kernel per dtype, the op
// switched at run time) and the mixed-dtype conversions and tensor ops
// (dtypes switched at run time) with 1: their bodies are large and they are
// not where the bandwidth is won, so one item keeps the build small.
// F: struct { using Value = ...; template <class Off> Value load(const Off* o) const;
//             template <class Off> void store(const Off* o, Value v) const; }
template <typename Index, int NOPS, int MaxItems, typename F>
__global__ void __launch_bounds__(kElementwiseBlock)
    elementwise_kernel(F f, OffsetCalc<Index, NOPS> calc, Index n, int items, bool contiguous) {
  using Offset = typename OffsetCalc<Index, NOPS>::Offset;
  using V = typename F::Value;
  if (items > MaxItems) items = MaxItems;
  const Index per_block = static_cast<Index>(blockDim.x) * static_cast<Index>(items);
  for (Index base = static_cast<Index>(blockIdx.x) * per_block + threadIdx.x; base < n;
       base += static_cast<Index>(gridDim.x) * per_block) {
    V v[MaxItems];
    Offset o[MaxItems][NOPS];
#pragma unroll
    for (int k = 0; k < MaxItems; ++k) {
      const Index i = base + static_cast<Index>(k) * blockDim.x;
      if (k < items && i < n) {
        if (contiguous) {
#pragma unroll
          for (int q = 0; q < NOPS; ++q) o[k][q] = static_cast<Offset>(i);
        } else {
          calc.get(i, o[k]);
        }
        v[k] = f.load(o[k]);
      }
    }
#pragma unroll
    for (int k = 0; k < MaxItems; ++k) {
      const Index i = base + static_cast<Index>(k) * blockDim.x;
      if (k < items && i < n) f.store(o[k], v[k]);
    }
  }
}

template <int NOPS, int MaxItems = 4, typename F>
void launch_elementwise(const KernelPlan& p, const F& f, cudaStream_t stream) {
  int64_t blocks = p.launch.grid;
  if (p.launch.items > MaxItems) {  // fewer units per thread: more blocks
    blocks = blocks * p.launch.items / MaxItems;
    if (blocks > 2147483647) blocks = 2147483647;
  }
  const dim3 grid(static_cast<unsigned>(blocks)), block(static_cast<unsigned>(p.launch.block));
  if (p.index32) {
    elementwise_kernel<uint32_t, NOPS, MaxItems, F><<<grid, block, 0, stream>>>(
        f, make_offset_calc<uint32_t, NOPS>(p), static_cast<uint32_t>(p.numel), p.launch.items,
        p.contiguous);
  } else {
    elementwise_kernel<uint64_t, NOPS, MaxItems, F><<<grid, block, 0, stream>>>(
        f, make_offset_calc<uint64_t, NOPS>(p), static_cast<uint64_t>(p.numel), p.launch.items,
        p.contiguous);
  }
  check(cudaGetLastError(), "element-wise kernel launch");
}

// ---- the tiled transpose kernel ------------------------------------------------------------------

// Source elements entering the tile: SameBits for same-dtype tiles; the
// conversions (cuda_copy.cu) go through core/element_ops.hpp and
// core/dtype.hpp, as the element-wise conversions do.
template <int E>
struct SameBits {
  __device__ __forceinline__ ElemUnit<E> operator()(ElemUnit<E> v) const { return v; }
};

// Epilogues for the store phase: how a tile element lands in the destination.
// Copy: the bits. Op: dst = op(dst, other) in compute type C (in-place ops on
// a transposed view).
template <int E>
struct CopyEpilogue {
  __device__ __forceinline__ ElemUnit<E> operator()(ElemUnit<E> /*dst*/, ElemUnit<E> v) const {
    return v;
  }
  static constexpr bool kReadsDst = false;
};

template <typename T>
struct OpEpilogue {
  int op;
  BinaryCompute<T, T> alpha;
  static constexpr bool kReadsDst = true;
  __device__ __forceinline__ ElemUnit<sizeof(T)> operator()(ElemUnit<sizeof(T)> d,
                                                            ElemUnit<sizeof(T)> v) const {
    return bit_cast_dev<ElemUnit<sizeof(T)>>(
        binary_op_element<T, T>(op, bit_cast_dev<T>(d), bit_cast_dev<T>(v), alpha));
  }
};

// A thread's P elements row[at .. at + P) as one bit container, those at or
// past `size` zero: one P*E-byte access when `packed` (the plan checked the
// alignment and that a pack is all in or all out), else one per element.
template <int E, int P, typename Index>
__device__ __forceinline__ Unit<E * P> load_row_elems(const ElemUnit<E>* row, Index at, Index size,
                                                      bool packed) {
  ElemUnit<E> e[P] = {};
  if (packed) {
    if (at < size) return *reinterpret_cast<const Unit<E * P>*>(row + at);
  } else {
#pragma unroll
    for (int q = 0; q < P; ++q)
      if (at + q < size) e[q] = row[at + q];
  }
  Unit<E * P> out;
  memcpy(&out, e, sizeof(out));
  return out;
}

// A thread's elements of R tile rows (first_row, first_row + the block's
// height, ...), rows at or past nrows zero; every load is issued before any
// value is used, so they are in flight together.
template <int E, int P, int R, typename Index, typename Offset>
__device__ __forceinline__ void load_tile_rows(const ElemUnit<E>* base, Index first_row, Index nrows,
                                               Offset row_stride, Index at, Index size, bool packed,
                                               Unit<E * P>* out) {
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    const Index r = first_row + static_cast<Index>(rr * kTransposeBlockY);
    out[rr] = r < nrows ? load_row_elems<E, P>(base + static_cast<Offset>(r) * row_stride, at, size,
                                               packed)
                        : Unit<E * P>{};
  }
}

// One block (32 x 8 threads) per tile of TI x TJ elements (transpose_tile_i/j
// of the larger element size), grid-stride over tiles. Load: each warp reads
// source rows along i (the source's stride-1 dim), PI ES-byte elements per
// thread (one 4-byte access when packed), converted into the shared tile of
// ED-byte destination elements. Store: each warp writes destination rows
// along j, PJ elements per thread. The tile is padded by one element per row
// so the column reads of the store phase hit different banks. Both phases
// issue all of a thread's global loads before using any (destination rows
// too, for in-place ops) and there is no register cap: each measured faster
// than the alternative (bench/RESULTS.md).
template <int ES, int ED, typename Index, typename Conv, typename Epi>
__global__ void __launch_bounds__(kTransposeBlockX * kTransposeBlockY)
    transpose_kernel(char* dst, const char* src, TransposeParams<Index> p, Conv conv, Epi epi) {
  constexpr int EW = ES > ED ? ES : ED;
  constexpr int PI = transpose_elems_i(EW), PJ = transpose_elems_j(EW);
  constexpr int TI = kTransposeBlockX * PI, TJ = kTransposeBlockX * PJ;
  constexpr int kLoadRows = TJ / kTransposeBlockY;   // source rows (j) per thread
  constexpr int kStoreRows = TI / kTransposeBlockY;  // destination rows (i) per thread
  using WS = ElemUnit<ES>;
  using WD = ElemUnit<ED>;
  // A thread's elements of one row, held as one bit container (a 4-byte
  // pack for 1- and 2-byte elements: one register, not one per byte).
  using RowI = Unit<ES * PI>;
  using RowJ = Unit<ED * PJ>;
  using Offset = typename TransposeParams<Index>::Offset;
  __shared__ WD tile[TJ][TI + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool pack_src = ES * PI == 4 && PI > 1 && p.pack_src;
  const bool pack_dst = ED * PJ == 4 && PJ > 1 && p.pack_dst;
  for (Index t = blockIdx.x; t < p.total_tiles; t += gridDim.x) {
    Index i0, j0;
    Offset off[2];
    p.tile_origin(t, &i0, &j0, off, TI, TJ);
    const WS* s = reinterpret_cast<const WS*>(src) + off[1];
    WD* d = reinterpret_cast<WD*>(dst) + off[0];

    RowI v[kLoadRows];
    const Index ib = i0 + static_cast<Index>(tx * PI);
    load_tile_rows<ES, PI, kLoadRows>(s, j0 + static_cast<Index>(ty), p.size_j, p.src_sj, ib,
                                      p.size_i, pack_src, v);
#pragma unroll
    for (int rr = 0; rr < kLoadRows; ++rr) {
      WS e[PI];
      memcpy(e, &v[rr], sizeof(RowI));
#pragma unroll
      for (int q = 0; q < PI; ++q) tile[ty + rr * kTransposeBlockY][tx * PI + q] = conv(e[q]);
    }
    __syncthreads();

    const Index jb = j0 + static_cast<Index>(tx * PJ);
    RowJ cur[kStoreRows];
    if constexpr (Epi::kReadsDst)
      load_tile_rows<ED, PJ, kStoreRows>(d, i0 + static_cast<Index>(ty), p.size_i, p.dst_si, jb,
                                         p.size_j, pack_dst, cur);
#pragma unroll
    for (int rr = 0; rr < kStoreRows; ++rr) {
      const int r = ty + rr * kTransposeBlockY;
      const Index i = i0 + static_cast<Index>(r);
      if (i >= p.size_i) continue;
      WD* row = d + static_cast<Offset>(i) * p.dst_si;
      WD c[PJ] = {}, w[PJ];
      if constexpr (Epi::kReadsDst) memcpy(c, &cur[rr], sizeof(RowJ));
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
    __syncthreads();  // the tile is reused by the next iteration
  }
}

// A Transpose plan of ES-byte source elements into ED-byte destination
// elements, each converted by conv as it enters the tile. Index32 false
// builds only the 64-bit index form (right for any plan): half the kernels,
// for the pairs where the build size matters more than the speed.
template <int ES, int ED, bool Index32 = true, typename Conv, typename Epi>
void launch_transpose_tiles(const KernelPlan& p, char* dst, const char* src, const Conv& conv,
                            const Epi& epi, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(p.launch.grid)), block(kTransposeBlockX, kTransposeBlockY);
  bool launched = false;
  if constexpr (Index32) {
    if (p.index32) {
      transpose_kernel<ES, ED, uint32_t, Conv, Epi><<<grid, block, 0, stream>>>(
          dst, src, make_transpose_params<uint32_t>(p), conv, epi);
      launched = true;
    }
  }
  if (!launched)
    transpose_kernel<ES, ED, uint64_t, Conv, Epi><<<grid, block, 0, stream>>>(
        dst, src, make_transpose_params<uint64_t>(p), conv, epi);
  check(cudaGetLastError(), "transpose kernel launch");
}

// Same dtype on both sides.
template <int E, typename Epi>
void launch_transpose(const KernelPlan& p, char* dst, const char* src, const Epi& epi,
                      cudaStream_t stream) {
  launch_transpose_tiles<E, E>(p, dst, src, SameBits<E>{}, epi, stream);
}

}  // namespace cuda
}  // namespace sm
