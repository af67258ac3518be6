#!/usr/bin/env python3
"""memviz: draws stridemem memory snapshots as one offline HTML page.

    python -m stridemem.memviz SNAPSHOT.json [more.json ...] -o OUT.html
        [--title T] [--note SENTENCE] [--pytorch OUT.pickle]

(also tools/memviz/memviz.py in the source tree, share/stridemem/memviz.py
after cmake --install, or this file run by its path: it needs no library.)

Reads the JSON that sm_memory_snapshot() writes (docs/MEMORY_SNAPSHOT.md,
the contract) and writes ONE self-contained HTML file: inline CSS, inline
SVG drawn here, a small inline script for hover details and a self-test, and
the snapshots themselves embedded as JSON. No network: no URL appears in the
page, and its Content-Security-Policy forbids every load besides its own
hashed script.

Python 3 standard library only. Importable:
    memviz.load(path) -> dict            (validated; raises SnapshotError)
    memviz.render(snapshots, title) -> str
    memviz.timeline(snapshot) -> dict     (per-tag series rebuilt from history)
    memviz.own_figures(snapshot) -> dict  (the run's own peak, allocs, time)
    memviz.to_pytorch(snapshot) -> dict   (PyTorch's memory snapshot format)
"""

import argparse
import base64
import datetime
import hashlib
import html
import json
import math
import os
import pickle
import sys

FORMAT = "stridemem.memory_snapshot"
VERSIONS = (1,)
DEFAULT_TITLE = "stridemem memory"

# Block states in the order the legend lists them.
STATES = ("allocated", "pending_free", "inactive_split", "cached_free")
# Okabe-Ito colours: told apart under the common colour-vision deficiencies.
STATE_COLORS = {
    "allocated": "#0072B2",       # blue: held by a live storage
    "pending_free": "#D55E00",    # vermillion: freed, waiting for other streams
    "inactive_split": "#F0E442",  # yellow: free but stuck in a partly used segment
    "cached_free": "#009E73",     # bluish green: free and returnable
}
UNKNOWN_STATE_COLOR = "#8C8C8C"
STATE_MEANING = {
    "allocated": "held by a live storage",
    "pending_free": "freed, waiting for work on other streams before reuse",
    "inactive_split": "free, in a segment that still has an allocated block "
                      "(reusable, but sm_empty_cache cannot return it)",
    "cached_free": "free, the whole segment (reusable; sm_empty_cache returns it)",
}
# Paul Tol's "muted" scheme (colour-blind safe) for tags, largest first.
TAG_COLORS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933",
              "#DDCC77", "#CC6677", "#882255", "#AA4499")
UNTAGGED_COLOR = "#9E9E9E"
OTHER_COLOR = "#DDDDDD"
UNTAGGED_LABEL = "(untagged)"
OTHER_LABEL = "(other tags)"

TOTAL_FIELDS = ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes",
                "peak_reserved_bytes", "num_allocs", "num_frees", "cache_hits",
                "device_allocs", "device_frees", "active_views", "active_storages",
                "requested_bytes")
POOL_FIELDS = ("segments", "reserved_bytes", "allocated_bytes", "free_bytes",
               "largest_free_block")

# Drawing limits: a page must stay quick to open with thousands of segments
# or a full 10000-event ring.
MAX_SEGMENTS = 400        # segment rows drawn; the rest are summed in one bar per pool
MAX_POINTS = 2000         # timeline events drawn one by one; above, per pixel column
MIN_BLOCK_PX = 2.0        # narrower blocks are drawn together (hover says which)
MIN_BAND_PX = 6.0         # a chart band holding bytes is drawn at least this high
MIN_BAND_NOTE = "drawn %g px high where smaller: not to scale there" % MIN_BAND_PX
MAX_HOLDERS = 100         # rows of the top-holders table; the rest are summed

# Geometry (SVG user units; the SVGs scale to the page width).
WIDTH = 1160
CH_L, CH_R, CH_T, CH_B, CH_H = 78, 18, 14, 46, 300
PLOT_W = WIDTH - CH_L - CH_R
SEG_LABEL_W, SEG_RIGHT_W, SEG_ROW_H, SEG_BAR_H = 250, 150, 18, 12
SEG_BAR_W = WIDTH - SEG_LABEL_W - SEG_RIGHT_W


class SnapshotError(Exception):
    """Input that is not a usable stridemem snapshot; str() names the file."""

    def __init__(self, where, what):
        Exception.__init__(self, "%s: %s" % (where, what))
        self.where, self.what = where, what


# ----------------------------------------------------------------- formatting

_UNITS = ("KiB", "MiB", "GiB", "TiB")


def fmt_bytes(n):
    """The library's rule: below 1 KiB "N B", else two decimals of the largest
    unit up to TiB that keeps the value >= 1 ("1.50 MiB"). Dividing by powers
    of two is exact, so "%.2f" rounds exactly as the C library's printf."""
    n = int(n)
    if -1024 < n < 1024:
        return "%d B" % n
    v, u = float(n), -1
    while abs(v) >= 1024 and u < len(_UNITS) - 1:
        v /= 1024
        u += 1
    return "%.2f %s" % (v, _UNITS[u])


def fmt_short(n):
    """Axis labels: fmt_bytes without trailing zeros ("4 MiB", "1.5 GiB")."""
    s = fmt_bytes(n)
    if s.endswith(" B"):
        return s
    num, unit = s.split(" ")
    return num.rstrip("0").rstrip(".") + " " + unit


def fmt_count(n):
    return "{:,}".format(int(n))


def plural(n, word):
    return "%s %s%s" % (fmt_count(n), word, "" if n == 1 else "s")


def fmt_pct(part, whole):
    return "%.1f%%" % (100.0 * part / whole) if whole else "\u2014"


def fmt_time_us(t):
    """A time on the library's clock (microseconds since load)."""
    if t >= 10 * 1000000:
        return "%.2f s" % (t / 1e6)
    if t >= 1000000:
        return "%.3f s" % (t / 1e6)
    if t >= 1000:
        return "%.3f ms" % (t / 1e3)
    return "%d \u00b5s" % t


def esc(s):
    """Text or attribute value for HTML. Lone surrogates (a \\udcXX escape in
    the JSON) cannot be written as UTF-8, so they are shown as escapes."""
    s = str(s).encode("utf-8", "backslashreplace").decode("utf-8")
    return html.escape(s, quote=True)


def tag_label(tag):
    return UNTAGGED_LABEL if tag is None else tag


def json_for_script(obj):
    """JSON to sit inside <script type="application/json">: '<', '>' and '&'
    only occur inside JSON strings, where \\u003c etc. mean the same, so no
    '</script>' or '<!--' in a tag can end or confuse the element. ASCII only,
    so lone surrogates survive as escapes."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# ----------------------------------------------------------------- loading and validation

class _Bad(Exception):
    pass


def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string (%s)" % json.dumps(v[:40])
    if isinstance(v, list):
        return "an array"
    return "an object"


def _field(obj, key, path, want, nullable=False, required=True):
    """obj[key] checked against want ("int": a non-negative integer, "num",
    "str", "bool", "list", "dict"); a missing or null optional field is None."""
    where = "%s.%s" % (path, key) if path else key
    if key not in obj or obj[key] is None:
        if key in obj and not nullable:
            raise _Bad("%s is null, want %s" % (where, _WANTS[want]))
        if key not in obj and required:
            raise _Bad("%s is missing" % where)
        return None
    v = obj[key]
    ok = {
        "int": lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0,
        "num": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
        "str": lambda x: isinstance(x, str),
        "bool": lambda x: isinstance(x, bool),
        "list": lambda x: isinstance(x, list),
        "dict": lambda x: isinstance(x, dict),
    }[want](v)
    if not ok:
        raise _Bad("%s is %s, want %s" % (where, _kind(v), _WANTS[want]))
    return v


_WANTS = {"int": "a non-negative integer", "num": "a number", "str": "a string",
          "bool": "true or false", "list": "an array", "dict": "an object"}


def validate(snap, where="snapshot"):
    """Raises SnapshotError(where, ...) unless snap follows the version-1
    contract in the fields memviz reads. Unknown fields are ignored, as the
    spec asks of readers."""
    if not isinstance(snap, dict):
        raise SnapshotError(where, "the top level is %s, not an object: not a stridemem "
                            "memory snapshot" % _kind(snap))
    fmt = snap.get("format")
    if fmt != FORMAT:
        what = "has no \"format\" field" if "format" not in snap else \
            "\"format\" is %s" % _kind(fmt)
        raise SnapshotError(where, "not a stridemem memory snapshot: it %s, want \"%s\""
                            % (what, FORMAT))
    ver = snap.get("version")
    if not (isinstance(ver, int) and not isinstance(ver, bool)) or ver not in VERSIONS:
        raise SnapshotError(where, "snapshot version %s is not supported: this memviz reads "
                            "version %s (use the memviz of the stridemem release that "
                            "wrote it)" % (json.dumps(ver), ", ".join(map(str, VERSIONS))))
    try:
        _validate_v1(snap)
    except _Bad as e:
        raise SnapshotError(where, "malformed snapshot: %s" % e)


def _validate_v1(s):
    _field(s, "device", "", "str")
    _field(s, "time_us", "", "int")
    _field(s, "start_unix_us", "", "int", nullable=True, required=False)
    totals = _field(s, "totals", "", "dict")
    for k in TOTAL_FIELDS:
        _field(totals, k, "totals", "int")
    fr = _field(s, "fragmentation", "", "dict")
    _field(fr, "cached_free_bytes", "fragmentation", "int")
    _field(fr, "largest_free_block", "fragmentation", "int")
    _field(fr, "ratio", "fragmentation", "num")
    pools = _field(fr, "pools", "fragmentation", "dict")
    for name, p in pools.items():
        path = "fragmentation.pools.%s" % name
        if not isinstance(p, dict):
            raise _Bad("%s is %s, want an object" % (path, _kind(p)))
        for k in POOL_FIELDS:
            _field(p, k, path, "int")
        _field(p, "ratio", path, "num")
    for i, u in enumerate(_field(fr, "unusable", "fragmentation", "list")):
        path = "fragmentation.unusable[%d]" % i
        if not isinstance(u, dict):
            raise _Bad("%s is %s, want an object" % (path, _kind(u)))
        _field(u, "request", path, "int")
        _field(u, "unusable_bytes", path, "int")
    for i, t in enumerate(_field(s, "tags", "", "list")):
        path = "tags[%d]" % i
        if not isinstance(t, dict):
            raise _Bad("%s is %s, want an object" % (path, _kind(t)))
        _field(t, "tag", path, "str", nullable=True)
        for k in ("allocated_bytes", "requested_bytes", "blocks"):
            _field(t, k, path, "int")
    for i, seg in enumerate(_field(s, "segments", "", "list")):
        path = "segments[%d]" % i
        if not isinstance(seg, dict):
            raise _Bad("%s is %s, want an object" % (path, _kind(seg)))
        _field(seg, "address", path, "str")
        _field(seg, "size", path, "int")
        _field(seg, "pool", path, "str")
        _field(seg, "stream", path, "str", nullable=True, required=False)
        _field(seg, "allocated_bytes", path, "int", required=False)
        for j, b in enumerate(_field(seg, "blocks", path, "list")):
            bp = "%s.blocks[%d]" % (path, j)
            if not isinstance(b, dict):
                raise _Bad("%s is %s, want an object" % (bp, _kind(b)))
            for k in ("offset", "size", "requested"):
                _field(b, k, bp, "int")
            _field(b, "state", bp, "str")
            for k in ("storage", "seq", "time_us"):
                _field(b, k, bp, "int", nullable=True, required=False)
            _field(b, "tag", bp, "str", nullable=True, required=False)
    hist = _field(s, "history", "", "dict", nullable=True, required=False)
    if hist is not None:
        _field(hist, "enabled", "history", "bool", required=False)
        for k in ("capacity", "recorded", "dropped"):
            _field(hist, k, "history", "int", required=False)
        for i, e in enumerate(_field(hist, "events", "history", "list")):
            path = "history.events[%d]" % i
            if not isinstance(e, dict):
                raise _Bad("%s is %s, want an object" % (path, _kind(e)))
            action = _field(e, "action", path, "str")
            _field(e, "time_us", path, "int")
            _field(e, "allocated_bytes", path, "int")
            _field(e, "reserved_bytes", path, "int")
            # alloc/free change a tag's bytes by `size`; oom reports it.
            _field(e, "size", path, "int", required=action in ("alloc", "free", "oom"))
            _field(e, "tag", path, "str", nullable=True, required=False)


def _reject_constant(name):
    raise ValueError("%s is not valid JSON" % name)


def loads(text, where="snapshot"):
    """Parses and validates one snapshot's text."""
    # sm_memory_snapshot() NUL-terminates its buffer; a file written with that
    # NUL (or padding after it) is still the snapshot.
    text = text.rstrip("\x00 \t\r\n")
    if not text.strip():
        raise SnapshotError(where, "empty: not a stridemem memory snapshot")
    try:
        snap = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        raise SnapshotError(where, "not JSON (%s): not a stridemem memory snapshot" % e)
    validate(snap, where)
    return snap


def load(path, warnings=None):
    """Reads, parses and validates a snapshot file; raises SnapshotError.
    Bytes that are not UTF-8 (a tag pushed as raw bytes) are shown as U+FFFD
    and noted in `warnings` (a list) when one is given."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise SnapshotError(path, "cannot read: %s" % (e.strerror or e))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        text = raw.decode("utf-8", "replace")
        if warnings is not None:
            warnings.append("the file is not valid UTF-8 (first bad byte at offset %d); "
                            "bad bytes are shown as \ufffd" % e.start)
    return loads(text, path)


# ----------------------------------------------------------------- analysis

def history_status(snap):
    """'absent' (not recording), 'empty' (recording, no event yet) or 'events'."""
    h = snap.get("history")
    if not h or h.get("enabled") is False:
        return "absent"
    return "events" if h.get("events") else "empty"


def _pick_points(events, max_points, columns):
    """Indices of the events to draw. Up to max_points: all of them. Above,
    per pixel column of time: the first, last, and the events with the most
    and least allocated and the most reserved, so peaks and dips survive."""
    n = len(events)
    if n <= max_points:
        return list(range(n))
    t0 = events[0]["time_us"]
    span = max(events[-1]["time_us"] - t0, 1)
    cols = {}
    for i, e in enumerate(events):
        c = min(columns - 1, max(0, int((e["time_us"] - t0) * columns / span)))
        k = cols.get(c)
        a, r = e["allocated_bytes"], e["reserved_bytes"]
        if k is None:
            cols[c] = [i, i, i, i, i]  # first, last, max alloc, min alloc, max reserved
            continue
        k[1] = i
        if a > events[k[2]]["allocated_bytes"]:
            k[2] = i
        if a < events[k[3]]["allocated_bytes"]:
            k[3] = i
        if r > events[k[4]]["reserved_bytes"]:
            k[4] = i
    keep = set()
    for k in cols.values():
        keep.update(k)
    return sorted(keep)


def timeline(snap, keep=None, max_points=MAX_POINTS, columns=PLOT_W):
    """The memory-over-time model of a snapshot with history, or None.

    Per-tag series follow the spec's rule: start from the final `tags` totals
    (the state after the newest event) and walk the alloc/free events
    backwards (a free adds its block back to its tag, an alloc takes it off).
    Walking backwards needs no event before the ring's oldest, so history
    that started after allocations existed, or lost events to the ring
    (`dropped`), still gives exact series for the events it has.

    keep: the tags to give their own series (None: every tag); the others
    are summed in `other`. Returns a dict: index (events drawn), time_us,
    allocated, reserved (after each drawn event, from the events), series
    [{"tag", "values"}] (after each drawn event), other (or None), start
    ({tag: bytes} before the first event), peaks ({tag: most bytes after any
    event}), oom / empty_cache markers, warnings (inconsistencies found).
    """
    if history_status(snap) != "events":
        return None
    hist = snap["history"]
    events = hist["events"]
    final = {}
    for t in snap["tags"]:
        final[t["tag"]] = final.get(t["tag"], 0) + t["allocated_bytes"]

    def delta(e):
        if e["action"] == "alloc":
            return e.get("tag"), e["size"]
        if e["action"] == "free":
            return e.get("tag"), -e["size"]
        return None, 0

    cur = dict(final)
    order = list(final)  # tags in first-seen order: final tags, then history's
    for e in reversed(events):
        tag, d = delta(e)
        if d:
            if tag not in cur:
                cur[tag] = 0
                order.append(tag)
            cur[tag] -= d
    start = dict(cur)

    idx = _pick_points(events, max_points, columns)
    tracked = [t for t in order if keep is None or t in keep]
    has_other = len(tracked) < len(order)
    values = {t: [] for t in tracked}
    other = [] if has_other else None
    peaks = {t: max(v, 0) for t, v in start.items()}
    total = sum(start.values())
    mismatch, first_mismatch, negative = 0, None, {}
    for t, v in start.items():
        if v < 0:
            negative.setdefault(t, -1)
    j = 0
    for i, e in enumerate(events):
        tag, d = delta(e)
        if d:
            cur[tag] += d
            total += d
            if cur[tag] > peaks[tag]:
                peaks[tag] = cur[tag]
            if cur[tag] < 0:
                negative.setdefault(tag, i)
        if total != e["allocated_bytes"]:
            mismatch += 1
            if first_mismatch is None:
                first_mismatch = (i, total, e["allocated_bytes"])
        if j < len(idx) and idx[j] == i:
            j += 1
            s = 0
            for t in tracked:
                v = cur[t]
                values[t].append(v)
                s += v
            if has_other:
                other.append(total - s)

    warnings = []
    if mismatch:
        i, got, want = first_mismatch
        warnings.append(
            "the per-tag series do not add up to the events' allocated_bytes at %d of %d "
            "events (first: event %d at %s: the tags sum to %s, the event says %s): the "
            "tags table and the history disagree" % (
                mismatch, len(events), i, fmt_time_us(events[i]["time_us"]),
                fmt_bytes(got), fmt_bytes(want)))
    for t, i in sorted(negative.items(), key=lambda x: x[1]):
        warnings.append("walking back from the tags table gives tag %s a negative size %s"
                        % (json.dumps(tag_label(t)), "before the first event" if i < 0
                           else "after event %d" % i))
    if events[-1]["allocated_bytes"] != snap["totals"]["allocated_bytes"]:
        warnings.append("the newest event says %s allocated, the totals say %s" % (
            fmt_bytes(events[-1]["allocated_bytes"]),
            fmt_bytes(snap["totals"]["allocated_bytes"])))

    markers = {"oom": [], "empty_cache": []}
    for e in events:
        if e["action"] in markers and len(markers[e["action"]]) < 200:
            markers[e["action"]].append({"time_us": e["time_us"], "size": e.get("size")})
    return {
        "n_events": len(events),
        "recorded": hist.get("recorded"),
        "dropped": hist.get("dropped") or 0,
        "capacity": hist.get("capacity"),
        "index": idx,
        "time_us": [events[i]["time_us"] for i in idx],
        "allocated": [events[i]["allocated_bytes"] for i in idx],
        "reserved": [events[i]["reserved_bytes"] for i in idx],
        "series": [{"tag": t, "values": values[t]} for t in tracked],
        "other": other,
        "start": start,
        "peaks": peaks,
        "oom": markers["oom"],
        "empty_cache": markers["empty_cache"],
        "warnings": warnings,
    }


def consistency(snap):
    """What in the snapshot contradicts the spec's invariants (a list of
    sentences; the page shows them, nothing is corrected)."""
    out = []
    tot = snap["totals"]
    reserved = alloc = requested = free = 0
    unknown = set()
    for i, seg in enumerate(snap["segments"]):
        reserved += seg["size"]
        pos, seg_alloc = 0, 0
        for b in seg["blocks"]:
            if b["offset"] != pos:
                out.append("segment %s (%s): its blocks do not tile it (a block starts "
                           "at offset %d, the one before ended at %d)"
                           % (seg["address"], fmt_bytes(seg["size"]), b["offset"], pos))
                break
            pos += b["size"]
            if b["state"] == "allocated":
                seg_alloc += b["size"]
                requested += b["requested"]
            else:
                free += b["size"]
                if b["state"] not in STATES:
                    unknown.add(b["state"])
        else:
            if pos != seg["size"]:
                out.append("segment %s: its blocks cover %d bytes of its %d"
                           % (seg["address"], pos, seg["size"]))
        alloc += seg_alloc
        if seg.get("allocated_bytes") is not None and seg["allocated_bytes"] != seg_alloc:
            out.append("segment %s says %s allocated, its blocks hold %s"
                       % (seg["address"], fmt_bytes(seg["allocated_bytes"]),
                          fmt_bytes(seg_alloc)))
    for what, got, field in (("segment sizes", reserved, "reserved_bytes"),
                             ("allocated blocks", alloc, "allocated_bytes"),
                             ("allocated blocks' requests", requested, "requested_bytes")):
        if got != tot[field]:
            out.append("totals.%s is %s, but the %s add up to %s"
                       % (field, fmt_bytes(tot[field]), what, fmt_bytes(got)))
    tags_sum = sum(t["allocated_bytes"] for t in snap["tags"])
    if tags_sum != tot["allocated_bytes"]:
        out.append("the tags table adds up to %s, totals.allocated_bytes is %s"
                   % (fmt_bytes(tags_sum), fmt_bytes(tot["allocated_bytes"])))
    cf = snap["fragmentation"]["cached_free_bytes"]
    if cf != free:
        out.append("fragmentation.cached_free_bytes is %s, but the free blocks add up to %s"
                   % (fmt_bytes(cf), fmt_bytes(free)))
    for s in sorted(unknown):
        out.append("unknown block state %s (drawn grey)" % json.dumps(s))
    return out


def findings(snap):
    """consistency() plus what the history contradicts, and a "run" object
    that cannot be used."""
    tl = timeline(snap, keep=set())
    return consistency(snap) + (tl["warnings"] if tl else []) + run_findings(snap)


def run_findings(snap):
    """Why the snapshot's "run" object (optional) is not used, if it is not."""
    if "run" not in snap:
        return []
    r = snap["run"]
    if not isinstance(r, dict):
        return ["run is %s, not an object: ignored" % _kind(r)]
    out = []
    for f in ("peak_bytes", "allocs"):
        if not _int(r.get(f)):
            out.append("run.%s is %r, not a non-negative integer: the run object's figures "
                       "are ignored" % (f, r.get(f)))
    if "baseline" in r and run_counts(snap) is None:
        out.append("run.baseline lacks a counter or exceeds the totals: the header shows the "
                   "process's counts")
    return out


# ----------------------------------------------------------------- drawing helpers

RUN_COUNTS = ("num_allocs", "num_frees", "cache_hits", "device_allocs", "device_frees")


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def run_of(snap):
    """The snapshot's optional "run" object (written by the program that took
    the snapshot, such as stridemem-demo: docs/MEMORY_SNAPSHOT.md), or None."""
    r = snap.get("run")
    return r if isinstance(r, dict) else None


def own_figures(snap):
    """What the snapshot's own work used, as its program measured it:
    {"peak_bytes": the peak allocated above what was allocated when the run
    began, "allocs": allocations the run made, "time_ms" (or None), "source"}.
    From the "run" object when there is one; else from the history when it
    holds every event since recording began (the peak and the allocations up
    to the snapshot); else the process's totals."""
    r = run_of(snap)
    if r is not None and _int(r.get("peak_bytes")) and _int(r.get("allocs")):
        t = r.get("time_ms")
        return {"peak_bytes": r["peak_bytes"], "allocs": r["allocs"],
                "time_ms": t if isinstance(t, (int, float)) and not isinstance(t, bool)
                else None, "source": "run"}
    h = snap.get("history")
    ev = h.get("events") if isinstance(h, dict) else None
    if ev and not h.get("dropped"):
        first = ev[0]
        delta = {"alloc": first["size"], "free": -first["size"]}.get(first["action"], 0)
        start = first["allocated_bytes"] - delta
        return {"peak_bytes": max(e["allocated_bytes"] for e in ev) - start,
                "allocs": sum(1 for e in ev if e["action"] == "alloc"),
                "time_ms": None, "source": "history"}
    tot = snap["totals"]
    return {"peak_bytes": tot["peak_allocated_bytes"], "allocs": tot["num_allocs"],
            "time_ms": None, "source": "totals"}


def run_counts(snap):
    """The counters since the run began (totals minus the run's baseline), or
    None when the snapshot has no usable baseline."""
    r = run_of(snap)
    base = r.get("baseline") if r is not None else None
    if not isinstance(base, dict) or not all(_int(base.get(f)) for f in RUN_COUNTS):
        return None
    tot = snap["totals"]
    out = {f: tot[f] - base[f] for f in RUN_COUNTS}
    return out if all(v >= 0 for v in out.values()) else None


def _n(v):
    """A coordinate: one decimal, no trailing zeros (keeps paths short)."""
    s = "%.1f" % v
    return s[:-2] if s.endswith(".0") else s


def _color_map(snapshots):
    """One colour per tag for the whole page, so the same tag has the same
    colour in every snapshot: the largest tags (by their most bytes in any
    snapshot, at the end or at a peak of the history) get the palette, the
    untagged bytes their own grey, the rest share OTHER_COLOR."""
    size = {}
    for snap, tl in snapshots:
        for t in snap["tags"]:
            size[t["tag"]] = max(size.get(t["tag"], 0), t["allocated_bytes"])
        if tl:
            for t, v in tl["peaks"].items():
                size[t] = max(size.get(t, 0), v)
    named = sorted((t for t in size if t is not None), key=lambda t: (-size[t], t))
    colors = {t: c for t, c in zip(named, TAG_COLORS)}
    colors[None] = UNTAGGED_COLOR
    order = {t: i for i, t in enumerate(sorted(size, key=lambda t: (-size[t], t is None,
                                                                   t or "")))}
    return colors, order


def _nice_time_step(span, max_ticks=8):
    step = 10 ** math.floor(math.log10(span)) if span > 0 else 1
    for m in (0.1, 0.2, 0.5, 1, 2, 5, 10):
        if span / (step * m) <= max_ticks:
            return step * m
    return step * 10


def _svg_title(lines):
    return "<title>%s</title>" % esc("\n".join(lines))


# ----------------------------------------------------------------- panels

def _figure(si, field, value, label, kind="bytes", extra=""):
    """A header figure. data-field/data-value expose the number for tests and
    for the page's self-test; data-unit=bytes cells are re-checked by the
    page's own formatter."""
    if kind == "bytes":
        text = fmt_bytes(value)
        exact = "%s B" % fmt_count(value)
    elif kind == "ratio":
        text, exact = "%.4f" % value, extra
    else:
        text, exact = fmt_count(value), extra
    unit = ' data-unit="bytes"' if kind == "bytes" else ""
    return ('<div class="card"><div class="label">%s</div>'
            '<div class="value" id="s%d-%s" data-snap="%d" data-field="%s" data-value="%s"%s>'
            '%s</div><div class="exact">%s</div></div>'
            % (esc(label), si, field, si, field, esc(value), unit, esc(text), esc(exact)))


def _header(si, snap):
    tot = snap["totals"]
    fr = snap["fragmentation"]
    when = "taken %s after the library was loaded" % fmt_time_us(snap["time_us"])
    if snap.get("start_unix_us") is not None:
        try:
            wall = datetime.datetime.fromtimestamp(
                (snap["start_unix_us"] + snap["time_us"]) / 1e6, tz=datetime.timezone.utc)
            when += " (%s UTC)" % wall.strftime("%Y-%m-%d %H:%M:%S")
        except (OverflowError, OSError, ValueError):
            pass
    cnt = run_counts(snap)
    src = cnt if cnt is not None else tot
    hits = fmt_pct(src["cache_hits"], src["num_allocs"]) + " of allocs"
    bytes_cards = "".join([
        _figure(si, "allocated_bytes", tot["allocated_bytes"], "allocated"),
        _figure(si, "reserved_bytes", tot["reserved_bytes"], "reserved"),
        _figure(si, "peak_allocated_bytes", tot["peak_allocated_bytes"], "peak allocated"),
        _figure(si, "peak_reserved_bytes", tot["peak_reserved_bytes"], "peak reserved"),
        _figure(si, "requested_bytes", tot["requested_bytes"], "requested"),
        _figure(si, "cached_free_bytes", fr["cached_free_bytes"], "cached free"),
    ])
    # With a run's baseline the counts are the run's own (the process's in
    # small print): a program that did other work first would otherwise
    # show that work's allocations as this run's.
    def count(field, label):
        if cnt is None:
            return _figure(si, field, tot[field], label, "count",
                           hits if field == "cache_hits" else "")
        extra = "process: %s" % fmt_count(tot[field])
        if field == "cache_hits":
            extra = hits + "; " + extra
        return _figure(si, field, cnt[field], label + " in this run", "count", extra)
    count_cards = "".join([
        count("num_allocs", "allocs"),
        count("num_frees", "frees"),
        count("cache_hits", "cache hits"),
        count("device_allocs", "system allocs"),
        count("device_frees", "system frees"),
        _figure(si, "active_storages", tot["active_storages"], "live storages", "count"),
        _figure(si, "active_views", tot["active_views"], "live views", "count"),
    ])
    return ('<p class="when">device <b class="mono">%s</b> &middot; %s &middot; %s</p>'
            '<div class="cards six">%s</div><div class="cards seven">%s</div>'
            % (esc(snap["device"]), esc(when), plural(len(snap["segments"]), "segment"),
               bytes_cards, count_cards))


def _y_scale(vmax):
    """A label step in bytes (a power of two, at most six gridlines) and the
    top of the y axis, a step multiple a little above vmax."""
    step = 1
    while vmax * 1.04 / step > 6:
        step *= 2
    return step, step * max(1, math.ceil(vmax * 1.04 / step))


def _axes_svg(t0, t_end, span, ymax, step, title):
    """The grid, byte labels, time ticks and x-axis title of a chart whose x
    axis starts at t0 and is span microseconds wide; the ticks stop at t_end
    and use the unit that suits the span. title holds a %s for the unit."""
    x0, y0, w, h = CH_L, CH_T, PLOT_W, CH_H - CH_T - CH_B
    parts = []
    for k in range(0, int(ymax // step) + 1):
        y = y0 + h - k * step * h / ymax
        parts.append('<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>'
                     % (_n(x0), _n(x0 + w), _n(y), _n(y)))
        parts.append('<text class="ylab" x="%s" y="%s">%s</text>'
                     % (_n(x0 - 8), _n(y + 4), esc(fmt_short(k * step))))
    if span >= 2000000:
        unit, div = "s", 1e6
    elif span >= 2000:
        unit, div = "ms", 1e3
    else:
        unit, div = "\u00b5s", 1.0
    tstep = _nice_time_step(span / div)
    dec = max(0, -int(math.floor(math.log10(tstep) + 1e-9)))
    k = math.ceil(t0 / div / tstep - 1e-9)
    ticks = 0
    while k * tstep * div <= t_end + 1e-6 and ticks < 200:
        x = x0 + (k * tstep * div - t0) * w / span
        parts.append('<line class="tick" x1="%s" x2="%s" y1="%s" y2="%s"/>'
                     % (_n(x), _n(x), _n(y0 + h), _n(y0 + h + 5)))
        parts.append('<text class="xlab" x="%s" y="%s">%s</text>'
                     % (_n(x), _n(y0 + h + 19), esc("%.*f" % (dec, k * tstep))))
        k += 1
        ticks += 1
    parts.append('<text class="axtitle" x="%s" y="%s">%s</text>'
                 % (_n(x0 + w / 2), _n(CH_H - 6), esc(title % unit)))
    return parts


def _chart(si, snap, tl, colors, order):
    """The stacked per-tag area chart (a step chart: memory holds its value
    until the next event) with the reserved line. Returns (html, model) where
    model is what the page's script needs for the hover read-out."""
    status = history_status(snap)
    if status == "absent":
        return ('<p class="nohistory" data-snap="%d" data-history="absent">History was not '
                'recorded: call <code>sm_memory_record_history</code> before the work to see '
                'memory over time.</p>' % si), None
    if status == "empty":
        return ('<p class="nohistory" data-snap="%d" data-history="empty">History is being '
                'recorded but holds no event yet.</p>' % si), None

    t0 = tl["time_us"][0]
    # The last state holds until the snapshot was taken; when that is the
    # newest event's own time it would be zero pixels wide, so give it 1%.
    t_end = max(snap["time_us"], tl["time_us"][-1] + max(1, (tl["time_us"][-1] - t0) // 100))
    span = max(t_end - t0, 1)
    m = len(tl["index"])
    # Series to draw: the palette's tags and the untagged bytes on their own,
    # largest at the bottom; everything else in one "other" band on top.
    # Bands that never fall (weights, tables) go at the bottom so the ones
    # that come and go (activations) ride on top, where their shape shows.
    own = [s for s in tl["series"] if s["tag"] in colors and any(s["values"])]
    own.sort(key=lambda s: (-min(s["values"]), order.get(s["tag"], 1 << 30)))
    rest = [s for s in tl["series"] if s["tag"] not in colors]
    other = list(tl["other"]) if tl["other"] is not None else [0] * m
    for s in rest:
        other = [a + b for a, b in zip(other, s["values"])]
    bands = [(s["tag"], tag_label(s["tag"]), colors[s["tag"]], s["values"]) for s in own]
    if any(other):
        bands.append(("other", OTHER_LABEL, OTHER_COLOR, other))

    top = [0] * m
    for b in bands:
        top = [a + max(v, 0) for a, v in zip(top, b[3])]
    vmax = max(max(top) if top else 0, max(tl["reserved"]), 1)
    step, ymax = _y_scale(vmax)
    x0, y0, w, h = CH_L, CH_T, PLOT_W, CH_H - CH_T - CH_B

    def X(t):
        return x0 + (t - t0) * w / span

    def Y(v):
        return y0 + h - max(v, 0) * h / ymax

    xs = [X(t) for t in tl["time_us"]] + [X(t_end)]
    parts = _axes_svg(t0, t_end, span, ymax, step,
                      "time since the library was loaded (%s)")

    # stacked bands: upper edge left to right, lower edge back. Stacked in
    # pixels: a band holding bytes is drawn at least MIN_BAND_PX high, so
    # that 64 KiB under 64 MiB stays visible (its legend entry says so).
    def thick(v):
        px = max(v, 0) * h / ymax
        return MIN_BAND_PX if 0 < px < MIN_BAND_PX else px

    lower = [0.0] * m
    raised = []
    for key, (tag, label, color, vals) in enumerate(bands):
        th = [thick(v) for v in vals]
        upper = [a + t for a, t in zip(lower, th)]
        is_raised = any(t != max(v, 0) * h / ymax for t, v in zip(th, vals))
        raised.append(is_raised)
        d = ["M%s,%s" % (_n(xs[0]), _n(y0 + h - upper[0]))]
        for i in range(m):
            if i:
                d.append("V%s" % _n(y0 + h - upper[i]))
            d.append("H%s" % _n(xs[i + 1]))
        for i in range(m - 1, -1, -1):
            d.append("V%s" % _n(y0 + h - lower[i]))
            d.append("H%s" % _n(xs[i]))
        d.append("Z")
        tip = ["%s: up to %s" % (label, fmt_bytes(max(vals)))]
        if is_raised:
            tip.append(MIN_BAND_NOTE)
        parts.append('<path class="series" data-key="%d"%s fill="%s" d="%s">%s</path>'
                     % (key, ' data-min-height="%s"' % _n(MIN_BAND_PX) if is_raised else "",
                        color, "".join(d), _svg_title(tip)))
        lower = upper
    # reserved line
    d = ["M%s,%s" % (_n(xs[0]), _n(Y(tl["reserved"][0])))]
    for i in range(m):
        if i:
            d.append("V%s" % _n(Y(tl["reserved"][i])))
        d.append("H%s" % _n(xs[i + 1]))
    parts.append('<path class="reserved" d="%s">%s</path>'
                 % ("".join(d), _svg_title(["reserved: up to %s"
                                            % fmt_bytes(max(tl["reserved"]))])))
    for mk in tl["empty_cache"]:
        x = X(mk["time_us"])
        parts.append('<line class="mark-empty" x1="%s" x2="%s" y1="%s" y2="%s">%s</line>'
                     % (_n(x), _n(x), _n(y0), _n(y0 + h),
                        _svg_title(["sm_empty_cache at %s" % fmt_time_us(mk["time_us"])])))
    for mk in tl["oom"]:
        x = X(mk["time_us"])
        parts.append('<g class="mark-oom"><line x1="%s" x2="%s" y1="%s" y2="%s"/>'
                     '<text x="%s" y="%s">OOM</text>%s</g>'
                     % (_n(x), _n(x), _n(y0), _n(y0 + h), _n(x + 3), _n(y0 + 10),
                        _svg_title(["out of memory at %s: a request of %s failed"
                                    % (fmt_time_us(mk["time_us"]),
                                       fmt_bytes(mk["size"] or 0))])))
    parts.append('<line class="axis" x1="%s" x2="%s" y1="%s" y2="%s"/>'
                 % (_n(x0), _n(x0 + w), _n(y0 + h), _n(y0 + h)))
    parts.append('<line class="cursor" x1="0" x2="0" y1="%s" y2="%s" visibility="hidden"/>'
                 % (_n(y0), _n(y0 + h)))
    parts.append('<rect class="hover" x="%s" y="%s" width="%s" height="%s"/>'
                 % (_n(x0), _n(y0), _n(w), _n(h)))

    svg = ('<svg class="chart" id="chart-%d" data-snap="%d" data-points="%d" '
           'data-series="%d" viewBox="0 0 %d %d" role="img" aria-label="memory over time">'
           '%s</svg>' % (si, si, m, len(bands), WIDTH, CH_H, "".join(parts)))

    legend = ['<ul class="legend">']
    for key in range(len(bands) - 1, -1, -1):
        tag, label, color, vals = bands[key]
        legend.append('<li data-key="%d"><span class="swatch" style="background:%s"></span>'
                      '%s <span class="muted">up to %s%s</span></li>'
                      % (key, color, esc(label), esc(fmt_bytes(max(vals))),
                         '; <span class="raised">%s</span>' % esc(MIN_BAND_NOTE)
                         if raised[key] else ""))
    legend.append('<li><span class="swatch line"></span>reserved <span class="muted">up to '
                  '%s</span></li>' % esc(fmt_bytes(max(tl["reserved"]))))
    if tl["oom"]:
        legend.append('<li><span class="swatch oom"></span>failed request (OOM)</li>')
    if tl["empty_cache"]:
        legend.append('<li><span class="swatch empty"></span>sm_empty_cache</li>')
    legend.append("</ul>")

    notes = []
    shown = plural(tl["n_events"], "event")
    if tl["dropped"]:
        shown += (" (the newest %s of %s recorded: %s older ones were overwritten in the "
                  "ring; the chart starts at the oldest kept event)"
                  % (fmt_count(tl["n_events"]), fmt_count(tl["recorded"] or 0),
                     fmt_count(tl["dropped"])))
    if m < tl["n_events"]:
        shown += ("; %s of them drawn: per pixel column the first, the last and the "
                  "extremes" % fmt_count(m))
    notes.append(shown)
    before = sum(tl["start"].values())
    if before > 0:
        notes.append("%s were already allocated before the first event shown"
                     % fmt_bytes(before))
    model = {"t": tl["time_us"], "t_end": t_end, "t0": t0, "x0": x0, "w": w,
             "alloc": tl["allocated"], "res": tl["reserved"],
             "bands": [{"label": b[1], "color": b[2], "values": b[3]} for b in bands]}
    html_ = ('<p class="note" data-history="events">%s.</p>%s%s'
             % (esc("; ".join(notes)), svg, "".join(legend)))
    return html_, model


def _block_groups(blocks, scale):
    """Blocks, with runs of blocks narrower than MIN_BLOCK_PX put together so
    a 2 MiB segment of 512 B blocks is a few rects, not thousands."""
    groups, cur, cur_bytes = [], [], 0
    for b in blocks:
        if b["size"] * scale >= MIN_BLOCK_PX:
            if cur:
                groups.append(cur)
                cur, cur_bytes = [], 0
            groups.append([b])
        else:
            cur.append(b)
            cur_bytes += b["size"]
            if cur_bytes * scale >= MIN_BLOCK_PX:
                groups.append(cur)
                cur, cur_bytes = [], 0
    if cur:
        groups.append(cur)
    return groups


def _block_title(seg, b):
    lines = ["%s \u00b7 %s (%s B)" % (b["state"], fmt_bytes(b["size"]), fmt_count(b["size"])),
             "offset 0x%x (+%s) in segment %s" % (b["offset"], fmt_bytes(b["offset"]),
                                                 seg["address"])]
    if b["state"] == "allocated":
        lines.append("requested %s B" % fmt_count(b["requested"]))
        lines.append("tag %s" % tag_label(b.get("tag")))
        bits = []
        if b.get("storage") is not None:
            bits.append("storage %d" % b["storage"])
        if b.get("seq") is not None:
            bits.append("seq %d" % b["seq"])
        if b.get("time_us") is not None:
            bits.append("at %s" % fmt_time_us(b["time_us"]))
        if bits:
            lines.append(" \u00b7 ".join(bits))
    return lines


def _segment_rows(si, segs, log_lo, log_span):
    """One SVG of segment bars. Bar length is logarithmic in the segment's
    size; blocks inside a bar are linear (to scale within their segment)."""
    rows = []
    for r, seg in enumerate(segs):
        y = r * SEG_ROW_H
        size = seg["size"]
        if log_span > 0 and size > 0:
            bw = SEG_BAR_W * (math.log2(size) - log_lo) / log_span
        else:
            bw = SEG_BAR_W
        bw = max(bw, 8.0)
        scale = bw / size if size else 0
        x0 = SEG_LABEL_W
        rects = []
        alloc = 0
        for g in _block_groups(seg["blocks"], scale):
            gbytes = sum(b["size"] for b in g)
            by_state = {}
            for b in g:
                by_state[b["state"]] = by_state.get(b["state"], 0) + b["size"]
                if b["state"] == "allocated":
                    alloc += b["size"]
            state = max(by_state, key=lambda s: (by_state[s], s == "allocated"))
            x = x0 + g[0]["offset"] * scale
            wpx = gbytes * scale
            drawn = max(wpx - 1, 1.0) if wpx >= 4 else max(wpx, 1.0)
            if len(g) == 1:
                title = _block_title(seg, g[0])
            else:
                title = ["%d blocks in %s (too narrow to draw one by one):"
                         % (len(g), fmt_bytes(gbytes))]
                title += ["  %s %s" % (s, fmt_bytes(v)) for s, v in sorted(by_state.items())]
                title.append("offsets 0x%x to 0x%x" % (g[0]["offset"], g[-1]["offset"]))
            rects.append('<rect class="blk" data-state="%s" data-n="%d" data-offset="%d" '
                         'data-size="%d" x="%s" y="%s" width="%s" height="%d" fill="%s">%s</rect>'
                         % (esc(state), len(g), g[0]["offset"], gbytes, _n(x), _n(y + 3),
                            _n(drawn), SEG_BAR_H,
                            STATE_COLORS.get(state, UNKNOWN_STATE_COLOR), _svg_title(title)))
        right = fmt_pct(alloc, size) + " allocated"
        if seg.get("stream") not in (None, "0x0"):
            right += " \u00b7 stream " + seg["stream"]
        rows.append(
            '<g class="seg" data-address="%s" data-size="%d" data-blocks="%d">'
            '<text class="addr" x="2" y="%d">%s</text><text class="size" x="%d" y="%d">%s</text>'
            '%s<rect class="outline" x="%d" y="%d" width="%s" height="%d">%s</rect>'
            '<text class="right" x="%s" y="%d">%s</text></g>'
            % (esc(seg["address"]), size, len(seg["blocks"]), y + 13, esc(seg["address"]),
               SEG_LABEL_W - 10, y + 13, esc(fmt_bytes(size)), "".join(rects), x0, y + 3,
               _n(bw), SEG_BAR_H,
               _svg_title(["segment %s" % seg["address"],
                           "%s (%s B), pool %s, stream %s" % (
                               fmt_bytes(size), fmt_count(size), seg["pool"],
                               seg.get("stream") or "none (host memory)"),
                           "%d blocks, %s allocated" % (len(seg["blocks"]),
                                                        fmt_bytes(alloc))]),
               _n(x0 + bw + 8), y + 13, esc(right)))
    return ('<svg class="segmap" data-snap="%d" viewBox="0 0 %d %d">%s</svg>'
            % (si, WIDTH, max(len(segs), 1) * SEG_ROW_H + 2, "".join(rows)))


def _aggregate_bar(si, segs):
    """The segments not drawn, summed: one linear bar of their bytes by state."""
    by_state = {}
    total = 0
    for seg in segs:
        total += seg["size"]
        for b in seg["blocks"]:
            by_state[b["state"]] = by_state.get(b["state"], 0) + b["size"]
    x = float(SEG_LABEL_W)
    w_all = SEG_BAR_W
    rects = []
    for s in list(STATES) + sorted(set(by_state) - set(STATES)):
        v = by_state.get(s, 0)
        if not v:
            continue
        wpx = w_all * v / total if total else 0
        rects.append('<rect class="agg" data-state="%s" data-size="%d" x="%s" y="3" width="%s" '
                     'height="%d" fill="%s">%s</rect>'
                     % (esc(s), v, _n(x), _n(max(wpx, 1.0)), SEG_BAR_H,
                        STATE_COLORS.get(s, UNKNOWN_STATE_COLOR),
                        _svg_title(["%s: %s in the segments not drawn" % (s, fmt_bytes(v))])))
        x += wpx
    return ('<svg class="aggregate" viewBox="0 0 %d %d"><text class="addr" x="2" y="13">'
            '%s more segments</text><text class="size" x="%d" y="13">%s</text>%s'
            '<rect class="outline" x="%d" y="3" width="%d" height="%d"/>'
            '<text class="right" x="%d" y="13">all of them, to scale</text></svg>'
            % (WIDTH, SEG_ROW_H + 2, fmt_count(len(segs)), SEG_LABEL_W - 10,
               esc(fmt_bytes(total)), "".join(rects), SEG_LABEL_W, w_all, SEG_BAR_H,
               SEG_LABEL_W + w_all + 8))


def _addr_key(seg):
    try:
        return (0, int(seg["address"], 16))
    except ValueError:
        return (1, 0)


def _segment_map(si, snap, max_segments):
    segs = snap["segments"]
    if not segs:
        return '<p class="note">No segments: this device holds no memory from the system.</p>'
    sizes = [s["size"] for s in segs if s["size"] > 0] or [1]
    lo, hi = min(sizes), max(sizes)
    # The smallest segment gets 2 doublings' worth of length (not zero), so
    # a 2 MiB bar stays visible next to a 1 GiB one.
    log_lo = math.log2(lo) - 2
    log_span = math.log2(hi) - log_lo if hi > lo else 0
    pools = {}
    for s in segs:
        pools.setdefault(s["pool"], []).append(s)
    names = sorted(pools, key=lambda p: ({"large": 0, "small": 1}.get(p, 2), p))
    # The row budget is shared fairly: pools that need less than their share
    # are drawn whole, the others split what is left.
    quota, budget = {}, max_segments
    by_need = sorted(names, key=lambda p: len(pools[p]))
    for i, p in enumerate(by_need):
        quota[p] = min(len(pools[p]), budget // (len(by_need) - i))
        budget -= quota[p]
    out = []
    for p in names:
        group = sorted(pools[p], key=_addr_key)
        drawn, rest = group[:quota[p]], group[quota[p]:]
        out.append('<h4>%s pool <span class="muted">&middot; %s &middot; %s reserved'
                   '</span></h4>' % (esc(p), plural(len(group), "segment"),
                                     esc(fmt_bytes(sum(s["size"] for s in group)))))
        if drawn:
            out.append(_segment_rows(si, drawn, log_lo, log_span))
        if rest:
            out.append('<p class="note notdrawn" data-not-drawn="%d">%s more %s not drawn '
                       '(the page draws %s at most; run with --max-segments to change it). '
                       'Together they hold:</p>'
                       % (len(rest), fmt_count(len(rest)),
                          "segment of this pool" if len(rest) == 1
                          else "segments of this pool", fmt_count(max_segments)))
            out.append(_aggregate_bar(si, rest))
    legend = ['<ul class="legend states">']
    for s in STATES:
        legend.append('<li><span class="swatch" style="background:%s"></span><b>%s</b> '
                      '<span class="muted">%s</span></li>'
                      % (STATE_COLORS[s], s, esc(STATE_MEANING[s])))
    legend.append("</ul>")
    scale = ("Bar length grows with the logarithm of the segment's size (each doubling adds "
             "the same length), so small and huge segments both stay readable; inside a bar "
             "the blocks are to scale. Blocks narrower than %d px are drawn together in the "
             "colour of most of their bytes. Hover a block for its offset, size, request, "
             "tag, seq and storage." % MIN_BLOCK_PX)
    if hi == lo:
        scale = ("Every segment has the same size (%s); inside a bar the blocks are to "
                 "scale. Hover a block for its offset, size, request, tag, seq and storage."
                 % fmt_bytes(lo))
    return "".join(legend) + '<p class="note">%s</p>' % esc(scale) + "".join(out)


def _fragmentation(si, snap):
    fr = snap["fragmentation"]
    cards = "".join([
        _figure(si, "frag_cached_free", fr["cached_free_bytes"], "cached free"),
        _figure(si, "largest_free_block", fr["largest_free_block"], "largest free block"),
        _figure(si, "frag_ratio", fr["ratio"], "fragmentation ratio", "ratio",
                "1 \u2212 largest free / cached free"),
    ])
    rows = []
    for name in sorted(fr["pools"], key=lambda p: ({"large": 0, "small": 1}.get(p, 2), p)):
        p = fr["pools"][name]
        rows.append('<tr class="pool" data-pool="%s"><td class="l">%s</td><td>%s</td>'
                    '<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.4f</td></tr>'
                    % (esc(name), esc(name), fmt_count(p["segments"]),
                       esc(fmt_bytes(p["reserved_bytes"])), esc(fmt_bytes(p["allocated_bytes"])),
                       esc(fmt_bytes(p["free_bytes"])), esc(fmt_bytes(p["largest_free_block"])),
                       p["ratio"]))
    pools = ('<table class="pools"><thead><tr><th class="l">pool</th><th>segments</th>'
             '<th>reserved</th><th>allocated</th><th>free</th><th>largest free</th>'
             '<th>ratio</th></tr></thead><tbody>%s</tbody></table>' % "".join(rows))
    cf = fr["cached_free_bytes"]
    urows = []
    for u in fr["unusable"]:
        share = u["unusable_bytes"] / cf if cf else 0.0
        urows.append('<tr class="unusable" data-request="%d" data-value="%d"><td>%s</td>'
                     '<td>%s</td><td>%s</td><td class="l"><span class="minibar">'
                     '<span style="width:%.1f%%"></span></span></td></tr>'
                     % (u["request"], u["unusable_bytes"], esc(fmt_bytes(u["request"])),
                        esc(fmt_bytes(u["unusable_bytes"])),
                        fmt_pct(u["unusable_bytes"], cf), 100 * min(share, 1.0)))
    unusable = ('<table class="unusable"><thead><tr><th>request</th><th>unusable free</th>'
                '<th>of cached free</th><th class="l"></th></tr></thead><tbody>%s</tbody>'
                '</table>' % "".join(urows))
    return ('<div class="cards three">%s</div><div class="two"><div><h4>Per pool</h4>%s</div>'
            '<div><h4>Free bytes a request could not use</h4>%s<p class="note">By the '
            'allocator\'s reuse rule; streams not considered.</p></div></div>'
            % (cards, pools, unusable))


def _holders(si, snap, colors):
    tags = snap["tags"]
    if not tags:
        return '<p class="note">Nothing is allocated.</p>'
    total = snap["totals"]["allocated_bytes"]
    rows = []
    for t in tags[:MAX_HOLDERS]:
        tag = t["tag"]
        attr = 'data-untagged="1"' if tag is None else 'data-tag="%s"' % esc(tag)
        rows.append('<tr class="holder" data-snap="%d" %s data-value="%d" data-blocks="%d">'
                    '<td class="l tagcell"><span class="swatch" style="background:%s"></span>'
                    '%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
                    % (si, attr, t["allocated_bytes"], t["blocks"],
                       colors.get(tag, OTHER_COLOR),
                       ('<i>%s</i>' % UNTAGGED_LABEL) if tag is None else esc(tag),
                       esc(fmt_bytes(t["allocated_bytes"])),
                       fmt_pct(t["allocated_bytes"], total),
                       esc(fmt_bytes(t["requested_bytes"])), fmt_count(t["blocks"])))
    rest = tags[MAX_HOLDERS:]
    if rest:
        rb = sum(t["allocated_bytes"] for t in rest)
        rows.append('<tr class="holders-rest" data-rest="%d" data-value="%d"><td class="l">'
                    '<i>%s more tags</i></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
                    % (len(rest), rb, fmt_count(len(rest)), esc(fmt_bytes(rb)),
                       fmt_pct(rb, total),
                       esc(fmt_bytes(sum(t["requested_bytes"] for t in rest))),
                       fmt_count(sum(t["blocks"] for t in rest))))
    return ('<table class="holders"><thead><tr><th class="l">tag</th><th>allocated</th>'
            '<th>share</th><th>requested</th><th>blocks</th></tr></thead><tbody>%s</tbody>'
            '</table><p class="note">A tag is the thread\'s tag stack at allocation time, '
            'joined with "/"; share is of the allocated bytes.</p>' % "".join(rows))


def _comparison(items):
    rows = []
    own = [own_figures(snap) for _, snap in items]
    base = own[0]["peak_bytes"]
    for si, (name, snap) in enumerate(items):
        tot = snap["totals"]
        o = own[si]
        cells = ['<td data-cmp="%d" data-field="own_peak_bytes" data-value="%d" '
                 'data-source="%s">%s</td>' % (si, o["peak_bytes"], o["source"],
                                               esc(fmt_bytes(o["peak_bytes"])))]
        rel = "%.2f\u00d7" % (o["peak_bytes"] / base) if base else "\u2014"
        cells.append('<td data-cmp="%d" data-field="own_peak_vs_first">%s</td>' % (si, rel))
        cells.append('<td data-cmp="%d" data-field="own_allocs" data-value="%d">%s</td>'
                     % (si, o["allocs"], fmt_count(o["allocs"])))
        if o["time_ms"] is None:
            cells.append('<td data-cmp="%d" data-field="own_time_ms">\u2014</td>' % si)
        else:
            cells.append('<td data-cmp="%d" data-field="own_time_ms" data-value="%r">'
                         '%.1f ms</td>' % (si, float(o["time_ms"]), o["time_ms"]))
        for f in ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes",
                  "peak_reserved_bytes"):
            cells.append('<td data-cmp="%d" data-field="%s" data-value="%d">%s</td>'
                         % (si, f, tot[f], esc(fmt_bytes(tot[f]))))
        cf = snap["fragmentation"]["cached_free_bytes"]
        cells.append('<td data-cmp="%d" data-field="cached_free_bytes" data-value="%d">%s</td>'
                     % (si, cf, esc(fmt_bytes(cf))))
        rows.append('<tr><td class="l"><a href="#snap-%d">%s</a></td><td class="l mono">%s</td>'
                    '%s</tr>' % (si, esc(name), esc(snap["device"]), "".join(cells)))
    sources = set(o["source"] for o in own)
    how = {"run": "as the program that took the snapshot measured its run (the snapshot's "
                  "<code>run</code> object): its peak allocated bytes above what was "
                  "allocated when it began, the allocations it made and its time",
           "history": "from the snapshot's history (every event since recording began): "
                      "the peak allocated bytes above those at its start, and the "
                      "allocations, up to the snapshot",
           "totals": "the process's peak allocated bytes and allocations (the snapshot has "
                     "neither a <code>run</code> object nor a whole history)"}
    note = "; ".join("%s: %s" % (", ".join(esc(items[i][0]) for i in range(len(items))
                                            if own[i]["source"] == src), how[src])
                     for src in ("run", "history", "totals") if src in sources)
    return ('<table class="compare"><thead><tr><th class="l">snapshot</th><th class="l">device'
            '</th><th>own peak</th><th>own peak vs first</th><th>allocs</th><th>time</th>'
            '<th>allocated</th><th>reserved</th><th>peak allocated</th>'
            '<th>peak reserved</th><th>cached free</th></tr>'
            '</thead><tbody>%s</tbody></table><p class="note">Own peak, allocs and time: '
            '%s. The other columns are the device\'s totals at the snapshot.</p>'
            % ("".join(rows), note))


# Line colours of the overlay chart, one per snapshot (Okabe-Ito).
OVERLAY_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                  "#000000")


def _overlay(items):
    """Every snapshot's allocated bytes over time on ONE pair of axes: time
    since the snapshot's first history event, bytes above those allocated
    before it. Views and fresh then read side by side: same scale, same
    start. Only whole histories (no event dropped): a ring that lost its
    start would put its line's origin anywhere. "" with fewer than two."""
    lines = []
    for si, (name, snap) in enumerate(items):
        tl = timeline(snap, keep=set())
        if tl is None or snap["history"].get("dropped"):
            continue
        ev0 = snap["history"]["events"][tl["index"][0]]
        d0 = {"alloc": ev0["size"], "free": -ev0["size"]}.get(ev0["action"], 0)
        start = ev0["allocated_bytes"] - d0
        t0 = tl["time_us"][0]
        ts = [t - t0 for t in tl["time_us"]]
        vs = [a - start for a in tl["allocated"]]
        t_end = max(snap["time_us"] - t0, ts[-1])
        lines.append((si, name, ts, vs, t_end))
    if len(lines) < 2:
        return ""
    span = max(max(l[4] for l in lines), 1)
    vmax = max(max(max(l[3]) for l in lines), 1)
    step, ymax = _y_scale(vmax)
    x0, y0, w, h = CH_L, CH_T, PLOT_W, CH_H - CH_T - CH_B
    parts = _axes_svg(0, span, span, ymax, step,
                      "time since each snapshot's first event (%s)")
    legend = ['<ul class="legend">']
    for n, (si, name, ts, vs, t_end) in enumerate(lines):
        color = OVERLAY_COLORS[n % len(OVERLAY_COLORS)]
        X = lambda t: x0 + t * w / span  # noqa: E731
        Y = lambda v: y0 + h - max(v, 0) * h / ymax  # noqa: E731
        d = ["M%s,%s" % (_n(X(ts[0])), _n(Y(vs[0])))]
        for i in range(len(ts)):
            if i:
                d.append("V%s" % _n(Y(vs[i])))
            d.append("H%s" % _n(X(ts[i + 1] if i + 1 < len(ts) else t_end)))
        parts.append('<path class="overlay" data-snap="%d" data-peak="%d" data-span-us="%d" '
                     'stroke="%s" d="%s">%s</path>'
                     % (si, max(vs), t_end, color, "".join(d),
                        _svg_title(["%s: up to %s above its start" % (name, fmt_bytes(max(vs)))])))
        legend.append('<li><span class="swatch" style="background:%s"></span>%s '
                      '<span class="muted">up to %s over %s</span></li>'
                      % (color, esc(name), esc(fmt_bytes(max(vs))), esc(fmt_time_us(t_end))))
    legend.append("</ul>")
    parts.append('<line class="axis" x1="%s" x2="%s" y1="%s" y2="%s"/>'
                 % (_n(x0), _n(x0 + w), _n(y0 + h), _n(y0 + h)))
    return ('<h4>Allocated over time, one axis for all</h4>'
            '<svg class="overlay" id="overlay" viewBox="0 0 %d %d" role="img" '
            'aria-label="allocated bytes over time, every snapshot">%s</svg>%s'
            '<p class="note">Each line is one snapshot\'s allocated bytes above those '
            'allocated before its first history event, against the time since that event: '
            'the same scales for all, so the lines compare directly (snapshots whose history '
            'lost events are left out). The sections below draw each snapshot on its own '
            'scale, by tag.</p>'
            % (WIDTH, CH_H, "".join(parts), "".join(legend)))


# ----------------------------------------------------------------- the page

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#eaeef2;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"Liberation Sans","DejaVu Sans",Arial,sans-serif}
main{max-width:1220px;margin:0 auto;padding:18px 22px 48px}
h1{font-size:24px;margin:6px 0 4px}
h2{font-size:20px;margin:30px 0 4px;padding-top:8px;border-top:3px solid var(--fg)}
h3{font-size:16px;margin:0 0 10px}
h4{font-size:13.5px;margin:12px 0 4px}
.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;
margin:12px 0}
.muted,.note{color:var(--muted)}
.lede{font-size:15px;margin:4px 0 8px;max-width:980px}
.note{font-size:13px;margin:6px 0}
.mono,code,.addr{font-family:ui-monospace,"DejaVu Sans Mono","Liberation Mono",Menlo,monospace}
.when{margin:2px 0 10px;color:var(--muted)}
.when b{color:var(--fg)}
.cards{display:grid;gap:10px;margin:8px 0}
.cards.six{grid-template-columns:repeat(6,1fr)}
.cards.seven{grid-template-columns:repeat(7,1fr)}
.cards.three{grid-template-columns:repeat(3,1fr);max-width:760px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.card .label{font-size:11.5px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:21px;font-weight:600;font-variant-numeric:tabular-nums;
white-space:nowrap}
.cards.seven .value{font-size:17px}
.card .exact{font-size:11.5px;color:var(--muted);font-variant-numeric:tabular-nums}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:13.5px}
th,td{padding:4px 12px;border-bottom:1px solid var(--soft);text-align:right;
vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;border-bottom:1px solid var(--line)}
td.l,th.l{text-align:left}
td.tagcell{max-width:520px;overflow-wrap:anywhere}
table.compare a{color:#0550ae;font-weight:600}
.two{display:grid;grid-template-columns:auto auto;gap:28px;justify-content:start}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;
vertical-align:-1px;border:1px solid rgba(0,0,0,.25)}
.swatch.line{height:0;border:0;border-top:2px solid #24292f;vertical-align:3px}
.swatch.oom{width:0;border:0;border-left:2px dashed #cf222e;height:12px}
.swatch.empty{width:0;border:0;border-left:2px dotted #8c959f;height:12px}
ul.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;
gap:4px 18px;font-size:13px}
ul.legend li{cursor:default}
ul.states{flex-direction:column;gap:2px}
.minibar{display:inline-block;width:120px;height:9px;background:var(--soft);border-radius:2px}
.minibar span{display:block;height:9px;background:#8250df;border-radius:2px}
.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 12px;
margin:8px 0;font-size:13px}
.warn ul{margin:4px 0;padding-left:20px}
.nohistory{background:var(--bg);border:1px dashed var(--line);border-radius:6px;
padding:18px;text-align:center;color:var(--muted)}
svg{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:#59636e}
svg .ylab{text-anchor:end}
svg .xlab{text-anchor:middle}
svg .axtitle{text-anchor:middle;font-size:12px;fill:#1f2328}
svg .grid{stroke:#e6e9ed;stroke-width:1}
svg .axis,svg .tick{stroke:#8c959f;stroke-width:1}
svg path.series{stroke:rgba(255,255,255,.7);stroke-width:.5}
svg.focus path.series{opacity:.22}
svg.focus path.series.on{opacity:1}
svg .reserved{fill:none;stroke:#24292f;stroke-width:1.6}
svg path.overlay{fill:none;stroke-width:2}
svg .mark-oom line{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:4 3}
svg .mark-oom text{fill:#cf222e;font-weight:700;font-size:10px}
svg .mark-empty{stroke:#8c959f;stroke-dasharray:2 3}
svg .cursor{stroke:#1f2328;stroke-width:1}
svg .hover{fill:transparent}
svg .seg text.addr{font-size:11px;fill:#1f2328}
svg .size{text-anchor:end;font-size:11px}
svg .outline{fill:none;stroke:#57606a;stroke-width:.8}
svg.aggregate text.addr{fill:#1f2328}
#tip{position:fixed;display:none;pointer-events:none;z-index:10;background:#fff;
border:1px solid var(--line);border-radius:6px;box-shadow:0 4px 14px rgba(0,0,0,.15);
padding:6px 10px;font-size:12px;font-variant-numeric:tabular-nums;white-space:pre}
#memviz-selftest{display:none}
footer{margin-top:30px;font-size:12px;color:var(--muted)}
"""

# The page's only script: hover read-out for the charts, highlight of a tag
# from the legend, and the self-test (a JSON report of what the page shows,
# read back from the DOM, for tests/python/test_memviz.py).
JS = r"""
(function () {
  "use strict";
  var errors = [], report = null, out = document.getElementById("memviz-selftest");
  function write() {
    var r = report || {};
    r.errors = errors;
    out.textContent = JSON.stringify(r);
  }
  function note(msg) { errors.push(String(msg)); write(); }
  window.addEventListener("error", function (e) {
    note((e.message || "error") + " (line " + e.lineno + ")");
  });
  window.addEventListener("securitypolicyviolation", function (e) {
    note("CSP blocked " + e.violatedDirective + " " + e.blockedURI);
  });

  // The library's rule, as memviz.py: below 1 KiB "N B", else two decimals,
  // rounded half to even on the exact value as printf("%.2f") does.
  var UNITS = ["KiB", "MiB", "GiB", "TiB"];
  function fmtBytes(n) {
    if (Math.abs(n) < 1024) return String(n) + " B";
    var u = -1, den = 1;
    while (Math.abs(n) / den >= 1024 && u < UNITS.length - 1) { den *= 1024; u++; }
    var neg = n < 0, a = Math.abs(n), s;
    if (a * 100 < 9007199254740992) {
      var num = a * 100, q = Math.floor(num / den), r = num - q * den;
      if (2 * r > den || (2 * r === den && q % 2 === 1)) q += 1;
      var frac = String(q % 100);
      s = Math.floor(q / 100) + "." + (frac.length < 2 ? "0" + frac : frac);
    } else {
      s = (a / den).toFixed(2);
    }
    return (neg ? "-" : "") + s + " " + UNITS[u];
  }
  function fmtTime(t) {
    if (t >= 1e7) return (t / 1e6).toFixed(2) + " s";
    if (t >= 1e6) return (t / 1e6).toFixed(3) + " s";
    if (t >= 1e3) return (t / 1e3).toFixed(3) + " ms";
    return t + " \u00b5s";
  }

  var tip = document.getElementById("tip");
  function showTip(lines, x, y) {
    tip.textContent = lines.join("\n");
    tip.style.display = "block";
    var w = tip.offsetWidth;
    tip.style.left = Math.max(4, Math.min(x + 14, window.innerWidth - w - 8)) + "px";
    tip.style.top = (y + 14) + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  function installChart(svg, model) {
    var overlay = svg.querySelector("rect.hover"), cursor = svg.querySelector(".cursor");
    function at(clientX) {
      var box = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var x = (clientX - box.left) * vb.width / box.width;
      var t = model.t0 + (x - model.x0) / model.w * (model.t_end - model.t0);
      var lo = 0, hi = model.t.length - 1;  // last drawn event at or before t
      if (t < model.t[0]) return { k: 0, x: x };
      if (x >= model.x0 + model.w - 1) return { k: hi, x: x };  // the snapshot's state
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (model.t[mid] <= t) lo = mid; else hi = mid - 1;
      }
      return { k: lo, x: x };
    }
    function move(ev) {
      var p = at(ev.clientX), k = p.k;
      cursor.setAttribute("x1", p.x);
      cursor.setAttribute("x2", p.x);
      cursor.setAttribute("visibility", "visible");
      var lines = ["after the event at " + fmtTime(model.t[k]),
                   "allocated " + fmtBytes(model.alloc[k]),
                   "reserved  " + fmtBytes(model.res[k])];
      for (var b = model.bands.length - 1; b >= 0; b--) {
        var v = model.bands[b].values[k];
        if (v) lines.push("  " + model.bands[b].label + ": " + fmtBytes(v));
      }
      showTip(lines, ev.clientX, ev.clientY);
      return lines.join("\n");
    }
    function leave() { cursor.setAttribute("visibility", "hidden"); hideTip(); }
    overlay.addEventListener("mousemove", move);
    overlay.addEventListener("mouseleave", leave);
    var legend = svg.nextElementSibling;
    if (legend) {
      legend.querySelectorAll("li[data-key]").forEach(function (li) {
        li.addEventListener("mouseenter", function () {
          svg.classList.add("focus");
          var p = svg.querySelector('path.series[data-key="' + li.getAttribute("data-key") + '"]');
          if (p) p.classList.add("on");
        });
        li.addEventListener("mouseleave", function () {
          svg.classList.remove("focus");
          svg.querySelectorAll("path.series.on").forEach(function (p) {
            p.classList.remove("on");
          });
        });
      });
    }
    // The self-test reads the chart back at its right edge (the snapshot's
    // state) and highlights the first legend entry's band, then undoes both.
    return function () {
      var box = svg.getBoundingClientRect();
      var x = box.left + (model.x0 + model.w - 0.5) * box.width / svg.viewBox.baseVal.width;
      var res = { hover: move({ clientX: x, clientY: box.top + 20 }) };
      leave();
      var li = legend && legend.querySelector("li[data-key]");
      if (li) {
        li.dispatchEvent(new MouseEvent("mouseenter"));
        var during = svg.classList.contains("focus")
          ? svg.querySelectorAll("path.series.on").length : -1;
        li.dispatchEvent(new MouseEvent("mouseleave"));
        res.highlight = [during, svg.querySelectorAll("path.series.on").length];
      }
      return res;
    };
  }

  function main() {
    var data = JSON.parse(document.getElementById("memviz-data").textContent);
    var sections = document.querySelectorAll("section.snapshot");
    var rep = { format: "memviz.selftest", version: 1, title: data.title,
                snapshots: sections.length, sections: [] };
    sections.forEach(function (sec, i) {
      var d = data.snapshots[i], snap = d.snapshot;
      var s = { name: sec.getAttribute("data-name"), device: sec.getAttribute("data-device"),
                history: sec.getAttribute("data-history"), figures: {}, holders: [],
                fmt_mismatches: [] };
      sec.querySelectorAll("[data-field][data-snap]").forEach(function (el) {
        var f = el.getAttribute("data-field"), v = el.getAttribute("data-value");
        s.figures[f] = { value: v, text: el.textContent };
        if (el.getAttribute("data-unit") === "bytes" && fmtBytes(Number(v)) !== el.textContent)
          s.fmt_mismatches.push(f + ": page " + el.textContent + ", script " + fmtBytes(Number(v)));
      });
      sec.querySelectorAll("tr.holder").forEach(function (tr) {
        s.holders.push({ tag: tr.hasAttribute("data-untagged") ? null : tr.getAttribute("data-tag"),
                         bytes: tr.getAttribute("data-value"),
                         text: tr.cells[1].textContent });
      });
      s.segments_total = Number(sec.getAttribute("data-segments"));
      s.segments_drawn = sec.querySelectorAll("g.seg").length;
      s.segments_not_drawn = 0;
      sec.querySelectorAll("[data-not-drawn]").forEach(function (el) {
        s.segments_not_drawn += Number(el.getAttribute("data-not-drawn"));
      });
      var rects = sec.querySelectorAll("rect.blk");
      s.blocks_drawn = rects.length;
      s.blocks_represented = 0;
      s.block_bytes = {};
      rects.forEach(function (r) {
        s.blocks_represented += Number(r.getAttribute("data-n"));
        var st = r.getAttribute("data-state");
        s.block_bytes[st] = (s.block_bytes[st] || 0) + Number(r.getAttribute("data-size"));
      });
      var chart = sec.querySelector("svg.chart");
      s.series = sec.querySelectorAll("path.series").length;
      s.chart_points = chart ? Number(chart.getAttribute("data-points")) : 0;
      s.chart_width_px = chart ? Math.round(chart.getBoundingClientRect().width) : 0;
      var segmap = sec.querySelector("svg.segmap");
      s.segmap_width_px = segmap ? Math.round(segmap.getBoundingClientRect().width) : 0;
      s.embedded = { device: snap.device, allocated_bytes: String(snap.totals.allocated_bytes),
                     tags: snap.tags.map(function (t) { return t.tag; }) };
      if (chart && d.chart) {
        var r = installChart(chart, d.chart)();
        s.hover = r.hover;
        s.highlight = r.highlight;
      }
      rep.sections.push(s);
    });
    rep.compare_rows = document.querySelectorAll("table.compare tbody tr").length;
    rep.img_elements = document.querySelectorAll("img").length;
    rep.script_elements = document.querySelectorAll("script").length;
    report = rep;
  }
  try { main(); } catch (e) { note("memviz script failed: " + (e && e.stack || e)); }
  write();
})();
"""


# ----------------------------------------------------------------- PyTorch's format

# Block states as PyTorch's caching allocator names them.
PYTORCH_STATES = {"allocated": "active_allocated", "pending_free": "active_pending_free",
                  "inactive_split": "inactive", "cached_free": "inactive"}
PYTORCH_ACTIONS = {"alloc": "alloc", "segment_map": "segment_alloc",
                   "segment_unmap": "segment_free", "oom": "oom"}


def _address(text):
    return int(text, 16) if isinstance(text, str) else 0


def _frames(tag):
    """PyTorch's viewers show a block's stack frames; a stridemem block has its
    tag path instead, shown as one frame per level, outermost first as
    PyTorch lists the innermost frame first."""
    if tag is None:
        return []
    return [{"filename": "tag", "line": 0, "name": t} for t in reversed(tag.split("/"))]


def to_pytorch(snap):
    """The snapshot as the dict torch.cuda.memory._snapshot() returns:
    {"segments": [...], "device_traces": [[...]]}, so that PyTorch's viewers
    (pytorch.org/memory_viz, torch.cuda._memory_viz) can open it. Sizes and
    addresses are integers; tags become frames; the history becomes the
    device's trace (a free is a free_requested and a free_completed)."""
    validate(snap)
    device = snap.get("device_index") or 0
    segments = []
    for seg in snap["segments"]:
        base = _address(seg["address"])
        blocks = []
        for b in seg["blocks"]:
            state = PYTORCH_STATES.get(b["state"], "inactive")
            pb = {"address": base + b["offset"], "size": b["size"],
                  "requested_size": b["requested"] if state != "inactive" else 0,
                  "state": state, "frames": _frames(b.get("tag"))}
            if state != "inactive":
                # The older form (PyTorch 1.13) keeps the frames in a history.
                pb["history"] = [{"addr": pb["address"], "real_size": pb["requested_size"],
                                  "frames": pb["frames"]}]
            blocks.append(pb)
        active = [b for b in blocks if b["state"] != "inactive"]
        segments.append({
            "device": device, "address": base, "total_size": seg["size"],
            "allocated_size": sum(b["size"] for b in blocks
                                  if b["state"] == "active_allocated"),
            "active_size": sum(b["size"] for b in active),
            "requested_size": sum(b["requested_size"] for b in active),
            "stream": _address(seg.get("stream")), "segment_type": seg["pool"],
            "blocks": blocks})
    trace = []
    h = snap.get("history")
    for e in (h.get("events") or []) if isinstance(h, dict) else []:
        common = {"addr": _address(e.get("address")), "size": e.get("size") or 0,
                  "stream": _address(e.get("stream")), "time_us": e["time_us"],
                  "frames": _frames(e.get("tag"))}
        if e["action"] == "free":
            trace.append(dict(common, action="free_requested"))
            trace.append(dict(common, action="free_completed"))
        elif e["action"] in PYTORCH_ACTIONS:
            trace.append(dict(common, action=PYTORCH_ACTIONS[e["action"]]))
    return {"segments": segments, "device_traces": [[] for _ in range(device)] + [trace]}


def render(snapshots, title=DEFAULT_TITLE, names=None, max_segments=MAX_SEGMENTS,
           warnings=None, note=None):
    """The HTML page (a str) for a list of snapshot dicts. Each is validated
    (SnapshotError on bad input). names: a heading per snapshot (default
    "snapshot N"). warnings: optional list of lists, extra notes per snapshot
    (e.g. from load()), shown with the consistency findings. note: a
    sentence shown under the title (what the page is meant to show)."""
    if not snapshots:
        raise ValueError("render needs at least one snapshot")
    names = list(names) if names else ["snapshot %d" % (i + 1) for i in range(len(snapshots))]
    for i, s in enumerate(snapshots):
        validate(s, names[i])
    # Colours need every snapshot's tags first; timelines are then rebuilt
    # keeping only the coloured tags as their own series.
    full = [(s, timeline(s, keep=set())) for s in snapshots]
    colors, order = _color_map(full)
    keep = set(colors)
    sections, models = [], []
    for si, snap in enumerate(snapshots):
        tl = timeline(snap, keep=keep)
        notes = list(warnings[si]) if warnings and si < len(warnings) else []
        notes += consistency(snap) + (tl["warnings"] if tl else []) + run_findings(snap)
        chart_html, model = _chart(si, snap, tl, colors, order)
        models.append({"name": names[si], "snapshot": snap, "chart": model})
        warn = ""
        if notes:
            warn = ('<div class="warn" data-warnings="%d"><b>This snapshot contradicts '
                    'itself:</b><ul>%s</ul></div>'
                    % (len(notes), "".join("<li>%s</li>" % esc(n) for n in notes)))
        sections.append(
            '<section class="snapshot" id="snap-%d" data-name="%s" data-device="%s" '
            'data-history="%s" data-segments="%d"><h2>%s <span class="muted mono">%s</span></h2>'
            '%s%s'
            '<div class="panel"><h3>Memory over time, by tag</h3>%s</div>'
            '<div class="panel"><h3>Segments</h3>%s</div>'
            '<div class="panel"><h3>Fragmentation</h3>%s</div>'
            '<div class="panel"><h3>Top holders</h3>%s</div></section>'
            % (si, esc(names[si]), esc(snap["device"]), history_status(snap),
               len(snap["segments"]), esc(names[si]), esc(snap["device"]), warn,
               _header(si, snap), chart_html, _segment_map(si, snap, max_segments),
               _fragmentation(si, snap), _holders(si, snap, colors)))
    data = json_for_script({"title": title, "snapshots": models})
    js = JS.strip("\n")
    js_hash = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    # Nothing may load: the only script allowed is this one (by its hash), so
    # even markup that slipped past escaping could not run or fetch anything.
    csp = ("default-src 'none'; script-src 'sha256-%s'; style-src 'unsafe-inline'; "
           "base-uri 'none'; form-action 'none'" % js_hash)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="%s">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="stridemem tools/memviz">'
        '<title>%s</title><style>%s</style></head><body><main>'
        '<h1>%s</h1>%s<p class="note">%d snapshot%s &middot; stridemem memory snapshot format '
        'version %s &middot; sizes in binary units (1 KiB = 1024 B)</p>'
        '<div class="panel"><h3>Comparison</h3>%s</div>%s'
        '<footer>Drawn by stridemem tools/memviz from sm_memory_snapshot() output '
        '(docs/MEMORY_SNAPSHOT.md). The snapshots are embedded in this page.</footer></main>'
        '<div id="tip"></div><pre id="memviz-selftest"></pre>'
        '<script type="application/json" id="memviz-data">%s</script>'
        '<script>%s</script></body></html>\n'
        % (csp, esc(title), CSS, esc(title),
           '<p class="lede" id="memviz-note">%s</p>' % esc(note) if note else "", len(snapshots),
           "" if len(snapshots) == 1 else "s", ", ".join(map(str, VERSIONS)),
           _comparison(list(zip(names, snapshots))) + _overlay(list(zip(names, snapshots))),
           "".join(sections), data, js))


# ----------------------------------------------------------------- command line

def _name_of(path):
    base = os.path.basename(path)
    return base[:-5] if base.lower().endswith(".json") else base


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="memviz.py",
        description="Draw stridemem memory snapshots (sm_memory_snapshot JSON) as one "
                    "offline HTML page.")
    ap.add_argument("snapshots", nargs="+", metavar="SNAPSHOT.json")
    ap.add_argument("-o", "--output", metavar="OUT.html",
                    help="the page to write (default: the first snapshot's name with .html)")
    ap.add_argument("--title", default=DEFAULT_TITLE, help="the page's title")
    ap.add_argument("--note", help="a sentence shown under the title")
    ap.add_argument("--pytorch", metavar="OUT.pickle",
                    help="also write the (one) snapshot in PyTorch's memory snapshot format "
                         "(the pickle torch.cuda.memory._snapshot() makes), for "
                         "pytorch.org/memory_viz")
    ap.add_argument("--max-segments", type=int, default=MAX_SEGMENTS, metavar="N",
                    help="segment rows drawn at most (default %(default)s); the rest are "
                         "summed")
    args = ap.parse_args(argv)
    if args.max_segments < 0:
        ap.error("--max-segments must be >= 0")
    snaps, warns = [], []
    for path in args.snapshots:
        w = []
        try:
            snaps.append(load(path, w))
        except SnapshotError as e:
            sys.stderr.write("memviz: %s\n" % e)
            return 2
        warns.append(w)
    if args.pytorch and len(args.snapshots) != 1:
        sys.stderr.write("memviz: --pytorch writes one snapshot; %d were given\n"
                         % len(args.snapshots))
        return 2
    names = [_name_of(p) for p in args.snapshots]
    page = render(snaps, args.title, names, args.max_segments, warns, args.note)
    for name, snap, w in zip(names, snaps, warns):
        for msg in w + findings(snap):
            sys.stderr.write("memviz: warning: %s: %s\n" % (name, msg))
    out = args.output or os.path.splitext(args.snapshots[0])[0] + ".html"
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        sys.stderr.write("memviz: cannot write %s: %s\n" % (out, e.strerror or e))
        return 1
    print("memviz: wrote %s (%d snapshot%s, %s)"
          % (out, len(snaps), "" if len(snaps) == 1 else "s", fmt_bytes(len(page.encode()))))
    if args.pytorch:
        try:
            with open(args.pytorch, "wb") as f:
                pickle.dump(to_pytorch(snaps[0]), f, protocol=2)
        except OSError as e:
            sys.stderr.write("memviz: cannot write %s: %s\n" % (args.pytorch, e.strerror or e))
            return 1
        print("memviz: wrote %s (PyTorch's snapshot format)" % args.pytorch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
