"""Worker functions of test_multiprocessing_sharing.py: importable by name,
so that spawned and forkserver children find them."""
import os
import signal
import time

import numpy as np


def fill_and_report(q_in, q_out):
    """Takes tensors from q_in until None; for each, reports what arrived
    (values, layout, whether it is shared) and writes 100 + index into it."""
    import stridemem as sm  # noqa: F401  (registers the reducers in this process)
    while True:
        t = q_in.get()
        if t is None:
            break
        before = np.array(t).tolist()
        layout = (t.shape, t.strides, t.storage_offset, t.dtype.name, t.is_shared())
        if t.is_shared():
            flat = t.reshape(-1) if t.is_contiguous() else None
            for i in range(t.numel):
                idx = np.unravel_index(i, t.shape) if t.shape else ()
                t[tuple(int(k) for k in idx)] = 100 + i
            del flat
        q_out.put((before, layout))
        t.close()


def write_arg(t, value, done):
    """A spawned child given a tensor as its Process argument."""
    t.fill_(value) if hasattr(t, "fill_") else t.__setitem__(Ellipsis, value)
    done.set()


def hold_until_killed(q_in, ready):
    """Receives a tensor, writes to it, then waits to be killed."""
    t = q_in.get()
    t[...] = 7
    ready.set()
    while True:
        time.sleep(1)


def fill_batch(q_jobs, q_done):
    """A data-loader worker: fills the batches it is told about (views of
    the parent's shared stack) until None."""
    while True:
        job = q_jobs.get()
        if job is None:
            break
        k, batch = job
        batch[...] = np.full(batch.shape, k, dtype=np.float32)
        q_done.put(k)
        batch.close()


def pid():
    return os.getpid()


def kill(p):
    os.kill(p, signal.SIGKILL)
