# Storages: the refcounted blocks of bytes that tensors view.

"""
    SMStorage

One owner of a libstridemem storage (`sm_storage`), from [`storage`](@ref).
Released by the garbage collector or at once by `release!`/`close`.
"""
mutable struct SMStorage
    @atomic handle::sm_storage
    function SMStorage(h::sm_storage)
        s = new(h)
        return finalizer(_finalize_storage, s)
    end
end

const _NULL_STORAGE = sm_storage(C_NULL)

function _finalize_storage(s::SMStorage)
    (@atomic s.handle) == C_NULL && return nothing
    if !trylock(_ROOTS_LOCK)  # the release may run a deleter (see tensor.jl)
        finalizer(_finalize_storage, s)
        return nothing
    end
    try
        h = @atomicswap s.handle = _NULL_STORAGE
        h == C_NULL || sm_storage_release(h)
    finally
        unlock(_ROOTS_LOCK)
    end
    return nothing
end

function release!(s::SMStorage)
    h = @atomicswap s.handle = _NULL_STORAGE
    h == C_NULL || check(sm_storage_release(h))
    return nothing
end
Base.close(s::SMStorage) = release!(s)
isreleased(s::SMStorage) = (@atomic s.handle) == C_NULL

@inline function _handle(s::SMStorage)
    h = @atomic s.handle
    h == C_NULL && _released_error("this SMStorage")
    return h
end

Base.cconvert(::Type{sm_storage}, s::SMStorage) = s
Base.unsafe_convert(::Type{sm_storage}, s::SMStorage) = _handle(s)

"""
    storage(A) -> SMStorage

A new owner of the storage `A` views (`sm_tensor_storage`).
"""
function storage(A::StridedTensor)
    out = Ref{sm_storage}(C_NULL)
    check(sm_tensor_storage(A, out))
    return SMStorage(out[])
end

"""
    nbytes(s::SMStorage) -> Int

Size of the storage in bytes (`sm_storage_size`).
"""
nbytes(s::SMStorage) = _int64_query(sm_storage_size, s)
Base.sizeof(s::SMStorage) = nbytes(s)

"""
    data_pointer(s::SMStorage) -> Ptr{Cvoid}

Address of the storage's first byte on its device.
"""
function data_pointer(s::SMStorage)
    p = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_storage_data_ptr(s, p))
    return p[]
end

"""
    device(s::SMStorage) -> SMDevice
"""
function device(s::SMStorage)
    d = Ref{SMDevice}(SMDevice(0, 0))
    check(sm_storage_device(s, d))
    return d[]
end

"""
    storage_id(s::SMStorage) -> UInt64
    storage_id(A::StridedTensor) -> UInt64

A number no other storage of this process has had, from 1
(`sm_storage_id`): [`memory_snapshot`](@ref) names the storage holding each
block by it (a block's `"storage"`). Views of one storage share it. For a
tensor carved from a stack of views it throws (`SM_ERR_UNSUPPORTED`, as
[`storage`](@ref)).
"""
function storage_id(s::SMStorage)
    out = Ref{UInt64}(0)
    check(sm_storage_id(s, out))
    return out[]
end

function storage_id(A::StridedTensor)
    s = storage(A)
    try
        return storage_id(s)
    finally
        release!(s)
    end
end

# Julia column-major contiguous strides of Julia dims.
function _julia_contiguous_strides(dims)
    st = Int[]
    acc = 1
    for n in dims
        push!(st, acc)
        acc *= max(Int(n), 1)
    end
    return Tuple(st)
end

"""
    tensor_from_storage(s, T, dims; strides = <like an Array>, offset = 0)

A tensor of element type `T` and Julia size `dims` over storage `s`
(`sm_tensor_from_storage`, bounds-checked like `as_strided`). `strides` are
Julia-ordered, in elements; `offset` is in elements, 0-based.
"""
function tensor_from_storage(s::SMStorage, ::Type{T}, dims::Dims{N};
                             strides = _julia_contiguous_strides(dims),
                             offset::Integer = 0) where {T,N}
    length(strides) == N || _argument_error("$(length(strides)) strides for $(N) dims")
    out = Ref{sm_tensor}(C_NULL)
    check(sm_tensor_from_storage(s, _cshape(dims), _cshape(strides), Int32(N), Int64(offset),
                                 dtype_code(T), out))
    return _tensor(out[], s)::StridedTensor{T,N}
end
