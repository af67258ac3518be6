// The calls that copy data: copy_into, contiguous/clone, to, reshape (when it
// must), index_select; and the rules every write follows (writability, the
// overlap policy). Device pairs, broadcasting, dtype conversion and overlap
// are decided here; the element loops live in the backends.
#include <vector>

#include "core/error.hpp"
#include "engine/ops.hpp"
#include "layout/contiguity.hpp"
#include "layout/overlap.hpp"
#include "layout/shape_inference.hpp"
#include "layout/view_ops.hpp"

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

namespace {

// A 0-d operand of index_select seen as a one-element vector (PyTorch).
Layout as_vector(Layout l) {
  if (l.ndim == 0) {
    l.ndim = 1;
    l.sizes[0] = 1;
    l.strides[0] = 1;
  }
  return l;
}

// index[pos] for the message of a refusal: one element read through a
// one-element view, wherever the index lives.
int64_t index_value(const TensorPtr& index, const Layout& l, int64_t pos) {
  const TensorPtr e = derive_view(index, select(l, 0, pos));
  if (index->dtype() == DType::I64) {
    int64_t v = 0;
    copy_to_host(e, &v, sizeof v);
    return v;
  }
  int32_t v = 0;
  copy_to_host(e, &v, sizeof v);
  return v;
}

// The index as an operand of `device`'s kernels: itself when its memory is
// there; else its distinct elements moved over (one element for an expanded
// index, expanded again there), so the move never costs the logical length.
struct IndexOperand {
  TensorPtr keep;  // holds the memory desc points into
  TensorDesc desc;
};
IndexOperand index_operand(const TensorPtr& index, const Layout& l, Device device) {
  if (same_kernel_domain(index->device(), device)) return {index, make_desc(*index, l)};
  Layout distinct = l;
  distinct.sizes[0] = index_scan_length(make_desc(*index, l));
  const TensorPtr moved = stage_to(derive_view(index, distinct), device);
  Layout ml = moved->layout();  // row-major: stride 1
  if (distinct.sizes[0] < l.sizes[0]) {
    ml.sizes[0] = l.sizes[0];
    ml.strides[0] = 0;
  }
  return {moved, make_desc(*moved, ml)};
}

}  // namespace

TensorPtr index_select(const TensorPtr& t, int64_t dim_arg, const TensorPtr& index) {
  if (index->dtype() != DType::I32 && index->dtype() != DType::I64)
    fail(SM_ERR_DTYPE, "index must be int32 or int64 (got %s)", dtype_name(index->dtype()));
  if (index->layout().ndim > 1)
    fail(SM_ERR_SHAPE, "index must be 0-d or 1-d (got %d dims)", index->layout().ndim);
  // A 0-d tensor indexes like a 1-element vector (PyTorch).
  const Layout src = as_vector(t->layout());
  const int dim = wrap_dim(dim_arg, src.ndim);
  const Layout il = as_vector(index->layout());
  const int64_t n = il.sizes[0];
  const int64_t size = src.sizes[dim];
  // A 0-d tensor has one element to pick: PyTorch 2 refuses other counts
  // (1.13 corrupts its heap on them) and gives a 0-d result.
  const bool scalar_out = t->layout().ndim == 0;
  if (scalar_out && n != 1)
    fail(SM_ERR_SHAPE,
         "t is 0-d, so index must hold exactly one value (got %lld); unsqueeze t to a 1-element "
         "vector (sm_unsqueeze) to repeat its element",
         (long long)n);
  // Checked where the index lives, through its stride, before anything is
  // allocated or written (also when the result will be empty). The index is
  // never copied: an expanded one is checked through its one element.
  const int64_t bad = kernels_for(index->device()).first_out_of_range(make_desc(*index, il), size);
  if (bad >= 0)
    fail(SM_ERR_OUT_OF_BOUNDS, "index[%lld] = %lld is out of range for dim %d of size %lld",
         (long long)bad, (long long)index_value(index, il, bad), dim, (long long)size);
  int64_t out_shape[kMaxDims];
  for (int i = 0; i < src.ndim; ++i) out_shape[i] = src.sizes[i];
  out_shape[dim] = n;
  // The only allocation (besides moving the index between devices).
  TensorPtr out = empty(out_shape, scalar_out ? 0 : src.ndim, t->dtype(), t->device());
  if (out->numel() == 0) return out;
  const IndexOperand idx = index_operand(index, il, t->device());
  // A 0-d result is its one element: a one-element vector for the kernel.
  kernels_for(t->device())
      .index_select(make_desc(*out, as_vector(out->layout())), make_desc(*t, src), dim, idx.desc);
  return out;
}

}  // namespace sm
