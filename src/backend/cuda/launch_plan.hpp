// Host planning for the CUDA kernels: which kernel moves the data, in which
// units, with 32- or 64-bit index math, and how it is launched. Plain C++ with
// no CUDA dependency (built and unit-tested in every configuration): the
// kernels beside it stay thin, running the SM_HOST_DEVICE index helpers below
// with parameters built here, so everything that decides *which element goes
// where* is proven on the CPU (tests/unit/test_launch_plan.cpp emulates each
// kernel with these helpers).
//
// Kernels, chosen per call:
//  - Memcpy: one contiguous run of bytes (cudaMemcpyAsync).
//  - Elementwise: one thread per unit, every operand addressed through an
//    OffsetCalc (one fast division per dim). For same-dtype copies and fills
//    the unit is a vector of up to 16 bytes when the operands share their
//    stride-1 dim and the alignment allows (a 128-bit copy); otherwise an
//    element.
//  - Elementwise over three operands for index_select (a gather), the whole
//    call in one launch: the destination, the source with its stride along
//    the selected dim set to 0, and the index (stride 0 everywhere but along
//    that dim); the functor adds wrap_index(index value) * the source's
//    stride along the dim to the source offset (gather_source_offset). Two
//    shapes (GatherKind): Rows, where the selected slices end in a run that
//    is contiguous in both dst and src (the index constant along it), moved
//    in vector units of up to 16 bytes like a same-dtype copy; Elements (a
//    scalar gather, e.g. 1-d), one thread per output element.
//  - Transpose: the destination's stride-1 dim (j) is not the source's (i):
//    tiles through shared memory (padded by one element, so both the row
//    writes and the column reads are free of bank conflicts), loads
//    coalesced along i, stores along j, 4-byte packed accesses for 1- and
//    2-byte elements when the alignment allows. Where the operation plan
//    (backend/op_plan.hpp, made for PlanTarget::Cuda) says Transpose: its
//    pair, and its sides, which are the kernels' compile-time ones
//    (transpose_tile_i/j in backend/tiling.hpp). Conversions too: the source
//    elements are converted as they enter the tile, which holds destination
//    elements.
//
// Every planner starts from an operation plan: its coalesced operands and
// its tiling decision (the one rule of backend/tiling.hpp). What stays
// CUDA's own here: the units (vector widths), the index width, the launch
// geometry, and the address checks a kernel needs (tile_words_aligned),
// which may still send a planned transpose to the Elementwise kernel.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backend/backend.hpp"
#include "backend/op_plan.hpp"
#include "backend/tiling.hpp"
#include "core/host_device.hpp"
#include "layout/coalesce.hpp"

namespace sm {

// The device properties planning uses (fields of cudaDeviceProp), as plain
// numbers so planning runs without a device. Defaults: an H100 SXM.
struct DeviceProps {
  int sm_count = 132;
  int max_threads_per_sm = 2048;
  int max_threads_per_block = 1024;
  int64_t max_grid_x = 2147483647;
  int64_t shared_mem_per_block = 48 * 1024;
};

// ---- fast division by a divisor fixed at plan time ----------------------------
// q = (mulhi(n, m) + n) >> s with a precomputed magic multiplier m and shift s
// (the round-up method of Granlund and Montgomery). Exact for divisors in
// [1, 2^(B-1)] and dividends below 2^(B-1), B the bit width: sizes and
// indices always are (32-bit math is only chosen below 2^31 elements).
template <typename U>
struct FastDivmod {
  static_assert(std::is_same<U, uint32_t>::value || std::is_same<U, uint64_t>::value,
                "32- or 64-bit unsigned");
  U divisor = 1;
  U multiplier = 1;
  uint32_t shift = 0;

  FastDivmod() = default;
  // Host only (plans are built on the host).
  explicit FastDivmod(U d) : divisor(d) {
    shift = 0;
    while ((U(1) << shift) < d) ++shift;
    if constexpr (sizeof(U) == 4) {
      const uint64_t num = (uint64_t(1) << 32) * ((uint64_t(1) << shift) - d);
      multiplier = static_cast<U>(num / d + 1);
    } else {
      using W = unsigned __int128;
      const W num = (W(1) << 64) * ((W(1) << shift) - d);
      multiplier = static_cast<U>(num / d + 1);
    }
  }

  SM_HOST_DEVICE static U mulhi(U a, U b) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(U) == 4) return __umulhi(a, b);
    else return __umul64hi(a, b);
#else
    if constexpr (sizeof(U) == 4) return static_cast<U>((uint64_t(a) * b) >> 32);
    else return static_cast<U>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
  }
  SM_HOST_DEVICE U div(U n) const { return (mulhi(n, multiplier) + n) >> shift; }
  SM_HOST_DEVICE U mod(U n, U q) const { return n - q * divisor; }
};

// ---- strided addressing -----------------------------------------------------------
// Maps a linear index over some dims (row-major: the last dim moves fastest)
// to a signed offset per operand, in that operand's units.
template <typename Index, int NOPS>
struct OffsetCalc {
  using Offset = typename std::make_signed<Index>::type;
  int ndim = 0;                     // stored innermost first
  FastDivmod<Index> div[kMaxDims];  // div[d]: size of (innermost-first) dim d
  Offset strides[kMaxDims][NOPS] = {};

  SM_HOST_DEVICE void get(Index linear, Offset* off) const {
    SM_UNROLL
    for (int k = 0; k < NOPS; ++k) off[k] = 0;
    SM_UNROLL
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim) break;
      Index r = linear;
      if (d + 1 < ndim) {  // the outermost dim needs no division
        const Index q = div[d].div(linear);
        r = div[d].mod(linear, q);
        linear = q;
      }
      SM_UNROLL
      for (int k = 0; k < NOPS; ++k) off[k] += static_cast<Offset>(r) * strides[d][k];
    }
  }
};

// ---- launch shapes ----------------------------------------------------------------
struct Launch {
  int64_t grid = 0;  // blocks (grid-stride loops cover the rest past max_grid_x)
  int block = 0;     // threads per block
  int items = 1;     // units per thread per grid-stride step (Elementwise)
};

constexpr int kElementwiseBlock = 256;

// One unit per thread and just enough blocks while the work is below four
// full waves of the device; four units per thread (more bytes in flight
// per thread, fewer blocks to schedule) beyond that.
Launch plan_elementwise_launch(int64_t units, const DeviceProps& props);

// ---- plans -------------------------------------------------------------------------
enum class KernelKind { Empty, Memcpy, Elementwise, Transpose };
// plan_gather's shapes (None for every other plan): Rows moves runs of each
// selected slice that are contiguous in dst and src, in units of unit_bytes
// (a multiple of the element size, up to 16); Elements moves one element
// per unit (the innermost dim is the selected one, or not contiguous).
enum class GatherKind { None, Elements, Rows };

struct KernelPlan {
  KernelKind kind = KernelKind::Empty;
  // Coalesced dims (operand 0 = destination), strides in units. When
  // unit_bytes > 0 every operand moves units of unit_bytes bytes (same-dtype
  // copies and fills); when 0 the units are each operand's elements.
  IterPlan it;
  int unit_bytes = 0;
  // 16-byte units at an address that is only 8-byte aligned: elements of
  // 16 bytes (complex128, aligned as its 8-byte parts) where an operand does
  // not start at a multiple of 16. The kernels then move each unit as two
  // 8-byte words (a 128-bit access would fault).
  bool split16 = false;
  // Added to each operand's data pointer before the kernel runs (dims walked
  // backwards to keep the destination moving forwards).
  int64_t byte_offset[kMaxOperands] = {};
  int64_t numel = 0;          // units visited (Elementwise), elements (Transpose)
  bool index32 = true;        // every index and offset fits 32-bit math
  bool contiguous = false;    // Elementwise: one dim, stride 1 for every operand
  int64_t memcpy_bytes = 0;   // Memcpy
  // Transpose: the destination (operand 0) has stride 1 along dim_j (the
  // innermost), the source (operand 1) along dim_i; tiles of tile_i x tile_j
  int dim_i = -1, dim_j = -1;
  // elements, the operation plan's sides (those of the larger element size).
  int tile_i = 0, tile_j = 0;
  // The source's loads / the destination's stores move a thread's elements
  // of a tile row as one 4-byte access (transpose_elems_* of them make 4
  // bytes, and the extent and alignment allow).
  bool pack_src = false, pack_dst = false;
  int64_t tiles_i = 0, tiles_j = 0, total_tiles = 0;
  // Gather (plan_gather): the shape, the source's size along the selected dim
  // and its stride there in units (elements unless Rows vectorized),
  // applied by gather_source_offset. Operand 2 (the index) keeps strides and
  // byte_offset in index elements whatever the unit.
  GatherKind gather = GatherKind::None;
  int64_t gather_size = 0, gather_stride = 0;
  Launch launch;
};

// Each planner takes an operation plan made for PlanTarget::Cuda (a plan of
// kind Nothing is Empty) and starts from its coalesced operands (the index
// width never decides a plan's shape: wide plans run with 64-bit index math).
//
// A Copy: dst[i] = src[i]. Dtypes may differ: then Transpose (converting)
// where the plan says Transpose and both operands' words are aligned for
// the tile kernel, else Elementwise in element units.
KernelPlan plan_copy(const OpPlan& op, const DeviceProps& props);
// A Fill: dst[i] = value, with the destination vectorized when it is
// contiguous and aligned (the kernel replicates the element into the unit).
KernelPlan plan_fill(const OpPlan& op, const DeviceProps& props);
// A ScalarOp: dst[i] = f(dst[i]): Elementwise in element units.
KernelPlan plan_unary(const OpPlan& op, const DeviceProps& props);
// A TensorOp: dst[i] = f(dst[i], other[i]): Transpose when the plan says so,
// allow_transpose (the kernel is instantiated for the dtype) and the dtypes
// match; else Elementwise in element units.
KernelPlan plan_binary(const OpPlan& op, bool allow_transpose, const DeviceProps& props);

// A Gather (index_select): dst[..., i, ...] = src[..., wrap_index(index[i]),
// ...] along the plan's gather_dim, under Kernels::index_select's
// preconditions. Elementwise over the plan's three operands (0 = dst, 1 =
// src without the dim, 2 = index); Rows in vector units when the innermost
// dim allows (GatherKind), else Elements; 32-bit math only when the
// source's whole reach along the dim fits too, since the index's values may
// name any of its elements there.
KernelPlan plan_gather(const OpPlan& op, const DeviceProps& props);

// The source offset (elements) of a gathered element: o, the source offset
// without the selected dim, plus the selected position times the stride.
// The product is formed in 64 bits: it is within the reach plan_gather
// checked, and a stride-0 (expanded) source dim may be larger than any
// 32-bit position.
template <typename Offset>
SM_HOST_DEVICE Offset gather_source_offset(Offset o, int64_t value, int64_t size, int64_t stride) {
  return o + static_cast<Offset>(wrap_index(value, size) * stride);
}

// Kernels::first_out_of_range on the GPU: elements [0, count) of the index
// (its distinct ones: index_scan_length), `stride` apart. count 0: nothing
// to check; count 1: the one element is read back and checked on the host
// (no kernel, no scratch); otherwise one thread per element, grid-stride,
// each bad position lowering a device word with atomicMin.
struct IndexCheckPlan {
  int64_t count = 0;
  int64_t stride = 0;
  Launch launch;
};
IndexCheckPlan plan_index_check(const TensorDesc& index, const DeviceProps& props);

// ---- kernel parameters built from a plan --------------------------------------------

// All of the plan's dims, for NOPS operands.
template <typename Index, int NOPS>
OffsetCalc<Index, NOPS> make_offset_calc(const KernelPlan& p) {
  OffsetCalc<Index, NOPS> c;
  c.ndim = p.it.ndim;
  for (int d = 0; d < p.it.ndim; ++d) {
    const int src_dim = p.it.ndim - 1 - d;  // innermost first
    c.div[d] = FastDivmod<Index>(static_cast<Index>(p.it.sizes[src_dim]));
    for (int k = 0; k < NOPS; ++k)
      c.strides[d][k] = static_cast<typename OffsetCalc<Index, NOPS>::Offset>(p.it.strides[k][src_dim]);
  }
  return c;
}

template <typename Index>
struct TransposeParams {
  using Offset = typename std::make_signed<Index>::type;
  Index size_i = 0, size_j = 0;
  Offset dst_si = 0;  // destination stride along i (along j it is 1)
  Offset src_sj = 0;  // source stride along j (along i it is 1)
  FastDivmod<Index> tiles_j, tiles_i;
  Index total_tiles = 0;
  OffsetCalc<Index, 2> batch;  // the other dims
  bool pack_src = false, pack_dst = false;

  // Tile t: its first element (i0, j0) and the batch offsets of both operands
  // (elements). Tiles are ordered j fastest, then i, then batch.
  SM_HOST_DEVICE void tile_origin(Index t, Index* i0, Index* j0, Offset* off, int tile_i,
                                  int tile_j) const {
    const Index q1 = tiles_j.div(t);
    const Index tj = tiles_j.mod(t, q1);
    const Index b = tiles_i.div(q1);
    const Index ti = tiles_i.mod(q1, b);
    *i0 = ti * static_cast<Index>(tile_i);
    *j0 = tj * static_cast<Index>(tile_j);
    batch.get(b, off);
  }
};

template <typename Index>
TransposeParams<Index> make_transpose_params(const KernelPlan& p) {
  TransposeParams<Index> t;
  using Offset = typename TransposeParams<Index>::Offset;
  t.size_i = static_cast<Index>(p.it.sizes[p.dim_i]);
  t.size_j = static_cast<Index>(p.it.sizes[p.dim_j]);
  t.dst_si = static_cast<Offset>(p.it.strides[0][p.dim_i]);
  t.src_sj = static_cast<Offset>(p.it.strides[1][p.dim_j]);
  t.tiles_j = FastDivmod<Index>(static_cast<Index>(p.tiles_j));
  t.tiles_i = FastDivmod<Index>(static_cast<Index>(p.tiles_i));
  t.total_tiles = static_cast<Index>(p.total_tiles);
  t.pack_src = p.pack_src;
  t.pack_dst = p.pack_dst;
  int n = 0;
  for (int d = p.it.ndim - 1; d >= 0; --d) {  // innermost first
    if (d == p.dim_i || d == p.dim_j) continue;
    t.batch.div[n] = FastDivmod<Index>(static_cast<Index>(p.it.sizes[d]));
    t.batch.strides[n][0] = static_cast<Offset>(p.it.strides[0][d]);
    t.batch.strides[n][1] = static_cast<Offset>(p.it.strides[1][d]);
    ++n;
  }
  t.batch.ndim = n;
  return t;
}

}  // namespace sm
