"""
    StrideMem

Julia bindings for libstridemem: one storage, many strided views, on CPUs and
NVIDIA GPUs, through the library's C ABI.

A `StridedTensor{T,N} <: AbstractArray{T,N}` is one view (one C handle). The
C library is row-major with 0-based dims; this package shows every tensor
with its dims reversed, so the same memory is seen as a column-major Julia
array with no copy:

    C shape (2, 3), strides (3, 1)   <->   Julia size (3, 2), strides (1, 3)
    C element [i, j]                 <->   Julia A[j+1, i+1]
    C dim k (0-based)                <->   Julia dim N - k (1-based)

Every function that takes a dim takes a 1-based Julia dim and converts it.
See the README for the whole convention.
"""
module StrideMem

using Libdl

# Module-level names that shadow Base's on purpose (CUDA.jl style: call them
# qualified, `StrideMem.zeros(Float32, 3, 4)`); declared first so that no
# code below binds Base's by accident.
function zeros end
function ones end
function fill end

include("lib.jl")
using .LibStrideMem

include("bfloat16.jl")
include("errors.jl")
include("dtypes.jl")
include("devices.jl")
include("tensor.jl")
include("creation.jl")
include("views.jl")
include("copies.jl")
include("inplace.jl")
include("storage.jl")
include("memory.jl")
include("stack.jl")
include("interop.jl")

# The version of the C API this package was written for. 0.x: the minor
# version must match too (semver's rule for 0.x releases).
const BINDING_VERSION = v"0.2.0"

export StridedTensor, StrideMemError, SMDevice, MemoryStats, BFloat16
export cpu, cuda, cuda_host, cuda_device_count, is_host
export release!, isreleased, wrap, arange
export storage_offset, dtype, device, nbytes, storage_nbytes, data_pointer
export is_contiguous, same_storage, version_counter, is_read_only
export as_strided, narrow, permute, swapdims, movedim, expand, squeeze, unsqueeze
export flatten, unflatten, unfold, diagonal, split_views, chunk_views, flip
export reshape_would_copy, reshape_or_copy, contiguous, contiguous_copied, clone, to, to_copied
export copy_into!, index_select
export zero!, add!, sub!, mult!, div!, relu!, neg!, abs!, sqrt!, exp!
export SMStorage, storage, tensor_from_storage
export memory_stats, reset_peak_stats!, empty_cache!, memory_summary
export SMStack, push_tensor!, stack_mark, pop_to!, stack_used
export synchronize, set_stream!, get_stream, record_stream, set_num_threads!, num_threads
export to_dlpack, to_dlpack_ex, from_dlpack, library_version

"""
    library_version() -> VersionNumber

The run-time version of the loaded libstridemem (`sm_version`).
"""
function library_version()
    major = Ref{Cint}(0)
    minor = Ref{Cint}(0)
    patch = Ref{Cint}(0)
    check(sm_version(major, minor, patch))
    return VersionNumber(major[], minor[], patch[])
end

function _repository_root()
    # bindings/julia/StrideMem/src -> the repository root
    return normpath(joinpath(@__DIR__, "..", "..", "..", ".."))
end

function _find_library()
    path = get(ENV, "STRIDEMEM_LIB", "")
    if !isempty(path)
        isfile(path) || error("StrideMem: ENV[\"STRIDEMEM_LIB\"] = $(repr(path)) is not a file")
        return abspath(path)
    end
    root = _repository_root()
    for candidate in (joinpath(root, "build", "libstridemem.so"),
                      joinpath(root, "build", "libstridemem.dylib"))
        isfile(candidate) && return candidate
    end
    error("StrideMem: libstridemem not found. Build it (cmake -S . -B build && " *
          "cmake --build build) or set ENV[\"STRIDEMEM_LIB\"] to the library's path.")
end

function __init__()
    path = _find_library()
    Libdl.dlopen(path)  # a clear error now rather than at the first call
    LibStrideMem._LIBPATH[] = path
    _DELETER[] = @cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))
    v = library_version()
    compatible = v.major == BINDING_VERSION.major &&
                 (v.major != 0 || v.minor == BINDING_VERSION.minor)
    compatible || error("StrideMem: $(path) is libstridemem $(v); this package needs " *
                        "$(BINDING_VERSION.major).$(BINDING_VERSION.minor).x")
    return nothing
end

end # module StrideMem
