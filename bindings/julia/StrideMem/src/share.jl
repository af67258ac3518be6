# Storages shared with other processes (Linux; stridemem.h, "Processes"). A
# storage leaves its process as an open file descriptor plus a
# ShareDescriptor (144 plain bytes); the other process imports both into an
# SMStorage over the same pages and rebuilds views with tensor_from_storage.
# The bytes travel by any means (a pipe, a socket, an environment variable as
# hex); the fd by the OS's: inherited by a child process (for example as its
# stdin, `run(pipeline(cmd; stdin = fd))`) or as SCM_RIGHTS over a Unix socket.

"""
    ShareDescriptor(bytes::AbstractVector{UInt8})

The descriptor from the 144 bytes another process sent
(`Vector{UInt8}(desc)` there). Only the length is checked here; everything
else (magic, format, checksum, versions, the fd) is checked by
[`import_shared`](@ref), where a corrupted or forged descriptor must be
refused anyway. A wrong length throws `StrideMemError` (`SM_ERR_INVALID_ARGUMENT`).
`ShareDescriptor(hex2bytes(s))` reads the hex text of `bytes2hex(Vector{UInt8}(desc))`.
"""
function LibStrideMem.ShareDescriptor(bytes::AbstractVector{UInt8})
    n = length(bytes)
    n == SM_SHARE_DESC_SIZE ||
        _argument_error("a share descriptor is $(SM_SHARE_DESC_SIZE) bytes, got $(n)")
    # The struct has no padding (sizeof == SM_SHARE_DESC_SIZE, test/share.jl),
    # so its bytes are exactly the C struct's.
    return reinterpret(ShareDescriptor, Vector{UInt8}(bytes))[1]
end

"""
    Vector{UInt8}(desc::ShareDescriptor) -> Vector{UInt8}

The descriptor's 144 bytes, exactly as the library wrote them: what to send
to the other process with the fd.
"""
(::Type{Vector{UInt8}})(d::ShareDescriptor) = collect(reinterpret(UInt8, [d]))

function Base.show(io::IO, d::ShareDescriptor)
    kind = d.kind == SM_SHARE_MEMFD ? "memfd" :
           d.kind == SM_SHARE_CUDA_IPC ? "cuda_ipc" : "kind $(d.kind)"
    print(io, "ShareDescriptor(", kind, ", ", d.device, ", ", d.nbytes, " bytes at ", d.offset,
          ", from pid ", d.exporter_pid, ")")
end

"""
    empty_shared(T, dims...) -> StridedTensor{T}

A zero-filled CPU tensor of Julia size `dims` (laid out like an `Array`) in a
fresh shared-memory storage (`sm_empty_shared`), ready for
[`export_shared`](@ref).
"""
function empty_shared(::Type{T}, dims::Dims{N}) where {T,N}
    out = Ref{sm_tensor}(C_NULL)
    check(sm_empty_shared(_cshape(dims), Int32(N), dtype_code(T), out))
    return _new_tensor_of(T, Val(N), out)
end
empty_shared(::Type{T}, dims::Integer...) where {T} = empty_shared(T, map(Int, dims))

"""
    share_memory!(A) -> A

PyTorch's `share_memory_()` (`sm_share_memory`): moves `A`'s CPU storage into
shared memory, in place and once (one copy). Every view of it, in any handle,
then reads and writes the shared pages, element access included: each
`StridedTensor` re-reads its address after a move. A no-op when the storage
is already shared and for CUDA memory (CUDA IPC shares it as it is).

Throws `StrideMemError` (`SM_ERR_UNSUPPORTED`), changing nothing, for a
tensor carved from an `SMStack` (create it with `shared = true`), memory the
library does not own ([`wrap`](@ref) of a Julia array, DLPack imports: copy
into [`empty_shared`](@ref) instead), pinned memory, and a storage with a
live DLPack export. A `pointer(A)` or `data_pointer(A)` taken before points
to freed memory afterwards: share first, then take addresses. No other task
or thread may use a view of the storage while it moves.
"""
function share_memory!(A::StridedTensor)
    check(sm_share_memory(A))
    # Every tensor's cached address may be stale now (any view of this
    # storage, in any handle); bumped even after a no-op, which costs each
    # tensor one sm_data_ptr at its next element access.
    Threads.atomic_add!(_STORAGE_MOVES, 1)
    return A
end

"""
    is_shared(A::StridedTensor) -> Bool
    is_shared(s::SMStorage) -> Bool

Whether the storage can be exported as it is: shared CPU memory, a CUDA
caching-allocator block, an imported storage (`sm_is_shared`,
`sm_storage_is_shared`).
"""
function is_shared(A::StridedTensor)
    r = Ref{Cint}(0)
    check(sm_is_shared(A, r))
    return r[] != 0
end

function is_shared(s::SMStorage)
    r = Ref{Cint}(0)
    check(sm_storage_is_shared(s, r))
    return r[] != 0
end

# Runs an export call; the fd it wrote (close-on-exec) is the caller's.
function _export_shared(call, x)
    desc = Ref(ShareDescriptor())
    fd = Ref{Cint}(-1)
    check(call(x, desc, fd))
    return (desc[], RawFD(fd[]))
end

"""
    export_shared(A::StridedTensor) -> (desc::ShareDescriptor, fd::RawFD)
    export_shared(s::SMStorage) -> (desc, fd)

Exports the storage (`sm_tensor_export`, `sm_storage_export`): the
descriptor and a new file descriptor to send with it (`RawFD(-1)` for CUDA,
whose IPC handle is in the descriptor). The fd is the caller's and
close-on-exec: close it once sent, e.g. `close(Base.Filesystem.File(fd))`.
For a tensor carved from a shared stack the whole stack buffer is exported;
the importer rebuilds the tensor from `storage_offset(A)`, `size(A)` and
`strides(A)`. CPU memory that is not shared throws `StrideMemError`
(`SM_ERR_UNSUPPORTED`: [`share_memory!`](@ref) first).
"""
export_shared(A::StridedTensor) = _export_shared(sm_tensor_export, A)
export_shared(s::SMStorage) = _export_shared(sm_storage_export, s)

_cint_fd(fd::RawFD) = reinterpret(Cint, fd)
function _cint_fd(fd::Integer)
    typemin(Cint) <= fd <= typemax(Cint) || _argument_error("file descriptor $(fd) is not a C int")
    return Cint(fd)
end

"""
    import_shared(desc, fd = RawFD(-1)) -> SMStorage

A storage over an export of this or another process (`sm_storage_import`):
the same pages, so writes show on both sides (version counters stay per
process). `desc` is a [`ShareDescriptor`](@ref) or its 144 bytes; `fd` a
`RawFD` or an integer, `RawFD(-1)` for a CUDA descriptor. The fd stays the
caller's (the library keeps its own duplicate). View it with
[`tensor_from_storage`](@ref).

Everything is checked before anything is mapped, and a refusal leaves no
mapping and no fd behind (`StrideMemError` with the library's message): a
descriptor that is not one or is corrupted, an fd of another object, a
regular file, a pipe or none: `SM_ERR_INVALID_ARGUMENT`; another format or
library major version: `SM_ERR_UNSUPPORTED`; a range beyond the object:
`SM_ERR_OUT_OF_BOUNDS`; CUDA without a usable GPU: `SM_ERR_DEVICE`.
"""
function import_shared(desc::ShareDescriptor, fd::Union{RawFD,Integer} = RawFD(-1))
    out = Ref{sm_storage}(C_NULL)
    check(sm_storage_import(Ref(desc), _cint_fd(fd), out))
    return SMStorage(out[])
end
import_shared(bytes::AbstractVector{UInt8}, fd::Union{RawFD,Integer} = RawFD(-1)) =
    import_shared(ShareDescriptor(bytes), fd)
