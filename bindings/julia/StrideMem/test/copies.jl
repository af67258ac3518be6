# Copies: the only calls that allocate tensor data.

M = reshape(collect(1.0:12.0), 3, 4)

@testset "copy, contiguous, clone" begin
    A = StridedTensor(M)
    T = swapdims(A, 1, 2)
    C = copy(T)
    @test C isa StridedTensor{Float64,2}
    @test is_contiguous(C)
    @test strides(C) == (1, 4)
    @test !same_storage(C, A)
    @test Array(C) == permutedims(M)
    @test same_storage(contiguous(A), A)       # already dense: same data
    K = contiguous(T)
    @test !same_storage(K, A) && is_contiguous(K)
    @test Array(K) == permutedims(M)
    P = clone(T)                               # :preserve keeps T's dense order
    @test strides(P) == strides(T)
    @test !same_storage(P, A)
    @test Array(P) == Array(T)
    @test is_contiguous(clone(T; format = :contiguous))
end

@testset "channels_last" begin
    # C NCHW (2, 3, 4, 5) is Julia (5, 4, 3, 2)
    X = StridedTensor(reshape(collect(Float32, 1:120), 5, 4, 3, 2))
    @test !is_contiguous(X; format = :channels_last)
    CL = contiguous(X; format = :channels_last)
    @test is_contiguous(CL; format = :channels_last)
    @test strides(CL)[3] == 1                  # channels fastest
    @test Array(CL) == Array(X)
end

@testset "to: dtype and device" begin
    A = StridedTensor(M)
    F = to(A, Float32)
    @test F isa StridedTensor{Float32,2}
    @test Array(F) == Float32.(M)
    @test Array(to(A, Int32)) == Int32.(M)
    @test Array(to(A, BFloat16)) == BFloat16.(M)
    @test Array(to(A, Float16)) == Float16.(M)
    @test same_storage(to(A, cpu()), A)        # nothing changes: same data
    @test !same_storage(F, A)
end

@testset "to: the unsigned and complex element types" begin
    A = StridedTensor(M)                       # 1.0:12.0
    @test Array(to(A, UInt16)) == UInt16.(M)
    @test Array(to(A, UInt64)) == UInt64.(M)
    C = to(A, ComplexF32)                      # real -> complex: imaginary part 0
    @test C isa StridedTensor{ComplexF32,2} && Array(C) == ComplexF32.(M)
    @test Array(to(C, ComplexF64)) == ComplexF64.(M)
    Z = StridedTensor(ComplexF64[2.75 - 1im, 3im, 0im, -1.5 + 0im])
    @test Array(to(Z, Float32)) == Float32[2.75, 0, 0, -1.5]   # complex -> real: the real part
    @test Array(to(Z, Int32)) == Int32[2, 0, 0, -1]
    @test Array(to(Z, Bool)) == [true, true, false, true]     # either part nonzero
    @test Array(to(Z, ComplexF32)) == ComplexF32.(Array(Z))   # each part rounded once
    # uint64 beyond typemax(Int64) converts by value; signed -> unsigned wraps.
    U = StridedTensor(UInt64[typemax(UInt64), UInt64(2)^63, 7])
    @test Array(to(U, Float64)) == Float64.(Array(U))
    @test Array(to(U, Int64)) == Int64[-1, typemin(Int64), 7]
    @test Array(to(StridedTensor(Int32[-1, -2, 70000]), UInt16)) == UInt16[0xffff, 0xfffe, 4464]
    # copy_into! converts through views.
    D = StrideMem.zeros(ComplexF64, 2, 2)
    copy_into!(D, swapdims(StridedTensor(UInt32[1 2; 3 4]), 1, 2))
    @test Array(D) == ComplexF64[1 3; 2 4]
end

@testset "contiguous_copied and to_copied: the library says whether it copied" begin
    A = StridedTensor(M)
    B, copied = contiguous_copied(A)
    @test !copied && same_storage(B, A) && pointer(B) == pointer(A)
    T = swapdims(A, 1, 2)
    K, copied = contiguous_copied(T)
    @test copied && !same_storage(K, A) && Array(K) == permutedims(M)
    X = StridedTensor(reshape(collect(Float32, 1:120), 5, 4, 3, 2))
    CL, copied = contiguous_copied(X; format = :channels_last)
    @test copied && is_contiguous(CL; format = :channels_last)
    CL2, copied = contiguous_copied(CL; format = :channels_last)
    @test !copied && same_storage(CL2, CL)
    S, copied = to_copied(A, cpu())
    @test !copied && same_storage(S, A)
    S, copied = to_copied(A, Float64)
    @test !copied && same_storage(S, A)
    F, copied = to_copied(A, Float32)
    @test copied && !same_storage(F, A) && Array(F) == Float32.(M)
    F, copied = to_copied(T, cpu(), Int32)
    @test copied && Array(F) == Int32.(permutedims(M))
    # the plain forms return just the tensor
    @test contiguous(T) isa StridedTensor && to(A, Float32) isa StridedTensor
end

@testset "copy_into! and copyto!" begin
    D = StrideMem.zeros(Float64, 3, 4)
    v0 = version_counter(D)
    copy_into!(D, StridedTensor([1.0, 2.0, 3.0]))  # broadcast along Julia dim 2
    @test Array(D) == repeat([1.0, 2.0, 3.0], 1, 4)
    @test version_counter(D) > v0
    copy_into!(D, StridedTensor(fill(Int32(7), 3, 4)))  # converts
    @test all(==(7.0), Array(D))
    copyto!(D, M)
    @test Array(D) == M
    E = StrideMem.zeros(Float64, 3, 4)
    copyto!(E, D)
    @test Array(E) == M
    out = Array{Float64}(undef, 3, 4)
    copyto!(out, StridedTensor(M))
    @test out == M
    @test collect(D) == M
    # overlapping destination (an expanded view) is refused
    x = StrideMem.zeros(Float64, 3)
    err = try
        copy_into!(expand(x, 3, 2), StridedTensor(ones(3, 2)))
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OVERLAP
end

@testset "index_select" begin
    A = StridedTensor(M)
    I = index_select(A, 2, [4, 1, 1])
    @test Array(I) == M[:, [4, 1, 1]]
    @test !same_storage(I, A)
    @test Array(index_select(A, 1, [3, 2])) == M[[3, 2], :]
    @test_throws BoundsError index_select(A, 1, [0])
    @test_throws BoundsError index_select(A, 1, [4])
end

@testset "similar" begin
    A = StridedTensor(M)
    S = similar(A)
    @test S isa StridedTensor{Float64,2} && size(S) == (3, 4)
    S2 = similar(A, Float32, (2, 2))
    @test S2 isa StridedTensor{Float32,2}
    @test similar(A, String, (2,)) isa Vector{String}  # not an element type: an Array
    @test map(x -> 2x, A) == 2 .* M
end
