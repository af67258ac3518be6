#!/usr/bin/env python3
"""What a green ctest run did not run: ctest's "100% tests passed" counts a
skipped test as passed, and a test program that skipped some of its checks
shows as Passed. This reads the JUnit file of a run (ctest --output-junit F)
and prints

  - the tests skipped wholly (a GoogleTest GTEST_SKIP, a Python file that
    exited 77), grouped by the reason they printed;
  - the tests that passed but skipped part of their checks, from their own
    counted line ("name: P passed, F failed, S skipped", "... N not run")
    and their "SKIP:" / "NOT RUN:" lines.

    scripts/skip_report.py JUNIT.xml [--label TEXT]

Exit status 0 (a report, not a verdict); 2 if the file cannot be read.
Standard library only: runs under any python3.
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET

# "test_x: 10 passed, 0 failed, 2 skipped" (tests/python/_util.py Results) and
# "name: 3 passed, 0 failed, 1 not run" (its Checklist).
COUNTED = re.compile(r"^(?P<name>[\w.\- ]+): (?P<p>\d+) passed, (?P<f>\d+) failed, "
                     r"(?P<s>\d+) (?:skipped|not run)\s*$")
SKIP_LINE = re.compile(r"^(SKIP|NOT RUN)\b:? ?")
MAX_REASON = 240


def shorten(text):
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def skip_reason(output):
    """The reason a wholly skipped test printed."""
    lines = output.splitlines()
    for i, line in enumerate(lines):  # GoogleTest: "file:line: Skipped" then the message
        if line.endswith(": Skipped") and i + 1 < len(lines) and lines[i + 1].strip():
            return shorten(lines[i + 1])
    for line in lines:
        if SKIP_LINE.match(line) or line.startswith("no usable GPU"):
            return shorten(line)
    rest = [ln for ln in lines if ln.strip()]
    return shorten(rest[-1]) if rest else "(the test printed no reason)"


def partial_skips(output):
    """(skipped, total, [skip lines]) of a test that passed, or None."""
    skipped = total = 0
    for line in output.splitlines():
        m = COUNTED.match(line.strip())
        if m:
            skipped += int(m.group("s"))
            total += int(m.group("p")) + int(m.group("f")) + int(m.group("s"))
    if not skipped:
        return None
    lines = [shorten(ln) for ln in output.splitlines() if SKIP_LINE.match(ln)]
    return skipped, total, lines


def family(name):
    """api.CudaOps.MemoryFormats -> api.CudaOps.*"""
    parts = name.split(".")
    return ".".join(parts[:2]) + ".*" if len(parts) > 2 else name


def report(path, label):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print("skip report: cannot read %s: %s" % (path, e))
        return 2
    whole = {}  # reason -> [test names]
    part = []
    ran = 0
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        out = case.findtext("system-out") or ""
        status = case.get("status", "")
        if case.find("skipped") is not None or status in ("notrun", "disabled"):
            whole.setdefault(skip_reason(out), []).append(name)
            continue
        ran += 1
        if case.find("failure") is None:
            p = partial_skips(out)
            if p:
                part.append((name,) + p)
    n_whole = sum(len(v) for v in whole.values())
    title = "skips" + (" (%s)" % label if label else "")
    print("== %s: %d of %d tests skipped wholly, %d passed with checks skipped"
          % (title, n_whole, n_whole + ran, len(part)))
    for reason, names in sorted(whole.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        fams = {}
        for n in names:
            fams.setdefault(family(n), []).append(n)
        listed = ", ".join("%s (%d)" % (f, len(m)) if len(m) > 1 else m[0]
                           for f, m in sorted(fams.items()))
        print("  skipped %d: %s" % (len(names), listed))
        print("      why: %s" % reason)
    for name, skipped, total, lines in part:
        print("  %s: %d of %d checks skipped" % (name, skipped, total))
        for ln in lines[:10]:
            print("      %s" % ln)
        if len(lines) > 10:
            print("      ... %d more" % (len(lines) - 10))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    return report(args.junit, args.label)


if __name__ == "__main__":
    sys.exit(main())
