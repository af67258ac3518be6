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
//    2-byte elements when the alignment allows; tile sides below
//    (transpose_tile_i/j). Conversions too: the source elements are
//    converted as they enter the tile, which holds destination elements.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backend/backend.hpp"
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
constexpr int kTransposeBlockX = 32;  // one warp along a tile row
constexpr int kTransposeBlockY = 8;   // warps per block; each does tile/8 rows
// Below this extent on either tile axis the tiles would be mostly idle
// threads: such copies go through the Elementwise kernel.
constexpr int64_t kMinTransposeExtent = 16;

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
  // elements; their sides follow the larger of the two element sizes.
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

// The tiling rule: the dim i of a transpose pair (j is the innermost) for
// the Transpose kernel, or -1. i is pick_tile_dim(it, 1), the dim the CPU's
// tiled copy cuts its tiles along, kept when CUDA can launch tiles there:
// the destination has unit stride along j, the source unit stride (either
// sign) along i, and both extents reach kMinTransposeExtent. The index width
// never decides: wide plans run with 64-bit index math.
int transpose_tile_dim(const IterPlan& it);

// dst[i] = src[i]. Dtypes may differ: then Transpose (converting) where
// transpose_tile_dim finds a pair, else Elementwise in element units.
KernelPlan plan_copy(const TensorDesc& dst, const TensorDesc& src, const DeviceProps& props);
// dst[i] = value: like a same-dtype copy from a stride-0 source, with the
// destination vectorized when it is contiguous and aligned (the kernel
// replicates the element into the unit).
KernelPlan plan_fill(const TensorDesc& dst, const DeviceProps& props);
// dst[i] = f(dst[i]): Elementwise in element units.
KernelPlan plan_unary(const TensorDesc& dst, const DeviceProps& props);
// dst[i] = f(dst[i], other[i]): Transpose when allow_transpose, the dtypes
// match and the access patterns cross; else Elementwise in element units.
KernelPlan plan_binary(const TensorDesc& dst, const TensorDesc& other, bool allow_transpose,
                       const DeviceProps& props);

// index_select: dst[..., i, ...] = src[..., wrap_index(index[i]), ...] along
// dim, under Kernels::index_select's preconditions (same dtype, sizes equal
// but along dim, index 1-d and validated). Elementwise over the three
// operands (0 = dst, 1 = src without dim, 2 = index), coalesced like any
// other; Rows in vector units when the innermost dim allows (GatherKind),
// else Elements; 32-bit math only when the source's whole reach along dim
// fits too, since the index's values may name any of its elements there.
KernelPlan plan_gather(const TensorDesc& dst, const TensorDesc& src, int dim,
                       const TensorDesc& index, const DeviceProps& props);

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

// Elements each thread of the transpose kernel moves per tile row: along i
// when it loads (the source's stride-1 dim), along j when it stores, for
// elements of elem_bytes (a conversion: the larger side's). 1- and 2-byte
// elements: one 4-byte pack each way (square tiles of 128 or 64). 4- and
// 8-byte elements: two loads per row and one store (tiles of 64 along i by 32
// along j), which keeps short-j tiles at copy speed (bench/RESULTS.md).
// 16-byte elements: one each way.
SM_HOST_DEVICE constexpr int transpose_elems_i(int elem_bytes) {
  return elem_bytes < 4 ? 4 / elem_bytes : elem_bytes <= 8 ? 2 : 1;
}
SM_HOST_DEVICE constexpr int transpose_elems_j(int elem_bytes) {
  return elem_bytes < 4 ? 4 / elem_bytes : 1;
}
// Tile sides (elements): a warp covers one tile row in each phase.
SM_HOST_DEVICE constexpr int transpose_tile_i(int elem_bytes) {
  return kTransposeBlockX * transpose_elems_i(elem_bytes);
}
SM_HOST_DEVICE constexpr int transpose_tile_j(int elem_bytes) {
  return kTransposeBlockX * transpose_elems_j(elem_bytes);
}

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
