#!/usr/bin/env python3
"""Checks the files stridemem-demo writes (issue 14), on the CPU, size small.

usage: check_demo_reports.py reports|pages|options DEMO WORKDIR

reports: the run writes <scenario>-<variant>.json for every scenario and
  variant; each parses, is internally consistent (totals = its segments and
  blocks), was taken at the variant's peak, holds only that variant's history
  and tags, and agrees with the table the demo prints (peak above the inputs,
  allocations); the views variant's peak is below the fresh one's in every
  scenario (the point of the demo). memviz is a stand-in that records its
  arguments, so the CLI contract (A.json B.json -o OUT.html --title T) is
  checked without the real viewer; the index lists absolute paths.
  Each snapshot's "run" object holds the table's figures for its variant:
  the time is the median of the timed runs it lists, the variants' order
  alternated from run to run, and the table prints that median.
pages: the same run with the real viewer (tools/memviz): each page's title
  names its scenario (only tiles uses a stack), says why views need less, and
  its comparison table shows the console's numbers (own peak above the
  inputs, the ratio, allocations, median time), the header the variant's own
  counts, and the overlay chart both variants on one axis.
options: memviz absent (and the default ./stridemem-demo-out), memviz
  failing, --no-report, an --out that cannot be created: the exit status
  never depends on the viewer; a bad --out fails up front with a clear message.

Python 3 standard library only. Exit 0 when every check passes.
"""
import json
import os
import re
import shutil
import subprocess
import sys

SCENARIOS = ("tiles", "unfold", "rnn")
VARIANTS = ("views", "fresh")
# What each variant's peak is made of: the roles the demo tags (sm_push_tag).
ROLES = {
    ("tiles", "views"): {"output", "tile-buffer"},
    ("tiles", "fresh"): {"tile-results", "output"},
    ("unfold", "views"): {"output"},
    ("unfold", "fresh"): {"patches", "output"},
    ("rnn", "views"): {"states"},
    ("rnn", "fresh"): {"states", "output"},
}
# A table row: scenario device peak-views peak-fresh ratio allocs time time check report.
ROW = re.compile(r"^(tiles|unfold|rnn)\s+(\S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+)\s+(\d+)/(\d+)"
                 r"\s+(\S+) ms\s+(\S+) ms\s+(PASS|FAIL)\s+(\S+)$")
RUNS_LINE = re.compile(r"time = median of (\d+) timed runs after an untimed warm-up run")
PROGRESS = re.compile(r"^\S+ \((views|fresh)\): \d+/\d+ \S+  \d+\.\d s$")

FAKE_MEMVIZ_OK = """import json, sys
args = sys.argv[1:]
with open(sys.argv[0] + ".calls", "a") as f:
    f.write(json.dumps(args) + "\\n")
with open(args[args.index("-o") + 1], "w") as f:
    f.write("<!doctype html><title>stand-in</title>")
"""
FAKE_MEMVIZ_FAIL = """import sys
print("memviz stand-in: failing on purpose", file=sys.stderr)
sys.exit(3)
"""

failures = []
# --size small's default number of timed runs per variant.
EXPECTED_RUNS = 5


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)
    return ok


def fmt_bytes(b):
    """The demo's fmt_bytes."""
    if b >= 1 << 30:
        return "%.2f GiB" % (b / float(1 << 30))
    if b >= 1 << 20:
        return "%.1f MiB" % (b / float(1 << 20))
    if b >= 1 << 10:
        return "%.1f KiB" % (b / 1024.0)
    return "%d B" % b


def run_demo(demo, args, cwd, memviz):
    env = dict(os.environ)
    env["STRIDEMEM_MEMVIZ"] = memviz
    p = subprocess.run([demo, "--size", "small", "--device", "cpu"] + args, cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=600)
    return p


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def table_rows(stdout):
    rows = {}
    for line in stdout.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = {"peak": {"views": m.group(3), "fresh": m.group(4)},
                                "ratio": m.group(5),
                                "allocs": {"views": int(m.group(6)), "fresh": int(m.group(7))},
                                "time": {"views": m.group(8), "fresh": m.group(9)},
                                "check": m.group(10), "report": m.group(11)}
    return rows


def check_quiet_stderr(p, what):
    # A small run shows no progress; a slow machine may show a few lines.
    bad = [l for l in p.stderr.splitlines() if not PROGRESS.match(l)]
    expect(not bad, "%s: unexpected stderr: %r" % (what, bad[:5]))


def check_snapshot(path, sc, variant, row):
    """One snapshot file against the format, itself and the table row."""
    name = os.path.basename(path)
    try:
        with open(path) as f:
            snap = json.load(f)
    except (OSError, ValueError) as e:
        expect(False, "%s does not parse: %s" % (name, e))
        return None
    expect(snap.get("format") == "stridemem.memory_snapshot" and snap.get("version") == 1,
           "%s: format/version" % name)
    expect(snap.get("device") == "cpu:0", "%s: device %r" % (name, snap.get("device")))
    tot = snap["totals"]
    segs = snap["segments"]
    allocated = []
    for s in segs:
        off = 0
        for b in s["blocks"]:
            expect(b["offset"] == off, "%s: blocks do not tile segment %s" % (name, s["address"]))
            off += b["size"]
            if b["state"] == "allocated":
                allocated.append(b)
        expect(off == s["size"], "%s: blocks of %s sum to %d, not %d"
               % (name, s["address"], off, s["size"]))
    # Its totals are its segments and blocks.
    expect(tot["reserved_bytes"] == sum(s["size"] for s in segs), "%s: reserved_bytes" % name)
    expect(tot["allocated_bytes"] == sum(b["size"] for b in allocated),
           "%s: allocated_bytes %d != allocated blocks %d"
           % (name, tot["allocated_bytes"], sum(b["size"] for b in allocated)))
    expect(tot["requested_bytes"] == sum(b["requested"] for b in allocated),
           "%s: requested_bytes" % name)
    expect(tot["active_storages"] == len(allocated), "%s: active_storages" % name)
    # Taken at the variant's peak.
    expect(tot["allocated_bytes"] == tot["peak_allocated_bytes"],
           "%s: not at the peak: allocated %d, peak %d"
           % (name, tot["allocated_bytes"], tot["peak_allocated_bytes"]))
    # Who holds the memory: the inputs and this variant's roles, nothing else.
    tags = {t["tag"]: t["allocated_bytes"] for t in snap["tags"]}
    expect(sum(tags.values()) == tot["allocated_bytes"], "%s: tags do not add up" % name)
    inputs = tags.get(sc + "/input", 0)
    expect(inputs > 0, "%s: no %s/input tag" % (name, sc))
    prefix = "%s/%s/" % (sc, variant)
    roles = set()
    for tag in tags:
        if tag == sc + "/input":
            continue
        if expect(isinstance(tag, str) and tag.startswith(prefix), "%s: tag %r" % (name, tag)):
            roles.add(tag[len(prefix):])
    expect(roles == ROLES[(sc, variant)], "%s: roles %s, expected %s"
           % (name, sorted(roles), sorted(ROLES[(sc, variant)])))
    # The history is this variant's, whole, and ends at the snapshot.
    h = snap.get("history")
    if expect(h is not None and h.get("enabled") and h.get("events"), "%s: no history" % name):
        ev = h["events"]
        expect(h["dropped"] == 0, "%s: %d events dropped" % (name, h["dropped"]))
        others = [e for e in ev if e["action"] in ("alloc", "free")
                  and not (e.get("tag") or "").startswith(prefix)]
        expect(not others, "%s: events of another variant: %r" % (name, others[:2]))
        expect(ev[-1]["allocated_bytes"] == tot["allocated_bytes"],
               "%s: last event's allocated_bytes" % name)
        expect(max(e["allocated_bytes"] for e in ev) == tot["peak_allocated_bytes"],
               "%s: the timeline's top is not the peak" % name)
        if row is not None:
            allocs = sum(1 for e in ev if e["action"] == "alloc")
            expect(allocs == row["allocs"][variant], "%s: %d alloc events, the table says %d"
                   % (name, allocs, row["allocs"][variant]))
    # The table's peak is this file's, above the inputs.
    if row is not None:
        shown = fmt_bytes(tot["peak_allocated_bytes"] - inputs)
        expect(shown == row["peak"][variant], "%s: peak above the inputs %s, the table says %s"
               % (name, shown, row["peak"][variant]))
    check_run(snap, name, sc, variant, row, inputs)
    return tot


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def check_run(snap, name, sc, variant, row, inputs):
    """The "run" object: the table's figures for this variant, its timed runs
    (their median is the time shown) and their order."""
    run = snap.get("run")
    if not expect(isinstance(run, dict), "%s: no run object" % name):
        return
    expect(run.get("scenario") == sc and run.get("variant") == variant and
           run.get("device") == "cpu", "%s: run names %r/%r/%r"
           % (name, run.get("scenario"), run.get("variant"), run.get("device")))
    tot = snap["totals"]
    base = run.get("baseline", {})
    expect(run.get("peak_bytes") == tot["peak_allocated_bytes"] - inputs and
           base.get("allocated_bytes") == inputs,
           "%s: run peak %r above %r, the snapshot %d above its inputs %d"
           % (name, run.get("peak_bytes"), base.get("allocated_bytes"),
              tot["peak_allocated_bytes"], inputs))
    expect(tot["num_allocs"] - base.get("num_allocs", -1) == run.get("allocs"),
           "%s: allocations since the baseline %d, the run says %r"
           % (name, tot["num_allocs"] - base.get("num_allocs", -1), run.get("allocs")))
    runs, first = run.get("runs_ms", []), run.get("ran_first", [])
    expect(len(runs) == EXPECTED_RUNS and len(first) == EXPECTED_RUNS,
           "%s: %d timed runs (%d orders), want %d" % (name, len(runs), len(first),
                                                      EXPECTED_RUNS))
    if runs:
        expect(run.get("time_ms") == median(runs),
               "%s: time %r is not the median of %r" % (name, run.get("time_ms"), runs))
    # Alternating, views first in the odd runs (1-based), fresh first in the even.
    want = [(k % 2 == 0) == (variant == "views") for k in range(len(first))]
    expect(first == want, "%s: ran first %r, want %r" % (name, first, want))
    if row is not None:
        expect(row["time"][variant] == "%.1f" % run.get("time_ms", -1),
               "%s: the table's time %s ms is not the median %r"
               % (name, row["time"][variant], run.get("time_ms")))


def mode_reports(demo, work):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    fake = os.path.join(fresh_dir(os.path.join(work, "memviz")), "memviz.py")
    with open(fake, "w") as f:
        f.write(FAKE_MEMVIZ_OK)
    p = run_demo(demo, ["--out", out], work, fake)
    sys.stdout.write(p.stdout)
    if not expect(p.returncode == 0, "demo exited %d: %s" % (p.returncode, p.stderr)):
        return
    check_quiet_stderr(p, "reports")
    m = RUNS_LINE.search(p.stdout)
    expect(m is not None and int(m.group(1)) == EXPECTED_RUNS,
           "the header does not say 'time = median of %d timed runs ...'" % EXPECTED_RUNS)
    out = os.path.realpath(out)
    rows = table_rows(p.stdout)
    expect(sorted(rows) == sorted(SCENARIOS), "table rows: %s" % sorted(rows))
    for sc in SCENARIOS:
        row = rows.get(sc)
        if row is not None:
            expect(row["report"] == sc + ".html", "%s: report column %r" % (sc, row["report"]))
        peaks = {}
        for v in VARIANTS:
            path = os.path.join(out, "%s-%s.json" % (sc, v))
            if expect(os.path.isfile(path), "missing " + path):
                tot = check_snapshot(path, sc, v, row)
                if tot is not None:
                    peaks[v] = tot["peak_allocated_bytes"]
        if len(peaks) == 2:
            expect(peaks["views"] < peaks["fresh"], "%s: views peak %d is not below fresh %d"
                   % (sc, peaks["views"], peaks["fresh"]))
    # memviz was asked once per scenario, as its CLI says.
    calls = []
    if expect(os.path.isfile(fake + ".calls"), "memviz was not run"):
        with open(fake + ".calls") as f:
            calls = [json.loads(l) for l in f]
    expect(len(calls) == len(SCENARIOS), "memviz ran %d times" % len(calls))
    for sc, args in zip(SCENARIOS, calls):
        want = [os.path.join(out, "%s-%s.json" % (sc, v)) for v in VARIANTS]
        want += ["-o", os.path.join(out, sc + ".html")]
        expect(args[:-4] == want and args[-4] == "--title" and sc in args[-3] and
               args[-2] == "--note" and "views" in args[-1].lower(),
               "memviz arguments for %s: %r" % (sc, args))
    # The directory holds the reports and nothing else (no probe, no log).
    names = sorted(os.listdir(out))
    want = sorted(["%s-%s.json" % (sc, v) for sc in SCENARIOS for v in VARIANTS]
                  + [sc + ".html" for sc in SCENARIOS])
    expect(names == want, "%s holds %s" % (out, names))
    # The index: absolute paths of the pages.
    expect("Reports written" in p.stdout, "no 'Reports written' index")
    for sc in SCENARIOS:
        expect(re.search(r"^  %s\s*: %s\s+\(" % (sc, re.escape(os.path.join(out, sc + ".html"))),
                         p.stdout, re.M) is not None, "index line for " + sc)
    expect("No HTML" not in p.stdout, "a 'No HTML' line although memviz worked")


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMVIZ = os.path.join(REPO, "tools", "memviz", "memviz.py")


def page_cell(page, si, field):
    """(data-value or None, data-source or None, text) of a comparison cell."""
    m = re.search(r'<td data-cmp="%d" data-field="%s"(?: data-value="([^"]*)")?'
                  r'(?: data-source="([^"]*)")?>([^<]*)</td>' % (si, field), page)
    return m.groups() if m else (None, None, None)


def mode_pages(demo, work):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    p = run_demo(demo, ["--out", out, "--quiet"], work, MEMVIZ)
    sys.stdout.write(p.stdout)
    if not expect(p.returncode == 0 and "No HTML" not in p.stdout,
                  "demo with the real memviz: exit %d: %s" % (p.returncode, p.stderr)):
        return
    rows = table_rows(p.stdout)
    for sc in SCENARIOS:
        row = rows.get(sc)
        path = os.path.join(out, sc + ".html")
        if not expect(row is not None and os.path.isfile(path), "%s: no row or page" % sc):
            continue
        with open(path, encoding="utf-8") as f:
            page = f.read()
        title = re.search(r"<title>([^<]*)</title>", page).group(1)
        expect(title.startswith(sc + ": ") and ("stack" in title) == (sc == "tiles"),
               "%s: page title %r" % (sc, title))
        expect('<div class="warn"' not in page, "%s: the page finds the snapshots "
               "inconsistent (or their run objects unusable)" % sc)
        note = re.search(r'<p class="lede" id="memviz-note">([^<]+)</p>', page)
        expect(note is not None and note.group(1).startswith("With views"),
               "%s: no sentence on why views need less" % sc)
        for si, v in enumerate(VARIANTS):
            value, source, _ = page_cell(page, si, "own_peak_bytes")
            expect(source == "run" and value is not None and
                   fmt_bytes(int(value)) == row["peak"][v],
                   "%s/%s: the page's own peak %r (%r), the console's %s"
                   % (sc, v, value, source, row["peak"][v]))
            value, _, _ = page_cell(page, si, "own_allocs")
            expect(value == str(row["allocs"][v]), "%s/%s: the page's allocs %r, the console's %d"
                   % (sc, v, value, row["allocs"][v]))
            _, _, text = page_cell(page, si, "own_time_ms")
            expect(text == row["time"][v] + " ms", "%s/%s: the page's time %r, the console's %s ms"
                   % (sc, v, text, row["time"][v]))
            # The header's counts are the variant's own, not the process's.
            m = re.search(r'id="s%d-num_allocs"[^>]*data-value="(\d+)"' % si, page)
            expect(m is not None and int(m.group(1)) == row["allocs"][v],
                   "%s/%s: the header's allocs %s, the console's %d"
                   % (sc, v, m and m.group(1), row["allocs"][v]))
            m = re.search(r'<path class="overlay" data-snap="%d" data-peak="(\d+)"' % si, page)
            expect(m is not None and fmt_bytes(int(m.group(1))) == row["peak"][v],
                   "%s/%s: the overlay's peak %s, the console's %s"
                   % (sc, v, m and m.group(1), row["peak"][v]))
        _, _, ratio = page_cell(page, 1, "own_peak_vs_first")
        expect(ratio == row["ratio"].replace("x", "\u00d7"),
               "%s: the page's fresh vs views %r, the console's %s" % (sc, ratio, row["ratio"]))


def mode_options(demo, work):
    # memviz absent; no --out: ./stridemem-demo-out in the current directory.
    cwd = fresh_dir(os.path.join(work, "cwd-absent"))
    missing = os.path.join(work, "no-such-memviz.py")
    p = run_demo(demo, [], cwd, missing)
    sys.stdout.write(p.stdout)
    expect(p.returncode == 0, "memviz absent: exit %d: %s" % (p.returncode, p.stderr))
    check_quiet_stderr(p, "memviz absent")
    out = os.path.join(os.path.realpath(cwd), "stridemem-demo-out")
    for sc in SCENARIOS:
        for v in VARIANTS:
            expect(os.path.isfile(os.path.join(out, "%s-%s.json" % (sc, v))),
                   "memviz absent: no %s-%s.json in the default directory" % (sc, v))
        expect(not os.path.exists(os.path.join(out, sc + ".html")), "memviz absent: an HTML")
    hints = [l for l in p.stdout.splitlines() if l.startswith("No HTML")]
    expect(len(hints) == 1, "memviz absent: %d 'No HTML' lines" % len(hints))
    if hints:
        expect(missing in hints[0] and ("python3 %s %s" % (missing, os.path.join(out, "tiles-views.json")))
               in hints[0] and ("-o " + os.path.join(out, "tiles.html")) in hints[0],
               "memviz absent: the hint does not say how: %r" % hints[0])
    rows = table_rows(p.stdout)
    expect(rows.get("tiles", {}).get("report") == "tiles-{views,fresh}.json",
           "memviz absent: report column %r" % rows.get("tiles", {}).get("report"))

    # memviz failing; --out with missing parents.
    fake = os.path.join(fresh_dir(os.path.join(work, "memviz-fail")), "memviz.py")
    with open(fake, "w") as f:
        f.write(FAKE_MEMVIZ_FAIL)
    out = os.path.join(work, "nested", "a", "b")
    shutil.rmtree(os.path.join(work, "nested"), ignore_errors=True)
    p = run_demo(demo, ["--out", out, "--quiet"], work, fake)
    expect(p.returncode == 0, "memviz failing: exit %d: %s" % (p.returncode, p.stderr))
    expect(p.stderr == "", "memviz failing, --quiet: stderr %r" % p.stderr)
    hints = [l for l in p.stdout.splitlines() if l.startswith("No HTML")]
    log = os.path.join(os.path.realpath(out), "tiles.memviz.log")
    expect(len(hints) == 1 and "exit status 3" in hints[0] and log in hints[0],
           "memviz failing: hint %r" % hints)
    if expect(os.path.isfile(log), "memviz failing: no log " + log):
        with open(log) as f:
            expect("failing on purpose" in f.read(), "memviz failing: its output is not in the log")

    # python3 not on PATH (the stand-in exists): the same, with the reason.
    env_path = os.environ.get("PATH", "")
    os.environ["PATH"] = fresh_dir(os.path.join(work, "empty-path"))
    try:
        p = run_demo(demo, ["--out", os.path.join(work, "no-python")], work, fake)
    finally:
        os.environ["PATH"] = env_path
    expect(p.returncode == 0, "no python3: exit %d: %s" % (p.returncode, p.stderr))
    hints = [l for l in p.stdout.splitlines() if l.startswith("No HTML")]
    expect(len(hints) == 1 and "python3 could not be started" in hints[0],
           "no python3: hint %r" % hints)

    # --no-report: no file at all.
    cwd = fresh_dir(os.path.join(work, "cwd-no-report"))
    p = run_demo(demo, ["--no-report"], cwd, missing)
    expect(p.returncode == 0, "--no-report: exit %d: %s" % (p.returncode, p.stderr))
    expect(os.listdir(cwd) == [], "--no-report: wrote %s" % os.listdir(cwd))
    expect("Reports written" not in p.stdout and "No HTML" not in p.stdout,
           "--no-report: an index")
    expect(all(r["report"] == "-" for r in table_rows(p.stdout).values()),
           "--no-report: report column")

    # An --out that cannot be created (under a file): a clear error, before the work.
    blocker = os.path.join(work, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    bad = os.path.join(blocker, "out")
    p = run_demo(demo, ["--out", bad], work, missing)
    expect(p.returncode == 1, "bad --out: exit %d" % p.returncode)
    expect(bad in p.stderr and "--no-report" in p.stderr, "bad --out: message %r" % p.stderr)
    expect("scenario" not in p.stdout, "bad --out: the work ran anyway")


def main():
    modes = {"reports": mode_reports, "pages": mode_pages, "options": mode_options}
    if len(sys.argv) != 4 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    mode, demo, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    work = os.path.realpath(work)
    modes[mode](demo, work)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("demo %s: all checks passed" % mode)


if __name__ == "__main__":
    main()
