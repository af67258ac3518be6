# The stack of views: O(1) LIFO tensors; popped tensors are detected.

@testset "push, mark, pop" begin
    s = SMStack(4096)
    @test stack_used(s) == (used = 0, capacity = 4096)
    m = stack_mark(s)
    a = push_tensor!(s, Float32, 4, 4)
    @test a isa StridedTensor{Float32,2} && size(a) == (4, 4)
    @test UInt(pointer(a)) % LibStrideMem.SM_STACK_ALIGNMENT == 0
    fill!(a, 1.0f0)
    @test all(==(1.0f0), Array(a))
    b = push_tensor!(s, Float64, 10)
    @test UInt(pointer(b)) % LibStrideMem.SM_STACK_ALIGNMENT == 0
    used = stack_used(s).used
    @test used >= 64 + 80
    err = try
        push_tensor!(s, Float64, 10_000)    # past capacity
        nothing
    catch e
        e
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OUT_OF_MEMORY
    @test stack_used(s).used == used        # nothing changed
    v = view(a, 1:2, :)
    @test v[1, 1] == 1.0f0
    pop_to!(s, m)
    @test stack_used(s).used == 0
    # popped tensors and their views are invalid, never silently reused
    @test_throws StrideMemError a[1, 1]
    @test_throws StrideMemError v[1, 1]
    @test_throws StrideMemError Array(b)
    c = push_tensor!(s, Float32, 4, 4)      # reuses the popped region
    fill!(c, 2.0f0)
    @test_throws StrideMemError a[1, 1]
    release!(a)                             # release still works on them
    release!(v)
    release!(b)
    @test Array(c) == fill(2.0f0, 4, 4)
    release!(s)                             # c stays valid and pins the buffer
    @test Array(c) == fill(2.0f0, 4, 4)
    release!(s)
    @test isreleased(s)
    release!(c)
end
