# DLPack and CUDA streams.

"""
    to_dlpack(A; versioned = true) -> Ptr{Cvoid}

Zero-copy export (`sm_to_dlpack`): a `DLManagedTensorVersioned*`
(`versioned = true`) or a legacy `DLManagedTensor*`, keeping `A`'s storage
alive until the consumer calls its deleter exactly once. The strides in it
are the C (row-major) ones: a DLPack consumer sees the C shape, i.e. `A`'s
Julia dims reversed.
"""
function to_dlpack(A::StridedTensor; versioned::Bool = true)
    p = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_to_dlpack(A, Cint(versioned), p))
    return p[]
end

"""
    to_dlpack_ex(A; versioned = true, normalize = false) -> (managed, copied)

`to_dlpack` with options (`sm_to_dlpack_ex`): with `normalize = true`, for
consumers that cannot take negative strides, a tensor that has some is
exported as a dense copy (`copied == true`; versioned: flagged IS_COPIED);
any other tensor stays zero-copy.
"""
function to_dlpack_ex(A::StridedTensor; versioned::Bool = true, normalize::Bool = false)
    flags = (versioned ? SM_DLPACK_VERSIONED : UInt32(0)) |
            (normalize ? SM_DLPACK_NORMALIZE : UInt32(0))
    p = Ref{Ptr{Cvoid}}(C_NULL)
    copied = Ref{Cint}(0)
    check(sm_to_dlpack_ex(A, flags, Ptr{SMDevice}(C_NULL), p, copied))
    return (managed = p[], copied = copied[] != 0)
end

"""
    from_dlpack(managed::Ptr{Cvoid}; versioned = true) -> StridedTensor

Zero-copy import (`sm_from_dlpack`). On success the library owns `managed`
and runs its deleter once, when the last view dies; on failure ownership
stays with the caller. The Julia dims are the DLPack shape reversed.
"""
function from_dlpack(managed::Ptr{Cvoid}; versioned::Bool = true)
    out = Ref{sm_tensor}(C_NULL)
    check(sm_from_dlpack(managed, Cint(versioned), out))
    return _tensor(out[], nothing)
end

"""
    record_stream(A, stream::Ptr{Cvoid})

Marks `A`'s storage as used on a CUDA stream: its memory is not reused until
the work queued there so far has finished.
"""
record_stream(A::StridedTensor, stream::Ptr{Cvoid}) = (check(sm_record_stream(A, stream)); nothing)
