// Data-moving calls on CUDA tensors, compared with the CPU backend on the
// same inputs: contiguous/clone in every memory format over permutations,
// slices, flips and broadcasts; copy_into with broadcasting and every dtype
// pair; every in-place op; index_select; and a tensor over 2^31 elements
// (64-bit index math). Skipped, with the reason, without a usable GPU.
#include "test_cuda_util.hpp"

#include <gtest/gtest-spi.h>

#include <numeric>

namespace smt {
namespace {

const sm_dtype kDtypes[] = {SM_BOOL,    SM_UINT8,   SM_INT8,    SM_INT16,     SM_INT32,
                            SM_INT64,   SM_FLOAT16, SM_BFLOAT16, SM_FLOAT32,  SM_FLOAT64,
                            SM_UINT16,  SM_UINT32,  SM_UINT64,   SM_COMPLEX64, SM_COMPLEX128};

std::string name_of(const char* what, const Shape& shape, sm_dtype dt) {
  std::string s = std::string(what) + " " + sm_dtype_name(dt) + " [";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// The comparator the tests below rely on, checked here on two CPU tensors
// (it needs no GPU): "bit for bit" must tell -0 from +0 in every floating
// dtype and each complex part, and may excuse only NaN sign and payload.
TEST(CudaTestHelpers, SameValuesComparesBitsExceptNanPayloads) {
  const auto differ = [](const Tensor& a, const Tensor& b) {
    EXPECT_NONFATAL_FAILURE(expect_same_values(a.get(), b.get(), "probe"),
                            "differ in their bits");
  };
  const auto agree = [](const Tensor& a, const Tensor& b) {
    expect_same_values(a.get(), b.get(), "probe");
  };
  // Complex values from their parts (re, im, re, im, ...).
  const auto cplx = [](auto parts) {
    const sm_dtype dt = sizeof(parts[0]) == 4 ? SM_COMPLEX64 : SM_COMPLEX128;
    const int64_t n = static_cast<int64_t>(parts.size() / 2);
    Tensor t;
    EXPECT_EQ(sm_from_host(parts.data(), &n, 1, dt, cpu(), t.out()), SM_OK) << sm_last_error();
    return t;
  };
  differ(make<float>({1.0f, -0.0f}, {2}), make<float>({1.0f, 0.0f}, {2}));
  differ(make<double>({-0.0}, {1}), make<double>({0.0}, {1}));
  differ(make<uint16_t>({0x8000}, {1}, SM_FLOAT16), make<uint16_t>({0x0000}, {1}, SM_FLOAT16));
  differ(make<uint16_t>({0x8000}, {1}, SM_BFLOAT16), make<uint16_t>({0x0000}, {1}, SM_BFLOAT16));
  differ(cplx(std::vector<float>{0.0f, -0.0f}), cplx(std::vector<float>{0.0f, 0.0f}));
  differ(cplx(std::vector<double>{-0.0, 1.0}), cplx(std::vector<double>{0.0, 1.0}));
  // An infinity is not a NaN (the largest non-NaN pattern of each width).
  differ(make<uint16_t>({0x7C00}, {1}, SM_FLOAT16), make<uint16_t>({0x7C01}, {1}, SM_FLOAT16));
  differ(make<uint16_t>({0x7F80}, {1}, SM_BFLOAT16), make<uint16_t>({0x7F81}, {1}, SM_BFLOAT16));
  differ(make<float>({INFINITY}, {1}), make<float>({NAN}, {1}));
  // A one-ulp difference is a difference.
  differ(make<float>({1.0f}, {1}), make<float>({std::nextafter(1.0f, 2.0f)}, {1}));
  // NaNs of any sign and payload match; so does a NaN part of a complex.
  uint32_t qnan = 0x7FC00000u, neg_payload = 0xFFC00123u;
  float f1, f2;
  std::memcpy(&f1, &qnan, 4);
  std::memcpy(&f2, &neg_payload, 4);
  agree(make<float>({f1, -0.0f}, {2}), make<float>({f2, -0.0f}, {2}));
  agree(make<uint16_t>({0x7E00, 0x8000}, {2}, SM_FLOAT16), make<uint16_t>({0xFC01, 0x8000}, {2}, SM_FLOAT16));
  agree(make<uint16_t>({0x7FC0}, {1}, SM_BFLOAT16), make<uint16_t>({0xFF81}, {1}, SM_BFLOAT16));
  agree(cplx(std::vector<double>{NAN, -0.0}), cplx(std::vector<double>{-NAN, -0.0}));
  // Integers and bools stay byte for byte.
  const Tensor i1 = make<int32_t>({1}, {1}), i2 = make<int32_t>({2}, {1});
  EXPECT_NONFATAL_FAILURE(expect_same_values(i1.get(), i2.get(), "probe"), "bytes differ");
}

// contiguous() of every permutation: the tiled transpose, the vectorized
// copy and the element-wise kernel all get their turn.
TEST(CudaOps, ContiguousOfEveryPermutation) {
  SMT_REQUIRE_CUDA();
  const std::vector<Shape> shapes = {{67, 45}, {64, 128}, {16, 33, 40}, {4, 20, 17, 18},
                                     {2, 3, 16, 4, 20}, {2, 64, 9, 9}, {3, 256, 1, 5}};
  uint32_t seed = 1;
  for (const Shape& shape : shapes) {
    for (sm_dtype dt : {SM_FLOAT32, SM_FLOAT16, SM_UINT8, SM_FLOAT64, SM_BOOL, SM_COMPLEX128}) {
      Pair p = random_pair(shape, dt, seed++);
      std::vector<int32_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      do {
        Pair v = both(p, [&](sm_tensor t, sm_tensor* o) {
          return sm_permute(t, perm.data(), static_cast<int32_t>(perm.size()), o);
        });
        Tensor cc, gc;
        SM_ASSERT_OK(sm_contiguous(v.c, SM_CONTIGUOUS, cc.out(), nullptr));
        SM_ASSERT_OK(sm_contiguous(v.g, SM_CONTIGUOUS, gc.out(), nullptr));
        expect_same(cc, gc, name_of("contiguous(permute)", shape, dt));
        if (HasFailure()) return;
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
}

TEST(CudaOps, MemoryFormats) {
  SMT_REQUIRE_CUDA();
  for (sm_dtype dt : {SM_FLOAT32, SM_FLOAT16, SM_INT64}) {
    Pair p4 = random_pair({3, 48, 17, 20}, dt, 11);
    Pair p5 = random_pair({2, 24, 5, 9, 11}, dt, 12);
    for (sm_memory_format f : {SM_CONTIGUOUS, SM_CHANNELS_LAST}) {
      Tensor c, g;
      SM_ASSERT_OK(sm_contiguous(p4.c, f, c.out(), nullptr));
      SM_ASSERT_OK(sm_contiguous(p4.g, f, g.out(), nullptr));
      EXPECT_EQ(strides_of(c), strides_of(g));
      expect_same(c, g, name_of("contiguous 4-D format", {f}, dt));
      // and back
      Tensor c2, g2;
      SM_ASSERT_OK(sm_clone(c, SM_CONTIGUOUS, c2.out()));
      SM_ASSERT_OK(sm_clone(g, SM_CONTIGUOUS, g2.out()));
      expect_same(c2, g2, "clone back to row-major");
    }
    for (sm_memory_format f : {SM_CHANNELS_LAST_3D, SM_PRESERVE}) {
      Tensor c, g;
      SM_ASSERT_OK(sm_clone(p5.c, f, c.out()));
      SM_ASSERT_OK(sm_clone(p5.g, f, g.out()));
      EXPECT_EQ(strides_of(c), strides_of(g));
      expect_same(c, g, name_of("clone 5-D format", {f}, dt));
    }
    // clone(PRESERVE) of a permuted view keeps its order.
    const int32_t perm[4] = {0, 2, 3, 1};
    Pair v = both(p4, [&](sm_tensor t, sm_tensor* o) { return sm_permute(t, perm, 4, o); });
    Tensor c, g;
    SM_ASSERT_OK(sm_clone(v.c, SM_PRESERVE, c.out()));
    SM_ASSERT_OK(sm_clone(v.g, SM_PRESERVE, g.out()));
    EXPECT_EQ(strides_of(c), strides_of(g));
    expect_same(c, g, "clone(preserve) of a permuted view");
  }
}

// Slices with steps, negative steps, flips, diagonals and unfolds, then a
// copy: strided sources and destinations on both sides.
TEST(CudaOps, StridedViewsCopied) {
  SMT_REQUIRE_CUDA();
  for (sm_dtype dt : kDtypes) {
    Pair p = random_pair({40, 50, 6}, dt, 21 + static_cast<uint32_t>(dt));
    Pair s1 = both(p, [](sm_tensor t, sm_tensor* o) { return sm_slice(t, 0, 3, 37, 2, o); });
    Pair s2 = both(s1, [](sm_tensor t, sm_tensor* o) { return sm_slice(t, 1, SM_SLICE_NONE, SM_SLICE_NONE, -3, o); });
    const int32_t fd[1] = {2};
    Pair s3 = both(s2, [&](sm_tensor t, sm_tensor* o) { return sm_flip(t, fd, 1, o); });
    Pair s4 = both(p, [](sm_tensor t, sm_tensor* o) { return sm_diagonal(t, 2, 0, 1, o); });
    Pair s5 = both(p, [](sm_tensor t, sm_tensor* o) { return sm_unfold(t, 1, 7, 3, o); });
    for (Pair* v : {&s1, &s2, &s3, &s4, &s5}) {
      Tensor c, g;
      SM_ASSERT_OK(sm_clone(v->c, SM_CONTIGUOUS, c.out()));
      SM_ASSERT_OK(sm_clone(v->g, SM_CONTIGUOUS, g.out()));
      expect_same(c, g, name_of("clone of a strided view", shape_of(v->c), dt));
    }
    // Writing into a strided destination: dst = flipped slice of a zero tensor.
    Pair z = both(p, [](sm_tensor t, sm_tensor* o) { return sm_clone(t, SM_CONTIGUOUS, o); });
    Pair zd = both(z, [](sm_tensor t, sm_tensor* o) { return sm_slice(t, 0, 30, 5, -2, o); });
    Pair src = random_pair(shape_of(zd.c), dt, 77);
    SM_ASSERT_OK(sm_copy_into(zd.c, src.c));
    SM_ASSERT_OK(sm_copy_into(zd.g, src.g));
    expect_same(z.c, z.g, name_of("copy_into a strided destination", shape_of(z.c), dt));
  }
}

TEST(CudaOps, CopyIntoWithBroadcasting) {
  SMT_REQUIRE_CUDA();
  for (sm_dtype dt : {SM_FLOAT32, SM_BFLOAT16, SM_INT8, SM_FLOAT64}) {
    Pair dst = random_pair({31, 64, 40}, dt, 31);
    for (const Shape& sshape : {Shape{40}, Shape{64, 1}, Shape{31, 1, 40}, Shape{1, 64, 1}, Shape{}}) {
      Pair src = random_pair(sshape, dt, 32);
      SM_ASSERT_OK(sm_copy_into(dst.c, src.c));
      SM_ASSERT_OK(sm_copy_into(dst.g, src.g));
      expect_same(dst.c, dst.g, name_of("copy_into broadcast from", sshape, dt));
    }
  }
}

TEST(CudaOps, EveryDtypeConversion) {
  SMT_REQUIRE_CUDA();
  for (sm_dtype sd : kDtypes) {
    Pair src = random_pair({17, 300}, sd, 40 + static_cast<uint32_t>(sd));
    Pair srcT = both(src, [](sm_tensor t, sm_tensor* o) { return sm_transpose(t, 0, 1, o); });
    for (sm_dtype dd : kDtypes) {
      // Contiguous and transposed sources, through sm_to and sm_copy_into.
      Tensor c, g;
      SM_ASSERT_OK(sm_to(src.c, cpu(), dd, c.out(), nullptr));
      SM_ASSERT_OK(sm_to(src.g, cuda(0), dd, g.out(), nullptr));
      expect_same_values(c, g, std::string("to ") + sm_dtype_name(sd) + " -> " + sm_dtype_name(dd));
      Pair dst = random_pair({300, 17}, dd, 50);
      SM_ASSERT_OK(sm_copy_into(dst.c, srcT.c));
      SM_ASSERT_OK(sm_copy_into(dst.g, srcT.g));
      expect_same_values(dst.c, dst.g,
                         std::string("copy_into transposed ") + sm_dtype_name(sd) + " -> " + sm_dtype_name(dd));
      if (HasFailure()) return;
    }
  }
}

// Every scalar op on every dtype: the same status on both sides, and the
// same values where it succeeds.
TEST(CudaOps, InPlaceScalarOps) {
  SMT_REQUIRE_CUDA();
  const sm_op ops[] = {SM_OP_FILL, SM_OP_ZERO, SM_OP_ADD,  SM_OP_SUB,  SM_OP_MUL,  SM_OP_DIV,
                       SM_OP_CLAMP, SM_OP_RELU, SM_OP_NEG, SM_OP_ABS, SM_OP_SQRT, SM_OP_EXP,
                       SM_OP_SIGN};
  const double args[][2] = {{3, 0}, {-2.5, 0}, {0.1, 7}, {NAN, 5}, {-3, NAN}, {1e10, 0}};
  for (sm_dtype dt : kDtypes) {
    for (sm_op op : ops) {
      for (const auto& ab : args) {
        Pair p = random_pair({33, 70}, dt, 60 + static_cast<uint32_t>(op));
        // through a transposed view: strided writes
        Pair v = both(p, [](sm_tensor t, sm_tensor* o) { return sm_transpose(t, 0, 1, o); });
        const sm_status sc = sm_inplace_scalar(v.c, op, ab[0], ab[1]);
        const sm_status sg = sm_inplace_scalar(v.g, op, ab[0], ab[1]);
        const std::string what = std::string("scalar op ") + std::to_string(op) + " on " +
                                 sm_dtype_name(dt) + " a=" + std::to_string(ab[0]) +
                                 " b=" + std::to_string(ab[1]);
        ASSERT_EQ(sc, sg) << what;
        if (sc != SM_OK) continue;
        // Exact for every op, EXP included: both backends run the same
        // element definitions (src/core/element_ops.hpp).
        expect_same_values(p.c, p.g, what);
        if (HasFailure()) return;
      }
    }
  }
}

TEST(CudaOps, InPlaceTensorOps) {
  SMT_REQUIRE_CUDA();
  const sm_op ops[] = {SM_OP_FILL, SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_DIV};
  for (sm_dtype dd : kDtypes) {
    for (sm_dtype od : {SM_FLOAT32, SM_INT32, SM_FLOAT16, SM_FLOAT64, SM_BOOL, SM_UINT8,
                        SM_UINT64, SM_COMPLEX64, SM_COMPLEX128}) {
      for (sm_op op : ops) {
        for (int layout = 0; layout < 3; ++layout) {
          Pair d = random_pair({64, 48}, dd, 70);
          // 0: same layout; 1: destination transposed (the tiled path when
          // dtypes match); 2: other broadcast along rows.
          Pair dv = layout == 1 ? both(d, [](sm_tensor t, sm_tensor* o) { return sm_transpose(t, 0, 1, o); })
                                : both(d, [](sm_tensor t, sm_tensor* o) { return sm_slice(t, 0, 0, SM_SLICE_NONE, 1, o); });
          Shape oshape = layout == 2 ? Shape{shape_of(dv.c)[1]} : shape_of(dv.c);
          Pair o = random_pair(oshape, od, 71);
          const double alpha = 2.0;
          const sm_status sc = sm_inplace_tensor(dv.c, op, o.c, alpha);
          const sm_status sg = sm_inplace_tensor(dv.g, op, o.g, alpha);
          const std::string what = std::string("tensor op ") + std::to_string(op) + " " +
                                   sm_dtype_name(dd) + " with " + sm_dtype_name(od) +
                                   " layout " + std::to_string(layout);
          ASSERT_EQ(sc, sg) << what << ": " << sm_last_error();
          if (sc != SM_OK) continue;
          expect_same_values(d.c, d.g, what);
          if (HasFailure()) return;
        }
      }
    }
  }
  // The same-dtype transposed add at a size where tiles are full and packed.
  for (sm_dtype dt : {SM_FLOAT32, SM_FLOAT16, SM_BFLOAT16, SM_FLOAT64}) {
    Pair x = random_pair({512, 384}, dt, 80);
    Pair y = random_pair({384, 512}, dt, 81);
    Pair xt = both(x, [](sm_tensor t, sm_tensor* o) { return sm_transpose(t, 0, 1, o); });
    SM_ASSERT_OK(sm_inplace_tensor(xt.c, SM_OP_ADD, y.c, 0.5));
    SM_ASSERT_OK(sm_inplace_tensor(xt.g, SM_OP_ADD, y.g, 0.5));
    expect_same_values(x.c, x.g, std::string("x.T += 0.5 * y, ") + sm_dtype_name(dt));
  }
}

TEST(CudaOps, IndexSelectAndReshape) {
  SMT_REQUIRE_CUDA();
  Pair p = random_pair({20, 30, 4}, SM_FLOAT32, 90);
  const std::vector<int64_t> idx = {3, -1, 0, 7, 7};
  Tensor ic = make<int64_t>(idx, {5});
  Tensor ig = to_device(ic, cuda(0));
  Tensor c, g;
  SM_ASSERT_OK(sm_index_select(p.c, 1, ic, c.out()));
  SM_ASSERT_OK(sm_index_select(p.g, 1, ig, g.out()));
  expect_same(c, g, "index_select");
  Pair t = both(p, [](sm_tensor x, sm_tensor* o) { return sm_transpose(x, 0, 2, o); });
  const int64_t shape[2] = {4, 600};
  Tensor rc, rg;
  int copied_c = -1, copied_g = -1;
  SM_ASSERT_OK(sm_reshape(t.c, shape, 2, rc.out(), &copied_c));
  SM_ASSERT_OK(sm_reshape(t.g, shape, 2, rg.out(), &copied_g));
  EXPECT_EQ(copied_c, 1);
  EXPECT_EQ(copied_g, 1);
  expect_same(rc, rg, "reshape that copies");
}

// index_select with the index on the GPU: checked there, never copied to
// the host. An index expanded to 2^40 entries is one element to read back
// (accepted or refused at once, nothing index-sized allocated); a longer one
// goes through the check kernel, which names the first bad position. Strided
// and expanded indices of both dtypes, negative entries included, give the
// CPU's bytes; a CPU index for a GPU source is moved over (only its distinct
// elements).
TEST(CudaOps, IndexSelectChecksTheIndexOnTheDevice) {
  SMT_REQUIRE_CUDA();
  const int64_t n40 = int64_t(1) << 40;
  const int64_t shape0[2] = {0, 5};
  Tensor empty_g;
  SM_ASSERT_OK(sm_empty(shape0, 2, SM_FLOAT32, cuda(0), empty_g.out()));
  auto expanded = [&](int64_t v, sm_dtype dt, sm_device dev) {
    Tensor one = dt == SM_INT64 ? make<int64_t>({v}, {1}, SM_INT64, dev)
                                : make<int32_t>({static_cast<int32_t>(v)}, {1}, SM_INT32, dev);
    Tensor big;
    const int64_t shape[1] = {n40};
    EXPECT_EQ(sm_expand(one, shape, 1, big.out()), SM_OK) << sm_last_error();
    return big;
  };
  for (sm_dtype dt : {SM_INT64, SM_INT32}) {
    Tensor ok = expanded(-5, dt, cuda(0)), bad = expanded(5, dt, cuda(0)), r;
    SM_ASSERT_OK(sm_reset_peak_stats(cuda(0)));
    const sm_memory_stats_t s0 = stats(cuda(0));
    SM_ASSERT_OK(sm_index_select(empty_g, 1, ok, r.out()));
    EXPECT_EQ(shape_of(r), (Shape{0, n40}));
    sm_tensor out = sentinel_tensor();
    EXPECT_EQ(sm_index_select(empty_g, 1, bad, &out), SM_ERR_OUT_OF_BOUNDS);
    expect_error_mentions({"index[0] = 5", "size 5"});
    EXPECT_EQ(out, sentinel_tensor());
    const sm_memory_stats_t s1 = stats(cuda(0));
    EXPECT_LT(s1.peak_allocated_bytes - s0.allocated_bytes, 4096) << "an index-sized allocation";
  }
  // The check kernel: the first of several bad positions, with its value.
  Pair p = random_pair({6, 7, 5}, SM_FLOAT32, 92);
  Tensor many = make<int64_t>({0, 1, 7, 2, -9, 4, 6}, {7}, SM_INT64, cuda(0));
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_index_select(p.g, 2, many, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[2] = 7", "size 5"});
  Tensor flipped_many;
  const int32_t d0[1] = {0};
  SM_ASSERT_OK(sm_flip(many, d0, 1, flipped_many.out()));  // 6, 4, -9, 2, 7, 1, 0
  EXPECT_EQ(sm_index_select(p.g, 2, flipped_many, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[0] = 6", "size 5"});
  EXPECT_EQ(sm_index_select(p.g, 1, flipped_many, &out), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"index[2] = -9", "size 7"});
  EXPECT_EQ(out, sentinel_tensor());
  // Its scratch word comes from the device's allocator: an injected fault
  // there fails the call and changes nothing.
  const sm_memory_stats_t f0 = stats(cuda(0));
  SM_ASSERT_OK(sm_debug_fail_alloc(1));
  EXPECT_EQ(sm_index_select(p.g, 2, many, &out), SM_ERR_OUT_OF_MEMORY);
  SM_ASSERT_OK(sm_debug_fail_alloc(0));
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(stats(cuda(0)).allocated_bytes, f0.allocated_bytes);
  // Valid indices, strided and expanded, both dtypes: the CPU's bytes.
  const std::vector<int64_t> raw = {3, -1, 0, 2, -4, 1, 4, -2, 3, 0};
  for (sm_dtype dt : {SM_INT64, SM_INT32}) {
    Pair base;
    base.c = dt == SM_INT64 ? make<int64_t>(raw, {10})
                            : make<int32_t>(std::vector<int32_t>(raw.begin(), raw.end()), {10});
    base.g = to_device(base.c, cuda(0));
    const Pair step2 = both(base, [](sm_tensor t, sm_tensor* o) { return sm_slice(t, 0, 1, 10, 2, o); });
    const Pair flip = both(base, [&](sm_tensor t, sm_tensor* o) { return sm_flip(t, d0, 1, o); });
    const Pair exp{expanded(-3, dt, cpu()), expanded(-3, dt, cuda(0))};
    const std::pair<const char*, const Pair*> idxs[] = {{"step 2", &step2}, {"flipped", &flip}};
    for (int dim = 0; dim < 3; ++dim) {
      for (const auto& [name, ix] : idxs) {
        Tensor c, g;
        const std::string what = std::string("index_select ") + name + " " + sm_dtype_name(dt) +
                                 " dim " + std::to_string(dim);
        const sm_status sc = sm_index_select(p.c, dim, ix->c, c.out());
        const sm_status sg = sm_index_select(p.g, dim, ix->g, g.out());
        ASSERT_EQ(sc, sg) << what << ": " << sm_last_error();
        if (sc == SM_OK) expect_same(c, g, what);
        // A CPU index for the GPU source: the same result.
        Tensor x;
        ASSERT_EQ(sm_index_select(p.g, dim, ix->c, x.out()), sc) << what << " (cpu index)";
        if (sc == SM_OK) expect_same(c, x, what + " (cpu index)");
      }
      // Expanded (1000 of them, not 2^40: the result is real here).
      Tensor ec, eg, ecg, short_c, short_g;
      SM_ASSERT_OK(sm_slice(exp.c, 0, 0, 1000, 1, short_c.out()));
      SM_ASSERT_OK(sm_slice(exp.g, 0, 0, 1000, 1, short_g.out()));
      SM_ASSERT_OK(sm_index_select(p.c, dim, short_c, ec.out()));
      SM_ASSERT_OK(sm_index_select(p.g, dim, short_g, eg.out()));
      SM_ASSERT_OK(sm_index_select(p.g, dim, short_c, ecg.out()));
      expect_same(ec, eg, "index_select expanded, dim " + std::to_string(dim));
      expect_same(ec, ecg, "index_select expanded cpu index, dim " + std::to_string(dim));
    }
  }
  // Every element size, a transposed source, a 0-d source and index.
  for (sm_dtype dt : {SM_BOOL, SM_FLOAT16, SM_INT64}) {
    Pair q = random_pair({40, 33}, dt, 93);
    Pair t = both(q, [](sm_tensor x, sm_tensor* o) { return sm_transpose(x, 0, 1, o); });
    Tensor ic = make<int32_t>({39, -40, 0, 17, 17}, {5}), ig = to_device(ic, cuda(0));
    Tensor c, g;
    SM_ASSERT_OK(sm_index_select(t.c, 1, ic, c.out()));
    SM_ASSERT_OK(sm_index_select(t.g, 1, ig, g.out()));
    expect_same(c, g, std::string("index_select of a transposed ") + sm_dtype_name(dt));
  }
  Pair s = random_pair({}, SM_FLOAT64, 94);
  Tensor i0c = make<int64_t>({-1}, {}), i0g = to_device(i0c, cuda(0));
  Tensor c0, g0;
  SM_ASSERT_OK(sm_index_select(s.c, 0, i0c, c0.out()));
  SM_ASSERT_OK(sm_index_select(s.g, 0, i0g, g0.out()));
  EXPECT_EQ(shape_of(g0), Shape{});
  expect_same(c0, g0, "index_select of a 0-d tensor");
}

// Over 2^31 elements: the planner switches to 64-bit index math. x[r, c] =
// (r + c) mod 256 built on the GPU, transposed, and rows of the result
// checked on the host. Needs ~4.3 GB of GPU memory.
TEST(CudaOps, MoreThan2To31Elements) {
  SMT_REQUIRE_CUDA();
  const int64_t R = (int64_t(1) << 16) + 3, C = (int64_t(1) << 15) + 1;  // 2^31 + 229379
  ASSERT_GT(R * C, int64_t(1) << 31);
  Tensor a, b, x;
  // a[r] = r mod 256: an int32 arange converted to uint8 (conversion wraps;
  // sm_arange itself refuses values its dtype cannot hold).
  {
    Tensor a32, b32;
    SM_ASSERT_OK(sm_arange(0, 1, R, SM_INT32, cuda(0), a32.out()));
    SM_ASSERT_OK(sm_arange(0, 1, C, SM_INT32, cuda(0), b32.out()));
    SM_ASSERT_OK(sm_to(a32, cuda(0), SM_UINT8, a.out(), nullptr));
    SM_ASSERT_OK(sm_to(b32, cuda(0), SM_UINT8, b.out(), nullptr));
  }
  const int64_t shape[2] = {R, C};
  const sm_status st = sm_empty(shape, 2, SM_UINT8, cuda(0), x.out());
  if (st == SM_ERR_OUT_OF_MEMORY) GTEST_SKIP() << "not enough GPU memory: " << sm_last_error();
  SM_ASSERT_OK(st);
  Tensor ac, br;
  SM_ASSERT_OK(sm_unsqueeze(a, 1, ac.out()));  // [R, 1]
  SM_ASSERT_OK(sm_unsqueeze(b, 0, br.out()));  // [1, C]
  SM_ASSERT_OK(sm_copy_into(x, ac));                       // x[r, c] = r mod 256
  SM_ASSERT_OK(sm_inplace_tensor(x, SM_OP_ADD, br, 1.0));  // + c, wrapping
  Tensor xt, y;
  SM_ASSERT_OK(sm_transpose(x, 0, 1, xt.out()));
  SM_ASSERT_OK(sm_contiguous(xt, SM_CONTIGUOUS, y.out(), nullptr));  // [C, R], tiled, 64-bit
  x.reset();
  for (int64_t c : {int64_t(0), int64_t(1), C / 2, C - 1}) {
    Tensor row;
    SM_ASSERT_OK(sm_select(y, 0, c, row.out()));
    const std::vector<uint8_t> v = read<uint8_t>(row);
    ASSERT_EQ(static_cast<int64_t>(v.size()), R);
    size_t bad = 0;
    for (int64_t r = 0; r < R; ++r) bad += v[static_cast<size_t>(r)] != static_cast<uint8_t>((r + c) & 255);
    EXPECT_EQ(bad, 0u) << "row " << c;
  }
  // A strided read across the 2^31 boundary: the last column of y.
  Tensor col;
  SM_ASSERT_OK(sm_select(y, 1, R - 1, col.out()));
  const std::vector<uint8_t> v = read<uint8_t>(col);
  ASSERT_EQ(static_cast<int64_t>(v.size()), C);
  size_t bad = 0;
  for (int64_t c = 0; c < C; ++c) bad += v[static_cast<size_t>(c)] != static_cast<uint8_t>((R - 1 + c) & 255);
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace smt
