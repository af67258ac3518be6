#include "engine/tensor.hpp"

#include "core/error.hpp"
#include "engine/stack.hpp"
#include "layout/bounds.hpp"

namespace sm {

TensorImpl::TensorImpl(StoragePtr storage, const Layout& layout, DType dtype,
                       std::shared_ptr<const StackLease> lease)
    : storage_(std::move(storage)), layout_(layout), dtype_(dtype), lease_(std::move(lease)) {
  device_counters(storage_->device()).active_views++;
}

TensorImpl::~TensorImpl() { device_counters(storage_->device()).active_views--; }

TensorDesc make_desc(const TensorImpl& t, const Layout& l) {
  TensorDesc d;
  d.data = element_address(t.storage()->data(), l.offset, t.itemsize());
  d.dtype = t.dtype();
  d.ndim = l.ndim;
  for (int i = 0; i < l.ndim; ++i) {
    d.sizes[i] = l.sizes[i];
    d.strides[i] = l.strides[i];
  }
  return d;
}

TensorPtr derive_view(const TensorPtr& t, const Layout& layout) {
  // Every view's byte count must be representable (sm_nbytes), e.g. expand.
  checked_numel(layout.sizes, layout.ndim, static_cast<int64_t>(t->itemsize()));
  check_in_storage(layout, static_cast<int64_t>(t->itemsize()), t->storage()->nbytes());
  return std::make_shared<const TensorImpl>(t->storage(), layout, t->dtype(), t->lease());
}

TensorPtr make_tensor(StoragePtr storage, const Layout& layout, DType dtype) {
  const int64_t itemsize = static_cast<int64_t>(dtype_size(dtype));
  checked_numel(layout.sizes, layout.ndim, itemsize);
  // Every element of the view sits at base + k * itemsize, so they are all
  // aligned exactly when the base is (itemsize is a multiple of the
  // alignment). Bytes reached another way (a uint8 view imported at an odd
  // address) cannot be loaded as wider elements without undefined
  // behaviour; refused as from_blob refuses them.
  const uintptr_t align = dtype_alignment(dtype);
  if (reinterpret_cast<uintptr_t>(storage->data()) % align != 0)
    fail(SM_ERR_INVALID_ARGUMENT,
         "the storage's data (%p) is not aligned to the %s element alignment (%llu bytes): view "
         "it with a dtype whose alignment divides the address, or copy the bytes (sm_clone) first",
         storage->data(), dtype_name(dtype), (unsigned long long)align);
  check_in_storage(layout, itemsize, storage->nbytes());
  return std::make_shared<const TensorImpl>(std::move(storage), layout, dtype);
}

}  // namespace sm
