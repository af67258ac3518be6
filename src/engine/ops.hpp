// Engine operations on TensorPtr: creation, copies, in-place ops. Views are
// in engine/views.hpp, devices, memory accounting, streams and threads in
// engine/runtime.hpp. Everything throws sm::Error; nothing here knows about
// C handles.
#pragma once

#include <functional>

#include "engine/tensor.hpp"

namespace sm {

// ---- device routing (device_routing.cpp) ----
// The kernels that run on d's memory (CPU kernels for host memory).
Kernels& kernels_for(Device d);
// Whether one set of kernels reaches both devices' memory.
bool same_kernel_domain(Device a, Device b);
// src moved to `device` as a row-major tensor of the same dtype and shape.
TensorPtr stage_to(const TensorPtr& src, Device device);

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
// Memory the library does not own (from_blob, DLPack import), given the
// address of element [0, ..., 0] (strides NULL: row-major). Refuses NULL data
// with elements and data not aligned to the element size; the storage spans
// exactly the elements reached, so negative strides work. on_free runs once
// when the last view dies; if this call fails it never runs (the caller
// keeps ownership). `what` names the data in messages.
TensorPtr wrap_foreign(void* data, const int64_t* shape, const int64_t* strides, int ndim,
                       DType dtype, Device device, std::function<void()> on_free, bool read_only,
                       const char* what);
// A view of any dtype over a storage (sm_tensor_from_storage); strides NULL:
// row-major.
TensorPtr tensor_from_storage(const StoragePtr& s, const int64_t* shape, const int64_t* strides,
                              int ndim, int64_t storage_offset, DType dtype);
// t's storage, to hand out on its own; refused for stack tensors (their
// region is reused after a pop).
StoragePtr storage_of(const TensorPtr& t);
void copy_to_host(const TensorPtr& t, void* dst, size_t nbytes);

// ---- copies ----
// View if possible, else a row-major copy; *copied says which.
TensorPtr reshape(const TensorPtr& t, const int64_t* shape, int ndim, bool* copied);
bool reshape_would_copy(const TensorPtr& t, const int64_t* shape, int ndim);
TensorPtr contiguous(const TensorPtr& t, sm_memory_format format, bool* copied);
TensorPtr clone(const TensorPtr& t, sm_memory_format format);
TensorPtr to(const TensorPtr& t, Device device, DType dtype, bool* copied);
void copy_into(const TensorPtr& dst, const TensorPtr& src);
TensorPtr index_select(const TensorPtr& t, int64_t dim, const TensorPtr& index);  // gather.cpp

// ---- in-place ----
void inplace_scalar(const TensorPtr& t, sm_op op, double a, double b);
void inplace_tensor(const TensorPtr& t, sm_op op, const TensorPtr& other, double alpha);

// ---- the rules every write follows (copies.cpp) ----
// A tensor may be written when it is not read-only and no two of its
// elements share memory; else SM_ERR_READ_ONLY / SM_ERR_OVERLAP naming `what`.
void check_writable(const TensorImpl& t, const char* what);
// What a kernel writing dst may read for src (expanded to dst's shape): src
// itself when the two are disjoint or the very same elements (identical), a
// private copy when overlap cannot be ruled out cheaply; SM_ERR_OVERLAP
// naming `what` when src partially overlaps dst (some of its elements would
// be written before they are read). A source on another device is staged to
// dst's first.
struct ReadSource {
  TensorPtr keep;  // holds the memory desc points into
  TensorDesc desc;
};
ReadSource read_source(const TensorImpl& dst, const TensorPtr& src, const char* what);

}  // namespace sm
