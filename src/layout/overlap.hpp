// Whether a layout writes an element twice (internal_overlap) and how the
// bytes of two views relate (overlap_status), in the spirit of ATen's
// MemoryOverlap with negative strides.
#pragma once

#include <cstdint>

#include "layout/layout.hpp"

namespace sm {

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

}  // namespace sm
