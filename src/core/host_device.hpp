// Annotations for code that both backends compile: the CPU backend with the
// host compiler, the CUDA backend with nvcc for host and device. A function
// marked SM_HOST_DEVICE is one definition that runs on either side, so a
// rule proven by the CPU tests holds on the GPU by construction.
#pragma once

#if defined(__CUDACC__)
#define SM_HOST_DEVICE __host__ __device__
// Inlined everywhere: the backends instantiate element ops with a constant op
// and rely on the switch folding away (vectorized CPU rows, lean kernels).
#define SM_INLINE __forceinline__
#define SM_UNROLL _Pragma("unroll")
// Templates that take a callable: host lambdas are fine where the template is
// instantiated for the host only (nvcc would otherwise warn that an
// SM_HOST_DEVICE function calls a host function).
#define SM_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define SM_HOST_DEVICE
#define SM_INLINE inline __attribute__((always_inline))
#define SM_UNROLL
#define SM_EXEC_CHECK_DISABLE
#endif
