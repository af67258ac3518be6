// index_select on the CPU: the index is read in place, through its stride
// (never copied), validated by scanning only its distinct elements, and the
// gather copies one slice per index with the CPU copy kernel.
#include <cstring>

#include "backend/cpu/cpu_kernels_impl.hpp"

namespace sm {
namespace cpu {

namespace {

template <typename I>
const I* index_at(const TensorDesc& index, int64_t i) {
  return static_cast<const I*>(index.data) + i * index.strides[0];
}

template <typename I>
int64_t first_bad(const TensorDesc& index, int64_t n, int64_t size) {
  for (int64_t i = 0; i < n; ++i)
    if (!index_in_range(*index_at<I>(index, i), size)) return i;
  return -1;
}

int64_t load_index(const TensorDesc& index, int64_t i) {
  return index.dtype == DType::I64 ? *index_at<int64_t>(index, i) : *index_at<int32_t>(index, i);
}

// d without dim `dim`: the slice at position 0 along it.
TensorDesc drop_dim(const TensorDesc& d, int dim) {
  TensorDesc s = d;
  s.ndim = d.ndim - 1;
  for (int k = dim; k < s.ndim; ++k) {
    s.sizes[k] = d.sizes[k + 1];
    s.strides[k] = d.strides[k + 1];
  }
  return s;
}

}  // namespace

int64_t first_out_of_range(const TensorDesc& index, int64_t size) {
  const int64_t n = index_scan_length(index);
  return index.dtype == DType::I64 ? first_bad<int64_t>(index, n, size)
                                   : first_bad<int32_t>(index, n, size);
}

void index_select(const TensorDesc& dst, const TensorDesc& src, int dim, const TensorDesc& index) {
  if (dst.numel() == 0) return;
  const int64_t n = index.sizes[0], size = src.sizes[dim];
  const int64_t es = static_cast<int64_t>(dtype_size(dst.dtype));
  TensorDesc d = drop_dim(dst, dim), s = drop_dim(src, dim);
  char* const d0 = static_cast<char*>(dst.data);
  const char* const s0 = static_cast<const char*>(src.data);
  // Slices of one element (1-d operands, the common case) are moved as
  // bytes: planning a copy per element would cost far more than the element.
  const bool single = d.numel() == 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = wrap_index(load_index(index, i), size);
    char* dp = d0 + i * dst.strides[dim] * es;
    const char* sp = s0 + v * src.strides[dim] * es;
    if (single) {
      std::memcpy(dp, sp, static_cast<size_t>(es));
    } else {
      d.data = dp;
      s.data = const_cast<char*>(sp);
      copy(d, s);
    }
  }
}

}  // namespace cpu
}  // namespace sm
