#include <cstring>
#include <string>

#include "abi/abi.hpp"

namespace sm {
namespace abi {

namespace {
thread_local char t_last_error[4096] = "";
}

void set_last_error(const char* fn, const char* message) noexcept {
  std::snprintf(t_last_error, sizeof t_last_error, "%s: %s", fn, message);
}
const char* last_error() noexcept { return t_last_error; }

// Leaked on purpose: handles may be released from static destructors or GC
// finalizers running at process exit.
HandleTable<const TensorImpl>& tensors() {
  static auto* t = new HandleTable<const TensorImpl>(HandleKind::Tensor, "tensor");
  return *t;
}
HandleTable<Storage>& storages() {
  static auto* t = new HandleTable<Storage>(HandleKind::Storage, "storage");
  return *t;
}
HandleTable<StackState>& stacks() {
  static auto* t = new HandleTable<StackState>(HandleKind::Stack, "stack");
  return *t;
}

TensorPtr tensor_arg(sm_tensor h, const char* arg) {
  TensorPtr t = tensors().get(h, arg);
  if (t->lease() && !t->lease()->valid())
    fail(SM_ERR_INVALID_HANDLE,
         "%s (%p) was carved from a stack region that sm_stack_pop_to has freed; only "
         "sm_tensor_release accepts it now",
         arg, static_cast<void*>(h));
  return t;
}

sm_tensor publish(TensorPtr t) { return static_cast<sm_tensor>(tensors().insert(std::move(t))); }

sm_tensor publish_wrapped(const TensorPtr& t) {
  try {
    return publish(t);
  } catch (...) {
    t->storage()->disown();
    throw;
  }
}

namespace {
// "0 bool, 1 uint8, ..., 14 complex128": every code with its name, read from
// the dtype table so that it stays true when dtypes are added.
std::string valid_dtypes() {
  std::string list;
  for (int d = 0; d < kNumDTypes; ++d) {
    if (d) list += ", ";
    list += std::to_string(d) + " " + dtype_name(static_cast<DType>(d));
  }
  return list;
}
}  // namespace

DType dtype_arg(sm_dtype d, const char* arg) {
  if (!dtype_valid(d))
    fail(SM_ERR_INVALID_ARGUMENT, "%s = %d is not a dtype (valid: %s)", arg, d,
         valid_dtypes().c_str());
  return static_cast<DType>(d);
}

Device device_arg(sm_device d) { return usable_device(Device{d.type, d.index}); }

int ndim_arg(int32_t ndim, const void* array, const char* array_name) {
  if (ndim < 0 || ndim > SM_MAX_DIMS)
    fail(SM_ERR_INVALID_ARGUMENT, "ndim = %d is out of range (0..%d)", ndim, SM_MAX_DIMS);
  if (ndim > 0 && !array) fail(SM_ERR_INVALID_ARGUMENT, "%s is NULL with ndim = %d", array_name, ndim);
  return ndim;
}

void format_arg(sm_memory_format f, bool allow_preserve) {
  if (f < SM_CONTIGUOUS || f > SM_PRESERVE || (!allow_preserve && f == SM_PRESERVE))
    fail(SM_ERR_INVALID_ARGUMENT, "memory format %d is not valid here (SM_CONTIGUOUS=0, "
         "SM_CHANNELS_LAST=1, SM_CHANNELS_LAST_3D=2%s)", f, allow_preserve ? ", SM_PRESERVE=3" : "");
}

}  // namespace abi
}  // namespace sm
