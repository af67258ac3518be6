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
