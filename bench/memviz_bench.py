#!/usr/bin/env python3
"""How fast the memory viewer draws a large snapshot: tools/memviz/memviz.py
rendering the 5000-segment fixture of tests/python/memviz_fixtures.py, and
headless chromium loading the page when it is installed. The functional test
(tests/python/test_memviz.py) checks what is drawn; its speed is measured here.

    /usr/bin/python3 bench/memviz_bench.py [--repeat 5] [--segments 5000]

Prints the median and spread of the render time, the page size, and
chromium's load time (or why it was not measured).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
sys.path.insert(0, os.path.join(REPO, "tools", "memviz"))
import memviz  # noqa: E402
import memviz_fixtures as F  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--segments", type=int, default=5000)
    args = ap.parse_args()
    snap = F.many_segments(args.segments)
    times = []
    page = ""
    for _ in range(args.repeat):
        t = time.perf_counter()
        page = memviz.render([snap])
        times.append(time.perf_counter() - t)
    print("render %d segments: median %.3f s (min %.3f, max %.3f, %d runs), page %.1f MiB"
          % (args.segments, statistics.median(times), min(times), max(times), len(times),
             len(page) / 2.0 ** 20))
    chromium = os.environ.get("MEMVIZ_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        print("chromium: not measured (not installed; scripts/setup-deps.sh installs it)")
        return 0
    with tempfile.TemporaryDirectory(prefix="memviz-bench-") as tmp:
        path = os.path.join(tmp, "many.html")
        with open(path, "w") as f:
            f.write(page)
        loads = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-dev-shm-usage", "--user-data-dir=" + os.path.join(tmp, "p"),
                            "--virtual-time-budget=5000", "--dump-dom", "file://" + path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                           timeout=120, env=dict(os.environ, HOME=tmp))
            loads.append(time.perf_counter() - t)
        print("chromium load + draw: median %.2f s (min %.2f, max %.2f, %d runs)"
              % (statistics.median(loads), min(loads), max(loads), len(loads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
