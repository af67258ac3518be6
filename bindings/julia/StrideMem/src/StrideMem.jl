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
include("json.jl")
include("memory.jl")
include("stack.jl")
include("share.jl")
include("interop.jl")

# The version of the C API this package was written for. 0.x: the minor
# version must match too (semver's rule for 0.x releases).
const BINDING_VERSION = v"0.4.0"

# Exported: names no common package exports. Public but NOT exported, so
# that `using StrideMem` next to those packages leaves their names usable
# (call these qualified, `StrideMem.to(A, StrideMem.cpu())`, or import them by
# name, `using StrideMem: to, cpu`):
#   BFloat16               BFloat16s.jl exports one (and Julia >= 1.11 has Core.BFloat16)
#   to, device             CUDA.jl exports `device`; `to` is too short a word to take
#   cpu                    Flux.jl exports `cpu`
#   synchronize            CUDA.jl exports `synchronize`
#   flatten, unsqueeze     MLUtils.jl exports both
#   zeros, ones, fill      Base's (see the top of this module)
# `stack` is not a name of this package: Base.stack exists since Julia 1.9;
# the stack of views is SMStack with push_tensor!, stack_mark, pop_to!.
export StridedTensor, StrideMemError, SMDevice, MemoryStats
export cuda, cuda_host, cuda_device_count, is_host
export release!, isreleased, wrap, arange
export storage_offset, dtype, nbytes, storage_nbytes, data_pointer
export is_contiguous, same_storage, version_counter, is_read_only
export as_strided, narrow, permute, swapdims, movedim, expand, squeeze
export unflatten, unfold, diagonal, split_views, chunk_views, flip
export reshape_would_copy, reshape_or_copy, contiguous, contiguous_copied, clone, to_copied
export copy_into!, index_select
export zero!, add!, sub!, mult!, div!, relu!, neg!, abs!, sqrt!, exp!, sign!
export SMStorage, storage, tensor_from_storage
export memory_stats, reset_peak_stats!, empty_cache!, memory_summary
export memory_snapshot, memory_snapshot_json, with_tag, record_memory_history!
export set_oom_observer!, OomInfo, storage_id
export SMStack, push_tensor!, stack_mark, pop_to!, stack_used
export ShareDescriptor, empty_shared, share_memory!, is_shared, export_shared, import_shared
export set_stream!, get_stream, record_stream, set_num_threads!, num_threads
export to_dlpack, to_dlpack_ex, from_dlpack, library_version

# The public names above that are deliberately not exported (test/library.jl
# checks both lists).
const UNEXPORTED_PUBLIC = (:BFloat16, :to, :device, :cpu, :synchronize, :flatten, :unsqueeze,
                           :zeros, :ones, :fill)
# Julia >= 1.11 records them as public API (`public` is a syntax error in 1.9
# and 1.10, hence the expression rather than the keyword).
@static if VERSION >= v"1.11"
    eval(Expr(:public, UNEXPORTED_PUBLIC...))
end

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

# The SONAME of the ABI of version `v`, which an installed runtime library
# always has: major.minor while the major version is 0, where every minor
# version may break the ABI (libstridemem.so.0.4), else the major alone
# (SOVERSION in CMakeLists.txt).
_soname(v::VersionNumber) =
    "libstridemem.so." * (v.major == 0 ? "$(v.major).$(v.minor)" : "$(v.major)")

# The names the dynamic loader is asked for: the development link
# (libstridemem.so; dlopen adds the platform's extension) and this binding's
# SONAME.
const _LIBRARY_NAMES = ["libstridemem", _soname(BINDING_VERSION)]

# The library of the repository's own build (cmake -S . -B build).
_repository_library() = joinpath(_repository_root(), "build", "libstridemem." * Libdl.dlext)

# The full path of the library the dynamic loader finds on the system's search
# path (LD_LIBRARY_PATH, the ld.so cache, /usr/lib, ...), or "" when it finds
# none. find_library returns the name that loaded; dlpath turns it into a path.
function _system_library()
    name = Libdl.find_library(_LIBRARY_NAMES)
    return isempty(name) ? "" : Libdl.dlpath(name)
end

# What pkg-config is asked, as the Python loader and the Rust build script ask
# it: the installed package's library folder (an install into any prefix is
# found with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig).
const _PKG_CONFIG_ARGS = ["--variable=libdir", "stridemem"]

# The library in the folder pkg-config names for the package stridemem, or ""
# when pkg-config is not installed, does not know the package, or names a
# folder without the library. `pkg_config` is the binary (nothing: none).
function _pkg_config_library(; pkg_config = Sys.which("pkg-config"))
    pkg_config === nothing && return ""
    libdir = try
        readchomp(pipeline(`$pkg_config $_PKG_CONFIG_ARGS`; stderr = devnull))
    catch
        return ""  # no package stridemem on its search path (it exits 1)
    end
    isempty(libdir) && return ""
    path = joinpath(libdir, "libstridemem." * Libdl.dlext)
    return isfile(path) ? abspath(path) : ""
end

"""
    _find_library(; env = ENV, pkg_config_library = _pkg_config_library,
                  system_library = _system_library,
                  repository_library = _repository_library()) -> String

The path of the libstridemem to load, from the first of (the order of the
Python and Rust bindings):

1. `env["STRIDEMEM_LIB"]`, the library file's path. When it is set it is the
   only place looked at: a path that is not a file is an error (a typo must
   not silently load another library).
2. pkg-config: `libstridemem.so` in `pkg-config --variable=libdir stridemem`
   (`_PKG_CONFIG_ARGS`), i.e. an install into any prefix, found with
   `PKG_CONFIG_PATH=<prefix>/lib/pkgconfig`.
3. The system's library search path: `Libdl.find_library` of the names in
   `_LIBRARY_NAMES`: `libstridemem` and the SONAME
   `libstridemem.so.0.4`, i.e. an installed library (`cmake --install` into a
   standard prefix) or one in a folder of `LD_LIBRARY_PATH`.
4. The repository's build, `build/libstridemem.so` (`.dylib` on macOS) four
   folders up from `src/`.

When none has it, the error lists the four places and what to do. The
keywords are there for the tests: they replace the environment and the
three look-ups.
"""
function _find_library(; env = ENV, pkg_config_library = _pkg_config_library,
                       system_library = _system_library,
                       repository_library::AbstractString = _repository_library())
    path = get(env, "STRIDEMEM_LIB", "")
    if !isempty(path)
        isfile(path) || error("StrideMem: ENV[\"STRIDEMEM_LIB\"] = $(repr(path)) is not a file. " *
                              "When set, it is the only place looked at: set it to the path " *
                              "of libstridemem, or unset it to search the system and the " *
                              "repository's build.")
        return abspath(path)
    end
    found = pkg_config_library()
    isempty(found) || return found
    found = system_library()
    isempty(found) || return found
    isfile(repository_library) && return repository_library
    error("StrideMem: libstridemem not found. Tried, in order:\n" *
          "  1. ENV[\"STRIDEMEM_LIB\"]: not set\n" *
          "  2. pkg-config $(join(_PKG_CONFIG_ARGS, ' ')): no such package, or no " *
          "libstridemem.$(Libdl.dlext) in its libdir (PKG_CONFIG_PATH=" *
          "$(get(env, "PKG_CONFIG_PATH", "")))\n" *
          "  3. the system library search path: Libdl.find_library($(_LIBRARY_NAMES)) " *
          "found nothing\n" *
          "  4. the repository's build: $(repository_library): no such file\n" *
          "Do one of: build it in the repository (cmake -S . -B build && cmake --build build); " *
          "install it (cmake --install build --prefix <prefix>) and set " *
          "PKG_CONFIG_PATH=<prefix>/lib/pkgconfig, or install it where the dynamic loader " *
          "looks (or add its folder to LD_LIBRARY_PATH); or set ENV[\"STRIDEMEM_LIB\"] to " *
          "the library file's path. Then load the package again.")
end

function __init__()
    path = _find_library()
    Libdl.dlopen(path)  # a clear error now rather than at the first call
    LibStrideMem._LIBPATH[] = path
    _DELETER[] = @cfunction(_blob_deleter, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}))
    _OOM_TRAMPOLINE[] = @cfunction(_oom_trampoline, Cvoid, (Ptr{sm_oom_info}, Ptr{Cvoid}))
    v = library_version()
    compatible = v.major == BINDING_VERSION.major &&
                 (v.major != 0 || v.minor == BINDING_VERSION.minor)
    compatible || error("StrideMem: $(path) is libstridemem $(v); this package needs " *
                        "$(BINDING_VERSION.major).$(BINDING_VERSION.minor).x (set " *
                        "ENV[\"STRIDEMEM_LIB\"] to the path of a matching library)")
    return nothing
end

end # module StrideMem
