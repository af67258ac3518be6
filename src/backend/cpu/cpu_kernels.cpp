// sm::cpu_kernels(): the CPU implementation of the Kernels interface.
#include "backend/cpu/cpu_kernels_impl.hpp"

namespace sm {

namespace {

class CpuKernels final : public Kernels {
 public:
  void copy(const TensorDesc& dst, const TensorDesc& src) override { cpu::copy(dst, src); }
  void scalar_op(const TensorDesc& dst, sm_op op, double a, double b) override {
    cpu::scalar_op(dst, op, a, b);
  }
  void tensor_op(const TensorDesc& dst, sm_op op, const TensorDesc& other,
                 double alpha) override {
    cpu::tensor_op(dst, op, other, alpha);
  }
  int64_t first_out_of_range(const TensorDesc& index, int64_t size) override {
    return cpu::first_out_of_range(index, size);
  }
  void index_select(const TensorDesc& dst, const TensorDesc& src, int dim,
                    const TensorDesc& index) override {
    cpu::index_select(dst, src, dim, index);
  }
};

}  // namespace

Kernels& cpu_kernels() {
  // Stateless; never destroyed so it stays usable from other static destructors.
  static CpuKernels* k = new CpuKernels();
  return *k;
}

}  // namespace sm
