// Element-sized bit containers allowed to alias any element type: plain CPU
// copies and tile transposes move bits through these whatever the dtype
// (element semantics live in core/element_ops.hpp). Structs, because a
// may_alias typedef loses its attribute as a template argument.
#pragma once

#include <cstdint>

namespace sm {
namespace cpu {

template <int N>
struct Bits;
template <> struct __attribute__((may_alias)) Bits<1> { uint8_t v; };
template <> struct __attribute__((may_alias)) Bits<2> { uint16_t v; };
template <> struct __attribute__((may_alias)) Bits<4> { uint32_t v; };
// 8 bytes at 4-byte alignment: complex64 (two floats) only promises 4
// (dtype_alignment), and it moves through here with int64/float64.
template <> struct __attribute__((may_alias, packed, aligned(4))) Bits<8> { uint64_t v; };
// complex128: two 8-byte words (the element is 8-byte aligned, not 16).
template <> struct __attribute__((may_alias)) Bits<16> { uint64_t lo, hi; };

}  // namespace cpu
}  // namespace sm
