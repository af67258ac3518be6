"""
    LibStrideMem

The raw C API of libstridemem, one Julia function per C function, with the C
names and the C argument order (row-major shapes, 0-based dims). Every
`@ccall` of the package lives in this file; `tools/api_table.py`
verifies each one against `include/stridemem.h` and the library's exported
symbols. Nothing here checks a status or owns a handle: that is the job of
the `StrideMem` layer above.
"""
module LibStrideMem

# ---------------------------------------------------------------------------
# The library. `libstridemem()` is a function call in the library position of
# every @ccall (the manual's "non-constant function specification"): the path
# is resolved once, in StrideMem.__init__, before any call is made.
# ---------------------------------------------------------------------------

const _LIBPATH = Ref{String}("")

"""
    libstridemem() -> String

Path of the libstridemem shared library the package calls, set when the
package is loaded: `ENV["STRIDEMEM_LIB"]`, else the library the system's
dynamic loader finds, else the repository's build (`StrideMem._find_library`).
"""
libstridemem() = _LIBPATH[]

# ---------------------------------------------------------------------------
# C types
# ---------------------------------------------------------------------------

const sm_status = Int32
const sm_dtype = Int32
const sm_memory_format = Int32
const sm_op = Int32

# Opaque handle targets: distinct pointee types so that a storage handle can
# never be passed where a tensor handle is expected.
mutable struct sm_tensor_ end
mutable struct sm_storage_ end
mutable struct sm_stack_ end

const sm_tensor = Ptr{sm_tensor_}
const sm_storage = Ptr{sm_storage_}
const sm_stack = Ptr{sm_stack_}

"""
    SMDevice(type, index)

The C `sm_device` (passed by value): `type` is a DLPack device type code
(`SM_DEVICE_CPU`, `SM_DEVICE_CUDA`, `SM_DEVICE_CUDA_HOST`), `index` the GPU
ordinal (0 for CPU and pinned host memory).
"""
struct SMDevice
    type::Int32
    index::Int32
end
const sm_device = SMDevice

# void (*)(void* data, void* ctx), made with @cfunction
const sm_deleter = Ptr{Cvoid}

"""
    MemoryStats

The C `sm_memory_stats_t`, as returned by `StrideMem.memory_stats`. Byte
counts and event counts of one device's caching allocator.
"""
struct MemoryStats
    struct_size::UInt32
    reserved0::UInt32
    allocated_bytes::Int64
    reserved_bytes::Int64
    peak_allocated_bytes::Int64
    peak_reserved_bytes::Int64
    num_allocs::Int64
    num_frees::Int64
    cache_hits::Int64
    device_allocs::Int64
    device_frees::Int64
    active_views::Int64
    active_storages::Int64
    requested_bytes::Int64
    reserved::NTuple{8,Int64}
end
const sm_memory_stats_t = MemoryStats

MemoryStats() = MemoryStats(UInt32(sizeof(MemoryStats)), UInt32(0),
                            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ntuple(_ -> Int64(0), 8))

"""
    SMOomInfo

The C `sm_oom_info` the library hands to the out-of-memory observer (read
through a pointer, valid during the call only; `report` is the library's
text). Read only the fields that end within `struct_size`:
`StrideMem.set_oom_observer!` does that and gives the observer a
`StrideMem.OomInfo`.
"""
struct SMOomInfo
    struct_size::UInt32
    device::SMDevice
    reserved0::UInt32
    requested_bytes::Int64
    allocated_bytes::Int64
    reserved_bytes::Int64
    cached_free_bytes::Int64
    largest_free_block::Int64
    report::Cstring
end
const sm_oom_info = SMOomInfo

# void (*)(const sm_oom_info* info, void* user_data), made with @cfunction
const sm_oom_observer = Ptr{Cvoid}

const sm_share_kind = Int32

"""
    ShareDescriptor

The C `sm_share_desc`: what `sm_storage_export` writes and `sm_storage_import`
reads, 144 plain bytes (`SM_SHARE_DESC_SIZE`, no padding; the same field order,
sizes and offsets as the header, which `tools/api_table.py` compares
and `test/share.jl` asserts). Send it to the other process with the fd
(`StrideMem.export_shared`, `StrideMem.import_shared`). Treat it as opaque:
the import checks it (magic, format, checksum, versions, the fd's identity);
the fields are there for messages and logs.
"""
struct ShareDescriptor
    magic::UInt32             # SM_SHARE_MAGIC
    format::UInt16            # SM_SHARE_FORMAT
    struct_size::UInt16       # SM_SHARE_DESC_SIZE
    kind::sm_share_kind       # SM_SHARE_MEMFD or SM_SHARE_CUDA_IPC
    library_version::UInt32   # the exporter's SM_VERSION_NUMBER
    device::SMDevice          # where the bytes live
    nbytes::Int64             # the storage's size
    offset::Int64             # where it starts in the shared object, in bytes
    object_bytes::Int64       # the shared object's size (memfd, CUDA segment)
    object_id::UInt64         # memfd: its inode number
    object_dev::UInt64        # memfd: its st_dev
    exporter_pid::Int64       # for messages
    cuda_ipc_handle::NTuple{64,UInt8}  # SM_SHARE_CUDA_IPC: the segment's cudaIpcMemHandle_t
    checksum::UInt64          # FNV-1a 64 over every byte before it
end
const sm_share_desc = ShareDescriptor

# All zeros: what an export overwrites (a descriptor the import refuses).
ShareDescriptor() = ShareDescriptor(UInt32(0), UInt16(0), UInt16(0), sm_share_kind(0), UInt32(0),
                                    SMDevice(0, 0), 0, 0, 0, UInt64(0), UInt64(0), 0,
                                    ntuple(_ -> 0x00, 64), UInt64(0))

# ---------------------------------------------------------------------------
# Constants (values checked against the header by the checker)
# ---------------------------------------------------------------------------

const SM_MAX_DIMS = 16

const SM_OK = sm_status(0)
const SM_ERR_INVALID_ARGUMENT = sm_status(1)
const SM_ERR_INVALID_HANDLE = sm_status(2)
const SM_ERR_OUT_OF_MEMORY = sm_status(3)
const SM_ERR_SHAPE = sm_status(4)
const SM_ERR_OUT_OF_BOUNDS = sm_status(5)
const SM_ERR_DTYPE = sm_status(6)
const SM_ERR_DEVICE = sm_status(7)
const SM_ERR_OVERLAP = sm_status(8)
const SM_ERR_OVERFLOW = sm_status(9)
const SM_ERR_UNSUPPORTED = sm_status(10)
const SM_ERR_CUDA = sm_status(11)
const SM_ERR_INTERNAL = sm_status(12)
const SM_ERR_READ_ONLY = sm_status(13)

const SM_BOOL = sm_dtype(0)
const SM_UINT8 = sm_dtype(1)
const SM_INT8 = sm_dtype(2)
const SM_INT16 = sm_dtype(3)
const SM_INT32 = sm_dtype(4)
const SM_INT64 = sm_dtype(5)
const SM_FLOAT16 = sm_dtype(6)
const SM_BFLOAT16 = sm_dtype(7)
const SM_FLOAT32 = sm_dtype(8)
const SM_FLOAT64 = sm_dtype(9)
const SM_UINT16 = sm_dtype(10)
const SM_UINT32 = sm_dtype(11)
const SM_UINT64 = sm_dtype(12)
const SM_COMPLEX64 = sm_dtype(13)   # ComplexF32: (re, im) as two Float32
const SM_COMPLEX128 = sm_dtype(14)  # ComplexF64: (re, im) as two Float64
const SM_NUM_DTYPES = sm_dtype(15)

const SM_DEVICE_CPU = Int32(1)
const SM_DEVICE_CUDA = Int32(2)
const SM_DEVICE_CUDA_HOST = Int32(3)

const SM_CONTIGUOUS = sm_memory_format(0)
const SM_CHANNELS_LAST = sm_memory_format(1)
const SM_CHANNELS_LAST_3D = sm_memory_format(2)
const SM_PRESERVE = sm_memory_format(3)

const SM_SLICE_NONE = typemin(Int64)

const SM_OP_FILL = sm_op(0)
const SM_OP_ZERO = sm_op(1)
const SM_OP_ADD = sm_op(2)
const SM_OP_SUB = sm_op(3)
const SM_OP_MUL = sm_op(4)
const SM_OP_DIV = sm_op(5)
const SM_OP_CLAMP = sm_op(6)
const SM_OP_RELU = sm_op(7)
const SM_OP_NEG = sm_op(8)
const SM_OP_ABS = sm_op(9)
const SM_OP_SQRT = sm_op(10)
const SM_OP_EXP = sm_op(11)
const SM_OP_SIGN = sm_op(12)

const SM_DLPACK_VERSIONED = UInt32(1)
const SM_DLPACK_NORMALIZE = UInt32(2)
const SM_DLPACK_COPY = UInt32(4)
const SM_DLPACK_NO_COPY = UInt32(8)

const SM_ALLOC_ROUND = 512
const SM_SMALL_BLOCK_MAX = 1024 * 1024
const SM_STACK_ALIGNMENT = 256

const SM_SHARE_MAGIC = UInt32(0x48534d53)  # "SMSH" in memory on little-endian machines
const SM_SHARE_FORMAT = 1
const SM_SHARE_DESC_SIZE = 144
const SM_SHARE_MEMFD = sm_share_kind(1)     # CPU: a memfd; the fd travels with the descriptor
const SM_SHARE_CUDA_IPC = sm_share_kind(2)  # CUDA: the IPC handle is in the descriptor; no fd

# ---------------------------------------------------------------------------
# Errors and version
# ---------------------------------------------------------------------------

sm_status_string(status) =
    @ccall libstridemem().sm_status_string(status::sm_status)::Cstring
sm_last_error() =
    @ccall libstridemem().sm_last_error()::Cstring
sm_version(major, minor, patch) =
    @ccall libstridemem().sm_version(major::Ref{Cint}, minor::Ref{Cint}, patch::Ref{Cint})::sm_status

# ---------------------------------------------------------------------------
# Types and devices
# ---------------------------------------------------------------------------

sm_dtype_size(dtype) =
    @ccall libstridemem().sm_dtype_size(dtype::sm_dtype)::Csize_t
sm_dtype_name(dtype) =
    @ccall libstridemem().sm_dtype_name(dtype::sm_dtype)::Cstring
sm_cuda_device_count(out) =
    @ccall libstridemem().sm_cuda_device_count(out::Ref{Int32})::sm_status

# ---------------------------------------------------------------------------
# Tensor lifetime
# ---------------------------------------------------------------------------

sm_tensor_retain(t) =
    @ccall libstridemem().sm_tensor_retain(t::sm_tensor)::sm_status
sm_tensor_release(t) =
    @ccall libstridemem().sm_tensor_release(t::sm_tensor)::sm_status

# ---------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------

sm_empty(shape, ndim, dtype, device, out) =
    @ccall libstridemem().sm_empty(shape::Ptr{Int64}, ndim::Int32, dtype::sm_dtype,
                                   device::sm_device, out::Ref{sm_tensor})::sm_status
sm_empty_strided(shape, strides, ndim, dtype, device, out) =
    @ccall libstridemem().sm_empty_strided(shape::Ptr{Int64}, strides::Ptr{Int64}, ndim::Int32,
                                           dtype::sm_dtype, device::sm_device,
                                           out::Ref{sm_tensor})::sm_status
sm_zeros(shape, ndim, dtype, device, out) =
    @ccall libstridemem().sm_zeros(shape::Ptr{Int64}, ndim::Int32, dtype::sm_dtype,
                                   device::sm_device, out::Ref{sm_tensor})::sm_status
sm_full(shape, ndim, value, dtype, device, out) =
    @ccall libstridemem().sm_full(shape::Ptr{Int64}, ndim::Int32, value::Cdouble,
                                  dtype::sm_dtype, device::sm_device,
                                  out::Ref{sm_tensor})::sm_status
sm_arange(start, step, n, dtype, device, out) =
    @ccall libstridemem().sm_arange(start::Cdouble, step::Cdouble, n::Int64, dtype::sm_dtype,
                                    device::sm_device, out::Ref{sm_tensor})::sm_status
sm_from_host(data, shape, ndim, dtype, device, out) =
    @ccall libstridemem().sm_from_host(data::Ptr{Cvoid}, shape::Ptr{Int64}, ndim::Int32,
                                       dtype::sm_dtype, device::sm_device,
                                       out::Ref{sm_tensor})::sm_status
sm_from_blob(data, shape, strides, ndim, dtype, device, deleter, ctx, out) =
    @ccall libstridemem().sm_from_blob(data::Ptr{Cvoid}, shape::Ptr{Int64}, strides::Ptr{Int64},
                                       ndim::Int32, dtype::sm_dtype, device::sm_device,
                                       deleter::sm_deleter, ctx::Ptr{Cvoid},
                                       out::Ref{sm_tensor})::sm_status
sm_copy_to_host(t, dst, nbytes) =
    @ccall libstridemem().sm_copy_to_host(t::sm_tensor, dst::Ptr{Cvoid}, nbytes::Csize_t)::sm_status

# ---------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------

sm_ndim(t, out) =
    @ccall libstridemem().sm_ndim(t::sm_tensor, out::Ref{Int32})::sm_status
sm_shape(t, out, capacity) =
    @ccall libstridemem().sm_shape(t::sm_tensor, out::Ptr{Int64}, capacity::Int32)::sm_status
sm_strides(t, out, capacity) =
    @ccall libstridemem().sm_strides(t::sm_tensor, out::Ptr{Int64}, capacity::Int32)::sm_status
sm_storage_offset(t, out) =
    @ccall libstridemem().sm_storage_offset(t::sm_tensor, out::Ref{Int64})::sm_status
sm_dtype_of(t, out) =
    @ccall libstridemem().sm_dtype_of(t::sm_tensor, out::Ref{sm_dtype})::sm_status
sm_device_of(t, out) =
    @ccall libstridemem().sm_device_of(t::sm_tensor, out::Ref{sm_device})::sm_status
sm_numel(t, out) =
    @ccall libstridemem().sm_numel(t::sm_tensor, out::Ref{Int64})::sm_status
sm_nbytes(t, out) =
    @ccall libstridemem().sm_nbytes(t::sm_tensor, out::Ref{Int64})::sm_status
sm_storage_nbytes(t, out) =
    @ccall libstridemem().sm_storage_nbytes(t::sm_tensor, out::Ref{Int64})::sm_status
sm_data_ptr(t, out) =
    @ccall libstridemem().sm_data_ptr(t::sm_tensor, out::Ref{Ptr{Cvoid}})::sm_status
sm_is_contiguous(t, format, out) =
    @ccall libstridemem().sm_is_contiguous(t::sm_tensor, format::sm_memory_format,
                                           out::Ref{Cint})::sm_status
sm_same_storage(a, b, out) =
    @ccall libstridemem().sm_same_storage(a::sm_tensor, b::sm_tensor, out::Ref{Cint})::sm_status
sm_version_counter(t, out) =
    @ccall libstridemem().sm_version_counter(t::sm_tensor, out::Ref{Int64})::sm_status
sm_is_read_only(t, out) =
    @ccall libstridemem().sm_is_read_only(t::sm_tensor, out::Ref{Cint})::sm_status

# ---------------------------------------------------------------------------
# Storages
# ---------------------------------------------------------------------------

sm_tensor_storage(t, out) =
    @ccall libstridemem().sm_tensor_storage(t::sm_tensor, out::Ref{sm_storage})::sm_status
sm_storage_retain(s) =
    @ccall libstridemem().sm_storage_retain(s::sm_storage)::sm_status
sm_storage_release(s) =
    @ccall libstridemem().sm_storage_release(s::sm_storage)::sm_status
sm_storage_size(s, nbytes) =
    @ccall libstridemem().sm_storage_size(s::sm_storage, nbytes::Ref{Int64})::sm_status
sm_storage_data_ptr(s, out) =
    @ccall libstridemem().sm_storage_data_ptr(s::sm_storage, out::Ref{Ptr{Cvoid}})::sm_status
sm_storage_device(s, out) =
    @ccall libstridemem().sm_storage_device(s::sm_storage, out::Ref{sm_device})::sm_status
sm_storage_id(s, out) =
    @ccall libstridemem().sm_storage_id(s::sm_storage, out::Ref{UInt64})::sm_status
sm_tensor_from_storage(s, shape, strides, ndim, storage_offset, dtype, out) =
    @ccall libstridemem().sm_tensor_from_storage(s::sm_storage, shape::Ptr{Int64},
                                                 strides::Ptr{Int64}, ndim::Int32,
                                                 storage_offset::Int64, dtype::sm_dtype,
                                                 out::Ref{sm_tensor})::sm_status

# ---------------------------------------------------------------------------
# Views
# ---------------------------------------------------------------------------

sm_view(t, shape, ndim, out) =
    @ccall libstridemem().sm_view(t::sm_tensor, shape::Ptr{Int64}, ndim::Int32,
                                  out::Ref{sm_tensor})::sm_status
sm_as_strided(t, shape, strides, ndim, storage_offset, out) =
    @ccall libstridemem().sm_as_strided(t::sm_tensor, shape::Ptr{Int64}, strides::Ptr{Int64},
                                        ndim::Int32, storage_offset::Int64,
                                        out::Ref{sm_tensor})::sm_status
sm_slice(t, dim, start, stop, step, out) =
    @ccall libstridemem().sm_slice(t::sm_tensor, dim::Int32, start::Int64, stop::Int64,
                                   step::Int64, out::Ref{sm_tensor})::sm_status
sm_narrow(t, dim, start, length, out) =
    @ccall libstridemem().sm_narrow(t::sm_tensor, dim::Int32, start::Int64, length::Int64,
                                    out::Ref{sm_tensor})::sm_status
sm_select(t, dim, index, out) =
    @ccall libstridemem().sm_select(t::sm_tensor, dim::Int32, index::Int64,
                                    out::Ref{sm_tensor})::sm_status
sm_permute(t, dims, ndim, out) =
    @ccall libstridemem().sm_permute(t::sm_tensor, dims::Ptr{Int32}, ndim::Int32,
                                     out::Ref{sm_tensor})::sm_status
sm_transpose(t, dim0, dim1, out) =
    @ccall libstridemem().sm_transpose(t::sm_tensor, dim0::Int32, dim1::Int32,
                                       out::Ref{sm_tensor})::sm_status
sm_movedim(t, source, destination, n, out) =
    @ccall libstridemem().sm_movedim(t::sm_tensor, source::Ptr{Int32}, destination::Ptr{Int32},
                                     n::Int32, out::Ref{sm_tensor})::sm_status
sm_expand(t, shape, ndim, out) =
    @ccall libstridemem().sm_expand(t::sm_tensor, shape::Ptr{Int64}, ndim::Int32,
                                    out::Ref{sm_tensor})::sm_status
sm_squeeze(t, dims, n, out) =
    @ccall libstridemem().sm_squeeze(t::sm_tensor, dims::Ptr{Int32}, n::Int32,
                                     out::Ref{sm_tensor})::sm_status
sm_unsqueeze(t, dim, out) =
    @ccall libstridemem().sm_unsqueeze(t::sm_tensor, dim::Int32, out::Ref{sm_tensor})::sm_status
sm_flatten(t, start_dim, end_dim, out) =
    @ccall libstridemem().sm_flatten(t::sm_tensor, start_dim::Int32, end_dim::Int32,
                                     out::Ref{sm_tensor})::sm_status
sm_unflatten(t, dim, sizes, n, out) =
    @ccall libstridemem().sm_unflatten(t::sm_tensor, dim::Int32, sizes::Ptr{Int64}, n::Int32,
                                       out::Ref{sm_tensor})::sm_status
sm_unfold(t, dim, size, step, out) =
    @ccall libstridemem().sm_unfold(t::sm_tensor, dim::Int32, size::Int64, step::Int64,
                                    out::Ref{sm_tensor})::sm_status
sm_diagonal(t, offset, dim1, dim2, out) =
    @ccall libstridemem().sm_diagonal(t::sm_tensor, offset::Int64, dim1::Int32, dim2::Int32,
                                      out::Ref{sm_tensor})::sm_status
sm_split(t, split_size, dim, outs, capacity, count) =
    @ccall libstridemem().sm_split(t::sm_tensor, split_size::Int64, dim::Int32,
                                   outs::Ptr{sm_tensor}, capacity::Int32,
                                   count::Ref{Int32})::sm_status
sm_chunk(t, chunks, dim, outs, capacity, count) =
    @ccall libstridemem().sm_chunk(t::sm_tensor, chunks::Int32, dim::Int32,
                                   outs::Ptr{sm_tensor}, capacity::Int32,
                                   count::Ref{Int32})::sm_status
sm_flip(t, dims, n, out) =
    @ccall libstridemem().sm_flip(t::sm_tensor, dims::Ptr{Int32}, n::Int32,
                                  out::Ref{sm_tensor})::sm_status

# ---------------------------------------------------------------------------
# Copies
# ---------------------------------------------------------------------------

sm_reshape_would_copy(t, shape, ndim, out) =
    @ccall libstridemem().sm_reshape_would_copy(t::sm_tensor, shape::Ptr{Int64}, ndim::Int32,
                                                out::Ref{Cint})::sm_status
sm_reshape(t, shape, ndim, out, copied) =
    @ccall libstridemem().sm_reshape(t::sm_tensor, shape::Ptr{Int64}, ndim::Int32,
                                     out::Ref{sm_tensor}, copied::Ref{Cint})::sm_status
sm_contiguous(t, format, out, copied) =
    @ccall libstridemem().sm_contiguous(t::sm_tensor, format::sm_memory_format,
                                        out::Ref{sm_tensor}, copied::Ref{Cint})::sm_status
sm_clone(t, format, out) =
    @ccall libstridemem().sm_clone(t::sm_tensor, format::sm_memory_format,
                                   out::Ref{sm_tensor})::sm_status
sm_to(t, device, dtype, out, copied) =
    @ccall libstridemem().sm_to(t::sm_tensor, device::sm_device, dtype::sm_dtype,
                                out::Ref{sm_tensor}, copied::Ref{Cint})::sm_status
sm_copy_into(dst, src) =
    @ccall libstridemem().sm_copy_into(dst::sm_tensor, src::sm_tensor)::sm_status
sm_index_select(t, dim, index, out) =
    @ccall libstridemem().sm_index_select(t::sm_tensor, dim::Int32, index::sm_tensor,
                                          out::Ref{sm_tensor})::sm_status

# ---------------------------------------------------------------------------
# In-place ops
# ---------------------------------------------------------------------------

sm_inplace_scalar(t, op, a, b) =
    @ccall libstridemem().sm_inplace_scalar(t::sm_tensor, op::sm_op, a::Cdouble,
                                            b::Cdouble)::sm_status
sm_inplace_tensor(t, op, other, alpha) =
    @ccall libstridemem().sm_inplace_tensor(t::sm_tensor, op::sm_op, other::sm_tensor,
                                            alpha::Cdouble)::sm_status

# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------

sm_memory_stats(device, out) =
    @ccall libstridemem().sm_memory_stats(device::sm_device,
                                          out::Ref{sm_memory_stats_t})::sm_status
sm_reset_peak_stats(device) =
    @ccall libstridemem().sm_reset_peak_stats(device::sm_device)::sm_status
sm_empty_cache(device) =
    @ccall libstridemem().sm_empty_cache(device::sm_device)::sm_status
sm_memory_summary(device, buf, len, needed) =
    @ccall libstridemem().sm_memory_summary(device::sm_device, buf::Ptr{UInt8},
                                            len::Csize_t, needed::Ref{Csize_t})::sm_status
sm_memory_snapshot(device, buf, len, needed) =
    @ccall libstridemem().sm_memory_snapshot(device::sm_device, buf::Ptr{UInt8},
                                             len::Csize_t, needed::Ref{Csize_t})::sm_status
sm_push_tag(tag) =
    @ccall libstridemem().sm_push_tag(tag::Cstring)::sm_status
sm_pop_tag() =
    @ccall libstridemem().sm_pop_tag()::sm_status
sm_memory_record_history(device, max_events) =
    @ccall libstridemem().sm_memory_record_history(device::sm_device,
                                                   max_events::Int64)::sm_status
sm_set_oom_observer(observer, user_data) =
    @ccall libstridemem().sm_set_oom_observer(observer::sm_oom_observer,
                                              user_data::Ptr{Cvoid})::sm_status

# ---------------------------------------------------------------------------
# Stack of views
# ---------------------------------------------------------------------------

sm_stack_create(device, capacity_bytes, out) =
    @ccall libstridemem().sm_stack_create(device::sm_device, capacity_bytes::Int64,
                                          out::Ref{sm_stack})::sm_status
sm_stack_push(s, shape, ndim, dtype, out) =
    @ccall libstridemem().sm_stack_push(s::sm_stack, shape::Ptr{Int64}, ndim::Int32,
                                        dtype::sm_dtype, out::Ref{sm_tensor})::sm_status
sm_stack_mark(s, mark) =
    @ccall libstridemem().sm_stack_mark(s::sm_stack, mark::Ref{Int64})::sm_status
sm_stack_pop_to(s, mark) =
    @ccall libstridemem().sm_stack_pop_to(s::sm_stack, mark::Int64)::sm_status
sm_stack_used(s, used_bytes, capacity_bytes) =
    @ccall libstridemem().sm_stack_used(s::sm_stack, used_bytes::Ref{Int64},
                                        capacity_bytes::Ref{Int64})::sm_status
sm_stack_release(s) =
    @ccall libstridemem().sm_stack_release(s::sm_stack)::sm_status
sm_stack_create_shared(capacity_bytes, out) =
    @ccall libstridemem().sm_stack_create_shared(capacity_bytes::Int64,
                                                 out::Ref{sm_stack})::sm_status
sm_stack_storage(s, out) =
    @ccall libstridemem().sm_stack_storage(s::sm_stack, out::Ref{sm_storage})::sm_status

# ---------------------------------------------------------------------------
# Processes: storages shared with other processes (Linux)
# ---------------------------------------------------------------------------

sm_empty_shared(shape, ndim, dtype, out) =
    @ccall libstridemem().sm_empty_shared(shape::Ptr{Int64}, ndim::Int32, dtype::sm_dtype,
                                          out::Ref{sm_tensor})::sm_status
sm_share_memory(t) =
    @ccall libstridemem().sm_share_memory(t::sm_tensor)::sm_status
sm_is_shared(t, out) =
    @ccall libstridemem().sm_is_shared(t::sm_tensor, out::Ref{Cint})::sm_status
sm_storage_export(s, desc, fd) =
    @ccall libstridemem().sm_storage_export(s::sm_storage, desc::Ref{sm_share_desc},
                                            fd::Ref{Cint})::sm_status
sm_tensor_export(t, desc, fd) =
    @ccall libstridemem().sm_tensor_export(t::sm_tensor, desc::Ref{sm_share_desc},
                                           fd::Ref{Cint})::sm_status
sm_storage_import(desc, fd, out) =
    @ccall libstridemem().sm_storage_import(desc::Ref{sm_share_desc}, fd::Cint,
                                            out::Ref{sm_storage})::sm_status
sm_storage_is_shared(s, out) =
    @ccall libstridemem().sm_storage_is_shared(s::sm_storage, out::Ref{Cint})::sm_status

# ---------------------------------------------------------------------------
# Streams, devices, threads
# ---------------------------------------------------------------------------

sm_set_stream(device, cuda_stream) =
    @ccall libstridemem().sm_set_stream(device::sm_device, cuda_stream::Ptr{Cvoid})::sm_status
sm_get_stream(device, cuda_stream) =
    @ccall libstridemem().sm_get_stream(device::sm_device,
                                        cuda_stream::Ref{Ptr{Cvoid}})::sm_status
sm_synchronize(device) =
    @ccall libstridemem().sm_synchronize(device::sm_device)::sm_status
sm_record_stream(t, cuda_stream) =
    @ccall libstridemem().sm_record_stream(t::sm_tensor, cuda_stream::Ptr{Cvoid})::sm_status
sm_set_num_threads(n) =
    @ccall libstridemem().sm_set_num_threads(n::Int32)::sm_status
sm_get_num_threads(out) =
    @ccall libstridemem().sm_get_num_threads(out::Ref{Int32})::sm_status

# ---------------------------------------------------------------------------
# DLPack
# ---------------------------------------------------------------------------

sm_to_dlpack(t, versioned, managed) =
    @ccall libstridemem().sm_to_dlpack(t::sm_tensor, versioned::Cint,
                                       managed::Ref{Ptr{Cvoid}})::sm_status
# device: a Ref{sm_device}, or C_NULL for the tensor's own device.
sm_to_dlpack_ex(t, flags, device, managed, copied) =
    @ccall libstridemem().sm_to_dlpack_ex(t::sm_tensor, flags::UInt32, device::Ptr{sm_device},
                                          managed::Ref{Ptr{Cvoid}}, copied::Ref{Cint})::sm_status
sm_from_dlpack(managed, versioned, out) =
    @ccall libstridemem().sm_from_dlpack(managed::Ptr{Cvoid}, versioned::Cint,
                                         out::Ref{sm_tensor})::sm_status

# ---------------------------------------------------------------------------
# Testing hooks
# ---------------------------------------------------------------------------

sm_debug_fail_alloc(n) =
    @ccall libstridemem().sm_debug_fail_alloc(n::Int64)::sm_status
sm_debug_live_handles(tensors, storages, stacks) =
    @ccall libstridemem().sm_debug_live_handles(tensors::Ref{Int64}, storages::Ref{Int64},
                                                stacks::Ref{Int64})::sm_status
sm_debug_age_handle_slot(released, generations_left) =
    @ccall libstridemem().sm_debug_age_handle_slot(released::Ptr{Cvoid},
                                                   generations_left::Int64)::sm_status

# Everything above is this module's API.
for name in names(@__MODULE__; all = true)
    s = string(name)
    if startswith(s, "sm_") || startswith(s, "SM_")
        @eval export $name
    end
end
export libstridemem, SMDevice, MemoryStats, SMOomInfo, ShareDescriptor

end # module LibStrideMem
