// Constructors, metadata getters, lifetime (retain/release), storages,
// from_blob's deleter, copy_to_host.
#include <atomic>

#include "api_test_util.hpp"

using namespace smt;

TEST(Creation, EmptyMetadata) {
  const int64_t shape[3] = {2, 3, 4};
  Tensor t;
  SM_ASSERT_OK(sm_empty(shape, 3, SM_FLOAT32, cpu(), t.out()));
  ASSERT_TRUE(t);
  EXPECT_EQ(ndim_of(t), 3);
  expect_layout(t, {2, 3, 4}, {12, 4, 1}, 0);
  EXPECT_EQ(dtype_of(t), SM_FLOAT32);
  sm_device d{-5, -5};
  SM_ASSERT_OK(sm_device_of(t, &d));
  EXPECT_EQ(d.type, SM_DEVICE_CPU);
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(numel_of(t), 24);
  EXPECT_EQ(nbytes_of(t), 96);
  EXPECT_EQ(storage_nbytes_of(t), 96);
  EXPECT_NE(data_ptr_of(t), nullptr);
  EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 1);
  EXPECT_GE(version_of(t), 0);
  int ro = -1;
  SM_ASSERT_OK(sm_is_read_only(t, &ro));
  EXPECT_EQ(ro, 0);
}

TEST(Creation, EveryDtypeHasItsSize) {
  const int64_t shape[2] = {3, 5};
  for (sm_dtype d = 0; d < SM_NUM_DTYPES; ++d) {
    Tensor t;
    SM_ASSERT_OK(sm_empty(shape, 2, d, cpu(), t.out()));
    EXPECT_EQ(dtype_of(t), d);
    EXPECT_EQ(nbytes_of(t), static_cast<int64_t>(15 * sm_dtype_size(d))) << sm_dtype_name(d);
    Tensor z;
    SM_ASSERT_OK(sm_zeros(shape, 2, d, cpu(), z.out()));
    const std::vector<uint8_t> b = read_bytes(z);
    EXPECT_EQ(b, std::vector<uint8_t>(15 * sm_dtype_size(d), 0)) << sm_dtype_name(d);
  }
}

TEST(Creation, ZeroDimTensor) {
  Tensor t;
  SM_ASSERT_OK(sm_empty(nullptr, 0, SM_FLOAT64, cpu(), t.out()));
  EXPECT_EQ(ndim_of(t), 0);
  SM_EXPECT_OK(sm_shape(t, nullptr, 0));
  SM_EXPECT_OK(sm_strides(t, nullptr, 0));
  EXPECT_EQ(numel_of(t), 1);
  EXPECT_EQ(nbytes_of(t), 8);
  EXPECT_EQ(storage_nbytes_of(t), 8);
  EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 1);

  Tensor f;
  SM_ASSERT_OK(sm_full(nullptr, 0, -2.5, SM_FLOAT32, cpu(), f.out()));
  EXPECT_EQ(read<float>(f), std::vector<float>{-2.5f});
  const int32_t v = 42;
  Tensor h;
  SM_ASSERT_OK(sm_from_host(&v, nullptr, 0, SM_INT32, cpu(), h.out()));
  EXPECT_EQ(read<int32_t>(h), std::vector<int32_t>{42});
  Tensor z;
  SM_ASSERT_OK(sm_zeros(nullptr, 0, SM_INT64, cpu(), z.out()));
  EXPECT_EQ(read<int64_t>(z), std::vector<int64_t>{0});
}

TEST(Creation, SizeZeroTensor) {
  const int64_t shape[2] = {0, 3};
  Tensor t;
  SM_ASSERT_OK(sm_zeros(shape, 2, SM_FLOAT32, cpu(), t.out()));
  EXPECT_EQ(shape_of(t), (Shape{0, 3}));
  EXPECT_EQ(strides_of(t), (Shape{3, 1}));  // PyTorch's strides for an empty tensor
  EXPECT_EQ(numel_of(t), 0);
  EXPECT_EQ(nbytes_of(t), 0);
  EXPECT_EQ(storage_nbytes_of(t), 0);
  EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 1);
  // Copying out nothing is fine.
  uint8_t dst[4] = {7, 7, 7, 7};
  SM_EXPECT_OK(sm_copy_to_host(t, dst, sizeof dst));
  EXPECT_EQ(dst[0], 7);
  SM_EXPECT_OK(sm_copy_to_host(t, dst, 0));
  // From host with no data.
  Tensor h;
  SM_ASSERT_OK(sm_from_host(nullptr, shape, 2, SM_FLOAT32, cpu(), h.out()));
  EXPECT_EQ(numel_of(h), 0);
  Tensor f;
  SM_ASSERT_OK(sm_full(shape, 2, 1.0, SM_FLOAT32, cpu(), f.out()));
  EXPECT_EQ(numel_of(f), 0);
  Tensor a;
  SM_ASSERT_OK(sm_arange(0, 1, 0, SM_FLOAT32, cpu(), a.out()));
  EXPECT_EQ(shape_of(a), Shape{0});
}

TEST(Creation, FullConvertsTheValue) {
  const int64_t shape[2] = {2, 2};
  Tensor f;
  SM_ASSERT_OK(sm_full(shape, 2, 2.5, SM_FLOAT32, cpu(), f.out()));
  EXPECT_EQ(read<float>(f), std::vector<float>(4, 2.5f));
  Tensor i;
  SM_ASSERT_OK(sm_full(shape, 2, -7, SM_INT32, cpu(), i.out()));
  EXPECT_EQ(read<int32_t>(i), std::vector<int32_t>(4, -7));
  Tensor d;
  SM_ASSERT_OK(sm_full(shape, 2, 0.1, SM_FLOAT64, cpu(), d.out()));
  EXPECT_EQ(read<double>(d), std::vector<double>(4, 0.1));
  Tensor h;  // 1 + 2^-11 is a tie in float16: rounds to even, 1.0
  SM_ASSERT_OK(sm_full(shape, 2, 1.0 + std::ldexp(1.0, -11), SM_FLOAT16, cpu(), h.out()));
  EXPECT_EQ(read<uint16_t>(h), std::vector<uint16_t>(4, 0x3C00));
  Tensor b;
  SM_ASSERT_OK(sm_full(shape, 2, 1.0, SM_BOOL, cpu(), b.out()));
  EXPECT_EQ(read_bool(b), std::vector<uint8_t>(4, 1));
  Tensor bf;
  SM_ASSERT_OK(sm_full(shape, 2, -3.0, SM_BFLOAT16, cpu(), bf.out()));
  EXPECT_EQ(read<uint16_t>(bf), std::vector<uint16_t>(4, 0xC040));
}

TEST(Creation, Arange) {
  Tensor a;
  SM_ASSERT_OK(sm_arange(1.0, 0.5, 5, SM_FLOAT32, cpu(), a.out()));
  expect_layout(a, {5}, {1}, 0);
  EXPECT_EQ(read<float>(a), (std::vector<float>{1, 1.5f, 2, 2.5f, 3}));
  Tensor b;
  SM_ASSERT_OK(sm_arange(10, -3, 4, SM_INT64, cpu(), b.out()));
  EXPECT_EQ(read<int64_t>(b), (std::vector<int64_t>{10, 7, 4, 1}));
  Tensor c;
  SM_ASSERT_OK(sm_arange(0, 0.1, 4, SM_FLOAT64, cpu(), c.out()));
  const std::vector<double> cv = read<double>(c);
  ASSERT_EQ(cv.size(), 4u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(cv[k], 0 + k * 0.1) << k;  // computed in double
}

TEST(Creation, FromHostRoundTripsEveryDtype) {
  for (sm_dtype d = 0; d < SM_NUM_DTYPES; ++d) {
    const size_t isz = sm_dtype_size(d);
    std::vector<uint8_t> bytes(6 * isz);
    for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(k * 37 + 11);
    if (d == SM_BOOL)
      for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = k % 3 == 0;
    const int64_t shape[2] = {2, 3};
    Tensor t;
    SM_ASSERT_OK(sm_from_host(bytes.data(), shape, 2, d, cpu(), t.out()));
    EXPECT_EQ(read_bytes(t), bytes) << sm_dtype_name(d);
    // The tensor owns a copy: changing the source later changes nothing.
    std::vector<uint8_t> copy = bytes;
    bytes.assign(bytes.size(), 0);
    EXPECT_EQ(read_bytes(t), copy) << sm_dtype_name(d);
  }
}

TEST(Creation, EmptyStridedSizesTheStorageToTheReach) {
  {
    const int64_t shape[2] = {2, 3}, strides[2] = {1, 2};  // column-major
    Tensor t;
    SM_ASSERT_OK(sm_empty_strided(shape, strides, 2, SM_FLOAT32, cpu(), t.out()));
    expect_layout(t, {2, 3}, {1, 2}, 0);
    EXPECT_EQ(storage_nbytes_of(t), 24);
    EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 0);
    EXPECT_EQ(is_contig(t, SM_PRESERVE), 1);
  }
  {
    const int64_t shape[2] = {2, 3}, strides[2] = {4, 1};  // padded rows: reach 1*4 + 2 + 1
    Tensor t;
    SM_ASSERT_OK(sm_empty_strided(shape, strides, 2, SM_FLOAT32, cpu(), t.out()));
    EXPECT_EQ(storage_nbytes_of(t), 7 * 4);
    EXPECT_EQ(nbytes_of(t), 6 * 4);
  }
  {
    const int64_t shape[2] = {2, 3}, strides[2] = {0, 1};  // broadcast rows
    Tensor t;
    SM_ASSERT_OK(sm_empty_strided(shape, strides, 2, SM_INT16, cpu(), t.out()));
    EXPECT_EQ(storage_nbytes_of(t), 3 * 2);
  }
  {
    const int64_t shape[2] = {0, 3}, strides[2] = {3, 1};
    Tensor t;
    SM_ASSERT_OK(sm_empty_strided(shape, strides, 2, SM_FLOAT32, cpu(), t.out()));
    EXPECT_EQ(storage_nbytes_of(t), 0);
    EXPECT_EQ(numel_of(t), 0);
  }
}

TEST(Creation, EmptyStridedNegativeStrides) {
  const int64_t shape[2] = {2, 3}, strides[2] = {-3, -1};
  Tensor t;
  SM_ASSERT_OK(sm_empty_strided(shape, strides, 2, SM_FLOAT32, cpu(), t.out()));
  // Element [0,0] is the last of the 6 stored elements.
  expect_layout(t, {2, 3}, {-3, -1}, 5);
  EXPECT_EQ(storage_nbytes_of(t), 24);
  EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 0);
  Tensor src = iota<float>({2, 3});
  SM_ASSERT_OK(sm_copy_into(t, src));
  EXPECT_EQ(read<float>(t), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // In storage order the values are reversed.
  Tensor flat;
  const int64_t fshape[1] = {6}, fstrides[1] = {1};
  SM_ASSERT_OK(sm_as_strided(t, fshape, fstrides, 1, 0, flat.out()));
  EXPECT_EQ(read<float>(flat), (std::vector<float>{5, 4, 3, 2, 1, 0}));
}

TEST(Creation, RetainAndRelease) {
  const Live l0 = live();
  sm_tensor raw = nullptr;
  const int64_t shape[1] = {3};
  SM_ASSERT_OK(sm_zeros(shape, 1, SM_FLOAT32, cpu(), &raw));
  EXPECT_EQ(live().tensors, l0.tensors + 1);
  SM_ASSERT_OK(sm_tensor_retain(raw));
  EXPECT_EQ(live().tensors, l0.tensors + 1) << "retain adds an owner, not a handle";
  SM_ASSERT_OK(sm_tensor_release(raw));
  EXPECT_EQ(numel_of(raw), 3) << "still owned once";
  SM_ASSERT_OK(sm_tensor_release(raw));
  EXPECT_EQ(live(), l0);
  int64_t n = kSentinel64;
  EXPECT_EQ(sm_numel(raw, &n), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(n, kSentinel64);
  EXPECT_EQ(sm_tensor_release(raw), SM_ERR_INVALID_HANDLE) << "double release is detected";
  SM_EXPECT_OK(sm_tensor_release(nullptr));
}

TEST(Creation, ReleasedSlotReuseDoesNotRevive) {
  sm_tensor old = released_tensor();
  // New handles may reuse the slot; the old value must stay dead.
  std::vector<Tensor> fresh;
  for (int k = 0; k < 8; ++k) fresh.push_back(iota({2}));
  int32_t nd = kSentinel32;
  EXPECT_EQ(sm_ndim(old, &nd), SM_ERR_INVALID_HANDLE);
  EXPECT_EQ(nd, kSentinel32);
  for (auto& f : fresh) {
    EXPECT_NE(f.get(), old);
    EXPECT_EQ(numel_of(f), 2);
  }
}

TEST(Creation, DataPtrAndStorageOfAView) {
  Tensor base = iota<float>({1000});
  Tensor s;
  SM_ASSERT_OK(sm_slice(base, 0, 10, 12, 1, s.out()));
  EXPECT_EQ(offset_of(s), 10);
  EXPECT_EQ(static_cast<char*>(data_ptr_of(s)) - static_cast<char*>(data_ptr_of(base)), 40);
  // The hidden reference: two elements pin the whole storage.
  EXPECT_EQ(nbytes_of(s), 8);
  EXPECT_EQ(storage_nbytes_of(s), 4000);
  base.reset();
  EXPECT_EQ(storage_nbytes_of(s), 4000);
  EXPECT_EQ(read<float>(s), (std::vector<float>{10, 11}));
}

TEST(Creation, StorageHandles) {
  Tensor base = iota<float>({2, 5});
  Tensor s;
  SM_ASSERT_OK(sm_select(base, 0, 1, s.out()));  // offset 5
  Storage st;
  SM_ASSERT_OK(sm_tensor_storage(s, st.out()));
  int64_t nb = -1;
  SM_ASSERT_OK(sm_storage_size(st, &nb));
  EXPECT_EQ(nb, 40);
  void* p = nullptr;
  SM_ASSERT_OK(sm_storage_data_ptr(st, &p));
  EXPECT_EQ(p, data_ptr_of(base));
  EXPECT_EQ(static_cast<char*>(data_ptr_of(s)) - static_cast<char*>(p), 20);
  sm_device d{-1, -1};
  SM_ASSERT_OK(sm_storage_device(st, &d));
  EXPECT_EQ(d.type, SM_DEVICE_CPU);
  EXPECT_EQ(d.index, 0);

  // retain / release count owners.
  const Live l0 = live();
  SM_ASSERT_OK(sm_storage_retain(st));
  SM_ASSERT_OK(sm_storage_release(st));
  EXPECT_EQ(live(), l0);
  SM_EXPECT_OK(sm_storage_release(nullptr));

  // The storage outlives every tensor over it.
  base.reset();
  s.reset();
  SM_ASSERT_OK(sm_storage_size(st, &nb));
  EXPECT_EQ(nb, 40);
  const int64_t shape[2] = {2, 2}, strides[2] = {1, 5};
  Tensor t;
  SM_ASSERT_OK(sm_tensor_from_storage(st, shape, strides, 2, 3, SM_FLOAT32, t.out()));
  expect_layout(t, {2, 2}, {1, 5}, 3);
  EXPECT_EQ(read<float>(t), (std::vector<float>{3, 8, 4, 9}));
  Tensor t2;
  SM_ASSERT_OK(sm_tensor_from_storage(st, nullptr, nullptr, 0, 9, SM_FLOAT32, t2.out()));
  EXPECT_EQ(read<float>(t2), std::vector<float>{9});
  EXPECT_EQ(same_storage(t, t2), 1);
  // NULL strides: row-major.
  const int64_t shape3[1] = {3};
  Tensor t3;
  SM_ASSERT_OK(sm_tensor_from_storage(st, shape3, nullptr, 1, 7, SM_FLOAT32, t3.out()));
  EXPECT_EQ(read<float>(t3), (std::vector<float>{7, 8, 9}));
}

TEST(Creation, TensorFromStorageReinterpretsBytes) {
  Tensor f = make<float>({1.0f, -2.0f}, {2});
  Storage st;
  SM_ASSERT_OK(sm_tensor_storage(f, st.out()));
  const int64_t shape[1] = {2};
  Tensor i;
  SM_ASSERT_OK(sm_tensor_from_storage(st, shape, nullptr, 1, 0, SM_INT32, i.out()));
  EXPECT_EQ(read<int32_t>(i), (std::vector<int32_t>{0x3F800000, static_cast<int32_t>(0xC0000000u)}));
  EXPECT_EQ(same_storage(f, i), 1);
  // Same storage, same version counter.
  const int64_t v0 = version_of(f);
  SM_ASSERT_OK(sm_inplace_scalar(i, SM_OP_ZERO, 0, 0));
  EXPECT_EQ(version_of(f), v0 + 1);
  EXPECT_EQ(read<float>(f), (std::vector<float>{0, 0}));
  // Bounds use bytes: 8 bytes hold one int64 but not two.
  const int64_t one[1] = {1}, two[1] = {2};
  Tensor l;
  SM_EXPECT_OK(sm_tensor_from_storage(st, one, nullptr, 1, 0, SM_INT64, l.out()));
  sm_tensor bad = sentinel_tensor();
  EXPECT_EQ(sm_tensor_from_storage(st, two, nullptr, 1, 0, SM_INT64, &bad), SM_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(bad, sentinel_tensor());
  expect_error_mentions({"sm_tensor_from_storage"});
}

namespace {
struct BlobLog {
  std::atomic<int> calls{0};
  void* data = nullptr;
  void* ctx = nullptr;
};
void blob_deleter(void* data, void* ctx) {
  BlobLog* log = static_cast<BlobLog*>(ctx);
  log->data = data;
  log->ctx = ctx;
  log->calls.fetch_add(1);
}
}  // namespace

TEST(Creation, FromBlobIsZeroCopyAndCallsTheDeleterOnceAtTheEnd) {
  std::vector<float> mem = {0, 1, 2, 3, 4, 5};
  BlobLog log;
  const Live l0 = live();
  const int64_t shape[2] = {2, 3};
  Tensor t;
  SM_ASSERT_OK(sm_from_blob(mem.data(), shape, nullptr, 2, SM_FLOAT32, cpu(), blob_deleter,
                            &log, t.out()));
  expect_layout(t, {2, 3}, {3, 1}, 0);
  EXPECT_EQ(data_ptr_of(t), mem.data());
  EXPECT_EQ(storage_nbytes_of(t), 24);
  EXPECT_EQ(read<float>(t), mem);
  // Zero copy both ways.
  mem[4] = 40;
  EXPECT_EQ(read<float>(t)[4], 40.0f);
  SM_ASSERT_OK(sm_inplace_scalar(t, SM_OP_ADD, 1, 0));
  EXPECT_EQ(mem, (std::vector<float>{1, 2, 3, 4, 41, 6}));

  Tensor v;
  SM_ASSERT_OK(sm_transpose(t, 0, 1, v.out()));
  sm_tensor extra = t.get();
  SM_ASSERT_OK(sm_tensor_retain(extra));
  t.reset();
  EXPECT_EQ(log.calls.load(), 0) << "deleter ran while an owner was alive";
  SM_ASSERT_OK(sm_tensor_release(extra));
  EXPECT_EQ(log.calls.load(), 0) << "deleter ran while a view was alive";
  EXPECT_EQ(read<float>(v), (std::vector<float>{1, 4, 2, 41, 3, 6}));
  v.reset();
  EXPECT_EQ(log.calls.load(), 1);
  EXPECT_EQ(log.data, mem.data());
  EXPECT_EQ(log.ctx, &log);
  EXPECT_EQ(live(), l0);
}

TEST(Creation, FromBlobStorageHandleKeepsTheBlob) {
  std::vector<int32_t> mem = {1, 2, 3};
  BlobLog log;
  const int64_t shape[1] = {3};
  Tensor t;
  SM_ASSERT_OK(sm_from_blob(mem.data(), shape, nullptr, 1, SM_INT32, cpu(), blob_deleter, &log,
                            t.out()));
  Storage st;
  SM_ASSERT_OK(sm_tensor_storage(t, st.out()));
  t.reset();
  EXPECT_EQ(log.calls.load(), 0);
  st.reset();
  EXPECT_EQ(log.calls.load(), 1);
}

TEST(Creation, FromBlobWithStridesAndNoDeleter) {
  // Column-major 2x3 over 6 floats.
  std::vector<float> mem = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  Tensor t;
  SM_ASSERT_OK(sm_from_blob(mem.data(), shape, strides, 2, SM_FLOAT32, cpu(), nullptr, nullptr,
                            t.out()));
  expect_layout(t, {2, 3}, {1, 2}, 0);
  EXPECT_EQ(read<float>(t), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 0);
  EXPECT_EQ(is_contig(t, SM_PRESERVE), 1);
}

TEST(Creation, FromBlobFailureDoesNotCallTheDeleter) {
  std::vector<float> mem(4);
  BlobLog log;
  const int64_t bad_shape[1] = {-4};
  sm_tensor out = sentinel_tensor();
  EXPECT_EQ(sm_from_blob(mem.data(), bad_shape, nullptr, 1, SM_FLOAT32, cpu(), blob_deleter, &log,
                         &out),
            SM_ERR_SHAPE);
  EXPECT_EQ(out, sentinel_tensor());
  const int64_t shape[1] = {4};
  EXPECT_EQ(sm_from_blob(mem.data(), shape, nullptr, 1, SM_FLOAT32, cpu(), blob_deleter, &log,
                         nullptr),
            SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sm_from_blob(mem.data(), shape, nullptr, 1, SM_FLOAT32, sm_device{42, 0},
                         blob_deleter, &log, &out),
            SM_ERR_DEVICE);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(log.calls.load(), 0);
}

TEST(Creation, CopyToHostWritesExactlyNbytes) {
  Tensor t = make<int16_t>({1, -2, 3}, {3});
  std::vector<uint8_t> buf(16, 0xCC);
  SM_ASSERT_OK(sm_copy_to_host(t, buf.data(), buf.size()));
  int16_t got[3];
  std::memcpy(got, buf.data(), 6);
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], -2);
  EXPECT_EQ(got[2], 3);
  for (size_t k = 6; k < buf.size(); ++k) EXPECT_EQ(buf[k], 0xCC) << k;
  // Too small: refused, nothing written.
  std::fill(buf.begin(), buf.end(), 0xCC);
  EXPECT_EQ(sm_copy_to_host(t, buf.data(), 5), SM_ERR_INVALID_ARGUMENT);
  expect_error_mentions({"sm_copy_to_host", "5"});
  for (size_t k = 0; k < buf.size(); ++k) EXPECT_EQ(buf[k], 0xCC) << k;
}

TEST(Creation, CopyToHostOfStridedViewsIsRowMajor) {
  Tensor base = iota<int32_t>({3, 4});
  Tensor tr, fl;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, tr.out()));
  EXPECT_EQ(read<int32_t>(tr), (std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  const int32_t dims[1] = {1};
  SM_ASSERT_OK(sm_flip(base, dims, 1, fl.out()));
  EXPECT_EQ(read<int32_t>(fl), (std::vector<int32_t>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
}

// Empty tensors are always creatable and copyable, whatever their other
// sizes: dense strides that would pass int64 saturate (no element is ever
// addressed through them), in either dim order.
TEST(Creation, EmptyTensorsWithHugeOtherSizesAreCreatableAndCopyable) {
  const int64_t big = int64_t(1) << 62;
  const std::vector<Shape> shapes = {{0, big, 6}, {big, 6, 0}, {6, 0, big}, {big, 0, big, 3}};
  for (const Shape& sh : shapes) {
    SCOPED_TRACE(::testing::PrintToString(sh));
    Tensor t;
    SM_ASSERT_OK(sm_empty(sh.data(), static_cast<int32_t>(sh.size()), SM_FLOAT32, cpu(), t.out()));
    EXPECT_EQ(numel_of(t), 0);
    EXPECT_EQ(is_contig(t, SM_CONTIGUOUS), 1);
    for (int64_t st : strides_of(t)) EXPECT_GE(st, 1);
    Tensor c, cv, z;
    SM_ASSERT_OK(sm_clone(t, SM_PRESERVE, c.out()));
    EXPECT_EQ(shape_of(c), sh);
    SM_ASSERT_OK(sm_to(t, cpu(), SM_INT8, cv.out(), nullptr));
    EXPECT_EQ(shape_of(cv), sh);
    SM_ASSERT_OK(sm_zeros(sh.data(), static_cast<int32_t>(sh.size()), SM_INT64, cpu(), z.out()));
    SM_ASSERT_OK(sm_copy_into(z, t));
    // sm_empty_strided with any strides: clone and conversion work too.
    const Shape strides(sh.size(), 1);
    Tensor es, esc, est;
    SM_ASSERT_OK(sm_empty_strided(sh.data(), strides.data(), static_cast<int32_t>(sh.size()),
                                  SM_FLOAT64, cpu(), es.out()));
    SM_ASSERT_OK(sm_clone(es, SM_CONTIGUOUS, esc.out()));
    SM_ASSERT_OK(sm_clone(es, SM_PRESERVE, est.out()));
    Tensor conv;
    SM_ASSERT_OK(sm_to(es, cpu(), SM_FLOAT16, conv.out(), nullptr));
    EXPECT_EQ(shape_of(conv), sh);
  }
}

// PyTorch's full refuses a value its dtype cannot hold ("value cannot be
// converted to type int8_t without overflow"): torch.full((2,), 300,
// dtype=torch.int8), torch.full((2,), nan, dtype=torch.int8) and
// torch.full((2,), 1e6, dtype=torch.float16) all raise. Nothing is made.
TEST(Creation, FullRefusesValuesTheDtypeCannotHold) {
  const int64_t shape[1] = {2};
  struct Case {
    double v;
    sm_dtype d;
  };
  for (const Case c : {Case{300, SM_INT8}, Case{-129, SM_INT8}, Case{127.5, SM_INT8},
                       Case{-1, SM_UINT8}, Case{256, SM_UINT8}, Case{INFINITY, SM_INT32},
                       Case{NAN, SM_INT32}, Case{1e30, SM_INT64}, Case{9223372036854775808.0, SM_INT64},
                       Case{32768, SM_INT16}, Case{1e6, SM_FLOAT16}, Case{65520, SM_FLOAT16},
                       Case{1e300, SM_FLOAT32}, Case{-1e300, SM_BFLOAT16}}) {
    sm_tensor t = nullptr;
    EXPECT_EQ(sm_full(shape, 1, c.v, c.d, cpu(), &t), SM_ERR_DTYPE)
        << c.v << " into " << sm_dtype_name(c.d);
    EXPECT_EQ(t, nullptr);
    expect_error_mentions({"sm_full", sm_dtype_name(c.d), "without overflow"});
  }
  // The edges fit: int8 [-128, 127] (fractions truncate), int64 up to 2^63 - 1
  // as a double can say it (-2^63), float16 65504, inf and NaN for floats,
  // anything for bool (NaN is nonzero: true, as torch.full(..., nan, bool)).
  Tensor a, b, c, d, e, f;
  SM_ASSERT_OK(sm_full(shape, 1, -128, SM_INT8, cpu(), a.out()));
  EXPECT_EQ(read<int8_t>(a), std::vector<int8_t>(2, -128));
  SM_ASSERT_OK(sm_full(shape, 1, 126.9, SM_INT8, cpu(), b.out()));
  EXPECT_EQ(read<int8_t>(b), std::vector<int8_t>(2, 126));
  SM_ASSERT_OK(sm_full(shape, 1, -9223372036854775808.0, SM_INT64, cpu(), c.out()));
  EXPECT_EQ(read<int64_t>(c), std::vector<int64_t>(2, INT64_MIN));
  SM_ASSERT_OK(sm_full(shape, 1, 65504, SM_FLOAT16, cpu(), d.out()));
  EXPECT_EQ(read<uint16_t>(d), std::vector<uint16_t>(2, 0x7BFF));
  SM_ASSERT_OK(sm_full(shape, 1, -INFINITY, SM_FLOAT16, cpu(), e.out()));
  EXPECT_EQ(read<uint16_t>(e), std::vector<uint16_t>(2, 0xFC00));
  SM_ASSERT_OK(sm_full(shape, 1, NAN, SM_BOOL, cpu(), f.out()));
  EXPECT_EQ(read_bool(f), std::vector<uint8_t>(2, 1));
}

// Integer aranges must fit (the first and the last value bound them all);
// PyTorch wraps them instead (torch.arange(100, 130, dtype=torch.int8) ends
// 127, -128, -127): a listed difference (docs/PYTORCH_DIFFERENCES.md).
TEST(Creation, IntegerArangeRefusesValuesTheDtypeCannotHold) {
  sm_tensor t = nullptr;
  EXPECT_EQ(sm_arange(100, 1, 30, SM_INT8, cpu(), &t), SM_ERR_DTYPE);
  expect_error_mentions({"sm_arange", "last value", "int8"});
  EXPECT_EQ(sm_arange(300, -1, 5, SM_UINT8, cpu(), &t), SM_ERR_DTYPE);
  expect_error_mentions({"sm_arange", "start", "uint8"});
  EXPECT_EQ(sm_arange(NAN, 1, 1, SM_INT32, cpu(), &t), SM_ERR_DTYPE);
  EXPECT_EQ(sm_arange(0, 1, 257, SM_UINT8, cpu(), &t), SM_ERR_DTYPE);
  EXPECT_EQ(t, nullptr);
  Tensor ok, none, f16;
  SM_ASSERT_OK(sm_arange(0, 1, 256, SM_UINT8, cpu(), ok.out()));
  EXPECT_EQ(read<uint8_t>(ok).back(), 255);
  SM_ASSERT_OK(sm_arange(1e300, 1, 0, SM_INT8, cpu(), none.out()));  // no values, nothing to fit
  // Floats overflow to inf as PyTorch's and NumPy's do: torch.arange(0, 1e6,
  // 1e5, dtype=torch.float16) is [0, inf, ...].
  SM_ASSERT_OK(sm_arange(0, 1e5, 2, SM_FLOAT16, cpu(), f16.out()));
  EXPECT_EQ(read<uint16_t>(f16), (std::vector<uint16_t>{0x0000, 0x7C00}));
}
