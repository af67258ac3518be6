# StridedTensor: one C tensor handle seen as a Julia AbstractArray.
#
# Layout convention (the whole package follows it): the Julia dims are the C
# shape reversed and the Julia strides are the C strides reversed, both in
# elements. The C library is row-major, Julia is column-major, so the same
# bytes are the same array with no copy: Julia A[i, j] is C element
# [j-1, i-1], and the 1-based Julia dim d of an N-d tensor is C dim N - d.

"""
    StridedTensor{T,N} <: AbstractArray{T,N}

One libstridemem tensor (a view: shape, strides and offset over a refcounted
storage) as a Julia array. Its Julia dims and strides are the C shape and
strides reversed, so `A[i, j]` is C element `[j-1, i-1]` with no copy.

Element access (`A[i, j]`, `A[i, j] = x`, `pointer(A)`) works for tensors on
the CPU and in pinned host memory. Everything else (views, copies, in-place
ops) works on every device. A view made from a tensor is a new
`StridedTensor` that keeps its parent Julia object alive and shares its
storage; writes through one are seen through the other.

The handle is dropped by the garbage collector, or at once by
[`release!`](@ref) (also `close`); a second release is a no-op, and any use
after release throws a `StrideMemError` (`SM_ERR_INVALID_HANDLE`).
"""
mutable struct StridedTensor{T,N} <: AbstractArray{T,N}
    @atomic handle::sm_tensor
    dims::NTuple{N,Int}      # Julia order (C shape reversed)
    strides::NTuple{N,Int}   # Julia order, elements, any sign
    @atomic ptr::Ptr{T}      # address of A[1, ..., 1] (C element [0, ..., 0]), as of `moves`
    @atomic moves::Int       # _STORAGE_MOVES when ptr was read (see share_memory!)
    offset::Int              # storage offset in elements (C order-free)
    device::SMDevice
    readonly::Bool
    checked::Bool            # carved from a stack: revalidate on element access
    parent::Any              # the Julia object this one was made from

    function StridedTensor{T,N}(h::sm_tensor, dims::NTuple{N,Int}, strides::NTuple{N,Int},
                                ptr::Ptr{T}, moves::Int, offset::Int, device::SMDevice,
                                readonly::Bool, checked::Bool, parent) where {T,N}
        A = new{T,N}(h, dims, strides, ptr, moves, offset, device, readonly, checked, parent)
        return finalizer(_finalize_tensor, A)
    end
end

const _NULL_TENSOR = sm_tensor(C_NULL)

# A tensor caches the host address of its first element, for element access
# without a C call. Only one thing moves a live storage's bytes: share_memory!
# (sm_share_memory), which moves them for every view of the storage, in any
# handle, and frees the old ones. Each move bumps this count; a tensor whose
# `moves` differs re-reads its address (sm_data_ptr) once before the next
# access, so no view reads freed memory. One atomic load per access when
# nothing moved.
const _STORAGE_MOVES = Threads.Atomic{Int}(0)

# ---------------------------------------------------------------------------
# Roots of Julia memory wrapped zero-copy (see `wrap`): the library calls the
# deleter when the last view of such memory dies, possibly long after the
# Julia tensor that wrapped it, and only then is the Julia array let go.
# ---------------------------------------------------------------------------

const _ROOTS_LOCK = ReentrantLock()
const _ROOTS = Dict{UInt,Any}()
const _NEXT_ROOT = Threads.Atomic{UInt}(1)
const _DELETER = Ref{Ptr{Cvoid}}(C_NULL)

function _with_roots(f)
    lock(_ROOTS_LOCK)
    GC.enable_finalizers(false)
    try
        return f()
    finally
        GC.enable_finalizers(true)
        unlock(_ROOTS_LOCK)
    end
end

function _root!(x)
    id = Threads.atomic_add!(_NEXT_ROOT, UInt(1))
    _with_roots(() -> (_ROOTS[id] = x; nothing))
    return id
end

_unroot!(id::UInt) = _with_roots(() -> (delete!(_ROOTS, id); nothing))

_rooted_count() = _with_roots(() -> length(_ROOTS))

# The sm_deleter given to sm_from_blob (made with @cfunction in __init__).
# Called by the library exactly once; must never throw into C.
function _blob_deleter(data::Ptr{Cvoid}, ctx::Ptr{Cvoid})::Cvoid
    try
        _unroot!(UInt(ctx))
    catch
    end
    return nothing
end

# Releases from finalizers may run a deleter, which takes _ROOTS_LOCK; a
# finalizer must not wait for a lock, so it tries it and, when busy, asks to
# be run again at a later collection.
function _finalize_tensor(A::StridedTensor)
    (@atomic A.handle) == C_NULL && return nothing
    if !trylock(_ROOTS_LOCK)
        finalizer(_finalize_tensor, A)
        return nothing
    end
    try
        h = @atomicswap A.handle = _NULL_TENSOR
        h == C_NULL || sm_tensor_release(h)
    finally
        unlock(_ROOTS_LOCK)
    end
    return nothing
end

"""
    release!(A::StridedTensor)

Drops this tensor's handle now instead of at garbage collection. Other views
of the same storage stay valid (each holds the storage). Calling it again is
a no-op; using `A` afterwards throws `StrideMemError` (`SM_ERR_INVALID_HANDLE`).
`close(A)` does the same.
"""
function release!(A::StridedTensor)
    h = @atomicswap A.handle = _NULL_TENSOR
    h == C_NULL || check(sm_tensor_release(h))
    return nothing
end
Base.close(A::StridedTensor) = release!(A)

"""
    isreleased(A) -> Bool

Whether `release!` (or the finalizer) has dropped the handle.
"""
isreleased(A::StridedTensor) = (@atomic A.handle) == C_NULL

@inline function _handle(A::StridedTensor)
    h = @atomic A.handle
    h == C_NULL && _released_error("this StridedTensor")
    return h
end

# Passing a StridedTensor where a @ccall wants an sm_tensor: the call keeps A
# (and so its handle) alive until it returns.
Base.cconvert(::Type{sm_tensor}, A::StridedTensor) = A
Base.unsafe_convert(::Type{sm_tensor}, A::StridedTensor) = _handle(A)

# ---------------------------------------------------------------------------
# Making a StridedTensor from a new handle
# ---------------------------------------------------------------------------

function _read_meta(h::sm_tensor)
    nd = Ref{Int32}(0)
    check(sm_ndim(h, nd))
    n = Int(nd[])
    code = Ref{sm_dtype}(0)
    check(sm_dtype_of(h, code))
    T = julia_type(code[])
    shape = Vector{Int64}(undef, n)
    check(sm_shape(h, shape, Int32(n)))
    strides = Vector{Int64}(undef, n)
    check(sm_strides(h, strides, Int32(n)))
    p = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_data_ptr(h, p))
    off = Ref{Int64}(0)
    check(sm_storage_offset(h, off))
    dev = Ref{SMDevice}(SMDevice(0, 0))
    check(sm_device_of(h, dev))
    ro = Ref{Cint}(0)
    check(sm_is_read_only(h, ro))
    return (T, n, shape, strides, p[], Int(off[]), dev[], ro[] != 0)
end

# Takes ownership of h: on any failure h is released before the error is
# rethrown, so no handle leaks.
function _tensor(h::sm_tensor, parent; checked::Bool = false)
    h == C_NULL && throw(StrideMemError(SM_ERR_INTERNAL, "the library returned a NULL handle"))
    moves = _STORAGE_MOVES[]  # before the address is read: a move after it is seen later
    meta = try
        _read_meta(h)
    catch
        sm_tensor_release(h)
        rethrow()
    end
    T, n, shape, strides, p, off, dev, ro = meta
    return _new_tensor(T, Val(n), h, shape, strides, p, moves, off, dev, ro, checked, parent)
end

function _new_tensor(::Type{T}, ::Val{N}, h, shape, strides, p, moves, off, dev, ro, checked,
                     parent) where {T,N}
    dims = ntuple(k -> Int(shape[N+1-k]), Val(N))
    jstrides = ntuple(k -> Int(strides[N+1-k]), Val(N))
    return StridedTensor{T,N}(h, dims, jstrides, convert(Ptr{T}, p), moves, off, dev, ro,
                              checked, parent)
end

# Runs f(out) (a C call writing a new handle to out) and wraps the result as
# a child of A.
function _derive(f, A::StridedTensor)
    out = Ref{sm_tensor}(C_NULL)
    check(f(out))
    return _tensor(out[], A; checked = A.checked)
end

# Julia dims (any iterable of integers) -> C shape (reversed, Int64).
_cshape(dims) = Int64[Int64(x) for x in Iterators.reverse(collect(dims))]

# 1-based Julia dim d of an N-d tensor -> 0-based C dim.
@inline function _cdim(N::Integer, d::Integer)
    1 <= d <= N || _argument_error("dimension $(d) is out of range 1:$(N)")
    return Int32(N - d)
end

# ---------------------------------------------------------------------------
# AbstractArray and strided-array interfaces
# ---------------------------------------------------------------------------

Base.size(A::StridedTensor) = A.dims
Base.strides(A::StridedTensor) = A.strides
function Base.stride(A::StridedTensor{T,N}, k::Integer) where {T,N}
    k >= 1 || _argument_error("stride: dimension $(k) < 1")
    k <= N && return A.strides[k]
    return N == 0 ? 1 : A.strides[N] * A.dims[N]
end
Base.elsize(::Type{<:StridedTensor{T}}) where {T} = sizeof(T)
Base.IndexStyle(::Type{<:StridedTensor}) = IndexCartesian()

@noinline _not_host_error(A) =
    throw(StrideMemError(SM_ERR_DEVICE,
                         "element access needs host memory; this tensor is on $(A.device) " *
                         "(copy it with StrideMem.to(A, StrideMem.cpu()) or Array(A))"))
@noinline _read_only_error() =
    throw(StrideMemError(SM_ERR_READ_ONLY, "this tensor is read-only (imported read-only memory)"))

@noinline function _revalidate(A::StridedTensor)
    n = Ref{Int32}(0)
    check(sm_ndim(A, n))  # SM_ERR_INVALID_HANDLE once its stack region was popped
    return nothing
end

# A's address as of the last storage move (see _STORAGE_MOVES). The address
# is stored before the count, and read after it, so a reader that sees the new
# count sees the new address.
@inline function _current_ptr(A::StridedTensor)
    m = _STORAGE_MOVES[]
    (@atomic A.moves) == m && return @atomic A.ptr
    return _reread_ptr!(A, m)
end

@noinline function _reread_ptr!(A::StridedTensor{T}, m::Int) where {T}
    p = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_data_ptr(A, p))
    q = convert(Ptr{T}, p[])
    @atomic A.ptr = q
    @atomic A.moves = m
    return q
end

# The host address of A[1, ..., 1], after checking that A is alive, on the
# host and (for stack tensors) not popped.
@inline function _host_ptr(A::StridedTensor)
    (@atomic A.handle) == C_NULL && _released_error("this StridedTensor")
    is_host(A.device) || _not_host_error(A)
    A.checked && _revalidate(A)
    return _current_ptr(A)
end

@inline function _linear_offset(strides::NTuple{N,Int}, I::NTuple{N,Int}) where {N}
    o = 0
    @inbounds for k in 1:N
        o += (I[k] - 1) * strides[k]
    end
    return o
end

@inline function Base.getindex(A::StridedTensor{T,N}, I::Vararg{Int,N}) where {T,N}
    @boundscheck checkbounds(A, I...)
    p = _host_ptr(A)
    o = _linear_offset(A.strides, I)
    return GC.@preserve A unsafe_load(p, o + 1)
end

@inline function Base.setindex!(A::StridedTensor{T,N}, v, I::Vararg{Int,N}) where {T,N}
    @boundscheck checkbounds(A, I...)
    A.readonly && _read_only_error()
    p = _host_ptr(A)
    o = _linear_offset(A.strides, I)
    x = convert(T, v)
    GC.@preserve A unsafe_store!(p, x, o + 1)
    return A
end

"""
    pointer(A::StridedTensor{T}) -> Ptr{T}

Host address of `A[1, ..., 1]` (host tensors only; see [`data_pointer`](@ref)
for any device). Valid while `A` is alive: use `GC.@preserve A`.
"""
Base.pointer(A::StridedTensor) = _host_ptr(A)
Base.unsafe_convert(::Type{Ptr{T}}, A::StridedTensor{T}) where {T} = _host_ptr(A)

# Two tensors may alias when they share a storage: the id is the storage's
# base address (element 0 of the storage), current after a share_memory!. A
# released or popped tensor has no address to re-read and keeps its last one
# (it aliases nothing any more); dataids must not throw for it.
function Base.dataids(A::StridedTensor{T}) where {T}
    p = try
        _current_ptr(A)
    catch e
        e isa StrideMemError || rethrow()
        @atomic A.ptr
    end
    return (UInt(p) - UInt(A.offset) * UInt(sizeof(T)),)
end

function Base.show(io::IO, A::StridedTensor)
    if isreleased(A)
        print(io, Base.dims2string(size(A)), " StridedTensor{", eltype(A), "} (released)")
    elseif !is_host(A.device)
        print(io, "StridedTensor(", Array(A), ") on ", A.device)
    else
        invoke(show, Tuple{IO,AbstractArray}, io, A)
    end
end

function Base.show(io::IO, m::MIME"text/plain", A::StridedTensor)
    if isreleased(A)
        print(io, Base.dims2string(size(A)), " StridedTensor{", eltype(A), ", ", ndims(A),
              "} (released)")
    elseif !is_host(A.device)
        println(io, summary(A), " on ", A.device, " (shown from a host copy):")
        Base.print_array(io, Array(A))
    else
        invoke(show, Tuple{IO,MIME"text/plain",AbstractArray}, io, m, A)
    end
end

# ---------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------

"""
    storage_offset(A) -> Int

Offset of `A[1, ..., 1]` from the start of its storage, in elements
(0-based, as the C `sm_storage_offset`).
"""
storage_offset(A::StridedTensor) = (_handle(A); A.offset)

"""
    dtype(A) -> Int32

The C dtype code of the tensor (`LibStrideMem.SM_FLOAT32`, ...); `eltype(A)`
is the matching Julia type.
"""
dtype(A::StridedTensor{T}) where {T} = dtype_code(T)

"""
    StrideMem.device(A) -> SMDevice

Where the tensor's memory lives. Public, not exported (CUDA.jl exports a
`device`).
"""
device(A::StridedTensor) = A.device

function _int64_query(f, x)
    r = Ref{Int64}(0)
    check(f(x, r))
    return Int(r[])
end

"""
    nbytes(A) -> Int

Bytes this view addresses (`length(A) * sizeof(eltype(A))`, `sm_nbytes`).
"""
nbytes(A::StridedTensor) = _int64_query(sm_nbytes, A)

"""
    storage_nbytes(A) -> Int

Bytes of the whole storage this view keeps alive: a small view of a big
tensor pins all of it (`sm_storage_nbytes`).
"""
storage_nbytes(A::StridedTensor) = _int64_query(sm_storage_nbytes, A)

"""
    data_pointer(A) -> Ptr{Cvoid}

Address of `A[1, ..., 1]` on the tensor's device (a device pointer for CUDA
tensors; `sm_data_ptr`). Valid while `A` is alive.
"""
function data_pointer(A::StridedTensor)
    p = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_data_ptr(A, p))
    return p[]
end

function _format(f::Symbol)
    f === :contiguous && return SM_CONTIGUOUS
    f === :channels_last && return SM_CHANNELS_LAST
    f === :channels_last_3d && return SM_CHANNELS_LAST_3D
    f === :preserve && return SM_PRESERVE
    _argument_error("memory format $(repr(f)) is not one of :contiguous, :channels_last, " *
                    ":channels_last_3d, :preserve")
end

"""
    is_contiguous(A; format = :contiguous) -> Bool

Whether `A` is dense in the memory format: `:contiguous` (C row-major, i.e.
Julia column-major: `A` is laid out like an `Array`), `:channels_last` (C
NHWC for a C shape NCHW, i.e. Julia dims (W, H, C, N)), `:channels_last_3d`,
or `:preserve` (dense in some order).
"""
function is_contiguous(A::StridedTensor; format::Symbol = :contiguous)
    r = Ref{Cint}(0)
    check(sm_is_contiguous(A, _format(format), r))
    return r[] != 0
end

"""
    same_storage(A, B) -> Bool

Whether `A` and `B` view the same storage.
"""
function same_storage(A::StridedTensor, B::StridedTensor)
    r = Ref{Cint}(0)
    check(sm_same_storage(A, B, r))
    return r[] != 0
end

"""
    version_counter(A) -> Int

The storage's version counter (PyTorch's `_version`): bumped by every
in-place library write through any view of the storage. Element writes with
`A[i] = x` go straight to memory and do not bump it.
"""
version_counter(A::StridedTensor) = _int64_query(sm_version_counter, A)

"""
    is_read_only(A) -> Bool

Whether the tensor refuses writes (an import of read-only memory).
"""
function is_read_only(A::StridedTensor)
    r = Ref{Cint}(0)
    check(sm_is_read_only(A, r))
    return r[] != 0
end
