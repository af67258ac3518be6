"""stridemem tensors between MPI processes through mpi4py (stridemem.mpi).
Run by ctest as ``mpirun --oversubscribe -np 4 python3 mpi_ranks.py``
(tests/CMakeLists.txt); not named test_*.py, so the single-process glob
leaves it alone. Checks, all against NumPy:

- ring: each rank sends random views of every dtype (negative strides,
  expanded views, offsets, selects, permutations) to the next rank, which
  receives them into random views of its own layout; the values equal NumPy's
  view of the sender's data bit for bit and every other byte of the
  receiving storage is unchanged. Sendrecv, Isend/Irecv, and the tensor object
  itself (mpi4py's DLPack path) on one side, message() on the other;
- a 2-D domain decomposition (2 x 2 periodic ranks) whose column halos are
  strided views (derived datatypes) and row halos contiguous tensors (the
  direct path), stepping a Jacobi stencil with stridemem in-place ops: equal
  to a serial NumPy run, bit for bit;
- Bcast / Allreduce / Isend / Irecv of contiguous tensors in place (same data
  pointer, a view made before sees the data, the rest of the storage
  unchanged);
- a receive message keeps its memory alive after the tensor is closed;
- receiving into a stride-0 view is refused on every rank before anything
  is posted;
- the MPI example of bindings/python/README.md, run by pairs of ranks.
Every rank counts its checks; the totals are summed and rank 0 prints them;
every rank exits 1 if any rank failed.
"""

import ctypes
import gc
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Results, import_stridemem  # noqa: E402
import _views as V  # noqa: E402

import numpy as np  # noqa: E402

sm = import_stridemem()
import stridemem.mpi as smpi  # noqa: E402
from mpi4py import MPI  # noqa: E402

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
R = Results("mpi_ranks rank %d" % RANK)


def ring_views():
    dest, source = (RANK + 1) % SIZE, (RANK - 1) % SIZE

    def outgoing(rank, di, trial, dtype):
        rng = np.random.default_rng([1, di, trial, rank])
        shape = V.random_shape(rng)
        rec = V.random_recipe(shape, rng, allow_expand=True)
        return shape, rec, V.random_buffer(dtype, rec["storage"], rng)

    for di, dtype in enumerate(V.DTYPES):
        for trial in range(8):
            shape, srec, sbuf = outgoing(RANK, di, trial, dtype)
            st = V.to_sm(sm, sbuf, dtype)
            sv = V.apply_sm(st, srec)
            # What the previous rank sends, rebuilt from its seed.
            in_shape, in_rec, in_buf = outgoing(source, di, trial, dtype)
            want = V.apply_np(in_buf, in_rec)
            rng = np.random.default_rng([3, di, trial, RANK])
            rrec = V.random_recipe(in_shape, rng, allow_expand=False)
            rbuf = V.random_buffer(dtype, rrec["storage"], rng)
            rt = V.to_sm(sm, rbuf, dtype)
            rv = V.apply_sm(rt, rrec)
            mode = trial % 4
            # mpi4py 3.1 has no type for float16 and sends bfloat16 as bytes:
            # those two always travel as message() (16-bit unsigned bits).
            direct_ok = dtype not in ("float16", "bfloat16")
            what = "%s trial %d mode %d: shape %s from rank %d into strides %s" % (
                dtype, trial, mode, in_shape, source, rv.strides)
            plain = None
            if mode == 0:
                COMM.Sendrecv(smpi.message(sv), dest, recvbuf=smpi.message(rv, recv=True),
                              source=source)
            elif mode == 1:
                reqs = [COMM.Irecv(smpi.message(rv, recv=True), source=source),
                        COMM.Isend(smpi.message(sv), dest=dest)]
                MPI.Request.Waitall(reqs)
            elif mode == 2:
                # A contiguous send goes as the tensor object itself (mpi4py
                # refuses any negative stride, even on a size-1 dim, and
                # checks the strides of an empty tensor too).
                direct = (direct_ok and sv.is_contiguous() and sv.numel > 0
                          and min(sv.strides, default=0) >= 0)
                sendbuf = sv if direct else smpi.message(sv)
                COMM.Sendrecv(sendbuf, dest, recvbuf=smpi.message(rv, recv=True), source=source)
            else:
                # Received into a fresh contiguous tensor as the tensor object.
                plain = sm.zeros(in_shape, dtype=dtype)
                recvbuf = plain if direct_ok else smpi.message(plain, recv=True)
                COMM.Sendrecv(smpi.message(sv), dest, recvbuf=recvbuf, source=source)
                R.check(V.bytes_of(plain.numpy()) == V.bytes_of(want),
                        what + ": values received into a contiguous tensor")
                continue
            ref = rbuf.copy()
            V.apply_np(ref, rrec)[...] = want
            R.check(V.bytes_of(rv.numpy()) == V.bytes_of(want), what + ": received values "
                    "differ from NumPy's view of the sender's data")
            R.check(rt.numpy().tobytes() == ref.tobytes(), what + ": the receiving storage "
                    "changed outside the view")
            R.check(st.numpy().tobytes() == sbuf.tobytes(), what + ": sender's storage changed")


def halo_exchange():
    if SIZE != 4:
        R.fail("halo exchange needs 4 ranks, got %d" % SIZE)
        return
    NY, NX, STEPS = 12, 16, 5
    cart = COMM.Create_cart([2, 2], periods=[True, True], reorder=False)
    py, px = cart.Get_coords(cart.Get_rank())
    ny, nx = NY // 2, NX // 2
    g = np.random.default_rng(99).standard_normal((NY, NX))
    local = sm.zeros((ny + 2, nx + 2), dtype="float64")
    local[1:-1, 1:-1] = g[py * ny:(py + 1) * ny, px * nx:(px + 1) * nx]
    north, south = cart.Shift(0, 1)  # source above, destination below
    west, east = cart.Shift(1, 1)
    ref = g.copy()
    tmp = sm.empty((ny, nx), dtype="float64")
    for step in range(STEPS):
        # Columns: strided views (stride nx + 2), sent and received in place.
        cart.Sendrecv(smpi.message(local[1:-1, -2]), east,
                      recvbuf=smpi.message(local[1:-1, 0], recv=True), source=west)
        cart.Sendrecv(smpi.message(local[1:-1, 1]), west,
                      recvbuf=smpi.message(local[1:-1, -1], recv=True), source=east)
        # Rows: contiguous views, handed to mpi4py as the tensors themselves.
        cart.Sendrecv(local[-2, 1:-1], south, recvbuf=local[0, 1:-1], source=north)
        cart.Sendrecv(local[1, 1:-1], north, recvbuf=local[-1, 1:-1], source=south)
        pad = np.pad(ref, 1, mode="wrap")[py * ny:(py + 1) * ny + 2, px * nx:(px + 1) * nx + 2]
        got = local.numpy()
        for name, sl in (("west ghosts", (slice(1, -1), 0)), ("east ghosts", (slice(1, -1), -1)),
                         ("north ghosts", (0, slice(1, -1))), ("south ghosts", (-1, slice(1, -1)))):
            R.check(np.array_equal(got[sl], pad[sl]), "halo step %d: %s differ from the serial "
                    "grid's neighbours" % (step, name))
        # Jacobi step with stridemem views, in the reference's order of sums.
        tmp.copy_(local[0:-2, 1:-1])
        tmp.add_(local[2:, 1:-1])
        tmp.add_(local[1:-1, 0:-2])
        tmp.add_(local[1:-1, 2:])
        tmp.mul_(0.25)
        local[1:-1, 1:-1].copy_(tmp)
        ref = (((np.roll(ref, 1, 0) + np.roll(ref, -1, 0)) + np.roll(ref, 1, 1))
               + np.roll(ref, -1, 1)) * 0.25
        mine = ref[py * ny:(py + 1) * ny, px * nx:(px + 1) * nx]
        R.check(np.array_equal(local.numpy()[1:-1, 1:-1], mine), "halo step %d: block (%d, %d) "
                "differs from the serial NumPy stencil (max |diff| %g)" % (
                    step, py, px, np.abs(local.numpy()[1:-1, 1:-1] - mine).max()))
    cart.Free()


def direct_collectives():
    # Bcast into the tensor object: in place.
    t = sm.arange(10, dtype="float32") if RANK == 0 else sm.zeros(10, dtype="float32")
    alias, p = t[2:5], t.data_ptr
    COMM.Bcast(t, root=0)
    R.check(np.array_equal(t.numpy(), np.arange(10, dtype=np.float32)), "Bcast values")
    R.equal(t.data_ptr, p, "Bcast: same data pointer")
    R.check(np.array_equal(alias.numpy(), [2, 3, 4]), "Bcast: a view made before sees the data")
    # Allreduce in place (SUM) on a row view of a larger storage.
    store = sm.full((4, 6), -5, dtype="int64")
    row = store[2]
    row.fill_(RANK + 1)
    COMM.Allreduce(MPI.IN_PLACE, row, op=MPI.SUM)
    want = np.full((4, 6), -5)
    want[2] = sum(range(1, SIZE + 1))
    R.check(np.array_equal(store.numpy(), want), "Allreduce SUM in place on a row: the row has "
            "the sum, the rest of the storage is unchanged")
    # Out of place, MAX, float64; and a dense view through message() (its fast path).
    x = sm.from_numpy(np.arange(8.0) * (RANK + 1))
    y = sm.zeros(8, dtype="float64")
    COMM.Allreduce(x, y, op=MPI.MAX)
    R.check(np.array_equal(y.numpy(), np.arange(8.0) * SIZE), "Allreduce MAX out of place")
    big = sm.zeros((3, 8), dtype="float64")
    COMM.Allreduce(smpi.message(x), smpi.message(big[1], recv=True), op=MPI.MIN)
    want = np.zeros((3, 8))
    want[1] = np.arange(8.0)
    R.check(np.array_equal(big.numpy(), want), "Allreduce MIN through message() into a row")
    # Complex and bool reductions on the tensor objects.
    z = sm.from_numpy(np.array([1 + 2j, RANK - 1j], dtype=np.complex128))
    COMM.Allreduce(MPI.IN_PLACE, z, op=MPI.SUM)
    R.check(np.array_equal(z.numpy(), [SIZE * (1 + 2j), sum(range(SIZE)) - SIZE * 1j]),
            "Allreduce SUM complex128")
    b = sm.from_numpy(np.array([RANK == 0, True, False]))
    COMM.Allreduce(MPI.IN_PLACE, smpi.message(b, recv=True), op=MPI.LOR)
    R.check(b.numpy().tolist() == [True, True, False], "Allreduce LOR of bool (C_BOOL)")
    # Isend / Irecv of tensor objects around the ring.
    src = sm.full(5, RANK, dtype="int16")
    dst = sm.zeros(5, dtype="int16")
    reqs = [COMM.Irecv(dst, source=(RANK - 1) % SIZE), COMM.Isend(src, dest=(RANK + 1) % SIZE)]
    MPI.Request.Waitall(reqs)
    R.check(np.array_equal(dst.numpy(), [(RANK - 1) % SIZE] * 5), "Isend/Irecv ring")


def keep_alive():
    gc.collect()
    n0 = sm.debug_live_handles()[0]
    t = sm.full((5, 4), -1.0, dtype="float64")
    col = t[:, 3]
    addr = col.data_ptr
    # A storage handle (not a tensor: the counts below are tensor handles)
    # keeps the bytes readable after Wait, when mpi4py lets the buffer go.
    witness = t.storage()
    req = COMM.Irecv(smpi.message(col, recv=True), source=(RANK - 1) % SIZE)
    col.close()
    t.close()
    gc.collect()
    R.equal(sm.debug_live_handles()[0], n0 + 1, "pending Irecv holds the closed tensor's handle")
    COMM.Barrier()  # every rank has closed its tensor before anything is sent
    COMM.Send(sm.arange(5, dtype="float64").mul_(RANK + 1), dest=(RANK + 1) % SIZE)
    req.Wait()
    got = np.frombuffer(ctypes.string_at(addr, 8 * 17), dtype=np.float64)[::4]
    R.check(np.array_equal(got, np.arange(5.0) * ((RANK - 1) % SIZE + 1)),
            "the closed tensor's memory received the data")
    del req
    witness.close()
    gc.collect()
    R.equal(sm.debug_live_handles()[0], n0, "handle released once the request is gone")


def stride0_refused():
    base = sm.arange(4, dtype="float32")
    try:
        smpi.message(base.expand(3, 4), recv=True)
        R.fail("receive into an expanded view accepted")
    except sm.OverlapError as e:
        R.check("more than once" in str(e), "stride-0 refusal says why: %s" % e)
    R.check(np.array_equal(base.numpy(), np.arange(4.0)), "refused receive wrote nothing")
    # The same view is sent to the next rank; every element arrives.
    out = sm.zeros((3, 4), dtype="float32")
    COMM.Sendrecv(smpi.message(base.expand(3, 4)), (RANK + 1) % SIZE,
                  recvbuf=smpi.message(out, recv=True), source=(RANK - 1) % SIZE)
    R.check(np.array_equal(out.numpy(), np.tile(np.arange(4.0), (3, 1))), "stride-0 view sent")


def readme_example():
    """The MPI example of bindings/python/README.md, run by each pair of ranks
    (it is written for mpirun -np 2), and its results."""
    path = os.path.join(HERE, "..", "..", "bindings", "python", "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index("from mpi4py import MPI\nimport stridemem as sm\nfrom stridemem.mpi")
    code = text[start:text.index("```", start)]
    pair = COMM.Split(RANK // 2, RANK)
    scope = {"PAIR": pair}
    exec(compile(code.replace("MPI.COMM_WORLD", "PAIR"), path, "exec"), scope)
    grid, me, other = scope["grid"], pair.Get_rank(), scope["other"]
    R.check(np.array_equal(grid[0].numpy(), [other] * 10), "README: row received in place")
    R.check(np.array_equal(grid[3].numpy(), [1.0] * 10), "README: Allreduce of row 3")
    want = [other, other, 1.0, other, other, other]
    R.check(np.array_equal(grid[1:-1, 0].numpy(), want), "README: column received")
    R.check(np.array_equal(grid[1:-1, -1].numpy(), [me, me, 1.0, me, me, me]),
            "README: east ghosts untouched (row 3 reduced)")
    R.check(float(grid[4, 4]) == me, "README: interior unchanged")
    pair.Free()


if SIZE != 4:
    R.fail("run under mpirun -np 4 (got %d ranks)" % SIZE)
for name, fn in [("ring of random views", ring_views), ("halo exchange", halo_exchange),
                 ("direct collectives", direct_collectives), ("keep alive", keep_alive),
                 ("stride-0 receive", stride0_refused), ("README example", readme_example)]:
    try:
        fn()
    except Exception:
        # The other ranks would wait for this one's messages until the test
        # times out: stop the whole job now, with the reason.
        print("FAIL: rank %d: %s raised:\n%s" % (RANK, name, traceback.format_exc()))
        sys.stdout.flush()
        COMM.Abort(1)
    COMM.Barrier()  # ranks enter each part together

passed = COMM.allreduce(R.passed, op=MPI.SUM)
failed = COMM.allreduce(R.failed, op=MPI.SUM)
if RANK == 0:
    print("mpi_ranks (%d ranks): %d passed, %d failed" % (SIZE, passed, failed))
sys.exit(1 if failed or not passed else 0)
