// Views: metadata only, shared storage, PyTorch's rules (NumPy's for
// negative strides). Every view is checked for layout, values, aliasing.
#include "api_test_util.hpp"

using namespace smt;

namespace {

// Checks that v is a view of base (same storage, no allocation happened) and
// holds the values its own metadata says it holds over base's storage.
void expect_view_of(sm_tensor base, sm_tensor v, const std::vector<float>& storage_values) {
  EXPECT_EQ(same_storage(base, v), 1);
  EXPECT_EQ(read<float>(v), gather(storage_values, shape_of(v), strides_of(v), offset_of(v)));
}

std::vector<float> iota_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = static_cast<float>(k);
  return v;
}

}  // namespace

TEST(Views, ViewsDoNotAllocate) {
  Tensor base = iota({4, 6});
  const sm_memory_stats_t s0 = stats();
  Tensor a, b, c;
  const int64_t shape[2] = {3, 8};
  SM_ASSERT_OK(sm_view(base, shape, 2, a.out()));
  SM_ASSERT_OK(sm_transpose(a, 0, 1, b.out()));
  SM_ASSERT_OK(sm_slice(b, 0, SM_SLICE_NONE, SM_SLICE_NONE, -1, c.out()));
  const sm_memory_stats_t s1 = stats();
  EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s1.num_allocs, s0.num_allocs);
  EXPECT_EQ(s1.active_views, s0.active_views + 3);
}

TEST(Views, ViewInfersAndShares) {
  Tensor base = iota({2, 3, 4});
  Tensor v;
  const int64_t shape[2] = {-1, 4};
  SM_ASSERT_OK(sm_view(base, shape, 2, v.out()));
  expect_layout(v, {6, 4}, {4, 1}, 0);
  expect_view_of(base, v, iota_values(24));
  EXPECT_EQ(data_ptr_of(v), data_ptr_of(base));
  // A write through the view is visible through the base.
  Tensor row;
  SM_ASSERT_OK(sm_select(v, 0, 5, row.out()));
  SM_ASSERT_OK(sm_inplace_scalar(row, SM_OP_FILL, -1, 0));
  std::vector<float> expect = iota_values(24);
  for (int k = 20; k < 24; ++k) expect[k] = -1;
  EXPECT_EQ(read<float>(base), expect);
  // View to and from 0-d.
  Tensor one = iota({1}), scalar, back;
  SM_ASSERT_OK(sm_view(one, nullptr, 0, scalar.out()));
  EXPECT_EQ(ndim_of(scalar), 0);
  const int64_t s1[1] = {-1};
  SM_ASSERT_OK(sm_view(scalar, s1, 1, back.out()));
  EXPECT_EQ(shape_of(back), Shape{1});
}

TEST(Views, ViewRefusesIncompatibleStridesAndSuggestsReshape) {
  Tensor base = iota({2, 3, 4});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));  // (3,2,4) strides (4,12,1)
  expect_layout(t, {3, 2, 4}, {4, 12, 1}, 0);
  const TensorSnap before = snap(t);
  sm_tensor out = sentinel_tensor();
  const int64_t shape[2] = {6, 4};
  EXPECT_EQ(sm_view(t, shape, 2, &out), SM_ERR_SHAPE);
  EXPECT_EQ(out, sentinel_tensor());
  expect_error_mentions({"sm_view", "sm_reshape"});
  EXPECT_EQ(snap(t), before);
  // Splitting the last dim is fine; merging dims 1 and 2 (strides 12 and 1)
  // or 0 and 1 (strides 4 and 12) is not.
  const int64_t ok_shape[4] = {3, 2, 2, 2};
  Tensor v;
  SM_ASSERT_OK(sm_view(t, ok_shape, 4, v.out()));
  expect_layout(v, {3, 2, 2, 2}, {4, 12, 2, 1}, 0);
  expect_view_of(base, v, iota_values(24));
  const int64_t bad2[2] = {3, 8};
  EXPECT_EQ(sm_view(t, bad2, 2, &out), SM_ERR_SHAPE);
  // Wrong element count.
  const int64_t bad3[2] = {5, 5};
  EXPECT_EQ(sm_view(base, bad3, 2, &out), SM_ERR_SHAPE);
  expect_error_mentions({"sm_view"});
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, ViewOfExpandedTensor) {
  // PyTorch's computeStride: a stride-0 dim of an expanded tensor can be
  // split, but not merged with a real one.
  Tensor row = iota({1, 4});
  Tensor e;
  const int64_t es[2] = {3, 4};
  SM_ASSERT_OK(sm_expand(row, es, 2, e.out()));
  const int64_t split[3] = {3, 2, 2};
  Tensor v;
  SM_ASSERT_OK(sm_view(e, split, 3, v.out()));
  expect_layout(v, {3, 2, 2}, {0, 2, 1}, 0);
  sm_tensor out = sentinel_tensor();
  const int64_t merged[1] = {12};
  EXPECT_EQ(sm_view(e, merged, 1, &out), SM_ERR_SHAPE);
}

TEST(Views, AsStridedIncludingNegativeStrides) {
  Tensor base = iota({12});
  Tensor a;
  const int64_t shape[2] = {3, 2}, strides[2] = {4, 1};
  SM_ASSERT_OK(sm_as_strided(base, shape, strides, 2, 1, a.out()));
  expect_layout(a, {3, 2}, {4, 1}, 1);
  EXPECT_EQ(read<float>(a), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  Tensor b;
  const int64_t bs[1] = {3}, bst[1] = {-2};
  SM_ASSERT_OK(sm_as_strided(base, bs, bst, 1, 10, b.out()));
  expect_layout(b, {3}, {-2}, 10);
  EXPECT_EQ(read<float>(b), (std::vector<float>{10, 8, 6}));
  // Offset is absolute, not relative to the view's own offset.
  Tensor c;
  const int64_t cs[1] = {2}, cst[1] = {1};
  SM_ASSERT_OK(sm_as_strided(b, cs, cst, 1, 0, c.out()));
  EXPECT_EQ(read<float>(c), (std::vector<float>{0, 1}));
  // Overlapping windows are allowed for reading.
  Tensor d;
  const int64_t ds[2] = {4, 3}, dst[2] = {2, 1};
  SM_ASSERT_OK(sm_as_strided(base, ds, dst, 2, 0, d.out()));
  EXPECT_EQ(read<float>(d), (std::vector<float>{0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8}));
  // The last element exactly fits; one past does not.
  Tensor e;
  const int64_t es[1] = {4}, est[1] = {3};
  SM_EXPECT_OK(sm_as_strided(base, es, est, 1, 2, e.out()));
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_as_strided(base, es, est, 1, 3, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_as_strided"});
  // Negative stride below the start of the storage.
  EXPECT_EQ(sm_as_strided(base, bs, bst, 1, 3, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, SlicePythonRules) {
  Tensor base = iota({10});
  struct Case {
    int64_t start, stop, step;
    std::vector<float> values;
  };
  const int64_t N = SM_SLICE_NONE;
  const Case cases[] = {
      {2, 8, 3, {2, 5}},
      {N, N, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
      {-3, N, 1, {7, 8, 9}},
      {8, 2, -2, {8, 6, 4}},
      {N, N, -3, {9, 6, 3, 0}},
      {-100, 3, 1, {0, 1, 2}},
      {7, 100, 1, {7, 8, 9}},
      {100, 200, 1, {}},
      {5, 2, 1, {}},
      {N, -8, -1, {9, 8, 7, 6, 5, 4, 3}},
      {-1, N, -4, {9, 5, 1}},
      {1, N, 100, {1}},
  };
  for (const Case& c : cases) {
    Tensor s;
    SM_ASSERT_OK(sm_slice(base, 0, c.start, c.stop, c.step, s.out()));
    const std::string what = "slice(" + std::to_string(c.start) + "," + std::to_string(c.stop) +
                             "," + std::to_string(c.step) + ")";
    EXPECT_EQ(shape_of(s), Shape{static_cast<int64_t>(c.values.size())}) << what;
    EXPECT_EQ(read<float>(s), c.values) << what;
    EXPECT_EQ(same_storage(base, s), 1) << what;
    if (!c.values.empty()) {
      EXPECT_EQ(strides_of(s), Shape{c.step}) << what;
      EXPECT_EQ(offset_of(s), static_cast<int64_t>(c.values[0])) << what;
    }
  }
  // Slicing a negative-stride view again composes strides.
  Tensor r, rr;
  SM_ASSERT_OK(sm_slice(base, 0, N, N, -1, r.out()));
  SM_ASSERT_OK(sm_slice(r, -1, 1, N, 2, rr.out()));
  expect_layout(rr, {5}, {-2}, 8);
  EXPECT_EQ(read<float>(rr), (std::vector<float>{8, 6, 4, 2, 0}));
}

TEST(Views, SliceOn2D) {
  Tensor base = iota({4, 5});
  Tensor s;
  SM_ASSERT_OK(sm_slice(base, 1, 1, 4, 2, s.out()));
  expect_layout(s, {4, 2}, {5, 2}, 1);
  expect_view_of(base, s, iota_values(20));
  Tensor r;
  SM_ASSERT_OK(sm_slice(base, -1, SM_SLICE_NONE, SM_SLICE_NONE, -2, r.out()));
  expect_layout(r, {4, 3}, {5, -2}, 4);
  expect_view_of(base, r, iota_values(20));
  Tensor rows;
  SM_ASSERT_OK(sm_slice(base, -2, SM_SLICE_NONE, SM_SLICE_NONE, -2, rows.out()));
  expect_layout(rows, {2, 5}, {-10, 1}, 15);
  expect_view_of(base, r, iota_values(20));
}

TEST(Views, Narrow) {
  Tensor base = iota({3, 10});
  Tensor n;
  SM_ASSERT_OK(sm_narrow(base, 1, 2, 3, n.out()));
  expect_layout(n, {3, 3}, {10, 1}, 2);
  expect_view_of(base, n, iota_values(30));
  Tensor m;
  SM_ASSERT_OK(sm_narrow(base, -1, -3, 2, m.out()));  // elements 7, 8
  expect_layout(m, {3, 2}, {10, 1}, 7);
  Tensor e;
  SM_ASSERT_OK(sm_narrow(base, 0, 3, 0, e.out()));  // empty at the end is fine
  EXPECT_EQ(shape_of(e), (Shape{0, 10}));
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_narrow(base, 1, 8, 3, &out), SM_ERR_OUT_OF_BOUNDS) << "no clamping";
  expect_error_mentions({"sm_narrow"});
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, NarrowStartRangeAsPyTorch) {
  // A size-0 dim takes start 0 only (PyTorch 2; torch 1.13 also took -1):
  // torch.empty(0,3).narrow(0,0,0).shape -> (0, 3)
  Tensor base = iota({6});
  Tensor e, n;
  const int64_t es[2] = {0, 3}, est[2] = {3, 1};
  SM_ASSERT_OK(sm_as_strided(base, es, est, 2, 2, e.out()));
  SM_ASSERT_OK(sm_narrow(e, 0, 0, 0, n.out()));
  expect_layout(n, {0, 3}, {3, 1}, 2);
  EXPECT_EQ(same_storage(base, n), 1);
  // torch 2: "start out of range (expected to be in range of [0, 0], but got -1)"
  sm_tensor out = sentinel_tensor();
  const TensorSnap before = snap(e);
  EXPECT_EQ(sm_narrow(e, 0, -1, 0, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_narrow", "[0, 0]"});
  EXPECT_EQ(sm_narrow(e, 0, -2, 0, &out), SM_ERR_OUT_OF_BOUNDS);
  // torch.empty(0,3).narrow(0,1,0): the same error
  EXPECT_EQ(sm_narrow(e, 0, 1, 0, &out), SM_ERR_OUT_OF_BOUNDS);
  // torch.empty(0,3).narrow(0,-1,1): the length does not fit
  EXPECT_EQ(sm_narrow(e, 0, -1, 1, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(snap(e), before);
  // Size n: start in [-n, n]. torch.empty(3,3).narrow(0,-1,0).storage_offset() -> 6
  Tensor m = iota({3, 3}), a, b;
  SM_ASSERT_OK(sm_narrow(m, 0, -1, 0, a.out()));
  expect_layout(a, {0, 3}, {3, 1}, 6);
  // torch.empty(3,3).narrow(0,3,0).storage_offset() -> 9
  SM_ASSERT_OK(sm_narrow(m, 0, 3, 0, b.out()));
  expect_layout(b, {0, 3}, {3, 1}, 9);
  // torch.empty(3,3).narrow(0,-4,0): "expected to be in range of [-3, 2]"
  EXPECT_EQ(sm_narrow(m, 0, -4, 0, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm_narrow(m, 0, 4, 0, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, Select) {
  Tensor base = iota({3, 4});
  Tensor r, c, last;
  SM_ASSERT_OK(sm_select(base, 0, 1, r.out()));
  expect_layout(r, {4}, {1}, 4);
  SM_ASSERT_OK(sm_select(base, 1, -1, c.out()));
  expect_layout(c, {3}, {4}, 3);
  EXPECT_EQ(read<float>(c), (std::vector<float>{3, 7, 11}));
  SM_ASSERT_OK(sm_select(r, 0, 2, last.out()));
  EXPECT_EQ(ndim_of(last), 0);
  EXPECT_EQ(offset_of(last), 6);
  EXPECT_EQ(read<float>(last), std::vector<float>{6});
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_select(base, 0, 3, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_select", "3"});
  EXPECT_EQ(sm_select(base, 0, -4, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(sm_select(last, 0, 0, &out), SM_ERR_OUT_OF_BOUNDS) << "0-d has no dim to select";
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, PermuteTransposeMovedim) {
  Tensor base = iota({2, 3, 4});
  Tensor p;
  const int32_t dims[3] = {2, 0, 1};
  SM_ASSERT_OK(sm_permute(base, dims, 3, p.out()));
  expect_layout(p, {4, 2, 3}, {1, 12, 4}, 0);
  expect_view_of(base, p, iota_values(24));
  Tensor pn;
  const int32_t ndims[3] = {-1, -3, -2};
  SM_ASSERT_OK(sm_permute(base, ndims, 3, pn.out()));
  expect_layout(pn, {4, 2, 3}, {1, 12, 4}, 0);

  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, -1, t.out()));
  expect_layout(t, {4, 3, 2}, {1, 4, 12}, 0);
  expect_view_of(base, t, iota_values(24));
  Tensor same;
  SM_ASSERT_OK(sm_transpose(base, 1, 1, same.out()));
  expect_layout(same, {2, 3, 4}, {12, 4, 1}, 0);

  Tensor m;
  const int32_t src[1] = {0}, dst[1] = {2};
  SM_ASSERT_OK(sm_movedim(base, src, dst, 1, m.out()));
  expect_layout(m, {3, 4, 2}, {4, 1, 12}, 0);
  Tensor m2;
  const int32_t src2[2] = {0, 1}, dst2[2] = {-1, 0};
  SM_ASSERT_OK(sm_movedim(base, src2, dst2, 2, m2.out()));  // torch.movedim -> (3, 4, 2)
  expect_layout(m2, {3, 4, 2}, {4, 1, 12}, 0);
  expect_view_of(base, m2, iota_values(24));

  // 0-d: permute with no dims.
  Tensor s = iota({1}), s0, sp;
  SM_ASSERT_OK(sm_view(s, nullptr, 0, s0.out()));
  SM_ASSERT_OK(sm_permute(s0, nullptr, 0, sp.out()));
  EXPECT_EQ(ndim_of(sp), 0);
}

TEST(Views, ExpandGivesStrideZero) {
  Tensor col = iota({3, 1});
  Tensor e;
  const int64_t shape[2] = {-1, 4};
  SM_ASSERT_OK(sm_expand(col, shape, 2, e.out()));
  EXPECT_EQ(shape_of(e), (Shape{3, 4}));
  EXPECT_EQ(strides_of(e)[1], 0);
  EXPECT_EQ(strides_of(e)[0], 1);
  EXPECT_EQ(read<float>(e), (std::vector<float>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(same_storage(col, e), 1);
  EXPECT_EQ(is_contig(e, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(e, SM_PRESERVE), 0);
  Tensor lead;
  const int64_t s3[3] = {2, 3, 4};
  SM_ASSERT_OK(sm_expand(col, s3, 3, lead.out()));
  EXPECT_EQ(shape_of(lead), (Shape{2, 3, 4}));
  EXPECT_EQ(strides_of(lead)[0], 0);
  EXPECT_EQ(strides_of(lead)[2], 0);
  EXPECT_EQ(numel_of(lead), 24);
  EXPECT_EQ(nbytes_of(lead), 96);
  EXPECT_EQ(storage_nbytes_of(lead), 12);
  // 0-d expands to anything.
  Tensor z = iota({1}), z0, ze;
  SM_ASSERT_OK(sm_view(z, nullptr, 0, z0.out()));
  SM_ASSERT_OK(sm_expand(z0, s3, 3, ze.out()));
  expect_layout(ze, {2, 3, 4}, {0, 0, 0}, 0);
  // Refusals.
  sm_tensor out = sentinel_tensor();
  const int64_t bad[2] = {4, 4};  // 3 is not 1
  EXPECT_EQ(sm_expand(col, bad, 2, &out), SM_ERR_SHAPE);
  expect_error_mentions({"sm_expand"});
  const int64_t fewer[1] = {3};
  EXPECT_EQ(sm_expand(col, fewer, 1, &out), SM_ERR_SHAPE);
  const int64_t lead_neg[3] = {-1, 3, 4};
  EXPECT_EQ(sm_expand(col, lead_neg, 3, &out), SM_ERR_SHAPE);
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, ExpandStridesOfNewAndSizeOneDimsArePyTorchs) {
  Tensor one = iota({1}), z0;
  SM_ASSERT_OK(sm_view(one, nullptr, 0, z0.out()));
  struct Case {
    Shape shape, want;
  };
  // A 0-d tensor: every dim is new, stride 0 even where the size is 1.
  const Case from0d[] = {
      {{3, 1}, {0, 0}},        // torch.tensor(5.).expand(3, 1).stride() -> (0, 0)
      {{1, 1}, {0, 0}},        // torch.tensor(5.).expand(1, 1).stride() -> (0, 0)
      {{1}, {0}},              // torch.tensor(5.).expand(1).stride() -> (0,)
      {{2, 1, 1}, {0, 0, 0}},  // torch.tensor(5.).expand(2, 1, 1).stride() -> (0, 0, 0)
      {{1, 0}, {0, 0}},        // torch.tensor(5.).expand(1, 0).stride() -> (0, 0)
  };
  for (const Case& c : from0d) {
    Tensor e;
    SM_ASSERT_OK(sm_expand(z0, c.shape.data(), static_cast<int32_t>(c.shape.size()), e.out()));
    expect_layout(e, c.shape, c.want, 0);
    EXPECT_EQ(same_storage(one, e), 1);
    EXPECT_EQ(read<float>(e), std::vector<float>(static_cast<size_t>(numel_of(e)), 0.0f));
  }
  // A (1,3) row of stride 7: kept size-1 dims keep their stride, new size-1
  // leading dims chain from it, expanded dims get 0.
  Tensor base = iota({16}), row;
  const int64_t rs[2] = {1, 3}, rst[2] = {7, 1};
  SM_ASSERT_OK(sm_as_strided(base, rs, rst, 2, 0, row.out()));
  const Case fromrow[] = {
      {{1, 3}, {7, 1}},              // torch.empty_strided((1,3),(7,1)).expand(1,3) -> (7, 1)
      {{1, 1, 3}, {7, 7, 1}},        // ... .expand(1,1,3).stride() -> (7, 7, 1)
      {{2, 1, 3}, {0, 7, 1}},        // ... .expand(2,1,3).stride() -> (0, 7, 1)
      {{5, 1, 1, 3}, {0, 7, 7, 1}},  // ... .expand(5,1,1,3).stride() -> (0, 7, 7, 1)
      {{4, 3}, {0, 1}},              // ... .expand(4,3).stride() -> (0, 1)
      {{1, 0, 3}, {0, 0, 1}},        // ... .expand(1,0,3).stride() -> (0, 0, 1)
  };
  for (const Case& c : fromrow) {
    Tensor e;
    SM_ASSERT_OK(sm_expand(row, c.shape.data(), static_cast<int32_t>(c.shape.size()), e.out()));
    expect_layout(e, c.shape, c.want, 0);
    expect_view_of(base, e, iota_values(16));
  }
}

TEST(Views, SqueezeAndUnsqueeze) {
  Tensor base = iota({1, 3, 1, 2});
  Tensor all;
  SM_ASSERT_OK(sm_squeeze(base, nullptr, 0, all.out()));
  expect_layout(all, {3, 2}, {2, 1}, 0);
  Tensor some;
  const int32_t dims[2] = {0, 1};  // dim 1 has size 3: left alone
  SM_ASSERT_OK(sm_squeeze(base, dims, 2, some.out()));
  EXPECT_EQ(shape_of(some), (Shape{3, 1, 2}));
  Tensor neg;
  const int32_t nd[1] = {-2};
  SM_ASSERT_OK(sm_squeeze(base, nd, 1, neg.out()));
  EXPECT_EQ(shape_of(neg), (Shape{1, 3, 2}));
  EXPECT_EQ(same_storage(base, neg), 1);

  Tensor m = iota({2, 3});
  Tensor u0, u1, ul;
  SM_ASSERT_OK(sm_unsqueeze(m, 0, u0.out()));
  EXPECT_EQ(shape_of(u0), (Shape{1, 2, 3}));
  SM_ASSERT_OK(sm_unsqueeze(m, 1, u1.out()));
  EXPECT_EQ(shape_of(u1), (Shape{2, 1, 3}));
  EXPECT_EQ(strides_of(u1)[0], 3);
  EXPECT_EQ(strides_of(u1)[2], 1);
  SM_ASSERT_OK(sm_unsqueeze(m, -1, ul.out()));
  EXPECT_EQ(shape_of(ul), (Shape{2, 3, 1}));
  EXPECT_EQ(is_contig(ul, SM_CONTIGUOUS), 1);
  EXPECT_EQ(read<float>(ul), read<float>(m));
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_unsqueeze(m, 3, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_unsqueeze", "3"});
  EXPECT_EQ(sm_unsqueeze(m, -4, &out), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(out, sentinel_tensor());
  // 0-d round trip.
  Tensor s = iota({1}), s0, su;
  SM_ASSERT_OK(sm_squeeze(s, nullptr, 0, s0.out()));
  EXPECT_EQ(ndim_of(s0), 0);
  SM_ASSERT_OK(sm_unsqueeze(s0, 0, su.out()));
  EXPECT_EQ(shape_of(su), Shape{1});
}

// PyTorch gives a new size-1 dim the stride size*stride of the dim it lands
// on (1 at the end). Only visible in strides_of, harmless otherwise.
TEST(Views, UnsqueezeStridesMatchPyTorch) {
  Tensor m = iota({2, 3});
  Tensor u0, u1, ul;
  SM_ASSERT_OK(sm_unsqueeze(m, 0, u0.out()));
  SM_ASSERT_OK(sm_unsqueeze(m, 1, u1.out()));
  SM_ASSERT_OK(sm_unsqueeze(m, 2, ul.out()));
  EXPECT_EQ(strides_of(u0), (Shape{6, 3, 1}));
  EXPECT_EQ(strides_of(u1), (Shape{3, 3, 1}));
  EXPECT_EQ(strides_of(ul), (Shape{3, 1, 1}));
}

TEST(Views, FlattenAndUnflatten) {
  Tensor base = iota({2, 3, 4});
  Tensor f;
  SM_ASSERT_OK(sm_flatten(base, 1, 2, f.out()));
  expect_layout(f, {2, 12}, {12, 1}, 0);
  EXPECT_EQ(same_storage(base, f), 1);
  Tensor all;
  SM_ASSERT_OK(sm_flatten(base, 0, -1, all.out()));
  expect_layout(all, {24}, {1}, 0);
  // Not expressible as a view: SM_ERR_SHAPE, use reshape.
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 1, 2, t.out()));
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_flatten(t, 1, 2, &out), SM_ERR_SHAPE);
  expect_error_mentions({"sm_flatten"});
  EXPECT_EQ(out, sentinel_tensor());
  // But flattening dims that are still mergeable in a transposed tensor works.
  Tensor t01, ft;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t01.out()));  // (3,2,4) strides (4,12,1)
  EXPECT_EQ(sm_flatten(t01, 0, 1, &out), SM_ERR_SHAPE);
  SM_ASSERT_OK(sm_flatten(t01, 2, 2, ft.out()));
  expect_layout(ft, {3, 2, 4}, {4, 12, 1}, 0);

  Tensor u;
  const int64_t sizes[2] = {3, -1};
  SM_ASSERT_OK(sm_unflatten(f, 1, sizes, 2, u.out()));
  expect_layout(u, {2, 3, 4}, {12, 4, 1}, 0);
  // Always a view, even of a non-contiguous tensor.
  Tensor tr, ut;
  SM_ASSERT_OK(sm_transpose(f, 0, 1, tr.out()));  // (12, 2) strides (1, 12)
  const int64_t s2[2] = {4, 3};
  SM_ASSERT_OK(sm_unflatten(tr, 0, s2, 2, ut.out()));
  expect_layout(ut, {4, 3, 2}, {3, 1, 12}, 0);
  expect_view_of(base, ut, iota_values(24));
  const int64_t bad[2] = {5, 3};
  EXPECT_EQ(sm_unflatten(f, 1, bad, 2, &out), SM_ERR_SHAPE);
  expect_error_mentions({"sm_unflatten"});
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, UnflattenStridesAreViews) {
  // PyTorch's unflatten is view() to the new shape.
  Tensor base = iota({2, 12});
  struct Case {
    Shape sizes, want_shape, want;
  };
  const Case cases[] = {
      // torch.arange(24).view(2,12).unflatten(1,(3,1,4)).stride() -> (12, 4, 4, 1)
      {{3, 1, 4}, {2, 3, 1, 4}, {12, 4, 4, 1}},
      // torch.arange(24).view(2,12).unflatten(1,(1,12)).stride() -> (12, 12, 1)
      {{1, 12}, {2, 1, 12}, {12, 12, 1}},
      // torch.arange(24).view(2,12).unflatten(1,(12,1)).stride() -> (12, 1, 1)
      {{12, 1}, {2, 12, 1}, {12, 1, 1}},
      // torch.arange(24).view(2,12).unflatten(1,(-1,1,4)).stride() -> (12, 4, 4, 1)
      {{-1, 1, 4}, {2, 3, 1, 4}, {12, 4, 4, 1}},
  };
  for (const Case& c : cases) {
    Tensor u;
    SM_ASSERT_OK(sm_unflatten(base, 1, c.sizes.data(), static_cast<int32_t>(c.sizes.size()),
                              u.out()));
    expect_layout(u, c.want_shape, c.want, 0);
    expect_view_of(base, u, iota_values(24));
  }
  // Transposed: torch.empty_strided((2,12),(1,2)).unflatten(1,(3,1,4)).stride()
  //   -> (1, 8, 8, 2)
  Tensor t, ut;
  const int64_t ts[2] = {2, 12}, tst[2] = {1, 2};
  SM_ASSERT_OK(sm_as_strided(base, ts, tst, 2, 0, t.out()));
  const int64_t s314[3] = {3, 1, 4};
  SM_ASSERT_OK(sm_unflatten(t, 1, s314, 3, ut.out()));
  expect_layout(ut, {2, 3, 1, 4}, {1, 8, 8, 2}, 0);
  expect_view_of(base, ut, iota_values(24));
  // A size-1 dim with a stray stride: torch.empty_strided((2,1,3),(3,100,1))
  //   .unflatten(1,(1,)).stride() -> (3, 3, 1)
  Tensor big = iota({200}), o, uo;
  const int64_t os[3] = {2, 1, 3}, ost[3] = {3, 100, 1};
  SM_ASSERT_OK(sm_as_strided(big, os, ost, 3, 0, o.out()));
  const int64_t s1[1] = {1};
  SM_ASSERT_OK(sm_unflatten(o, 1, s1, 1, uo.out()));
  expect_layout(uo, {2, 1, 3}, {3, 3, 1}, 0);
  // Empty: torch.empty(2,0,3).unflatten(1,(0,5)).stride() -> (15, 15, 3, 1)
  Tensor e, ue;
  const int64_t es[3] = {2, 0, 3};
  SM_ASSERT_OK(sm_empty(es, 3, SM_FLOAT32, cpu(), e.out()));
  const int64_t s05[2] = {0, 5};
  SM_ASSERT_OK(sm_unflatten(e, 1, s05, 2, ue.out()));
  expect_layout(ue, {2, 0, 5, 3}, {15, 15, 3, 1}, 0);
  // torch.empty(2,0,3).unflatten(1,(1,-1)).stride() -> (3, 3, 3, 1)
  const int64_t s1m[2] = {1, -1};
  SM_ASSERT_OK(sm_unflatten(e, 1, s1m, 2, ue.out()));
  expect_layout(ue, {2, 1, 0, 3}, {3, 3, 3, 1}, 0);
  // torch.empty(2,0,3).unflatten(1,(-1,0)): the -1 is ambiguous
  sm_tensor out = sentinel_tensor();
  const int64_t amb[2] = {-1, 0};
  EXPECT_EQ(sm_unflatten(e, 1, amb, 2, &out), SM_ERR_SHAPE);
  expect_error_mentions({"sm_unflatten"});
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, FlattenOfZeroDimIsOneDim) {
  Tensor s = iota({1}), s0, f;
  SM_ASSERT_OK(sm_view(s, nullptr, 0, s0.out()));
  SM_ASSERT_OK(sm_flatten(s0, 0, -1, f.out()));
  EXPECT_EQ(shape_of(f), Shape{1});
}

TEST(Views, UnfoldOverlappingWindows) {
  Tensor base = iota({7});
  Tensor u;
  SM_ASSERT_OK(sm_unfold(base, 0, 3, 2, u.out()));
  expect_layout(u, {3, 3}, {2, 1}, 0);
  EXPECT_EQ(read<float>(u), (std::vector<float>{0, 1, 2, 2, 3, 4, 4, 5, 6}));
  EXPECT_EQ(same_storage(base, u), 1);
  Tensor o;
  SM_ASSERT_OK(sm_unfold(base, 0, 3, 1, o.out()));
  expect_layout(o, {5, 3}, {1, 1}, 0);
  // 2-D: windows along the last dim.
  Tensor m = iota({3, 4}), w;
  SM_ASSERT_OK(sm_unfold(m, 1, 2, 2, w.out()));
  expect_layout(w, {3, 2, 2}, {4, 2, 1}, 0);
  expect_view_of(m, w, iota_values(12));
  // Along a negative-stride view.
  Tensor r, ur;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{0}.data(), 1, r.out()));
  SM_ASSERT_OK(sm_unfold(r, 0, 2, 3, ur.out()));
  expect_layout(ur, {2, 2}, {-3, -1}, 6);
  EXPECT_EQ(read<float>(ur), (std::vector<float>{6, 5, 3, 2}));
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_unfold(base, 0, 2, 0, &out), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_unfold"});
  expect_status_in(sm_unfold(base, 0, 8, 1, &out), {SM_ERR_SHAPE, SM_ERR_OUT_OF_BOUNDS},
                   "unfold size 8 of 7");
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, Diagonal) {
  Tensor m = iota({3, 4});
  Tensor d0, d1, dm, far;
  SM_ASSERT_OK(sm_diagonal(m, 0, 0, 1, d0.out()));
  expect_layout(d0, {3}, {5}, 0);
  EXPECT_EQ(read<float>(d0), (std::vector<float>{0, 5, 10}));
  SM_ASSERT_OK(sm_diagonal(m, 1, 0, 1, d1.out()));
  expect_layout(d1, {3}, {5}, 1);
  EXPECT_EQ(read<float>(d1), (std::vector<float>{1, 6, 11}));
  SM_ASSERT_OK(sm_diagonal(m, -1, 0, 1, dm.out()));
  expect_layout(dm, {2}, {5}, 4);
  EXPECT_EQ(read<float>(dm), (std::vector<float>{4, 9}));
  SM_ASSERT_OK(sm_diagonal(m, 10, 0, 1, far.out()));
  EXPECT_EQ(shape_of(far), Shape{0});
  // Swapped dims: same diagonal of the transpose.
  Tensor sw;
  SM_ASSERT_OK(sm_diagonal(m, 1, 1, 0, sw.out()));
  EXPECT_EQ(read<float>(sw), (std::vector<float>{4, 9}));
  // 3-D: the diagonal is appended as the last dim.
  Tensor c = iota({2, 3, 3}), dc;
  SM_ASSERT_OK(sm_diagonal(c, 0, 1, 2, dc.out()));
  expect_layout(dc, {2, 3}, {9, 4}, 0);
  EXPECT_EQ(read<float>(dc), (std::vector<float>{0, 4, 8, 9, 13, 17}));
  // Writing the diagonal writes the matrix.
  SM_ASSERT_OK(sm_inplace_scalar(d0, SM_OP_FILL, -1, 0));
  const std::vector<float> mv = read<float>(m);
  EXPECT_EQ(mv[0], -1);
  EXPECT_EQ(mv[5], -1);
  EXPECT_EQ(mv[10], -1);
  EXPECT_EQ(mv[1], 1);
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_diagonal(m, 0, 1, 1, &out), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm_diagonal(m, 0, 0, 2, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_diagonal", "2"});
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, SplitCountsAndViews) {
  Tensor base = iota({10, 2});
  int32_t count = -1;
  SM_ASSERT_OK(sm_split(base, 3, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 4);
  sm_tensor outs[4] = {nullptr, nullptr, nullptr, nullptr};
  // Capacity too small: refused, nothing written.
  int32_t c2 = kSentinel32;
  EXPECT_EQ(sm_split(base, 3, 0, outs, 3, &c2), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(c2, kSentinel32);
  for (sm_tensor o : outs) EXPECT_EQ(o, nullptr);
  const Live l0 = live();
  SM_ASSERT_OK(sm_split(base, 3, 0, outs, 4, &count));
  ASSERT_EQ(count, 4);
  EXPECT_EQ(live().tensors, l0.tensors + 4);
  const int64_t sizes[4] = {3, 3, 3, 1};
  for (int k = 0; k < 4; ++k) {
    expect_layout(outs[k], {sizes[k], 2}, {2, 1}, 6 * k);
    EXPECT_EQ(same_storage(base, outs[k]), 1);
    SM_EXPECT_OK(sm_tensor_release(outs[k]));
  }
  // Along a negative dim, exact division.
  sm_tensor cols[2] = {nullptr, nullptr};
  SM_ASSERT_OK(sm_split(base, 1, -1, cols, 2, &count));
  ASSERT_EQ(count, 2);
  expect_layout(cols[1], {10, 1}, {2, 1}, 1);
  sm_tensor_release(cols[0]);
  sm_tensor_release(cols[1]);
  EXPECT_EQ(live(), l0);
  // Larger capacity than needed is fine.
  sm_tensor big[8] = {};
  SM_ASSERT_OK(sm_split(base, 20, 0, big, 8, &count));
  EXPECT_EQ(count, 1);
  EXPECT_EQ(shape_of(big[0]), (Shape{10, 2}));
  EXPECT_EQ(big[1], nullptr);
  sm_tensor_release(big[0]);
}

TEST(Views, ChunkCounts) {
  Tensor ten = iota({10});
  struct Case {
    int32_t chunks;
    std::vector<int64_t> sizes;
  };
  const Case cases[] = {{4, {3, 3, 3, 1}}, {6, {2, 2, 2, 2, 2}}, {1, {10}},
                        {10, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}, {20, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}};
  for (const Case& c : cases) {
    int32_t count = -1;
    SM_ASSERT_OK(sm_chunk(ten, c.chunks, 0, nullptr, 0, &count));
    ASSERT_EQ(count, static_cast<int32_t>(c.sizes.size())) << "chunks " << c.chunks;
    std::vector<sm_tensor> outs(static_cast<size_t>(count), nullptr);
    SM_ASSERT_OK(sm_chunk(ten, c.chunks, 0, outs.data(), count, &count));
    int64_t start = 0;
    for (int k = 0; k < count; ++k) {
      expect_layout(outs[k], {c.sizes[k]}, {1}, start, "chunk");
      start += c.sizes[k];
      sm_tensor_release(outs[k]);
    }
  }
  // Fewer views than asked for: 5 elements in 4 chunks -> 2, 2, 1.
  Tensor five = iota({5});
  int32_t count = -1;
  SM_ASSERT_OK(sm_chunk(five, 4, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 3);
  int32_t c2 = kSentinel32;
  EXPECT_EQ(sm_chunk(five, 0, 0, nullptr, 0, &c2), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_chunk", "0"});
  EXPECT_EQ(c2, kSentinel32);
}

// PyTorch: splitting a size-0 dim gives one empty view; chunking it gives
// `chunks` empty views.
TEST(Views, SplitAndChunkOfEmptyDim) {
  const int64_t shape[2] = {0, 3};
  Tensor e;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT32, cpu(), e.out()));
  int32_t count = -1;
  SM_ASSERT_OK(sm_split(e, 2, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 1);
  SM_ASSERT_OK(sm_chunk(e, 3, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 3);
  // Along the non-empty dim.
  sm_tensor outs[2] = {};
  SM_ASSERT_OK(sm_split(e, 2, 1, outs, 2, &count));
  ASSERT_EQ(count, 2);
  EXPECT_EQ(shape_of(outs[0]), (Shape{0, 2}));
  EXPECT_EQ(shape_of(outs[1]), (Shape{0, 1}));
  sm_tensor_release(outs[0]);
  sm_tensor_release(outs[1]);
}

TEST(Views, FlipIsANegativeStrideView) {
  Tensor base = iota({2, 3});
  Tensor f1, f01;
  const int32_t d1[1] = {1}, d01[2] = {0, -1};
  SM_ASSERT_OK(sm_flip(base, d1, 1, f1.out()));
  expect_layout(f1, {2, 3}, {3, -1}, 2);
  EXPECT_EQ(read<float>(f1), (std::vector<float>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(same_storage(base, f1), 1);
  SM_ASSERT_OK(sm_flip(base, d01, 2, f01.out()));
  expect_layout(f01, {2, 3}, {-3, -1}, 5);
  EXPECT_EQ(read<float>(f01), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(is_contig(f01, SM_CONTIGUOUS), 0);
  // Flipping twice is the identity layout.
  Tensor back;
  SM_ASSERT_OK(sm_flip(f01, d01, 2, back.out()));
  expect_layout(back, {2, 3}, {3, 1}, 0);
  // Writes through the flip land in the base.
  Tensor row;
  SM_ASSERT_OK(sm_select(f1, 0, 0, row.out()));
  Tensor src = make<float>({10, 20, 30}, {3});
  SM_ASSERT_OK(sm_copy_into(row, src));
  EXPECT_EQ(read<float>(base), (std::vector<float>{30, 20, 10, 3, 4, 5}));
  // Nothing to flip: same layout.
  Tensor none;
  SM_ASSERT_OK(sm_flip(base, nullptr, 0, none.out()));
  expect_layout(none, {2, 3}, {3, 1}, 0);
  sm_tensor out = sentinel_tensor();
  const int32_t bad[1] = {2};
  EXPECT_EQ(sm_flip(base, bad, 1, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_flip", "2"});
  EXPECT_EQ(out, sentinel_tensor());
}

TEST(Views, IsContiguousAllFormats) {
  Tensor c = iota({2, 3, 4, 5});
  EXPECT_EQ(is_contig(c, SM_CONTIGUOUS), 1);
  EXPECT_EQ(is_contig(c, SM_CHANNELS_LAST), 0);
  EXPECT_EQ(is_contig(c, SM_CHANNELS_LAST_3D), 0);
  EXPECT_EQ(is_contig(c, SM_PRESERVE), 1);

  Tensor cl;
  SM_ASSERT_OK(sm_clone(c, SM_CHANNELS_LAST, cl.out()));
  EXPECT_EQ(is_contig(cl, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(cl, SM_CHANNELS_LAST), 1);
  EXPECT_EQ(is_contig(cl, SM_PRESERVE), 1);

  Tensor c5 = iota({2, 3, 2, 2, 2}), cl3;
  SM_ASSERT_OK(sm_clone(c5, SM_CHANNELS_LAST_3D, cl3.out()));
  EXPECT_EQ(is_contig(cl3, SM_CHANNELS_LAST_3D), 1);
  EXPECT_EQ(is_contig(cl3, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(cl3, SM_CHANNELS_LAST), 0) << "channels_last is 4-D only";
  EXPECT_EQ(is_contig(c5, SM_CHANNELS_LAST), 0);

  // Transposed: dense in some order only.
  Tensor m = iota({3, 4}), t;
  SM_ASSERT_OK(sm_transpose(m, 0, 1, t.out()));
  EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(t, SM_PRESERVE), 1);
  // Step 2: not dense in any order.
  Tensor s;
  SM_ASSERT_OK(sm_slice(m, 1, 0, 4, 2, s.out()));
  EXPECT_EQ(is_contig(s, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(s, SM_PRESERVE), 0);
  // Row slice of a contiguous tensor stays contiguous.
  Tensor r;
  SM_ASSERT_OK(sm_slice(m, 0, 1, 3, 1, r.out()));
  EXPECT_EQ(is_contig(r, SM_CONTIGUOUS), 1);
  // Flipped dense tensor: dense, but not row-major.
  Tensor f;
  const int32_t d0[1] = {0};
  SM_ASSERT_OK(sm_flip(m, d0, 1, f.out()));
  EXPECT_EQ(is_contig(f, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(f, SM_PRESERVE), 1);
}

TEST(Views, IsContiguousIgnoresSizeOneAndEmpty) {
  // Size-1 dims: their strides do not matter (PyTorch).
  Tensor base = iota({6});
  Tensor a;
  const int64_t shape[3] = {2, 1, 3}, strides[3] = {3, 99, 1};
  SM_ASSERT_OK(sm_as_strided(base, shape, strides, 3, 0, a.out()));
  EXPECT_EQ(is_contig(a, SM_CONTIGUOUS), 1);
  // (2,3,1,1) row-major is also channels_last (only N and C matter).
  Tensor b;
  const int64_t s4[4] = {2, 3, 1, 1};
  SM_ASSERT_OK(sm_view(base, s4, 4, b.out()));
  EXPECT_EQ(is_contig(b, SM_CONTIGUOUS), 1);
  EXPECT_EQ(is_contig(b, SM_CHANNELS_LAST), 1);
  // Empty tensors are contiguous whatever their strides
  // (torch.empty_strided((0,3),(1,7)).is_contiguous() -> True).
  Tensor e;
  const int64_t es[2] = {0, 3}, est[2] = {1, 7};
  SM_ASSERT_OK(sm_as_strided(base, es, est, 2, 0, e.out()));
  EXPECT_EQ(is_contig(e, SM_CONTIGUOUS), 1);
  EXPECT_EQ(is_contig(e, SM_PRESERVE), 1);
  // ...but not channels-last: PyTorch checks those strides even when empty.
  // torch.empty_strided((2,0,4,5),(1,2,3,4)).is_contiguous(memory_format=
  //   torch.channels_last) -> False; with (0,1,0,0) -> True
  Tensor e4, c4;
  const int64_t e4s[4] = {2, 0, 4, 5}, e4st[4] = {1, 2, 3, 4}, c4st[4] = {0, 1, 0, 0};
  SM_ASSERT_OK(sm_as_strided(base, e4s, e4st, 4, 0, e4.out()));
  EXPECT_EQ(is_contig(e4, SM_CONTIGUOUS), 1);
  EXPECT_EQ(is_contig(e4, SM_CHANNELS_LAST), 0);
  SM_ASSERT_OK(sm_as_strided(base, e4s, c4st, 4, 0, c4.out()));
  EXPECT_EQ(is_contig(c4, SM_CHANNELS_LAST), 1);
  // 0-d.
  Tensor z;
  SM_ASSERT_OK(sm_as_strided(base, nullptr, nullptr, 0, 5, z.out()));
  EXPECT_EQ(is_contig(z, SM_CONTIGUOUS), 1);
  EXPECT_EQ(read<float>(z), std::vector<float>{5});
}

TEST(Views, SameStorage) {
  Tensor a = iota({4}), b = iota({4}), v, c;
  SM_ASSERT_OK(sm_slice(a, 0, 1, 3, 1, v.out()));
  SM_ASSERT_OK(sm_clone(a, SM_PRESERVE, c.out()));
  EXPECT_EQ(same_storage(a, v), 1);
  EXPECT_EQ(same_storage(v, a), 1);
  EXPECT_EQ(same_storage(a, a), 1);
  EXPECT_EQ(same_storage(a, b), 0);
  EXPECT_EQ(same_storage(a, c), 0);
}

TEST(Views, ViewsOfViewsKeepTheStorageAlive) {
  const Live l0 = live();
  Tensor leaf;
  {
    Tensor base = iota({4, 4}), t, s;
    SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
    SM_ASSERT_OK(sm_select(t, 0, 2, s.out()));  // column 2 of base
    SM_ASSERT_OK(sm_unsqueeze(s, 0, leaf.out()));
  }
  EXPECT_EQ(live().tensors, l0.tensors + 1);
  EXPECT_EQ(read<float>(leaf), (std::vector<float>{2, 6, 10, 14}));
  EXPECT_EQ(storage_nbytes_of(leaf), 64);
  leaf.reset();
  EXPECT_EQ(live(), l0);
}

TEST(Views, VersionCounterIsSharedByViews) {
  Tensor base = iota({3, 4});
  Tensor v1, v2;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, v1.out()));
  SM_ASSERT_OK(sm_slice(base, 1, SM_SLICE_NONE, SM_SLICE_NONE, -1, v2.out()));
  const int64_t v0 = version_of(base);
  EXPECT_EQ(version_of(v1), v0);
  EXPECT_EQ(version_of(v2), v0);
  // Views, reads and clones do not bump it.
  Tensor v3, cl;
  SM_ASSERT_OK(sm_select(v2, 0, 0, v3.out()));
  (void)read<float>(v3);
  SM_ASSERT_OK(sm_clone(v1, SM_CONTIGUOUS, cl.out()));
  EXPECT_EQ(version_of(base), v0);
  // A write through any view bumps every view's counter.
  SM_ASSERT_OK(sm_inplace_scalar(v3, SM_OP_ADD, 1, 0));
  EXPECT_EQ(version_of(base), v0 + 1);
  EXPECT_EQ(version_of(v1), v0 + 1);
  EXPECT_EQ(version_of(v2), v0 + 1);
  EXPECT_EQ(version_of(v3), v0 + 1);
  const int64_t cv = version_of(cl);
  Tensor src = iota({4, 3});
  SM_ASSERT_OK(sm_copy_into(v1, src));
  EXPECT_EQ(version_of(base), v0 + 2);
  EXPECT_EQ(version_of(v2), v0 + 2);
  EXPECT_EQ(version_of(cl), cv) << "a clone has its own counter";
  Tensor other = iota({3, 4});
  const int64_t ov = version_of(other);
  SM_ASSERT_OK(sm_inplace_tensor(v2, SM_OP_MUL, other, 1.0));
  EXPECT_EQ(version_of(v1), v0 + 3);
  EXPECT_EQ(version_of(other), ov) << "reading a source does not bump it";
}
