#!/usr/bin/env python3
"""Tests tools/memviz/memviz.py, the snapshot JSON -> offline HTML page tool.

Python side: the figures the page shows equal the snapshot's numbers
(checked against a formatter written here, not memviz's own), the per-tag
timeline matches a hand-computed history (history that began after
allocations existed, a ring that dropped events, an oom event), thinning of
long histories keeps the peaks, the segment map draws every block, caps
thousands of segments, user strings are escaped, inconsistent snapshots are
reported, and bad input exits 2 with a message naming the file.

Browser side: the page is opened in Debian's headless chromium; its own
self-test (a JSON report the page's script writes from what it finds in the
DOM) must match the fixtures, with no script error, no console message and
no network request. Control pages prove each of those detectors fires.
chromium missing is a FAILURE naming scripts/setup-deps.sh, never a skip;
except where the machine says it has no browser (STRIDEMEM_NO_BROWSER=1,
set by scripts/gpu-check.sh on a machine without chromium): then each
browser check that finds no chromium is NOT RUN (never a pass) and the
summary line counts them ("test_memviz: P passed, F failed, N not run").

Fixtures come from tests/python/memviz_fixtures.py (a small model of the
allocator, so they are consistent the way the library's output must be).

    test_memviz.py                       run the tests (exit 0 = all passed)
    test_memviz.py --screenshot OUT.png  redraw docs/memviz.png
    test_memviz.py --fixtures DIR        write the fixture snapshots as JSON
"""

import base64
import copy
import decimal
import hashlib
import html
import json
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(REPO, "tools", "memviz", "memviz.py")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(TOOL))
from _util import Cases, NotRun, expect  # noqa: E402
import memviz  # noqa: E402
import memviz_fixtures as F  # noqa: E402

KiB, MiB, GiB = F.KiB, F.MiB, F.GiB
CHROMIUM = os.environ.get("MEMVIZ_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# A machine declared browserless: a missing chromium is NOT RUN, not a failure.
NO_BROWSER = os.environ.get("STRIDEMEM_NO_BROWSER") == "1"
NO_BROWSER_TEXT = "no browser on this machine"

cases = Cases("test_memviz")
case = cases.case
TMP = tempfile.mkdtemp(prefix="memviz-test-")
_FIX = {}


def fixture(name):
    """Fixtures are built once; callers get their own copy."""
    if name not in _FIX:
        _FIX[name] = {
            "views": lambda: F.cuda_scenario(),
            "fresh": lambda: F.cuda_scenario(seed=11, copies=True),
            "host": F.host_scenario,
            "nasty": F.nasty_scenario,
            "hand": F.hand_timeline,
            "hand_dropped": lambda: F.hand_timeline(dropped=True),
            "many": F.many_segments,
            "empty": F.empty_device,
        }[name]()
    return copy.deepcopy(_FIX[name])


def ref_fmt(n):
    """The size rule written independently of memviz: below 1 KiB "N B",
    else the largest unit (up to TiB) that keeps the value >= 1, two
    decimals, rounded half to even on the exact value (C's printf)."""
    if n < 1024:
        return "%d B" % n
    k = min(4, int(math.log(n, 1024) + 1e-12))
    while 1024 ** k > n:
        k -= 1
    q = (decimal.Decimal(n) / decimal.Decimal(1024 ** k)).quantize(
        decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_EVEN)
    return "%s %s" % (q, ("KiB", "MiB", "GiB", "TiB")[k - 1])


# ----------------------------------------------------------------- reading pages

VOID = {"meta", "link", "br", "hr", "img", "input", "area", "base", "col", "embed",
        "source", "track", "wbr"}


class El(object):
    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.parts = tag, attrs, []
        self.children = []

    @property
    def text(self):
        return "".join(self.parts)

    def get(self, k, default=None):
        return self.attrs.get(k, default)

    def find_all(self, tag=None, cls=None, **attrs):
        out, todo = [], list(self.children)
        while todo:
            e = todo.pop(0)
            todo[0:0] = e.children
            if tag and e.tag != tag:
                continue
            if cls and cls not in (e.get("class") or "").split():
                continue
            if any(e.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(e)
        return out

    def find(self, *a, **kw):
        r = self.find_all(*a, **kw)
        expect(r, "no element %r %r in the page" % (a, kw))
        return r[0]


class Dom(HTMLParser):
    """The page as a tree of El (attributes unescaped, text = textContent)."""

    def __init__(self, page):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.root = El("#root", {})
        self.stack = [self.root]
        self.all = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        e = El(tag, dict(attrs))
        self.stack[-1].children.append(e)
        self.all.append(e)
        if tag not in VOID:
            self.stack.append(e)

    def handle_startendtag(self, tag, attrs):
        e = El(tag, dict(attrs))
        self.stack[-1].children.append(e)
        self.all.append(e)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        for e in self.stack:
            e.parts.append(data)

    def find_all(self, *a, **kw):
        return self.root.find_all(*a, **kw)

    def find(self, *a, **kw):
        return self.root.find(*a, **kw)

    def by_id(self, i):
        r = [e for e in self.all if e.get("id") == i]
        expect(len(r) == 1, "want one element with id %r, found %d" % (i, len(r)))
        return r[0]


def embedded(dom):
    return json.loads(dom.by_id("memviz-data").text)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run_tool(args, python=None):
    r = subprocess.run([python or sys.executable, TOOL] + args, capture_output=True,
                       text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


# ----------------------------------------------------------------- formatting

@case
def sizes_follow_the_library_rule():
    want = {0: "0 B", 1: "1 B", 1023: "1023 B", 1024: "1.00 KiB", 1536: "1.50 KiB",
            1152: "1.12 KiB",            # 1.125: half to even, as printf
            1176: "1.15 KiB",            # 1.1484375 rounds up
            1048575: "1024.00 KiB",      # the library prints this too
            2 * MiB: "2.00 MiB", 96876032: "92.39 MiB", GiB: "1.00 GiB",
            1 << 40: "1.00 TiB", 5 << 50: "5120.00 TiB"}
    for n, s in want.items():
        expect(memviz.fmt_bytes(n) == s, "fmt_bytes(%d) = %r, want %r"
               % (n, memviz.fmt_bytes(n), s))
        expect(ref_fmt(n) == s, "the test's own formatter disagrees at %d" % n)
    # axis labels: the same value without trailing zeros
    for n, short in ((1000, "1000 B"), (1024, "1 KiB"), (3 * MiB // 2, "1.5 MiB"),
                     (768 * MiB, "768 MiB"), (5 * GiB // 4, "1.25 GiB")):
        expect(memviz.fmt_short(n) == short, "fmt_short(%d) = %r, want %r"
               % (n, memviz.fmt_short(n), short))


# ----------------------------------------------------------------- timeline

@case
def timeline_matches_hand_computed_history():
    tl = memviz.timeline(fixture("hand"))
    series = {s["tag"]: s["values"] for s in tl["series"]}
    # after each of: alloc A 2048, alloc B 1024, oom, alloc untagged 512,
    # free B 1024, free A 1024 (A held 1024 before recording began)
    want = {"A": [3072, 3072, 3072, 3072, 3072, 2048],
            "B": [0, 1024, 1024, 1024, 0, 0],
            None: [0, 0, 0, 512, 512, 512]}
    expect(series == want, "series %r, want %r" % (series, want))
    expect(tl["start"] == {"A": 1024, "B": 0, None: 0},
           "state before the first event %r" % tl["start"])
    expect(tl["peaks"] == {"A": 3072, "B": 1024, None: 512}, "peaks %r" % tl["peaks"])
    expect(tl["index"] == list(range(6)), "every event drawn: %r" % tl["index"])
    expect(tl["time_us"] == [100, 200, 250, 300, 400, 500], "times %r" % tl["time_us"])
    expect(tl["allocated"] == [3072, 4096, 4096, 4608, 3584, 2560], "allocated")
    expect(tl["oom"] == [{"time_us": 250, "size": GiB}], "oom marker %r" % tl["oom"])
    expect(tl["warnings"] == [], "a consistent history gives no warning: %r" % tl["warnings"])
    expect(tl["other"] is None, "nothing left over when every tag is kept")


@case
def timeline_after_ring_overflow():
    tl = memviz.timeline(fixture("hand_dropped"))
    series = {s["tag"]: s["values"] for s in tl["series"]}
    # only: alloc untagged 512, free B 1024, free A 1024 survive
    want = {"A": [3072, 3072, 2048], "B": [1024, 0, 0], None: [512, 512, 512]}
    expect(series == want, "series %r, want %r" % (series, want))
    expect(tl["start"] == {"A": 3072, "B": 1024, None: 0}, "start %r" % tl["start"])
    expect(tl["dropped"] == 3 and tl["recorded"] == 6 and tl["n_events"] == 3,
           "ring counts %r" % ([tl["dropped"], tl["recorded"], tl["n_events"]],))
    expect(tl["oom"] == [], "the oom event was dropped with the ring")
    expect(tl["warnings"] == [], "warnings %r" % tl["warnings"])
    dom = Dom(memviz.render([fixture("hand_dropped")]))
    note = dom.find("p", data_history="events").text
    expect("the newest 3 of 6 recorded: 3 older ones were overwritten" in note, note)
    expect("4.00 KiB were already allocated before the first event shown" in note, note)


@case
def timeline_keeps_some_tags_and_sums_the_rest():
    tl = memviz.timeline(fixture("hand"), keep={"A"})
    expect([s["tag"] for s in tl["series"]] == ["A"], "only A kept")
    expect(tl["other"] == [0, 1024, 1024, 1536, 512, 512], "other = B + untagged: %r"
           % tl["other"])
    tl = memviz.timeline(fixture("hand"), keep=set())
    expect(tl["series"] == [] and tl["other"] == tl["allocated"],
           "keep=set(): everything in other")


@case
def timeline_reports_inconsistent_history():
    s = fixture("hand")
    s["tags"][0]["allocated_bytes"] = 4096  # A, as if the tags table were wrong
    w = memviz.timeline(s)["warnings"]
    expect(any("do not add up to the events' allocated_bytes at 6 of 6 events" in x
               for x in w), "mismatch warning: %r" % w)
    s = fixture("hand")
    s["history"]["events"][3]["allocated_bytes"] += 512
    w = memviz.timeline(s)["warnings"]
    expect(any("at 1 of 6 events (first: event 3" in x for x in w), "one bad event: %r" % w)
    s = fixture("hand")
    del s["tags"][0]  # A gone: walking back gives A -1024 before the first event
    w = memviz.timeline(s)["warnings"]
    expect(any('tag "A" a negative size before the first event' in x for x in w),
           "negative warning: %r" % w)
    expect(any("the newest event says 2.50 KiB allocated, the totals say 2.50 KiB" in x
               for x in w) is False, "totals still agree with the newest event")
    s["totals"]["allocated_bytes"] = 512
    w = memviz.timeline(s)["warnings"]
    expect(any("the newest event says 2.50 KiB allocated, the totals say 512 B" in x
               for x in w), "newest event vs totals: %r" % w)
    dom = Dom(memviz.render([s]))
    warn = dom.find("div", cls="warn")
    expect("negative size" in warn.text and "newest event" in warn.text,
           "the page shows the findings: %r" % warn.text[:300])


@case
def long_history_is_thinned_keeping_peaks():
    import random
    rnd = random.Random(5)
    s = fixture("hand")
    tags = ["t%d" % i for i in range(5)] + [None]
    live, events, alloc, t = [], [], 0, 0
    for i in range(10000):
        t += rnd.randrange(1, 40)
        if i == 7777:
            live.append(("spike", GiB))
            alloc += GiB
            events.append({"time_us": t, "action": "alloc", "size": GiB, "tag": "spike",
                           "allocated_bytes": alloc, "reserved_bytes": 2 * GiB})
            continue
        if i == 7778:
            live.remove(("spike", GiB))
            alloc -= GiB
            events.append({"time_us": t, "action": "free", "size": GiB, "tag": "spike",
                           "allocated_bytes": alloc, "reserved_bytes": 2 * GiB})
            continue
        if live and rnd.random() < 0.48:
            tag, size = live.pop(rnd.randrange(len(live)))
            alloc -= size
            events.append({"time_us": t, "action": "free", "size": size, "tag": tag,
                           "allocated_bytes": alloc, "reserved_bytes": 2 * GiB})
        else:
            tag, size = rnd.choice(tags), rnd.randrange(1, 4096) * 512
            live.append((tag, size))
            alloc += size
            events.append({"time_us": t, "action": "alloc", "size": size, "tag": tag,
                           "allocated_bytes": alloc, "reserved_bytes": 2 * GiB})
    final = {}
    for tag, size in live:
        final[tag] = final.get(tag, 0) + size
    s["tags"] = [{"tag": k, "allocated_bytes": v, "requested_bytes": v, "blocks": 1}
                 for k, v in final.items()]
    s["totals"]["allocated_bytes"] = alloc
    s["history"] = {"enabled": True, "capacity": 10000, "recorded": 10000, "dropped": 0,
                    "events": events}
    tl = memviz.timeline(s)  # what the chart uses: 2000 events at most, then per column
    expect(tl["warnings"] == [], "consistent: %r" % tl["warnings"][:2])
    expect(memviz.MAX_POINTS < len(tl["index"]) <= 5 * memviz.PLOT_W,
           "thinned to %d points" % len(tl["index"]))
    expect(7777 in tl["index"], "the 1 GiB spike is drawn")
    expect(max(tl["allocated"]) == max(e["allocated_bytes"] for e in events), "peak kept")
    expect(tl["index"][0] == 0 and tl["index"][-1] == 9999, "first and last kept")
    # the values at the drawn events equal a plain forward replay
    cur = dict(tl["start"])
    series = {x["tag"]: x["values"] for x in tl["series"]}
    j = 0
    for i, e in enumerate(events):
        cur[e["tag"]] = cur.get(e["tag"], 0) + (e["size"] if e["action"] == "alloc"
                                                else -e["size"])
        if tl["index"][j] == i:
            for tag, vals in series.items():
                expect(vals[j] == cur.get(tag, 0), "tag %s at event %d" % (tag, i))
            j += 1
    expect(j == len(tl["index"]), "all drawn points checked")
    page = memviz.render([s])
    chart = Dom(page).find("svg", cls="chart")
    expect(int(chart.get("data-points")) == len(tl["index"]), "the chart draws the thinned set")
    expect(len(page) < 2 * MiB, "a 10000-event page stays small: %d bytes" % len(page))


@case
def history_absent_or_empty_says_so():
    for edit, status, phrase in (
            (lambda s: s.pop("history"), "absent", "call sm_memory_record_history"),
            (lambda s: s.__setitem__("history", None), "absent", "sm_memory_record_history"),
            (lambda s: s["history"].__setitem__("enabled", False), "absent",
             "sm_memory_record_history"),
            (lambda s: s["history"].__setitem__("events", []), "empty", "no event yet")):
        s = fixture("hand")
        edit(s)
        dom = Dom(memviz.render([s]))
        p = dom.find("p", cls="nohistory")
        expect(p.get("data-history") == status and phrase in p.text,
               "%s: %r" % (status, p.text))
        expect(not dom.find_all("svg", cls="chart"), "%s: no empty chart drawn" % status)
        expect(dom.find("section").get("data-history") == status, "section says " + status)


# ----------------------------------------------------------------- figures

HEADER_FIELDS = ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes",
                 "peak_reserved_bytes", "requested_bytes")
COUNT_FIELDS = ("num_allocs", "num_frees", "cache_hits", "device_allocs", "device_frees",
                "active_storages", "active_views")


def check_figures(dom, si, snap):
    tot, fr = snap["totals"], snap["fragmentation"]
    for f in HEADER_FIELDS:
        e = dom.by_id("s%d-%s" % (si, f))
        expect(e.get("data-value") == str(tot[f]) and e.text == ref_fmt(tot[f]),
               "%s: shows %r (%s), want %s (%s)" % (f, e.text, e.get("data-value"),
                                                  ref_fmt(tot[f]), tot[f]))
    for f in COUNT_FIELDS:
        e = dom.by_id("s%d-%s" % (si, f))
        expect(e.get("data-value") == str(tot[f]) and e.text == "{:,}".format(tot[f]),
               "%s: shows %r, want %d" % (f, e.text, tot[f]))
    for f, v in (("cached_free_bytes", fr["cached_free_bytes"]),
                 ("frag_cached_free", fr["cached_free_bytes"]),
                 ("largest_free_block", fr["largest_free_block"])):
        e = dom.by_id("s%d-%s" % (si, f))
        expect(e.get("data-value") == str(v) and e.text == ref_fmt(v), "%s: %r" % (f, e.text))
    e = dom.by_id("s%d-frag_ratio" % si)
    expect(e.text == "%.4f" % fr["ratio"], "ratio %r, want %.4f" % (e.text, fr["ratio"]))
    sec = dom.by_id("snap-%d" % si)
    rows = sec.find_all("tr", cls="holder")
    expect(len(rows) == len(snap["tags"]), "%d holder rows for %d tags"
           % (len(rows), len(snap["tags"])))
    for row, t in zip(rows, snap["tags"]):
        cells = row.find_all("td")
        if t["tag"] is None:
            expect(row.get("data-untagged") == "1" and cells[0].text == "(untagged)",
                   "untagged row %r" % cells[0].text)
        else:
            expect(row.get("data-tag") == t["tag"] and cells[0].text == t["tag"],
                   "tag row %r, want %r" % (cells[0].text, t["tag"]))
        share = "%.1f%%" % (100.0 * t["allocated_bytes"] / tot["allocated_bytes"])
        got = [c.text for c in cells[1:]]
        want = [ref_fmt(t["allocated_bytes"]), share, ref_fmt(t["requested_bytes"]),
                "{:,}".format(t["blocks"])]
        expect(got == want, "holder %r: %r, want %r" % (t["tag"], got, want))
    for name, p in fr["pools"].items():
        row = sec.find("tr", data_pool=name)
        got = [c.text for c in row.find_all("td")]
        want = [name, "{:,}".format(p["segments"]), ref_fmt(p["reserved_bytes"]),
                ref_fmt(p["allocated_bytes"]), ref_fmt(p["free_bytes"]),
                ref_fmt(p["largest_free_block"]), "%.4f" % p["ratio"]]
        expect(got == want, "pool %s: %r, want %r" % (name, got, want))
    rows = sec.find_all("tr", cls="unusable")
    expect(len(rows) == len(fr["unusable"]), "unusable rows")
    for row, u in zip(rows, fr["unusable"]):
        got = [c.text for c in row.find_all("td")][:3]
        share = "%.1f%%" % (100.0 * u["unusable_bytes"] / fr["cached_free_bytes"]) \
            if fr["cached_free_bytes"] else "\u2014"
        want = [ref_fmt(u["request"]), ref_fmt(u["unusable_bytes"]), share]
        expect(got == want, "unusable %d: %r, want %r" % (u["request"], got, want))


@case
def figures_equal_the_json():
    views, host = fixture("views"), fixture("host")
    dom = Dom(memviz.render([views, host], "t", ["views", "host"]))
    check_figures(dom, 0, views)
    check_figures(dom, 1, host)
    # hand-checked strings, so a formatter bug shared with ref_fmt shows too
    dom = Dom(memviz.render([fixture("hand")]))
    got = [dom.by_id("s0-" + f).text for f in ("allocated_bytes", "reserved_bytes",
                                                "peak_allocated_bytes", "cached_free_bytes",
                                                "requested_bytes")]
    # 2 MiB - 2560 B is 1.9976 MiB: still MiB (the unit is the largest with a value >= 1);
    # 1152 B is 1.125 KiB exactly: half to even gives 1.12
    expect(got == ["2.50 KiB", "2.00 MiB", "4.50 KiB", "2.00 MiB", "1.12 KiB"],
           "hand figures %r" % got)
    expect(dom.by_id("s0-cached_free_bytes").get("data-value") == "2094592", "exact bytes")
    card = dom.by_id("s0-cache_hits")
    expect("75.0% of allocs" in [e.text for e in dom.find_all("div", cls="exact")],
           "cache hit rate 3/4 shown")
    expect(card.text == "3", "cache hits")
    when = dom.find("p", cls="when").text
    expect("taken 600 \u00b5s after the library was loaded (1970-01-01 00:00:00 UTC)" in when,
           "time of the snapshot: %r" % when)
    s = fixture("views")
    dom = Dom(memviz.render([s]))
    expect("taken 2.126 s after the library was loaded (2026-11-25 13:20:02 UTC)"
           in dom.find("p", cls="when").text, dom.find("p", cls="when").text)


@case
def an_empty_device_is_drawn_plainly():
    s = fixture("empty")
    expect(memviz.findings(s) == [], "nothing to contradict")
    dom = Dom(memviz.render([s]))
    check_figures(dom, 0, s)
    notes = [p.text for p in dom.find_all("p", cls="note")]
    expect("No segments: this device holds no memory from the system." in notes, "%r" % notes)
    expect(dom.find("section").find_all("p", cls="nohistory"), "no history note")
    expect(not seg_rows(dom) and not dom.find_all("tr", cls="holder"), "nothing drawn")
    expect(dom.find("td", data_field="own_peak_vs_first").text == "\u2014",
           "no ratio against a zero peak")


@case
def holders_table_is_capped_with_a_sum():
    s = fixture("hand")
    s["tags"] = [{"tag": "t%03d" % i, "allocated_bytes": 1000 - i, "requested_bytes": 900,
                  "blocks": 2} for i in range(120)]
    s["totals"]["allocated_bytes"] = sum(t["allocated_bytes"] for t in s["tags"])
    dom = Dom(memviz.render([s]))
    rows = dom.find_all("tr", cls="holder")
    expect(len(rows) == memviz.MAX_HOLDERS == 100, "%d rows" % len(rows))
    rest = dom.find("tr", cls="holders-rest")
    want_bytes = sum(1000 - i for i in range(100, 120))
    got = [c.text for c in rest.find_all("td")]
    want = ["20 more tags", ref_fmt(want_bytes),
            "%.1f%%" % (100.0 * want_bytes / s["totals"]["allocated_bytes"]),
            ref_fmt(20 * 900), "40"]
    expect(rest.get("data-rest") == "20" and got == want, "rest row %r, want %r" % (got, want))


@case
def comparison_table_lists_every_snapshot():
    snaps = [fixture("views"), fixture("fresh"), fixture("host")]
    dom = Dom(memviz.render(snaps, "views vs fresh", ["views", "fresh", "host"]))
    rows = dom.find("table", cls="compare").find_all("tr")[1:]
    expect(len(rows) == 3, "3 rows")
    for si, (row, s) in enumerate(zip(rows, snaps)):
        link = row.find("a")
        expect(link.get("href") == "#snap-%d" % si and link.text == ["views", "fresh", "host"][si],
               "row %d names its section" % si)
        for f in ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes",
                  "peak_reserved_bytes"):
            c = row.find("td", data_field=f)
            expect(c.get("data-value") == str(s["totals"][f]) and
                   c.text == ref_fmt(s["totals"][f]), "row %d %s: %r" % (si, f, c.text))
        rel = row.find("td", data_field="own_peak_vs_first").text
        want = "%.2f\u00d7" % (memviz.own_figures(s)["peak_bytes"] /
                               memviz.own_figures(snaps[0])["peak_bytes"])
        expect(rel == want, "ratio %r, want %r" % (rel, want))
        # A whole history measures the peak from its start; a ring that
        # lost its start cannot, and the process's peak is shown.
        c = row.find("td", data_field="own_peak_bytes")
        whole = "history" in s and s["history"]["dropped"] == 0
        want = own_peak(s) if whole else s["totals"]["peak_allocated_bytes"]
        expect(c.get("data-value") == str(want) and
               c.get("data-source") == ("history" if whole else "totals"),
               "row %d own peak %r (%s), want %d" % (si, c.get("data-value"),
                                                     c.get("data-source"), want))
    secs = dom.find_all("section", cls="snapshot")
    expect([s.get("data-name") for s in secs] == ["views", "fresh", "host"], "sections")
    expect([s.find("h2").text for s in secs] == ["views cuda:0", "fresh cuda:0", "host cuda_host"],
           "headings %r" % [s.find("h2").text for s in secs])


def own_peak(snap):
    """The peak above the history's start, replayed here event by event from
    the bytes allocated before the first event (the page must agree)."""
    ev = snap["history"]["events"]
    cur = ev[0]["allocated_bytes"] - {"alloc": ev[0]["size"],
                                      "free": -ev[0]["size"]}.get(ev[0]["action"], 0)
    start, top = cur, cur
    for e in ev:
        cur += {"alloc": e["size"], "free": -e["size"]}.get(e["action"], 0)
        expect(cur == e["allocated_bytes"], "replay disagrees at seq %s" % e.get("seq"))
        top = max(top, cur)
    return top - start


def with_run(snap, peak, allocs, time_ms, baseline):
    s = copy.deepcopy(snap)
    s["run"] = {"scenario": "x", "variant": "y", "peak_bytes": peak, "allocs": allocs,
                "time_ms": time_ms, "runs_ms": [time_ms], "ran_first": [True],
                "baseline": baseline}
    return s


@case
def comparison_uses_each_snapshots_own_peak_and_counts():
    # The hand history: 1024 B allocated before it, up to 4608 B, 3 allocs.
    hand = fixture("hand")
    expect(memviz.own_figures(hand) == {"peak_bytes": 3584, "allocs": 3, "time_ms": None,
                                        "source": "history"},
           "hand: %r" % memviz.own_figures(hand))
    # A lost start: no baseline to measure from, the process's figures.
    drop = fixture("hand_dropped")
    expect(memviz.own_figures(drop)["source"] == "totals" and
           memviz.own_figures(drop)["peak_bytes"] == 4608, "dropped: %r"
           % memviz.own_figures(drop))
    # A run object wins: its figures, as its program measured them.
    base = {"allocated_bytes": 1024, "reserved_bytes": 2 * MiB, "num_allocs": 1,
            "num_frees": 0, "cache_hits": 1, "device_allocs": 1, "device_frees": 0}
    a = with_run(hand, 3000, 2, 12.25, base)
    b = with_run(hand, 6000, 7, 30.0, base)
    page = memviz.render([a, b], "t", ["a", "b"])
    dom = Dom(page)
    rows = dom.find("table", cls="compare").find_all("tr")[1:]
    got = [(r.find("td", data_field="own_peak_bytes").get("data-value"),
            r.find("td", data_field="own_peak_bytes").get("data-source"),
            r.find("td", data_field="own_peak_vs_first").text,
            r.find("td", data_field="own_allocs").get("data-value"),
            r.find("td", data_field="own_time_ms").text) for r in rows]
    expect(got == [("3000", "run", "1.00\u00d7", "2", "12.2 ms"),
                   ("6000", "run", "2.00\u00d7", "7", "30.0 ms")], "rows %r" % got)
    # The header counts are the run's (totals - baseline); the process's in small print.
    tot = hand["totals"]
    for f in ("num_allocs", "num_frees", "cache_hits", "device_allocs", "device_frees"):
        e = dom.by_id("s0-%s" % f)
        want = tot[f] - base[f]
        m = re.search(r'id="s0-%s"[^>]*>[^<]*</div><div class="exact">([^<]*)<' % f, page)
        exact = m.group(1) if m else ""
        expect(e.get("data-value") == str(want) and "process: %d" % tot[f] in exact,
               "%s: %r (%r), want %d and the process's %d" % (f, e.get("data-value"), exact,
                                                               want, tot[f]))
    # A baseline above the totals is not this snapshot's: the process's counts.
    bad = with_run(hand, 3000, 2, 1.0, dict(base, num_allocs=99))
    e = Dom(memviz.render([bad])).by_id("s0-num_allocs")
    expect(e.get("data-value") == str(tot["num_allocs"]), "bad baseline: %r" % e.get("data-value"))
    expect(any("run.baseline" in w for w in memviz.findings(bad)), "bad baseline: no finding")
    # A run object that is not usable is said so, and the history is used instead.
    for broken, phrase in ((with_run(hand, "12", 2, 1.0, base), "run.peak_bytes"),
                           (dict(hand, run=[1]), "run is")):
        expect(memviz.own_figures(broken)["source"] == "history", "%s: used" % phrase)
        dom = Dom(memviz.render([broken]))
        warn = dom.find("div", cls="warn")
        expect(warn is not None and phrase in warn.text, "%s: no warning on the page" % phrase)
    expect(memviz.findings(a) == memviz.findings(hand), "a usable run object is no finding")


@case
def overlay_draws_every_history_on_one_axis():
    # Two whole histories on different clocks (the second taken 1 s later,
    # twice the bytes), and one whose ring lost its start (left out).
    a, b = fixture("hand"), fixture("hand")
    for e in b["history"]["events"]:
        e["time_us"] += 1000000
        e["allocated_bytes"] *= 2
        e["size"] *= 2
    b["time_us"] += 1000000
    snaps = [a, b]
    dom = Dom(memviz.render(snaps + [fixture("hand_dropped")], "t", ["a", "b", "dropped"]))
    paths = dom.find_all("path", cls="overlay")
    expect(len(paths) == 2 and [p.get("data-snap") for p in paths] == ["0", "1"],
           "%d overlay lines" % len(paths))
    expect(own_peak(b) == 2 * own_peak(a), "the fixture: b peaks twice as high")
    for p, s in zip(paths, snaps):
        expect(p.get("data-peak") == str(own_peak(s)), "overlay peak %s, want %d"
               % (p.get("data-peak"), own_peak(s)))
        # One time axis: every line starts at its left edge (its own first event).
        expect(p.get("d").startswith("M%s," % memviz._n(memviz.CH_L)),
               "an overlay line starts at %r, not the axis' origin" % p.get("d")[:20])
    one = Dom(memviz.render([fixture("hand"), fixture("hand_dropped")]))
    expect(not one.find_all("svg", cls="overlay"), "one whole history: no overlay")


@case
def small_bands_keep_a_minimum_height():
    # 64 KiB held beside 64 MiB: 0.2 px to scale, drawn MIN_BAND_PX high and labelled.
    s = fixture("hand")
    for e in s["history"]["events"]:
        if e.get("tag") == "A" and e["action"] == "alloc":
            pass
    big = 64 * MiB
    s = F.hand_timeline()
    for t in s["tags"]:
        if t["tag"] == "A":
            t["allocated_bytes"] += big
    for e in s["history"]["events"]:
        e["allocated_bytes"] += big
    s["history"]["events"][0]["size"] += big
    s["history"]["events"][0]["requested"] += big
    page = memviz.render([s])
    dom = Dom(page)
    series = dom.find_all("path", cls="series")
    raised = [p for p in series if p.get("data-min-height")]
    expect(len(raised) >= 1, "no band drawn at its minimum height")
    for p in raised:
        th = band_thickness(p.get("d"))
        expect(min(t for t in th if t > 0) >= memviz.MIN_BAND_PX - 0.11,
               "a raised band is %r px thick" % min(t for t in th if t > 0))
    notes = dom.find_all("span", cls="raised")
    expect(len(notes) == len(raised) and all(memviz.MIN_BAND_NOTE in n.text for n in notes),
           "legend notes %r" % [n.text for n in notes])
    # The big band is to scale.
    expect(any(not p.get("data-min-height") for p in series), "every band raised")


def band_thickness(d):
    """Per point, lower minus upper y of a band path (M x,y then H/V steps:
    the upper edge's V's left to right, then the lower edge's right to left)."""
    import re as _re
    m = _re.match(r"M([-\d.]+),([-\d.]+)", d)
    ups = [float(m.group(2))]
    vs = [float(v) for v in _re.findall(r"V([-\d.]+)", d)]
    n = (len(vs) + 1) // 2
    ups += vs[:n - 1]
    lows = list(reversed(vs[n - 1:]))
    return [lo - up for up, lo in zip(ups, lows)]


@case
def note_is_shown_under_the_title():
    dom = Dom(memviz.render([fixture("hand")], "t", note="views <b>need</b> less"))
    e = dom.by_id("memviz-note")
    expect(e.text == "views <b>need</b> less", "note %r" % e.text)
    expect(not Dom(memviz.render([fixture("hand")])).find_all("p", cls="lede"), "no note")


def torch_reads_totals(mv, got, tot):
    """The totals through the reader this torch has, and its segments'
    flame graph text. torch 1.13: stats(segments) and segments(segments);
    torch 2: segsum(snapshot), a printed summary whose sizes are rounded
    (compared through its own Bytes formatting, the segment count exactly),
    and segments(snapshot)."""
    segs = got["segments"]
    flat = lambda text: text  # noqa: E731  (the lines, not an SVG)
    if hasattr(mv, "stats"):
        st = mv.stats(segs)
        expect(st["total_size"].value == tot["reserved_bytes"], "torch: total_size %r" %
               st["total_size"])
        expect(st["active_allocated"].value == tot["allocated_bytes"],
               "torch: active_allocated %r" % st["active_allocated"])
        return mv.segments(segs, format_flamegraph=flat)
    expect(hasattr(mv, "segsum"), "torch %s's _memory_viz has neither stats nor segsum: %s"
           % (_torch_version(), sorted(n for n in dir(mv) if not n.startswith("_"))))
    text = mv.segsum(got)  # asserts its own free + allocated == reserved
    requested = sum(b["requested_size"] for s in segs for b in s["blocks"]
                    if b["state"] == "active_allocated")
    for want in ("segments: %d" % len(segs), "total_reserved: %r" % mv.Bytes(tot["reserved_bytes"]),
                 "total_allocated: %r" % mv.Bytes(requested)):
        expect(want + "\n" in text, "torch segsum: no %r in %r" % (want, text[-400:]))
    return mv.segments(got, format_flamegraph=flat)


def _torch_version():
    import torch
    return torch.__version__


@case
def pytorch_format_reads_back_with_torch():
    snap = fixture("views")
    d = memviz.to_pytorch(snap)
    # Through a pickle, as pytorch.org/memory_viz gets it.
    path = os.path.join(TMP, "views.pickle")
    rc, so, se = run_tool([write("pt.json", json.dumps(snap)), "-o",
                           os.path.join(TMP, "pt.html"), "--pytorch", path])
    expect(rc == 0, "--pytorch: %d %r" % (rc, se))
    import pickle
    with open(path, "rb") as f:
        got = pickle.load(f)
    expect(got == d, "the pickle is not to_pytorch()")
    segs = got["segments"]
    expect(sorted(got) == ["device_traces", "segments"], "keys %r" % sorted(got))
    expect(len(segs) == len(snap["segments"]), "segments")
    for ps, s in zip(segs, snap["segments"]):
        expect(ps["address"] == int(s["address"], 16) and ps["total_size"] == s["size"] and
               ps["segment_type"] == s["pool"], "segment %s" % s["address"])
        alloc = [b for b in s["blocks"] if b["state"] == "allocated"]
        expect(ps["allocated_size"] == sum(b["size"] for b in alloc) and
               ps["requested_size"] == sum(b["requested"] for b in alloc +
                                           [b for b in s["blocks"]
                                            if b["state"] == "pending_free"]),
               "segment %s sizes" % s["address"])
        expect([b["address"] for b in ps["blocks"]] ==
               [int(s["address"], 16) + b["offset"] for b in s["blocks"]], "block addresses")
    ev = snap["history"]["events"]
    tr = got["device_traces"][snap["device_index"]]
    want = sum(2 if e["action"] == "free" else
               1 if e["action"] in ("alloc", "segment_map", "segment_unmap", "oom") else 0
               for e in ev)
    expect(len(tr) == want and tr[0]["action"] == "alloc" and
           tr[0]["size"] == ev[0]["size"], "trace %d entries, want %d" % (len(tr), want))
    try:
        from torch.cuda import _memory_viz as mv
    except ImportError as e:
        expect(False, "PyTorch's torch.cuda._memory_viz is needed to read the format back "
                      "(Debian: python3-torch, scripts/setup-deps.sh): %s" % e)
        return
    # PyTorch's own readers: totals, and the per-block lines of its flame
    # graphs, which carry the tags as frames.
    tot = snap["totals"]
    lines = torch_reads_totals(mv, got, tot).splitlines()
    expect(sum(int(l.rsplit(" ", 1)[1]) for l in lines) == tot["reserved_bytes"],
           "torch: the segments' flame graph lines do not add up to reserved")
    expect(sum(int(l.rsplit(" ", 1)[1]) for l in lines if ";active_allocated;" in l)
           == tot["allocated_bytes"], "torch: the active_allocated flame graph lines do not add "
           "up to allocated")
    for t in snap["tags"]:
        if t["tag"] is None:
            continue
        frames = ";".join("tag:0:" + p for p in t["tag"].split("/"))
        held = sum(int(l.rsplit(" ", 1)[1]) for l in lines
                   if ";active_allocated;%s " % frames in l)
        expect(held == t["requested_bytes"], "torch: tag %r holds %d requested bytes in the "
               "flame graph, %d in the snapshot" % (t["tag"], held, t["requested_bytes"]))
    rc, so, se = run_tool([write("a.json", json.dumps(snap)), write("b.json", json.dumps(snap)),
                           "--pytorch", path])
    expect(rc == 2 and "--pytorch" in se, "--pytorch with two snapshots: %d %r" % (rc, se))


# ----------------------------------------------------------------- chart

@case
def chart_draws_the_timeline():
    snap = fixture("views")
    ev = snap["history"]["events"]
    dom = Dom(memviz.render([snap]))
    chart = dom.find("svg", cls="chart")
    expect(int(chart.get("data-points")) == len(ev) == 500, "every event of 500 drawn")
    model = embedded(dom)["snapshots"][0]["chart"]
    paths = chart.find_all("path", cls="series")
    expect(len(paths) == len(model["bands"]) == int(chart.get("data-series")),
           "%d band paths for %d bands" % (len(paths), len(model["bands"])))
    labels = [b["label"] for b in model["bands"]]
    tags = {t["tag"] or "(untagged)" for t in snap["tags"]}
    expect(tags <= set(labels), "every live tag has a band: %r vs %r" % (tags, labels))
    expect(labels[0] == "embeddings", "the steady 64 MiB table is the bottom band: %r" % labels)
    # stacked bands add up to the events' allocated bytes at every point
    for k in range(len(model["t"])):
        total = sum(b["values"][k] for b in model["bands"])
        expect(total == model["alloc"][k], "bands sum at point %d: %d != %d"
               % (k, total, model["alloc"][k]))
    expect(model["alloc"][-1] == snap["totals"]["allocated_bytes"], "ends at the totals")
    expect(len(chart.find_all("path", cls="reserved")) == 1, "one reserved line")
    nooms = sum(1 for e in ev if e["action"] == "oom")
    nempty = sum(1 for e in ev if e["action"] == "empty_cache")
    expect(nooms == 1 and nempty == 1, "the fixture keeps its oom and empty_cache events")
    expect(len(chart.find_all("g", cls="mark-oom")) == 1, "OOM marker drawn")
    oom = chart.find("g", cls="mark-oom").find("title").text
    expect("a request of 48.00 GiB failed" in oom, "OOM title %r" % oom)
    expect(len(chart.find_all("line", cls="mark-empty")) == 1, "empty_cache marker drawn")
    legend = [li.text for li in dom.find("ul", cls="legend").find_all("li")]
    expect(any(x.startswith("reserved up to " + ref_fmt(max(e["reserved_bytes"] for e in ev)))
               for x in legend), "legend reserved peak: %r" % legend)
    expect(any(x.startswith("embeddings up to 64.01 MiB") for x in legend), "legend %r" % legend)
    yl = [t.text for t in chart.find_all("text", cls="ylab")]
    expect(yl[0] == "0 B" and all(x.endswith("iB") for x in yl[1:]) and
           "128 MiB" in yl, "y labels with units: %r" % yl)
    expect("time since the library was loaded (ms)" in chart.find("text", cls="axtitle").text,
           "x axis title with unit")


@case
def tags_keep_one_colour_across_snapshots():
    a, b = fixture("views"), fixture("fresh")
    dom = Dom(memviz.render([a, b]))
    colors = {}
    for row in dom.find_all("tr", cls="holder"):
        tag = row.get("data-tag")
        style = row.find("span", cls="swatch").get("style")
        expect(colors.setdefault(tag, style) == style, "tag %r has two colours" % tag)
    expect(len(set(colors.values())) == len(colors), "distinct tags, distinct colours")
    for si in (0, 1):
        model = embedded(dom)["snapshots"][si]["chart"]
        for band in model["bands"]:
            tag = None if band["label"] == "(untagged)" else band["label"]
            if tag in colors:
                expect("background:%s" % band["color"] == colors[tag],
                       "chart and table agree on %r" % tag)


# ----------------------------------------------------------------- segments

def seg_rows(dom):
    return dom.find_all("g", cls="seg")


@case
def segment_map_draws_every_block():
    for name in ("views", "host"):
        snap = fixture(name)
        dom = Dom(memviz.render([snap]))
        rows = seg_rows(dom)
        expect(len(rows) == len(snap["segments"]), "%s: %d rows" % (name, len(rows)))
        by_addr = {s["address"]: s for s in snap["segments"]}
        for g in rows:
            seg = by_addr[g.get("data-address")]
            rects = g.find_all("rect", cls="blk")
            expect(sum(int(r.get("data-size")) for r in rects) == seg["size"],
                   "%s %s: the rects cover the segment" % (name, seg["address"]))
            expect(sum(int(r.get("data-n")) for r in rects) == len(seg["blocks"]),
                   "%s %s: every block represented" % (name, seg["address"]))
            offs = [int(r.get("data-offset")) for r in rects]
            expect(offs == sorted(offs) and offs[0] == 0, "in address order")
            if name == "host":
                expect(len(rects) == 1 and rects[0].get("data-state") in
                       ("allocated", "cached_free"), "host: one block per segment")
                expect("stream" not in g.find("text", cls="right").text, "no stream on host")
        pools = [h.text.split(" ")[0] for h in dom.find_all("h4")
                 if " pool \u00b7" in h.text]
        expect(pools == ["large", "small"], "pools listed large first: %r" % pools)
    # every block of the views fixture is wide enough to be its own rect, so
    # the bytes per state drawn equal the JSON's exactly
    snap = fixture("views")
    dom = Dom(memviz.render([snap]))
    drawn, want = {}, {}
    for r in dom.find_all("rect", cls="blk"):
        if r.get("data-n") == "1":
            drawn[r.get("data-state")] = drawn.get(r.get("data-state"), 0) + int(r.get("data-size"))
    for s in snap["segments"]:
        for b in s["blocks"]:
            want[b["state"]] = want.get(b["state"], 0) + b["size"]
    expect(set(want) == set(memviz.STATES), "the fixture has every state: %r" % want)
    single = sum(drawn.values())
    expect(single > 0.99 * sum(want.values()), "nearly all bytes drawn block by block")
    # a block's hover title carries its details
    emb = [b for s in snap["segments"] for b in s["blocks"] if b.get("tag") == "embeddings"][0]
    seg = [s for s in snap["segments"] if emb in s["blocks"]][0]
    g = [g for g in seg_rows(dom) if g.get("data-address") == seg["address"]][0]
    r = g.find("rect", data_offset=str(emb["offset"]))
    title = r.find("title").text
    for part in ("allocated \u00b7 64.01 MiB (%s B)" % "{:,}".format(emb["size"]),
                 "offset 0x%x" % emb["offset"],
                 "requested %s B" % "{:,}".format(emb["requested"]), "tag embeddings",
                 "storage %d" % emb["storage"], "seq %d" % emb["seq"]):
        expect(part in title, "title %r lacks %r" % (title, part))


@case
def segment_bars_are_log_scaled():
    snap = fixture("views")
    dom = Dom(memviz.render([snap]))
    sizes = [s["size"] for s in snap["segments"]]
    lo, hi = min(sizes), max(sizes)
    expect(lo == 2 * MiB and hi == 66 * MiB, "fixture spans 2 to 66 MiB: %r" % sorted(set(sizes)))
    for g in seg_rows(dom):
        size = int(g.get("data-size"))
        w = float(g.find("rect", cls="outline").get("width"))
        want = memviz.SEG_BAR_W * (math.log2(size / lo) + 2) / (math.log2(hi / lo) + 2)
        expect(abs(w - want) < 0.06, "bar of %s: %.1f px, want %.1f" % (ref_fmt(size), w, want))
    # a 2 MiB segment next to a 1 GiB one is still drawn at a readable length
    s = fixture("hand")
    big = copy.deepcopy(s["segments"][0])
    big.update(address="0x7f1000000000", size=GiB, pool="large", allocated_bytes=0,
               blocks=[{"offset": 0, "size": GiB, "requested": 0, "state": "cached_free"}])
    s["segments"].append(big)
    dom = Dom(memviz.render([s]))
    widths = sorted(float(g.find("rect", cls="outline").get("width")) for g in seg_rows(dom))
    expect(widths[0] > 0.15 * widths[1], "2 MiB bar %.0f px beside 1 GiB %.0f px" % tuple(widths))
    # tiny blocks are drawn together: A 2048 B + untagged 512 B in a 2 MiB bar
    dom = Dom(memviz.render([fixture("hand")]))
    rects = dom.find_all("rect", cls="blk")
    got = [(r.get("data-state"), r.get("data-n"), r.get("data-size")) for r in rects]
    expect(got == [("allocated", "2", "2560"), ("inactive_split", "1", str(2 * MiB - 2560))],
           "grouped rects %r" % got)
    expect("2 blocks in 2.50 KiB" in rects[0].find("title").text, "group title")


@case
def many_segments_are_capped():
    snap = fixture("many")
    t = time.time()
    page = memviz.render([snap])
    took = time.time() - t
    dom = Dom(page)
    rows = seg_rows(dom)
    expect(len(rows) == memviz.MAX_SEGMENTS == 400, "400 rows drawn, got %d" % len(rows))
    notes = dom.find_all("p", cls="notdrawn")
    expect([int(p.get("data-not-drawn")) for p in notes] == [2300, 2300],
           "each pool draws 200 and sums 2300: %r" % [p.get("data-not-drawn") for p in notes])
    expect("2,300 more segments of this pool not drawn" in notes[0].text, notes[0].text)
    aggs = dom.find_all("svg", cls="aggregate")
    expect(len(aggs) == 2, "one summed bar per pool")
    large_rest = [s for s in snap["segments"] if s["pool"] == "large"][200:]
    want = {}
    for s in large_rest:
        for b in s["blocks"]:
            want[b["state"]] = want.get(b["state"], 0) + b["size"]
    got = {r.get("data-state"): int(r.get("data-size"))
           for r in aggs[0].find_all("rect", cls="agg")}
    expect(got == want, "large pool summary %r, want %r" % (got, want))
    drawn_bytes = len(page) - len(dom.by_id("memviz-data").text)
    expect(drawn_bytes < 1 * MiB, "the drawing is %d bytes (the data embedded aside)"
           % drawn_bytes)
    dom = Dom(memviz.render([snap], max_segments=10))
    expect(len(seg_rows(dom)) == 10, "max_segments=10 honoured")
    print("     5000 segments: render %.2f s, page %s" % (took, ref_fmt(len(page))))


# ----------------------------------------------------------------- escaping and safety

NASTY = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>",
         "\"quoted\" 'single' &amp; <!-- comment", "caf\u00e9/\u6ce8\u610f/\u2028sep",
         "encoder/attn"]


@case
def nasty_strings_are_text_not_markup():
    snap = fixture("nasty")
    page = memviz.render([snap], title="</title><script>alert(3)</script>")
    low = page.lower()
    expect("<img" not in low, "a raw <img in the page")
    expect(low.count("</script") == 2 and low.count("<script") == 2,
           "only the page's own two script elements")
    dom = Dom(page)
    expect(not dom.find_all("img") and len(dom.find_all("script")) == 2, "parsed elements")
    tags = [r.get("data-tag") for r in dom.find_all("tr", cls="holder")
            if r.get("data-untagged") is None]
    expect(sorted(tags) == sorted(NASTY), "the tags come back exactly: %r" % tags)
    texts = [r.find("td").text for r in dom.find_all("tr", cls="holder")]
    expect(set(NASTY) <= set(texts), "shown as text: %r" % texts)
    expect(dom.find("h2").text.startswith("snapshot 1 cuda:1<b>bold</b>"),
           "device shown as text: %r" % dom.find("h2").text)
    expect(dom.find("title").text == "</title><script>alert(3)</script>", "title as text")
    data = embedded(dom)
    expect(data["snapshots"][0]["snapshot"] == snap, "the embedded JSON round-trips exactly")
    expect(data["title"] == "</title><script>alert(3)</script>", "title round-trips")
    # a lone surrogate (a "\\udc80" escape in the JSON) must not crash the writer
    snap["tags"][0]["tag"] = "bad\udc80tag"
    page = memviz.render([snap])
    page.encode("utf-8")
    expect(embedded(Dom(page))["snapshots"][0]["snapshot"]["tags"][0]["tag"] == "bad\udc80tag",
           "the surrogate survives in the data")


@case
def page_loads_nothing_and_runs_only_its_script():
    page = memviz.render([fixture("views"), fixture("host")])
    expect(not re.search(r"(?i)(https?|ftp|wss?):", page), "a URL in the page")
    expect(not re.search(r"(?i)\b(src|srcset|action|formaction|xlink:href)\s*=", page),
           "an attribute that loads something")
    dom = Dom(page)
    hrefs = [e.get("href") for e in dom.all if e.get("href") is not None]
    expect(hrefs and all(h.startswith("#snap-") for h in hrefs), "only in-page links: %r" % hrefs)
    csp = [e.get("content") for e in dom.find_all("meta")
           if e.get("http-equiv") == "Content-Security-Policy"]
    expect(len(csp) == 1, "one CSP")
    script = [s for s in dom.find_all("script") if s.get("type") is None]
    expect(len(script) == 1, "one executable script")
    digest = base64.b64encode(hashlib.sha256(script[0].text.encode()).digest()).decode()
    expect("default-src 'none'" in csp[0] and "script-src 'sha256-%s'" % digest in csp[0],
           "CSP %r does not allow exactly the page's script (%s)" % (csp[0], digest))


@case
def inconsistent_snapshots_are_reported():
    s = fixture("views")
    expect(memviz.consistency(s) == [], "the simulator's snapshot is consistent")
    expect(not Dom(memviz.render([s])).find_all("div", cls="warn"), "no warning box")
    s["totals"]["reserved_bytes"] += 4096
    s["segments"][0]["blocks"][1]["offset"] += 512
    del s["tags"][-1]
    s["fragmentation"]["cached_free_bytes"] += 1
    s["segments"][1]["blocks"][0]["state"] = "quarantined"
    found = memviz.consistency(s)
    for phrase in ("totals.reserved_bytes is", "do not tile it", "the tags table adds up to",
                   "fragmentation.cached_free_bytes is", 'unknown block state "quarantined"'):
        expect(any(phrase in f for f in found), "%r not found in %r" % (phrase, found))
    dom = Dom(memviz.render([s]))
    box = dom.find("div", cls="warn")
    expect(int(box.get("data-warnings")) >= 5 and "quarantined" in box.text, "box %r" % box.text)
    expect(any(r.get("fill") == memviz.UNKNOWN_STATE_COLOR
               for r in dom.find_all("rect", cls="blk")), "unknown state drawn grey")


@case
def docs_show_the_page():
    png = os.path.join(REPO, "docs", "memviz.png")
    with open(png, "rb") as f:
        head = f.read(24)
    expect(head[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(head[16:20], "big") == 1280,
           "docs/memviz.png is a 1280 px wide PNG")
    expect(os.path.getsize(png) < 400 * KiB, "docs/memviz.png is %d bytes" % os.path.getsize(png))
    for doc, link in (("docs/MEMORY_SNAPSHOT.md", "(memviz.png)"),
                      ("tools/memviz/README.md", "(../../docs/memviz.png)")):
        with open(os.path.join(REPO, doc), encoding="utf-8") as f:
            expect(link in f.read(), "%s links the image" % doc)


# ----------------------------------------------------------------- command line

def interpreters():
    """Debian's python3 and, when present, another python3 on the PATH
    (the pyenv one here): the tool is standard library only."""
    out = [sys.executable]
    other = shutil.which("python3")
    if other and os.path.realpath(other) != os.path.realpath(sys.executable):
        out.append(other)
    return out


@case
def cli_writes_one_page_for_several_snapshots():
    paths = []
    for name in ("views", "fresh", "host"):
        paths.append(write(name + ".json", json.dumps(fixture(name))))
    for py in interpreters():
        out = os.path.join(TMP, "cli-%d.html" % len(py))
        rc, so, se = run_tool(paths + ["-o", out, "--title", "views vs fresh"], py)
        expect(rc == 0, "%s: exit %d: %s" % (py, rc, se))
        expect("memviz: wrote %s (3 snapshots," % out in so, "%s: says where: %r" % (py, so))
        expect(se == "", "%s: no warnings for consistent snapshots: %r" % (py, se))
        dom = Dom(open(out, encoding="utf-8").read())
        expect([s.get("data-name") for s in dom.find_all("section", cls="snapshot")] ==
               ["views", "fresh", "host"], "named by file")
        expect(dom.find("h1").text == "views vs fresh", "--title")
    out = os.path.join(TMP, "no-such-dir", "x.html")
    rc, so, se = run_tool([paths[2], "-o", out])
    expect(rc == 1 and se.startswith("memviz: cannot write %s: " % out) and
           "Traceback" not in se, "unwritable output: %d %r" % (rc, se))
    rc, so, se = run_tool([paths[2], "--max-segments", "3"])
    default_out = paths[2][:-5] + ".html"
    expect(rc == 0 and os.path.exists(default_out), "default output next to the input: %r" % so)
    expect(len(seg_rows(Dom(open(default_out).read()))) == 3, "--max-segments 3")


def bad_inputs():
    good = fixture("hand")

    def edit(fn):
        s = copy.deepcopy(good)
        fn(s)
        return json.dumps(s)

    def setv(path, value):
        def fn(s):
            obj = s
            for k in path[:-1]:
                obj = obj[k]
            if value is KeyError:
                del obj[path[-1]]
            else:
                obj[path[-1]] = value
        return edit(fn)

    return [
        ("not_json", "{\"format\": ", "not JSON"),
        ("array", "[1, 2]", "the top level is an array, not an object"),
        ("wrong_format", setv(["format"], "pytorch.memory_snapshot"),
         'not a stridemem memory snapshot: it "format" is a string ("pytorch.memory_snapshot")'),
        ("no_format", setv(["format"], KeyError), 'it has no "format" field'),
        ("version_2", setv(["version"], 2), "snapshot version 2 is not supported"),
        ("version_str", setv(["version"], "1"), 'snapshot version "1" is not supported'),
        ("no_total", setv(["totals", "allocated_bytes"], KeyError),
         "totals.allocated_bytes is missing"),
        ("block_size_str", setv(["segments", 0, "blocks", 0, "size"], "12"),
         'segments[0].blocks[0].size is a string ("12"), want a non-negative integer'),
        ("negative", setv(["totals", "num_frees"], -1),
         "totals.num_frees is an integer, want a non-negative integer"),
        ("bool_int", setv(["time_us"], True), "time_us is a boolean"),
        ("tags_obj", setv(["tags"], {}), "tags is an object, want an array"),
        ("event_no_size", setv(["history", "events", 0, "size"], KeyError),
         "history.events[0].size is missing"),
        ("nan", json.dumps(good).replace('"ratio": 0.0', '"ratio": NaN', 1), "not JSON"),
        ("empty", "", "empty: not a stridemem memory snapshot"),
    ]


@case
def cli_bad_input_exits_2_with_a_message():
    good = write("good.json", json.dumps(fixture("hand")))
    for n, py in enumerate(interpreters()):
        # every case under Debian's python; a few under the other (a slow shim)
        for name, text, phrase in bad_inputs()[::1 if n == 0 else 4]:
            path = write("bad-%s.json" % name, text)
            out = os.path.join(TMP, "bad-%s.html" % name)
            rc, so, se = run_tool([good, path, "-o", out], py)
            expect(rc == 2, "%s %s: exit %d, want 2 (%s)" % (py, name, rc, se))
            expect(se.startswith("memviz: %s: " % path) and phrase in se,
                   "%s: stderr %r lacks %r" % (name, se, phrase))
            expect("Traceback" not in se + so, "%s: a traceback" % name)
            expect(not os.path.exists(out), "%s: no page written" % name)
        for path, phrase in ((os.path.join(TMP, "missing.json"), "cannot read"),
                             (TMP, "cannot read")):
            rc, so, se = run_tool([path, "-o", os.path.join(TMP, "x.html")], py)
            expect(rc == 2 and phrase in se and path in se and "Traceback" not in se,
                   "%s: %d %r" % (path, rc, se))
    # and through the module: load() raises SnapshotError naming the file
    path = write("bad-version.json", bad_inputs()[4][1])
    try:
        memviz.load(path)
        expect(False, "load accepted version 2")
    except memviz.SnapshotError as e:
        expect(e.where == path and "version 2" in e.what, str(e))


@case
def cli_tolerates_the_nul_terminator_and_reports_bad_utf8():
    path = write("nul.json", json.dumps(fixture("hand")) + "\x00")
    rc, so, se = run_tool([path, "-o", os.path.join(TMP, "nul.html")])
    expect(rc == 0 and se == "", "a NUL-terminated buffer is a snapshot: %d %r" % (rc, se))
    raw = json.dumps(fixture("hand")).replace('"tag": "A"', '"tag": "A\\u00ff"').encode()
    raw = raw.replace(b"A\\u00ff", b"A\xff")
    path = os.path.join(TMP, "latin1.json")
    with open(path, "wb") as f:
        f.write(raw)
    out = os.path.join(TMP, "latin1.html")
    rc, so, se = run_tool([path, "-o", out])
    expect(rc == 0, "bad UTF-8 still draws: %d %r" % (rc, se))
    expect("memviz: warning: latin1: the file is not valid UTF-8" in se, "warned: %r" % se)
    page = open(out, encoding="utf-8").read()
    expect("A\ufffd" in page and "not valid UTF-8" in page, "shown as U+FFFD, noted in the page")
    s = fixture("hand")
    s["totals"]["reserved_bytes"] = 1
    path = write("tampered.json", json.dumps(s))
    rc, so, se = run_tool([path, "-o", os.path.join(TMP, "tampered.html")])
    expect(rc == 0 and "memviz: warning: tampered: totals.reserved_bytes is 1 B" in se,
           "inconsistency warned on stderr: %r" % se)


# ----------------------------------------------------------------- the browser

_RUNS = [0]


def chromium(path, extra=()):
    """Opens a file in headless chromium; returns (dom text, console
    messages, page-made network requests, seconds)."""
    if NO_BROWSER and not os.access(CHROMIUM, os.X_OK):
        raise NotRun("%s (STRIDEMEM_NO_BROWSER=1; chromium not found at %s)" % (NO_BROWSER_TEXT, CHROMIUM))
    expect(os.access(CHROMIUM, os.X_OK),
           "chromium not found at %s: the page's browser test needs Debian's chromium; "
           "run scripts/setup-deps.sh (it installs it) or apt-get install chromium" % CHROMIUM)
    _RUNS[0] += 1
    run = os.path.join(TMP, "chromium-%d" % _RUNS[0])
    os.makedirs(run)
    netlog = os.path.join(run, "netlog.json")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--user-data-dir=" + os.path.join(run, "profile"), "--no-first-run",
           "--no-default-browser-check", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-default-apps",
           "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
           "--log-net-log=" + netlog] + list(extra)
    if not any(a.startswith("--screenshot") for a in extra):
        cmd.append("--dump-dom")
    cmd.append(pathlib.Path(path).resolve().as_uri())
    env = dict(os.environ, HOME=run, XDG_CONFIG_HOME=run, XDG_CACHE_HOME=run)
    # The sanitizer suite (scripts/reliability.sh asan) runs the Python tests
    # with libasan preloaded for the library; chromium is no part of what it
    # checks, and under that preload it does not finish: give it a clean start.
    for var in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        env.pop(var, None)
    t = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True, cwd=run)
    try:
        out, err = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        expect(False, "chromium did not finish within 90 s on %s" % path)
    took = time.time() - t
    err = err.decode("utf-8", "replace")
    expect(p.returncode == 0, "chromium exit %d:\n%s" % (p.returncode, err[-3000:]))
    console = re.findall(r":CONSOLE[^\]]*\] (.*)", err)
    return out.decode("utf-8", "replace"), console, page_requests(netlog), took


def page_requests(netlog):
    """URLs the page asked for, from chromium's net log. Chromium's own
    background requests have no initiator ("not an origin"); a page's carry
    its origin (file:// pages: "null") and a file:// isolation key."""
    expect(os.path.exists(netlog), "chromium wrote no net log")
    with open(netlog, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        log = json.loads(text)
    except ValueError:
        log = json.loads(text.rstrip().rstrip(",") + "]}")  # cut short: close it
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for e in log.get("events", []):
        p = e.get("params") or {}
        if names.get(e["type"]) != "URL_REQUEST_START_JOB" or "url" not in p:
            continue
        if p.get("initiator") != "not an origin" or "file://" in p.get("network_isolation_key", ""):
            urls.append(p["url"])
    return urls


def selftest(dom_text):
    m = re.search(r'<pre id="memviz-selftest">(.*?)</pre>', dom_text, re.S)
    expect(m and m.group(1).strip(), "the page's self-test did not run (no JSON in "
           "#memviz-selftest)", dom_text[-2000:])
    return json.loads(html.unescape(m.group(1)))


def browser_pages():
    names = ["views", "host", "nasty", "hand_dropped", "empty"]
    return names, [fixture(n) for n in names]


@case
def browser_renders_the_page_without_errors():
    names, snaps = browser_pages()
    page = memviz.render(snaps, "browser test", names)
    path = write("browser.html", page)
    dom_text, console, requests, took = chromium(path)
    print("     chromium: %.1f s" % took)
    st = selftest(dom_text)
    expect(st["errors"] == [], "script errors: %r" % st["errors"])
    expect(console == [], "console messages: %r" % console)
    expect(requests == [], "network requests: %r" % requests)
    expect(st["snapshots"] == 5 and len(st["sections"]) == 5 and st["compare_rows"] == 5,
           "5 snapshots")
    expect(st["img_elements"] == 0 and st["script_elements"] == 2, "no injected elements")
    pydom = Dom(page)
    for si, (name, snap, sec) in enumerate(zip(names, snaps, st["sections"])):
        tot = snap["totals"]
        expect(sec["name"] == name and sec["device"] == snap["device"], "section %d" % si)
        for f in HEADER_FIELDS + COUNT_FIELDS:
            fig = sec["figures"][f]
            expect(fig["value"] == str(tot[f]), "%s %s: %r" % (name, f, fig))
        for f in HEADER_FIELDS:
            expect(sec["figures"][f]["text"] == ref_fmt(tot[f]), "%s %s text" % (name, f))
        expect(sec["fmt_mismatches"] == [], "the script's formatter disagrees: %r"
               % sec["fmt_mismatches"])
        nblocks = sum(len(s["blocks"]) for s in snap["segments"])
        expect(sec["segments_drawn"] == sec["segments_total"] == len(snap["segments"]),
               "%s: segments %r" % (name, sec["segments_drawn"]))
        expect(sec["blocks_represented"] == nblocks, "%s: blocks %d of %d"
               % (name, sec["blocks_represented"], nblocks))
        expect(sum(sec["block_bytes"].values()) == tot["reserved_bytes"],
               "%s: drawn bytes = reserved" % name)
        want_tags = [t["tag"] for t in snap["tags"]]
        expect([h["tag"] for h in sec["holders"]] == want_tags, "%s: holders %r"
               % (name, sec["holders"]))
        expect(sec["embedded"]["tags"] == want_tags, "%s: JSON.parse of the data" % name)
        expect(sec["embedded"]["allocated_bytes"] == str(tot["allocated_bytes"]), "data")
        pysec = pydom.by_id("snap-%d" % si)
        expect(sec["series"] == len(pysec.find_all("path", cls="series")), "series count")
        expect(sec["history"] == memviz.history_status(snap), "history status")
        if sec["history"] == "events":
            ev = snap["history"]["events"]
            expect(sec["chart_points"] == len(ev), "%s: points" % name)
            expect(sec["chart_width_px"] > 600, "%s: chart laid out %r px wide"
                   % (name, sec["chart_width_px"]))
            expect(sec["highlight"] == [1, 0], "%s: legend hover highlights one band, then "
                   "none: %r" % (name, sec["highlight"]))
            hover = sec["hover"].split("\n")
            expect(hover[1] == "allocated " + ref_fmt(tot["allocated_bytes"]) and
                   hover[2] == "reserved  " + ref_fmt(ev[-1]["reserved_bytes"]),
                   "%s: hover at the right edge %r" % (name, hover))
        else:
            expect(sec["chart_points"] == 0 and "hover" not in sec, "%s: no chart" % name)
        expect((sec["segmap_width_px"] > 600) == bool(snap["segments"]),
               "%s: segment map laid out: %r px" % (name, sec["segmap_width_px"]))
    nasty = st["sections"][2]
    expect(set(NASTY) <= set(h["tag"] for h in nasty["holders"]), "nasty tags in the DOM")
    expect(nasty["device"] == "cuda:1<b>bold</b>", "device attribute as text")
    expect(st["sections"][1]["history"] == "absent", "host has no history")


@case
def missing_chromium_is_a_failure_naming_setup_deps():
    global CHROMIUM, NO_BROWSER
    saved, CHROMIUM = (CHROMIUM, NO_BROWSER), os.path.join(TMP, "no-chromium-here")
    NO_BROWSER = False
    try:
        chromium(write("unused.html", "<p>x</p>"))
        expect(False, "a missing chromium passed")
    except NotRun as e:
        expect(False, "a missing chromium was not run without STRIDEMEM_NO_BROWSER: %s" % e)
    except Exception as e:
        expect("scripts/setup-deps.sh" in str(e) and "chromium not found" in str(e),
               "message: %s" % e)
    finally:
        CHROMIUM, NO_BROWSER = saved


def _run_self(env_extra, only):
    """This file run again on one case with chromium absent, the
    environment changed by env_extra (None: the variable removed)."""
    env = dict(os.environ, MEMVIZ_CHROMIUM=os.path.join(TMP, "no-chromium-here"))
    env.pop("STRIDEMEM_NO_BROWSER", None)
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--only", only],
                       capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stdout + p.stderr


@case
def no_browser_opt_out_is_not_run_never_a_pass():
    """STRIDEMEM_NO_BROWSER=1 with no chromium: the browser check prints
    NOT RUN, the summary counts it in the form scripts/skip_report.py reads,
    and the run exits 77 (skipped), not 0; without the variable (or with
    another value) the same run fails naming scripts/setup-deps.sh."""
    only = "browser_renders_the_page_without_errors"
    rc, out = _run_self({"STRIDEMEM_NO_BROWSER": "1"}, only)
    expect(rc == 77, "opt-out run: exit %d, want 77" % rc, out)
    expect(re.search(r"^NOT RUN %s: %s" % (only, NO_BROWSER_TEXT), out, re.M) is not None,
           "opt-out run: no NOT RUN line", out)
    expect("test_memviz: 0 passed, 0 failed, 1 not run" in out and "ok   " + only not in out,
           "opt-out run: the summary does not count it as not run", out)
    sys.path.insert(0, os.path.join(REPO, "scripts"))
    try:
        import skip_report
    finally:
        sys.path.pop(0)
    counted = [m.group("s") for m in map(skip_report.COUNTED.match, out.splitlines()) if m]
    expect(counted == ["1"], "scripts/skip_report.py reads %r from the summary" % counted, out)
    for env in (None, {"STRIDEMEM_NO_BROWSER": "0"}):
        rc, out = _run_self(env, only)
        expect(rc == 1 and "FAIL %s: chromium not found" % only in out and
               "scripts/setup-deps.sh" in out and "NOT RUN" not in out,
               "without the opt-out (%r): exit %d, want a failure" % (env, rc), out)


@case
def browser_checks_catch_what_they_look_for():
    """The detectors above must be able to fail: a page whose data is
    broken (script error in the self-test), one with markup that slipped
    past escaping (blocked by the CSP: a console message, nothing runs),
    and a page that fetches (a request in the net log)."""
    page = memviz.render([fixture("hand")])
    data = re.search(r'(<script type="application/json" id="memviz-data">)(.*?)(</script>)',
                     page, re.S)
    broken = page[:data.start(2)] + "{broken" + page[data.end(2):]
    st = selftest(chromium(write("control-data.html", broken))[0])
    expect(any("memviz script failed" in e for e in st["errors"]),
           "a broken page reports its error: %r" % st["errors"])
    injected = page.replace("</main>", "<img src=x onerror=\"document.title='pwned'\">"
                            "<script>document.title='pwned2'</script></main>", 1)
    dom_text, console, requests, _ = chromium(write("control-inject.html", injected))
    expect(len(console) >= 2 and all("Content Security Policy" in c for c in console),
           "blocked markup shows on the console: %r" % console)
    expect("pwned" not in re.search(r"<title>(.*?)</title>", dom_text, re.S).group(1),
           "the injected code ran")
    expect(selftest(dom_text)["sections"][0]["segments_drawn"] == 1, "the page still works")
    fetcher = write("control-fetch.html", "<!DOCTYPE html><html><body>"
                    "<img src=\"https://memviz-control.invalid/x.png\"></body></html>")
    _, console, requests, _ = chromium(fetcher)
    expect(any("memviz-control.invalid" in u for u in requests),
           "the net log shows a page's request: %r" % requests)


@case
def browser_draws_thousands_of_segments():
    page = memviz.render([fixture("many")])
    path = write("many.html", page)
    dom_text, console, requests, took = chromium(path)
    st = selftest(dom_text)
    sec = st["sections"][0]
    expect(st["errors"] == [] and console == [] and requests == [],
           "clean: %r %r %r" % (st["errors"], console, requests))
    expect(sec["segments_drawn"] == 400 and sec["segments_not_drawn"] == 4600 and
           sec["segments_total"] == 5000, "capped: %r" % {k: sec[k] for k in (
               "segments_drawn", "segments_not_drawn", "segments_total")})
    print("     5000 segments in chromium: %.1f s, page %s" % (took, ref_fmt(len(page))))


# ----------------------------------------------------------------- entry point

def screenshot(out):
    """docs/memviz.png: the "views" and "fresh" scenarios on one page."""
    page = memviz.render([fixture("views"), fixture("fresh")], "stridemem memory: views vs fresh",
                         ["views", "fresh"])
    path = write("screenshot.html", page)
    tmp_png = os.path.join(TMP, "shot.png")
    chromium(path, ["--screenshot=" + tmp_png, "--window-size=1280,1800", "--hide-scrollbars"])
    shutil.copyfile(tmp_png, out)
    print("wrote %s (%s)" % (out, ref_fmt(os.path.getsize(out))))


def main(argv):
    try:
        if len(argv) == 2 and argv[0] == "--screenshot":
            screenshot(argv[1])
            return 0
        if len(argv) == 2 and argv[0] == "--fixtures":
            os.makedirs(argv[1], exist_ok=True)
            for name in ("views", "fresh", "host", "nasty", "hand", "hand_dropped"):
                with open(os.path.join(argv[1], name + ".json"), "w") as f:
                    json.dump(fixture(name), f, indent=1)
            print("wrote the fixtures to %s" % argv[1])
            return 0
        if len(argv) == 2 and argv[0] == "--only":
            names = argv[1].split(",")
            cases.functions = [f for f in cases.functions if f.__name__ in names]
            argv = []
        if argv:
            print(__doc__)
            return 2
        t = time.time()
        rc = cases.run()
        print("test_memviz: %.1f s" % (time.time() - t))
        return rc
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
