# Devices, streams and threads.

"""
    StrideMem.cpu() -> SMDevice

The host (DLPack type 1). Public, not exported (Flux.jl exports a `cpu`).
"""
cpu() = SMDevice(SM_DEVICE_CPU, 0)

"""
    cuda(index = 0) -> SMDevice

CUDA device `index` (the GPU ordinal, 0-based as CUDA numbers them).
"""
cuda(index::Integer = 0) = SMDevice(SM_DEVICE_CUDA, Int32(index))

"""
    cuda_host() -> SMDevice

Pinned (page-locked) host memory, readable by the CPU and reachable by the GPU.
"""
cuda_host() = SMDevice(SM_DEVICE_CUDA_HOST, 0)

"""
    is_host(device) -> Bool

Whether Julia code can read and write the device's memory directly (CPU and
pinned host memory).
"""
is_host(d::SMDevice) = d.type == SM_DEVICE_CPU || d.type == SM_DEVICE_CUDA_HOST

function Base.show(io::IO, d::SMDevice)
    if d.type == SM_DEVICE_CPU
        print(io, "StrideMem.cpu()")  # not exported: the qualified call
    elseif d.type == SM_DEVICE_CUDA
        print(io, "cuda(", d.index, ")")
    elseif d.type == SM_DEVICE_CUDA_HOST
        print(io, "cuda_host()")
    else
        print(io, "SMDevice(", d.type, ", ", d.index, ")")
    end
end

"""
    cuda_device_count() -> Int

Number of usable CUDA devices; 0 when the library was built without CUDA or
no GPU is usable (CUDA calls then throw a `StrideMemError` with
`SM_ERR_DEVICE`, and everything on the CPU keeps working).
"""
function cuda_device_count()
    n = Ref{Int32}(0)
    check(sm_cuda_device_count(n))
    return Int(n[])
end

"""
    StrideMem.synchronize(device = StrideMem.cpu())

Waits for all work queued on the device (returns at once for the CPU).
Public, not exported (CUDA.jl exports a `synchronize`).
"""
synchronize(d::SMDevice = cpu()) = (check(sm_synchronize(d)); nothing)

"""
    set_stream!(device, stream::Ptr{Cvoid})

Sets the calling thread's current CUDA stream for `device` (`C_NULL`: the
default stream). The pointer is a `cudaStream_t`, e.g. from CUDA.jl.
"""
set_stream!(d::SMDevice, stream::Ptr{Cvoid}) = (check(sm_set_stream(d, stream)); nothing)

"""
    get_stream(device) -> Ptr{Cvoid}

The calling thread's current CUDA stream for `device`.
"""
function get_stream(d::SMDevice)
    s = Ref{Ptr{Cvoid}}(C_NULL)
    check(sm_get_stream(d, s))
    return s[]
end

"""
    set_num_threads!(n)

Number of CPU worker threads the library uses for large copies (0: one per
core). Independent of Julia's own threads.
"""
set_num_threads!(n::Integer) = (check(sm_set_num_threads(Int32(n))); nothing)

"""
    num_threads() -> Int

The library's current number of CPU worker threads.
"""
function num_threads()
    n = Ref{Int32}(0)
    check(sm_get_num_threads(n))
    return Int(n[])
end
