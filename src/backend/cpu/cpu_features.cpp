#include "backend/cpu/cpu_features.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace sm {
namespace cpu {

#if defined(__x86_64__) && defined(__GNUC__)

bool cpu_has_avx2() {
  static const bool v = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return v;
}

bool cpu_has_f16c() {
  // Through cpuid: clang 14's __builtin_cpu_supports does not know "f16c".
  static const bool v = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    return f16c && cpu_has_avx2();
  }();
  return v;
}

#else

bool cpu_has_avx2() { return false; }
bool cpu_has_f16c() { return false; }

#endif

}  // namespace cpu
}  // namespace sm
