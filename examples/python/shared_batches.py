"""Worker processes fill batches in one shared buffer; the parent uses them
where they are.

A data loader's usual shape: N workers produce batches, the main process
consumes them. With pickled NumPy arrays every batch is built in a worker,
copied through a pipe and rebuilt in the parent: two buffers and two copies
per batch. Here the parent owns one stack of views in shared memory
(``stridemem.Stack(..., shared=True)``): it pushes a batch, hands the view to
a worker through a multiprocessing queue (a file descriptor and a few
hundred bytes of layout, never the data), the worker writes the batch in
place, and the parent reads it zero-copy, then pops the region and reuses it
for the next round.

Both ways run side by side on the same work and are checked against the
same reference; the table at the end shows what crossed the queues, how
many batch buffers were made, and each process's peak memory.

    python3 examples/python/shared_batches.py [--workers 2] [--batches 48]
        [--batch-shape 32 3 64 64] [--in-flight 4] [--quiet]

Needs NumPy and the stridemem binding (see bindings/python/README.md).
"""

import argparse
import multiprocessing as mp
import os
import sys
import time

import numpy as np

try:
    import stridemem as sm
except ImportError:  # run from a checkout without installing the binding
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "bindings", "python"))
    import stridemem as sm


def make_batch(k, shape, out=None):
    """What batch k holds (a worker's "decode + augment"), deterministic so
    the parent can check every value it reads; written into out when given."""
    n = int(np.prod(shape))
    if out is None:
        out = np.empty(shape, dtype=np.float32)
    flat = out.reshape(n)  # a view: out is row-major
    np.remainder(np.arange(n, dtype=np.float32), np.float32(251), out=flat)
    flat += np.float32(k)
    return out


def peak_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


# ---- workers (module level: spawned children import them by name) ------------------

def shared_worker(jobs, done):
    """Computes each batch straight into the view it is sent (a NumPy array
    over the shared pages: no temporary, no copy); reports k, and its peak
    RSS growth when told to stop."""
    base = peak_rss_kib()
    while True:
        job = jobs.get()
        if job is None:
            done.put(("exit", peak_rss_kib() - base))
            return
        k, batch = job
        make_batch(k, batch.shape, out=np.asarray(batch))
        batch.close()
        done.put((k, None))


def pickled_worker(jobs, done, shape):
    """Builds each batch as a NumPy array and sends it back (pickled)."""
    base = peak_rss_kib()
    while True:
        k = jobs.get()
        if k is None:
            done.put(("exit", peak_rss_kib() - base))
            return
        done.put((k, make_batch(k, shape)))


# ---- the two ways ---------------------------------------------------------------------

class QueueBytes(object):
    """Counts the bytes multiprocessing pickles for what is put in a queue,
    the way the queue's feeder thread will (ForkingPickler)."""

    def __init__(self):
        self.total = 0

    def measure(self, obj):
        from multiprocessing.reduction import ForkingPickler
        self.total += len(ForkingPickler.dumps(obj))


def run_shared(args, ctx, progress):
    shape = tuple(args.batch_shape)
    batch_bytes = int(np.prod(shape)) * 4
    jobs, done = ctx.Queue(), ctx.Queue()
    workers = [ctx.Process(target=shared_worker, args=(jobs, done)) for _ in range(args.workers)]
    for w in workers:
        w.start()
    sent = QueueBytes()
    checked = 0
    t0 = time.perf_counter()
    # One buffer for the batches in flight, allocated once; pushes start on
    # 256-byte boundaries (SM_STACK_ALIGNMENT).
    capacity = args.in_flight * ((batch_bytes + 255) // 256 * 256)
    with sm.Stack(capacity, shared=True) as stack, stack.storage() as buf:
        k = 0
        while k < args.batches:
            mark = stack.mark()
            round_ = []
            for _ in range(min(args.in_flight, args.batches - k)):
                b = stack.push(shape, "float32")
                job = (k, b)
                sent.measure(job)
                jobs.put(job)
                round_.append((k, b))
                k += 1
            for _ in round_:
                done.get(timeout=120)
            for kk, b in round_:
                # The parent's zero-copy look at the region: a plain view of
                # the stack's buffer (stack tensors themselves refuse to hand
                # their memory to NumPy, since a pop reuses it).
                with buf.tensor(b.shape, b.strides, b.storage_offset, "float32") as v:
                    arr = np.asarray(v)
                    if not np.array_equal(arr, make_batch(kk, shape)):
                        raise SystemExit("shared: batch %d holds wrong values" % kk)
                    del arr
                b.close()
                checked += 1
            stack.pop_to(mark)
            progress("shared", checked, args.batches)
        for _ in workers:
            jobs.put(None)
        peaks = [done.get(timeout=120)[1] for _ in workers]
    for w in workers:
        w.join(60)
    return {"time": time.perf_counter() - t0, "queue_bytes": sent.total,
            "buffers": 1, "buffer_bytes": capacity, "checked": checked,
            "worker_peaks": peaks, "exitcodes": [w.exitcode for w in workers]}


def run_pickled(args, ctx, progress):
    shape = tuple(args.batch_shape)
    jobs, done = ctx.Queue(), ctx.Queue()
    workers = [ctx.Process(target=pickled_worker, args=(jobs, done, shape))
               for _ in range(args.workers)]
    for w in workers:
        w.start()
    received = QueueBytes()
    checked = 0
    t0 = time.perf_counter()
    k = 0
    while k < args.batches:
        n = min(args.in_flight, args.batches - k)
        for j in range(n):
            jobs.put(k + j)
        for _ in range(n):
            kk, arr = done.get(timeout=120)
            received.measure(arr)
            if not np.array_equal(arr, make_batch(kk, shape)):
                raise SystemExit("pickled: batch %d holds wrong values" % kk)
            checked += 1
            del arr
        k += n
        progress("pickled", checked, args.batches)
    for _ in workers:
        jobs.put(None)
    peaks = [done.get(timeout=120)[1] for _ in workers]
    for w in workers:
        w.join(60)
    batch_bytes = int(np.prod(shape)) * 4
    # Every batch: one array made in a worker, one rebuilt here.
    return {"time": time.perf_counter() - t0, "queue_bytes": received.total,
            "buffers": 2 * args.batches, "buffer_bytes": 2 * args.batches * batch_bytes,
            "checked": checked, "worker_peaks": peaks,
            "exitcodes": [w.exitcode for w in workers]}


def _driver(which, args, results):
    """One way, run in a fresh process, so that its peak RSS is its own."""
    ctx = mp.get_context(args.start_method)

    def progress(name, done, total):
        if not args.quiet:
            sys.stderr.write("\r%-8s %3d/%d batches" % (name, done, total))
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    try:
        base = peak_rss_kib()
        r = (run_shared if which == "shared" else run_pickled)(args, ctx, progress)
        r["parent_peak"] = peak_rss_kib() - base
        results.put((which, r))
    except BaseException as e:  # reported by main
        results.put((which, {"error": "%s: %s" % (type(e).__name__, e)}))


def human(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.1f %s" % (n / float(size), unit)
    return "%d B" % n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batches", type=int, default=48)
    ap.add_argument("--batch-shape", type=int, nargs="+", default=[32, 3, 64, 64])
    ap.add_argument("--in-flight", type=int, default=4,
                    help="batches pushed (and filled) at a time")
    ap.add_argument("--start-method", default="spawn", choices=("spawn", "fork", "forkserver"))
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    ctx = mp.get_context(args.start_method)
    batch_bytes = int(np.prod(args.batch_shape)) * 4
    print("%d batches of float32 %s (%s each), %d %s workers, %d in flight"
          % (args.batches, tuple(args.batch_shape), human(batch_bytes), args.workers,
             args.start_method, args.in_flight))
    res = {}
    for which in ("shared", "pickled"):
        q = ctx.Queue()
        d = ctx.Process(target=_driver, args=(which, args, q))
        d.start()
        _, res[which] = q.get(timeout=600)
        d.join(60)
        if "error" in res[which]:
            print("%s: %s" % (which, res[which]["error"]))
            return 1
    shared, pickled = res["shared"], res["pickled"]
    rows = [
        ("bytes through the queues", human(shared["queue_bytes"]), human(pickled["queue_bytes"])),
        ("batch buffers made", "%d (%s, once)" % (shared["buffers"], human(shared["buffer_bytes"])),
         "%d (%s)" % (pickled["buffers"], human(pickled["buffer_bytes"]))),
        ("main process: peak RSS growth", human(1024 * shared["parent_peak"]),
         human(1024 * pickled["parent_peak"])),
        ("workers: peak RSS growth (largest)", human(1024 * max(shared["worker_peaks"])),
         human(1024 * max(pickled["worker_peaks"]))),
        ("time", "%.2f s" % shared["time"], "%.2f s" % pickled["time"]),
    ]
    print("\n| | shared stack (stridemem) | pickled NumPy arrays |\n|---|---:|---:|")
    for r in rows:
        print("| %s | %s | %s |" % r)
    print("\nRSS growth: each side's high-water mark (VmHWM) over its value when it started; "
          "the shared buffer's pages count in every process that touches them.")
    ok = (shared["checked"] == pickled["checked"] == args.batches
          and set(shared["exitcodes"] + pickled["exitcodes"]) == {0}
          and shared["queue_bytes"] * 100 < pickled["queue_bytes"])
    print("every batch checked against the reference, in both ways: %s" % ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
