#include "engine/stack.hpp"

#include "core/error.hpp"
#include "layout/contiguity.hpp"

namespace sm {

bool StackLease::valid() const { return stack->lease_valid(index, serial); }

StackState::StackState(Device device, int64_t capacity) : capacity_(capacity) {
  if (capacity < 0) fail(SM_ERR_INVALID_ARGUMENT, "capacity_bytes must be >= 0 (got %lld)", (long long)capacity);
  storage_ = allocate_storage(device, capacity);
}

StackState::StackState(StoragePtr storage)
    : storage_(std::move(storage)), capacity_(storage_->nbytes()) {}

TensorPtr StackState::push(const int64_t* shape, int ndim, DType dtype) {
  const int64_t itemsize = static_cast<int64_t>(dtype_size(dtype));
  const int64_t nbytes = checked_numel(shape, ndim, itemsize) * itemsize;  // no overflow: checked
  Layout l = dense_layout(shape, ndim, SM_CONTIGUOUS);
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t top = entries_.empty() ? 0 : entries_.back().end;
  const int64_t start = (top + SM_STACK_ALIGNMENT - 1) / SM_STACK_ALIGNMENT * SM_STACK_ALIGNMENT;
  if (start > capacity_ || nbytes > capacity_ - start)
    fail(SM_ERR_OUT_OF_MEMORY,
         "stack is full: pushing %s %s (%lld bytes at aligned offset %lld) exceeds capacity %lld "
         "bytes (%lld used)",
         format_dims(shape, ndim).c_str(), dtype_name(dtype), (long long)nbytes, (long long)start,
         (long long)capacity_, (long long)top);
  // Offsets are in elements: the aligned byte start is a multiple of every itemsize.
  l.offset = start / itemsize;
  auto lease = std::make_shared<StackLease>();
  lease->stack = shared_from_this();
  lease->index = entries_.size();
  lease->serial = next_serial_;
  auto t = std::make_shared<const TensorImpl>(storage_, l, dtype, std::move(lease));
  entries_.push_back({start + nbytes, next_serial_++});
  return t;
}

int64_t StackState::mark() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(entries_.size());
}

void StackState::pop_to(int64_t mark) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mark < 0 || mark > static_cast<int64_t>(entries_.size()))
    fail(SM_ERR_INVALID_ARGUMENT, "mark %lld is not on the stack (valid marks: 0..%zu)",
         (long long)mark, entries_.size());
  entries_.resize(static_cast<size_t>(mark));
}

int64_t StackState::used() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.empty() ? 0 : entries_.back().end;
}

bool StackState::lease_valid(size_t index, uint64_t serial) {
  std::lock_guard<std::mutex> lock(mu_);
  return index < entries_.size() && entries_[index].serial == serial;
}

}  // namespace sm
