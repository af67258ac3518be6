// index_select on the CPU: the index is read in place, through its stride
// (never copied), and validated by scanning only its distinct elements, in
// blocks checked by their least and greatest entry, long indices on all
// threads (the engine does that once, before it allocates the result; the
// gather trusts it). The gather carries out a plan_gather plan
// (backend/op_plan.hpp: dst, src and the index coalesced over dst's sizes;
// the entry dim is where the index moves) by one of these:
//  - when the plan's inner dim is a run in both dst and src, pieces of that
//    run per (outer row, entry), outer rows being the other dims: runs of
//    1, 2, 4, 8, 16, 32 or 64 bytes (scalars, short rows) by a loop
//    templated on the piece size and index type, with a fast path for unit
//    strides; longer runs by one memcpy each;
//  - slices of at most 64 elements laid out otherwise: pieces of one
//    element, every dim but the entry dim walked as outer rows;
//  - anything else: the CPU copy loops over the whole slice, once per entry.
// The piece movers prefetch the source of entries ahead when it is larger
// than the L2 (runs up to 1 KiB), and their (outer row, entry) pairs are
// walked with an odometer over the outer dims (in blocks of entries when an
// entry's pieces are scattered in the destination) and shared between
// threads when large.
#include <atomic>
#include <cstring>

#include "backend/cpu/cpu_features.hpp"
#include "backend/cpu/cpu_entry_points.hpp"
#include "backend/cpu/cpu_loops.hpp"
#include "backend/cpu/prefetch.hpp"
#include "backend/cpu/thread_pool.hpp"

namespace sm {
namespace cpu {

namespace {

template <typename I>
const I* index_at(const TensorDesc& index, int64_t i) {
  return static_cast<const I*>(index.data) + i * index.strides[0];
}

// index_in_range without branches: v + size, as unsigned, is below 2 * size
// exactly when -size <= v < size (sizes are far below 2^62).
inline bool outside(int64_t v, int64_t size) {
  return static_cast<uint64_t>(v) + static_cast<uint64_t>(size) >= 2 * static_cast<uint64_t>(size);
}

// Whether any of n >= 1 unit-stride entries is bad, from their least and
// greatest: no early exit, so the loop vectorizes (64-bit compares need
// AVX2: SSE2 has none).
template <typename I>
inline bool any_outside(const I* ix, int64_t n, int64_t size) {
  I lo = ix[0], hi = ix[0];
  for (int64_t j = 1; j < n; ++j) {
    lo = ix[j] < lo ? ix[j] : lo;
    hi = ix[j] > hi ? ix[j] : hi;
  }
  return outside(lo, size) || outside(hi, size);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <typename I>
__attribute__((target("avx2"))) bool any_outside_avx2(const I* ix, int64_t n, int64_t size) {
  return any_outside(ix, n, size);
}
#endif

template <typename I>
bool any_outside_unit(const I* ix, int64_t n, int64_t size) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_has_avx2()) return any_outside_avx2(ix, n, size);
#endif
  return any_outside(ix, n, size);
}

// The first bad entry in [b, e), or -1. Blocks are checked whole and
// searched only when one holds a bad entry.
template <typename I>
int64_t first_bad(const TensorDesc& index, int64_t b, int64_t e, int64_t size) {
  constexpr int64_t kBlock = 1024;
  const I* const ix = static_cast<const I*>(index.data);
  const int64_t is = index.strides[0];
  for (int64_t i = b; i < e; i += kBlock) {
    const int64_t stop = e - i < kBlock ? e : i + kBlock;
    bool bad = false;
    if (is == 1) {
      bad = any_outside_unit(ix + i, stop - i, size);
    } else {
      for (int64_t j = i; j < stop; ++j) bad |= outside(ix[j * is], size);
    }
    if (bad)
      for (int64_t j = i; j < stop; ++j)
        if (outside(ix[j * is], size)) return j;
  }
  return -1;
}

// Long indices are scanned by all threads; the first bad entry is the
// smallest any range finds.
template <typename I>
int64_t first_bad_parallel(const TensorDesc& index, int64_t n, int64_t size) {
  if (n * static_cast<int64_t>(sizeof(I)) < kParallelMinBytes || get_cpu_threads() <= 1)
    return first_bad<I>(index, 0, n, size);
  std::atomic<int64_t> first{n};
  parallel_for(n, 64 << 10, [&](int64_t b, int64_t e) {
    if (b >= first.load(std::memory_order_relaxed)) return;
    const int64_t bad = first_bad<I>(index, b, e, size);
    if (bad < 0) return;
    int64_t seen = first.load(std::memory_order_relaxed);
    while (bad < seen && !first.compare_exchange_weak(seen, bad, std::memory_order_relaxed)) {
    }
  });
  const int64_t bad = first.load();
  return bad < n ? bad : -1;
}

// Everything a mover needs; strides in bytes except the index's (elements).
struct Gather {
  char* d = nullptr;        // dst element [0, ..., 0]
  const char* s = nullptr;  // src element [0, ..., 0]
  const void* index = nullptr;
  int64_t is = 0;    // index stride
  int64_t n = 0;     // index entries
  int64_t size = 0;  // src.sizes[dim], for wrapping negative entries
  int64_t dstep = 0, sstep = 0;  // byte strides along dim
  int64_t piece = 0;             // bytes one entry moves per outer row
  bool prefetch = false;
  // Outer dims (before dim, or every dim but dim for one-element pieces of
  // scattered slices; size-1 ones dropped), outermost first.
  int outer_nd = 0;
  int64_t outer_sizes[kMaxDims] = {};
  int64_t outer_dstep[kMaxDims] = {}, outer_sstep[kMaxDims] = {};
};

// Moves entries [b, e) of one outer row whose dst / src start at d / s.
using RowMover = void (*)(const Gather& g, char* d, const char* s, int64_t b, int64_t e);

// How far ahead the source is prefetched, in entries. Measured (f32, 10^6
// random entries, one thread): from a 40 MB source 5.3 ns/entry without,
// 3.9 at 32 ahead, 2.1 at 128, 2.2-2.6 at 256-1024; from a 4 MB one 1.7
// without, 0.9 at 128.
constexpr int64_t kPrefetchAhead = 128;

// Pieces of N bytes. A fixed-size memcpy compiles to one move and, unlike a
// typed load, needs no alignment: complex64 is 8 bytes but 4-aligned, and
// a piece of a tiny row is aligned to its element only.
template <int N, typename I, bool kUnit>
void move_pieces(const Gather& g, char* d, const char* s, int64_t b, int64_t e) {
  const I* const ix = static_cast<const I*>(g.index);
  const int64_t is = kUnit ? 1 : g.is;
  const int64_t dstep = kUnit ? N : g.dstep;
  const int64_t sstep = kUnit ? N : g.sstep;
  const int64_t size = g.size;
  int64_t i = b;
  if (g.prefetch) {
    // The entry ahead is not wrapped: a negative one prefetches a line
    // before the source, which is harmless (prefetches never fault; the
    // address is computed in integers, never formed as a pointer), and
    // saves the wrap's three instructions where the loop is not waiting on
    // memory (10^6 f32 from a 4 MB source, one thread: 0.75 -> 0.60 ms).
    const uintptr_t base = reinterpret_cast<uintptr_t>(s);
    const uintptr_t step = static_cast<uintptr_t>(sstep);
    for (; i + kPrefetchAhead < e; ++i) {
      const uintptr_t ahead = static_cast<uintptr_t>(ix[(i + kPrefetchAhead) * is]);
      __builtin_prefetch(reinterpret_cast<const void*>(base + ahead * step));
      std::memcpy(d + i * dstep, s + wrap_index(ix[i * is], size) * sstep, N);
    }
  }
#pragma GCC unroll 4
  for (; i < e; ++i) std::memcpy(d + i * dstep, s + wrap_index(ix[i * is], size) * sstep, N);
}

// Rows up to this long are prefetched whole, kRowAhead entries ahead: the
// hardware prefetcher cannot guess where a random short row starts.
constexpr int64_t kRowPrefetchMaxBytes = 1024;
constexpr int64_t kRowAhead = 8;

// Longer contiguous rows: one memcpy each.
template <typename I>
void move_rows(const Gather& g, char* d, const char* s, int64_t b, int64_t e) {
  const I* const ix = static_cast<const I*>(g.index);
  const size_t bytes = static_cast<size_t>(g.piece);
  int64_t i = b;
  if (g.prefetch) {
    for (; i + kRowAhead < e; ++i) {
      const char* next = s + wrap_index(ix[(i + kRowAhead) * g.is], g.size) * g.sstep;
      prefetch_span<3>(next, g.piece);
      std::memcpy(d + i * g.dstep, s + wrap_index(ix[i * g.is], g.size) * g.sstep, bytes);
    }
  }
  for (; i < e; ++i)
    std::memcpy(d + i * g.dstep, s + wrap_index(ix[i * g.is], g.size) * g.sstep, bytes);
}

template <typename I>
RowMover pick_mover(const Gather& g) {
  const bool unit = g.is == 1 && g.dstep == g.piece && g.sstep == g.piece;
  switch (g.piece) {
    case 1: return unit ? move_pieces<1, I, true> : move_pieces<1, I, false>;
    case 2: return unit ? move_pieces<2, I, true> : move_pieces<2, I, false>;
    case 4: return unit ? move_pieces<4, I, true> : move_pieces<4, I, false>;
    case 8: return unit ? move_pieces<8, I, true> : move_pieces<8, I, false>;
    case 16: return unit ? move_pieces<16, I, true> : move_pieces<16, I, false>;
    case 32: return unit ? move_pieces<32, I, true> : move_pieces<32, I, false>;
    case 64: return unit ? move_pieces<64, I, true> : move_pieces<64, I, false>;
    default: return move_rows<I>;
  }
}

// Moves d / s to the next outer row (an odometer over the outer dims);
// false, with d / s back at the first row, after the last one.
bool next_outer_row(const Gather& g, int64_t* coord, char*& d, const char*& s) {
  for (int k = g.outer_nd - 1; k >= 0; --k) {
    d += g.outer_dstep[k];
    s += g.outer_sstep[k];
    if (++coord[k] < g.outer_sizes[k]) return true;
    coord[k] = 0;
    d -= g.outer_sizes[k] * g.outer_dstep[k];
    s -= g.outer_sizes[k] * g.outer_sstep[k];
  }
  return false;
}

// Runs the (outer row, entry) pairs [b, e), row-major: one division per dim
// finds the first row, an odometer the next ones.
void run_pairs(const Gather& g, RowMover mover, int64_t b, int64_t e) {
  int64_t row = b / g.n, i = b - row * g.n;
  int64_t coord[kMaxDims];
  char* d = g.d;
  const char* s = g.s;
  for (int k = g.outer_nd - 1; k >= 0; --k) {
    coord[k] = row % g.outer_sizes[k];
    row /= g.outer_sizes[k];
    d += coord[k] * g.outer_dstep[k];
    s += coord[k] * g.outer_sstep[k];
  }
  int64_t left = e - b;
  for (;;) {
    const int64_t stop = g.n - i < left ? g.n : i + left;
    mover(g, d, s, i, stop);
    left -= stop - i;
    if (left == 0) return;
    i = 0;
    next_outer_row(g, coord, d, s);
  }
}

// Runs entries [b, e) for every outer row, `block` entries at a time: the
// destination pieces of one block, over all rows, stay in cache until done
// (when an entry's pieces are scattered over rows, walking whole rows would
// bring each destination line in once per row).
void run_blocks(const Gather& g, RowMover mover, int64_t block, int64_t b, int64_t e) {
  for (int64_t i0 = b; i0 < e; i0 += block) {
    const int64_t i1 = e - i0 < block ? e : i0 + block;
    int64_t coord[kMaxDims] = {};
    char* d = g.d;
    const char* s = g.s;
    do {
      mover(g, d, s, i0, i1);
    } while (next_outer_row(g, coord, d, s));
  }
}

// Entry blocks of run_blocks: about this many destination bytes, and at
// least this many entries (the mover's loop and prefetch need a run).
constexpr int64_t kBlockBytes = 32 << 10;
constexpr int64_t kMinBlock = 256;

// Moves every (outer row, entry) pair of g, whose fields but the prefetch
// flag are set; `rows` outer rows.
void gather_pieces(Gather& g, DType index_dtype, int64_t rows) {
  const int64_t isize = static_cast<int64_t>(dtype_size(index_dtype));
  const int64_t pairs = rows * g.n;
  const int64_t pair_bytes = 2 * g.piece + isize;
  // Small pieces picked at random from more source than the L2 holds stall
  // on every load; prefetching keeps misses in flight. The source read is
  // the span along dim in every outer row.
  int64_t extent = g.size * (g.sstep < 0 ? -g.sstep : g.sstep);
  for (int k = 0; k < g.outer_nd; ++k) {
    const int64_t step = g.outer_sstep[k] < 0 ? -g.outer_sstep[k] : g.outer_sstep[k];
    extent += (g.outer_sizes[k] - 1) * step;
  }
  // (Counting the outer rows matters: picking 1000 f32 per row from 1000
  // rows of 40 KB took 4.5 ms without prefetch, 2.3 ms with, one thread.)
  g.prefetch = extent >= (1 << 20) && g.piece <= kRowPrefetchMaxBytes &&
               g.n >= 4 * (g.piece <= 64 ? kPrefetchAhead : kRowAhead);
  const RowMover mover =
      index_dtype == DType::I64 ? pick_mover<int64_t>(g) : pick_mover<int32_t>(g);
  const bool serial = pairs * pair_bytes < kParallelMinBytes || get_cpu_threads() <= 1;
  if (rows > 1 && (g.dstep < 0 ? -g.dstep : g.dstep) > g.piece) {
    int64_t block = kBlockBytes / (rows * g.piece);
    if (block < kMinBlock) block = kMinBlock;
    if (serial) {
      run_blocks(g, mover, block, 0, g.n);
      return;
    }
    parallel_for(g.n, kMinRangeBytes / (rows * pair_bytes) + 1,
                 [&](int64_t b, int64_t e) { run_blocks(g, mover, block, b, e); });
    return;
  }
  if (serial) {
    run_pairs(g, mover, 0, pairs);
    return;
  }
  const int64_t grain = kMinRangeBytes / pair_bytes + 1;
  parallel_for(pairs, grain, [&](int64_t b, int64_t e) { run_pairs(g, mover, b, e); });
}

int64_t load_index(const char* index, DType dtype, int64_t i) {
  return dtype == DType::I64 ? reinterpret_cast<const int64_t*>(index)[i]
                             : reinterpret_cast<const int32_t*>(index)[i];
}

// A copy this backend derives from a gather plan p: p's dst and src operands
// without dim `drop` (the entry dim; -1 when the index holds one distinct
// element), both of `dtype`, walked as the tiling rule says for such a copy
// on the host.
struct SliceCopy {
  IterPlan it;
  Tiling tiling;
};

SliceCopy slice_copy(const IterPlan& p, int drop, DType dtype) {
  SliceCopy c;
  IterPlan& q = c.it;
  q.nops = 2;
  for (int k = 0; k < p.ndim; ++k) {
    if (k == drop) continue;
    q.sizes[q.ndim] = p.sizes[k];
    q.strides[0][q.ndim] = p.strides[0][k];
    q.strides[1][q.ndim] = p.strides[1][k];
    ++q.ndim;
  }
  const int es = static_cast<int>(dtype_size(dtype));
  c.tiling = plan_tiling(q, es, es, PlanTarget::Host);
  return c;
}

// Any other slice: the copy loops per entry over the whole slice (every dim
// but the entry dim e), planned once.
void gather_slices(const IterPlan& p, int e, char* d0, const char* s0, const char* ix,
                   DType dtype, DType index_dtype, int64_t size, int64_t sstep) {
  const int64_t n = p.sizes[e];
  const int64_t es = static_cast<int64_t>(dtype_size(dtype));
  const SliceCopy slice = slice_copy(p, e, dtype);
  auto entries = [&](int64_t b, int64_t end) {
    for (int64_t i = b; i < end; ++i) {
      const int64_t v = wrap_index(load_index(ix, index_dtype, i * p.strides[2][e]), size);
      copy_planned(slice.it, slice.tiling, d0 + i * p.strides[0][e] * es, dtype, s0 + v * sstep,
                   dtype, true);
    }
  };
  // Threads over entries only when each slice is below copy's own threading
  // threshold: one level of threads, never a nested pool call.
  const int64_t slice_bytes = 2 * slice.it.numel() * es;
  if (slice_bytes >= kParallelMinBytes || n * slice_bytes < kParallelMinBytes ||
      get_cpu_threads() <= 1) {
    entries(0, n);
    return;
  }
  parallel_for(n, kMinRangeBytes / slice_bytes + 1, entries);
}

// Slices up to this many elements that are not one contiguous run are moved
// element by element (every other dim walked as outer rows, in entry
// blocks) rather than by a copy per entry, whose planning costs ~100 ns.
// Measured, f32 source stored transposed, gathering whole rows, one thread,
// by copies / by elements: slices of 3, 8, 32 elements (10^5 entries)
// 17.8 / 0.29, 10.3 / 0.69, 14.2 / 3.9 ms; 64 (4000 entries) 0.51 / 0.20;
// 128 (2*10^4) 3.6 / 3.5; 512 (5000) 2.0 / 11.8.
constexpr int64_t kSmallSliceElems = 64;

}  // namespace

int64_t first_out_of_range(const TensorDesc& index, int64_t size) {
  const int64_t n = index_scan_length(index);
  return index.dtype == DType::I64 ? first_bad_parallel<int64_t>(index, n, size)
                                   : first_bad_parallel<int32_t>(index, n, size);
}

void run_gather(const OpPlan& plan) {
  const IterPlan& p = plan.iter;
  const DType dtype = plan.dst.dtype, index_dtype = plan.index.dtype;
  const int64_t es = static_cast<int64_t>(dtype_size(dtype));
  char* const d0 = static_cast<char*>(plan.dst.data) + p.offsets[0] * es;
  const char* const s0 = static_cast<const char*>(plan.src.data) + p.offsets[1] * es;
  const char* const ix = static_cast<const char*>(plan.index.data) +
                         p.offsets[2] * static_cast<int64_t>(dtype_size(index_dtype));
  const int64_t sstep = plan.gather_stride * es;
  // The entry dim: where the index moves. None when it holds one distinct
  // element (one entry, or an expanded index): a copy from that slice.
  int e = -1;
  for (int k = 0; k < p.ndim; ++k)
    if (p.strides[2][k] != 0) e = k;
  if (e < 0) {
    const int64_t v = wrap_index(load_index(ix, index_dtype, 0), plan.gather_size);
    const SliceCopy whole = slice_copy(p, -1, dtype);
    copy_planned(whole.it, whole.tiling, d0, dtype, s0 + v * sstep, dtype, true);
    return;
  }
  Gather g;
  g.d = d0;
  g.s = s0;
  g.index = ix;
  g.is = p.strides[2][e];
  g.n = p.sizes[e];
  g.size = plan.gather_size;
  g.dstep = p.strides[0][e] * es;
  g.sstep = sstep;
  // Pieces: the inner dim when it is a run in both dst and src (the index
  // constant along it); else single elements of small slices, every dim but
  // the entry dim walked as outer rows; else a copy per entry.
  const int inner = p.ndim - 1;
  int piece_dim = -1;
  if (inner != e && p.strides[0][inner] == 1 && p.strides[1][inner] == 1) {
    piece_dim = inner;
  } else if (p.numel() / g.n > kSmallSliceElems) {
    gather_slices(p, e, d0, s0, ix, dtype, index_dtype, g.size, sstep);
    return;
  }
  g.piece = (piece_dim >= 0 ? p.sizes[piece_dim] : 1) * es;
  int64_t rows = 1;
  for (int k = 0; k < p.ndim; ++k) {
    if (k == e || k == piece_dim) continue;
    g.outer_sizes[g.outer_nd] = p.sizes[k];
    g.outer_dstep[g.outer_nd] = p.strides[0][k] * es;
    g.outer_sstep[g.outer_nd] = p.strides[1][k] * es;
    ++g.outer_nd;
    rows *= p.sizes[k];
  }
  gather_pieces(g, index_dtype, rows);
}

}  // namespace cpu
}  // namespace sm
