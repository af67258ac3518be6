// C entry points for tests: fault injection, live-handle counts, and aging a
// freed handle slot to its generation limit.
#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

extern "C" {

SM_API sm_status sm_debug_fail_alloc(int64_t n) {
  return guard(__func__, [&] { fail_nth_allocation(n); });
}

SM_API sm_status sm_debug_live_handles(int64_t* t, int64_t* s, int64_t* k) {
  return guard(__func__, [&] {
    require_out(t, "tensors");
    require_out(s, "storages");
    require_out(k, "stacks");
    *t = tensors().live();
    *s = storages().live();
    *k = stacks().live();
  });
}

SM_API sm_status sm_debug_age_handle_slot(const void* released, int64_t generations_left) {
  return guard(__func__, [&] {
    // The kind tag in the top 4 bits says which table names the slot.
    switch (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(released)) >> 60) {
      case static_cast<uint64_t>(HandleKind::Tensor):
        tensors().age_free_slot(released, generations_left, "released");
        return;
      case static_cast<uint64_t>(HandleKind::Storage):
        storages().age_free_slot(released, generations_left, "released");
        return;
      case static_cast<uint64_t>(HandleKind::Stack):
        stacks().age_free_slot(released, generations_left, "released");
        return;
      default:
        fail(SM_ERR_INVALID_HANDLE, "released (%p) is not a tensor, storage or stack handle", released);
    }
  });
}

}  // extern "C"
