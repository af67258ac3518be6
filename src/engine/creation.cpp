// Tensor creation: fresh storages from the device's caching allocator, or
// wrapped memory the library does not own (from_blob, DLPack import).
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/op_plan.hpp"
#include "core/error.hpp"
#include "core/scalar_checks.hpp"
#include "engine/ops.hpp"
#include "layout/bounds.hpp"
#include "layout/contiguity.hpp"
#include "layout/overlap.hpp"

namespace sm {

TensorPtr empty_with_layout(const Layout& l, DType dtype, Device device) {
  const int64_t bytes = required_storage_bytes(l, static_cast<int64_t>(dtype_size(dtype)));
  StoragePtr s = allocate_storage(device, bytes);
  return std::make_shared<const TensorImpl>(std::move(s), l, dtype);
}

TensorPtr empty(const int64_t* shape, int ndim, DType dtype, Device device) {
  checked_numel(shape, ndim, static_cast<int64_t>(dtype_size(dtype)));
  return empty_with_layout(dense_layout(shape, ndim, SM_CONTIGUOUS), dtype, device);
}

TensorPtr empty_strided(const int64_t* shape, const int64_t* strides, int ndim, DType dtype,
                        Device device) {
  checked_numel(shape, ndim, static_cast<int64_t>(dtype_size(dtype)));
  Layout l = strided_layout(shape, strides, ndim);
  // The storage holds exactly the elements the strides reach (checked for
  // overflow first); negative strides start the view where its lowest
  // element lands at 0.
  byte_span(l, static_cast<int64_t>(dtype_size(dtype)));
  const Extent e = extent(l);
  if (!e.empty && e.lo < 0) l.offset = -e.lo;
  return empty_with_layout(l, dtype, device);
}

TensorPtr full(const int64_t* shape, int ndim, double value, DType dtype, Device device) {
  require_scalar_fits(dtype, value, "value", "sm_full refuses it");
  TensorPtr t = empty(shape, ndim, dtype, device);
  Kernels& k = kernels_for(device);
  k.run(plan_fill(t->desc(), value, k.target()));
  return t;
}

TensorPtr arange(double start, double step, int64_t n, DType dtype, Device device) {
  if (n < 0) fail(SM_ERR_SHAPE, "n must be >= 0 (got %lld)", (long long)n);
  const int64_t shape[1] = {n};
  // Integer values must fit (PyTorch's arange wraps them: a listed
  // difference, docs/PYTORCH_DIFFERENCES.md). The values are linear in i, so
  // the first and the last bound them all; floats overflow to inf as in
  // PyTorch and NumPy.
  if (is_integral(dtype) && n > 0) {
    require_scalar_fits(dtype, start, "start", "sm_arange refuses it");
    require_scalar_fits(dtype, start + step * static_cast<double>(n - 1),
                        "the last value (start + step*(n-1))", "sm_arange refuses it");
  }
  // Filled on the host in the target dtype (each value rounded once from
  // double), straight into the result when it is host memory.
  const Device host = host_accessible(device) ? device : Device{SM_DEVICE_CPU, 0};
  TensorPtr out = empty(shape, 1, dtype, host);
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = reinterpret_cast<T*>(out->data());
    for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(start + step * static_cast<double>(i));
  });
  if (host == device) return out;
  bool copied = false;
  return to(out, device, dtype, &copied);
}

TensorPtr from_host(const void* data, const int64_t* shape, int ndim, DType dtype, Device device) {
  const int64_t nbytes =
      checked_numel(shape, ndim, static_cast<int64_t>(dtype_size(dtype))) * static_cast<int64_t>(dtype_size(dtype));
  if (!data && nbytes > 0) fail(SM_ERR_INVALID_ARGUMENT, "data is NULL but the shape holds %lld bytes", (long long)nbytes);
  const Layout l = dense_layout(shape, ndim, SM_CONTIGUOUS);
  TensorPtr out = empty_with_layout(l, dtype, device);
  if (nbytes > 0) {
    if (host_accessible(device)) {
      std::memcpy(out->data(), data, static_cast<size_t>(nbytes));
    } else {
      Backend& b = backend_for(device);
      b.copy_bytes(out->data(), device, data, Device{SM_DEVICE_CPU, 0}, static_cast<size_t>(nbytes));
    }
  }
  return out;
}

TensorPtr wrap_foreign(void* data, const int64_t* shape, const int64_t* strides, int ndim,
                       DType dtype, Device device, std::function<void()> on_free, bool read_only,
                       const char* what) {
  const int64_t itemsize = static_cast<int64_t>(dtype_size(dtype));
  checked_numel(shape, ndim, itemsize);
  Layout l = strided_layout(shape, strides, ndim);
  const Extent e = extent(l);
  if (!e.empty && !data)
    fail(SM_ERR_INVALID_ARGUMENT, "%s is NULL but shape %s holds elements", what,
         format_dims(shape, ndim).c_str());
  const uintptr_t align = dtype_alignment(dtype);
  if (reinterpret_cast<uintptr_t>(data) % align != 0)
    fail(SM_ERR_INVALID_ARGUMENT, "%s (%p) is not aligned to the %s element alignment (%llu bytes)",
         what, data, dtype_name(dtype), (unsigned long long)align);
  // The storage starts at the lowest element reached and spans exactly the
  // elements reached; element [0, ..., 0] sits at offset -lo. The span is
  // checked in unsigned address arithmetic: memory that would begin below
  // address 0 or end past the top of the address space is no buffer.
  const ByteSpan span = byte_span(l, itemsize);
  l.offset = e.empty ? 0 : -e.lo;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(data);
  const uintptr_t below = static_cast<uintptr_t>(-static_cast<uint64_t>(span.lo_bytes));  // lo <= 0
  if (below > addr)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "%s (%p) with shape %s and strides %s reaches %llu bytes below it, below address 0",
         what, data, format_dims(l.sizes, l.ndim).c_str(), format_dims(l.strides, l.ndim).c_str(),
         (unsigned long long)below);
  const uintptr_t start = addr - below;
  if (static_cast<uint64_t>(span.nbytes) > UINTPTR_MAX - start)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "%s (%p) with shape %s and strides %s ends %lld bytes later, past the top of the "
         "address space",
         what, data, format_dims(l.sizes, l.ndim).c_str(), format_dims(l.strides, l.ndim).c_str(),
         (long long)span.nbytes);
  char* base = reinterpret_cast<char*>(start);
  auto storage = std::make_shared<Storage>(device, base, span.nbytes, std::move(on_free), read_only);
  try {
    return std::make_shared<const TensorImpl>(storage, l, dtype);
  } catch (...) {
    storage->disown();  // the call fails: ownership stays with the caller
    throw;
  }
}

TensorPtr from_blob(void* data, const int64_t* shape, const int64_t* strides, int ndim,
                    DType dtype, Device device, BlobDeleter deleter, void* ctx) {
  backend_for(device);  // the device must exist and be usable
  std::function<void()> on_free;
  if (deleter) on_free = [deleter, data, ctx] { deleter(data, ctx); };
  return wrap_foreign(data, shape, strides, ndim, dtype, device, std::move(on_free), false, "data");
}

TensorPtr tensor_from_storage(const StoragePtr& s, const int64_t* shape, const int64_t* strides,
                              int ndim, int64_t storage_offset, DType dtype) {
  checked_numel(shape, ndim, static_cast<int64_t>(dtype_size(dtype)));
  Layout l = strided_layout(shape, strides, ndim);
  if (storage_offset < 0)
    fail(SM_ERR_OUT_OF_BOUNDS, "storage_offset = %lld is negative", (long long)storage_offset);
  l.offset = storage_offset;
  return make_tensor(s, l, dtype);
}

StoragePtr storage_of(const TensorPtr& t) {
  if (t->lease())
    fail(SM_ERR_UNSUPPORTED,
         "t was carved from a stack of views: its buffer is reused after sm_stack_pop_to, so it "
         "is not handed out as a storage (sm_clone the tensor to own its data)");
  return t->storage();
}

void copy_to_host(const TensorPtr& t, void* dst, size_t nbytes) {
  const int64_t itemsize = static_cast<int64_t>(t->itemsize());
  const int64_t need = t->numel() * itemsize;
  if (nbytes < static_cast<size_t>(need))
    fail(SM_ERR_INVALID_ARGUMENT, "buffer of %zu bytes is too small: the tensor holds %lld bytes",
         nbytes, (long long)need);
  if (need == 0) return;
  if (!dst) fail(SM_ERR_INVALID_ARGUMENT, "dst is NULL");
  const Layout& l = t->layout();
  if (host_accessible(t->device())) {
    const int64_t n[1] = {need};
    const OverlapStatus st = overlap_status(dense_layout(n, 1, SM_CONTIGUOUS),
                                            reinterpret_cast<uintptr_t>(dst), 1, l,
                                            t->base_address(), itemsize);
    if (st != OverlapStatus::None) fail(SM_ERR_OVERLAP, "dst overlaps the tensor's own memory");
    if (reinterpret_cast<uintptr_t>(dst) % dtype_alignment(t->dtype()) == 0) {
      // Straight into the caller's buffer, viewed as a row-major tensor.
      const TensorPtr host = wrap_foreign(dst, l.sizes, nullptr, l.ndim, t->dtype(), Device{},
                                          nullptr, false, "dst");
      Kernels& k = cpu_kernels();
      k.run(plan_copy(host->desc(), t->desc(), k.target()));
      return;
    }
  }
  // Device memory, or a buffer not aligned for the element type (its elements
  // cannot be stored as typed values): a row-major copy moved as bytes.
  bool copied = false;
  const TensorPtr c = contiguous(t, SM_CONTIGUOUS, &copied);
  if (host_accessible(t->device())) {
    std::memcpy(dst, c->data(), static_cast<size_t>(need));
  } else {
    backend_for(t->device()).copy_bytes(dst, Device{}, c->data(), t->device(),
                                        static_cast<size_t>(need));
  }
}

}  // namespace sm
