// Engine operations on TensorPtr: creation, copies, in-place ops. Views are
// layout functions (layout/layout.hpp) + derive_view (engine/tensor.hpp).
// Everything throws sm::Error; nothing here knows about C handles.
#pragma once

#include "engine/tensor.hpp"

namespace sm {

// CPU and pinned memory are host memory: the CPU kernels serve both.
inline bool host_accessible(Device d) {
  return d.type == SM_DEVICE_CPU || d.type == SM_DEVICE_CUDA_HOST;
}
Kernels& kernels_for(Device d);

// ---- creation ----
TensorPtr empty(const int64_t* shape, int ndim, DType dtype, Device device);
TensorPtr empty_strided(const int64_t* shape, const int64_t* strides, int ndim, DType dtype,
                        Device device);
TensorPtr empty_with_layout(const Layout& dense, DType dtype, Device device);
TensorPtr full(const int64_t* shape, int ndim, double value, DType dtype, Device device);
TensorPtr arange(double start, double step, int64_t n, DType dtype, Device device);
TensorPtr from_host(const void* data, const int64_t* shape, int ndim, DType dtype, Device device);
using BlobDeleter = void (*)(void* data, void* ctx);
TensorPtr from_blob(void* data, const int64_t* shape, const int64_t* strides, int ndim,
                    DType dtype, Device device, BlobDeleter deleter, void* ctx);
void copy_to_host(const TensorPtr& t, void* dst, size_t nbytes);

// ---- copies ----
// View if possible, else a row-major copy; *copied says which.
TensorPtr reshape(const TensorPtr& t, const int64_t* shape, int ndim, bool* copied);
bool reshape_would_copy(const TensorPtr& t, const int64_t* shape, int ndim);
TensorPtr contiguous(const TensorPtr& t, sm_memory_format format, bool* copied);
TensorPtr clone(const TensorPtr& t, sm_memory_format format);
TensorPtr to(const TensorPtr& t, Device device, DType dtype, bool* copied);
void copy_into(const TensorPtr& dst, const TensorPtr& src);
TensorPtr index_select(const TensorPtr& t, int64_t dim, const TensorPtr& index);

// ---- in-place ----
void inplace_scalar(const TensorPtr& t, sm_op op, double a, double b);
void inplace_tensor(const TensorPtr& t, sm_op op, const TensorPtr& other, double alpha);

}  // namespace sm
