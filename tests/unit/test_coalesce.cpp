// Iteration planning (src/layout/coalesce.hpp): fixed cases plus a property
// test that a plan visits exactly the same (destination, source) element
// pairs as the naive row-major walk over the original layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "layout/coalesce.hpp"

namespace {

using sm::IterPlan;
using sm::kMaxDims;
using sm::plan_iteration;

IterPlan plan2(std::vector<int64_t> sizes, std::vector<int64_t> s0, std::vector<int64_t> s1,
               bool reorder = true) {
  const int64_t* st[2] = {s0.data(), s1.data()};
  return plan_iteration(2, sizes.data(), static_cast<int>(sizes.size()), st, reorder);
}

std::vector<int64_t> sizes_of(const IterPlan& p) {
  return std::vector<int64_t>(p.sizes, p.sizes + p.ndim);
}
std::vector<int64_t> strides_of(const IterPlan& p, int op) {
  return std::vector<int64_t>(p.strides[op], p.strides[op] + p.ndim);
}

TEST(Coalesce, ContiguousMergesToOneDim) {
  const IterPlan p = plan2({2, 3, 4}, {12, 4, 1}, {12, 4, 1});
  EXPECT_FALSE(p.empty);
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({24}));
  EXPECT_EQ(strides_of(p, 0), std::vector<int64_t>({1}));
  EXPECT_EQ(strides_of(p, 1), std::vector<int64_t>({1}));
  EXPECT_EQ(p.numel(), 24);
}

TEST(Coalesce, SizeZeroIsEmpty) {
  const IterPlan p = plan2({3, 0, 4}, {4, 4, 1}, {4, 4, 1});
  EXPECT_TRUE(p.empty);
  EXPECT_EQ(p.numel(), 0);
}

TEST(Coalesce, ZeroDimIsOneElement) {
  const IterPlan p = plan2({}, {}, {});
  EXPECT_FALSE(p.empty);
  EXPECT_EQ(p.ndim, 0);
  EXPECT_EQ(p.numel(), 1);
  const IterPlan q = plan2({1, 1}, {5, 7}, {0, 3});  // only size-1 dims
  EXPECT_EQ(q.ndim, 0);
  EXPECT_EQ(q.numel(), 1);
  EXPECT_EQ(q.offsets[0], 0);
  EXPECT_EQ(q.offsets[1], 0);
}

TEST(Coalesce, DropsSizeOneDims) {
  // Size-1 dims with odd strides in between do not prevent the merge.
  const IterPlan p = plan2({2, 1, 3}, {3, 99, 1}, {3, -7, 1});
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({6}));
}

TEST(Coalesce, TransposeKeepsTwoDimsInDestinationOrder) {
  // dst row-major 4x5, src is the transpose of a 5x4 row-major buffer.
  const IterPlan p = plan2({4, 5}, {5, 1}, {1, 4});
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({4, 5}));
  EXPECT_EQ(strides_of(p, 0), std::vector<int64_t>({5, 1}));
  EXPECT_EQ(strides_of(p, 1), std::vector<int64_t>({1, 4}));
  EXPECT_EQ(sm::pick_tile_dim(p, 1), 0);
  EXPECT_EQ(sm::pick_tile_dim(p, 0), -1);
}

TEST(Coalesce, OrdersByDestinationStride) {
  // dst is column-major: the plan walks it forwards, merged to one dim.
  const IterPlan p = plan2({3, 4}, {1, 3}, {1, 3});
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({12}));
  EXPECT_EQ(strides_of(p, 0), std::vector<int64_t>({1}));
  // Without reordering the logical order is kept and nothing merges.
  const IterPlan q = plan2({3, 4}, {1, 3}, {1, 3}, false);
  EXPECT_EQ(sizes_of(q), std::vector<int64_t>({3, 4}));
  EXPECT_EQ(strides_of(q, 0), std::vector<int64_t>({1, 3}));
}

TEST(Coalesce, FlipsNegativeDestinationStrides) {
  // dst is a flipped 1-D view; src contiguous: src becomes reversed.
  const IterPlan p = plan2({5}, {-1}, {1});
  EXPECT_EQ(strides_of(p, 0), std::vector<int64_t>({1}));
  EXPECT_EQ(strides_of(p, 1), std::vector<int64_t>({-1}));
  EXPECT_EQ(p.offsets[0], -4);
  EXPECT_EQ(p.offsets[1], 4);
  // Both flipped: a plain forward copy.
  const IterPlan q = plan2({2, 3}, {-3, -1}, {-3, -1});
  EXPECT_EQ(sizes_of(q), std::vector<int64_t>({6}));
  EXPECT_EQ(strides_of(q, 1), std::vector<int64_t>({1}));
  EXPECT_EQ(q.offsets[0], -5);
  EXPECT_EQ(q.offsets[1], -5);
  // Without reordering negative strides stay.
  const IterPlan r = plan2({5}, {-1}, {1}, false);
  EXPECT_EQ(strides_of(r, 0), std::vector<int64_t>({-1}));
  EXPECT_EQ(r.offsets[0], 0);
}

TEST(Coalesce, BroadcastSourceMerges) {
  // src broadcast along both dims: stride 0 everywhere merges.
  const IterPlan p = plan2({4, 6}, {6, 1}, {0, 0});
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({24}));
  EXPECT_EQ(strides_of(p, 1), std::vector<int64_t>({0}));
  // Broadcast along the rows only: cannot merge (0 != 1 * 6).
  const IterPlan q = plan2({4, 6}, {6, 1}, {0, 1});
  EXPECT_EQ(sizes_of(q), std::vector<int64_t>({4, 6}));
  EXPECT_EQ(sm::pick_tile_dim(q, 1), -1);
  // Broadcast along the inner dim: rows are fills, no tile.
  const IterPlan r = plan2({4, 6}, {6, 1}, {1, 0});
  EXPECT_EQ(sm::pick_tile_dim(r, 1), -1);
}

TEST(Coalesce, PermutationOfFourDims) {
  // 64^4 permuted (2, 3, 0, 1) is a 4096 x 4096 transpose after merging.
  const int64_t n = 64;
  const IterPlan p = plan2({n, n, n, n}, {n * n * n, n * n, n, 1}, {n, 1, n * n * n, n * n});
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({n * n, n * n}));
  EXPECT_EQ(strides_of(p, 1), std::vector<int64_t>({1, n * n}));
  // NCHW -> NHWC: (n, hw, c) with the source fastest along hw.
  const int64_t N = 2, C = 3, H = 4, W = 5;
  const IterPlan q = plan2({N, H, W, C}, {H * W * C, W * C, C, 1}, {C * H * W, W, 1, H * W});
  EXPECT_EQ(sizes_of(q), std::vector<int64_t>({N, H * W, C}));
  EXPECT_EQ(strides_of(q, 1), std::vector<int64_t>({C * H * W, 1, H * W}));
  EXPECT_EQ(sm::pick_tile_dim(q, 1), 1);
}

// Tiled copies walk their cells in source order: a 2-D transpose walks the
// source's fastest dim last; the 4-D reversal walks dims in source order; a
// row loop keeps its row dim last whatever the strides; ties keep the plan's
// order.
TEST(Coalesce, SourceWalkOrder) {
  int order[kMaxDims];
  const IterPlan t = plan2({4096, 4096}, {4096, 1}, {1, 4096});
  sm::source_walk_order(t, 1, order, -1);
  EXPECT_EQ(order[0], 1);
  EXPECT_EQ(order[1], 0);
  const IterPlan r = plan2({64, 64, 64, 64}, {262144, 4096, 64, 1}, {1, 64, 4096, 262144});
  ASSERT_EQ(r.ndim, 4);
  sm::source_walk_order(r, 1, order, -1);
  EXPECT_EQ(std::vector<int>(order, order + 4), (std::vector<int>{3, 2, 1, 0}));
  sm::source_walk_order(r, 1, order, 3);
  EXPECT_EQ(std::vector<int>(order, order + 4), (std::vector<int>{2, 1, 0, 3}));
  // (0,2,1,3): rows of 64 contiguous on both sides; the source continues
  // from row to row along the plan's dim 2, which becomes the fastest outer dim.
  const IterPlan m = plan2({64, 64, 64, 64}, {262144, 4096, 64, 1}, {262144, 64, 4096, 1});
  ASSERT_EQ(m.ndim, 4);
  sm::source_walk_order(m, 1, order, 3);
  EXPECT_EQ(std::vector<int>(order, order + 4), (std::vector<int>{0, 2, 1, 3}));
  // Equal (here negative and positive) strides keep the plan's order.
  const IterPlan e = plan2({3, 5, 7}, {35, 7, 1}, {-2, 2, 1});
  ASSERT_EQ(e.ndim, 3);
  sm::source_walk_order(e, 1, order, -1);
  EXPECT_EQ(std::vector<int>(order, order + 3), (std::vector<int>{0, 1, 2}));

  // reorder_dims moves sizes and every operand's strides together and keeps
  // the offsets: the same pairs are visited.
  const int rev[4] = {3, 2, 1, 0};
  const IterPlan q = sm::reorder_dims(r, rev);
  EXPECT_EQ(sizes_of(q), (std::vector<int64_t>{64, 64, 64, 64}));
  EXPECT_EQ(strides_of(q, 0), (std::vector<int64_t>{1, 64, 4096, 262144}));
  EXPECT_EQ(strides_of(q, 1), (std::vector<int64_t>{262144, 4096, 64, 1}));
  EXPECT_EQ(q.offsets[0], r.offsets[0]);
  EXPECT_EQ(q.offsets[1], r.offsets[1]);
}

// The elements a tiled copy peels off so its row pieces start on lines.
TEST(Coalesce, ElementsToLine) {
  // 4096 x 4096 f32 rows (16 KiB apart): every row starts alike.
  const IterPlan t = plan2({4096, 4096}, {4096, 1}, {1, 4096});
  EXPECT_EQ(sm::elements_to_line(t, 0, 1, 0x1000, 4), 0);       // on a line
  EXPECT_EQ(sm::elements_to_line(t, 0, 1, 0x1010, 4), 12);      // NumPy: 16 bytes in
  EXPECT_EQ(sm::elements_to_line(t, 0, 1, 0x103C, 4), 1);
  EXPECT_EQ(sm::elements_to_line(t, 1, 0, 0x2008, 4), 14);      // the source along its fast dim
  EXPECT_EQ(sm::elements_to_line(t, 0, 1, 0x1012, 4), 0);       // not a whole element
  EXPECT_EQ(sm::elements_to_line(t, 1, 1, 0x2008, 4), 0);       // dim without unit stride
  EXPECT_EQ(sm::elements_to_line(t, 0, 2, 0x1010, 4), 0);       // no such dim
  // Rows 100 floats apart start at different offsets: no peel helps.
  const IterPlan odd = plan2({50, 100}, {100, 1}, {1, 50});
  EXPECT_EQ(sm::elements_to_line(odd, 0, 1, 0x1010, 4), 0);
  // The boundary past the dim's end: nothing to peel.
  const IterPlan narrow = plan2({64, 8}, {16, 1}, {1, 64});
  EXPECT_EQ(sm::elements_to_line(narrow, 0, 1, 0x1010, 4), 0);
  // 1-byte elements, rows of three lines: 59 bytes to the boundary.
  const IterPlan bytes = plan2({256, 192}, {192, 1}, {1, 256});
  EXPECT_EQ(sm::elements_to_line(bytes, 0, 1, 0x1005, 1), 59);
}

TEST(Coalesce, MergeNeedsAllOperands) {
  // dst contiguous, src with a gap between rows: no merge.
  const IterPlan p = plan2({3, 4}, {4, 1}, {8, 1});
  EXPECT_EQ(sizes_of(p), std::vector<int64_t>({3, 4}));
  // One operand only: merges.
  const int64_t s0[2] = {4, 1};
  const int64_t* st[1] = {s0};
  const int64_t sz[2] = {3, 4};
  const IterPlan q = plan_iteration(1, sz, 2, st, true);
  EXPECT_EQ(q.ndim, 1);
}

TEST(Coalesce, BlockGrid) {
  const IterPlan p = plan2({10, 7}, {1, 10}, {7, 1});
  ASSERT_EQ(p.ndim, 2);
  const int64_t block[2] = {4, 3};  // sizes (7, 10) after ordering by dst stride
  const sm::BlockGrid g = sm::make_block_grid(p, block);
  EXPECT_EQ(g.cells[0], 2);  // 7 / 4
  EXPECT_EQ(g.cells[1], 4);  // 10 / 3
  EXPECT_EQ(g.total(), 8);
  int64_t c[kMaxDims];
  g.coords(7, c);
  EXPECT_EQ(c[0], 1);
  EXPECT_EQ(c[1], 3);
  EXPECT_EQ(g.extent(0, 1), 3);
  EXPECT_EQ(g.extent(1, 3), 1);
  EXPECT_EQ(g.extent(1, 0), 3);
  // A block larger than the dim means the whole dim; < 1 means 1.
  const int64_t big[2] = {100, 0};
  const sm::BlockGrid h = sm::make_block_grid(p, big);
  EXPECT_EQ(h.cells[0], 1);
  EXPECT_EQ(h.block[0], 7);
  EXPECT_EQ(h.cells[1], 10);
}

// ---- property test ---------------------------------------------------------

struct RandLayout {
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides;  // per operand
};

// Operand 0 never overlaps itself (a permuted, possibly strided and flipped
// dense layout); other operands may broadcast and overlap.
RandLayout random_layout(std::mt19937& rng, int nops) {
  RandLayout L;
  const int ndim = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int d = 0; d < ndim; ++d) {
    const int r = std::uniform_int_distribution<int>(0, 9)(rng);
    L.sizes.push_back(r == 0 ? 1 : r == 1 && ndim < 4 ? 0 : std::uniform_int_distribution<int>(1, 5)(rng));
  }
  for (int op = 0; op < nops; ++op) {
    std::vector<int> perm(ndim);
    for (int d = 0; d < ndim; ++d) perm[d] = d;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> st(ndim);
    int64_t acc = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      const int d = perm[i];
      const int64_t gap = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 2 : 1;
      st[d] = acc * gap;
      acc *= std::max<int64_t>(L.sizes[d], 1) * gap;
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) st[d] = -st[d];
      if (op > 0 && std::uniform_int_distribution<int>(0, 4)(rng) == 0) st[d] = 0;
    }
    L.strides.push_back(st);
  }
  return L;
}

using Tuple = std::vector<int64_t>;

std::vector<Tuple> naive_walk(const RandLayout& L, int nops) {
  std::vector<Tuple> out;
  const int nd = static_cast<int>(L.sizes.size());
  for (int64_t s : L.sizes)
    if (s == 0) return out;
  std::vector<int64_t> idx(nd, 0);
  for (;;) {
    Tuple t(nops, 0);
    for (int op = 0; op < nops; ++op)
      for (int d = 0; d < nd; ++d) t[op] += idx[d] * L.strides[op][d];
    out.push_back(t);
    int d = nd - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < L.sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

std::vector<Tuple> plan_walk(const IterPlan& p) {
  std::vector<Tuple> out;
  if (p.empty) return out;
  std::vector<int64_t> idx(p.ndim, 0);
  for (;;) {
    Tuple t(p.nops, 0);
    for (int op = 0; op < p.nops; ++op) {
      t[op] = p.offsets[op];
      for (int d = 0; d < p.ndim; ++d) t[op] += idx[d] * p.strides[op][d];
    }
    out.push_back(t);
    int d = p.ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < p.sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

TEST(Coalesce, RandomLayoutsVisitTheSamePairs) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    const int nops = 1 + iter % 3;
    const RandLayout L = random_layout(rng, nops);
    std::vector<const int64_t*> st;
    for (auto& s : L.strides) st.push_back(s.data());
    const bool reorder = iter % 5 != 0;
    const IterPlan p =
        plan_iteration(nops, L.sizes.data(), static_cast<int>(L.sizes.size()), st.data(), reorder);
    std::vector<Tuple> a = naive_walk(L, nops), b = plan_walk(p);
    ASSERT_EQ(a.size(), b.size()) << "iter " << iter;
    ASSERT_EQ(static_cast<int64_t>(a.size()), p.numel());
    if (!reorder) {
      ASSERT_EQ(a, b) << "order must be kept, iter " << iter;
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    ASSERT_EQ(a, b) << "iter " << iter;
    // Walking the plan in any operand's order visits the same pairs, with
    // or without a pinned last dim.
    if (p.ndim > 0 && nops > 1) {
      int order[kMaxDims];
      sm::source_walk_order(p, 1, order, iter % 2 ? p.ndim - 1 : -1);
      std::vector<int> seen(order, order + p.ndim);
      std::sort(seen.begin(), seen.end());
      for (int d = 0; d < p.ndim; ++d) ASSERT_EQ(seen[d], d) << "not a permutation, iter " << iter;
      if (iter % 2) ASSERT_EQ(order[p.ndim - 1], p.ndim - 1);
      std::vector<Tuple> c = plan_walk(sm::reorder_dims(p, order));
      std::sort(c.begin(), c.end());
      ASSERT_EQ(a, c) << "reordered walk, iter " << iter;
    }

    // Shape of the plan: no size-1 dims, no mergeable neighbours, and with
    // reordering operand 0 walks forwards, largest stride outermost.
    for (int d = 0; d < p.ndim; ++d) ASSERT_GT(p.sizes[d], 1);
    for (int d = 0; d + 1 < p.ndim; ++d) {
      bool all_chain = true;
      for (int op = 0; op < nops; ++op)
        all_chain &= p.strides[op][d] == p.strides[op][d + 1] * p.sizes[d + 1];
      ASSERT_FALSE(all_chain) << "unmerged dims " << d << ", iter " << iter;
      if (reorder) {
        ASSERT_GE(p.strides[0][d], p.strides[0][d + 1]);
      }
    }
    for (int d = 0; reorder && d < p.ndim; ++d) ASSERT_GE(p.strides[0][d], 0);
    ASSERT_LE(p.ndim, static_cast<int>(L.sizes.size()));
  }
}

}  // namespace
