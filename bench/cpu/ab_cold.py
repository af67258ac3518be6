#!/usr/bin/python3
"""Alternating A/B timing of one copy case on several builds of the library,
for a shared machine where best-of-N timings swing by 2x between runs.

Every rep, for each library in turn (in a new random order each rep, so
that none always follows the same one): flush the caches (cpu_engine_bench's
Flusher, 96 MiB read on every CPU), time a contiguous copy of as many bytes
as the case's larger operand, flush again, time the case. The figure per rep
is the case's speed over that copy's, so a rep where another process took a
core counts against both; the table shows the median and quartiles of those
ratios over the reps (the first rep, which faults pages in, is not counted).
--thread-time (with --threads 1) times thread CPU time instead of wall time,
which other processes disturb less. Every buffer, the case's and the
reference copy's, is on the pages --pages asks for (cpu_engine_bench.Memory:
huge, the default, or 4k), and the header says how much of them the kernel
put on huge pages. With 4 KiB pages the physical frames, and with them the
cache sets a strided walk lands in, differ from run to run: compare builds
within one run, not across runs.

    /usr/bin/python3 bench/cpu/ab_cold.py --case 64,64,64,64:3,2,1,0:float32 \\
        --lib main=/tmp/main-cpu/libstridemem.so --lib new=build/libstridemem.so

--case SHAPE:PERM:DTYPE copies np.ascontiguousarray(src.transpose(PERM)) of
a random src of SHAPE; every result is checked bit-exact against NumPy.

--torch adds PyTorch to the rotation: torch.from_numpy of the same buffers,
dst.copy_(src.permute(PERM)) on --threads threads, its reference copy being
torch's own copy_ of the same bytes. Each library's row then also says how
fast it was against torch in the same rep (torch's time over the library's,
median and quartiles: above 1 means faster than torch).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cpu_engine_bench as B  # noqa: E402


def expected(view):
    """What every library's copy of the case must hold, byte for byte."""
    return np.ascontiguousarray(view)


def check(name, got, want):
    """Exits naming the library whose copy is not bit-exact."""
    if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        sys.exit("%s: wrong result" % name)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--lib", action="append", required=True, help="NAME=PATH (repeatable)")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--thread-time", action="store_true")
    ap.add_argument("--pages", choices=B.PAGE_KINDS, default="huge")
    ap.add_argument("--torch", action="store_true", help="time torch's copy_ in the same reps")
    a = ap.parse_args(argv)
    mem = B.Memory(a.pages)
    shape, perm, dt = a.case.split(":")
    shape = tuple(int(x) for x in shape.split(","))
    perm = tuple(int(x) for x in perm.split(","))
    dt = np.dtype(dt)
    rng = np.random.default_rng(1)
    src = rng.integers(0, 256, size=int(np.prod(shape)), dtype=np.uint8)
    src = (src.astype(np.bool_) if dt == np.bool_ else
           src.view(np.int8).astype(dt) if dt.itemsize == 1 else
           rng.standard_normal(int(np.prod(shape)), dtype=np.float32).astype(dt)).reshape(shape)
    src = mem.copy_of(src)
    view = src.transpose(perm)
    want = expected(view)
    dst = mem.zeros(want.shape, dt)
    ref_src = mem.empty((max(src.nbytes, dst.nbytes),), np.uint8)
    ref_src[...] = 1
    ref_dst = mem.zeros(ref_src.shape, np.uint8)
    share = B.huge_page_share([src, dst, ref_src, ref_dst])
    libs = []
    for spec in a.lib:
        name, path = spec.split("=", 1)
        L = B.Lib(path)
        L.L.sm_set_num_threads(a.threads)
        libs.append((name, L, L.wrap(dst), L.wrap(view), L.wrap(ref_dst), L.wrap(ref_src)))
    flush = B.Flusher(96)
    clock = time.thread_time if a.thread_time else time.perf_counter

    def timed(run):
        flush()
        t = clock()
        run()
        return clock() - t

    def sm_copy(L, hd, hs):
        return lambda: L.check(L.L.sm_copy_into(hd, hs), "sm_copy_into")

    runs = [(name, sm_copy(L, rd, rs), sm_copy(L, hd, hs)) for name, L, hd, hs, rd, rs in libs]
    if a.torch:
        import torch
        torch.set_num_threads(a.threads)
        tdst, tview = torch.from_numpy(dst), torch.from_numpy(src).permute(*perm)
        tref_dst, tref_src = torch.from_numpy(ref_dst), torch.from_numpy(ref_src)
        runs.append(("torch", lambda: tref_dst.copy_(tref_src), lambda: tdst.copy_(tview)))
    ratios = {n: [] for n, *_ in runs}
    gbps = {n: [] for n, *_ in runs}
    vs_torch = {n: [] for n, *_ in runs if n != "torch"}
    nbytes = 2 * view.size * dt.itemsize
    order = np.random.default_rng(2)
    for rep in range(a.reps + 1):
        times = {}
        for i in order.permutation(len(runs)):
            name, copy, case = runs[i]
            dst[...] = 0
            t_copy = timed(copy)
            times[name] = t = timed(case)
            check(name, dst, want)
            if rep:
                ratios[name].append(t_copy / t)
                gbps[name].append(nbytes / t / 1e9)
        if rep and a.torch:
            for name in vs_torch:
                vs_torch[name].append(times["torch"] / times[name])
    print("%s, %d threads, %s, %d reps, %s pages asked (%s of the buffers on huge pages)"
          % (a.case, a.threads, "thread time" if a.thread_time else "wall", a.reps, a.pages,
             "?" if share is None else "%.0f%%" % (100 * share)))
    def spread(v):
        v = sorted(v)
        return statistics.median(v), v[len(v) // 4], v[(3 * len(v)) // 4]

    for name in ratios:
        line = ("%-10s of copy: median %.3f (q1-q3 %.3f-%.3f)   %.2f GB/s median"
                % ((name,) + spread(ratios[name]) + (statistics.median(gbps[name]),)))
        if name in vs_torch and vs_torch[name]:
            line += "   vs torch: median %.3fx (q1-q3 %.3f-%.3f)" % spread(vs_torch[name])
        print(line)


if __name__ == "__main__":
    main()
