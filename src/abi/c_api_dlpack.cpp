// C entry points: DLPack export and import.
#include "abi/abi.hpp"
#include "engine/dlpack.hpp"

using namespace sm;
using namespace sm::abi;

extern "C" {

SM_API sm_status sm_to_dlpack(sm_tensor t, int versioned, void** managed) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(managed, "managed");
    DLPackExport how;
    how.versioned = versioned != 0;
    bool c = false;
    *managed = to_dlpack(x, how, &c);
  });
}

SM_API sm_status sm_to_dlpack_ex(sm_tensor t, uint32_t flags, const sm_device* device,
                                 void** managed, int* copied) {
  return guard(__func__, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(managed, "managed");
    constexpr uint32_t kKnown = SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE | SM_DLPACK_COPY | SM_DLPACK_NO_COPY;
    if (flags & ~kKnown) fail(SM_ERR_INVALID_ARGUMENT, "unknown flags 0x%x", flags & ~kKnown);
    if ((flags & SM_DLPACK_COPY) && (flags & SM_DLPACK_NO_COPY))
      fail(SM_ERR_INVALID_ARGUMENT, "SM_DLPACK_COPY and SM_DLPACK_NO_COPY contradict each other");
    DLPackExport how;
    how.versioned = (flags & SM_DLPACK_VERSIONED) != 0;
    how.normalize = (flags & SM_DLPACK_NORMALIZE) != 0;
    how.copy = (flags & SM_DLPACK_COPY)      ? DLPackExport::Copy::Always
               : (flags & SM_DLPACK_NO_COPY) ? DLPackExport::Copy::Never
                                             : DLPackExport::Copy::IfNeeded;
    if (device) how.device = device_arg(*device);
    bool c = false;
    *managed = to_dlpack(x, how, &c);
    if (copied) *copied = c ? 1 : 0;
  });
}

SM_API sm_status sm_from_dlpack(void* managed, int versioned, sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    if (!managed) fail(SM_ERR_INVALID_ARGUMENT, "managed is NULL");
    *out = publish_wrapped(from_dlpack(managed, versioned != 0));
  });
}

}  // extern "C"
