// Storages that leave their process (include/stridemem.h, "Processes"): CPU
// storages in shared host memory (memory/shared_host_memory.*), CUDA
// storages through CUDA IPC (the backend's ipc_* calls), described by an
// sm_share_desc. The descriptor rules are pure functions, unit-tested
// without a second process or a device.
#pragma once

#include "engine/tensor.hpp"
#include "stridemem.h"

namespace sm {

// ---- the descriptor ----
// FNV-1a 64 over every byte before the checksum field.
uint64_t share_checksum(const sm_share_desc& d);
// Stamps magic, format, size, this library's version and the checksum.
void seal_share_desc(sm_share_desc& d);
// Everything that can be checked without the fd or a device, in the order
// the header documents (what it is, which version, intact, self-consistent).
void check_share_desc(const sm_share_desc& d);

// ---- the operations ----
// A CPU storage of nbytes in fresh shared memory (zero-filled).
StoragePtr new_shared_storage(int64_t nbytes);
// A row-major CPU tensor in fresh shared memory.
TensorPtr empty_shared(const int64_t* shape, int ndim, DType dtype);
// Tensor.share_memory_(): moves t's storage into shared memory in place.
void share_memory(const TensorPtr& t);
// The storage can be exported as it is.
bool is_shared(const Storage& s);
// Fills desc; *fd: a new fd the caller owns (-1 for CUDA).
void export_storage(const StoragePtr& s, sm_share_desc* desc, int* fd);
StoragePtr import_storage(const sm_share_desc& desc, int fd);

}  // namespace sm
