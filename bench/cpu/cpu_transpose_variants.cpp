// The experiment behind the CPU tile path's shape and visiting order (issue
// 16): one 4096 x 4096 f32 transpose (dst[i][j] = src[j][i]) done by several
// strategies side by side, each against a streaming copy of the same bytes.
// It is a stand-alone program (no library calls) so that only the strategy
// differs; bench/RESULTS.md records what it showed and the engine
// (src/backend/cpu/cpu_loops.cpp) keeps the winner.
//
// Usage: bench_cpu_transpose_variants [--threads 1|2] [--reps N]
// Every timed run starts from cold caches (96 MiB of other memory is read
// first). Strategies are interleaved rep by rep, so a change in background
// load hits all of them alike; with one thread the time is the thread's CPU
// time, which other processes on a shared machine disturb much less than
// wall time. Both buffers are 2 MiB aligned and on transparent huge pages,
// as the library's own large blocks are.
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TV_AVX2 __attribute__((target("avx2")))

namespace {

constexpr int64_t N = 4096;

// 8 x 8 floats: b row r = a column r (the engine's AVX2 micro-kernel).
// Inlined by force: as a call it costs half the speed and hides the memory
// effects this program is after.
template <bool kStream>
TV_AVX2 __attribute__((always_inline)) inline void t8x8(float* b, int64_t ldb, const float* a,
                                                        int64_t lda) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(a + i * lda);
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  const __m256 o[8] = {_mm256_permute2f128_ps(s0, s4, 0x20), _mm256_permute2f128_ps(s1, s5, 0x20),
                       _mm256_permute2f128_ps(s2, s6, 0x20), _mm256_permute2f128_ps(s3, s7, 0x20),
                       _mm256_permute2f128_ps(s0, s4, 0x31), _mm256_permute2f128_ps(s1, s5, 0x31),
                       _mm256_permute2f128_ps(s2, s6, 0x31), _mm256_permute2f128_ps(s3, s7, 0x31)};
  for (int i = 0; i < 8; ++i) {
    if (kStream) {
      _mm256_stream_ps(b + i * ldb, o[i]);
    } else {
      _mm256_storeu_ps(b + i * ldb, o[i]);
    }
  }
}

enum class Order { kDestination, kSource };
enum class Write { kBufferThenStream, kDirect, kDirectStream };

struct Strategy {
  std::string name;
  int tile_rows, tile_cols;  // tile: rows along i (source-contiguous), cols along j
  int super_rows, super_cols;  // tiles per supertile (visited as one block)
  Order order;                 // tiles inside a supertile: along j first or along i first
  int hint;                    // prefetch hint for the next tile; -1: none
  int distance;                // prefetch this many tiles ahead
  Write write;
};

// Prefetches source rows [c0, c1) of the tile at `next` (NULL: none). Spread
// over the gather of the current tile, 8 rows at a time, as the engine does:
// issuing a whole tile's prefetches in one burst measured about half as fast.
TV_AVX2 __attribute__((always_inline)) inline void prefetch_rows(const float* next, int c0, int c1, const Strategy& st) {
  if (!next || st.hint < 0) return;
  for (int c = c0; c < c1; ++c) {
    const char* p = reinterpret_cast<const char*>(next + c * N);
    for (int b = 0; b < st.tile_rows * 4; b += 64) {
      switch (st.hint) {
        case 0: _mm_prefetch(p + b, _MM_HINT_T0); break;
        case 1: _mm_prefetch(p + b, _MM_HINT_T1); break;
        default: _mm_prefetch(p + b, _MM_HINT_NTA); break;
      }
    }
  }
}

TV_AVX2 void one_tile(float* dst, const float* src, int64_t i0, int64_t j0, const float* next,
                      const Strategy& st) {
  if (st.write != Write::kBufferThenStream) {
    const bool nt = st.write == Write::kDirectStream;
    for (int c = 0; c < st.tile_cols; c += 8) {
      prefetch_rows(next, c, c + 8, st);
      for (int r = 0; r < st.tile_rows; r += 8) {
        if (nt) {
          t8x8<true>(dst + (i0 + r) * N + j0 + c, N, src + (j0 + c) * N + i0 + r, N);
        } else {
          t8x8<false>(dst + (i0 + r) * N + j0 + c, N, src + (j0 + c) * N + i0 + r, N);
        }
      }
    }
    return;
  }
  alignas(64) static thread_local float buf[64 * 256];
  for (int c = 0; c < st.tile_cols; c += 8) {
    prefetch_rows(next, c, c + 8, st);
    for (int r = 0; r < st.tile_rows; r += 8)
      t8x8<false>(buf + r * st.tile_cols + c, st.tile_cols, src + (j0 + c) * N + i0 + r, N);
  }
  for (int r = 0; r < st.tile_rows; ++r)
    for (int x = 0; x < st.tile_cols; x += 8)
      _mm256_stream_ps(dst + (i0 + r) * N + j0 + x, _mm256_load_ps(buf + r * st.tile_cols + x));
}

// Destination rows [i_begin, i_end), all columns.
TV_AVX2 void run_rows(float* dst, const float* src, const Strategy& st, int64_t i_begin,
                      int64_t i_end) {
  const int64_t si = int64_t(st.super_rows) * st.tile_rows, sj = int64_t(st.super_cols) * st.tile_cols;
  const int tiles = st.super_rows * st.super_cols;
  for (int64_t I = i_begin; I < i_end; I += si) {
    for (int64_t J = 0; J < N; J += sj) {
      for (int t = 0; t < tiles; ++t) {
        int ti, tj;  // tile coordinates inside the supertile
        if (st.order == Order::kSource) {
          ti = t % st.super_rows, tj = t / st.super_rows;
        } else {
          ti = t / st.super_cols, tj = t % st.super_cols;
        }
        int u = t + st.distance, ui, uj;
        int64_t nI = I, nJ = J;
        if (u >= tiles) u -= tiles, nJ += sj;
        if (nJ >= N) nJ = 0, nI += si;
        if (st.order == Order::kSource) {
          ui = u % st.super_rows, uj = u / st.super_rows;
        } else {
          ui = u / st.super_cols, uj = u % st.super_cols;
        }
        const int64_t i0 = I + int64_t(ti) * st.tile_rows;
        if (i0 >= i_end) continue;  // a supertile taller than this thread's share
        const int64_t ni = nI + int64_t(ui) * st.tile_rows, nj = nJ + int64_t(uj) * st.tile_cols;
        const float* next = ni < N && nj < N ? src + nj * N + ni : nullptr;
        one_tile(dst, src, i0, J + int64_t(tj) * st.tile_cols, next, st);
      }
    }
  }
  _mm_sfence();
}

TV_AVX2 void stream_copy_rows(float* dst, const float* src, int64_t i_begin, int64_t i_end) {
  for (int64_t x = i_begin * N; x < i_end * N; x += 16) {
    const __m256 a = _mm256_load_ps(src + x), b = _mm256_load_ps(src + x + 8);
    _mm256_stream_ps(dst + x, a);
    _mm256_stream_ps(dst + x + 8, b);
  }
  _mm_sfence();
}

std::vector<char> g_junk(96u << 20, 1);
volatile long g_sink;
void flush_caches() {
  long s = 0;
  for (size_t i = 0; i < g_junk.size(); i += 64) s += g_junk[i];
  g_sink = s;
}

float* huge_buffer(size_t bytes) {
  void* p = std::aligned_alloc(2u << 20, bytes);
  if (!p) {
    std::fprintf(stderr, "out of memory\n");
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 1, bytes);
  return static_cast<float*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, reps = 15;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]) == 2 ? 2 : 1;
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--threads 1|2] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) {
    std::fprintf(stderr, "this experiment needs AVX2 (the engine's kernels it compares)\n");
    return 1;
  }
  float* src = huge_buffer(N * N * 4);
  float* dst = huge_buffer(N * N * 4);
  for (int64_t i = 0; i < N * N; ++i) src[i] = static_cast<float>(i);

  auto now = [&] {
    if (threads == 1) {
      timespec ts;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return ts.tv_sec + 1e-9 * ts.tv_nsec;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  // Two threads: halves of the destination rows.
  auto split = [&](const std::function<void(int64_t, int64_t)>& f) {
    if (threads == 1) return f(0, N);
    std::thread t([&] { f(N / 2, N); });
    f(0, N / 2);
    t.join();
  };

  using O = Order;
  using W = Write;
  const std::vector<Strategy> strategies = {
      {"copy (streaming stores, the reference)", 0, 0, 0, 0, O::kSource, -1, 0, W::kDirect},
      {"64x64, 4x4 supertiles, dst order (before)", 64, 64, 4, 4, O::kDestination, 1, 1, W::kBufferThenStream},
      {"32x64, 8x2 supertiles, dst order", 32, 64, 8, 2, O::kDestination, 1, 1, W::kBufferThenStream},
      {"64x64, 4x4 supertiles, source order", 64, 64, 4, 4, O::kSource, 1, 1, W::kBufferThenStream},
      {"32x64, column strips, source order (now)", 32, 64, 128, 1, O::kSource, 1, 1, W::kBufferThenStream},
      {"32x64, 16x4 supertiles, source order", 32, 64, 16, 4, O::kSource, 1, 1, W::kBufferThenStream},
      {"32x32, column strips, source order", 32, 32, 128, 1, O::kSource, 1, 1, W::kBufferThenStream},
      {"16x64, column strips, source order", 16, 64, 256, 1, O::kSource, 1, 1, W::kBufferThenStream},
      {"32x128, column strips, source order", 32, 128, 128, 1, O::kSource, 1, 1, W::kBufferThenStream},
      {"32x64 strips, prefetch into L1 (T0)", 32, 64, 128, 1, O::kSource, 0, 1, W::kBufferThenStream},
      {"32x64 strips, prefetch NTA", 32, 64, 128, 1, O::kSource, 2, 1, W::kBufferThenStream},
      {"32x64 strips, no software prefetch", 32, 64, 128, 1, O::kSource, -1, 1, W::kBufferThenStream},
      {"32x64 strips, prefetch 4 tiles ahead", 32, 64, 128, 1, O::kSource, 1, 4, W::kBufferThenStream},
      {"32x64 strips, no buffer, streaming stores", 32, 64, 128, 1, O::kSource, 1, 1, W::kDirectStream},
      {"64x64 supertiles, no buffer, plain stores", 64, 64, 4, 4, O::kDestination, 1, 1, W::kDirect},
      {"64x64 supertiles, no buffer, streaming stores", 64, 64, 4, 4, O::kDestination, 1, 1, W::kDirectStream},
  };
  std::vector<double> best(strategies.size(), 1e30);
  auto run = [&](size_t v) {
    const Strategy& st = strategies[v];
    if (v == 0) {
      split([&](int64_t b, int64_t e) { stream_copy_rows(dst, src, b, e); });
    } else {
      split([&](int64_t b, int64_t e) { run_rows(dst, src, st, b, e); });
    }
  };
  for (size_t v = 0; v < strategies.size(); ++v) run(v);  // first touch, thread start
  for (int r = 0; r < reps; ++r) {
    for (size_t v = 0; v < strategies.size(); ++v) {
      flush_caches();
      const double a = now();
      run(v);
      best[v] = std::min(best[v], now() - a);
      if (v > 0) {  // a wrong strategy is no result
        for (int64_t i = 0; i < N; i += 61)
          for (int64_t j = 0; j < N; j += 59)
            if (dst[i * N + j] != src[j * N + i]) {
              std::fprintf(stderr, "%s: wrong element [%lld][%lld]\n", strategies[v].name.c_str(),
                           static_cast<long long>(i), static_cast<long long>(j));
              return 1;
            }
      }
    }
  }
  std::printf("4096 x 4096 f32 transpose, %d thread(s), best of %d, %s, cold caches; GB/s of "
              "bytes read + written\n",
              threads, reps, threads == 1 ? "thread CPU time" : "wall time");
  const double copy_gbs = 2.0 * N * N * 4 / best[0] / 1e9;
  for (size_t v = 0; v < strategies.size(); ++v) {
    const double gbs = 2.0 * N * N * 4 / best[v] / 1e9;
    std::printf("  %-48s %6.1f GB/s  %4.0f%% of the copy\n", strategies[v].name.c_str(), gbs,
                100.0 * gbs / copy_gbs);
  }
  std::free(src);
  std::free(dst);
  return 0;
}

#else

#include <cstdio>

int main() {
  std::fprintf(stderr, "this experiment is written for x86-64 with GCC or Clang (AVX2)\n");
  return 1;
}

#endif
