# Storages shared with other processes: the descriptor's layout and bytes,
# imports in this process, share_memory! moving a storage under its views
# (element access included), shared stacks, refusals with their status, no
# fd leaked, and a second Julia process that imports an inherited fd.

open_fds() = length(readdir("/proc/self/fd"))
close_fd(fd::RawFD) = close(Base.Filesystem.File(fd))

# The error `f()` throws (nothing if it throws none).
function thrown(f)
    try
        f()
        return nothing
    catch e
        return e
    end
end

function refused(f, status, needle)
    e = thrown(f)
    return e isa StrideMemError && e.status == status && occursin(needle, e.message)
end

# What sm_storage_export seals (FNV-1a 64 over the bytes before the
# checksum), to forge descriptors refused for what they say.
function resealed(d::ShareDescriptor)
    bytes = Vector{UInt8}(d)
    h = 0xcbf29ce484222325
    for b in bytes[1:fieldoffset(ShareDescriptor, fieldcount(ShareDescriptor))]
        h = (h ⊻ UInt64(b)) * 0x00000100000001b3
    end
    bytes[end-7:end] = reinterpret(UInt8, [h])
    return ShareDescriptor(bytes)
end

# A copy of an isbits struct with one field replaced.
function with_field(d::T, name::Symbol, value) where {T}
    args = [f == name ? convert(fieldtype(T, f), value) : getfield(d, f) for f in fieldnames(T)]
    return T(args...)
end

@testset "the descriptor mirrors sm_share_desc" begin
    @test isbitstype(ShareDescriptor)
    @test sizeof(ShareDescriptor) == LibStrideMem.SM_SHARE_DESC_SIZE == 144
    # The header's offsets, field by field (no padding anywhere).
    offsets = (0, 4, 6, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 136)
    @test fieldcount(ShareDescriptor) == length(offsets)
    for (i, o) in enumerate(offsets)
        @test fieldoffset(ShareDescriptor, i) == o
    end
    @test sum(sizeof(fieldtype(ShareDescriptor, i)) for i in 1:fieldcount(ShareDescriptor)) == 144
end

@testset "empty_shared, export, descriptor bytes" begin
    A = empty_shared(Float64, 5, 3)            # C shape (3, 5)
    @test A isa StridedTensor{Float64,2} && size(A) == (5, 3) && strides(A) == (1, 5)
    @test is_shared(A)
    @test Array(A) == zeros(5, 3)              # fresh pages are zero
    desc, fd = export_shared(A)
    @test reinterpret(Cint, fd) >= 0
    @test desc.magic == LibStrideMem.SM_SHARE_MAGIC
    @test desc.format == LibStrideMem.SM_SHARE_FORMAT
    @test desc.struct_size == 144
    @test desc.kind == LibStrideMem.SM_SHARE_MEMFD
    @test desc.device == StrideMem.cpu()
    @test desc.nbytes == 15 * 8 && desc.offset == 0
    @test desc.exporter_pid == getpid()
    v = library_version()
    @test desc.library_version == 10000 * v.major + 100 * v.minor + v.patch
    bytes = Vector{UInt8}(desc)
    @test length(bytes) == 144 && bytes[1:4] == reinterpret(UInt8, [LibStrideMem.SM_SHARE_MAGIC])
    @test ShareDescriptor(bytes) == desc
    @test ShareDescriptor(hex2bytes(bytes2hex(bytes))) == desc
    @test occursin("memfd", sprint(show, desc))
    @test refused(() -> ShareDescriptor(bytes[1:143]), LibStrideMem.SM_ERR_INVALID_ARGUMENT,
                  "144 bytes, got 143")
    s = import_shared(bytes, fd)                # the bytes form works too
    @test nbytes(s) == 120
    release!(s)
    close_fd(fd)
end

@testset "an import in this process sees the same pages" begin
    A = empty_shared(Int32, 6, 4)              # C (4, 6)
    desc, fd = export_shared(A)
    s = import_shared(desc, fd)
    close_fd(fd)                               # the import keeps its own duplicate
    @test is_shared(s)
    @test nbytes(s) == 4 * 6 * 4
    # Julia row 3 of A (C column 2): stride 6 over the import.
    row = tensor_from_storage(s, Int32, (4,); strides = (6,), offset = 2)
    @test data_pointer(row) != data_pointer(view(A, 3, :))   # a second mapping
    fill!(row, Int32(7))
    @test Array(view(A, 3, :)) == fill(Int32(7), 4)
    @test A[3, 2] == 7 && A[2, 2] == 0                        # element access too
    # Version counters stay per storage object, so per process.
    @test version_counter(row) == 1 && version_counter(A) == 0
    add!(A, 1)
    @test Array(row) == fill(Int32(8), 4)
    again, fd2 = export_shared(s)              # an import exports again: the same object
    @test again.object_id == desc.object_id && again.nbytes == desc.nbytes
    close_fd(fd2)
end

@testset "share_memory! moves the storage and every view follows" begin
    A = StridedTensor(reshape(collect(1.0:48.0), 8, 6))
    V = view(A, :, 4)                          # a column: elements 25..32
    T = permute(A, (2, 1))
    @test !is_shared(A) && !is_shared(storage(A))
    @test refused(() -> export_shared(A), LibStrideMem.SM_ERR_UNSUPPORTED, "sm_share_memory")
    before = pointer(A)
    Vbefore = Array(T)
    R = view(A, :, 2)
    release!(R)                                # released before the move
    share_memory!(V)
    @test Base.dataids(R) isa Tuple            # no address to re-read: its last one, no throw
    @test is_shared(A) && is_shared(T) && is_shared(V)
    @test pointer(A) != before                 # the bytes moved...
    @test Array(T) == Vbefore                  # ...once, with their values
    @test V[1] == 25.0                         # element access reads the new pages
    p = pointer(A)
    share_memory!(T)                           # already shared: a no-op
    @test pointer(A) == p
    # Writes through another mapping show through every old view's elements.
    desc, fd = export_shared(A)
    s = import_shared(desc, fd)
    close_fd(fd)
    W = tensor_from_storage(s, Float64, (8, 6))
    W[2, 4] = -1.0
    @test V[2] == -1.0 && A[2, 4] == -1.0 && T[4, 2] == -1.0
    V[3] = -2.0
    @test W[3, 4] == -2.0
    # dataids follow the move: views made before and after alias.
    @test Base.mightalias(V, view(A, :, 1))
end

@testset "share_memory! refuses what it cannot move" begin
    stk = SMStack(4096)
    P = push_tensor!(stk, Float32, 4)
    @test refused(() -> share_memory!(P), LibStrideMem.SM_ERR_UNSUPPORTED, "sm_stack_create_shared")
    @test !is_shared(P)
    J = [1.0f0, 2.0f0, 3.0f0]
    W = wrap(J)                                # Julia's memory: the library does not own it
    @test refused(() -> share_memory!(W), LibStrideMem.SM_ERR_UNSUPPORTED, "sm_empty_shared")
    @test pointer(W) == pointer(J) && Array(W) == J
    A = StrideMem.zeros(UInt8, 8)
    @test refused(() -> export_shared(storage(A)), LibStrideMem.SM_ERR_UNSUPPORTED, "sm_share_memory")
    plain = storage(SMStack(1024))
    @test !is_shared(plain)
    @test refused(() -> export_shared(plain), LibStrideMem.SM_ERR_UNSUPPORTED, "")
    @test refused(() -> SMStack(1024; shared = true, device = cuda(0)),
                  LibStrideMem.SM_ERR_DEVICE, "CPU memory")
end

@testset "a shared stack exports its whole buffer" begin
    stk = SMStack(8192; shared = true)
    a = push_tensor!(stk, UInt8, 10)
    b = push_tensor!(stk, Float64, 3, 2)
    @test is_shared(b)
    whole = storage(stk)
    @test nbytes(whole) == 8192 && is_shared(whole)
    desc, fd = export_shared(whole)
    s = import_shared(desc, fd)
    close_fd(fd)
    b2 = tensor_from_storage(s, Float64, size(b); strides = strides(b), offset = storage_offset(b))
    fill!(b2, 2.5)
    @test Array(b) == fill(2.5, 3, 2)
    viat, fd2 = export_shared(b)               # a pushed tensor exports the whole buffer
    @test viat.object_id == desc.object_id && viat.nbytes == 8192
    close_fd(fd2)
end

@testset "corrupted descriptors and wrong fds are refused" begin
    A = empty_shared(Float32, 1024)
    good, gfd = export_shared(A)
    O = empty_shared(Float32, 1024)            # another storage (it holds an fd of its own)
    other, ofd = export_shared(O)
    n0 = open_fds()
    for at in (1, 9, 17, 31, 51, 81, 136, 141)  # 1-based bytes; the checksum covers them
        bytes = Vector{UInt8}(good)
        bytes[at] ⊻= 0x01
        needle = at <= 4 ? "not a stridemem share descriptor" : "checksum"
        @test refused(() -> import_shared(bytes, gfd), LibStrideMem.SM_ERR_INVALID_ARGUMENT, needle)
    end
    @test refused(() -> import_shared(zeros(UInt8, 144), gfd), LibStrideMem.SM_ERR_INVALID_ARGUMENT, "magic")
    @test refused(() -> import_shared(resealed(with_field(good, :kind, 7)), gfd),
                  LibStrideMem.SM_ERR_INVALID_ARGUMENT, "kind 7")
    @test refused(() -> import_shared(resealed(with_field(good, :library_version, 10000 * (library_version().major + 1))), gfd),
                  LibStrideMem.SM_ERR_UNSUPPORTED, "another major version")
    @test refused(() -> import_shared(resealed(with_field(good, :nbytes, good.object_bytes + 1)), gfd),
                  LibStrideMem.SM_ERR_OUT_OF_BOUNDS, "inside")
    # A regular file of the right size, no fd, another storage's fd.
    mktemp() do path, io
        truncate(io, 4096)
        @test refused(() -> import_shared(good, Base.fd(io)), LibStrideMem.SM_ERR_INVALID_ARGUMENT, "regular file")
    end
    @test refused(() -> import_shared(good), LibStrideMem.SM_ERR_INVALID_ARGUMENT, "not a file descriptor")
    @test refused(() -> import_shared(good, ofd), LibStrideMem.SM_ERR_INVALID_ARGUMENT, "another shared object")
    @test open_fds() == n0                     # no refusal kept an fd
    close_fd(ofd)
    # A CUDA descriptor for a GPU no machine has: a device error, with no fd.
    cudad = with_field(with_field(good, :kind, LibStrideMem.SM_SHARE_CUDA_IPC), :device, cuda(63))
    cudad = resealed(with_field(cudad, :object_bytes, 2 << 20))
    @test refused(() -> import_shared(cudad), LibStrideMem.SM_ERR_DEVICE, "cuda")
    s = import_shared(good, gfd)               # the good one still imports
    @test nbytes(s) == 4096
    close_fd(gfd)
end

@testset "a thousand export/import cycles leak no fd and no handle" begin
    A = empty_shared(Float32, 4096)
    fill!(A, 1.5f0)
    cycle(k) = begin
        desc, fd = export_shared(A)
        s = import_shared(desc, fd)
        close_fd(fd)
        v = tensor_from_storage(s, Float32, (1,); offset = k % 4096)
        ok = v[1] == 1.5f0
        release!(v)
        release!(s)
        ok
    end
    @test cycle(0)                             # warm-up: lazy library state is no leak
    settle!()
    fds = open_fds()
    handles = StrideMem.live_handles()
    @test all(cycle(k) for k in 1:1000)
    @test open_fds() == fds
    @test StrideMem.live_handles() == handles
end

@testset "a second process imports an inherited fd and writes back" begin
    A = empty_shared(Int64, 7, 5)              # C (5, 7)
    fill!(A, 3)
    desc, fd = export_shared(A)
    # The child gets the memfd as its stdin (the fd, not a file: libuv dup2s it
    # to 0 without close-on-exec) and the descriptor as hex. It flips C column
    # 4 (Julia row 5) through a negative stride and writes it.
    code = """
        using StrideMem
        desc = ShareDescriptor(hex2bytes(ENV["STRIDEMEM_TEST_SHARE_DESC"]))
        desc.exporter_pid != getpid() || exit(2)
        s = import_shared(desc, RawFD(0))
        col = tensor_from_storage(s, Int64, (5,); strides = (-7,), offset = 4 * 7 + 4)
        all(==(3), Array(col)) || exit(3)
        copyto!(col, [10, 11, 12, 13, 14])
        exit(0)
        """
    env = copy(ENV)
    env["STRIDEMEM_TEST_SHARE_DESC"] = bytes2hex(Vector{UInt8}(desc))
    env["STRIDEMEM_LIB"] = LibStrideMem.libstridemem()
    # The environment this process loaded StrideMem from (Pkg.test's), so the
    # child loads the very same package.
    cmd = `$(Base.julia_cmd()) --startup-file=no --project=$(Base.active_project()) -e $code`
    p = run(pipeline(setenv(cmd, env); stdin = fd); wait = false)
    wait(p)
    close_fd(fd)
    @test p.exitcode == 0
    @test Array(view(A, 5, :)) == [14, 13, 12, 11, 10]   # the child's writes, flipped
    @test all(==(3), Array(view(A, 1:4, :)))
end
