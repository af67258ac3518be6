// The calls that copy data: copy_into, contiguous/clone, to, reshape (when it
// must), index_select; and the rules every write follows (writability, the
// overlap policy). Device pairs, broadcasting, dtype conversion and overlap
// are decided here; the element loops live in the backends.
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "engine/ops.hpp"

namespace sm {

Kernels& kernels_for(Device d) {
  if (host_accessible(d)) return cpu_kernels();
  return backend_for(d).kernels();
}

void check_writable(const TensorImpl& t, const char* what) {
  if (t.storage()->read_only())
    fail(SM_ERR_READ_ONLY, "%s is read-only (imported from a read-only DLPack tensor)", what);
  if (internal_overlap(t.layout()) == Overlap::Yes)
    fail(SM_ERR_OVERLAP,
         "%s has elements that overlap each other (shape %s, strides %s): writing through it is "
         "ambiguous; clone it first",
         what, format_dims(t.layout().sizes, t.layout().ndim).c_str(),
         format_dims(t.layout().strides, t.layout().ndim).c_str());
}

namespace {

bool same_kernel_domain(Device a, Device b) {
  return a == b || (host_accessible(a) && host_accessible(b));
}

// The backend that moves raw bytes between two devices.
Backend& transfer_backend(Device a, Device b) {
  if (a.type == SM_DEVICE_CUDA) return backend_for(a);
  if (b.type == SM_DEVICE_CUDA) return backend_for(b);
  return cpu_backend();
}

// src moved to `device` as a row-major tensor of the same dtype and shape.
TensorPtr stage_to(const TensorPtr& src, Device device) {
  bool copied = false;
  TensorPtr c = contiguous(src, SM_CONTIGUOUS, &copied);
  TensorPtr out = empty(c->layout().sizes, c->layout().ndim, c->dtype(), device);
  const int64_t n = c->numel() * static_cast<int64_t>(c->itemsize());
  if (n > 0)
    transfer_backend(device, c->device())
        .copy_bytes(out->data(), device, c->data(), c->device(), static_cast<size_t>(n));
  return out;
}

}  // namespace

ReadSource read_source(const TensorImpl& dst, const TensorPtr& src_in, const char* what) {
  // On another kernel domain: move the (unexpanded) source over first, then
  // broadcast and convert there.
  const TensorPtr src = same_kernel_domain(dst.device(), src_in->device())
                            ? src_in
                            : stage_to(src_in, dst.device());
  const Layout& dl = dst.layout();
  const Layout sl = expand(src->layout(), dl.sizes, dl.ndim);
  const OverlapStatus st = overlap_status(dl, dst.base_address(), dst.itemsize(), sl,
                                          src->base_address(), src->itemsize());
  if (st == OverlapStatus::Partial)
    fail(SM_ERR_OVERLAP,
         "%s partially overlaps the tensor written (some of its elements would be written before "
         "they are read); clone it first (sm_clone)",
         what);
  ReadSource r;
  if (st == OverlapStatus::TooHard) {
    // Could not prove the two disjoint: read through a private copy.
    r.keep = clone(src, SM_CONTIGUOUS);
    r.desc = make_desc(*r.keep, expand(r.keep->layout(), dl.sizes, dl.ndim));
    return r;
  }
  r.keep = src;
  r.desc = make_desc(*src, sl);
  r.identical = st == OverlapStatus::Full;
  return r;
}

namespace {

// The internal copy: no writability check, no version bump.
void copy_raw(const TensorPtr& dst, const TensorPtr& src) {
  if (dst->numel() == 0) {
    expand(src->layout(), dst->layout().sizes, dst->layout().ndim);  // still SM_ERR_SHAPE
    return;
  }
  const ReadSource s = read_source(*dst, src, "the source");
  if (s.identical && dst->dtype() == src->dtype()) return;  // a copy onto itself
  kernels_for(dst->device()).copy(dst->desc(), s.desc);
}

}  // namespace

void copy_into(const TensorPtr& dst, const TensorPtr& src) {
  check_writable(*dst, "the destination");
  copy_raw(dst, src);
  dst->storage()->bump_version();
}

TensorPtr clone(const TensorPtr& t, sm_memory_format format) {
  Layout l;
  if (format == SM_PRESERVE) {
    l = dense_like(t->layout());
  } else {
    l = dense_layout(t->layout().sizes, t->layout().ndim, format);
  }
  TensorPtr out = empty_with_layout(l, t->dtype(), t->device());
  copy_raw(out, t);
  return out;
}

TensorPtr contiguous(const TensorPtr& t, sm_memory_format format, bool* copied) {
  if (format == SM_PRESERVE)
    fail(SM_ERR_INVALID_ARGUMENT, "SM_PRESERVE is not a target layout for sm_contiguous (use sm_clone)");
  if (is_contiguous(t->layout(), format)) {
    *copied = false;
    return std::make_shared<const TensorImpl>(t->storage(), t->layout(), t->dtype(), t->lease());
  }
  // Validate the format against ndim before allocating.
  dense_layout(t->layout().sizes, t->layout().ndim, format);
  *copied = true;
  return clone(t, format);
}

TensorPtr to(const TensorPtr& t, Device device, DType dtype, bool* copied) {
  backend_for(device);  // must exist
  if (device == t->device() && dtype == t->dtype()) {
    *copied = false;
    return std::make_shared<const TensorImpl>(t->storage(), t->layout(), t->dtype(), t->lease());
  }
  TensorPtr out = empty_with_layout(dense_like(t->layout()), dtype, device);
  copy_raw(out, t);
  *copied = true;
  return out;
}

bool reshape_would_copy(const TensorPtr& t, const int64_t* shape, int ndim) {
  const std::vector<int64_t> s = infer_shape(shape, ndim, t->numel());
  int64_t strides[kMaxDims];
  return !view_strides(t->layout(), s.data(), ndim, strides);
}

TensorPtr reshape(const TensorPtr& t, const int64_t* shape, int ndim, bool* copied) {
  const std::vector<int64_t> s = infer_shape(shape, ndim, t->numel());
  int64_t strides[kMaxDims];
  if (view_strides(t->layout(), s.data(), ndim, strides)) {
    *copied = false;
    return derive_view(t, view(t->layout(), s.data(), ndim));
  }
  TensorPtr c = clone(t, SM_CONTIGUOUS);
  *copied = true;
  return derive_view(c, view(c->layout(), s.data(), ndim));
}

TensorPtr index_select(const TensorPtr& t, int64_t dim_arg, const TensorPtr& index) {
  if (index->dtype() != DType::I32 && index->dtype() != DType::I64)
    fail(SM_ERR_DTYPE, "index must be int32 or int64 (got %s)", dtype_name(index->dtype()));
  if (index->layout().ndim > 1)
    fail(SM_ERR_SHAPE, "index must be 0-d or 1-d (got %d dims)", index->layout().ndim);
  // A 0-d tensor indexes like a 1-element vector (PyTorch).
  Layout src = t->layout();
  if (src.ndim == 0) {
    src.ndim = 1;
    src.sizes[0] = 1;
    src.strides[0] = 1;
  }
  const int dim = wrap_dim(dim_arg, src.ndim);
  const int64_t n = index->numel();
  std::vector<int64_t> idx(static_cast<size_t>(n));
  if (index->dtype() == DType::I64) {
    copy_to_host(index, idx.data(), idx.size() * 8);
  } else {
    std::vector<int32_t> i32(static_cast<size_t>(n));
    copy_to_host(index, i32.data(), i32.size() * 4);
    for (size_t i = 0; i < i32.size(); ++i) idx[i] = i32[i];
  }
  const int64_t size = src.sizes[dim];
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = idx[static_cast<size_t>(i)];
    if (v < -size || v >= size)
      fail(SM_ERR_OUT_OF_BOUNDS, "index[%lld] = %lld is out of range for dim %d of size %lld",
           (long long)i, (long long)v, dim, (long long)size);
    idx[static_cast<size_t>(i)] = v < 0 ? v + size : v;
  }
  int64_t out_shape[kMaxDims];
  for (int i = 0; i < src.ndim; ++i) out_shape[i] = src.sizes[i];
  out_shape[dim] = n;
  const bool scalar_out = t->layout().ndim == 0 && index->layout().ndim == 0;
  TensorPtr out = empty(out_shape, scalar_out ? 0 : src.ndim, t->dtype(), t->device());
  if (out->numel() == 0) return out;
  Kernels& k = kernels_for(t->device());
  for (int64_t i = 0; i < n; ++i) {
    const Layout s = select(src, dim, idx[static_cast<size_t>(i)]);
    // A 0-d result is its one element: the 0-d layout at offset 0.
    const Layout d = scalar_out ? Layout{} : select(out->layout(), dim, i);
    k.copy(make_desc(*out, d), make_desc(*t, s));
  }
  return out;
}

}  // namespace sm
