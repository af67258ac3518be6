# Views share the storage and never copy; every result is a new StridedTensor
# that holds its parent.

M0 = reshape(collect(1.0:24.0), 4, 6)

@testset "indexing views" begin
    A = StridedTensor(M0)
    V = view(A, 2:3, 1:2:5)
    @test V isa StridedTensor{Float64,2}
    @test Array(V) == M0[2:3, 1:2:5]
    @test size(V) == (2, 3)
    @test strides(V) == (1, 8)
    @test storage_offset(V) == 1
    @test same_storage(V, A)
    @test V.parent === A                # the child holds its parent
    V[1, 1] = -5.0
    @test A[2, 1] == -5.0               # writes are shared
    M = Array(A)
    R = view(A, 4:-1:1, :)
    @test strides(R) == (-1, 4)
    @test Array(R) == M[4:-1:1, :]
    @test Array(view(A, :, 6:-2:1)) == M[:, 6:-2:1]
    @test Array(view(A, 4:-3:1, 2)) == M[4:-3:1, 2]
    c = view(A, :, 3)
    @test size(c) == (4,) && Array(c) == M[:, 3]
    r = view(A, 2, :)
    @test size(r) == (6,) && strides(r) == (4,) && Array(r) == M[2, :]
    s = view(A, 2, 3)
    @test size(s) == () && s[] == M[2, 3]
    e = view(A, 3:2, :)
    @test size(e) == (0, 6)
    @test same_storage(view(A, :, :), A)
    @test_throws BoundsError view(A, 0:2, :)
    @test_throws BoundsError view(A, 5, :)
    # Other indices: Base's SubArray over A (what view gives any AbstractArray), no copy
    G = view(A, [1, 3], :)
    @test G isa SubArray && parent(G) === A
    @test G == M[[1, 3], :]
    mask = [true, false, true, true]
    @test view(A, mask, 2) == M[mask, 2]
    @test view(A, 2:3, [6, 1]) == M[2:3, [6, 1]]
    @test_throws BoundsError view(A, [1, 5], :)
    G[2, 1] = 42.0                      # writes go to A's memory
    @test A[3, 1] == 42.0
end

@testset "getindex copies ranges, returns elements for integers" begin
    A = StridedTensor(M0)
    G = A[1:2, :]
    @test G isa StridedTensor
    @test !same_storage(G, A)
    @test Array(G) == M0[1:2, :]
    @test A[2, 3] == M0[2, 3]
    @test A[Int32(2), 3] == M0[2, 3]
    @test A[7] == M0[7]                 # linear indexing
end

@testset "reshape" begin
    A = StridedTensor(M0)
    R = reshape(A, 8, 3)
    @test Array(R) == reshape(M0, 8, 3)
    @test same_storage(R, A)
    @test size(reshape(A, :, 2)) == (12, 2)
    @test reshape(A, :, 2) isa StridedTensor && same_storage(reshape(A, 3, :), A)
    @test_throws DimensionMismatch reshape(A, 5, :)  # 24 is not a multiple of 5
    @test Array(vec(A)) == vec(M0)
    @test_throws DimensionMismatch reshape(A, 5, 5)  # Base's error for a wrong count
    T = swapdims(A, 1, 2)
    @test reshape_would_copy(T, 24)
    @test !reshape_would_copy(A, 24)
    # No strides make T flat: Base's lazy wrapper over T, as for any AbstractArray.
    F = reshape(T, 24)
    @test F isa Base.ReshapedArray && parent(F) === T
    @test F == vec(permutedims(M0))
    @test vec(T) isa Base.ReshapedArray
    @test reshape(T, :, 2) == reshape(permutedims(M0), 12, 2)
    B, copied = reshape_or_copy(T, 24)
    @test copied && !same_storage(B, A)
    @test Array(B) == vec(permutedims(M0))
    B2, copied2 = reshape_or_copy(A, 24)
    @test !copied2 && same_storage(B2, A)
    F[2] = -1.0                         # F[2] is T[2, 1], which is A[1, 2]
    @test A[1, 2] == -1.0
end

@testset "as_strided" begin
    x = StridedTensor(collect(1.0:6.0))
    S = as_strided(x, (2, 2), (1, 2), 1)
    @test Array(S) == [2.0 4.0; 3.0 5.0]
    @test same_storage(S, x)
    @test_throws StrideMemError as_strided(x, (3, 3), (1, 3), 0)  # escapes the storage
end

@testset "permute, movedim, swapdims" begin
    X = reshape(collect(1:24), 2, 3, 4)
    A = StridedTensor(X)
    Q = permute(A, (3, 1, 2))
    @test size(Q) == (4, 2, 3)
    @test Array(Q) == permutedims(X, (3, 1, 2))
    @test same_storage(Q, A)
    P = permutedims(A, (2, 3, 1))
    @test !same_storage(P, A)
    @test Array(P) == permutedims(X, (2, 3, 1))
    @test Array(movedim(A, 1, 3)) == permutedims(X, (2, 3, 1))
    @test Array(movedim(A, (1, 2), (2, 3))) == permutedims(X, (3, 1, 2))
    @test Array(swapdims(A, 1, 3)) == permutedims(X, (3, 2, 1))
    @test_throws StrideMemError permute(A, (1, 1, 2))
end

@testset "expand" begin
    v = StridedTensor([1.0, 2.0, 3.0])
    E = expand(v, 3, 4)                 # new trailing Julia dim
    @test size(E) == (3, 4)
    @test strides(E) == (1, 0)
    @test Array(E) == repeat([1.0, 2.0, 3.0], 1, 4)
    row = StridedTensor([1.0 2.0])
    E2 = expand(row, 3, -1)             # size-1 dim grows, -1 keeps
    @test Array(E2) == [1.0 2.0; 1.0 2.0; 1.0 2.0]
    @test strides(E2)[1] == 0
    @test same_storage(E2, row)
end

@testset "squeeze, unsqueeze, dropdims" begin
    X = StridedTensor(reshape(collect(1.0:6.0), 1, 3, 1, 2))
    @test size(squeeze(X)) == (3, 2)
    @test size(squeeze(X; dims = 1)) == (3, 1, 2)
    @test size(squeeze(X; dims = (1, 3))) == (3, 2)
    @test size(squeeze(X; dims = 2)) == (1, 3, 1, 2)  # size 3: left as it is
    @test size(dropdims(X; dims = 3)) == (1, 3, 2)
    @test_throws StrideMemError dropdims(X; dims = 2)
    v = StridedTensor([1.0, 2.0, 3.0])
    @test size(unsqueeze(v, 1)) == (1, 3)
    @test size(unsqueeze(v, 2)) == (3, 1)
    @test Array(unsqueeze(v, 1)) == [1.0 2.0 3.0]
end

@testset "flatten, unflatten" begin
    X = reshape(collect(1:24), 2, 3, 4)
    A = StridedTensor(X)
    @test Array(flatten(A, 1, 2)) == reshape(X, 6, 4)
    @test Array(flatten(A, 2, 3)) == reshape(X, 2, 12)
    @test Array(flatten(A)) == vec(X)
    @test Array(unflatten(flatten(A, 1, 2), 1, (2, 3))) == X
    @test Array(unflatten(A, 3, (2, -1))) == reshape(X, 2, 3, 2, 2)
    @test_throws StrideMemError flatten(swapdims(A, 1, 3))  # not expressible as a view
end

@testset "unfold" begin
    x = StridedTensor(collect(1.0:7.0))
    W = unfold(x, 1, 3, 2)              # windows of 3, 2 apart
    @test size(W) == (3, 3)             # (window elements, window count)
    @test Array(W) == [1.0 3.0 5.0; 2.0 4.0 6.0; 3.0 5.0 7.0]
    @test same_storage(W, x)
end

@testset "diagonal" begin
    M = reshape(collect(1.0:12.0), 3, 4)
    A = StridedTensor(M)
    @test Array(diagonal(A)) == [M[1, 1], M[2, 2], M[3, 3]]
    @test Array(diagonal(A; offset = 1)) == [M[1, 2], M[2, 3], M[3, 4]]
    @test Array(diagonal(A; offset = -1)) == [M[2, 1], M[3, 2]]
    @test same_storage(diagonal(A), A)
end

@testset "split_views, chunk_views" begin
    x = StridedTensor(collect(1:10))
    parts = split_views(x, 4; dims = 1)
    @test length(parts) == 3
    @test [Array(p) for p in parts] == [1:4, 5:8, 9:10]
    @test all(p -> same_storage(p, x), parts)
    ch = chunk_views(x, 3; dims = 1)
    @test [length(c) for c in ch] == [4, 4, 2]
    M = reshape(collect(1:12), 3, 4)
    cols = split_views(StridedTensor(M), 2; dims = 2)
    @test [Array(c) for c in cols] == [M[:, 1:2], M[:, 3:4]]
end

@testset "flip" begin
    x = StridedTensor(collect(1:10))
    f = flip(x)
    @test Array(f) == collect(10:-1:1)
    @test strides(f) == (-1,)
    @test same_storage(f, x)
    M = reshape(collect(1:12), 3, 4)
    @test Array(flip(StridedTensor(M), 2)) == M[:, end:-1:1]
    @test Array(flip(StridedTensor(M))) == M[end:-1:1, end:-1:1]
end
