"""Tensors between processes with Python's multiprocessing: share_memory_,
empty_shared, shared stacks; shared tensors cross queues and Process
arguments as an fd (fork, spawn, forkserver), arrive as the same view of the
same pages (checked against NumPy), and unshared ones by value; plain pickle
copies; bad descriptors raise cleanly; a killed worker leaks nothing."""

import multiprocessing as mp
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
import numpy as np  # noqa: E402

import _mp_sharing  # noqa: E402

R = Results("test_multiprocessing_sharing")


def fds():
    return len(os.listdir("/proc/self/fd"))


def maps():
    """stridemem's shared-memory mappings (the allocator of a sanitized run
    maps regions of its own at any time)."""
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if "memfd:stridemem" in line)


def test_share_memory_in_place():
    t = sm.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))
    tt = t.T
    row = t[2]
    R.check(not t.is_shared(), "a fresh tensor is private")
    before = t.data_ptr
    R.check(row.share_memory_() is row, "share_memory_ returns the tensor")
    R.check(t.is_shared() and tt.is_shared(), "every view of the storage follows")
    R.check(t.data_ptr != before, "the bytes moved once")
    R.equal(np.array(tt).tolist(), np.arange(24, dtype=np.float32).reshape(4, 6).T.tolist(),
            "the values survive the move")
    moved = t.data_ptr
    t.share_memory_()
    R.equal(t.data_ptr, moved, "a second share_memory_ is a no-op")
    with sm.Stack(4096) as st:
        p = st.push((4,))
        R.raises(sm.ERR_UNSUPPORTED, p.share_memory_, "a stack tensor", ["shared"])
        p.close()
    a = np.zeros(4, dtype=np.float32)
    blob = sm.from_numpy_blob(a)
    R.raises(sm.ERR_UNSUPPORTED, blob.share_memory_, "memory stridemem does not own",
             ["empty_shared"])
    e = sm.empty_shared(3, 2, dtype="int16")
    R.check(e.is_shared(), "empty_shared is shared")
    R.equal(np.array(e).tolist(), [[0, 0]] * 3, "empty_shared is zero-filled")


def test_export_import_in_process():
    t = sm.empty_shared(5, dtype="float64")
    with t.storage() as s:
        R.check(s.is_shared, "Storage.is_shared")
        desc, fd = s.export()
    R.equal(len(desc), sm.SHARE_DESC_SIZE, "descriptor size")
    try:
        with sm.Storage.from_shared(desc, fd) as s2:
            v = s2.tensor((5,), (1,), 0, "float64")
            v[...] = np.arange(5.0)
            R.equal(np.array(t).tolist(), [0.0, 1.0, 2.0, 3.0, 4.0], "the import shares pages")
            v.close()
        n0, m0 = fds(), maps()
        bad = bytearray(desc)
        bad[40] ^= 1
        R.raises(sm.ERR_INVALID_ARGUMENT, lambda: sm.Storage.from_shared(bytes(bad), fd),
                 "a corrupted descriptor", ["checksum"])
        R.raises(sm.ERR_INVALID_ARGUMENT, lambda: sm.Storage.from_shared(desc[:100], fd),
                 "a short descriptor", ["144"])
        with open(__file__, "rb") as f:
            R.raises(sm.ERR_INVALID_ARGUMENT, lambda: sm.Storage.from_shared(desc, f.fileno()),
                     "a regular file", ["regular file"])
        R.equal((fds(), maps()), (n0, m0), "refusals keep no fd and no mapping")
    finally:
        os.close(fd)
    with sm.tensor([1.0, 2.0]).storage() as private:
        R.raises(sm.ERR_UNSUPPORTED, private.export, "a private storage", ["share_memory"])


def test_plain_pickle_copies():
    t = sm.empty_shared(4, dtype="int32")
    u = pickle.loads(pickle.dumps(t))
    u[...] = 5
    R.equal(np.array(t).tolist(), [0, 0, 0, 0], "plain pickle of a tensor is a copy")
    t[...] = np.array([7, -1, 2, 3], dtype=np.int32)
    with t.storage() as s:
        s2 = pickle.loads(pickle.dumps(s))
        R.check(s2.handle != s.handle and s2.nbytes == 16 and not s2.is_shared,
                "plain pickle of a storage is a private copy")
        with s2.tensor((4,), (1,), 0, "int32") as v:
            R.equal(np.array(v).tolist(), [7, -1, 2, 3], "the copy holds the storage's bytes")
            v[...] = 0
        R.equal(np.array(t).tolist(), [7, -1, 2, 3], "writing the copy leaves the original")
        s2.close()
    with sm.Stack(1024) as st:
        try:
            pickle.dumps(st)
            R.fail("a Stack pickled")
        except TypeError as e:
            R.check("per process" in str(e), "a Stack refuses pickling: %s" % e)


def test_fd_not_bytes_on_the_wire():
    from multiprocessing.reduction import ForkingPickler
    big = sm.empty_shared(1 << 20, dtype="float64")  # 8 MiB
    payload = bytes(ForkingPickler.dumps(big[100:200:3]))
    R.check(len(payload) < 2048, "a shared 8 MiB storage pickles in %d bytes" % len(payload))
    private = sm.zeros(1 << 16, dtype="float64")
    payload = bytes(ForkingPickler.dumps(private))
    R.check(len(payload) > (1 << 19), "an unshared tensor pickles by value (%d bytes)" % len(payload))


def views_of(base):
    """Views that cover the layout rules: strided, permuted, negative
    strides, an offset, 0-d, empty."""
    return [
        ("whole", base),
        ("column", base[:, 3]),
        ("transposed", base.T),
        ("flipped rows, step 2", base[::-2, 1:5]),
        ("0-d element", base[2, 4]),
        ("empty", base[1:1, :]),
    ]


def test_queue_round_trip(method):
    ctx = mp.get_context(method)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    w = ctx.Process(target=_mp_sharing.fill_and_report, args=(q_in, q_out))
    w.start()
    try:
        ref = np.arange(48, dtype=np.float32).reshape(6, 8)
        for name, make in (("shared", lambda: sm.empty_shared(6, 8)),
                           ("moved", lambda: sm.zeros(6, 8).share_memory_())):
            base = make()
            base[...] = ref
            for vname, v in views_of(base):
                expect = np.array(v).copy()
                q_in.put(v)
                before, layout = q_out.get(timeout=60)
                what = "%s %s %s" % (method, name, vname)
                R.equal(before, expect.tolist(), "%s: arrives with the sender's values" % what)
                R.equal(layout, (v.shape, v.strides, v.storage_offset, v.dtype.name, True),
                        "%s: arrives as the same view" % what)
                want = np.arange(100, 100 + expect.size, dtype=np.float32).reshape(expect.shape)
                R.equal(np.array(v).tolist(), want.tolist(),
                        "%s: the worker's writes show here" % what)
                base[...] = ref
        # Unshared: by value, both ways.
        p = sm.tensor(ref)
        q_in.put(p[1])
        before, layout = q_out.get(timeout=60)
        R.equal(before, ref[1].tolist(), "%s: an unshared tensor arrives by value" % method)
        R.check(layout[4] is False, "%s: it is not shared over there" % method)
        R.equal(np.array(p).tolist(), ref.tolist(), "%s: the worker's copy is its own" % method)
    finally:
        q_in.put(None)
        w.join(60)
    R.equal(w.exitcode, 0, "%s: worker exit code" % method)


def launch_with_argument(ctx, method, value):
    t = sm.empty_shared(3, 3, dtype="int64")
    done = ctx.Event()
    w = ctx.Process(target=_mp_sharing.write_arg, args=(t[:, 1], value, done))
    w.start()
    w.join(60)
    R.equal(w.exitcode, 0, "%s: a tensor as a Process argument" % method)
    R.equal(np.array(t).tolist(), [[0, value, 0]] * 3,
            "%s: the child wrote through its view" % method)


def test_process_argument(method):
    import gc
    ctx = mp.get_context(method)
    # The first launches start what the method keeps (forkserver, resource
    # tracker); after them, every launch must give back every fd it took.
    counts = []
    for k in range(4):
        launch_with_argument(ctx, method, 9 + k)
        gc.collect()
        counts.append(fds())
    R.equal(counts[3], counts[2], "%s: launches with tensor arguments leak no fd (%s)"
            % (method, counts))


def test_shared_stack_batches():
    ctx = mp.get_context("spawn")
    q_jobs, q_done = ctx.Queue(), ctx.Queue()
    workers = [ctx.Process(target=_mp_sharing.fill_batch, args=(q_jobs, q_done)) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        with sm.Stack(1 << 20, shared=True) as st:
            for round_ in range(2):
                mark = st.mark()
                batches = [st.push((16, 32), "float32") for _ in range(4)]
                for k, b in enumerate(batches):
                    q_jobs.put((10 * round_ + k, b))
                got = sorted(q_done.get(timeout=60) for _ in batches)
                R.equal(got, [10 * round_ + k for k in range(4)], "every batch reported")
                for k, b in enumerate(batches):
                    R.check(bool((np.asarray(b.clone()) == 10 * round_ + k).all()),
                            "round %d batch %d filled in place by a worker" % (round_, k))
                    b.close()
                st.pop_to(mark)
    finally:
        for _ in workers:
            q_jobs.put(None)
        for w in workers:
            w.join(60)
    R.equal([w.exitcode for w in workers], [0, 0], "workers exit cleanly")


def test_killed_worker_leaks_nothing():
    ctx = mp.get_context("fork")
    t = sm.empty_shared(1 << 16, dtype="uint8")
    q, ready = ctx.Queue(), ctx.Event()
    # Warm the queue's feeder thread and resource sharer first.
    q.put(0)
    q.get()
    n0, m0 = fds(), maps()
    w = ctx.Process(target=_mp_sharing.hold_until_killed, args=(q, ready))
    w.start()
    q.put(t)
    R.check(ready.wait(60), "the worker wrote")
    _mp_sharing.kill(w.pid)
    w.join(60)
    R.equal(w.exitcode, -9, "killed with SIGKILL")
    R.check(bool((np.asarray(t.clone()) == 7).all()), "its writes stay in the shared pages")
    del w
    import gc
    gc.collect()
    R.equal(maps(), m0, "no stridemem mapping left in the parent")
    R.check(fds() <= n0 + 2, "no fd left in the parent beyond the process's own (%d -> %d)"
            % (n0, fds()))


if __name__ == "__main__":
    R.run("share_memory_", test_share_memory_in_place)
    R.run("export/import", test_export_import_in_process)
    R.run("plain pickle", test_plain_pickle_copies)
    R.run("fd on the wire", test_fd_not_bytes_on_the_wire)
    for m in ("fork", "spawn", "forkserver"):
        R.run("queue " + m, test_queue_round_trip, m)
        R.run("argument " + m, test_process_argument, m)
    R.run("shared stack", test_shared_stack_batches)
    R.run("killed worker", test_killed_worker_leaks_nothing)
    sys.exit(R.finish())
