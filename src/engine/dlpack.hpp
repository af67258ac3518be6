// DLPack export/import (zero copy). See include/stridemem_dlpack.h.
#pragma once

#include <optional>

#include "engine/tensor.hpp"

namespace sm {

// How a tensor is exported (sm_to_dlpack_ex's flags and device).
struct DLPackExport {
  bool versioned = false;  // DLManagedTensorVersioned, else the legacy struct
  bool normalize = false;  // no negative strides: such tensors are exported as a dense copy
  enum class Copy { IfNeeded, Always, Never } copy = Copy::IfNeeded;
  std::optional<Device> device;  // the consumer's (a copy there when it is not t's)
};
// Returns a DLManagedTensor* (legacy) or DLManagedTensorVersioned* that owns
// a reference to the exported storage until the consumer calls its deleter;
// *copied says whether the export is a copy (flagged IS_COPIED when versioned).
void* to_dlpack(const TensorPtr& t, const DLPackExport& how, bool* copied);
// Wraps a producer's managed tensor; its deleter runs once when the last view
// dies. On failure (throws) the caller keeps ownership.
TensorPtr from_dlpack(void* managed, bool versioned);

}  // namespace sm
