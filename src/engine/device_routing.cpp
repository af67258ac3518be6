// Which backend serves a device's kernels and a transfer between two
// devices, and moving a tensor to another kernel domain.
#include "engine/ops.hpp"

namespace sm {

Kernels& kernels_for(Device d) {
  if (host_accessible(d)) return cpu_kernels();
  return backend_for(d).kernels();
}

bool same_kernel_domain(Device a, Device b) {
  return a == b || (host_accessible(a) && host_accessible(b));
}

namespace {

// The backend that moves raw bytes between two devices.
Backend& transfer_backend(Device a, Device b) {
  if (a.type == SM_DEVICE_CUDA) return backend_for(a);
  if (b.type == SM_DEVICE_CUDA) return backend_for(b);
  return cpu_backend();
}

}  // namespace

TensorPtr stage_to(const TensorPtr& src, Device device) {
  bool copied = false;
  TensorPtr c = contiguous(src, SM_CONTIGUOUS, &copied);
  TensorPtr out = empty(c->layout().sizes, c->layout().ndim, c->dtype(), device);
  const int64_t n = c->numel() * static_cast<int64_t>(c->itemsize());
  if (n > 0)
    transfer_backend(device, c->device())
        .copy_bytes(out->data(), device, c->data(), c->device(), static_cast<size_t>(n));
  return out;
}

}  // namespace sm
