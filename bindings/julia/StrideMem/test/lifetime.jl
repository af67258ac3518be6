# Handles: explicit release, finalizers, views keeping storage alive, and the
# Julia memory behind a zero-copy wrap.

live_tensors() = StrideMem.live_handles().tensors

function collect_garbage(expected)
    for _ in 1:20
        GC.gc(true)
        live_tensors() <= expected && return true
        sleep(0.01)
    end
    return false
end

@testset "release!" begin
    n0 = settle!()
    A = StrideMem.zeros(Float32, 4, 4)
    @test live_tensors() == n0 + 1
    V = view(A, 1:2, :)
    @test live_tensors() == n0 + 2
    @test V.parent === A
    release!(A)
    @test isreleased(A)
    @test live_tensors() == n0 + 1
    release!(A)                         # a second release is a no-op
    close(A)
    @test_throws StrideMemError A[1, 1]
    err = try
        fill!(A, 1.0)
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_INVALID_HANDLE
    @test size(A) == (4, 4)             # metadata stays readable
    @test occursin("released", sprint(show, MIME"text/plain"(), A))
    @test Array(V) == zeros(Float32, 2, 4)  # the view holds the storage
    close(V)
    @test live_tensors() == n0
end

@testset "finalizers release" begin
    n0 = settle!()
    let
        for _ in 1:50
            A = StrideMem.zeros(Float32, 16)
            view(A, 1:4)
        end
    end
    @test collect_garbage(n0)
end

@testset "wrapped Julia memory lives as long as any view" begin
    settle!()
    M = rand(Float64, 100)
    roots0 = StrideMem._rooted_count()
    W = wrap(M)
    @test StrideMem._rooted_count() == roots0 + 1
    V = view(W, 1:10)
    release!(W)
    @test StrideMem._rooted_count() == roots0 + 1  # V still uses M's memory
    @test Array(V) == M[1:10]
    release!(V)
    @test StrideMem._rooted_count() == roots0      # the deleter ran, once
    # by the garbage collector, in any order
    let
        W2 = wrap(rand(Float32, 8, 8))
        view(W2, :, 1)
        flip(W2, 1)
    end
    for _ in 1:20
        GC.gc(true)
        StrideMem._rooted_count() == roots0 && break
        sleep(0.01)
    end
    @test StrideMem._rooted_count() == roots0
end

@testset "storages" begin
    A = StrideMem.zeros(Float32, 2, 8)
    s = storage(A)
    @test nbytes(s) == storage_nbytes(A) == 64
    @test device(s) == cpu()
    @test data_pointer(s) == data_pointer(A)
    T = tensor_from_storage(s, Float32, (4, 4))
    @test same_storage(T, A)
    @test T.parent === s
    T2 = tensor_from_storage(s, Int32, (2,); offset = 3)
    @test storage_offset(T2) == 3
    fill!(view(A, :, 1), 1.0f0)         # A[:, 1] is storage elements 0 and 1
    @test Array(T)[1:2, 1] == [1.0f0, 1.0f0]
    @test_throws StrideMemError tensor_from_storage(s, Float32, (4, 5))  # escapes
    release!(s)
    release!(s)
    @test isreleased(s)
    @test Array(T) == Array(reshape(A, 4, 4))  # tensors hold the storage
end
