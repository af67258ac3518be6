# Stack of views: tensors carved LIFO out of one preallocated storage.

"""
    SMStack(capacity_bytes; device = cpu(), shared = false)

One preallocated buffer handing out tensors in O(1) ([`push_tensor!`](@ref)),
freed LIFO with [`stack_mark`](@ref)/[`pop_to!`](@ref). A tensor still alive
when its region is popped becomes invalid: any use of it (element access
included) throws `StrideMemError` (`SM_ERR_INVALID_HANDLE`).

`shared = true`: a CPU stack whose buffer is shared memory
(`sm_stack_create_shared`). Another process imports the export of
[`storage(s)`](@ref) (or of any pushed tensor, which exports the whole
buffer) and rebuilds the pushed tensors from their `storage_offset`, size
and strides with [`tensor_from_storage`](@ref), so workers fill regions this
process pushed. Marks and pops stay per process: a region popped here and
pushed again is reused under the other process's views, so order that
yourself. A shared stack on another device throws `SM_ERR_DEVICE`.
"""
mutable struct SMStack
    @atomic handle::sm_stack
    device::SMDevice
    function SMStack(h::sm_stack, d::SMDevice)
        s = new(h, d)
        return finalizer(_finalize_stack, s)
    end
end

const _NULL_STACK = sm_stack(C_NULL)

function SMStack(capacity_bytes::Integer; device::SMDevice = cpu(), shared::Bool = false)
    out = Ref{sm_stack}(C_NULL)
    if shared
        device == cpu() ||
            throw(StrideMemError(SM_ERR_DEVICE, "a shared stack lives in CPU memory, not on $(device)"))
        check(sm_stack_create_shared(Int64(capacity_bytes), out))
    else
        check(sm_stack_create(device, Int64(capacity_bytes), out))
    end
    return SMStack(out[], device)
end

function _finalize_stack(s::SMStack)
    (@atomic s.handle) == C_NULL && return nothing
    if !trylock(_ROOTS_LOCK)
        finalizer(_finalize_stack, s)
        return nothing
    end
    try
        h = @atomicswap s.handle = _NULL_STACK
        h == C_NULL || sm_stack_release(h)
    finally
        unlock(_ROOTS_LOCK)
    end
    return nothing
end

"""
    release!(s::SMStack)

Drops the stack now. Tensors still pushed stay valid and keep the buffer
alive until they are released.
"""
function release!(s::SMStack)
    h = @atomicswap s.handle = _NULL_STACK
    h == C_NULL || check(sm_stack_release(h))
    return nothing
end
Base.close(s::SMStack) = release!(s)
isreleased(s::SMStack) = (@atomic s.handle) == C_NULL

@inline function _handle(s::SMStack)
    h = @atomic s.handle
    h == C_NULL && _released_error("this SMStack")
    return h
end

Base.cconvert(::Type{sm_stack}, s::SMStack) = s
Base.unsafe_convert(::Type{sm_stack}, s::SMStack) = _handle(s)

"""
    push_tensor!(s, T, dims...) -> StridedTensor{T}

An uninitialized tensor of Julia size `dims` carved from the top of the
stack, laid out like an `Array`, starting on a `SM_STACK_ALIGNMENT`-byte
boundary. Past capacity: `StrideMemError` (`SM_ERR_OUT_OF_MEMORY`) and the
stack is unchanged.
"""
function push_tensor!(s::SMStack, ::Type{T}, dims::Dims{N}) where {T,N}
    out = Ref{sm_tensor}(C_NULL)
    check(sm_stack_push(s, _cshape(dims), Int32(N), dtype_code(T), out))
    return _tensor(out[], s; checked = true)::StridedTensor{T,N}
end
push_tensor!(s::SMStack, ::Type{T}, dims::Integer...) where {T} =
    push_tensor!(s, T, map(Int, dims))

"""
    stack_mark(s) -> Int

The current top of the stack, to return to with [`pop_to!`](@ref).
"""
stack_mark(s::SMStack) = _int64_query(sm_stack_mark, s)

"""
    pop_to!(s, mark) -> s

Frees every push made after `mark`, in O(1).
"""
pop_to!(s::SMStack, mark::Integer) = (check(sm_stack_pop_to(s, Int64(mark))); s)

"""
    stack_used(s) -> (used, capacity)

Bytes in use and the capacity, in bytes.
"""
function stack_used(s::SMStack)
    u = Ref{Int64}(0)
    c = Ref{Int64}(0)
    check(sm_stack_used(s, u, c))
    return (used = Int(u[]), capacity = Int(c[]))
end

"""
    storage(s::SMStack) -> SMStorage

A new owner of the stack's whole buffer (`sm_stack_storage`): its size is the
capacity, and pushed tensors sit at their `storage_offset`s in it. Export it
([`export_shared`](@ref)) or view it ([`tensor_from_storage`](@ref)).
"""
function storage(s::SMStack)
    out = Ref{sm_storage}(C_NULL)
    check(sm_stack_storage(s, out))
    return SMStorage(out[])
end
