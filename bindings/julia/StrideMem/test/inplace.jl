# In-place ops write through views, bump the shared version counter, and
# follow PyTorch's dtype rules.

M = reshape(collect(1.0:6.0), 2, 3)

@testset "scalar ops" begin
    A = StridedTensor(M)
    v0 = version_counter(A)
    add!(A, 1.0)
    @test Array(A) == M .+ 1
    @test version_counter(A) > v0
    sub!(A, 1)
    mult!(A, 2)
    @test Array(A) == 2 .* M
    div!(A, 2)
    @test Array(A) == M
    neg!(A)
    @test Array(A) == -M
    abs!(A)
    @test Array(A) == M
    clamp!(A, 2.0, 5.0)
    @test Array(A) == clamp.(M, 2.0, 5.0)
    clamp!(A, nothing, 3.0)
    @test Array(A) == min.(clamp.(M, 2.0, 5.0), 3.0)
    sub!(A, 3)
    relu!(A)
    @test Array(A) == max.(min.(clamp.(M, 2.0, 5.0), 3.0) .- 3, 0)
    B = StridedTensor(M)
    sqrt!(B)
    @test Array(B) ≈ sqrt.(M)
    exp!(B)
    @test Array(B) ≈ exp.(sqrt.(M))
    zero!(B)
    @test all(iszero, Array(B))
    fill!(B, 4)
    @test all(==(4.0), Array(B))
end

@testset "tensor ops broadcast" begin
    A = StridedTensor(M)
    b = StridedTensor([10.0, 20.0])
    add!(A, b; alpha = 2)
    @test Array(A) == M .+ 2 .* [10.0, 20.0]
    sub!(A, b; alpha = 2)
    @test Array(A) == M
    mult!(A, StridedTensor(M))
    @test Array(A) == M .^ 2
    div!(A, StridedTensor(M))
    @test Array(A) == M
    fill!(A, StridedTensor([1.0 2.0 3.0]))
    @test Array(A) == [1.0 2.0 3.0; 1.0 2.0 3.0]
    add!(A, A)                          # other may be the destination itself
    @test Array(A) == [2.0 4.0 6.0; 2.0 4.0 6.0]
end

@testset "writes through views are shared" begin
    A = StridedTensor(M)
    V = view(A, :, 2)
    v1 = version_counter(A)
    fill!(V, 0.0)
    @test Array(A)[:, 2] == [0.0, 0.0]
    @test version_counter(A) > v1
    @test version_counter(V) == version_counter(A)
    v2 = version_counter(A)
    A[1, 1] = 3.0                       # direct element write: not counted
    @test version_counter(A) == v2
    @test Array(A)[1, 1] == 3.0
end

@testset "refusals" begin
    E = expand(StrideMem.zeros(Float64, 3), 3, 4)
    err = try
        fill!(E, 1.0)
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OVERLAP
    I = StridedTensor(Int32[1, 2, 3])
    for f in (() -> add!(I, 0.5), () -> sqrt!(I), () -> div!(I, 2))
        err = try
            f()
            nothing
        catch e
            e
        end
        @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DTYPE
    end
    add!(I, 2)                          # integer arithmetic is fine
    @test Array(I) == Int32[3, 4, 5]
    J = StrideMem.zeros(Int64, 2)
    @test_throws StrideMemError fill!(J, 2^60 + 1)  # not exact as a double
end

@testset "unsigned element types wrap" begin
    U = StridedTensor(UInt16[0, 1, typemax(UInt16), 0x8000])
    add!(U, 2)
    @test Array(U) == UInt16[2, 3, 1, 0x8002]
    sub!(U, 3)
    @test Array(U) == UInt16[0xffff, 0, 0xfffe, 0x7fff]
    mult!(U, 2)
    @test Array(U) == UInt16[0xfffe, 0, 0xfffc, 0xfffe]
    neg!(U)
    @test Array(U) == UInt16[2, 0, 4, 2]
    W = StridedTensor(UInt64[typemax(UInt64), UInt64(2)^63, 0, 5])
    abs!(W)
    relu!(W)                                    # identities on unsigned values
    @test Array(W) == UInt64[typemax(UInt64), UInt64(2)^63, 0, 5]
    clamp!(W, 1, UInt64(2)^63)                  # compares as unsigned
    @test Array(W) == UInt64[UInt64(2)^63, UInt64(2)^63, 1, 5]
    V = StridedTensor(UInt32[typemax(UInt32), 1, 2, 3])
    add!(V, StridedTensor(UInt32[1, 2, 3, 4]); alpha = 3)
    @test Array(V) == UInt32[2, 7, 11, 15]
    for f in (() -> div!(V, 2), () -> sqrt!(V), () -> exp!(V), () -> add!(V, 0.5))
        err = try
            f()
            nothing
        catch e
            e
        end
        @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DTYPE
    end
    @test Array(V) == UInt32[2, 7, 11, 15]      # refused ops write nothing
end

@testset "complex element types" begin
    Z0 = ComplexF64[1 + 2im, -3 + 0.5im, -1im]
    A = StridedTensor(copy(Z0))
    add!(A, 1.5)                                # a real scalar is re + 0im
    sub!(A, 0.5)
    mult!(A, -2)
    div!(A, 4)
    neg!(A)
    @test Array(A) == (Z0 .+ 1) .* -2 ./ 4 .* -1
    B = StridedTensor(copy(Z0))
    mult!(B, 1im)                               # a complex scalar: a 0-d tensor
    @test Array(B) == Z0 .* 1im
    add!(B, 2 - 1im)
    sub!(B, 0.5im)
    @test Array(B) == Z0 .* 1im .+ (2 - 1im) .- 0.5im
    div!(B, 2 - 1im)
    @test Array(B) ≈ (Z0 .* 1im .+ (2 - 1im) .- 0.5im) ./ (2 - 1im)
    fill!(B, 3 - 4im)
    @test all(==(3 - 4im), Array(B))
    C = StridedTensor(ComplexF32[1 + 1im, 0.5 - 2im])
    mult!(C, ComplexF32(0, 1))
    @test Array(C) == ComplexF32[-1 + 1im, 2 + 0.5im]
    S = StridedTensor(ComplexF64[-4, 3 + 4im, 2im])
    sqrt!(S)
    @test Array(S) ≈ ComplexF64[2im, 2 + 1im, 1 + 1im]
    E = StridedTensor(ComplexF64[0, pi * im, 1 + pi / 2 * im])
    exp!(E)
    @test Array(E) ≈ exp.(ComplexF64[0, pi * im, 1 + pi / 2 * im]) atol = 1e-14
    # Tensor operands, broadcast through a view, alpha real.
    T = StridedTensor(reshape(ComplexF64.(1:6, 1:6), 2, 3))
    V = view(T, :, 2:3)
    add!(V, StridedTensor(ComplexF64[1im, 2]); alpha = 2)
    @test Array(T)[:, 2:3] == reshape(ComplexF64.(3:6, 3:6), 2, 2) .+ 2 .* ComplexF64[1im, 2]
    mult!(T, StridedTensor(ComplexF64[1im, 1]))
    @test Array(T)[1, 1] == (1 + 1im) * 1im
    add!(T, StridedTensor([1.0, 2.0]))          # a real operand: imaginary part 0
    @test Array(T)[2, 1] == 2 + 2im + 2
    zero!(T)
    @test all(iszero, Array(T))
    # Refused: clamp!, relu!, abs! (SM_ERR_DTYPE); nothing written.
    R = StridedTensor(copy(Z0))
    v0 = version_counter(R)
    for f in (() -> clamp!(R, 0, 1), () -> relu!(R), () -> abs!(R))
        err = try
            f()
            nothing
        catch e
            e
        end
        @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DTYPE
    end
    @test Array(R) == Z0 && version_counter(R) == v0
    # A complex value for a real tensor must be real; a complex tensor
    # operand is refused except by fill!, which keeps the real part.
    F = StridedTensor([1.0, 2.0])
    @test_throws StrideMemError add!(F, 1 + 1im)
    @test_throws StrideMemError fill!(F, 2im)
    err = try
        add!(F, StridedTensor(ComplexF64[1im]))
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DTYPE
    @test Array(F) == [1.0, 2.0]
    add!(F, 3 + 0im)                            # imaginary part 0: a real scalar
    @test Array(F) == [4.0, 5.0]
    fill!(F, StridedTensor(ComplexF64[7 - 1im]))
    @test Array(F) == [7.0, 7.0]
end

@testset "sign!" begin
    F = StridedTensor([-2.5, -0.0, 0.0, 3.0, Inf, -Inf, NaN])
    sign!(F)
    got = Array(F)
    @test got[1:6] == [-1.0, 0.0, 0.0, 1.0, 1.0, -1.0]
    @test !signbit(got[2])                      # -0.0 gives +0.0 (Julia's sign keeps -0.0)
    @test isnan(got[7])
    S = StridedTensor(Int8[typemin(Int8), -1, 0, 1, typemax(Int8)])
    sign!(S)
    @test Array(S) == Int8[-1, -1, 0, 1, 1]
    U = StridedTensor(UInt64[0, 1, UInt64(2)^63, typemax(UInt64)])
    sign!(U)
    @test Array(U) == UInt64[0, 1, 1, 1]
    B = StridedTensor([true, false])
    sign!(B)                                    # the identity, as PyTorch's sign_ on bool
    @test Array(B) == [true, false]
    # Through a transposed, reversed view: every element of the parent.
    T = StridedTensor(Float32[-3 0 5; -1 2 -8])
    sign!(flip(swapdims(T, 1, 2), 1))
    @test Array(T) == Float32[-1 0 1; -1 1 -1]
    Z = StridedTensor(ComplexF64[1 + 2im])
    err = try
        sign!(Z)
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DTYPE
    @test occursin("sgn", err.message)
    @test Array(Z) == ComplexF64[1 + 2im]
end
