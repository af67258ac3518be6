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

# ---------------------------------------------------------------------------
# Seeing memory: snapshots, tags, history, the out-of-memory observer
# ---------------------------------------------------------------------------

"""
    memory_snapshot_json(device = cpu()) -> String

Everything the device's caching allocator holds, as the JSON document
`sm_memory_snapshot` writes (`docs/MEMORY_SNAPSHOT.md`; `tools/memviz`
draws it, `write("snap.json", memory_snapshot_json())` saves it for that).
[`memory_snapshot`](@ref) gives it parsed.
"""
memory_snapshot_json(d::SMDevice = cpu()) =
    read_text((buf, len, need) -> sm_memory_snapshot(d, buf, len, need))

"""
    memory_snapshot(device = cpu()) -> Dict{String,Any}

[`memory_snapshot_json`](@ref) read by the package's own JSON reader
(objects are `Dict{String,Any}`, arrays `Vector{Any}`, integers `Int64`,
other numbers `Float64`, `null` is `nothing`). Its keys
(`docs/MEMORY_SNAPSHOT.md`):

- `"format"` (`"stridemem.memory_snapshot"`), `"version"` (1), `"device"`
  (`"cpu:0"`, `"cuda:N"`), `"device_type"`, `"device_index"`, `"time_us"`,
  `"start_unix_us"`;
- `"totals"`: the [`memory_stats`](@ref) fields, read in the same instant as
  the segments;
- `"fragmentation"`: `"cached_free_bytes"`, `"largest_free_block"`,
  `"ratio"` (1 - largest / cached free), `"pools"` (`"small"`, `"large"`)
  and `"unusable"`;
- `"tags"`: the holders of allocated bytes by tag, largest first (`"tag"`:
  the path, `nothing` when untagged; `"allocated_bytes"`,
  `"requested_bytes"`, `"blocks"`);
- `"segments"`: each allocation from the system (`"address"` a hex string,
  `"size"`, `"pool"`, `"stream"`, `"allocated_bytes"`) with the `"blocks"`
  tiling it (`"offset"`, `"size"`, `"requested"`, `"state"`, `"storage"`:
  the holder's [`storage_id`](@ref), `"tag"`, `"seq"`, `"time_us"`);
- `"history"`, only while [`record_memory_history!`](@ref) is on.

Later versions may add keys: ignore the ones you do not know.
"""
memory_snapshot(d::SMDevice = cpu()) = parse_json(memory_snapshot_json(d))::Dict{String,Any}

"""
    with_tag(f, name)

Calls `f()` with `name` pushed on the calling thread's tag stack
(`sm_push_tag`), popped when `f` returns or throws (`sm_pop_tag` in a
`finally`); returns what `f` returns. Every block allocated inside carries
the tag path (`with_tag("encoder") do ... with_tag("attn") do` records
`"encoder/attn"`) in [`memory_snapshot`](@ref), the out-of-memory report
and the history.

    W = with_tag("encoder") do
        StrideMem.zeros(Float32, 1024, 1024)
    end

`name`: 1 to 256 bytes of UTF-8 without control characters, at most 256
nested per thread (a `StrideMemError` otherwise, nothing pushed).

The stack belongs to the OS thread, not to the task: the tag is exact when
`f` does not yield. If `f` yields (I/O, `sleep`, `wait`, a lock), other
tasks run on this thread meanwhile and their allocations get the tag too,
and a task started with `Threads.@spawn` may resume on another thread: the
pop then cannot reach the stack the tag was pushed on, so `with_tag` throws
a `StrideMemError` saying so (the tag stays pushed on the first thread).
"""
function with_tag(f, name::AbstractString)
    s = String(name)
    occursin('\0', s) && _argument_error("tag $(repr(s)) has a NUL character: tags are text " *
                                         "without control characters")
    tid = Threads.threadid()
    check(sm_push_tag(s))
    try
        return f()
    finally
        if Threads.threadid() == tid
            check(sm_pop_tag())
        else
            _argument_error("with_tag($(repr(s))): the task moved from thread $(tid) to " *
                            "thread $(Threads.threadid()) inside the block, so the tag cannot be " *
                            "popped from the stack it was pushed on; do not yield inside " *
                            "with_tag, or run it in a sticky task (@async)")
        end
    end
end

"""
    record_memory_history!(device, max_events)

Starts recording the device's last `max_events` allocator events (alloc,
free, segment_map, segment_unmap, empty_cache, oom; time, size, address,
tag and the totals after each) into a ring that [`memory_snapshot`](@ref)
includes as `"history"` (`sm_memory_record_history`); `max_events` 1 to
2^24 starts afresh, 0 stops and drops the events. Off by default.
"""
record_memory_history!(d::SMDevice, max_events::Integer) =
    (check(sm_memory_record_history(d, Int64(max_events))); nothing)

"""
    OomInfo

What the out-of-memory observer ([`set_oom_observer!`](@ref)) is given:
`device`, `requested_bytes`, `allocated_bytes`, `reserved_bytes`,
`cached_free_bytes`, `largest_free_block` and `report`, the text the
failing call's `StrideMemError` message carries.
"""
struct OomInfo
    device::SMDevice
    requested_bytes::Int64
    allocated_bytes::Int64
    reserved_bytes::Int64
    cached_free_bytes::Int64
    largest_free_block::Int64
    report::String
end

# Field `name` of the sm_oom_info at p when it ends within the library's
# struct_size, else `default` (an older library's struct may be shorter).
function _oom_field(p::Ptr{sm_oom_info}, size::Integer, name::Symbol, default)
    i = Base.fieldindex(sm_oom_info, name)
    T = fieldtype(sm_oom_info, i)
    offset = fieldoffset(sm_oom_info, i)
    offset + sizeof(T) <= size || return default
    return unsafe_load(Ptr{T}(p + offset))
end

function _oom_info(p::Ptr{sm_oom_info})
    size = unsafe_load(Ptr{UInt32}(p))  # struct_size, the first field
    report = _oom_field(p, size, :report, nothing)
    return OomInfo(_oom_field(p, size, :device, SMDevice(0, 0)),
                   _oom_field(p, size, :requested_bytes, Int64(0)),
                   _oom_field(p, size, :allocated_bytes, Int64(0)),
                   _oom_field(p, size, :reserved_bytes, Int64(0)),
                   _oom_field(p, size, :cached_free_bytes, Int64(0)),
                   _oom_field(p, size, :largest_free_block, Int64(0)),
                   report === nothing || report == C_NULL ? "" : unsafe_string(report))
end

# The observer the trampoline calls, and the trampoline (made with
# @cfunction in __init__). The library always gets the same trampoline, so
# the pointer it was given stays valid whoever installs it. sm_set_oom_observer
# waits for the observer calls in flight, so it is called without _OOM_LOCK:
# an observer replacing the observer while another thread is replacing it
# would otherwise wait for the lock held by that thread's wait for it.
const _OOM_OBSERVER = Ref{Any}(nothing)
const _OOM_TRAMPOLINE = Ref{Ptr{Cvoid}}(C_NULL)
const _OOM_LOCK = ReentrantLock()
const _OOM_CHANGES = Ref{Int}(0)  # counts set_oom_observer! calls, under _OOM_LOCK

# Called by the library before a failing allocation returns; must never
# throw into C.
function _oom_trampoline(info::Ptr{sm_oom_info}, user_data::Ptr{Cvoid})::Cvoid
    try
        f = _OOM_OBSERVER[]
        f === nothing || f(_oom_info(info))
    catch e
        try
            @error("StrideMem: the out-of-memory observer threw (ignored: the allocation " *
                   "still fails with an out-of-memory StrideMemError)",
                   exception = (e, catch_backtrace()))
        catch
        end
    end
    return nothing
end

"""
    set_oom_observer!(f)
    set_oom_observer!(nothing)

Calls `f(info::OomInfo)` when an allocation is about to fail with
`SM_ERR_OUT_OF_MEMORY`, before the failing call throws, on the thread that
asked (`sm_set_oom_observer`); `nothing` removes it. Returns the observer
it replaces. One observer for the whole process (and every binding in it).
`f` may call the library ([`memory_snapshot`](@ref), `release!`); an
allocation that fails inside it does not call it again. An exception
thrown by `f` is logged (`@error`) and never reaches C: the failing call
still throws its `StrideMemError`.

    set_oom_observer!() do info
        @warn "out of memory" info.requested_bytes info.report
    end
"""
function set_oom_observer!(f)
    previous = lock(_OOM_LOCK) do
        p = _OOM_OBSERVER[]
        _OOM_OBSERVER[] = f
        _OOM_CHANGES[] += 1
        p
    end
    # The library's observer follows the newest one here: a call that another
    # thread's change overtook is made again with the newer state.
    while true
        install, seen = lock(_OOM_LOCK) do
            (_OOM_OBSERVER[] !== nothing, _OOM_CHANGES[])
        end
        check(sm_set_oom_observer(install ? _OOM_TRAMPOLINE[] : C_NULL, C_NULL))
        lock(() -> _OOM_CHANGES[] == seen, _OOM_LOCK) && break
    end
    return previous
end
