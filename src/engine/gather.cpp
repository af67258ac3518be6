// index_select: the index's checks (dtype, shape, every element in range,
// where it lives), the result's shape (PyTorch's, 0-d inputs included), and
// the gather on the source's device.
#include "backend/op_plan.hpp"
#include "core/error.hpp"
#include "engine/ops.hpp"
#include "layout/view_ops.hpp"

namespace sm {

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
  if (out->numel() == 0) return out;  // no index to move over
  const IndexOperand idx = index_operand(index, il, t->device());
  // A 0-d result is its one element: a one-element vector for the kernel.
  Kernels& k = kernels_for(t->device());
  k.run(plan_gather(make_desc(*out, as_vector(out->layout())), make_desc(*t, src), dim, idx.desc,
                    k.target()));
  return out;
}

}  // namespace sm
