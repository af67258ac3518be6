// Non-temporal (streaming) stores for destinations that will not be read
// again soon: they skip the read for ownership of every destination line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace sm {
namespace cpu {

// When streaming pays:
//  - destinations at least kStreamMinBytes large: they cannot stay in cache
//    anyway, and streaming saves the read of every destination line before
//    it is overwritten;
//  - rows at least kStreamRowMinBytes long: non-temporal stores of partial
//    lines cost more than the reads for ownership they save.
constexpr int64_t kStreamMinBytes = 8 << 20;
constexpr int64_t kStreamRowMinBytes = 256;

// Streams n bytes to d with non-temporal stores (no read-for-ownership of
// the destination lines); the caller issues stream_fence() before anyone
// else may read d. Unaligned head and tail go through memcpy.
inline void stream_copy(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
#if defined(__SSE2__)
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), x0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), x1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), x2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), x3);
  }
  for (; n >= 16; n -= 16, d += 16, s += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
#endif
  std::memcpy(d, s, n);
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace cpu
}  // namespace sm
