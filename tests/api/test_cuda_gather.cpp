// index_select on CUDA tensors (one gather launch after one check of the
// index on its device), compared with the CPU backend on the same inputs:
// scalar gathers of 10^6 indices (random, repeated, int32 and int64, strided
// index views), row gathers in every unit width, gathers along a middle dim
// of permuted, sliced, flipped and broadcast views, empty and 0-d operands,
// out-of-range and negative indices (same status and message as the CPU,
// nothing returned, nothing left allocated, the library usable afterwards)
// and the index on the CPU or the GPU for a source on either. Skipped, with
// the reason, without a usable GPU.
#include "test_cuda_util.hpp"

#include <climits>

namespace smt {
namespace {

sm_device device_of(sm_tensor t) {
  sm_device d{-1, -1};
  EXPECT_EQ(sm_device_of(t, &d), SM_OK) << sm_last_error();
  return d;
}

// An index tensor on the CPU (c) and on cuda:0 (g), int32 or int64.
Pair index_pair(const std::vector<int64_t>& v, sm_dtype dt) {
  Pair p;
  const Shape shape = {static_cast<int64_t>(v.size())};
  if (dt == SM_INT64) {
    p.c = make<int64_t>(v, shape);
  } else {
    std::vector<int32_t> v32(v.begin(), v.end());
    p.c = make<int32_t>(v32, shape);
  }
  p.g = to_device(p.c, cuda(0));
  return p;
}

// n values in [lo, hi), seeded.
std::vector<int64_t> random_values(int64_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo));
  return v;
}

// index_select(src, dim, idx) on the CPU pair member and on the CUDA one,
// with the index on the GPU and on the CPU (moved over): the CPU's bytes
// and shape each time, the result on the GPU.
void expect_gather_same(const Pair& src, int32_t dim, const Pair& idx, const std::string& what) {
  Tensor c, g, g_host_index;
  SM_ASSERT_OK(sm_index_select(src.c, dim, idx.c, c.out()));
  SM_ASSERT_OK(sm_index_select(src.g, dim, idx.g, g.out()));
  EXPECT_EQ(device_of(g).type, SM_DEVICE_CUDA) << what;
  expect_same(c, g, what);
  SM_ASSERT_OK(sm_index_select(src.g, dim, idx.c, g_host_index.out()));
  expect_same(c, g_host_index, what + " (index on the CPU)");
}

// A view applied to both members of a pair (the index too).
template <class F>
Pair view_of(const Pair& p, F f) {
  return both(p, f);
}

// ---- scalar gathers -------------------------------------------------------------------

// 10^6 indices into 3 x 10^6 fp32 values: uniform random (negatives
// included: they count from the end), a few hot values repeated all over,
// one value everywhere (a real index, not an expanded one), sorted runs;
// int64 and int32; plus strided and flipped views of a longer index.
TEST(CudaGather, MillionScalarIndices) {
  SMT_REQUIRE_CUDA();
  const int64_t size = 3000000, n = 1000000;
  Pair src = random_pair({size}, SM_FLOAT32, 1);
  std::vector<int64_t> hot = random_values(n, 0, 7, 3);
  for (auto& v : hot) v = v * 4099 - 3;  // -3, 4096, ... and their repeats
  std::vector<int64_t> sorted = random_values(n, 0, size, 4);
  std::sort(sorted.begin(), sorted.end());
  const std::vector<std::pair<const char*, std::vector<int64_t>>> cases = {
      {"uniform", random_values(n, -size, size, 2)},
      {"hot values", hot},
      {"one value", std::vector<int64_t>(static_cast<size_t>(n), size - 1)},
      {"sorted", sorted},
  };
  for (sm_dtype it : {SM_INT64, SM_INT32}) {
    for (const auto& c : cases) {
      const Pair idx = index_pair(c.second, it);
      expect_gather_same(src, 0, idx, std::string(c.first) + " " + sm_dtype_name(it));
      if (HasFatalFailure()) return;
    }
    // Every third element of a 3 x 10^6 index, and the whole one flipped.
    const Pair longer = index_pair(random_values(3 * n, -size, size, 5), it);
    const Pair stepped = view_of(longer, [](sm_tensor t, sm_tensor* o) {
      return sm_slice(t, 0, 1, SM_SLICE_NONE, 3, o);
    });
    expect_gather_same(src, 0, stepped, std::string("stepped index ") + sm_dtype_name(it));
    const int32_t d0[1] = {0};
    const Pair flipped = view_of(longer, [&](sm_tensor t, sm_tensor* o) { return sm_flip(t, d0, 1, o); });
    expect_gather_same(src, 0, flipped, std::string("flipped index ") + sm_dtype_name(it));
  }
}

// Scalar gathers of every element width (1 to 16 bytes, complex128 at an
// 8-byte address too), 1-d and along the innermost dim of a matrix.
TEST(CudaGather, ScalarGathersOfEveryWidth) {
  SMT_REQUIRE_CUDA();
  uint32_t seed = 20;
  for (sm_dtype dt : {SM_BOOL, SM_INT8, SM_FLOAT16, SM_BFLOAT16, SM_FLOAT32, SM_INT64, SM_FLOAT64,
                      SM_COMPLEX64, SM_COMPLEX128}) {
    const std::string name = sm_dtype_name(dt);
    Pair v = random_pair({100003}, dt, seed++);
    const Pair idx = index_pair(random_values(200000, -100003, 100003, seed++), SM_INT64);
    expect_gather_same(v, 0, idx, "1-d " + name);
    // One element in: every address is off any vector alignment.
    Pair shifted = view_of(v, [](sm_tensor t, sm_tensor* o) { return sm_narrow(t, 0, 1, 100001, o); });
    const Pair idx2 = index_pair(random_values(5000, -100001, 100001, seed++), SM_INT32);
    expect_gather_same(shifted, 0, idx2, "1-d shifted by one " + name);
    Pair m = random_pair({37, 301}, dt, seed++);
    const Pair cols = index_pair(random_values(777, -301, 301, seed++), SM_INT32);
    expect_gather_same(m, 1, cols, "columns " + name);
    expect_gather_same(m, -1, cols, "columns (dim -1) " + name);
    if (HasFatalFailure()) return;
  }
}

// ---- row gathers ------------------------------------------------------------------------

// Rows that are contiguous in both operands move in vector units: every
// width (rows of 2, 4, 8 and 16-byte multiples), row lengths that allow
// none, sources shifted or padded so that only narrower units (or elements)
// fit, and rows of a 3-d tensor (dims after the selected one merged).
TEST(CudaGather, RowGathers) {
  SMT_REQUIRE_CUDA();
  struct Rows {
    Shape shape;
    sm_dtype dt;
  };
  const std::vector<Rows> all = {
      {{4000, 256}, SM_FLOAT32},  {{3000, 6}, SM_FLOAT16},   {{3000, 3}, SM_FLOAT64},
      {{3000, 16}, SM_INT8},      {{3000, 2}, SM_INT8},      {{3000, 7}, SM_FLOAT32},
      {{2000, 4}, SM_COMPLEX128}, {{2000, 5}, SM_COMPLEX64}, {{500, 9, 8}, SM_FLOAT32},
      {{500, 3, 5}, SM_BOOL},     {{1, 64}, SM_FLOAT32},
  };
  uint32_t seed = 40;
  for (const Rows& r : all) {
    const std::string name = std::to_string(r.shape[0]) + " rows of " + std::to_string(r.shape[1]) +
                             (r.shape.size() > 2 ? "x" + std::to_string(r.shape[2]) : "") + " " +
                             sm_dtype_name(r.dt);
    Pair src = random_pair(r.shape, r.dt, seed++);
    const int64_t rows = r.shape[0];
    for (sm_dtype it : {SM_INT64, SM_INT32}) {
      const Pair idx = index_pair(random_values(20000, -rows, rows, seed++), it);
      expect_gather_same(src, 0, idx, name + " " + sm_dtype_name(it));
    }
    // Rows without their first element (every row start off alignment) and
    // rows of every other row (twice the stride).
    if (r.shape.size() == 2 && r.shape[1] > 1) {
      Pair tail = view_of(src, [&](sm_tensor t, sm_tensor* o) {
        return sm_narrow(t, 1, 1, r.shape[1] - 1, o);
      });
      const Pair idx = index_pair(random_values(3000, -rows, rows, seed++), SM_INT64);
      expect_gather_same(tail, 0, idx, name + " without column 0");
    }
    Pair every_other = view_of(src, [](sm_tensor t, sm_tensor* o) {
      return sm_slice(t, 0, 0, SM_SLICE_NONE, 2, o);
    });
    const int64_t half = (rows + 1) / 2;
    const Pair idx = index_pair(random_values(3000, -half, half, seed++), SM_INT64);
    expect_gather_same(every_other, 0, idx, name + " every other row");
    if (HasFatalFailure()) return;
  }
  // The benchmark's shape at a smaller count: 10^4 of 10^5 rows of 256 fp32.
  Pair big = random_pair({100000, 256}, SM_FLOAT32, seed++);
  const Pair idx = index_pair(random_values(10000, 0, 100000, seed++), SM_INT64);
  expect_gather_same(big, 0, idx, "10^4 of 10^5 rows of 256 fp32");
}

// ---- views ------------------------------------------------------------------------------

// Gathers along a middle dim of views whose memory order is not their
// logical one: permuted, stepped, flipped, broadcast, transposed; and along
// every dim of a permuted 4-d view.
TEST(CudaGather, MiddleDimOfPermutedAndStridedViews) {
  SMT_REQUIRE_CUDA();
  uint32_t seed = 60;
  Pair base = random_pair({8, 30, 12}, SM_FLOAT32, seed++);
  const int32_t perm[3] = {2, 0, 1};   // [12, 8, 30]
  const int32_t flip02[2] = {0, 2};
  const int64_t bshape[3] = {5, 30, 12};
  Pair row = view_of(base, [](sm_tensor t, sm_tensor* o) { return sm_narrow(t, 0, 3, 1, o); });
  struct V {
    const char* name;
    Pair p;
  };
  std::vector<V> views;
  views.push_back({"contiguous", view_of(base, [](sm_tensor t, sm_tensor* o) {
                     return sm_narrow(t, 0, 0, 8, o);
                   })});
  views.push_back({"permuted (2,0,1)", view_of(base, [&](sm_tensor t, sm_tensor* o) {
                     return sm_permute(t, perm, 3, o);
                   })});
  views.push_back({"stepped", view_of(base, [](sm_tensor t, sm_tensor* o) {
                     return sm_slice(t, 2, 1, SM_SLICE_NONE, 2, o);
                   })});
  views.push_back({"flipped (0,2)", view_of(base, [&](sm_tensor t, sm_tensor* o) {
                     return sm_flip(t, flip02, 2, o);
                   })});
  views.push_back({"broadcast dim 0", view_of(row, [&](sm_tensor t, sm_tensor* o) {
                     return sm_expand(t, bshape, 3, o);
                   })});
  views.push_back({"transposed (0,2)", view_of(base, [](sm_tensor t, sm_tensor* o) {
                     return sm_transpose(t, 0, 2, o);
                   })});
  for (const V& v : views) {
    const Shape s = shape_of(v.p.g);
    for (sm_dtype it : {SM_INT64, SM_INT32}) {
      const Pair idx = index_pair(random_values(41, -s[1], s[1], seed++), it);
      expect_gather_same(v.p, 1, idx, std::string(v.name) + " dim 1 " + sm_dtype_name(it));
    }
    if (HasFatalFailure()) return;
  }
  Pair b4 = random_pair({6, 5, 4, 16}, SM_FLOAT16, seed++);
  const int32_t p4[4] = {3, 1, 0, 2};
  Pair v4 = view_of(b4, [&](sm_tensor t, sm_tensor* o) { return sm_permute(t, p4, 4, o); });
  const Shape s4 = shape_of(v4.g);
  for (int32_t dim = 0; dim < 4; ++dim) {
    const Pair idx = index_pair(random_values(13, -s4[static_cast<size_t>(dim)], s4[static_cast<size_t>(dim)], seed++),
                                SM_INT64);
    expect_gather_same(v4, dim, idx, "4-d permuted, dim " + std::to_string(dim));
  }
}

// ---- empty and 0-d --------------------------------------------------------------------------

TEST(CudaGather, EmptyIndexAndEmptySource) {
  SMT_REQUIRE_CUDA();
  Pair m = random_pair({7, 9}, SM_FLOAT32, 80);
  for (sm_dtype it : {SM_INT64, SM_INT32}) {
    const Pair none = index_pair({}, it);
    for (int32_t dim : {0, 1}) {
      Tensor c, g;
      SM_ASSERT_OK(sm_index_select(m.c, dim, none.c, c.out()));
      SM_ASSERT_OK(sm_index_select(m.g, dim, none.g, g.out()));
      EXPECT_EQ(shape_of(g), shape_of(c));
      EXPECT_EQ(numel_of(g), 0);
      EXPECT_EQ(device_of(g).type, SM_DEVICE_CUDA);
    }
  }
  // A source empty along another dim: the index is still checked (in range
  // here), the result is empty.
  Pair e = random_pair({0, 5}, SM_FLOAT32, 81);
  const Pair idx = index_pair({1, -1, 4}, SM_INT64);
  Tensor c, g;
  SM_ASSERT_OK(sm_index_select(e.c, 1, idx.c, c.out()));
  SM_ASSERT_OK(sm_index_select(e.g, 1, idx.g, g.out()));
  EXPECT_EQ(shape_of(g), (Shape{0, 3}));
  EXPECT_EQ(shape_of(c), shape_of(g));
}

// A 0-d source takes exactly one index value (0-d or 1-element) and gives a
// 0-d result, as on the CPU; other counts and bad values are refused alike.
TEST(CudaGather, ZeroDimSource) {
  SMT_REQUIRE_CUDA();
  for (sm_dtype dt : {SM_FLOAT64, SM_INT8, SM_COMPLEX128}) {
    Pair s = random_pair({}, dt, 90);
    for (int64_t v : {int64_t(0), int64_t(-1)}) {
      Pair i0;
      i0.c = make<int64_t>({v}, {});
      i0.g = to_device(i0.c, cuda(0));
      expect_gather_same(s, 0, i0, std::string("0-d index ") + std::to_string(v));
      const Pair i1 = index_pair({v}, SM_INT32);
      expect_gather_same(s, 0, i1, std::string("1-element index ") + std::to_string(v));
      Tensor r;
      SM_ASSERT_OK(sm_index_select(s.g, 0, i1.g, r.out()));
      EXPECT_EQ(shape_of(r), Shape{});
    }
    const std::vector<std::pair<std::vector<int64_t>, sm_status>> refusals = {
        {{0, 0, 0}, SM_ERR_SHAPE}, {{}, SM_ERR_SHAPE}, {{1}, SM_ERR_OUT_OF_BOUNDS},
        {{-2}, SM_ERR_OUT_OF_BOUNDS}};
    for (const auto& bad : refusals) {
      const Pair idx = index_pair(bad.first, SM_INT64);
      sm_tensor oc = sentinel_tensor(), og = sentinel_tensor();
      EXPECT_EQ(sm_index_select(s.c, 0, idx.c, &oc), bad.second);
      const std::string cpu_msg = sm_last_error();
      EXPECT_EQ(sm_index_select(s.g, 0, idx.g, &og), bad.second);
      EXPECT_EQ(std::string(sm_last_error()), cpu_msg);
      EXPECT_EQ(oc, sentinel_tensor());
      EXPECT_EQ(og, sentinel_tensor());
    }
  }
}

// ---- refusals --------------------------------------------------------------------------------

// Indices outside [-size, size) are refused before anything is allocated or
// written, with the CPU's status and message (the first bad position and
// its value), wherever the index lives; in-range negatives wrap (the
// boundaries -size and size - 1 are fine). The call leaves nothing behind
// (no result, no memory) and the library works afterwards.
TEST(CudaGather, OutOfRangeIndicesAreRefusedLikeTheCpu) {
  SMT_REQUIRE_CUDA();
  Pair src = random_pair({1000, 8}, SM_FLOAT32, 100);
  const int64_t size = 1000, n = 1000000;
  std::vector<int64_t> good = random_values(n, -size, size, 101);
  good[0] = -size;
  good[1] = size - 1;
  for (sm_dtype it : {SM_INT64, SM_INT32}) {
    const int64_t lo = it == SM_INT64 ? INT64_MIN : INT32_MIN;
    const int64_t hi = it == SM_INT64 ? INT64_MAX : INT32_MAX;
    for (const auto& bad : std::vector<std::vector<std::pair<int64_t, int64_t>>>{
             {{777777, size}, {900000, -size - 1}},  // first of two
             {{999999, -size - 1}},                  // the last one
             {{0, size}},                            // the first one
             {{123456, hi}, {500000, lo}},           // the type's extremes
             {{5, lo}}}) {
      std::vector<int64_t> v = good;
      for (const auto& b : bad) v[static_cast<size_t>(b.first)] = b.second;
      const Pair idx = index_pair(v, it);
      const std::string what = std::string(sm_dtype_name(it)) + " bad at " + std::to_string(bad[0].first);
      sm_tensor oc = sentinel_tensor();
      ASSERT_EQ(sm_index_select(src.c, 0, idx.c, &oc), SM_ERR_OUT_OF_BOUNDS) << what;
      const std::string cpu_msg = sm_last_error();
      EXPECT_NE(cpu_msg.find("index[" + std::to_string(bad[0].first) + "] = " + std::to_string(bad[0].second)),
                std::string::npos)
          << cpu_msg;
      const sm_memory_stats_t s0 = stats(cuda(0));
      for (const Tensor* index : {&idx.g, &idx.c}) {
        sm_tensor og = sentinel_tensor();
        EXPECT_EQ(sm_index_select(src.g, 0, *index, &og), SM_ERR_OUT_OF_BOUNDS) << what;
        EXPECT_EQ(std::string(sm_last_error()), cpu_msg) << what;
        EXPECT_EQ(og, sentinel_tensor()) << what;
      }
      const sm_memory_stats_t s1 = stats(cuda(0));
      EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes) << what << ": something left allocated";
      EXPECT_EQ(s1.active_storages, s0.active_storages) << what;
      // The index on the GPU for a CPU source: checked on the GPU, the same refusal.
      sm_tensor oh = sentinel_tensor();
      EXPECT_EQ(sm_index_select(src.c, 0, idx.g, &oh), SM_ERR_OUT_OF_BOUNDS) << what;
      EXPECT_EQ(std::string(sm_last_error()), cpu_msg) << what;
      EXPECT_EQ(oh, sentinel_tensor()) << what;
    }
    // Usable afterwards: the same index, repaired, gathers as on the CPU.
    const Pair ok = index_pair(good, it);
    expect_gather_same(src, 0, ok, std::string("after refusals ") + sm_dtype_name(it));
    if (HasFatalFailure()) return;
  }
  // Along dim 1 (size 8), the first bad position of a short index.
  const Pair idx = index_pair({0, 7, -8, 8, -9}, SM_INT32);
  sm_tensor o = sentinel_tensor();
  EXPECT_EQ(sm_index_select(src.g, 1, idx.g, &o), SM_ERR_OUT_OF_BOUNDS);
  expect_error_mentions({"sm_index_select", "index[3] = 8", "size 8"});
  EXPECT_EQ(o, sentinel_tensor());
  const Pair fixed = index_pair({0, 7, -8, 3, -1}, SM_INT32);
  expect_gather_same(src, 1, fixed, "dim 1 after a refusal");
}

// The index may live on the CPU or the GPU whatever the source's device:
// the same result as the CPU's, on the source's device.
TEST(CudaGather, IndexOnEitherDevice) {
  SMT_REQUIRE_CUDA();
  Pair src = random_pair({300, 17}, SM_FLOAT64, 110);
  for (sm_dtype it : {SM_INT64, SM_INT32}) {
    const Pair idx = index_pair(random_values(5000, -300, 300, 111), it);
    Tensor ref, cg;
    SM_ASSERT_OK(sm_index_select(src.c, 0, idx.c, ref.out()));
    SM_ASSERT_OK(sm_index_select(src.c, 0, idx.g, cg.out()));  // CPU source, GPU index
    EXPECT_EQ(device_of(cg).type, SM_DEVICE_CPU);
    expect_same(ref, cg, std::string("CPU source, GPU index ") + sm_dtype_name(it));
    expect_gather_same(src, 0, idx, std::string("GPU source ") + sm_dtype_name(it));
    // An expanded GPU index: checked through its one element.
    Pair one = index_pair({-7}, it);
    const int64_t shape[1] = {100000};
    Pair many = both(one, [&](sm_tensor t, sm_tensor* o) { return sm_expand(t, shape, 1, o); });
    expect_gather_same(src, 0, many, std::string("expanded index ") + sm_dtype_name(it));
  }
}

// Non-index dtypes and 2-d indices are refused before the device is asked,
// as on the CPU.
TEST(CudaGather, BadIndexTensorsAreRefusedLikeTheCpu) {
  SMT_REQUIRE_CUDA();
  Pair src = random_pair({10, 4}, SM_FLOAT32, 120);
  Pair f = random_pair({3}, SM_FLOAT32, 121);
  Pair i16 = random_pair({3}, SM_INT16, 122);
  Pair two_d;
  two_d.c = make<int64_t>({0, 1, 2, 3}, {2, 2});
  two_d.g = to_device(two_d.c, cuda(0));
  for (const Pair* idx : {&f, &i16, &two_d}) {
    sm_tensor oc = sentinel_tensor(), og = sentinel_tensor();
    const sm_status sc = sm_index_select(src.c, 0, idx->c, &oc);
    const std::string cpu_msg = sm_last_error();
    EXPECT_NE(sc, SM_OK);
    EXPECT_EQ(sm_index_select(src.g, 0, idx->g, &og), sc);
    EXPECT_EQ(std::string(sm_last_error()), cpu_msg);
    EXPECT_EQ(og, sentinel_tensor());
  }
}

}  // namespace
}  // namespace smt
