// C entry points for copies and in-place ops.
#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

extern "C" {

SM_API sm_status sm_reshape_would_copy(sm_tensor t, const int64_t* shape, int32_t ndim, int* out) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    *out = reshape_would_copy(x, shape, ndim_arg(ndim, shape, "shape")) ? 1 : 0;
  });
}

SM_API sm_status sm_reshape(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out,
                            int* copied) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    bool c = false;
    TensorPtr r = reshape(x, shape, ndim_arg(ndim, shape, "shape"), &c);
    sm_tensor h = publish(std::move(r));
    *out = h;
    if (copied) *copied = c ? 1 : 0;
  });
}

SM_API sm_status sm_contiguous(sm_tensor t, sm_memory_format format, sm_tensor* out,
                               int* copied) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    format_arg(format, false);
    bool c = false;
    *out = publish(contiguous(x, format, &c));
    if (copied) *copied = c ? 1 : 0;
  });
}

SM_API sm_status sm_clone(sm_tensor t, sm_memory_format format, sm_tensor* out) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    format_arg(format, true);
    *out = publish(clone(x, format));
  });
}

SM_API sm_status sm_to(sm_tensor t, sm_device device, sm_dtype dtype, sm_tensor* out,
                       int* copied) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    const DType d = dtype_arg(dtype);
    const Device dev = device_arg(device);
    bool c = false;
    *out = publish(to(x, dev, d, &c));
    if (copied) *copied = c ? 1 : 0;
  });
}

SM_API sm_status sm_copy_into(sm_tensor dst, sm_tensor src) {
  return guard(__func__, [&] { copy_into(tensor_arg(dst, "dst"), tensor_arg(src, "src")); });
}

SM_API sm_status sm_index_select(sm_tensor t, int32_t dim, sm_tensor index, sm_tensor* out) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    TensorPtr i = tensor_arg(index, "index");
    require_out(out, "out");
    *out = publish(index_select(x, dim, i));
  });
}

SM_API sm_status sm_inplace_scalar(sm_tensor t, sm_op op, double a, double b) {
  return guard(__func__, [&] { inplace_scalar(tensor_arg(t, "t"), op, a, b); });
}

SM_API sm_status sm_inplace_tensor(sm_tensor t, sm_op op, sm_tensor other, double alpha) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    TensorPtr o = tensor_arg(other, "other");
    inplace_tensor(x, op, o, alpha);
  });
}

}  // extern "C"
