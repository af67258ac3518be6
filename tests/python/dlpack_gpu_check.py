#!/usr/bin/env python3
"""DLPack on a GPU: stridemem <-> PyTorch and stridemem <-> CuPy, both
directions (issue 5). A script for a GPU session, not a ctest test: it needs
a CUDA build of libstridemem (STRIDEMEM_LIB), a usable GPU, and torch and/or
cupy in the interpreter that runs it.

    STRIDEMEM_LIB=build-cuda/libstridemem.so PYTHONPATH=bindings/python \\
        python3 tests/python/dlpack_gpu_check.py [--json OUT.json]

For each consumer present:
  export  consumer.from_dlpack(our tensor) for dense, permuted, sliced,
          expanded, size-0 and 0-d CUDA tensors: same values, same device
          memory (data pointer), same strides; a write on either side is
          seen by the other.
  matrix  the consumer matrix of test_dlpack_consumers.py (which runs it on
          the CPU with NumPy and torch 1.13) on cuda:0: every dtype over
          dense, 0-d, size-0, expanded, sliced, transposed, flipped,
          negative-step and unfolded layouts through consumer.from_dlpack(t),
          each call in a child process, so that an abort is a failure of its
          case: a correct tensor (zero copy unless negative strides) or a
          clean exception; negative strides never reach the consumer by
          default (a flagged copy when it asks for a versioned capsule, our
          BufferError for a legacy one); copy=True / normalize=True give a
          dense copy, copy=False our BufferError, normalize=False (CuPy
          only: torch aborts on them) the strides as they are.
  import  stridemem.from_dlpack(consumer tensor) for the same layouts: same
          values and memory; the consumer's memory stays alive while our
          last view does, and is released after it (weakref / memory).
  versioned  DLManagedTensorVersioned capsules both ways, where the consumer
          supports them (torch >= 2.4 / cupy >= 13); a missing feature is
          reported as NOT RUN with the reason, never as passed.
  stream  a non-default stream on each side: work queued on the producer's
          stream is complete before the consumer reads on its own stream.
  pinned  our pinned-host tensors (DLPack kDLCUDAHost) to the consumer.
  array interface  torch.as_tensor / cupy.asarray through our
          __cuda_array_interface__: same memory, strides, writes both ways,
          memory alive after we close our tensor, freed with the consumer's.
Every check prints PASS/FAIL/NOT RUN; exit 0 only if nothing failed and
something ran, 1 on any failure, 77 when there is no GPU or no consumer.
"""

import argparse
import gc
import itertools
import json
import os
import sys
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import CapsuleHolder, Checklist, import_stridemem  # noqa: E402
import test_dlpack_consumers as matrix  # noqa: E402

import numpy as np  # noqa: E402

sm = import_stridemem()

CHECKS = Checklist("dlpack_gpu_check")
record, check = CHECKS.record, CHECKS.check


def attempt(name, fn, *args):
    """Runs fn(*args); an exception is a failure of that check, with its message."""
    try:
        return fn(*args)
    except Exception as e:
        record(name, "FAIL", "%s: %s" % (type(e).__name__, e))
        return None


def cuda_stats():
    gc.collect()
    s = sm.memory_stats("cuda:0")
    return s["active_storages"]


def one_of_our_layouts(i):
    """Layout i of our_layouts() on a base of its own (None past the last)."""
    views = our_layouts()
    for j, (_, v, _) in enumerate(views):
        if j != i:
            v.close()
    return views[i] if i < len(views) else None


def our_layouts():
    """(name, our CUDA view, NumPy reference)."""
    ref = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    base = sm.from_numpy(ref, device="cuda:0")
    out = [("dense", base.retain(), ref),
           ("permuted", base.permute(1, 0), ref.T),
           ("sliced [1:, ::2]", base[1:, ::2], ref[1:, ::2]),
           ("expanded", base[1:2].expand(3, 6), np.broadcast_to(ref[1:2], (3, 6))),
           ("size 0", base.narrow(0, 1, 0), ref[1:1]),
           ("0-d", base.select(0, 2).select(0, 3), ref[2, 3, ...])]
    base.close()
    return out


# ---------------------------------------------------------------------------
# A consumer: what differs between torch and cupy
# ---------------------------------------------------------------------------

class Torch(object):
    name = "torch"

    def __init__(self):
        import torch
        import torch.utils.dlpack
        self.torch = torch
        self.version = torch.__version__

    def from_dlpack(self, obj):
        return self.torch.from_dlpack(obj)

    def from_capsule(self, cap):
        return self.torch.utils.dlpack.from_dlpack(cap)

    def to_capsule(self, x, versioned):
        if versioned:
            return x.__dlpack__(max_version=(1, 0))
        return self.torch.utils.dlpack.to_dlpack(x)

    def host(self, x):
        return x.cpu().numpy()

    def ptr(self, x):
        return x.data_ptr()

    def strides(self, x):
        return tuple(x.stride())

    def layouts(self):
        t = self.torch.arange(4 * 6, dtype=self.torch.float32, device="cuda").reshape(4, 6)
        ref = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
        return [("dense", t, ref), ("transposed", t.t(), ref.T),
                ("sliced", t[1:, ::2], ref[1:, ::2]),
                ("expanded", t[1:2].expand(3, 6), np.broadcast_to(ref[1:2], (3, 6))),
                ("size 0", t[1:1], ref[1:1]), ("0-d", t[2, 3], ref[2, 3, ...])]

    def fill(self, x, v):
        x.fill_(v)

    def new_stream(self):
        return self.torch.cuda.Stream()

    def stream_ptr(self, s):
        return s.cuda_stream

    def on_stream(self, s):
        return self.torch.cuda.stream(s)

    def big(self, n):
        return self.torch.zeros(n, dtype=self.torch.float32, device="cuda")

    def sync(self):
        self.torch.cuda.synchronize()

    def pinned_ok(self, x, ref):
        return np.array_equal(x.cpu().numpy(), ref)


class CuPy(object):
    name = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy
        self.version = cupy.__version__

    def from_dlpack(self, obj):
        return self.cp.from_dlpack(obj)

    def from_capsule(self, cap):
        return self.cp.from_dlpack(CapsuleHolder(cap, (2, 0)))

    def to_capsule(self, x, versioned):
        if versioned:
            return x.__dlpack__(max_version=(1, 0))
        return x.toDlpack() if hasattr(x, "toDlpack") else x.__dlpack__()

    def host(self, x):
        return self.cp.asnumpy(x)

    def ptr(self, x):
        return x.data.ptr

    def strides(self, x):
        return tuple(s // x.itemsize for s in x.strides)

    def layouts(self):
        t = self.cp.arange(4 * 6, dtype=self.cp.float32).reshape(4, 6)
        ref = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
        return [("dense", t, ref), ("transposed", t.T, ref.T),
                ("sliced", t[1:, ::2], ref[1:, ::2]),
                ("negative step", t[::-1, ::-2], ref[::-1, ::-2]),
                ("expanded", self.cp.broadcast_to(t[1:2], (3, 6)),
                 np.broadcast_to(ref[1:2], (3, 6))),
                ("size 0", t[1:1], ref[1:1]), ("0-d", t[2, 3], ref[2, 3, ...])]

    def fill(self, x, v):
        x.fill(v)

    def new_stream(self):
        return self.cp.cuda.Stream(non_blocking=True)

    def stream_ptr(self, s):
        return s.ptr

    def on_stream(self, s):
        return s

    def big(self, n):
        return self.cp.zeros(n, dtype=self.cp.float32)

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def pinned_ok(self, x, ref):
        return np.array_equal(np.asarray(x) if not hasattr(x, "get") else x.get(), ref)


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------

def check_same_memory(c, what, x, v, ref):
    """The consumer's array x shows ref and, when it has elements, is our
    tensor v's memory with v's strides (no copy)."""
    check(np.array_equal(c.host(x), ref), what + ": values")
    if ref.size:
        check(c.ptr(x) == v.data_ptr, what + ": same device memory",
              "%#x vs %#x" % (c.ptr(x), v.data_ptr))
        check(c.strides(x) == tuple(v.strides), what + ": strides",
              "%s vs %s" % (c.strides(x), v.strides))


def export_to(c):
    s0 = cuda_stats()
    for name, v, ref in our_layouts():
        what = "%s export %s" % (c.name, name)
        x = attempt(what, c.from_dlpack, v)
        if x is None:
            v.close()
            continue
        check_same_memory(c, what, x, v, ref)
        if ref.size and "expanded" not in name:
            c.fill(x, 5.0)
            c.sync()
            check(np.all(v.numpy() == 5.0), what + ": consumer's write seen by us")
            v.fill_(-1.0)
            sm.synchronize("cuda:0")
            check(np.all(c.host(x) == -1.0), what + ": our write seen by the consumer")
            # The views share one base: put the reference values back.
            # (np.array, not ascontiguousarray: that makes a 0-d ref 1-d.)
            v.copy_(sm.from_numpy(np.array(ref), device="cuda:0"))
            sm.synchronize("cuda:0")
        v.close()
        del x
    check(cuda_stats() == s0, "%s export: every storage freed" % c.name,
          "%d live vs %d" % (cuda_stats(), s0))


class _MatrixResults(object):
    """Collects the matrix children's checks for the Checklist."""

    def __init__(self):
        self.passed, self.failures = 0, []

    def ok(self, what=""):
        self.passed += 1

    def fail(self, what):
        self.failures.append(what)


def consumer_matrix(c, device="cuda:0"):
    """test_dlpack_consumers.py's matrix for this consumer on device, each
    consumer call in a child process."""
    res = _MatrixResults()
    died = matrix.run_children(res, matrix.cases([c.name], selftest=False), device=device)
    for case, rc in sorted(died.items()):
        res.fail("%s: the consumer killed the process (exit status %d)" % (case, rc))
    for f in res.failures:
        record("%s matrix: %s" % (c.name, f[:300]), "FAIL")
    record("%s DLPack consumer matrix on %s" % (c.name, device),
           "FAIL" if res.failures or not res.passed else "PASS",
           "%d checks passed, %d failed" % (res.passed, len(res.failures)))


def array_interface(c):
    """__cuda_array_interface__ (v3): the consumer's as-array reads our
    memory without a copy, with our strides, and writes show both ways."""
    conv = {"torch": lambda v: c.torch.as_tensor(v, device="cuda"),
            "cupy": lambda v: c.cp.asarray(v)}[c.name]
    s0 = cuda_stats()
    # A fresh base per layout: the write below changes the whole base, and
    # the consumer's array keeps it alive after our close().
    for i in itertools.count():
        layout = one_of_our_layouts(i)
        if layout is None:
            break
        name, v, ref = layout
        what = "%s __cuda_array_interface__ %s" % (c.name, name)
        x = attempt(what, conv, v)
        if x is None:
            v.close()
            continue
        check_same_memory(c, what, x, v, ref)
        if ref.size and "expanded" not in name:
            v.fill_(-2.0)
            sm.synchronize("cuda:0")
            check(np.all(c.host(x) == -2.0), what + ": our write seen by the consumer")
        v.close()  # the consumer's array keeps the memory alive
        if ref.size and "expanded" not in name:
            check(np.all(c.host(x) == -2.0), what + ": alive after our close()")
        del x, v, layout  # the last references: our pinned handle goes with v
    check(cuda_stats() == s0, "%s __cuda_array_interface__: every storage freed" % c.name,
          "%d live vs %d" % (cuda_stats(), s0))


def import_from(c):
    s0 = cuda_stats()
    for name, x, ref in c.layouts():
        what = "%s import %s" % (c.name, name)
        try:
            t = sm.from_dlpack(x)
        except sm.SizeOverflowError as e:
            if c.name == "cupy" and "negative" in name:
                # CuPy divides negative byte strides by an unsigned itemsize
                # in __dlpack__ (cupy/cupy#10172, fixed by #10228 after
                # 14.x): the capsule holds strides near 2^62. Refusing them
                # cleanly is the right answer; the import must leave nothing.
                record(what, "NOT RUN", "%s %s exports negative strides wrongly; refused "
                       "cleanly (%s)" % (c.name, c.version, str(e)[:90]))
                continue
            record(what, "FAIL", "%s: %s" % (type(e).__name__, e))
            continue
        except Exception as e:
            record(what, "FAIL", "%s: %s" % (type(e).__name__, e))
            continue
        check(t.shape == ref.shape, what + ": shape")
        check(np.array_equal(t.numpy(), ref), what + ": values")
        if ref.size:
            check(t.data_ptr == c.ptr(x), what + ": same device memory")
            check(tuple(t.strides) == c.strides(x), what + ": strides")
            if "expanded" not in name:
                t.add_(1.0)
                sm.synchronize("cuda:0")
                check(np.array_equal(c.host(x), ref + 1), what + ": our write seen by "
                      "the consumer")
                t.sub_(1.0)
                sm.synchronize("cuda:0")
        t.close()
    # Lifetime: the consumer's memory lives while our last view does.
    x = c.layouts()[0][1]
    ref = c.host(x).copy()
    try:
        w = weakref.ref(x)
    except TypeError:
        w = None
    t = sm.from_dlpack(x)
    v = t.T
    t.close()
    del x
    gc.collect()
    if w is not None:
        check(w() is not None, "%s import: the consumer's tensor lives while our view does"
              % c.name)
    check(np.array_equal(v.numpy(), ref.T), "%s import: values through the last view" % c.name)
    v.close()
    gc.collect()
    if w is not None:
        check(w() is None, "%s import: the consumer's tensor is released after our last view"
              % c.name)
    else:
        record("%s import: release observed" % c.name, "NOT RUN", "no weakref support")
    check(cuda_stats() == s0, "%s import: every storage freed" % c.name)


def versioned(c):
    # consumer -> us, versioned capsule
    what = "%s -> stridemem versioned capsule" % c.name
    x = c.layouts()[1][1]
    try:
        cap = c.to_capsule(x, True)
    except Exception as e:
        record(what, "NOT RUN", "%s %s cannot make one (%s: %s)"
               % (c.name, c.version, type(e).__name__, e))
        cap = None
    if cap is not None:
        check("dltensor_versioned" in repr(cap), what + ": capsule name", repr(cap))
        t = attempt(what, sm.from_dlpack, cap)
        if t is not None:
            check(t.data_ptr == c.ptr(x) and np.array_equal(t.numpy(), c.host(x)),
                  what + ": same memory and values")
            check(not t.is_read_only, what + ": writable (no READ_ONLY flag)")
            t.close()
        del cap
    # us -> consumer, versioned capsule
    what = "stridemem -> %s versioned capsule" % c.name
    t = sm.arange_n(0, 1, 12, "float32", device="cuda:0").view(3, 4).T
    cap = t.__dlpack__(max_version=(1, 0), stream=1)
    try:
        x = c.from_capsule(cap)
        check(c.ptr(x) == t.data_ptr and np.array_equal(c.host(x), t.numpy()),
              what + ": same memory and values")
        del x
    except Exception as e:
        record(what, "NOT RUN", "%s %s does not take versioned capsules (%s: %s)"
               % (c.name, c.version, type(e).__name__, str(e)[:100]))
    del cap
    # The consumer's own __dlpack__ protocol path (it asks for max_version).
    what = "stridemem -> %s via from_dlpack(obj) (protocol negotiation)" % c.name
    x = attempt(what, c.from_dlpack, t)
    if x is not None:
        check(c.ptr(x) == t.data_ptr, what + ": same memory")
        del x
    t.close()


def streams(c):
    n = 1 << 24
    # us -> consumer: we write on a non-default stream; the consumer, on its
    # own non-default stream, must see the finished values.
    what = "%s stream: our write on a side stream, consumer reads on its stream" % c.name
    cs = c.new_stream()
    ours = attempt(what, c.new_stream)
    if ours is None:
        return
    sm.set_stream("cuda:0", c.stream_ptr(ours))
    try:
        t = sm.zeros(n, device="cuda:0")
        for _ in range(20):
            t.add_(1.0)  # queued on our side stream
        with c.on_stream(cs):
            x = c.from_dlpack(t)  # __dlpack__(stream=consumer's stream)
            total = float(x.sum())
        check(total == 20.0 * n, what, "sum %r, want %r" % (total, 20.0 * n))
        del x
        t.close()
    finally:
        sm.set_stream("cuda:0", 0)
    # consumer -> us: the consumer writes on its stream; we read on ours.
    what = "%s stream: consumer's write on its stream, we read on a side stream" % c.name
    x = c.big(n)
    with c.on_stream(cs):
        for _ in range(20):
            x += 1.0
        sm.set_stream("cuda:0", c.stream_ptr(ours))
        try:
            t = sm.from_dlpack(x)  # asks x.__dlpack__(stream=our stream)
            u = t.clone()  # queued on our stream
            got = u.numpy()
            check(bool(np.all(got == 20.0)), what, "min %r max %r" % (got.min(), got.max()))
            u.close()
            t.close()
        finally:
            sm.set_stream("cuda:0", 0)
    c.sync()


def pinned(c):
    what = "stridemem pinned host -> %s" % c.name
    ref = np.arange(10, dtype=np.float32)
    try:
        t = sm.from_numpy(ref, device="cuda_host")
    except sm.StrideMemError as e:
        record(what, "NOT RUN", "no pinned memory: %s" % e)
        return
    check(t.__dlpack_device__() == (3, 0), what + ": __dlpack_device__ is kDLCUDAHost")
    try:
        x = c.from_dlpack(t)
        check(c.pinned_ok(x, ref), what + ": values")
        del x
    except Exception as e:
        # torch 2.11 and CuPy 14 take no kDLCUDAHost tensor (DLPack's type for
        # pinned host memory); NumPy does (test_dlpack_numpy). What we check
        # here is that the refusal left our tensor intact.
        record(what, "NOT RUN", "%s %s refuses kDLCUDAHost (%s: %s)"
               % (c.name, c.version, type(e).__name__, str(e)[:80]))
        check(np.array_equal(t.numpy(), ref), what + ": our tensor intact after the refusal")
    t.close()
    if c.name == "torch":
        # torch's pinned tensors are exported as kDLCPU: we take them as CPU
        # tensors over the same (pinned) memory.
        what = "torch pinned host -> stridemem"
        x = c.torch.arange(10, dtype=c.torch.float32).pin_memory()
        u = attempt(what, sm.from_dlpack, x)
        if u is not None:
            check(u.device == sm.Device("cpu") and u.data_ptr == x.data_ptr()
                  and np.array_equal(u.numpy(), ref), what + ": same memory and values",
                  "%s %#x vs %#x" % (u.device, u.data_ptr, x.data_ptr()))
            u.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    if sm.cuda_device_count() < 1:
        print("NOT RUN: no usable GPU (sm_cuda_device_count() == 0): is STRIDEMEM_LIB a CUDA "
              "build?")
        return 77
    consumers = []
    for cls in (Torch, CuPy):
        try:
            consumers.append(cls())
        except Exception as e:
            record("%s consumer" % cls.name, "NOT RUN", "cannot import: %s" % e)
    if not consumers:
        return 77
    for c in consumers:
        print("== %s %s" % (c.name, c.version))
        for fn in (export_to, consumer_matrix, array_interface, import_from, versioned, streams,
                   pinned):
            try:
                fn(c)
            except Exception as e:
                record("%s %s" % (c.name, fn.__name__), "FAIL",
                       "raised %s: %s" % (type(e).__name__, e))
    rc = CHECKS.finish()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"consumers": {c.name: c.version for c in consumers},
                       "results": CHECKS.results}, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
