// The CUDA benchmarks' error checks: a failed CUDA or stridemem call ends the
// program with its file, line, call and message (exit status 2), so a
// benchmark never prints figures for work that did not happen.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "stridemem.h"

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)
#define SK(x)                                                                                   \
  do {                                                                                          \
    sm_status s_ = (x);                                                                         \
    if (s_ != SM_OK) {                                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #x, sm_status_string(s_), \
                   sm_last_error());                                                            \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)
