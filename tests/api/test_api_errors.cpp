// Bad input for every call, table-driven. For each case: the status, a
// non-empty sm_last_error() naming the call (and the offending argument or
// value where given), out-parameters untouched (pre-filled with sentinels),
// and no state change (tensors' metadata, values and version counters;
// allocated bytes, allocation count, live views/storages and live handles).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <iterator>
#include <set>

#include "api_test_util.hpp"
#include "header_functions.hpp"
#include "stridemem_dlpack.h"

using namespace smt;

namespace {

// Everything a case may use. Built fresh for every case.
struct Ctx {
  Tensor t;    // float32 (2,3,4), 0..23
  Tensor tt;   // transpose(t, 1, 2): (2,4,3), not contiguous
  Tensor it;   // int32 (4)
  Tensor f4;   // float32 (4)
  Tensor b4;   // bool (4)
  Tensor idx;  // int64 {0, 1}
  Tensor e;    // expanded float32 (4) over one element
  Tensor three;             // float32 (3): broadcasts to nothing here
  Tensor idx_hi, idx_lo;    // int64 {0, 5}, int32 {-3}
  Tensor na, nb;            // narrow(t, 2, 0, 3), narrow(t, 2, 1, 3): partial overlap
  Tensor s1, s2;            // t's elements 0..11 and 6..17 as (3,4)
  Storage st;               // t's storage (96 bytes)
  Stack stk;                // 1024-byte stack, empty
  sm_storage released_storage = nullptr;
  sm_stack released_stack = nullptr;
  sm_tensor released = nullptr;
  sm_tensor forged = forged_tensor();
  sm_tensor storage_as_tensor = nullptr;  // a storage handle's value used as a tensor
  sm_storage stack_as_storage = nullptr;  // a stack handle's value used as a storage
  sm_stack tensor_as_stack = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(4096, 0xAB);

  Ctx() {
    released = released_tensor();
    t = iota<float>({2, 3, 4});
    EXPECT_EQ(sm_transpose(t, 1, 2, tt.out()), SM_OK);
    it = make<int32_t>({1, 2, 3, 4}, {4});
    f4 = make<float>({1, 2, 3, 4}, {4});
    b4 = make_bool({1, 0, 1, 0}, {4});
    idx = make<int64_t>({0, 1}, {2});
    Tensor one = make<float>({5}, {1});
    const int64_t four[1] = {4};
    EXPECT_EQ(sm_expand(one, four, 1, e.out()), SM_OK);
    three = iota({3});
    idx_hi = make<int64_t>({0, 5}, {2});
    idx_lo = make<int32_t>({-3}, {1});
    EXPECT_EQ(sm_narrow(t, 2, 0, 3, na.out()), SM_OK);
    EXPECT_EQ(sm_narrow(t, 2, 1, 3, nb.out()), SM_OK);
    const int64_t s34[2] = {3, 4}, st41[2] = {4, 1};
    EXPECT_EQ(sm_as_strided(t, s34, st41, 2, 0, s1.out()), SM_OK);
    EXPECT_EQ(sm_as_strided(t, s34, st41, 2, 6, s2.out()), SM_OK);
    EXPECT_EQ(sm_tensor_storage(t, st.out()), SM_OK);
    EXPECT_EQ(sm_stack_create(cpu(), 1024, stk.out()), SM_OK);
    EXPECT_EQ(sm_tensor_storage(f4, &released_storage), SM_OK);
    EXPECT_EQ(sm_storage_release(released_storage), SM_OK);
    EXPECT_EQ(sm_stack_create(cpu(), 256, &released_stack), SM_OK);
    EXPECT_EQ(sm_stack_release(released_stack), SM_OK);
    storage_as_tensor = reinterpret_cast<sm_tensor>(st.get());
    stack_as_storage = reinterpret_cast<sm_storage>(stk.get());
    tensor_as_stack = reinterpret_cast<sm_stack>(t.get());
  }
  bool buf_untouched() const {
    for (uint8_t b : buf)
      if (b != 0xAB) return false;
    return true;
  }
};

using Call = std::function<sm_status(Ctx&, bool& untouched)>;

struct BadCase {
  std::string name;
  std::vector<sm_status> expected;  // usually one; several only where the header leaves it open
  std::vector<std::string> needles;
  Call call;
};

std::vector<BadCase>& registry() {
  static std::vector<BadCase> cases;
  return cases;
}

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

void add(const std::string& name, std::vector<sm_status> expected,
         std::vector<std::string> needles, Call call) {
  static std::set<std::string> used;
  const std::string base = sanitize(name);
  std::string n = base;
  for (int k = 2; used.count(n); ++k) n = base + "_" + std::to_string(k);
  used.insert(n);
  registry().push_back(BadCase{n, std::move(expected), std::move(needles), std::move(call)});
}

// Body helpers: declare a sentinel out, run the call, record untouchedness.
#define T_OUT(expr)                                \
  sm_tensor o = sentinel_tensor();                 \
  const sm_status s_ = (expr);                     \
  ok = (o == sentinel_tensor());                   \
  return s_
#define I64_OUT(expr)                \
  int64_t o = kSentinel64;           \
  const sm_status s_ = (expr);       \
  ok = (o == kSentinel64);           \
  return s_
#define I32_OUT(expr)                \
  int32_t o = kSentinel32;           \
  const sm_status s_ = (expr);       \
  ok = (o == kSentinel32);           \
  return s_
#define INT_OUT(expr)                \
  int o = kSentinel32;               \
  const sm_status s_ = (expr);       \
  ok = (o == kSentinel32);           \
  return s_
#define PTR_OUT(expr)                                       \
  void* o = reinterpret_cast<void*>(uintptr_t(0xDEADBEE0)); \
  const sm_status s_ = (expr);                              \
  ok = (o == reinterpret_cast<void*>(uintptr_t(0xDEADBEE0))); \
  return s_
#define DEV_OUT(expr)                                      \
  sm_device o{kSentinel32, kSentinel32};                   \
  const sm_status s_ = (expr);                             \
  ok = (o.type == kSentinel32 && o.index == kSentinel32);  \
  return s_
#define NO_OUT(expr) \
  ok = true;         \
  return (expr)
#define BUF_OUT(expr)              \
  const sm_status s_ = (expr);     \
  ok = c.buf_untouched();          \
  return s_

// Shapes used by cases.
const int64_t kS24[1] = {24};
const int64_t kS4[1] = {4};
const int64_t kS1[1] = {1};
const int64_t kS234[3] = {2, 3, 4};
const int64_t kStr1[1] = {1};
const int32_t kDims3[3] = {0, 1, 2};
const int32_t kDim0[1] = {0};
const int64_t kBig = int64_t(1) << 62;

// ---------------------------------------------------------------------------
// 1. Bad handles: every call that takes a tensor, with NULL, a released
//    handle, a forged one, and another kind's handle.
// ---------------------------------------------------------------------------

struct TensorFn {
  const char* fn;
  bool null_ok;  // sm_tensor_release(NULL) is a no-op
  std::function<sm_status(Ctx&, sm_tensor h, bool& ok)> call;
};

std::vector<TensorFn> tensor_fns() {
  using C = Ctx;
  return {
      {"sm_tensor_retain", false, [](C&, sm_tensor h, bool& ok) { NO_OUT(sm_tensor_retain(h)); }},
      {"sm_tensor_release", true, [](C&, sm_tensor h, bool& ok) { NO_OUT(sm_tensor_release(h)); }},
      {"sm_copy_to_host", false,
       [](C& c, sm_tensor h, bool& ok) { BUF_OUT(sm_copy_to_host(h, c.buf.data(), c.buf.size())); }},
      {"sm_ndim", false, [](C&, sm_tensor h, bool& ok) { I32_OUT(sm_ndim(h, &o)); }},
      {"sm_shape", false,
       [](C& c, sm_tensor h, bool& ok) {
         BUF_OUT(sm_shape(h, reinterpret_cast<int64_t*>(c.buf.data()), 16));
       }},
      {"sm_strides", false,
       [](C& c, sm_tensor h, bool& ok) {
         BUF_OUT(sm_strides(h, reinterpret_cast<int64_t*>(c.buf.data()), 16));
       }},
      {"sm_storage_offset", false, [](C&, sm_tensor h, bool& ok) { I64_OUT(sm_storage_offset(h, &o)); }},
      {"sm_dtype_of", false, [](C&, sm_tensor h, bool& ok) { I32_OUT(sm_dtype_of(h, &o)); }},
      {"sm_device_of", false, [](C&, sm_tensor h, bool& ok) { DEV_OUT(sm_device_of(h, &o)); }},
      {"sm_numel", false, [](C&, sm_tensor h, bool& ok) { I64_OUT(sm_numel(h, &o)); }},
      {"sm_nbytes", false, [](C&, sm_tensor h, bool& ok) { I64_OUT(sm_nbytes(h, &o)); }},
      {"sm_storage_nbytes", false, [](C&, sm_tensor h, bool& ok) { I64_OUT(sm_storage_nbytes(h, &o)); }},
      {"sm_data_ptr", false, [](C&, sm_tensor h, bool& ok) { PTR_OUT(sm_data_ptr(h, &o)); }},
      {"sm_is_contiguous", false,
       [](C&, sm_tensor h, bool& ok) { INT_OUT(sm_is_contiguous(h, SM_CONTIGUOUS, &o)); }},
      {"sm_same_storage", false, [](C& c, sm_tensor h, bool& ok) { INT_OUT(sm_same_storage(h, c.t, &o)); }},
      {"sm_same_storage", false, [](C& c, sm_tensor h, bool& ok) { INT_OUT(sm_same_storage(c.t, h, &o)); }},
      {"sm_version_counter", false, [](C&, sm_tensor h, bool& ok) { I64_OUT(sm_version_counter(h, &o)); }},
      {"sm_is_read_only", false, [](C&, sm_tensor h, bool& ok) { INT_OUT(sm_is_read_only(h, &o)); }},
      {"sm_tensor_storage", false,
       [](C&, sm_tensor h, bool& ok) {
         sm_storage o = sentinel_storage();
         const sm_status s_ = sm_tensor_storage(h, &o);
         ok = o == sentinel_storage();
         return s_;
       }},
      {"sm_view", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_view(h, kS24, 1, &o)); }},
      {"sm_as_strided", false,
       [](C&, sm_tensor h, bool& ok) { T_OUT(sm_as_strided(h, kS4, kStr1, 1, 0, &o)); }},
      {"sm_slice", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_slice(h, 0, 0, 1, 1, &o)); }},
      {"sm_narrow", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_narrow(h, 0, 0, 1, &o)); }},
      {"sm_select", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_select(h, 0, 0, &o)); }},
      {"sm_permute", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_permute(h, kDims3, 3, &o)); }},
      {"sm_transpose", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_transpose(h, 0, 1, &o)); }},
      {"sm_movedim", false,
       [](C&, sm_tensor h, bool& ok) { T_OUT(sm_movedim(h, kDim0, kDim0, 1, &o)); }},
      {"sm_expand", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_expand(h, kS234, 3, &o)); }},
      {"sm_squeeze", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_squeeze(h, nullptr, 0, &o)); }},
      {"sm_unsqueeze", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_unsqueeze(h, 0, &o)); }},
      {"sm_flatten", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_flatten(h, 0, -1, &o)); }},
      {"sm_unflatten", false,
       [](C&, sm_tensor h, bool& ok) { T_OUT(sm_unflatten(h, 0, kS1, 1, &o)); }},
      {"sm_unfold", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_unfold(h, 0, 1, 1, &o)); }},
      {"sm_diagonal", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_diagonal(h, 0, 0, 1, &o)); }},
      {"sm_split", false,
       [](C&, sm_tensor h, bool& ok) {
         sm_tensor outs[4] = {sentinel_tensor(), sentinel_tensor(), sentinel_tensor(),
                              sentinel_tensor()};
         int32_t n = kSentinel32;
         const sm_status s_ = sm_split(h, 1, 0, outs, 4, &n);
         ok = n == kSentinel32 && outs[0] == sentinel_tensor() && outs[3] == sentinel_tensor();
         return s_;
       }},
      {"sm_chunk", false,
       [](C&, sm_tensor h, bool& ok) {
         int32_t n = kSentinel32;
         const sm_status s_ = sm_chunk(h, 2, 0, nullptr, 0, &n);
         ok = n == kSentinel32;
         return s_;
       }},
      {"sm_flip", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_flip(h, kDim0, 1, &o)); }},
      {"sm_reshape_would_copy", false,
       [](C&, sm_tensor h, bool& ok) { INT_OUT(sm_reshape_would_copy(h, kS24, 1, &o)); }},
      {"sm_reshape", false,
       [](C&, sm_tensor h, bool& ok) {
         sm_tensor o = sentinel_tensor();
         int copied = kSentinel32;
         const sm_status s_ = sm_reshape(h, kS24, 1, &o, &copied);
         ok = o == sentinel_tensor() && copied == kSentinel32;
         return s_;
       }},
      {"sm_contiguous", false,
       [](C&, sm_tensor h, bool& ok) { T_OUT(sm_contiguous(h, SM_CONTIGUOUS, &o, nullptr)); }},
      {"sm_clone", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_clone(h, SM_PRESERVE, &o)); }},
      {"sm_to", false, [](C&, sm_tensor h, bool& ok) { T_OUT(sm_to(h, cpu(), SM_FLOAT64, &o, nullptr)); }},
      {"sm_copy_into", false, [](C& c, sm_tensor h, bool& ok) { NO_OUT(sm_copy_into(h, c.t)); }},
      {"sm_copy_into", false, [](C& c, sm_tensor h, bool& ok) { NO_OUT(sm_copy_into(c.t, h)); }},
      {"sm_index_select", false,
       [](C& c, sm_tensor h, bool& ok) { T_OUT(sm_index_select(h, 0, c.idx, &o)); }},
      {"sm_index_select", false,
       [](C& c, sm_tensor h, bool& ok) { T_OUT(sm_index_select(c.t, 0, h, &o)); }},
      {"sm_inplace_scalar", false,
       [](C&, sm_tensor h, bool& ok) { NO_OUT(sm_inplace_scalar(h, SM_OP_ADD, 1, 0)); }},
      {"sm_inplace_tensor", false,
       [](C& c, sm_tensor h, bool& ok) { NO_OUT(sm_inplace_tensor(h, SM_OP_ADD, c.t, 1)); }},
      {"sm_inplace_tensor", false,
       [](C& c, sm_tensor h, bool& ok) { NO_OUT(sm_inplace_tensor(c.t, SM_OP_ADD, h, 1)); }},
      {"sm_record_stream", false, [](C&, sm_tensor h, bool& ok) { NO_OUT(sm_record_stream(h, nullptr)); }},
      {"sm_share_memory", false, [](C&, sm_tensor h, bool& ok) { NO_OUT(sm_share_memory(h)); }},
      {"sm_tensor_export", false,
       [](C&, sm_tensor h, bool& ok) {
         sm_share_desc d;
         std::memset(&d, 0x5C, sizeof d);
         int fd = kSentinel32;
         const sm_status s_ = sm_tensor_export(h, &d, &fd);
         ok = fd == kSentinel32 && d.checksum == 0x5C5C5C5C5C5C5C5Cull;
         return s_;
       }},
      {"sm_is_shared", false, [](C&, sm_tensor h, bool& ok) { INT_OUT(sm_is_shared(h, &o)); }},
      {"sm_to_dlpack", false, [](C&, sm_tensor h, bool& ok) { PTR_OUT(sm_to_dlpack(h, 0, &o)); }},
      {"sm_to_dlpack", false, [](C&, sm_tensor h, bool& ok) { PTR_OUT(sm_to_dlpack(h, 1, &o)); }},
      {"sm_to_dlpack_ex", false,
       [](C&, sm_tensor h, bool& ok) {
         void* o = reinterpret_cast<void*>(uintptr_t(0xDEADBEE0));
         int copied = kSentinel32;
         const sm_status s_ = sm_to_dlpack_ex(h, SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE, nullptr, &o, &copied);
         ok = o == reinterpret_cast<void*>(uintptr_t(0xDEADBEE0)) && copied == kSentinel32;
         return s_;
       }},
  };
}

struct StorageFn {
  const char* fn;
  bool null_ok;
  std::function<sm_status(Ctx&, sm_storage h, bool& ok)> call;
};

std::vector<StorageFn> storage_fns() {
  using C = Ctx;
  return {
      {"sm_storage_retain", false, [](C&, sm_storage h, bool& ok) { NO_OUT(sm_storage_retain(h)); }},
      {"sm_storage_release", true, [](C&, sm_storage h, bool& ok) { NO_OUT(sm_storage_release(h)); }},
      {"sm_storage_size", false, [](C&, sm_storage h, bool& ok) { I64_OUT(sm_storage_size(h, &o)); }},
      {"sm_storage_data_ptr", false,
       [](C&, sm_storage h, bool& ok) { PTR_OUT(sm_storage_data_ptr(h, &o)); }},
      {"sm_storage_device", false, [](C&, sm_storage h, bool& ok) { DEV_OUT(sm_storage_device(h, &o)); }},
      {"sm_tensor_from_storage", false,
       [](C&, sm_storage h, bool& ok) {
         T_OUT(sm_tensor_from_storage(h, kS4, nullptr, 1, 0, SM_FLOAT32, &o));
       }},
      {"sm_storage_is_shared", false,
       [](C&, sm_storage h, bool& ok) { INT_OUT(sm_storage_is_shared(h, &o)); }},
      {"sm_storage_export", false,
       [](C&, sm_storage h, bool& ok) {
         sm_share_desc d;
         std::memset(&d, 0x5C, sizeof d);
         int fd = kSentinel32;
         const sm_status s_ = sm_storage_export(h, &d, &fd);
         ok = fd == kSentinel32 && reinterpret_cast<const uint8_t*>(&d)[0] == 0x5C &&
              d.checksum == 0x5C5C5C5C5C5C5C5Cull;
         return s_;
       }},
      {"sm_storage_id", false,
       [](C&, sm_storage h, bool& ok) {
         uint64_t o = static_cast<uint64_t>(kSentinel64);
         const sm_status s_ = sm_storage_id(h, &o);
         ok = o == static_cast<uint64_t>(kSentinel64);
         return s_;
       }},
  };
}

struct StackFn {
  const char* fn;
  bool null_ok;
  std::function<sm_status(Ctx&, sm_stack h, bool& ok)> call;
};

std::vector<StackFn> stack_fns() {
  using C = Ctx;
  return {
      {"sm_stack_push", false,
       [](C&, sm_stack h, bool& ok) { T_OUT(sm_stack_push(h, kS4, 1, SM_FLOAT32, &o)); }},
      {"sm_stack_mark", false, [](C&, sm_stack h, bool& ok) { I64_OUT(sm_stack_mark(h, &o)); }},
      {"sm_stack_pop_to", false, [](C&, sm_stack h, bool& ok) { NO_OUT(sm_stack_pop_to(h, 0)); }},
      {"sm_stack_used", false,
       [](C&, sm_stack h, bool& ok) {
         int64_t u = kSentinel64, cap = kSentinel64;
         const sm_status s_ = sm_stack_used(h, &u, &cap);
         ok = u == kSentinel64 && cap == kSentinel64;
         return s_;
       }},
      {"sm_stack_storage", false,
       [](C&, sm_stack h, bool& ok) {
         sm_storage o = sentinel_storage();
         const sm_status s_ = sm_stack_storage(h, &o);
         ok = o == sentinel_storage();
         return s_;
       }},
      {"sm_stack_release", true, [](C&, sm_stack h, bool& ok) { NO_OUT(sm_stack_release(h)); }},
  };
}

void register_handle_cases() {
  for (const TensorFn& f : tensor_fns()) {
    const auto call = f.call;
    const std::vector<std::string> needles = {f.fn};
    if (!f.null_ok)
      add(std::string(f.fn) + "_null_tensor", {SM_ERR_INVALID_HANDLE}, needles,
          [call](Ctx& c, bool& ok) { return call(c, nullptr, ok); });
    add(std::string(f.fn) + "_released_tensor", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.released, ok); });
    add(std::string(f.fn) + "_forged_tensor", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.forged, ok); });
    add(std::string(f.fn) + "_storage_as_tensor", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.storage_as_tensor, ok); });
  }
  for (const StorageFn& f : storage_fns()) {
    const auto call = f.call;
    const std::vector<std::string> needles = {f.fn};
    if (!f.null_ok)
      add(std::string(f.fn) + "_null_storage", {SM_ERR_INVALID_HANDLE}, needles,
          [call](Ctx& c, bool& ok) { return call(c, nullptr, ok); });
    add(std::string(f.fn) + "_forged_storage", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, forged_storage(), ok); });
    add(std::string(f.fn) + "_stack_as_storage", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.stack_as_storage, ok); });
    add(std::string(f.fn) + "_released_storage", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.released_storage, ok); });
  }
  for (const StackFn& f : stack_fns()) {
    const auto call = f.call;
    const std::vector<std::string> needles = {f.fn};
    if (!f.null_ok)
      add(std::string(f.fn) + "_null_stack", {SM_ERR_INVALID_HANDLE}, needles,
          [call](Ctx& c, bool& ok) { return call(c, nullptr, ok); });
    add(std::string(f.fn) + "_forged_stack", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, forged_stack(), ok); });
    add(std::string(f.fn) + "_tensor_as_stack", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.tensor_as_stack, ok); });
    add(std::string(f.fn) + "_released_stack", {SM_ERR_INVALID_HANDLE}, needles,
        [call](Ctx& c, bool& ok) { return call(c, c.released_stack, ok); });
  }
}

// ---------------------------------------------------------------------------
// 2. NULL pointers (out-parameters and required inputs)
// ---------------------------------------------------------------------------

void register_null_pointer_cases() {
  const std::vector<sm_status> IA = {SM_ERR_INVALID_ARGUMENT};
  using C = Ctx;
  // version / device count / threads / debug
  add("sm_version_null_major", IA, {"sm_version", "major"}, [](C&, bool& ok) {
    int b = kSentinel32, c = kSentinel32;
    const sm_status s = sm_version(nullptr, &b, &c);
    ok = b == kSentinel32 && c == kSentinel32;
    return s;
  });
  add("sm_version_null_minor", IA, {"sm_version", "minor"}, [](C&, bool& ok) {
    int a = kSentinel32, c = kSentinel32;
    const sm_status s = sm_version(&a, nullptr, &c);
    ok = a == kSentinel32 && c == kSentinel32;
    return s;
  });
  add("sm_version_null_patch", IA, {"sm_version", "patch"}, [](C&, bool& ok) {
    int a = kSentinel32, b = kSentinel32;
    const sm_status s = sm_version(&a, &b, nullptr);
    ok = a == kSentinel32 && b == kSentinel32;
    return s;
  });
  add("sm_cuda_device_count_null", IA, {"sm_cuda_device_count"},
      [](C&, bool& ok) { NO_OUT(sm_cuda_device_count(nullptr)); });
  add("sm_get_num_threads_null", IA, {"sm_get_num_threads"},
      [](C&, bool& ok) { NO_OUT(sm_get_num_threads(nullptr)); });
  add("sm_debug_live_handles_null", IA, {"sm_debug_live_handles"}, [](C&, bool& ok) {
    int64_t a = kSentinel64, b = kSentinel64;
    const sm_status s = sm_debug_live_handles(&a, &b, nullptr);
    ok = a == kSentinel64 && b == kSentinel64;
    return s;
  });
  // Aging is for released slots only: a live handle must stay valid.
  add("sm_debug_age_handle_slot_live", IA, {"sm_debug_age_handle_slot", "live"},
      [](C& c, bool& ok) { NO_OUT(sm_debug_age_handle_slot(c.t, 1)); });
  add("sm_debug_age_handle_slot_forged", {SM_ERR_INVALID_HANDLE}, {"sm_debug_age_handle_slot"},
      [](C&, bool& ok) { NO_OUT(sm_debug_age_handle_slot(reinterpret_cast<void*>(0xBAD), 1)); });
  // creation
  add("sm_empty_null_out", IA, {"sm_empty", "out"},
      [](C&, bool& ok) { NO_OUT(sm_empty(kS4, 1, SM_FLOAT32, cpu(), nullptr)); });
  add("sm_empty_null_shape", IA, {"sm_empty", "shape"},
      [](C&, bool& ok) { T_OUT(sm_empty(nullptr, 2, SM_FLOAT32, cpu(), &o)); });
  add("sm_empty_strided_null_out", IA, {"sm_empty_strided", "out"},
      [](C&, bool& ok) { NO_OUT(sm_empty_strided(kS4, kStr1, 1, SM_FLOAT32, cpu(), nullptr)); });
  add("sm_empty_strided_null_strides", IA, {"sm_empty_strided", "strides"},
      [](C&, bool& ok) { T_OUT(sm_empty_strided(kS4, nullptr, 1, SM_FLOAT32, cpu(), &o)); });
  add("sm_empty_strided_null_shape", IA, {"sm_empty_strided", "shape"},
      [](C&, bool& ok) { T_OUT(sm_empty_strided(nullptr, kStr1, 1, SM_FLOAT32, cpu(), &o)); });
  add("sm_zeros_null_out", IA, {"sm_zeros", "out"},
      [](C&, bool& ok) { NO_OUT(sm_zeros(kS4, 1, SM_FLOAT32, cpu(), nullptr)); });
  add("sm_zeros_null_shape", IA, {"sm_zeros", "shape"},
      [](C&, bool& ok) { T_OUT(sm_zeros(nullptr, 1, SM_FLOAT32, cpu(), &o)); });
  add("sm_full_null_out", IA, {"sm_full", "out"},
      [](C&, bool& ok) { NO_OUT(sm_full(kS4, 1, 1.0, SM_FLOAT32, cpu(), nullptr)); });
  add("sm_full_null_shape", IA, {"sm_full", "shape"},
      [](C&, bool& ok) { T_OUT(sm_full(nullptr, 3, 1.0, SM_FLOAT32, cpu(), &o)); });
  add("sm_arange_null_out", IA, {"sm_arange", "out"},
      [](C&, bool& ok) { NO_OUT(sm_arange(0, 1, 4, SM_FLOAT32, cpu(), nullptr)); });
  add("sm_from_host_null_out", IA, {"sm_from_host", "out"}, [](C& c, bool& ok) {
    NO_OUT(sm_from_host(c.buf.data(), kS4, 1, SM_FLOAT32, cpu(), nullptr));
  });
  add("sm_from_host_null_data", IA, {"sm_from_host", "data"},
      [](C&, bool& ok) { T_OUT(sm_from_host(nullptr, kS4, 1, SM_FLOAT32, cpu(), &o)); });
  add("sm_from_host_null_shape", IA, {"sm_from_host", "shape"},
      [](C& c, bool& ok) { T_OUT(sm_from_host(c.buf.data(), nullptr, 1, SM_FLOAT32, cpu(), &o)); });
  add("sm_from_blob_null_out", IA, {"sm_from_blob", "out"}, [](C& c, bool& ok) {
    NO_OUT(sm_from_blob(c.buf.data(), kS4, nullptr, 1, SM_FLOAT32, cpu(), nullptr, nullptr, nullptr));
  });
  add("sm_from_blob_null_data", IA, {"sm_from_blob", "data"}, [](C&, bool& ok) {
    T_OUT(sm_from_blob(nullptr, kS4, nullptr, 1, SM_FLOAT32, cpu(), nullptr, nullptr, &o));
  });
  add("sm_from_blob_null_shape", IA, {"sm_from_blob", "shape"}, [](C& c, bool& ok) {
    T_OUT(sm_from_blob(c.buf.data(), nullptr, nullptr, 2, SM_FLOAT32, cpu(), nullptr, nullptr, &o));
  });
  add("sm_copy_to_host_null_dst", IA, {"sm_copy_to_host", "dst"},
      [](C& c, bool& ok) { NO_OUT(sm_copy_to_host(c.t, nullptr, 4096)); });
  // metadata
  add("sm_ndim_null", IA, {"sm_ndim", "out"}, [](C& c, bool& ok) { NO_OUT(sm_ndim(c.t, nullptr)); });
  add("sm_shape_null", IA, {"sm_shape", "out"}, [](C& c, bool& ok) { NO_OUT(sm_shape(c.t, nullptr, 3)); });
  add("sm_strides_null", IA, {"sm_strides", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_strides(c.t, nullptr, 3)); });
  add("sm_storage_offset_null", IA, {"sm_storage_offset"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_offset(c.t, nullptr)); });
  add("sm_dtype_of_null", IA, {"sm_dtype_of"}, [](C& c, bool& ok) { NO_OUT(sm_dtype_of(c.t, nullptr)); });
  add("sm_device_of_null", IA, {"sm_device_of"}, [](C& c, bool& ok) { NO_OUT(sm_device_of(c.t, nullptr)); });
  add("sm_numel_null", IA, {"sm_numel"}, [](C& c, bool& ok) { NO_OUT(sm_numel(c.t, nullptr)); });
  add("sm_nbytes_null", IA, {"sm_nbytes"}, [](C& c, bool& ok) { NO_OUT(sm_nbytes(c.t, nullptr)); });
  add("sm_storage_nbytes_null", IA, {"sm_storage_nbytes"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_nbytes(c.t, nullptr)); });
  add("sm_data_ptr_null", IA, {"sm_data_ptr"}, [](C& c, bool& ok) { NO_OUT(sm_data_ptr(c.t, nullptr)); });
  add("sm_is_contiguous_null", IA, {"sm_is_contiguous"},
      [](C& c, bool& ok) { NO_OUT(sm_is_contiguous(c.t, SM_CONTIGUOUS, nullptr)); });
  add("sm_same_storage_null", IA, {"sm_same_storage"},
      [](C& c, bool& ok) { NO_OUT(sm_same_storage(c.t, c.t, nullptr)); });
  add("sm_version_counter_null", IA, {"sm_version_counter"},
      [](C& c, bool& ok) { NO_OUT(sm_version_counter(c.t, nullptr)); });
  add("sm_is_read_only_null", IA, {"sm_is_read_only"},
      [](C& c, bool& ok) { NO_OUT(sm_is_read_only(c.t, nullptr)); });
  add("sm_tensor_storage_null", IA, {"sm_tensor_storage"},
      [](C& c, bool& ok) { NO_OUT(sm_tensor_storage(c.t, nullptr)); });
  // storages
  add("sm_storage_size_null", IA, {"sm_storage_size"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_size(c.st, nullptr)); });
  add("sm_storage_data_ptr_null", IA, {"sm_storage_data_ptr"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_data_ptr(c.st, nullptr)); });
  add("sm_storage_device_null", IA, {"sm_storage_device"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_device(c.st, nullptr)); });
  add("sm_tensor_from_storage_null_out", IA, {"sm_tensor_from_storage", "out"}, [](C& c, bool& ok) {
    NO_OUT(sm_tensor_from_storage(c.st, kS4, nullptr, 1, 0, SM_FLOAT32, nullptr));
  });
  add("sm_tensor_from_storage_null_shape", IA, {"sm_tensor_from_storage", "shape"},
      [](C& c, bool& ok) { T_OUT(sm_tensor_from_storage(c.st, nullptr, nullptr, 1, 0, SM_FLOAT32, &o)); });
  // views
  add("sm_view_null_out", IA, {"sm_view", "out"}, [](C& c, bool& ok) { NO_OUT(sm_view(c.t, kS24, 1, nullptr)); });
  add("sm_view_null_shape", IA, {"sm_view", "shape"}, [](C& c, bool& ok) { T_OUT(sm_view(c.t, nullptr, 1, &o)); });
  add("sm_as_strided_null_out", IA, {"sm_as_strided", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_as_strided(c.t, kS4, kStr1, 1, 0, nullptr)); });
  add("sm_as_strided_null_strides", IA, {"sm_as_strided", "strides"},
      [](C& c, bool& ok) { T_OUT(sm_as_strided(c.t, kS4, nullptr, 1, 0, &o)); });
  add("sm_slice_null_out", IA, {"sm_slice", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_slice(c.t, 0, 0, 1, 1, nullptr)); });
  add("sm_narrow_null_out", IA, {"sm_narrow", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_narrow(c.t, 0, 0, 1, nullptr)); });
  add("sm_select_null_out", IA, {"sm_select", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_select(c.t, 0, 0, nullptr)); });
  add("sm_permute_null_out", IA, {"sm_permute", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_permute(c.t, kDims3, 3, nullptr)); });
  add("sm_permute_null_dims", IA, {"sm_permute", "dims"},
      [](C& c, bool& ok) { T_OUT(sm_permute(c.t, nullptr, 3, &o)); });
  add("sm_transpose_null_out", IA, {"sm_transpose", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_transpose(c.t, 0, 1, nullptr)); });
  add("sm_movedim_null_out", IA, {"sm_movedim", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_movedim(c.t, kDim0, kDim0, 1, nullptr)); });
  add("sm_movedim_null_source", IA, {"sm_movedim", "source"},
      [](C& c, bool& ok) { T_OUT(sm_movedim(c.t, nullptr, kDim0, 1, &o)); });
  add("sm_movedim_null_destination", IA, {"sm_movedim", "destination"},
      [](C& c, bool& ok) { T_OUT(sm_movedim(c.t, kDim0, nullptr, 1, &o)); });
  add("sm_expand_null_out", IA, {"sm_expand", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_expand(c.t, kS234, 3, nullptr)); });
  add("sm_expand_null_shape", IA, {"sm_expand", "shape"},
      [](C& c, bool& ok) { T_OUT(sm_expand(c.t, nullptr, 3, &o)); });
  add("sm_squeeze_null_out", IA, {"sm_squeeze", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_squeeze(c.t, nullptr, 0, nullptr)); });
  add("sm_squeeze_null_dims", IA, {"sm_squeeze", "dims"},
      [](C& c, bool& ok) { T_OUT(sm_squeeze(c.t, nullptr, 2, &o)); });
  add("sm_unsqueeze_null_out", IA, {"sm_unsqueeze", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_unsqueeze(c.t, 0, nullptr)); });
  add("sm_flatten_null_out", IA, {"sm_flatten", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_flatten(c.t, 0, -1, nullptr)); });
  add("sm_unflatten_null_out", IA, {"sm_unflatten", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_unflatten(c.t, 0, kS1, 1, nullptr)); });
  add("sm_unflatten_null_sizes", IA, {"sm_unflatten", "sizes"},
      [](C& c, bool& ok) { T_OUT(sm_unflatten(c.t, 0, nullptr, 2, &o)); });
  add("sm_unfold_null_out", IA, {"sm_unfold", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_unfold(c.t, 0, 1, 1, nullptr)); });
  add("sm_diagonal_null_out", IA, {"sm_diagonal", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_diagonal(c.t, 0, 0, 1, nullptr)); });
  add("sm_split_null_count", IA, {"sm_split", "count"}, [](C& c, bool& ok) {
    sm_tensor outs[4] = {sentinel_tensor(), sentinel_tensor(), sentinel_tensor(), sentinel_tensor()};
    const sm_status s = sm_split(c.t, 1, 0, outs, 4, nullptr);
    ok = outs[0] == sentinel_tensor() && outs[1] == sentinel_tensor();
    return s;
  });
  add("sm_chunk_null_count", IA, {"sm_chunk", "count"},
      [](C& c, bool& ok) { NO_OUT(sm_chunk(c.t, 2, 0, nullptr, 0, nullptr)); });
  add("sm_flip_null_out", IA, {"sm_flip", "out"}, [](C& c, bool& ok) { NO_OUT(sm_flip(c.t, kDim0, 1, nullptr)); });
  add("sm_flip_null_dims", IA, {"sm_flip", "dims"}, [](C& c, bool& ok) { T_OUT(sm_flip(c.t, nullptr, 1, &o)); });
  // copies
  add("sm_reshape_would_copy_null", IA, {"sm_reshape_would_copy", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_reshape_would_copy(c.t, kS24, 1, nullptr)); });
  add("sm_reshape_would_copy_null_shape", IA, {"sm_reshape_would_copy", "shape"},
      [](C& c, bool& ok) { INT_OUT(sm_reshape_would_copy(c.t, nullptr, 1, &o)); });
  add("sm_reshape_null_out", IA, {"sm_reshape", "out"}, [](C& c, bool& ok) {
    int copied = kSentinel32;
    const sm_status s = sm_reshape(c.t, kS24, 1, nullptr, &copied);
    ok = copied == kSentinel32;
    return s;
  });
  add("sm_reshape_null_shape", IA, {"sm_reshape", "shape"},
      [](C& c, bool& ok) { T_OUT(sm_reshape(c.t, nullptr, 1, &o, nullptr)); });
  add("sm_contiguous_null_out", IA, {"sm_contiguous", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_contiguous(c.tt, SM_CONTIGUOUS, nullptr, nullptr)); });
  add("sm_clone_null_out", IA, {"sm_clone", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_clone(c.t, SM_CONTIGUOUS, nullptr)); });
  add("sm_to_null_out", IA, {"sm_to", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_to(c.t, cpu(), SM_FLOAT64, nullptr, nullptr)); });
  add("sm_index_select_null_out", IA, {"sm_index_select", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_index_select(c.t, 0, c.idx, nullptr)); });
  // memory
  add("sm_memory_stats_null", IA, {"sm_memory_stats"},
      [](C&, bool& ok) { NO_OUT(sm_memory_stats(cpu(), nullptr)); });
  add("sm_memory_summary_null_buf", IA, {"sm_memory_summary", "buf"},
      [](C&, bool& ok) { NO_OUT(sm_memory_summary(cpu(), nullptr, 100, nullptr)); });
  add("sm_memory_summary_null_buf_with_needed", IA, {"sm_memory_summary", "buf"}, [](C&, bool& ok) {
    size_t need = 777;
    const sm_status s = sm_memory_summary(cpu(), nullptr, 100, &need);
    ok = need == 777;
    return s;
  });
  add("sm_memory_snapshot_null_buf", IA, {"sm_memory_snapshot", "buf"},
      [](C&, bool& ok) { NO_OUT(sm_memory_snapshot(cpu(), nullptr, 100, nullptr)); });
  add("sm_memory_snapshot_null_buf_with_needed", IA, {"sm_memory_snapshot", "buf"}, [](C&, bool& ok) {
    size_t need = 777;
    const sm_status s = sm_memory_snapshot(cpu(), nullptr, 100, &need);
    ok = need == 777;
    return s;
  });
  // NULL and len 0 without needed: no room for the text and no way to say its size.
  add("sm_memory_snapshot_null_everything", IA, {"sm_memory_snapshot"},
      [](C&, bool& ok) { NO_OUT(sm_memory_snapshot(cpu(), nullptr, 0, nullptr)); });
  add("sm_storage_id_null", IA, {"sm_storage_id", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_id(c.st, nullptr)); });
  add("sm_push_tag_null", IA, {"sm_push_tag", "NULL"}, [](C&, bool& ok) { NO_OUT(sm_push_tag(nullptr)); });
  // stack
  add("sm_stack_create_null_out", IA, {"sm_stack_create", "out"},
      [](C&, bool& ok) { NO_OUT(sm_stack_create(cpu(), 1024, nullptr)); });
  add("sm_stack_push_null_out", IA, {"sm_stack_push", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_stack_push(c.stk, kS4, 1, SM_FLOAT32, nullptr)); });
  add("sm_stack_push_null_shape", IA, {"sm_stack_push", "shape"},
      [](C& c, bool& ok) { T_OUT(sm_stack_push(c.stk, nullptr, 1, SM_FLOAT32, &o)); });
  add("sm_stack_mark_null", IA, {"sm_stack_mark", "mark"},
      [](C& c, bool& ok) { NO_OUT(sm_stack_mark(c.stk, nullptr)); });
  add("sm_stack_used_null_used", IA, {"sm_stack_used", "used_bytes"}, [](C& c, bool& ok) {
    I64_OUT(sm_stack_used(c.stk, nullptr, &o));
  });
  add("sm_stack_used_null_capacity", IA, {"sm_stack_used", "capacity_bytes"}, [](C& c, bool& ok) {
    I64_OUT(sm_stack_used(c.stk, &o, nullptr));
  });
  // sharing between processes
  add("sm_empty_shared_null_out", IA, {"sm_empty_shared", "out"},
      [](C&, bool& ok) { NO_OUT(sm_empty_shared(kS4, 1, SM_FLOAT32, nullptr)); });
  add("sm_empty_shared_null_shape", IA, {"sm_empty_shared", "shape"},
      [](C&, bool& ok) { T_OUT(sm_empty_shared(nullptr, 1, SM_FLOAT32, &o)); });
  add("sm_is_shared_null", IA, {"sm_is_shared", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_is_shared(c.t, nullptr)); });
  add("sm_storage_is_shared_null", IA, {"sm_storage_is_shared", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_storage_is_shared(c.st, nullptr)); });
  add("sm_storage_export_null_desc", IA, {"sm_storage_export", "desc"},
      [](C& c, bool& ok) { INT_OUT(sm_storage_export(c.st, nullptr, &o)); });
  add("sm_storage_export_null_fd", IA, {"sm_storage_export", "fd"}, [](C& c, bool& ok) {
    sm_share_desc d;
    std::memset(&d, 0x5C, sizeof d);
    const sm_status s_ = sm_storage_export(c.st, &d, nullptr);
    ok = d.checksum == 0x5C5C5C5C5C5C5C5Cull;
    return s_;
  });
  add("sm_tensor_export_null_desc", IA, {"sm_tensor_export", "desc"},
      [](C& c, bool& ok) { INT_OUT(sm_tensor_export(c.t, nullptr, &o)); });
  add("sm_tensor_export_null_fd", IA, {"sm_tensor_export", "fd"}, [](C& c, bool& ok) {
    sm_share_desc d;
    std::memset(&d, 0x5C, sizeof d);
    const sm_status s_ = sm_tensor_export(c.t, &d, nullptr);
    ok = d.checksum == 0x5C5C5C5C5C5C5C5Cull;
    return s_;
  });
  add("sm_storage_import_null_desc", IA, {"sm_storage_import", "desc"}, [](C&, bool& ok) {
    sm_storage o = sentinel_storage();
    const sm_status s_ = sm_storage_import(nullptr, -1, &o);
    ok = o == sentinel_storage();
    return s_;
  });
  add("sm_storage_import_null_out", IA, {"sm_storage_import", "out"}, [](C&, bool& ok) {
    sm_share_desc d;
    std::memset(&d, 0, sizeof d);
    NO_OUT(sm_storage_import(&d, -1, nullptr));
  });
  add("sm_stack_create_shared_null", IA, {"sm_stack_create_shared", "out"},
      [](C&, bool& ok) { NO_OUT(sm_stack_create_shared(1024, nullptr)); });
  add("sm_stack_storage_null", IA, {"sm_stack_storage", "out"},
      [](C& c, bool& ok) { NO_OUT(sm_stack_storage(c.stk, nullptr)); });
  // dlpack
  add("sm_to_dlpack_null", IA, {"sm_to_dlpack", "managed"},
      [](C& c, bool& ok) { NO_OUT(sm_to_dlpack(c.t, 0, nullptr)); });
  add("sm_to_dlpack_ex_null", IA, {"sm_to_dlpack_ex", "managed"}, [](C& c, bool& ok) {
    INT_OUT(sm_to_dlpack_ex(c.t, SM_DLPACK_NORMALIZE, nullptr, nullptr, &o));
  });
  add("sm_from_dlpack_null_managed", IA, {"sm_from_dlpack", "managed"},
      [](C&, bool& ok) { T_OUT(sm_from_dlpack(nullptr, 0, &o)); });
  add("sm_from_dlpack_null_managed_versioned", IA, {"sm_from_dlpack", "managed"},
      [](C&, bool& ok) { T_OUT(sm_from_dlpack(nullptr, 1, &o)); });
}

// ---------------------------------------------------------------------------
// 3. Values out of range: dims, indices, sizes, overflow, dtypes, devices,
//    memory.
// ---------------------------------------------------------------------------

// A legacy float32 import of n elements at data + byte_offset whose deleter
// must not run (the call fails and ownership stays here).
int g_hostile_deleter_calls = 0;
sm_status import_hostile(void* data, uint64_t byte_offset, int64_t n, bool& ok) {
  int64_t shape[1] = {n};
  sm_DLManagedTensor m{};
  m.dl_tensor.data = data;
  m.dl_tensor.device = sm_DLDevice{sm_kDLCPU, 0};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = sm_DLDataType{sm_kDLFloat, 32, 1};
  m.dl_tensor.shape = shape;
  m.dl_tensor.byte_offset = byte_offset;
  m.deleter = [](sm_DLManagedTensor*) { ++g_hostile_deleter_calls; };
  const int before = g_hostile_deleter_calls;
  sm_tensor o = sentinel_tensor();
  const sm_status st = sm_from_dlpack(&m, 0, &o);
  ok = o == sentinel_tensor() && g_hostile_deleter_calls == before;
  return st;
}

void register_value_cases() {
  using C = Ctx;
  const std::vector<sm_status> IA = {SM_ERR_INVALID_ARGUMENT}, SH = {SM_ERR_SHAPE},
                               OOB = {SM_ERR_OUT_OF_BOUNDS}, OVF = {SM_ERR_OVERFLOW},
                               DT = {SM_ERR_DTYPE}, DEV = {SM_ERR_DEVICE},
                               OOM = {SM_ERR_OUT_OF_MEMORY}, OVL = {SM_ERR_OVERLAP};
  // An unknown dtype code: "bad enum" (INVALID_ARGUMENT) or "dtype not
  // allowed" (DTYPE); the header allows both readings.
  const std::vector<sm_status> BAD_DTYPE = {SM_ERR_INVALID_ARGUMENT, SM_ERR_DTYPE};

  // --- negative sizes -> SM_ERR_SHAPE
  add("sm_empty_negative_size", SH, {"sm_empty", "-3"}, [](C&, bool& ok) {
    const int64_t s[2] = {2, -3};
    T_OUT(sm_empty(s, 2, SM_FLOAT32, cpu(), &o));
  });
  add("sm_zeros_negative_size", SH, {"sm_zeros", "-1"}, [](C&, bool& ok) {
    const int64_t s[1] = {-1};
    T_OUT(sm_zeros(s, 1, SM_FLOAT32, cpu(), &o));
  });
  add("sm_full_negative_size", SH, {"sm_full", "-2"}, [](C&, bool& ok) {
    const int64_t s[1] = {-2};
    T_OUT(sm_full(s, 1, 1.0, SM_FLOAT32, cpu(), &o));
  });
  add("sm_from_host_negative_size", SH, {"sm_from_host", "-2"}, [](C& c, bool& ok) {
    const int64_t s[1] = {-2};
    T_OUT(sm_from_host(c.buf.data(), s, 1, SM_FLOAT32, cpu(), &o));
  });
  add("sm_empty_strided_negative_size", SH, {"sm_empty_strided", "-5"}, [](C&, bool& ok) {
    const int64_t s[1] = {-5};
    T_OUT(sm_empty_strided(s, kStr1, 1, SM_FLOAT32, cpu(), &o));
  });
  add("sm_arange_negative_n", SH, {"sm_arange", "-1"},
      [](C&, bool& ok) { T_OUT(sm_arange(0, 1, -1, SM_FLOAT32, cpu(), &o)); });
  add("sm_as_strided_negative_size", SH, {"sm_as_strided", "-1"}, [](C& c, bool& ok) {
    const int64_t s[1] = {-1};
    T_OUT(sm_as_strided(c.t, s, kStr1, 1, 0, &o));
  });
  add("sm_tensor_from_storage_negative_size", SH, {"sm_tensor_from_storage", "-4"}, [](C& c, bool& ok) {
    const int64_t s[1] = {-4};
    T_OUT(sm_tensor_from_storage(c.st, s, nullptr, 1, 0, SM_FLOAT32, &o));
  });
  add("sm_stack_push_negative_size", SH, {"sm_stack_push", "-7"}, [](C& c, bool& ok) {
    const int64_t s[1] = {-7};
    T_OUT(sm_stack_push(c.stk, s, 1, SM_FLOAT32, &o));
  });
  add("sm_view_negative_size", SH, {"sm_view", "-2"}, [](C& c, bool& ok) {
    const int64_t s[2] = {-2, -12};
    T_OUT(sm_view(c.t, s, 2, &o));
  });
  add("sm_expand_negative_size", SH, {"sm_expand", "-3"}, [](C& c, bool& ok) {
    const int64_t s[3] = {2, -3, 4};
    T_OUT(sm_expand(c.t, s, 3, &o));
  });

  // --- incompatible shapes -> SM_ERR_SHAPE
  add("sm_view_wrong_numel", SH, {"sm_view"}, [](C& c, bool& ok) {
    const int64_t s[2] = {5, 5};
    T_OUT(sm_view(c.t, s, 2, &o));
  });
  add("sm_view_two_inferred", SH, {"sm_view"}, [](C& c, bool& ok) {
    const int64_t s[3] = {-1, -1, 6};
    T_OUT(sm_view(c.t, s, 3, &o));
  });
  add("sm_view_incompatible_strides", SH, {"sm_view", "sm_reshape"}, [](C& c, bool& ok) {
    T_OUT(sm_view(c.tt, kS24, 1, &o));
  });
  add("sm_reshape_wrong_numel", SH, {"sm_reshape", "7"}, [](C& c, bool& ok) {
    const int64_t s[1] = {7};
    int copied = kSentinel32;
    sm_tensor o = sentinel_tensor();
    const sm_status st = sm_reshape(c.t, s, 1, &o, &copied);
    ok = o == sentinel_tensor() && copied == kSentinel32;
    return st;
  });
  add("sm_reshape_would_copy_wrong_numel", SH, {"sm_reshape_would_copy"}, [](C& c, bool& ok) {
    const int64_t s[1] = {7};
    INT_OUT(sm_reshape_would_copy(c.t, s, 1, &o));
  });
  add("sm_expand_non_singleton", SH, {"sm_expand"}, [](C& c, bool& ok) {
    const int64_t s[3] = {2, 5, 4};
    T_OUT(sm_expand(c.t, s, 3, &o));
  });
  add("sm_expand_fewer_dims", SH, {"sm_expand"}, [](C& c, bool& ok) { T_OUT(sm_expand(c.t, kS4, 1, &o)); });
  add("sm_unflatten_wrong_product", SH, {"sm_unflatten"}, [](C& c, bool& ok) {
    const int64_t s[2] = {2, 2};
    T_OUT(sm_unflatten(c.t, 1, s, 2, &o));
  });
  add("sm_flatten_not_a_view", SH, {"sm_flatten"}, [](C& c, bool& ok) { T_OUT(sm_flatten(c.tt, 1, 2, &o)); });
  add("sm_copy_into_not_broadcastable", SH, {"sm_copy_into", "[3]", "[2, 3, 4]"},
      [](C& c, bool& ok) { NO_OUT(sm_copy_into(c.t, c.three)); });
  add("sm_copy_into_src_bigger", SH, {"sm_copy_into"}, [](C& c, bool& ok) { NO_OUT(sm_copy_into(c.f4, c.t)); });
  add("sm_inplace_tensor_not_broadcastable", SH, {"sm_inplace_tensor"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.t, SM_OP_ADD, c.three, 1.0)); });

  // --- dims and indices out of range -> SM_ERR_OUT_OF_BOUNDS
  add("sm_slice_dim", OOB, {"sm_slice", "3"}, [](C& c, bool& ok) { T_OUT(sm_slice(c.t, 3, 0, 1, 1, &o)); });
  add("sm_slice_negative_dim", OOB, {"sm_slice", "-4"},
      [](C& c, bool& ok) { T_OUT(sm_slice(c.t, -4, 0, 1, 1, &o)); });
  add("sm_narrow_dim", OOB, {"sm_narrow", "5"}, [](C& c, bool& ok) { T_OUT(sm_narrow(c.t, 5, 0, 1, &o)); });
  add("sm_narrow_past_end", OOB, {"sm_narrow"}, [](C& c, bool& ok) { T_OUT(sm_narrow(c.t, 0, 1, 2, &o)); });
  add("sm_narrow_start", OOB, {"sm_narrow", "-3"}, [](C& c, bool& ok) { T_OUT(sm_narrow(c.t, 0, -3, 1, &o)); });
  add("sm_select_index", OOB, {"sm_select", "3"}, [](C& c, bool& ok) { T_OUT(sm_select(c.t, 1, 3, &o)); });
  add("sm_select_negative_index", OOB, {"sm_select", "-4"},
      [](C& c, bool& ok) { T_OUT(sm_select(c.t, 1, -4, &o)); });
  add("sm_select_dim", OOB, {"sm_select", "7"}, [](C& c, bool& ok) { T_OUT(sm_select(c.t, 7, 0, &o)); });
  add("sm_permute_dim", OOB, {"sm_permute", "3"}, [](C& c, bool& ok) {
    const int32_t d[3] = {0, 1, 3};
    T_OUT(sm_permute(c.t, d, 3, &o));
  });
  add("sm_transpose_dim", OOB, {"sm_transpose", "3"}, [](C& c, bool& ok) { T_OUT(sm_transpose(c.t, 0, 3, &o)); });
  add("sm_transpose_negative_dim", OOB, {"sm_transpose", "-4"},
      [](C& c, bool& ok) { T_OUT(sm_transpose(c.t, -4, 0, &o)); });
  add("sm_movedim_dim", OOB, {"sm_movedim", "3"}, [](C& c, bool& ok) {
    const int32_t s[1] = {3};
    T_OUT(sm_movedim(c.t, s, kDim0, 1, &o));
  });
  add("sm_squeeze_dim", OOB, {"sm_squeeze", "3"}, [](C& c, bool& ok) {
    const int32_t d[1] = {3};
    T_OUT(sm_squeeze(c.t, d, 1, &o));
  });
  add("sm_unsqueeze_dim", OOB, {"sm_unsqueeze", "4"}, [](C& c, bool& ok) { T_OUT(sm_unsqueeze(c.t, 4, &o)); });
  add("sm_unsqueeze_negative_dim", OOB, {"sm_unsqueeze", "-5"},
      [](C& c, bool& ok) { T_OUT(sm_unsqueeze(c.t, -5, &o)); });
  add("sm_flatten_dim", OOB, {"sm_flatten", "3"}, [](C& c, bool& ok) { T_OUT(sm_flatten(c.t, 0, 3, &o)); });
  add("sm_unflatten_dim", OOB, {"sm_unflatten", "3"}, [](C& c, bool& ok) { T_OUT(sm_unflatten(c.t, 3, kS1, 1, &o)); });
  add("sm_unfold_dim", OOB, {"sm_unfold", "3"}, [](C& c, bool& ok) { T_OUT(sm_unfold(c.t, 3, 1, 1, &o)); });
  add("sm_diagonal_dim", OOB, {"sm_diagonal", "3"}, [](C& c, bool& ok) { T_OUT(sm_diagonal(c.t, 0, 0, 3, &o)); });
  add("sm_split_dim", OOB, {"sm_split", "3"}, [](C& c, bool& ok) { I32_OUT(sm_split(c.t, 1, 3, nullptr, 0, &o)); });
  add("sm_chunk_dim", OOB, {"sm_chunk", "-4"}, [](C& c, bool& ok) { I32_OUT(sm_chunk(c.t, 2, -4, nullptr, 0, &o)); });
  add("sm_flip_dim", OOB, {"sm_flip", "3"}, [](C& c, bool& ok) {
    const int32_t d[1] = {3};
    T_OUT(sm_flip(c.t, d, 1, &o));
  });
  add("sm_index_select_dim", OOB, {"sm_index_select", "3"},
      [](C& c, bool& ok) { T_OUT(sm_index_select(c.t, 3, c.idx, &o)); });
  add("sm_index_select_index_high", OOB, {"sm_index_select", "5"},
      [](C& c, bool& ok) { T_OUT(sm_index_select(c.t, 1, c.idx_hi, &o)); });
  add("sm_index_select_index_low", OOB, {"sm_index_select", "-3"},
      [](C& c, bool& ok) { T_OUT(sm_index_select(c.t, 0, c.idx_lo, &o)); });
  add("sm_as_strided_past_end", OOB, {"sm_as_strided"}, [](C& c, bool& ok) {
    const int64_t s[1] = {25};
    T_OUT(sm_as_strided(c.t, s, kStr1, 1, 0, &o));
  });
  add("sm_as_strided_offset_past_end", OOB, {"sm_as_strided"},
      [](C& c, bool& ok) { T_OUT(sm_as_strided(c.t, kS24, kStr1, 1, 1, &o)); });
  add("sm_as_strided_negative_offset", OOB, {"sm_as_strided", "-1"},
      [](C& c, bool& ok) { T_OUT(sm_as_strided(c.t, kS4, kStr1, 1, -1, &o)); });
  add("sm_as_strided_negative_stride_before_start", OOB, {"sm_as_strided"}, [](C& c, bool& ok) {
    const int64_t st[1] = {-1};
    T_OUT(sm_as_strided(c.t, kS4, st, 1, 2, &o));
  });
  add("sm_tensor_from_storage_past_end", OOB, {"sm_tensor_from_storage"}, [](C& c, bool& ok) {
    const int64_t s[1] = {13};
    T_OUT(sm_tensor_from_storage(c.st, s, nullptr, 1, 0, SM_FLOAT64, &o));
  });
  add("sm_tensor_from_storage_offset", OOB, {"sm_tensor_from_storage"},
      [](C& c, bool& ok) { T_OUT(sm_tensor_from_storage(c.st, kS1, nullptr, 1, 24, SM_FLOAT32, &o)); });
  // A storage over bytes at an odd address: no wider typed view of it.
  add("sm_tensor_from_storage_misaligned", IA, {"sm_tensor_from_storage", "aligned"}, [](C& c, bool& ok) {
    const int64_t n[1] = {16};
    sm_tensor bytes = nullptr;
    sm_storage s = nullptr;
    if (sm_from_blob(c.buf.data() + 1, n, nullptr, 1, SM_UINT8, cpu(), nullptr, nullptr, &bytes) != SM_OK ||
        sm_tensor_storage(bytes, &s) != SM_OK)
      return sm_status{SM_ERR_INTERNAL};
    sm_tensor o = sentinel_tensor();
    const sm_status st = sm_tensor_from_storage(s, kS1, nullptr, 1, 0, SM_FLOAT32, &o);
    ok = o == sentinel_tensor();
    const std::string msg = sm_last_error();
    sm_storage_release(s);
    sm_tensor_release(bytes);
    if (st != SM_OK && msg.find("sm_tensor_from_storage") == std::string::npos) return sm_status{SM_ERR_INTERNAL};
    return st;
  });
  // DLPack address arithmetic that would wrap (checked unsigned).
  add("sm_from_dlpack_byte_offset_wraps", OOB, {"sm_from_dlpack", "byte_offset"}, [](C& c, bool& ok) {
    return import_hostile(c.buf.data() + 16, ~uint64_t(0) - 3, 4, ok);
  });
  add("sm_from_dlpack_byte_offset_2_63", OOB, {"sm_from_dlpack", "byte_offset"}, [](C& c, bool& ok) {
    return import_hostile(c.buf.data(), uint64_t(1) << 63, 4, ok);
  });
  add("sm_from_dlpack_span_past_the_top", OOB, {"sm_from_dlpack", "top of the address space"},
      [](C&, bool& ok) { return import_hostile(reinterpret_cast<void*>(~uintptr_t(0) - 7), 0, 4, ok); });

  // --- int64 overflow -> SM_ERR_OVERFLOW
  add("sm_empty_numel_overflow", OVF, {"sm_empty"}, [](C&, bool& ok) {
    const int64_t s[2] = {kBig, 4};
    T_OUT(sm_empty(s, 2, SM_FLOAT32, cpu(), &o));
  });
  add("sm_empty_nbytes_overflow", OVF, {"sm_empty"}, [](C&, bool& ok) {
    const int64_t s[1] = {int64_t(1) << 61};
    T_OUT(sm_empty(s, 1, SM_FLOAT64, cpu(), &o));
  });
  add("sm_zeros_numel_overflow", OVF, {"sm_zeros"}, [](C&, bool& ok) {
    const int64_t s[2] = {int64_t(1) << 32, int64_t(1) << 32};
    T_OUT(sm_zeros(s, 2, SM_FLOAT32, cpu(), &o));
  });
  add("sm_full_numel_overflow", OVF, {"sm_full"}, [](C&, bool& ok) {
    const int64_t s[3] = {int64_t(1) << 30, int64_t(1) << 30, int64_t(1) << 30};
    T_OUT(sm_full(s, 3, 1.0, SM_INT8, cpu(), &o));
  });
  add("sm_from_host_numel_overflow", OVF, {"sm_from_host"}, [](C& c, bool& ok) {
    const int64_t s[2] = {kBig, 4};
    T_OUT(sm_from_host(c.buf.data(), s, 2, SM_FLOAT32, cpu(), &o));
  });
  add("sm_arange_nbytes_overflow", OVF, {"sm_arange"},
      [](C&, bool& ok) { T_OUT(sm_arange(0, 1, kBig, SM_FLOAT64, cpu(), &o)); });
  add("sm_empty_strided_stride_overflow", OVF, {"sm_empty_strided"}, [](C&, bool& ok) {
    const int64_t s[2] = {2, 2}, st[2] = {kBig, kBig};
    T_OUT(sm_empty_strided(s, st, 2, SM_FLOAT32, cpu(), &o));
  });
  add("sm_empty_strided_stride_times_size_overflow", OVF, {"sm_empty_strided"}, [](C&, bool& ok) {
    const int64_t s[1] = {3}, st[1] = {kBig};
    T_OUT(sm_empty_strided(s, st, 1, SM_INT8, cpu(), &o));
  });
  add("sm_as_strided_stride_overflow", OVF, {"sm_as_strided"}, [](C& c, bool& ok) {
    const int64_t s[1] = {3}, st[1] = {kBig};
    T_OUT(sm_as_strided(c.t, s, st, 1, 0, &o));
  });
  add("sm_tensor_from_storage_stride_overflow", OVF, {"sm_tensor_from_storage"}, [](C& c, bool& ok) {
    const int64_t s[1] = {3}, st[1] = {kBig};
    T_OUT(sm_tensor_from_storage(c.st, s, st, 1, 0, SM_FLOAT32, &o));
  });
  add("sm_expand_numel_overflow", OVF, {"sm_expand"}, [](C& c, bool& ok) {
    const int64_t s[4] = {int64_t(1) << 40, int64_t(1) << 40, 1, 4};
    T_OUT(sm_expand(c.f4, s, 4, &o));
  });
  add("sm_stack_push_overflow", OVF, {"sm_stack_push"}, [](C& c, bool& ok) {
    const int64_t s[2] = {kBig, 8};
    T_OUT(sm_stack_push(c.stk, s, 2, SM_FLOAT32, &o));
  });

  // --- wrong dtypes -> SM_ERR_DTYPE
  add("sm_inplace_scalar_div_int", DT, {"sm_inplace_scalar", "int32"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.it, SM_OP_DIV, 2, 0)); });
  add("sm_inplace_scalar_sqrt_int", DT, {"sm_inplace_scalar", "int32"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.it, SM_OP_SQRT, 0, 0)); });
  add("sm_inplace_scalar_exp_int", DT, {"sm_inplace_scalar"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.it, SM_OP_EXP, 0, 0)); });
  add("sm_inplace_scalar_fractional_add_int", DT, {"sm_inplace_scalar", "2.5"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.it, SM_OP_ADD, 2.5, 0)); });
  add("sm_inplace_scalar_bool_add", DT, {"sm_inplace_scalar", "bool"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.b4, SM_OP_ADD, 1, 0)); });
  add("sm_inplace_tensor_float_into_int", DT, {"sm_inplace_tensor", "float32"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.it, SM_OP_ADD, c.f4, 1.0)); });
  add("sm_inplace_tensor_div_int", DT, {"sm_inplace_tensor"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.it, SM_OP_DIV, c.it, 1.0)); });
  add("sm_inplace_tensor_bool_mul", DT, {"sm_inplace_tensor", "bool"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.b4, SM_OP_MUL, c.b4, 1.0)); });
  add("sm_index_select_float_index", DT, {"sm_index_select", "float32"},
      [](C& c, bool& ok) { T_OUT(sm_index_select(c.t, 0, c.f4, &o)); });
  add("sm_index_select_bool_index", DT, {"sm_index_select", "bool"},
      [](C& c, bool& ok) { T_OUT(sm_index_select(c.t, 0, c.b4, &o)); });

  // --- bad enums and counts -> SM_ERR_INVALID_ARGUMENT
  add("sm_empty_bad_dtype", BAD_DTYPE,
      {"sm_empty", "dtype = 99 is not a dtype (valid: 0 bool, 1 uint8, 2 int8, 3 int16, 4 int32, "
                   "5 int64, 6 float16, 7 bfloat16, 8 float32, 9 float64, 10 uint16, 11 uint32, "
                   "12 uint64, 13 complex64, 14 complex128)"}, [](C&, bool& ok) { T_OUT(sm_empty(kS4, 1, 99, cpu(), &o)); });
  add("sm_zeros_negative_dtype", BAD_DTYPE, {"sm_zeros", "-1"}, [](C&, bool& ok) { T_OUT(sm_zeros(kS4, 1, -1, cpu(), &o)); });
  add("sm_from_host_bad_dtype", BAD_DTYPE, {"sm_from_host"},
      [](C& c, bool& ok) { T_OUT(sm_from_host(c.buf.data(), kS4, 1, SM_NUM_DTYPES, cpu(), &o)); });
  add("sm_to_bad_dtype", BAD_DTYPE, {"sm_to", "42"}, [](C& c, bool& ok) { T_OUT(sm_to(c.t, cpu(), 42, &o, nullptr)); });
  add("sm_tensor_from_storage_bad_dtype", BAD_DTYPE, {"sm_tensor_from_storage"},
      [](C& c, bool& ok) { T_OUT(sm_tensor_from_storage(c.st, kS4, nullptr, 1, 0, 77, &o)); });
  add("sm_stack_push_bad_dtype", BAD_DTYPE, {"sm_stack_push"},
      [](C& c, bool& ok) { T_OUT(sm_stack_push(c.stk, kS4, 1, 99, &o)); });
  add("sm_empty_negative_ndim", IA, {"sm_empty", "-1"},
      [](C&, bool& ok) { T_OUT(sm_empty(kS4, -1, SM_FLOAT32, cpu(), &o)); });
  add("sm_empty_too_many_dims", IA, {"sm_empty", "17"}, [](C&, bool& ok) {
    int64_t s[SM_MAX_DIMS + 1];
    for (auto& v : s) v = 1;
    T_OUT(sm_empty(s, SM_MAX_DIMS + 1, SM_FLOAT32, cpu(), &o));
  });
  add("sm_view_too_many_dims", IA, {"sm_view", "17"}, [](C& c, bool& ok) {
    int64_t s[SM_MAX_DIMS + 1];
    for (auto& v : s) v = 1;
    s[0] = 24;
    T_OUT(sm_view(c.t, s, SM_MAX_DIMS + 1, &o));
  });
  add("sm_as_strided_negative_ndim", IA, {"sm_as_strided"},
      [](C& c, bool& ok) { T_OUT(sm_as_strided(c.t, kS4, kStr1, -2, 0, &o)); });
  add("sm_is_contiguous_bad_format", IA, {"sm_is_contiguous", "9"},
      [](C& c, bool& ok) { INT_OUT(sm_is_contiguous(c.t, 9, &o)); });
  add("sm_clone_bad_format", IA, {"sm_clone", "9"}, [](C& c, bool& ok) { T_OUT(sm_clone(c.t, 9, &o)); });
  add("sm_contiguous_preserve", IA, {"sm_contiguous"},
      [](C& c, bool& ok) { T_OUT(sm_contiguous(c.tt, SM_PRESERVE, &o, nullptr)); });
  add("sm_contiguous_bad_format", IA, {"sm_contiguous", "-1"},
      [](C& c, bool& ok) { T_OUT(sm_contiguous(c.tt, -1, &o, nullptr)); });
  add("sm_inplace_scalar_bad_op", IA, {"sm_inplace_scalar", "99"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.t, 99, 0, 0)); });
  add("sm_inplace_tensor_bad_op", IA, {"sm_inplace_tensor"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.t, SM_OP_SQRT, c.t, 1.0)); });
  add("sm_slice_step_zero", IA, {"sm_slice", "step"}, [](C& c, bool& ok) { T_OUT(sm_slice(c.t, 0, 0, 1, 0, &o)); });
  add("sm_shape_small_capacity", IA, {"sm_shape"}, [](C& c, bool& ok) {
    BUF_OUT(sm_shape(c.t, reinterpret_cast<int64_t*>(c.buf.data()), 2));
  });
  add("sm_strides_negative_capacity", IA, {"sm_strides"}, [](C& c, bool& ok) {
    BUF_OUT(sm_strides(c.t, reinterpret_cast<int64_t*>(c.buf.data()), -1));
  });
  add("sm_copy_to_host_small_buffer", IA, {"sm_copy_to_host", "95"},
      [](C& c, bool& ok) { BUF_OUT(sm_copy_to_host(c.t, c.buf.data(), 95)); });
  add("sm_split_small_capacity", IA, {"sm_split"}, [](C& c, bool& ok) {
    sm_tensor outs[2] = {sentinel_tensor(), sentinel_tensor()};
    int32_t n = kSentinel32;
    const sm_status s = sm_split(c.t, 1, 2, outs, 2, &n);  // 4 views
    ok = n == kSentinel32 && outs[0] == sentinel_tensor() && outs[1] == sentinel_tensor();
    return s;
  });
  add("sm_split_size_zero", IA, {"sm_split", "0"}, [](C& c, bool& ok) { I32_OUT(sm_split(c.t, 0, 0, nullptr, 0, &o)); });
  add("sm_split_size_negative", IA, {"sm_split", "-2"},
      [](C& c, bool& ok) { I32_OUT(sm_split(c.t, -2, 0, nullptr, 0, &o)); });
  add("sm_chunk_zero", IA, {"sm_chunk"}, [](C& c, bool& ok) { I32_OUT(sm_chunk(c.t, 0, 0, nullptr, 0, &o)); });
  add("sm_chunk_negative", IA, {"sm_chunk", "-3"}, [](C& c, bool& ok) { I32_OUT(sm_chunk(c.t, -3, 0, nullptr, 0, &o)); });
  add("sm_unfold_step_zero", IA, {"sm_unfold", "step"}, [](C& c, bool& ok) { T_OUT(sm_unfold(c.t, 2, 2, 0, &o)); });
  add("sm_diagonal_same_dims", IA, {"sm_diagonal"}, [](C& c, bool& ok) { T_OUT(sm_diagonal(c.t, 0, 1, 1, &o)); });
  add("sm_set_num_threads_negative", IA, {"sm_set_num_threads", "-1"},
      [](C&, bool& ok) { NO_OUT(sm_set_num_threads(-1)); });
  // Texts too long for the buffer, with nowhere to say how long (needed NULL):
  // the message names the size needed; nothing is written.
  add("sm_memory_snapshot_short_buffer", IA, {"sm_memory_snapshot", "bytes"}, [](C& c, bool& ok) {
    BUF_OUT(sm_memory_snapshot(cpu(), reinterpret_cast<char*>(c.buf.data()), 100, nullptr));
  });
  add("sm_memory_summary_short_buffer", IA, {"sm_memory_summary", "bytes"}, [](C& c, bool& ok) {
    BUF_OUT(sm_memory_summary(cpu(), reinterpret_cast<char*>(c.buf.data()), 10, nullptr));
  });
  // Tags: what a name may hold, and popping what was never pushed.
  add("sm_push_tag_empty", IA, {"sm_push_tag", "empty"}, [](C&, bool& ok) { NO_OUT(sm_push_tag("")); });
  add("sm_push_tag_control_character", IA, {"sm_push_tag", "control"},
      [](C&, bool& ok) { NO_OUT(sm_push_tag("a\tb")); });
  add("sm_push_tag_c1_control_character", IA, {"sm_push_tag", "control character (U+0085", "at 1"},
      [](C&, bool& ok) { NO_OUT(sm_push_tag("a\xC2\x85" "b")); });
  add("sm_push_tag_invalid_utf8", IA, {"sm_push_tag", "UTF-8"},
      [](C&, bool& ok) { NO_OUT(sm_push_tag("\xC0\xAF")); });
  add("sm_push_tag_surrogate", IA, {"sm_push_tag", "UTF-8"},
      [](C&, bool& ok) { NO_OUT(sm_push_tag("\xED\xA0\x80")); });
  add("sm_push_tag_too_long", IA, {"sm_push_tag", "256"}, [](C&, bool& ok) {
    const std::string t(257, 't');
    NO_OUT(sm_push_tag(t.c_str()));
  });
  add("sm_pop_tag_empty", IA, {"sm_pop_tag"}, [](C&, bool& ok) { NO_OUT(sm_pop_tag()); });
  add("sm_memory_record_history_negative", IA, {"sm_memory_record_history", "-1"},
      [](C&, bool& ok) { NO_OUT(sm_memory_record_history(cpu(), -1)); });
  add("sm_memory_record_history_too_many", IA, {"sm_memory_record_history", "16777217"},
      [](C&, bool& ok) { NO_OUT(sm_memory_record_history(cpu(), (int64_t(1) << 24) + 1)); });
  add("sm_memory_record_history_int64_min", IA, {"sm_memory_record_history"},
      [](C&, bool& ok) { NO_OUT(sm_memory_record_history(cpu(), INT64_MIN)); });
  add("sm_stack_create_shared_negative_capacity", IA, {"sm_stack_create_shared", "-5"},
      [](C&, bool& ok) {
        sm_stack o = sentinel_stack();
        const sm_status s = sm_stack_create_shared(-5, &o);
        ok = o == sentinel_stack();
        return s;
      });
  add("sm_storage_import_zeroed_desc", IA, {"sm_storage_import", "magic"}, [](C&, bool& ok) {
    sm_share_desc d;
    std::memset(&d, 0, sizeof d);
    sm_storage o = sentinel_storage();
    const sm_status s = sm_storage_import(&d, -1, &o);
    ok = o == sentinel_storage();
    return s;
  });
  add("sm_tensor_export_not_shared", {SM_ERR_UNSUPPORTED}, {"sm_tensor_export", "sm_share_memory"},
      [](C& c, bool& ok) {
        sm_share_desc d;
        std::memset(&d, 0x5C, sizeof d);
        INT_OUT(sm_tensor_export(c.tt, &d, &o));
      });
  add("sm_storage_export_not_shared", {SM_ERR_UNSUPPORTED}, {"sm_storage_export", "sm_share_memory"},
      [](C& c, bool& ok) {
        sm_share_desc d;
        std::memset(&d, 0x5C, sizeof d);
        INT_OUT(sm_storage_export(c.st, &d, &o));
      });
  add("sm_share_memory_stack_tensor", {SM_ERR_UNSUPPORTED},
      {"sm_share_memory", "sm_stack_create_shared"}, [](C& c, bool& ok) {
        // A view of the stack's buffer (pushed and popped inside the case, so
        // the stack is as it was).
        sm_tensor pushed = nullptr;
        if (sm_stack_push(c.stk, kS4, 1, SM_FLOAT32, &pushed) != SM_OK) return sm_status(SM_ERR_INTERNAL);
        const sm_status s = sm_share_memory(pushed);  // the calls below succeed: the message stays
        int shared = -1;
        sm_is_shared(pushed, &shared);
        sm_tensor_release(pushed);
        sm_stack_pop_to(c.stk, 0);
        ok = shared == 0;
        return s;
      });
  add("sm_stack_create_negative_capacity", IA, {"sm_stack_create", "-5"}, [](C&, bool& ok) {
    sm_stack o = sentinel_stack();
    const sm_status s = sm_stack_create(cpu(), -5, &o);
    ok = o == sentinel_stack();
    return s;
  });
  // Ambiguous in the header: either code is fine, but it must fail cleanly.
  add("sm_permute_duplicate_dims", {SM_ERR_INVALID_ARGUMENT, SM_ERR_SHAPE}, {"sm_permute"},
      [](C& c, bool& ok) {
        const int32_t d[3] = {0, 0, 1};
        T_OUT(sm_permute(c.t, d, 3, &o));
      });
  add("sm_permute_wrong_count", {SM_ERR_INVALID_ARGUMENT, SM_ERR_SHAPE}, {"sm_permute"},
      [](C& c, bool& ok) { T_OUT(sm_permute(c.t, kDims3, 2, &o)); });
  add("sm_movedim_duplicate", {SM_ERR_INVALID_ARGUMENT, SM_ERR_SHAPE}, {"sm_movedim"}, [](C& c, bool& ok) {
    const int32_t s[2] = {0, 0}, d[2] = {1, 2};
    T_OUT(sm_movedim(c.t, s, d, 2, &o));
  });
  add("sm_flip_duplicate", {SM_ERR_INVALID_ARGUMENT, SM_ERR_SHAPE}, {"sm_flip"}, [](C& c, bool& ok) {
    const int32_t d[2] = {1, -2};
    T_OUT(sm_flip(c.t, d, 2, &o));
  });
  add("sm_narrow_negative_length", {SM_ERR_OUT_OF_BOUNDS, SM_ERR_SHAPE, SM_ERR_INVALID_ARGUMENT},
      {"sm_narrow"}, [](C& c, bool& ok) { T_OUT(sm_narrow(c.t, 0, 0, -1, &o)); });
  add("sm_unfold_size_too_big", {SM_ERR_OUT_OF_BOUNDS, SM_ERR_SHAPE}, {"sm_unfold"},
      [](C& c, bool& ok) { T_OUT(sm_unfold(c.t, 2, 5, 1, &o)); });
  add("sm_channels_last_on_3d", {SM_ERR_SHAPE, SM_ERR_INVALID_ARGUMENT}, {"sm_clone"},
      [](C& c, bool& ok) { T_OUT(sm_clone(c.t, SM_CHANNELS_LAST, &o)); });

  // --- devices -> SM_ERR_DEVICE
  add("sm_empty_bad_device", DEV, {"sm_empty"},
      [](C&, bool& ok) { T_OUT(sm_empty(kS4, 1, SM_FLOAT32, sm_device{99, 0}, &o)); });
  add("sm_from_host_bad_device", DEV, {"sm_from_host"}, [](C& c, bool& ok) {
    T_OUT(sm_from_host(c.buf.data(), kS4, 1, SM_FLOAT32, sm_device{SM_DEVICE_CPU, 3}, &o));
  });
  add("sm_to_bad_device", DEV, {"sm_to"},
      [](C& c, bool& ok) { T_OUT(sm_to(c.t, sm_device{99, 0}, SM_FLOAT32, &o, nullptr)); });
  add("sm_to_cuda_index_too_high", DEV, {"sm_to"},
      [](C& c, bool& ok) { T_OUT(sm_to(c.t, sm_device{SM_DEVICE_CUDA, 1000}, SM_FLOAT32, &o, nullptr)); });
  add("sm_memory_stats_bad_device", DEV, {"sm_memory_stats"}, [](C&, bool& ok) {
    sm_memory_stats_t s;
    std::memset(&s, 0x5A, sizeof s);
    s.struct_size = sizeof s;
    const sm_status st = sm_memory_stats(sm_device{42, 0}, &s);
    ok = s.allocated_bytes == 0x5A5A5A5A5A5A5A5All;
    return st;
  });
  add("sm_reset_peak_stats_bad_device", DEV, {"sm_reset_peak_stats"},
      [](C&, bool& ok) { NO_OUT(sm_reset_peak_stats(sm_device{42, 0})); });
  add("sm_empty_cache_bad_device", DEV, {"sm_empty_cache"},
      [](C&, bool& ok) { NO_OUT(sm_empty_cache(sm_device{42, 0})); });
  add("sm_memory_summary_bad_device", DEV, {"sm_memory_summary"}, [](C& c, bool& ok) {
    BUF_OUT(sm_memory_summary(sm_device{42, 0}, reinterpret_cast<char*>(c.buf.data()), 100, nullptr));
  });
  add("sm_memory_snapshot_bad_device", DEV, {"sm_memory_snapshot"}, [](C& c, bool& ok) {
    size_t need = 777;
    const sm_status s = sm_memory_snapshot(sm_device{42, 0}, reinterpret_cast<char*>(c.buf.data()),
                                           c.buf.size(), &need);
    ok = c.buf_untouched() && need == 777;
    return s;
  });
  add("sm_memory_snapshot_cpu_index_1", DEV, {"sm_memory_snapshot"}, [](C& c, bool& ok) {
    BUF_OUT(sm_memory_snapshot(sm_device{SM_DEVICE_CPU, 1}, reinterpret_cast<char*>(c.buf.data()),
                               c.buf.size(), nullptr));
  });
  add("sm_memory_snapshot_cuda_index_too_high", DEV, {"sm_memory_snapshot"}, [](C& c, bool& ok) {
    BUF_OUT(sm_memory_snapshot(sm_device{SM_DEVICE_CUDA, 1000}, reinterpret_cast<char*>(c.buf.data()),
                               c.buf.size(), nullptr));
  });
  add("sm_memory_record_history_bad_device", DEV, {"sm_memory_record_history"},
      [](C&, bool& ok) { NO_OUT(sm_memory_record_history(sm_device{42, 0}, 10)); });
  add("sm_memory_record_history_cuda_index_too_high", DEV, {"sm_memory_record_history"},
      [](C&, bool& ok) { NO_OUT(sm_memory_record_history(sm_device{SM_DEVICE_CUDA, 1000}, 10)); });
  add("sm_synchronize_bad_device", DEV, {"sm_synchronize"},
      [](C&, bool& ok) { NO_OUT(sm_synchronize(sm_device{42, 0})); });
  add("sm_set_stream_bad_device", DEV, {"sm_set_stream"},
      [](C&, bool& ok) { NO_OUT(sm_set_stream(sm_device{42, 0}, nullptr)); });
  add("sm_get_stream_bad_device", DEV, {"sm_get_stream"},
      [](C&, bool& ok) { PTR_OUT(sm_get_stream(sm_device{42, 0}, &o)); });
  add("sm_set_stream_cuda_index_too_high", DEV, {"sm_set_stream"},
      [](C&, bool& ok) { NO_OUT(sm_set_stream(sm_device{SM_DEVICE_CUDA, 1000}, nullptr)); });
  add("sm_stack_create_bad_device", DEV, {"sm_stack_create"}, [](C&, bool& ok) {
    sm_stack o = sentinel_stack();
    const sm_status s = sm_stack_create(sm_device{42, 0}, 64, &o);
    ok = o == sentinel_stack();
    return s;
  });
  add("sm_from_blob_bad_device", DEV, {"sm_from_blob"}, [](C& c, bool& ok) {
    T_OUT(sm_from_blob(c.buf.data(), kS4, nullptr, 1, SM_FLOAT32, sm_device{42, 0}, nullptr, nullptr, &o));
  });

  // --- allocations that cannot be satisfied -> SM_ERR_OUT_OF_MEMORY
  add("sm_empty_out_of_memory", OOM, {"sm_empty"}, [](C&, bool& ok) {
    const int64_t s[1] = {int64_t(1) << 43};  // 2^45 bytes
    T_OUT(sm_empty(s, 1, SM_FLOAT32, cpu(), &o));
  });
  add("sm_empty_strided_out_of_memory", OOM, {"sm_empty_strided"}, [](C&, bool& ok) {
    const int64_t s[1] = {int64_t(1) << 44};
    T_OUT(sm_empty_strided(s, kStr1, 1, SM_INT16, cpu(), &o));
  });
  add("sm_empty_shared_out_of_memory", OOM, {"sm_empty_shared"}, [](C&, bool& ok) {
    const int64_t s[1] = {int64_t(1) << 43};  // 2^45 bytes, past RAM + swap
    T_OUT(sm_empty_shared(s, 1, SM_FLOAT32, &o));
  });
  add("sm_stack_create_shared_out_of_memory", OOM, {"sm_stack_create_shared"}, [](C&, bool& ok) {
    sm_stack o = sentinel_stack();
    const sm_status s = sm_stack_create_shared(int64_t(1) << 45, &o);
    ok = o == sentinel_stack();
    return s;
  });
  add("sm_stack_create_out_of_memory", OOM, {"sm_stack_create"}, [](C&, bool& ok) {
    sm_stack o = sentinel_stack();
    const sm_status s = sm_stack_create(cpu(), int64_t(1) << 45, &o);
    ok = o == sentinel_stack();
    return s;
  });
  add("sm_stack_push_past_capacity", OOM, {"sm_stack_push"}, [](C& c, bool& ok) {
    const int64_t s[1] = {257};  // 1028 bytes > 1024
    T_OUT(sm_stack_push(c.stk, s, 1, SM_FLOAT32, &o));
  });

  // --- overlapping writes -> SM_ERR_OVERLAP
  add("sm_inplace_scalar_expanded", OVL, {"sm_inplace_scalar"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_scalar(c.e, SM_OP_FILL, 1, 0)); });
  add("sm_copy_into_expanded_dst", OVL, {"sm_copy_into"}, [](C& c, bool& ok) { NO_OUT(sm_copy_into(c.e, c.f4)); });
  add("sm_inplace_tensor_expanded_dst", OVL, {"sm_inplace_tensor"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.e, SM_OP_ADD, c.f4, 1.0)); });
  add("sm_copy_into_partial_overlap", OVL, {"sm_copy_into"},
      [](C& c, bool& ok) { NO_OUT(sm_copy_into(c.na, c.nb)); });
  add("sm_inplace_tensor_partial_overlap", OVL, {"sm_inplace_tensor"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.s1, SM_OP_ADD, c.s2, 1.0)); });
  add("sm_inplace_tensor_fill_partial_overlap", OVL, {"sm_inplace_tensor"},
      [](C& c, bool& ok) { NO_OUT(sm_inplace_tensor(c.s2, SM_OP_FILL, c.s1, 1.0)); });
}

std::vector<BadCase> all_cases() {
  if (registry().empty()) {
    register_handle_cases();
    register_null_pointer_cases();
    register_value_cases();
  }
  return registry();
}

// gtest prints parameters of failing tests: show the case name, not bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, FailsCleanly) {
  const BadCase& bc = GetParam();
  Ctx c;
  const TensorSnap s_t = snap(c.t), s_tt = snap(c.tt), s_it = snap(c.it), s_f4 = snap(c.f4),
                   s_b4 = snap(c.b4), s_idx = snap(c.idx), s_e = snap(c.e);
  int64_t stk_used = -1, stk_cap = -1;
  ASSERT_EQ(sm_stack_used(c.stk, &stk_used, &stk_cap), SM_OK);
  const GlobalSnap g0 = global_snap();

  bool untouched = false;
  const sm_status st = bc.call(c, untouched);
  const std::string msg = sm_last_error();

  // Global state first (reading tensors back below may allocate).
  EXPECT_EQ(global_snap(), g0) << "global state changed";
  bool expected = false;
  std::string names;
  for (sm_status e : bc.expected) {
    expected = expected || st == e;
    names += status_name(e) + " ";
  }
  EXPECT_TRUE(expected) << "got " << status_name(st) << ", expected " << names
                        << "; message: " << msg;
  EXPECT_FALSE(msg.empty()) << "sm_last_error() is empty";
  for (const std::string& n : bc.needles)
    EXPECT_NE(msg.find(n), std::string::npos) << "message \"" << msg << "\" does not mention \""
                                               << n << "\"";
  EXPECT_TRUE(untouched) << "an out-parameter was written on failure";
  EXPECT_EQ(snap(c.t), s_t) << "t changed";
  EXPECT_EQ(snap(c.tt), s_tt);
  EXPECT_EQ(snap(c.it), s_it) << "it changed";
  EXPECT_EQ(snap(c.f4), s_f4) << "f4 changed";
  EXPECT_EQ(snap(c.b4), s_b4) << "b4 changed";
  EXPECT_EQ(snap(c.idx), s_idx);
  EXPECT_EQ(snap(c.e), s_e) << "e changed";
  int64_t u = -1, cap = -1;
  EXPECT_EQ(sm_stack_used(c.stk, &u, &cap), SM_OK);
  EXPECT_EQ(u, stk_used);
  EXPECT_EQ(cap, stk_cap);
}

INSTANTIATE_TEST_SUITE_P(AllCalls, BadInput, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// Every function in the header appears in the tables above at least once
// (names taken from the cases); a new function without a bad-input case
// shows up here.
TEST(BadInputCoverage, EveryFallibleCallHasACase) {
  const char* fns[] = {
      "sm_version", "sm_cuda_device_count", "sm_tensor_retain", "sm_tensor_release", "sm_empty",
      "sm_empty_strided", "sm_zeros", "sm_full", "sm_arange", "sm_from_host", "sm_from_blob",
      "sm_copy_to_host", "sm_ndim", "sm_shape", "sm_strides", "sm_storage_offset", "sm_dtype_of",
      "sm_device_of", "sm_numel", "sm_nbytes", "sm_storage_nbytes", "sm_data_ptr",
      "sm_is_contiguous", "sm_same_storage", "sm_version_counter", "sm_is_read_only",
      "sm_tensor_storage", "sm_storage_retain", "sm_storage_release", "sm_storage_size",
      "sm_storage_data_ptr", "sm_storage_device", "sm_tensor_from_storage", "sm_view",
      "sm_as_strided", "sm_slice", "sm_narrow", "sm_select", "sm_permute", "sm_transpose",
      "sm_movedim", "sm_expand", "sm_squeeze", "sm_unsqueeze", "sm_flatten", "sm_unflatten",
      "sm_unfold", "sm_diagonal", "sm_split", "sm_chunk", "sm_flip", "sm_reshape_would_copy",
      "sm_reshape", "sm_contiguous", "sm_clone", "sm_to", "sm_copy_into", "sm_index_select",
      "sm_inplace_scalar", "sm_inplace_tensor", "sm_memory_stats", "sm_reset_peak_stats",
      "sm_empty_cache", "sm_memory_summary", "sm_stack_create", "sm_stack_push", "sm_stack_mark",
      "sm_stack_pop_to", "sm_stack_used", "sm_stack_release", "sm_synchronize", "sm_set_stream",
      "sm_get_stream",
      "sm_record_stream", "sm_set_num_threads", "sm_get_num_threads", "sm_to_dlpack", "sm_to_dlpack_ex",
      "sm_from_dlpack", "sm_debug_live_handles", "sm_debug_age_handle_slot",
      "sm_memory_snapshot", "sm_push_tag", "sm_pop_tag", "sm_memory_record_history",
      "sm_storage_id", "sm_empty_shared", "sm_share_memory", "sm_is_shared", "sm_storage_export",
      "sm_storage_import", "sm_storage_is_shared", "sm_stack_create_shared", "sm_stack_storage",
      "sm_tensor_export"};
  const std::vector<BadCase> cases = all_cases();
  for (const char* f : fns) {
    bool found = false;
    for (const BadCase& c : cases)
      for (const std::string& n : c.needles) found = found || n == f;
    EXPECT_TRUE(found) << f << " has no bad-input case";
  }
}

// Functions no input makes fail, and why: they are the only ones allowed
// to be missing from the list above.
const char* const kNoBadInput[] = {
    "sm_status_string",     // any code, known or not, has a static text
    "sm_last_error",        // no arguments
    "sm_dtype_size",        // an unknown dtype is answered with 0 (documented)
    "sm_dtype_name",        // an unknown dtype is answered with "unknown" (documented)
    "sm_debug_fail_alloc",  // every n means something: n <= 0 disables
    "sm_set_oom_observer",  // any function (NULL removes it) and any user_data are valid
};

// The list above plus kNoBadInput is every function of the public header,
// read from the header itself: a function added to it without a bad-input
// case (or a reason it has none) fails here.
TEST(BadInputCoverage, EveryHeaderFunctionIsListed) {
  const std::set<std::string> declared = sm_test::header_functions(SM_TEST_PUBLIC_HEADER);
  ASSERT_GT(declared.size(), 80u) << "the header was not parsed";
  const std::vector<BadCase> cases = all_cases();
  std::set<std::string> covered;
  for (const BadCase& c : cases)
    for (const std::string& needle : c.needles)
      if (needle.rfind("sm_", 0) == 0) covered.insert(needle);
  for (const std::string& fn : declared) {
    const bool exempt = std::find(std::begin(kNoBadInput), std::end(kNoBadInput), fn) != std::end(kNoBadInput);
    EXPECT_TRUE(covered.count(fn) || exempt)
        << fn << " is declared in stridemem.h but has no bad-input case here (or a reason in kNoBadInput)";
    EXPECT_FALSE(covered.count(fn) && exempt) << fn << " has cases: take it out of kNoBadInput";
  }
  for (const char* fn : kNoBadInput) EXPECT_TRUE(declared.count(fn)) << fn << " is not in the header";
}

}  // namespace
