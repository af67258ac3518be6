// Pure layout logic: view rules, contiguity per memory format, bounds,
// overlap, broadcasting. No devices, no handles, no allocation of tensor
// data: every function maps small arrays to small arrays (or throws
// sm::Error with a status and a message naming the offending values), so all
// of it is unit-tested without a device (tests/unit/test_layout.cpp).
//
// Conventions: sizes/strides/offsets in elements; dims already validated
// unless a function says it wraps them (wrap_dim). Functions that take a
// Layout by const& and return a Layout never modify their input.
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "stridemem.h"

namespace sm {

struct Layout {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t offset = 0;  // storage offset, in elements

  int64_t numel() const;  // product of sizes (no overflow check: use checked_numel)
  bool operator==(const Layout& o) const;
};

// ---- arithmetic helpers -----------------------------------------------------

// a*b and a+b with int64 overflow detection (return false on overflow).
bool mul_overflows(int64_t a, int64_t b, int64_t* out);
bool add_overflows(int64_t a, int64_t b, int64_t* out);

// Validates ndim (0..kMaxDims, else SM_ERR_INVALID_ARGUMENT), sizes (>= 0,
// else SM_ERR_SHAPE naming the dim) and returns numel; SM_ERR_OVERFLOW if the
// product, or numel * itemsize when itemsize > 0, overflows int64.
int64_t checked_numel(const int64_t* sizes, int ndim, int64_t itemsize = 0);

// Wraps a possibly negative dim into [0, ndim) (ndim 0 accepts -1 and 0 as
// PyTorch does when allow_scalar is true); SM_ERR_OUT_OF_BOUNDS otherwise,
// message names the dim and the valid range. `what` names the argument.
int wrap_dim(int64_t dim, int ndim, const char* what = "dim", bool allow_scalar = true);

// ---- dense layouts -----------------------------------------------------------

// The layout of sizes with the given strides (NULL: row-major, as
// dense_layout), offset 0. Checks nothing of its own: callers validate.
Layout strided_layout(const int64_t* sizes, const int64_t* strides, int ndim);

// Dense strides of sizes in memory format (SM_CONTIGUOUS, SM_CHANNELS_LAST
// needs ndim 4, SM_CHANNELS_LAST_3D needs ndim 5: else SM_ERR_SHAPE).
// Size-0 and size-1 dims get the strides PyTorch gives them: products of
// max(size, 1) for SM_CONTIGUOUS, plain products for the channels-last
// formats (a size-0 dim zeroes the strides outside it). SM_PRESERVE is
// SM_ERR_INVALID_ARGUMENT here.
void dense_strides(const int64_t* sizes, int ndim, sm_memory_format format, int64_t* strides);
Layout dense_layout(const int64_t* sizes, int ndim, sm_memory_format format);

// PyTorch's empty_like(preserve_format) layout for `l`, offset 0, strides
// all positive: a non-overlapping and dense `l` keeps its |strides| exactly
// (size-1 dims and empty layouts included); any other gets
// infer_dense_strides: dims sorted by |stride| (equal |strides|: the smaller
// size inside; stride-0 dims stay in place), dense strides in that order.
Layout dense_like(const Layout& l);

// PyTorch's is_contiguous(memory_format): true if every dim of size > 1 has
// the dense stride of that format (size-1 dims ignored). Numel 0 is always
// SM_CONTIGUOUS; channels-last checks an empty tensor's strides like any
// other's (size-0 dims included, as dense_strides makes them).
// SM_CHANNELS_LAST with ndim != 4 (3D: != 5) is false. SM_PRESERVE: true if
// non-overlapping and dense in some dim order.
bool is_contiguous(const Layout& l, sm_memory_format format);
// PyTorch's is_non_overlapping_and_dense, accepting negative strides (a
// flipped dense tensor is dense).
bool is_non_overlapping_and_dense(const Layout& l);

// ---- bounds -----------------------------------------------------------------

struct Extent {
  bool empty = true;   // numel == 0: touches no element
  int64_t lo = 0;      // lowest element index reached (offset + negative strides)
  int64_t hi = 0;      // highest element index reached (inclusive)
};
// Elements reached by the layout; SM_ERR_OVERFLOW if any (size-1)*stride or
// sum overflows.
Extent extent(const Layout& l);
// Checks every element reached lies in [0, storage_nbytes / itemsize), with
// offset >= 0: else SM_ERR_OUT_OF_BOUNDS naming the shape, strides, offset and
// the storage size.
void check_in_storage(const Layout& l, int64_t itemsize, int64_t storage_nbytes);
// For wrapping foreign memory given the address of element [0, ..., 0]: the
// byte offset (<= 0) of the lowest element reached and the bytes from there to
// the end of the highest one (both 0 when empty). SM_ERR_OVERFLOW past int64.
struct ByteSpan {
  int64_t lo_bytes = 0;
  int64_t nbytes = 0;
};
ByteSpan byte_span(const Layout& l, int64_t itemsize);
// Bytes a storage needs to hold every element of l (0 when empty).
int64_t required_storage_bytes(const Layout& l, int64_t itemsize);

// ---- overlap ----------------------------------------------------------------

enum class Overlap { No, Yes, TooHard };
// Past exact_limit elements, internal_overlap still answers exactly when the
// element range reached spans at most this many indices (a bitmap of span bits).
constexpr uint64_t kOverlapBitmapLimit = uint64_t(1) << 28;
// ATen's has_internal_overlap, sharpened: Yes when a dim of size > 1 has
// stride 0; No when non-overlapping and dense (or sorted-stride disjoint);
// otherwise Yes when numel exceeds the index range reached (pigeonhole), an
// exact check when numel <= exact_limit or the range is at most
// kOverlapBitmapLimit indices, else TooHard.
Overlap internal_overlap(const Layout& l, int64_t exact_limit = 1 << 16);

enum class OverlapStatus { None, Full, Partial, TooHard };
// Relation of the bytes of two views, given the byte address of element
// index 0 of each one's storage (base) and itemsizes. Full: same address,
// itemsize, sizes and strides. None: disjoint byte ranges, or exactly shown
// disjoint element sets. Partial: some byte is shared (shown exactly when both
// are dense or numel small). TooHard: could not tell cheaply.
OverlapStatus overlap_status(const Layout& a, uintptr_t base_a, int64_t itemsize_a,
                             const Layout& b, uintptr_t base_b, int64_t itemsize_b,
                             int64_t exact_limit = 1 << 16);

// ---- broadcasting -------------------------------------------------------------

// NumPy/PyTorch broadcasting of two shapes; SM_ERR_SHAPE naming both shapes.
std::vector<int64_t> broadcast_shapes(const int64_t* a, int na, const int64_t* b, int nb);
// True if `from` broadcasts to `to` (to.size() >= from.size()).
bool broadcastable_to(const int64_t* from, int nfrom, const int64_t* to, int nto);

// ---- views (PyTorch semantics; all return a new Layout with the same offset
// unless stated) -----------------------------------------------------------------

// Resolves one -1 in shape against numel; SM_ERR_SHAPE for more than one -1,
// other negatives, or a product that does not match numel.
std::vector<int64_t> infer_shape(const int64_t* shape, int ndim, int64_t numel);
// PyTorch's computeStride: strides for viewing l as shape (numel must match),
// or false when impossible; *bad_dim_lo/hi (may be NULL) receive the first
// range of l's dims that cannot be merged.
bool view_strides(const Layout& l, const int64_t* shape, int ndim, int64_t* strides_out,
                  int* bad_dim_lo = nullptr, int* bad_dim_hi = nullptr);
// view(): infer_shape + view_strides; SM_ERR_SHAPE naming the dims that
// cannot be merged and suggesting sm_reshape.
Layout view(const Layout& l, const int64_t* shape, int ndim);
Layout as_strided(const Layout& l, const int64_t* shape, const int64_t* strides, int ndim,
                  int64_t offset);  // offset >= 0 (else SM_ERR_OUT_OF_BOUNDS); no storage check
// Python slicing; start/stop may be SM_SLICE_NONE; step != 0.
Layout slice(const Layout& l, int64_t dim, int64_t start, int64_t stop, int64_t step);
Layout narrow(const Layout& l, int64_t dim, int64_t start, int64_t length);
Layout select(const Layout& l, int64_t dim, int64_t index);
Layout permute(const Layout& l, const int32_t* dims, int ndim);
Layout transpose(const Layout& l, int64_t dim0, int64_t dim1);
Layout movedim(const Layout& l, const int32_t* src, const int32_t* dst, int n);
Layout expand(const Layout& l, const int64_t* shape, int ndim);
Layout squeeze(const Layout& l, const int32_t* dims, int n);  // n == 0: all size-1 dims
Layout unsqueeze(const Layout& l, int64_t dim);
Layout flatten(const Layout& l, int64_t start_dim, int64_t end_dim);  // SM_ERR_SHAPE if no view
Layout unflatten(const Layout& l, int64_t dim, const int64_t* sizes, int n);
Layout unfold(const Layout& l, int64_t dim, int64_t size, int64_t step);
Layout diagonal(const Layout& l, int64_t offset, int64_t dim1, int64_t dim2);
Layout flip(const Layout& l, const int32_t* dims, int n);
// Start/length pairs of split / chunk along a (wrapped) dim.
// With count_only, only *count_only is written and no range is built (a count
// query must not allocate one entry per piece).
std::vector<std::pair<int64_t, int64_t>> split_ranges(const Layout& l, int64_t dim,
                                                      int64_t split_size,
                                                      int64_t* count_only = nullptr);
std::vector<std::pair<int64_t, int64_t>> chunk_ranges(const Layout& l, int64_t dim,
                                                      int64_t chunks,
                                                      int64_t* count_only = nullptr);

}  // namespace sm
