# Creation: new storages (empty, zeros, fill, arange), copies of Julia arrays,
# and zero-copy wraps of Julia arrays.

_new_tensor_of(::Type{T}, ::Val{N}, out::Ref{sm_tensor}) where {T,N} =
    _tensor(out[], nothing)::StridedTensor{T,N}

"""
    StridedTensor{T}(undef, dims...; device = cpu(), strides = nothing)

An uninitialized tensor of Julia size `dims`. Without `strides` it is laid
out like a Julia `Array` (column-major in Julia terms, which is the C
library's row-major). With `strides` (Julia order, in elements, negative
allowed) the storage holds exactly the elements those strides reach
(`sm_empty_strided`).
"""
function StridedTensor{T}(::UndefInitializer, dims::Dims{N}; device::SMDevice = cpu(),
                          strides = nothing) where {T,N}
    shape = _cshape(dims)
    code = dtype_code(T)
    out = Ref{sm_tensor}(C_NULL)
    if strides === nothing
        check(sm_empty(shape, Int32(N), code, device, out))
    else
        length(strides) == N || _argument_error("$(length(strides)) strides for $(N) dims")
        check(sm_empty_strided(shape, _cshape(strides), Int32(N), code, device, out))
    end
    return _new_tensor_of(T, Val(N), out)
end
StridedTensor{T}(::UndefInitializer, dims::Integer...; kw...) where {T} =
    StridedTensor{T}(undef, map(Int, dims); kw...)
StridedTensor{T,N}(::UndefInitializer, dims::Dims{N}; kw...) where {T,N} =
    StridedTensor{T}(undef, dims; kw...)
StridedTensor{T,N}(::UndefInitializer, dims::Vararg{Integer,N}; kw...) where {T,N} =
    StridedTensor{T}(undef, map(Int, dims); kw...)

"""
    StrideMem.zeros(T, dims...; device = cpu())

A tensor of zeros (`sm_zeros`). Qualify it: it is not exported, so that
`zeros` stays Base's.
"""
function zeros(::Type{T}, dims::Dims{N}; device::SMDevice = cpu()) where {T,N}
    out = Ref{sm_tensor}(C_NULL)
    check(sm_zeros(_cshape(dims), Int32(N), dtype_code(T), device, out))
    return _new_tensor_of(T, Val(N), out)
end
zeros(::Type{T}, dims::Integer...; kw...) where {T} = zeros(T, map(Int, dims); kw...)
zeros(dims::Integer...; kw...) = zeros(Float64, map(Int, dims); kw...)

# Scalars cross the C API as double: refuse a value that would change. A
# complex value is a double only when its imaginary part is 0; the in-place
# ops send other complex values to a complex tensor as a 0-d tensor instead.
function _scalar(x::Real)
    d = Float64(x)
    (isnan(d) || d == x) ||
        _argument_error("$(x) cannot be passed exactly as a double (the C API's scalar type)")
    return d
end
function _scalar(x::Complex)
    iszero(imag(x)) ||
        _argument_error("$(x) is not real: the C API's scalars are doubles (a complex " *
                        "value goes to a complex tensor only)")
    return _scalar(real(x))
end
_scalar(::Nothing) = NaN

"""
    StrideMem.fill(x, dims...; device = cpu())

A tensor of `typeof(x)` with every element `x` (`sm_full`). For another
element type convert first: `StrideMem.fill(Float32(1), 3, 4)`. A complex
`x` with a nonzero imaginary part is written by `fill!` (`sm_full` takes a
double).
"""
function fill(x::SMElType, dims::Dims{N}; device::SMDevice = cpu()) where {N}
    T = typeof(x)
    if x isa Complex && !iszero(imag(x))
        return fill!(StridedTensor{T}(undef, dims; device = device), x)
    end
    out = Ref{sm_tensor}(C_NULL)
    check(sm_full(_cshape(dims), Int32(N), _scalar(x), dtype_code(T), device, out))
    return _new_tensor_of(T, Val(N), out)
end
fill(x::SMElType, dims::Integer...; kw...) = fill(x, map(Int, dims); kw...)

"""
    StrideMem.ones(T, dims...; device = cpu())

A tensor of ones.
"""
ones(::Type{T}, dims::Dims; kw...) where {T} = fill(one(T), dims; kw...)
ones(::Type{T}, dims::Integer...; kw...) where {T} = fill(one(T), map(Int, dims); kw...)

"""
    arange(T, start, step, n; device = cpu()) -> StridedTensor{T,1}

`n` elements `start, start + step, ...` computed in double and converted to
`T` (`sm_arange`).
"""
function arange(::Type{T}, start::Real, step::Real, n::Integer;
                device::SMDevice = cpu()) where {T}
    out = Ref{sm_tensor}(C_NULL)
    check(sm_arange(Float64(start), Float64(step), Int64(n), dtype_code(T), device, out))
    return _new_tensor_of(T, Val(1), out)
end

"""
    StridedTensor(A::AbstractArray; device = cpu())
    StridedTensor{T}(A::AbstractArray; device = cpu())

A new tensor holding a copy of `A` (converted to `T` first when given), with
the same Julia size (`sm_from_host`). The copy is laid out like an `Array`.
"""
function StridedTensor{T}(A::AbstractArray; device::SMDevice = cpu()) where {T}
    B = convert(Array{T}, A)  # no copy when A already is an Array{T}
    N = ndims(B)
    out = Ref{sm_tensor}(C_NULL)
    GC.@preserve B begin
        check(sm_from_host(pointer(B), _cshape(size(B)), Int32(N), dtype_code(T), device, out))
    end
    return _new_tensor_of(T, Val(N), out)
end
StridedTensor(A::AbstractArray{T}; kw...) where {T} = StridedTensor{T}(A; kw...)
StridedTensor(A::BitArray; kw...) = StridedTensor{Bool}(A; kw...)

"""
    wrap(A::Array) -> StridedTensor
    wrap(A::StridedArray) -> StridedTensor   (non-negative strides)

Zero copy: a tensor over `A`'s own memory (`sm_from_blob`). Writes through
either are seen by the other. `A` is kept alive until the library's last
view of that memory dies (views made from the tensor, or handed to C, may
outlive the tensor itself): the deleter given to the library drops that
reference. Do not resize a wrapped `Vector` (`push!`, `resize!`): Julia may
move its memory.
"""
function wrap(A::StridedArray{T,N}) where {T,N}
    T <: SMElType || _argument_error("cannot wrap an array of $(T): not a stridemem element type")
    all(>=(0), strides(A)) ||
        _argument_error("wrap needs non-negative strides; copy with StridedTensor(A), " *
                        "or wrap the parent and flip the view")
    id = _root!(A)
    out = Ref{sm_tensor}(C_NULL)
    st = GC.@preserve A begin
        sm_from_blob(convert(Ptr{Cvoid}, pointer(A)), _cshape(size(A)), _cshape(strides(A)),
                     Int32(N), dtype_code(T), cpu(), _DELETER[], Ptr{Cvoid}(id), out)
    end
    if st != SM_OK
        err = _status_error(st)  # read the message before anything else
        _unroot!(id)             # on failure the deleter is not called
        throw(err)
    end
    return _tensor(out[], A)::StridedTensor{T,N}
end
