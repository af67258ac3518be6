// Helpers shared by the C entry points: the one guard that turns engine
// exceptions into statuses, handle lookups, and argument checks. An entry
// point is argument checks + handle lookups + one engine call + publishing
// the result; nothing else (the engine does the work, in engine/).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "abi/handles.hpp"
#include "engine/ops.hpp"
#include "engine/runtime.hpp"
#include "engine/sharing.hpp"
#include "engine/stack.hpp"
#include "engine/views.hpp"

namespace sm {
namespace abi {

void set_last_error(const char* fn, const char* message) noexcept;

// Runs body; any exception becomes a status and the calling thread's last
// error, prefixed with the entry point's name. Nothing crosses the ABI.
template <typename F>
sm_status guard(const char* fn, F&& body) noexcept {
  try {
    body();
    return SM_OK;
  } catch (const Error& e) {
    set_last_error(fn, e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error(fn, "out of host memory");
    return SM_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(fn, (std::string("internal error: ") + e.what()).c_str());
    return SM_ERR_INTERNAL;
  } catch (...) {
    set_last_error(fn, "internal error: unknown exception");
    return SM_ERR_INTERNAL;
  }
}

HandleTable<const TensorImpl>& tensors();
HandleTable<Storage>& storages();
HandleTable<StackState>& stacks();

// A live tensor; a tensor whose stack region was popped is invalid too.
TensorPtr tensor_arg(sm_tensor h, const char* arg);
sm_tensor publish(TensorPtr t);  // registers a new owner-1 handle
// publish() for a tensor over wrapped memory (from_blob, DLPack import): if
// no handle can be made, the memory goes back to its owner without its
// deleter (a failed call leaves ownership with the caller).
sm_tensor publish_wrapped(const TensorPtr& t);

template <typename T>
void require_out(T* p, const char* arg) {
  if (!p) fail(SM_ERR_INVALID_ARGUMENT, "%s (output pointer) is NULL", arg);
}
DType dtype_arg(sm_dtype d, const char* arg = "dtype");
Device device_arg(sm_device d);  // exists and is usable (else SM_ERR_DEVICE)
// ndim in [0, SM_MAX_DIMS] and the array non-NULL when ndim > 0.
int ndim_arg(int32_t ndim, const void* array, const char* array_name);
void format_arg(sm_memory_format f, bool allow_preserve);

}  // namespace abi
}  // namespace sm
