#!/usr/bin/python3
"""Seeing memory from Python (issue 14): memory_snapshot() agrees with
memory_stats() and with itself (segments, blocks, tags, fragmentation),
names each live storage by Storage.id; tag() scopes show in the blocks and
are popped after an exception; the allocation history turns on and off;
the out-of-memory observer is told the right numbers under
debug_fail_alloc, and one that raises does not change the failing call.

Its own process: the observer and the fault injection act on the whole
process."""

import gc
import json
import os
import sys
import tempfile
import threading
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_binding_memory")


def raises(exc, fn, what):
    return R.raises_exc(exc, fn, what)


def blocks(snap):
    """Every block of the snapshot with its segment."""
    return [(seg, b) for seg in snap["segments"] for b in seg["blocks"]]


def block_of(snap, storage_id):
    found = [b for _, b in blocks(snap) if b["storage"] == storage_id]
    R.check(len(found) <= 1, "storage %d holds %d blocks" % (storage_id, len(found)))
    return found[0] if found else None


def quiet_snapshot_and_stats(device="cpu"):
    """A snapshot and memory_stats with nothing freed between them (a
    garbage collection could close a tensor)."""
    gc.collect()
    gc.disable()
    try:
        snap = sm.memory_snapshot(device)
        stats = sm.memory_stats(device)
    finally:
        gc.enable()
    return snap, stats


def snapshot_agrees_with_stats():
    keep = [sm.empty(1000), sm.zeros(3, 5, dtype="float64"), sm.empty(1 << 19, dtype="uint8")]
    dropped = sm.empty(2000)
    dropped.close()  # a cached free block
    snap, stats = quiet_snapshot_and_stats()
    R.equal(snap["format"], "stridemem.memory_snapshot", "format")
    R.equal(snap["version"], 1, "version")
    R.equal((snap["device"], snap["device_type"], snap["device_index"]), ("cpu:0", 1, 0), "device")
    R.check(isinstance(snap["time_us"], int) and snap["time_us"] >= 0, "time_us")
    R.equal({k: snap["totals"][k] for k in stats}, stats, "totals == memory_stats()")
    segs = snap["segments"]
    R.equal(sum(s["size"] for s in segs), stats["reserved_bytes"], "reserved == sum of segment sizes")
    allocated = [b for _, b in blocks(snap) if b["state"] == "allocated"]
    R.equal(sum(b["size"] for b in allocated), stats["allocated_bytes"],
            "allocated == sum of the allocated blocks")
    R.equal(sum(b["requested"] for b in allocated), stats["requested_bytes"],
            "requested == sum of the allocated blocks' requests")
    for s in segs:
        offsets = [0]
        for b in s["blocks"]:
            offsets.append(offsets[-1] + b["size"])
        R.equal([b["offset"] for b in s["blocks"]], offsets[:-1], "blocks tile segment %s" % s["address"])
        R.equal(offsets[-1], s["size"], "blocks fill segment %s" % s["address"])
        R.equal(s["allocated_bytes"], sum(b["size"] for b in s["blocks"] if b["state"] == "allocated"),
                "segment %s allocated_bytes" % s["address"])
        R.check(s["pool"] in ("small", "large"), "pool %r" % s["pool"])
    free = [b for _, b in blocks(snap) if b["state"] != "allocated"]
    frag = snap["fragmentation"]
    R.equal(frag["cached_free_bytes"], sum(b["size"] for b in free), "cached_free_bytes")
    R.check(frag["cached_free_bytes"] > 0, "the closed tensor's block is cached")
    R.equal(frag["largest_free_block"], max([b["size"] for b in free] or [0]), "largest_free_block")
    R.check(abs(frag["ratio"] - (1 - frag["largest_free_block"] / frag["cached_free_bytes"])) < 1e-3,
            "ratio = 1 - largest / cached free")
    R.equal(sorted(frag["pools"]), ["large", "small"], "pools")
    R.equal(sum(t["allocated_bytes"] for t in snap["tags"]), stats["allocated_bytes"],
            "the tags hold every allocated byte")
    for t in keep:
        b = block_of(snap, t.storage_id)
        R.check(b is not None and b["state"] == "allocated", "a live tensor's storage has a block")
        if b:
            R.equal(b["requested"], t.nbytes, "the block's request is the tensor's bytes")
            R.check(b["size"] >= t.nbytes and b["size"] % 512 == 0, "the block is rounded to 512")
            R.check(isinstance(b["seq"], int) and b["seq"] > 0, "seq")
    # CPU segments are split into blocks (issue 14): the two small live tensors
    # and the closed one's free block share one 2 MiB small segment.
    segs_of = {}
    for seg, b in blocks(snap):
        if b["storage"] is not None:
            segs_of[b["storage"]] = seg
    s0, s1 = segs_of.get(keep[0].storage_id), segs_of.get(keep[1].storage_id)
    R.check(s0 is not None and s0 is s1, "small CPU tensors share a segment")
    if s0 is not None:
        R.equal((s0["size"], s0["pool"], s0["stream"]), (2 << 20, "small", None),
                "a small CPU segment: 2 MiB, no stream")
        R.check(len(s0["blocks"]) >= 3, "the segment holds several blocks: %d" % len(s0["blocks"]))
    # The closed tensor's storage is gone from the snapshot.
    sid = keep[0].storage_id
    keep[0].close()
    R.check(block_of(sm.memory_snapshot(), sid) is None, "a freed storage holds no block")
    for t in keep[1:]:
        t.close()
    if sm.cuda_device_count() == 0:
        raises(sm.DeviceError, lambda: sm.memory_snapshot("cuda"), "a CUDA snapshot without a GPU")


def save_snapshot():
    t = sm.empty(100)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "snap.json")
        got = sm.save_memory_snapshot(path)
        with open(path, encoding="utf-8") as f:
            on_disk = json.load(f)
    R.equal(on_disk["format"], "stridemem.memory_snapshot", "saved file is a snapshot")
    R.equal(got, on_disk, "save_memory_snapshot returns what it wrote")
    R.check(block_of(on_disk, t.storage_id) is not None, "the saved snapshot holds the tensor")
    t.close()


def storage_ids():
    a = sm.zeros(4, 4)
    v = a.transpose(0, 1)[1:]
    c = a.clone()
    with a.storage() as s:
        R.equal(s.id, a.storage_id, "Storage.id == Tensor.storage_id")
        R.check(s.id >= 1, "ids start at 1")
    R.equal(v.storage_id, a.storage_id, "a view has its base's storage id")
    R.check(c.storage_id != a.storage_id, "a clone has a new storage id")
    R.check(c.storage_id > a.storage_id, "ids are never reused: a later storage has a larger one")
    s = a.storage()
    s.close()
    raises(sm.InvalidHandleError, lambda: s.id, "the id of a closed storage")
    with sm.Stack(1024) as st:
        p = st.push(4)
        raises(sm.UnsupportedError, lambda: p.storage_id, "a stack tensor has no storage of its own")
        p.close()
    for t in (a, v, c):
        t.close()


def tags():
    with sm.tag("encoder") as scope:
        R.equal(scope.name, "encoder", "the scope object")
        a = sm.empty(300)
        with sm.tag("attn"):
            b = sm.empty(301)
        c = sm.empty(302)
    d = sm.empty(303)
    snap = sm.memory_snapshot()
    got = [block_of(snap, t.storage_id)["tag"] for t in (a, b, c, d)]
    R.equal(got, ["encoder", "encoder/attn", "encoder", None], "tags of the blocks")
    by_tag = {t["tag"]: t for t in snap["tags"]}
    R.check("encoder/attn" in by_tag and by_tag["encoder/attn"]["blocks"] >= 1
            and by_tag["encoder/attn"]["allocated_bytes"] >= b.nbytes, "holders by tag: %r" % snap["tags"])

    # An exception leaves the scope popped (and propagates).
    class Boom(Exception):
        pass

    try:
        with sm.tag("outer"):
            with sm.tag("failing"):
                raise Boom()
    except Boom:
        R.ok()
    e = sm.empty(304)
    with sm.tag("after"):
        f = sm.empty(305)
    snap = sm.memory_snapshot()
    R.equal(block_of(snap, e.storage_id)["tag"], None, "no tag left pushed after an exception")
    R.equal(block_of(snap, f.storage_id)["tag"], "after", "a new scope is not nested in a popped one")

    # A decorator (re-entrant: the same object around a recursive call).
    made = []

    @sm.tag("decorated")
    def make(n):
        made.append(sm.empty(306 + n))
        if n:
            make(n - 1)

    make(1)
    snap = sm.memory_snapshot()
    R.equal([block_of(snap, t.storage_id)["tag"] for t in made], ["decorated", "decorated/decorated"],
            "a decorated function, recursive")

    # UTF-8 tags round-trip.
    with sm.tag("kodierer-é"):
        g = sm.empty(307)
    R.equal(block_of(sm.memory_snapshot(), g.storage_id)["tag"], "kodierer-é", "a UTF-8 tag")

    # Tags are per thread: another thread's allocation is not tagged.
    other = []
    with sm.tag("main-thread"):
        th = threading.Thread(target=lambda: other.append(sm.empty(308)))
        th.start()
        th.join()
    R.equal(block_of(sm.memory_snapshot(), other[0].storage_id)["tag"], None, "tags are per thread")

    # Bad names: refused at entry, nothing pushed.
    raises(sm.InvalidArgumentError, lambda: sm.tag("").__enter__(), "an empty tag")
    raises(sm.InvalidArgumentError, lambda: sm.tag("a\x01b").__enter__(), "a control character")
    raises(sm.InvalidArgumentError, lambda: sm.tag("x" * 257).__enter__(), "a tag of 257 bytes")
    raises(ValueError, lambda: sm.tag("a\0b"), "a NUL in a tag")
    raises(TypeError, lambda: sm.tag(b"bytes"), "a bytes tag")
    h = sm.empty(309)
    R.equal(block_of(sm.memory_snapshot(), h.storage_id)["tag"], None, "refused tags pushed nothing")
    # A pop without a push (the scope's exit called twice) is the library's error.
    s = sm.tag("once")
    s.__enter__()
    s.__exit__(None, None, None)
    raises(sm.InvalidArgumentError, lambda: s.__exit__(None, None, None), "a pop with nothing pushed")
    for t in (a, b, c, d, e, f, g, h, *made, *other):
        t.close()


def history():
    R.check("history" not in sm.memory_snapshot(), "no history by default")
    sm.record_memory_history("cpu", 8)
    with sm.tag("hist"):
        t = sm.empty(1 << 12, dtype="float64")
    sid_bytes = t.nbytes
    t.close()
    h = sm.memory_snapshot()["history"]
    R.check(h["enabled"] is True and h["capacity"] == 8, "history on: %r" % {k: h[k] for k in h if k != "events"})
    R.check(1 <= len(h["events"]) <= 8, "at most capacity events")
    allocs = [ev for ev in h["events"] if ev["action"] == "alloc" and ev["requested"] == sid_bytes]
    frees = [ev for ev in h["events"] if ev["action"] == "free" and ev["requested"] == sid_bytes]
    R.check(len(allocs) == 1 and allocs[0]["tag"] == "hist", "the tagged alloc event: %r" % h["events"])
    R.check(len(frees) == 1 and frees[0]["tag"] == "hist", "its free event")
    R.check(allocs and frees and allocs[0]["address"] == frees[0]["address"], "same address")
    seqs = [ev["time_us"] for ev in h["events"]]
    R.equal(seqs, sorted(seqs), "events oldest first")
    for i in range(20):
        sm.empty(10 + i).close()
    h = sm.memory_snapshot()["history"]
    R.equal(len(h["events"]), 8, "a full ring keeps capacity events")
    R.equal(h["dropped"], h["recorded"] - 8, "dropped = recorded - capacity")
    sm.record_memory_history("cpu", 0)
    R.check("history" not in sm.memory_snapshot(), "max_events 0 stops the history")
    raises(sm.InvalidArgumentError, lambda: sm.record_memory_history("cpu", -1), "max_events -1")
    raises(sm.InvalidArgumentError, lambda: sm.record_memory_history("cpu", (1 << 24) + 1),
           "max_events past 2**24")
    R.check("history" not in sm.memory_snapshot(), "a refused call starts nothing")


def oom_observer():
    seen = []
    inner = []

    def observer(info):
        seen.append(info)
        inner.append(sm.memory_snapshot())  # the observer may use the library

    R.equal(sm.set_oom_observer(observer), None, "no observer before")
    keep = sm.empty(1000)
    sm.empty_cache()
    before = sm.memory_stats()
    sm.record_memory_history("cpu", 100)
    sm.debug_fail_alloc(1)
    e = raises(sm.OutOfMemoryError, lambda: sm.empty(3000), "the injected failure")
    R.equal(len(seen), 1, "the observer is called once")
    if seen:
        info = seen[0]
        R.check(isinstance(info, sm.OomInfo), "an OomInfo")
        R.equal(info.device, sm.Device("cpu"), "info.device")
        R.equal(info.requested_bytes, 3000 * 4, "info.requested_bytes")
        R.equal((info.allocated_bytes, info.reserved_bytes),
                (before["allocated_bytes"], before["reserved_bytes"]), "info allocated/reserved")
        R.equal(info.cached_free_bytes, before["reserved_bytes"] - before["allocated_bytes"],
                "info.cached_free_bytes (every free byte: reserved - allocated)")
        R.check(0 <= info.largest_free_block <= info.cached_free_bytes, "info.largest_free_block")
        R.check("out of memory" in info.report and "12000" in info.report, "report: %r" % info.report)
        R.check(e is not None and e.c_message.endswith(info.report),
                "the error's C message carries the report: %r" % (e and e.c_message))
        R.equal(inner[0]["totals"]["allocated_bytes"], info.allocated_bytes,
                "a snapshot inside the observer")
        ooms = [ev for ev in sm.memory_snapshot()["history"]["events"] if ev["action"] == "oom"]
        R.check(len(ooms) == 1 and ooms[0]["size"] == 12000, "the history records the oom: %r" % ooms)
    sm.record_memory_history("cpu", 0)

    # An observer that raises: the call still raises OutOfMemoryError, a
    # RuntimeWarning says what the observer raised, and the library goes on.
    def bad(info):
        raise KeyError("observer bug")

    R.check(sm.set_oom_observer(bad) is observer, "set_oom_observer returns the previous one")
    sm.debug_fail_alloc(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        raises(sm.OutOfMemoryError, lambda: sm.empty(3001), "a raising observer")
    msgs = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]
    R.check(len(msgs) == 1 and "KeyError" in msgs[0] and "observer bug" in msgs[0], "the warning: %r" % msgs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # even a warning turned into an error stays out of C
        sm.debug_fail_alloc(1)
        raises(sm.OutOfMemoryError, lambda: sm.empty(3002), "a raising observer, warnings as errors")
    t = sm.empty(3003)
    R.equal(t.shape, (3003,), "allocations work after a raising observer")
    t.close()

    # None removes it.
    R.check(sm.set_oom_observer(None) is bad, "set_oom_observer(None) returns the previous one")
    sm.debug_fail_alloc(1)
    raises(sm.OutOfMemoryError, lambda: sm.empty(3004), "no observer")
    R.equal(len(seen), 1, "a removed observer is not called")
    raises(TypeError, lambda: sm.set_oom_observer(42), "a non-callable observer")
    R.equal(sm.set_oom_observer(None), None, "a refused observer was not installed")
    keep.close()


def oom_observer_replaced_from_two_threads():
    """An observer that replaces the observer while another thread is
    replacing it: sm_set_oom_observer on that thread waits for the observer
    in flight, which must be able to finish (no lock of the binding held
    across the wait)."""
    entered, done = threading.Event(), threading.Event()
    results = {}

    def second(info):
        pass

    def first(info):
        entered.set()
        time.sleep(0.3)  # the other thread is now inside sm_set_oom_observer, waiting
        results["inner"] = sm.set_oom_observer(second)

    def fail():
        try:
            sm.empty(1 << 43)  # over any machine's memory
        except sm.OutOfMemoryError:
            results["failed"] = True
        done.set()

    sm.set_oom_observer(first)
    t1 = threading.Thread(target=fail, daemon=True)
    t1.start()
    R.check(entered.wait(30), "the observer was called")
    t2 = threading.Thread(target=lambda: results.setdefault("outer", sm.set_oom_observer(None)),
                          daemon=True)
    t2.start()
    t2.join(30)
    R.check(done.wait(30) and not t2.is_alive(),
            "two threads replacing the observer, one from inside it, both return")
    if t2.is_alive():
        print("FAIL: deadlocked threads left behind; exiting")
        sys.stdout.flush()
        os._exit(1)
    R.check(results.get("failed"), "the huge request failed with OutOfMemoryError")
    R.check(results.get("inner") in (first, None), "the inner call returned the previous observer")
    sm.set_oom_observer(None)


def exported():
    for name in ("memory_snapshot", "save_memory_snapshot", "tag", "record_memory_history",
                 "set_oom_observer", "OomInfo"):
        R.check(name in sm.__all__, "%s in __all__" % name)


for name, fn in [("snapshot agrees with stats", snapshot_agrees_with_stats),
                 ("save_memory_snapshot", save_snapshot), ("storage ids", storage_ids),
                 ("tags", tags), ("history", history), ("oom observer", oom_observer),
                 ("oom observer replaced from two threads", oom_observer_replaced_from_two_threads),
                 ("exported", exported)]:
    R.run(name, fn)
sm.debug_fail_alloc(0)
sys.exit(R.finish())
