# Seeing memory (issue 14): the JSON reader, snapshots that agree with
# memory_stats, tags that show in the blocks and are popped after an
# exception, the history on and off, the out-of-memory observer, storage ids.

using StrideMem: parse_json, JSONError

# Whether parse_json refuses text with a JSONError (any other exception, or
# none, is a failure of the reader).
function json_refused(text)
    try
        parse_json(text)
        return false
    catch e
        return e isa JSONError
    end
end

json_error_offset(text) =
    try
        parse_json(text)
        -1
    catch e
        e isa JSONError ? e.offset : -2
    end

# The block of the snapshot held by the storage with this id, or nothing.
function block_of(snap, id)
    found = [b for s in snap["segments"] for b in s["blocks"]
             if b["storage"] !== nothing && b["storage"] == id]
    return isempty(found) ? nothing : only(found)
end

tag_of(snap, A) = block_of(snap, storage_id(A))["tag"]

# The value of f(), or the exception it threw.
outcome(f) =
    try
        f()
    catch e
        e
    end

@testset "JSON reader: values" begin
    @test parse_json("null") === nothing
    @test parse_json(" \t\r\ntrue \n") === true
    @test parse_json("false") === false
    @test parse_json("0") === Int64(0)
    @test parse_json("-0") === Int64(0)
    @test parse_json("42") === Int64(42)
    @test parse_json("9223372036854775807") === typemax(Int64)
    @test parse_json("-9223372036854775808") === typemin(Int64)
    @test parse_json("9223372036854775808") === 9.223372036854775808e18
    @test parse_json("0.5") === 0.5
    @test parse_json("1e3") === 1000.0
    @test parse_json("1E+3") === 1000.0
    @test parse_json("25e-2") === 0.25
    @test parse_json("0.000000") === 0.0
    @test parse_json("\"\"") == ""
    @test parse_json("\"plain ascii\"") == "plain ascii"
    # "\"\\\/\b\f\n\r\t" in JSON
    @test parse_json("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"") == "\"\\/\x08\x0c\n\r\t"
    @test parse_json("\"\\u0041\\u00e9\\u4E2D\"") == "Aé中"
    @test parse_json("\"a\\u0000b\"") == "a\0b"
    @test parse_json("\"\\uD83D\\uDE00\"") == "😀"         # a surrogate pair: one character
    @test parse_json("\"\\ud83d\\ude00x\"") == "😀x"
    @test parse_json("\"\\uDBFF\\uDFFF\"") == "\U10FFFF"
    @test parse_json("\"é中😀\"") == "é中😀"                # raw UTF-8 passes through
    @test parse_json("[]") == Any[]
    @test parse_json(" { } ") == Dict{String,Any}()
    v = parse_json("{\"a\": [1, {\"b\": null}, \"c\"], \"d\": {\"e\": -2.5}, \"f\": true}")
    @test v isa Dict{String,Any}
    @test v["a"] isa Vector{Any} && length(v["a"]) == 3
    @test v["a"][2]["b"] === nothing
    @test v["d"]["e"] === -2.5
    @test v["f"] === true
    @test parse_json("{\"z\": 1, \"a\": 2, \"z\": 3}")["z"] == 3  # a repeated name: the last
    @test parse_json("{\"\\u0061\\n\": 1}")["a\n"] == 1
end

@testset "JSON reader: refusals" begin
    for text in ("", "   ", "nul", "tru", "True", "NULL", "nan", "Infinity", "undefined", "truex",
                 "\ufeffnull", "\u00a0null", "\x0cnull",
                 "01", "-01", "00", "+1", ".5", "1.", "1.e3", "-", "--1", "1e", "1e+", "0x10",
                 "1_000", "- 1", "1.5.2", "1e400", "-1e400",
                 "\"unterminated", "\"\\", "\"\\x41\"", "\"\\U0041\"", "\"\\u12\"", "\"\\u12G4\"",
                 "\"\\uD83D\"", "\"\\uD83Dx\"", "\"\\uD83D\\u0041\"", "\"\\uD83D\\uD83D\"",
                 "\"\\uDE00\"", "\"\\uDE00\\uD83D\"", "\"tab\there\"", "\"new\nline\"",
                 "\"\x1f\"", "'single'",
                 "[", "]", "[1", "[1,", "[1,]", "[,1]", "[1 2]", "[1,,2]", "{", "}",
                 "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,\"a\":1}", "{\"a\" 1}",
                 "{\"a\":1 \"b\":2}", "{a:1}", "{1:1}", "{\"a\":1]", "[\"a\"}", "[1] [2]",
                 "1 2", "null null", "{}x", "[]]", "\"a\" \"b\"")
        @test json_refused(text)
    end
    @test json_error_offset("[1, 2,]") == 6
    @test json_error_offset("\"a\x01b\"") == 2
    @test json_refused(String(UInt8[0x22, 0xff, 0x22]))  # not UTF-8
    @test sprint(showerror, JSONError(6, "x")) == "JSONError: invalid JSON at byte 6: x"
end

@testset "JSON reader: depth and prefixes" begin
    limit = StrideMem.JSON_MAX_DEPTH
    @test parse_json("["^limit * "]"^limit) isa Vector{Any}
    @test json_refused("["^(limit + 1) * "]"^(limit + 1))
    @test json_refused("{\"a\":"^(limit + 1) * "1" * "}"^(limit + 1))
    @test json_refused("["^1_000_000)  # an error, not a stack overflow
    doc = "{\"k\": [1, -2.5e3, \"s\\u00e9\\uD83D\\uDE00\\n\", true, false, null, {\"x\": {}}], " *
          "\"é\": \"ü\"}"
    @test parse_json(doc)["é"] == "ü"
    for n in 1:length(doc)-1
        @test json_refused(first(doc, n))
    end
end

@testset "snapshot totals equal memory_stats" begin
    settle!()
    keep = [StrideMem.zeros(Float32, 1000), StrideMem.zeros(Float64, 5, 3),
            StrideMem.zeros(UInt8, 1 << 19)]
    dropped = StrideMem.zeros(Float32, 2000)
    release!(dropped)  # its block stays cached
    GC.enable(false)   # no finalizer may free a storage between the two reads
    snap, st = try
        (memory_snapshot(), memory_stats())
    finally
        GC.enable(true)
    end
    @test snap["format"] == "stridemem.memory_snapshot"
    @test snap["version"] == 1
    @test snap["device"] == "cpu:0" && snap["device_type"] == 1 && snap["device_index"] == 0
    for name in fieldnames(MemoryStats)
        name in (:struct_size, :reserved0, :reserved) && continue
        @test snap["totals"][String(name)] == getfield(st, name)
    end
    segments = snap["segments"]
    blocks = [b for s in segments for b in s["blocks"]]
    allocated = filter(b -> b["state"] == "allocated", blocks)
    free = filter(b -> b["state"] != "allocated", blocks)
    @test sum(Int64[s["size"] for s in segments]) == st.reserved_bytes
    @test sum(Int64[b["size"] for b in allocated]) == st.allocated_bytes
    @test sum(Int64[b["requested"] for b in allocated]) == st.requested_bytes
    for s in segments
        offset = 0
        for b in s["blocks"]
            @test b["offset"] == offset  # the blocks tile the segment
            offset += b["size"]
        end
        @test offset == s["size"]
        @test s["pool"] in ("small", "large")
    end
    frag = snap["fragmentation"]
    @test frag["cached_free_bytes"] == sum(Int64[b["size"] for b in free])
    @test frag["cached_free_bytes"] > 0
    @test frag["largest_free_block"] == maximum(Int64[b["size"] for b in free])
    @test sort(collect(keys(frag["pools"]))) == ["large", "small"]
    @test sum(Int64[t["allocated_bytes"] for t in snap["tags"]]) == st.allocated_bytes
    for A in keep
        b = block_of(snap, storage_id(A))
        @test b !== nothing
        @test b["state"] == "allocated"
        @test b["requested"] == nbytes(A)
        @test b["size"] >= nbytes(A) && b["size"] % LibStrideMem.SM_ALLOC_ROUND == 0
        @test b["tag"] === nothing
    end
    gone = storage_id(keep[1])
    release!(keep[1])
    @test block_of(memory_snapshot(), gone) === nothing
    @test startswith(memory_snapshot_json(), "{\"format\":\"stridemem.memory_snapshot\"")
    if cuda_device_count() == 0
        @test_throws StrideMemError memory_snapshot(cuda(0))
    end
end

@testset "storage ids" begin
    A = StrideMem.zeros(Float32, 4, 4)
    V = view(A, 1:2, 1:4)
    C = copy(A)
    @test storage_id(A) >= 1
    @test storage_id(A) isa UInt64
    @test storage_id(V) == storage_id(A)      # a view shares its base's storage
    @test storage_id(C) != storage_id(A)
    @test storage_id(C) > storage_id(A)       # ids are never reused
    s = storage(A)
    @test storage_id(s) == storage_id(A)
    release!(s)
    @test_throws StrideMemError storage_id(s)
    st = SMStack(1024)
    P = push_tensor!(st, Float32, (4,))
    @test_throws StrideMemError storage_id(P)  # a stack tensor has no storage of its own
end

@testset "with_tag" begin
    A, B, C = with_tag("encoder") do
        a = StrideMem.zeros(Float32, 300)
        b = with_tag(() -> StrideMem.zeros(Float32, 301), "attn")
        (a, b, StrideMem.zeros(Float32, 302))
    end
    D = StrideMem.zeros(Float32, 303)
    snap = memory_snapshot()
    @test tag_of(snap, A) == "encoder"
    @test tag_of(snap, B) == "encoder/attn"
    @test tag_of(snap, C) == "encoder"
    @test tag_of(snap, D) === nothing
    holders = Dict(t["tag"] => t for t in snap["tags"] if t["tag"] !== nothing)
    @test holders["encoder/attn"]["blocks"] >= 1
    @test holders["encoder/attn"]["allocated_bytes"] >= nbytes(B)
    @test with_tag(() -> 42, "value") == 42  # returns what f returns

    # An exception inside: it propagates and the tag is popped.
    err = outcome() do
        with_tag("outer") do
            with_tag("failing") do
                error("boom")
            end
        end
    end
    @test err isa ErrorException && err.msg == "boom"
    E = StrideMem.zeros(Float32, 304)
    F = with_tag(() -> StrideMem.zeros(Float32, 305), "after")
    snap = memory_snapshot()
    @test tag_of(snap, E) === nothing    # nothing left pushed
    @test tag_of(snap, F) == "after"     # not nested in a popped scope

    G = with_tag(() -> StrideMem.zeros(Float32, 306), "kodierer-é")
    @test tag_of(memory_snapshot(), G) == "kodierer-é"

    # Refused names push nothing.
    for name in ("", "a\x01b", "a\nb", "x"^257, "a\0b")
        @test_throws StrideMemError with_tag(() -> nothing, name)
    end
    H = StrideMem.zeros(Float32, 307)
    @test tag_of(memory_snapshot(), H) === nothing
end

@testset "history" begin
    settle!()
    @test !haskey(memory_snapshot(), "history")
    record_memory_history!(cpu(), 8)
    A = with_tag(() -> StrideMem.zeros(Float64, 4096), "hist")
    release!(A)
    h = memory_snapshot()["history"]
    @test h["enabled"] === true
    @test h["capacity"] == 8
    @test 1 <= length(h["events"]) <= 8
    allocs = filter(e -> e["action"] == "alloc" && e["tag"] == "hist", h["events"])
    frees = filter(e -> e["action"] == "free" && e["tag"] == "hist", h["events"])
    @test length(allocs) == 1 && allocs[1]["requested"] == 4096 * 8
    @test length(frees) == 1 && frees[1]["address"] == allocs[1]["address"]
    times = Int64[e["time_us"] for e in h["events"]]
    @test issorted(times)  # oldest first
    for n in 1:20
        release!(StrideMem.zeros(Float32, 10 + n))
    end
    h = memory_snapshot()["history"]
    @test length(h["events"]) == 8
    @test h["dropped"] == h["recorded"] - 8
    record_memory_history!(cpu(), 0)
    @test !haskey(memory_snapshot(), "history")
    @test_throws StrideMemError record_memory_history!(cpu(), -1)
    @test_throws StrideMemError record_memory_history!(cpu(), (1 << 24) + 1)
    @test !haskey(memory_snapshot(), "history")
end

@testset "out-of-memory observer" begin
    seen = OomInfo[]
    inside = Int64[]
    previous = set_oom_observer!() do info
        push!(seen, info)
        # the observer may call the library
        push!(inside, memory_snapshot()["totals"]["allocated_bytes"])
    end
    @test previous === nothing
    keep = StrideMem.zeros(Float32, 1000)
    settle!()
    empty_cache!()
    GC.enable(false)  # no finalizer may change the numbers before the failure
    before, err = try
        b = memory_stats()
        StrideMem.debug_fail_alloc!(1)
        (b, outcome(() -> StrideMem.zeros(Float32, 3000)))
    finally
        StrideMem.debug_fail_alloc!(0)
        GC.enable(true)
    end
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OUT_OF_MEMORY
    @test length(seen) == 1
    info = seen[1]
    @test info.device == cpu()
    @test info.requested_bytes == 3000 * 4
    @test info.allocated_bytes == before.allocated_bytes
    @test info.reserved_bytes == before.reserved_bytes
    @test info.cached_free_bytes == before.reserved_bytes - before.allocated_bytes
    @test 0 <= info.largest_free_block <= info.cached_free_bytes
    @test occursin("out of memory", info.report) && occursin("12000", info.report)
    @test endswith(err.message, info.report)   # the error carries the report
    @test inside == [info.allocated_bytes]

    # An observer that throws: logged, the call still fails as out of memory,
    # and the library goes on.
    thrower = info -> error("observer bug")
    @test set_oom_observer!(thrower) isa Function
    StrideMem.debug_fail_alloc!(1)
    err = @test_logs (:error, r"out-of-memory observer threw") begin
        outcome(() -> StrideMem.zeros(Float32, 3001))
    end
    StrideMem.debug_fail_alloc!(0)
    @test err isa StrideMemError && err.status == LibStrideMem.SM_ERR_OUT_OF_MEMORY
    @test size(StrideMem.zeros(Float32, 3002)) == (3002,)

    # nothing removes it.
    @test set_oom_observer!(nothing) === thrower
    StrideMem.debug_fail_alloc!(1)
    err = outcome(() -> StrideMem.zeros(Float32, 3003))
    StrideMem.debug_fail_alloc!(0)
    @test err isa StrideMemError
    @test length(seen) == 1
    @test set_oom_observer!(nothing) === nothing
    release!(keep)
end
