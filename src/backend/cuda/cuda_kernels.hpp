// The CUDA kernels' host entry points, one per family (each in its own .cu
// file so the build compiles them in parallel). Each one plans with
// src/backend/cuda/launch_plan and launches on the device's current stream; the
// caller has made `device` current.
#pragma once

#include "backend/backend.hpp"

namespace sm {
namespace cuda {

// dst[i] = convert(src[i]) (cuda_copy.cu).
void launch_copy(const TensorDesc& dst, const TensorDesc& src, int device);
// The scalar in-place ops, FILL and ZERO included (cuda_scalar_ops.cu).
void launch_scalar_op(const TensorDesc& dst, sm_op op, double a, double b, int device);
// ADD, SUB, MUL, DIV with a tensor operand (cuda_tensor_ops.cu); FILL is a copy.
void launch_tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha,
                      int device);

}  // namespace cuda
}  // namespace sm
