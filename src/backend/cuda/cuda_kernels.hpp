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
// dst[i] = the element whose bits are `element` (dtype_size(dst.dtype)
// bytes; cuda_scalar_ops.cu).
void launch_fill(const TensorDesc& dst, const unsigned char* element, int device);
// The scalar in-place ops other than the fills (cuda_scalar_ops.cu).
void launch_scalar_op(const TensorDesc& dst, sm_op op, double a, double b, int device);
// ADD, SUB, MUL, DIV with a tensor operand (cuda_tensor_ops.cu).
void launch_tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha,
                      int device);
// index_select (cuda_index.cu): the position of the first index outside
// [-size, size) or -1, waiting for the current stream; the gather.
int64_t index_first_out_of_range(const TensorDesc& index, int64_t size, int device);
void launch_index_select(const TensorDesc& dst, const TensorDesc& src, int dim,
                         const TensorDesc& index, int device);

}  // namespace cuda
}  // namespace sm
