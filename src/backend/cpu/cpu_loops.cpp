#include "backend/cpu/cpu_loops.hpp"

#include "backend/cpu/prefetch.hpp"
#include "backend/cpu/stream_stores.hpp"
#include "backend/cpu/thread_pool.hpp"
#include "backend/cpu/tile_gather.hpp"

namespace sm {
namespace cpu {

namespace {

// Row pieces below this many bytes are not split further for threading.
constexpr int64_t kMinRowPieceBytes = 64 << 10;

struct Run {
  const LoopSpec* spec;
  BlockGrid g;
  char* d;
  const char* s;
  int tile_dim;  // grid dim of the tile rows; -1: rows mode
  int inner;     // grid dim of the destination's inner dim
  int64_t dstep[kMaxDims];  // bytes between cells along each dim
  int64_t sstep[kMaxDims];
  int64_t dstride_inner, sstride_inner;  // elements
  int64_t dstride_k, sstride_k;

  GatherFn gather;
  RowsOutFn rows_out;
  // Cells whose source is prefetched ahead of use (0: none).
  int64_t ahead = 0;
  int64_t prefetch_bytes = 0;  // rows mode: bytes of source per row (unit stride)
  // Rows mode: plain copies of unit-stride rows whose source is read in
  // order go out with non-temporal stores (stream_copy) instead of the row
  // kernel.
  bool stream_rows = false;

  // Advances an odometer by one cell.
  void step(int64_t* coord, int64_t& doff, int64_t& soff) const {
    for (int i = g.ndim - 1; i >= 0; --i) {
      if (++coord[i] < g.cells[i]) {
        doff += dstep[i];
        soff += sstep[i];
        return;
      }
      doff -= (g.cells[i] - 1) * dstep[i];
      soff -= (g.cells[i] - 1) * sstep[i];
      coord[i] = 0;
    }
  }

  // One tile: the source gathered into a buffer in destination order, then
  // the buffer's rows written out (plain copies) or fed to the row kernel.
  void tile(char* dp, const char* sp, int64_t rows, int64_t cols, const char* next,
            const char* next_d) const {
    alignas(64) unsigned char buf[kTileBufBytes];
    gather(buf, sp, rows, cols, sstride_k, sstride_inner, next);
    const int64_t drow = dstride_k * spec->dsize, brow = cols * spec->ssize;
    if (next_d && dstride_inner == 1) {
      for (int64_t r = 0; r < rows; ++r) prefetch_span(next_d + r * drow, cols * spec->dsize);
    }
    if (spec->plain_copy && dstride_inner == 1) {
      rows_out(dp, drow, buf, brow, rows, spec->stream_tiles);
      return;
    }
    if (!spec->reads_dst && dstride_inner == 1) {
      // Conversions: the whole tile in one call of the row kernel (its rows
      // are dense in the buffer), into a second buffer written out as whole
      // rows like a plain copy: converting row by row straight into the
      // destination would make every short piece a pair of cache misses,
      // each with a read for ownership.
      alignas(64) unsigned char out[kTileBufBytes];
      spec->row(spec->ctx, reinterpret_cast<char*>(out), reinterpret_cast<const char*>(buf),
                rows * cols, 1, 1);
      rows_out(dp, drow, out, cols * spec->dsize, rows, spec->stream_tiles);
      return;
    }
    for (int64_t r = 0; r < rows; ++r)
      spec->row(spec->ctx, dp + r * drow, reinterpret_cast<const char*>(buf) + r * brow, cols,
                dstride_inner, 1);
  }

  // Runs cells [begin, end) of the grid.
  void range(int64_t begin, int64_t end) const {
    const int nd = g.ndim;
    int64_t coord[kMaxDims], acoord[kMaxDims];
    int64_t doff = 0, soff = 0, adoff = 0, asoff = 0;
    g.coords(begin, coord);
    for (int i = 0; i < nd; ++i) {
      doff += coord[i] * dstep[i];
      soff += coord[i] * sstep[i];
    }
    // A second odometer `ahead` cells further on, for prefetching.
    const bool pf = ahead > 0 && begin + ahead < end;
    if (pf) {
      g.coords(begin + ahead, acoord);
      for (int i = 0; i < nd; ++i) adoff += acoord[i] * dstep[i], asoff += acoord[i] * sstep[i];
    }
    for (int64_t w = begin; w < end; ++w) {
      const int64_t cols = g.extent(inner, coord[inner]);
      const bool pf_now = pf && w + ahead < end;
      if (tile_dim >= 0) {
        tile(d + doff, s + soff, g.extent(tile_dim, coord[tile_dim]), cols,
             pf_now ? s + asoff : nullptr, pf_now && spec->reads_dst ? d + adoff : nullptr);
      } else {
        if (pf_now) {
          const char* p = s + asoff - (sstride_inner < 0 ? prefetch_bytes - spec->ssize : 0);
          prefetch_span(p, prefetch_bytes);
        }
        if (stream_rows) {
          stream_copy(d + doff, s + soff, static_cast<size_t>(cols * spec->ssize));
        } else {
          spec->row(spec->ctx, d + doff, s + soff, cols, dstride_inner, sstride_inner);
        }
      }
      step(coord, doff, soff);
      if (pf) step(acoord, adoff, asoff);
    }
    stream_fence();  // row kernels may have used non-temporal stores
  }
};

}  // namespace

// The rule and the new order: cpu_loops.hpp. sd is S, dd is D.
void block_tile_walk(IterPlan* w, int64_t* block, int* tile_dim, int* inner, int dsize,
                     int ssize) {
  const int nd = w->ndim;
  if (nd + 2 > kMaxDims) return;
  const int td = *tile_dim, in = *inner;
  const auto other = [&](int i) { return i != td && i != in; };
  const auto bytes = [&](int op, int i) {
    const int64_t st = w->strides[op][i];
    return (st < 0 ? -st : st) * (op == 0 ? dsize : ssize);
  };
  int sd = -1, dd = -1;
  for (int i = nd - 1; i >= 0 && sd < 0; --i)
    if (other(i)) sd = i;
  for (int i = 0; i < nd; ++i)
    if (other(i) && i != sd && (dd < 0 || bytes(0, i) < bytes(0, dd))) dd = i;
  if (sd < 0 || dd < 0) return;
  if (bytes(0, sd) < kPageBytes || bytes(1, sd) >= kPageBytes || bytes(0, dd) >= kPageBytes ||
      bytes(1, dd) < kPageBytes)
    return;
  for (int i : {sd, dd})
    if (w->sizes[i] % kWalkBlock != 0 || w->sizes[i] < 2 * kWalkBlock) return;
  IterPlan q = *w;
  int64_t qblock[kMaxDims];
  int n = 0;
  const auto put = [&](int i, bool hi, bool whole) {
    q.sizes[n] = whole ? w->sizes[i] : hi ? w->sizes[i] / kWalkBlock : kWalkBlock;
    for (int op = 0; op < w->nops; ++op)
      q.strides[op][n] = w->strides[op][i] * (!whole && hi ? kWalkBlock : 1);
    qblock[n] = whole ? block[i] : 1;
    if (whole && i == td) *tile_dim = n;
    if (whole && i == in) *inner = n;
    ++n;
  };
  for (int i = 0; i < nd; ++i) {
    if (i == dd) {
      put(dd, true, false);
    } else if (i == sd) {
      put(sd, true, false);
      put(dd, false, false);
      put(sd, false, false);
    } else {
      put(i, false, true);
    }
  }
  q.ndim = n;
  *w = q;
  for (int i = 0; i < n; ++i) block[i] = qblock[i];
}

namespace {

// The rows read the source as one stream (plan_prefetch).
bool rows_are_one_stream(const BlockGrid& g, const int64_t* strides, int inner) {
  if (strides[inner] != 1) return false;
  for (int i = g.ndim - 1; i >= 0; --i)
    if (g.cells[i] > 1) return strides[i] * g.block[i] == g.block[inner];
  return false;  // one cell: nothing comes next
}

}  // namespace

Prefetch plan_prefetch(const BlockGrid& g, const int64_t* sstrides, int tile_dim, int inner,
                       int ssize) {
  Prefetch f;
  if (tile_dim >= 0) {
    f.ahead = 1;
    return f;
  }
  const int64_t ss = sstrides[inner];
  const int64_t row_bytes = g.block[inner] * ssize;
  if ((ss == 1 || ss == -1) && g.ndim > 1 && row_bytes < kRowPrefetchBytes &&
      !rows_are_one_stream(g, sstrides, inner)) {
    f.ahead = (kRowPrefetchBytes + row_bytes - 1) / row_bytes;
    f.bytes = row_bytes;
  }
  return f;
}

namespace {

void run_from(const IterPlan& p, const Tiling& t, char* d, const char* s, const LoopSpec& spec);

// Runs p as two parts split along dim at `head` elements, with the same
// tiling (each part tiles where its extents still fit).
void run_split(const IterPlan& p, const Tiling& t, int dim, int64_t head, char* d, const char* s,
               const LoopSpec& spec) {
  IterPlan a = p, b = p;
  a.sizes[dim] = head;
  b.sizes[dim] = p.sizes[dim] - head;
  run_from(a, t, d, s, spec);
  run_from(b, t, d + head * p.strides[0][dim] * spec.dsize,
           s + head * p.strides[1][dim] * spec.ssize, spec);
}

// p's offsets are already applied: d / s are the first visited elements.
void run_from(const IterPlan& p, const Tiling& t, char* d, const char* s, const LoopSpec& spec) {
  if (p.ndim == 0) {
    spec.row(spec.ctx, d, s, 1, 0, 0);
    stream_fence();
    return;
  }
  const int nd = p.ndim;
  const int inner = nd - 1;
  const int64_t numel = p.numel();
  const int64_t total_bytes = numel * spec.bytes_per_elem;
  const int threads = total_bytes >= kParallelMinBytes ? get_cpu_threads() : 1;

  Run run;
  run.spec = &spec;
  run.d = d;
  run.s = s;
  run.tile_dim = -1;
  run.inner = inner;
  run.gather = gather_fn(spec.ssize);
  run.rows_out = rows_out_fn();
  int64_t block[kMaxDims];
  for (int i = 0; i < nd; ++i) block[i] = 1;

  // A part of a split plan may be too short to tile along its pair.
  const bool tiled =
      t.shape == IterShape::Transpose && tiles_fit(p, t.dim_i, t.dim_j, PlanTarget::Host);
  const int k = t.shape == IterShape::Transpose ? t.dim_i : -1;
  const int maxsize = spec.dsize > spec.ssize ? spec.dsize : spec.ssize;
  IterPlan walk = p;  // p with its dims in the order the cells are visited
  if (tiled) {
    // The plan's sides (backend/tiling.hpp): shaped by the larger element,
    // so both the gathered tile and its converted copy fit a tile buffer.
    const int64_t tile_rows = t.side_i, tile_cols = t.side_j;
    // Tiles whose row pieces start inside cache lines write partial lines
    // at both ends of every piece (read for ownership, then written back,
    // once for each of the two tiles sharing the line) and read one line
    // more per source piece. Where every row starts alike and is many tiles
    // long, the first elements up to a line boundary run on their own, so
    // every tile after them is line-aligned (NumPy's arrays start 16 bytes
    // into a page). Not for dims of a few tiles: there the split cuts every
    // tile in two passes over memory instead, and such short rows are mostly
    // contiguous blocks whose partial lines are shared with the next row
    // anyway.
    constexpr int64_t kPeelMinTiles = 8;
    if (p.sizes[inner] >= kPeelMinTiles * tile_cols) {
      const int64_t head =
          elements_to_line(p, 0, inner, reinterpret_cast<uintptr_t>(d), spec.dsize);
      if (head > 0) return run_split(p, t, inner, head, d, s, spec);
    }
    if (p.sizes[k] >= kPeelMinTiles * tile_rows) {
      const int64_t head = elements_to_line(p, 1, k, reinterpret_cast<uintptr_t>(s), spec.ssize);
      if (head > 0) return run_split(p, t, k, head, d, s, spec);
    }
    // Tiles, visited in source order (see source_walk_order): the grid's
    // dims are p's dims reordered, so its last dim is k.
    int order[kMaxDims];
    source_walk_order(p, 1, order, -1);
    walk = reorder_dims(p, order);
    for (int i = 0; i < nd; ++i) {
      block[i] = 1;
      if (order[i] == k) run.tile_dim = i, block[i] = tile_rows;
      if (order[i] == inner) run.inner = i, block[i] = tile_cols;
    }
    block_tile_walk(&walk, block, &run.tile_dim, &run.inner, spec.dsize, spec.ssize);
  } else {
    // Rows visited in source order too (the row dim stays last), unless
    // the source is broadcast along some dim: then destination order keeps
    // the writes sequential while the repeated source stays in cache.
    bool broadcast = false;
    for (int i = 0; i < inner; ++i) broadcast = broadcast || p.strides[1][i] == 0;
    if (nd > 2 && !broadcast) {
      int order[kMaxDims];
      source_walk_order(p, 1, order, inner);
      walk = reorder_dims(p, order);
    }
    // Rows read in source order but written scattered (a permutation that
    // keeps the inner dim, such as (0,2,1,3) of attention heads) lose a read
    // for ownership per destination line to ordinary stores; large plain
    // copies stream them instead, rows of whole lines or more.
    run.stream_rows = spec.plain_copy && spec.stream_tiles && !broadcast &&
                      p.strides[0][inner] == 1 && p.strides[1][inner] == 1 &&
                      p.sizes[inner] * spec.dsize >= kStreamRowMinBytes;
    block[inner] = p.sizes[inner];
    // Few long rows: cut them so every thread gets work.
    const int64_t outer = numel / p.sizes[inner];
    const int64_t row_bytes = p.sizes[inner] * maxsize;
    if (threads > 1 && outer < 8 * threads && row_bytes > 2 * kMinRowPieceBytes) {
      int64_t pieces = (8 * threads + outer - 1) / outer;
      int64_t piece = (p.sizes[inner] + pieces - 1) / pieces;
      const int64_t min_piece = kMinRowPieceBytes / maxsize;
      if (piece < min_piece) piece = min_piece;
      block[inner] = piece;
    }
  }
  run.g = make_block_grid(walk, block);
  for (int i = 0; i < walk.ndim; ++i) {
    run.dstep[i] = run.g.block[i] * walk.strides[0][i] * spec.dsize;
    run.sstep[i] = run.g.block[i] * walk.strides[1][i] * spec.ssize;
  }
  run.dstride_inner = p.strides[0][inner];
  run.sstride_inner = p.strides[1][inner];
  run.dstride_k = k >= 0 ? p.strides[0][k] : 0;
  run.sstride_k = k >= 0 ? p.strides[1][k] : 0;

  const Prefetch pf = plan_prefetch(run.g, walk.strides[1], run.tile_dim, run.inner, spec.ssize);
  run.ahead = pf.ahead;
  run.prefetch_bytes = pf.bytes;

  const int64_t cells = run.g.total();
  if (threads <= 1 || cells < 2) {
    run.range(0, cells);
    return;
  }
  const int64_t bytes_per_cell = total_bytes / cells + 1;
  int64_t grain = kMinRangeBytes / bytes_per_cell;
  if (grain < 1) grain = 1;
  parallel_for(cells, grain, [&run](int64_t b, int64_t e) { run.range(b, e); });
}

}  // namespace

void run_loops(const IterPlan& p, const Tiling& t, char* d, const char* s, const LoopSpec& spec) {
  if (p.empty) return;
  run_from(p, t, d + p.offsets[0] * spec.dsize, s + p.offsets[1] * spec.ssize, spec);
}

}  // namespace cpu
}  // namespace sm
