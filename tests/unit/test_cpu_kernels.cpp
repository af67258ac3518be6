// CPU kernels (sm::cpu_kernels()) against naive references on random
// layouts: permutations, gaps, negative strides, broadcast sources, size-0,
// size-1 and 0-d tensors, every dtype pair, threaded and concurrent calls.
// Destination buffers are compared whole, so writes outside the view (into
// gaps between strided elements) are caught too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/cpu_loops.hpp"
#include "backend/cpu/simd_convert.hpp"
#include "backend/cpu/stream_stores.hpp"
#include "backend/cpu/thread_pool.hpp"
#include "backend/cpu/tile_gather.hpp"
#include "core/element_ops.hpp"

namespace {

using sm::DType;
using sm::TensorDesc;

const DType kAllDTypes[] = {DType::Bool, DType::U8,  DType::I8,   DType::I16, DType::I32,
                            DType::I64,  DType::F16, DType::BF16, DType::F32, DType::F64};

size_t isz(DType d) { return sm::dtype_size(d); }

// A strided operand over its own byte buffer.
struct Operand {
  Operand(DType d, std::vector<int64_t> sz, std::vector<int64_t> st)
      : dtype(d), sizes(std::move(sz)), strides(std::move(st)) {}
  DType dtype;
  std::vector<int64_t> sizes, strides;
  std::vector<unsigned char> buf;
  int64_t base = 0;  // element index of [0, ..., 0] inside buf

  void alloc() {
    int64_t lo = 0, hi = 0;
    bool empty = false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0) empty = true;
      const int64_t span = (std::max<int64_t>(sizes[d], 1) - 1) * strides[d];
      (span < 0 ? lo : hi) += span;
    }
    base = -lo;
    buf.assign(static_cast<size_t>(empty ? 1 : hi - lo + 1) * isz(dtype), 0);
  }
  // alloc(), then moves the operand so that element [0, ..., 0] starts
  // `line_offset` bytes into a 64-byte line (a multiple of the element size).
  void alloc_at_line_offset(int64_t line_offset) {
    alloc();
    const int64_t es = static_cast<int64_t>(isz(dtype));
    buf.resize(buf.size() + 64);
    const int64_t now = static_cast<int64_t>(reinterpret_cast<uintptr_t>(at(0)) & 63);
    base += ((line_offset - now) & 63) / es;
    ASSERT_EQ(reinterpret_cast<uintptr_t>(at(0)) & 63, static_cast<uintptr_t>(line_offset));
  }
  unsigned char* at(int64_t elem) { return buf.data() + (base + elem) * isz(dtype); }
  TensorDesc desc() {
    TensorDesc t;
    t.data = at(0);
    t.dtype = dtype;
    t.ndim = static_cast<int>(sizes.size());
    for (int i = 0; i < t.ndim; ++i) t.sizes[i] = sizes[i], t.strides[i] = strides[i];
    return t;
  }
  int64_t nelems() const { return static_cast<int64_t>(buf.size() / isz(dtype)); }
};

// Calls f(dst_offset, src_offset) for every logical index in row-major order.
template <typename F>
void for_each_index(const std::vector<int64_t>& sizes, const std::vector<int64_t>& s0,
                    const std::vector<int64_t>& s1, F f) {
  const int nd = static_cast<int>(sizes.size());
  for (int64_t s : sizes)
    if (s == 0) return;
  std::vector<int64_t> idx(nd, 0);
  for (;;) {
    int64_t o0 = 0, o1 = 0;
    for (int d = 0; d < nd; ++d) o0 += idx[d] * s0[d], o1 += idx[d] * s1[d];
    f(o0, o1);
    int d = nd - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Random but valid element bits: bool 0/1, floats include NaN, inf, -0,
// subnormals and values beyond every integer range.
void fill_random(Operand& op, std::mt19937_64& rng) {
  const size_t n = static_cast<size_t>(op.nelems());
  for (size_t i = 0; i < n; ++i) {
    unsigned char* p = op.buf.data() + i * isz(op.dtype);
    const uint64_t r = rng();
    switch (op.dtype) {
      case DType::Bool: p[0] = r & 1; break;
      case DType::F32: {
        static const float special[] = {0.0f, -0.0f, 1.5f, -2.5f, 1e30f, -1e30f, 3e9f,
                                        std::numeric_limits<float>::infinity(),
                                        std::numeric_limits<float>::quiet_NaN(), 1e-40f};
        float v = (r % 4 == 0) ? special[(r >> 8) % 10]
                               : static_cast<float>(static_cast<int64_t>(r >> 40) - (1 << 23)) / 64.0f;
        if (r % 17 == 0) {
          uint32_t bits = static_cast<uint32_t>(r >> 16);
          std::memcpy(&v, &bits, 4);
        }
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::F64: {
        static const double special[] = {0.0, -0.0, 0.5, -7.25, 1e300, -1e19, 1e19,
                                         std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN(), 1e-310};
        double v = (r % 4 == 0) ? special[(r >> 8) % 10]
                                : static_cast<double>(static_cast<int64_t>(r >> 20)) / 1024.0;
        if (r % 17 == 0) std::memcpy(&v, &r, 8);
        std::memcpy(p, &v, 8);
        break;
      }
      default: std::memcpy(p, &r, isz(op.dtype)); break;  // ints, f16, bf16: any bits
    }
  }
}

struct Case {
  std::vector<int64_t> sizes;
  std::vector<int64_t> dst_strides, src_strides;
};

// Dense strides in a random dim order, with random gaps and flips; the
// source may also broadcast (stride 0) any dim.
std::vector<int64_t> random_strides(std::mt19937_64& rng, const std::vector<int64_t>& sizes,
                                    bool allow_broadcast) {
  const int nd = static_cast<int>(sizes.size());
  std::vector<int> perm(nd);
  for (int d = 0; d < nd; ++d) perm[d] = d;
  if (rng() % 4 != 0) std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int64_t> st(nd);
  int64_t acc = 1;
  for (int i = nd - 1; i >= 0; --i) {
    const int d = perm[i];
    const int64_t gap = rng() % 5 == 0 ? 1 + static_cast<int64_t>(rng() % 3) : 1;
    st[d] = acc * gap;
    acc *= std::max<int64_t>(sizes[d], 1) * gap;
    if (rng() % 4 == 0) st[d] = -st[d];
    if (allow_broadcast && rng() % 6 == 0) st[d] = 0;
  }
  return st;
}

Case random_case(std::mt19937_64& rng, int64_t max_numel = 40000) {
  Case c;
  for (;;) {
    c.sizes.clear();
    const int nd = static_cast<int>(rng() % 7);
    int64_t numel = 1;
    for (int d = 0; d < nd; ++d) {
      const uint64_t r = rng() % 20;
      int64_t s = r == 0 ? 0 : r < 3 ? 1 : r < 5 ? 30 + static_cast<int64_t>(rng() % 110)
                                              : 2 + static_cast<int64_t>(rng() % 6);
      c.sizes.push_back(s);
      numel *= std::max<int64_t>(s, 1);
    }
    if (numel <= max_numel) break;
  }
  c.dst_strides = random_strides(rng, c.sizes, false);
  c.src_strides = random_strides(rng, c.sizes, true);
  return c;
}

bool is_nan_elem(DType d, const unsigned char* p) {
  switch (d) {
    case DType::F16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return (b & 0x7FFF) > 0x7C00;
    }
    case DType::BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return (b & 0x7FFF) > 0x7F80;
    }
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f != f;
    }
    case DType::F64: {
      double f;
      std::memcpy(&f, p, 8);
      return f != f;
    }
    default: return false;
  }
}

// Whole buffers equal element by element; with nan_equal, any two NaNs match.
::testing::AssertionResult same_elements(const Operand& got, const std::vector<unsigned char>& want,
                                         bool nan_equal) {
  const size_t es = isz(got.dtype);
  if (got.buf.size() != want.size()) return ::testing::AssertionFailure() << "size differs";
  for (size_t i = 0; i < want.size(); i += es) {
    if (std::memcmp(got.buf.data() + i, want.data() + i, es) == 0) continue;
    if (nan_equal && is_nan_elem(got.dtype, got.buf.data() + i) &&
        is_nan_elem(got.dtype, want.data() + i))
      continue;
    uint64_t a = 0, b = 0;
    std::memcpy(&a, got.buf.data() + i, es);
    std::memcpy(&b, want.data() + i, es);
    char msg[128];
    std::snprintf(msg, sizeof msg, "element %zu of %zu: got bits 0x%llx, want 0x%llx", i / es,
                  want.size() / es, static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return ::testing::AssertionFailure() << msg;
  }
  return ::testing::AssertionSuccess();
}

std::string describe(const Case& c, DType d, DType s) {
  std::string out = std::string(sm::dtype_name(d)) + " <- " + sm::dtype_name(s) + " sizes [";
  for (auto v : c.sizes) out += std::to_string(v) + ",";
  out += "] dst strides [";
  for (auto v : c.dst_strides) out += std::to_string(v) + ",";
  out += "] src strides [";
  for (auto v : c.src_strides) out += std::to_string(v) + ",";
  return out + "]";
}

// Reference copy: convert<D>(S) element by element; the same dtype moves
// bits unchanged (NaN payloads included), as memcpy would.
void reference_copy(Operand& dst, std::vector<unsigned char>& want, Operand& src) {
  sm::dispatch_dtype(dst.dtype, [&](auto dv) {
    using D = decltype(dv);
    sm::dispatch_dtype(src.dtype, [&](auto sv) {
      using S = decltype(sv);
      for_each_index(dst.sizes, dst.strides, src.strides, [&](int64_t od, int64_t os) {
        S x;
        std::memcpy(&x, src.at(os), sizeof(S));
        D y;
        if constexpr (std::is_same<D, S>::value) y = x; else y = sm::convert<D>(x);
        std::memcpy(want.data() + (dst.base + od) * sizeof(D), &y, sizeof(D));
      });
    });
  });
}

void run_copy_case(const Case& c, DType dt, DType st, std::mt19937_64& rng) {
  Operand dst{dt, c.sizes, c.dst_strides}, src{st, c.sizes, c.src_strides};
  dst.alloc();
  src.alloc();
  fill_random(dst, rng);
  fill_random(src, rng);
  std::vector<unsigned char> want = dst.buf;
  reference_copy(dst, want, src);
  sm::cpu_kernels().copy(dst.desc(), src.desc());
  ASSERT_TRUE(same_elements(dst, want, false)) << describe(c, dt, st);
}

TEST(CpuKernels, CopyEveryDtypePairRandomLayouts) {
  std::mt19937_64 rng(7);
  for (DType dt : kAllDTypes)
    for (DType st : kAllDTypes)
      for (int i = 0; i < 25; ++i) {
        const Case c = random_case(rng, 6000);
        run_copy_case(c, dt, st, rng);
        if (HasFatalFailure()) return;
      }
}

TEST(CpuKernels, CopySameDtypeManyLayouts) {
  // Plain copies take the bit-moving paths (memcpy rows, fills, transposes).
  std::mt19937_64 rng(11);
  const DType kinds[] = {DType::Bool, DType::I16, DType::F32, DType::F64, DType::BF16, DType::U8};
  for (int i = 0; i < 600; ++i) {
    const Case c = random_case(rng);
    const DType d = kinds[i % 6];
    run_copy_case(c, d, d, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(CpuKernels, TransposesOfEveryElementSizeAndEdge) {
  // Exact transposes with sizes around the micro-kernel and tile edges.
  std::mt19937_64 rng(3);
  const int64_t dims[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 130, 257};
  const DType kinds[] = {DType::U8, DType::I16, DType::F32, DType::F64};
  for (DType d : kinds)
    for (int64_t r : dims)
      for (int64_t cdim : dims) {
        Case c{{r, cdim}, {cdim, 1}, {1, r}};
        run_copy_case(c, d, d, rng);
        if (HasFatalFailure()) return;
        // Source transposed and flipped in its fast dim.
        Case f{{r, cdim}, {cdim, 1}, {-1, r}};
        run_copy_case(f, d, d, rng);
        if (HasFatalFailure()) return;
      }
}

TEST(CpuKernels, TransposedConversionsEveryDtypePair) {
  // Conversions from a transposed (and a flipped) source go through the
  // tile path, converting whole tiles into a second buffer: every pair,
  // shapes below, at and past the tile edges, 3-D with a batch dim.
  std::mt19937_64 rng(12);
  const int64_t dims[] = {4, 31, 64, 65, 200};
  for (DType dt : kAllDTypes)
    for (DType st : kAllDTypes) {
      if (dt == st) continue;
      for (int64_t r : dims)
        for (int64_t cdim : dims) {
          Case c{{r, cdim}, {cdim, 1}, {1, r}};
          run_copy_case(c, dt, st, rng);
          if (HasFatalFailure()) return;
          Case f{{3, r, cdim}, {r * cdim, cdim, 1}, {r * cdim, -1, r}};
          run_copy_case(f, dt, st, rng);
          if (HasFatalFailure()) return;
        }
    }
}

// complex64 needs only 4-byte alignment (dtype_alignment), yet moves as
// 8-byte bit containers: rows, strided rows, fills and every tile edge on
// data at 4 mod 8, compared byte for byte (UBSan, in the asan suite, checks
// that no access assumes 8-byte alignment).
TEST(CpuKernels, Complex64AtFourByteAlignment) {
  std::mt19937_64 rng(64);
  struct Layout {
    std::vector<int64_t> sizes, dst_strides, src_strides;
  };
  const Layout layouts[] = {
      {{1000}, {1}, {1}},                    // one contiguous row
      {{300}, {1}, {3}},                     // strided source
      {{7, 50}, {50, 1}, {0, 1}},            // broadcast rows
      {{40, 33}, {33, 1}, {0, 0}},           // fill
      {{70, 130}, {130, 1}, {1, 70}},        // transpose: full 4x4 blocks and edges
      {{3, 37, 65}, {2405, 65, 1}, {2405, 1, 37}},
  };
  for (const Layout& L : layouts) {
    int64_t dn = 1, sn = 1;
    for (size_t d = 0; d < L.sizes.size(); ++d) {
      dn += (L.sizes[d] - 1) * L.dst_strides[d];
      sn += (L.sizes[d] - 1) * L.src_strides[d];
    }
    // 8-byte-aligned storage, operands 4 bytes in.
    std::vector<uint64_t> dmem(static_cast<size_t>(dn) + 1), smem(static_cast<size_t>(sn) + 1);
    for (auto& w : smem) w = rng();
    for (auto& w : dmem) w = rng();
    unsigned char* d = reinterpret_cast<unsigned char*>(dmem.data()) + 4;
    unsigned char* s = reinterpret_cast<unsigned char*>(smem.data()) + 4;
    std::vector<unsigned char> want(reinterpret_cast<unsigned char*>(dmem.data()),
                                    reinterpret_cast<unsigned char*>(dmem.data()) + dmem.size() * 8);
    for_each_index(L.sizes, L.dst_strides, L.src_strides, [&](int64_t o0, int64_t o1) {
      std::memcpy(want.data() + 4 + o0 * 8, s + o1 * 8, 8);
    });
    TensorDesc dt, st;
    dt.data = d;
    st.data = s;
    dt.dtype = st.dtype = DType::C64;
    dt.ndim = st.ndim = static_cast<int>(L.sizes.size());
    for (int i = 0; i < dt.ndim; ++i) {
      dt.sizes[i] = st.sizes[i] = L.sizes[static_cast<size_t>(i)];
      dt.strides[i] = L.dst_strides[static_cast<size_t>(i)];
      st.strides[i] = L.src_strides[static_cast<size_t>(i)];
    }
    sm::cpu_kernels().copy(dt, st);
    ASSERT_EQ(0, std::memcmp(want.data(), dmem.data(), want.size())) << L.sizes.size() << "-d layout";
  }
}

TEST(CpuKernels, SmallElementTransposesThroughTiles) {
  // 1- and 2-byte transposes through the real copy (tiles, threads): odd
  // shapes, tile multiples and many tiles, plain and with the source's fast
  // dim flipped.
  std::mt19937_64 rng(21);
  const DType kinds[] = {DType::U8, DType::I8, DType::Bool, DType::F16, DType::BF16};
  const int64_t shapes[][2] = {{1000, 777}, {2048, 512}, {256, 1024}, {33, 4100}, {517, 18}};
  for (DType d : kinds)
    for (const auto& sh : shapes) {
      const int64_t r = sh[0], c = sh[1];
      run_copy_case(Case{{r, c}, {c, 1}, {1, r}}, d, d, rng);
      if (HasFatalFailure()) return;
      run_copy_case(Case{{r, c}, {c, 1}, {-1, r}}, d, d, rng);
      if (HasFatalFailure()) return;
    }
  // Converting copies tile by the larger element size (the gathered tile
  // is converted whole into a second buffer, wider on the destination side).
  // Not f32 <- f16: at -O0 the reference's double round trip quiets
  // signaling NaNs that the engine keeps (optimized builds fold it away).
  const DType pairs[][2] = {{DType::F32, DType::U8}, {DType::F64, DType::Bool},
                            {DType::F64, DType::F16}, {DType::I8, DType::BF16}};
  for (const auto& pr : pairs) {
    run_copy_case(Case{{1000, 777}, {777, 1}, {1, 1000}}, pr[0], pr[1], rng);
    if (HasFatalFailure()) return;
  }
}

// Tiles peel the first elements of rows that start inside a cache line
// (layout elements_to_line) when the rows are many tiles long, on the
// destination side and then the source side: offsets within a line on both
// sides; rows of whole lines long enough to peel (576 x 2112), too short to
// peel, and of partial lines (no peel); copies and conversions.
TEST(CpuKernels, TilesOfRowsStartingInsideCacheLines) {
  std::mt19937_64 rng(16);
  const DType pairs[][2] = {{DType::F32, DType::F32}, {DType::F16, DType::F16},
                            {DType::U8, DType::U8},   {DType::F64, DType::F64},
                            {DType::F16, DType::F32}, {DType::F32, DType::BF16}};
  const std::vector<std::vector<int64_t>> shapes = {{576, 2112}, {96, 128}, {3, 64, 80}};
  for (const auto& pr : pairs) {
    const DType dt = pr[0], st = pr[1];
    for (const auto& sizes : shapes) {
      // Destination row-major; source with its last two dims swapped.
      const int nd = static_cast<int>(sizes.size());
      std::vector<int64_t> dstr(sizes.size()), sstr(sizes.size());
      int64_t acc = 1;
      for (int d = nd - 1; d >= 0; --d) dstr[d] = acc, acc *= sizes[d];
      sstr = dstr;
      sstr[nd - 1] = sizes[nd - 2];
      sstr[nd - 2] = 1;
      for (int64_t doff : {int64_t(0), int64_t(16), int64_t(48)})
        for (int64_t soff : {int64_t(0), int64_t(8), int64_t(40)}) {
          if (doff % int64_t(isz(dt)) || soff % int64_t(isz(st))) continue;
          if (sizes[0] == 576 && doff + soff != 0 && (doff != 16 || soff != 40)) continue;
          Operand dst{dt, sizes, dstr}, src{st, sizes, sstr};
          dst.alloc_at_line_offset(doff);
          src.alloc_at_line_offset(soff);
          if (HasFatalFailure()) return;
          fill_random(dst, rng);
          fill_random(src, rng);
          std::vector<unsigned char> want = dst.buf;
          reference_copy(dst, want, src);
          sm::cpu_kernels().copy(dst.desc(), src.desc());
          ASSERT_TRUE(same_elements(dst, want, false))
              << sm::dtype_name(dt) << " <- " << sm::dtype_name(st) << ", " << nd
              << "-d, destination +" << doff << " bytes, source +" << soff << " bytes";
        }
    }
  }
}

TEST(CpuKernels, ZeroDimSizeZeroAndBroadcast) {
  std::mt19937_64 rng(5);
  run_copy_case(Case{{}, {}, {}}, DType::F32, DType::I64, rng);              // 0-d
  run_copy_case(Case{{}, {}, {}}, DType::BF16, DType::BF16, rng);
  run_copy_case(Case{{3, 0, 4}, {4, 4, 1}, {0, 1, 0}}, DType::F32, DType::F32, rng);  // empty
  run_copy_case(Case{{0}, {1}, {1}}, DType::I8, DType::F64, rng);
  run_copy_case(Case{{5, 7}, {7, 1}, {0, 0}}, DType::F64, DType::F16, rng);  // scalar broadcast
  run_copy_case(Case{{5, 7}, {7, 1}, {1, 0}}, DType::I32, DType::I32, rng);  // column broadcast
  run_copy_case(Case{{5, 7}, {7, 1}, {0, 1}}, DType::U8, DType::U8, rng);    // row broadcast
  run_copy_case(Case{{5, 7}, {-7, -1}, {0, -1}}, DType::I16, DType::I16, rng);
}

TEST(CpuKernels, CopyOntoItselfIsANoOp) {
  std::mt19937_64 rng(9);
  Operand t{DType::F32, {6, 5}, {1, 6}};
  t.alloc();
  fill_random(t, rng);
  const std::vector<unsigned char> before = t.buf;
  sm::cpu_kernels().copy(t.desc(), t.desc());
  EXPECT_TRUE(same_elements(t, before, false));
}

TEST(CpuKernels, Bf16FastPathMatchesReference) {
  // The branch-free float -> bf16 rounding gives the same bits as the
  // one-step double rounding of dtype.hpp over a sweep of all float bits.
  uint64_t mismatches = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 251) {
    const uint32_t bits = static_cast<uint32_t>(u);
    float f;
    std::memcpy(&f, &bits, 4);
    if (sm::float_to_bf16_bits(f) != sm::double_to_bf16_bits(f)) ++mismatches;
  }
  const uint32_t edges[] = {0x7F7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00001u, 0xFFFFFFFFu,
                            0x00008000u, 0x00018000u, 0x3F808000u, 0x3F818000u, 0x80000001u};
  for (uint32_t bits : edges) {
    float f;
    std::memcpy(&f, &bits, 4);
    EXPECT_EQ(sm::float_to_bf16_bits(f), sm::double_to_bf16_bits(f)) << std::hex << bits;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(CpuKernels, TileGatherAndRowsOutEveryInstructionSet) {
  // Both the baseline (SSE2) and the AVX2 tile kernels, whichever the
  // dispatcher would pick, against a scalar gather: every element size,
  // shapes around the micro-kernel sizes, unit and non-unit source strides.
  // For 1- and 2-byte elements also sizes around their blocks (8, 16, 32
  // elements a side) and the real tile shape, so full blocks and every edge
  // run.
  std::mt19937_64 rng(4);
  for (bool avx2 : {false, true}) {
    for (int n : {1, 2, 4, 8}) {
      const sm::cpu::GatherFn gather = sm::cpu::gather_fn_for(n, avx2);
      const int64_t tile_rows = sm::host_tile_side_i(n), tile_cols = sm::host_tile_side_j(n);
      std::vector<int64_t> row_sizes = {1, 3, 8, 17, 32}, col_sizes = {1, 5, 16, 33, 64};
      if (n <= 2) {
        row_sizes = {1, 3, 8, 15, 16, 17, 31, 32, 33, 48, 65, tile_rows - 1, tile_rows};
        col_sizes = {1, 5, 15, 16, 17, 31, 32, 33, 47, 64, 65, tile_cols - 1, tile_cols};
      }
      for (int64_t rows : row_sizes) {
        for (int64_t cols : col_sizes) {
          if (rows * cols * n > sm::cpu::kTileBufBytes) continue;
          for (int64_t ssr : {1, 3}) {
            const int64_t ssc = rows * ssr + 5;  // padded source rows
            std::vector<unsigned char> src(static_cast<size_t>((cols * ssc + 8) * n));
            for (auto& b : src) b = static_cast<unsigned char>(rng());
            std::vector<unsigned char> buf(static_cast<size_t>(rows * cols * n) + 64, 0xAB);
            gather(buf.data(), reinterpret_cast<const char*>(src.data()), rows, cols, ssr, ssc,
                   reinterpret_cast<const char*>(src.data()) + 64);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t c = 0; c < cols; ++c)
                ASSERT_EQ(0, std::memcmp(buf.data() + (r * cols + c) * n,
                                         src.data() + (r * ssr + c * ssc) * n, n))
                    << "avx2 " << avx2 << " n " << n << " rows " << rows << " cols " << cols
                    << " ssr " << ssr << " at " << r << "," << c;
            for (size_t i = static_cast<size_t>(rows * cols * n); i < buf.size(); ++i)
              ASSERT_EQ(buf[i], 0xAB) << "wrote past the tile";
          }
        }
      }
    }
    // Destinations at 32 bytes into a line (32-byte streaming stores), 16
    // (16-byte ones: NumPy's buffers) and 4 (plain stores).
    const sm::cpu::RowsOutFn out = sm::cpu::rows_out_fn_for(avx2);
    for (bool stream : {false, true}) {
      for (int64_t off : {32, 16, 4}) {
        for (int64_t row_bytes : {4, 40, 64, 256, 260}) {
          const int64_t rows = 5, dstride = row_bytes + 96;
          std::vector<unsigned char> buf(static_cast<size_t>(rows * row_bytes));
          for (auto& b : buf) b = static_cast<unsigned char>(rng());
          alignas(64) unsigned char dst[5 * 360 + 64];
          std::memset(dst, 0xCD, sizeof dst);
          out(reinterpret_cast<char*>(dst) + off, dstride, buf.data(), row_bytes, rows, stream);
          sm::cpu::stream_fence();
          for (int64_t r = 0; r < rows; ++r) {
            ASSERT_EQ(0, std::memcmp(dst + off + r * dstride, buf.data() + r * row_bytes,
                                     static_cast<size_t>(row_bytes)))
                << "avx2 " << avx2 << " stream " << stream << " offset " << off << " row bytes "
                << row_bytes;
            for (int64_t i = row_bytes; i < dstride && off + r * dstride + i < 5 * 360 + 64; ++i)
              ASSERT_EQ(dst[off + r * dstride + i], 0xCD) << "wrote past row " << r;
          }
        }
      }
    }
  }
}

TEST(CpuKernels, SimdConversionsMatchReferenceBits) {
  // The hand-vectorized 16-bit float conversions (when the CPU has them)
  // against dtype.hpp: every half, and random float bits plus edge values.
  std::vector<uint16_t> halves(65536 + 3);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> widened(halves.size());
  int ran = 0;  // kernels this CPU has
  if (sm::cpu::f16_to_f32_simd(widened.data(), halves.data(), static_cast<int64_t>(halves.size()))) {
    ++ran;
    for (size_t i = 0; i < halves.size(); ++i) {
      const float want = sm::half_bits_to_float(halves[i]);
      ASSERT_EQ(0, std::memcmp(&widened[i], &want, 4)) << "half 0x" << std::hex << halves[i];
    }
  }
  std::mt19937_64 rng(99);
  std::vector<float> f(100003);
  for (size_t i = 0; i < f.size(); ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if (i % 3 == 0) bits = (bits & 0x80000000u) | (0x33000000u + (bits & 0x0FFFFFFFu));  // near f16 range
    std::memcpy(&f[i], &bits, 4);
  }
  const uint32_t edges[] = {0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC00001u, 0x477FF000u,
                            0x477FEFFFu, 0x33000000u, 0x33000001u, 0x387FC000u, 0x00000001u};
  for (size_t i = 0; i < sizeof edges / 4; ++i) std::memcpy(&f[i * 7], &edges[i], 4);
  std::vector<uint16_t> out(f.size());
  if (sm::cpu::f32_to_bf16_simd(out.data(), f.data(), static_cast<int64_t>(f.size()))) {
    ++ran;
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(out[i], sm::double_to_bf16_bits(f[i])) << "bf16 of float #" << i;
  }
  if (sm::cpu::f32_to_f16_simd(out.data(), f.data(), static_cast<int64_t>(f.size()))) {
    ++ran;
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(out[i], sm::double_to_half_bits(f[i])) << "f16 of float #" << i;
  }
  if (ran == 0) GTEST_SKIP() << "this CPU has no AVX2/F16C: the scalar loops are used";
}

// ---- in-place ops -------------------------------------------------------------

bool floating(DType d) { return sm::is_floating(d); }

// Independent reference of the scalar-op contract in backend.hpp.
template <typename T>
T ref_scalar(T v, sm_op op, double a, double b) {
  if (op == SM_OP_FILL) return sm::Convert<T>::from_double(a);
  if (op == SM_OP_ZERO) return sm::Convert<T>::from_double(0.0);
  if constexpr (sm::IsFloatLike<T>::value) {
    using C = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
    C x = static_cast<C>(sm::Convert<T>::to_double(v));
    const C ca = static_cast<C>(a), cb = static_cast<C>(b);
    C r = x;
    switch (op) {
      case SM_OP_ADD: r = x + ca; break;
      case SM_OP_SUB: r = x - ca; break;
      case SM_OP_MUL: r = x * ca; break;
      case SM_OP_DIV: r = x / ca; break;
      case SM_OP_CLAMP:
        if (std::isnan(x)) break;
        if (!std::isnan(a) && r < ca) r = ca;
        if (!std::isnan(b) && r > cb) r = cb;
        break;
      case SM_OP_RELU: r = std::isnan(x) ? x : (x < 0 ? C(0) : x); break;
      case SM_OP_NEG: r = -x; break;
      case SM_OP_ABS: r = std::fabs(x); break;
      case SM_OP_SQRT: r = std::sqrt(x); break;
      case SM_OP_EXP: r = sm::exp_rn(x); break;  // accuracy: test_element_ops.cpp
      case SM_OP_SIGN: r = std::isnan(x) ? x : x > 0 ? C(1) : x < 0 ? C(-1) : C(0); break;
    }
    return sm::Convert<T>::from_double(static_cast<double>(r));
  } else {
    const int64_t x = sm::Convert<T>::to_int(v);
    const int64_t ia = std::isnan(a) ? 0 : static_cast<int64_t>(a);
    const int64_t ib = std::isnan(b) ? 0 : static_cast<int64_t>(b);
    const uint64_t ux = static_cast<uint64_t>(x), ua = static_cast<uint64_t>(ia);
    int64_t r = x;
    switch (op) {
      case SM_OP_ADD: r = static_cast<int64_t>(ux + ua); break;
      case SM_OP_SUB: r = static_cast<int64_t>(ux - ua); break;
      case SM_OP_MUL: r = static_cast<int64_t>(ux * ua); break;
      case SM_OP_CLAMP:
        if (!std::isnan(a) && r < ia) r = ia;
        if (!std::isnan(b) && r > ib) r = ib;
        break;
      case SM_OP_RELU: r = x < 0 ? 0 : x; break;
      case SM_OP_NEG: r = static_cast<int64_t>(0 - ux); break;
      case SM_OP_ABS: r = x < 0 ? static_cast<int64_t>(0 - ux) : x; break;
      case SM_OP_SIGN: r = x < 0 ? -1 : x > 0 ? 1 : 0; break;
      default: break;
    }
    return sm::Convert<T>::from_int(r);
  }
}

void run_scalar_case(const Case& c, DType dt, sm_op op, double a, double b, std::mt19937_64& rng) {
  Operand dst{dt, c.sizes, c.dst_strides};
  dst.alloc();
  fill_random(dst, rng);
  std::vector<unsigned char> want = dst.buf;
  sm::dispatch_dtype(dt, [&](auto tv) {
    using T = decltype(tv);
    for_each_index(dst.sizes, dst.strides, dst.strides, [&](int64_t o, int64_t) {
      T x;
      std::memcpy(&x, want.data() + (dst.base + o) * sizeof(T), sizeof(T));
      const T y = ref_scalar<T>(x, op, a, b);
      std::memcpy(want.data() + (dst.base + o) * sizeof(T), &y, sizeof(T));
    });
  });
  sm::cpu_kernels().scalar_op(dst.desc(), op, a, b);
  ASSERT_TRUE(same_elements(dst, want, true))
      << describe(c, dt, dt) << " op " << op << " a " << a << " b " << b;
}

TEST(CpuKernels, ScalarOpsEveryDtype) {
  std::mt19937_64 rng(21);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : kAllDTypes) {
    std::vector<sm_op> ops = {SM_OP_FILL, SM_OP_ZERO};
    if (dt != DType::Bool) {
      for (sm_op o : {SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_CLAMP, SM_OP_RELU, SM_OP_NEG,
                      SM_OP_ABS, SM_OP_SIGN})
        ops.push_back(o);
      if (floating(dt))
        for (sm_op o : {SM_OP_DIV, SM_OP_SQRT, SM_OP_EXP}) ops.push_back(o);
    }
    for (sm_op op : ops) {
      for (int i = 0; i < 12; ++i) {
        const Case c = random_case(rng, 5000);
        double a, b;
        if (floating(dt)) {
          const double as[] = {0.1, -2.5, 3.0, 1e10, nan, -0.0};
          a = as[i % 6];
          b = as[(i / 2) % 6] + 1.0;
          if (i % 5 == 0) b = nan;
        } else {
          const double as[] = {-3, 0, 5, 200, -129, 1e12};
          a = as[i % 6];
          b = a + static_cast<double>(i * 7 % 40);
          if (op == SM_OP_CLAMP && i % 4 == 0) a = nan;
          if (op == SM_OP_CLAMP && i % 3 == 0) b = nan;
          if (op == SM_OP_FILL && dt == DType::Bool) a = i % 2;
        }
        run_scalar_case(c, dt, op, a, b, rng);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CpuKernels, ClampAndReluNaNRules) {
  std::mt19937_64 rng(1);
  Operand t{DType::F32, {4}, {1}};
  t.alloc();
  const float nanf = std::numeric_limits<float>::quiet_NaN();
  const float in[4] = {nanf, -5.0f, 0.5f, 9.0f};
  std::memcpy(t.buf.data(), in, sizeof in);
  sm::cpu_kernels().scalar_op(t.desc(), SM_OP_CLAMP, std::nan(""), 1.0);  // no lower bound
  float out[4];
  std::memcpy(out, t.buf.data(), sizeof out);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], -5.0f);
  EXPECT_EQ(out[2], 0.5f);
  EXPECT_EQ(out[3], 1.0f);
  sm::cpu_kernels().scalar_op(t.desc(), SM_OP_RELU, 0, 0);
  std::memcpy(out, t.buf.data(), sizeof out);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[3], 1.0f);
}

TEST(CpuKernels, IntegerArithmeticWraps) {
  Operand t{DType::I64, {3}, {1}};
  t.alloc();
  const int64_t in[3] = {INT64_MAX, INT64_MIN, 7};
  std::memcpy(t.buf.data(), in, sizeof in);
  sm::cpu_kernels().scalar_op(t.desc(), SM_OP_ADD, 1, 0);
  int64_t out[3];
  std::memcpy(out, t.buf.data(), sizeof out);
  EXPECT_EQ(out[0], INT64_MIN);
  EXPECT_EQ(out[1], INT64_MIN + 1);
  sm::cpu_kernels().scalar_op(t.desc(), SM_OP_NEG, 0, 0);  // -(INT64_MIN) wraps to itself
  std::memcpy(out, t.buf.data(), sizeof out);
  EXPECT_EQ(out[0], INT64_MIN);
  Operand u{DType::U8, {2}, {1}};
  u.alloc();
  u.buf[0] = 250;
  u.buf[1] = 3;
  sm::cpu_kernels().scalar_op(u.desc(), SM_OP_ADD, 10, 0);
  EXPECT_EQ(u.buf[0], 4);
  EXPECT_EQ(u.buf[1], 13);
}

// Independent reference of the tensor-op contract.
template <typename D, typename S>
D ref_binary(D x, S y, sm_op op, double alpha) {
  constexpr bool dbl = std::is_same<D, double>::value || std::is_same<S, double>::value;
  constexpr bool flt = sm::IsFloatLike<D>::value || sm::IsFloatLike<S>::value;
  auto as_float = [](auto v) -> float {
    using V = decltype(v);
    if constexpr (sm::IsFloatLike<V>::value) return static_cast<float>(sm::Convert<V>::to_double(v));
    else return static_cast<float>(sm::Convert<V>::to_int(v));
  };
  if constexpr (dbl) {
    const double a = sm::Convert<D>::to_double(x), b = sm::Convert<S>::to_double(y);
    double r = op == SM_OP_ADD ? a + alpha * b : op == SM_OP_SUB ? a - alpha * b
             : op == SM_OP_MUL ? a * b : a / b;
    return sm::Convert<D>::from_double(r);
  } else if constexpr (flt) {
    const float a = as_float(x), b = as_float(y), al = static_cast<float>(alpha);
    float r = op == SM_OP_ADD ? a + al * b : op == SM_OP_SUB ? a - al * b
            : op == SM_OP_MUL ? a * b : a / b;
    return sm::Convert<D>::from_double(r);
  } else {
    const uint64_t a = static_cast<uint64_t>(sm::Convert<D>::to_int(x));
    const uint64_t b = static_cast<uint64_t>(sm::Convert<S>::to_int(y));
    const uint64_t al = static_cast<uint64_t>(static_cast<int64_t>(alpha));
    uint64_t r = op == SM_OP_ADD ? a + al * b : op == SM_OP_SUB ? a - al * b : a * b;
    return sm::Convert<D>::from_int(static_cast<int64_t>(r));
  }
}

void run_tensor_case(const Case& c, DType dt, DType st, sm_op op, double alpha, std::mt19937_64& rng) {
  Operand dst{dt, c.sizes, c.dst_strides}, src{st, c.sizes, c.src_strides};
  dst.alloc();
  src.alloc();
  fill_random(dst, rng);
  fill_random(src, rng);
  std::vector<unsigned char> want = dst.buf;
  sm::dispatch_dtype(dt, [&](auto dv) {
    using D = decltype(dv);
    sm::dispatch_dtype(st, [&](auto sv) {
      using S = decltype(sv);
      for_each_index(dst.sizes, dst.strides, src.strides, [&](int64_t od, int64_t os) {
        D x;
        S y;
        std::memcpy(&x, want.data() + (dst.base + od) * sizeof(D), sizeof(D));
        std::memcpy(&y, src.at(os), sizeof(S));
        D r;
        if constexpr (std::is_same<D, S>::value) r = y; else r = sm::convert<D>(y);
        if (op != SM_OP_FILL) r = ref_binary<D, S>(x, y, op, alpha);
        std::memcpy(want.data() + (dst.base + od) * sizeof(D), &r, sizeof(D));
      });
    });
  });
  sm::cpu_kernels().tensor_op(dst.desc(), op, src.desc(), alpha);
  ASSERT_TRUE(same_elements(dst, want, true))
      << describe(c, dt, st) << " op " << op << " alpha " << alpha;
}

TEST(CpuKernels, TensorOpsEveryDtypePair) {
  std::mt19937_64 rng(33);
  for (DType dt : kAllDTypes) {
    if (dt == DType::Bool) continue;  // only FILL on bool: covered by copies
    for (DType st : kAllDTypes) {
      for (sm_op op : {SM_OP_FILL, SM_OP_ADD, SM_OP_SUB, SM_OP_MUL, SM_OP_DIV}) {
        if (op == SM_OP_DIV && !floating(dt) && !floating(st)) continue;
        for (int i = 0; i < 4; ++i) {
          const Case c = random_case(rng, 3000);
          const double alpha = (i % 2) ? 1.0 : (floating(dt) || floating(st) ? -0.5 : 3.0);
          run_tensor_case(c, dt, st, op, alpha, rng);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(CpuKernels, TensorOpWithItself) {
  // other identical to dst: dst = dst + 2 * dst, through a transposed view.
  Operand t{DType::F32, {9, 13}, {1, 9}};
  t.alloc();
  std::vector<float> v(t.buf.size() / 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 40.0f;
  std::memcpy(t.buf.data(), v.data(), t.buf.size());
  sm::cpu_kernels().tensor_op(t.desc(), SM_OP_ADD, t.desc(), 2.0);
  std::vector<float> out(v.size());
  std::memcpy(out.data(), t.buf.data(), t.buf.size());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(out[i], 3.0f * v[i]) << i;
}

// ---- threading --------------------------------------------------------------------

struct ThreadsGuard {
  int saved = sm::get_cpu_threads();
  ~ThreadsGuard() { sm::set_cpu_threads(saved); }
};

TEST(CpuKernels, ThreadSetting) {
  ThreadsGuard g;
  sm::set_cpu_threads(3);
  EXPECT_EQ(sm::get_cpu_threads(), 3);
  sm::set_cpu_threads(0);
  const int cores = sm::get_cpu_threads();
  EXPECT_GE(cores, 1);
  sm::set_cpu_threads(-4);  // treated as 0
  EXPECT_EQ(sm::get_cpu_threads(), cores);
  sm::set_cpu_threads(100000);
  EXPECT_EQ(sm::get_cpu_threads(), 256);
}

TEST(CpuKernels, ParallelForCoversEveryItemOnce) {
  ThreadsGuard g;
  for (int threads : {1, 2, 3, 8}) {
    sm::set_cpu_threads(threads);
    std::vector<std::atomic<int>> hits(10007);
    for (auto& h : hits) h = 0;
    sm::parallel_for(static_cast<int64_t>(hits.size()), 10, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  }
}

TEST(CpuKernels, LargeThreadedCopies) {
  // Above the threading threshold: transposes, permutations, conversions,
  // row pieces of a plain copy, in-place ops, with 1, 2 and 3 threads.
  ThreadsGuard g;
  std::mt19937_64 rng(77);
  const Case cases[] = {
      {{600, 500}, {500, 1}, {1, 600}},
      {{3, 40, 50, 30}, {60000, 30, 1200, 1}, {1, 90, 3, 3600}},
      {{330000}, {1}, {1}},
      {{2, 170000}, {170000, 1}, {1, 2}},
      {{600, 500}, {500, 1}, {0, 1}},
      {{512, 600}, {1, -512}, {600, 1}},
  };
  for (int threads : {1, 2, 3}) {
    sm::set_cpu_threads(threads);
    for (const Case& c : cases) {
      run_copy_case(c, DType::F32, DType::F32, rng);
      run_copy_case(c, DType::BF16, DType::F32, rng);
      run_copy_case(c, DType::F16, DType::F16, rng);
      run_tensor_case(c, DType::F32, DType::F32, SM_OP_ADD, 1.0, rng);
      run_scalar_case(c, DType::I32, SM_OP_MUL, 3, 0, rng);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(CpuKernels, StreamingSizedCopies) {
  // Destinations past the non-temporal store threshold (8 MiB).
  ThreadsGuard g;
  std::mt19937_64 rng(78);
  const Case cases[] = {
      {{1500, 1500}, {1500, 1}, {1, 1500}},  // tiles, streamed
      {{2300000}, {1}, {1}},                 // one long row, streamed
      {{2300, 1000}, {1000, 1}, {-1000, 1}},   // long rows, flipped rows
      // (0,2,1,3) of [4, 64, 128, 64]: 256-byte rows read in source order,
      // written scattered (streamed for 4- and 8-byte elements); then the
      // same into destination rows 65 elements apart (rows starting at
      // every 4-byte offset of a line).
      {{4, 128, 64, 64}, {524288, 4096, 64, 1}, {524288, 64, 8192, 1}},
      {{4, 128, 64, 64}, {532480, 4160, 65, 1}, {524288, 64, 8192, 1}},
  };
  for (int threads : {1, 2}) {
    sm::set_cpu_threads(threads);
    for (const Case& c : cases) {
      run_copy_case(c, DType::F32, DType::F32, rng);
      run_copy_case(c, DType::F64, DType::F64, rng);
      if (HasFatalFailure()) return;
    }
    // Conversions into large destinations: rows are converted through a
    // staging buffer and streamed out (lengths that are no multiple of its
    // 4 KiB), tiles through the tile buffers.
    const Case conv[] = {
        {{4200001}, {1}, {1}},
        {{2300, 1001}, {1001, 1}, {-1001, 1}},
        {{1500, 1500}, {1500, 1}, {1, 1500}},
    };
    for (const Case& c : conv) {
      run_copy_case(c, DType::F64, DType::F32, rng);
      run_copy_case(c, DType::BF16, DType::F32, rng);
      run_copy_case(c, DType::F32, DType::I16, rng);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(CpuKernels, ConcurrentCallersFromManyThreads) {
  // Several user threads copy at once: the pool serves one, the others run
  // on their own thread; every result must be right and nothing may hang.
  ThreadsGuard g;
  sm::set_cpu_threads(2);
  std::atomic<int> failures{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 4; ++u) {
    users.emplace_back([u, &failures] {
      const int64_t R = 300 + u, C = 500;
      std::vector<float> src(static_cast<size_t>(R * C)), dst(src.size());
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i * 3 + u);
      for (int rep = 0; rep < 20; ++rep) {
        TensorDesc d, s;
        d.data = dst.data();
        s.data = src.data();
        d.ndim = s.ndim = 2;
        d.sizes[0] = s.sizes[0] = C;
        d.sizes[1] = s.sizes[1] = R;
        d.strides[0] = R, d.strides[1] = 1;
        s.strides[0] = 1, s.strides[1] = C;
        sm::cpu_kernels().copy(d, s);
        for (int64_t r = 0; r < R; ++r)
          for (int64_t c = 0; c < C; ++c)
            if (dst[c * R + r] != src[r * C + c]) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : users) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace

// index_select's kernels read the index in place, through its stride: an
// index that claims 2^62 entries with stride 0 is one element to check (this
// would take ages, or crash, if the length were walked or copied), and the
// first bad position of a reversed, stepped index is named in its own order.
TEST(CpuKernels, IndexCheckReadsThroughTheStride) {
  sm::Kernels& k = sm::cpu_kernels();
  int64_t one = -7;
  TensorDesc e;
  e.data = &one;
  e.dtype = DType::I64;
  e.ndim = 1;
  e.sizes[0] = int64_t(1) << 62;
  e.strides[0] = 0;
  EXPECT_EQ(k.first_out_of_range(e, 7), -1);
  EXPECT_EQ(k.first_out_of_range(e, 6), 0);
  int32_t v[9] = {0, 9, 1, -9, 2, 8, 3, -3, 4};
  TensorDesc r;  // v[8], v[6], v[4], v[2], v[0] = 4, 3, 2, 1, 0, then -3 is never read
  r.data = &v[8];
  r.dtype = DType::I32;
  r.ndim = 1;
  r.sizes[0] = 5;
  r.strides[0] = -2;
  EXPECT_EQ(k.first_out_of_range(r, 5), -1);
  EXPECT_EQ(k.first_out_of_range(r, 4), 0);
  EXPECT_EQ(k.first_out_of_range(r, 3), 0);
  v[8] = -1;
  EXPECT_EQ(k.first_out_of_range(r, 3), 1);  // -1 wraps; v[6] = 3 does not fit size 3
  r.sizes[0] = 0;
  EXPECT_EQ(k.first_out_of_range(r, 0), -1);
}

// The CPU gather against a reference: slices of a [4, 3, 5] source (a
// transposed, partly reversed view) chosen along each dim by a stepped int64
// and an expanded int32 index, negative entries included.
TEST(CpuKernels, IndexSelectGathersSlices) {
  sm::Kernels& k = sm::cpu_kernels();
  // Source: src[a][b][c] = 100a + 10b + c, viewed with a reversed middle dim.
  std::vector<double> base(4 * 3 * 5);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 5; ++c) base[static_cast<size_t>((a * 3 + b) * 5 + c)] = 100 * a + 10 * b + c;
  TensorDesc src;
  src.dtype = DType::F64;
  src.ndim = 3;
  const int64_t sizes[3] = {4, 3, 5}, strides[3] = {15, -5, 1};
  for (int d = 0; d < 3; ++d) src.sizes[d] = sizes[d], src.strides[d] = strides[d];
  src.data = &base[10];  // [a][b] is base row a*3 + (2 - b)
  auto value = [](int64_t a, int64_t b, int64_t c) { return double(100 * a + 10 * (2 - b) + c); };
  int64_t i64[6] = {-1, 99, 0, 99, 2, 99};  // stepped by 2: -1, 0, 2
  int32_t i32 = -2;                          // expanded to 4 entries
  for (int dim = 0; dim < 3; ++dim) {
    for (int which = 0; which < 2; ++which) {
      TensorDesc ix;
      ix.ndim = 1;
      if (which == 0) {
        ix.data = i64;
        ix.dtype = DType::I64;
        ix.sizes[0] = 3;
        ix.strides[0] = 2;
      } else {
        ix.data = &i32;
        ix.dtype = DType::I32;
        ix.sizes[0] = 4;
        ix.strides[0] = 0;
      }
      ASSERT_EQ(k.first_out_of_range(ix, sizes[dim]), -1);
      const int64_t n = ix.sizes[0];
      TensorDesc dst = src;
      dst.sizes[dim] = n;
      int64_t acc = 1;
      for (int d = 2; d >= 0; --d) {
        dst.strides[d] = acc;
        acc *= dst.sizes[d];
      }
      std::vector<double> out(static_cast<size_t>(acc) + 1, -1.0);  // one guard element
      dst.data = out.data();
      k.index_select(dst, src, dim, ix);
      std::vector<double> want;
      for (int64_t a = 0; a < dst.sizes[0]; ++a)
        for (int64_t b = 0; b < dst.sizes[1]; ++b)
          for (int64_t c = 0; c < dst.sizes[2]; ++c) {
            int64_t co[3] = {a, b, c};
            const int64_t pos = co[dim];
            const int64_t raw = which == 0 ? i64[2 * pos] : i32;
            co[dim] = sm::wrap_index(raw, sizes[dim]);
            want.push_back(value(co[0], co[1], co[2]));
          }
      want.push_back(-1.0);
      EXPECT_EQ(out, want) << "dim " << dim << (which == 0 ? " stepped int64" : " expanded int32");
    }
  }
}

// ---- index_select gathers against an element-by-element reference ----

namespace {

// A strided operand of any dtype over 8-byte words, its element [0, ..., 0]
// `shift` bytes past a word boundary (4 puts complex64 at its real 4-byte
// alignment, not 8), with a guard word on each side.
struct GatherOperand {
  TensorDesc t;
  std::vector<uint64_t> words;
  GatherOperand(DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                int64_t shift = 0) {
    t.dtype = dtype;
    t.ndim = static_cast<int>(sizes.size());
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < t.ndim; ++d) {
      t.sizes[d] = sizes[static_cast<size_t>(d)];
      t.strides[d] = strides[static_cast<size_t>(d)];
      const int64_t span = (std::max<int64_t>(t.sizes[d], 1) - 1) * t.strides[d];
      (span < 0 ? lo : hi) += span;
    }
    const int64_t es = static_cast<int64_t>(isz(dtype));
    const int64_t bytes = (hi - lo + 1) * es + shift;
    words.assign(static_cast<size_t>((bytes + 7) / 8 + 2), 0);
    t.data = reinterpret_cast<unsigned char*>(words.data() + 1) + shift - lo * es;
  }
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(words.data()); }
  size_t nbytes() const { return words.size() * 8; }
  // Address of the element at coordinates c (strides in elements).
  unsigned char* at(const int64_t* c) const {
    int64_t off = 0;
    for (int d = 0; d < t.ndim; ++d) off += c[d] * t.strides[d];
    return static_cast<unsigned char*>(t.data) + off * static_cast<int64_t>(isz(t.dtype));
  }
};

// An index operand holding `values` at stride `stride` (0: values[0] only).
struct GatherIndex {
  TensorDesc t;
  std::vector<int64_t> wide;  // int64 entries
  std::vector<int32_t> narrow;  // int32 entries
  GatherIndex(DType dtype, const std::vector<int64_t>& values, int64_t n, int64_t stride) {
    t.dtype = dtype;
    t.ndim = 1;
    t.sizes[0] = n;
    t.strides[0] = stride;
    const int64_t step = stride < 0 ? -stride : stride;
    const size_t slots = static_cast<size_t>(n == 0 ? 1 : (n - 1) * step + 1);
    const int64_t first = stride < 0 ? static_cast<int64_t>(slots) - 1 : 0;
    if (dtype == DType::I64) {
      wide.assign(slots, 0);
    } else {
      narrow.assign(slots, 0);
    }
    for (int64_t i = 0; i < (stride == 0 ? std::min<int64_t>(n, 1) : n); ++i) {
      const size_t slot = static_cast<size_t>(first + i * stride);
      const int64_t v = values[static_cast<size_t>(i)];
      if (dtype == DType::I64) {
        wide[slot] = v;
      } else {
        narrow[slot] = static_cast<int32_t>(v);
      }
    }
    t.data = dtype == DType::I64 ? static_cast<void*>(wide.data() + first)
                                 : static_cast<void*>(narrow.data() + first);
  }
  int64_t value(int64_t i) const {
    return t.dtype == DType::I64 ? static_cast<const int64_t*>(t.data)[i * t.strides[0]]
                                 : static_cast<const int32_t*>(t.data)[i * t.strides[0]];
  }
};

// Runs the CPU index_select and checks every byte of dst's buffer: each
// element equals the reference's source element, gaps and guards are as
// they were.
void expect_gather(GatherOperand& dst, const GatherOperand& src, int dim, const GatherIndex& ix,
                   const std::string& what) {
  ASSERT_EQ(sm::cpu_kernels().first_out_of_range(ix.t, src.t.sizes[dim]), -1) << what;
  std::mt19937 rng(5);
  for (size_t w = 0; w < dst.words.size(); ++w) dst.words[w] = rng();
  std::vector<unsigned char> want(dst.bytes(), dst.bytes() + dst.nbytes());
  const size_t es = isz(dst.t.dtype);
  const int nd = dst.t.ndim;
  const int64_t numel = dst.t.numel();
  int64_t c[sm::kMaxDims] = {}, sc[sm::kMaxDims] = {};
  for (int64_t e = 0; e < numel; ++e) {
    for (int d = 0; d < nd; ++d) sc[d] = c[d];
    sc[dim] = sm::wrap_index(ix.value(c[dim]), src.t.sizes[dim]);
    std::memcpy(want.data() + (dst.at(c) - dst.bytes()), src.at(sc), es);
    for (int d = nd - 1; d >= 0; --d) {
      if (++c[d] < dst.t.sizes[d]) break;
      c[d] = 0;
    }
  }
  sm::cpu_kernels().index_select(dst.t, src.t, dim, ix.t);
  const std::vector<unsigned char> got(dst.bytes(), dst.bytes() + dst.nbytes());
  if (got == want) return;
  size_t first = 0;
  while (got[first] == want[first]) ++first;
  ADD_FAILURE() << what << ": first wrong byte at " << first << " of " << got.size();
}

// Source elements with distinct bytes, so a wrong pick or a torn element shows.
void fill_source(GatherOperand& src, uint32_t seed) {
  std::mt19937 rng(seed);
  for (auto& w : src.words) w = (uint64_t(rng()) << 32) | rng();
}

std::vector<int64_t> random_index(int64_t n, int64_t size, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * size)) - size;
  return v;
}

}  // namespace

// The index check scans blocks whole (vectorized) and long indices on all
// threads: it must still name the first bad entry, at either bound, wherever
// it lies, with unit and other strides, 1 and 2 threads.
TEST(CpuKernels, IndexCheckFindsTheFirstBadEntry) {
  ThreadsGuard g;
  const int64_t n = 300001, size = 1000;
  for (int threads : {1, 2})
    for (DType it : {DType::I32, DType::I64})
      for (int64_t stride : {1, -1, 2}) {
        sm::set_cpu_threads(threads);
        std::vector<int64_t> v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7919) % (2 * size) - size;
        const std::string what = std::string(sm::dtype_name(it)) + " stride " +
                                 std::to_string(stride) + " threads " + std::to_string(threads);
        {
          GatherIndex ix(it, v, n, stride);
          EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix.t, size), -1) << what;
          EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix.t, size - 1), 0) << what;  // -size
        }
        for (int64_t bad_value : {size, -size - 1}) {
          std::vector<int64_t> w = v;
          w[299999] = bad_value;
          w[250000] = bad_value;
          w[100001] = -bad_value - 1;  // the other bound
          GatherIndex ix(it, w, n, stride);
          EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix.t, size), 100001) << what;
          w[100001] = 0;
          GatherIndex ix2(it, w, n, stride);
          EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix2.t, size), 250000) << what;
          w[3] = bad_value;
          GatherIndex ix3(it, w, n, stride);
          EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix3.t, size), 3) << what;
        }
      }
  // int32 entries all fit a dim longer than int32 can count.
  std::vector<int64_t> extremes = {0, INT32_MAX, INT32_MIN};
  GatherIndex ix(DType::I32, extremes, 3, 1);
  EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix.t, int64_t(1) << 33), -1);
  EXPECT_EQ(sm::cpu_kernels().first_out_of_range(ix.t, INT32_MAX), 1);
}

// 1-d gathers: every element size (complex64 at its 4-byte alignment),
// int32 and int64 indices with negative entries, index strides 1, 0, -1 and
// 3, source strides 1, -1 and 2, destination strides 1 and -2.
TEST(CpuKernels, IndexSelectScalarsEverySizeAndStride) {
  struct Kind {
    DType dtype;
    int64_t shift;
  };
  const Kind kinds[] = {{DType::U8, 0},  {DType::I16, 0}, {DType::F32, 0},
                        {DType::F64, 0}, {DType::C64, 4}, {DType::C128, 0}};
  for (const Kind& kd : kinds)
    for (DType it : {DType::I32, DType::I64})
      for (int64_t n : {int64_t(1), int64_t(37), int64_t(700)})
        for (int64_t is : {1, 0, -1, 3})
          for (int64_t ss : {1, -1, 2})
            for (int64_t ds : {1, -2}) {
              const int64_t size = 53;
              GatherOperand src(kd.dtype, {size}, {ss}, kd.shift);
              fill_source(src, static_cast<uint32_t>(n + ss));
              GatherOperand dst(kd.dtype, {n}, {ds}, kd.shift);
              GatherIndex ix(it, random_index(n, size, static_cast<uint32_t>(n * 7 + is)), n, is);
              expect_gather(dst, src, 0, ix,
                            std::string(sm::dtype_name(kd.dtype)) + " " + sm::dtype_name(it) +
                                " n " + std::to_string(n) + " is " + std::to_string(is) +
                                " ss " + std::to_string(ss) + " ds " + std::to_string(ds));
            }
}

// Large 1-d gathers: sources past the prefetch threshold (1 MiB), lengths
// past the threading threshold, with 1 and 2 threads; chunk edges fall
// anywhere in the prefetch window.
TEST(CpuKernels, IndexSelectLargeScalarGathers) {
  ThreadsGuard g;
  for (int threads : {1, 2}) {
    sm::set_cpu_threads(threads);
    for (DType dt : {DType::U8, DType::F32, DType::C128})
      for (DType it : {DType::I32, DType::I64})
        for (int64_t ss : {1, -3}) {
          const int64_t size = (int64_t(3) << 20) / static_cast<int64_t>(isz(dt));
          const int64_t n = 300001;
          GatherOperand src(dt, {size}, {ss});
          fill_source(src, 11);
          GatherOperand dst(dt, {n}, {1});
          GatherIndex ix(it, random_index(n, size, 12), n, 1);
          expect_gather(dst, src, 0, ix,
                        std::string(sm::dtype_name(dt)) + " " + sm::dtype_name(it) + " ss " +
                            std::to_string(ss) + " threads " + std::to_string(threads));
        }
  }
}

// Gathers along every dim of 3-d sources (row-major, transposed, reversed,
// with a tiny inner row) into row-major and permuted destinations: scalars
// per outer row, contiguous rows (pieces of 8 bytes and longer), small
// slices element by element, larger ones by the slice-copy fallback; empty
// results too.
TEST(CpuKernels, IndexSelectAlongEveryDim) {
  struct Src {
    std::vector<int64_t> sizes, strides;
  };
  const Src srcs[] = {
      {{4, 5, 6}, {30, 6, 1}},    // row-major
      {{4, 5, 6}, {1, 4, 20}},    // fully transposed
      {{4, 5, 6}, {30, -6, 1}},   // reversed middle dim
      {{4, 5, 2}, {10, 2, 1}},    // inner rows of 2 elements
      {{4, 5, 6}, {-60, 12, 2}},  // reversed, stepped
      {{4, 0, 6}, {30, 6, 1}},    // empty
      {{9, 10, 11}, {1, 9, 90}},  // transposed, slices over 64 elements
  };
  for (const Src& sd : srcs)
    for (DType dt : {DType::F32, DType::C64, DType::I16, DType::C128})
      for (DType it : {DType::I32, DType::I64})
        for (int dim = 0; dim < 3; ++dim)
          for (int64_t n : {int64_t(0), int64_t(1), int64_t(7)})
            for (int perm = 0; perm < 2; ++perm) {
              // complex64 at its 4-byte alignment only where the gather moves
              // every element itself (slices of at most 64 elements: all but
              // the last source): the copy kernel's transposes (the fallback)
              // load complex64 as 8-byte words, misaligned there (UBSan).
              const bool own_movers = &sd - srcs < 6;
              const int64_t shift = dt == DType::C64 && own_movers ? 4 : 0;
              GatherOperand src(dt, sd.sizes, sd.strides, shift);
              fill_source(src, static_cast<uint32_t>(dim + 3 * n));
              std::vector<int64_t> ds = sd.sizes;
              ds[static_cast<size_t>(dim)] = n;
              // Row-major, or dims 0 and 2 swapped in memory.
              std::vector<int64_t> dst_strides(3);
              if (perm == 0) {
                dst_strides = {ds[1] * ds[2], ds[2], 1};
              } else {
                dst_strides = {1, ds[0], ds[0] * ds[1]};
              }
              GatherOperand dst(dt, ds, dst_strides, shift);
              const int64_t size = sd.sizes[static_cast<size_t>(dim)];
              if (size == 0 && n > 0) continue;  // no valid entry exists
              GatherIndex ix(it, random_index(n, size, static_cast<uint32_t>(dim)), n,
                             n > 1 ? -1 : 1);
              expect_gather(dst, src, dim, ix,
                            std::string(sm::dtype_name(dt)) + " " + sm::dtype_name(it) + " src " +
                                std::to_string(&sd - srcs) + " dim " + std::to_string(dim) +
                                " n " + std::to_string(n) + " perm " + std::to_string(perm));
            }
}

// Large multi-dim gathers across the threading threshold, with 1 and 2
// threads: ranges start and end inside outer rows (the odometer), rows of
// 12, 32, 64 and 256 bytes, small transposed slices element by element, and
// the slice-copy fallback threaded over entries.
TEST(CpuKernels, IndexSelectLargeRowsAndSlices) {
  ThreadsGuard g;
  struct Big {
    std::vector<int64_t> sizes, strides;
    int dim;
    int64_t n;
  };
  const Big bigs[] = {
      {{3, 300000}, {300000, 1}, 1, 250001},  // scalars in 3 outer rows
      {{200000, 3}, {3, 1}, 0, 190000},       // 12-byte rows
      {{3000, 64}, {1, 3000}, 0, 4000},       // transposed: slice copies
      {{100000, 8}, {1, 100000}, 0, 150000},  // transposed, small slices: elements
      {{5, 4000, 16}, {64000, 16, 1}, 1, 5000},  // middle dim, 64-byte rows
      {{100000, 8}, {8, 1}, 0, 100000},          // 32-byte rows
      {{20000, 64}, {64, 1}, 0, 30000},          // 256-byte rows, prefetched
  };
  for (int threads : {1, 2}) {
    sm::set_cpu_threads(threads);
    for (const Big& b : bigs)
      for (DType it : {DType::I32, DType::I64}) {
        GatherOperand src(DType::F32, b.sizes, b.strides);
        fill_source(src, 3);
        std::vector<int64_t> ds = b.sizes;
        ds[static_cast<size_t>(b.dim)] = b.n;
        std::vector<int64_t> rm(ds.size());
        int64_t acc = 1;
        for (size_t d = ds.size(); d-- > 0;) {
          rm[d] = acc;
          acc *= ds[d];
        }
        GatherOperand dst(DType::F32, ds, rm);
        GatherIndex ix(it, random_index(b.n, b.sizes[static_cast<size_t>(b.dim)], 4), b.n, 1);
        expect_gather(dst, src, b.dim, ix,
                      "case " + std::to_string(&b - bigs) + " " + sm::dtype_name(it) +
                          " threads " + std::to_string(threads));
      }
  }
}
