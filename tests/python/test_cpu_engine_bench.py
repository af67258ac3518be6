#!/usr/bin/python3
"""Smoke test of bench/cpu_engine_bench.py (issue 16's benchmark driver).

Runs the driver with --quick (small sizes, 1 rep) on a few cases of every
kind (a transpose, a bfloat16 conversion NumPy cannot do, a permutation, the
in-place add, a gather) and checks the JSON it writes: every selected case is
there, its correctness checks ran and passed for stridemem, every timing is
positive, and the targets are reported. It runs twice: with torch (when the
interpreter has it) and with --no-torch, where every torch number must be
null and the torch targets reported as not checked. It also checks the two
helpers the driver's bit-exact comparisons rest on, and that every timed
buffer, the reference copy's included, is on the kind of pages asked for
(--pages). It says nothing about speed: --quick sizes are too small for that.

The library is $STRIDEMEM_LIB (ctest sets it), else the driver's own search.
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "..", "..", "bench", "cpu_engine_bench.py")
CASES = ["transpose2d_4096_bf16", "copy_into_T_f32_to_bf16_4096x4096",
         "permute4d_64_f32_(3,2,1,0)", "inplace_add_transposed_4096_f32",
         "gather1d_1e6_of_1e7_f32_i32", "contiguous_copy_64MiB_f32"]
R = Results("test_cpu_engine_bench")


def positive(x):
    return isinstance(x, (int, float)) and x > 0


def run(with_torch, pages):
    what = ("with torch" if with_torch else "--no-torch") + ", --pages " + pages
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        cmd = [sys.executable, DRIVER, "--quick", "--reps", "1", "--json", path, "--pages", pages]
        for c in CASES:
            cmd += ["--only", c]
        if not with_torch:
            cmd.append("--no-torch")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if not R.check(p.returncode == 0, "%s: driver exited %d\nstdout:\n%s\nstderr:\n%s"
                       % (what, p.returncode, p.stdout, p.stderr)):
            return
        R.check("Issue 16 targets" in p.stdout, "%s: no target lines in the table" % what)
        with open(path) as f:
            data = json.load(f)
    meta, cases = data["meta"], data["cases"]
    R.check(meta["quick"] is True and meta["reps"] == 1 and meta["pages"] == pages,
            "%s: meta %r" % (what, meta))
    R.check(positive(meta["threads_stridemem"]), "%s: stridemem threads %r"
            % (what, meta["threads_stridemem"]))
    by_name = {c["name"]: c for c in cases}
    # --only matches substrings; none of these names is part of another case's.
    R.equal(sorted(by_name), sorted(CASES), "%s: cases in the JSON" % what)
    for name in CASES:
        c = by_name.get(name)
        if c is None:
            continue
        share = c["huge_page_share"]
        # The kernel may refuse huge pages (none free), never grant forbidden ones.
        R.check(share is not None and 0 <= share <= 1 and (pages == "huge" or share == 0),
                "%s %s: huge_page_share %r" % (what, name, share))
        R.check("stridemem" in c["checks_passed"] and not c["check_failures"],
                "%s %s: correctness checks %r, failures %r"
                % (what, name, c["checks_passed"], c["check_failures"]))
        for key in ("stridemem_gbps_cold", "stridemem_gbps_warm", "copy2t_gbps_cold",
                    "copy2t_gbps_warm", "copy_ratio_cold", "copy_ratio_warm",
                    "numpy_copy1t_gbps_cold", "bytes", "copy_bytes"):
            R.check(positive(c[key]), "%s %s: %s = %r" % (what, name, key, c[key]))
        numpy_na = "bf16" in name and "transpose" not in name
        for mode in ("cold", "warm"):
            if numpy_na:
                R.check(c["numpy_gbps_" + mode] is None, "%s %s: NumPy cell should be n/a"
                        % (what, name))
            else:
                R.check(positive(c["numpy_gbps_" + mode]) and positive(c["vs_numpy_" + mode]),
                        "%s %s: NumPy %s %r" % (what, name, mode, c["numpy_gbps_" + mode]))
            for key in ("torch_gbps_", "vs_torch_"):
                v = c[key + mode]
                if with_torch:
                    R.check(positive(v), "%s %s: %s%s = %r" % (what, name, key, mode, v))
                else:
                    R.check(v is None, "%s %s: %s%s = %r, want null without torch"
                            % (what, name, key, mode, v))
            for label, s in c[mode].items():
                R.check(positive(s["best_s"]) and positive(s["median_s"]),
                        "%s %s %s %s: %r" % (what, name, mode, label, s))
    targets = {t["target"]: t for t in data["targets"]}
    R.check(len(targets) >= 6, "%s: %d target lines" % (what, len(targets)))
    torch_lines = [t for t in data["targets"] if "torch" in t["target"].lower()]
    R.check(len(torch_lines) >= 2, "%s: torch target lines %r" % (what, torch_lines))
    for t in torch_lines:
        if with_torch:
            R.check(t["met"] in (True, False), "%s: %r" % (what, t))
        else:
            R.check(t["met"] is None and "not available" in t["detail"],
                    "%s: without torch, %r should say not checked" % (what, t))


def check_exactness_helpers():
    """The driver's correctness checks rest on same_bits and f32_to_bf16_bits:
    one must see a single flipped element, the other must round to nearest
    even (ties, overflow to infinity, NaN) exactly as the C API promises."""
    import numpy as np
    sys.path.insert(0, os.path.dirname(DRIVER))
    import cpu_engine_bench as bench
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    R.check(bench.same_bits(a, a.copy()) is None, "same_bits: equal arrays")
    b = a.copy()
    b[2, 1] = -0.0 if a[2, 1] == 0 else a[2, 1] + 1
    R.check("1 of 12" in (bench.same_bits(b, a) or ""), "same_bits: one element differs: %r"
            % bench.same_bits(b, a))
    z = np.zeros(2, np.float32)
    R.check(bench.same_bits(z * -1, z) is not None, "same_bits: -0.0 differs from 0.0 in bits")
    cases = [(0x3F808000, 0x3F80),  # tie, even: stays
             (0x3F818000, 0x3F82),  # tie, odd: rounds up to even
             (0x3F808001, 0x3F81),  # above the tie
             (0x3F807FFF, 0x3F80),  # below the tie
             (0x7F7FFFFF, 0x7F80),  # largest float: rounds to infinity
             (0xFF800000, 0xFF80),  # -infinity
             (0x00000001, 0x0000)]  # smallest subnormal: rounds to zero
    x = np.array([c for c, _ in cases], np.uint32).view(np.float32)
    got = bench.f32_to_bf16_bits(x).view(np.uint16)
    for (src, want), g in zip(cases, got):
        R.equal(int(g), want, "f32_to_bf16_bits(0x%08X)" % src)
    nan = bench.f32_to_bf16_bits(np.array([np.nan], np.float32)).view(np.uint16)[0]
    R.check((int(nan) & 0x7F80) == 0x7F80 and (int(nan) & 0x7F) != 0,
            "f32_to_bf16_bits(NaN) = 0x%04X is not a NaN" % nan)


def vm_flags(addr):
    """The VmFlags of the mapping holding addr (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr < hi
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    return None


def check_memory():
    """Memory.empty: 2 MiB aligned, advised before the first touch: "hg"
    (MADV_HUGEPAGE) or "nh" (MADV_NOHUGEPAGE) in the mapping's flags, private
    (a shared anonymous mapping is shmem, which transparent huge pages leave
    alone), and huge_page_share reads what the kernel granted."""
    import numpy as np
    sys.path.insert(0, os.path.dirname(DRIVER))
    import cpu_engine_bench as bench
    for pages, flag in (("huge", "hg"), ("4k", "nh")):
        mem = bench.Memory(pages)
        a = mem.zeros((3, 5 << 18), np.float32)  # 15 MiB
        R.equal(a.shape, (3, 5 << 18), "Memory(%s).zeros: shape" % pages)
        R.check(a.flags.c_contiguous and a.flags.writeable and not a.any(),
                "Memory(%s).zeros: a writable row-major array of zeros" % pages)
        R.equal(a.ctypes.data % bench.HUGE_PAGE, 0, "Memory(%s): 2 MiB aligned" % pages)
        flags = vm_flags(a.ctypes.data) or []
        R.check(flag in flags and "sh" not in flags,
                "Memory(%s): mapping flags %r, want %s and private" % (pages, flags, flag))
        share = bench.huge_page_share([a])
        R.check(share is not None and 0 <= share <= 1 and (pages == "huge" or share == 0),
                "Memory(%s): huge_page_share %r" % (pages, share))
        b = mem.copy_of(np.arange(7, dtype=np.int16))
        R.check(b.dtype == np.int16 and list(b) == list(range(7)), "Memory(%s).copy_of" % pages)
    try:
        bench.Memory("2m")
        R.fail("Memory('2m') accepted")
    except ValueError:
        pass


def main():
    try:
        import numpy  # noqa: F401
    except ImportError as e:
        R.fail("the driver needs NumPy, this interpreter (%s) has none: %s"
               % (sys.executable, e))
        return R.finish()
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError as e:
        have_torch = False
        R.skip("the run with torch", "this interpreter has no torch (%s)" % e)
    check_exactness_helpers()
    check_memory()
    if have_torch:
        run(True, "huge")
    run(False, "4k")
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
