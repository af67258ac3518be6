# The convention: Julia dims/strides are the C shape/strides reversed, so
# Julia A[i, j] is C element [j-1, i-1] and Julia dim d is C dim N - d.

@testset "same memory, reversed metadata" begin
    # C row-major (2, 3) holding 0..5, seen as Julia (3, 2)
    A = reshape(arange(Int64, 0, 1, 6), 3, 2)
    @test size(A) == (3, 2)
    @test strides(A) == (1, 3)
    for r in 0:1, c in 0:2
        @test A[c+1, r+1] == 3r + c     # C element [r, c]
    end
    @test Array(A) == reshape(collect(0:5), 3, 2)
    # the C side sees the reversed shape and strides
    shape = Vector{Int64}(undef, 2)
    cstrides = Vector{Int64}(undef, 2)
    @test LibStrideMem.sm_shape(A, shape, Int32(2)) == LibStrideMem.SM_OK
    @test LibStrideMem.sm_strides(A, cstrides, Int32(2)) == LibStrideMem.SM_OK
    @test shape == [2, 3]
    @test cstrides == [3, 1]
end

@testset "Julia dims are converted to C dims" begin
    M = reshape(collect(1.0:12.0), 3, 4)
    A = StridedTensor(M)
    @test Array(narrow(A, 1, 2, 2)) == M[2:3, :]
    @test Array(narrow(A, 2, 3, 2)) == M[:, 3:4]
    @test Array(selectdim(A, 2, 4)) == M[:, 4]
    @test Array(selectdim(A, 1, 1)) == M[1, :]
end

@testset "an Array and its wrap agree" begin
    M = rand(Float32, 4, 5)
    W = wrap(M)
    @test strides(W) == strides(M)
    @test pointer(W) == pointer(M)
    @test Base.unsafe_convert(Ptr{Float32}, W) == pointer(M)
    @test Base.elsize(typeof(W)) == 4
    @test stride(W, 2) == 4 && stride(W, 3) == 20
    T = swapdims(W, 1, 2)
    @test Array(T) == permutedims(M)
    @test strides(T) == (4, 1)
    @test Base.mightalias(T, W)
    @test !Base.mightalias(T, StridedTensor(M))
end
