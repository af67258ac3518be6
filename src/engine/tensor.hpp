// TensorImpl: a view = storage + layout + dtype (c10's TensorImpl). Immutable
// once made: every view op builds a new one, so handles can be shared across
// threads without locks.
#pragma once

#include <memory>

#include "backend/backend.hpp"
#include "engine/storage.hpp"
#include "layout/layout.hpp"

namespace sm {

class StackState;
class TensorImpl;
TensorDesc make_desc(const TensorImpl& t, const Layout& l);

// Address of element `offset` of the storage at base. Unsigned arithmetic: an
// empty view may carry any offset (it reaches nothing), and its address must
// not be undefined behaviour to compute.
inline char* element_address(const void* base, int64_t offset, size_t itemsize) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(base) +
                                 static_cast<uint64_t>(offset) * itemsize);
}

// A tensor carved from a stack of views is valid while its push is still on
// the stack (LIFO): index into the stack's entries + the serial of the push.
struct StackLease {
  std::shared_ptr<StackState> stack;
  size_t index = 0;
  uint64_t serial = 0;
  bool valid() const;
};

class TensorImpl {
 public:
  TensorImpl(StoragePtr storage, const Layout& layout, DType dtype,
             std::shared_ptr<const StackLease> lease = nullptr);
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const StoragePtr& storage() const { return storage_; }
  const Layout& layout() const { return layout_; }
  DType dtype() const { return dtype_; }
  size_t itemsize() const { return dtype_size(dtype_); }
  Device device() const { return storage_->device(); }
  int64_t numel() const { return layout_.numel(); }
  const std::shared_ptr<const StackLease>& lease() const { return lease_; }
  // Address of logical element [0, ..., 0].
  char* data() const { return element_address(storage_->data(), layout_.offset, itemsize()); }
  TensorDesc desc() const { return make_desc(*this, layout_); }
  // Byte address of storage element 0, for overlap checks.
  uintptr_t base_address() const { return reinterpret_cast<uintptr_t>(storage_->data()); }

 private:
  StoragePtr storage_;
  Layout layout_;
  DType dtype_;
  std::shared_ptr<const StackLease> lease_;
};

using TensorPtr = std::shared_ptr<const TensorImpl>;

// The kernel operand for t's storage seen through layout l (t's dtype): the
// address of l's element [0, ..., 0], sizes and strides. The one place a
// Layout becomes a TensorDesc.
TensorDesc make_desc(const TensorImpl& t, const Layout& l);

// A view of t with a new layout over the same storage (bounds-checked
// against the storage; inherits t's stack lease).
TensorPtr derive_view(const TensorPtr& t, const Layout& layout);
// A tensor of any dtype over a storage (sm_tensor_from_storage, wrapped
// memory), bounds-checked.
TensorPtr make_tensor(StoragePtr storage, const Layout& layout, DType dtype);

}  // namespace sm
