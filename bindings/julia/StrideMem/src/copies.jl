# Copies: the only calls that allocate tensor data, plus the bridges to and
# from Julia arrays.

function _copy_and_release(v::StridedTensor)
    try
        return copy(v)
    finally
        release!(v)
    end
end

"""
    reshape_would_copy(A, dims) -> Bool

Whether `reshape_or_copy(A, dims)` would have to copy.
"""
function reshape_would_copy(A::StridedTensor, dims::Dims{M}) where {M}
    r = Ref{Cint}(0)
    check(sm_reshape_would_copy(A, _cshape(dims), Int32(M), r))
    return r[] != 0
end
reshape_would_copy(A::StridedTensor, dims::Integer...) = reshape_would_copy(A, map(Int, dims))

"""
    reshape_or_copy(A, dims) -> (B, copied::Bool)

`reshape` that copies when it must (`sm_reshape`): `B` is a view of `A` when
the strides allow (`copied == false`), else a new array laid out like an
`Array`.
"""
function reshape_or_copy(A::StridedTensor, dims::Dims{M}) where {M}
    out = Ref{sm_tensor}(C_NULL)
    copied = Ref{Cint}(0)
    check(sm_reshape(A, _cshape(dims), Int32(M), out, copied))
    B = copied[] != 0 ? _tensor(out[], nothing) : _tensor(out[], A; checked = A.checked)
    return (B, copied[] != 0)
end
reshape_or_copy(A::StridedTensor, dims::Integer...) = reshape_or_copy(A, map(Int, dims))

"""
    contiguous(A; format = :contiguous) -> StridedTensor

`A` itself (a new handle to the same data) when it is already dense in the
format, else a copy in that format (`sm_contiguous`). `:contiguous` is the
layout of a Julia `Array`.
"""
function contiguous(A::StridedTensor; format::Symbol = :contiguous)
    out = Ref{sm_tensor}(C_NULL)
    check(sm_contiguous(A, _format(format), out))
    h = out[]
    shares = try
        r = Ref{Cint}(0)
        check(sm_same_storage(A, h, r))
        r[] != 0
    catch
        sm_tensor_release(h)
        rethrow()
    end
    return shares ? _tensor(h, A; checked = A.checked) : _tensor(h, nothing)
end

"""
    clone(A; format = :preserve) -> StridedTensor

Always a copy (`sm_clone`), laid out in `format` (`:preserve` keeps `A`'s
dense order, `:contiguous` is the layout of an `Array`).
"""
function clone(A::StridedTensor; format::Symbol = :preserve)
    out = Ref{sm_tensor}(C_NULL)
    check(sm_clone(A, _format(format), out))
    return _tensor(out[], nothing)
end

"""
    copy(A::StridedTensor) -> StridedTensor

A new tensor on the same device with the same values, laid out like an
`Array` (`clone(A; format = :contiguous)`).
"""
Base.copy(A::StridedTensor) = clone(A; format = :contiguous)

"""
    to(A, device[, T]) -> StridedTensor
    to(A, T) -> StridedTensor

`A` on another device and/or with another element type (`sm_to`). With
neither changing it is a new handle to the same data; otherwise a copy.
"""
to(A::StridedTensor, d::SMDevice) = to(A, d, eltype(A))
function to(A::StridedTensor, d::SMDevice, ::Type{S}) where {S}
    out = Ref{sm_tensor}(C_NULL)
    check(sm_to(A, d, dtype_code(S), out))
    h = out[]
    shares = try
        r = Ref{Cint}(0)
        check(sm_same_storage(A, h, r))
        r[] != 0
    catch
        sm_tensor_release(h)
        rethrow()
    end
    return shares ? _tensor(h, A; checked = A.checked) : _tensor(h, nothing)
end
to(A::StridedTensor, ::Type{S}) where {S} = to(A, A.device, S)

"""
    copy_into!(dst, src) -> dst

`dst .= src` done by the library on any pair of devices (`sm_copy_into`):
`src` broadcasts to `dst`'s size (Julia's rule: missing trailing dims and
size-1 dims repeat) and converts to `dst`'s element type. Refused with
`SM_ERR_OVERLAP` when `dst`'s elements overlap each other or `src` partly
overlaps `dst`. Bumps `dst`'s version counter.
"""
function copy_into!(dst::StridedTensor, src::StridedTensor)
    check(sm_copy_into(dst, src))
    return dst
end

function Base.copyto!(dst::StridedTensor, src::StridedTensor)
    size(dst) == size(src) || return invoke(copyto!, Tuple{AbstractArray,AbstractArray}, dst, src)
    return copy_into!(dst, src)
end

function Base.copyto!(dst::StridedTensor, src::Array{<:SMElType})
    size(dst) == size(src) || return invoke(copyto!, Tuple{AbstractArray,AbstractArray}, dst, src)
    tmp = wrap(src)
    try
        copy_into!(dst, tmp)
    finally
        release!(tmp)
    end
    return dst
end

function Base.copyto!(dst::Array{T}, src::StridedTensor{T}) where {T}
    size(dst) == size(src) || return invoke(copyto!, Tuple{AbstractArray,AbstractArray}, dst, src)
    GC.@preserve dst begin
        check(sm_copy_to_host(src, convert(Ptr{Cvoid}, pointer(dst)), Csize_t(sizeof(dst))))
    end
    return dst
end

"""
    Array(A::StridedTensor) -> Array

A host copy with the same Julia size and values, from any device
(`sm_copy_to_host`). `collect(A)` is the same.
"""
Base.Array{T,N}(A::StridedTensor{T,N}) where {T,N} = copyto!(Array{T,N}(undef, size(A)), A)
Base.Array{T}(A::StridedTensor{T,N}) where {T,N} = Array{T,N}(A)
Base.Array(A::StridedTensor{T,N}) where {T,N} = Array{T,N}(A)
Base.collect(A::StridedTensor) = Array(A)

function Base.similar(A::StridedTensor, ::Type{S}, dims::Dims{N}) where {S<:SMElType,N}
    return StridedTensor{S}(undef, dims; device = A.device)
end

"""
    index_select(A, d, indices) -> StridedTensor

Gathers the (1-based) `indices` along Julia dim `d` into a new tensor
(`sm_index_select`; always a copy). An index outside `1:size(A, d)` is a
`BoundsError`.
"""
function index_select(A::StridedTensor{T,N}, d::Integer, indices::AbstractVector{<:Integer}) where {T,N}
    cd = _cdim(N, d)
    n = size(A, d)
    idx = Int64[]
    sizehint!(idx, length(indices))
    for i in indices
        1 <= i <= n || throw(BoundsError(A, i))
        push!(idx, Int64(i - 1))
    end
    it = StridedTensor{Int64}(idx; device = A.device)
    try
        out = Ref{sm_tensor}(C_NULL)
        check(sm_index_select(A, cd, it, out))
        return _tensor(out[], nothing)
    finally
        release!(it)
    end
end
