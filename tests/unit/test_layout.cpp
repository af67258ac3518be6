// Unit tests of the pure layout logic (src/layout). Expected values come from
// PyTorch / NumPy behaviour; the randomized tests compare against brute-force
// element-address enumeration rather than against the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <numeric>
#include <initializer_list>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "layout/bounds.hpp"
#include "layout/contiguity.hpp"
#include "layout/layout.hpp"
#include "layout/overlap.hpp"
#include "layout/shape_inference.hpp"
#include "layout/view_ops.hpp"

namespace {

using sm::Layout;
using V = std::vector<int64_t>;

Layout L(V sizes, V strides, int64_t offset = 0) {
  EXPECT_EQ(sizes.size(), strides.size());
  Layout l;
  l.ndim = static_cast<int>(sizes.size());
  std::copy(sizes.begin(), sizes.end(), l.sizes);
  std::copy(strides.begin(), strides.end(), l.strides);
  l.offset = offset;
  return l;
}

Layout C(V sizes, int64_t offset = 0) {  // row-major contiguous
  Layout l = sm::dense_layout(sizes.data(), static_cast<int>(sizes.size()), SM_CONTIGUOUS);
  l.offset = offset;
  return l;
}

V sizes_of(const Layout& l) { return V(l.sizes, l.sizes + l.ndim); }
V strides_of(const Layout& l) { return V(l.strides, l.strides + l.ndim); }

// Element indices of l in row-major order of its own shape (brute force).
V addrs(const Layout& l) {
  V out;
  int64_t n = 1;
  for (int i = 0; i < l.ndim; ++i) n *= l.sizes[i];
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t rem = lin, a = l.offset;
    for (int d = l.ndim - 1; d >= 0; --d) {
      a += (rem % l.sizes[d]) * l.strides[d];
      rem /= l.sizes[d];
    }
    out.push_back(a);
  }
  return out;
}

// Element index of l at a multi-index.
int64_t at(const Layout& l, V idx) {
  EXPECT_EQ(static_cast<int>(idx.size()), l.ndim);
  int64_t a = l.offset;
  for (int d = 0; d < l.ndim; ++d) a += idx[static_cast<size_t>(d)] * l.strides[d];
  return a;
}

// Runs fn, which must throw sm::Error with `status`; returns its message.
std::string error_of(const std::function<void()>& fn, sm_status status) {
  try {
    fn();
  } catch (const sm::Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected sm::Error with status " << status << ", nothing was thrown";
  return "";
}

#define EXPECT_SM_ERROR(expr, status) error_of([&] { (void)(expr); }, status)

}  // namespace

namespace sm {
// Readable failure output for EXPECT_EQ on layouts.
void PrintTo(const Layout& l, std::ostream* os) {
  *os << "sizes " << format_dims(l.sizes, l.ndim) << " strides " << format_dims(l.strides, l.ndim)
      << " offset " << l.offset;
}
}  // namespace sm

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- arithmetic ------------------------------------------------------------------

TEST(LayoutArith, OverflowHelpers) {
  int64_t r = 0;
  EXPECT_FALSE(sm::mul_overflows(3, 4, &r));
  EXPECT_EQ(r, 12);
  EXPECT_TRUE(sm::mul_overflows(INT64_MAX / 2 + 1, 2, &r));
  EXPECT_FALSE(sm::mul_overflows(-(INT64_MAX / 2) - 1, 2, &r));
  EXPECT_EQ(r, INT64_MIN);
  EXPECT_TRUE(sm::add_overflows(INT64_MAX, 1, &r));
  EXPECT_TRUE(sm::add_overflows(INT64_MIN, -1, &r));
  EXPECT_FALSE(sm::add_overflows(INT64_MAX, -1, &r));
  EXPECT_EQ(r, INT64_MAX - 1);
}

TEST(LayoutArith, CheckedNumel) {
  V s = {2, 3, 4};
  EXPECT_EQ(sm::checked_numel(s.data(), 3), 24);
  EXPECT_EQ(sm::checked_numel(nullptr, 0), 1);  // 0-d holds one element
  V z = {2, 0, 4};
  EXPECT_EQ(sm::checked_numel(z.data(), 3), 0);
  // A zero wins even when the other sizes multiply past int64.
  V zbig = {INT64_MAX, INT64_MAX, 0};
  EXPECT_EQ(sm::checked_numel(zbig.data(), 3, 8), 0);
  V neg = {2, -3};
  std::string m = EXPECT_SM_ERROR(sm::checked_numel(neg.data(), 2), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "-3")) << m;
  EXPECT_TRUE(contains(m, "dim 1")) << m;
  V big = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_SM_ERROR(sm::checked_numel(big.data(), 2), SM_ERR_OVERFLOW);
  V ok = {int64_t(1) << 31, int64_t(1) << 30};  // 2^61 elements fit, 2^64 bytes do not
  EXPECT_EQ(sm::checked_numel(ok.data(), 2), int64_t(1) << 61);
  EXPECT_EQ(sm::checked_numel(ok.data(), 2, 2), int64_t(1) << 61);
  m = EXPECT_SM_ERROR(sm::checked_numel(ok.data(), 2, 8), SM_ERR_OVERFLOW);
  EXPECT_TRUE(contains(m, "bytes")) << m;
  V many(17, 1);
  EXPECT_SM_ERROR(sm::checked_numel(many.data(), 17), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::checked_numel(many.data(), -1), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm::checked_numel(many.data(), 16), 1);
}

TEST(LayoutArith, WrapDim) {
  EXPECT_EQ(sm::wrap_dim(0, 3), 0);
  EXPECT_EQ(sm::wrap_dim(2, 3), 2);
  EXPECT_EQ(sm::wrap_dim(-1, 3), 2);
  EXPECT_EQ(sm::wrap_dim(-3, 3), 0);
  std::string m = EXPECT_SM_ERROR(sm::wrap_dim(3, 3), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "3")) << m;
  EXPECT_TRUE(contains(m, "[-3, 2]")) << m;
  EXPECT_SM_ERROR(sm::wrap_dim(-4, 3), SM_ERR_OUT_OF_BOUNDS);
  m = EXPECT_SM_ERROR(sm::wrap_dim(5, 3, "flip dim"), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "flip dim")) << m;
  // 0-d: PyTorch accepts 0 and -1.
  EXPECT_EQ(sm::wrap_dim(0, 0), 0);
  EXPECT_EQ(sm::wrap_dim(-1, 0), 0);
  EXPECT_SM_ERROR(sm::wrap_dim(1, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::wrap_dim(-2, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::wrap_dim(0, 0, "dim", false), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::wrap_dim(INT64_MIN, 4), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::wrap_dim(INT64_MAX, 4), SM_ERR_OUT_OF_BOUNDS);
}

TEST(LayoutBasics, NumelAndEquality) {
  EXPECT_EQ(C({2, 3}).numel(), 6);
  EXPECT_EQ(C({}).numel(), 1);
  EXPECT_EQ(C({2, 0}).numel(), 0);
  EXPECT_TRUE(L({2, 3}, {3, 1}) == C({2, 3}));
  EXPECT_FALSE(L({2, 3}, {3, 1}, 1) == C({2, 3}));
  EXPECT_FALSE(L({2, 3}, {1, 2}) == C({2, 3}));
  EXPECT_FALSE(L({6}, {1}) == C({2, 3}));
}

// ---- dense layouts ---------------------------------------------------------------

TEST(LayoutDense, ContiguousStrides) {
  EXPECT_EQ(strides_of(C({2, 3, 4})), (V{12, 4, 1}));
  EXPECT_EQ(strides_of(C({})), V{});
  EXPECT_EQ(strides_of(C({5})), V{1});
  // Size-0 and size-1 dims: PyTorch multiplies max(size, 1).
  EXPECT_EQ(strides_of(C({2, 0, 3})), (V{3, 3, 1}));
  EXPECT_EQ(strides_of(C({0, 4})), (V{4, 1}));
  EXPECT_EQ(strides_of(C({3, 1, 2})), (V{2, 2, 1}));
}

TEST(LayoutDense, ChannelsLastStrides) {
  V s4 = {2, 3, 4, 5};
  Layout cl = sm::dense_layout(s4.data(), 4, SM_CHANNELS_LAST);
  EXPECT_EQ(strides_of(cl), (V{60, 1, 15, 3}));  // torch: (60, 1, 15, 3)
  V s5 = {2, 3, 4, 5, 6};
  Layout cl3 = sm::dense_layout(s5.data(), 5, SM_CHANNELS_LAST_3D);
  EXPECT_EQ(strides_of(cl3), (V{360, 1, 90, 18, 3}));
  // Channels-last multiplies sizes plainly: a size-0 dim zeroes the strides
  // outside it (torch.empty(2,0,4,5).contiguous(memory_format=
  // torch.channels_last).stride() is (0, 1, 0, 0)).
  V s0 = {2, 0, 4, 5};
  EXPECT_EQ(strides_of(sm::dense_layout(s0.data(), 4, SM_CHANNELS_LAST)), (V{0, 1, 0, 0}));
  V s3 = {2, 3, 4};
  std::string m = EXPECT_SM_ERROR(sm::dense_layout(s3.data(), 3, SM_CHANNELS_LAST), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[2, 3, 4]")) << m;
  EXPECT_SM_ERROR(sm::dense_layout(s4.data(), 4, SM_CHANNELS_LAST_3D), SM_ERR_SHAPE);
  EXPECT_SM_ERROR(sm::dense_layout(s4.data(), 4, SM_PRESERVE), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::dense_layout(s4.data(), 4, 42), SM_ERR_INVALID_ARGUMENT);
  V neg = {2, -1};
  EXPECT_SM_ERROR(sm::dense_layout(neg.data(), 2, SM_CONTIGUOUS), SM_ERR_SHAPE);
  // An empty tensor's strides never address anything: past int64 they
  // saturate, so every empty shape has a dense layout.
  V huge = {0, int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(strides_of(sm::dense_layout(huge.data(), 3, SM_CONTIGUOUS)),
            (V{INT64_MAX, int64_t(1) << 40, 1}));
  // C * W passes int64 and saturates; the size-0 H then zeroes N's stride.
  V huge_cl = {int64_t(1) << 40, int64_t(1) << 40, 0, int64_t(1) << 40};
  EXPECT_EQ(strides_of(sm::dense_layout(huge_cl.data(), 4, SM_CHANNELS_LAST)),
            (V{0, 1, INT64_MAX, int64_t(1) << 40}));
  Layout hl = sm::dense_layout(huge_cl.data(), 4, SM_CHANNELS_LAST);
  EXPECT_TRUE(sm::is_contiguous(hl, SM_CHANNELS_LAST));
  V huge_cl2 = {0, int64_t(1) << 40, int64_t(1) << 40, int64_t(1) << 40};
  Layout hl2 = sm::dense_layout(huge_cl2.data(), 4, SM_CHANNELS_LAST);
  EXPECT_EQ(strides_of(hl2), (V{INT64_MAX, 1, INT64_MAX, int64_t(1) << 40}));
  EXPECT_TRUE(sm::is_contiguous(hl2, SM_CHANNELS_LAST));
  // Without a zero size the same strides are a real overflow.
  V full = {2, int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_SM_ERROR(sm::dense_layout(full.data(), 3, SM_CONTIGUOUS), SM_ERR_OVERFLOW);
}

TEST(LayoutDense, StridedLayoutTakesStridesOrIsRowMajor) {
  const int64_t sizes[3] = {2, 3, 4}, strides[3] = {-1, 8, 2};
  EXPECT_EQ(sm::strided_layout(sizes, strides, 3), L({2, 3, 4}, {-1, 8, 2}));
  EXPECT_EQ(sm::strided_layout(sizes, nullptr, 3), L({2, 3, 4}, {12, 4, 1}));
  EXPECT_EQ(sm::strided_layout(sizes, nullptr, 0), L({}, {}));
}

TEST(LayoutDense, DenseLike) {
  // Transposed [3, 2] of a contiguous [2, 3]: dense_like keeps the memory order.
  Layout t = sm::transpose(C({2, 3}), 0, 1);
  Layout d = sm::dense_like(t);
  EXPECT_EQ(sizes_of(d), (V{3, 2}));
  EXPECT_EQ(strides_of(d), (V{1, 3}));
  EXPECT_EQ(d.offset, 0);
  // A slice with gaps becomes dense, same order.
  Layout s = sm::slice(C({4, 6}, 5), 1, 0, SM_SLICE_NONE, 2);
  d = sm::dense_like(s);
  EXPECT_EQ(strides_of(d), (V{3, 1}));
  EXPECT_EQ(d.offset, 0);
  // Flipped dims get positive strides.
  int32_t f[] = {0, 1};
  d = sm::dense_like(sm::flip(C({2, 3}), f, 2));
  EXPECT_EQ(strides_of(d), (V{3, 1}));
  // Channels-last order is preserved.
  V s4 = {2, 3, 4, 5};
  Layout cl = sm::dense_layout(s4.data(), 4, SM_CHANNELS_LAST);
  EXPECT_EQ(sm::dense_like(cl), cl);
  // Stride-0 dims compare as ambiguous and keep their row-major place
  // (torch.zeros(1,4).expand(3,4).clone().stride() -> (4, 1)).
  V es = {3, 4};
  Layout e = sm::expand(C({1, 4}), es.data(), 2);  // strides [0, 1]
  EXPECT_EQ(strides_of(sm::dense_like(e)), (V{4, 1}));
  Layout z = L({2, 3}, {0, 0});
  EXPECT_EQ(strides_of(sm::dense_like(z)), (V{3, 1}));
  // Permuted 3-d.
  Layout p = L({4, 2, 3}, {1, 12, 4});
  EXPECT_EQ(strides_of(sm::dense_like(p)), (V{1, 12, 4}));
  EXPECT_EQ(sm::dense_like(C({})).ndim, 0);
}

// What clone(preserve) / .to() lay out for a non-overlapping and dense input:
// its own strides, size-1 and size-0 dims included (PyTorch copies them).
TEST(LayoutDense, DenseLikeKeepsDenseStridesExactly) {
  struct Case {
    V sizes, strides, want;
  };
  const Case cases[] = {
      // torch.empty_strided((4,1,2),(1,7,4)).clone().stride() -> (1, 7, 4)
      {{4, 1, 2}, {1, 7, 4}, {1, 7, 4}},
      // torch.empty_strided((1,1),(9,3)).clone().stride() -> (9, 3)
      {{1, 1}, {9, 3}, {9, 3}},
      // torch.empty_strided((1,2,2),(8,1,2)).clone().stride() -> (8, 1, 2)
      {{1, 2, 2}, {8, 1, 2}, {8, 1, 2}},
      // torch.empty_strided((3,1,1,1),(1,100,3,0)).clone().stride() -> (1, 100, 3, 0)
      {{3, 1, 1, 1}, {1, 100, 3, 0}, {1, 100, 3, 0}},
      // torch.empty_strided((0,),(4,)).clone().stride() -> (4,)
      {{0}, {4}, {4}},
      // torch.empty_strided((2,0,3),(5,7,1)).clone().stride() -> (5, 7, 1)
      {{2, 0, 3}, {5, 7, 1}, {5, 7, 1}},
      // torch.empty_strided((0,3),(1,0)).clone().stride() -> (1, 0)
      {{0, 3}, {1, 0}, {1, 0}},
      // torch.empty_strided((2,1,3),(3,100,1)).clone().stride() -> (3, 100, 1)
      {{2, 1, 3}, {3, 100, 1}, {3, 100, 1}},
      // A dense flipped layout: the same strides, made positive (PyTorch has
      // no negative strides; offset 0 needs them positive).
      {{2, 1, 3}, {-3, -9, 1}, {3, 9, 1}},
      // Empty with a huge stride: kept, it addresses nothing.
      {{0, 2}, {INT64_MAX, 1}, {INT64_MAX, 1}},
  };
  for (const Case& c : cases) {
    Layout in = L(c.sizes, c.strides, 5);
    Layout d = sm::dense_like(in);
    EXPECT_EQ(d, L(c.sizes, c.want)) << "strides " << sm::format_dims(c.strides.data(), in.ndim);
  }
  // INT64_MIN has no positive twin: a size-1 dim holding it gets the
  // inferred dense stride instead (any value is right for it).
  Layout m = sm::dense_like(L({1, 3}, {INT64_MIN, 1}));
  EXPECT_EQ(strides_of(m), (V{3, 1}));
  m = sm::dense_like(L({0, 3}, {INT64_MIN, 1}));
  EXPECT_EQ(strides_of(m), (V{3, 1}));
}

// Overlapping or gapped inputs: PyTorch's infer_dense_strides order.
TEST(LayoutDense, DenseLikeInfersPyTorchOrder) {
  struct Case {
    V sizes, strides, want;
  };
  const Case cases[] = {
      // Equal strides: the smaller size goes inside.
      // torch.empty_strided((2,3),(1,1)).clone().stride() -> (1, 2)
      {{2, 3}, {1, 1}, {1, 2}},
      // torch.empty_strided((3,2),(1,1)).clone().stride() -> (2, 1)
      {{3, 2}, {1, 1}, {2, 1}},
      // Equal strides and sizes: row-major order kept.
      // torch.empty_strided((2,2),(2,2)).clone().stride() -> (2, 1)
      {{2, 2}, {2, 2}, {2, 1}},
      // torch.empty_strided((2,3,4),(1,1,1)).clone().stride() -> (1, 2, 6)
      {{2, 3, 4}, {1, 1, 1}, {1, 2, 6}},
      // torch.empty_strided((4,3,2),(1,1,1)).clone().stride() -> (6, 2, 1)
      {{4, 3, 2}, {1, 1, 1}, {6, 2, 1}},
      // torch.empty_strided((2,3,4),(12,1,1)).clone().stride() -> (12, 1, 3)
      {{2, 3, 4}, {12, 1, 1}, {12, 1, 3}},
      // Gaps: the order of the strides, made dense.
      // torch.empty_strided((3,4),(4,2)).clone().stride() -> (4, 1)
      {{3, 4}, {4, 2}, {4, 1}},
      // Stride-0 dims never move and never stop the scan.
      // torch.empty_strided((3,1,4),(0,3,1)).clone().stride() -> (4, 4, 1)
      {{3, 1, 4}, {0, 3, 1}, {4, 4, 1}},
      // torch.empty_strided((4,3),(0,1)).clone().stride() -> (3, 1)
      {{4, 3}, {0, 1}, {3, 1}},
      // torch.empty_strided((6,5,4,3,2),(6,0,120,0,1)).clone().stride()
      //   -> (6, 36, 180, 2, 1)
      {{6, 5, 4, 3, 2}, {6, 0, 120, 0, 1}, {6, 36, 180, 2, 1}},
      // torch.empty_strided((3,1),(0,0)).clone().stride() -> (1, 1)
      {{3, 1}, {0, 0}, {1, 1}},
      // torch.empty_strided((1,3),(5,0)).clone().stride() -> (3, 1)
      {{1, 3}, {5, 0}, {3, 1}},
      // Unfold windows: torch.arange(10.).unfold(0,4,2).clone().stride() -> (4, 1)
      {{4, 4}, {2, 1}, {4, 1}},
      // ...transposed: torch.arange(10.).unfold(0,4,2).t().clone().stride() -> (1, 4)
      {{4, 4}, {1, 2}, {1, 4}},
      // Expanded: torch.zeros(1,3).expand(4,3).clone().stride() -> (3, 1)
      {{4, 3}, {0, 1}, {3, 1}},
      // Negative strides compare by |stride| (the library's extension):
      // as torch.empty_strided((2,3),(1,1)) above.
      {{2, 3}, {-1, 1}, {1, 2}},
  };
  for (const Case& c : cases) {
    Layout in = L(c.sizes, c.strides, 2);
    ASSERT_FALSE(sm::is_non_overlapping_and_dense(in));
    EXPECT_EQ(sm::dense_like(in), L(c.sizes, c.want))
        << "strides " << sm::format_dims(c.strides.data(), in.ndim);
  }
}

// Properties over random layouts: the result is always non-overlapping and
// dense with positive strides, offset 0; a dense input keeps |strides|; the
// result is a fixed point (cloning a clone keeps its strides).
TEST(LayoutDense, DenseLikeRandomizedProperties) {
  std::mt19937_64 rng(1313);
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + static_cast<long>(rng() % v.size()));
  };
  for (int it = 0; it < 20000; ++it) {
    const int nd = static_cast<int>(rng() % 6);
    V sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
    for (int d = 0; d < nd; ++d) {
      sizes[static_cast<size_t>(d)] = pick({0, 1, 1, 2, 3, 4});
      strides[static_cast<size_t>(d)] = pick({0, 1, 2, 3, 4, 6, 12, 24, -1, -2, 100});
    }
    if (rng() % 2) {  // a permuted dense layout, size-1 strides arbitrary
      std::vector<int> perm(static_cast<size_t>(nd));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      int64_t cur = 1;
      for (int k = nd - 1; k >= 0; --k) {
        const size_t d = static_cast<size_t>(perm[static_cast<size_t>(k)]);
        strides[d] = sizes[d] == 1 ? pick({0, 7, -5, 1000}) : cur * pick({1, -1});
        cur *= std::max<int64_t>(sizes[d], 1);
      }
    }
    const Layout in = L(sizes, strides, 3);
    const Layout d = sm::dense_like(in);
    ASSERT_EQ(sizes_of(d), sizes);
    ASSERT_EQ(d.offset, 0);
    for (int i = 0; i < nd; ++i) ASSERT_GE(d.strides[i], 0);
    ASSERT_TRUE(sm::is_non_overlapping_and_dense(d)) << ::testing::PrintToString(in);
    if (sm::is_non_overlapping_and_dense(in))
      for (int i = 0; i < nd; ++i)
        ASSERT_EQ(d.strides[i], std::abs(in.strides[i])) << ::testing::PrintToString(in);
    ASSERT_EQ(sm::dense_like(d), d);
  }
}

TEST(LayoutContiguity, Contiguous) {
  EXPECT_TRUE(sm::is_contiguous(C({2, 3, 4}), SM_CONTIGUOUS));
  EXPECT_TRUE(sm::is_contiguous(C({}), SM_CONTIGUOUS));
  EXPECT_FALSE(sm::is_contiguous(sm::transpose(C({2, 3}), 0, 1), SM_CONTIGUOUS));
  // Size-1 dims may have any stride (torch: as_strided((2,1,3),(3,99,1))).
  EXPECT_TRUE(sm::is_contiguous(L({2, 1, 3}, {3, 99, 1}), SM_CONTIGUOUS));
  EXPECT_TRUE(sm::is_contiguous(L({1}, {-5}), SM_CONTIGUOUS));
  // Numel 0: contiguous whatever the strides.
  EXPECT_TRUE(sm::is_contiguous(L({2, 0, 3}, {7, 9, 2}), SM_CONTIGUOUS));
  // Offset does not matter.
  EXPECT_TRUE(sm::is_contiguous(C({2, 3}, 17), SM_CONTIGUOUS));
  // Negative strides are never contiguous.
  int32_t f0[] = {0};
  EXPECT_FALSE(sm::is_contiguous(sm::flip(C({2, 3}), f0, 1), SM_CONTIGUOUS));
  // Rows of a wider matrix.
  EXPECT_FALSE(sm::is_contiguous(L({2, 3}, {4, 1}), SM_CONTIGUOUS));
  EXPECT_TRUE(sm::is_contiguous(L({1, 3}, {4, 1}), SM_CONTIGUOUS));
}

TEST(LayoutContiguity, ChannelsLast) {
  V s4 = {2, 3, 4, 5};
  Layout cl = sm::dense_layout(s4.data(), 4, SM_CHANNELS_LAST);
  EXPECT_TRUE(sm::is_contiguous(cl, SM_CHANNELS_LAST));
  EXPECT_FALSE(sm::is_contiguous(cl, SM_CONTIGUOUS));
  EXPECT_FALSE(sm::is_contiguous(C({2, 3, 4, 5}), SM_CHANNELS_LAST));
  EXPECT_TRUE(sm::is_contiguous(cl, SM_PRESERVE));
  // torch.empty(2,1,4,5) is both contiguous and channels_last (C == 1 skipped).
  EXPECT_TRUE(sm::is_contiguous(C({2, 1, 4, 5}), SM_CHANNELS_LAST));
  EXPECT_TRUE(sm::is_contiguous(C({2, 1, 4, 5}), SM_CONTIGUOUS));
  // torch.empty(2,3,1,1): strides (3,1,1,1) are channels_last too.
  EXPECT_TRUE(sm::is_contiguous(C({2, 3, 1, 1}), SM_CHANNELS_LAST));
  // Channels-last [2,3,1,1] as torch makes it: (3,1,3,3), also contiguous.
  V s11 = {2, 3, 1, 1};
  Layout cl11 = sm::dense_layout(s11.data(), 4, SM_CHANNELS_LAST);
  EXPECT_EQ(strides_of(cl11), (V{3, 1, 3, 3}));
  EXPECT_TRUE(sm::is_contiguous(cl11, SM_CONTIGUOUS));
  // Wrong ndim is simply false.
  EXPECT_FALSE(sm::is_contiguous(C({2, 3, 4}), SM_CHANNELS_LAST));
  EXPECT_FALSE(sm::is_contiguous(C({2, 3, 4, 5}), SM_CHANNELS_LAST_3D));
  V s5 = {2, 3, 4, 5, 6};
  Layout cl3 = sm::dense_layout(s5.data(), 5, SM_CHANNELS_LAST_3D);
  EXPECT_TRUE(sm::is_contiguous(cl3, SM_CHANNELS_LAST_3D));
  EXPECT_FALSE(sm::is_contiguous(cl3, SM_CONTIGUOUS));
  EXPECT_FALSE(sm::is_contiguous(C({2, 3, 4, 5, 6}), SM_CHANNELS_LAST_3D));
  // A channels-last slice with a gap is not channels-last.
  Layout sl = sm::slice(cl, 3, 0, SM_SLICE_NONE, 2);
  EXPECT_FALSE(sm::is_contiguous(sl, SM_CHANNELS_LAST));
  // Empty channels-last: PyTorch checks the strides (no numel-0 shortcut as
  // for row-major), size-0 dims included.
  // torch.empty_strided((2,0,4,5),(1,2,3,4)).is_contiguous(memory_format=cl): False
  EXPECT_FALSE(sm::is_contiguous(L({2, 0, 4, 5}, {1, 2, 3, 4}), SM_CHANNELS_LAST));
  // torch.empty_strided((2,0,4,5),(0,1,0,0)).is_contiguous(memory_format=cl): True
  EXPECT_TRUE(sm::is_contiguous(L({2, 0, 4, 5}, {0, 1, 0, 0}), SM_CHANNELS_LAST));
  EXPECT_SM_ERROR(sm::is_contiguous(cl, 9), SM_ERR_INVALID_ARGUMENT);
}

// Channels-last strides and contiguity of empty tensors and size-1 dims,
// against PyTorch (cl = torch.channels_last, cl3 = torch.channels_last_3d).
TEST(LayoutContiguity, ChannelsLastEmptyAndSizeOne) {
  struct Case {
    V sizes, want;
  };
  const Case cl[] = {
      // torch.empty(0,3,1,5).contiguous(memory_format=cl).stride() -> (15, 1, 15, 3)
      {{0, 3, 1, 5}, {15, 1, 15, 3}},
      // torch.empty(2,0,4,5).contiguous(memory_format=cl).stride() -> (0, 1, 0, 0)
      {{2, 0, 4, 5}, {0, 1, 0, 0}},
      // torch.empty(2,3,0,5).contiguous(memory_format=cl).stride() -> (0, 1, 15, 3)
      {{2, 3, 0, 5}, {0, 1, 15, 3}},
      // torch.empty(2,3,4,0).contiguous(memory_format=cl).stride() -> (0, 1, 0, 3)
      {{2, 3, 4, 0}, {0, 1, 0, 3}},
      // torch.empty(0,0,0,0).contiguous(memory_format=cl).stride() -> (0, 1, 0, 0)
      {{0, 0, 0, 0}, {0, 1, 0, 0}},
      // torch.empty(0,1,0,1).clone(memory_format=cl).stride() -> (0, 1, 1, 1)
      {{0, 1, 0, 1}, {0, 1, 1, 1}},
      // torch.empty(2,1,1,3).clone(memory_format=cl).stride() -> (3, 1, 3, 1)
      {{2, 1, 1, 3}, {3, 1, 3, 1}},
      // torch.empty(2,3,1,1).clone(memory_format=cl).stride() -> (3, 1, 3, 3)
      {{2, 3, 1, 1}, {3, 1, 3, 3}},
      // torch.empty(1,1,1,1).clone(memory_format=cl).stride() -> (1, 1, 1, 1)
      {{1, 1, 1, 1}, {1, 1, 1, 1}},
      // torch.empty(1,3,4,5).clone(memory_format=cl).stride() -> (60, 1, 15, 3)
      {{1, 3, 4, 5}, {60, 1, 15, 3}},
  };
  for (const Case& c : cl) {
    Layout d = sm::dense_layout(c.sizes.data(), 4, SM_CHANNELS_LAST);
    EXPECT_EQ(strides_of(d), c.want) << sm::format_dims(c.sizes.data(), 4);
    // torch.empty(..., memory_format=cl).is_contiguous(memory_format=cl) -> True
    EXPECT_TRUE(sm::is_contiguous(d, SM_CHANNELS_LAST)) << sm::format_dims(c.sizes.data(), 4);
  }
  const Case cl3[] = {
      // torch.empty(0,3,1,5,2).contiguous(memory_format=cl3).stride() -> (30, 1, 30, 6, 3)
      {{0, 3, 1, 5, 2}, {30, 1, 30, 6, 3}},
      // torch.empty(2,0,4,5,1).contiguous(memory_format=cl3).stride() -> (0, 1, 0, 0, 0)
      {{2, 0, 4, 5, 1}, {0, 1, 0, 0, 0}},
      // torch.empty(2,3,4,0,6).contiguous(memory_format=cl3).stride() -> (0, 1, 0, 18, 3)
      {{2, 3, 4, 0, 6}, {0, 1, 0, 18, 3}},
      // torch.empty(2,1,1,1,3).clone(memory_format=cl3).stride() -> (3, 1, 3, 3, 1)
      {{2, 1, 1, 1, 3}, {3, 1, 3, 3, 1}},
  };
  for (const Case& c : cl3) {
    Layout d = sm::dense_layout(c.sizes.data(), 5, SM_CHANNELS_LAST_3D);
    EXPECT_EQ(strides_of(d), c.want) << sm::format_dims(c.sizes.data(), 5);
    EXPECT_TRUE(sm::is_contiguous(d, SM_CHANNELS_LAST_3D)) << sm::format_dims(c.sizes.data(), 5);
  }
  // Row-major empties are not channels-last unless their strides say so.
  // torch.empty(0,3,1,5).is_contiguous(memory_format=cl) -> False
  EXPECT_FALSE(sm::is_contiguous(C({0, 3, 1, 5}), SM_CHANNELS_LAST));
  // torch.empty(2,0,4,5,6).is_contiguous(memory_format=cl3) -> False
  EXPECT_FALSE(sm::is_contiguous(C({2, 0, 4, 5, 6}), SM_CHANNELS_LAST_3D));
  // torch.empty_strided((2,0,4,5),(20,1,5,1)).is_contiguous(memory_format=cl) -> False
  EXPECT_FALSE(sm::is_contiguous(L({2, 0, 4, 5}, {20, 1, 5, 1}), SM_CHANNELS_LAST));
  // ...while every empty tensor stays row-major contiguous:
  // torch.empty_strided((2,3,4,0),(0,1,0,3)).is_contiguous() -> True
  EXPECT_TRUE(sm::is_contiguous(L({2, 3, 4, 0}, {0, 1, 0, 3}), SM_CONTIGUOUS));
  // Size-1 dims are skipped in both: torch.empty(2,1,1,3) is channels-last
  // contiguous as it is (torch.empty(2,1,1,3).contiguous(memory_format=cl)
  // .stride() -> (3, 3, 3, 1), no copy).
  EXPECT_TRUE(sm::is_contiguous(C({2, 1, 1, 3}), SM_CHANNELS_LAST));
  // torch.empty(2,1,1,1,3).is_contiguous(memory_format=cl3) -> True
  EXPECT_TRUE(sm::is_contiguous(C({2, 1, 1, 1, 3}), SM_CHANNELS_LAST_3D));
}

TEST(LayoutContiguity, NonOverlappingAndDense) {
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(C({2, 3, 4})));
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(C({})));
  int32_t p[] = {2, 0, 1};
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(sm::permute(C({2, 3, 4}), p, 3)));
  int32_t f[] = {0, 2};
  Layout flipped = sm::flip(C({2, 3, 4}), f, 2);
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(flipped));
  EXPECT_TRUE(sm::is_contiguous(flipped, SM_PRESERVE));
  EXPECT_FALSE(sm::is_non_overlapping_and_dense(sm::slice(C({4, 6}), 1, 0, 6, 2)));
  V es = {3, 4};
  EXPECT_FALSE(sm::is_non_overlapping_and_dense(sm::expand(C({1, 4}), es.data(), 2)));
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(L({1, 5}, {0, 1})));
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(L({3}, {-1})));
  EXPECT_FALSE(sm::is_non_overlapping_and_dense(L({3}, {2})));
  EXPECT_TRUE(sm::is_non_overlapping_and_dense(L({2, 0}, {5, 7})));
  // Same |stride| twice overlaps.
  EXPECT_FALSE(sm::is_non_overlapping_and_dense(L({2, 2}, {1, -1})));
}

// ---- bounds ----------------------------------------------------------------------

TEST(LayoutBounds, Extent) {
  sm::Extent e = sm::extent(C({2, 3}, 4));
  EXPECT_FALSE(e.empty);
  EXPECT_EQ(e.lo, 4);
  EXPECT_EQ(e.hi, 9);
  e = sm::extent(L({2, 3}, {-3, 1}, 3));  // flipped rows
  EXPECT_EQ(e.lo, 0);
  EXPECT_EQ(e.hi, 5);
  e = sm::extent(L({4}, {-2}, 10));
  EXPECT_EQ(e.lo, 4);
  EXPECT_EQ(e.hi, 10);
  e = sm::extent(C({}, 7));
  EXPECT_EQ(e.lo, 7);
  EXPECT_EQ(e.hi, 7);
  e = sm::extent(L({3, 0}, {INT64_MAX, 1}));
  EXPECT_TRUE(e.empty);
  // (size-1)*stride overflows.
  std::string m = EXPECT_SM_ERROR(sm::extent(L({3}, {INT64_MAX / 2 + 1})), SM_ERR_OVERFLOW);
  EXPECT_TRUE(contains(m, "dim 0")) << m;
  // Each term fits, the sum does not.
  EXPECT_SM_ERROR(sm::extent(L({2, 2}, {INT64_MAX / 2 + 1, INT64_MAX / 2 + 1})), SM_ERR_OVERFLOW);
  EXPECT_SM_ERROR(sm::extent(L({3}, {INT64_MIN / 2 - 1}, 0)), SM_ERR_OVERFLOW);
  EXPECT_SM_ERROR(sm::extent(L({2}, {1}, INT64_MAX)), SM_ERR_OVERFLOW);
}

TEST(LayoutBounds, CheckInStorage) {
  // 6 float32 elements in 24 bytes: exactly fits.
  sm::check_in_storage(C({2, 3}), 4, 24);
  EXPECT_EQ(sm::required_storage_bytes(C({2, 3}), 4), 24);
  std::string m = EXPECT_SM_ERROR(sm::check_in_storage(C({2, 3}), 4, 23), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "[2, 3]")) << m;
  EXPECT_TRUE(contains(m, "23")) << m;
  // Offset pushes it out.
  EXPECT_SM_ERROR(sm::check_in_storage(C({2, 3}, 1), 4, 24), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm::required_storage_bytes(C({2, 3}, 1), 4), 28);
  // Negative strides: lowest element must be >= 0.
  sm::check_in_storage(L({3}, {-1}, 2), 8, 24);
  EXPECT_SM_ERROR(sm::check_in_storage(L({3}, {-1}, 1), 8, 24), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm::required_storage_bytes(L({3}, {-1}, 2), 8), 24);
  // Negative offset even for an empty view.
  m = EXPECT_SM_ERROR(sm::check_in_storage(L({0}, {1}, -1), 4, 100), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "-1")) << m;
  // Empty views fit anywhere (offset past the end is fine, as PyTorch).
  sm::check_in_storage(L({0, 5}, {5, 1}, 1000), 4, 0);
  EXPECT_EQ(sm::required_storage_bytes(L({0, 5}, {5, 1}, 1000), 4), 0);
  // Expanded view only needs its one row.
  sm::check_in_storage(L({100, 3}, {0, 1}), 2, 6);
  EXPECT_EQ(sm::required_storage_bytes(L({100, 3}, {0, 1}), 2), 6);
  // A 0-d element.
  sm::check_in_storage(C({}, 3), 4, 16);
  EXPECT_SM_ERROR(sm::check_in_storage(C({}, 4), 4, 16), SM_ERR_OUT_OF_BOUNDS);
  // Overflows are reported as such, not as a wrap-around "fit".
  EXPECT_SM_ERROR(sm::check_in_storage(L({3}, {INT64_MAX / 2 + 1}), 1, INT64_MAX), SM_ERR_OVERFLOW);
  // Just fits: highest element INT64_MAX - 1.
  sm::check_in_storage(L({3}, {INT64_MAX / 2}), 1, INT64_MAX);
  EXPECT_SM_ERROR(sm::required_storage_bytes(L({2}, {int64_t(1) << 61}), 8), SM_ERR_OVERFLOW);
  EXPECT_SM_ERROR(sm::check_in_storage(C({2}), 0, 8), SM_ERR_INVALID_ARGUMENT);
  // Storage size not a multiple of itemsize: the partial element is unusable.
  EXPECT_SM_ERROR(sm::check_in_storage(C({3}), 4, 11), SM_ERR_OUT_OF_BOUNDS);
}

// ---- overlap -----------------------------------------------------------------------

TEST(LayoutOverlap, Internal) {
  using sm::Overlap;
  EXPECT_EQ(sm::internal_overlap(C({2, 3})), Overlap::No);
  EXPECT_EQ(sm::internal_overlap(C({})), Overlap::No);
  EXPECT_EQ(sm::internal_overlap(L({0, 3}, {0, 0})), Overlap::No);
  EXPECT_EQ(sm::internal_overlap(L({1, 3}, {0, 1})), Overlap::No);  // stride 0 on size 1
  EXPECT_EQ(sm::internal_overlap(L({4, 3}, {0, 1})), Overlap::Yes);
  EXPECT_EQ(sm::internal_overlap(L({4, 3}, {0, 1}), 0), Overlap::Yes);  // no enumeration needed
  // Gaps and negative strides without overlap.
  EXPECT_EQ(sm::internal_overlap(L({4, 3}, {-10, 2}, 40)), Overlap::No);
  EXPECT_EQ(sm::internal_overlap(L({1000, 1000}, {-2000, 2}, 10'000'000), 0), Overlap::No);
  // unfold(0, 3, 1) of 7 elements: windows overlap.
  EXPECT_EQ(sm::internal_overlap(L({5, 3}, {1, 1})), Overlap::Yes);
  // unfold(0, 2, 2): disjoint windows.
  EXPECT_EQ(sm::internal_overlap(L({3, 2}, {2, 1})), Overlap::No);
  // Not mixed-radix but distinct (0,2,4,3,5,7): only the exact check says No.
  EXPECT_EQ(sm::internal_overlap(L({2, 3}, {3, 2})), Overlap::No);
  // Past exact_limit the bitmap over the reached range still answers exactly.
  EXPECT_EQ(sm::internal_overlap(L({2, 3}, {3, 2}), 1), Overlap::No);
  // Overlapping (0,2,4 and 2,4,6): exact Yes, never a guess.
  EXPECT_EQ(sm::internal_overlap(L({2, 3}, {2, 2})), Overlap::Yes);
  EXPECT_EQ(sm::internal_overlap(L({2, 3}, {2, 2}), 4), Overlap::Yes);
  // Large, overlapping, strides nonzero: more elements than indices reached.
  EXPECT_EQ(sm::internal_overlap(L({1000, 1000}, {1, 999})), Overlap::Yes);
  EXPECT_EQ(sm::internal_overlap(L({1000, 1000}, {1, 999}), 1'000'000), Overlap::Yes);
  // Only a range wider than the bitmap limit, with few elements, stays TooHard.
  EXPECT_EQ(sm::internal_overlap(L({3, 3}, {int64_t(3) << 25, int64_t(4) << 25}), 1), Overlap::TooHard);
  EXPECT_EQ(sm::internal_overlap(L({3, 3}, {int64_t(3) << 25, int64_t(4) << 25})), Overlap::No);
}

// Brute-force truth for two views in one byte space.
sm::OverlapStatus brute_overlap(const Layout& a, uintptr_t ba, int64_t ia, const Layout& b,
                                uintptr_t bb, int64_t ib) {
  std::set<uintptr_t> bytes;
  for (int64_t e : addrs(a))
    for (int64_t k = 0; k < ia; ++k) bytes.insert(ba + static_cast<uintptr_t>(e * ia + k));
  for (int64_t e : addrs(b))
    for (int64_t k = 0; k < ib; ++k)
      if (bytes.count(bb + static_cast<uintptr_t>(e * ib + k))) return sm::OverlapStatus::Partial;
  return sm::OverlapStatus::None;
}

TEST(LayoutOverlap, Status) {
  using sm::OverlapStatus;
  const uintptr_t base = 0x10000;
  Layout a = C({8});
  auto st = [&](const Layout& x, const Layout& y, int64_t lim = 1 << 16) {
    return sm::overlap_status(x, base, 4, y, base, 4, lim);
  };
  EXPECT_EQ(st(a, a), OverlapStatus::Full);
  // Identical walk, size-1 dim strides differ: same bytes in the same order.
  EXPECT_EQ(st(L({1, 8}, {8, 1}), L({1, 8}, {3, 1})), OverlapStatus::Full);
  // Same elements, different order (flip): Partial, not Full.
  int32_t f0[] = {0};
  EXPECT_EQ(st(a, sm::flip(a, f0, 1)), OverlapStatus::Partial);
  // a[0:4] vs a[2:6].
  EXPECT_EQ(st(sm::slice(a, 0, 0, 4, 1), sm::slice(a, 0, 2, 6, 1)), OverlapStatus::Partial);
  // a[0:4] vs a[4:8]: adjacent, disjoint.
  EXPECT_EQ(st(sm::slice(a, 0, 0, 4, 1), sm::slice(a, 0, 4, 8, 1)), OverlapStatus::None);
  // a[::2] vs a[1::2]: interleaved, never Partial; the residue test shows it
  // even with no exact enumeration.
  Layout even = sm::slice(a, 0, SM_SLICE_NONE, SM_SLICE_NONE, 2);
  Layout odd = sm::slice(a, 0, 1, SM_SLICE_NONE, 2);
  EXPECT_EQ(st(even, odd), OverlapStatus::None);
  EXPECT_EQ(st(even, odd, 0), OverlapStatus::None);
  Layout big = C({1 << 22});
  EXPECT_EQ(st(sm::slice(big, 0, 0, SM_SLICE_NONE, 2), sm::slice(big, 0, 1, SM_SLICE_NONE, 2), 16),
            OverlapStatus::None);
  // a[::2] vs a[2::2]: a real partial overlap among non-dense views.
  EXPECT_EQ(st(even, sm::slice(a, 0, 2, SM_SLICE_NONE, 2)), OverlapStatus::Partial);
  // a[::3] vs a[1::2] (0,3,6 vs 1,3,5,7): share element 3.
  EXPECT_EQ(st(sm::slice(a, 0, 0, 8, 3), odd), OverlapStatus::Partial);
  // Same, large, tiny exact limit: TooHard rather than a guess.
  EXPECT_EQ(st(sm::slice(big, 0, 0, SM_SLICE_NONE, 3), sm::slice(big, 0, 1, SM_SLICE_NONE, 2), 16),
            OverlapStatus::TooHard);
  // Different storages (far apart bases).
  EXPECT_EQ(sm::overlap_status(a, 0x10000, 4, a, 0x20000, 4), OverlapStatus::None);
  // Same address, different itemsize: Partial, never Full.
  EXPECT_EQ(sm::overlap_status(C({4}), base, 4, C({16}), base, 1), OverlapStatus::Partial);
  EXPECT_EQ(sm::overlap_status(C({4}), base, 4, C({4}), base, 2), OverlapStatus::Partial);
  // Byte ranges: float32 [0,16) vs uint8 starting at byte 16 / 15.
  EXPECT_EQ(sm::overlap_status(C({4}), base, 4, C({4}, 16), base, 1), OverlapStatus::None);
  EXPECT_EQ(sm::overlap_status(C({4}), base, 4, C({4}, 15), base, 1), OverlapStatus::Partial);
  // Interleaved with different itemsizes: f64 at even 8-byte slots vs i32 in odd slots.
  Layout f64 = L({100}, {2});          // bytes [16k, 16k+8)
  Layout i32 = L({100}, {4}, 2);       // bytes [16k+8, 16k+12)
  EXPECT_EQ(sm::overlap_status(f64, base, 8, i32, base, 4, 0), OverlapStatus::None);
  Layout i32b = L({100}, {4}, 1);      // bytes [16k+4, 16k+8): inside the f64s
  EXPECT_EQ(sm::overlap_status(f64, base, 8, i32b, base, 4), OverlapStatus::Partial);
  // Empty views overlap nothing.
  EXPECT_EQ(st(L({0}, {1}), a), OverlapStatus::None);
  // Expanded vs itself: Full (identical), vs its row: Partial.
  Layout ex = L({5, 8}, {0, 1});
  EXPECT_EQ(st(ex, ex), OverlapStatus::Full);
  EXPECT_EQ(st(ex, a), OverlapStatus::Partial);
  // Negative strides: reversed upper half vs lower half.
  Layout rev_hi = L({4}, {-1}, 7);  // 7,6,5,4
  EXPECT_EQ(st(rev_hi, sm::slice(a, 0, 0, 4, 1)), OverlapStatus::None);
  EXPECT_EQ(st(rev_hi, sm::slice(a, 0, 0, 5, 1)), OverlapStatus::Partial);
  // One dense view, one strided, both large (no enumeration allowed).
  Layout x = C({1 << 20});
  EXPECT_EQ(st(x, sm::slice(x, 0, 0, SM_SLICE_NONE, 2), 0), OverlapStatus::Partial);
  EXPECT_EQ(st(sm::slice(x, 0, 1, SM_SLICE_NONE, 3), sm::slice(x, 0, 0, 1000, 1), 0),
            OverlapStatus::Partial);
  // Dense x[100:200] sits strictly between elements of x[::1000]: only the
  // exact check can say None; without it, TooHard (never Partial).
  Layout mid = sm::slice(x, 0, 100, 200, 1);
  Layout sparse = sm::slice(x, 0, 0, SM_SLICE_NONE, 1000);
  EXPECT_EQ(st(mid, sparse, 0), OverlapStatus::TooHard);
  EXPECT_EQ(st(mid, sparse), OverlapStatus::None);
  EXPECT_EQ(st(sm::slice(x, 0, 900, 1100, 1), sparse), OverlapStatus::Partial);
  // Columns of a matrix: disjoint, and large.
  Layout m = C({4096, 64});
  EXPECT_EQ(st(sm::select(m, 1, 0), sm::select(m, 1, 1), 0), OverlapStatus::None);
  EXPECT_EQ(st(sm::select(m, 1, 3), sm::select(m, 1, 3), 0), OverlapStatus::Full);
}

TEST(LayoutOverlap, RandomizedAgainstBruteForce) {
  std::mt19937_64 rng(12345);
  auto rnd = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const uintptr_t base = 1 << 20;
  auto random_layout = [&]() {
    int nd = static_cast<int>(rnd(0, 3));
    Layout l;
    l.ndim = nd;
    for (int d = 0; d < nd; ++d) {
      l.sizes[d] = rnd(0, 4);
      l.strides[d] = rnd(-6, 6);
    }
    sm::Extent e = sm::extent(l);
    l.offset = rnd(0, 10) + (e.empty ? 0 : -std::min<int64_t>(e.lo, 0));
    return l;
  };
  int partial = 0, none = 0, full = 0, too_hard = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    Layout a = random_layout(), b = rng() % 5 == 0 ? a : random_layout();
    int64_t ia = int64_t(1) << rnd(0, 3), ib = rng() % 2 ? ia : int64_t(1) << rnd(0, 3);
    uintptr_t ba = base, bb = base + static_cast<uintptr_t>(rnd(0, 3) * 4);
    sm::OverlapStatus got = sm::overlap_status(a, ba, ia, b, bb, ib);
    sm::OverlapStatus truth = brute_overlap(a, ba, ia, b, bb, ib);
    ASSERT_NE(got, sm::OverlapStatus::TooHard);  // everything here is small
    if (got == sm::OverlapStatus::Full) {
      ++full;
      // Full means the same bytes, element for element.
      EXPECT_EQ(ia, ib);
      V xa = addrs(a), xb = addrs(b);
      ASSERT_EQ(xa.size(), xb.size());
      for (size_t i = 0; i < xa.size(); ++i)
        EXPECT_EQ(ba + static_cast<uintptr_t>(xa[i] * ia), bb + static_cast<uintptr_t>(xb[i] * ib));
      ASSERT_FALSE(xa.empty());
    } else {
      EXPECT_EQ(got, truth) << "a " << sm::format_dims(a.sizes, a.ndim) << "/"
                            << sm::format_dims(a.strides, a.ndim) << "+" << a.offset << " b "
                            << sm::format_dims(b.sizes, b.ndim) << "/"
                            << sm::format_dims(b.strides, b.ndim) << "+" << b.offset;
      (got == sm::OverlapStatus::Partial ? partial : none)++;
    }
    // Without enumeration the cheap rules must still never be wrong.
    sm::OverlapStatus quick = sm::overlap_status(a, ba, ia, b, bb, ib, 0);
    if (quick == sm::OverlapStatus::TooHard) {
      ++too_hard;
    } else if (got == sm::OverlapStatus::Full) {
      EXPECT_EQ(quick, sm::OverlapStatus::Full);
    } else {
      EXPECT_EQ(quick, truth);
    }
    // internal_overlap against brute force.
    V xa = addrs(a);
    std::sort(xa.begin(), xa.end());
    bool dup = std::adjacent_find(xa.begin(), xa.end()) != xa.end();
    EXPECT_EQ(sm::internal_overlap(a), dup ? sm::Overlap::Yes : sm::Overlap::No);
    sm::Overlap cheap = sm::internal_overlap(a, 0);
    if (cheap != sm::Overlap::TooHard) {
      EXPECT_EQ(cheap, dup ? sm::Overlap::Yes : sm::Overlap::No);
    }
  }
  // The generator must exercise every outcome.
  EXPECT_GT(partial, 100);
  EXPECT_GT(none, 100);
  EXPECT_GT(full, 100);
  EXPECT_GT(too_hard, 10);  // the limit-0 run really had to give up sometimes
}

// ---- broadcasting --------------------------------------------------------------------

TEST(LayoutBroadcast, Shapes) {
  V a = {3, 1}, b = {4};
  EXPECT_EQ(sm::broadcast_shapes(a.data(), 2, b.data(), 1), (V{3, 4}));
  V c = {2, 1, 5}, d = {7, 1};
  EXPECT_EQ(sm::broadcast_shapes(c.data(), 3, d.data(), 2), (V{2, 7, 5}));
  EXPECT_EQ(sm::broadcast_shapes(nullptr, 0, b.data(), 1), (V{4}));
  EXPECT_EQ(sm::broadcast_shapes(nullptr, 0, nullptr, 0), V{});
  V z = {0}, one = {1};
  EXPECT_EQ(sm::broadcast_shapes(z.data(), 1, one.data(), 1), (V{0}));
  EXPECT_EQ(sm::broadcast_shapes(one.data(), 1, z.data(), 1), (V{0}));
  V two = {2}, three = {3};
  std::string m = EXPECT_SM_ERROR(sm::broadcast_shapes(two.data(), 1, three.data(), 1), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[2]") && contains(m, "[3]")) << m;
  EXPECT_SM_ERROR(sm::broadcast_shapes(z.data(), 1, three.data(), 1), SM_ERR_SHAPE);
  V neg = {-1};
  EXPECT_SM_ERROR(sm::broadcast_shapes(neg.data(), 1, one.data(), 1), SM_ERR_SHAPE);
  V e = {2, 3}, f = {3, 3};
  m = EXPECT_SM_ERROR(sm::broadcast_shapes(e.data(), 2, f.data(), 2), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[2, 3]") && contains(m, "[3, 3]")) << m;
}

TEST(LayoutBroadcast, BroadcastableTo) {
  V from = {3, 1}, to = {2, 3, 4};
  EXPECT_TRUE(sm::broadcastable_to(from.data(), 2, to.data(), 3));
  EXPECT_FALSE(sm::broadcastable_to(to.data(), 3, from.data(), 2));  // from has more dims
  V bad = {2, 4};
  EXPECT_FALSE(sm::broadcastable_to(bad.data(), 2, to.data(), 3));
  EXPECT_TRUE(sm::broadcastable_to(nullptr, 0, to.data(), 3));
  V one0 = {1}, zero = {0};
  EXPECT_TRUE(sm::broadcastable_to(one0.data(), 1, zero.data(), 1));
  EXPECT_FALSE(sm::broadcastable_to(zero.data(), 1, one0.data(), 1));  // no un-broadcasting
}

// ---- infer_shape / view --------------------------------------------------------------

TEST(LayoutView, InferShape) {
  V s = {2, -1, 3};
  EXPECT_EQ(sm::infer_shape(s.data(), 3, 24), (V{2, 4, 3}));
  V all = {-1};
  EXPECT_EQ(sm::infer_shape(all.data(), 1, 24), (V{24}));
  EXPECT_EQ(sm::infer_shape(all.data(), 1, 0), (V{0}));
  EXPECT_EQ(sm::infer_shape(nullptr, 0, 1), V{});
  EXPECT_SM_ERROR(sm::infer_shape(nullptr, 0, 2), SM_ERR_SHAPE);
  V two = {-1, -1};
  std::string m = EXPECT_SM_ERROR(sm::infer_shape(two.data(), 2, 4), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[-1, -1]")) << m;
  V neg = {2, -2};
  EXPECT_SM_ERROR(sm::infer_shape(neg.data(), 2, 4), SM_ERR_SHAPE);
  V bad = {5, -1};
  m = EXPECT_SM_ERROR(sm::infer_shape(bad.data(), 2, 24), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "24")) << m;
  V mis = {5, 5};
  m = EXPECT_SM_ERROR(sm::infer_shape(mis.data(), 2, 24), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[5, 5]") && contains(m, "24")) << m;
  V amb = {0, -1};  // torch: "ambiguous"
  EXPECT_SM_ERROR(sm::infer_shape(amb.data(), 2, 0), SM_ERR_SHAPE);
  V zero = {0, 3};
  EXPECT_EQ(sm::infer_shape(zero.data(), 2, 0), (V{0, 3}));
  V ovf = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_SM_ERROR(sm::infer_shape(ovf.data(), 2, 4), SM_ERR_OVERFLOW);
  V many(17, 1);
  EXPECT_SM_ERROR(sm::infer_shape(many.data(), 17, 1), SM_ERR_INVALID_ARGUMENT);
}

Layout view_of(const Layout& l, V shape) {
  return sm::view(l, shape.data(), static_cast<int>(shape.size()));
}

TEST(LayoutView, HappyPaths) {
  Layout c = C({2, 3, 4}, 5);
  Layout v = view_of(c, {6, 4});
  EXPECT_EQ(sizes_of(v), (V{6, 4}));
  EXPECT_EQ(strides_of(v), (V{4, 1}));
  EXPECT_EQ(v.offset, 5);
  v = view_of(c, {-1});
  EXPECT_EQ(strides_of(v), (V{1}));
  v = view_of(c, {2, 1, 12, 1});
  EXPECT_EQ(sizes_of(v), (V{2, 1, 12, 1}));
  EXPECT_EQ(addrs(v), addrs(c));
  // 0-d <-> [1, 1].
  v = view_of(C({}), {1, 1});
  EXPECT_EQ(strides_of(v), (V{1, 1}));
  v = view_of(C({1, 1}, 3), {});
  EXPECT_EQ(v.ndim, 0);
  EXPECT_EQ(v.offset, 3);
  // Transposed: the inner dims that still chain can be split.
  Layout t = sm::transpose(C({4, 6}), 0, 1);  // [6, 4] strides [1, 6]
  v = view_of(t, {2, 3, 4});
  EXPECT_EQ(strides_of(v), (V{3, 1, 6}));
  // Flip of every dim of a contiguous tensor: the strides still chain.
  int32_t both[] = {0, 1};
  Layout fl = sm::flip(C({2, 3}), both, 2);  // strides [-3, -1], offset 5
  v = view_of(fl, {6});
  EXPECT_EQ(strides_of(v), (V{-1}));
  EXPECT_EQ(v.offset, 5);
  EXPECT_EQ(addrs(v), addrs(fl));
  v = view_of(fl, {3, 2});
  EXPECT_EQ(strides_of(v), (V{-2, -1}));
  // Flipped, viewed to the same shape.
  int32_t f0[] = {0};
  Layout fr = sm::flip(C({2, 3}), f0, 1);  // strides [-3, 1]
  v = view_of(fr, {2, 3});
  EXPECT_EQ(v, fr);
  v = view_of(fr, {2, 3, 1});
  EXPECT_EQ(addrs(v), addrs(fr));
  // Expanded: stride-0 dims merge with each other.
  v = view_of(L({2, 2}, {0, 0}), {4});
  EXPECT_EQ(strides_of(v), (V{0}));
  // Size-0: any shape with numel 0, contiguous strides.
  v = view_of(L({0, 3}, {7, 2}), {3, 0, 2});
  EXPECT_EQ(strides_of(v), (V{2, 2, 1}));
  v = view_of(L({0, 3}, {7, 2}), {0, 3});
  EXPECT_EQ(strides_of(v), (V{7, 2}));  // same shape keeps strides
  v = view_of(L({2, 0}, {1, 1}), {-1, 5});
  EXPECT_EQ(sizes_of(v), (V{0, 5}));
  // Size-1 old dims with junk strides are ignored.
  v = view_of(L({2, 1, 3}, {3, 99, 1}), {6});
  EXPECT_EQ(strides_of(v), (V{1}));
}

TEST(LayoutView, Refusals) {
  Layout t = sm::transpose(C({2, 3}), 0, 1);  // [3, 2] strides [1, 3]
  std::string m = EXPECT_SM_ERROR(view_of(t, {6}), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "sm_reshape")) << m;
  EXPECT_TRUE(contains(m, "dims 0 and 1")) << m;
  int lo = 7, hi = 7;
  int64_t out[4];
  V six = {6};
  EXPECT_FALSE(sm::view_strides(t, six.data(), 1, out, &lo, &hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 1);
  // Flip of one dim: rows reversed, columns not; cannot merge.
  int32_t f0[] = {0};
  Layout fr = sm::flip(C({2, 3}), f0, 1);
  m = EXPECT_SM_ERROR(view_of(fr, {6}), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "sm_reshape")) << m;
  EXPECT_TRUE(contains(m, "-3")) << m;  // names the offending strides
  // The unmergeable pair is named among more dims: [2,3,4] with dims 1,2 transposed.
  Layout p = L({2, 4, 3}, {12, 1, 4});
  EXPECT_FALSE(sm::view_strides(p, V{2, 12}.data(), 2, out, &lo, &hi));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 2);
  // ...but merging the outer dim into the chain that works is fine.
  Layout sl = sm::slice(C({4, 6}), 1, 0, 3, 1);  // [4, 3] strides [6, 1]
  Layout ok = view_of(sl, {4, 3, 1});
  EXPECT_EQ(addrs(ok), addrs(sl));
  m = EXPECT_SM_ERROR(view_of(sl, {12}), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "dims 0 and 1")) << m;
  // Numel mismatch: SM_ERR_SHAPE from infer_shape.
  EXPECT_SM_ERROR(view_of(C({2, 3}), {7}), SM_ERR_SHAPE);
  EXPECT_FALSE(sm::view_strides(C({2, 3}), V{7}.data(), 1, out));
  EXPECT_SM_ERROR(view_of(C({2, 3}), V(17, 1)), SM_ERR_INVALID_ARGUMENT);
  // Expanded then view across the broadcast dim.
  Layout e = L({2, 3}, {0, 1});
  EXPECT_SM_ERROR(view_of(e, {6}), SM_ERR_SHAPE);
}

// Exact existence check: a strided layout for `shape` reaching the same
// addresses in row-major order exists iff the strides read off unit steps
// reproduce every address.
bool strided_view_exists(const Layout& l, const V& shape) {
  V a = addrs(l);
  if (a.empty()) return true;
  Layout cand;
  cand.ndim = static_cast<int>(shape.size());
  cand.offset = a[0];
  int64_t unit = 1;
  for (int d = cand.ndim - 1; d >= 0; --d) {
    cand.sizes[d] = shape[static_cast<size_t>(d)];
    cand.strides[d] = cand.sizes[d] > 1 ? a[static_cast<size_t>(unit)] - a[0] : 0;
    unit *= cand.sizes[d];
  }
  return addrs(cand) == a;
}

TEST(LayoutView, RandomizedAgainstAddresses) {
  std::mt19937_64 rng(987654321);
  auto rnd = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int ok = 0, refused = 0, neg_ok = 0;
  for (int iter = 0; iter < 6000; ++iter) {
    // A random base: contiguous, then random permute / flip / slice / expand.
    int nd = static_cast<int>(rnd(1, 4));
    V sizes;
    for (int d = 0; d < nd; ++d) sizes.push_back(rnd(1, 4));
    if (rng() % 20 == 0) sizes[static_cast<size_t>(rnd(0, nd - 1))] = 0;
    Layout l = C(sizes, 100);
    if (rng() % 2) {
      std::vector<int32_t> perm(static_cast<size_t>(nd));
      for (int d = 0; d < nd; ++d) perm[static_cast<size_t>(d)] = d;
      std::shuffle(perm.begin(), perm.end(), rng);
      l = sm::permute(l, perm.data(), nd);
    }
    for (int d = 0; d < nd; ++d) {
      if (rng() % 3 == 0) {
        int32_t fd = d;
        l = sm::flip(l, &fd, 1);
      }
      if (rng() % 4 == 0) l = sm::slice(l, d, rnd(-3, 2), SM_SLICE_NONE, rnd(1, 2));
      if (rng() % 8 == 0 && l.sizes[d] == 1) {
        V ex = sizes_of(l);
        ex[static_cast<size_t>(d)] = 3;
        l = sm::expand(l, ex.data(), nd);
      }
    }
    // A random target shape with the same numel: factor numel randomly.
    int64_t numel = l.numel();
    V shape;
    if (numel == 0) {
      int k = static_cast<int>(rnd(1, 3));
      for (int i = 0; i < k; ++i) shape.push_back(rnd(0, 3));
      shape[static_cast<size_t>(rnd(0, k - 1))] = 0;
    } else {
      int64_t rest = numel;
      while (rest > 1 && shape.size() < 5) {
        V divs;
        for (int64_t q = 1; q <= rest; ++q)
          if (rest % q == 0) divs.push_back(q);
        int64_t q = divs[static_cast<size_t>(rnd(0, static_cast<int64_t>(divs.size()) - 1))];
        shape.push_back(q);
        rest /= q;
      }
      if (rest > 1) shape.push_back(rest);
      if (rng() % 3 == 0) shape.insert(shape.begin() + rnd(0, static_cast<int64_t>(shape.size())), 1);
    }
    int64_t st[sm::kMaxDims];
    int nshape = static_cast<int>(shape.size());
    bool got = sm::view_strides(l, shape.data(), nshape, st);
    bool exists = strided_view_exists(l, shape);
    if (got) {
      Layout v = L(shape, V(st, st + nshape), l.offset);
      ASSERT_EQ(addrs(v), addrs(l))
          << "base " << sm::format_dims(l.sizes, l.ndim) << "/" << sm::format_dims(l.strides, l.ndim)
          << " shape " << sm::format_dims(shape.data(), nshape);
      ++ok;
      for (int d = 0; d < nshape; ++d)
        if (st[d] < 0 && shape[static_cast<size_t>(d)] > 1) {
          ++neg_ok;
          break;
        }
    } else {
      ++refused;
      // PyTorch's rule is exact for numel > 0: no strided view is missed.
      EXPECT_FALSE(exists) << "missed view of " << sm::format_dims(l.sizes, l.ndim) << "/"
                           << sm::format_dims(l.strides, l.ndim) << " as "
                           << sm::format_dims(shape.data(), nshape);
      EXPECT_SM_ERROR(sm::view(l, shape.data(), nshape), SM_ERR_SHAPE);
    }
  }
  EXPECT_GT(ok, 1000);
  EXPECT_GT(refused, 500);
  EXPECT_GT(neg_ok, 100);
}

// ---- as_strided -----------------------------------------------------------------------

TEST(LayoutViews, AsStrided) {
  Layout base = C({10});
  V sh = {3, 3}, st = {1, 1};
  Layout a = sm::as_strided(base, sh.data(), st.data(), 2, 2);
  EXPECT_EQ(a, L({3, 3}, {1, 1}, 2));
  V stn = {-2, 1};
  a = sm::as_strided(base, sh.data(), stn.data(), 2, 6);
  EXPECT_EQ(sm::extent(a).lo, 2);
  std::string m = EXPECT_SM_ERROR(sm::as_strided(base, sh.data(), st.data(), 2, -1),
                                  SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "-1")) << m;
  V shn = {3, -1};
  EXPECT_SM_ERROR(sm::as_strided(base, shn.data(), st.data(), 2, 0), SM_ERR_SHAPE);
  V huge = {INT64_MAX / 2 + 2};
  EXPECT_SM_ERROR(sm::as_strided(base, sh.data(), huge.data(), 1, 0), SM_ERR_OVERFLOW);
  V many(17, 1);
  EXPECT_SM_ERROR(sm::as_strided(base, many.data(), many.data(), 17, 0), SM_ERR_INVALID_ARGUMENT);
  a = sm::as_strided(base, nullptr, nullptr, 0, 9);
  EXPECT_EQ(a.ndim, 0);
  EXPECT_EQ(a.offset, 9);
  // No storage check here: the engine does it with check_in_storage.
  V big = {100};
  V one = {1};
  a = sm::as_strided(base, big.data(), one.data(), 1, 0);
  EXPECT_SM_ERROR(sm::check_in_storage(a, 4, 40), SM_ERR_OUT_OF_BOUNDS);
}

// ---- slice ----------------------------------------------------------------------------

// Python's a[start:stop:step] over range(n), from the definition: keep k in
// [0, n) between the (normalized) bounds on the step's lattice.
V py_slice(int64_t n, int64_t start, int64_t stop, int64_t step) {
  const int64_t NONE = SM_SLICE_NONE;
  V out;
  if (step > 0) {
    int64_t s = start == NONE ? 0 : (start < 0 ? start + n : start);
    int64_t e = stop == NONE ? n : (stop < 0 ? stop + n : stop);
    s = std::max<int64_t>(s, 0);
    for (int64_t k = s; k < std::min(e, n); k += step) out.push_back(k);
  } else {
    int64_t s = start == NONE ? n - 1 : (start < 0 ? start + n : start);
    int64_t e = stop == NONE ? -1 : (stop < 0 ? stop + n : stop);
    s = std::min(s, n - 1);
    for (int64_t k = s; k > std::max<int64_t>(e, -1) && k >= 0; k += step) out.push_back(k);
  }
  return out;
}

TEST(LayoutViews, SliceKnownPythonResults) {
  Layout a = C({10});
  auto idx = [&](int64_t s, int64_t e, int64_t st) { return addrs(sm::slice(a, 0, s, e, st)); };
  const int64_t N = SM_SLICE_NONE;
  EXPECT_EQ(idx(2, 5, 1), (V{2, 3, 4}));
  EXPECT_EQ(idx(N, N, -1), (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(idx(N, N, -3), (V{9, 6, 3, 0}));
  EXPECT_EQ(idx(-3, N, 1), (V{7, 8, 9}));
  EXPECT_EQ(idx(-100, 3, 1), (V{0, 1, 2}));
  EXPECT_EQ(idx(8, 100, 1), (V{8, 9}));
  EXPECT_EQ(idx(5, 2, 1), V{});
  EXPECT_EQ(idx(5, 2, -1), (V{5, 4, 3}));
  EXPECT_EQ(idx(100, N, -4), (V{9, 5, 1}));
  EXPECT_EQ(idx(N, -100, -1), (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(idx(-100, N, -1), V{});
  EXPECT_EQ(idx(N, 0, -1), (V{9, 8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(idx(1, N, INT64_MAX), V{1});
  EXPECT_EQ(idx(N, N, INT64_MIN), V{9});
  Layout r = sm::slice(a, 0, N, N, -1);
  EXPECT_EQ(strides_of(r), V{-1});
  EXPECT_EQ(r.offset, 9);
  // Large start/stop values near int64's ends clamp without overflow.
  EXPECT_EQ(idx(INT64_MIN + 1, INT64_MAX, 1).size(), 10u);
  EXPECT_EQ(idx(INT64_MAX, INT64_MIN + 1, -1).size(), 10u);
}

TEST(LayoutViews, SliceExhaustive) {
  const int64_t N = SM_SLICE_NONE;
  std::vector<int64_t> bounds = {N};
  for (int64_t b = -8; b <= 8; ++b) bounds.push_back(b);
  for (int64_t n = 0; n <= 5; ++n) {
    // Slice dim 1 of a [2, n] matrix with an offset and a negative column stride.
    Layout m = L({2, n}, {20, -2}, 40);
    for (int64_t step : {-3, -2, -1, 1, 2, 3, 7})
      for (int64_t s : bounds)
        for (int64_t e : bounds) {
          Layout r = sm::slice(m, 1, s, e, step);
          V want = py_slice(n, s, e, step);
          ASSERT_EQ(r.sizes[1], static_cast<int64_t>(want.size()))
              << "n=" << n << " " << s << ":" << e << ":" << step;
          EXPECT_EQ(r.sizes[0], 2);
          EXPECT_EQ(r.strides[0], 20);
          for (size_t k = 0; k < want.size(); ++k)
            ASSERT_EQ(at(r, {1, static_cast<int64_t>(k)}), at(m, {1, want[k]}));
          // Empty or not, the offset never goes negative.
          EXPECT_GE(r.offset, 0);
        }
  }
}

TEST(LayoutViews, SliceErrors) {
  Layout a = C({4, 5});
  std::string m = EXPECT_SM_ERROR(sm::slice(a, 0, 0, 2, 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(m, "step")) << m;
  EXPECT_SM_ERROR(sm::slice(a, 2, 0, 2, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::slice(a, -3, 0, 2, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::slice(C({}), 0, 0, 1, 1), SM_ERR_OUT_OF_BOUNDS);
  Layout r = sm::slice(a, -1, 1, 3, 1);
  EXPECT_EQ(sizes_of(r), (V{4, 2}));
  EXPECT_EQ(r.offset, 1);
}

// ---- narrow / select -------------------------------------------------------------------

TEST(LayoutViews, Narrow) {
  Layout a = C({4, 5}, 3);
  Layout r = sm::narrow(a, 1, 1, 3);
  EXPECT_EQ(r, L({4, 3}, {5, 1}, 4));
  r = sm::narrow(a, 0, -2, 2);  // torch: start may be negative
  EXPECT_EQ(r, L({2, 5}, {5, 1}, 13));
  r = sm::narrow(a, 1, 5, 0);  // empty at the end
  EXPECT_EQ(sizes_of(r), (V{4, 0}));
  std::string m = EXPECT_SM_ERROR(sm::narrow(a, 1, 3, 3), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "3") && contains(m, "5")) << m;
  EXPECT_SM_ERROR(sm::narrow(a, 1, -6, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(a, 1, 6, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(a, 1, 0, -1), SM_ERR_SHAPE);
  EXPECT_SM_ERROR(sm::narrow(a, 2, 0, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(a, 1, 1, INT64_MAX), SM_ERR_OUT_OF_BOUNDS);
  // Negative stride dim.
  Layout f = L({5}, {-1}, 4);
  r = sm::narrow(f, 0, 1, 2);
  EXPECT_EQ(addrs(r), (V{3, 2}));
  // start wraps like a dim index, or is the end: [-n, n].
  // torch.empty(3,3).narrow(0,-1,0).storage_offset() -> 6
  EXPECT_EQ(sm::narrow(C({3, 3}), 0, -1, 0), L({0, 3}, {3, 1}, 6));
  // torch.empty(3,3).narrow(0,-3,0).storage_offset() -> 0
  EXPECT_EQ(sm::narrow(C({3, 3}), 0, -3, 0), L({0, 3}, {3, 1}, 0));
  // torch.empty(3,3).narrow(0,3,0).storage_offset() -> 9
  EXPECT_EQ(sm::narrow(C({3, 3}), 0, 3, 0), L({0, 3}, {3, 1}, 9));
  // torch.empty(3,3).narrow(0,-4,0) and narrow(0,4,0): "Dimension out of range"
  EXPECT_SM_ERROR(sm::narrow(C({3, 3}), 0, -4, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(C({3, 3}), 0, 4, 0), SM_ERR_OUT_OF_BOUNDS);
  // A size-0 dim takes start 0 only (PyTorch 2: "start out of range
  // (expected to be in range of [0, 0], but got -1)"; torch 1.13 took -1).
  EXPECT_EQ(sm::narrow(C({0, 3}, 2), 0, 0, 0), L({0, 3}, {3, 1}, 2));
  m = EXPECT_SM_ERROR(sm::narrow(C({0, 3}), 0, -1, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "[0, 0]")) << m;
  EXPECT_SM_ERROR(sm::narrow(C({0, 3}), 0, -2, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(C({0, 3}), 0, 1, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(C({0, 3}), 0, -1, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::narrow(C({0, 3}), 0, 0, 1), SM_ERR_OUT_OF_BOUNDS);
}

TEST(LayoutViews, Select) {
  Layout a = C({3, 4}, 2);
  Layout r = sm::select(a, 0, 1);
  EXPECT_EQ(r, L({4}, {1}, 6));
  r = sm::select(a, 1, -1);
  EXPECT_EQ(r, L({3}, {4}, 5));
  r = sm::select(sm::select(a, 0, 2), 0, 3);
  EXPECT_EQ(r.ndim, 0);
  EXPECT_EQ(r.offset, 2 + 11);
  std::string m = EXPECT_SM_ERROR(sm::select(a, 1, 4), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "4")) << m;
  EXPECT_SM_ERROR(sm::select(a, 1, -5), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::select(a, 2, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::select(C({}), 0, 0), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::select(C({0, 3}), 0, 0), SM_ERR_OUT_OF_BOUNDS);
  r = sm::select(L({3}, {-2}, 4), 0, 2);
  EXPECT_EQ(r.offset, 0);
}

// ---- permute / transpose / movedim ----------------------------------------------------

TEST(LayoutViews, PermuteTranspose) {
  Layout a = C({2, 3, 4}, 1);
  int32_t p[] = {2, 0, 1};
  Layout r = sm::permute(a, p, 3);
  EXPECT_EQ(r, L({4, 2, 3}, {1, 12, 4}, 1));
  int32_t pn[] = {-1, -3, -2};
  EXPECT_EQ(sm::permute(a, pn, 3), r);
  int32_t dup[] = {0, 0, 1};
  std::string m = EXPECT_SM_ERROR(sm::permute(a, dup, 3), SM_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(m, "0")) << m;
  int32_t dup2[] = {0, -3, 1};  // -3 wraps to 0
  EXPECT_SM_ERROR(sm::permute(a, dup2, 3), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::permute(a, p, 2), SM_ERR_INVALID_ARGUMENT);
  int32_t oob[] = {0, 1, 3};
  EXPECT_SM_ERROR(sm::permute(a, oob, 3), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm::permute(C({}, 4), nullptr, 0), C({}, 4));
  r = sm::transpose(a, 0, -1);
  EXPECT_EQ(r, L({4, 3, 2}, {1, 4, 12}, 1));
  EXPECT_EQ(sm::transpose(a, 1, 1), a);
  EXPECT_EQ(sm::transpose(C({}), 0, -1), C({}));
  EXPECT_SM_ERROR(sm::transpose(a, 0, 3), SM_ERR_OUT_OF_BOUNDS);
}

TEST(LayoutViews, Movedim) {
  Layout a = L({2, 3, 4, 5}, {1000, 100, 10, 1});
  // torch.movedim(x, 1, 0): [3, 2, 4, 5].
  int32_t s1[] = {1}, d1[] = {0};
  EXPECT_EQ(sm::movedim(a, s1, d1, 1), L({3, 2, 4, 5}, {100, 1000, 10, 1}));
  // torch.movedim(x, (0, 1), (2, 3)) -> [4, 5, 2, 3].
  int32_t s2[] = {0, 1}, d2[] = {2, 3};
  EXPECT_EQ(sm::movedim(a, s2, d2, 2), L({4, 5, 2, 3}, {10, 1, 1000, 100}));
  // torch.movedim(x, (0, 3), (3, 1)) -> dims order [1?]: out[3]=0, out[1]=3, rest (1, 2) fill 0, 2.
  int32_t s3[] = {0, 3}, d3[] = {3, 1};
  EXPECT_EQ(sm::movedim(a, s3, d3, 2), L({3, 5, 4, 2}, {100, 1, 10, 1000}));
  int32_t sn[] = {-1}, dn[] = {0};
  EXPECT_EQ(sm::movedim(a, sn, dn, 1), L({5, 2, 3, 4}, {1, 1000, 100, 10}));
  int32_t sd[] = {0, 0}, dd[] = {1, 2};
  EXPECT_SM_ERROR(sm::movedim(a, sd, dd, 2), SM_ERR_INVALID_ARGUMENT);
  int32_t sx[] = {0, 1}, dx[] = {2, -2};
  EXPECT_SM_ERROR(sm::movedim(a, sx, dx, 2), SM_ERR_INVALID_ARGUMENT);
  int32_t so[] = {4};
  EXPECT_SM_ERROR(sm::movedim(a, so, d1, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::movedim(a, s1, d1, -1), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm::movedim(a, nullptr, nullptr, 0), a);
  int32_t z[] = {0};
  EXPECT_EQ(sm::movedim(C({}), z, z, 1), C({}));
}

// ---- expand ---------------------------------------------------------------------------

TEST(LayoutViews, Expand) {
  Layout a = L({3, 1}, {1, 7}, 2);
  V s = {3, 4};
  EXPECT_EQ(sm::expand(a, s.data(), 2), L({3, 4}, {1, 0}, 2));
  V keep = {-1, 4};
  EXPECT_EQ(sm::expand(a, keep.data(), 2), L({3, 4}, {1, 0}, 2));
  V lead = {2, 3, 4};
  EXPECT_EQ(sm::expand(a, lead.data(), 3), L({2, 3, 4}, {0, 1, 0}, 2));
  // A new leading size-1 dim gets PyTorch's stride (size * stride of the next).
  V lead1 = {1, 3, 1};
  EXPECT_EQ(sm::expand(a, lead1.data(), 3), L({1, 3, 1}, {3, 1, 7}, 2));
  // Size 1 -> 0 is allowed.
  V zero = {3, 0};
  EXPECT_EQ(sizes_of(sm::expand(a, zero.data(), 2)), (V{3, 0}));
  // 0-d to anything: every dim is new and gets stride 0, size 1 included.
  V any = {2, 2};
  EXPECT_EQ(sm::expand(C({}, 5), any.data(), 2), L({2, 2}, {0, 0}, 5));
  // torch.tensor(5.).expand(3, 1).stride() -> (0, 0)
  V s31 = {3, 1};
  EXPECT_EQ(sm::expand(C({}, 5), s31.data(), 2), L({3, 1}, {0, 0}, 5));
  // torch.tensor(5.).expand(1).stride() -> (0,); expand(1, 1) -> (0, 0)
  V s1 = {1}, s11 = {1, 1};
  EXPECT_EQ(sm::expand(C({}), s1.data(), 1), L({1}, {0}));
  EXPECT_EQ(sm::expand(C({}), s11.data(), 2), L({1, 1}, {0, 0}));
  // torch.tensor(5.).expand(2, 1, 1).stride() -> (0, 0, 0)
  V s211 = {2, 1, 1};
  EXPECT_EQ(sm::expand(C({}), s211.data(), 3), L({2, 1, 1}, {0, 0, 0}));
  // torch.tensor(5.).expand(1, 0).stride() -> (0, 0)
  V s10 = {1, 0};
  EXPECT_EQ(sm::expand(C({}), s10.data(), 2), L({1, 0}, {0, 0}));
  // A kept size-1 dim expanded to 1 keeps its stride; new size-1 leading
  // dims chain from it.
  // torch.empty_strided((1,3),(7,1)).expand(1,1,3).stride() -> (7, 7, 1)
  V s113 = {1, 1, 3};
  EXPECT_EQ(sm::expand(L({1, 3}, {7, 1}), s113.data(), 3), L({1, 1, 3}, {7, 7, 1}));
  // torch.empty_strided((1,3),(7,1)).expand(5,1,1,3).stride() -> (0, 7, 7, 1)
  V s5113 = {5, 1, 1, 3};
  EXPECT_EQ(sm::expand(L({1, 3}, {7, 1}), s5113.data(), 4), L({5, 1, 1, 3}, {0, 7, 7, 1}));
  // A dim expanded 1 -> 0 gets stride 0, and so do new dims outside it.
  // torch.empty_strided((1,3),(7,1)).expand(1,0,3).stride() -> (0, 0, 1)
  V s103 = {1, 0, 3};
  EXPECT_EQ(sm::expand(L({1, 3}, {7, 1}), s103.data(), 3), L({1, 0, 3}, {0, 0, 1}));
  // torch.empty_strided((0,2),(5,1)).expand(1,1,0,2).stride() -> (0, 0, 5, 1)
  V s1102 = {1, 1, 0, 2};
  EXPECT_EQ(sm::expand(L({0, 2}, {5, 1}), s1102.data(), 4), L({1, 1, 0, 2}, {0, 0, 5, 1}));
  // Same shape: unchanged.
  V same = {3, 1};
  EXPECT_EQ(sm::expand(a, same.data(), 2), a);
  V bad = {4, 4};
  std::string m = EXPECT_SM_ERROR(sm::expand(a, bad.data(), 2), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[3, 1]") && contains(m, "[4, 4]")) << m;
  V fewer = {4};
  EXPECT_SM_ERROR(sm::expand(a, fewer.data(), 1), SM_ERR_SHAPE);
  V newneg = {-1, 3, 4};
  EXPECT_SM_ERROR(sm::expand(a, newneg.data(), 3), SM_ERR_SHAPE);
  V neg = {3, -2};
  EXPECT_SM_ERROR(sm::expand(a, neg.data(), 2), SM_ERR_SHAPE);
  V many(17, 1);
  EXPECT_SM_ERROR(sm::expand(a, many.data(), 17), SM_ERR_INVALID_ARGUMENT);
  V ovf = {int64_t(1) << 40, int64_t(1) << 40, 3, 1};
  EXPECT_SM_ERROR(sm::expand(a, ovf.data(), 4), SM_ERR_OVERFLOW);
  // Expanding a size-0 dim to nonzero is not allowed.
  V from0 = {3};
  EXPECT_SM_ERROR(sm::expand(L({0}, {1}), from0.data(), 1), SM_ERR_SHAPE);
}

// ---- squeeze / unsqueeze ------------------------------------------------------------

TEST(LayoutViews, SqueezeUnsqueeze) {
  Layout a = L({1, 3, 1, 2}, {9, 2, 9, 1}, 1);
  EXPECT_EQ(sm::squeeze(a, nullptr, 0), L({3, 2}, {2, 1}, 1));
  int32_t d2[] = {2};
  EXPECT_EQ(sm::squeeze(a, d2, 1), L({1, 3, 2}, {9, 2, 1}, 1));
  int32_t d1[] = {1};  // size 3: no-op, as PyTorch
  EXPECT_EQ(sm::squeeze(a, d1, 1), a);
  int32_t dm[] = {0, -2, 3};
  EXPECT_EQ(sm::squeeze(a, dm, 3), L({3, 2}, {2, 1}, 1));
  int32_t dup[] = {0, -4};
  EXPECT_SM_ERROR(sm::squeeze(a, dup, 2), SM_ERR_INVALID_ARGUMENT);
  int32_t oob[] = {4};
  EXPECT_SM_ERROR(sm::squeeze(a, oob, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::squeeze(a, d1, -1), SM_ERR_INVALID_ARGUMENT);
  int32_t z[] = {0};
  EXPECT_EQ(sm::squeeze(C({}), z, 1), C({}));
  EXPECT_EQ(sm::squeeze(C({1}), nullptr, 0).ndim, 0);
  EXPECT_EQ(sm::squeeze(C({0, 1}), nullptr, 0), L({0}, {1}));

  Layout b = C({2, 3}, 4);
  EXPECT_EQ(sm::unsqueeze(b, 0), L({1, 2, 3}, {6, 3, 1}, 4));
  EXPECT_EQ(sm::unsqueeze(b, 1), L({2, 1, 3}, {3, 3, 1}, 4));
  EXPECT_EQ(sm::unsqueeze(b, 2), L({2, 3, 1}, {3, 1, 1}, 4));
  EXPECT_EQ(sm::unsqueeze(b, -1), L({2, 3, 1}, {3, 1, 1}, 4));
  EXPECT_EQ(sm::unsqueeze(b, -3), L({1, 2, 3}, {6, 3, 1}, 4));
  EXPECT_SM_ERROR(sm::unsqueeze(b, 3), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::unsqueeze(b, -4), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm::unsqueeze(C({}), 0), L({1}, {1}));
  EXPECT_EQ(sm::unsqueeze(C({}), -1), L({1}, {1}));
  EXPECT_SM_ERROR(sm::unsqueeze(C(V(16, 1)), 0), SM_ERR_INVALID_ARGUMENT);
  // unsqueeze keeps the layout contiguous.
  EXPECT_TRUE(sm::is_contiguous(sm::unsqueeze(b, 1), SM_CONTIGUOUS));
}

// ---- flatten / unflatten -------------------------------------------------------------

TEST(LayoutViews, FlattenUnflatten) {
  Layout a = C({2, 3, 4}, 1);
  EXPECT_EQ(sm::flatten(a, 0, -1), L({24}, {1}, 1));
  EXPECT_EQ(sm::flatten(a, 1, 2), L({2, 12}, {12, 1}, 1));
  EXPECT_EQ(sm::flatten(a, 1, 1), a);
  EXPECT_EQ(sm::flatten(C({}, 3), 0, -1), L({1}, {1}, 3));  // 0-d gives 1-d
  EXPECT_SM_ERROR(sm::flatten(a, 2, 1), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::flatten(a, 0, 3), SM_ERR_OUT_OF_BOUNDS);
  // Transposed inner dims cannot merge: SM_ERR_SHAPE naming them.
  Layout t = sm::transpose(a, 1, 2);
  std::string m = EXPECT_SM_ERROR(sm::flatten(t, 1, 2), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "sm_reshape") && contains(m, "dims 1 and 2")) << m;
  // ...but the outer ones can.
  Layout t2 = sm::transpose(C({2, 3, 4}), 1, 2);  // [2,4,3] strides [12,1,4]
  EXPECT_SM_ERROR(sm::flatten(t2, 0, 1), SM_ERR_SHAPE);
  Layout p = L({2, 3, 4}, {3, 1, 6});  // dims 0,1 chain
  EXPECT_EQ(sm::flatten(p, 0, 1), L({6, 4}, {1, 6}));
  EXPECT_EQ(sizes_of(sm::flatten(C({2, 0, 3}), 0, 1)), (V{0, 3}));
  int32_t f[] = {0, 1, 2};
  Layout fl = sm::flip(a, f, 3);
  Layout ff = sm::flatten(fl, 0, 2);
  EXPECT_EQ(addrs(ff), addrs(fl));
  EXPECT_EQ(strides_of(ff), V{-1});

  V s = {2, -1};
  Layout u = sm::unflatten(C({3, 8}), 1, s.data(), 2);
  EXPECT_EQ(u, L({3, 2, 4}, {8, 4, 1}));
  u = sm::unflatten(L({3, 8}, {1, -3}, 21), -1, s.data(), 2);
  EXPECT_EQ(u, L({3, 2, 4}, {1, -12, -3}, 21));  // chains from the old stride
  V one = {8};
  EXPECT_EQ(sm::unflatten(C({3, 8}), 1, one.data(), 1), C({3, 8}));
  V bad = {3, -1};
  m = EXPECT_SM_ERROR(sm::unflatten(C({3, 8}), 1, bad.data(), 2), SM_ERR_SHAPE);
  EXPECT_TRUE(contains(m, "[3, -1]") && contains(m, "8")) << m;
  EXPECT_SM_ERROR(sm::unflatten(C({3, 8}), 2, s.data(), 2), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::unflatten(C({3, 8}), 1, s.data(), 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::unflatten(C({}), 0, one.data(), 1), SM_ERR_OUT_OF_BOUNDS);
  V big(16, 1);
  EXPECT_SM_ERROR(sm::unflatten(C({3, 1}), 1, big.data(), 16), SM_ERR_INVALID_ARGUMENT);
  V z = {0, 5};
  EXPECT_EQ(sizes_of(sm::unflatten(C({3, 0}), 1, z.data(), 2)), (V{3, 0, 5}));
  V amb = {0, -1};
  EXPECT_SM_ERROR(sm::unflatten(C({3, 0}), 1, amb.data(), 2), SM_ERR_SHAPE);
}

// unflatten is PyTorch's view() to the new shape: size-1 dims get view's
// strides, empty tensors row-major ones (unless the shape is unchanged).
TEST(LayoutViews, UnflattenStridesFollowView) {
  struct Case {
    V sizes, strides;
    int64_t dim;
    V split, want_sizes, want;
  };
  const Case cases[] = {
      // torch.arange(24).view(2,12).unflatten(1,(3,1,4)).stride() -> (12, 4, 4, 1)
      {{2, 12}, {12, 1}, 1, {3, 1, 4}, {2, 3, 1, 4}, {12, 4, 4, 1}},
      // ... .unflatten(1,(1,12)).stride() -> (12, 12, 1)
      {{2, 12}, {12, 1}, 1, {1, 12}, {2, 1, 12}, {12, 12, 1}},
      // ... .unflatten(1,(12,1)).stride() -> (12, 1, 1)
      {{2, 12}, {12, 1}, 1, {12, 1}, {2, 12, 1}, {12, 1, 1}},
      // ... .unflatten(1,(1,1,12)).stride() -> (12, 12, 12, 1)
      {{2, 12}, {12, 1}, 1, {1, 1, 12}, {2, 1, 1, 12}, {12, 12, 12, 1}},
      // ... .unflatten(1,(-1,1,4)).stride() -> (12, 4, 4, 1)
      {{2, 12}, {12, 1}, 1, {-1, 1, 4}, {2, 3, 1, 4}, {12, 4, 4, 1}},
      // ... .unflatten(1,(3,4,1)).stride() -> (12, 4, 1, 1)
      {{2, 12}, {12, 1}, 1, {3, 4, 1}, {2, 3, 4, 1}, {12, 4, 1, 1}},
      // torch.empty_strided((2,12),(1,2)).unflatten(1,(3,1,4)).stride() -> (1, 8, 8, 2)
      {{2, 12}, {1, 2}, 1, {3, 1, 4}, {2, 3, 1, 4}, {1, 8, 8, 2}},
      // torch.empty_strided((2,12),(1,2)).unflatten(1,(1,12)).stride() -> (1, 24, 2)
      {{2, 12}, {1, 2}, 1, {1, 12}, {2, 1, 12}, {1, 24, 2}},
      // A size-1 dim into (1,): torch.empty_strided((2,1,3),(3,100,1))
      //   .unflatten(1,(1,)).stride() -> (3, 3, 1)
      {{2, 1, 3}, {3, 100, 1}, 1, {1}, {2, 1, 3}, {3, 3, 1}},
      // ... .unflatten(1,(-1,1)).stride() -> (3, 3, 3, 1)
      {{2, 1, 3}, {3, 100, 1}, 1, {-1, 1}, {2, 1, 1, 3}, {3, 3, 3, 1}},
      // Empty: torch.empty(2,0,3).unflatten(1,(0,5)).stride() -> (15, 15, 3, 1)
      {{2, 0, 3}, {3, 3, 1}, 1, {0, 5}, {2, 0, 5, 3}, {15, 15, 3, 1}},
      // torch.empty(2,0,3).unflatten(1,(5,0)).stride() -> (15, 3, 3, 1)
      {{2, 0, 3}, {3, 3, 1}, 1, {5, 0}, {2, 5, 0, 3}, {15, 3, 3, 1}},
      // torch.empty(2,0,3).unflatten(1,(1,-1)).stride() -> (3, 3, 3, 1)
      {{2, 0, 3}, {3, 3, 1}, 1, {1, -1}, {2, 1, 0, 3}, {3, 3, 3, 1}},
      // torch.empty(2,0,3).unflatten(1,(2,0,1)).stride() -> (6, 3, 3, 3, 1)
      {{2, 0, 3}, {3, 3, 1}, 1, {2, 0, 1}, {2, 2, 0, 1, 3}, {6, 3, 3, 3, 1}},
      // Unchanged empty shape keeps the strides:
      // torch.empty_strided((2,0,3),(7,11,2)).unflatten(1,(0,)).stride() -> (7, 11, 2)
      {{2, 0, 3}, {7, 11, 2}, 1, {0}, {2, 0, 3}, {7, 11, 2}},
      // torch.empty_strided((2,0,3),(7,11,2)).unflatten(0,(1,2)).stride() -> (6, 3, 3, 1)
      {{2, 0, 3}, {7, 11, 2}, 0, {1, 2}, {1, 2, 0, 3}, {6, 3, 3, 1}},
  };
  for (const Case& c : cases) {
    Layout in = L(c.sizes, c.strides, 4);
    Layout u = sm::unflatten(in, c.dim, c.split.data(), static_cast<int>(c.split.size()));
    EXPECT_EQ(u, L(c.want_sizes, c.want, 4))
        << "sizes " << sm::format_dims(c.sizes.data(), in.ndim) << " dim " << c.dim;
    // The same as view() to that shape, as in PyTorch.
    EXPECT_EQ(u, sm::view(in, c.want_sizes.data(), static_cast<int>(c.want_sizes.size())));
  }
  // torch.empty(2,0,3).unflatten(1,(-1,0)): "the unspecified dimension size -1
  // can be any value and is ambiguous"
  V amb = {-1, 0};
  EXPECT_SM_ERROR(sm::unflatten(C({2, 0, 3}), 1, amb.data(), 2), SM_ERR_SHAPE);
}

// ---- unfold ------------------------------------------------------------------------

TEST(LayoutViews, Unfold) {
  // torch.arange(7).unfold(0, 2, 1): shape (6, 2), strides (1, 1).
  EXPECT_EQ(sm::unfold(C({7}), 0, 2, 1), L({6, 2}, {1, 1}));
  // unfold(0, 2, 2): shape (3, 2), strides (2, 1).
  EXPECT_EQ(sm::unfold(C({7}), 0, 2, 2), L({3, 2}, {2, 1}));
  // 2-d along dim 1: windows appended last.
  Layout u = sm::unfold(C({3, 5}, 1), 1, 3, 2);
  EXPECT_EQ(u, L({3, 2, 3}, {5, 2, 1}, 1));
  EXPECT_EQ(at(u, {2, 1, 2}), 1 + 2 * 5 + 2 + 2);
  // Along a flipped dim.
  Layout f = sm::unfold(L({4}, {-1}, 3), 0, 2, 1);
  EXPECT_EQ(addrs(f), (V{3, 2, 2, 1, 1, 0}));
  // Window of the whole dim, window of 0.
  EXPECT_EQ(sm::unfold(C({4}), 0, 4, 3), L({1, 4}, {3, 1}));
  EXPECT_EQ(sizes_of(sm::unfold(C({4}), 0, 0, 1)), (V{5, 0}));
  // 0-d: one element, window 1 (torch gives shape (1,)).
  EXPECT_EQ(sm::unfold(C({}, 2), 0, 1, 1), L({1}, {1}, 2));
  EXPECT_SM_ERROR(sm::unfold(C({}), 0, 2, 1), SM_ERR_OUT_OF_BOUNDS);
  std::string m = EXPECT_SM_ERROR(sm::unfold(C({4}), 0, 5, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_TRUE(contains(m, "5") && contains(m, "4")) << m;
  EXPECT_SM_ERROR(sm::unfold(C({4}), 0, 2, 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::unfold(C({4}), 0, -1, 1), SM_ERR_SHAPE);
  EXPECT_SM_ERROR(sm::unfold(C({4}), 1, 2, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::unfold(C(V(16, 1)), 0, 1, 1), SM_ERR_INVALID_ARGUMENT);
  // A huge step past the end is fine (one window).
  Layout one = sm::unfold(C({4}), 0, 2, INT64_MAX);
  EXPECT_EQ(sizes_of(one), (V{1, 2}));
  EXPECT_EQ(addrs(one), (V{0, 1}));
}

// ---- diagonal --------------------------------------------------------------------------

TEST(LayoutViews, Diagonal) {
  Layout a = C({3, 4}, 1);
  EXPECT_EQ(sm::diagonal(a, 0, 0, 1), L({3}, {5}, 1));
  EXPECT_EQ(sm::diagonal(a, 1, 0, 1), L({3}, {5}, 2));   // a[0,1], a[1,2], a[2,3]
  EXPECT_EQ(sm::diagonal(a, 2, 0, 1), L({2}, {5}, 3));
  EXPECT_EQ(sm::diagonal(a, -1, 0, 1), L({2}, {5}, 5));  // a[1,0], a[2,1]
  EXPECT_EQ(sm::diagonal(a, -2, 0, 1), L({1}, {5}, 9));
  // Off the end: empty, offset untouched.
  EXPECT_EQ(sm::diagonal(a, 4, 0, 1), L({0}, {5}, 1));
  EXPECT_EQ(sm::diagonal(a, -3, 0, 1), L({0}, {5}, 1));
  EXPECT_EQ(sm::diagonal(a, INT64_MAX, 0, 1).sizes[0], 0);
  EXPECT_EQ(sm::diagonal(a, INT64_MIN, 0, 1).sizes[0], 0);
  // Swapped dims transpose the roles.
  EXPECT_EQ(sm::diagonal(a, 1, 1, 0), L({2}, {5}, 5));
  // 3-d: remaining dims first, diagonal last (torch: (2, 3, 4).diagonal(0, 0, 2) -> (3, 2)).
  Layout b = C({2, 3, 4});
  Layout d = sm::diagonal(b, 0, 0, 2);
  EXPECT_EQ(d, L({3, 2}, {4, 13}));
  EXPECT_EQ(at(d, {1, 1}), at(b, {1, 1, 1}));
  // dim1=2, dim2=0, offset 1: element k is b[k + 1, :, k], so only k = 0.
  d = sm::diagonal(b, 1, -1, 0);
  EXPECT_EQ(sizes_of(d), (V{3, 1}));
  EXPECT_EQ(at(d, {2, 0}), at(b, {1, 2, 0}));
  d = sm::diagonal(b, -1, 2, 0);  // element k is b[k, :, k + 1]
  EXPECT_EQ(sizes_of(d), (V{3, 2}));
  EXPECT_EQ(at(d, {2, 1}), at(b, {1, 2, 2}));
  // Negative strides.
  int32_t f[] = {0};
  Layout fl = sm::flip(C({3, 3}), f, 1);
  d = sm::diagonal(fl, 0, 0, 1);  // anti-diagonal of the original
  EXPECT_EQ(addrs(d), (V{6, 4, 2}));
  EXPECT_SM_ERROR(sm::diagonal(a, 0, 1, -1), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::diagonal(a, 0, 0, 2), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::diagonal(C({3}), 0, 0, 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::diagonal(C({}), 0, 0, 0), SM_ERR_OUT_OF_BOUNDS);
}

// ---- flip -----------------------------------------------------------------------------

TEST(LayoutViews, Flip) {
  Layout a = C({2, 3}, 1);
  int32_t f1[] = {1};
  Layout r = sm::flip(a, f1, 1);
  EXPECT_EQ(r, L({2, 3}, {3, -1}, 3));
  EXPECT_EQ(at(r, {1, 0}), at(a, {1, 2}));
  int32_t fb[] = {0, -1};
  r = sm::flip(a, fb, 2);
  EXPECT_EQ(r, L({2, 3}, {-3, -1}, 6));
  V ra = addrs(a), rr = addrs(r);
  std::reverse(ra.begin(), ra.end());
  EXPECT_EQ(rr, ra);
  // Flip twice is the identity.
  EXPECT_EQ(sm::flip(r, fb, 2), a);
  // An empty view keeps its offset (moving it could make it negative); size 1 too.
  EXPECT_EQ(sm::flip(L({0, 3}, {3, 1}, 2), fb, 2).offset, 2);
  EXPECT_EQ(sm::flip(L({1, 3}, {3, 1}, 2), fb, 2).offset, 4);
  EXPECT_EQ(sm::flip(a, nullptr, 0), a);
  int32_t z[] = {0};
  EXPECT_EQ(sm::flip(C({}, 3), z, 1), C({}, 3));
  int32_t dup[] = {1, -1};
  std::string m = EXPECT_SM_ERROR(sm::flip(a, dup, 2), SM_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(m, "-1")) << m;
  int32_t oob[] = {2};
  EXPECT_SM_ERROR(sm::flip(a, oob, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::flip(a, f1, -1), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::flip(L({2}, {INT64_MIN}, 0), z, 1), SM_ERR_OVERFLOW);
  // The flipped view stays in the same storage bounds.
  sm::check_in_storage(sm::flip(C({4, 5}), fb, 2), 4, 80);
}

// ---- split / chunk -----------------------------------------------------------------------

using Ranges = std::vector<std::pair<int64_t, int64_t>>;

TEST(LayoutViews, SplitChunk) {
  Layout a = C({5, 2});
  EXPECT_EQ(sm::split_ranges(a, 0, 2), (Ranges{{0, 2}, {2, 2}, {4, 1}}));
  EXPECT_EQ(sm::split_ranges(a, 0, 5), (Ranges{{0, 5}}));
  EXPECT_EQ(sm::split_ranges(a, 0, 100), (Ranges{{0, 5}}));
  EXPECT_EQ(sm::split_ranges(a, -1, 1), (Ranges{{0, 1}, {1, 1}}));
  // Empty dim: one empty piece (split_size 0 allowed only here).
  EXPECT_EQ(sm::split_ranges(C({0}), 0, 3), (Ranges{{0, 0}}));
  EXPECT_EQ(sm::split_ranges(C({0}), 0, 0), (Ranges{{0, 0}}));
  EXPECT_SM_ERROR(sm::split_ranges(a, 0, 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::split_ranges(a, 0, -1), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::split_ranges(a, 2, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::split_ranges(C({}), 0, 1), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_SM_ERROR(sm::split_ranges(C({int64_t(1) << 40}), 0, 1), SM_ERR_INVALID_ARGUMENT);
  // torch.chunk: 5 into 3 -> 2, 2, 1; 6 into 4 -> 2, 2, 2 (three pieces).
  EXPECT_EQ(sm::chunk_ranges(a, 0, 3), (Ranges{{0, 2}, {2, 2}, {4, 1}}));
  EXPECT_EQ(sm::chunk_ranges(C({6}), 0, 4), (Ranges{{0, 2}, {2, 2}, {4, 2}}));
  EXPECT_EQ(sm::chunk_ranges(C({6}), 0, 6).size(), 6u);
  EXPECT_EQ(sm::chunk_ranges(C({3}), 0, 10), (Ranges{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(sm::chunk_ranges(C({0, 2}), 0, 3), (Ranges{{0, 0}, {0, 0}, {0, 0}}));
  EXPECT_EQ(sm::chunk_ranges(C({5}), 0, INT64_MAX), (Ranges{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}));
  EXPECT_SM_ERROR(sm::chunk_ranges(a, 0, 0), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::chunk_ranges(a, 0, -2), SM_ERR_INVALID_ARGUMENT);
  EXPECT_SM_ERROR(sm::chunk_ranges(a, 3, 2), SM_ERR_OUT_OF_BOUNDS);
}


// ---- randomized: every view op against brute-force index mapping ---------------

// Calls fn on every multi-index of sizes (row-major).
void for_each_index(const V& sizes, const std::function<void(const V&)>& fn) {
  for (int64_t s : sizes)
    if (s == 0) return;
  V idx(sizes.size(), 0);
  for (;;) {
    fn(idx);
    int d = static_cast<int>(sizes.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < sizes[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
    if (d < 0) return;
  }
}

TEST(LayoutViews, RandomizedAgainstIndexMapping) {
  std::mt19937_64 rng(2024);
  auto rnd = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int checked[12] = {};
  for (int iter = 0; iter < 20000; ++iter) {
    // Random base layout with any-sign strides, placed inside a storage.
    Layout l;
    l.ndim = static_cast<int>(rnd(0, 4));
    for (int d = 0; d < l.ndim; ++d) {
      l.sizes[d] = rnd(0, 4) == 0 ? rnd(0, 1) : rnd(2, 4);
      l.strides[d] = rnd(-7, 7);
    }
    sm::Extent e = sm::extent(l);
    l.offset = e.empty ? rnd(0, 3) : -e.lo + rnd(0, 3);
    const int64_t storage = sm::required_storage_bytes(l, 1) + 4;
    sm::check_in_storage(l, 1, storage);
    const int nd = l.ndim;
    const V sz = sizes_of(l);
    auto size_at = [&](int d) { return sz[static_cast<size_t>(d)]; };
    int op = static_cast<int>(rnd(0, 11));
    Layout r;
    std::function<V(const V&)> src;  // result index -> base index
    if (op == 0 && nd > 0) {  // slice
      int d = static_cast<int>(rnd(0, nd - 1));
      int64_t step = rnd(0, 1) ? rnd(1, 3) : -rnd(1, 3);
      int64_t a = rnd(0, 4) == 0 ? SM_SLICE_NONE : rnd(-6, 6);
      int64_t b = rnd(0, 4) == 0 ? SM_SLICE_NONE : rnd(-6, 6);
      r = sm::slice(l, d, a, b, step);
      V pick = py_slice(size_at(d), a, b, step);
      ASSERT_EQ(r.sizes[d], static_cast<int64_t>(pick.size()));
      src = [=](const V& i) { V j = i; j[static_cast<size_t>(d)] = pick[static_cast<size_t>(i[static_cast<size_t>(d)])]; return j; };
    } else if (op == 1 && nd > 0) {  // narrow
      int d = static_cast<int>(rnd(0, nd - 1));
      int64_t n = size_at(d), start = rnd(-n, n), s0 = start < 0 ? start + n : start;
      int64_t len = rnd(0, n - s0);
      r = sm::narrow(l, d, start, len);
      src = [=](const V& i) { V j = i; j[static_cast<size_t>(d)] += s0; return j; };
    } else if (op == 2 && nd > 0 && l.numel() > 0) {  // select
      int d = static_cast<int>(rnd(0, nd - 1));
      int64_t n = size_at(d), k = rnd(-n, n - 1), k0 = k < 0 ? k + n : k;
      r = sm::select(l, d, k);
      src = [=](const V& i) { V j = i; j.insert(j.begin() + d, k0); return j; };
    } else if (op == 3) {  // permute
      std::vector<int32_t> p(static_cast<size_t>(nd));
      std::iota(p.begin(), p.end(), 0);
      std::shuffle(p.begin(), p.end(), rng);
      r = sm::permute(l, p.data(), nd);
      src = [=](const V& i) { V j(i.size()); for (size_t k = 0; k < i.size(); ++k) j[static_cast<size_t>(p[k])] = i[k]; return j; };
    } else if (op == 4) {  // flip
      std::vector<int32_t> dims;
      for (int d = 0; d < nd; ++d)
        if (rnd(0, 1)) dims.push_back(d);
      r = sm::flip(l, dims.data(), static_cast<int>(dims.size()));
      src = [=](const V& i) { V j = i; for (int32_t d : dims) j[static_cast<size_t>(d)] = sz[static_cast<size_t>(d)] - 1 - i[static_cast<size_t>(d)]; return j; };
    } else if (op == 5 && nd > 0) {  // unfold
      int d = static_cast<int>(rnd(0, nd - 1));
      int64_t size = rnd(0, size_at(d)), step = rnd(1, 3);
      r = sm::unfold(l, d, size, step);
      ASSERT_EQ(r.sizes[d], (size_at(d) - size) / step + 1);
      src = [=](const V& i) { V j(i.begin(), i.end() - 1); j[static_cast<size_t>(d)] = i[static_cast<size_t>(d)] * step + i.back(); return j; };
    } else if (op == 6 && nd >= 2) {  // diagonal
      int d1 = static_cast<int>(rnd(0, nd - 1)), d2 = static_cast<int>(rnd(0, nd - 1));
      if (d1 == d2) continue;
      int64_t off = rnd(-5, 5);
      r = sm::diagonal(l, off, d1, d2);
      src = [=](const V& i) {
        V j;
        size_t k = 0;
        for (int d = 0; d < nd; ++d) j.push_back(d == d1 || d == d2 ? 0 : i[k++]);
        int64_t t = i.back();
        j[static_cast<size_t>(d1)] = t + (off < 0 ? -off : 0);
        j[static_cast<size_t>(d2)] = t + (off > 0 ? off : 0);
        return j;
      };
    } else if (op == 7) {  // expand
      int extra = static_cast<int>(rnd(0, 2));
      V shape;
      for (int k = 0; k < extra; ++k) shape.push_back(rnd(0, 3));
      for (int d = 0; d < nd; ++d) shape.push_back(size_at(d) == 1 ? rnd(0, 3) : (rnd(0, 1) ? -1 : size_at(d)));
      r = sm::expand(l, shape.data(), static_cast<int>(shape.size()));
      src = [=](const V& i) { V j; for (int d = 0; d < nd; ++d) j.push_back(sz[static_cast<size_t>(d)] == 1 ? 0 : i[static_cast<size_t>(d + extra)]); return j; };
    } else if (op == 8) {  // squeeze all
      r = sm::squeeze(l, nullptr, 0);
      src = [=](const V& i) { V j; size_t k = 0; for (int d = 0; d < nd; ++d) j.push_back(sz[static_cast<size_t>(d)] == 1 ? 0 : i[k++]); return j; };
    } else if (op == 9) {  // unsqueeze
      int d = static_cast<int>(rnd(0, nd));
      r = sm::unsqueeze(l, d);
      src = [=](const V& i) { V j = i; j.erase(j.begin() + d); return j; };
    } else if (op == 10 && nd > 0) {  // transpose
      int a = static_cast<int>(rnd(0, nd - 1)), b = static_cast<int>(rnd(0, nd - 1));
      r = sm::transpose(l, a, b);
      src = [=](const V& i) { V j = i; std::swap(j[static_cast<size_t>(a)], j[static_cast<size_t>(b)]); return j; };
    } else if (op == 11 && nd > 0) {  // movedim of one dim
      int32_t a = static_cast<int32_t>(rnd(0, nd - 1)), b = static_cast<int32_t>(rnd(0, nd - 1));
      r = sm::movedim(l, &a, &b, 1);
      src = [=](const V& i) {
        V rest = i;  // remove position b, then insert at a
        int64_t v = rest[static_cast<size_t>(b)];
        rest.erase(rest.begin() + b);
        rest.insert(rest.begin() + a, v);
        return rest;
      };
    } else {
      continue;
    }
    ++checked[op];
    for_each_index(sizes_of(r), [&](const V& i) { ASSERT_EQ(at(r, i), at(l, src(i))); });
    // No view escapes the storage, empty ones included (offset >= 0).
    sm::check_in_storage(r, 1, storage);
  }
  for (int op = 0; op < 12; ++op) EXPECT_GT(checked[op], 300) << "op " << op;
}

TEST(LayoutViews, EmptyNegativeStrideKeepsOffset) {
  // An empty view with a negative stride at offset 0: no op may push the
  // offset below 0 (the storage check would then refuse a harmless view).
  Layout e = L({0, 3}, {3, -1}, 0);
  int32_t d1[] = {1};
  EXPECT_GE(sm::flip(e, d1, 1).offset, 0);
  EXPECT_GE(sm::select(e, 1, 2).offset, 0);
  EXPECT_GE(sm::narrow(e, 1, 2, 1).offset, 0);
  EXPECT_GE(sm::slice(e, 1, 1, SM_SLICE_NONE, 1).offset, 0);
  EXPECT_GE(sm::diagonal(L({0, 3, 3}, {9, -3, -1}), 1, 1, 2).offset, 0);
  sm::check_in_storage(sm::select(e, 1, 2), 4, 0);
}

// Errors never modify the input: functions return a new Layout.
TEST(LayoutViews, InputUntouchedOnError) {
  const Layout a = L({2, 3}, {3, 1}, 4);
  const Layout copy = a;
  EXPECT_SM_ERROR(sm::slice(a, 0, 0, 1, 0), SM_ERR_INVALID_ARGUMENT);
  V bad = {5, 5};
  EXPECT_SM_ERROR(sm::expand(a, bad.data(), 2), SM_ERR_SHAPE);
  EXPECT_SM_ERROR(sm::view(sm::transpose(a, 0, 1), V{6}.data(), 1), SM_ERR_SHAPE);
  EXPECT_EQ(a, copy);
}

}  // namespace

// Past the sort-based limit, large overlapping views are still found exactly
// (pigeonhole or a bitmap over the reached range), and large disjoint
// interleavings are still accepted.
TEST(LayoutOverlap, LargeViewsAreCheckedExactly) {
  using sm::Layout;
  using sm::unfold;
  using sm::internal_overlap;
  // int8 [25600, 12] strides (1, 25600), unfolded on the last dim: windows overlap.
  Layout base;
  base.ndim = 2;
  base.sizes[0] = 25600;
  base.sizes[1] = 12;
  base.strides[0] = 1;
  base.strides[1] = 25600;
  const Layout u = unfold(base, 1, 4, 3);
  EXPECT_EQ(internal_overlap(u), sm::Overlap::Yes);
  // [300, 300] with strides (301, 1)... a gap per row: disjoint but not dense,
  // and not provable by the sorted-stride rule when permuted oddly.
  Layout g;
  g.ndim = 2;
  g.sizes[0] = 400;
  g.sizes[1] = 400;
  g.strides[0] = 3;
  g.strides[1] = 1201;  // 3*399 = 1197 < 1201: disjoint by the sorted rule
  EXPECT_EQ(internal_overlap(g), sm::Overlap::No);
  Layout h;  // strides (3, 4) over [3000, 100]: overlapping, numel < span
  h.ndim = 2;
  h.sizes[0] = 3000;
  h.sizes[1] = 100;
  h.strides[0] = 4;
  h.strides[1] = 3;
  EXPECT_EQ(internal_overlap(h), sm::Overlap::Yes);
  Layout k;  // (3, 3) shape with strides (3, 4) is disjoint (0,4,8,3,7,11,6,10,14); scaled up
  k.ndim = 3;
  k.sizes[0] = 3;
  k.sizes[1] = 3;
  k.sizes[2] = 20000;
  k.strides[0] = 3 * 20000;
  k.strides[1] = 4 * 20000;
  k.strides[2] = 1;
  EXPECT_EQ(internal_overlap(k), sm::Overlap::No);
}
