#include "engine/tensor.hpp"

#include "engine/stack.hpp"

namespace sm {

TensorImpl::TensorImpl(StoragePtr storage, const Layout& layout, DType dtype,
                       std::shared_ptr<const StackLease> lease)
    : storage_(std::move(storage)), layout_(layout), dtype_(dtype), lease_(std::move(lease)) {
  device_counters(storage_->device()).active_views++;
}

TensorImpl::~TensorImpl() { device_counters(storage_->device()).active_views--; }

TensorDesc TensorImpl::desc() const {
  TensorDesc d;
  d.data = data();
  d.dtype = dtype_;
  d.ndim = layout_.ndim;
  for (int i = 0; i < layout_.ndim; ++i) {
    d.sizes[i] = layout_.sizes[i];
    d.strides[i] = layout_.strides[i];
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
  checked_numel(layout.sizes, layout.ndim, static_cast<int64_t>(dtype_size(dtype)));
  check_in_storage(layout, static_cast<int64_t>(dtype_size(dtype)), storage->nbytes());
  return std::make_shared<const TensorImpl>(std::move(storage), layout, dtype);
}

}  // namespace sm
