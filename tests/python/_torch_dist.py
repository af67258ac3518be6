"""torch.distributed all_reduce on stridemem tensors, shared by
test_torch_distributed.py (gloo, CPU, four processes: a ctest test) and
torch_dist_gpu_check.py (NCCL, one process per GPU: the GPU session's check).

run(backend, device, world) starts `world` processes (multiprocessing spawn),
each joining one process group through a file:// store in a fresh temporary
directory (no port to pick, nothing outside this machine), and returns a
Results with every rank's checks. device "cpu" or "cuda" (rank r uses cuda:r).

Each rank, against NumPy values computed for every rank:
- sm.tensor(float64 NumPy values, dtype=...) for several dtypes, bfloat16
  too, holds the values, and torch.from_dlpack(t) sees them;
- all_reduce (SUM) through torch.from_dlpack(t) for each of those dtypes
  (bfloat16 with NCCL only: torch 1.13's gloo has none): the torch tensor
  has t's data pointer (no copy) and afterwards t holds the sum;
- stridemem.distributed.all_reduce with MAX and PRODUCT, and async_op;
- a contiguous view in the middle of a larger storage: the view (and a view
  made before) holds the result, every other element is unchanged;
- refusals that change nothing: a column view (not contiguous), a negative
  stride (torch would abort); a size-1 dim's negative stride is fine;
- the torch tensor keeps the memory alive after the stridemem tensor closes.
"""

import datetime
import multiprocessing
import os
import queue
import shutil
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from _util import Results  # noqa: E402

N = 24


def values(rank, n=N):
    """Small positive integers (exact in every dtype, sums and products too)."""
    import numpy as np
    return ((np.arange(n) * (rank + 1)) % 3 + 1).astype(np.float64)


def rank_checks(R, rank, world, device, backend):
    import numpy as np
    import torch
    import torch.distributed as dist
    import stridemem as sm
    import stridemem.distributed as sdist

    def host(t):
        """t's values as float64 NumPy (bfloat16 through float32)."""
        return t.to("cpu", dtype="float64").numpy()

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()

    everyone = [values(r) for r in range(world)]
    total = np.sum(everyone, axis=0)
    dtypes = ["float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bfloat16"]
    for dtype in dtypes:
        # float64 NumPy values, converted (bfloat16 too, as torch.tensor does).
        t = sm.tensor(values(rank), dtype=dtype, device=device)
        R.check(t.dtype == dtype and np.array_equal(host(t), values(rank)),
                "%s: sm.tensor(float64 values, dtype=%s) holds the values" % (dtype, dtype))
        x = torch.from_dlpack(t)  # the recipe as users write it
        R.equal(x.data_ptr(), t.data_ptr, "%s: torch.from_dlpack shares t's memory" % dtype)
        R.check(str(x.device).startswith(device), "%s: torch tensor on %s" % (dtype, x.device))
        R.check(str(x.dtype) == "torch." + dtype and np.array_equal(
            x.cpu().double().numpy(), values(rank)), "%s: torch sees %s values" % (dtype, x.dtype))
        if dtype == "bfloat16" and backend == "gloo":
            continue  # torch 1.13's gloo has no bfloat16
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        sync()
        R.check(np.array_equal(host(t), total), "%s: all_reduce SUM into t: %s, want %s"
                % (dtype, host(t)[:6], total[:6]))
    # The helper: MAX, PRODUCT, async_op.
    for dtype, op, want in (("float32", dist.ReduceOp.MAX, np.max(everyone, axis=0)),
                            ("int64", dist.ReduceOp.PRODUCT, np.prod(everyone, axis=0)),
                            ("float64", dist.ReduceOp.MIN, np.min(everyone, axis=0))):
        t = sm.tensor(values(rank), dtype=dtype, device=device)
        p = t.data_ptr
        sdist.all_reduce(t, op=op)
        sync()
        R.check(np.array_equal(host(t), want), "%s %s: %s, want %s"
                % (dtype, op, host(t)[:6], want[:6]))
        R.equal(t.data_ptr, p, "%s %s: same data pointer" % (dtype, op))
    t = sm.tensor(values(rank), dtype="float32", device=device)
    work = sdist.all_reduce(t, async_op=True)
    work.wait()
    sync()
    R.check(np.array_equal(host(t), total), "async_op all_reduce")
    # A view in the middle of a larger storage.
    store = sm.full((6, 10), -7.0, dtype="float32", device=device)
    view = store[2:4]                        # 20 elements at storage offset 20
    before = store.view(-1)[20:40]           # another view of the same elements
    view.copy_(sm.tensor(values(rank, 20).reshape(2, 10), dtype="float32"))
    sdist.all_reduce(view)
    sync()
    want = np.full((6, 10), -7.0)
    want[2:4] = np.sum([values(r, 20) for r in range(world)], axis=0).reshape(2, 10)
    R.check(np.array_equal(host(store), want), "view of a larger storage: the view holds the "
            "sum and every other element is unchanged")
    R.check(np.array_equal(host(before), want[2:4].ravel()), "a view made before sees the sum")
    # Raw torch path on a 1-D narrow at an odd offset.
    flat = sm.full(50, 3, dtype="int32", device=device)
    part = flat[13:29]
    part.copy_(sm.tensor(values(rank, 16), dtype="int32"))
    xp = torch.from_dlpack(part)
    R.equal(xp.data_ptr(), part.data_ptr, "narrow: torch shares the view's memory")
    dist.all_reduce(xp)
    sync()
    want = np.full(50, 3.0)
    want[13:29] = np.sum([values(r, 16) for r in range(world)], axis=0)
    R.check(np.array_equal(host(flat), want), "narrow at offset 13: result in place, rest "
            "unchanged")
    # Refusals: nothing is exported, no collective starts, nothing changes.
    snapshot = host(store)
    for what, bad, fn in (("column view", store[:, 3], sdist.all_reduce),
                          ("negative strides", store.flip(0), sdist.as_torch),
                          ("negative strides (all_reduce)", store[::-1], sdist.all_reduce)):
        try:
            fn(bad)
            R.fail("%s accepted" % what)
        except ValueError as e:
            R.check("stride" in str(e), "%s: message %r" % (what, str(e)))
    R.check(np.array_equal(host(store), snapshot), "refused calls changed nothing")
    # A negative stride on a size-1 dim moves nothing: accepted.
    one = store[2:3].flip(0)
    xo = sdist.as_torch(one)
    R.equal(xo.data_ptr(), one.data_ptr, "size-1 negative stride: shared memory")
    R.equal(tuple(xo.shape), (1, 10), "size-1 negative stride: shape")
    # torch's tensor keeps the memory after the stridemem owner closes.
    t = sm.tensor(values(rank), dtype="float64", device=device)
    x = sdist.as_torch(t)
    t.close()
    dist.all_reduce(x)
    sync()
    R.check(np.array_equal(x.cpu().numpy(), total), "all_reduce after t.close(): torch holds "
            "the memory")


def _worker(rank, world, device, backend, store_path, out):
    # Bind gloo and NCCL to the loopback device: the ranks are on this
    # machine, and the CI machine has no other network.
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    R = Results("rank %d" % rank, max_reports=20)
    lines = []
    try:
        import torch
        import torch.distributed as dist
        dev = device
        if device == "cuda":
            torch.cuda.set_device(rank)
            dev = "cuda:%d" % rank
        dist.init_process_group(backend, init_method="file://" + store_path, rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=60))
        try:
            R.report = lines.append  # failures travel back to the parent
            rank_checks(R, rank, world, dev, backend)
        finally:
            dist.destroy_process_group()
    except Exception:
        R.failed += 1
        lines.append("FAIL: rank %d raised:\n%s" % (rank, traceback.format_exc()))
    out.put((rank, R.passed, R.failed, lines))


def run(backend, device, world, timeout=120):
    """All ranks' checks in one Results (passed and failed summed)."""
    R = Results("torch.distributed %s %s x%d" % (backend, device, world))
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    tmp = tempfile.mkdtemp(prefix="stridemem-dist-")
    try:
        procs = [ctx.Process(target=_worker, args=(r, world, device, backend,
                                                   os.path.join(tmp, "store"), out))
                 for r in range(world)]
        for p in procs:
            p.start()
        got = {}
        try:
            for _ in range(world):
                rank, passed, failed, lines = out.get(timeout=timeout)
                got[rank] = True
                R.passed += passed
                R.failed += failed
                for line in lines:
                    print(line)
        except queue.Empty:
            R.fail("ranks %s sent no result within %d s" % (
                sorted(set(range(world)) - set(got)), timeout))
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.terminate()
                p.join()
            if p.exitcode not in (0, None):
                R.fail("a rank exited with code %s" % p.exitcode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return R
