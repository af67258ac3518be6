"""Snapshots for tests/python/test_memviz.py, written to docs/MEMORY_SNAPSHOT.md.

A small model of the caching allocators (Sim) serves allocations, splits and
merges blocks, records history events and writes the snapshot JSON, so every
fixture is consistent with itself the way the library's output must be
(totals = sums of the segments, tags = the allocated blocks, history's last
event = the totals). Fixtures that break a rule on purpose are made by
editing one of these.
"""

import copy
import random

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
ROUND = 512                  # SM_ALLOC_ROUND
SMALL_MAX = 1 * MiB          # SM_SMALL_BLOCK_MAX
UNUSABLE_REQUESTS = sorted({8 ** k for k in range(3, 11)} | {1 * MiB, 2 * MiB})


class Sim(object):
    """host=False: the device allocator (2 MiB small segments split into
    blocks, 20 MiB segments for requests under 10 MiB, larger ones rounded to
    2 MiB; free neighbours merge). host=True: the host allocator (one block
    per segment, reused by exact size class / at most 1/8 waste)."""

    def __init__(self, device="cuda:0", host=False, base=0x7F3A1C000000, t0=2000000):
        self.device, self.host = device, host
        self.segments = []          # {"address": int, "size", "pool", "blocks": [...]}
        self.next_addr = base
        self.time_us = t0
        self.seq = 0
        self.next_storage = 1
        self.live = {}              # storage id -> block
        self.extra_views = 0
        self.c = dict(num_allocs=0, num_frees=0, cache_hits=0, device_allocs=0,
                      device_frees=0, peak_allocated_bytes=0, peak_reserved_bytes=0)
        self.history = None         # {"capacity", "recorded", "dropped", "events"}
        self.tags = []

    # -- state -------------------------------------------------------------
    def allocated(self):
        return sum(b["size"] for s in self.segments for b in s["blocks"]
                   if b["state"] == "allocated")

    def reserved(self):
        return sum(s["size"] for s in self.segments)

    def tick(self, us):
        self.time_us += us

    def _peaks(self):
        self.c["peak_allocated_bytes"] = max(self.c["peak_allocated_bytes"], self.allocated())
        self.c["peak_reserved_bytes"] = max(self.c["peak_reserved_bytes"], self.reserved())

    def record(self, capacity):
        self.history = {"capacity": capacity, "recorded": 0, "dropped": 0, "events": []}

    def _event(self, action, size=0, requested=0, address=None, tag=None, seq=None):
        if self.history is None:
            return
        h = self.history
        h["events"].append({
            "seq": seq, "time_us": self.time_us, "action": action, "size": size,
            "requested": requested, "address": None if address is None else hex(address),
            "tag": tag, "stream": None if self.host else "0x0",
            "allocated_bytes": self.allocated(), "reserved_bytes": self.reserved()})
        h["recorded"] += 1
        if len(h["events"]) > h["capacity"]:
            del h["events"][0]
            h["dropped"] += 1

    @staticmethod
    def _free_block(offset, size, state="inactive_split"):
        return {"offset": offset, "size": size, "requested": 0, "state": state,
                "storage": None, "tag": None, "seq": None, "time_us": None}

    def _settle(self, seg):
        """Merge neighbouring free blocks; name the free state by the rule."""
        merged = []
        for b in seg["blocks"]:
            if (merged and b["state"] in ("inactive_split", "cached_free")
                    and merged[-1]["state"] in ("inactive_split", "cached_free")):
                merged[-1]["size"] += b["size"]
            else:
                merged.append(b)
        seg["blocks"] = merged
        busy = any(b["state"] in ("allocated", "pending_free") for b in merged)
        for b in merged:
            if b["state"] in ("inactive_split", "cached_free"):
                b["state"] = "inactive_split" if busy else "cached_free"

    def _new_segment(self, size, pool):
        addr = self.next_addr
        self.next_addr += (size + 2 * MiB - 1) // (2 * MiB) * (2 * MiB) + 2 * MiB
        seg = {"address": addr, "size": size, "pool": pool,
               "blocks": [self._free_block(0, size, "cached_free")]}
        self.segments.append(seg)
        self.c["device_allocs"] += 1
        self._peaks()
        self._event("segment_map", size, address=addr)
        return seg

    # -- the allocator's calls ----------------------------------------------
    def alloc(self, nbytes, tag=None):
        size = max(ROUND, (nbytes + ROUND - 1) // ROUND * ROUND)
        pool = "small" if size <= SMALL_MAX else "large"
        best = None
        for seg in self.segments:
            if seg["pool"] != pool:
                continue
            for b in seg["blocks"]:
                if b["state"] not in ("inactive_split", "cached_free"):
                    continue
                if self.host:
                    fits = b["size"] == size if pool == "small" else \
                        size <= b["size"] and b["size"] - size <= b["size"] // 8
                else:
                    fits = b["size"] >= size
                if fits and (best is None or b["size"] < best[1]["size"]):
                    best = (seg, b)
        if best is None:
            if self.host:
                seg_size = size
            elif size <= SMALL_MAX:
                seg_size = 2 * MiB
            elif size < 10 * MiB:
                seg_size = 20 * MiB
            else:
                seg_size = (size + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)
            seg = self._new_segment(seg_size, pool)
            best = (seg, seg["blocks"][0])
        else:
            self.c["cache_hits"] += 1
        seg, b = best
        rest = b["size"] - size
        split = not self.host and (rest >= ROUND if pool == "small" else rest > SMALL_MAX)
        if split:
            i = seg["blocks"].index(b)
            b["size"] = size
            seg["blocks"].insert(i + 1, self._free_block(b["offset"] + size, rest))
        self.seq += 1
        sid = self.next_storage
        self.next_storage += 1
        b.update(state="allocated", requested=nbytes, tag=tag, seq=self.seq,
                 time_us=self.time_us, storage=sid)
        self._settle(seg)
        self.live[sid] = b
        self.c["num_allocs"] += 1
        self._peaks()
        self._event("alloc", b["size"], nbytes, seg["address"] + b["offset"], tag, self.seq)
        return sid

    def _seg_of(self, b):
        for seg in self.segments:
            if any(x is b for x in seg["blocks"]):
                return seg
        raise KeyError("block not found")

    def free(self, sid, pending=False):
        b = self.live.pop(sid)
        seg = self._seg_of(b)
        tag, size, seq = b["tag"], b["size"], b["seq"]
        b.update(state="pending_free" if pending else "inactive_split", requested=0,
                 storage=None, tag=None, seq=None, time_us=None)
        self._settle(seg)
        self.c["num_frees"] += 1
        self._event("free", size, 0, seg["address"] + b["offset"], tag, seq)

    def release_pending(self):
        for seg in self.segments:
            for b in seg["blocks"]:
                if b["state"] == "pending_free":
                    b["state"] = "inactive_split"
            self._settle(seg)

    def empty_cache(self):
        gone = [s for s in self.segments
                if all(b["state"] == "cached_free" for b in s["blocks"])]
        self._event("empty_cache", sum(s["size"] for s in gone))
        for s in gone:
            self.segments.remove(s)
            self.c["device_frees"] += 1
            self._event("segment_unmap", s["size"], address=s["address"])

    def oom(self, nbytes):
        self._event("oom", nbytes, nbytes)

    # -- the snapshot --------------------------------------------------------
    def snapshot(self, start_unix_us=1795612800000000):
        segs = sorted(self.segments, key=lambda s: s["address"])
        alloc_blocks = [b for s in segs for b in s["blocks"] if b["state"] == "allocated"]
        free_blocks = [(s, b) for s in segs for b in s["blocks"] if b["state"] != "allocated"]
        cached_free = sum(b["size"] for _, b in free_blocks)
        largest = max([b["size"] for _, b in free_blocks] or [0])
        pools = {}
        for name in ("small", "large"):
            ps = [s for s in segs if s["pool"] == name]
            pf = [b["size"] for s in ps for b in s["blocks"] if b["state"] != "allocated"]
            pa = sum(b["size"] for s in ps for b in s["blocks"] if b["state"] == "allocated")
            free_sum, lf = sum(pf), max(pf or [0])
            pools[name] = {"segments": len(ps), "reserved_bytes": sum(s["size"] for s in ps),
                           "allocated_bytes": pa, "free_bytes": free_sum,
                           "largest_free_block": lf,
                           "ratio": (1 - lf / free_sum) if free_sum else 0.0}
        unusable = []
        for req in UNUSABLE_REQUESTS:
            size = (req + ROUND - 1) // ROUND * ROUND
            pool = "small" if size <= SMALL_MAX else "large"
            usable = 0
            for s, b in free_blocks:
                if s["pool"] != pool:
                    continue
                if self.host:
                    ok = b["size"] == size if pool == "small" else \
                        size <= b["size"] and b["size"] - size <= b["size"] // 8
                else:
                    ok = b["size"] >= size
                usable += b["size"] if ok else 0
            unusable.append({"request": req, "unusable_bytes": cached_free - usable})
        by_tag = {}
        for b in alloc_blocks:
            t = by_tag.setdefault(b["tag"], {"tag": b["tag"], "allocated_bytes": 0,
                                             "requested_bytes": 0, "blocks": 0})
            t["allocated_bytes"] += b["size"]
            t["requested_bytes"] += b["requested"]
            t["blocks"] += 1
        tags = sorted(by_tag.values(), key=lambda t: (-t["allocated_bytes"], t["tag"] is None,
                                                      t["tag"] or ""))
        totals = {
            "allocated_bytes": self.allocated(), "reserved_bytes": self.reserved(),
            "peak_allocated_bytes": self.c["peak_allocated_bytes"],
            "peak_reserved_bytes": self.c["peak_reserved_bytes"],
            "num_allocs": self.c["num_allocs"], "num_frees": self.c["num_frees"],
            "cache_hits": self.c["cache_hits"], "device_allocs": self.c["device_allocs"],
            "device_frees": self.c["device_frees"],
            "active_views": len(self.live) + self.extra_views,
            "active_storages": len(self.live),
            "requested_bytes": sum(b["requested"] for b in alloc_blocks),
        }
        dev_type = {"cpu": 1, "cuda_host": 3}.get(self.device, 2)
        snap = {
            "format": "stridemem.memory_snapshot", "version": 1, "device": self.device,
            "device_type": dev_type, "device_index": 0, "time_us": self.time_us,
            "start_unix_us": start_unix_us, "totals": totals,
            "fragmentation": {"cached_free_bytes": cached_free, "largest_free_block": largest,
                              "ratio": (1 - largest / cached_free) if cached_free else 0.0,
                              "pools": pools, "unusable": unusable},
            "tags": tags,
            "segments": [{"address": hex(s["address"]), "size": s["size"], "pool": s["pool"],
                          "stream": None if self.host else "0x0",
                          "allocated_bytes": sum(b["size"] for b in s["blocks"]
                                                 if b["state"] == "allocated"),
                          "blocks": [dict(b) for b in s["blocks"]]} for s in segs],
        }
        if self.history is not None:
            h = self.history
            snap["history"] = {"enabled": True, "capacity": h["capacity"],
                               "recorded": h["recorded"], "dropped": h["dropped"],
                               "events": copy.deepcopy(h["events"])}
        return copy.deepcopy(snap)


def cuda_scenario(seed=7, copies=False, capacity=500, steps=12):
    """A training-like run on cuda:0. Weights exist before history starts
    (so the chart starts above zero); then an embedding table in one big
    segment, optimizer state, and steps whose forward pass allocates
    activations under nested tags (small-pool blocks and 20 MiB-segment
    blocks) and whose backward pass frees them in reverse, keeping a few
    until a clean-up with sm_empty_cache; one failed (OOM) request; a 12 MiB
    scratch segment freed whole (cached_free); one block left pending on
    another stream. More events than `capacity`, so the ring drops some.
    copies=True: the "fresh" variant that copies instead of taking views,
    so each step holds twice the activations."""
    rnd = random.Random(seed)
    sim = Sim("cuda:0")
    sim.extra_views = 140 if not copies else 35
    for i in range(5):
        sim.alloc(3 * MiB + rnd.randrange(0, MiB, 4), "weights")
        sim.tick(900)
    sim.alloc(37 * KiB, None)
    sim.record(capacity)
    sim.tick(3000)
    emb = sim.alloc(64 * MiB + 12345, "embeddings")
    sim.tick(2000)
    for i in range(4):
        sim.alloc(2 * MiB + rnd.randrange(0, MiB, 4), "optimizer")
        sim.tick(300)
    kept = []
    for step in range(steps):
        sim.tick(rnd.randrange(3000, 6000))
        acts = []
        for layer in range(4):
            for tag, n, lo, hi in (("encoder", 2, 16 * KiB, 900 * KiB),
                                   ("encoder/attn", 2, 64 * KiB, 700 * KiB),
                                   ("encoder/attn", 1, 2 * MiB, 5 * MiB),
                                   ("decoder", 1, 8 * KiB, 600 * KiB)):
                for _ in range(n * (2 if copies else 1)):
                    acts.append(sim.alloc(rnd.randrange(lo, hi), tag))
                    sim.tick(rnd.randrange(40, 160))
        acts.append(sim.alloc(rnd.randrange(512, 4 * KiB), None))
        sim.tick(rnd.randrange(500, 1500))
        kept.append(acts.pop(rnd.randrange(len(acts))))
        for sid in reversed(acts):
            sim.free(sid)
            sim.tick(rnd.randrange(30, 120))
        if step == 6:
            sim.oom(48 * GiB)
            sim.tick(400)
        if step == 8:
            for sid in kept[:-2]:
                sim.free(sid)
            kept = kept[-2:]
            sim.empty_cache()
            sim.tick(800)
    scratch = sim.alloc(12 * MiB, "decoder")
    sim.tick(1500)
    sim.free(scratch)                      # its own segment: now cached_free
    sim.free(kept.pop(), pending=True)     # freed, its stream still at work
    sim.tick(2500)
    assert emb in sim.live
    return sim.snapshot()


def host_scenario(seed=3):
    """The pinned host allocator (cuda_host; the CPU used it until issue 14):
    one block per segment, no stream, no history."""
    rnd = random.Random(seed)
    sim = Sim("cuda_host", host=True, base=0x55D0C1200000)
    sim.extra_views = 9
    live = []
    for i in range(14):
        tag = ("loader", "loader/decode", None, "stack")[i % 4]
        live.append(sim.alloc(rnd.choice([3 * KiB, 64 * KiB, 700 * KiB, 6 * MiB, 40 * MiB]),
                              tag))
        sim.tick(1500)
    for sid in live[::3]:
        sim.free(sid)
    sim.alloc(64 * KiB, "loader")  # a cache hit of the exact size class, if one is free
    return sim.snapshot()


def empty_device():
    """A device that holds nothing: no segment, no tag, no history."""
    return Sim("cuda:2").snapshot()


def nasty_scenario():
    """Tags and a device name that try to break out of the page."""
    sim = Sim("cuda:1<b>bold</b>")
    sim.record(100)
    tags = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>",
            "\"quoted\" 'single' &amp; <!-- comment", "caf\u00e9/\u6ce8\u610f/\u2028sep",
            "encoder/attn", "x" * 300]
    ids = []
    for i, t in enumerate(tags):
        ids.append(sim.alloc((i + 1) * 10 * KiB, t))
        sim.tick(1000)
    sim.alloc(1000, None)
    sim.free(ids[-1])
    return sim.snapshot()


def many_segments(n=5000):
    """n segments (half 2 MiB small, half 20 MiB large) each with a few
    blocks: the page must cap what it draws and stay small and quick."""
    sim = Sim("cuda:0")
    for i in range(n):
        addr = sim.next_addr
        sim.next_addr += 32 * MiB
        if i % 2:
            seg = {"address": addr, "size": 2 * MiB, "pool": "small"}
            parts = [(512 * KiB, "allocated"), (1536 * KiB, "inactive_split")]
        else:
            seg = {"address": addr, "size": 20 * MiB, "pool": "large"}
            parts = [(8 * MiB, "allocated"), (4 * MiB, "pending_free"),
                     (8 * MiB, "inactive_split")]
        off, blocks = 0, []
        for size, state in parts:
            b = Sim._free_block(off, size, state)
            if state == "allocated":
                sim.seq += 1
                b.update(requested=size - 100, tag="layer%d" % (i % 7), seq=sim.seq,
                         time_us=sim.time_us, storage=sim.seq)
                sim.live[sim.seq] = b
                sim.c["num_allocs"] += 1
            blocks.append(b)
            off += size
        seg["blocks"] = blocks
        sim.segments.append(seg)
        sim.c["device_allocs"] += 1
    sim._peaks()
    return sim.snapshot()


def hand_timeline(dropped=False):
    """The hand-computed history of test_memviz.py: tag "A" held 1024 B
    before recording started (history began after allocations existed);
    events: alloc A 2048, alloc B 1024, oom 1 GiB, alloc untagged 512,
    free B 1024, free A 1024 (the pre-history block). Final: A 2048,
    untagged 512. dropped=True: a ring of 3 that lost the first 3 events."""
    seg = "0x7f0000000000"
    events = [
        ("alloc", 100, 2048, "A", 3072),
        ("alloc", 200, 1024, "B", 4096),
        ("oom", 250, GiB, None, 4096),
        ("alloc", 300, 512, None, 4608),
        ("free", 400, 1024, "B", 3584),
        ("free", 500, 1024, "A", 2560),
    ]
    ev = [{"seq": i + 2 if a == "alloc" else None, "time_us": t, "action": a, "size": s,
           "requested": s, "address": seg if a != "oom" else None, "tag": tag,
           "stream": "0x0", "allocated_bytes": alloc, "reserved_bytes": 2 * MiB}
          for i, (a, t, s, tag, alloc) in enumerate(events)]
    hist = {"enabled": True, "capacity": 10000, "recorded": 6, "dropped": 0, "events": ev}
    if dropped:
        hist = {"enabled": True, "capacity": 3, "recorded": 6, "dropped": 3, "events": ev[3:]}
    blocks = [
        {"offset": 0, "size": 2048, "requested": 1000, "state": "allocated", "storage": 2,
         "tag": "A", "seq": 2, "time_us": 100},
        {"offset": 2048, "size": 512, "requested": 152, "state": "allocated", "storage": 4,
         "tag": None, "seq": 5, "time_us": 300},
        {"offset": 2560, "size": 2 * MiB - 2560, "requested": 0, "state": "inactive_split",
         "storage": None, "tag": None, "seq": None, "time_us": None},
    ]
    free = 2 * MiB - 2560
    return {
        "format": "stridemem.memory_snapshot", "version": 1, "device": "cuda:0",
        "device_type": 2, "device_index": 0, "time_us": 600, "start_unix_us": 0,
        "totals": {"allocated_bytes": 2560, "reserved_bytes": 2 * MiB,
                   "peak_allocated_bytes": 4608, "peak_reserved_bytes": 2 * MiB,
                   "num_allocs": 4, "num_frees": 2, "cache_hits": 3, "device_allocs": 1,
                   "device_frees": 0, "active_views": 2, "active_storages": 2,
                   # 1152 B = 1.125 KiB: a rounding tie, shown "1.12 KiB" (half
                   # to even, as printf); the page's script must agree
                   "requested_bytes": 1152},
        "fragmentation": {"cached_free_bytes": free, "largest_free_block": free, "ratio": 0.0,
                          "pools": {"small": {"segments": 1, "reserved_bytes": 2 * MiB,
                                              "allocated_bytes": 2560, "free_bytes": free,
                                              "largest_free_block": free, "ratio": 0.0}},
                          "unusable": [{"request": 512, "unusable_bytes": 0}]},
        "tags": [{"tag": "A", "allocated_bytes": 2048, "requested_bytes": 1000, "blocks": 1},
                 {"tag": None, "allocated_bytes": 512, "requested_bytes": 152, "blocks": 1}],
        "segments": [{"address": seg, "size": 2 * MiB, "pool": "small", "stream": "0x0",
                      "allocated_bytes": 2560, "blocks": blocks}],
        "history": hist,
    }
