# Allocator statistics, the hidden reference, fault injection.

@testset "memory_stats" begin
    settle!()
    st = memory_stats(cpu())
    @test st isa MemoryStats
    @test st.struct_size == sizeof(MemoryStats)
    views0 = st.active_views
    A = StrideMem.zeros(Float32, 1024)
    st2 = memory_stats()
    @test st2.active_views == views0 + 1
    @test st2.allocated_bytes >= 4096
    @test st2.reserved_bytes >= st2.allocated_bytes
    @test st2.num_allocs >= st.num_allocs + 1
    release!(A)
    @test memory_stats().active_views == views0
    reset_peak_stats!()
    p = memory_stats()
    @test p.peak_allocated_bytes == p.allocated_bytes
    empty_cache!()
    e = memory_stats()
    @test e.reserved_bytes >= e.allocated_bytes
    s = memory_summary()
    @test s isa String && !isempty(s)
end

@testset "a small view pins the whole storage" begin
    big = StrideMem.zeros(Float32, 1000, 1000)
    small = view(big, 1:2, 1:2)
    release!(big)
    @test nbytes(small) == 16
    @test storage_nbytes(small) >= 4_000_000
    small_copy = copy(small)
    @test storage_nbytes(small_copy) < 4_000_000  # a copy lets it go
end

@testset "fault injection" begin
    StrideMem.debug_fail_alloc!(1)
    err = try
        StrideMem.zeros(Float32, 10)
        nothing
    catch e
        e
    end
    StrideMem.debug_fail_alloc!(0)
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OUT_OF_MEMORY
    @test size(StrideMem.zeros(Float32, 10)) == (10,)
end
