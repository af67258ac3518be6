// sm::Kernels for one GPU: makes the device current and hands each call to
// its kernel family (cuda_copy.cu, cuda_scalar_ops.cu, cuda_tensor_ops.cu,
// cuda_index.cu).
// Launches are asynchronous on the calling thread's current stream.
#include <array>

#include "backend/cuda/cuda_common.hpp"
#include "backend/cuda/cuda_kernels.hpp"

namespace sm {
namespace cuda {

namespace {

class CudaKernels final : public Kernels {
 public:
  void set_device(int device) { device_ = device; }
  void copy(const TensorDesc& dst, const TensorDesc& src) override {
    if (dst.numel() == 0) return;
    DeviceGuard g(device_);
    launch_copy(dst, src, device_);
  }
  void scalar_op(const TensorDesc& dst, sm_op op, double a, double b) override {
    if (dst.numel() == 0) return;
    DeviceGuard g(device_);
    launch_scalar_op(dst, op, a, b, device_);
  }
  void tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other, double alpha) override {
    if (dst.numel() == 0) return;
    DeviceGuard g(device_);
    launch_tensor_op(dst, op, other, alpha, device_);
  }
  int64_t first_out_of_range(const TensorDesc& index, int64_t size) override {
    if (index.sizes[0] == 0) return -1;
    DeviceGuard g(device_);
    return index_first_out_of_range(index, size, device_);
  }
  void index_select(const TensorDesc& dst, const TensorDesc& src, int dim,
                    const TensorDesc& index) override {
    if (dst.numel() == 0) return;
    DeviceGuard g(device_);
    launch_index_select(dst, src, dim, index, device_);
  }

 private:
  int device_ = 0;
};

}  // namespace

Kernels& device_kernels(int device) {
  static std::array<CudaKernels, kMaxDevices>* all = [] {
    auto* a = new std::array<CudaKernels, kMaxDevices>();  // leaked: used until exit
    for (int i = 0; i < kMaxDevices; ++i) (*a)[static_cast<size_t>(i)].set_device(i);
    return a;
  }();
  return (*all)[static_cast<size_t>(device)];
}

}  // namespace cuda
}  // namespace sm
