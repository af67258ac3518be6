#include "core/device.hpp"

namespace sm {

const char* device_type_name(int32_t type) {
  switch (type) {
    case SM_DEVICE_CPU: return "cpu";
    case SM_DEVICE_CUDA: return "cuda";
    case SM_DEVICE_CUDA_HOST: return "cuda_host";
    default: return "?";
  }
}

std::string device_name(Device d) {
  return std::string(device_type_name(d.type)) + ":" + std::to_string(d.index);
}

}  // namespace sm
