// C entry points for tests: fault injection and live-handle counts.
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

}  // extern "C"
