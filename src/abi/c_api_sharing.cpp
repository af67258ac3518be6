// C entry points: storages shared with other processes (engine/sharing.*).
#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

extern "C" {

SM_API sm_status sm_empty_shared(const int64_t* shape, int32_t ndim, sm_dtype dtype,
                                 sm_tensor* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    const int n = ndim_arg(ndim, shape, "shape");
    *out = publish(sm::empty_shared(shape, n, dtype_arg(dtype)));
  });
}

SM_API sm_status sm_share_memory(sm_tensor t) {
  return guard(__func__, [&] { sm::share_memory(tensor_arg(t, "t")); });
}

SM_API sm_status sm_is_shared(sm_tensor t, int* out) {
  return guard(__func__, [&] {
    auto x = tensor_arg(t, "t");
    require_out(out, "out");
    *out = sm::is_shared(*x->storage()) ? 1 : 0;
  });
}

SM_API sm_status sm_storage_is_shared(sm_storage s, int* out) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(out, "out");
    *out = sm::is_shared(*x) ? 1 : 0;
  });
}

SM_API sm_status sm_storage_export(sm_storage s, sm_share_desc* desc, int* fd) {
  return guard(__func__, [&] {
    auto x = storages().get(s, "s");
    require_out(desc, "desc");
    require_out(fd, "fd");
    sm::export_storage(x, desc, fd);
  });
}

SM_API sm_status sm_tensor_export(sm_tensor t, sm_share_desc* desc, int* fd) {
  return guard(__func__, [&] {
    auto x = tensor_arg(t, "t");
    require_out(desc, "desc");
    require_out(fd, "fd");
    // The storage itself, stack buffers included: a shared stack exists to
    // be exported (the header says who orders reuse).
    sm::export_storage(x->storage(), desc, fd);
  });
}

SM_API sm_status sm_storage_import(const sm_share_desc* desc, int fd, sm_storage* out) {
  return guard(__func__, [&] {
    if (!desc) fail(SM_ERR_INVALID_ARGUMENT, "desc is NULL");
    require_out(out, "out");
    *out = static_cast<sm_storage>(storages().insert(sm::import_storage(*desc, fd)));
  });
}

SM_API sm_status sm_stack_create_shared(int64_t capacity_bytes, sm_stack* out) {
  return guard(__func__, [&] {
    require_out(out, "out");
    if (capacity_bytes < 0)
      fail(SM_ERR_INVALID_ARGUMENT, "capacity_bytes must be >= 0 (got %lld)",
           (long long)capacity_bytes);
    auto st = std::make_shared<StackState>(sm::new_shared_storage(capacity_bytes));
    *out = static_cast<sm_stack>(stacks().insert(std::move(st)));
  });
}

SM_API sm_status sm_stack_storage(sm_stack s, sm_storage* out) {
  return guard(__func__, [&] {
    auto st = stacks().get(s, "s");
    require_out(out, "out");
    *out = static_cast<sm_storage>(storages().insert(st->storage()));
  });
}

}  // extern "C"
