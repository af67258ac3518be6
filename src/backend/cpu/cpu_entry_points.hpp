// The CPU kernel entry points behind sm::cpu_kernels() (cpu_kernels.cpp),
// split by family so the many dtype instantiations compile in parallel. Each
// carries out an operation plan of its kind (backend/op_plan.hpp).
#pragma once

#include "backend/backend.hpp"
#include "backend/op_plan.hpp"

namespace sm {
namespace cpu {

// The copy loops over a 2-operand iteration: operand 0 at d (of dtype dd),
// operand 1 at s (of dtype sd), the plan's offsets not yet applied, walked
// as tiling t says; bits: one dtype, moved unchanged (cpu_copy.cpp).
void copy_planned(const IterPlan& p, const Tiling& t, char* d, DType dd, const char* s, DType sd,
                  bool bits);
void run_copy(const OpPlan& plan);       // cpu_copy.cpp
void run_fill(const OpPlan& plan);       // cpu_copy.cpp
void run_scalar_op(const OpPlan& plan);  // cpu_scalar_ops.cpp
void run_tensor_op(const OpPlan& plan);  // cpu_tensor_ops.cpp
int64_t first_out_of_range(const TensorDesc& index, int64_t size);  // cpu_index.cpp
void run_gather(const OpPlan& plan);     // cpu_index.cpp

}  // namespace cpu
}  // namespace sm
