// Copies: reshape (view or copy, and says which), contiguous, clone and its
// memory formats, sm_to dtype conversions (exact f16/bf16 rounding),
// copy_into (broadcast, conversion, overlap), index_select.
#include <sys/resource.h>

#include <limits>

#include "api_test_util.hpp"

using namespace smt;

namespace {

int would_copy(sm_tensor t, const Shape& s) {
  int v = -1;
  const sm_status st =
      sm_reshape_would_copy(t, s.empty() ? nullptr : s.data(), static_cast<int32_t>(s.size()), &v);
  EXPECT_EQ(st, SM_OK) << "sm_reshape_would_copy: " << sm_last_error();
  return v;
}

// sm_to(t, cpu, dtype) read back as raw bits / values.
template <class Out>
std::vector<Out> convert(sm_tensor t, sm_dtype to) {
  Tensor o;
  const sm_status st = sm_to(t, cpu(), to, o.out(), nullptr);
  EXPECT_EQ(st, SM_OK) << "sm_to: " << sm_last_error();
  if (st != SM_OK) return {};
  EXPECT_EQ(dtype_of(o), to);
  return read<Out>(o);
}

}  // namespace

TEST(Reshape, ViewWhenPossible) {
  Tensor base = iota({2, 3, 4});
  Tensor r;
  int copied = -1;
  const int64_t shape[2] = {6, -1};
  EXPECT_EQ(would_copy(base, {6, -1}), 0);
  const sm_memory_stats_t s0 = stats();
  SM_ASSERT_OK(sm_reshape(base, shape, 2, r.out(), &copied));
  EXPECT_EQ(copied, 0);
  EXPECT_EQ(stats().num_allocs, s0.num_allocs);
  expect_layout(r, {6, 4}, {4, 1}, 0);
  EXPECT_EQ(data_ptr_of(r), data_ptr_of(base));
  EXPECT_EQ(same_storage(base, r), 1);
  // copied may be NULL.
  Tensor r2;
  SM_ASSERT_OK(sm_reshape(base, shape, 2, r2.out(), nullptr));
  EXPECT_EQ(shape_of(r2), (Shape{6, 4}));
}

TEST(Reshape, CopyWhenNeeded) {
  Tensor base = iota({3, 4});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
  EXPECT_EQ(would_copy(t, {12}), 1);
  EXPECT_EQ(would_copy(t, {4, 3}), 0);
  EXPECT_EQ(would_copy(t, {2, 2, 3}), 0);
  EXPECT_EQ(would_copy(t, {2, 6}), 1);
  Tensor r;
  int copied = -1;
  const int64_t shape[1] = {12};
  const int64_t v0 = version_of(base);
  SM_ASSERT_OK(sm_reshape(t, shape, 1, r.out(), &copied));
  EXPECT_EQ(copied, 1);
  expect_layout(r, {12}, {1}, 0);
  EXPECT_EQ(same_storage(base, r), 0);
  EXPECT_EQ(read<float>(r), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(version_of(base), v0) << "reading for a copy is not a write";
  // The copy is independent.
  SM_ASSERT_OK(sm_inplace_scalar(r, SM_OP_ZERO, 0, 0));
  EXPECT_EQ(read<float>(base)[1], 1.0f);
}

TEST(Reshape, WouldCopyAgreesWithReshape) {
  Tensor base = iota({2, 3, 4});
  Tensor tr, sl, ex, fl;
  SM_ASSERT_OK(sm_permute(base, std::vector<int32_t>{2, 0, 1}.data(), 3, tr.out()));
  SM_ASSERT_OK(sm_slice(base, 2, 0, 4, 2, sl.out()));
  Tensor row = iota({1, 4});
  SM_ASSERT_OK(sm_expand(row, std::vector<int64_t>{3, 4}.data(), 2, ex.out()));
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0, 1, 2}.data(), 3, fl.out()));
  const std::vector<std::pair<sm_tensor, std::vector<Shape>>> cases = {
      {base, {{24}, {4, 6}, {2, 12}, {2, 3, 2, 2}, {-1}}},
      {tr, {{24}, {4, 6}, {8, 3}, {2, 2, 6}, {4, 2, 3}}},
      {sl, {{12}, {2, 6}, {6, 2}, {2, 3, 2}}},
      {ex, {{12}, {3, 2, 2}, {12, 1}}},
      {fl, {{24}, {6, 4}, {4, 6}}},
  };
  for (const auto& c : cases) {
    for (const Shape& s : c.second) {
      const int w = would_copy(c.first, s);
      Tensor r;
      int copied = -1;
      SM_ASSERT_OK(sm_reshape(c.first, s.data(), static_cast<int32_t>(s.size()), r.out(), &copied));
      EXPECT_EQ(w, copied) << "shape size " << s.size() << " first " << s[0];
      EXPECT_EQ(same_storage(c.first, r), copied ? 0 : 1);
      // Same values in row-major order either way.
      EXPECT_EQ(read<float>(r), read<float>(c.first));
    }
  }
}

TEST(Reshape, NegativeStridesMergeWithoutCopy) {
  Tensor base = iota({2, 3}), f;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0, 1}.data(), 2, f.out()));
  Tensor r;
  int copied = -1;
  const int64_t shape[1] = {6};
  SM_ASSERT_OK(sm_reshape(f, shape, 1, r.out(), &copied));
  EXPECT_EQ(copied, 0);
  expect_layout(r, {6}, {-1}, 5);
  EXPECT_EQ(read<float>(r), (std::vector<float>{5, 4, 3, 2, 1, 0}));
}

TEST(Reshape, ZeroDimAndEmpty) {
  Tensor one = iota({1}), s;
  int copied = -1;
  SM_ASSERT_OK(sm_reshape(one, nullptr, 0, s.out(), &copied));
  EXPECT_EQ(ndim_of(s), 0);
  EXPECT_EQ(copied, 0);
  const int64_t shape[2] = {0, 6};
  Tensor e;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT32, cpu(), e.out()));
  Tensor r;
  const int64_t ns[3] = {3, 0, 2};
  SM_ASSERT_OK(sm_reshape(e, ns, 3, r.out(), &copied));
  EXPECT_EQ(shape_of(r), (Shape{3, 0, 2}));
  const int64_t inf[2] = {-1, 3};  // 0 elements: -1 is 0
  Tensor r2;
  SM_ASSERT_OK(sm_reshape(e, inf, 2, r2.out(), nullptr));
  EXPECT_EQ(shape_of(r2), (Shape{0, 3}));
}

TEST(Contiguous, SameDataWhenAlreadyContiguous) {
  Tensor base = iota({3, 4});
  const sm_memory_stats_t s0 = stats();
  Tensor c;
  int copied = -1;
  SM_ASSERT_OK(sm_contiguous(base, SM_CONTIGUOUS, c.out(), &copied));
  EXPECT_EQ(copied, 0) << "no copy, and the call says so";
  EXPECT_EQ(stats().num_allocs, s0.num_allocs);
  EXPECT_EQ(data_ptr_of(c), data_ptr_of(base));
  EXPECT_EQ(same_storage(c, base), 1);
  // It is a handle of its own.
  base.reset();
  EXPECT_EQ(read<float>(c)[11], 11.0f);
}

TEST(Contiguous, CopiesWhenNot) {
  Tensor base = iota({3, 4});
  Tensor t, c;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
  int copied = -1;
  SM_ASSERT_OK(sm_contiguous(t, SM_CONTIGUOUS, c.out(), &copied));
  EXPECT_EQ(copied, 1);
  expect_layout(c, {4, 3}, {3, 1}, 0);
  EXPECT_EQ(same_storage(c, base), 0);
  EXPECT_EQ(read<float>(c), read<float>(t));
  // Negative strides are copied too.
  Tensor f, fc;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{1}.data(), 1, f.out()));
  SM_ASSERT_OK(sm_contiguous(f, SM_CONTIGUOUS, fc.out(), nullptr));
  expect_layout(fc, {3, 4}, {4, 1}, 0);
  EXPECT_EQ(read<float>(fc), (std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
}

TEST(Contiguous, ChannelsLast) {
  Tensor x = iota({2, 3, 4, 5});
  Tensor cl;
  SM_ASSERT_OK(sm_contiguous(x, SM_CHANNELS_LAST, cl.out(), nullptr));
  expect_layout(cl, {2, 3, 4, 5}, {60, 1, 15, 3}, 0);
  EXPECT_EQ(same_storage(cl, x), 0);
  EXPECT_EQ(read<float>(cl), read<float>(x));
  Tensor again;
  SM_ASSERT_OK(sm_contiguous(cl, SM_CHANNELS_LAST, again.out(), nullptr));
  EXPECT_EQ(data_ptr_of(again), data_ptr_of(cl));
  Tensor back;
  SM_ASSERT_OK(sm_contiguous(cl, SM_CONTIGUOUS, back.out(), nullptr));
  expect_layout(back, {2, 3, 4, 5}, {60, 20, 5, 1}, 0);
  EXPECT_EQ(read<float>(back), read<float>(x));
  // Preserve is for clone only.
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_contiguous(x, SM_PRESERVE, &out, nullptr), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm_contiguous(x, 17, &out, nullptr), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_contiguous", "17"});
  // channels_last needs 4 dims.
  Tensor m = iota({3, 4});
  expect_status_in(sm_contiguous(m, SM_CHANNELS_LAST, &out, nullptr), {SM_ERR_SHAPE, SM_ERR_INVALID_ARGUMENT},
                   "contiguous(2-D, channels_last)");
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Clone, AlwaysCopies) {
  Tensor base = iota({3, 4});
  const sm_memory_stats_t s0 = stats();
  Tensor c;
  SM_ASSERT_OK(sm_clone(base, SM_CONTIGUOUS, c.out()));
  EXPECT_EQ(stats().num_allocs, s0.num_allocs + 1);
  EXPECT_NE(data_ptr_of(c), data_ptr_of(base));
  EXPECT_EQ(same_storage(c, base), 0);
  expect_layout(c, {3, 4}, {4, 1}, 0);
  EXPECT_EQ(read<float>(c), read<float>(base));
  SM_ASSERT_OK(sm_inplace_scalar(base, SM_OP_ZERO, 0, 0));
  EXPECT_EQ(read<float>(c)[5], 5.0f);
  // Clone of a view keeps only the view's elements.
  Tensor s, cs;
  SM_ASSERT_OK(sm_slice(c, 1, 1, 3, 1, s.out()));
  SM_ASSERT_OK(sm_clone(s, SM_PRESERVE, cs.out()));
  EXPECT_EQ(storage_nbytes_of(cs), 6 * 4);
  EXPECT_EQ(offset_of(cs), 0);
  EXPECT_EQ(read<float>(cs), (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST(Clone, PreserveKeepsADenseOrder) {
  Tensor base = iota({3, 4});
  Tensor t, ct;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
  SM_ASSERT_OK(sm_clone(t, SM_PRESERVE, ct.out()));
  expect_layout(ct, {4, 3}, {1, 4}, 0);
  EXPECT_EQ(read<float>(ct), read<float>(t));
  Tensor rc;
  SM_ASSERT_OK(sm_clone(t, SM_CONTIGUOUS, rc.out()));
  expect_layout(rc, {4, 3}, {3, 1}, 0);
  // Not dense: row-major.
  Tensor s, cs;
  SM_ASSERT_OK(sm_slice(base, 1, 0, 4, 2, s.out()));
  SM_ASSERT_OK(sm_clone(s, SM_PRESERVE, cs.out()));
  expect_layout(cs, {3, 2}, {2, 1}, 0);
  // Channels-last input stays channels-last.
  Tensor x = iota({2, 3, 4, 5}), cl, pcl;
  SM_ASSERT_OK(sm_clone(x, SM_CHANNELS_LAST, cl.out()));
  SM_ASSERT_OK(sm_clone(cl, SM_PRESERVE, pcl.out()));
  expect_layout(pcl, {2, 3, 4, 5}, {60, 1, 15, 3}, 0);
  // A flipped (dense) tensor: same dim order, positive strides.
  Tensor f, cf;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0}.data(), 1, f.out()));
  SM_ASSERT_OK(sm_clone(f, SM_PRESERVE, cf.out()));
  expect_layout(cf, {3, 4}, {4, 1}, 0);
  EXPECT_EQ(read<float>(cf), (std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}));
}

TEST(Clone, ChannelsLastStridesArePyTorchs) {
  Tensor x = iota({2, 3, 4, 5}), cl;
  SM_ASSERT_OK(sm_clone(x, SM_CHANNELS_LAST, cl.out()));
  expect_layout(cl, {2, 3, 4, 5}, {60, 1, 15, 3}, 0);
  EXPECT_EQ(read<float>(cl), read<float>(x));
  // Check the physical order: storage element 1 is [0,1,0,0] = 20.
  Tensor flat;
  SM_ASSERT_OK(sm_as_strided(cl, std::vector<int64_t>{4}.data(), std::vector<int64_t>{1}.data(),
                             1, 0, flat.out()));
  EXPECT_EQ(read<float>(flat), (std::vector<float>{0, 20, 40, 1}));

  Tensor y = iota({2, 3, 4, 5, 6}), cl3;
  SM_ASSERT_OK(sm_clone(y, SM_CHANNELS_LAST_3D, cl3.out()));
  expect_layout(cl3, {2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}, 0);
  EXPECT_EQ(read<float>(cl3), read<float>(y));

  // Size-1 dims get PyTorch's strides (plain size products):
  // torch.empty(2,3,1,2).clone(memory_format=torch.channels_last).stride() -> (6, 1, 6, 3)
  Tensor z = iota({2, 3, 1, 2}), cz;
  SM_ASSERT_OK(sm_clone(z, SM_CHANNELS_LAST, cz.out()));
  expect_layout(cz, {2, 3, 1, 2}, {6, 1, 6, 3}, 0);

  sm_tensor out = sentinel_tensor();
  expect_status_in(sm_clone(x, SM_CHANNELS_LAST_3D, &out), {SM_ERR_SHAPE, SM_ERR_INVALID_ARGUMENT},
                   "clone(4-D, channels_last_3d)");
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Clone, ZeroDimAndEmpty) {
  Tensor one = iota({1}), s, cs;
  SM_ASSERT_OK(sm_view(one, nullptr, 0, s.out()));
  SM_ASSERT_OK(sm_clone(s, SM_PRESERVE, cs.out()));
  EXPECT_EQ(ndim_of(cs), 0);
  EXPECT_EQ(read<float>(cs), std::vector<float>{0});
  EXPECT_EQ(same_storage(s, cs), 0);
  const int64_t shape[4] = {0, 3, 2, 2};
  Tensor e, ce;
  SM_ASSERT_OK(sm_empty(shape, 4, SM_FLOAT16, cpu(), e.out()));
  SM_ASSERT_OK(sm_clone(e, SM_CHANNELS_LAST, ce.out()));
  EXPECT_EQ(shape_of(ce), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(nbytes_of(ce), 0);
  Tensor co;
  SM_ASSERT_OK(sm_contiguous(e, SM_CONTIGUOUS, co.out(), nullptr));
  EXPECT_EQ(numel_of(co), 0);
}

namespace {

// A view of `shape`/`strides` over a fresh iota storage of `storage` floats.
Tensor strided_view(const Tensor& base, const Shape& shape, const Shape& strides,
                    int64_t offset = 0) {
  Tensor v;
  const sm_status st =
      sm_as_strided(base, shape.empty() ? nullptr : shape.data(),
                    strides.empty() ? nullptr : strides.data(),
                    static_cast<int32_t>(shape.size()), offset, v.out());
  EXPECT_EQ(st, SM_OK) << "sm_as_strided: " << sm_last_error();
  return v;
}

struct StrideCase {
  Shape shape, strides, want;
};

// clone(SM_PRESERVE) and to(float64) of each case: the PyTorch strides,
// offset 0, the same values.
void expect_preserve_strides(const std::vector<StrideCase>& cases) {
  Tensor base = iota({64});
  for (const StrideCase& c : cases) {
    Tensor v = strided_view(base, c.shape, c.strides, 3);
    Tensor cl, to64;
    SM_ASSERT_OK(sm_clone(v, SM_PRESERVE, cl.out()));
    expect_layout(cl, c.shape, c.want, 0, "clone");
    EXPECT_EQ(read<float>(cl), read<float>(v));
    int copied = -1;
    SM_ASSERT_OK(sm_to(v, cpu(), SM_FLOAT64, to64.out(), &copied));
    EXPECT_EQ(copied, 1);
    expect_layout(to64, c.shape, c.want, 0, "to");
    const std::vector<float> vf = read<float>(v);
    EXPECT_EQ(read<double>(to64), std::vector<double>(vf.begin(), vf.end()));
  }
}

}  // namespace

TEST(Clone, PreserveKeepsDenseStridesOfSizeOneAndEmptyDims) {
  expect_preserve_strides({
      // torch.empty_strided((4,1,2),(1,7,4)).clone().stride() -> (1, 7, 4),
      // .to(torch.float64).stride() -> (1, 7, 4)
      {{4, 1, 2}, {1, 7, 4}, {1, 7, 4}},
      // torch.empty_strided((1,1),(9,3)).clone().stride() -> (9, 3)
      {{1, 1}, {9, 3}, {9, 3}},
      // torch.empty_strided((1,2,2),(8,1,2)).clone().stride() -> (8, 1, 2)
      {{1, 2, 2}, {8, 1, 2}, {8, 1, 2}},
      // torch.empty_strided((2,1,3),(3,40,1)).clone().stride() -> (3, 40, 1)
      {{2, 1, 3}, {3, 40, 1}, {3, 40, 1}},
      // torch.empty_strided((0,),(4,)).clone().stride() -> (4,)
      {{0}, {4}, {4}},
      // torch.empty_strided((2,0,3),(5,7,1)).clone().stride() -> (5, 7, 1)
      {{2, 0, 3}, {5, 7, 1}, {5, 7, 1}},
      // torch.empty_strided((0,3),(1,0)).clone().stride() -> (1, 0)
      {{0, 3}, {1, 0}, {1, 0}},
  });
  // The kept size-1 stride costs no storage: 8 elements for (4,1,2).
  Tensor base = iota({64});
  Tensor v = strided_view(base, {4, 1, 2}, {1, 7, 4}), c;
  SM_ASSERT_OK(sm_clone(v, SM_PRESERVE, c.out()));
  EXPECT_EQ(storage_nbytes_of(c), 8 * 4);
  // A flipped size-1 stride is kept as its magnitude (offset 0 needs it
  // positive; PyTorch has no negative strides).
  Tensor f = strided_view(base, {2, 1, 3}, {3, -5, 1}, 10), cf;
  SM_ASSERT_OK(sm_clone(f, SM_PRESERVE, cf.out()));
  expect_layout(cf, {2, 1, 3}, {3, 5, 1}, 0);
  EXPECT_EQ(read<float>(cf), read<float>(f));
}

TEST(Clone, PreserveOfOverlappingInputFollowsPyTorchStrideOrder) {
  expect_preserve_strides({
      // Unfold windows: torch.arange(10.).unfold(0,4,2).clone().stride() -> (4, 1)
      {{4, 4}, {2, 1}, {4, 1}},
      // torch.arange(10.).unfold(0,4,2).t().clone().stride() -> (1, 4)
      {{4, 4}, {1, 2}, {1, 4}},
      // Equal strides, the smaller size inside:
      // torch.empty_strided((2,3),(1,1)).clone().stride() -> (1, 2)
      {{2, 3}, {1, 1}, {1, 2}},
      // torch.empty_strided((3,2),(1,1)).clone().stride() -> (2, 1)
      {{3, 2}, {1, 1}, {2, 1}},
      // torch.empty_strided((2,3,4),(12,1,1)).clone().stride() -> (12, 1, 3)
      {{2, 3, 4}, {12, 1, 1}, {12, 1, 3}},
      // Expanded dims keep their row-major place:
      // torch.zeros(1,3).expand(4,3).clone().stride() -> (3, 1)
      {{4, 3}, {0, 1}, {3, 1}},
      // torch.empty_strided((3,1,4),(0,3,1)).clone().stride() -> (4, 4, 1)
      {{3, 1, 4}, {0, 3, 1}, {4, 4, 1}},
      // Gaps: torch.empty_strided((3,4),(4,2)).clone().stride() -> (4, 1)
      {{3, 4}, {4, 2}, {4, 1}},
  });
  // Through the real view calls: unfold of a transposed matrix.
  Tensor m = iota({4, 5}), t, u, c;
  SM_ASSERT_OK(sm_transpose(m, 0, 1, t.out()));  // (5,4) strides (1,5)
  SM_ASSERT_OK(sm_unfold(t, 0, 2, 1, u.out()));  // (4,4,2) strides (1,5,1)
  expect_layout(u, {4, 4, 2}, {1, 5, 1}, 0);
  SM_ASSERT_OK(sm_clone(u, SM_PRESERVE, c.out()));
  // torch.arange(20.).view(4,5).t().unfold(0,2,1).clone().stride() -> (2, 8, 1)
  expect_layout(c, {4, 4, 2}, {2, 8, 1}, 0);
  EXPECT_EQ(read<float>(c), read<float>(u));
}

TEST(Contiguous, ChannelsLastOfEmptyAndSizeOneDims) {
  // A row-major empty tensor is not channels-last: sm_contiguous copies it
  // into PyTorch's channels-last strides (plain size products).
  struct Case {
    Shape shape, want;
    sm_memory_format format;
  };
  const Case cases[] = {
      // torch.empty(0,3,1,5).contiguous(memory_format=torch.channels_last).stride()
      //   -> (15, 1, 15, 3)
      {{0, 3, 1, 5}, {15, 1, 15, 3}, SM_CHANNELS_LAST},
      // torch.empty(2,0,4,5).contiguous(memory_format=torch.channels_last).stride()
      //   -> (0, 1, 0, 0)
      {{2, 0, 4, 5}, {0, 1, 0, 0}, SM_CHANNELS_LAST},
      // torch.empty(2,3,4,0).contiguous(memory_format=torch.channels_last).stride()
      //   -> (0, 1, 0, 3)
      {{2, 3, 4, 0}, {0, 1, 0, 3}, SM_CHANNELS_LAST},
      // torch.empty(0,3,1,5,2).contiguous(memory_format=torch.channels_last_3d)
      //   .stride() -> (30, 1, 30, 6, 3)
      {{0, 3, 1, 5, 2}, {30, 1, 30, 6, 3}, SM_CHANNELS_LAST_3D},
      // torch.empty(2,3,4,0,6).contiguous(memory_format=torch.channels_last_3d)
      //   .stride() -> (0, 1, 0, 18, 3)
      {{2, 3, 4, 0, 6}, {0, 1, 0, 18, 3}, SM_CHANNELS_LAST_3D},
  };
  for (const Case& c : cases) {
    Tensor e;
    SM_ASSERT_OK(sm_empty(c.shape.data(), static_cast<int32_t>(c.shape.size()), SM_FLOAT32,
                          cpu(), e.out()));
    // torch.empty(0,3,1,5).is_contiguous(memory_format=torch.channels_last) -> False
    EXPECT_EQ(is_contig(e, c.format), 0);
    EXPECT_EQ(is_contig(e, SM_CONTIGUOUS), 1);
    Tensor ce, cc;
    int copied = -1;
    SM_ASSERT_OK(sm_contiguous(e, c.format, ce.out(), &copied));
    EXPECT_EQ(copied, 1);
    expect_layout(ce, c.shape, c.want, 0, "contiguous");
    // torch.empty(..., memory_format=cl).is_contiguous(memory_format=cl) -> True
    EXPECT_EQ(is_contig(ce, c.format), 1);
    // Now it is: no second copy.
    SM_ASSERT_OK(sm_contiguous(ce, c.format, cc.out(), &copied));
    EXPECT_EQ(copied, 0);
    EXPECT_EQ(same_storage(ce, cc), 1);
    // clone(format) gives the same strides.
    Tensor cl;
    SM_ASSERT_OK(sm_clone(e, c.format, cl.out()));
    expect_layout(cl, c.shape, c.want, 0, "clone");
  }
  // Size-1 dims: (2,1,1,3) row-major already is channels-last, so no copy.
  // torch.empty(2,1,1,3).contiguous(memory_format=torch.channels_last).stride()
  //   -> (3, 3, 3, 1)
  Tensor x = iota({2, 1, 1, 3}), cx, kx;
  int copied = -1;
  SM_ASSERT_OK(sm_contiguous(x, SM_CHANNELS_LAST, cx.out(), &copied));
  EXPECT_EQ(copied, 0);
  expect_layout(cx, {2, 1, 1, 3}, {3, 3, 3, 1}, 0);
  // ...while clone(channels_last) lays it out afresh:
  // torch.empty(2,1,1,3).clone(memory_format=torch.channels_last).stride() -> (3, 1, 3, 1)
  SM_ASSERT_OK(sm_clone(x, SM_CHANNELS_LAST, kx.out()));
  expect_layout(kx, {2, 1, 1, 3}, {3, 1, 3, 1}, 0);
  EXPECT_EQ(read<float>(kx), read<float>(x));
}

TEST(To, SameDeviceAndDtypeIsTheSameData) {
  Tensor base = iota({3});
  Tensor t;
  int copied = -1;
  SM_ASSERT_OK(sm_to(base, cpu(), SM_FLOAT32, t.out(), &copied));
  EXPECT_EQ(copied, 0);
  EXPECT_EQ(data_ptr_of(t), data_ptr_of(base));
  EXPECT_EQ(same_storage(t, base), 1);
}

TEST(To, DtypeChangeCopiesAndKeepsDenseLayout) {
  Tensor base = iota({3, 4});
  Tensor d;
  int copied = -1;
  SM_ASSERT_OK(sm_to(base, cpu(), SM_FLOAT64, d.out(), &copied));
  EXPECT_EQ(copied, 1);
  EXPECT_EQ(same_storage(d, base), 0);
  EXPECT_EQ(read<double>(d), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  Tensor t, td;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
  SM_ASSERT_OK(sm_to(t, cpu(), SM_FLOAT64, td.out(), nullptr));
  expect_layout(td, {4, 3}, {1, 4}, 0);
  EXPECT_EQ(read<double>(td), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // Not dense: row-major.
  Tensor s, ts;
  SM_ASSERT_OK(sm_slice(base, 1, 0, 4, 2, s.out()));
  SM_ASSERT_OK(sm_to(s, cpu(), SM_INT32, ts.out(), nullptr));
  expect_layout(ts, {3, 2}, {2, 1}, 0);
  EXPECT_EQ(read<int32_t>(ts), (std::vector<int32_t>{0, 2, 4, 6, 8, 10}));
}

TEST(To, IntegerAndBoolConversions) {
  Tensor f = make<float>({2.7f, -2.7f, 0.5f, -0.5f, 3.9f, 0.0f}, {6});
  EXPECT_EQ(convert<int32_t>(f, SM_INT32), (std::vector<int32_t>{2, -2, 0, 0, 3, 0}))
      << "float to int truncates toward zero";
  EXPECT_EQ(convert<uint8_t>(f, SM_BOOL), (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
  Tensor nz = make<float>({-0.0f, NAN, INFINITY}, {3});
  EXPECT_EQ(convert<uint8_t>(nz, SM_BOOL), (std::vector<uint8_t>{0, 1, 1}));
  Tensor i = make<int64_t>({300, -129, 255, -1, 0}, {5});
  EXPECT_EQ(convert<int8_t>(i, SM_INT8), (std::vector<int8_t>{44, 127, -1, -1, 0})) << "wraps";
  EXPECT_EQ(convert<uint8_t>(i, SM_UINT8), (std::vector<uint8_t>{44, 127, 255, 255, 0}));
  EXPECT_EQ(convert<uint8_t>(i, SM_BOOL), (std::vector<uint8_t>{1, 1, 1, 1, 0}));
  EXPECT_EQ(convert<double>(i, SM_FLOAT64), (std::vector<double>{300, -129, 255, -1, 0}));
  Tensor b = make_bool({1, 0, 1}, {3});
  EXPECT_EQ(convert<float>(b, SM_FLOAT32), (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(convert<int64_t>(b, SM_INT64), (std::vector<int64_t>{1, 0, 1}));
  Tensor u = make<uint8_t>({255, 0, 128}, {3});
  EXPECT_EQ(convert<float>(u, SM_FLOAT32), (std::vector<float>{255, 0, 128}));
  EXPECT_EQ(convert<int16_t>(u, SM_INT16), (std::vector<int16_t>{255, 0, 128}));
  // int64 -> float64 rounds to nearest (2^53 + 1 is not representable).
  Tensor big = make<int64_t>({(int64_t(1) << 53) + 1}, {1});
  EXPECT_EQ(convert<double>(big, SM_FLOAT64), std::vector<double>{9007199254740992.0});
}

TEST(To, Float16RoundsToNearestEven) {
  const float p11 = std::ldexp(1.0f, -11);
  const std::vector<float> in = {
      1.0f,
      1.0f + p11,                             // tie -> even (1.0)
      1.0f + 3 * p11,                         // tie -> even (1 + 2^-9)
      1.0f + 2 * p11,                         // exact 1 + 2^-10
      1.0f + p11 + std::ldexp(1.0f, -20),     // above the tie -> up
      65504.0f,                               // max finite
      65519.0f,                               // below the tie with 65536 -> max
      65520.0f,                               // tie with 2^16 -> inf
      -2.0f,
      std::ldexp(1.0f, -24),                  // smallest subnormal
      std::ldexp(1.0f, -25),                  // tie with 0 -> 0
      3 * std::ldexp(1.0f, -25),              // 1.5 ulp tie -> 2 ulp
      std::ldexp(1.0f, -14),                  // smallest normal
      -0.0f,
      INFINITY,
      0.1f,
      -1e9f,
  };
  const std::vector<uint16_t> expect = {0x3C00, 0x3C00, 0x3C02, 0x3C01, 0x3C01, 0x7BFF,
                                        0x7BFF, 0x7C00, 0xC000, 0x0001, 0x0000, 0x0002,
                                        0x0400, 0x8000, 0x7C00, 0x2E66, 0xFC00};
  Tensor f = make<float>(in, {static_cast<int64_t>(in.size())});
  const std::vector<uint16_t> got = convert<uint16_t>(f, SM_FLOAT16);
  ASSERT_EQ(got.size(), expect.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(got[k], expect[k]) << "input " << in[k] << " (#" << k << ") got 0x" << std::hex
                                 << got[k] << " expected 0x" << expect[k];
  Tensor n = make<float>({NAN}, {1});
  const std::vector<uint16_t> nb = convert<uint16_t>(n, SM_FLOAT16);
  ASSERT_EQ(nb.size(), 1u);
  EXPECT_EQ(nb[0] & 0x7C00, 0x7C00);
  EXPECT_NE(nb[0] & 0x03FF, 0) << "NaN stays NaN";
  // Same from float64.
  std::vector<double> din(in.begin(), in.end());
  Tensor d = make<double>(din, {static_cast<int64_t>(din.size())});
  EXPECT_EQ(convert<uint16_t>(d, SM_FLOAT16), expect);
}

TEST(To, Float16FromFloat64IsRoundedOnce) {
  // Via float32 this would round twice (to 1 + 2^-11, then to even 1.0).
  Tensor d = make<double>({1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}, {1});
  EXPECT_EQ(convert<uint16_t>(d, SM_FLOAT16), std::vector<uint16_t>{0x3C01});
  Tensor b = make<double>({1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)}, {1});
  EXPECT_EQ(convert<uint16_t>(b, SM_BFLOAT16), std::vector<uint16_t>{0x3F81});
}

TEST(To, BFloat16RoundsToNearestEven) {
  const float p8 = std::ldexp(1.0f, -8);
  const std::vector<float> in = {1.0f,
                                 1.0f + p8,                          // tie -> 1.0
                                 1.0f + 3 * p8,                      // tie -> 1 + 2^-6
                                 1.0f + p8 + std::ldexp(1.0f, -20),  // above -> up
                                 bits_to_float(0x7F7FFFFF),          // f32 max -> inf
                                 -1.5f,
                                 0.1f,
                                 -0.0f,
                                 -INFINITY};
  const std::vector<uint16_t> expect = {0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7F80,
                                        0xBFC0, 0x3DCD, 0x8000, 0xFF80};
  Tensor f = make<float>(in, {static_cast<int64_t>(in.size())});
  const std::vector<uint16_t> got = convert<uint16_t>(f, SM_BFLOAT16);
  ASSERT_EQ(got.size(), expect.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(got[k], expect[k]) << "#" << k << " got 0x" << std::hex << got[k];
  Tensor n = make<float>({NAN}, {1});
  const std::vector<uint16_t> nb = convert<uint16_t>(n, SM_BFLOAT16);
  ASSERT_EQ(nb.size(), 1u);
  EXPECT_EQ(nb[0] & 0x7F80, 0x7F80);
  EXPECT_NE(nb[0] & 0x007F, 0) << "NaN stays NaN";
}

TEST(To, SixteenBitFloatsWidenExactly) {
  const std::vector<uint16_t> h = {0x3C01, 0x0001, 0x7BFF, 0xFC00, 0x8000, 0x3555};
  Tensor th = make<uint16_t>(h, {6}, SM_FLOAT16);
  const std::vector<float> f = convert<float>(th, SM_FLOAT32);
  ASSERT_EQ(f.size(), h.size());
  for (size_t k = 0; k < h.size(); ++k)
    EXPECT_EQ(static_cast<double>(f[k]), half_to_double(h[k])) << "#" << k;
  EXPECT_TRUE(std::signbit(f[4]));
  const std::vector<double> d = convert<double>(th, SM_FLOAT64);
  ASSERT_EQ(d.size(), h.size());
  for (size_t k = 0; k < h.size(); ++k) EXPECT_EQ(d[k], half_to_double(h[k])) << "#" << k;

  const std::vector<uint16_t> b = {0x3F81, 0xC2F7, 0x0001, 0x7F80};
  Tensor tb = make<uint16_t>(b, {4}, SM_BFLOAT16);
  const std::vector<float> fb = convert<float>(tb, SM_FLOAT32);
  ASSERT_EQ(fb.size(), b.size());
  for (size_t k = 0; k < b.size(); ++k) EXPECT_EQ(fb[k], bf16_to_float(b[k])) << "#" << k;
  // float16 -> bfloat16: 1 + 2^-10 is below half of bfloat16's ulp (2^-8
  // at 1.0), so it rounds down to 1.0.
  EXPECT_EQ(convert<uint16_t>(th, SM_BFLOAT16)[0], 0x3F80);
  // float16 -> int: 1 + 2^-10 truncates to 1.
  EXPECT_EQ(convert<int32_t>(th, SM_INT32)[0], 1);
}

TEST(CopyInto, ConvertsAndBroadcasts) {
  const int64_t shape[2] = {3, 4};
  Tensor dst;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT64, cpu(), dst.out()));
  const int64_t v0 = version_of(dst);
  Tensor row = make<int32_t>({1, 2, 3, 4}, {4});
  SM_ASSERT_OK(sm_copy_into(dst, row));
  EXPECT_EQ(version_of(dst), v0 + 1);
  EXPECT_EQ(read<double>(dst), (std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
  Tensor col = make<float>({10, 20, 30}, {3, 1});
  SM_ASSERT_OK(sm_copy_into(dst, col));
  EXPECT_EQ(read<double>(dst), (std::vector<double>{10, 10, 10, 10, 20, 20, 20, 20, 30, 30, 30, 30}));
  Tensor s = make<float>({7}, {});
  SM_ASSERT_OK(sm_copy_into(dst, s));
  EXPECT_EQ(read<double>(dst), std::vector<double>(12, 7.0));
  Tensor one = make<int8_t>({-1}, {1, 1});
  SM_ASSERT_OK(sm_copy_into(dst, one));
  EXPECT_EQ(read<double>(dst), std::vector<double>(12, -1.0));
  EXPECT_EQ(version_of(dst), v0 + 4);
  // Float into int converts (truncation), as a copy allows.
  Tensor idst;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_INT32, cpu(), idst.out()));
  Tensor fr = make<float>({1.5f, -1.5f, 2.99f, 100.f}, {4});
  SM_ASSERT_OK(sm_copy_into(idst, fr));
  EXPECT_EQ(read<int32_t>(idst)[1], -1);
  EXPECT_EQ(read<int32_t>(idst)[2], 2);
}

TEST(CopyInto, IntoStridedDestinations) {
  Tensor base = iota({3, 4});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));  // (4,3)
  Tensor src = make<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  SM_ASSERT_OK(sm_copy_into(t, src));
  EXPECT_EQ(read<float>(t), read<float>(src));
  EXPECT_EQ(read<float>(base), (std::vector<float>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  // Negative-stride destination.
  Tensor f;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0, 1}.data(), 2, f.out()));
  Tensor src2 = iota({3, 4});
  SM_ASSERT_OK(sm_copy_into(f, src2));
  EXPECT_EQ(read<float>(base), (std::vector<float>{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  // Strided source with a negative step into a column.
  Tensor col, rsrc;
  SM_ASSERT_OK(sm_select(base, 1, 2, col.out()));
  Tensor v = iota({6});
  SM_ASSERT_OK(sm_slice(v, 0, SM_SLICE_NONE, SM_SLICE_NONE, -2, rsrc.out()));  // 5, 3, 1
  SM_ASSERT_OK(sm_copy_into(col, rsrc));
  EXPECT_EQ(read<float>(base), (std::vector<float>{11, 10, 5, 8, 7, 6, 3, 4, 3, 2, 1, 0}));
}

TEST(CopyInto, ZeroDimAndEmpty) {
  Tensor a = make<float>({1}, {}), b = make<double>({2.5}, {});
  SM_ASSERT_OK(sm_copy_into(a, b));
  EXPECT_EQ(read<float>(a), std::vector<float>{2.5f});
  const int64_t shape[2] = {0, 4};
  Tensor e1, e2;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT32, cpu(), e1.out()));
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_INT64, cpu(), e2.out()));
  SM_EXPECT_OK(sm_copy_into(e1, e2));
  Tensor row = iota({4});
  SM_EXPECT_OK(sm_copy_into(e1, row));  // (4) broadcasts to (0, 4)
}

TEST(CopyInto, ShapeMismatchIsRefused) {
  Tensor dst = iota({3, 4});
  const TensorSnap before = snap(dst);
  Tensor bad = iota({3});
  EXPECT_EQ(sm_copy_into(dst, bad), SM_ERR_SHAPE);
  expect_error_mentions({"sm_copy_into", "[3]", "[3, 4]"});
  Tensor more = iota({1, 3, 4});
  EXPECT_EQ(sm_copy_into(dst, more), SM_ERR_SHAPE);
  EXPECT_EQ(snap(dst), before);
}

TEST(CopyInto, OverlapRules) {
  Tensor base = iota({8});
  // Expanded destination: its elements overlap each other.
  Tensor one, e;
  SM_ASSERT_OK(sm_slice(base, 0, 0, 1, 1, one.out()));
  SM_ASSERT_OK(sm_expand(one, std::vector<int64_t>{4}.data(), 1, e.out()));
  Tensor src = iota({4});
  const TensorSnap before = snap(base);
  EXPECT_EQ(sm_copy_into(e, src), SM_ERR_OVERLAP);
  expect_error_mentions({"sm_copy_into"});
  EXPECT_EQ(snap(base), before);
  // Partially overlapping source.
  Tensor lo, mid;
  SM_ASSERT_OK(sm_slice(base, 0, 0, 4, 1, lo.out()));
  SM_ASSERT_OK(sm_slice(base, 0, 2, 6, 1, mid.out()));
  EXPECT_EQ(sm_copy_into(lo, mid), SM_ERR_OVERLAP);
  EXPECT_EQ(snap(base), before);
  // Identical source (the same handle, or an identical view) is allowed.
  SM_EXPECT_OK(sm_copy_into(lo, lo));
  Tensor lo2;
  SM_ASSERT_OK(sm_slice(base, 0, 0, 4, 1, lo2.out()));
  SM_EXPECT_OK(sm_copy_into(lo, lo2));
  EXPECT_EQ(read<float>(lo), (std::vector<float>{0, 1, 2, 3}));
  // Disjoint halves of one storage, one with a negative stride: allowed.
  Tensor rev, hi_rev;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0}.data(), 1, rev.out()));
  SM_ASSERT_OK(sm_slice(rev, 0, 0, 4, 1, hi_rev.out()));  // base[7], [6], [5], [4]
  SM_ASSERT_OK(sm_copy_into(lo, hi_rev));
  EXPECT_EQ(read<float>(base), (std::vector<float>{7, 6, 5, 4, 4, 5, 6, 7}));
  // Negative stride partially overlapping: refused.
  Tensor part;
  SM_ASSERT_OK(sm_slice(rev, 0, 2, 6, 1, part.out()));  // base[5], [4], [3], [2]
  const TensorSnap b2 = snap(base);
  EXPECT_EQ(sm_copy_into(lo, part), SM_ERR_OVERLAP);
  EXPECT_EQ(snap(base), b2);
  // Interleaved but disjoint (even and odd elements): allowed.
  Tensor even, odd;
  SM_ASSERT_OK(sm_slice(base, 0, 0, 8, 2, even.out()));
  SM_ASSERT_OK(sm_slice(base, 0, 1, 8, 2, odd.out()));
  SM_ASSERT_OK(sm_copy_into(even, odd));
  EXPECT_EQ(read<float>(base), (std::vector<float>{6, 6, 4, 4, 5, 5, 7, 7}));
}

TEST(IndexSelect, Int64AndInt32IndicesWithNegatives) {
  Tensor m = iota({3, 4});
  Tensor idx = make<int64_t>({2, 0, -1}, {3});
  Tensor r;
  SM_ASSERT_OK(sm_index_select(m, 0, idx, r.out()));
  expect_layout(r, {3, 4}, {4, 1}, 0);
  EXPECT_EQ(read<float>(r), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(same_storage(r, m), 0);
  Tensor idx32 = make<int32_t>({3, -4, 1}, {3});
  Tensor c;
  SM_ASSERT_OK(sm_index_select(m, -1, idx32, c.out()));
  EXPECT_EQ(shape_of(c), (Shape{3, 3}));
  EXPECT_EQ(read<float>(c), (std::vector<float>{3, 0, 1, 7, 4, 5, 11, 8, 9}));
  // Always a copy, even for the identity index.
  Tensor id = make<int64_t>({0, 1, 2}, {3}), same;
  SM_ASSERT_OK(sm_index_select(m, 0, id, same.out()));
  EXPECT_EQ(same_storage(same, m), 0);
  EXPECT_EQ(read<float>(same), read<float>(m));
}

TEST(IndexSelect, StridedInputsAndEmptyIndex) {
  Tensor m = iota({3, 4});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(m, 0, 1, t.out()));  // (4,3)
  Tensor idxbase = make<int64_t>({1, 99, 3, 99}, {4}), idx;
  SM_ASSERT_OK(sm_slice(idxbase, 0, 0, 4, 2, idx.out()));  // {1, 3}, stride 2
  Tensor r;
  SM_ASSERT_OK(sm_index_select(t, 0, idx, r.out()));
  EXPECT_EQ(read<float>(r), (std::vector<float>{1, 5, 9, 3, 7, 11}));
  const int64_t z[1] = {0};
  Tensor empty_idx, e;
  SM_ASSERT_OK(sm_empty(z, 1, SM_INT32, cpu(), empty_idx.out()));
  SM_ASSERT_OK(sm_index_select(m, 1, empty_idx, e.out()));
  EXPECT_EQ(shape_of(e), (Shape{3, 0}));
  // Repeated indices are fine.
  Tensor rep = make<int32_t>({2, 2, 2}, {3}), rr;
  SM_ASSERT_OK(sm_index_select(m, 0, rep, rr.out()));
  EXPECT_EQ(read<float>(rr), (std::vector<float>{8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11}));
}

TEST(IndexSelect, RefusesOutOfRangeAndBadIndexDtype) {
  Tensor m = iota({3, 4});
  sm_tensor out = sentinel_tensor();
  Tensor hi = make<int64_t>({0, 3}, {2});
  Tensor lo = make<int32_t>({-4}, {1});
  Tensor fl = make<float>({0, 1}, {2});
  Tensor i16 = make<int16_t>({0, 1}, {2});
  const TensorSnap before = snap(m);
  const GlobalSnap g0 = global_snap();
  EXPECT_EQ(sm_index_select(m, 0, hi, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_index_select", "3"});
  EXPECT_EQ(sm_index_select(m, 0, lo, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_index_select", "-4"});
  EXPECT_EQ(sm_index_select(m, 0, fl, &out), SM_ERR_DTYPE);
  expect_error_mentions({"sm_index_select", "float32"});
  EXPECT_EQ(sm_index_select(m, 0, i16, &out), SM_ERR_DTYPE);
  EXPECT_EQ(sm_index_select(m, 2, hi, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(global_snap(), g0);
  EXPECT_EQ(snap(m), before);
}

// ---- index_select reads its index in place (issue 12, item 4) ----------------------

namespace {

// The expanded (stride-0) view of a one-element index holding v, n entries long.
template <class I>
Tensor expanded_index(I v, int64_t n) {
  Tensor one = make<I>({v}, {1}), big;
  const int64_t shape[1] = {n};
  EXPECT_EQ(sm_expand(one, shape, 1, big.out()), SM_OK) << sm_last_error();
  return big;
}

int64_t peak_rss_kib() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

// The reference: out[..., i, ...] = src[..., wrap(idx[i]), ...] of a row-major
// src of `shape`, computed here without the library.
std::vector<float> index_select_ref(const std::vector<float>& src, const Shape& shape, int dim,
                                    const std::vector<int64_t>& idx) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t size = shape[static_cast<size_t>(dim)];
  std::vector<float> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t v : idx) {
      const int64_t w = v < 0 ? v + size : v;
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(src[static_cast<size_t>((o * size + w) * inner + i)]);
    }
  return out;
}

}  // namespace

// An index expanded to 2^27 and 2^40 entries over a source whose other dim is
// 0: the result is empty, and the index has one distinct element, so the call
// checks that one, allocates nothing index-sized and answers at once. (Before:
// the index was copied into a host vector, 1 GiB at 2^27, an abort at 2^40.)
TEST(IndexSelect, ExpandedIndexIsCheckedThroughItsOneElement) {
  const int64_t shape[2] = {0, 5};
  Tensor src;
  SM_ASSERT_OK(sm_empty(shape, 2, SM_FLOAT32, cpu(), src.out()));
  for (int64_t n : {int64_t(1) << 27, int64_t(1) << 40}) {
    for (sm_dtype dt : {SM_INT64, SM_INT32}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", " + sm_dtype_name(dt));
      Tensor idx = dt == SM_INT64 ? expanded_index<int64_t>(-2, n) : expanded_index<int32_t>(4, n);
      SM_ASSERT_OK(sm_reset_peak_stats(cpu()));
      const sm_memory_stats_t s0 = stats();
      const int64_t rss0 = peak_rss_kib();
      Tensor r;
      // No timing assertion (speed belongs to benchmarks): a check that walked
      // the index's length would not finish 2^40 entries within the ctest
      // timeout, and one that copied it shows in the bytes below.
      SM_ASSERT_OK(sm_index_select(src, 1, idx, r.out()));
      EXPECT_EQ(shape_of(r), (Shape{0, n}));
      const sm_memory_stats_t s1 = stats();
      EXPECT_LT(s1.peak_allocated_bytes - s0.allocated_bytes, 4096) << "an index-sized allocation";
      EXPECT_EQ(s1.num_allocs, s0.num_allocs) << "an empty result needs no memory";
      EXPECT_LT(peak_rss_kib() - rss0, 256 * 1024) << "RSS grew by about the index's size";
    }
  }
}

TEST(IndexSelect, ExpandedOutOfRangeIndexIsRefusedAtOnce) {
  const int64_t shape[2] = {0, 5};
  Tensor src;
  SM_ASSERT_OK(sm_empty(shape, 2, SM_FLOAT32, cpu(), src.out()));
  const int64_t n = int64_t(1) << 40;
  Tensor hi = expanded_index<int64_t>(5, n), lo = expanded_index<int32_t>(-6, n);
  sm_tensor out = sentinel_tensor();
  const GlobalSnap g0 = global_snap();
  EXPECT_EQ(sm_index_select(src, 1, hi, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_index_select", "index[0] = 5", "size 5"});
  EXPECT_EQ(sm_index_select(src, -1, lo, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_index_select", "index[0] = -6"});
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(global_snap(), g0);
  // Over a non-empty source too (validation comes before the result exists).
  Tensor m = iota({3, 4});
  EXPECT_EQ(sm_index_select(m, 0, expanded_index<int64_t>(3, n), &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[0] = 3", "size 3"});
  EXPECT_EQ(out, sentinel_tensor());
}

// The first bad position is named, with its value, wherever it sits.
TEST(IndexSelect, NamesTheFirstBadPositionOfAStridedIndex) {
  Tensor m = iota({3, 4});
  Tensor base = make<int64_t>({0, 7, 1, 9, 2, -5, -1, 3}, {8}), odd, rev;
  SM_ASSERT_OK(sm_slice(base, 0, 1, 8, 2, odd.out()));  // {7, 9, -5, 3}
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_index_select(m, 1, odd, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[0] = 7", "size 4"});
  const int32_t d0[1] = {0};
  SM_ASSERT_OK(sm_flip(base, d0, 1, rev.out()));  // {3, -1, -5, 2, 9, 1, 7, 0}
  EXPECT_EQ(sm_index_select(m, 1, rev, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[2] = -5", "size 4"});
  EXPECT_EQ(out, sentinel_tensor());
}

// Strided views of an index (every other element, flipped, a negative step)
// select exactly what their contiguous copies select, for int32 and int64,
// negative entries included, along every dim of a plain and a transposed
// source; both checked against a reference computed here.
TEST(IndexSelect, StridedIndexMatchesItsContiguousCopy) {
  const Shape shape = {4, 5, 6};
  std::vector<float> vals(static_cast<size_t>(numel_of_shape(shape)));
  for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<float>(i) * 0.5f - 7.0f;
  Tensor src = make<float>(vals, shape);
  const std::vector<int64_t> raw = {3, -1, 0, 2, -4, 1, 1, -2, 3, 0};
  for (sm_dtype dt : {SM_INT64, SM_INT32}) {
    Tensor base;
    if (dt == SM_INT64) {
      base = make<int64_t>(raw, {10});
    } else {
      base = make<int32_t>(std::vector<int32_t>(raw.begin(), raw.end()), {10});
    }
    Tensor even, flipped, back3;
    SM_ASSERT_OK(sm_slice(base, 0, 0, 10, 2, even.out()));    // 3, 0, -4, 1, 3
    const int32_t d0[1] = {0};
    SM_ASSERT_OK(sm_flip(base, d0, 1, flipped.out()));         // 0, 3, -2, 1, ...
    SM_ASSERT_OK(sm_slice(base, 0, 9, SM_SLICE_NONE, -3, back3.out()));  // 0, 1, 2, 3
    const std::vector<std::pair<const char*, sm_tensor>> views = {
        {"step 2", even}, {"flipped", flipped}, {"step -3", back3}};
    for (const auto& [name, view] : views) {
      ASSERT_EQ(is_contig(view, SM_CONTIGUOUS), 0) << name;
      std::vector<int64_t> idx;
      if (dt == SM_INT64) {
        idx = read<int64_t>(view);
      } else {
        for (int32_t v : read<int32_t>(view)) idx.push_back(v);
      }
      Tensor dense;
      SM_ASSERT_OK(sm_contiguous(view, SM_CONTIGUOUS, dense.out(), nullptr));
      for (int dim = 0; dim < 3; ++dim) {
        const int64_t size = shape[static_cast<size_t>(dim)];
        bool in_range = true;
        for (int64_t v : idx) in_range = in_range && v >= -size && v < size;
        if (!in_range) continue;  // (the refusals are tested above)
        SCOPED_TRACE(std::string(name) + " " + sm_dtype_name(dt) + " dim " + std::to_string(dim));
        Tensor a, b;
        SM_ASSERT_OK(sm_index_select(src, dim, view, a.out()));
        SM_ASSERT_OK(sm_index_select(src, dim, dense, b.out()));
        Shape want_shape = shape;
        want_shape[static_cast<size_t>(dim)] = static_cast<int64_t>(idx.size());
        EXPECT_EQ(shape_of(a), want_shape);
        EXPECT_EQ(read<float>(a), index_select_ref(vals, shape, dim, idx));
        EXPECT_EQ(read<float>(b), read<float>(a));
      }
      // A transposed source: select along its dim 0 (the original dim 2).
      Tensor t, a;
      SM_ASSERT_OK(sm_transpose(src, 0, 2, t.out()));
      SM_ASSERT_OK(sm_index_select(t, 0, view, a.out()));
      Tensor tc;
      SM_ASSERT_OK(sm_contiguous(t, SM_CONTIGUOUS, tc.out(), nullptr));
      EXPECT_EQ(read<float>(a), index_select_ref(read<float>(tc), {6, 5, 4}, 0, idx)) << name;
    }
  }
}

// An expanded index over a non-empty source: every selected slice is the
// same one.
TEST(IndexSelect, ExpandedIndexOverANonEmptySource) {
  Tensor m = iota({3, 4});
  Tensor idx = expanded_index<int32_t>(-3, 1000);
  Tensor r;
  SM_ASSERT_OK(sm_index_select(m, 1, idx, r.out()));
  EXPECT_EQ(shape_of(r), (Shape{3, 1000}));
  std::vector<float> want;
  for (int row = 0; row < 3; ++row)
    for (int k = 0; k < 1000; ++k) want.push_back(static_cast<float>(row * 4 + 1));
  EXPECT_EQ(read<float>(r), want);
}

// 0-d operands follow PyTorch: a 0-d source indexes like a one-element
// vector; a 0-d index like a one-element index; both 0-d give a 0-d result.
TEST(IndexSelect, ZeroDimOperands) {
  Tensor s = make<double>({2.5}, {});
  Tensor i0 = make<int64_t>({-1}, {});
  Tensor r;
  SM_ASSERT_OK(sm_index_select(s, 0, i0, r.out()));
  EXPECT_EQ(shape_of(r), Shape{});
  EXPECT_EQ(read<double>(r), std::vector<double>{2.5});
  // A 0-d tensor takes exactly one index value and gives a 0-d result, a
  // 1-element index vector too (torch.tensor(2.5).index_select(0,
  // torch.tensor([0])).shape == ()); other counts are refused as PyTorch 2
  // refuses them ("Index to scalar can have only 1 value").
  Tensor i1 = make<int32_t>({-1}, {1}), r1;
  SM_ASSERT_OK(sm_index_select(s, 0, i1, r1.out()));
  EXPECT_EQ(shape_of(r1), Shape{});
  EXPECT_EQ(read<double>(r1), std::vector<double>{2.5});
  for (const Shape& n : {Shape{3}, Shape{0}}) {
    Tensor many;
    SM_ASSERT_OK(sm_zeros(n.data(), 1, SM_INT64, cpu(), many.out()));
    sm_tensor o = sentinel_tensor();
    EXPECT_EQ(sm_index_select(s, 0, many, &o), SM_ERR_SHAPE) << n[0] << " values";
    EXPECT_EQ(o, sentinel_tensor());
    expect_error_mentions({"sm_index_select", "0-d", "exactly one"});
  }
  Tensor v = make<double>({1, 2, 3}, {3}), r2;
  SM_ASSERT_OK(sm_index_select(v, 0, i0, r2.out()));
  EXPECT_EQ(shape_of(r2), Shape{1});
  EXPECT_EQ(read<double>(r2), std::vector<double>{3});
  sm_tensor out = sentinel_tensor();
  Tensor bad = make<int64_t>({1}, {});
  EXPECT_EQ(sm_index_select(s, 0, bad, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[0] = 1", "size 1"});
}

// index_select allocates the result and nothing else: the first allocation
// failing fails the call with nothing changed, and a successful call makes
// exactly one allocation.
TEST(IndexSelect, AllocatesOnlyTheResult) {
  Tensor m = iota({3, 4});
  Tensor base = make<int64_t>({2, 9, 0, 9, -1}, {5}), idx;
  SM_ASSERT_OK(sm_slice(base, 0, 0, 5, 2, idx.out()));  // {2, 0, -1}
  const TensorSnap before = snap(m), ibefore = snap(idx);
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  EXPECT_EQ(sm_index_select(m, 1, idx, &out), SM_ERR_OUT_OF_MEMORY);
  expect_error_mentions({"sm_index_select", "injected"});
  SM_ASSERT_OK(sm_debug_fail_alloc(0));
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(global_snap(), g0);
  EXPECT_EQ(snap(m), before);
  EXPECT_EQ(snap(idx), ibefore);
  const sm_memory_stats_t s0 = stats();
  Tensor r;
  SM_ASSERT_OK(sm_index_select(m, 1, idx, r.out()));
  EXPECT_EQ(stats().num_allocs - s0.num_allocs, 1);
  EXPECT_EQ(read<float>(r), (std::vector<float>{2, 0, 3, 6, 4, 7, 10, 8, 11}));
}
