// sm::Kernels for one GPU: makes the device current and hands each plan
// (backend/op_plan.hpp) to its kernel family (cuda_copy.cu, cuda_scalar_ops.cu, cuda_tensor_ops.cu,
// cuda_index.cu).
// Launches are asynchronous on the calling thread's current stream.
#include <array>

#include "backend/cuda/cuda_common.hpp"
#include "backend/cuda/cuda_kernels.hpp"
#include "backend/op_plan.hpp"

namespace sm {
namespace cuda {

namespace {

class CudaKernels final : public Kernels {
 public:
  void set_device(int device) { device_ = device; }
  void run(const OpPlan& plan) override {
    if (plan.kind == PlanKind::Nothing) return;
    DeviceGuard g(device_);
    switch (plan.kind) {
      case PlanKind::Nothing: return;
      case PlanKind::Copy: launch_copy(plan, device_); return;
      case PlanKind::Fill: launch_fill(plan, device_); return;
      case PlanKind::ScalarOp: launch_scalar_op(plan, device_); return;
      case PlanKind::TensorOp: launch_tensor_op(plan, device_); return;
      case PlanKind::Gather: launch_index_select(plan, device_); return;
    }
  }
  PlanTarget target() const override { return PlanTarget::Cuda; }
  int64_t first_out_of_range(const TensorDesc& index, int64_t size) override {
    if (index.sizes[0] == 0) return -1;
    DeviceGuard g(device_);
    return index_first_out_of_range(index, size, device_);
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
