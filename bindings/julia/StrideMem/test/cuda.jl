# CUDA: on a machine without a usable GPU every CUDA call is refused with
# SM_ERR_DEVICE and the CPU path keeps working; with one, data round-trips.

if cuda_device_count() == 0
    @testset "no usable GPU: SM_ERR_DEVICE, CPU unaffected" begin
        err = try
            StrideMem.zeros(Float32, 4; device = cuda(0))
            nothing
        catch e
            e
        end
        @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DEVICE
        @test !isempty(err.message)
        A = StrideMem.zeros(Float32, 4)
        err2 = try
            to(A, cuda(0))
            nothing
        catch e
            e
        end
        @test err2 isa StrideMemError && err2.status == LibStrideMem.SM_ERR_DEVICE
        @test Array(A) == zeros(Float32, 4)
    end
else
    @testset "GPU round trip" begin
        M = reshape(collect(Float32, 1:12), 3, 4)
        G = to(StridedTensor(M), cuda(0))
        @test device(G) == cuda(0)
        @test data_pointer(G) != C_NULL
        err = try
            G[1, 1]
            nothing
        catch e
            e
        end
        @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_DEVICE
        @test Array(G) == M
        V = swapdims(G, 1, 2)
        @test Array(V) == permutedims(M)
        add!(G, 1)
        synchronize(cuda(0))
        @test Array(G) == M .+ 1
        @test Array(to(V, cpu())) == permutedims(M) .+ 1
        H = to(G, cuda_host())              # pinned memory is host memory
        @test H[2, 3] == M[2, 3] + 1
        @test occursin("cuda(0)", sprint(show, MIME"text/plain"(), G))
    end
end
