// What this CPU can run, asked once per process: every CPU kernel that has
// an AVX2 (or F16C) variant dispatches through these, so the library itself
// is built for baseline x86-64 and still runs on any x86-64 CPU.
#pragma once

namespace sm {
namespace cpu {

bool cpu_has_avx2();
bool cpu_has_f16c();  // and AVX2: the F16C kernels use 256-bit integer ops too

}  // namespace cpu
}  // namespace sm
