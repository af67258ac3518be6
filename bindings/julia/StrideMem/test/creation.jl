# Creation: uninitialized, zeros/fill/ones/arange, copies of Julia arrays,
# zero-copy wraps.

@testset "undef" begin
    A = StridedTensor{Float32}(undef, 3, 4)
    @test A isa StridedTensor{Float32,2}
    @test size(A) == (3, 4)
    @test strides(A) == (1, 3)          # laid out like an Array
    @test device(A) == cpu()
    @test is_contiguous(A)
    @test nbytes(A) == 48
    @test storage_offset(A) == 0
    @test dtype(A) == LibStrideMem.SM_FLOAT32
    B = StridedTensor{Int16,2}(undef, (2, 5))
    @test size(B) == (2, 5) && eltype(B) == Int16
end

@testset "undef with strides" begin
    S = StridedTensor{Float64}(undef, (3, 4); strides = (4, 1))  # row-major in Julia terms
    @test strides(S) == (4, 1)
    @test !is_contiguous(S)
    @test is_contiguous(S; format = :preserve)
    @test storage_nbytes(S) == 96
    N = StridedTensor{Float64}(undef, (3,); strides = (-1,))
    @test strides(N) == (-1,)
    @test storage_nbytes(N) == 24
    N .= [1.0, 2.0, 3.0]
    @test Array(N) == [1.0, 2.0, 3.0]
end

@testset "zeros, fill, ones, arange" begin
    Z = StrideMem.zeros(Int32, 2, 5)
    @test Z isa StridedTensor{Int32,2}
    @test Array(Z) == zeros(Int32, 2, 5)
    F = StrideMem.fill(2.5, 3, 2)
    @test eltype(F) == Float64
    @test Array(F) == fill(2.5, 3, 2)
    @test Array(StrideMem.ones(Int16, 4)) == ones(Int16, 4)
    @test Array(StrideMem.fill(BFloat16(1.5), 2)) == [BFloat16(1.5), BFloat16(1.5)]
    R = arange(Float64, 1.0, 0.5, 5)
    @test Array(R) == [1.0, 1.5, 2.0, 2.5, 3.0]
    @test Array(arange(Int64, 10, -3, 4)) == [10, 7, 4, 1]
    @test_throws StrideMemError StrideMem.fill(2^60 + 1, 2)  # not exact as a double
    # The unsigned and complex element types.
    @test Array(StrideMem.zeros(UInt64, 3)) == zeros(UInt64, 3)
    @test Array(StrideMem.ones(ComplexF32, 2, 2)) == ones(ComplexF32, 2, 2)
    C = StrideMem.fill(1.5 - 2.0im, 3)          # written by fill! (sm_full takes a double)
    @test C isa StridedTensor{ComplexF64,1} && Array(C) == fill(1.5 - 2.0im, 3)
    @test Array(StrideMem.fill(ComplexF32(4), 2)) == ComplexF32[4, 4]
    @test Array(StrideMem.fill(UInt32(7), 2)) == UInt32[7, 7]
    @test Array(arange(UInt16, 1, 3, 4)) == UInt16[1, 4, 7, 10]
    @test Array(StrideMem.fill(UInt64(2)^63, 1)) == [UInt64(2)^63]  # exact as a double
end

@testset "copy of a Julia array" begin
    M = reshape(collect(1.0:12.0), 3, 4)
    T = StridedTensor(M)
    @test size(T) == (3, 4)
    @test Array(T) == M
    @test T[2, 3] == M[2, 3]
    M2 = copy(M)
    T2 = StridedTensor(M2)
    M2[1, 1] = 100.0
    @test T2[1, 1] == 1.0               # a copy: independent
    @test Array(StridedTensor{Float32}(M)) == Float32.(M)
    T0 = StridedTensor(fill(7))         # 0-d
    @test size(T0) == ()
    @test T0[] == 7
    @test Array(StridedTensor(BitVector([true, false, true]))) == [true, false, true]
    for E in (Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64,
              UInt16, UInt32, UInt64, ComplexF32, ComplexF64)
        X = E[one(E), zero(E), one(E), one(E)]
        @test Array(StridedTensor(X)) == X
    end
    # Whole ranges and both parts survive the trip, bit for bit.
    U = UInt64[typemax(UInt64), UInt64(2)^63, 0, 12345]
    @test Array(StridedTensor(U)) == U
    @test Array(StridedTensor(UInt16[typemax(UInt16), 0x8000])) == UInt16[typemax(UInt16), 0x8000]
    Z = ComplexF64[1.5 - 2im, -0.0 + 1e-300im, floatmax(Float64) + 0im]
    @test Array(StridedTensor(Z)) == Z
    ZT = StridedTensor(reshape(ComplexF32.(1:6, -(1:6)), 2, 3))
    @test ZT[2, 3] == ComplexF32(6, -6)
    ZT[1, 2] = 9 + 9im                          # direct element write, the C layout
    @test Array(ZT)[1, 2] == ComplexF32(9, 9)
end

@testset "zero-copy wrap" begin
    M = reshape(collect(1.0:12.0), 3, 4)
    W = wrap(M)
    @test pointer(W) == pointer(M)
    @test strides(W) == strides(M)
    W[1, 2] = -1.0
    @test M[1, 2] == -1.0               # the same memory
    M[3, 4] = 99.0
    @test W[3, 4] == 99.0
    fill!(W, 0.5)                       # a library write lands in M
    @test all(==(0.5), M)
    S = view(M, 2:3, 1:2:3)             # a strided Julia view
    WS = wrap(S)
    @test size(WS) == (2, 2)
    @test strides(WS) == strides(S)
    @test Array(WS) == S
    @test_throws StrideMemError wrap(view(M, 3:-1:1, :))  # negative strides: refused
    # Complex arrays wrap as complex tensors; the library writes both parts.
    Z = ComplexF64[1 + 2im, 3 - 4im, 5im]
    WZ = wrap(Z)
    @test eltype(WZ) == ComplexF64 && pointer(WZ) == pointer(Z)
    mult!(WZ, 2)
    @test Z == ComplexF64[2 + 4im, 6 - 8im, 10im]
    WU = wrap(view(UInt32[1, 2, 3, 4, 5], 1:2:5))
    @test Array(WU) == UInt32[1, 3, 5]
end
