#!/usr/bin/python3
"""sm_memory_snapshot's JSON (docs/MEMORY_SNAPSHOT.md) read by Python's own
json module and checked against sm_memory_stats and against a model of what
the test allocated, after every step of seeded random sequences on the CPU:
tensors of many sizes and dtypes created and released, views that keep a
storage alive, empty_cache, tags pushed and popped (nasty ones too), stacks
of views. Fragmentation figures and holders by tag are recomputed here from
the blocks; the allocation history is replayed (totals after each event,
per-tag series walked backwards from `tags`).

ctypes straight on $STRIDEMEM_LIB: no binding code in between (the binding's
wrappers of these calls are written separately), so what is checked is the
library's own output.
"""

import ctypes
import json
import os
import random
import sys
from ctypes import POINTER, byref, c_char_p, c_int32, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Cases, expect  # noqa: E402

cases = Cases()


def load_library():
    path = os.environ.get("STRIDEMEM_LIB")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "libstridemem.so")
    return ctypes.CDLL(path)


lib = load_library()


class Device(ctypes.Structure):
    _fields_ = [("type", c_int32), ("index", c_int32)]


STATS_FIELDS = ["allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes",
                "num_allocs", "num_frees", "cache_hits", "device_allocs", "device_frees",
                "active_views", "active_storages", "requested_bytes"]


class Stats(ctypes.Structure):
    _fields_ = ([("struct_size", c_uint32), ("reserved0", c_uint32)]
                + [(f, c_int64) for f in STATS_FIELDS] + [("reserved", c_int64 * 8)])


CPU = Device(1, 0)
SMALL_BLOCK_MAX = 1 << 20
ROUND = 512
U8, I32, F32, F64 = 1, 4, 8, 9
ITEM = {U8: 1, I32: 4, F32: 4, F64: 8}
PROBES = [512, 4096, 32768, 262144, 1 << 20, 2 << 20, 16 << 20, 128 << 20, 1 << 30]

S = c_int32  # sm_status
for name, args in [
    ("sm_empty", [POINTER(c_int64), c_int32, c_int32, Device, POINTER(c_void_p)]),
    ("sm_tensor_release", [c_void_p]),
    ("sm_slice", [c_void_p, c_int32, c_int64, c_int64, c_int64, POINTER(c_void_p)]),
    ("sm_transpose", [c_void_p, c_int32, c_int32, POINTER(c_void_p)]),
    ("sm_tensor_storage", [c_void_p, POINTER(c_void_p)]),
    ("sm_storage_release", [c_void_p]),
    ("sm_storage_id", [c_void_p, POINTER(c_uint64)]),
    ("sm_memory_stats", [Device, POINTER(Stats)]),
    ("sm_memory_snapshot", [Device, c_char_p, c_size_t, POINTER(c_size_t)]),
    ("sm_empty_cache", [Device]),
    ("sm_push_tag", [c_char_p]),
    ("sm_pop_tag", []),
    ("sm_memory_record_history", [Device, c_int64]),
    ("sm_stack_create", [Device, c_int64, POINTER(c_void_p)]),
    ("sm_stack_push", [c_void_p, POINTER(c_int64), c_int32, c_int32, POINTER(c_void_p)]),
    ("sm_stack_mark", [c_void_p, POINTER(c_int64)]),
    ("sm_stack_pop_to", [c_void_p, c_int64]),
    ("sm_stack_release", [c_void_p]),
]:
    fn = getattr(lib, name)
    fn.argtypes = args
    fn.restype = S
lib.sm_last_error.restype = c_char_p
lib.sm_last_error.argtypes = []


def ok(status, what):
    if status != 0:
        raise AssertionError("%s -> status %d: %s" % (what, status, lib.sm_last_error().decode("utf-8", "replace")))


def stats():
    s = Stats()
    s.struct_size = ctypes.sizeof(Stats)
    ok(lib.sm_memory_stats(CPU, byref(s)), "sm_memory_stats")
    return {f: getattr(s, f) for f in STATS_FIELDS}


def snapshot_text():
    """The loop the header shows: ask, allocate, ask again until it fits."""
    need = c_size_t(0)
    ok(lib.sm_memory_snapshot(CPU, None, 0, byref(need)), "sm_memory_snapshot size")
    while True:
        buf = ctypes.create_string_buffer(need.value)
        got = c_size_t(0)
        ok(lib.sm_memory_snapshot(CPU, buf, need.value, byref(got)), "sm_memory_snapshot")
        if got.value <= need.value:
            raw = buf.raw[:got.value]
            expect(raw[-1:] == b"\0" and b"\0" not in raw[:-1], "the text ends at needed - 1 with its NUL")
            return raw[:-1].decode("utf-8")  # strict: invalid UTF-8 raises
        need = got


def snapshot():
    """The parsed snapshot and the statistics read right after it (this test is
    single-threaded: the two describe the same instant)."""
    j = json.loads(snapshot_text())
    return j, stats()


def empty(numel, dtype):
    shape = (c_int64 * 1)(numel)
    out = c_void_p()
    ok(lib.sm_empty(shape, 1, dtype, CPU, byref(out)), "sm_empty(%d, dtype %d)" % (numel, dtype))
    return out.value


def storage_id(t):
    s = c_void_p()
    ok(lib.sm_tensor_storage(t, byref(s)), "sm_tensor_storage")
    sid = c_uint64()
    ok(lib.sm_storage_id(s, byref(sid)), "sm_storage_id")
    ok(lib.sm_storage_release(s), "sm_storage_release")
    return sid.value


def push_tag(name):
    ok(lib.sm_push_tag(name.encode("utf-8")), "sm_push_tag(%r)" % name)


def pop_tag():
    ok(lib.sm_pop_tag(), "sm_pop_tag")


def pop_all_tags():
    while lib.sm_pop_tag() == 0:
        pass


# ---- checks of one snapshot ------------------------------------------------------------------

SEGMENT_SMALL = 2 << 20  # DeviceCachingAllocator's segments, the CPU's since issue 14


def cpu_reuses(small_pool, block, request):
    """The CPU allocator's reuse rule (docs/MEMORY_SNAPSHOT.md, "unusable"):
    a free block of the request's pool at least as large."""
    return (request <= SMALL_BLOCK_MAX) == small_pool and block >= request


def ratio(free, largest):
    return 1.0 - largest / free if free else 0.0


def tag_totals(blocks):
    """Holders recomputed from the allocated blocks, in the documented order:
    most bytes first; ties by name, untagged last."""
    agg = {}
    for b in blocks:
        a = agg.setdefault(b["tag"], [0, 0, 0])
        a[0] += b["size"]
        a[1] += b["requested"]
        a[2] += 1
    return sorted(([t] + v for t, v in agg.items()),
                  key=lambda x: (-x[1], x[0] is None, x[0] or ""))


def check_snapshot(j, st):
    """Every relation the format documents, exactly."""
    expect(j["format"] == "stridemem.memory_snapshot" and j["version"] == 1, "format/version")
    expect(j["device"] == "cpu:0" and j["device_type"] == 1 and j["device_index"] == 0, "device")
    expect(j["totals"] == st, "totals %r != sm_memory_stats %r" % (j["totals"], st))
    allocated_blocks, free_blocks = [], []
    reserved = allocated = requested = 0
    pools = {"small": [0, 0, 0, 0, 0], "large": [0, 0, 0, 0, 0]}  # segs, reserved, alloc, free, largest
    prev_end = 0
    for seg in j["segments"]:
        addr = seg["address"]
        expect(isinstance(addr, str) and addr.startswith("0x"), "address %r is a \"0x\" string" % addr)
        a = int(addr, 16)
        expect(a >= prev_end, "segments sorted by address and apart")
        prev_end = a + seg["size"]
        expect(seg["stream"] is None, "host memory has no stream")
        # Segments (issue 14): 2 MiB small ones; large ones of 20 MiB or of a
        # request of 10 MiB or more rounded up to 2 MiB.
        expect(seg["pool"] == ("small" if seg["size"] == SEGMENT_SMALL else "large") and
               seg["size"] % SEGMENT_SMALL == 0, "pool by segment size: %r" % seg["size"])
        expect(len(seg["blocks"]) >= 1, "a segment holds blocks")
        any_alloc = any(b["state"] == "allocated" for b in seg["blocks"])
        expect(any_alloc or len(seg["blocks"]) == 1, "free neighbours are merged: a free segment is one block")
        prev_free = False
        p = pools[seg["pool"]]
        p[0] += 1
        p[1] += seg["size"]
        reserved += seg["size"]
        offset = seg_alloc = 0
        for b in seg["blocks"]:
            expect(b["offset"] == offset, "blocks tile the segment")
            offset += b["size"]
            if b["state"] == "allocated":
                allocated += b["size"]
                requested += b["requested"]
                seg_alloc += b["size"]
                p[2] += b["size"]
                # Rounded to 512 B and split to that size; a large block is left
                # whole when the rest would be 1 MiB or less.
                rounded = -(-b["requested"] // ROUND) * ROUND
                expect(0 < b["requested"] and (b["size"] == rounded or
                                               (seg["pool"] == "large" and
                                                rounded < b["size"] <= rounded + SMALL_BLOCK_MAX)),
                       "size of %r for its request" % b)
                prev_free = False
                expect(isinstance(b["seq"], int) and b["seq"] >= 1, "seq of a live block")
                expect(0 <= b["time_us"] <= j["time_us"], "time of a live block")
                allocated_blocks.append(b)
            else:
                expect(b["state"] == ("inactive_split" if any_alloc else "cached_free"),
                       "a free block: inactive_split beside a live block, else cached_free: %r" % b)
                expect(not prev_free, "no two free neighbours (they merge)")
                prev_free = True
                expect(b["requested"] == 0 and b["storage"] is None and b["tag"] is None
                       and b["seq"] is None and b["time_us"] is None, "a free block names nobody: %r" % b)
                p[3] += b["size"]
                p[4] = max(p[4], b["size"])
                free_blocks.append((seg["pool"] == "small", b["size"]))
        expect(offset == seg["size"], "block sizes add up to the segment's")
        expect(seg["allocated_bytes"] == seg_alloc, "segment allocated_bytes")
    expect(reserved == st["reserved_bytes"], "reserved %d = sum of segments %d" % (st["reserved_bytes"], reserved))
    expect(allocated == st["allocated_bytes"], "allocated = sum of allocated blocks")
    expect(requested == st["requested_bytes"], "requested = sum of requested")
    seqs = sorted(b["seq"] for b in allocated_blocks)
    expect(len(set(seqs)) == len(seqs), "sequence numbers are unique")

    f = j["fragmentation"]
    free = sum(s for _, s in free_blocks)
    largest = max([s for _, s in free_blocks] or [0])
    expect(f["cached_free_bytes"] == free == reserved - allocated, "cached_free_bytes")
    expect(f["largest_free_block"] == largest, "largest_free_block")
    expect(abs(f["ratio"] - ratio(free, largest)) < 1e-6, "ratio %r vs %r" % (f["ratio"], ratio(free, largest)))
    for name, p in pools.items():
        q = f["pools"][name]
        expect([q["segments"], q["reserved_bytes"], q["allocated_bytes"], q["free_bytes"], q["largest_free_block"]]
               == p, "pool %s: %r vs recomputed %r" % (name, q, p))
        expect(abs(q["ratio"] - ratio(p[3], p[4])) < 1e-6, "pool %s ratio" % name)
    expect([u["request"] for u in f["unusable"]] == PROBES, "probe sizes")
    for u in f["unusable"]:
        want = sum(s for small, s in free_blocks if not cpu_reuses(small, s, u["request"]))
        expect(u["unusable_bytes"] == want, "unusable for %d: %d, recomputed %d"
               % (u["request"], u["unusable_bytes"], want))

    got_tags = [[t["tag"], t["allocated_bytes"], t["requested_bytes"], t["blocks"]] for t in j["tags"]]
    expect(got_tags == tag_totals(allocated_blocks), "tags %r, recomputed %r" % (got_tags, tag_totals(allocated_blocks)))
    return allocated_blocks


# ---- the model ---------------------------------------------------------------------------------

NASTY = ["quote\"d", "back\\slash", "</script>", "\u00e9t\u00e9", "\u20ac\u65e5\u672c", "\U0001F600",
         "tab-less {\"json\": 1}", "\\u0041", "a/b", "x" * 256, "\u00e9" * 128]
PLAIN = ["encoder", "attn", "kv", "mlp"]


class World(object):
    """What the test allocated: tensors (storage id, tag, requested bytes,
    handles viewing it), stacks; blocks the process held before it began."""

    def __init__(self, rng):
        self.rng = rng
        self.tags = []        # this thread's stack of names
        self.storages = {}    # storage id -> [tag, nbytes, number of live handles]
        self.handles = []     # (tensor handle, storage id)
        self.stacks = []      # dicts: handle (None once released), tag, capacity, pushed [(t, mark before)]
        j, st = snapshot()
        self.baseline = {b["storage"]: b for b in check_snapshot(j, st)}

    def tag(self):
        return "/".join(self.tags) if self.tags else None

    def step(self):
        r = self.rng
        op = r.random()
        if op < 0.32 or not self.handles:
            dtype = r.choice([U8, I32, F32, F64])
            kind = r.random()
            numel = (0 if kind < 0.03 else r.randint(1, 300) if kind < 0.45 else
                     r.choice([128, 256, 1024]) if kind < 0.6 else r.randint(1, 200000) if kind < 0.9
                     else r.randint(200000, 700000))
            t = empty(numel, dtype)
            sid = storage_id(t)
            expect(sid not in self.storages and sid not in self.baseline, "storage id %d issued twice" % sid)
            self.storages[sid] = [self.tag(), numel * ITEM[dtype], 1]
            self.handles.append((t, sid))
            return "create %d x %d bytes" % (numel, ITEM[dtype])
        if op < 0.55:
            t, sid = self.handles.pop(r.randrange(len(self.handles)))
            ok(lib.sm_tensor_release(t), "sm_tensor_release")
            self.storages[sid][2] -= 1
            if self.storages[sid][2] == 0:
                del self.storages[sid]
            return "release"
        if op < 0.65:
            t, sid = self.handles[r.randrange(len(self.handles))]
            out = c_void_p()
            if r.random() < 0.5:
                ok(lib.sm_slice(t, 0, 0, r.randint(0, 50), 1 + r.randrange(3), byref(out)), "sm_slice")
            else:
                ok(lib.sm_transpose(t, 0, -1, byref(out)), "sm_transpose")
            expect(storage_id(out.value) == sid, "a view shares its base's storage id")
            self.handles.append((out.value, sid))
            self.storages[sid][2] += 1
            return "view"
        if op < 0.69:
            ok(lib.sm_empty_cache(CPU), "sm_empty_cache")
            return "empty_cache"
        if op < 0.82:
            if self.tags and (r.random() < 0.45 or len(self.tags) >= 4):
                pop_tag()
                self.tags.pop()
                return "pop tag"
            name = r.choice(NASTY if r.random() < 0.4 else PLAIN)
            push_tag(name)
            self.tags.append(name)
            return "push tag %r" % name
        return self.stack_step()

    def stack_step(self):
        r = self.rng
        live = [k for k in self.stacks if k["handle"] is not None]
        op = r.random()
        if op < 0.3 or not live:
            cap = r.choice([256, 4096, r.randint(1, 100000), 1 << 20, (1 << 20) + 512])
            out = c_void_p()
            ok(lib.sm_stack_create(CPU, cap, byref(out)), "sm_stack_create")
            self.stacks.append({"handle": out.value, "tag": self.tag(), "capacity": cap, "pushed": []})
            return "stack create %d" % cap
        k = r.choice(live)
        if op < 0.65:  # push (allocates nothing: carved from the stack's buffer)
            mark = c_int64()
            ok(lib.sm_stack_mark(k["handle"], byref(mark)), "sm_stack_mark")
            shape = (c_int64 * 1)(r.randint(0, 64))
            out = c_void_p()
            st = lib.sm_stack_push(k["handle"], shape, 1, F32, byref(out))
            if st == 0:
                k["pushed"].append((out.value, mark.value))
            return "stack push"
        if op < 0.85 and k["pushed"]:  # pop to a mark: its tensors released first
            i = r.randrange(len(k["pushed"]))
            mark = k["pushed"][i][1]
            for t, _ in k["pushed"][i:]:
                ok(lib.sm_tensor_release(t), "release a pushed tensor")
            del k["pushed"][i:]
            ok(lib.sm_stack_pop_to(k["handle"], mark), "sm_stack_pop_to")
            return "stack pop"
        # Release the stack; tensors still pushed keep its buffer until released.
        ok(lib.sm_stack_release(k["handle"]), "sm_stack_release")
        k["handle"] = None
        if r.random() < 0.5:
            for t, _ in k["pushed"]:
                ok(lib.sm_tensor_release(t), "release a pushed tensor")
            k["pushed"] = []
        return "stack release"

    def check(self, what):
        """The snapshot's live blocks are exactly the model's storages (by id,
        with their tag and requested size), the stacks' buffers and the
        blocks held before the test."""
        j, st = snapshot()
        blocks = check_snapshot(j, st)
        by_id = {}
        anonymous = []
        for b in blocks:
            if b["storage"] in self.baseline:
                continue
            if b["storage"] in self.storages:
                expect(b["storage"] not in by_id, "two blocks name storage %r" % b["storage"])
                by_id[b["storage"]] = b
            else:
                anonymous.append((b["tag"], b["requested"]))
        want = {sid: v for sid, v in self.storages.items() if v[1] > 0}  # empty storages have no block
        expect(set(by_id) == set(want), "%s: blocks of storages %s, model %s"
               % (what, sorted(by_id), sorted(want)))
        for sid, b in by_id.items():
            expect(b["tag"] == want[sid][0], "%s: storage %d tagged %r, allocated under %r"
                   % (what, sid, b["tag"], want[sid][0]))
            expect(b["requested"] == want[sid][1], "%s: storage %d requested" % (what, sid))
        stacks = sorted((k["tag"] or "", k["capacity"]) for k in self.stacks
                        if k["handle"] is not None or k["pushed"])
        expect(sorted((t or "", n) for t, n in anonymous) == stacks,
               "%s: other blocks %r, stack buffers %r" % (what, anonymous, stacks))
        for b in self.baseline.values():
            expect(any(x["storage"] == b["storage"] and x["seq"] == b["seq"] for x in blocks),
                   "a block held before the test changed")
        return j

    def release_all(self):
        for t, _ in self.handles:
            ok(lib.sm_tensor_release(t), "sm_tensor_release")
        self.handles, self.storages = [], {}
        for k in self.stacks:
            for t, _ in k["pushed"]:
                ok(lib.sm_tensor_release(t), "release a pushed tensor")
            if k["handle"] is not None:
                ok(lib.sm_stack_release(k["handle"]), "sm_stack_release")
        self.stacks = []
        pop_all_tags()
        self.tags = []


# ---- history ------------------------------------------------------------------------------------

def tag_map(j):
    return {t["tag"]: t["allocated_bytes"] for t in j["tags"]}


def check_history(j0, j1, complete):
    """Events between snapshot j0 (recording just started) and j1. Totals
    after each event follow from the event before; per-tag series walked
    backwards from j1's `tags` never go negative, and (when no event was
    dropped) end at j0's `tags` and replay forward to j1's."""
    h = j1["history"]
    ev = h["events"]
    expect(h["dropped"] == h["recorded"] - len(ev) and len(ev) <= h["capacity"], "history counts")
    if complete:
        expect(h["dropped"] == 0, "the ring held every event")
    # Totals: a running sum from the state before the oldest event kept.
    def delta(e):
        a = {"alloc": e["size"], "free": -e["size"]}.get(e["action"], 0)
        r = {"segment_map": e["size"], "segment_unmap": -e["size"]}.get(e["action"], 0)
        return a, r
    if ev:
        da, dr = delta(ev[0])
        alloc, res = ev[0]["allocated_bytes"] - da, ev[0]["reserved_bytes"] - dr
        if complete:
            expect((alloc, res) == (j0["totals"]["allocated_bytes"], j0["totals"]["reserved_bytes"]),
                   "the first event follows the snapshot taken when recording started")
        for e in ev:
            da, dr = delta(e)
            alloc += da
            res += dr
            expect(e["allocated_bytes"] == alloc and e["reserved_bytes"] == res,
                   "totals after %r: running sums %d, %d" % (e, alloc, res))
            expect(e["stream"] is None, "host events have no stream")
            expect((e["seq"] is None) == (e["action"] not in ("alloc", "free")), "seq only on alloc/free")
        expect((alloc, res) == (j1["totals"]["allocated_bytes"], j1["totals"]["reserved_bytes"]),
               "the newest event's totals are the snapshot's")
    times = [e["time_us"] for e in ev]
    expect(times == sorted(times), "events oldest first")
    # Per tag, backwards.
    m = dict(tag_map(j1))
    for e in reversed(ev):
        if e["action"] in ("alloc", "free"):
            m[e["tag"]] = m.get(e["tag"], 0) + (-e["size"] if e["action"] == "alloc" else e["size"])
            expect(m[e["tag"]] >= 0, "tag %r goes negative walking back over %r" % (e["tag"], e))
    if complete:
        start = {k: v for k, v in tag_map(j0).items() if v}
        expect({k: v for k, v in m.items() if v} == start,
               "walked back to the start: %r, the snapshot then said %r" % (m, start))
        fwd = dict(start)
        for e in ev:
            if e["action"] in ("alloc", "free"):
                fwd[e["tag"]] = fwd.get(e["tag"], 0) + (e["size"] if e["action"] == "alloc" else -e["size"])
        expect({k: v for k, v in fwd.items() if v} == tag_map(j1), "replayed forward to the end")


def run_sequence(seed, steps, history):
    """history: None, or the ring's capacity."""
    rng = random.Random(seed)
    w = World(rng)
    j0 = None
    try:
        if history:
            ok(lib.sm_memory_record_history(CPU, history), "sm_memory_record_history")
            j0, _ = snapshot()
            expect(j0["history"]["recorded"] == 0 and j0["history"]["events"] == [], "a fresh ring")
        for i in range(steps):
            what = w.step()
            j = w.check("seed %d step %d (%s)" % (seed, i, what))
            expect(("history" in j) == bool(history), "history present only while recording")
            if history and (i % 50 == 49 or i == steps - 1):
                check_history(j0, j, complete=history >= 100000)
        w.release_all()
        w.check("seed %d after releasing everything" % seed)
    finally:
        w.release_all()  # (again, harmlessly: a failed check leaves nothing behind)
        if history:
            ok(lib.sm_memory_record_history(CPU, 0), "stop history")
        pop_all_tags()


@cases.case
def random_sequences_agree_with_stats_and_model():
    for seed in (1, 2, 3):
        run_sequence(seed, 350, None)


@cases.case
def history_replays_to_the_tags():
    run_sequence(11, 400, 100000)  # every event kept: walked back to the start exactly


@cases.case
def history_ring_overflow_keeps_consistent_tails():
    run_sequence(12, 400, 40)  # most events dropped: the kept tail is consistent


@cases.case
def nasty_tags_round_trip():
    """Quotes, backslashes, "</script>", escapes that are not escapes, every
    UTF-8 length, 256-byte names: the JSON gives back exactly the text pushed."""
    held = []
    try:
        for name in NASTY:
            push_tag(name)
            t = empty(16, F32)
            held.append((t, storage_id(t), name))
            push_tag(name)  # nested: the path joins the two with "/"
            t2 = empty(8, F32)
            held.append((t2, storage_id(t2), name + "/" + name))
            pop_tag()
            pop_tag()
        text = snapshot_text()
        j = json.loads(text)
        blocks = {b["storage"]: b for seg in j["segments"] for b in seg["blocks"] if b["storage"]}
        for _, sid, want in held:
            expect(blocks[sid]["tag"] == want, "tag %r came back as %r" % (want, blocks[sid]["tag"]))
        holders = {t["tag"] for t in j["tags"]}
        for _, _, want in held:
            expect(want in holders, "%r among the holders" % want)
    finally:
        for t, _, _ in held:
            lib.sm_tensor_release(t)
        pop_all_tags()


@cases.case
def refused_tags_and_pops():
    """Bad names are refused with SM_ERR_INVALID_ARGUMENT (1) and push nothing."""
    for bad in [b"", b"a\nb", b"\x7f", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"x" * 257, None]:
        st = lib.sm_push_tag(bad)
        expect(st == 1, "sm_push_tag(%r) -> %d" % (bad, st))
        expect(b"sm_push_tag" in lib.sm_last_error(), "the message names the call")
    expect(lib.sm_pop_tag() == 1, "nothing was pushed: pop refused")
    expect(lib.sm_memory_record_history(CPU, -1) == 1, "negative history size refused")
    expect(lib.sm_memory_record_history(CPU, (1 << 24) + 1) == 1, "history over 2^24 refused")
    expect("history" not in json.loads(snapshot_text()), "a refused size starts nothing")


if __name__ == "__main__":
    sys.exit(cases.run())
