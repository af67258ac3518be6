// The calls that copy data: copy_into, contiguous/clone, to, reshape (when it
// must); and the rules every write follows (writability, the
// overlap policy). Device pairs, broadcasting, dtype conversion and overlap
// are decided here; the element loops live in the backends.
#include <vector>

#include "backend/op_plan.hpp"
#include "core/error.hpp"
#include "engine/ops.hpp"
#include "layout/contiguity.hpp"
#include "layout/overlap.hpp"
#include "layout/shape_inference.hpp"
#include "layout/view_ops.hpp"

namespace sm {

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
  return r;
}

namespace {

// The internal copy: no writability check, no version bump.
void copy_raw(const TensorPtr& dst, const TensorPtr& src) {
  const ReadSource s = read_source(*dst, src, "the source");
  Kernels& k = kernels_for(dst->device());
  k.run(plan_copy(dst->desc(), s.desc, k.target()));
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

}  // namespace sm
