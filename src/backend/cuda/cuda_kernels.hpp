// The CUDA kernels' host entry points, one per family (each in its own .cu
// file so the build compiles them in parallel). Each one carries out an
// operation plan made for PlanTarget::Cuda (backend/op_plan.hpp), planning
// its launch from it with src/backend/cuda/launch_plan, on the device's
// current stream; the caller has made `device` current.
#pragma once

#include "backend/backend.hpp"
#include "backend/op_plan.hpp"

namespace sm {
namespace cuda {

// A Copy: dst[i] = convert(src[i]) (cuda_copy.cu).
void launch_copy(const OpPlan& plan, int device);
// A Fill: dst[i] = the element whose bits are the plan's scalar_bits
// (cuda_scalar_ops.cu).
void launch_fill(const OpPlan& plan, int device);
// A ScalarOp: the scalar in-place ops other than the fills (cuda_scalar_ops.cu).
void launch_scalar_op(const OpPlan& plan, int device);
// A TensorOp: ADD, SUB, MUL, DIV with a tensor operand (cuda_tensor_ops.cu).
void launch_tensor_op(const OpPlan& plan, int device);
// index_select (cuda_index.cu): the position of the first index outside
// [-size, size) or -1, waiting for the current stream; the gather.
int64_t index_first_out_of_range(const TensorDesc& index, int64_t size, int device);
// A Gather.
void launch_index_select(const OpPlan& plan, int device);

}  // namespace cuda
}  // namespace sm
