// The blocked tile walk of the CPU loop driver (block_tile_walk,
// backend/cpu/cpu_loops.hpp): which walks it cuts and how, and copies that
// take it; how far ahead the driver prefetches each kind of walk
// (plan_prefetch: none where rows read the source as one stream); bit-exact against a plain element loop for 1-, 2-, 4- and 8-byte
// elements, padded and dense layouts, negative strides, operands that start
// inside a cache line, on one thread and on the pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/cpu_loops.hpp"

namespace {

using sm::DType;
using sm::IterPlan;
using sm::cpu::block_tile_walk;
using sm::cpu::plan_prefetch;
using sm::cpu::kWalkBlock;

// A walk of 4 dims (outermost first) over a destination and a source.
IterPlan walk4(const int64_t (&sizes)[4], const int64_t (&dst)[4], const int64_t (&src)[4]) {
  IterPlan w;
  w.nops = 2;
  w.ndim = 4;
  for (int i = 0; i < 4; ++i) {
    w.sizes[i] = sizes[i];
    w.strides[0][i] = dst[i];
    w.strides[1][i] = src[i];
  }
  return w;
}

// The 4-D reversal of n^4 as run_loops walks it: source order [i3, i2, i1,
// i0]; the tile rows are i0 (the source's unit-stride dim), its columns i3
// (the destination's).
IterPlan reversal_walk(int64_t n) {
  return walk4({n, n, n, n}, {1, n, n * n, n * n * n}, {n * n * n, n * n, n, 1});
}

TEST(CpuWalk, ReversalWalkIsBlockedInItsMiddleDims) {
  for (int es : {1, 2, 4, 8}) {
    IterPlan w = reversal_walk(64);
    int64_t block[sm::kMaxDims] = {64, 1, 1, 32};
    int tile_dim = 3, inner = 0;
    block_tile_walk(&w, block, &tile_dim, &inner, es, es);
    ASSERT_EQ(w.ndim, 6) << es << "-byte elements";
    // i3, i2 / 16, i1 / 16, i2 % 16, i1 % 16, i0.
    const int64_t sizes[] = {64, 4, 4, 16, 16, 64};
    const int64_t dst[] = {1, 64 * 16, 4096 * 16, 64, 4096, 262144};
    const int64_t src[] = {262144, 4096 * 16, 64 * 16, 4096, 64, 1};
    const int64_t blk[] = {64, 1, 1, 1, 1, 32};
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(w.sizes[i], sizes[i]) << "dim " << i;
      EXPECT_EQ(w.strides[0][i], dst[i]) << "dim " << i;
      EXPECT_EQ(w.strides[1][i], src[i]) << "dim " << i;
      EXPECT_EQ(block[i], blk[i]) << "dim " << i;
    }
    EXPECT_EQ(tile_dim, 5);
    EXPECT_EQ(inner, 0);
  }
}

TEST(CpuWalk, OtherWalksAreLeftAlone) {
  const auto unchanged = [](IterPlan w, int tile_dim, int inner, int es) {
    const IterPlan before = w;
    int64_t block[sm::kMaxDims] = {1, 1, 1, 1};
    block[tile_dim] = 32;
    block[inner] = 64;
    int td = tile_dim, in = inner;
    block_tile_walk(&w, block, &td, &in, es, es);
    return w.ndim == before.ndim && td == tile_dim && in == inner &&
           std::memcmp(w.sizes, before.sizes, sizeof w.sizes) == 0 &&
           std::memcmp(w.strides, before.strides, sizeof w.strides) == 0;
  };
  // (1,0,3,2) of 64^4, walked [i1, i0, i3, i2]: a step of i0 moves the
  // source 16 KiB, so source order already changes page with every step.
  EXPECT_TRUE(unchanged(walk4({64, 64, 64, 64}, {4096, 262144, 1, 64}, {262144, 4096, 64, 1}), 3,
                        2, 4));
  // The reversal of 40^4 (not a multiple of kWalkBlock): no blocks.
  EXPECT_TRUE(unchanged(reversal_walk(40), 3, 0, 4));
  // A reversal of [64, 16, 64, 64] (i1 is one block long): no blocks.
  EXPECT_TRUE(unchanged(walk4({64, 64, kWalkBlock, 64}, {1, 64, 4096, 4096 * kWalkBlock},
                              {1024 * 64, 1024, 64, 1}),
                        3, 0, 4));
  // The reversal of 32^4 with 2-byte elements: a step of i1 moves the
  // destination 2 KiB, less than a page.
  EXPECT_TRUE(unchanged(reversal_walk(32), 3, 0, 2));
}

// The grid of a walk (outermost dim first) with the given cell sides.
sm::BlockGrid grid(std::vector<int64_t> sizes, std::vector<int64_t> block) {
  IterPlan w;
  w.nops = 2;
  w.ndim = static_cast<int>(sizes.size());
  for (int i = 0; i < w.ndim; ++i) w.sizes[i] = sizes[i];
  return sm::make_block_grid(w, block.data());
}

// plan_prefetch's answer for a walk: {ahead, bytes}.
std::pair<int64_t, int64_t> prefetch(std::vector<int64_t> sizes, std::vector<int64_t> block,
                                     std::vector<int64_t> sstrides, int tile_dim, int ssize) {
  const sm::cpu::Prefetch f = plan_prefetch(grid(std::move(sizes), std::move(block)),
                                            sstrides.data(), tile_dim,
                                            static_cast<int>(sstrides.size()) - 1, ssize);
  return {f.ahead, f.bytes};
}

TEST(CpuWalk, RowsThatContinueInTheSourceAreNotPrefetched) {
  using P = std::pair<int64_t, int64_t>;
  // (0,2,1,3) of 64^4 f32 as rows, walked in source order [i0, i1, i2, i3]
  // (rows i3): each row follows the last in the source.
  const std::vector<int64_t> heads = {262144, 4096, 64, 1};
  EXPECT_EQ(prefetch({64, 64, 64, 64}, {1, 1, 1, 64}, heads, -1, 4), P(0, 0));
  // The same rows cut in pieces of 16: still one stream.
  EXPECT_EQ(prefetch({64, 64, 64, 64}, {1, 1, 1, 16}, heads, -1, 4), P(0, 0));
  // Where the dims inside have one cell, the first dim with more decides.
  EXPECT_EQ(prefetch({8, 1, 64}, {1, 1, 64}, {64, 4096, 1}, -1, 4), P(0, 0));

  // Rows a padded source apart (the next row starts 8 elements further
  // on): 256-byte rows, 8 of them (2 KiB) ahead.
  EXPECT_EQ(prefetch({64, 64, 64}, {1, 1, 64}, {72 * 64, 72, 1}, -1, 4), P(8, 256));
  // Rows one row apart but walked backwards, and rows read backwards in
  // either order of rows: prefetched.
  EXPECT_EQ(prefetch({64, 64}, {1, 64}, {-64, 1}, -1, 4), P(8, 256));
  EXPECT_EQ(prefetch({64, 64}, {1, 64}, {-64, -1}, -1, 4), P(8, 256));
  EXPECT_EQ(prefetch({64, 64}, {1, 64}, {64, -1}, -1, 4), P(8, 256));
  // 100-byte rows: 21 rows make the 2 KiB.
  EXPECT_EQ(prefetch({64, 25}, {1, 25}, {40, 1}, -1, 4), P(21, 100));
  // A row read again and again (a source broadcast along the outer dim) is
  // no stream either: prefetched, as any short row.
  EXPECT_EQ(prefetch({64, 64}, {1, 64}, {0, 1}, -1, 4), P(8, 256));
  // Rows of 2 KiB or more, rows along a non-unit source stride, a single
  // row: not prefetched.
  EXPECT_EQ(prefetch({64, 512}, {1, 512}, {1024, 1}, -1, 4), P(0, 0));
  EXPECT_EQ(prefetch({64, 64}, {1, 64}, {1, 64}, -1, 4), P(0, 0));
  EXPECT_EQ(prefetch({64}, {64}, {1}, -1, 4), P(0, 0));
  // Tiles: the next one, even where they read the source as one stream
  // (rotate5d's [j, i] tiles spanning i whole).
  EXPECT_EQ(prefetch({524288, 32}, {64, 32}, {32, 1}, 1, 4), P(1, 0));
  EXPECT_EQ(prefetch({4096, 4096}, {64, 32}, {4096, 1}, 1, 4), P(1, 0));
}

// A strided operand over its own buffer, element [0, ...] `line_offset`
// bytes into a 64-byte line.
struct Buf {
  int es;
  std::vector<int64_t> sizes, strides;
  std::vector<unsigned char> bytes;
  int64_t base = 0;  // element index of [0, ..., 0]

  Buf(int e, std::vector<int64_t> sz, std::vector<int64_t> st, int64_t line_offset)
      : es(e), sizes(std::move(sz)), strides(std::move(st)) {
    int64_t lo = 0, hi = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const int64_t span = (sizes[d] - 1) * strides[d];
      (span < 0 ? lo : hi) += span;
    }
    bytes.assign(static_cast<size_t>((hi - lo + 1) * es + 64), 0);
    base = -lo;
    const int64_t now = static_cast<int64_t>(reinterpret_cast<uintptr_t>(at(0)) & 63);
    base += ((line_offset - now) & 63) / es;
  }
  unsigned char* at(int64_t elem) { return bytes.data() + (base + elem) * es; }
  sm::TensorDesc desc(DType dt) {
    sm::TensorDesc t;
    t.data = at(0);
    t.dtype = dt;
    t.ndim = static_cast<int>(sizes.size());
    for (int i = 0; i < t.ndim; ++i) t.sizes[i] = sizes[i], t.strides[i] = strides[i];
    return t;
  }
};

DType of_size(int es) {
  return es == 1 ? DType::U8 : es == 2 ? DType::I16 : es == 4 ? DType::F32 : DType::F64;
}

// dst = src through the engine, then the whole destination buffer (gaps
// included) against a plain element loop over the same layouts.
void copy_and_check(int es, const std::vector<int64_t>& sizes, const std::vector<int64_t>& dstr,
                    const std::vector<int64_t>& sstr, int64_t doff, int64_t soff,
                    std::mt19937_64& rng) {
  Buf dst(es, sizes, dstr, doff), src(es, sizes, sstr, soff);
  for (auto& b : dst.bytes) b = static_cast<unsigned char>(rng());
  for (auto& b : src.bytes) b = static_cast<unsigned char>(rng());
  std::vector<unsigned char> want = dst.bytes;
  for (int64_t a = 0; a < sizes[0]; ++a)
    for (int64_t b = 0; b < sizes[1]; ++b)
      for (int64_t c = 0; c < sizes[2]; ++c)
        for (int64_t e = 0; e < sizes[3]; ++e) {
          const int64_t od = a * dstr[0] + b * dstr[1] + c * dstr[2] + e * dstr[3];
          const int64_t os = a * sstr[0] + b * sstr[1] + c * sstr[2] + e * sstr[3];
          std::memcpy(want.data() + (dst.base + od) * es, src.at(os), static_cast<size_t>(es));
        }
  sm::cpu_kernels().copy(dst.desc(of_size(es)), src.desc(of_size(es)));
  ASSERT_TRUE(dst.bytes == want) << es << "-byte elements, sizes " << sizes[0] << "x" << sizes[1]
                                 << "x" << sizes[2] << "x" << sizes[3] << ", src strides "
                                 << sstr[0] << "," << sstr[1] << "," << sstr[2] << "," << sstr[3]
                                 << ", offsets " << doff << "/" << soff;
}

// Padded layouts that the blocked walk takes for every element size: the
// destination's dim 1 and the source's dim 2 a page or more apart, the
// other two dims of the walk short in bytes; dims 1 and 2 multiples of
// kWalkBlock, dims 0 and 3 odd. Then the same with each source dim
// reversed in turn, and with both operands starting inside a line.
TEST(CpuWalk, BlockedWalkCopiesExactly) {
  std::mt19937_64 rng(31);
  for (int es : {1, 2, 4, 8}) {
    const int64_t a = 7, b = 32, c = 48, e = 5;
    const int64_t page = sm::cpu::kPageBytes / es;
    const std::vector<int64_t> sizes = {a, b, c, e};
    const int64_t p = page + 3, q = page + 5;
    const std::vector<int64_t> dstr = {p * b, p, e, 1};
    const std::vector<int64_t> sstr = {1, a, q, q * c};
    copy_and_check(es, sizes, dstr, sstr, 0, 0, rng);
    if (HasFatalFailure()) return;
    for (int flip = 0; flip < 4; ++flip) {
      std::vector<int64_t> s = sstr;
      s[flip] = -s[flip];
      copy_and_check(es, sizes, dstr, s, 0, 0, rng);
      if (HasFatalFailure()) return;
    }
    copy_and_check(es, sizes, dstr, sstr, 16, 40, rng);
    if (HasFatalFailure()) return;
  }
}

// Dense reversals, large enough for the pool's threads: [40,32,32,33]
// of [33,32,32,40] with 4- and 8-byte elements (the middle dims take the
// blocked walk), and [40,33,32,33] (dim 1 not a multiple: the plain walk).
TEST(CpuWalk, DenseReversalsCopyExactly) {
  std::mt19937_64 rng(32);
  for (int es : {4, 8})
    for (int64_t b : {32, 33}) {
      const int64_t a = 40, c = 32, e = 33;
      const std::vector<int64_t> sizes = {a, b, c, e};
      const std::vector<int64_t> dstr = {b * c * e, c * e, e, 1};
      const std::vector<int64_t> sstr = {1, a, a * b, a * b * c};
      copy_and_check(es, sizes, dstr, sstr, 16, 16, rng);
      if (HasFatalFailure()) return;
    }
}

}  // namespace
