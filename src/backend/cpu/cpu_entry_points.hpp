// The CPU kernel entry points behind sm::cpu_kernels() (cpu_kernels.cpp),
// split by family so the many dtype instantiations compile in parallel.
#pragma once

#include "backend/backend.hpp"

namespace sm {
namespace cpu {

void copy(const TensorDesc& dst, const TensorDesc& src);                    // cpu_copy.cpp
void scalar_op(const TensorDesc& dst, sm_op op, double a, double b);        // cpu_scalar_ops.cpp
void tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other,   // cpu_tensor_ops.cpp
               double alpha);
int64_t first_out_of_range(const TensorDesc& index, int64_t size);         // cpu_index.cpp
void index_select(const TensorDesc& dst, const TensorDesc& src, int dim,
                  const TensorDesc& index);

}  // namespace cpu
}  // namespace sm
