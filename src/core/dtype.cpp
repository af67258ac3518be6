#include "core/dtype.hpp"

namespace sm {

size_t dtype_size(DType d) {
  switch (d) {
    case DType::Bool:
    case DType::U8:
    case DType::I8: return 1;
    case DType::I16:
    case DType::U16:
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I32:
    case DType::U32:
    case DType::F32: return 4;
    case DType::I64:
    case DType::U64:
    case DType::C64:
    case DType::F64: return 8;
    case DType::C128: return 16;
  }
  return 0;
}

size_t dtype_alignment(DType d) {
  if (d == DType::C64) return 4;
  if (d == DType::C128) return 8;
  return dtype_size(d);
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::U8: return "uint8";
    case DType::I8: return "int8";
    case DType::I16: return "int16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::U16: return "uint16";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
    case DType::C64: return "complex64";
    case DType::C128: return "complex128";
  }
  return "unknown";
}

}  // namespace sm
