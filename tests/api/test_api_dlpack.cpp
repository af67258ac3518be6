// DLPack through the C API: zero-copy export (legacy, versioned, _ex with
// normalization) and import (deleter exactly once, read-only flag).
#include <atomic>
#include <functional>

#include "api_test_util.hpp"
#include "stridemem_dlpack.h"

using namespace smt;

namespace {

std::atomic<int> g_legacy_deleted{0};
std::atomic<int> g_versioned_deleted{0};

struct Producer {
  std::vector<float> data;
  int64_t shape[2];
  int64_t strides[2];
};

void legacy_deleter(sm_DLManagedTensor* self) {
  delete static_cast<Producer*>(self->manager_ctx);
  delete self;
  g_legacy_deleted.fetch_add(1);
}
void versioned_deleter(sm_DLManagedTensorVersioned* self) {
  delete static_cast<Producer*>(self->manager_ctx);
  delete self;
  g_versioned_deleted.fetch_add(1);
}

// A 2x3 float32 tensor [[0,1,2],[3,4,5]], optionally column-major strides.
sm_DLManagedTensor* make_legacy(bool col_major = false) {
  auto* p = new Producer{{0, 1, 2, 3, 4, 5}, {2, 3}, {3, 1}};
  if (col_major) {
    p->data = {0, 3, 1, 4, 2, 5};
    p->strides[0] = 1;
    p->strides[1] = 2;
  }
  auto* m = new sm_DLManagedTensor{};
  m->dl_tensor.data = p->data.data();
  m->dl_tensor.device = sm_DLDevice{sm_kDLCPU, 0};
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype = sm_DLDataType{sm_kDLFloat, 32, 1};
  m->dl_tensor.shape = p->shape;
  m->dl_tensor.strides = p->strides;
  m->dl_tensor.byte_offset = 0;
  m->manager_ctx = p;
  m->deleter = legacy_deleter;
  return m;
}

sm_DLManagedTensorVersioned* make_versioned(uint64_t flags) {
  auto* p = new Producer{{0, 1, 2, 3, 4, 5}, {2, 3}, {3, 1}};
  auto* m = new sm_DLManagedTensorVersioned{};
  m->version = sm_DLPackVersion{SM_DLPACK_MAJOR_VERSION, SM_DLPACK_MINOR_VERSION};
  m->dl_tensor.data = p->data.data();
  m->dl_tensor.device = sm_DLDevice{sm_kDLCPU, 0};
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype = sm_DLDataType{sm_kDLFloat, 32, 1};
  m->dl_tensor.shape = p->shape;
  m->dl_tensor.strides = nullptr;  // row-major
  m->manager_ctx = p;
  m->deleter = versioned_deleter;
  m->flags = flags;
  return m;
}

}  // namespace

TEST(DLPack, ExportLegacyIsZeroCopyAndKeepsTheStorage) {
  const Live l0 = live();
  Tensor base = iota<float>({3, 4});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
  void* raw = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(t, 0, &raw));
  auto* m = static_cast<sm_DLManagedTensor*>(raw);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dl_tensor.data, data_ptr_of(t));
  EXPECT_EQ(m->dl_tensor.byte_offset, 0u);
  EXPECT_EQ(m->dl_tensor.device.device_type, sm_kDLCPU);
  EXPECT_EQ(m->dl_tensor.device.device_id, 0);
  ASSERT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.dtype.code, sm_kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(m->dl_tensor.dtype.lanes, 1);
  EXPECT_EQ(m->dl_tensor.shape[0], 4);
  EXPECT_EQ(m->dl_tensor.shape[1], 3);
  ASSERT_NE(m->dl_tensor.strides, nullptr);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 4);
  // The export keeps the storage alive after every handle is gone.
  t.reset();
  base.reset();
  const float* d = static_cast<const float*>(m->dl_tensor.data);
  EXPECT_EQ(d[1 * 1 + 2 * 4], 9.0f);  // [1][2] of the transpose = base[2][1]
  ASSERT_NE(m->deleter, nullptr);
  m->deleter(m);
  EXPECT_EQ(live(), l0);
}

TEST(DLPack, ExportVersionedAndNegativeStrides) {
  Tensor base = iota<float>({2, 3});
  Tensor f;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{1}.data(), 1, f.out()));
  void* raw = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(f, 1, &raw));
  auto* m = static_cast<sm_DLManagedTensorVersioned*>(raw);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->flags & SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_EQ(m->dl_tensor.data, data_ptr_of(f));
  ASSERT_NE(m->dl_tensor.strides, nullptr);
  EXPECT_EQ(m->dl_tensor.strides[1], -1) << "negative strides exported as is";
  m->deleter(m);

  // Normalizing export: a dense copy, flagged, and *copied says so.
  int copied = -1;
  SM_ASSERT_OK(sm_to_dlpack_ex(f, SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE, nullptr, &raw, &copied));
  m = static_cast<sm_DLManagedTensorVersioned*>(raw);
  EXPECT_EQ(copied, 1);
  EXPECT_NE(m->flags & SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_NE(m->dl_tensor.data, data_ptr_of(f));
  const float* d = static_cast<const float*>(m->dl_tensor.data);
  const int64_t* st = m->dl_tensor.strides;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      const int64_t off = st ? i * st[0] + j * st[1] : i * 3 + j;
      EXPECT_EQ(d[off], static_cast<float>(i * 3 + (2 - j)));
    }
  m->deleter(m);
  // Normalizing a tensor without negative strides stays zero-copy.
  SM_ASSERT_OK(sm_to_dlpack_ex(base, SM_DLPACK_NORMALIZE, nullptr, &raw, &copied));
  auto* lm = static_cast<sm_DLManagedTensor*>(raw);
  EXPECT_EQ(copied, 0);
  EXPECT_EQ(lm->dl_tensor.data, data_ptr_of(base));
  lm->deleter(lm);
}

// The copy modes of sm_to_dlpack_ex: COPY always exports a fresh row-major
// copy (flagged, *copied = 1); NO_COPY refuses what would need one and
// writes nothing; the two together, or unknown bits, are invalid.
TEST(DLPack, ExportCopyModes) {
  Tensor base = iota<float>({2, 3});
  Tensor t;
  SM_ASSERT_OK(sm_transpose(base, 0, 1, t.out()));
  void* raw = nullptr;
  int copied = -1;
  SM_ASSERT_OK(sm_to_dlpack_ex(t, SM_DLPACK_VERSIONED | SM_DLPACK_COPY, nullptr, &raw, &copied));
  auto* m = static_cast<sm_DLManagedTensorVersioned*>(raw);
  EXPECT_EQ(copied, 1);
  EXPECT_NE(m->flags & SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_NE(m->dl_tensor.data, data_ptr_of(t));
  ASSERT_NE(m->dl_tensor.strides, nullptr);
  EXPECT_EQ(m->dl_tensor.strides[0], 2);
  EXPECT_EQ(m->dl_tensor.strides[1], 1);
  const float* d = static_cast<const float*>(m->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(d, d + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  m->deleter(m);

  // NO_COPY: a plain export is fine ...
  SM_ASSERT_OK(sm_to_dlpack_ex(t, SM_DLPACK_NO_COPY, nullptr, &raw, &copied));
  auto* lm = static_cast<sm_DLManagedTensor*>(raw);
  EXPECT_EQ(copied, 0);
  EXPECT_EQ(lm->dl_tensor.data, data_ptr_of(t));
  lm->deleter(lm);
  // ... normalizing negative strides is not, and nothing is written.
  Tensor f;
  SM_ASSERT_OK(sm_flip(base, std::vector<int32_t>{1}.data(), 1, f.out()));
  const Live l0 = live();
  raw = reinterpret_cast<void*>(uintptr_t(0xDEADBEE0));
  copied = -1;
  SM_EXPECT_STATUS(sm_to_dlpack_ex(f, SM_DLPACK_NORMALIZE | SM_DLPACK_NO_COPY, nullptr, &raw, &copied),
                   SM_ERR_UNSUPPORTED);
  expect_error_mentions({"sm_to_dlpack_ex", "NO_COPY"});
  EXPECT_EQ(raw, reinterpret_cast<void*>(uintptr_t(0xDEADBEE0)));
  EXPECT_EQ(copied, -1);
  EXPECT_EQ(live(), l0);
  SM_EXPECT_STATUS(sm_to_dlpack_ex(t, SM_DLPACK_COPY | SM_DLPACK_NO_COPY, nullptr, &raw, &copied),
                   SM_ERR_INVALID_ARGUMENT);
  SM_EXPECT_STATUS(sm_to_dlpack_ex(t, 16u, nullptr, &raw, &copied), SM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(copied, -1);
}

// The consumer's device: the tensor's own is zero-copy; a device that does
// not exist is SM_ERR_DEVICE (other devices are covered by the CUDA tests).
TEST(DLPack, ExportToADevice) {
  Tensor base = iota<float>({4});
  void* raw = nullptr;
  int copied = -1;
  const sm_device here = cpu();
  SM_ASSERT_OK(sm_to_dlpack_ex(base, 0, &here, &raw, &copied));
  auto* lm = static_cast<sm_DLManagedTensor*>(raw);
  EXPECT_EQ(copied, 0);
  EXPECT_EQ(lm->dl_tensor.data, data_ptr_of(base));
  lm->deleter(lm);
  const sm_device nowhere{SM_DEVICE_CPU, 3};
  SM_EXPECT_STATUS(sm_to_dlpack_ex(base, 0, &nowhere, &raw, &copied), SM_ERR_DEVICE);
  const sm_device bogus{42, 0};
  SM_EXPECT_STATUS(sm_to_dlpack_ex(base, 0, &bogus, &raw, &copied), SM_ERR_DEVICE);
}

// A tensor carved from a stack of views cannot be exported as it is (its
// region is reused after a pop), but a copy of it can.
TEST(DLPack, StackTensorsExportOnlyAsACopy) {
  Stack s;
  SM_ASSERT_OK(sm_stack_create(cpu(), 4096, s.out()));
  Tensor t;
  SM_ASSERT_OK(sm_stack_push(s, std::vector<int64_t>{8}.data(), 1, SM_FLOAT32, t.out()));
  SM_ASSERT_OK(sm_inplace_scalar(t, SM_OP_FILL, 2.5, 0));
  void* raw = nullptr;
  int copied = -1;
  SM_EXPECT_STATUS(sm_to_dlpack_ex(t, SM_DLPACK_VERSIONED, nullptr, &raw, &copied), SM_ERR_UNSUPPORTED);
  SM_ASSERT_OK(sm_to_dlpack_ex(t, SM_DLPACK_VERSIONED | SM_DLPACK_COPY, nullptr, &raw, &copied));
  auto* m = static_cast<sm_DLManagedTensorVersioned*>(raw);
  EXPECT_EQ(copied, 1);
  // The region is popped and reused: the export must not see the new data.
  SM_ASSERT_OK(sm_stack_pop_to(s, 0));
  Tensor reused;
  SM_ASSERT_OK(sm_stack_push(s, std::vector<int64_t>{8}.data(), 1, SM_FLOAT32, reused.out()));
  SM_ASSERT_OK(sm_inplace_scalar(reused, SM_OP_FILL, -1.0, 0));
  const float* d = static_cast<const float*>(m->dl_tensor.data);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(d[i], 2.5f);
  m->deleter(m);
}

TEST(DLPack, ImportLegacyCallsTheDeleterOnceAfterTheLastView) {
  g_legacy_deleted = 0;
  sm_DLManagedTensor* m = make_legacy(/*col_major=*/true);
  void* data = m->dl_tensor.data;
  Tensor t;
  SM_ASSERT_OK(sm_from_dlpack(m, 0, t.out()));
  EXPECT_EQ(data_ptr_of(t), data);
  expect_layout(t, {2, 3}, {1, 2}, 0);
  EXPECT_EQ(read<float>(t), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  int ro = -1;
  SM_ASSERT_OK(sm_is_read_only(t, &ro));
  EXPECT_EQ(ro, 0);
  Tensor v;
  SM_ASSERT_OK(sm_select(t, 1, 2, v.out()));
  t.reset();
  EXPECT_EQ(g_legacy_deleted.load(), 0);
  EXPECT_EQ(read<float>(v), (std::vector<float>{2, 5}));
  SM_ASSERT_OK(sm_inplace_scalar(v, SM_OP_ADD, 10, 0));
  EXPECT_EQ(static_cast<float*>(data)[4], 12.0f);  // zero copy
  v.reset();
  EXPECT_EQ(g_legacy_deleted.load(), 1);
}

TEST(DLPack, ImportVersionedReadOnly) {
  g_versioned_deleted = 0;
  sm_DLManagedTensorVersioned* m = make_versioned(SM_DLPACK_FLAG_BITMASK_READ_ONLY);
  Tensor t;
  SM_ASSERT_OK(sm_from_dlpack(m, 1, t.out()));
  expect_layout(t, {2, 3}, {3, 1}, 0);
  int ro = -1;
  SM_ASSERT_OK(sm_is_read_only(t, &ro));
  EXPECT_EQ(ro, 1);
  const TensorSnap before = snap(t);
  EXPECT_EQ(sm_inplace_scalar(t, SM_OP_ZERO, 0, 0), SM_ERR_READ_ONLY);
  expect_error_mentions({"sm_inplace_scalar"});
  Tensor src = iota({2, 3});
  EXPECT_EQ(sm_copy_into(t, src), SM_ERR_READ_ONLY);
  Tensor v;
  SM_ASSERT_OK(sm_transpose(t, 0, 1, v.out()));
  SM_ASSERT_OK(sm_is_read_only(v, &ro));
  EXPECT_EQ(ro, 1) << "views of read-only memory are read-only";
  EXPECT_EQ(sm_inplace_tensor(v, SM_OP_ADD, v, 1.0), SM_ERR_READ_ONLY);
  EXPECT_EQ(snap(t), before);
  // Reading and copying out is fine; a clone is writable.
  Tensor c;
  SM_ASSERT_OK(sm_clone(t, SM_PRESERVE, c.out()));
  SM_ASSERT_OK(sm_is_read_only(c, &ro));
  EXPECT_EQ(ro, 0);
  SM_EXPECT_OK(sm_inplace_scalar(c, SM_OP_ZERO, 0, 0));
  t.reset();
  v.reset();
  EXPECT_EQ(g_versioned_deleted.load(), 1);
}

TEST(DLPack, RoundTripSharesMemory) {
  const Live l0 = live();
  Tensor base = iota<int32_t>({4});
  void* raw = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(base, 1, &raw));
  Tensor back;
  SM_ASSERT_OK(sm_from_dlpack(raw, 1, back.out()));
  EXPECT_EQ(data_ptr_of(back), data_ptr_of(base));
  SM_ASSERT_OK(sm_inplace_scalar(back, SM_OP_MUL, 3, 0));
  EXPECT_EQ(read<int32_t>(base), (std::vector<int32_t>{0, 3, 6, 9}));
  base.reset();
  EXPECT_EQ(read<int32_t>(back), (std::vector<int32_t>{0, 3, 6, 9}));
  back.reset();
  EXPECT_EQ(live(), l0) << "everything released";
}

TEST(DLPack, EveryDtypeRoundTripsAndUnknownOnesAreRefused) {
  const int64_t shape[1] = {3};
  for (sm_dtype d = 0; d < SM_NUM_DTYPES; ++d) {
    Tensor t;
    SM_ASSERT_OK(sm_empty(shape, 1, d, sm_device{SM_DEVICE_CPU, 0}, t.out()));
    void* raw = nullptr;
    SM_ASSERT_OK(sm_to_dlpack(t, 0, &raw));
    auto* m = static_cast<sm_DLManagedTensor*>(raw);
    const sm_DLDataType exported = m->dl_tensor.dtype;
    // An odd bit count: no stridemem dtype has one.
    m->dl_tensor.dtype.bits = static_cast<uint8_t>(exported.bits + 1);
    sm_tensor out = sentinel_tensor();
    EXPECT_EQ(sm_from_dlpack(raw, 0, &out), SM_ERR_DTYPE) << sm_dtype_name(d);
    expect_error_mentions({"no stridemem dtype"});
    m->dl_tensor.dtype = exported;
    Tensor back;
    SM_ASSERT_OK(sm_from_dlpack(raw, 0, back.out()));
    sm_dtype got = -1;
    SM_ASSERT_OK(sm_dtype_of(back, &got));
    EXPECT_EQ(got, d) << sm_dtype_name(d) << " exported as code " << int(exported.code)
                      << " bits " << int(exported.bits);
  }
}

TEST(DLPack, FailedImportLeavesOwnershipWithTheCaller) {
  g_legacy_deleted = 0;
  sm_DLManagedTensor* m = make_legacy();
  m->dl_tensor.dtype.lanes = 4;  // vector types are not supported
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  expect_status_in(sm_from_dlpack(m, 0, &out), {SM_ERR_DTYPE, SM_ERR_UNSUPPORTED}, "lanes 4");
  EXPECT_EQ(out, sentinel_tensor());
  expect_error_mentions({"sm_from_dlpack"});
  m->dl_tensor.dtype.lanes = 1;
  // Device type 10 (kDLROCM in DLPack) is not ours. Written as bytes, as a C
  // producer would: in C++ the value is outside sm_DLDeviceType's range.
  const int32_t rocm = 10;
  static_assert(sizeof(m->dl_tensor.device.device_type) == sizeof rocm, "enum is int-sized");
  std::memcpy(&m->dl_tensor.device.device_type, &rocm, sizeof rocm);
  EXPECT_EQ(sm_from_dlpack(m, 0, &out), SM_ERR_DEVICE);
  m->dl_tensor.device = sm_DLDevice{sm_kDLCPU, 0};
  m->dl_tensor.shape[0] = -2;
  EXPECT_EQ(sm_from_dlpack(m, 0, &out), SM_ERR_SHAPE);
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(g_legacy_deleted.load(), 0) << "the caller still owns it";
  EXPECT_EQ(global_snap(), g0);
  m->dl_tensor.shape[0] = 2;
  m->deleter(m);
  EXPECT_EQ(g_legacy_deleted.load(), 1);

  g_versioned_deleted = 0;
  sm_DLManagedTensorVersioned* v = make_versioned(0);
  v->version.major = 99;
  expect_status_in(sm_from_dlpack(v, 1, &out), {SM_ERR_UNSUPPORTED, SM_ERR_INVALID_ARGUMENT},
                   "DLPack major 99");
  EXPECT_EQ(out, sentinel_tensor());
  EXPECT_EQ(g_versioned_deleted.load(), 0);
  v->deleter(v);
}

// ---- issue 12: address arithmetic, alignment, own exports coming back ----

namespace {

int g_hostile_deleted = 0;
void hostile_deleter(sm_DLManagedTensor* self) {
  ++g_hostile_deleted;
  delete self;
}

// A legacy managed tensor over `data` with any byte_offset; shape and
// strides live in the test's arrays.
sm_DLManagedTensor* make_raw(void* data, uint64_t byte_offset, int32_t ndim, int64_t* shape,
                             int64_t* strides, sm_DLDataType dtype) {
  auto* m = new sm_DLManagedTensor{};
  m->dl_tensor.data = data;
  m->dl_tensor.device = sm_DLDevice{sm_kDLCPU, 0};
  m->dl_tensor.ndim = ndim;
  m->dl_tensor.dtype = dtype;
  m->dl_tensor.shape = shape;
  m->dl_tensor.strides = strides;
  m->dl_tensor.byte_offset = byte_offset;
  m->manager_ctx = nullptr;
  m->deleter = hostile_deleter;
  return m;
}

// Refused, nothing written, nothing changed, the producer still owns it.
void expect_refused(sm_DLManagedTensor* m, sm_status want, const char* what) {
  g_hostile_deleted = 0;
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  SM_EXPECT_STATUS(sm_from_dlpack(m, 0, &out), want);
  EXPECT_EQ(out, sentinel_tensor()) << what;
  EXPECT_EQ(global_snap(), g0) << what;
  EXPECT_EQ(g_hostile_deleted, 0) << what;
  EXPECT_FALSE(std::string(sm_last_error()).empty()) << what;
  m->deleter(m);
}

}  // namespace

// data + byte_offset is computed without wrapping: an offset no buffer can
// have, a sum past the top of the address space, NULL with an offset, and a
// span that reaches below address 0 or past the top are refused.
TEST(DLPack, ImportRefusesAddressArithmeticThatWraps) {
  alignas(8) static float buf[16];
  int64_t shape1[1] = {4}, shape0[1] = {0}, neg[1] = {-8};
  const sm_DLDataType f32{sm_kDLFloat, 32, 1}, f64{sm_kDLFloat, 64, 1}, u8{sm_kDLUInt, 8, 1};
  // 2^64 - 4 would put element 0 four bytes before the producer's buffer.
  expect_refused(make_raw(buf + 4, ~uint64_t(0) - 3, 1, shape1, nullptr, f32), SM_ERR_OUT_OF_BOUNDS,
                 "byte_offset 2^64-4");
  EXPECT_NE(std::string(sm_last_error()).find("byte_offset"), std::string::npos) << sm_last_error();
  // 2^63: a non-canonical address on every 64-bit CPU.
  expect_refused(make_raw(buf, uint64_t(1) << 63, 1, shape1, nullptr, f32), SM_ERR_OUT_OF_BOUNDS,
                 "byte_offset 2^63");
  // The sum wraps even with an offset below PTRDIFF_MAX.
  expect_refused(make_raw(reinterpret_cast<void*>(~uintptr_t(0) - 63), 128, 1, shape1, nullptr, u8),
                 SM_ERR_OUT_OF_BOUNDS, "data + byte_offset wraps");
  // NULL + 64 with zero elements: NULL has no offset to add.
  expect_refused(make_raw(nullptr, 64, 1, shape0, nullptr, f32), SM_ERR_INVALID_ARGUMENT,
                 "NULL + 64");
  // A range past the top of the address space (16 bytes before the top, 64 bytes long).
  int64_t shape64[1] = {64};
  expect_refused(make_raw(reinterpret_cast<void*>(~uintptr_t(0) - 15), 0, 1, shape64, nullptr, u8),
                 SM_ERR_OUT_OF_BOUNDS, "span past the top");
  // Negative strides reaching below address 0.
  expect_refused(make_raw(reinterpret_cast<void*>(uintptr_t(64)), 0, 1, shape1, neg, f64),
                 SM_ERR_OUT_OF_BOUNDS, "span below 0");
  // Still accepted: NULL data with no elements and no offset, and an honest offset.
  g_hostile_deleted = 0;
  Tensor empty, honest;
  SM_ASSERT_OK(sm_from_dlpack(make_raw(nullptr, 0, 1, shape0, nullptr, f32), 0, empty.out()));
  for (int i = 0; i < 16; ++i) buf[i] = static_cast<float>(i);
  SM_ASSERT_OK(sm_from_dlpack(make_raw(buf, 8 * sizeof(float), 1, shape1, nullptr, f32), 0, honest.out()));
  EXPECT_EQ(read<float>(honest), (std::vector<float>{8, 9, 10, 11}));
  empty.reset();
  honest.reset();
  EXPECT_EQ(g_hostile_deleted, 2);
}

// A storage whose bytes start at an odd address (uint8 memory wrapped there)
// cannot be re-viewed with a wider dtype: its elements could not be loaded.
TEST(DLPack, MisalignedStorageRefusesWiderTypedViews) {
  alignas(16) static uint8_t bytes[64];
  for (int i = 0; i < 64; ++i) bytes[i] = static_cast<uint8_t>(i);
  int64_t shape[1] = {32};
  Tensor odd;  // uint8 at an odd address: fine for 1-byte elements
  SM_ASSERT_OK(sm_from_dlpack(make_raw(bytes, 1, 1, shape, nullptr, sm_DLDataType{sm_kDLUInt, 8, 1}), 0,
                              odd.out()));
  Storage s;
  SM_ASSERT_OK(sm_tensor_storage(odd, s.out()));
  const int64_t n4[1] = {4}, n0[1] = {0};
  for (sm_dtype dt : {SM_INT16, SM_FLOAT32, SM_INT64, SM_FLOAT16}) {
    for (int64_t off : {0, 1, 2}) {
      const GlobalSnap g0 = global_snap();
      sm_tensor out = sentinel_tensor();
      SM_EXPECT_STATUS(sm_tensor_from_storage(s, n4, nullptr, 1, off, dt, &out), SM_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(out, sentinel_tensor());
      EXPECT_EQ(global_snap(), g0);
      expect_error_mentions({"sm_tensor_from_storage", "aligned", sm_dtype_name(dt)});
      // Empty views too: the rule is about the address, as for sm_from_blob.
      SM_EXPECT_STATUS(sm_tensor_from_storage(s, n0, nullptr, 1, off, dt, &out), SM_ERR_INVALID_ARGUMENT);
    }
  }
  // 1-byte dtypes still view it, and read the right bytes.
  Tensor again;
  SM_ASSERT_OK(sm_tensor_from_storage(s, n4, nullptr, 1, 2, SM_INT8, again.out()));
  EXPECT_EQ(read<int8_t>(again), (std::vector<int8_t>{3, 4, 5, 6}));
  // The report's path: a uint8 slice at 1, exported and re-imported, its
  // storage re-viewed as float32. The import is a view of the library's own
  // storage (aligned), so the float32 view is valid and reads those bytes.
  Tensor base = iota<uint8_t>({32});
  Tensor sl;
  SM_ASSERT_OK(sm_slice(base, 0, 1, 32, 1, sl.out()));
  void* m = nullptr;
  SM_ASSERT_OK(sm_to_dlpack(sl, 0, &m));
  Tensor back;
  SM_ASSERT_OK(sm_from_dlpack(m, 0, back.out()));
  Storage bs;
  SM_ASSERT_OK(sm_tensor_storage(back, bs.out()));
  Tensor f;
  SM_ASSERT_OK(sm_tensor_from_storage(bs, n4, nullptr, 1, 0, SM_FLOAT32, f.out()));
  EXPECT_EQ(data_ptr_of(f), data_ptr_of(base));
}

// One of our own exports coming back is a view of the same storage: one
// version counter, sm_same_storage, and the export's context freed at once.
TEST(DLPack, ReimportedOwnExportSharesStorageAndVersion) {
  for (int versioned = 0; versioned < 2; ++versioned) {
    const Live l0 = live();
    const GlobalSnap g0 = global_snap();
    Tensor base = iota<float>({3, 4});
    Tensor col;
    SM_ASSERT_OK(sm_select(base, 1, 2, col.out()));  // strided, offset 2
    void* m = nullptr;
    SM_ASSERT_OK(sm_to_dlpack(col, versioned, &m));
    Tensor back;
    SM_ASSERT_OK(sm_from_dlpack(m, versioned, back.out()));
    EXPECT_EQ(same_storage(back, base), 1);
    expect_layout(back, {3}, {4}, 2);
    const int64_t v0 = version_of(base);
    SM_ASSERT_OK(sm_inplace_scalar(back, SM_OP_ADD, 100, 0));
    EXPECT_EQ(version_of(base), v0 + 1) << "a write through the import bumps the shared counter";
    EXPECT_EQ(version_of(col), v0 + 1);
    EXPECT_EQ(read<float>(base), (std::vector<float>{0, 1, 102, 3, 4, 5, 106, 7, 8, 9, 110, 11}));
    base.reset();
    col.reset();
    EXPECT_EQ(read<float>(back), (std::vector<float>{102, 106, 110}));
    back.reset();
    EXPECT_EQ(live(), l0);
    EXPECT_EQ(global_snap().active_storages, g0.active_storages);
  }
}

// ---- own exports coming back, untouched or moved by their consumer ----

namespace {

sm_DLTensor& dl_of(void* m, int versioned) {
  return versioned ? static_cast<sm_DLManagedTensorVersioned*>(m)->dl_tensor
                   : static_cast<sm_DLManagedTensor*>(m)->dl_tensor;
}

// The consumer moves the metadata (`move`), and the import is refused:
// nothing written or changed, and the export is still the caller's. The
// metadata is put back as it was. False when the import went through: the
// export is consumed then, and the caller must not touch it again.
bool expect_own_refused(void* m, int versioned, const std::function<void(sm_DLTensor&)>& move,
                        sm_status want, const char* what) {
  sm_DLTensor& dl = dl_of(m, versioned);
  const sm_DLTensor kept = dl;
  const int64_t shape0 = dl.ndim > 0 ? dl.shape[0] : 0;
  move(dl);
  const GlobalSnap g0 = global_snap();
  sm_tensor out = sentinel_tensor();
  SCOPED_TRACE(what);
  const sm_status st = sm_from_dlpack(m, versioned, &out);
  if (st == SM_OK) {
    ADD_FAILURE() << what << ": imported, the export is consumed";
    sm_tensor_release(out);
    return false;
  }
  SM_EXPECT_STATUS(st, want);
  EXPECT_EQ(out, sentinel_tensor()) << what;
  EXPECT_EQ(global_snap(), g0) << what;
  EXPECT_FALSE(std::string(sm_last_error()).empty()) << what;
  dl = kept;
  if (dl.ndim > 0) dl.shape[0] = shape0;
  return true;
}

}  // namespace

// An empty view may sit at any storage offset, INT64_MAX included, where its
// address (storage base + offset * itemsize) wraps around the address space.
// Coming back, the export is still a view of its own storage, at its own
// offset: no second storage wrapped around the wrapped address. Moved by the
// consumer three elements back, it is a view at the moved offset, and one
// element on from INT64_MAX (an offset no view can have) it is refused.
TEST(DLPack, ReimportedEmptyExportAtAHugeOffsetIsStillAViewOfItsStorage) {
  for (int versioned = 0; versioned < 2; ++versioned) {
    for (int64_t offset : {int64_t{0}, int64_t{5}, INT64_MAX, INT64_MAX / 2 + 7, int64_t{1} << 62}) {
      for (int64_t moved : {int64_t{0}, int64_t{-3}}) {
        if (offset + moved < 0) continue;
        SCOPED_TRACE(testing::Message() << "offset " << offset << " moved " << moved);
        const int64_t storages0 = stats().active_storages;
        Tensor base = iota<float>({3, 4});
        const int64_t shape[2] = {0, 4}, strides[2] = {4, 1};
        Tensor empty_view;
        SM_ASSERT_OK(sm_as_strided(base, shape, strides, 2, offset, empty_view.out()));
        void* m = nullptr;
        SM_ASSERT_OK(sm_to_dlpack(empty_view, versioned, &m));
        if (offset == INT64_MAX && moved == 0) {
          ASSERT_TRUE(expect_own_refused(m, versioned,
                                         [](sm_DLTensor& d) { d.byte_offset = sizeof(float); },
                                         SM_ERR_OUT_OF_BOUNDS, "offset INT64_MAX + 1"));
          expect_error_mentions({"past the largest offset"});
        }
        sm_DLTensor& dl = dl_of(m, versioned);
        dl.data = static_cast<char*>(dl.data) + moved * static_cast<int64_t>(sizeof(float));
        Tensor back;
        SM_ASSERT_OK(sm_from_dlpack(m, versioned, back.out()));
        EXPECT_EQ(same_storage(back, base), 1);
        expect_layout(back, {0, 4}, {4, 1}, offset + moved);
        EXPECT_EQ(stats().active_storages, storages0 + 1) << "one storage, base's";
      }
    }
  }
}

// DLPack hands the consumer the managed tensor: it may narrow the DLTensor
// (data, byte_offset, shape, strides, dtype) before passing it on. One of our
// own exports moved so still comes back as a view of its storage, at the
// element the moved metadata names, and an untouched one at its own offset.
TEST(DLPack, ReimportedOwnExportTheConsumerMovedIsAViewAtTheMovedElement) {
  for (int versioned = 0; versioned < 2; ++versioned) {
    Tensor base = iota<float>({3, 4});
    Tensor col;
    SM_ASSERT_OK(sm_select(base, 1, 2, col.out()));  // {3}, strides {4}, offset 2
    const int64_t storages0 = stats().active_storages;
    auto reimport = [&](const std::function<void(sm_DLTensor&)>& move, Tensor* back) {
      void* m = nullptr;
      SM_ASSERT_OK(sm_to_dlpack(col, versioned, &m));
      move(dl_of(m, versioned));
      SM_ASSERT_OK(sm_from_dlpack(m, versioned, back->out()));
      EXPECT_EQ(same_storage(*back, base), 1);
      EXPECT_EQ(stats().active_storages, storages0) << "no second storage";
    };
    Tensor exact, by_offset, by_data, as_bytes;
    reimport([](sm_DLTensor&) {}, &exact);
    expect_layout(exact, {3}, {4}, 2);
    // Rows 1..2 of the column: byte_offset moves one row on.
    reimport([](sm_DLTensor& dl) {
      dl.byte_offset += 4 * sizeof(float);
      dl.shape[0] = 2;
    }, &by_offset);
    expect_layout(by_offset, {2}, {4}, 6);
    EXPECT_EQ(read<float>(by_offset), (std::vector<float>{6, 10}));
    // The data pointer moved back to the storage's first element, the whole
    // tensor described as one row-major block.
    int64_t whole[2] = {3, 4}, dense[2] = {4, 1};
    reimport([&](sm_DLTensor& dl) {
      dl.data = static_cast<char*>(dl.data) - 2 * sizeof(float);
      dl.ndim = 2;
      dl.shape = whole;
      dl.strides = dense;
    }, &by_data);
    expect_layout(by_data, {3, 4}, {4, 1}, 0);
    EXPECT_EQ(read<float>(by_data), read<float>(base));
    // Another dtype: the bytes of element 6, at byte 24 of the storage.
    int64_t four[1] = {4}, one[1] = {1};
    reimport([&](sm_DLTensor& dl) {
      dl.byte_offset = 4 * sizeof(float);
      dl.dtype = sm_DLDataType{sm_kDLUInt, 8, 1};
      dl.shape = four;
      dl.strides = one;
    }, &as_bytes);
    expect_layout(as_bytes, {4}, {1}, 24);
    float six = 0;
    SM_ASSERT_OK(sm_copy_to_host(as_bytes, &six, sizeof six));
    EXPECT_EQ(six, 6.0f);
    // A write through a moved import bumps the storage's one version counter.
    const int64_t v0 = version_of(base);
    SM_ASSERT_OK(sm_inplace_scalar(by_offset, SM_OP_ADD, 100, 0));
    EXPECT_EQ(version_of(base), v0 + 1);
    EXPECT_EQ(read<float>(col), (std::vector<float>{2, 106, 110}));
  }
}

// Everything an own export describes lies in its storage: a first element
// moved before it, between two elements or past its end is refused and the
// export stays the caller's (never wrapped as a second storage over the same
// bytes, with a second version counter).
TEST(DLPack, ReimportedOwnExportMovedOutOfItsStorageIsRefused) {
  for (int versioned = 0; versioned < 2; ++versioned) {
    Tensor base = iota<float>({3, 4});
    Tensor col;
    SM_ASSERT_OK(sm_select(base, 1, 2, col.out()));
    void* m = nullptr;
    SM_ASSERT_OK(sm_to_dlpack(col, versioned, &m));
    // One element before the storage.
    ASSERT_TRUE(expect_own_refused(m, versioned, [](sm_DLTensor& dl) {
      dl.data = static_cast<char*>(dl.data) - 3 * sizeof(float);
    }, SM_ERR_OUT_OF_BOUNDS, "before the storage"));
    expect_error_mentions({"own DLPack export", "before its storage"});
    // Half a float on.
    ASSERT_TRUE(expect_own_refused(m, versioned, [](sm_DLTensor& dl) { dl.byte_offset = 2; },
                                   SM_ERR_OUT_OF_BOUNDS, "between elements"));
    expect_error_mentions({"between two elements"});
    // A fourth row the storage does not have.
    ASSERT_TRUE(expect_own_refused(m, versioned, [](sm_DLTensor& dl) { dl.shape[0] = 4; },
                                   SM_ERR_OUT_OF_BOUNDS, "past the end"));
    Tensor back;  // untouched, the export is still there to import
    SM_ASSERT_OK(sm_from_dlpack(m, versioned, back.out()));
    expect_layout(back, {3}, {4}, 2);
    EXPECT_EQ(same_storage(back, base), 1);
  }
}

// Moved onto another device (pinned host memory relabelled as CPU memory):
// refused, the storage's device is where its bytes are.
TEST(DLPack, ReimportedOwnExportOnAnotherDeviceIsRefused) {
  int32_t ncuda = 0;
  SM_ASSERT_OK(sm_cuda_device_count(&ncuda));
  if (ncuda <= 0) GTEST_SKIP() << "no usable CUDA device (pinned host memory needs one)";
  const int64_t shape[1] = {4};
  for (int versioned = 0; versioned < 2; ++versioned) {
    Tensor pinned;
    SM_ASSERT_OK(sm_empty(shape, 1, SM_FLOAT32, sm_device{SM_DEVICE_CUDA_HOST, 0}, pinned.out()));
    void* m = nullptr;
    SM_ASSERT_OK(sm_to_dlpack(pinned, versioned, &m));
    ASSERT_TRUE(expect_own_refused(
        m, versioned, [](sm_DLTensor& dl) { dl.device = sm_DLDevice{sm_kDLCPU, 0}; },
        SM_ERR_DEVICE, "relabelled as CPU"));
    expect_error_mentions({"own DLPack export", "device"});
    Tensor back;
    SM_ASSERT_OK(sm_from_dlpack(m, versioned, back.out()));
    EXPECT_EQ(same_storage(back, pinned), 1);
  }
}
