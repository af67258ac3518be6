# The loaded library, versions, dtypes and the C structs' sizes.

@testset "version" begin
    v = library_version()
    @test v isa VersionNumber
    @test v.major == StrideMem.BINDING_VERSION.major
    @test isfile(LibStrideMem.libstridemem())
end

@testset "dtypes" begin
    for T in (Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64)
        code = StrideMem.dtype_code(T)
        @test LibStrideMem.sm_dtype_size(code) == sizeof(T)
        @test StrideMem.julia_type(code) === T
    end
    @test StrideMem.dtype_name(Float32) == "float32"
    @test StrideMem.dtype_name(BFloat16) == "bfloat16"
    @test LibStrideMem.sm_dtype_size(LibStrideMem.SM_NUM_DTYPES) == 0
    @test_throws StrideMemError StrideMem.dtype_code(ComplexF64)
end

@testset "C struct layouts" begin
    @test sizeof(SMDevice) == 8
    @test isbitstype(SMDevice)
    @test sizeof(MemoryStats) == 168
    @test fieldoffset(MemoryStats, 3) == 8  # allocated_bytes after two uint32
end

@testset "status strings" begin
    @test !isempty(StrideMem.status_name(LibStrideMem.SM_OK))
    @test StrideMem.status_name(LibStrideMem.SM_ERR_SHAPE) !=
          StrideMem.status_name(LibStrideMem.SM_ERR_DTYPE)
    @test StrideMem.status_name(9999) isa String  # codes added later still print
end

@testset "threads and devices" begin
    old = num_threads()
    set_num_threads!(2)
    @test num_threads() == 2
    set_num_threads!(old)
    @test synchronize(cpu()) === nothing
    @test is_host(cpu()) && is_host(cuda_host()) && !is_host(cuda(0))
    @test sprint(show, cuda(1)) == "cuda(1)"
    @test cuda_device_count() >= 0
end
