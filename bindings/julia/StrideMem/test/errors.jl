# Failures become StrideMemError with the library's status and message.

@testset "StrideMemError" begin
    A = StrideMem.zeros(Float32, 2, 3)
    err = try
        flatten(swapdims(A, 1, 2))      # a transpose cannot be merged into one dim
        nothing
    catch e
        e
    end
    @test err isa StrideMemError
    @test err.status == LibStrideMem.SM_ERR_SHAPE
    @test !isempty(err.message)
    shown = sprint(showerror, err)
    @test occursin("StrideMemError", shown)
    @test occursin(err.message, shown)
end

@testset "argument checks before the call" begin
    A = StrideMem.zeros(Float32, 2, 3)
    @test_throws StrideMemError StridedTensor(ComplexF64[1, 2])
    @test_throws StrideMemError swapdims(A, 1, 3)
    @test_throws StrideMemError narrow(A, 3, 1, 1)
    @test_throws StrideMemError unsqueeze(A, 4)
    @test_throws StrideMemError is_contiguous(A; format = :nonsense)
end

@testset "library checks" begin
    A = StrideMem.zeros(Float32, 2, 3)
    err = try
        narrow(A, 1, 2, 5)
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OUT_OF_BOUNDS
    err = try
        StridedTensor{Float32}(undef, 2, 3; device = SMDevice(42, 0))
        nothing
    catch e
        e
    end
    @test err isa StrideMemError
    @test err.status in (LibStrideMem.SM_ERR_INVALID_ARGUMENT, LibStrideMem.SM_ERR_DEVICE)
end

@testset "raw layer: forged and NULL handles never crash" begin
    n = Ref{Int32}(0)
    forged = LibStrideMem.sm_tensor(UInt(0xdeadbeef0))
    @test LibStrideMem.sm_ndim(forged, n) == LibStrideMem.SM_ERR_INVALID_HANDLE
    @test LibStrideMem.sm_ndim(LibStrideMem.sm_tensor(C_NULL), n) ==
          LibStrideMem.SM_ERR_INVALID_HANDLE
    @test LibStrideMem.sm_tensor_release(LibStrideMem.sm_tensor(C_NULL)) == LibStrideMem.SM_OK
    @test !isempty(StrideMem._cstring(LibStrideMem.sm_last_error()))
end
