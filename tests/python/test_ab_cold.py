#!/usr/bin/python3
"""Smoke test of bench/cpu/ab_cold.py, the A/B driver behind the tables of
bench/RESULTS.md.

Runs the driver as its usage shows, on a small case with two names for the
same library and a few reps, once per kind of pages (--pages), and checks
its table: the case line (with the pages asked and how much of the buffers
the kernel put on huge pages: none where 4k was asked), one line
per name in the order given, every ratio and speed a positive number with
the quartiles around the median. Then, in this process, it swaps the
driver's reference for one with a single byte changed and checks the run
stops naming the first library ("wrong result"), which is what keeps a
table from being printed for a library that copies wrongly. With torch in
the interpreter, a run with --torch must add a torch row and a "vs torch"
figure (median inside its quartiles) to each library's row. It says nothing
about speed: the case is too small for that.

The library is $STRIDEMEM_LIB (ctest sets it), else build/libstridemem.so.
"""

import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DRIVER_DIR = os.path.join(REPO, "bench", "cpu")
DRIVER = os.path.join(DRIVER_DIR, "ab_cold.py")
sys.path.insert(0, HERE)
from _util import Results  # noqa: E402

R = Results("test_ab_cold")
LIB = os.environ.get("STRIDEMEM_LIB") or os.path.join(REPO, "build", "libstridemem.so")
# Large enough that a sanitizer build still prints a speed above 0.00 GB/s.
CASE = "32,64,48:2,0,1:float32"
NUMBER = r"(\d+\.\d+)"
ROW = re.compile(r"^(\S+)\s+of copy: median %s \(q1-q3 %s-%s\)\s+%s GB/s median"
                 r"(   vs torch: .*)?$" % (NUMBER, NUMBER, NUMBER, NUMBER))


VS_TORCH = re.compile(r"   vs torch: median %sx \(q1-q3 %s-%s\)$" % (NUMBER, NUMBER, NUMBER))


HEADER = re.compile(r"^%s, 1 threads, wall, 4 reps, (huge|4k) pages asked "
                    r"\((\d+)%% of the buffers on huge pages\)$" % re.escape(CASE))


def args(reps, pages="huge", torch=False):
    return ["--case", CASE, "--lib", "main=" + LIB, "--lib", "new=" + LIB,
            "--reps", str(reps), "--threads", "1", "--pages", pages] + (["--torch"] if torch else [])


def table(pages, torch=False):
    p = subprocess.run([sys.executable, DRIVER] + args(4, pages, torch), capture_output=True,
                       text=True, timeout=120)
    if not R.check(p.returncode == 0, "driver exited %d\nstdout:\n%s\nstderr:\n%s"
                   % (p.returncode, p.stdout, p.stderr)):
        return
    lines = p.stdout.splitlines()
    head = HEADER.match(lines[0]) if lines else None
    if R.check(head is not None, "the case line: %r" % lines[:1]):
        R.equal(head.group(1), pages, "the pages asked")
        share = int(head.group(2))
        R.check(0 <= share <= 100 and (pages == "huge" or share == 0),
                "--pages %s: %d%% on huge pages" % (pages, share))
    names = ["main", "new"] + (["torch"] if torch else [])
    rows = [ROW.match(line) for line in lines[1:]]
    if not R.check(len(rows) == len(names) and all(rows),
                   "%d table rows, got:\n%s" % (len(names), p.stdout)):
        return
    R.equal([m.group(1) for m in rows], names, "the names, in the order given")
    for line, m in zip(lines[1:], rows):
        vs = VS_TORCH.search(line)
        if not torch or m.group(1) == "torch":
            R.check(vs is None, "no vs-torch figure on %r" % line)
            continue
        if R.check(vs is not None, "a vs-torch figure on %r" % line):
            median, q1, q3 = (float(vs.group(i)) for i in range(1, 4))
            R.check(0 < q1 <= median <= q3, "vs torch: positive, quartiles around the "
                    "median: %r" % line)
    for m in rows:
        median, q1, q3, gbps = (float(m.group(i)) for i in range(2, 6))
        R.check(median > 0 and q1 > 0 and q3 > 0 and gbps > 0,
                "%s: every figure positive: %s" % (m.group(1), m.group(0)))
        R.check(q1 <= median <= q3, "%s: quartiles around the median: %s"
                % (m.group(1), m.group(0)))


def wrong_reference_is_caught():
    sys.path.insert(0, DRIVER_DIR)
    import ab_cold

    right = ab_cold.expected

    def one_byte_off(view):
        want = right(view).copy()
        want.view(np.uint8).flat[7] ^= 1
        return want

    ab_cold.expected = one_byte_off
    try:
        R.raises_exc(SystemExit, lambda: ab_cold.main(args(1)), "a reference one byte off",
                     mentions=["main: wrong result"])
    finally:
        ab_cold.expected = right
    # The check itself: equal bytes pass, one changed byte stops the run.
    a = np.arange(6, dtype=np.float32)
    ab_cold.check("same", a, a.copy())
    R.ok()
    b = a.copy()
    b.view(np.uint8)[0] ^= 1
    R.raises_exc(SystemExit, lambda: ab_cold.check("lib", b, a), "one byte changed",
                 mentions=["lib: wrong result"])


if __name__ == "__main__":
    if not os.path.exists(LIB):
        R.fail("no library at %s (set STRIDEMEM_LIB)" % LIB)
    else:
        R.run("table, huge pages", table, "huge")
        R.run("table, 4k pages", table, "4k")
        R.run("wrong_reference_is_caught", wrong_reference_is_caught)
        try:
            import torch  # noqa: F401
        except ImportError as e:
            R.skip("the table with --torch", "this interpreter has no torch (%s)" % e)
        else:
            R.run("table with --torch", table, "huge", True)
    sys.exit(R.finish())
