// Shared helpers for the C API tests (tests/api/*.cpp). Only the public
// headers are used: these tests link the shared library and nothing else.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "stridemem.h"

namespace smt {

using Shape = std::vector<int64_t>;

inline sm_device cpu() { return sm_device{SM_DEVICE_CPU, 0}; }
inline sm_device cuda(int32_t index = 0) { return sm_device{SM_DEVICE_CUDA, index}; }

// "SM_ERR_SHAPE (4)" for failure messages.
inline std::string status_name(sm_status st) {
  return std::string(sm_status_string(st)) + " (" + std::to_string(st) + ")";
}

}  // namespace smt

// Status assertions that print the library's message on failure.
#define SM_ASSERT_OK(expr)                                                          \
  do {                                                                              \
    const sm_status sm_st_ = (expr);                                                \
    ASSERT_EQ(sm_st_, SM_OK) << #expr << " -> " << smt::status_name(sm_st_) << ": " \
                             << sm_last_error();                                    \
  } while (0)
#define SM_EXPECT_OK(expr)                                                          \
  do {                                                                              \
    const sm_status sm_st_ = (expr);                                                \
    EXPECT_EQ(sm_st_, SM_OK) << #expr << " -> " << smt::status_name(sm_st_) << ": " \
                             << sm_last_error();                                    \
  } while (0)
#define SM_EXPECT_STATUS(expr, code)                                                \
  do {                                                                              \
    const sm_status sm_st_ = (expr);                                                \
    EXPECT_EQ(sm_st_, (code)) << #expr << " -> " << smt::status_name(sm_st_)        \
                              << ", expected " << smt::status_name(code) << ": "    \
                              << sm_last_error();                                   \
  } while (0)

namespace smt {

// ---------------------------------------------------------------------------
// RAII owners of handles
// ---------------------------------------------------------------------------

template <class H, sm_status (*Release)(H)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H h) : h_(h) {}
  ~Owned() { reset(); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.h_;
      o.h_ = nullptr;
    }
    return *this;
  }
  H get() const { return h_; }
  operator H() const { return h_; }  // NOLINT: pass straight to sm_ calls
  explicit operator bool() const { return h_ != nullptr; }
  // For out-parameters: drops the current handle, returns where to write.
  H* out() {
    reset();
    return &h_;
  }
  // Gives up ownership without releasing.
  H detach() {
    H h = h_;
    h_ = nullptr;
    return h;
  }
  void reset() {
    if (h_) {
      const sm_status st = Release(h_);
      EXPECT_EQ(st, SM_OK) << "release in RAII owner: " << sm_last_error();
    }
    h_ = nullptr;
  }

 private:
  H h_ = nullptr;
};

using Tensor = Owned<sm_tensor, sm_tensor_release>;
using Storage = Owned<sm_storage, sm_storage_release>;
using Stack = Owned<sm_stack, sm_stack_release>;

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------

template <class T>
struct DT;
template <> struct DT<bool> { static constexpr sm_dtype value = SM_BOOL; };
template <> struct DT<uint8_t> { static constexpr sm_dtype value = SM_UINT8; };
template <> struct DT<int8_t> { static constexpr sm_dtype value = SM_INT8; };
template <> struct DT<int16_t> { static constexpr sm_dtype value = SM_INT16; };
template <> struct DT<int32_t> { static constexpr sm_dtype value = SM_INT32; };
template <> struct DT<int64_t> { static constexpr sm_dtype value = SM_INT64; };
template <> struct DT<float> { static constexpr sm_dtype value = SM_FLOAT32; };
template <> struct DT<double> { static constexpr sm_dtype value = SM_FLOAT64; };
template <> struct DT<uint16_t> { static constexpr sm_dtype value = SM_UINT16; };
template <> struct DT<uint32_t> { static constexpr sm_dtype value = SM_UINT32; };
template <> struct DT<uint64_t> { static constexpr sm_dtype value = SM_UINT64; };

inline int64_t numel_of_shape(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// ---------------------------------------------------------------------------
// Construction and read-back
// ---------------------------------------------------------------------------

// A tensor holding `data` (row-major) with `shape`; dtype from T unless given
// (pass SM_FLOAT16 / SM_BFLOAT16 with uint16_t bit patterns).
template <class T>
Tensor make(const std::vector<T>& data, const Shape& shape, sm_dtype dtype = DT<T>::value,
            sm_device dev = cpu()) {
  Tensor t;
  EXPECT_EQ(static_cast<int64_t>(data.size()), numel_of_shape(shape)) << "test bug: size";
  const sm_status st = sm_from_host(data.empty() ? nullptr : data.data(),
                                    shape.empty() ? nullptr : shape.data(),
                                    static_cast<int32_t>(shape.size()), dtype, dev, t.out());
  EXPECT_EQ(st, SM_OK) << "sm_from_host: " << sm_last_error();
  return t;
}
// std::vector<bool> has no data(): bools go through uint8_t.
inline Tensor make_bool(const std::vector<uint8_t>& data, const Shape& shape) {
  return make<uint8_t>(data, shape, SM_BOOL);
}

// 0, 1, 2, ... in dtype T with shape.
template <class T = float>
Tensor iota(const Shape& shape) {
  std::vector<T> v(static_cast<size_t>(numel_of_shape(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i);
  return make<T>(v, shape);
}

inline Shape shape_of(sm_tensor t) {
  int32_t nd = -1;
  if (sm_ndim(t, &nd) != SM_OK || nd < 0) {
    ADD_FAILURE() << "sm_ndim: " << sm_last_error();
    return {};
  }
  Shape s(static_cast<size_t>(nd));
  const sm_status st = sm_shape(t, s.empty() ? nullptr : s.data(), nd);
  EXPECT_EQ(st, SM_OK) << "sm_shape: " << sm_last_error();
  return s;
}
inline Shape strides_of(sm_tensor t) {
  int32_t nd = -1;
  if (sm_ndim(t, &nd) != SM_OK || nd < 0) {
    ADD_FAILURE() << "sm_ndim: " << sm_last_error();
    return {};
  }
  Shape s(static_cast<size_t>(nd));
  const sm_status st = sm_strides(t, s.empty() ? nullptr : s.data(), nd);
  EXPECT_EQ(st, SM_OK) << "sm_strides: " << sm_last_error();
  return s;
}

#define SMT_GETTER(name, type, fn, init)                         \
  inline type name(sm_tensor t) {                                \
    type v = init;                                               \
    const sm_status st = fn(t, &v);                              \
    EXPECT_EQ(st, SM_OK) << #fn << ": " << sm_last_error();     \
    return v;                                                    \
  }
SMT_GETTER(ndim_of, int32_t, sm_ndim, -1)
SMT_GETTER(offset_of, int64_t, sm_storage_offset, -1)
SMT_GETTER(numel_of, int64_t, sm_numel, -1)
SMT_GETTER(nbytes_of, int64_t, sm_nbytes, -1)
SMT_GETTER(storage_nbytes_of, int64_t, sm_storage_nbytes, -1)
SMT_GETTER(version_of, int64_t, sm_version_counter, -1)
SMT_GETTER(dtype_of, sm_dtype, sm_dtype_of, -1)
SMT_GETTER(data_ptr_of, void*, sm_data_ptr, nullptr)
#undef SMT_GETTER

inline int is_contig(sm_tensor t, sm_memory_format f) {
  int v = -1;
  const sm_status st = sm_is_contiguous(t, f, &v);
  EXPECT_EQ(st, SM_OK) << "sm_is_contiguous: " << sm_last_error();
  return v;
}
inline int same_storage(sm_tensor a, sm_tensor b) {
  int v = -1;
  const sm_status st = sm_same_storage(a, b, &v);
  EXPECT_EQ(st, SM_OK) << "sm_same_storage: " << sm_last_error();
  return v;
}

inline std::vector<uint8_t> read_bytes(sm_tensor t) {
  const int64_t nb = nbytes_of(t);
  if (nb < 0) return {};
  // One spare byte past the end checks that exactly nbytes are written.
  std::vector<uint8_t> buf(static_cast<size_t>(nb) + 1, 0xA5);
  const sm_status st = sm_copy_to_host(t, buf.data(), buf.size());
  EXPECT_EQ(st, SM_OK) << "sm_copy_to_host: " << sm_last_error();
  EXPECT_EQ(buf.back(), 0xA5) << "sm_copy_to_host wrote past sm_nbytes";
  buf.pop_back();
  return buf;
}

// Values of t, row-major; T's size must match t's dtype size.
template <class T>
std::vector<T> read(sm_tensor t) {
  const sm_dtype d = dtype_of(t);
  EXPECT_EQ(sm_dtype_size(d), sizeof(T)) << "test bug: reading " << sm_dtype_name(d);
  const std::vector<uint8_t> b = read_bytes(t);
  std::vector<T> v(b.size() / sizeof(T));
  if (!b.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}
inline std::vector<uint8_t> read_bool(sm_tensor t) { return read<uint8_t>(t); }

// The values a strided view of `base` (a flat row-major array of the
// storage's elements) holds, enumerated row-major: the reference for views.
template <class T>
std::vector<T> gather(const std::vector<T>& base, const Shape& shape, const Shape& strides,
                      int64_t offset) {
  std::vector<T> out;
  const int64_t n = numel_of_shape(shape);
  const size_t nd = shape.size();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t pos = offset;
    for (size_t d = 0; d < nd; ++d) pos += idx[d] * strides[d];
    out.push_back(base.at(static_cast<size_t>(pos)));
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Checks shape, strides and offset in one go.
inline void expect_layout(sm_tensor t, const Shape& shape, const Shape& strides, int64_t offset,
                          const char* what = "") {
  EXPECT_EQ(shape_of(t), shape) << what;
  EXPECT_EQ(strides_of(t), strides) << what;
  EXPECT_EQ(offset_of(t), offset) << what;
}

// ---------------------------------------------------------------------------
// 16-bit floats: exact decoders used as references
// ---------------------------------------------------------------------------

inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline double half_to_double(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v;
  if (e == 0) v = std::ldexp(m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = std::ldexp(1024 + m, e - 25);
  return s ? -v : v;
}
inline float bf16_to_float(uint16_t b) { return bits_to_float(static_cast<uint32_t>(b) << 16); }

// ---------------------------------------------------------------------------
// Global state: memory statistics and live handles
// ---------------------------------------------------------------------------

inline sm_memory_stats_t stats(sm_device dev = cpu()) {
  sm_memory_stats_t s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  const sm_status st = sm_memory_stats(dev, &s);
  EXPECT_EQ(st, SM_OK) << "sm_memory_stats: " << sm_last_error();
  return s;
}

struct Live {
  int64_t tensors = -1, storages = -1, stacks = -1;
  bool operator==(const Live& o) const {
    return tensors == o.tensors && storages == o.storages && stacks == o.stacks;
  }
};
inline Live live() {
  Live l;
  const sm_status st = sm_debug_live_handles(&l.tensors, &l.storages, &l.stacks);
  EXPECT_EQ(st, SM_OK) << "sm_debug_live_handles: " << sm_last_error();
  return l;
}
inline std::ostream& operator<<(std::ostream& os, const Live& l) {
  return os << "{tensors " << l.tensors << ", storages " << l.storages << ", stacks " << l.stacks
            << "}";
}

// Everything observable about one tensor.
struct TensorSnap {
  Shape shape, strides;
  int64_t offset = -1, version = -1;
  sm_dtype dtype = -1;
  std::vector<uint8_t> bytes;
  bool operator==(const TensorSnap& o) const {
    return shape == o.shape && strides == o.strides && offset == o.offset &&
           version == o.version && dtype == o.dtype && bytes == o.bytes;
  }
};
inline TensorSnap snap(sm_tensor t) {
  TensorSnap s;
  s.shape = shape_of(t);
  s.strides = strides_of(t);
  s.offset = offset_of(t);
  s.version = version_of(t);
  s.dtype = dtype_of(t);
  s.bytes = read_bytes(t);
  return s;
}

// Global state a failing call must not change.
struct GlobalSnap {
  int64_t allocated_bytes = -1, num_allocs = -1, active_views = -1, active_storages = -1;
  Live handles;
  bool operator==(const GlobalSnap& o) const {
    return allocated_bytes == o.allocated_bytes && num_allocs == o.num_allocs &&
           active_views == o.active_views && active_storages == o.active_storages &&
           handles == o.handles;
  }
};
inline GlobalSnap global_snap() {
  GlobalSnap g;
  const sm_memory_stats_t s = stats();
  g.allocated_bytes = s.allocated_bytes;
  g.num_allocs = s.num_allocs;
  g.active_views = s.active_views;
  g.active_storages = s.active_storages;
  g.handles = live();
  return g;
}
inline std::ostream& operator<<(std::ostream& os, const GlobalSnap& g) {
  return os << "{allocated " << g.allocated_bytes << ", allocs " << g.num_allocs << ", views "
            << g.active_views << ", storages " << g.active_storages << ", handles " << g.handles
            << "}";
}

// Checks sm_last_error() is non-empty and mentions every needle.
inline void expect_error_mentions(std::initializer_list<const char*> needles) {
  const char* msg = sm_last_error();
  ASSERT_NE(msg, nullptr);
  const std::string m(msg);
  EXPECT_FALSE(m.empty()) << "sm_last_error() is empty after a failure";
  for (const char* n : needles)
    EXPECT_NE(m.find(n), std::string::npos) << "sm_last_error() = \"" << m
                                            << "\" does not mention \"" << n << "\"";
}

// A status among several acceptable ones (only where the header leaves the
// choice open; the final report lists these places).
inline void expect_status_in(sm_status st, std::initializer_list<sm_status> ok, const char* what) {
  bool found = false;
  for (sm_status s : ok) found = found || s == st;
  std::string list;
  for (sm_status s : ok) list += status_name(s) + " ";
  EXPECT_TRUE(found) << what << " -> " << status_name(st) << ", expected one of " << list
                     << ": " << sm_last_error();
}

// Forged handles: never issued by the library.
inline sm_tensor forged_tensor() { return reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0x12345)); }
inline sm_storage forged_storage() { return reinterpret_cast<sm_storage>(static_cast<uintptr_t>(0x12345)); }
inline sm_stack forged_stack() { return reinterpret_cast<sm_stack>(static_cast<uintptr_t>(0x12345)); }

// A handle value that was valid and has been released.
inline sm_tensor released_tensor() {
  sm_tensor t = nullptr;
  const int64_t shape[1] = {3};
  EXPECT_EQ(sm_zeros(shape, 1, SM_FLOAT32, cpu(), &t), SM_OK) << sm_last_error();
  EXPECT_EQ(sm_tensor_release(t), SM_OK) << sm_last_error();
  return t;
}

// Sentinels pre-filled into out-parameters of failing calls.
inline sm_tensor sentinel_tensor() { return reinterpret_cast<sm_tensor>(static_cast<uintptr_t>(0xDEADBEE0)); }
inline sm_storage sentinel_storage() { return reinterpret_cast<sm_storage>(static_cast<uintptr_t>(0xDEADBEE0)); }
inline sm_stack sentinel_stack() { return reinterpret_cast<sm_stack>(static_cast<uintptr_t>(0xDEADBEE0)); }
constexpr int64_t kSentinel64 = 0x5EE5EE5EE5EE5EEll;
constexpr int32_t kSentinel32 = 0x5EE5EE5;

}  // namespace smt
