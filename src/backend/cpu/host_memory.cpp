#include "backend/cpu/host_memory.hpp"

#include <cstdlib>

#include <sys/mman.h>

#include "memory/host_memory_limit.hpp"
#include "stridemem.h"

#if defined(__SANITIZE_ADDRESS__)
#define SM_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SM_HOST_ASAN 1
#endif
#endif

#if defined(SM_HOST_ASAN)
#include <sanitizer/asan_interface.h>
#elif defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SM_HOST_VALGRIND 1
#endif
#endif

namespace sm {

// 256-byte alignment: covers cache lines and SIMD loads, and lets a stack of
// views promise SM_STACK_ALIGNMENT in absolute addresses (blocks are multiples
// of SM_ALLOC_ROUND = 512 bytes, so no padding is wasted).
void* cpu_host_alloc(size_t n) {
  constexpr size_t kHuge = size_t(2) << 20;
  if (n < 2 * kHuge) return std::aligned_alloc(SM_STACK_ALIGNMENT, (n + 255) / 256 * 256);
  // Large blocks: 2 MiB aligned and hinted onto transparent huge pages, for
  // fewer TLB misses in strided copies (NumPy does the same); only a hint.
  const size_t size = (n + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, size);
  if (p) madvise(p, size, MADV_HUGEPAGE);
  return p;
}
void cpu_host_free(void* p) { std::free(p); }

size_t HostMemoryOps::request_limit() const { return host_memory_limit(); }

std::string HostMemoryOps::over_request_limit(size_t limit) const {
  return over_host_memory_limit(limit);
}

// AddressSanitizer: always (the build says so). valgrind: when the program
// runs under it (the client requests cost a few instructions otherwise, but
// the allocator skips them altogether when this says no).
bool HostMemoryOps::marks_access() const {
#if defined(SM_HOST_ASAN)
  return true;
#elif defined(SM_HOST_VALGRIND)
  return RUNNING_ON_VALGRIND != 0;
#else
  return false;
#endif
}

void HostMemoryOps::mark_no_access(void* ptr, size_t nbytes) noexcept {
#if defined(SM_HOST_ASAN)
  ASAN_POISON_MEMORY_REGION(ptr, nbytes);
#elif defined(SM_HOST_VALGRIND)
  VALGRIND_MAKE_MEM_NOACCESS(ptr, nbytes);
#else
  (void)ptr, (void)nbytes;
#endif
}

// Usable as fresh memory is: addressable, and for valgrind undefined until
// written (as malloc's), so reading a new tensor's bytes before writing them
// is reported as it would be without the cache.
void HostMemoryOps::mark_usable(void* ptr, size_t nbytes) noexcept {
#if defined(SM_HOST_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(ptr, nbytes);
#elif defined(SM_HOST_VALGRIND)
  VALGRIND_MAKE_MEM_UNDEFINED(ptr, nbytes);
#else
  (void)ptr, (void)nbytes;
#endif
}

}  // namespace sm
