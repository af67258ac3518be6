// A device: the C API's sm_device as a value type, and its name in messages.
#pragma once

#include <cstdint>
#include <string>

#include "stridemem.h"

namespace sm {

struct Device {
  int32_t type = SM_DEVICE_CPU;
  int32_t index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// CPU and pinned memory are host memory: host code reads both directly.
inline bool host_accessible(Device d) {
  return d.type == SM_DEVICE_CPU || d.type == SM_DEVICE_CUDA_HOST;
}

// "cpu", "cuda", "cuda_host" ("?" for other codes).
const char* device_type_name(int32_t type);
// "cpu:0", "cuda:1".
std::string device_name(Device d);

}  // namespace sm
