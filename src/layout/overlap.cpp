// Overlap inside one layout and between two views (see overlap.hpp).
#include "layout/overlap.hpp"

#include <algorithm>
#include <vector>

#include "layout/bounds.hpp"
#include "layout/contiguity.hpp"
#include "layout/layout_internal.hpp"

namespace sm {

using namespace layout_internal;

namespace {

// Element indices of a small layout, row-major order.
std::vector<int64_t> element_indices(const Layout& l) {
  std::vector<int64_t> out;
  if (has_zero_size(l)) return out;
  out.reserve(static_cast<size_t>(l.numel()));
  int64_t idx[kMaxDims] = {};
  int64_t cur = l.offset;
  for (;;) {
    out.push_back(cur);
    int d = l.ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < l.sizes[d]) {
        cur += l.strides[d];
        break;
      }
      cur -= (l.sizes[d] - 1) * l.strides[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

}  // namespace

Overlap internal_overlap(const Layout& l, int64_t exact_limit) {
  if (has_zero_size(l)) return Overlap::No;
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] > 1 && l.strides[i] == 0) return Overlap::Yes;
  if (is_non_overlapping_and_dense(l)) return Overlap::No;
  // Mixed-radix test: sorted by |stride|, each stride beyond the reach of all
  // smaller ones means every element index is distinct.
  int order[kMaxDims];
  int n = 0;
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] > 1) order[n++] = i;
  std::sort(order, order + n,
            [&](int a, int b) { return uabs(l.strides[a]) < uabs(l.strides[b]); });
  // reach saturates at UINT64_MAX: no later stride can then exceed it, which
  // only sends us on to the exact check.
  bool disjoint = true;
  uint64_t reach = 0;  // sum of (size-1)*|stride| of the smaller dims
  for (int k = 0; k < n; ++k) {
    uint64_t s = uabs(l.strides[order[k]]), span;
    if (s <= reach) {
      disjoint = false;
      break;
    }
    if (__builtin_mul_overflow(static_cast<uint64_t>(l.sizes[order[k]] - 1), s, &span) ||
        __builtin_add_overflow(reach, span, &reach))
      reach = UINT64_MAX;
  }
  if (disjoint) return Overlap::No;
  int64_t numel = l.numel();  // no overflow: sizes are valid and numel <= extent
  const Extent e = extent(l);
  const uint64_t span = static_cast<uint64_t>(e.hi) - static_cast<uint64_t>(e.lo) + 1;
  if (static_cast<uint64_t>(numel) > span) return Overlap::Yes;  // pigeonhole
  if (numel > exact_limit && span <= kOverlapBitmapLimit) {
    // Exact at any numel when the reached range is modest: one bit per
    // element index, walked in odometer order (no index division).
    std::vector<uint64_t> seen((span + 63) / 64, 0);
    int64_t counter[kMaxDims] = {};
    int64_t index = l.offset - e.lo;
    for (int64_t k = 0; k < numel; ++k) {
      const uint64_t bit = static_cast<uint64_t>(index);
      uint64_t& word = seen[bit / 64];
      const uint64_t mask = uint64_t(1) << (bit % 64);
      if (word & mask) return Overlap::Yes;
      word |= mask;
      for (int d = l.ndim - 1; d >= 0; --d) {
        if (++counter[d] < l.sizes[d]) {
          index += l.strides[d];
          break;
        }
        index -= (l.sizes[d] - 1) * l.strides[d];
        counter[d] = 0;
      }
    }
    return Overlap::No;
  }
  if (numel <= exact_limit) {
    std::vector<int64_t> idx = element_indices(l);
    std::sort(idx.begin(), idx.end());
    return std::adjacent_find(idx.begin(), idx.end()) != idx.end() ? Overlap::Yes : Overlap::No;
  }
  return Overlap::TooHard;
}

namespace {

// Ignoring size<=1 dims' strides: they never change an address.
bool same_walk(const Layout& a, const Layout& b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.sizes[i] != b.sizes[i]) return false;
    if (a.sizes[i] > 1 && a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

uint64_t gcd_u(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

}  // namespace

OverlapStatus overlap_status(const Layout& a, uintptr_t base_a, int64_t itemsize_a,
                             const Layout& b, uintptr_t base_b, int64_t itemsize_b,
                             int64_t exact_limit) {
  Extent ea = extent(a), eb = extent(b);
  if (ea.empty || eb.empty) return OverlapStatus::None;
  int64_t a_lo, a_hi, b_lo, b_hi, a_first, b_first;
  // Byte offsets relative to each base; an overflow here means the views are
  // not real memory: answer cautiously.
  if (mul_overflows(ea.lo, itemsize_a, &a_lo) || mul_overflows(ea.hi, itemsize_a, &a_hi) ||
      mul_overflows(eb.lo, itemsize_b, &b_lo) || mul_overflows(eb.hi, itemsize_b, &b_hi) ||
      mul_overflows(a.offset, itemsize_a, &a_first) ||
      mul_overflows(b.offset, itemsize_b, &b_first))
    return OverlapStatus::TooHard;
  // Addresses as unsigned (wrapping) sums: real memory never wraps.
  const uintptr_t a0 = base_a + static_cast<uintptr_t>(a_first);
  const uintptr_t b0 = base_b + static_cast<uintptr_t>(b_first);
  if (a0 == b0 && itemsize_a == itemsize_b && same_walk(a, b)) return OverlapStatus::Full;

  const uintptr_t a_begin = base_a + static_cast<uintptr_t>(a_lo);
  const uintptr_t a_end = base_a + static_cast<uintptr_t>(a_hi) + static_cast<uintptr_t>(itemsize_a);
  const uintptr_t b_begin = base_b + static_cast<uintptr_t>(b_lo);
  const uintptr_t b_end = base_b + static_cast<uintptr_t>(b_hi) + static_cast<uintptr_t>(itemsize_b);
  if (a_end <= b_begin || b_end <= a_begin) return OverlapStatus::None;

  // Both dense: each covers its whole byte range, so the ranges' intersection
  // is shared.
  const bool dense_a = is_non_overlapping_and_dense(a), dense_b = is_non_overlapping_and_dense(b);
  if (dense_a && dense_b) return OverlapStatus::Partial;
  // One dense: the other's lowest and highest elements are really touched, so
  // either one landing inside the dense range shares a byte.
  auto inside = [](uintptr_t p, uintptr_t begin, uintptr_t end) { return p >= begin && p < end; };
  if (dense_a && (inside(b_begin, a_begin, a_end) || inside(b_end - 1, a_begin, a_end)))
    return OverlapStatus::Partial;
  if (dense_b && (inside(a_begin, b_begin, b_end) || inside(a_end - 1, b_begin, b_end)))
    return OverlapStatus::Partial;

  // Residue test: every byte address of a view is (first address + a multiple
  // of g) + [0, itemsize), with g the gcd of all byte strides; if the two
  // residue windows mod g are disjoint, no byte is shared (a[::2] vs a[1::2]).
  uint64_t g = 0;
  for (int i = 0; i < a.ndim; ++i)
    if (a.sizes[i] > 1) g = gcd_u(g, uabs(a.strides[i]) * static_cast<uint64_t>(itemsize_a));
  for (int i = 0; i < b.ndim; ++i)
    if (b.sizes[i] > 1) g = gcd_u(g, uabs(b.strides[i]) * static_cast<uint64_t>(itemsize_b));
  if (g > 0 && static_cast<uint64_t>(itemsize_a) + static_cast<uint64_t>(itemsize_b) <= g) {
    uint64_t ra = a0 % g, rb = b0 % g;
    uint64_t d_ab = (rb + g - ra) % g;  // b's window start, seen from a's
    uint64_t d_ba = (ra + g - rb) % g;
    if (d_ab >= static_cast<uint64_t>(itemsize_a) && d_ba >= static_cast<uint64_t>(itemsize_b))
      return OverlapStatus::None;
  }

  int64_t na = a.numel(), nb = b.numel();
  if (na <= exact_limit && nb <= exact_limit && na + nb <= exact_limit) {
    std::vector<int64_t> ia = element_indices(a), ib = element_indices(b);
    std::vector<uintptr_t> sa(ia.size()), sb(ib.size());
    for (size_t i = 0; i < ia.size(); ++i)
      sa[i] = base_a + static_cast<uintptr_t>(ia[i] * itemsize_a);
    for (size_t i = 0; i < ib.size(); ++i)
      sb[i] = base_b + static_cast<uintptr_t>(ib[i] * itemsize_b);
    std::sort(sa.begin(), sa.end());
    // For each b interval [s, s+isb): the a interval with the largest start
    // below s+isb has the largest end (all a intervals are equally long).
    for (uintptr_t s : sb) {
      auto it = std::lower_bound(sa.begin(), sa.end(), s + static_cast<uintptr_t>(itemsize_b));
      if (it == sa.begin()) continue;
      --it;
      if (*it + static_cast<uintptr_t>(itemsize_a) > s) return OverlapStatus::Partial;
    }
    return OverlapStatus::None;
  }
  return OverlapStatus::TooHard;
}

}  // namespace sm
