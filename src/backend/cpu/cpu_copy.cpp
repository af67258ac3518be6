// Copies with and without dtype conversion.
#include <cstring>

#include "backend/cpu/cpu_elem.hpp"
#include "backend/cpu/cpu_kernels_impl.hpp"
#include "backend/cpu/cpu_loops.hpp"
#include "backend/cpu/transpose_kernels.hpp"

namespace sm {
namespace cpu {

namespace {

// Same dtype: bits of N bytes, whatever the type.
template <int N>
void copy_row_bits(const void*, char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  using T = Bits<N>;
  T* dp = reinterpret_cast<T*>(d);
  const T* sp = reinterpret_cast<const T*>(s);
  if (ds == 1 && ss == 1) {
    if (d != s) std::memcpy(d, s, static_cast<size_t>(n) * N);  // d == s: identical operands
    return;
  }
  if (ss == 0) {
    const T v = *sp;
    if (N == 1 && ds == 1) {
      std::memset(d, v.v, static_cast<size_t>(n));
    } else if (ds == 1) {
      for (int64_t i = 0; i < n; ++i) dp[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) dp[i * ds] = v;
    }
    return;
  }
  if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) dp[i] = sp[i * ss];
    return;
  }
  for (int64_t i = 0; i < n; ++i) dp[i * ds] = sp[i * ss];
}

template <int N>
void copy_tile_bits(const void* ctx, char* d, const char* s, int64_t rows, int64_t cols,
                    int64_t dsr, int64_t dsc, int64_t ssr, int64_t ssc) {
  using T = Bits<N>;
  if (dsc == 1 && ssr == 1) {
    transpose_tile(reinterpret_cast<T*>(d), dsr, reinterpret_cast<const T*>(s), ssc, rows, cols);
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    copy_row_bits<N>(ctx, d + r * dsr * N, s + r * ssr * N, cols, dsc, ssc);
}

template <typename D, typename S>
void convert_row(const void*, char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  D* dp = reinterpret_cast<D*>(d);
  const S* sp = reinterpret_cast<const S*>(s);
  if (ds == 1 && ss == 1) {
    for (int64_t i = 0; i < n; ++i) dp[i] = cvt<D>(sp[i]);
    return;
  }
  if (ss == 0) {
    const D v = cvt<D>(sp[0]);
    for (int64_t i = 0; i < n; ++i) dp[i * ds] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i) dp[i * ds] = cvt<D>(sp[i * ss]);
}

bool same_layout(const TensorDesc& a, const TensorDesc& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.sizes[i] != b.sizes[i]) return false;
    if (a.sizes[i] > 1 && a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

}  // namespace

void copy(const TensorDesc& dst, const TensorDesc& src) {
  const int64_t* strides[2] = {dst.strides, src.strides};
  const IterPlan p = plan_iteration(2, dst.sizes, dst.ndim, strides, true);
  if (p.empty) return;
  LoopSpec spec;
  spec.dsize = static_cast<int>(dtype_size(dst.dtype));
  spec.ssize = static_cast<int>(dtype_size(src.dtype));
  spec.bytes_per_elem = spec.dsize + spec.ssize;
  if (dst.dtype == src.dtype) {
    if (same_layout(dst, src)) return;  // a copy onto itself
    switch (spec.dsize) {
      case 1: spec.row = copy_row_bits<1>, spec.tile = copy_tile_bits<1>; break;
      case 2: spec.row = copy_row_bits<2>, spec.tile = copy_tile_bits<2>; break;
      case 4: spec.row = copy_row_bits<4>, spec.tile = copy_tile_bits<4>; break;
      default: spec.row = copy_row_bits<8>, spec.tile = copy_tile_bits<8>; break;
    }
  } else {
    dispatch_dtype(dst.dtype, [&](auto dv) {
      using D = decltype(dv);
      dispatch_dtype(src.dtype, [&](auto sv) {
        using S = decltype(sv);
        spec.row = convert_row<D, S>;
      });
    });
  }
  run_loops(p, static_cast<char*>(dst.data), static_cast<const char*>(src.data), spec);
}

}  // namespace cpu
}  // namespace sm
