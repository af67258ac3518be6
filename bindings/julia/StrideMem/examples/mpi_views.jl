# StrideMem views sent and received in place through MPI.jl: no packing.
#
# A view is sizes + strides (in elements, any sign) + offset + element type
# over one storage; MPI describes memory the same way with derived
# datatypes. `view_datatype(A)` builds the one MPI datatype that lists A's
# elements, relative to A's first element (`data_pointer(A)`), the way the C
# helper include/stridemem_mpi.h (sm_mpi_layout_type) does:
#
#   - size-1 dims are dropped, and dims whose elements form one equally
#     spaced run are merged (also through negative strides), so a view laid
#     out like an Array is one MPI_Type_contiguous;
#   - otherwise the innermost dim (Julia dim 1, the C library's last) is an
#     hvector (a contiguous innermost run becomes the block length of the
#     next dim's hvector), and every further dim wraps it in one more
#     MPI.Types.create_hvector, with its stride in bytes: no resizing and no
#     displacement lists.
#
# The elements go in Julia's linear (column-major) order, which is the C
# library's row-major order of the same tensor, so a view may be received
# into any buffer of as many elements of the same type, whatever its shape.
#
# Not part of the package (MPI.jl is not one of its dependencies): include it
# from a program that loads MPI.jl and StrideMem, or run it as
#     mpiexec -n 2 julia --project=<an environment with MPI and StrideMem> mpi_views.jl
# The repository's CI only parses it (tools/check_julia_syntax.sh).

using MPI
using StrideMem

# Each (size, stride) run of A, Julia dim 1 first, after dropping size-1 dims
# and merging a dim into the run inside it when its stride is the run's
# stride times the run's length.
function layout_runs(A::StridedTensor)
    runs = Tuple{Int,Int}[]
    for d in 1:ndims(A)
        n, s = size(A, d), stride(A, d)
        n == 1 && continue
        if !isempty(runs) && s == runs[end][2] * runs[end][1]
            runs[end] = (runs[end][1] * n, runs[end][2])
        else
            push!(runs, (n, s))
        end
    end
    return runs
end

"""
    view_datatype(A; receive = false) -> MPI.Datatype

A committed MPI datatype (for count 1) holding `A`'s elements in Julia's
linear order, relative to `data_pointer(A)`. With `receive = true` a view whose
elements overlap (an `expand`ed dim, stride 0) or that is read-only is
refused: MPI would write one element twice. (The C helper also settles
overlaps of arbitrary `as_strided` layouts exactly; this sketch only checks
stride 0.)
"""
function view_datatype(A::StridedTensor{T}; receive::Bool = false) where {T}
    runs = layout_runs(A)
    esz = sizeof(T)
    if receive
        any(r -> r[2] == 0, runs) && throw(ArgumentError("receiving into a view whose elements overlap"))
        is_read_only(A) && throw(ArgumentError("receiving into a read-only tensor"))
    end
    for (n, s) in runs
        n <= typemax(Cint) || throw(ArgumentError("a dim of $(n) elements: MPI counts are Cint " *
                                                  "(stridemem_mpi.h splits it; this sketch does not)"))
        # Open MPI reads an hvector stride of -1 byte as "the inner type's
        # extent" and would walk a flipped 1-byte dim forward; the C helper
        # builds such a dim as pairs of elements.
        s * esz == -1 && throw(ArgumentError("a flipped dim of 1-byte elements: use contiguous(A)"))
    end
    elem = MPI.Datatype(T)
    t = if length(A) == 0
        MPI.Types.create_contiguous(0, elem)
    elseif isempty(runs)
        MPI.Types.create_contiguous(1, elem)        # one element (a 0-d view, or all size 1)
    elseif length(runs) == 1 && runs[1][2] == 1
        MPI.Types.create_contiguous(runs[1][1], elem)  # MPI's fast path
    else
        inner = if length(runs) >= 2 && runs[1][2] == 1
            # A contiguous innermost run: the block length of the next dim.
            built = MPI.Types.create_hvector(runs[2][1], runs[1][1], runs[2][2] * esz, elem)
            next = 3
            built
        else
            built = MPI.Types.create_hvector(runs[1][1], 1, runs[1][2] * esz, elem)
            next = 2
            built
        end
        for k in next:length(runs)
            outer = MPI.Types.create_hvector(runs[k][1], 1, runs[k][2] * esz, inner)
            MPI.free(inner)                         # the outer type keeps what it needs
            inner = outer
        end
        inner
    end
    return MPI.Types.commit!(t)
end

"""
    send_view(A, dest, tag, comm)

`MPI.Send` of `A`'s elements straight from its storage (any device a
CUDA-aware MPI takes: `data_pointer` is a device address for CUDA tensors;
synchronize the device first, MPI knows nothing of stridemem's streams).
"""
function send_view(A::StridedTensor, dest::Integer, tag::Integer, comm::MPI.Comm)
    dt = view_datatype(A)
    try
        GC.@preserve A MPI.Send(MPI.Buffer(data_pointer(A), 1, dt), comm; dest = dest, tag = tag)
    finally
        MPI.free(dt)
    end
    return nothing
end

"""
    recv_view!(A, source, tag, comm) -> A

`MPI.Recv!` into `A`'s elements in place, touching no other byte of the
storage. The write is MPI's, not the library's: `version_counter(A)` does not
move.
"""
function recv_view!(A::StridedTensor, source::Integer, tag::Integer, comm::MPI.Comm)
    dt = view_datatype(A; receive = true)
    try
        GC.@preserve A MPI.Recv!(MPI.Buffer(data_pointer(A), 1, dt), comm; source = source, tag = tag)
    finally
        MPI.free(dt)
    end
    return A
end

# A column halo exchange between two ranks: rank 0 sends row 2 of its matrix
# (strided in memory: stride 3 in Julia's column-major terms), rank 1
# receives it into its last row, in place.
function main()
    MPI.Init()
    comm = MPI.COMM_WORLD
    rank = MPI.Comm_rank(comm)
    A = StridedTensor(reshape(collect(1.0:12.0) .+ 100 * rank, 3, 4))
    if rank == 0
        send_view(view(A, 2, :), 1, 7, comm)
    elseif rank == 1
        recv_view!(view(A, 3, :), 0, 7, comm)
        @assert Array(A)[3, :] == [2.0, 5.0, 8.0, 11.0]
        println("rank 1 received row 2 of rank 0 into its row 3: ", Array(A)[3, :])
    end
    MPI.Finalize()
end

abspath(PROGRAM_FILE) == @__FILE__ && main()
