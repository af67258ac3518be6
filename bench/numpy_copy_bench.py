#!/usr/bin/python3
"""Issue 6 benchmark driver: stridemem's CPU copy engine, memcpy and NumPy
doing the same copies, in one run, with the ratios.

It runs the C++ benchmark (bench/cpu/copy_bench.cpp, built as
bench_copy_bench) for stridemem and memcpy, then times NumPy on the same
cases in this process, and prints one table. GB/s count bytes read + written.

Usage (Debian's python3 has NumPy):
    cmake --build build-cpu --target bench_copy_bench
    /usr/bin/python3 bench/numpy_copy_bench.py [--bin PATH] [--reps N] [--threads N]

Timing: each case runs once to warm up, then --reps times, each run from cold
caches (96 MiB of other memory is read first), stridemem alternating with its
memcpy reference; the table shows the best run (least disturbed by other
processes) and the median.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


# Rows shown for context, outside the list of cases (and the targets).
EXTRA = {"contiguous_copy_64MiB_f32", "copy_into_f32_to_f16_4096x4096"}


def find_binary():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    hits = sorted(glob.glob(os.path.join(root, "build*", "bench", "bench_copy_bench")),
                  key=os.path.getmtime, reverse=True)
    return hits[0] if hits else None


_JUNK = np.ones((96 << 20) // 8, dtype=np.uint64)


def flush_caches():
    """Reads 96 MiB of clean memory, as copy_bench does before each timed run."""
    return int(_JUNK[::8].sum())


def timed(fn, reps):
    fn()  # warm-up (first touch)
    times = []
    for _ in range(reps):
        flush_caches()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def numpy_cases():
    """name -> (function, bytes read + written), the same copies as copy_bench."""
    rng = np.random.default_rng(0)
    cases = {}
    n2, n4 = 4096, 64

    def copy_case(name, dst, src_view):
        cases[name] = (lambda: np.copyto(dst, src_view), dst.nbytes + src_view.nbytes)

    a = rng.standard_normal((64 << 20) // 4, dtype=np.float32)
    copy_case("contiguous_copy_64MiB_f32", np.empty_like(a), a)

    m32 = rng.standard_normal((n2, n2), dtype=np.float32)
    copy_case("transpose2d_4096_f32", np.empty_like(m32), m32.T)
    m16 = m32.astype(np.float16)
    copy_case("transpose2d_4096_f16", np.empty_like(m16), m16.T)
    t4 = rng.standard_normal((n4,) * 4, dtype=np.float32)
    for p in [(0, 1, 3, 2), (3, 2, 1, 0), (0, 2, 1, 3), (1, 0, 3, 2), (2, 3, 0, 1)]:
        name = "permute4d_64_f32_(%s)" % ",".join(map(str, p))
        copy_case(name, np.empty_like(t4), t4.transpose(p))
    x = rng.standard_normal((32, 64, 112, 112), dtype=np.float32)
    copy_case("nchw_to_nhwc_32x64x112x112_f32", np.empty((32, 112, 112, 64), np.float32),
              x.transpose(0, 2, 3, 1))
    # NumPy has no bfloat16: its nearest conversion (f32 -> f16) stands in.
    copy_case("copy_into_f32_to_bf16_4096x4096", np.empty((n2, n2), np.float16), m32)
    copy_case("copy_into_f32_to_f16_4096x4096", np.empty((n2, n2), np.float16), m32)
    at = rng.standard_normal((n2, n2), dtype=np.float32)
    bt = rng.standard_normal((n2, n2), dtype=np.float32)
    cases["inplace_add_transposed_4096_f32"] = (
        lambda: np.add(at.T, bt, out=at.T), 3 * at.nbytes)
    return cases


def run_engine(binary, reps, threads):
    cmd = [binary, "--json", "--reps", str(reps)]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=None, help="path of bench_copy_bench")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None,
                    help="stridemem threads (default: the library's, one per core)")
    args = ap.parse_args()
    binary = args.bin or find_binary()
    if not binary or not os.path.exists(binary):
        sys.exit("bench_copy_bench not found: build it, or pass --bin")

    load_before = os.getloadavg()
    eng = run_engine(binary, args.reps, args.threads)
    one = run_engine(binary, args.reps, 1) if eng["threads"] != 1 else eng
    npc = numpy_cases()

    print("stridemem CPU copy engine vs memcpy vs NumPy %s (%d reps, best of; median in "
          "brackets), GB/s of bytes read + written" % (np.__version__, args.reps))
    print("stridemem threads: %d (also shown with 1), %s tile kernels; NumPy and memcpy: 1 thread"
          % (eng["threads"], "AVX2" if eng.get("avx2") else "baseline"))
    hdr = "%-34s %15s %15s %15s %15s %8s %8s" % (
        "case", "stridemem", "stridemem 1t", "memcpy", "NumPy", "vs memc", "vs NumPy")
    print(hdr)
    print("-" * len(hdr))
    ratios = []
    one_by_name = {c["name"]: c for c in one["cases"]}
    for c in eng["cases"]:
        name = c["name"]
        ours_best = c["bytes"] / c["best_s"] / 1e9
        ours_med = c["bytes"] / c["median_s"] / 1e9
        o1 = one_by_name[name]
        one_best = o1["bytes"] / o1["best_s"] / 1e9
        one_med = o1["bytes"] / o1["median_s"] / 1e9
        mem_best = c["memcpy_bytes"] / c["memcpy_best_s"] / 1e9
        mem_med = c["memcpy_bytes"] / c["memcpy_median_s"] / 1e9
        fn, nbytes = npc[name]
        nb, nm = timed(fn, args.reps)
        np_best, np_med = nbytes / nb / 1e9, nbytes / nm / 1e9
        r_mem = ours_best / mem_best
        r_np = ours_best / np_best
        if name not in EXTRA:
            ratios.append(r_mem)
        print("%-34s %6.2f (%6.2f) %6.2f (%6.2f) %6.2f (%6.2f) %6.2f (%6.2f) %7.0f%% %7.1fx" % (
            name, ours_best, ours_med, one_best, one_med, mem_best, mem_med, np_best, np_med,
            100 * r_mem, r_np))
    geo = float(np.exp(np.mean(np.log(ratios))))
    print("-" * len(hdr))
    print("issue-6 cases (all rows but %s): geometric mean of stridemem / memcpy %.0f%%, "
          "lowest %.0f%%" % (" and ".join(sorted(EXTRA)), 100 * geo, 100 * min(ratios)))
    print("note: NumPy has no bfloat16; its f32->f16 copy stands in on the bf16 row.")
    print("load average before / after the run: %.1f / %.1f (%d CPUs)"
          % (load_before[0], os.getloadavg()[0], os.cpu_count()))


if __name__ == "__main__":
    main()
