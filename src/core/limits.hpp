// Limits every layer shares.
#pragma once

#include "stridemem.h"

namespace sm {

// Dimensions of a tensor (the C API's SM_MAX_DIMS).
constexpr int kMaxDims = SM_MAX_DIMS;
// CUDA device ordinals with per-device state (counters, backends, streams).
constexpr int kMaxCudaDevices = 64;

}  // namespace sm
