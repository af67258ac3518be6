# Run with the library built: installed where the dynamic loader finds it,
# in the repository's build/, or anywhere with STRIDEMEM_LIB set to its path:
#     STRIDEMEM_LIB=$PWD/build/libstridemem.so julia --project=bindings/julia/StrideMem \
#         -e 'using Pkg; Pkg.test()'
using Test
using StrideMem
# Public names the package does not export (they clash with other packages'):
# imported by name, as a user who does not load those packages may.
using StrideMem: LibStrideMem, BFloat16, to, device, cpu, synchronize, flatten, unsqueeze

# Runs the garbage collector until no finalizer is pending, so that handle
# counts taken next are exact (garbage from earlier tests would otherwise be
# released in the middle of a count).
function settle!()
    last = -1
    for _ in 1:20
        GC.gc(true)
        n = StrideMem.live_handles().tensors
        n == last && return n
        last = n
        sleep(0.01)
    end
    return last
end

@testset "StrideMem" begin
    @testset "library" begin
        include("library.jl")
    end
    @testset "bfloat16" begin
        include("bfloat16.jl")
    end
    @testset "creation" begin
        include("creation.jl")
    end
    @testset "layout (row-major C <-> column-major Julia)" begin
        include("layout.jl")
    end
    @testset "views" begin
        include("views.jl")
    end
    @testset "copies" begin
        include("copies.jl")
    end
    @testset "in-place" begin
        include("inplace.jl")
    end
    @testset "lifetime" begin
        include("lifetime.jl")
    end
    @testset "errors" begin
        include("errors.jl")
    end
    @testset "memory" begin
        include("memory.jl")
    end
    @testset "seeing memory" begin
        include("snapshot.jl")
    end
    @testset "stack of views" begin
        include("stack.jl")
    end
    @testset "sharing with other processes" begin
        include("share.jl")
    end
    @testset "dlpack" begin
        include("dlpack.jl")
    end
    @testset "cuda" begin
        include("cuda.jl")
    end
end
