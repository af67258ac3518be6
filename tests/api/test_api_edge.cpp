// 0-d and size-0 tensors through every op.
#include "api_test_util.hpp"
#include "stridemem_dlpack.h"

using namespace smt;

namespace {

Tensor scalar(float v) { return make<float>({v}, {}); }

Tensor empty03() {
  const int64_t shape[2] = {0, 3};
  Tensor t;
  EXPECT_EQ(sm_zeros(shape, 2, SM_FLOAT32, cpu(), t.out()), SM_OK) << sm_last_error();
  return t;
}

}  // namespace

TEST(ZeroDim, ViewsAndShapes) {
  Tensor s = scalar(7);
  EXPECT_EQ(ndim_of(s), 0);
  EXPECT_EQ(numel_of(s), 1);
  EXPECT_EQ(is_contig(s, SM_CONTIGUOUS), 1);
  EXPECT_EQ(is_contig(s, SM_PRESERVE), 1);
  EXPECT_EQ(is_contig(s, SM_CHANNELS_LAST), 0);
  Tensor v0, v11, r1, fl, un, sq, ex, pe, fp, cl, co;
  SM_ASSERT_OK(sm_view(s, nullptr, 0, v0.out()));
  EXPECT_EQ(ndim_of(v0), 0);
  const int64_t s11[2] = {1, 1};
  SM_ASSERT_OK(sm_view(s, s11, 2, v11.out()));
  EXPECT_EQ(shape_of(v11), (Shape{1, 1}));
  int copied = -1;
  const int64_t s1[1] = {1};
  SM_ASSERT_OK(sm_reshape(s, s1, 1, r1.out(), &copied));
  EXPECT_EQ(copied, 0);
  SM_ASSERT_OK(sm_flatten(s, 0, -1, fl.out()));
  EXPECT_EQ(shape_of(fl), Shape{1});
  SM_ASSERT_OK(sm_unsqueeze(s, -1, un.out()));
  EXPECT_EQ(shape_of(un), Shape{1});
  SM_ASSERT_OK(sm_squeeze(s, nullptr, 0, sq.out()));
  EXPECT_EQ(ndim_of(sq), 0);
  const int64_t s23[2] = {2, 3};
  SM_ASSERT_OK(sm_expand(s, s23, 2, ex.out()));
  expect_layout(ex, {2, 3}, {0, 0}, 0);
  EXPECT_EQ(read<float>(ex), std::vector<float>(6, 7));
  SM_ASSERT_OK(sm_permute(s, nullptr, 0, pe.out()));
  EXPECT_EQ(ndim_of(pe), 0);
  SM_ASSERT_OK(sm_flip(s, nullptr, 0, fp.out()));
  EXPECT_EQ(read<float>(fp), std::vector<float>{7});
  for (sm_tensor v : {v0.get(), v11.get(), r1.get(), fl.get(), un.get(), sq.get(), ex.get(),
                      pe.get(), fp.get()})
    EXPECT_EQ(same_storage(s, v), 1);
  SM_ASSERT_OK(sm_clone(s, SM_PRESERVE, cl.out()));
  EXPECT_EQ(ndim_of(cl), 0);
  EXPECT_EQ(same_storage(s, cl), 0);
  SM_ASSERT_OK(sm_contiguous(s, SM_CONTIGUOUS, co.out(), nullptr));
  EXPECT_EQ(data_ptr_of(co), data_ptr_of(s));
}

TEST(ZeroDim, CopiesConversionsAndWrites) {
  Tensor s = scalar(2.75f);
  Tensor i, h;
  SM_ASSERT_OK(sm_to(s, cpu(), SM_INT32, i.out(), nullptr));
  EXPECT_EQ(ndim_of(i), 0);
  EXPECT_EQ(read<int32_t>(i), std::vector<int32_t>{2});
  SM_ASSERT_OK(sm_to(s, cpu(), SM_FLOAT16, h.out(), nullptr));
  EXPECT_EQ(read<uint16_t>(h), std::vector<uint16_t>{0x4180});  // 2.75 exactly
  const int64_t v0 = version_of(s);
  Tensor src = make<int64_t>({-4}, {});
  SM_ASSERT_OK(sm_copy_into(s, src));
  EXPECT_EQ(read<float>(s), std::vector<float>{-4});
  SM_ASSERT_OK(sm_inplace_scalar(s, SM_OP_ABS, 0, 0));
  SM_ASSERT_OK(sm_inplace_tensor(s, SM_OP_MUL, s, 1.0));
  EXPECT_EQ(read<float>(s), std::vector<float>{16});
  EXPECT_EQ(version_of(s), v0 + 3);
  // A 0-d source broadcasts into anything.
  Tensor m = iota({2, 2});
  SM_ASSERT_OK(sm_inplace_tensor(m, SM_OP_ADD, s, 0.5));
  EXPECT_EQ(read<float>(m), (std::vector<float>{8, 9, 10, 11}));
  // DLPack export of a 0-d tensor.
  void* raw = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(s, 0, &raw));
  auto* mt = static_cast<sm_DLManagedTensor*>(raw);
  EXPECT_EQ(mt->dl_tensor.ndim, 0);
  EXPECT_EQ(*static_cast<float*>(mt->dl_tensor.data), 16.0f);
  mt->deleter(mt);
}

TEST(SizeZero, EveryViewOp) {
  Tensor e = empty03();
  Tensor v;
  const int64_t s0[1] = {0}, s30[2] = {3, 0}, sm3[2] = {-1, 3};
  SM_ASSERT_OK(sm_view(e, s0, 1, v.out()));
  EXPECT_EQ(shape_of(v), Shape{0});
  SM_ASSERT_OK(sm_view(e, s30, 2, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{3, 0}));
  SM_ASSERT_OK(sm_view(e, sm3, 2, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 3}));
  const int64_t sm1[1] = {-1};
  SM_ASSERT_OK(sm_view(e, sm1, 1, v.out()));
  EXPECT_EQ(shape_of(v), Shape{0});
  sm_tensor out = sentinel_tensor();
  const int64_t ambiguous[2] = {-1, 0};
  EXPECT_EQ(sm_view(e, ambiguous, 2, &out), SM_ERR_SHAPE) << "-1 cannot be inferred from 0";
  EXPECT_EQ(out, sentinel_tensor());

  SM_ASSERT_OK(sm_slice(e, 0, 0, 0, 1, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 3}));
  SM_ASSERT_OK(sm_slice(e, 1, SM_SLICE_NONE, SM_SLICE_NONE, -1, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 3}));
  SM_ASSERT_OK(sm_narrow(e, 1, 1, 2, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 2}));
  SM_ASSERT_OK(sm_select(e, 1, 2, v.out()));
  EXPECT_EQ(shape_of(v), Shape{0});
  EXPECT_EQ(sm_select(e, 0, 0, &out), SM_ERR_OUT_OF_BOUNDS) << "nothing to select in a size-0 dim";
  SM_ASSERT_OK(sm_transpose(e, 0, 1, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{3, 0}));
  const int32_t p10[2] = {1, 0};
  SM_ASSERT_OK(sm_permute(e, p10, 2, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{3, 0}));
  SM_ASSERT_OK(sm_movedim(e, p10, p10 + 1, 1, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{3, 0}));
  const int32_t d01[2] = {0, 1};
  SM_ASSERT_OK(sm_flip(e, d01, 2, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 3}));
  const int64_t s203[3] = {2, 0, 3};
  SM_ASSERT_OK(sm_expand(e, s203, 3, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{2, 0, 3}));
  SM_ASSERT_OK(sm_unsqueeze(e, 1, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 1, 3}));
  SM_ASSERT_OK(sm_squeeze(e, nullptr, 0, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 3})) << "size 0 is not size 1";
  SM_ASSERT_OK(sm_flatten(e, 0, 1, v.out()));
  EXPECT_EQ(shape_of(v), Shape{0});
  const int64_t s31[2] = {3, 1};
  SM_ASSERT_OK(sm_unflatten(e, 1, s31, 2, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 3, 1}));
  SM_ASSERT_OK(sm_unfold(e, 1, 2, 1, v.out()));
  EXPECT_EQ(shape_of(v), (Shape{0, 2, 2}));
  SM_ASSERT_OK(sm_diagonal(e, 0, 0, 1, v.out()));
  EXPECT_EQ(shape_of(v), Shape{0});
  EXPECT_EQ(same_storage(e, v), 1);
  EXPECT_EQ(numel_of(v), 0);
  EXPECT_EQ(nbytes_of(v), 0);
  int w = -1;
  const int64_t s6[2] = {0, 6};
  SM_ASSERT_OK(sm_reshape_would_copy(e, s6, 2, &w));
  EXPECT_EQ(w, 0);
}

TEST(SizeZero, CopiesIndexSelectAndWrites) {
  Tensor e = empty03();
  Tensor c, ct, t64, co;
  SM_ASSERT_OK(sm_clone(e, SM_PRESERVE, c.out()));
  EXPECT_EQ(shape_of(c), (Shape{0, 3}));
  SM_ASSERT_OK(sm_transpose(e, 0, 1, ct.out()));
  SM_ASSERT_OK(sm_contiguous(ct, SM_CONTIGUOUS, co.out(), nullptr));
  EXPECT_EQ(shape_of(co), (Shape{3, 0}));
  SM_ASSERT_OK(sm_to(e, cpu(), SM_FLOAT64, t64.out(), nullptr));
  EXPECT_EQ(dtype_of(t64), SM_FLOAT64);
  EXPECT_EQ(shape_of(t64), (Shape{0, 3}));
  Tensor idx = make<int64_t>({2, 0}, {2}), r;
  SM_ASSERT_OK(sm_index_select(e, 1, idx, r.out()));
  EXPECT_EQ(shape_of(r), (Shape{0, 2}));
  const int64_t z[1] = {0};
  Tensor none, r0;
  SM_ASSERT_OK(sm_empty(z, 1, SM_INT64, cpu(), none.out()));
  SM_ASSERT_OK(sm_index_select(e, 0, none, r0.out()));
  EXPECT_EQ(shape_of(r0), (Shape{0, 3}));
  sm_tensor out = sentinel_tensor();
  Tensor zero = make<int64_t>({0}, {1});
  EXPECT_EQ(sm_index_select(e, 0, zero, &out), SM_ERR_OUT_OF_BOUNDS) << "index 0 of a size-0 dim";
  EXPECT_EQ(out, sentinel_tensor());
  for (sm_op op : {SM_OP_FILL, SM_OP_ZERO, SM_OP_ADD, SM_OP_SQRT, SM_OP_EXP})
    SM_EXPECT_OK(sm_inplace_scalar(e, op, 1, 0));
  SM_EXPECT_OK(sm_copy_into(e, c));
  void* raw = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(e, 1, &raw));
  auto* m = static_cast<sm_DLManagedTensorVersioned*>(raw);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.shape[0], 0);
  m->deleter(m);
}

// A dim of one element may have any stride, INT64_MIN included (PyTorch's
// as_strided allows it too): selecting along it must never scale that stride.
TEST(SizeOne, IndexSelectAlongADimOfOneElementWithTheMostNegativeStride) {
  Tensor base = make<float>({1.5f, 2.5f, 3.5f}, {3});
  const int64_t shape[2] = {1, 3}, strides[2] = {INT64_MIN, 1};
  Tensor v, r;
  SM_ASSERT_OK(sm_as_strided(base, shape, strides, 2, 0, v.out()));
  Tensor idx = make<int64_t>({0, -1, 0}, {3});
  SM_ASSERT_OK(sm_index_select(v, 0, idx, r.out()));
  EXPECT_EQ(shape_of(r), (Shape{3, 3}));
  EXPECT_EQ(read<float>(r), (std::vector<float>{1.5f, 2.5f, 3.5f, 1.5f, 2.5f, 3.5f, 1.5f, 2.5f, 3.5f}));
  Tensor one = make<int64_t>({0}, {1});
  SM_ASSERT_OK(sm_index_select(v, 0, one, r.out()));
  EXPECT_EQ(read<float>(r), (std::vector<float>{1.5f, 2.5f, 3.5f}));
}
