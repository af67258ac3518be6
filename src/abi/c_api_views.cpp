// C entry points for views: argument checks, the handle, one engine view
// (engine/views.hpp), the new handle.
#include <climits>
#include <vector>

#include "abi/abi.hpp"

using namespace sm;
using namespace sm::abi;

namespace {

// The common shape of a view entry point: look t up, make the view, publish it.
template <typename F>
sm_status view_entry(const char* fn, sm_tensor t, sm_tensor* out, F&& make_view) {
  return guard(fn, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(out, "out");
    *out = publish(make_view(x));
  });
}

// Publishes the pieces of split / chunk; on failure releases the ones already
// published, so nothing leaks and nothing is written.
template <typename Pieces>
sm_status views_out(const char* fn, sm_tensor t, sm_tensor* outs, int32_t capacity, int32_t* count,
                    Pieces&& pieces) {
  return guard(fn, [&] {
    TensorPtr x = tensor_arg(t, "t");
    require_out(count, "count");
    int64_t n = 0;
    const std::vector<TensorPtr> views = pieces(x, outs ? capacity : 0, &n);
    if (n > INT32_MAX)
      fail(SM_ERR_OVERFLOW, "%lld views do not fit an int32 count", static_cast<long long>(n));
    if (!outs) {
      *count = static_cast<int32_t>(n);
      return;
    }
    if (capacity < n)
      fail(SM_ERR_INVALID_ARGUMENT, "capacity %d is smaller than the %lld views produced", capacity,
           static_cast<long long>(n));
    std::vector<sm_tensor> handles;
    handles.reserve(views.size());  // push_back below cannot throw after a publish
    try {
      for (const TensorPtr& v : views) handles.push_back(publish(v));
    } catch (...) {
      for (sm_tensor h : handles) tensors().release(h, "view");
      throw;
    }
    for (size_t i = 0; i < handles.size(); ++i) outs[i] = handles[i];
    *count = static_cast<int32_t>(n);
  });
}

}  // namespace

extern "C" {

SM_API sm_status sm_view(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    return view(x, shape, ndim_arg(ndim, shape, "shape"));
  });
}

SM_API sm_status sm_as_strided(sm_tensor t, const int64_t* shape, const int64_t* strides,
                               int32_t ndim, int64_t storage_offset, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    const int n = ndim_arg(ndim, shape, "shape");
    ndim_arg(ndim, strides, "strides");
    return as_strided(x, shape, strides, n, storage_offset);
  });
}

SM_API sm_status sm_slice(sm_tensor t, int32_t dim, int64_t start, int64_t stop, int64_t step,
                          sm_tensor* out) {
  return view_entry(__func__, t, out,
                    [&](const TensorPtr& x) { return slice(x, dim, start, stop, step); });
}

SM_API sm_status sm_narrow(sm_tensor t, int32_t dim, int64_t start, int64_t length, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) { return narrow(x, dim, start, length); });
}

SM_API sm_status sm_select(sm_tensor t, int32_t dim, int64_t index, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) { return select(x, dim, index); });
}

SM_API sm_status sm_permute(sm_tensor t, const int32_t* dims, int32_t ndim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    return permute(x, dims, ndim_arg(ndim, dims, "dims"));
  });
}

SM_API sm_status sm_transpose(sm_tensor t, int32_t dim0, int32_t dim1, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) { return transpose(x, dim0, dim1); });
}

SM_API sm_status sm_movedim(sm_tensor t, const int32_t* source, const int32_t* destination,
                            int32_t n, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    const int k = ndim_arg(n, source, "source");
    ndim_arg(n, destination, "destination");
    return movedim(x, source, destination, k);
  });
}

SM_API sm_status sm_expand(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    return expand(x, shape, ndim_arg(ndim, shape, "shape"));
  });
}

SM_API sm_status sm_squeeze(sm_tensor t, const int32_t* dims, int32_t n, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    return squeeze(x, dims, ndim_arg(n, dims, "dims"));
  });
}

SM_API sm_status sm_unsqueeze(sm_tensor t, int32_t dim, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) { return unsqueeze(x, dim); });
}

SM_API sm_status sm_flatten(sm_tensor t, int32_t start_dim, int32_t end_dim, sm_tensor* out) {
  return view_entry(__func__, t, out,
                    [&](const TensorPtr& x) { return flatten(x, start_dim, end_dim); });
}

SM_API sm_status sm_unflatten(sm_tensor t, int32_t dim, const int64_t* sizes, int32_t n,
                              sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    return unflatten(x, dim, sizes, ndim_arg(n, sizes, "sizes"));
  });
}

SM_API sm_status sm_unfold(sm_tensor t, int32_t dim, int64_t size, int64_t step, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) { return unfold(x, dim, size, step); });
}

SM_API sm_status sm_diagonal(sm_tensor t, int64_t offset, int32_t dim1, int32_t dim2, sm_tensor* out) {
  return view_entry(__func__, t, out,
                    [&](const TensorPtr& x) { return diagonal(x, offset, dim1, dim2); });
}

SM_API sm_status sm_flip(sm_tensor t, const int32_t* dims, int32_t n, sm_tensor* out) {
  return view_entry(__func__, t, out, [&](const TensorPtr& x) {
    return flip(x, dims, ndim_arg(n, dims, "dims"));
  });
}

SM_API sm_status sm_split(sm_tensor t, int64_t split_size, int32_t dim, sm_tensor* outs,
                          int32_t capacity, int32_t* count) {
  return views_out(__func__, t, outs, capacity, count,
                   [&](const TensorPtr& x, int64_t max_views, int64_t* n) {
                     return split(x, split_size, dim, max_views, n);
                   });
}

SM_API sm_status sm_chunk(sm_tensor t, int32_t chunks, int32_t dim, sm_tensor* outs,
                          int32_t capacity, int32_t* count) {
  return views_out(__func__, t, outs, capacity, count,
                   [&](const TensorPtr& x, int64_t max_views, int64_t* n) {
                     return chunk(x, chunks, dim, max_views, n);
                   });
}

}  // extern "C"
