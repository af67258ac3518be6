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
    return _maybe_copied(A) do out, copied
        sm_reshape(A, _cshape(dims), Int32(M), out, copied)
    end
end
reshape_or_copy(A::StridedTensor, dims::Integer...) = reshape_or_copy(A, map(Int, dims))

"""
    contiguous(A; format = :contiguous) -> StridedTensor

`A` itself (a new handle to the same data) when it is already dense in the
format, else a copy in that format (`sm_contiguous`). `:contiguous` is the
layout of a Julia `Array`. `contiguous_copied` also says which.
"""
contiguous(A::StridedTensor; format::Symbol = :contiguous) =
    first(contiguous_copied(A; format = format))

"""
    contiguous_copied(A; format = :contiguous) -> (B, copied::Bool)

`contiguous(A; format)` and whether it copied (`copied == false`: `B` shares
`A`'s data), as the library reports it (`sm_contiguous`'s `copied`).
"""
function contiguous_copied(A::StridedTensor; format::Symbol = :contiguous)
    return _maybe_copied(A) do out, copied
        sm_contiguous(A, _format(format), out, copied)
    end
end

# Runs call(out, copied) (a C call that writes a tensor and whether it
# copied) and wraps the result: a copy owns its data, a shared result keeps
# A as its parent. Returns (tensor, copied::Bool).
function _maybe_copied(call, A::StridedTensor)
    out = Ref{sm_tensor}(C_NULL)
    copied = Ref{Cint}(0)
    check(call(out, copied))
    c = copied[] != 0
    return (c ? _tensor(out[], nothing) : _tensor(out[], A; checked = A.checked), c)
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
    StrideMem.to(A, device[, T]) -> StridedTensor
    StrideMem.to(A, T) -> StridedTensor

`A` on another device and/or with another element type (`sm_to`). With
neither changing it is a new handle to the same data; otherwise a copy.
`to_copied` also says which. Public, not exported (too common a name).
"""
to(A::StridedTensor, args...) = first(to_copied(A, args...))

"""
    to_copied(A, device[, T]) -> (B, copied::Bool)
    to_copied(A, T) -> (B, copied::Bool)

`to(A, ...)` and whether it copied (`copied == false`: `B` shares `A`'s
data), as the library reports it (`sm_to`'s `copied`).
"""
to_copied(A::StridedTensor, d::SMDevice) = to_copied(A, d, eltype(A))
function to_copied(A::StridedTensor, d::SMDevice, ::Type{S}) where {S}
    return _maybe_copied(A) do out, copied
        sm_to(A, d, dtype_code(S), out, copied)
    end
end
to_copied(A::StridedTensor, ::Type{S}) where {S} = to_copied(A, A.device, S)

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
