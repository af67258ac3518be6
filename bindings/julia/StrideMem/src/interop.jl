# DLPack and CUDA streams.

"""
    to_dlpack(A; versioned = true) -> Ptr{Cvoid}

Zero-copy export (`sm_to_dlpack`): a `DLManagedTensorVersioned*`
(`versioned = true`) or a legacy `DLManagedTensor*`, keeping `A`'s storage
alive until the consumer calls its deleter exactly once. The strides in it
are the C (row-major) ones: a DLPack consumer sees the C shape, i.e. `A`'s
Julia dims reversed. Negative strides go out as they are: PyTorch aborts the
process on them; for such a consumer use `to_dlpack_ex(A; normalize = true)`.
"""
function to_dlpack(A::StridedTensor; versioned::Bool = true)
    p = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_to_dlpack(A, Cint(versioned), p))
    return p[]
end

"""
    to_dlpack_ex(A; versioned = true, normalize = false, copy = nothing,
                 device = nothing) -> (managed, copied)

DLPack export with the whole protocol of the array API's `__dlpack__`
(`sm_to_dlpack_ex`); `copied` says whether `managed` is a copy (a versioned
copy is also flagged IS_COPIED by the library).

- `copy = nothing`: zero copy unless one is needed; `copy = true`: always a
  fresh row-major copy (`SM_DLPACK_COPY`); `copy = false`: never a copy
  (`SM_DLPACK_NO_COPY`), an export that would need one throws
  `StrideMemError` with `SM_ERR_UNSUPPORTED`.
- `device`: the `SMDevice` the consumer wants (`nothing`: `A`'s own);
  another device makes the export a copy there.
- `normalize = true`, for consumers that cannot take negative strides: a
  tensor that has some is exported as a dense copy; others stay zero-copy.

A tensor carved from a stack of views is exported only with `copy = true`.
"""
function to_dlpack_ex(A::StridedTensor; versioned::Bool = true, normalize::Bool = false,
                      copy::Union{Nothing,Bool} = nothing,
                      device::Union{Nothing,SMDevice} = nothing)
    flags = (versioned ? SM_DLPACK_VERSIONED : UInt32(0)) |
            (normalize ? SM_DLPACK_NORMALIZE : UInt32(0))
    if copy !== nothing
        flags |= copy ? SM_DLPACK_COPY : SM_DLPACK_NO_COPY
    end
    target = device === nothing ? Ptr{SMDevice}(C_NULL) : Ref(device)
    p = Ref{Ptr{Cvoid}}(C_NULL)
    copied = Ref{Cint}(0)
    check(sm_to_dlpack_ex(A, flags, target, p, copied))
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
