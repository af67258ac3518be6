// The row kernel of an op, looked up in the op table (core/element_ops.hpp)
// once for every CPU op family, so that a new row in the table reaches every
// family through this one switch.
#pragma once

#include "backend/cpu/cpu_loops.hpp"
#include "core/element_ops.hpp"
#include "stridemem.h"

namespace sm {
namespace cpu {

// Family::row<OP, kScalarForm, kTensorForm>() is the family's row kernel for
// OP given the op's forms in the table, or nullptr where the family has none.
template <typename Family>
RowFn pick_op_row(sm_op op) {
  switch (op) {
#define SM_ROW_CASE(NAME, S, T, I, B, W, A, C) \
  case SM_OP_##NAME: return Family::template row<SM_OP_##NAME, S != 0, T != 0>();
    SM_ELEMENT_OPS(SM_ROW_CASE)
#undef SM_ROW_CASE
    default: return nullptr;
  }
}

}  // namespace cpu
}  // namespace sm
