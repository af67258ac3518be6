"""stridemem.mpi in one process (MPI.COMM_SELF: a message to oneself goes
through the same datatype engine as one to another rank; mpi_ranks.py runs
the same between four processes under mpirun).

- random views of every dtype (negative strides, expanded views, storage
  offsets, selects, permutations) sent with message() into views of other
  layouts of the same shape: the received values equal NumPy's view of the
  sender's data, bit for bit, and every other byte of the receiving storage
  is unchanged; datatype() with a raw buffer does the same;
- layout() (coalescing) against NumPy-made views; the decoded datatypes;
- check_receivable against a brute-force listing of element offsets;
- refusals (stride 0, overlapping windows, read-only, a send message used
  for a receive): the error, and nothing written;
- the contiguous fast path (count, basic type, the tensor's own address),
  the tensor object itself as an mpi4py buffer (through __dlpack__), in place;
- a message keeps its tensor's memory and its datatype alive until dropped;
- import stridemem / stridemem.mpi / stridemem.distributed without mpi4py
  or torch, and without initializing MPI;
- docstrings and annotations on the public functions.
"""

import ctypes
import gc
import inspect
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Results, import_stridemem  # noqa: E402
import _views as V  # noqa: E402

import numpy as np  # noqa: E402

sm = import_stridemem()
R = Results("test_mpi_datatypes")

try:
    import stridemem.mpi as smpi
    import stridemem.distributed as sdist
    from mpi4py import MPI
except Exception as e:  # CI installs python3-mpi4py: missing it is a failure
    print("FAIL: cannot import stridemem.mpi / mpi4py (%s); install python3-mpi4py "
          "(scripts/setup-deps.sh does)" % e)
    print("test_mpi_datatypes: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)

COMM = MPI.COMM_SELF
_KEEP = []
import mpi4py  # noqa: E402  (imported above through mpi4py.MPI)

MPI4PY_V = tuple(int(x) for x in mpi4py.__version__.split(".")[:2] if x.isdigit())
print("mpi4py %s (MPI: %s)" % (mpi4py.__version__, MPI.Get_library_version().splitlines()[0].strip()))


def exchange(trial_rng, dtype, use_datatype):
    """One random view sent into another of the same shape (COMM_SELF)."""
    shape = V.random_shape(trial_rng)
    srec = V.random_recipe(shape, trial_rng, allow_expand=True)
    rrec = V.random_recipe(shape, trial_rng, allow_expand=False)
    sbuf = V.random_buffer(dtype, srec["storage"], trial_rng)
    rbuf = V.random_buffer(dtype, rrec["storage"], trial_rng)
    st, rt = V.to_sm(sm, sbuf, dtype), V.to_sm(sm, rbuf, dtype)
    sv, rv = V.apply_sm(st, srec), V.apply_sm(rt, rrec)
    what = "%s shape %s: send strides %s offset %d -> recv strides %s offset %d" % (
        dtype, shape, sv.strides, sv.storage_offset, rv.strides, rv.storage_offset)
    want = V.apply_np(sbuf, srec)
    if not R.check(V.bytes_of(sv.numpy()) == V.bytes_of(want), "%s: the recipe's sm view "
                   "differs from NumPy's (test bug)" % what):
        return
    ref_storage = rbuf.copy()
    V.apply_np(ref_storage, rrec)[...] = want
    if use_datatype:
        # The raw form: the storage's bytes, one datatype(t) (offset included).
        sdt, rdt = smpi.datatype(sv), smpi.datatype(rv, recv=True)
        sbase = sv.data_ptr - sv.storage_offset * sv.itemsize
        rbase = rv.data_ptr - rv.storage_offset * rv.itemsize
        smem = MPI.memory.fromaddress(sbase, sv.storage_nbytes, readonly=True) if sv.numel else b""
        rmem = MPI.memory.fromaddress(rbase, rv.storage_nbytes) if rv.numel else bytearray()
        R.equal(sdt.Get_size(), sv.numel * sv.itemsize, what + ": datatype size")
        if sv.numel:
            R.equal(sdt.Get_extent(), (0, sv.storage_nbytes), what + ": datatype (lb, extent)")
        COMM.Sendrecv([smem, 1, sdt], 0, recvbuf=[rmem, 1, rdt], source=0)
        sdt.Free()
        rdt.Free()
    else:
        COMM.Sendrecv(smpi.message(sv), 0, recvbuf=smpi.message(rv, recv=True), source=0)
    R.check(V.bytes_of(rv.numpy()) == V.bytes_of(want), what + ": received values differ "
            "from NumPy's view of the sent data")
    R.check(rt.numpy().tobytes() == ref_storage.tobytes(), what + ": the receiving storage "
            "differs outside the view (or inside it)")
    R.check(st.numpy().tobytes() == sbuf.tobytes(), what + ": the sender's storage changed")


def random_views_every_dtype():
    rng = np.random.default_rng(20240528)
    for dtype in V.DTYPES:
        for trial in range(14):
            exchange(rng, dtype, use_datatype=(trial % 3 == 2))


def byte_flips():
    """Flipped runs of 1-byte elements (stride -1 byte: Open MPI 4.1 walks
    such an hvector upwards unless stridemem.mpi builds it from pairs), as
    innermost and as outer dims, odd and even lengths, both directions."""
    rng = np.random.default_rng(3)
    views = [("[:, ::-1]", lambda x: x[:, ::-1]), ("[::-1, ::-1]", lambda x: x[::-1, ::-1]),
             ("T[::-1]", lambda x: x.T[::-1]), ("T[::-1, ::-1]", lambda x: x.T[::-1, ::-1]),
             ("[1:4, 5:1:-1]", lambda x: x[1:4, 5:1:-1]), ("[2, 6:3:-1]", lambda x: x[2, 6:3:-1]),
             ("[::2, ::-1]", lambda x: x[::2, ::-1])]
    for dtype in ("uint8", "int8", "bool"):
        img_np = V.random_buffer(dtype, 35, rng).reshape(5, 7)
        img = V.to_sm(sm, img_np, dtype)
        for name, f in views:
            what = "%s %s" % (dtype, name)
            want = f(img_np)
            out = sm.zeros(want.shape, dtype=dtype)
            COMM.Sendrecv(smpi.message(f(img)), 0, recvbuf=smpi.message(out, recv=True),
                          source=0)
            R.check(V.bytes_of(out.numpy()) == V.bytes_of(want), what + ": sent")
            store_np = V.random_buffer(dtype, 35, rng).reshape(5, 7)
            store = V.to_sm(sm, store_np, dtype)
            COMM.Sendrecv(smpi.message(out), 0, recvbuf=smpi.message(f(store), recv=True),
                          source=0)
            f(store_np)[...] = want
            R.check(store.numpy().tobytes() == store_np.tobytes(), what + ": received")


def layouts():
    a = sm.arange(24, dtype="float32").view(2, 3, 4)
    R.equal(smpi.layout(a), ((24, 1),), "dense 3-D coalesces to one run")
    R.equal(smpi.layout(a.flip([0, 1, 2])), ((24, -1),), "fully flipped: one run, stride -1")
    R.equal(smpi.layout(a[:, 1:, :]), ((2, 12), (8, 1)), "rows 1.. of each block")
    R.equal(smpi.layout(a.permute(2, 0, 1)), ((4, 1), (6, 4)), "permuted: last two dims merge")
    R.equal(smpi.layout(a[:, :, 0:1]), ((6, 4),), "a size-1 dim is dropped")
    R.equal(smpi.layout(a[0, 0]), ((4, 1),), "selects")
    R.equal(smpi.layout(a[0, 0, 0]), (), "0-d")
    R.equal(smpi.layout(a[:, :0]), ((0, 1),), "no elements")
    R.equal(smpi.layout(sm.zeros(3).expand(2, 3)), ((2, 0), (3, 1)), "expanded: stride 0 kept")
    # The coalesced walk visits NumPy's elements in NumPy's row-major order.
    rng = np.random.default_rng(7)
    for _ in range(200):
        r = V.random_recipe(V.random_shape(rng), rng, allow_expand=True)
        t = V.apply_sm(sm.arange(r["storage"], dtype="int64"), r)
        want = V.apply_np(np.arange(r["storage"]), r).ravel()
        dims = smpi.layout(t)
        offs = np.array([t.storage_offset], dtype=np.int64)
        for n, s in dims:
            offs = (offs[:, None] + np.arange(n)[None, :] * s).ravel()
        if not R.check(np.array_equal(offs, want), "layout %s of shape %s strides %s walks "
                       "other elements than NumPy" % (dims, t.shape, t.strides)):
            break
    # A dense tensor's datatype is one contiguous run, not nested vectors.
    dt = smpi.datatype(a)
    inner, combiner, params = dt.decode()
    R.equal(combiner, "RESIZED", "datatype: resized to the storage")
    R.equal(params, {"lb": 0, "extent": 96}, "datatype: lb 0, extent = storage bytes")
    base, comb2, p2 = inner.decode()
    R.equal((comb2, p2.get("count")), ("CONTIGUOUS", 24), "dense datatype: one run of 24")
    R.check(base == MPI.FLOAT, "dense datatype: of MPI.FLOAT")
    for d in (inner, dt):
        d.Free()
    # A storage offset is the displacement of the first element.
    dt = smpi.datatype(a[1, :, 1:3])
    inner, _, _ = dt.decode()
    _, comb, p = inner.decode()
    R.equal((comb, list(p.get("displacements", []))), ("HINDEXED", [(12 + 1) * 4]),
            "datatype: storage offset 13 as byte displacement 52")
    R.equal(dt.Get_true_extent(), (52, (2 * 4 + 2) * 4), "datatype: true (lb, extent)")
    inner.Free()
    dt.Free()
    want = {"bool": MPI.C_BOOL, "float16": MPI.UINT16_T, "bfloat16": MPI.UINT16_T,
            "complex64": MPI.C_FLOAT_COMPLEX, "complex128": MPI.C_DOUBLE_COMPLEX,
            "float32": MPI.FLOAT, "float64": MPI.DOUBLE, "uint64": MPI.UINT64_T}
    for name, mt in want.items():
        R.check(smpi.mpi_type(name) == mt, "mpi_type(%s)" % name)
    for name in V.DTYPES:
        R.equal(smpi.mpi_type(name).Get_size(), sm.dtype_size(name), "mpi_type(%s) size" % name)
    R.check(smpi.mpi_type(np.float32) == MPI.FLOAT, "mpi_type takes NumPy dtypes")


def brute_overlap(t):
    offs = [t.storage_offset + sum(i * s for i, s in zip(idx, t.strides))
            for idx in np.ndindex(*t.shape)]
    return len(set(offs)) != len(offs)


def overlap_decisions():
    rng = np.random.default_rng(11)
    store = sm.zeros(4096, dtype="int16")
    seen = {True: 0, False: 0}
    for _ in range(600):
        nd = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 5)) for _ in range(nd)]
        strides = [int(rng.integers(-7, 8)) for _ in range(nd)]
        t = store.as_strided(shape, strides, 2000)
        want = brute_overlap(t)
        seen[want] += 1
        try:
            smpi.check_receivable(t)
            got = False
        except sm.OverlapError:
            got = True
        if not R.check(got == want, "check_receivable(shape %s strides %s): overlap %s, "
                       "brute force says %s" % (shape, strides, got, want)):
            break
    R.check(seen[True] > 50 and seen[False] > 50, "overlap cases drawn both ways: %s" % seen)
    # Layouts the cheap rule cannot settle, decided exactly both ways.
    R.check(smpi._overlaps(((3, 2), (2, 3))) is False, "strides (2, 3) over (3, 2): disjoint")
    R.check(smpi._overlaps(((3, 1), (2, 2))) is True, "strides (1, 2) over (3, 2): overlap")


def read_only_tensor(arr):
    """A read-only float64 tensor over arr (a versioned DLPack import with
    the READ_ONLY flag; _KEEP holds the memory, so no deleter)."""
    m = sm.DLManagedTensorVersioned()
    m.version.major, m.version.minor, m.flags = 1, 0, sm.DLPACK_FLAG_READ_ONLY
    shape = (ctypes.c_int64 * 1)(arr.size)
    m.dl_tensor.data, m.dl_tensor.ndim = arr.ctypes.data, 1
    m.dl_tensor.device.device_type, m.dl_tensor.device.device_id = 1, 0
    m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes = 2, 64, 1
    m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    _KEEP.extend([arr, m, shape])
    out = ctypes.c_void_p()
    sm._call("sm_from_dlpack", ctypes.c_void_p(ctypes.addressof(m)), 1, ctypes.byref(out))
    return sm.Tensor._wrap(out)


def read_only_tensor_object(ro, arr):
    """The read-only tensor object itself as an mpi4py buffer. As a receive
    buffer it is refused by every mpi4py (3.x takes a legacy DLPack capsule,
    which cannot say read-only, so __dlpack__ raises ReadOnlyError; a newer
    one that asks for a versioned capsule reads the read-only flag and
    refuses it with BufferError), nothing written. As a send buffer 3.x
    gets the same ReadOnlyError; a newer mpi4py may take it, and then the
    values must arrive and the memory stay as it was."""
    try:
        COMM.Sendrecv(sm.full(6, 9.0, dtype="float64"), 0, recvbuf=ro, source=0)
        R.fail("mpi4py %s received into a read-only tensor object" % mpi4py.__version__)
    except (sm.ReadOnlyError, BufferError) as e:
        # (CPython's PyBuffer_FillInfo says "Object is not writable.")
        R.check(isinstance(e, sm.ReadOnlyError) or "read" in str(e).lower() or
                "writable" in str(e).lower(),
                "mpi4py's refusal of a read-only receive buffer says why: %r" % str(e))
    R.check(np.array_equal(arr, np.arange(6.0)), "a refused read-only receive wrote nothing")
    out = sm.zeros(6, dtype="float64")
    try:
        COMM.Sendrecv(ro, 0, recvbuf=out, source=0)
        sent = True
    except sm.ReadOnlyError:
        sent = False
    if MPI4PY_V < (4, 0):
        R.check(not sent, "mpi4py %s (legacy DLPack) took a read-only tensor object as a send "
                "buffer: its capsule cannot say read-only" % mpi4py.__version__)
    elif sent:
        R.check(np.array_equal(out.numpy(), np.arange(6.0)),
                "mpi4py %s sent a read-only tensor object: values %s" % (mpi4py.__version__, out.numpy()))
    else:
        R.ok()
    print("mpi4py %s: a read-only tensor object as a send buffer is %s"
          % (mpi4py.__version__, "taken, values arrived" if sent else "refused (ReadOnlyError)"))
    R.check(np.array_equal(arr, np.arange(6.0)), "a read-only send left the memory as it was")


def refusals():
    base = sm.arange(12, dtype="float64")
    before = base.numpy().copy()
    src = sm.full((2, 3), 5.0, dtype="float64")
    cases = [("expanded (stride 0)", base[:3].expand(2, 3), sm.OverlapError, "more than once"),
             ("overlapping unfold windows", base.unfold(0, 3, 1)[:2], sm.OverlapError,
              "more than once"),
             ("as_strided overlap", base.as_strided((2, 3), (1, 1), 0), sm.OverlapError,
              "more than once")]
    for what, view, cls, mention in cases:
        for fn, name in ((lambda v=view: smpi.message(v, recv=True), "message"),
                         (lambda v=view: smpi.datatype(v, recv=True), "datatype")):
            try:
                fn()
                R.fail("%s(recv=True) of %s: accepted" % (name, what))
            except cls as e:
                R.check(mention in str(e), "%s: message %r" % (what, str(e)))
                R.equal(e.status, sm.ERR_OVERLAP, what + ": status")
        # The same view can be sent: every element it names arrives.
        out = sm.zeros(view.shape, dtype="float64")
        COMM.Sendrecv(smpi.message(view), 0, recvbuf=smpi.message(out, recv=True), source=0)
        R.check(np.array_equal(out.numpy(), view.numpy()), what + ": sent as a view")
    R.check(np.array_equal(base.numpy(), before), "refused receives wrote nothing")
    # Non-overlapping unfold windows are fine to receive into.
    win = base.unfold(0, 3, 4)
    COMM.Sendrecv(smpi.message(sm.full(win.shape, 7.0, dtype="float64")), 0,
                  recvbuf=smpi.message(win, recv=True), source=0)
    want = before.copy()
    want[[0, 1, 2, 4, 5, 6, 8, 9, 10]] = 7.0
    R.check(np.array_equal(base.numpy(), want), "receive into disjoint unfold windows")
    # Read-only: sent through message(), never received into.
    arr = np.arange(6.0)
    ro = read_only_tensor(arr)
    R.check(ro.is_read_only, "read-only test tensor")
    try:
        smpi.message(ro, recv=True)
        R.fail("message(read-only, recv=True) accepted")
    except sm.ReadOnlyError as e:
        R.check("read-only" in str(e), "read-only refusal message %r" % str(e))
    read_only_tensor_object(ro, arr)
    out = sm.zeros(3, dtype="float64")
    COMM.Sendrecv(smpi.message(ro[::2]), 0, recvbuf=smpi.message(out, recv=True), source=0)
    R.check(np.array_equal(out.numpy(), [0.0, 2.0, 4.0]), "a read-only view is sent")
    R.check(np.array_equal(arr, np.arange(6.0)), "the read-only memory is unchanged")
    # A send message handed to a receive: mpi4py refuses its read-only buffer
    # before anything is posted.
    dst = sm.full(6, -1.0, dtype="float64")
    try:
        COMM.Sendrecv(smpi.message(src), 0, recvbuf=smpi.message(dst[::-1]), source=0)
        R.fail("a send message was accepted as a receive buffer")
    except BufferError:
        R.ok()
    R.check(np.array_equal(dst.numpy(), [-1.0] * 6), "refused send-as-receive wrote nothing")
    try:
        smpi.message(sm.zeros(2), recv=True)
        R.ok()
    except Exception as e:
        R.fail("plain receive message refused: %s" % e)
    # A tensor in device memory (a stand-in: this test runs without a GPU) is
    # refused before anything else is read from it.
    class OnGpu(object):
        device = sm.Device("cuda:0")
    for fn in (smpi.message, smpi.datatype, smpi.check_receivable):
        try:
            fn(OnGpu())
            R.fail("%s of a CUDA tensor accepted" % fn.__name__)
        except sm.DeviceError as e:
            R.check("host memory" in str(e), "device refusal says why: %s" % e)
    # A closed tensor is an InvalidHandleError.
    c = sm.zeros(3)
    c.close()
    try:
        smpi.message(c)
        R.fail("message of a closed tensor accepted")
    except sm.InvalidHandleError:
        R.ok()


def contiguous_fast_path():
    t = sm.arange(20, dtype="int32")
    v = t[3:11]
    buf, count, dt = smpi.message(v)
    R.equal(count, 8, "dense view: count")
    R.check(dt == MPI.INT32_T, "dense view: the basic type, not a derived one")
    R.equal(ctypes.addressof(buf.obj), v.data_ptr, "dense view: the buffer is the view's memory")
    R.equal(buf.nbytes, 32, "dense view: buffer bytes")
    buf, count, dt = smpi.message(t[5])
    R.equal((count, ctypes.addressof(buf.obj)), (1, t[5].data_ptr), "0-d: one element")
    buf, count, dt = smpi.message(t[:0])
    R.equal((count, len(buf)), (0, 0), "no elements: empty message")
    # A reduction over the fast path (in place).
    x = sm.arange(6, dtype="float64")
    COMM.Allreduce(MPI.IN_PLACE, smpi.message(x, recv=True), op=MPI.SUM)
    R.check(np.array_equal(x.numpy(), np.arange(6.0)), "Allreduce of one rank through message")


def tensor_object_buffers():
    """The tensor itself as an mpi4py buffer (mpi4py takes __dlpack__)."""
    for dtype in V.DTYPES:
        if dtype == "float16":
            continue  # mpi4py 3.1 has no MPI type for format 'e': message() carries it
        rng = np.random.default_rng(hash(dtype) % 1000)
        data = V.random_buffer(dtype, 10, rng)
        src = V.to_sm(sm, data, dtype)
        store = V.to_sm(sm, V.random_buffer(dtype, 16, rng), dtype)
        before = store.numpy().copy()
        dst = store[3:13]
        alias = store[3:13].view(2, 5)  # another view made before: sees the receive
        p = dst.data_ptr
        COMM.Sendrecv(src, 0, recvbuf=dst, source=0)
        R.equal(dst.data_ptr, p, dtype + ": same data pointer after the receive")
        R.check(alias.numpy().tobytes() == data.tobytes(), dtype + ": received in place "
                "(a view made before sees the data)")
        want = before.copy()
        want[3:13] = data
        R.check(store.numpy().tobytes() == want.tobytes(), dtype + ": rest of storage untouched")
    # Non-contiguous views are refused by mpi4py before anything is posted.
    store = sm.arange(8, dtype="float64")
    for what, v in (("negative stride", store.flip(0)), ("strided", store[::2])):
        try:
            COMM.Sendrecv(sm.zeros(v.shape, dtype="float64"), 0, recvbuf=v, source=0)
            R.fail("mpi4py took a %s view as a buffer" % what)
        except BufferError:
            R.ok()
    R.check(np.array_equal(store.numpy(), np.arange(8.0)), "refused views: nothing written")
    # mpi4py accepts a Fortran-ordered view and sends it in memory order (as
    # for NumPy): the documented reason to use message() for a transpose.
    m = sm.arange(6, dtype="float64").view(2, 3)
    out = sm.zeros(6, dtype="float64")
    COMM.Sendrecv(m.T, 0, recvbuf=out, source=0)
    R.check(np.array_equal(out.numpy(), np.arange(6.0)), "direct transpose: memory order")
    COMM.Sendrecv(smpi.message(m.T), 0, recvbuf=out, source=0)
    R.check(np.array_equal(out.numpy(), np.arange(6.0).reshape(2, 3).T.ravel()),
            "message(transpose): index order")
    # Isend / Irecv of tensor objects.
    a, b = sm.arange(5, dtype="int64"), sm.zeros(5, dtype="int64")
    rq = [COMM.Irecv(b, source=0), COMM.Isend(a, dest=0)]
    MPI.Request.Waitall(rq)
    R.check(np.array_equal(b.numpy(), np.arange(5)), "Isend/Irecv of tensors")


def keep_alive():
    gc.collect()
    n0 = sm.debug_live_handles()[0]
    t = sm.zeros((4, 6), dtype="float64")
    col = t[:, 2]
    addr = col.data_ptr
    # A storage handle (not a tensor: the counts below are tensor handles)
    # keeps the bytes readable after Wait, when mpi4py lets the buffer go.
    witness = t.storage()
    msg = smpi.message(col, recv=True)
    dt = msg[2]
    req = COMM.Irecv(msg, source=0)
    del msg
    col.close()
    t.close()
    gc.collect()
    R.equal(sm.debug_live_handles()[0], n0 + 1, "a pending receive holds one tensor handle "
            "after the caller closed its tensors")
    COMM.Send(sm.arange(4, dtype="float64"), dest=0)
    req.Wait()
    got = np.frombuffer(ctypes.string_at(addr, 8 * 19), dtype=np.float64)[::6]
    R.check(np.array_equal(got, np.arange(4.0)), "the closed tensor's memory got the data")
    del req
    witness.close()
    gc.collect()
    R.equal(sm.debug_live_handles()[0], n0, "handle released once the request is gone")
    R.check(dt == MPI.DATATYPE_NULL, "the message's datatype was freed with its buffer")


def lazy_imports():
    code = ("import sys; sys.modules['mpi4py'] = None; sys.modules['torch'] = None\n"
            "import stridemem, stridemem.mpi, stridemem.distributed\n"
            "t = stridemem.zeros(3)\n"
            "for f in (stridemem.mpi.message, stridemem.distributed.as_torch):\n"
            "    try:\n"
            "        f(t)\n"
            "    except ImportError as e:\n"
            "        print('ImportError:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    R.equal(r.returncode, 0, "import without mpi4py/torch: %s" % r.stderr[-400:])
    R.check("needs mpi4py" in r.stdout and "needs PyTorch" in r.stdout,
            "without mpi4py/torch: clear ImportErrors, got %r" % r.stdout)
    code = ("import sys, stridemem.mpi, stridemem.distributed\n"
            "print(sorted(m for m in ('mpi4py', 'mpi4py.MPI', 'torch') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    R.equal(r.stdout.strip(), "[]", "importing stridemem.mpi loads neither mpi4py (no MPI_Init) "
            "nor torch (stderr %s)" % r.stderr[-300:])


def documented():
    for mod in (smpi, sdist):
        for name in mod.__all__:
            fn = getattr(mod, name)
            R.check((fn.__doc__ or "").strip(), "%s.%s has no docstring" % (mod.__name__, name))
            sig = inspect.signature(fn)
            R.check(sig.return_annotation is not inspect.Signature.empty and all(
                p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()),
                "%s.%s is not annotated" % (mod.__name__, name))


for name, fn in [("random views of every dtype", random_views_every_dtype),
                 ("flipped byte runs", byte_flips), ("layouts", layouts),
                 ("overlap decisions", overlap_decisions),
                 ("refusals", refusals), ("contiguous fast path", contiguous_fast_path),
                 ("tensor objects as buffers", tensor_object_buffers),
                 ("keep alive", keep_alive), ("lazy imports", lazy_imports),
                 ("documented", documented)]:
    R.run(name, fn)
sys.exit(R.finish())
