#include "layout/coalesce.hpp"

namespace sm {

namespace {

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// True if dim a should be visited outside dim b (a before b in row-major order).
bool goes_outside(const IterPlan& p, int a, int b) {
  for (int op = 0; op < p.nops; ++op) {
    const int64_t sa = abs64(p.strides[op][a]), sb = abs64(p.strides[op][b]);
    if (sa != sb) return sa > sb;
  }
  return false;  // full tie: keep the original order (the sort is stable)
}

bool chains(const IterPlan& p, int outer, int inner) {
  for (int op = 0; op < p.nops; ++op) {
    int64_t prod;
    if (__builtin_mul_overflow(p.strides[op][inner], p.sizes[inner], &prod)) return false;
    if (p.strides[op][outer] != prod) return false;
  }
  return true;
}

}  // namespace

IterPlan plan_iteration(int nops, const int64_t* sizes, int ndim, const int64_t* const* strides,
                        bool allow_reorder) {
  IterPlan p;
  p.nops = nops;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 0) {
      p.empty = true;
      return p;
    }
  }

  // 2. drop size-1 dims
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    p.sizes[p.ndim] = sizes[d];
    for (int op = 0; op < nops; ++op) p.strides[op][p.ndim] = strides[op][d];
    ++p.ndim;
  }

  if (allow_reorder) {
    // 3. walk operand 0 forwards
    for (int d = 0; d < p.ndim; ++d) {
      if (p.strides[0][d] >= 0) continue;
      for (int op = 0; op < nops; ++op) {
        p.offsets[op] += (p.sizes[d] - 1) * p.strides[op][d];
        p.strides[op][d] = -p.strides[op][d];
      }
    }
    // 4. stable insertion sort, largest operand-0 |stride| outermost
    for (int i = 1; i < p.ndim; ++i) {
      for (int j = i; j > 0 && goes_outside(p, j, j - 1); --j) {
        const int64_t s = p.sizes[j];
        p.sizes[j] = p.sizes[j - 1];
        p.sizes[j - 1] = s;
        for (int op = 0; op < nops; ++op) {
          const int64_t t = p.strides[op][j];
          p.strides[op][j] = p.strides[op][j - 1];
          p.strides[op][j - 1] = t;
        }
      }
    }
  }

  // 5. merge adjacent dims that chain for every operand, keeping the inner stride
  int out = 0;
  for (int d = 1; d < p.ndim; ++d) {
    if (chains(p, out, d)) {
      p.sizes[out] *= p.sizes[d];
      for (int op = 0; op < nops; ++op) p.strides[op][out] = p.strides[op][d];
    } else {
      ++out;
      p.sizes[out] = p.sizes[d];
      for (int op = 0; op < nops; ++op) p.strides[op][out] = p.strides[op][d];
    }
  }
  if (p.ndim > 0) p.ndim = out + 1;
  for (int d = p.ndim; d < kMaxDims; ++d) {
    p.sizes[d] = 0;
    for (int op = 0; op < nops; ++op) p.strides[op][d] = 0;
  }
  return p;
}

int pick_tile_dim(const IterPlan& p, int op) {
  if (p.empty || p.ndim < 2) return -1;
  const int inner = p.ndim - 1;
  const int64_t inner_stride = abs64(p.strides[op][inner]);
  if (inner_stride == 0) return -1;  // broadcast along the row: rows are fills
  int best = -1;
  int64_t best_stride = 0;
  for (int d = 0; d < inner; ++d) {
    const int64_t s = abs64(p.strides[op][d]);
    if (s == 0) continue;
    // ties go to the inner-most candidate: it is nearer in the destination too
    if (best < 0 || s <= best_stride) {
      best = d;
      best_stride = s;
    }
  }
  if (best < 0 || inner_stride <= best_stride) return -1;
  return best;
}

void source_walk_order(const IterPlan& p, int op, int* order, int last) {
  int n = 0;
  for (int d = 0; d < p.ndim; ++d)
    if (d != last) order[n++] = d;
  if (last >= 0 && last < p.ndim) order[n] = last;
  // Insertion sort (at most kMaxDims dims), stable: equal strides keep the
  // plan's (destination) order.
  for (int i = 1; i < n; ++i) {
    const int d = order[i];
    int j = i;
    while (j > 0 && abs64(p.strides[op][order[j - 1]]) < abs64(p.strides[op][d])) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = d;
  }
}

IterPlan reorder_dims(const IterPlan& p, const int* order) {
  IterPlan q = p;
  for (int i = 0; i < p.ndim; ++i) {
    q.sizes[i] = p.sizes[order[i]];
    for (int op = 0; op < p.nops; ++op) q.strides[op][i] = p.strides[op][order[i]];
  }
  return q;
}

int64_t elements_to_line(const IterPlan& p, int op, int dim, uintptr_t first_addr, int esize) {
  if (dim < 0 || dim >= p.ndim || esize <= 0 || p.strides[op][dim] != 1) return 0;
  for (int d = 0; d < p.ndim; ++d)
    if (d != dim && p.sizes[d] > 1 && (p.strides[op][d] * esize) % 64 != 0) return 0;
  const int64_t bytes = static_cast<int64_t>((64 - (first_addr & 63)) & 63);
  if (bytes % esize != 0) return 0;
  const int64_t n = bytes / esize;
  return n < p.sizes[dim] ? n : 0;
}

BlockGrid make_block_grid(const IterPlan& p, const int64_t* block) {
  BlockGrid g;
  g.ndim = p.ndim;
  for (int d = 0; d < p.ndim; ++d) {
    g.sizes[d] = p.sizes[d];
    int64_t b = block[d] < 1 ? 1 : block[d];
    if (b > p.sizes[d]) b = p.sizes[d];
    g.block[d] = b;
    g.cells[d] = (p.sizes[d] + b - 1) / b;
  }
  return g;
}

}  // namespace sm
