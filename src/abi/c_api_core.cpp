// C entry points: errors, version, types, tensor lifetime, creation,
// metadata, storages.
#include <cstring>

#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

namespace sm {
namespace abi {
const char* last_error() noexcept;
}
}  // namespace sm

extern "C" {

SM_API const char* sm_status_string(sm_status s) {
  switch (s) {
    case SM_OK: return "SM_OK: success";
    case SM_ERR_INVALID_ARGUMENT: return "SM_ERR_INVALID_ARGUMENT: invalid argument";
    case SM_ERR_INVALID_HANDLE: return "SM_ERR_INVALID_HANDLE: invalid, released or stale handle";
    case SM_ERR_OUT_OF_MEMORY: return "SM_ERR_OUT_OF_MEMORY: allocation could not be satisfied";
    case SM_ERR_SHAPE: return "SM_ERR_SHAPE: incompatible shape or strides";
    case SM_ERR_OUT_OF_BOUNDS: return "SM_ERR_OUT_OF_BOUNDS: index, dim or view out of bounds";
    case SM_ERR_DTYPE: return "SM_ERR_DTYPE: dtype not allowed";
    case SM_ERR_DEVICE: return "SM_ERR_DEVICE: no such or no usable device";
    case SM_ERR_OVERLAP: return "SM_ERR_OVERLAP: written elements overlap";
    case SM_ERR_OVERFLOW: return "SM_ERR_OVERFLOW: int64 overflow in sizes, strides or bytes";
    case SM_ERR_UNSUPPORTED: return "SM_ERR_UNSUPPORTED: not supported by this build";
    case SM_ERR_CUDA: return "SM_ERR_CUDA: CUDA runtime error";
    case SM_ERR_INTERNAL: return "SM_ERR_INTERNAL: internal error";
    case SM_ERR_READ_ONLY: return "SM_ERR_READ_ONLY: the tensor is read-only";
    default: return "unknown status code";
  }
}

SM_API const char* sm_last_error(void) { return last_error(); }

SM_API sm_status sm_version(int* major, int* minor, int* patch) {
  return guard(__func__, [&] {
    require_out(major, "major");
    require_out(minor, "minor");
    require_out(patch, "patch");
    *major = SM_VERSION_MAJOR;
    *minor = SM_VERSION_MINOR;
    *patch = SM_VERSION_PATCH;
  });
}

SM_API size_t sm_dtype_size(sm_dtype d) {
  return dtype_valid(d) ? dtype_size(static_cast<DType>(d)) : 0;
}
SM_API const char* sm_dtype_name(sm_dtype d) {
  return dtype_valid(d) ? dtype_name(static_cast<DType>(d)) : "unknown";
}

SM_API sm_status sm_cuda_device_count(int32_t* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    *out = cuda_devices();
  });
}

SM_API sm_status sm_tensor_retain(sm_tensor t) {
  return guard(__func__, [&] {
    tensor_arg(t, "t");  // refuses a tensor whose stack region was popped
    tensors().retain(t, "t");
  });
}

SM_API sm_status sm_tensor_release(sm_tensor t) {
  if (!t) return SM_OK;
  return guard(__func__, [&] { tensors().release(t, "t"); });
}

// ---- creation ----

SM_API sm_status sm_empty(const int64_t* shape, int32_t ndim, sm_dtype dtype, sm_device device,
                          sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish(sm::empty(shape, n, dtype_arg(dtype), device_arg(device)));
  });
}

SM_API sm_status sm_empty_strided(const int64_t* shape, const int64_t* strides, int32_t ndim,
                                  sm_dtype dtype, sm_device device, sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    ndim_arg(ndim, strides, "strides");
    *out = publish(sm::empty_strided(shape, strides, n, dtype_arg(dtype), device_arg(device)));
  });
}

SM_API sm_status sm_zeros(const int64_t* shape, int32_t ndim, sm_dtype dtype, sm_device device,
                          sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish(sm::full(shape, n, 0.0, dtype_arg(dtype), device_arg(device)));
  });
}

SM_API sm_status sm_full(const int64_t* shape, int32_t ndim, double value, sm_dtype dtype,
                         sm_device device, sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish(sm::full(shape, n, value, dtype_arg(dtype), device_arg(device)));
  });
}

SM_API sm_status sm_arange(double start, double step, int64_t n, sm_dtype dtype, sm_device device,
                           sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    *out = publish(sm::arange(start, step, n, dtype_arg(dtype), device_arg(device)));
  });
}

SM_API sm_status sm_from_host(const void* data, const int64_t* shape, int32_t ndim, sm_dtype dtype,
                              sm_device device, sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish(sm::from_host(data, shape, n, dtype_arg(dtype), device_arg(device)));
  });
}

SM_API sm_status sm_from_blob(void* data, const int64_t* shape, const int64_t* strides,
                              int32_t ndim, sm_dtype dtype, sm_device device, sm_deleter deleter,
                              void* ctx, sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish_wrapped(
        sm::from_blob(data, shape, strides, n, dtype_arg(dtype), device_arg(device), deleter, ctx));
  });
}

SM_API sm_status sm_copy_to_host(sm_tensor t, void* dst, size_t nbytes) {
  return guard(__func__, [&] { sm::copy_to_host(tensor_arg(t, "t"), dst, nbytes); });
}

// ---- metadata ----

SM_API sm_status sm_ndim(sm_tensor t, int32_t* out) {
  return guard(__func__, [&] {
    auto x = tensor_arg(t, "t");
    require_out(out, "out");
    *out = x->layout().ndim;
  });
}

namespace {
// static as well: inside extern "C", GCC gives an unnamed namespace's function
// a global, unmangled symbol, which libstridemem.a would hand to the
// consumer's link (the shared library's version script hides it).
static sm_status dims_out(const char* fn, sm_tensor t, int64_t* out, int32_t capacity, bool strides) {
  return guard(fn, [&] {
    auto x = tensor_arg(t, "t");
    const Layout& l = x->layout();
    if (l.ndim == 0) return;
    require_out(out, "out");
    if (capacity < l.ndim)
      fail(SM_ERR_INVALID_ARGUMENT, "capacity %d is smaller than ndim %d", capacity, l.ndim);
    std::memcpy(out, strides ? l.strides : l.sizes, sizeof(int64_t) * static_cast<size_t>(l.ndim));
  });
}
}  // namespace

SM_API sm_status sm_shape(sm_tensor t, int64_t* out, int32_t capacity) {
  return dims_out(__func__, t, out, capacity, false);
}
SM_API sm_status sm_strides(sm_tensor t, int64_t* out, int32_t capacity) {
  return dims_out(__func__, t, out, capacity, true);
}

#define SM_TENSOR_GETTER(name, type, expr)          \
  SM_API sm_status name(sm_tensor t, type* out) {   \
    return guard(__func__, [&] {                    \
      auto x = tensor_arg(t, "t");                  \
      require_out(out, "out");                      \
      *out = (expr);                                \
    });                                             \
  }

SM_TENSOR_GETTER(sm_storage_offset, int64_t, x->layout().offset)
SM_TENSOR_GETTER(sm_dtype_of, sm_dtype, static_cast<sm_dtype>(x->dtype()))
SM_TENSOR_GETTER(sm_device_of, sm_device, (sm_device{x->device().type, x->device().index}))
SM_TENSOR_GETTER(sm_numel, int64_t, x->numel())
SM_TENSOR_GETTER(sm_nbytes, int64_t, x->numel() * static_cast<int64_t>(x->itemsize()))
SM_TENSOR_GETTER(sm_storage_nbytes, int64_t, x->storage()->nbytes())
SM_TENSOR_GETTER(sm_data_ptr, void*, static_cast<void*>(x->data()))
SM_TENSOR_GETTER(sm_version_counter, int64_t, x->storage()->version())
SM_TENSOR_GETTER(sm_is_read_only, int, x->storage()->read_only() ? 1 : 0)
#undef SM_TENSOR_GETTER

SM_API sm_status sm_is_contiguous(sm_tensor t, sm_memory_format format, int* out) {
  return guard(__func__, [&] {
    auto x = tensor_arg(t, "t");
    require_out(out, "out");
    format_arg(format, true);
    *out = is_contiguous(x, format) ? 1 : 0;
  });
}

SM_API sm_status sm_same_storage(sm_tensor a, sm_tensor b, int* out) {
  return guard(__func__, [&] {
    auto x = tensor_arg(a, "a");
    auto y = tensor_arg(b, "b");
    require_out(out, "out");
    *out = same_storage(x, y) ? 1 : 0;
  });
}

// ---- storages ----

SM_API sm_status sm_tensor_storage(sm_tensor t, sm_storage* out) {
  return guard(__func__, [&] {
    auto x = tensor_arg(t, "t");
    require_out(out, "out");
    *out = static_cast<sm_storage>(storages().insert(storage_of(x)));
  });
}
SM_API sm_status sm_storage_retain(sm_storage s) {
  return guard(__func__, [&] { storages().retain(s, "s"); });
}
SM_API sm_status sm_storage_release(sm_storage s) {
  if (!s) return SM_OK;
  return guard(__func__, [&] { storages().release(s, "s"); });
}
SM_API sm_status sm_storage_size(sm_storage s, int64_t* nbytes) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(nbytes, "nbytes");
    *nbytes = x->nbytes();
  });
}
SM_API sm_status sm_storage_data_ptr(sm_storage s, void** out) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(out, "out");
    *out = x->data();
  });
}
SM_API sm_status sm_storage_device(sm_storage s, sm_device* out) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(out, "out");
    *out = sm_device{x->device().type, x->device().index};
  });
}
SM_API sm_status sm_storage_id(sm_storage s, uint64_t* out) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(out, "out");
    *out = x->id();
  });
}
SM_API sm_status sm_tensor_from_storage(sm_storage s, const int64_t* shape, const int64_t* strides,
                                        int32_t ndim, int64_t storage_offset, sm_dtype dtype,
                                        sm_tensor* out) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish(tensor_from_storage(x, shape, strides, n, storage_offset, dtype_arg(dtype)));
  });
}

}  // extern "C"
