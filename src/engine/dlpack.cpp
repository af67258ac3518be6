// Placeholder until DLPack lands (issue 5): a clear SM_ERR_UNSUPPORTED.
#include "engine/dlpack.hpp"

#include "core/error.hpp"

namespace sm {

void* to_dlpack(const TensorPtr&, bool) {
  fail(SM_ERR_UNSUPPORTED, "DLPack export is not implemented in this build yet");
}
TensorPtr from_dlpack(void*, bool) {
  fail(SM_ERR_UNSUPPORTED, "DLPack import is not implemented in this build yet");
}

}  // namespace sm
