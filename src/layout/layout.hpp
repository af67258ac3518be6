// The Layout record (sizes, strides, offset in elements) and the arithmetic
// every layout rule builds on: overflow-checked int64 products and sums,
// checked numel, dim wrapping. The rules themselves live beside it:
// contiguity.hpp (dense strides, memory formats), bounds.hpp (elements
// reached, storage fit), overlap.hpp, shape_inference.hpp (broadcasting, -1
// inference) and view_ops.hpp (view, slice, permute, ...). All of them are
// pure: small arrays in, small arrays out (or sm::Error with a status and a
// message naming the offending values), unit-tested without a device
// (tests/unit/test_layout.cpp).
//
// Conventions: sizes/strides/offsets in elements; dims already validated
// unless a function says it wraps them (wrap_dim). Functions that take a
// Layout by const& and return a Layout never modify their input.
#pragma once

#include <cstdint>

#include "core/limits.hpp"

namespace sm {

struct Layout {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t offset = 0;  // storage offset, in elements

  int64_t numel() const;  // product of sizes (no overflow check: use checked_numel)
  bool operator==(const Layout& o) const;
};

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

}  // namespace sm
