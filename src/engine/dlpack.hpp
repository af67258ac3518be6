// DLPack export/import (zero copy). See include/stridemem_dlpack.h.
#pragma once

#include "engine/tensor.hpp"

namespace sm {

// Returns a DLManagedTensor* (legacy) or DLManagedTensorVersioned* that owns
// a reference to t's storage until the consumer calls its deleter.
void* to_dlpack(const TensorPtr& t, bool versioned);
// With options: normalize copies negative-stride tensors to a dense layout.
void* to_dlpack_ex(const TensorPtr& t, bool versioned, bool normalize, bool* copied);
// Wraps a producer's managed tensor; its deleter runs once when the last view
// dies. On failure (throws) the caller keeps ownership.
TensorPtr from_dlpack(void* managed, bool versioned);

}  // namespace sm
