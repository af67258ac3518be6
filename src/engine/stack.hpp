// The "stack of views": tensors carved out of one preallocated storage,
// pushed and popped LIFO in O(1). A popped region's tensors are detected
// through their StackLease (SM_ERR_INVALID_HANDLE), never silently reused.
#pragma once

#include <mutex>
#include <vector>

#include "engine/tensor.hpp"

namespace sm {

class StackState : public std::enable_shared_from_this<StackState> {
 public:
  StackState(Device device, int64_t capacity);
  // Over an existing storage (its whole size is the capacity): a stack in
  // shared memory.
  explicit StackState(StoragePtr storage);
  // The whole buffer (sm_stack_storage).
  const StoragePtr& storage() const { return storage_; }
  TensorPtr push(const int64_t* shape, int ndim, DType dtype);
  int64_t mark();
  void pop_to(int64_t mark);
  int64_t used();
  int64_t capacity() const { return capacity_; }
  Device device() const { return storage_->device(); }
  bool lease_valid(size_t index, uint64_t serial);

 private:
  struct Entry {
    int64_t end;  // byte offset just past this push's region
    uint64_t serial;
  };
  std::mutex mu_;
  StoragePtr storage_;
  int64_t capacity_;
  std::vector<Entry> entries_;
  uint64_t next_serial_ = 1;
};

using StackPtr = std::shared_ptr<StackState>;

}  // namespace sm
