# Element types <-> sm_dtype codes.

"""
    SMElType

The Julia element types a `StridedTensor` can hold, one per C dtype:
`Bool` (SM_BOOL), `UInt8`, `Int8`, `Int16`, `Int32`, `Int64`, `Float16`,
`BFloat16`, `Float32`, `Float64`, `UInt16`, `UInt32`, `UInt64`, `ComplexF32`
(SM_COMPLEX64) and `ComplexF64` (SM_COMPLEX128). Julia's complex numbers
have the library's element layout: the real part, then the imaginary part,
aligned as one component.
"""
const SMElType = Union{Bool,UInt8,Int8,Int16,Int32,Int64,Float16,BFloat16,Float32,Float64,
                       UInt16,UInt32,UInt64,ComplexF32,ComplexF64}

dtype_code(::Type{Bool}) = SM_BOOL
dtype_code(::Type{UInt8}) = SM_UINT8
dtype_code(::Type{Int8}) = SM_INT8
dtype_code(::Type{Int16}) = SM_INT16
dtype_code(::Type{Int32}) = SM_INT32
dtype_code(::Type{Int64}) = SM_INT64
dtype_code(::Type{Float16}) = SM_FLOAT16
dtype_code(::Type{BFloat16}) = SM_BFLOAT16
dtype_code(::Type{Float32}) = SM_FLOAT32
dtype_code(::Type{Float64}) = SM_FLOAT64
dtype_code(::Type{UInt16}) = SM_UINT16
dtype_code(::Type{UInt32}) = SM_UINT32
dtype_code(::Type{UInt64}) = SM_UINT64
dtype_code(::Type{ComplexF32}) = SM_COMPLEX64
dtype_code(::Type{ComplexF64}) = SM_COMPLEX128
dtype_code(::Type{T}) where {T} =
    _argument_error("$(T) is not a stridemem element type (one of $(SMElType))")

# Indexed by code + 1: the order of the C enum.
const _JULIA_TYPES = (Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64,
                      UInt16, UInt32, UInt64, ComplexF32, ComplexF64)

"""
    julia_type(code) -> Type

The Julia element type of an `sm_dtype` code.
"""
function julia_type(code::Integer)
    0 <= code < length(_JULIA_TYPES) && return _JULIA_TYPES[code+1]
    throw(StrideMemError(SM_ERR_DTYPE, "dtype code $(code) has no Julia element type " *
                                       "(library dtype name: $(dtype_name(code)))"))
end

"""
    dtype_name(code) -> String

The library's short name of a dtype code ("float32", "bfloat16", ...).
"""
dtype_name(code::Integer) = _cstring(sm_dtype_name(Int32(code)))
dtype_name(::Type{T}) where {T} = dtype_name(dtype_code(T))
