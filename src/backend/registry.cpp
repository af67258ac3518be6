// Maps an sm_device to its backend, with the SM_ERR_DEVICE answers.
#include "backend/backend.hpp"
#include "core/error.hpp"

namespace sm {

Backend& backend_for(Device d) {
  switch (d.type) {
    case SM_DEVICE_CPU:
      if (d.index != 0) fail(SM_ERR_DEVICE, "device cpu:%d does not exist (only cpu:0)", d.index);
      return cpu_backend();
    case SM_DEVICE_CUDA:
      if (d.index < 0) fail(SM_ERR_DEVICE, "device cuda:%d does not exist (negative index)", d.index);
      return cuda_backend(d.index);
    case SM_DEVICE_CUDA_HOST:
      if (d.index != 0)
        fail(SM_ERR_DEVICE, "device cuda_host:%d does not exist (only cuda_host:0)", d.index);
      return cuda_host_backend();
    default:
      fail(SM_ERR_DEVICE,
           "device type %d does not exist (SM_DEVICE_CPU=1, SM_DEVICE_CUDA=2, SM_DEVICE_CUDA_HOST=3)",
           d.type);
  }
}

}  // namespace sm
