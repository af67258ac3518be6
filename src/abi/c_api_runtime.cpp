// C entry points: streams, device synchronization, CPU threads.
#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

extern "C" {

SM_API sm_status sm_set_stream(sm_device device, void* cuda_stream) {
  return guard(__func__, [&] { set_stream(device_arg(device), cuda_stream); });
}

SM_API sm_status sm_get_stream(sm_device device, void** cuda_stream) {
  return guard(__func__, [&] {
    const Device dev = device_arg(device);
    require_out(cuda_stream, "cuda_stream");
    *cuda_stream = get_stream(dev);
  });
}

SM_API sm_status sm_synchronize(sm_device device) {
  return guard(__func__, [&] { synchronize(device_arg(device)); });
}

SM_API sm_status sm_record_stream(sm_tensor t, void* cuda_stream) {
  return guard(__func__, [&] { record_stream(tensor_arg(t, "t"), cuda_stream); });
}

SM_API sm_status sm_set_num_threads(int32_t n) {
  return guard(__func__, [&] { set_num_threads(n); });
}

SM_API sm_status sm_get_num_threads(int32_t* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    *out = num_threads();
  });
}

}  // extern "C"
