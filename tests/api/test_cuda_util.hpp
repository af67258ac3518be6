// Helpers for the CUDA tests over the public C API (tests/api/test_cuda_*.cpp).
// Every test that needs a GPU starts with SMT_REQUIRE_CUDA(): without a
// usable device it is reported as skipped, with the library's own reason.
// The CUDA results are compared with the CPU backend's on the same inputs:
// both compile the same element definitions (src/core/element_ops.hpp), so
// results must match bit for bit (NaN sign and payload excepted, see
// expect_same_values).
#pragma once

#include <dlfcn.h>

#include <random>
#include <string>
#include <vector>

#include "api_test_util.hpp"

namespace smt {

// Why no GPU is usable: the status and message of a real CUDA call.
inline std::string cuda_unusable_reason() {
  sm_tensor t = nullptr;
  const int64_t shape[1] = {1};
  const sm_status st = sm_empty(shape, 1, SM_FLOAT32, cuda(0), &t);
  if (st == SM_OK) {
    sm_tensor_release(t);
    return "sm_cuda_device_count() says 0 but sm_empty on cuda:0 worked";
  }
  return std::string(sm_status_string(st)) + ": " + sm_last_error();
}

inline int32_t cuda_count() {
  int32_t n = -1;
  const sm_status st = sm_cuda_device_count(&n);
  EXPECT_EQ(st, SM_OK) << sm_last_error();
  return n;
}

}  // namespace smt

#define SMT_REQUIRE_CUDA()                                                              \
  do {                                                                                  \
    if (smt::cuda_count() <= 0)                                                         \
      GTEST_SKIP() << "no usable CUDA device: " << smt::cuda_unusable_reason();         \
  } while (0)

namespace smt {

inline sm_device pinned() { return sm_device{SM_DEVICE_CUDA_HOST, 0}; }

// t moved (copied) to another device, same dtype.
inline Tensor to_device(sm_tensor t, sm_device dev) {
  Tensor out;
  const sm_status st = sm_to(t, dev, dtype_of(t), out.out(), nullptr);
  EXPECT_EQ(st, SM_OK) << "sm_to: " << sm_last_error();
  return out;
}

// Random values that every dtype holds exactly, with some specials for the
// floating ones (NaN, +-inf, -0, subnormals, large values): conversions of
// those are where backends differ if they are going to.
inline Tensor random_cpu(const Shape& shape, sm_dtype dt, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t n = numel_of_shape(shape);
  const size_t es = sm_dtype_size(dt);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * es);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = bytes.data() + static_cast<size_t>(i) * es;
    const uint32_t r = rng();
    switch (dt) {
      case SM_BOOL: p[0] = r & 1; break;
      case SM_FLOAT16: case SM_BFLOAT16: {
        const uint16_t v = static_cast<uint16_t>(r);  // every bit pattern, NaNs included
        std::memcpy(p, &v, 2);
        break;
      }
      case SM_FLOAT32: {
        float v;
        switch (r % 16) {
          case 0: v = NAN; break;
          case 1: v = INFINITY; break;
          case 2: v = -0.0f; break;
          case 3: v = 1e-40f; break;
          case 4: v = 3e38f; break;
          case 5: v = static_cast<float>(static_cast<int32_t>(rng())); break;
          default: v = (static_cast<float>(rng() % 200001) - 100000.0f) / 64.0f; break;
        }
        std::memcpy(p, &v, 4);
        break;
      }
      case SM_FLOAT64: {
        double v;
        switch (r % 16) {
          case 0: v = NAN; break;
          case 1: v = -INFINITY; break;
          case 2: v = 1e300; break;
          case 3: v = 1e-310; break;
          case 4: v = 70000.49999999; break;
          default: v = (static_cast<double>(rng() % 2000001) - 1000000.0) / 1024.0; break;
        }
        std::memcpy(p, &v, 8);
        break;
      }
      default:
        for (size_t k = 0; k < es; ++k) p[k] = static_cast<uint8_t>(rng() >> (8 * (k % 4)));
        break;
    }
  }
  Tensor t;
  const sm_status st = sm_from_host(bytes.data(), shape.empty() ? nullptr : shape.data(),
                                    static_cast<int32_t>(shape.size()), dt, cpu(), t.out());
  EXPECT_EQ(st, SM_OK) << "sm_from_host: " << sm_last_error();
  return t;
}

// The same data on the CPU and on cuda:0.
struct Pair {
  Tensor c, g;
};
inline Pair random_pair(const Shape& shape, sm_dtype dt, uint32_t seed) {
  Pair p;
  p.c = random_cpu(shape, dt, seed);
  p.g = to_device(p.c, cuda(0));
  return p;
}

// One view op applied to both members of a pair.
template <class F>
Pair both(const Pair& in, F f) {
  Pair out;
  const sm_status a = f(in.c.get(), out.c.out());
  const sm_status b = f(in.g.get(), out.g.out());
  EXPECT_EQ(a, SM_OK) << "cpu: " << sm_last_error();
  EXPECT_EQ(b, SM_OK) << "cuda: " << sm_last_error();
  return out;
}

// The CUDA tensor holds exactly the CPU tensor's bytes (row-major) and layout.
inline void expect_same(sm_tensor c, sm_tensor g, const std::string& what) {
  EXPECT_EQ(shape_of(c), shape_of(g)) << what;
  EXPECT_EQ(dtype_of(c), dtype_of(g)) << what;
  const std::vector<uint8_t> bc = read_bytes(c), bg = read_bytes(g);
  ASSERT_EQ(bc.size(), bg.size()) << what;
  size_t diffs = 0, first = 0;
  for (size_t i = 0; i < bc.size(); ++i)
    if (bc[i] != bg[i] && diffs++ == 0) first = i;
  EXPECT_EQ(diffs, 0u) << what << ": " << diffs << " of " << bc.size()
                       << " bytes differ, first at byte " << first;
}

inline bool is_float_dtype(sm_dtype d) {
  return d == SM_FLOAT16 || d == SM_BFLOAT16 || d == SM_FLOAT32 || d == SM_FLOAT64 ||
         d == SM_COMPLEX64 || d == SM_COMPLEX128;
}

// A floating element's bits (one part of a complex) is a NaN.
inline bool is_nan_bits(const uint8_t* p, size_t width, sm_dtype dt) {
  switch (width) {
    case 2: {
      uint16_t u;
      std::memcpy(&u, p, 2);
      if (dt == SM_BFLOAT16) return (u & 0x7F80u) == 0x7F80u && (u & 0x007Fu) != 0;
      return (u & 0x7C00u) == 0x7C00u && (u & 0x03FFu) != 0;
    }
    case 4: {
      uint32_t u;
      std::memcpy(&u, p, 4);
      return (u & 0x7FFFFFFFu) > 0x7F800000u;
    }
    default: {
      uint64_t u;
      std::memcpy(&u, p, 8);
      return (u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    }
  }
}

// Results computed by arithmetic or conversion: equal bit for bit, the sign
// of zero included. The one exception is the library's NaN rule: a NaN
// result is a NaN on every backend, but its sign and payload bits are the
// hardware's (x86 and NVIDIA GPUs make different ones), so a NaN matches any
// NaN of the same element (each part of a complex on its own).
inline void expect_same_values(sm_tensor c, sm_tensor g, const std::string& what) {
  const sm_dtype dt = dtype_of(c);
  if (!is_float_dtype(dt)) {
    expect_same(c, g, what);
    return;
  }
  EXPECT_EQ(shape_of(c), shape_of(g)) << what;
  ASSERT_EQ(dt, dtype_of(g)) << what;
  const std::vector<uint8_t> bc = read_bytes(c), bg = read_bytes(g);
  ASSERT_EQ(bc.size(), bg.size()) << what;
  const size_t width = (dt == SM_COMPLEX64 || dt == SM_COMPLEX128) ? sm_dtype_size(dt) / 2
                                                                     : sm_dtype_size(dt);
  size_t diffs = 0, first = 0;
  for (size_t i = 0; i + width <= bc.size(); i += width) {
    const uint8_t *a = bc.data() + i, *b = bg.data() + i;
    if (std::memcmp(a, b, width) == 0) continue;
    if (is_nan_bits(a, width, dt) && is_nan_bits(b, width, dt)) continue;
    if (diffs++ == 0) first = i / width;
  }
  EXPECT_EQ(diffs, 0u) << what << ": " << diffs << " of " << bc.size() / width
                       << " floating values differ in their bits (NaN payloads aside), first at "
                       << (width == sm_dtype_size(dt) ? "element " : "part ") << first;
}

// The CUDA runtime, loaded at run time (these tests link only stridemem): to
// create streams for sm_set_stream. Streams are driver objects, so one made
// by this runtime works with the one linked into the library.
struct Cudart {
  void* lib = nullptr;
  int (*stream_create)(void**, unsigned) = nullptr;
  int (*stream_destroy)(void*) = nullptr;
  int (*stream_sync)(void*) = nullptr;
  int (*set_device)(int) = nullptr;
  bool ok() const { return lib && stream_create && stream_destroy && stream_sync && set_device; }
  static Cudart& get() {
    static Cudart c = [] {
      Cudart r;
      for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12"}) {
        r.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (r.lib) break;
      }
      if (!r.lib) return r;
      r.stream_create = reinterpret_cast<int (*)(void**, unsigned)>(dlsym(r.lib, "cudaStreamCreateWithFlags"));
      r.stream_destroy = reinterpret_cast<int (*)(void*)>(dlsym(r.lib, "cudaStreamDestroy"));
      r.stream_sync = reinterpret_cast<int (*)(void*)>(dlsym(r.lib, "cudaStreamSynchronize"));
      r.set_device = reinterpret_cast<int (*)(int)>(dlsym(r.lib, "cudaSetDevice"));
      return r;
    }();
    return c;
  }
};

}  // namespace smt
