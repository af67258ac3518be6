// C entry points: the stack of views.
#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

extern "C" {

SM_API sm_status sm_stack_create(sm_device device, int64_t capacity_bytes, sm_stack* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    auto st = std::make_shared<StackState>(device_arg(device), capacity_bytes);
    *out = static_cast<sm_stack>(stacks().insert(std::move(st)));
  });
}

SM_API sm_status sm_stack_push(sm_stack s, const int64_t* shape, int32_t ndim, sm_dtype dtype,
                               sm_tensor* out) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    TensorPtr t = st->push(shape, n, dtype_arg(dtype));
    *out = publish(std::move(t));
  });
}

SM_API sm_status sm_stack_mark(sm_stack s, int64_t* mark) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(mark, "mark");
    *mark = st->mark();
  });
}

SM_API sm_status sm_stack_pop_to(sm_stack s, int64_t mark) {
  return guard(__func__, [&] { stacks().get(s, "s")->pop_to(mark); });
}

SM_API sm_status sm_stack_used(sm_stack s, int64_t* used_bytes, int64_t* capacity_bytes) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(used_bytes, "used_bytes");
    require_out(capacity_bytes, "capacity_bytes");
    *used_bytes = st->used();
    *capacity_bytes = st->capacity();
  });
}

SM_API sm_status sm_stack_release(sm_stack s) {
  if (!s) return SM_OK;
  return guard(__func__, [&] { stacks().release(s, "s"); });
}

}  // extern "C"
