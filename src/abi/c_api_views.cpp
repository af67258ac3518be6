// C entry points for views: a pure layout function + derive_view.
#include <vector>

#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

namespace {

// The common shape of a view entry point: look t up, compute the new layout,
// publish the view.
template <typename F>
sm_status view_entry(const char* fn, sm_tensor t, sm_tensor* out, F&& make_layout) {
  return guard(fn, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    const Layout l = make_layout(x->layout());
    *out = publish(derive_view(x, l));
  });
}

// Publishes a list of views; on failure releases the ones already published
// so nothing leaks and nothing is written.
sm_status views_out(const char* fn, sm_tensor t, sm_tensor* outs, int32_t capacity, int32_t* count,
                    int64_t dim, bool chunk, int64_t arg) {
  return guard(fn, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(count, "count");
    const int d = wrap_dim(dim, x->layout().ndim, "dim", false);
    // Count first (no allocation per piece), check the capacity, then build.
    int64_t n64 = 0;
    if (chunk) chunk_ranges(x->layout(), d, arg, &n64); else split_ranges(x->layout(), d, arg, &n64);
    const int32_t n = static_cast<int32_t>(n64);
    if (!outs) {
      *count = n;
      return;
    }
    if (capacity < n)
      fail(SM_ERR_INVALID_ARGUMENT, "capacity %d is smaller than the %d views produced", capacity, n);
    const auto ranges = chunk ? chunk_ranges(x->layout(), d, arg) : split_ranges(x->layout(), d, arg);
    std::vector<TensorPtr> views;
    for (const auto& r : ranges) views.push_back(derive_view(x, narrow(x->layout(), d, r.first, r.second)));
    std::vector<sm_tensor> handles;
    handles.reserve(views.size());  // push_back below cannot throw after a publish
    try {
      for (auto& v : views) handles.push_back(publish(v));
    } catch (...) {
      for (sm_tensor h : handles) tensors().release(h, "view");
      throw;
    }
    for (int32_t i = 0; i < n; ++i) outs[i] = handles[static_cast<size_t>(i)];
    *count = n;
  });
}

}  // namespace

extern "C" {

SM_API sm_status sm_view(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    return view(l, shape, ndim_arg(ndim, shape, "shape"));
  });
}

SM_API sm_status sm_as_strided(sm_tensor t, const int64_t* shape, const int64_t* strides,
                               int32_t ndim, int64_t storage_offset, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    const int n = ndim_arg(ndim, shape, "shape");
    ndim_arg(ndim, strides, "strides");
    return as_strided(l, shape, strides, n, storage_offset);
  });
}

SM_API sm_status sm_slice(sm_tensor t, int32_t dim, int64_t start, int64_t stop, int64_t step,
                          sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return slice(l, dim, start, stop, step); });
}

SM_API sm_status sm_narrow(sm_tensor t, int32_t dim, int64_t start, int64_t length, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return narrow(l, dim, start, length); });
}

SM_API sm_status sm_select(sm_tensor t, int32_t dim, int64_t index, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return select(l, dim, index); });
}

SM_API sm_status sm_permute(sm_tensor t, const int32_t* dims, int32_t ndim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    return permute(l, dims, ndim_arg(ndim, dims, "dims"));
  });
}

SM_API sm_status sm_transpose(sm_tensor t, int32_t dim0, int32_t dim1, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return transpose(l, dim0, dim1); });
}

SM_API sm_status sm_movedim(sm_tensor t, const int32_t* source, const int32_t* destination,
                            int32_t n, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    const int k = ndim_arg(n, source, "source");
    ndim_arg(n, destination, "destination");
    return movedim(l, source, destination, k);
  });
}

SM_API sm_status sm_expand(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    return expand(l, shape, ndim_arg(ndim, shape, "shape"));
  });
}

SM_API sm_status sm_squeeze(sm_tensor t, const int32_t* dims, int32_t n, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    return squeeze(l, dims, ndim_arg(n, dims, "dims"));
  });
}

SM_API sm_status sm_unsqueeze(sm_tensor t, int32_t dim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return unsqueeze(l, dim); });
}

SM_API sm_status sm_flatten(sm_tensor t, int32_t start_dim, int32_t end_dim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return flatten(l, start_dim, end_dim); });
}

SM_API sm_status sm_unflatten(sm_tensor t, int32_t dim, const int64_t* sizes, int32_t n,
                              sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    return unflatten(l, dim, sizes, ndim_arg(n, sizes, "sizes"));
  });
}

SM_API sm_status sm_unfold(sm_tensor t, int32_t dim, int64_t size, int64_t step, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return unfold(l, dim, size, step); });
}

SM_API sm_status sm_diagonal(sm_tensor t, int64_t offset, int32_t dim1, int32_t dim2, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) { return diagonal(l, offset, dim1, dim2); });
}

SM_API sm_status sm_flip(sm_tensor t, const int32_t* dims, int32_t n, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const Layout& l) {
    return flip(l, dims, ndim_arg(n, dims, "dims"));
  });
}

SM_API sm_status sm_split(sm_tensor t, int64_t split_size, int32_t dim, sm_tensor* outs,
                          int32_t capacity, int32_t* count) {
  return views_out(__func__, t, outs, capacity, count, dim, false, split_size);
}

SM_API sm_status sm_chunk(sm_tensor t, int32_t chunks, int32_t dim, sm_tensor* outs,
                          int32_t capacity, int32_t* count) {
  return views_out(__func__, t, outs, capacity, count, dim, true, chunks);
}

}  // extern "C"
