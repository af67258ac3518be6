# Memory statistics and the caching allocator.

"""
    memory_stats(device = cpu()) -> MemoryStats

The device's allocator statistics (`sm_memory_stats`): `allocated_bytes`,
`reserved_bytes`, their peaks, `num_allocs`, `num_frees`, `cache_hits`,
`device_allocs`, `device_frees`, `active_views`, `active_storages`,
`requested_bytes`.
"""
function memory_stats(d::SMDevice = cpu())
    r = Ref(MemoryStats())
    check(sm_memory_stats(d, r))
    return r[]
end

"""
    reset_peak_stats!(device = cpu())

Peaks restart from the current values.
"""
reset_peak_stats!(d::SMDevice = cpu()) = (check(sm_reset_peak_stats(d)); nothing)

"""
    empty_cache!(device = cpu())

Returns every unused cached block to the system (never a live one).
"""
empty_cache!(d::SMDevice = cpu()) = (check(sm_empty_cache(d)); nothing)

"""
    memory_summary(device = cpu()) -> String

The library's readable table of the statistics.
"""
memory_summary(d::SMDevice = cpu()) =
    read_text((buf, len, need) -> sm_memory_summary(d, buf, len, need))

# A text under the C API's "needed" convention: ask for the size, then call
# again until the buffer holds the whole text (it may grow between calls).
function read_text(call)
    need = Ref{Csize_t}(0)
    check(call(Ptr{UInt8}(C_NULL), Csize_t(0), need))
    while true
        len = need[]
        buf = Base.zeros(UInt8, len)
        GC.@preserve buf check(call(pointer(buf), len, need))
        # written: need[] bytes, the NUL last (the text may also have shrunk)
        need[] <= len && return String(buf[1:need[]-1])
    end
end

"""
    live_handles() -> (tensors, storages, stacks)

Number of live handles of each kind in the whole process (leak checks;
`sm_debug_live_handles`).
"""
function live_handles()
    t = Ref{Int64}(0)
    s = Ref{Int64}(0)
    k = Ref{Int64}(0)
    check(sm_debug_live_handles(t, s, k))
    return (tensors = Int(t[]), storages = Int(s[]), stacks = Int(k[]))
end

"""
    debug_fail_alloc!(n)

Fault injection: the `n`-th data allocation from now (1-based, any device)
fails as if out of memory; `n <= 0` disables.
"""
debug_fail_alloc!(n::Integer) = (check(sm_debug_fail_alloc(Int64(n))); nothing)
