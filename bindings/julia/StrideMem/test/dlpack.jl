# DLPack export with options and import back (CPU).

M = reshape(collect(1.0:6.0), 2, 3)

@testset "zero-copy export and import" begin
    A = StridedTensor(M)
    B = from_dlpack(to_dlpack(A))
    @test same_storage(B, A) && Array(B) == M
    for copy in (nothing, false)
        m, copied = to_dlpack_ex(A; copy = copy, device = cpu())
        @test !copied
        B = from_dlpack(m)
        @test same_storage(B, A) && pointer(B) == pointer(A)
    end
end

@testset "copy = true: a fresh copy" begin
    A = StridedTensor(M)
    T = swapdims(A, 1, 2)
    for versioned in (true, false)
        m, copied = to_dlpack_ex(T; versioned = versioned, copy = true)
        @test copied
        B = from_dlpack(m; versioned = versioned)
        @test !same_storage(B, A) && Array(B) == permutedims(M)
        @test is_contiguous(B)
        fill!(B, -1.0)
        @test Array(A) == M                      # writes to the copy stay there
    end
end

@testset "copy = false refuses an export that needs a copy" begin
    F = flip(StridedTensor(M), 1)                # a negative stride
    err = try
        to_dlpack_ex(F; normalize = true, copy = false)
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_UNSUPPORTED
    @test occursin("negative", err.message)
    m, copied = to_dlpack_ex(F; normalize = true)
    @test copied
    @test Array(from_dlpack(m)) == Array(F)
    # another device, no copy allowed: refused (SM_ERR_DEVICE without a GPU)
    err = try
        to_dlpack_ex(StridedTensor(M); copy = false, device = cuda(0))
        nothing
    catch e
        e
    end
    @test err isa StrideMemError &&
          err.status in (LibStrideMem.SM_ERR_UNSUPPORTED, LibStrideMem.SM_ERR_DEVICE)
end

@testset "stack tensors export only as a copy" begin
    s = SMStack(4096)
    a = push_tensor!(s, Float64, 3)
    copyto!(a, [1.0, 2.0, 3.0])
    @test_throws StrideMemError to_dlpack_ex(a)
    m, copied = to_dlpack_ex(a; copy = true)
    @test copied
    B = from_dlpack(m)
    release!(a)
    @test Array(B) == [1.0, 2.0, 3.0]
end

@testset "the unsigned and complex element types" begin
    for X in (ComplexF32[1 + 2im 3 - 4im; 5im -6], ComplexF64[1 + 2im, -0.5im],
              UInt16[1, 0xffff], UInt32[7, typemax(UInt32)], UInt64[typemax(UInt64), 2])
        A = StridedTensor(X)
        for versioned in (true, false)
            B = from_dlpack(to_dlpack(A; versioned = versioned); versioned = versioned)
            @test eltype(B) == eltype(X) && same_storage(B, A) && Array(B) == X
        end
        m, copied = to_dlpack_ex(A; copy = true)
        @test copied
        C = from_dlpack(m)
        @test !same_storage(C, A) && Array(C) == X
    end
end
