// sm::cpu_kernels(): the CPU implementation of the Kernels interface.
#include "backend/cpu/cpu_entry_points.hpp"

namespace sm {

namespace {

class CpuKernels final : public Kernels {
 public:
  void run(const OpPlan& plan) override {
    switch (plan.kind) {
      case PlanKind::Nothing: return;
      case PlanKind::Copy: cpu::run_copy(plan); return;
      case PlanKind::Fill: cpu::run_fill(plan); return;
      case PlanKind::ScalarOp: cpu::run_scalar_op(plan); return;
      case PlanKind::TensorOp: cpu::run_tensor_op(plan); return;
      case PlanKind::Gather: cpu::run_gather(plan); return;
    }
  }
  PlanTarget target() const override { return PlanTarget::Host; }
  int64_t first_out_of_range(const TensorDesc& index, int64_t size) override {
    return cpu::first_out_of_range(index, size);
  }
};

}  // namespace

Kernels& cpu_kernels() {
  // Stateless; never destroyed so it stays usable from other static destructors.
  static CpuKernels* k = new CpuKernels();
  return *k;
}

}  // namespace sm
