# Views: metadata only, share the storage, never copy. Every function takes
# 1-based Julia dims and Julia-ordered sizes/strides and converts them to the C
# library's 0-based row-major terms (C dim = N - d, sizes and strides reversed).

# Julia range over a dim of size n -> C slice (start, stop, step), or nothing
# when the range leaves 1:n.
function _slice_args(r::AbstractRange{<:Integer}, n::Int)
    isempty(r) && return (Int64(0), Int64(0), Int64(1))
    (1 <= first(r) <= n && 1 <= last(r) <= n) || return nothing
    s = Int64(step(r))
    start = Int64(first(r) - 1)
    # exclusive 0-based stop one step past the last element
    stop = s > 0 ? Int64(last(r)) : Int64(last(r) - 2)
    stop < 0 && (stop = SM_SLICE_NONE)  # Python would read -1 as "from the end"
    return (start, stop, s)
end

# The index kinds the library slices without a copy. A Bool is not one: Base
# refuses it as an index, and so does the fallback below.
_viewable_index(i) = (i isa Integer && !(i isa Bool)) || i isa Colon ||
                     i isa AbstractRange{<:Integer}

"""
    view(A::StridedTensor, I...) -> StridedTensor or SubArray

A view of `A`. With one integer, range (any step, negative included) or `:`
per dim it is a `StridedTensor` sharing the storage: integers drop their dim
(`sm_select`), ranges slice it (`sm_slice`). Any other index (a vector of
indices, a logical mask, `CartesianIndex`, a linear index into a matrix...)
gives what `view` gives for any `AbstractArray`: Base's `SubArray` wrapping
`A`, still no copy; its elements are read through `A` (host memory only),
and the library's functions, which take `StridedTensor`s, do not take it
(`index_select` gathers into a `StridedTensor`, as a copy).
"""
function Base.view(A::StridedTensor{T,N}, I::Vararg{Any,N}) where {T,N}
    all(_viewable_index, I) || return invoke(view, Tuple{AbstractArray,Vararg{Any}}, A, I...)
    h = _handle(A)
    cur = h
    GC.@preserve A begin
        try
            # Julia dims in order = C dims from the last: dropping C dim N-d
            # leaves the lower C dims where they were.
            for d in 1:N
                idx = I[d]
                idx isa Colon && continue
                cd = Int32(N - d)
                out = Ref{sm_tensor}(C_NULL)
                if idx isa Integer
                    1 <= idx <= A.dims[d] || throw(BoundsError(A, I))
                    check(sm_select(cur, cd, Int64(idx - 1), out))
                else  # a range of integers
                    args = _slice_args(idx, A.dims[d])
                    args === nothing && throw(BoundsError(A, I))
                    check(sm_slice(cur, cd, args[1], args[2], args[3], out))
                end
                cur == h || sm_tensor_release(cur)
                cur = out[]
            end
            if cur == h
                check(sm_tensor_retain(h))  # all `:`: a new owner of the same view
            end
        catch
            cur == h || sm_tensor_release(cur)
            rethrow()
        end
    end
    return _tensor(cur, A; checked = A.checked)
end

"""
    A[I...] with ranges or `:` -> StridedTensor

A copy of the indexed region (as `getindex` on an `Array`), made by the
library, on `A`'s device. With integers only it is the element.
"""
function Base.getindex(A::StridedTensor{T,N},
                       I::Vararg{Union{Integer,Colon,AbstractRange{<:Integer}},N}) where {T,N}
    if all(i -> i isa Integer, I)
        return A[map(Int, I)...]
    end
    return _copy_and_release(view(A, I...))
end
Base.getindex(A::StridedTensor{T,1}, ::Colon) where {T} = _copy_and_release(view(A, :))

"""
    reshape(A::StridedTensor, dims) -> StridedTensor or Base.ReshapedArray

`A`'s elements in Julia size `dims`, column-major order, sharing `A`'s
memory, as `reshape` on any `AbstractArray`. It never copies. When the
strides can express `dims` it is a `StridedTensor` view (`sm_view`);
otherwise (e.g. a flat `reshape` or `vec` of a transpose) it is Base's lazy
`ReshapedArray` wrapping `A`, whose elements are read through `A` (host
memory only) and which the library's functions do not take. For a
`StridedTensor` in every case, on any device, use
[`reshape_or_copy`](@ref), which copies when it must and says so;
[`reshape_would_copy`](@ref) tells which case applies. A wrong element
count is Base's `DimensionMismatch`.
"""
function Base.reshape(A::StridedTensor, dims::NTuple{M,Int}) where {M}
    # Sizes Base refuses get Base's error (the library would also read -1 as
    # "infer this size", which Julia spells `:`).
    (all(>=(0), dims) && prod(dims) == length(A)) ||
        return invoke(reshape, Tuple{AbstractArray,Dims}, A, dims)
    shape = _cshape(dims)
    out = Ref{sm_tensor}(C_NULL)
    status = sm_view(A, shape, Int32(M), out)
    if status == SM_ERR_SHAPE
        # The count is right but the strides cannot express `dims`: Base's
        # wrapper, as for any AbstractArray.
        return invoke(reshape, Tuple{AbstractArray,Dims}, A, dims)
    end
    check(status)
    return _tensor(out[], A; checked = A.checked)
end

# `reshape(A, :, 2)`: Base resolves the `:` itself and, in some Julia
# versions, then builds its own wrapper without coming back to the method
# above; resolving it here keeps the StridedTensor view whenever there is one.
function Base.reshape(A::StridedTensor, dims::Tuple{Vararg{Union{Int,Colon}}})
    known = prod(d for d in dims if d isa Int; init = 1)
    if count(d -> d isa Colon, dims) != 1 || known <= 0 || length(A) % known != 0
        # Base's answer (its error, or a size-0 case), exactly as for any array
        return invoke(reshape, Tuple{AbstractArray,Tuple{Vararg{Union{Int,Colon}}}}, A, dims)
    end
    inferred = length(A) ÷ known
    return reshape(A, map(d -> d isa Colon ? inferred : d, dims))
end

"""
    as_strided(A, dims, strides, offset = storage_offset(A)) -> StridedTensor

Any Julia size/strides over `A`'s storage; `offset` is absolute, in
elements, 0-based (as `storage_offset`). Every reachable element must lie in
the storage.
"""
function as_strided(A::StridedTensor, dims::Dims{M}, strides::Dims{M},
                    offset::Integer = storage_offset(A)) where {M}
    shape = _cshape(dims)
    cstrides = _cshape(strides)
    return _derive(out -> sm_as_strided(A, shape, cstrides, Int32(M), Int64(offset), out), A)
end

"""
    narrow(A, d, start, len) -> StridedTensor

Elements `start:start+len-1` (1-based) of Julia dim `d`.
"""
function narrow(A::StridedTensor{T,N}, d::Integer, start::Integer, len::Integer) where {T,N}
    start >= 1 || throw(BoundsError(A, start))
    cd = _cdim(N, d)
    return _derive(out -> sm_narrow(A, cd, Int64(start - 1), Int64(len), out), A)
end

"""
    permute(A, perm) -> StridedTensor

The lazy `permutedims`: Julia dim `i` of the result is dim `perm[i]` of `A`
(`sm_permute`). `permutedims(A, perm)` is its copy.
"""
function permute(A::StridedTensor{T,N}, perm) where {T,N}
    p = collect(Int, perm)
    (length(p) == N && isperm(p)) || _argument_error("$(perm) is not a permutation of 1:$(N)")
    # result C dim j is Julia dim N - j, which takes Julia dim p[N - j] of A
    q = Int32[N - p[N-j] for j in 0:N-1]
    return _derive(out -> sm_permute(A, q, Int32(N), out), A)
end

Base.permutedims(A::StridedTensor, perm) = _copy_and_release(permute(A, perm))
Base.permutedims(A::StridedTensor{T,2}) where {T} = permutedims(A, (2, 1))

"""
    swapdims(A, d1, d2) -> StridedTensor

Exchanges two Julia dims (`sm_transpose`); a matrix's transpose is
`swapdims(A, 1, 2)`.
"""
function swapdims(A::StridedTensor{T,N}, d1::Integer, d2::Integer) where {T,N}
    c1 = _cdim(N, d1)
    c2 = _cdim(N, d2)
    return _derive(out -> sm_transpose(A, c1, c2, out), A)
end

"""
    movedim(A, source, destination) -> StridedTensor

Moves Julia dim(s) `source` to position(s) `destination` (integers or
equal-length collections), the other dims keeping their order.
"""
function movedim(A::StridedTensor{T,N}, source, destination) where {T,N}
    s = Int32[_cdim(N, d) for d in source]
    t = Int32[_cdim(N, d) for d in destination]
    length(s) == length(t) || _argument_error("movedim: $(length(s)) sources, $(length(t)) destinations")
    return _derive(out -> sm_movedim(A, s, t, Int32(length(s)), out), A)
end

"""
    expand(A, dims...) -> StridedTensor

Broadcast to Julia size `dims` with stride 0 (`sm_expand`): size-1 dims grow,
new dims are added at the end (Julia's broadcasting rule, which is the C
rule on the reversed shape); `-1` keeps a size.
"""
expand(A::StridedTensor, dims::Integer...) = expand(A, dims)
function expand(A::StridedTensor, dims::Tuple{Vararg{Integer}})
    shape = _cshape(dims)
    return _derive(out -> sm_expand(A, shape, Int32(length(dims)), out), A)
end

"""
    squeeze(A; dims = nothing) -> StridedTensor

Removes the listed Julia dims that have size 1 (others are left, as
PyTorch), or every size-1 dim when `dims` is `nothing`.
"""
function squeeze(A::StridedTensor{T,N}; dims = nothing) where {T,N}
    if dims === nothing
        return _derive(out -> sm_squeeze(A, C_NULL, Int32(0), out), A)
    end
    cd = Int32[_cdim(N, d) for d in dims]
    return _derive(out -> sm_squeeze(A, cd, Int32(length(cd)), out), A)
end

function Base.dropdims(A::StridedTensor{T,N}; dims) where {T,N}
    for d in dims
        _cdim(N, d)  # range check
        size(A, d) == 1 ||
            _argument_error("dropdims: dimension $(d) has size $(size(A, d)), not 1")
    end
    return squeeze(A; dims = dims)
end

"""
    StrideMem.unsqueeze(A, d) -> StridedTensor

Inserts a size-1 dim so that it is Julia dim `d` of the result (1 <= d <= N+1).
Public, not exported (MLUtils.jl exports an `unsqueeze`).
"""
function unsqueeze(A::StridedTensor{T,N}, d::Integer) where {T,N}
    1 <= d <= N + 1 || _argument_error("unsqueeze: dimension $(d) is out of range 1:$(N + 1)")
    return _derive(out -> sm_unsqueeze(A, Int32(N + 1 - d), out), A)
end

"""
    StrideMem.flatten(A, d1 = 1, d2 = ndims(A)) -> StridedTensor

Merges Julia dims `d1:d2` into one (column-major order, as `reshape`). A view
when the strides allow, else `StrideMemError` (`SM_ERR_SHAPE`). Public, not
exported (MLUtils.jl exports a `flatten`).
"""
function flatten(A::StridedTensor{T,N}, d1::Integer = 1, d2::Integer = N) where {T,N}
    d1 <= d2 || _argument_error("flatten: first dim $(d1) > last dim $(d2)")
    c_start = _cdim(N, d2)
    c_end = _cdim(N, d1)
    return _derive(out -> sm_flatten(A, c_start, c_end, out), A)
end

"""
    unflatten(A, d, sizes) -> StridedTensor

Splits Julia dim `d` into Julia dims of `sizes` (one `-1` inferred). A view.
"""
function unflatten(A::StridedTensor{T,N}, d::Integer, sizes) where {T,N}
    cd = _cdim(N, d)
    csizes = _cshape(sizes)
    return _derive(out -> sm_unflatten(A, cd, csizes, Int32(length(csizes)), out), A)
end

"""
    unfold(A, d, size, step) -> StridedTensor

All windows of `size` elements along Julia dim `d`, `step` apart (they may
overlap). The window's elements become the new Julia dim 1 (the C library
appends them as the last C dim) and the window count is then Julia dim `d + 1`.
"""
function unfold(A::StridedTensor{T,N}, d::Integer, size::Integer, step::Integer) where {T,N}
    cd = _cdim(N, d)
    return _derive(out -> sm_unfold(A, cd, Int64(size), Int64(step), out), A)
end

"""
    diagonal(A; offset = 0, dims = (1, 2)) -> StridedTensor

The diagonal `A[i, i + offset]` of Julia dims `dims` (as `LinearAlgebra.diag`
for a matrix). It becomes Julia dim 1 of the result (the C library appends
it as the last C dim), the remaining dims follow in order.
"""
function diagonal(A::StridedTensor{T,N}; offset::Integer = 0, dims = (1, 2)) where {T,N}
    c1 = _cdim(N, dims[1])
    c2 = _cdim(N, dims[2])
    return _derive(out -> sm_diagonal(A, Int64(offset), c1, c2, out), A)
end

# Wraps `count` new handles as children of A; releases the rest on failure.
function _tensors(handles::Vector{sm_tensor}, count::Int, A::StridedTensor)
    result = StridedTensor[]
    for k in 1:count
        try
            push!(result, _tensor(handles[k], A; checked = A.checked))
        catch
            for j in k+1:count
                sm_tensor_release(handles[j])
            end
            rethrow()
        end
    end
    return [t for t in result]  # narrows the element type when all are alike
end

function _split_like(f, A::StridedTensor)
    count = Ref{Int32}(0)
    check(f(C_NULL, Int32(0), count))
    n = Int(count[])
    handles = Base.fill(_NULL_TENSOR, n)
    check(f(handles, Int32(n), count))
    return _tensors(handles, Int(count[]), A)
end

"""
    split_views(A, split_size; dims) -> Vector{StridedTensor}

Views of `split_size` elements along Julia dim `dims` (the last may be
smaller), in order (`sm_split`).
"""
function split_views(A::StridedTensor{T,N}, split_size::Integer; dims::Integer) where {T,N}
    cd = _cdim(N, dims)
    return _split_like((outs, cap, count) -> sm_split(A, Int64(split_size), cd, outs, cap, count), A)
end

"""
    chunk_views(A, chunks; dims) -> Vector{StridedTensor}

`cld(size(A, dims), chunks)` elements per view along Julia dim `dims`,
possibly fewer views than `chunks` (as `torch.chunk`; `sm_chunk`).
"""
function chunk_views(A::StridedTensor{T,N}, chunks::Integer; dims::Integer) where {T,N}
    cd = _cdim(N, dims)
    return _split_like((outs, cap, count) -> sm_chunk(A, Int32(chunks), cd, outs, cap, count), A)
end

"""
    flip(A, dims...) -> StridedTensor

Reverses the listed Julia dims (all dims when none is given) as a view with
negative strides (`sm_flip`; NumPy's `flip`, a lazy `reverse`).
"""
function flip(A::StridedTensor{T,N}, dims::Integer...) where {T,N}
    ds = isempty(dims) ? (1:N) : dims
    cd = Int32[_cdim(N, d) for d in ds]
    return _derive(out -> sm_flip(A, cd, Int32(length(cd)), out), A)
end
