#!/usr/bin/env python3
"""The Python binding on a GPU: every part of stridemem's Python surface run
on a CUDA device and compared with NumPy on the same values. A script for a
GPU session, not a ctest test: it needs a CUDA build of libstridemem
(STRIDEMEM_LIB), a usable GPU and NumPy.

    STRIDEMEM_LIB=build-cuda/libstridemem.so PYTHONPATH=bindings/python \\
        python3 tests/python/python_cuda_check.py [--device cuda:0] [--json OUT.json]

`--device cpu` runs every check that makes sense on the CPU too (so the
script's own logic is tested on a machine without a GPU); the checks that
only mean something on a GPU (pinned host memory, side streams, a second
GPU, the CUDA out-of-memory message) are then reported NOT RUN.

Sections (each check compares with NumPy on the same values; views also
compare strides, storage offset, data pointer and storage sharing):
  memory     memory_stats / memory_summary / empty_cache / reset_peak_stats:
             allocated grows by the size rounded to SM_ALLOC_ROUND and comes
             back after close(); reserved grows by the segment (CPU and CUDA
             alike: 2 MiB for small requests, 20 MiB for large ones under
             10 MiB, the request rounded to 2 MiB above), stays cached after
             close, falls with empty_cache;
             a second allocation is a cache hit; peaks; the device's stats
             are the device's (the CPU's do not move).
  creation   empty/zeros/ones/full/empty_strided/*_like/arange/arange_n,
             tensor(...), from_numpy(..., device=) (strided, big-endian, 0-d,
             converting), for every dtype.
  dtypes     every dtype round trips bit for bit (NaN, -0.0, subnormals,
             extremes, bfloat16 bit patterns); item()/float()/int()/complex();
             to(dtype) between every pair of the 15 dtypes against NumPy's
             astype (bfloat16: round to nearest even), strides kept.
  to         to(device=...), to(dtype), cpu(), numpy(), return_copied,
             contiguous/clone (preserve, contiguous, channels_last).
  views      slices with steps, negative steps, flip, permute/T/transpose/
             movedim, expand, unfold, diagonal, select, narrow, view,
             reshape (and whether it copied), squeeze/unsqueeze, flatten/
             unflatten, split/chunk, as_strided, Storage.tensor; writes
             through a view show in the base.
  indexing   t[...] reads (ints, slices, None, ...), one integer array or
             mask (list, NumPy, device tensor), and assignment of a scalar,
             a device tensor, a CPU tensor, a NumPy array, a nested list, a
             complex scalar; int32 truncation; advanced assignment refused.
  inplace    fill_/zero_/add_/sub_/mul_/div_/clamp_/relu_/neg_/abs_/sqrt_/
             exp_ and += -= *= /= with scalars and broadcast tensor operands
             (on the device and on the CPU) on transposed, flipped views, for
             every dtype (integer wrap-around, float16/bfloat16 rounding,
             complex), the whole base compared after each op.
  copies     copy_/copy_into across devices (cpu <-> cuda with broadcast and
             conversion, pinned cuda_host <-> cuda, cuda:0 <-> cuda:1 when
             there are two GPUs), clone/contiguous on the device.
  index_select  int32/int64 index tensors on the device and on the CPU,
             negative, strided and expanded indices, every dtype.
  repr       repr/str of device tensors and views (NumPy's formatting, the
             device, strides, offset), bfloat16, complex, summarized.
  copy/pickle  copy.copy (same view), copy.deepcopy (new storage on the
             device; views copied together still share it), pickle by value
             (the device, strides when dense), loaded in another process.
  interfaces  __cuda_array_interface__ / __array_interface__ / __array__
             (copy=False), __dlpack_device__, from_dlpack of our own tensor,
             from_blob over device memory with an owner and on_free.
  streams    get_stream/set_stream/synchronize; with a side stream (from the
             CUDA runtime, torch or cupy): queued work is complete when read,
             the stream is per thread, record_stream keeps a freed block
             from being reused while a stream still writes it.
  stack      Stack on the device: alignment, used/capacity, scope/pop_to,
             popped tensors refused, overflow, no storage / interface / DLPack
             export, deepcopy clones.
  lifetimes  close(), with, retain(), a view keeps the storage alive, a
             Storage handle keeps it alive, garbage collection frees.
  bad input  device index out of range, dtype mismatches, shape errors, out
             of bounds (the index checked on the device), overlapping writes,
             closed handles, size overflow, out of memory (1 PiB: an
             OutOfMemoryError that is a MemoryError and names the request and
             what is held), a full stack: each raises the same class and
             status on the device as on the CPU, writes nothing, and the
             library works afterwards (no sticky CUDA error).
  leaks      active storages / views on the device and the CPU and the
             library's live handles are back where they started.

Every check prints PASS/FAIL/NOT RUN; exit 0 only if nothing failed and
something ran, 1 on any failure, 77 when the device is a GPU that is not
usable (the reason is printed: "no usable GPU: ...").
"""

import argparse
import copy
import ctypes
import ctypes.util
import gc
import glob
import json
import os
import pickle
import subprocess
import sys
import threading
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import Checklist, import_stridemem  # noqa: E402

sm = import_stridemem()

try:
    import numpy as np
except ImportError as _e:  # reported in main(), after the GPU question
    np = None
    NUMPY_ERROR = str(_e)

CHECKS = Checklist("python_cuda_check")
record, check = CHECKS.record, CHECKS.check

DEV = "cpu"        # the device under test, as a string ("cuda:0", "cpu")
IS_CUDA = False
ALL_DTYPES = list(sm.DTYPES)
INTS = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
SIGNED = ("int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
ROUND = 512                      # SM_ALLOC_ROUND
SMALL_MAX = 1 << 20              # SM_SMALL_BLOCK_MAX
STACK_ALIGN = 256                # SM_STACK_ALIGNMENT


def pool_contents(device, limit=20):
    """What device's allocator holds besides its cache, from its memory
    snapshot: each block that is not cached_free (allocated, pending_free,
    inactive_split) with its address, size, requested size, state, the
    storage holding it, tag and sequence number; at most limit of them."""
    try:
        snap = sm.memory_snapshot(device)
    except Exception as e:  # the detail of a failure must not raise itself
        return "memory_snapshot(%r) failed: %s: %s" % (device, type(e).__name__, e)
    rows = []
    for seg in snap.get("segments", ()):
        for b in seg.get("blocks", ()):
            if b.get("state") == "cached_free":
                continue
            rows.append("%s+%d %s size=%d requested=%d storage=%s tag=%s seq=%s" % (
                seg.get("address"), b.get("offset", 0), b.get("state"), b.get("size", 0),
                b.get("requested", 0), b.get("storage"), b.get("tag"), b.get("seq")))
    totals = snap.get("totals", {})
    head = "memory_snapshot(%s): allocated_bytes=%s reserved_bytes=%s, %d block(s) not cached_free" % (
        snap.get("device", device), totals.get("allocated_bytes"), totals.get("reserved_bytes"),
        len(rows))
    more = ["... %d more" % (len(rows) - limit)] if len(rows) > limit else []
    return "; ".join([head] + rows[:limit] + more)


def check_freed(what, s0, device=None, keys=("active_storages", "allocated_bytes")):
    """After a collection: the device's live storages and bytes (keys) are
    back where s0, its memory_stats before, had them. A failure says which
    blocks the allocator still holds (pool_contents)."""
    gc.collect()
    s = sm.memory_stats(device or DEV)
    ok = all(s[k] == s0[k] for k in keys)
    detail = "%s -> %s" % ({k: s0[k] for k in keys}, {k: s[k] for k in keys})
    if not ok:
        detail += "; " + pool_contents(device or DEV)
    return check(ok, what, detail)


def not_run(name, why):
    record(name, "NOT RUN", why)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

class Vacuous(AssertionError):
    """A check was about to compare nothing (an empty reference)."""


def nonempty(ref, what):
    if np.asarray(ref).size == 0:
        raise Vacuous("%s: the reference is empty: the check would pass vacuously" % what)


def bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a.shape == b.shape and a.dtype == b.dtype
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())


def describe_diff(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return "got %s %s, want %s %s" % (got.dtype, got.shape, ref.dtype, ref.shape)
    g = np.ascontiguousarray(got).reshape(-1)
    r = np.ascontiguousarray(ref).reshape(-1)
    gb = g.view(np.uint8).reshape(g.size, -1) if g.size else g
    rb = r.view(np.uint8).reshape(r.size, -1) if r.size else r
    bad = [i for i in range(g.size) if gb[i].tobytes() != rb[i].tobytes()]
    if not bad:
        return "values within tolerance? got %r want %r" % (g[:6], r[:6])
    i = bad[0]
    return "%d of %d elements differ; first at flat %d: got %r, want %r" % (
        len(bad), g.size, i, g[i], r[i])


def check_values(what, t, ref, rtol=None, atol=0.0):
    """t's values (copied to the host) against ref: bit for bit, or with a
    tolerance (rtol) for results a GPU may round differently (sqrt, exp,
    division)."""
    nonempty(ref, what)
    ref = np.asarray(ref)
    got = t.numpy()
    if rtol is None:
        ok = bits_equal(got, ref)
        detail = "" if ok else describe_diff(got, ref)
    else:
        ok = got.shape == ref.shape and got.dtype == ref.dtype and bool(
            np.allclose(got.astype(np.complex128 if np.iscomplexobj(got) else np.float64),
                        ref.astype(np.complex128 if np.iscomplexobj(ref) else np.float64),
                        rtol=rtol, atol=atol, equal_nan=True))
        detail = "" if ok else "got %r, want %r" % (got.reshape(-1)[:8], ref.reshape(-1)[:8])
    return check(ok, what + ": values", detail)


def same_scalars(a, b):
    """Nested lists of Python scalars equal element by element, NaN equal to
    NaN, -0.0 apart from 0.0, types alike (bool/int/float/complex)."""
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(same_scalars(x, y) for x, y in zip(a, b)))
    if type(a) is not type(b):
        return False
    if isinstance(a, complex):
        return same_scalars(a.real, b.real) and same_scalars(a.imag, b.imag)
    if isinstance(a, float):
        return (a != a and b != b) or (a == b and str(a)[0] == str(b)[0])
    return a == b


def el_strides(arr):
    return tuple(s // arr.itemsize for s in arr.strides)


def el_offset(arr, base):
    delta = arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return delta // base.itemsize


def check_view(what, v, ref, base, base_ref):
    """v, our view of base, against ref, NumPy's same view of base_ref (a
    C-contiguous array laid out as base): values, then shape, strides
    (elements), storage offset, data pointer, shared storage, device."""
    check_values(what, v, ref)
    off = el_offset(ref, base_ref)
    bad = []
    if v.shape != ref.shape:
        bad.append("shape %s vs %s" % (v.shape, ref.shape))
    # A size-1 dim's stride never matters (NumPy gives None-dims stride 0).
    mine = tuple(s for s, n in zip(v.strides, v.shape) if n != 1)
    theirs = tuple(s for s, n in zip(el_strides(ref), ref.shape) if n != 1)
    if v.ndim != ref.ndim or mine != theirs:
        bad.append("strides %s vs %s" % (v.strides, el_strides(ref)))
    if v.storage_offset != base.storage_offset + off:
        bad.append("offset %d vs %d" % (v.storage_offset, base.storage_offset + off))
    if v.data_ptr != base.data_ptr + off * base.itemsize:
        bad.append("data_ptr %#x vs %#x" % (v.data_ptr, base.data_ptr + off * base.itemsize))
    if not v.same_storage(base):
        bad.append("not the base's storage (a copy?)")
    if v.device != DEV:
        bad.append("device %s" % (v.device,))
    return check(not bad, what + ": a view (shape, strides, offset, pointer, storage)",
                 "; ".join(bad))


def raises(what, cls, fn, mentions=()):
    """fn() must raise cls (and mention each of mentions in its message)."""
    try:
        fn()
    except Exception as e:
        ok = isinstance(e, cls)
        msg = getattr(e, "message", "") or str(e)
        missing = [m for m in mentions if str(m).lower() not in msg.lower()]
        check(ok and not missing, what + ": raises %s" % cls.__name__,
              "%s: %s%s" % (type(e).__name__, e,
                            "" if not missing else " (does not mention %s)" % missing))
        return e
    check(False, what + ": raises %s" % cls.__name__, "no exception")
    return None


def round_up(n, k):
    return (n + k - 1) // k * k


def segment_size(rounded):
    """DeviceCachingAllocator::segment_size: the CPU's and every GPU's."""
    if rounded <= SMALL_MAX:
        return 2 << 20
    if rounded < 10 << 20:
        return 20 << 20
    return round_up(rounded, 2 << 20)


def bf16_bits(x):
    """float values -> bfloat16 bit patterns, rounding to nearest even (no NaN)."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    bits = np.asarray(bits, dtype=np.uint16)
    wide = bits.astype(np.uint32).reshape(-1) << np.uint32(16)
    return wide.view(np.float32).reshape(bits.shape)


def exch(name):
    """The NumPy dtype a stridemem dtype is exchanged as."""
    return sm.numpy_dtype(name)


def as_dtype(values, name):
    """Logical values (float64/complex128/bool arrays) as the exchange
    array of dtype name (bfloat16: rounded bit patterns)."""
    values = np.asarray(values)
    if name == "bfloat16":
        return bf16_bits(values.real if np.iscomplexobj(values) else values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return values.astype(exch(name))


def logical(arr, name):
    """The exchange array of dtype name as logical values (bfloat16 bits ->
    float32)."""
    return bf16_values(arr) if name == "bfloat16" else np.asarray(arr)


def snapshot():
    gc.collect()
    devs = [DEV] + (["cpu"] if DEV != "cpu" else [])
    return {d: sm.memory_stats(d) for d in devs}, sm.debug_live_handles()


def still_works(what):
    """After a failure: a new allocation, a copy through a transposed view
    and a kernel on the device work, and give NumPy's values."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = sm.from_numpy(x, device=DEV)
    u = sm.empty(6, 4, device=DEV)
    u.copy_(t.T)
    u.add_(1.0)
    sm.synchronize(DEV)
    ok = bits_equal(u.numpy(), x.T + 1)
    t.close()
    u.close()
    return check(ok, what + ": the library still works (allocation, copy, kernel)")


def sample(name):
    """12 values of dtype name as its exchange array, with the extremes and
    specials a copy must keep bit for bit; element 2 is ordinary."""
    if name == "bool":
        return np.array([True, False, True, True, False, False, True, False, True, True,
                         False, True])
    if name == "bfloat16":
        bits = (np.arange(12, dtype=np.uint32) * 0x1357 + 0x3F80) & 0xFFFF
        bits[2] = 0x4049  # 3.140625
        bits[3] = 0x7FC0  # NaN
        bits[4] = 0x8000  # -0.0
        bits[5] = 0x0001  # the smallest subnormal
        return bits.astype(np.uint16)
    nd = exch(name)
    if name in INTS:
        info = np.iinfo(nd)
        vals = [info.min, info.max, 42, 0, 1, info.max - 1, info.min + 1, 7, 100, 3, 2, 5]
        if name in SIGNED:
            vals[3] = -1
        return np.array(vals, dtype=nd)
    if name in FLOATS:
        info = np.finfo(nd)
        return np.array([info.max, info.min, 2.5, np.nan, -0.0, info.tiny / 4, np.inf, -np.inf,
                         info.tiny, 1.0 / 3, -7.25, info.eps], dtype=nd)
    part = np.finfo(np.float32 if name == "complex64" else np.float64)
    re = np.array([part.max, 0, 2.5, np.nan, -0.0, part.tiny / 4, np.inf, 1, -3, 1.0 / 3, 0.5,
                   -2])
    im = np.array([1, part.min, -1.5, 0, np.nan, -0.0, 2, -np.inf, 3, 1.0 / 7, 0, 4])
    out = np.empty(12, dtype=nd)
    out.real, out.imag = re, im
    return out


def from_logical(values, name, device=None, shape=None):
    arr = as_dtype(values, name)
    if shape is not None:
        arr = arr.reshape(shape)
    return sm.from_numpy(arr, device=DEV if device is None else device, dtype=name)


# ---------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------

def section_memory():
    d = DEV
    seg = segment_size

    gc.collect()
    sm.empty_cache(d)
    s0 = sm.memory_stats(d)
    fresh = s0["active_storages"] == 0
    check(s0["reserved_bytes"] >= s0["allocated_bytes"] >= 0,
          "memory: reserved >= allocated", str(s0))
    if fresh:
        check(s0["allocated_bytes"] == 0 and s0["reserved_bytes"] == 0 and
              s0["requested_bytes"] == 0,
              "memory: nothing live -> nothing allocated or reserved after empty_cache", str(s0))
    cpu0 = sm.memory_stats("cpu") if IS_CUDA else None

    n = 1000
    nbytes = 4 * n
    r = round_up(nbytes, ROUND)
    a = sm.empty(n, dtype="float32", device=d)
    s1 = sm.memory_stats(d)
    check(s1["allocated_bytes"] - s0["allocated_bytes"] == r,
          "memory: allocated grows by the rounded size (%d -> %d)" % (nbytes, r),
          "grew by %d" % (s1["allocated_bytes"] - s0["allocated_bytes"]))
    check(s1["requested_bytes"] - s0["requested_bytes"] == nbytes,
          "memory: requested grows by the request", "grew by %d"
          % (s1["requested_bytes"] - s0["requested_bytes"]))
    check((s1["active_storages"] - s0["active_storages"], s1["active_views"] - s0["active_views"],
           s1["num_allocs"] - s0["num_allocs"]) == (1, 1, 1),
          "memory: one more storage, view and allocation", "%s -> %s" % (s0, s1))
    new_block = s1["device_allocs"] - s0["device_allocs"]
    if fresh:
        check(new_block == 1, "memory: a fresh allocation comes from the system",
              "device_allocs grew by %d" % new_block)
    if new_block == 1:
        check(s1["reserved_bytes"] - s0["reserved_bytes"] == seg(r),
              "memory: reserved grows by the segment (%d bytes)" % seg(r),
              "grew by %d" % (s1["reserved_bytes"] - s0["reserved_bytes"]))
    else:
        check(s1["cache_hits"] == s0["cache_hits"] + 1 and
              s1["reserved_bytes"] == s0["reserved_bytes"],
              "memory: served from the cache (live blocks before the check)", str(s1))
    check(s1["peak_allocated_bytes"] >= s1["allocated_bytes"] and
          s1["peak_reserved_bytes"] >= s1["reserved_bytes"], "memory: peaks >= current")
    if IS_CUDA:
        cpu1 = sm.memory_stats("cpu")
        check(cpu1["allocated_bytes"] == cpu0["allocated_bytes"] and
              cpu1["active_storages"] == cpu0["active_storages"],
              "memory: a device allocation does not show in the CPU's stats",
              "%s -> %s" % (cpu0, cpu1))
    a.close()
    s2 = sm.memory_stats(d)
    check(all(s2[k] == s0[k] for k in ("allocated_bytes", "requested_bytes", "active_storages",
                                       "active_views")),
          "memory: close() gives back allocated, requested, the storage and the view",
          "%s -> %s" % (s0, s2))
    check(s2["num_frees"] == s1["num_frees"] + 1, "memory: close() counts one free")
    check(s2["reserved_bytes"] == s1["reserved_bytes"] and
          s2["device_frees"] == s1["device_frees"],
          "memory: the freed block stays cached (reserved unchanged)", "%s -> %s" % (s1, s2))

    b = sm.empty(n, dtype="float32", device=d)
    s3 = sm.memory_stats(d)
    check(s3["cache_hits"] == s2["cache_hits"] + 1 and s3["device_allocs"] == s2["device_allocs"]
          and s3["reserved_bytes"] == s2["reserved_bytes"] and
          s3["allocated_bytes"] == s2["allocated_bytes"] + r,
          "memory: the same size again is a cache hit", "%s -> %s" % (s2, s3))
    v = b[10:20]
    s4 = sm.memory_stats(d)
    check(s4["active_views"] == s3["active_views"] + 1 and
          s4["active_storages"] == s3["active_storages"] and
          s4["allocated_bytes"] == s3["allocated_bytes"],
          "memory: a view is one more view, no storage, no bytes", "%s -> %s" % (s3, s4))
    v.close()
    b.close()

    m = 3 * (1 << 20) + 100
    rl = round_up(m, ROUND)
    s5 = sm.memory_stats(d)
    c = sm.empty(m, dtype="uint8", device=d)
    s6 = sm.memory_stats(d)
    check(s6["allocated_bytes"] - s5["allocated_bytes"] == rl and
          s6["requested_bytes"] - s5["requested_bytes"] == m,
          "memory: a large request: allocated grows by %d, requested by %d" % (rl, m),
          "%s -> %s" % (s5, s6))
    if fresh:
        check(s6["device_allocs"] == s5["device_allocs"] + 1 and
              s6["reserved_bytes"] - s5["reserved_bytes"] == seg(rl),
              "memory: a large request reserves a new segment of %d bytes" % seg(rl),
              "reserved grew by %d" % (s6["reserved_bytes"] - s5["reserved_bytes"]))
    c.close()

    sm.reset_peak_stats(d)
    s7 = sm.memory_stats(d)
    check(s7["peak_allocated_bytes"] == s7["allocated_bytes"] and
          s7["peak_reserved_bytes"] == s7["reserved_bytes"],
          "memory: reset_peak_stats restarts the peaks from the current values", str(s7))
    x = sm.empty(n, dtype="float32", device=d)
    peak = sm.memory_stats(d)["peak_allocated_bytes"]
    x.close()
    s8 = sm.memory_stats(d)
    check(peak == s7["allocated_bytes"] + r and s8["peak_allocated_bytes"] == peak and
          s8["allocated_bytes"] == s7["allocated_bytes"],
          "memory: the peak records the allocation and survives its free",
          "peak %d, after %s" % (peak, s8))

    y = sm.zeros(n, dtype="float32", device=d)
    st = sm.memory_stats(d)
    # What a failing check_freed prints: y's block, held by y's storage.
    listed = pool_contents(d, limit=10 ** 6)
    with y.storage() as ys:
        y_storage = ys.id
    check(" allocated size=%d requested=%d storage=%d " % (r, nbytes, y_storage) in listed,
          "memory: pool_contents (a failing leak check's detail) lists a live block", listed)
    text = sm.memory_summary(d)
    lines = text.splitlines()
    want_name = "%s:%d" % ("cuda" if IS_CUDA else "cpu", sm.Device(d).index)
    # Rows: a name, then (for sizes) the size in readable units, then the
    # exact number last.
    fields = {}
    for line in lines[1:]:
        parts = line.split()
        for i, p in enumerate(parts):
            if p[:1].isdigit():
                if parts[-1].isdigit():
                    fields[" ".join(parts[:i])] = int(parts[-1])
                break
    check(bool(lines) and want_name in lines[0], "memory_summary names the device " + want_name,
          repr(lines[:1]))
    check(fields.get("allocated (live storages)") == st["allocated_bytes"] and
          fields.get("active storages") == st["active_storages"] and
          fields.get("reserved (allocated + cached)") == st["reserved_bytes"] and
          fields.get("requested (before rounding)") == st["requested_bytes"] and
          st["allocated_bytes"] > 0,
          "memory_summary shows memory_stats' numbers", "%s vs %s" % (fields, st))
    y.close()

    s9 = sm.memory_stats(d)
    sm.empty_cache(d)
    s10 = sm.memory_stats(d)
    check(s10["reserved_bytes"] < s9["reserved_bytes"] and
          s10["device_frees"] > s9["device_frees"],
          "memory: empty_cache returns the cached blocks", "%s -> %s" % (s9, s10))
    check(all(s10[k] == s9[k] for k in ("allocated_bytes", "active_storages", "num_allocs")),
          "memory: empty_cache frees nothing live", "%s -> %s" % (s9, s10))
    if fresh:
        check(s10["reserved_bytes"] == 0 and s10["allocated_bytes"] == 0,
              "memory: after everything is closed and the cache emptied, nothing is held",
              str(s10))
    else:
        check(s10["reserved_bytes"] >= s10["allocated_bytes"],
              "memory: after empty_cache reserved >= allocated (segments with live blocks)",
              str(s10))


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------

def section_creation():
    for name in ALL_DTYPES:
        what = "creation %s" % name
        nd = exch(name)
        z = sm.zeros(2, 3, dtype=name, device=DEV)
        check(z.device == DEV and z.dtype == name and z.shape == (2, 3) and z.strides == (3, 1),
              what + ": zeros metadata", "%s %s %s %s" % (z.device, z.dtype, z.shape, z.strides))
        check_values(what + " zeros", z, np.zeros((2, 3), nd))
        o = sm.ones((2, 3), dtype=name, device=DEV)
        check_values(what + " ones", o, as_dtype(np.ones((2, 3)), name))
        val = True if name == "bool" else (2 - 3j if name in COMPLEX else 5)
        f = sm.full([2, 3], val, dtype=name, device=DEV)
        check_values(what + " full(%r)" % (val,), f, as_dtype(np.full((2, 3), val), name))
        e = sm.empty((4, 5), dtype=name, device=DEV)
        check(e.device == DEV and e.dtype == name and e.shape == (4, 5) and
              e.nbytes == 20 * sm.dtype_size(name), what + ": empty metadata")
        es = sm.empty_strided((2, 3), (1, 2), dtype=name, device=DEV)
        check(es.strides == (1, 2) and es.device == DEV and es.storage_nbytes ==
              6 * sm.dtype_size(name), what + ": empty_strided strides", str(es.strides))
        zl = sm.zeros_like(f)
        fl = sm.full_like(o, 0 if name == "bool" else 7)
        check(zl.device == DEV and zl.dtype == name and fl.device == DEV,
              what + ": *_like keep device and dtype")
        check_values(what + " full_like", fl, as_dtype(np.full((2, 3), 0 if name == "bool" else 7),
                                                      name))
        el = sm.empty_like(f, dtype="float64", device="cpu")
        check(el.device == "cpu" and el.dtype == "float64", what + ": empty_like(dtype, device)")
        for t in (z, o, f, e, es, zl, fl, el):
            t.close()

    a = sm.arange(7, device=DEV)
    check(a.dtype == "int64" and a.device == DEV, "arange(7): int64 on the device")
    check_values("arange(7)", a, np.arange(7, dtype=np.int64))
    b = sm.arange(0, 1, 0.125, device=DEV)
    check(b.dtype == "float32", "arange with a float step: float32")
    check_values("arange(0, 1, 0.125)", b, np.arange(0, 1, 0.125, dtype=np.float32))
    c = sm.arange(10, -2, -3, dtype="int16", device=DEV)
    check_values("arange(10, -2, -3, int16)", c, np.arange(10, -2, -3, dtype=np.int16))
    e = sm.arange_n(1.5, 0.5, 6, "float64", device=DEV)
    check_values("arange_n(1.5, 0.5, 6)", e, 1.5 + 0.5 * np.arange(6))
    f = sm.arange_n(-3, 2, 5, "bfloat16", device=DEV)
    check_values("arange_n bfloat16", f, bf16_bits(-3.0 + 2 * np.arange(5)))
    g = sm.arange_n(1, 1, 4, "complex64", device=DEV)
    check_values("arange_n complex64", g, np.arange(1, 5).astype(np.complex64))
    for t in (a, b, c, e, f, g):
        t.close()
    if hasattr(sm, "linspace"):
        t = sm.linspace(0, 1, 5, device=DEV)
        check_values("linspace", t, np.linspace(0, 1, 5).astype(exch(t.dtype)))
        t.close()
    else:
        not_run("linspace", "the binding has no linspace (arange/arange_n only)")

    t = sm.tensor([[1, 2, 3], [4, 5, 6]], device=DEV)
    check(t.dtype == "int64" and t.device == DEV, "tensor(nested ints): int64 (PyTorch's default)")
    check_values("tensor(nested ints)", t, np.array([[1, 2, 3], [4, 5, 6]]))
    u = sm.tensor([[1.5, -2.25], [3, 4]], dtype="float16", device=DEV)
    check_values("tensor(list, float16)", u, np.array([[1.5, -2.25], [3, 4]], np.float16))
    vals = [1.00390625, -2.5, 3.3, 1e10]
    w = sm.tensor(vals, dtype="bfloat16", device=DEV)
    check_values("tensor(list, bfloat16) holds values (rounded to nearest even)", w,
                 bf16_bits(np.array(vals, np.float32)))
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = sm.tensor(arr, device=DEV)
    check_values("tensor(NumPy array)", x, arr)
    y = sm.tensor(x)
    check(y.device == DEV and not y.same_storage(x), "tensor(device tensor): a new copy there")
    check_values("tensor(device tensor)", y, arr)
    yc = sm.tensor(x, device="cpu", dtype="float64")
    check(yc.device == "cpu", "tensor(device tensor, device='cpu')")
    check_values("tensor(device tensor, cpu, float64)", yc, arr.astype(np.float64))
    z = sm.tensor(2.5 + 1j, device=DEV)
    check(z.shape == () and z.dtype == "complex64",
          "tensor(complex scalar): 0-d complex64 (PyTorch's default)")
    check_values("tensor(complex scalar)", z, np.array(2.5 + 1j, np.complex64))
    for t_ in (t, u, w, x, y, yc, z):
        t_.close()

    base = np.arange(48, dtype=np.float64).reshape(6, 8) * 1.5
    for label, src in [("strided [::2, ::-3]", base[::2, ::-3]),
                       ("Fortran order", np.asfortranarray(base)),
                       ("big-endian >f8", base.astype(">f8")),
                       ("0-d", np.array(3.25))]:
        t = sm.from_numpy(src, device=DEV)
        check(t.device == DEV and t.dtype == "float64" and t.shape == src.shape and
              t.is_contiguous(), "from_numpy %s: row-major on the device" % label)
        check_values("from_numpy %s" % label, t, np.array(src, dtype=np.float64, order="C"))
        t.close()
    t = sm.from_numpy(base, device=DEV, dtype="float16")
    check_values("from_numpy(float64, dtype=float16) converts as astype", t,
                 base.astype(np.float16))
    t.close()
    bits = bf16_bits(base.astype(np.float32))
    t = sm.from_numpy(bits, device=DEV, dtype="bfloat16")
    check(t.dtype == "bfloat16", "from_numpy(uint16 bits, dtype=bfloat16)")
    check_values("from_numpy bfloat16 bits", t, bits)
    t.close()


# ---------------------------------------------------------------------------
# dtypes: round trips, scalars, conversions
# ---------------------------------------------------------------------------

def section_dtypes():
    for name in ALL_DTYPES:
        what = "dtype %s" % name
        arr = sample(name).reshape(3, 4)
        t = sm.from_numpy(arr, device=DEV, dtype=name)
        check(t.dtype == name and t.device == DEV, what + ": on the device")
        check_values(what + " round trip (bit for bit)", t, arr)
        tt = t.T
        check_values(what + " transposed view copied out", tt, arr.T)
        c = t.cpu()
        check(c.device == "cpu", what + ": cpu() is on the CPU")
        check_values(what + " cpu()", c, arr)
        back = c.to(DEV)
        check_values(what + " cpu -> device -> cpu", back, arr)
        cl = tt.clone()
        check(cl.strides == tt.strides and not cl.same_storage(t),
              what + ": clone of the transpose keeps its strides, new storage")
        check_values(what + " clone of the transpose", cl, arr.T)
        one = t[0, 2]
        got = one.item()
        if name == "bfloat16":
            ok = got == float(bf16_values(arr[0, 2]))
        else:
            ok = np.array(got, dtype=arr.dtype).tobytes() == arr[0, 2].tobytes()
        check(ok and one.shape == (), what + ": item() of t[0, 2]", "%r vs %r" % (got, arr[0, 2]))
        if name in COMPLEX:
            check(complex(one) == complex(arr[0, 2]), what + ": complex(t[0, 2])")
        elif name != "bool":
            ref = float(bf16_values(arr[0, 2])) if name == "bfloat16" else float(arr[0, 2])
            check(float(one) == ref and int(one) == int(ref), what + ": float()/int() of t[0, 2]")
        else:
            check(bool(one) == bool(arr[0, 2]), what + ": bool(t[0, 2])")
        got_list = t.tolist()
        want_list = (bf16_values(arr) if name == "bfloat16" else arr).tolist()
        check(same_scalars(got_list, want_list) and len(got_list) == 3,
              what + ": tolist()", "%r vs %r" % (got_list, want_list))
        for x in (t, tt, c, back, cl, one):
            x.close()

    # to(dtype) between every pair, on a transposed (strided) view.
    ints = np.array([0, 1, 2, 3, 7, 42, 100, 127, 5, 9, 11, 64], dtype=np.float64)
    fracs = np.array([0, 1, 2.5, 3, 7, 42, 100, 127, 0.75, 9, 11.5, 64], dtype=np.float64)
    imag = np.array([0, 2, 0, -1, 0, 0, 3, 0, 0, 0.5, 0, 0], dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real discards the imaginary part
        for src in ALL_DTYPES:
            if src == "bool":
                vals = (ints.astype(np.int64) % 3 == 0)
            elif src in COMPLEX:
                vals = fracs + 1j * imag
                vals[0] = 2j  # zero real part, nonzero imaginary: bool True
            elif src in INTS:
                vals = ints
            else:
                vals = fracs
            arr = as_dtype(vals, src).reshape(2, 6)
            lv = logical(arr, src)  # the values as they are held
            t = sm.from_numpy(arr, device=DEV, dtype=src)
            view = t.T
            bad = []
            for dst in ALL_DTYPES:
                r = view.to(dtype=dst)
                if dst == "bfloat16":
                    want = bf16_bits((lv.real if np.iscomplexobj(lv) else lv).astype(np.float32))
                else:
                    want = lv.astype(exch(dst))
                want = want.T
                got = r.numpy()
                if not bits_equal(got, want):
                    bad.append("%s (%s)" % (dst, describe_diff(got, want)))
                elif r.strides != view.strides or r.device != DEV or r.dtype != dst:
                    bad.append("%s (strides %s, device %s)" % (dst, r.strides, r.device))
                r.close()
            check(not bad, "to(dtype) from %s on a transposed view: all %d targets match "
                  "NumPy's astype, strides kept" % (src, len(ALL_DTYPES)), "; ".join(bad)[:600])
            view.close()
            t.close()


# ---------------------------------------------------------------------------
# to / cpu / contiguous / clone
# ---------------------------------------------------------------------------

def section_to():
    ref = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5.5
    h = sm.from_numpy(ref)
    d, copied = h.to(DEV, return_copied=True)
    check(d.device == DEV and copied == IS_CUDA and d.same_storage(h) != IS_CUDA,
          "to(device) from the CPU: %s" % ("a copy" if IS_CUDA else "the same data"),
          "copied=%r device=%s" % (copied, d.device))
    check_values("to(device)", d, ref)
    d2, copied2 = d.to(device=DEV, return_copied=True)
    check(not copied2 and d2.same_storage(d) and d2.data_ptr == d.data_ptr,
          "to(its own device): no copy")
    p = d.permute(2, 0, 1)
    f64, c64 = p.to(dtype="float64", return_copied=True)
    check(c64 and f64.device == DEV and f64.dtype == "float64" and f64.strides == p.strides,
          "to(dtype) on the device: a copy with the permuted strides",
          "copied=%r strides %s vs %s" % (c64, f64.strides, p.strides))
    check_values("to(float64) of a permuted view", f64, ref.transpose(2, 0, 1).astype(np.float64))
    both = p.to(device="cpu", dtype="float16")
    check(both.device == "cpu" and both.dtype == "float16" and both.strides == p.strides,
          "to(cpu, float16) of a permuted device view: converted, strides kept",
          str(both.strides))
    check_values("to(cpu, float16)", both, ref.transpose(2, 0, 1).astype(np.float16))
    c = p.cpu()
    check(c.device == "cpu" and c.same_storage(p) != IS_CUDA, "cpu() of a device view")
    check_values("cpu() of a permuted device view", c, ref.transpose(2, 0, 1))
    a1 = np.asarray(p)
    a2 = np.array(p)
    check(bits_equal(a1, ref.transpose(2, 0, 1)) and bits_equal(a2, ref.transpose(2, 0, 1)),
          "np.asarray / np.array of a device view: NumPy's values")
    cont, cc = p.contiguous(return_copied=True)
    check(cc and cont.is_contiguous() and cont.device == DEV and not cont.same_storage(d),
          "contiguous() of a permuted view: a row-major copy on the device")
    check_values("contiguous() of a permuted view", cont, ref.transpose(2, 0, 1))
    same, sc = d.contiguous(return_copied=True)
    check(not sc and same.same_storage(d), "contiguous() of a contiguous tensor: no copy")
    cl = p.clone()
    check(cl.strides == p.strides and not cl.same_storage(d), "clone() preserves the strides")
    cl2 = p.clone("contiguous")
    check(cl2.strides == (6, 3, 1), "clone('contiguous') is row-major", str(cl2.strides))
    check_values("clone('contiguous')", cl2, ref.transpose(2, 0, 1))
    ref4 = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    t4 = sm.from_numpy(ref4, device=DEV)
    cl4, c4 = t4.contiguous("channels_last", return_copied=True)
    check(c4 and cl4.strides == (60, 1, 15, 3) and cl4.is_contiguous("channels_last"),
          "contiguous('channels_last') on the device: NHWC strides", str(cl4.strides))
    check_values("contiguous('channels_last')", cl4, ref4)
    neg = d.flip([0, 2])
    cln = neg.clone()
    check(all(s > 0 for s in cln.strides), "clone of a flipped view: positive strides",
          str(cln.strides))
    check_values("clone of a flipped view", cln, ref[::-1, :, ::-1])
    for t in (h, d, d2, p, f64, both, c, cont, same, cl, cl2, t4, cl4, neg, cln):
        t.close()


# ---------------------------------------------------------------------------
# views
# ---------------------------------------------------------------------------

def section_views():
    base_ref = (np.arange(4 * 5 * 6, dtype=np.float32) * 0.5).reshape(4, 5, 6)
    t = sm.from_numpy(base_ref, device=DEV)
    cases = [
        ("t[1:, ::2, 1::3]", t[1:, ::2, 1::3], base_ref[1:, ::2, 1::3]),
        ("t[::-1]", t[::-1], base_ref[::-1]),
        ("t[::-2, 3:0:-1, ::-4]", t[::-2, 3:0:-1, ::-4], base_ref[::-2, 3:0:-1, ::-4]),
        ("flip([0, 2])", t.flip([0, 2]), base_ref[::-1, :, ::-1]),
        ("permute(2, 0, 1)", t.permute(2, 0, 1), base_ref.transpose(2, 0, 1)),
        ("T", t.T, base_ref.T),
        ("transpose(0, 2)", t.transpose(0, 2), base_ref.swapaxes(0, 2)),
        ("movedim(0, 2)", t.movedim(0, 2), np.moveaxis(base_ref, 0, 2)),
        ("select(1, 3)", t.select(1, 3), base_ref[:, 3]),
        ("t[2, :, -1]", t[2, :, -1], base_ref[2, :, -1]),
        ("narrow(2, 1, 4)", t.narrow(2, 1, 4), base_ref[:, :, 1:5]),
        ("t[None, 1, ..., None]", t[None, 1, ..., None], base_ref[None, 1, ..., None]),
        ("unsqueeze(1)", t.unsqueeze(1), base_ref[:, None]),
        ("t[:, 2:3].squeeze(1)", t[:, 2:3].squeeze(1), base_ref[:, 2]),
        ("expand", t[:, :1].expand(3, 4, 5, 6), np.broadcast_to(base_ref[:, :1], (3, 4, 5, 6))),
        ("diagonal(0, 1, 2)", t.diagonal(0, 1, 2), np.diagonal(base_ref, 0, 1, 2)),
        ("diagonal(2, 1, 2)", t.diagonal(2, 1, 2), np.diagonal(base_ref, 2, 1, 2)),
        ("diagonal(-1, 0, 1)", t.diagonal(-1, 0, 1), np.diagonal(base_ref, -1, 0, 1)),
        ("unfold(2, 3, 2)", t.unfold(2, 3, 2),
         np.lib.stride_tricks.sliding_window_view(base_ref, 3, axis=2)[:, :, ::2]),
        ("view(20, 6)", t.view(20, 6), base_ref.reshape(20, 6)),
        ("view(-1)", t.view(-1), base_ref.reshape(-1)),
        ("flatten(0, 1)", t.flatten(0, 1), base_ref.reshape(20, 6)),
        ("unflatten(2, (2, 3))", t.unflatten(2, (2, 3)), base_ref.reshape(4, 5, 2, 3)),
        ("as_strided", t.as_strided((3, 4), (7, 2), 5),
         np.lib.stride_tricks.as_strided(base_ref.reshape(-1)[5:], (3, 4), (28, 8))),
        ("T[1:, ::-2]", t.T[1:, ::-2], base_ref.T[1:, ::-2]),
    ]
    for what, v, ref in cases:
        check_view("view " + what, v, ref, t, base_ref)
    for k, (v, ref) in enumerate(zip(t.split(2, 2), np.split(base_ref, 3, axis=2))):
        check_view("view split(2, 2)[%d]" % k, v, ref, t, base_ref)
        v.close()
    chunks = t.chunk(3, 1)
    check(len(chunks) == 3 and [c.shape[1] for c in chunks] == [2, 2, 1], "chunk(3, 1) sizes")
    check_view("view chunk(3, 1)[2]", chunks[2], base_ref[:, 4:5], t, base_ref)
    for c in chunks:
        c.close()
    st = t.storage()
    sv = st.tensor((5, 2), (1, 10), 3, "float32")
    check(st.device == DEV and st.nbytes == base_ref.nbytes and st.data_ptr == t.data_ptr,
          "Storage of a device tensor: device, size, address")
    check_view("view Storage.tensor((5, 2), (1, 10), 3)", sv,
               np.lib.stride_tricks.as_strided(base_ref.reshape(-1)[3:], (5, 2), (4, 40)),
               t, base_ref)
    raw = st.tensor((8,), (1,), 0, "uint8")
    check_values("Storage.tensor as uint8 (the raw bytes)", raw,
                 np.frombuffer(base_ref.tobytes()[:8], np.uint8))
    for x in (sv, raw, st):
        x.close()
    for _, v, _ in cases:
        v.close()

    # reshape: a view when the strides allow, else a copy.
    r, copied = t.reshape(5, 24, return_copied=True)
    check(not copied and r.same_storage(t) and not t.reshape_would_copy(5, 24),
          "reshape of a contiguous tensor: a view")
    check_values("reshape(5, 24)", r, base_ref.reshape(5, 24))
    tt = t.T
    r2, copied2 = tt.reshape(-1, return_copied=True)
    check(copied2 and not r2.same_storage(t) and tt.reshape_would_copy(-1) and
          r2.device == DEV, "reshape of a transposed view: a copy on the device")
    check_values("reshape(-1) of T", r2, base_ref.T.reshape(-1))
    s = t[:, 1:3]
    r3, copied3 = s.reshape(4, 2, 2, 3, return_copied=True)
    check(not copied3 and r3.same_storage(t), "reshape splitting a dim of a slice: a view")
    check_values("reshape of a slice", r3, base_ref[:, 1:3].reshape(4, 2, 2, 3))
    raises("view() that the strides cannot express", sm.ShapeError, lambda: tt.view(-1))
    for x in (r, r2, r3, tt, s):
        x.close()

    # A write through a view shows in the base and in other views.
    ref = base_ref.copy()
    v = t.permute(2, 0, 1)[::-2, 1:3]
    v.add_(100.0)
    ref.transpose(2, 0, 1)[::-2, 1:3] += 100
    check_values("add_ through a permuted, stepped view: the base", t, ref)
    w = t.diagonal(1, 1, 2)
    w.fill_(-1.0)
    np.einsum("ijj->ij", ref[:, :, 1:])[:, :5] = -1  # the offset-1 diagonal of dims 1, 2
    check_values("fill_ through diagonal(1): the base", t, ref)
    u = t.unfold(2, 2, 2)
    u.mul_(2.0)
    ref *= 2  # windows of 2, step 2, cover dim 2 exactly once
    check_values("mul_ through unfold windows that tile the dim: the base", t, ref)
    for x in (v, w, u, t):
        x.close()


# ---------------------------------------------------------------------------
# indexing and assignment
# ---------------------------------------------------------------------------

def section_indexing():
    ref = np.arange(5 * 6, dtype=np.float32).reshape(5, 6) - 7
    t = sm.from_numpy(ref, device=DEV)
    reads = [
        ("t[[3, 0, 3]]", lambda: t[[3, 0, 3]], ref[[3, 0, 3]]),
        ("t[:, np.array([5, -1, 0])]", lambda: t[:, np.array([5, -1, 0])], ref[:, [5, -1, 0]]),
        ("t[np.array([[0, 1], [4, 2]])]", lambda: t[np.array([[0, 1], [4, 2]])],
         ref[np.array([[0, 1], [4, 2]])]),
        ("t[mask]", lambda: t[ref[:, 0] > -3], ref[ref[:, 0] > -3]),
        ("t[mask2d]", lambda: t[ref > 10], ref[ref > 10]),
        ("t[1, [2, 4]]", lambda: t[1, [2, 4]], ref[1, [2, 4]]),
        ("t[::-1, [1, 1]]", lambda: t[::-1, [1, 1]], ref[::-1, [1, 1]]),
    ]
    for what, fn, want in reads:
        g = fn()
        check(g.device == DEV and not g.same_storage(t), "index %s: a gathered copy on the device"
              % what)
        check_values("index " + what, g, want)
        g.close()
    for idx_dtype in ("int32", "int64"):
        idx = sm.tensor([4, -5, 2], dtype=idx_dtype, device=DEV)
        g = t[:, idx]
        check_values("index t[:, device %s tensor]" % idx_dtype, g, ref[:, [4, -5, 2]])
        g.close()
        idx.close()

    # Assignment (through the transpose: the writes land through strides).
    work = ref.copy()
    T = t.T
    W = work.T
    T[1:4, ::2] = 5
    W[1:4, ::2] = 5
    check_values("assign t.T[1:4, ::2] = scalar", t, work)
    src = sm.from_numpy(np.arange(5, dtype=np.float64) * -1, device=DEV)
    T[2] = src
    W[2] = np.arange(5, dtype=np.float64) * -1  # -0.0 first, as src
    check_values("assign t.T[2] = device tensor (float64 -> float32)", t, work)
    hsrc = sm.from_numpy(np.array([9, 8, 7, 6, 5], np.int16))
    T[3] = hsrc
    W[3] = [9, 8, 7, 6, 5]
    check_values("assign t.T[3] = CPU int16 tensor", t, work)
    arr = np.array([[0.5], [1.5], [2.5]], np.float64)
    T[1:4, 1:4] = arr
    W[1:4, 1:4] = arr
    check_values("assign t.T[1:4, 1:4] = NumPy (3, 1) array (broadcast)", t, work)
    T[..., ::-2] = [[11], [12], [13], [14], [15], [16]]
    W[..., ::-2] = [[11], [12], [13], [14], [15], [16]]
    check_values("assign t.T[..., ::-2] = nested list", t, work)
    before = t.numpy()
    e = raises("assign through an integer-array index", IndexError,
               lambda: t.__setitem__([0, 1], 3.0))
    check(e is not None and bits_equal(t.numpy(), before),
          "assign through an integer-array index writes nothing")
    for x in (T, src, hsrc, t):
        x.close()

    ti = sm.zeros(2, 3, dtype="int32", device=DEV)
    ti[0] = [1.9, -1.9, 2.5]
    wi = np.zeros((2, 3), np.int32)
    wi[0] = [1.9, -1.9, 2.5]
    check_values("assign floats into int32 truncates as NumPy", ti, wi)
    ti.close()
    tz = sm.zeros(3, 2, dtype="complex64", device=DEV)
    tz.T[1] = 1 - 2j
    tz[0] = np.array([3j, 4])
    wz = np.zeros((3, 2), np.complex64)
    wz.T[1] = 1 - 2j
    wz[0] = [3j, 4]
    check_values("assign complex scalar / array into complex64", tz, wz)
    tz.close()
    tb = sm.zeros(4, dtype="bfloat16", device=DEV)
    tb[1:3] = 1.00390625  # not a bfloat16: rounds to 1.0 (nearest even)
    tb[3] = np.float32(-2.5)
    check_values("assign into bfloat16 rounds to nearest even", tb,
                 bf16_bits(np.array([0, 1.00390625, 1.00390625, -2.5], np.float32)))
    tb.close()


# ---------------------------------------------------------------------------
# in-place ops
# ---------------------------------------------------------------------------

def section_inplace():
    for name in ALL_DTYPES:
        if name == "bool":
            inplace_bool()
        elif name in COMPLEX:
            inplace_complex(name)
        else:
            inplace_real(name)


def inplace_real(name):
    """A chain of in-place ops through t.T[::-1] (strides (-1, 4)), the whole
    base compared after each, with the reference computed in int64 (wrapping
    like the dtype) or float64 and converted."""
    is_int = name in INTS
    acc = np.arange(12, dtype=np.int64 if is_int else np.float64).reshape(3, 4)
    t = from_logical(acc, name)
    view = t.T[::-1]

    def ref_view():
        return acc.T[::-1]

    def cmp(what, rtol=None):
        want = as_dtype(acc, name) if not is_int else acc.astype(exch(name))
        return check_values("in-place %s %s on t.T[::-1]" % (name, what), t, want, rtol=rtol)

    def wrap():  # integer results wrap to the dtype, as the library's compute does
        if is_int:
            acc[...] = acc.astype(exch(name)).astype(np.int64) if name != "uint64" else \
                acc.astype(np.uint64).astype(np.int64)

    view.add_(3)
    ref_view()[...] += 3
    cmp("add_(3)")
    view.mul_(2)
    ref_view()[...] *= 2
    cmp("mul_(2)")
    view.sub_(5)
    ref_view()[...] -= 5
    cmp("sub_(5)")
    r = view.clamp_(4, 20)
    ref_view()[...] = np.clip(ref_view(), 4, 20)
    check(r is view, "in-place %s: clamp_ returns self" % name)
    cmp("clamp_(4, 20)")
    view.neg_()
    ref_view()[...] *= -1
    wrap()
    cmp("neg_()")
    view.neg_()
    ref_view()[...] *= -1
    wrap()
    cmp("neg_() again")
    if name not in INTS or name in SIGNED:
        view.sub_(10)
        ref_view()[...] -= 10
        cmp("sub_(10)")
        view.abs_()
        ref_view()[...] = np.abs(ref_view())
        cmp("abs_()")
        view.sub_(5)
        ref_view()[...] -= 5
        view.relu_()
        ref_view()[...] = np.maximum(ref_view(), 0)
        cmp("sub_(5) then relu_()")
    else:
        view.abs_()
        view.relu_()
        cmp("abs_() and relu_() (identities on unsigned)")
    other_ref = np.array([1, 2, 3], dtype=np.int64 if is_int else np.float64)
    other = from_logical(other_ref, name)
    view.add_(other, alpha=2)
    ref_view()[...] += 2 * other_ref
    cmp("add_(device tensor (3,), alpha=2) (broadcast)")
    other_cpu = sm.from_numpy(np.array([[2], [1], [1], [3]], dtype=exch("int8" if is_int else
                                                                       "float32")))
    view.mul_(other_cpu)
    ref_view()[...] *= np.array([[2], [1], [1], [3]])
    wrap()
    cmp("mul_(CPU tensor (4, 1)) (broadcast, promoted)")
    view[1:3, ::2].fill_(9)
    ref_view()[1:3, ::2] = 9
    cmp("fill_(9) on view[1:3, ::2]")
    view[0] = 7
    ref_view()[0] = 7
    cmp("view[0] = 7")
    view.fill_(other)
    ref_view()[...] = other_ref
    cmp("fill_(device tensor) (broadcast)")
    view += 1
    ref_view()[...] += 1
    view *= 3
    ref_view()[...] *= 3
    view -= other
    ref_view()[...] -= other_ref
    wrap()
    cmp("+= 1, *= 3, -= tensor")
    if not is_int:
        view.div_(4)
        ref_view()[...] /= 4
        cmp("div_(4)")
        view /= other
        ref_view()[...] /= other_ref
        tol = {"float16": 2e-3, "bfloat16": 1e-2}.get(name, 1e-6)
        cmp("/= device tensor", rtol=tol)
        acc[...] = logical(t.numpy(), name)  # continue from the device's values
        view.sqrt_()
        ref_view()[...] = np.sqrt(ref_view())
        cmp("sqrt_()", rtol=tol)
        acc[...] = logical(t.numpy(), name)
        view.mul_(0.25)
        ref_view()[...] *= 0.25
        view.exp_()
        ref_view()[...] = np.exp(ref_view())
        cmp("mul_(0.25) then exp_()", rtol=tol)
    view.zero_()
    ref_view()[...] = 0
    cmp("zero_()")
    for x in (other, other_cpu, view, t):
        x.close()


def inplace_bool():
    acc = np.arange(12).reshape(3, 4) % 2 == 0
    t = sm.from_numpy(acc, device=DEV)
    view = t.T[::-1]
    rv = acc.T[::-1]
    view[1:, ::2].fill_(True)
    rv[1:, ::2] = True
    check_values("in-place bool fill_(True) on t.T[::-1][1:, ::2]", t, acc)
    view[0].zero_()
    rv[0] = False
    check_values("in-place bool zero_() on t.T[::-1][0]", t, acc)
    view[2] = [True, False, True]
    rv[2] = [True, False, True]
    check_values("in-place bool view[2] = list", t, acc)
    view.close()
    t.close()


def inplace_complex(name):
    acc = (np.arange(12) + 1j * (np.arange(12) % 5 - 2)).reshape(3, 4)
    t = sm.from_numpy(acc.astype(exch(name)), device=DEV)
    view = t.T[::-1]
    rv = acc.T[::-1]
    tol = 1e-6 if name == "complex64" else 1e-13

    def cmp(what, rtol=None):
        check_values("in-place %s %s on t.T[::-1]" % (name, what), t, acc.astype(exch(name)),
                     rtol=rtol)

    view.add_(1 + 2j)
    rv += 1 + 2j
    cmp("add_(1+2j)")
    view.mul_(2j)
    rv *= 2j
    cmp("mul_(2j)")
    view.sub_(0.5)
    rv -= 0.5
    cmp("sub_(0.5)")
    view.neg_()
    rv *= -1
    cmp("neg_()")
    other = sm.from_numpy(np.array([1 - 1j, 2, 0.5j], dtype=exch(name)), device=DEV)
    view.add_(other, alpha=2)
    rv += 2 * np.array([1 - 1j, 2, 0.5j])
    cmp("add_(device tensor, alpha=2)")
    view.div_(2)
    rv /= 2
    cmp("div_(2)")
    view.div_(other)
    rv /= np.array([1 - 1j, 2, 0.5j])
    cmp("div_(device tensor) (Smith's division)", rtol=tol)
    acc[...] = t.numpy()
    view[1:3, 1:].fill_(3 - 1j)
    rv[1:3, 1:] = 3 - 1j
    cmp("fill_(3-1j) on a sub-view")
    view.sqrt_()
    acc[...] = np.sqrt(acc)
    cmp("sqrt_() (principal root)", rtol=tol)
    acc[...] = t.numpy()
    view.mul_(0.125)
    rv *= 0.125
    view.exp_()
    acc[...] = np.exp(acc)
    cmp("mul_(0.125) then exp_()", rtol=tol)
    other.close()
    view.close()
    t.close()


# ---------------------------------------------------------------------------
# copies across devices
# ---------------------------------------------------------------------------

def section_copies():
    ref = np.arange(6 * 8, dtype=np.float32).reshape(6, 8) / 4
    d = sm.from_numpy(ref, device=DEV)
    work = ref.copy()
    row = sm.from_numpy(np.arange(3, dtype=np.float64) * -10)  # on the CPU
    d.T[::-3, 1:4].copy_(row)
    work.T[::-3, 1:4] = np.arange(3, dtype=np.float64) * -10  # -0.0 first, as row
    check_values("copy_: a CPU float64 row broadcast into a device view (converted)", d, work)
    h = sm.zeros(8, 6, dtype="float64")
    h[::-1].copy_(d.T)
    check_values("copy_: device transposed view -> CPU flipped view (converted)", h,
                 work.T[::-1].astype(np.float64))
    h2 = sm.empty(6, 8, dtype="int32")
    sm.copy_into(h2, d)
    check_values("copy_into: device float32 -> CPU int32", h2, work.astype(np.int32))
    d2 = sm.zeros(8, 6, dtype="float16", device=DEV)
    d2.copy_(d.T)
    check_values("copy_: device -> device transposed, float16", d2, work.T.astype(np.float16))
    d3 = sm.zeros(3, 8, device=DEV)
    d3.copy_(np.arange(8, dtype=np.int64))
    check_values("copy_: a NumPy int64 array broadcast into a device tensor", d3,
                 np.tile(np.arange(8, dtype=np.float32), (3, 1)))
    d3.copy_(2.5)
    check_values("copy_: a scalar", d3, np.full((3, 8), 2.5, np.float32))
    for x in (row, h, h2, d2, d3):
        x.close()

    if not IS_CUDA:
        not_run("copies pinned cuda_host <-> device", "no CUDA device (--device cpu)")
    else:
        pinned_copies(d, work)
    n = sm.cuda_device_count()
    if IS_CUDA and n >= 2:
        other = "cuda:%d" % ((sm.Device(DEV).index + 1) % n)
        o = d.T.to(other)
        check(o.device == other, "to(%s): on the other GPU" % other)
        check_values("to(%s) of a transposed view" % other, o, work.T)
        back = sm.zeros(6, 8, device=DEV)
        back.copy_(o.T)
        check_values("copy_ %s -> %s" % (other, DEV), back, work)
        o.close()
        back.close()
    else:
        not_run("copies between two GPUs", "%d CUDA device(s)" % n)
    d.close()


def pinned_copies(d, work):
    s0 = sm.memory_stats("cuda_host")
    p = sm.from_numpy(work, device="cuda_host")
    s1 = sm.memory_stats("cuda_host")
    check(p.device == "cuda_host" and p.__dlpack_device__() == (3, 0),
          "pinned: a cuda_host tensor")
    check(s1["allocated_bytes"] - s0["allocated_bytes"] == round_up(work.nbytes, ROUND) and
          s1["active_storages"] == s0["active_storages"] + 1,
          "pinned: memory_stats('cuda_host') counts the rounded block", "%s -> %s" % (s0, s1))
    check_values("pinned: from_numpy", p, work)
    a = np.asarray(p)
    check(a.__array_interface__["data"][0] == p.data_ptr, "pinned: np.asarray shares the memory")
    dd = sm.zeros(8, 6, device=DEV)
    dd.copy_(p.T)
    check_values("pinned -> device: copy_ of a transposed pinned view", dd, work.T)
    dd.mul_(-1.0)
    p.T[::-1].copy_(dd[::-1])
    sm.synchronize(DEV)
    check(bits_equal(a, -work), "device -> pinned: copy_ into a flipped pinned view, seen by NumPy",
          describe_diff(a, -work))
    p.T[::2].add_(1.0)  # an in-place op on a pinned view
    want = -work
    want.T[::2] += 1
    check(bits_equal(a, want), "pinned: add_ through a transposed pinned view, seen by NumPy",
          describe_diff(a, want))
    q = d.to("cuda_host")
    check(q.device == "cuda_host", "to('cuda_host') of a device tensor")
    check_values("to('cuda_host')", q, work)
    r = q.T.to(DEV)
    check_values("cuda_host -> device: to() of a transposed pinned view", r, work.T)
    for x in (dd, q, r):
        x.close()
    del a
    p.close()
    del p  # NumPy's view pinned p's handle: it goes with the object (see Tensor.close)
    check_freed("pinned: blocks given back after close", s0, "cuda_host")


# ---------------------------------------------------------------------------
# index_select
# ---------------------------------------------------------------------------

def section_index_select():
    for name in ALL_DTYPES:
        arr = sample(name)
        arr = np.concatenate([arr, arr[::-1]]).reshape(4, 6)
        t = sm.from_numpy(arr, device=DEV, dtype=name)
        for idx_dtype in ("int32", "int64"):
            idx_np = np.array([5, -1, 0, 2, 2, -6], dtype=idx_dtype)
            idx = sm.from_numpy(idx_np, device=DEV)
            g = t.index_select(1, idx)
            check(g.device == DEV and g.dtype == name and g.shape == (4, 6),
                  "index_select %s with a device %s index: metadata" % (name, idx_dtype))
            check_values("index_select %s dim 1, device %s index" % (name, idx_dtype), g,
                         np.take(arr, idx_np, axis=1))
            g.close()
            idx.close()
        g = t.T.index_select(1, [3, 0, -1])
        check_values("index_select %s of the transpose, a list index" % name, g,
                     np.take(arr.T, [3, 0, -1], axis=1))
        g.close()
        t.close()
    ref = np.arange(7 * 3, dtype=np.float64).reshape(7, 3)
    t = sm.from_numpy(ref, device=DEV)
    big = sm.from_numpy(np.array([6, 0, 5, 1, 4, 2, 3, 3], np.int64), device=DEV)
    g = t.index_select(0, big[::2])
    check_values("index_select with a strided device index", g, ref[[6, 5, 4, 3]])
    g.close()
    one = sm.tensor([4], dtype="int32", device=DEV)
    g = t.index_select(0, one.expand(5))
    check_values("index_select with an expanded (stride 0) device index", g, ref[[4] * 5])
    g.close()
    hidx = sm.from_numpy(np.array([-7, 6], np.int32))  # on the CPU
    g = t.index_select(0, hidx)
    check(g.device == DEV, "index_select with a CPU index: the result on the tensor's device")
    check_values("index_select with a CPU int32 index", g, ref[[-7, 6]])
    g.close()
    z = t.select(0, 2).select(0, 1)
    g = z.index_select(0, sm.tensor([0], device=DEV))
    check(g.shape == (), "index_select of a 0-d tensor gives a 0-d tensor")
    check_values("index_select of a 0-d tensor", g, ref[2, 1, ...])
    for x in (g, z, big, one, hidx, t):
        x.close()


# ---------------------------------------------------------------------------
# repr / str
# ---------------------------------------------------------------------------

def body(ref):
    return "tensor(" + np.array2string(ref, separator=", ", prefix="tensor(")


def section_repr():
    ref = (np.arange(12, dtype=np.float32).reshape(3, 4) - 4) / 3
    t = sm.from_numpy(ref, device=DEV)
    r = repr(t)
    check(r.startswith(body(ref) + ", ") and "device=%s" % DEV in r and
          "dtype=float32" in r and "strides=(4, 1)" in r and "offset" not in r,
          "repr of a device tensor: NumPy's values, dtype, device, strides", r)
    check(str(t) == r, "str == repr")
    v = t.T[::-1, 1:]
    rv = repr(v)
    check(rv.startswith(body(ref.T[::-1, 1:]) + ", ") and "device=%s" % DEV in rv and
          "strides=%s" % (v.strides,) in rv and
          "offset=%d, view of a 48-byte storage" % v.storage_offset in rv,
          "repr of a device view: values, strides, offset and storage size", rv)
    b = sm.tensor([1.5, -2.25, 3.0], dtype="bfloat16", device=DEV)
    check(repr(b).startswith(body(np.array([1.5, -2.25, 3.0], np.float32)) + ", ") and
          "dtype=bfloat16" in repr(b), "repr of a bfloat16 device tensor prints floats", repr(b))
    z = sm.from_numpy(np.array([1 + 2j, -0.5j], np.complex64), device=DEV)
    check(repr(z).startswith(body(np.array([1 + 2j, -0.5j], np.complex64)) + ", "),
          "repr of a complex64 device tensor", repr(z))
    big_ref = (np.arange(80 * 60, dtype=np.float32).reshape(80, 60) / 7)
    big = sm.from_numpy(big_ref, device=DEV)
    bv = big.T[::-2]
    rb = repr(bv)
    check(rb.startswith(body(big_ref.T[::-2]) + ", ") and "..." in rb,
          "repr of a large device view: NumPy's summarized printout", rb[:200])
    with np.printoptions(precision=2, threshold=10, edgeitems=2):
        small = repr(t)
        want = body(ref)
    check(small.startswith(want + ", "), "repr honours np.printoptions", small)
    e = sm.zeros(0, 3, device=DEV)
    check(repr(e).startswith("tensor([], shape=(0, 3), dtype=float32, device=%s" % DEV),
          "repr of an empty device tensor", repr(e))
    closed = sm.zeros(2, device=DEV)
    closed.close()
    check(repr(closed) == "<stridemem.Tensor (closed)>", "repr of a closed tensor")
    for x in (t, v, b, z, big, bv, e):
        x.close()


# ---------------------------------------------------------------------------
# copy / deepcopy / pickle
# ---------------------------------------------------------------------------

CHILD = r"""
import pickle, sys, json
sys.path.insert(0, sys.argv[1])
import stridemem as sm
t = pickle.loads(sys.stdin.buffer.read())
print(json.dumps({"device": str(t.device), "dtype": t.dtype.name, "shape": t.shape,
                  "strides": t.strides, "hex": t.numpy().tobytes().hex()}))
"""


def section_pickle():
    ref = np.arange(4 * 6, dtype=np.float32).reshape(4, 6) * 1.25
    t = sm.from_numpy(ref, device=DEV)
    v = t[1:, ::2]
    c = copy.copy(v)
    check(c is not v and c.handle == v.handle and c.data_ptr == v.data_ptr and
          c.strides == v.strides, "copy.copy: a new owner of the same view")
    c.close()
    check_values("copy.copy closed: the original still works", v, ref[1:, ::2])
    a, b = copy.deepcopy([t, v])
    check(a.device == DEV and b.device == DEV and a.same_storage(b) and not a.same_storage(t),
          "deepcopy([t, view]): one new storage on the device, shared by both")
    check(b.strides == v.strides and b.storage_offset == v.storage_offset,
          "deepcopy keeps the view's strides and offset")
    check_values("deepcopy of the view", b, ref[1:, ::2])
    a.fill_(0.0)
    check_values("deepcopy: writing the copy leaves the original", t, ref)
    check_values("deepcopy: the copied view sees the copy's write", b,
                 np.zeros((3, 3), np.float32))
    a.close()
    b.close()

    blobs = {}
    for what, x, want in [("T (dense, permuted)", t.T, ref.T),
                          ("[1:, ::2] (not dense)", v, ref[1:, ::2]),
                          ("bfloat16", sm.tensor([1.5, -3.0, 0.0078125], dtype="bfloat16",
                                                 device=DEV),
                           bf16_bits(np.array([1.5, -3.0, 0.0078125], np.float32))),
                          ("complex128", sm.from_numpy(np.array([[1 + 2j, 3], [-1j, 0]]).T,
                                                       device=DEV),
                           np.array([[1 + 2j, 3], [-1j, 0]]).T)]:
        data = pickle.dumps(x)
        y = pickle.loads(data)
        dense = x.is_contiguous("preserve")
        want_strides = x.strides if dense else el_strides(np.ascontiguousarray(want))
        check(y.device == DEV and y.dtype == x.dtype and y.shape == x.shape and
              y.strides == want_strides and not y.same_storage(x),
              "pickle %s: device, dtype, shape, strides (%s), a new storage"
              % (what, "kept" if dense else "row-major"),
              "%s %s %s %s" % (y.device, y.dtype, y.shape, y.strides))
        check_values("pickle %s" % what, y, want)
        blobs[what] = (data, want, want_strides, x.dtype.name)
        y.close()
        if x is not v:
            x.close()
    data, want, want_strides, dtype = blobs["T (dense, permuted)"]
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-c", CHILD, os.path.dirname(os.path.dirname(sm.__file__))],
                       input=data, capture_output=True, env=env, timeout=120)
    if p.returncode != 0:
        check(False, "pickle loads in another process", p.stderr.decode()[-400:])
    else:
        got = json.loads(p.stdout.decode().strip().splitlines()[-1])
        check(got["device"] == DEV and got["dtype"] == dtype and
              tuple(got["strides"]) == want_strides and
              bytes.fromhex(got["hex"]) == np.ascontiguousarray(want).tobytes(),
              "pickle loads in another process (on %s, same strides and bytes)" % DEV,
              str(got)[:300])
    v.close()
    t.close()


# ---------------------------------------------------------------------------
# array interfaces, DLPack device, from_blob
# ---------------------------------------------------------------------------

def section_interfaces():
    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = sm.from_numpy(ref, device=DEV)
    v = t.T[1:]
    if IS_CUDA:
        cai = v.__cuda_array_interface__
        check(cai["data"][0] == v.data_ptr and cai["shape"] == v.shape and
              cai["strides"] == tuple(s * 4 for s in v.strides) and cai["typestr"] == "<f4" and
              cai["version"] == 3 and cai["stream"] == (sm.get_stream(DEV) or 1),
              "__cuda_array_interface__ of a device view", str(cai))
        check(not hasattr(v, "__array_interface__"), "no __array_interface__ on a CUDA tensor")
        raises("__array__(copy=False) of a device tensor", ValueError,
               lambda: v.__array__(copy=False))
        a = np.asarray(v)
        check(bits_equal(a, ref.T[1:]) and a.__array_interface__["data"][0] != v.data_ptr,
              "np.asarray of a device tensor: a host copy with the values")
        check(t.__dlpack_device__() == (2, sm.Device(DEV).index), "__dlpack_device__ is (2, index)")
    else:
        check(not hasattr(v, "__cuda_array_interface__"), "no __cuda_array_interface__ on the CPU")
        a = np.asarray(v)
        check(a.__array_interface__["data"][0] == v.data_ptr and bits_equal(a, ref.T[1:]),
              "np.asarray of a CPU tensor shares its memory")
        a2 = v.__array__(copy=False)
        check(a2.__array_interface__["data"][0] == v.data_ptr, "__array__(copy=False) on the CPU")
        check(t.__dlpack_device__() == (1, 0), "__dlpack_device__ is (1, 0)")
        del a2
    del a
    w = sm.from_dlpack(v)
    check(w.data_ptr == v.data_ptr and w.strides == v.strides and w.device == DEV,
          "from_dlpack(our device view): zero copy, same strides")
    check_values("from_dlpack(our device view)", w, ref.T[1:])
    w.close()

    # from_blob over device memory, with an owner and on_free.
    freed = []
    live0 = sm.blob_live_count()
    b = sm.from_blob(t.data_ptr + 4, (4, 2), "float32", strides=(1, 4), device=DEV, owner=t,
                     on_free=lambda: freed.append(1))
    check(b.device == DEV and b.data_ptr == t.data_ptr + 4 and sm.blob_live_count() == live0 + 1,
          "from_blob over device memory: zero copy on the device")
    check_values("from_blob over device memory", b,
                 np.lib.stride_tricks.as_strided(ref.reshape(-1)[1:], (4, 2), (4, 16)))
    b.add_(100.0)
    want = ref.copy()
    want.reshape(-1)[1:9] += 100
    check_values("from_blob: a write shows in the owner's tensor", t, want)
    bv = b[1:]
    b.close()
    check(not freed, "from_blob: a view keeps the blob alive")
    bv.close()
    gc.collect()
    check(freed == [1] and sm.blob_live_count() == live0,
          "from_blob: on_free runs once when the last view dies", str(freed))
    if IS_CUDA:
        not_run("from_numpy_blob / as_tensor on the device",
                "CPU memory only by design (it wraps a NumPy array's host memory)")
    else:
        arr = ref.copy()
        z = sm.from_numpy_blob(arr)
        z.add_(1.0)
        check(bits_equal(arr, ref + 1), "from_numpy_blob on the CPU: writes show in the array")
        z.close()
    v.close()
    t.close()


# ---------------------------------------------------------------------------
# streams
# ---------------------------------------------------------------------------

class SideStream(object):
    """A non-blocking CUDA stream from the CUDA runtime (ctypes), torch or
    cupy, whichever is found first; .ptr is None when none could be made
    (.why says why)."""

    def __init__(self, index):
        self.ptr, self.how, self.why, self._destroy, self._keep = None, None, [], None, None
        names = []
        found = ctypes.util.find_library("cudart")
        if found:
            names.append(found)
        names += ["libcudart.so", "libcudart.so.12", "libcudart.so.11.0"]
        for pat in ("/usr/local/cuda*/lib64/libcudart.so*",
                    "/usr/local/cuda*/targets/*/lib/libcudart.so*"):
            names += sorted(glob.glob(pat), reverse=True)
        for n in names:
            try:
                rt = ctypes.CDLL(n)
            except OSError as e:
                self.why.append("%s: %s" % (n, e))
                continue
            p = ctypes.c_void_p()
            err = rt.cudaSetDevice(ctypes.c_int(index))
            if err == 0:
                err = rt.cudaStreamCreateWithFlags(ctypes.byref(p), ctypes.c_uint(1))
            if err == 0 and p.value:
                self.ptr, self.how = p.value, "the CUDA runtime (%s)" % n
                self._destroy = lambda: rt.cudaStreamDestroy(p)
                return
            self.why.append("%s: cudaStreamCreateWithFlags error %d" % (n, err))
        try:
            import torch
            if torch.cuda.is_available():
                s = torch.cuda.Stream(device=index)
                self.ptr, self.how, self._keep = s.cuda_stream, "torch %s" % torch.__version__, s
                return
            self.why.append("torch: no CUDA")
        except Exception as e:
            self.why.append("torch: %s" % e)
        try:
            import cupy
            with cupy.cuda.Device(index):
                s = cupy.cuda.Stream(non_blocking=True)
            self.ptr, self.how, self._keep = s.ptr, "cupy %s" % cupy.__version__, s
            return
        except Exception as e:
            self.why.append("cupy: %s" % e)

    def destroy(self):
        if self._destroy:
            self._destroy()
        self._keep = None


def section_streams():
    check(sm.get_stream(DEV) == 0, "get_stream: the default stream (0) at first")
    sm.set_stream(DEV, None)
    sm.set_stream(DEV, 0)
    check(sm.get_stream(DEV) == 0, "set_stream(None / 0): the default stream")
    t = sm.zeros(1 << 20, device=DEV)
    for _ in range(5):
        t.add_(1.0)
    sm.synchronize(DEV)
    check(bool(np.all(t.numpy() == 5.0)), "synchronize after 5 add_ on the default stream")
    t.close()
    if not IS_CUDA:
        raises("set_stream('cpu', non-NULL)", sm.InvalidArgumentError,
               lambda: sm.set_stream("cpu", 0x1234))
        not_run("streams: a side stream", "no CUDA device (--device cpu)")
        return
    s = SideStream(sm.Device(DEV).index)
    if s.ptr is None:
        not_run("streams: a side stream", "cannot create one: " + "; ".join(s.why)[:400])
        return
    print("        (side stream from %s)" % s.how)
    n = 1 << 22
    try:
        sm.set_stream(DEV, s.ptr)
        check(sm.get_stream(DEV) == s.ptr, "set_stream(side stream): get_stream returns it")
        seen = []
        th = threading.Thread(target=lambda: seen.append(sm.get_stream(DEV)))
        th.start()
        th.join()
        check(seen == [0], "the current stream is per thread (another thread sees 0)", str(seen))
        t = sm.zeros(n, device=DEV)
        for _ in range(20):
            t.add_(1.0)
        check(t.__cuda_array_interface__["stream"] == s.ptr,
              "__cuda_array_interface__ names the side stream")
        u = t.clone()  # queued on the side stream
        got = u.numpy()
        check(bool(np.all(got == 20.0)), "work queued on the side stream is complete when "
              "numpy() reads it", "min %r max %r" % (got.min(), got.max()))
        sm.synchronize(DEV)
        u.close()
        # record_stream: a block freed while a side stream still writes it
        # must not be handed to the default stream before that work is done.
        sm.set_stream(DEV, 0)
        x = sm.zeros(1 << 24, device=DEV)
        sm.synchronize(DEV)
        sm.set_stream(DEV, s.ptr)
        for _ in range(30):
            x.add_(1.0)  # queued on the side stream
        x.record_stream(s.ptr)
        x.close()
        sm.set_stream(DEV, 0)
        y = sm.zeros(1 << 24, device=DEV)
        sm.synchronize(DEV)
        got = y.numpy()
        check(bool(np.all(got == 0.0)), "record_stream: a new tensor on the default stream is "
              "not overwritten by the freed block's side-stream work",
              "max %r" % got.max())
        y.close()
        sm.set_stream(DEV, s.ptr)
        check_values("the side stream's tensor read after synchronize", t[:8],
                     np.full(8, 20.0, np.float32))
        t.close()
    finally:
        sm.set_stream(DEV, 0)
        sm.synchronize(DEV)
        s.destroy()
    check(sm.get_stream(DEV) == 0, "set_stream(0) restores the default stream")


# ---------------------------------------------------------------------------
# Stack of views
# ---------------------------------------------------------------------------

def section_stack():
    s0 = sm.memory_stats(DEV)
    cap = 1 << 14
    st = sm.Stack(cap, DEV)
    s1 = sm.memory_stats(DEV)
    check(st.capacity == cap and st.used == 0, "Stack on the device: capacity and used")
    check(s1["active_storages"] == s0["active_storages"] + 1 and
          s1["allocated_bytes"] - s0["allocated_bytes"] == round_up(cap, ROUND),
          "Stack: one storage of the capacity", "%s -> %s" % (s0, s1))
    a = st.push((3, 5), "float32")
    b = st.push(7, "float64")
    check(a.device == DEV and b.device == DEV and a.strides == (5, 1),
          "Stack.push: row-major tensors on the device")
    check(b.data_ptr - a.data_ptr == round_up(60, STACK_ALIGN) and
          st.used == round_up(60, STACK_ALIGN) + 56,
          "Stack: pushes are %d-byte aligned, used counts them" % STACK_ALIGN,
          "delta %d used %d" % (b.data_ptr - a.data_ptr, st.used))
    s2 = sm.memory_stats(DEV)
    check(s2["num_allocs"] == s1["num_allocs"], "Stack.push allocates nothing")
    a.copy_(np.arange(15, dtype=np.float32).reshape(3, 5))
    b.fill_(2.5)
    a.T[::2].add_(1.0)
    want = np.arange(15, dtype=np.float32).reshape(3, 5)
    want.T[::2] += 1
    check_values("Stack: values through a transposed view", a, want)
    check_values("Stack: fill_", b, np.full(7, 2.5))
    dc = copy.deepcopy(a)
    check(dc.device == DEV and dc.storage() is not None, "deepcopy of a pushed tensor: a clone")
    check_values("deepcopy of a pushed tensor", dc, want)
    dc.close()
    raises("Stack: storage() of a pushed tensor", sm.UnsupportedError, lambda: a.storage())
    check(not hasattr(a, "__cuda_array_interface__") and not hasattr(a, "__array_interface__"),
          "Stack: no array interface for a pushed tensor (its memory is reused after a pop)")
    raises("Stack: __dlpack__ of a pushed tensor", sm.DLPackExportError, lambda: a.__dlpack__())
    used = st.used
    raises("Stack: a push past the capacity", sm.OutOfMemoryError, lambda: st.push(cap, "float32"))
    check(st.used == used, "Stack: a failed push changes nothing")
    with st.scope():
        c = st.push(4, "int32")
        c.fill_(3)
        check_values("Stack: a push inside scope()", c, np.full(4, 3, np.int32))
    check(st.used == used, "Stack: scope() pops its pushes")
    raises("Stack: a popped tensor", sm.InvalidHandleError, lambda: c.numpy())
    c.close()
    st.close()
    check_values("Stack: a pushed tensor outlives the released stack", a, want)
    a.close()
    b.close()
    check_freed("Stack: its storage is freed after the last pushed tensor", s0)


# ---------------------------------------------------------------------------
# lifetimes
# ---------------------------------------------------------------------------

def section_lifetimes():
    gc.collect()
    s0 = sm.memory_stats(DEV)
    ref = np.arange(20, dtype=np.float64).reshape(4, 5)
    t = sm.from_numpy(ref, device=DEV)
    v = t[1:].T
    t.close()
    raises("a closed tensor", sm.InvalidHandleError, lambda: t.shape)
    t.close()  # twice: nothing
    check_values("a view after its base is closed", v, ref[1:].T)
    s1 = sm.memory_stats(DEV)
    check(s1["active_storages"] == s0["active_storages"] + 1 and
          s1["active_views"] == s0["active_views"] + 1,
          "the view keeps the storage alive (one storage, one view)", "%s -> %s" % (s0, s1))
    r = v.retain()
    v.close()
    check_values("retain(): a second owner works after the first closes", r, ref[1:].T)
    st = r.storage()
    r.close()
    s2 = sm.memory_stats(DEV)
    check(s2["active_storages"] == s0["active_storages"] + 1 and
          s2["active_views"] == s0["active_views"],
          "a Storage handle keeps the storage alive with no view", "%s -> %s" % (s0, s2))
    w = st.tensor((4, 5), (5, 1), 0, "float64")
    check_values("Storage.tensor after every view closed", w, ref)
    w.close()
    st.close()
    check_freed("the storage is freed when its last owner closes", s0)
    with sm.zeros(100, device=DEV) as z:
        z.fill_(1.0)
    raises("a tensor after its with block", sm.InvalidHandleError, lambda: z.numel)
    g = sm.ones(100, device=DEV)
    gv = g[::3]
    del g
    gc.collect()
    check_values("a view after the base object is garbage collected", gv, np.ones(34, np.float32))
    del gv
    check_freed("garbage collection frees tensors that were never closed", s0,
                keys=("active_storages", "active_views", "allocated_bytes"))


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------

def bad_cases():
    """(name, class, mentions, make(device) -> (call, snapshot, cleanup))."""

    def make_t(d, dtype="float32"):
        return sm.from_numpy(np.arange(12).reshape(3, 4).astype(exch(dtype)), device=d, dtype=dtype)

    def one(op, dtype="float32", other=None):
        def make(d):
            t = make_t(d, dtype)
            o = other(d) if other else None

            def cleanup():
                t.close()
                if o is not None:
                    o.close()
            return (lambda: op(t, o)), (lambda: t.numpy().tobytes()), cleanup
        return make

    def no_state(fn):
        def make(d):
            return (lambda: fn(d)), (lambda: b""), (lambda: None)
        return make

    return [
        ("int32.add_(0.5)", sm.DTypeError, ["0.5"], one(lambda t, o: t.add_(0.5), "int32")),
        ("int32.div_(2)", sm.DTypeError, ["int32"], one(lambda t, o: t.div_(2), "int32")),
        ("int32.add_(float32 tensor)", sm.DTypeError, ["float32"],
         one(lambda t, o: t.add_(o), "int32", lambda d: sm.ones(4, device=d))),
        ("float32.add_(complex64 tensor)", sm.DTypeError, ["complex64"],
         one(lambda t, o: t.add_(o), "float32", lambda d: sm.ones(4, dtype="complex64", device=d))),
        ("float32.sub_(bool tensor)", sm.DTypeError, ["bool"],
         one(lambda t, o: t.sub_(o), "float32", lambda d: sm.ones(4, dtype="bool", device=d))),
        ("bool.add_(1)", sm.DTypeError, ["bool"], one(lambda t, o: t.add_(1), "bool")),
        ("complex64.clamp_(0, 1)", sm.DTypeError, ["complex64"],
         one(lambda t, o: t.clamp_(0, 1), "complex64")),
        ("uint8.fill_(300)", sm.DTypeError, ["300"], one(lambda t, o: t.fill_(300), "uint8")),
        ("full(int8, 300)", sm.DTypeError, ["300"],
         no_state(lambda d: sm.full(3, 300, dtype="int8", device=d))),
        ("index_select with a float32 index", sm.DTypeError, ["float32"],
         one(lambda t, o: t.index_select(0, o), "float32", lambda d: sm.zeros(2, device=d))),
        ("view(5, 5) of 12 elements", sm.ShapeError, ["12"], one(lambda t, o: t.view(5, 5))),
        ("add_ of a (5,) tensor into (3, 4)", sm.ShapeError, ["[5]"],
         one(lambda t, o: t.add_(o), "float32", lambda d: sm.ones(5, device=d))),
        ("select(0, 9)", sm.OutOfBoundsError, ["9"], one(lambda t, o: t.select(0, 9))),
        ("narrow(1, 2, 5)", sm.OutOfBoundsError, ["5"], one(lambda t, o: t.narrow(1, 2, 5))),
        ("index_select with index 5 (the index lives on the device)", sm.OutOfBoundsError, ["5"],
         one(lambda t, o: t.index_select(0, o), "float32",
             lambda d: sm.tensor([0, 5, 1], dtype="int64", device=d))),
        ("index_select with index -4 (int32 on the device)", sm.OutOfBoundsError, ["-4"],
         one(lambda t, o: t.index_select(0, o), "float32",
             lambda d: sm.tensor([-4], dtype="int32", device=d))),
        ("add_ through an expanded view", sm.OverlapError, ["overlap"],
         one(lambda t, o: t[:1].expand(3, 4).add_(1.0))),
        ("fill_ of overlapping unfold windows", sm.OverlapError, ["overlap"],
         one(lambda t, o: t.view(-1).unfold(0, 3, 1).fill_(1.0))),
        ("copy_ of t[:-1] into t[1:] (partial overlap)", sm.OverlapError, ["overlap"],
         one(lambda t, o: t.view(-1)[1:].copy_(t.view(-1)[:-1]))),
        ("add_(t.flip(0)) (partial overlap)", sm.OverlapError, ["overlap"],
         one(lambda t, o: t.add_(t.flip(0)))),
        ("empty(2^62, 2^62)", sm.SizeOverflowError, ["overflow"],
         no_state(lambda d: sm.empty(1 << 62, 1 << 62, device=d))),
    ]


def run_bad(name, cls, mentions, make):
    results = {}
    for d in ([DEV, "cpu"] if DEV != "cpu" else [DEV]):
        call, snap, cleanup = make(d)
        before = snap()
        err = None
        try:
            call()
        except Exception as e:
            err = e
        after = snap()
        cleanup()
        results[d] = (err, before == after)
    e, unchanged = results[DEV]
    msg = getattr(e, "message", "") or ""
    missing = [m for m in mentions if str(m).lower() not in msg.lower()]
    check(isinstance(e, cls) and bool(msg) and not missing,
          "bad input on %s: %s -> %s" % (DEV, name, cls.__name__),
          "%s: %s%s" % (type(e).__name__, e, " (no mention of %s)" % missing if missing else ""))
    check(unchanged, "bad input on %s: %s writes nothing" % (DEV, name))
    if DEV != "cpu":
        c = results["cpu"][0]
        check(type(e) is type(c) and getattr(e, "status", None) == getattr(c, "status", None),
              "bad input: %s: the same class and status as on the CPU" % name,
              "%s vs cpu %s" % (getattr(e, "status_name", type(e).__name__),
                                getattr(c, "status_name", type(c).__name__)))
    still_works("bad input: " + name)


def section_bad_input():
    for name, cls, mentions, make in bad_cases():
        run_bad(name, cls, mentions, make)

    # A closed device tensor.
    t = sm.zeros(3, device=DEV)
    t.close()
    raises("a closed device tensor: add_", sm.InvalidHandleError, lambda: t.add_(1.0))

    # A device index out of range, through every entry point that takes one.
    n = sm.cuda_device_count()
    bad = "cuda:%d" % max(7, n)
    h = sm.from_numpy(np.arange(4.0), device=DEV)
    entries = [("empty", lambda: sm.empty(4, device=bad)),
               ("zeros", lambda: sm.zeros(4, device=bad)),
               ("full", lambda: sm.full(4, 1.0, device=bad)),
               ("arange", lambda: sm.arange(4, device=bad)),
               ("from_numpy", lambda: sm.from_numpy(np.zeros(3), device=bad)),
               ("tensor", lambda: sm.tensor([1, 2], device=bad)),
               ("to", lambda: h.to(bad)),
               ("memory_stats", lambda: sm.memory_stats(bad)),
               ("memory_summary", lambda: sm.memory_summary(bad)),
               ("empty_cache", lambda: sm.empty_cache(bad)),
               ("reset_peak_stats", lambda: sm.reset_peak_stats(bad)),
               ("synchronize", lambda: sm.synchronize(bad)),
               ("get_stream", lambda: sm.get_stream(bad)),
               ("set_stream", lambda: sm.set_stream(bad, 0)),
               ("Stack", lambda: sm.Stack(1024, bad))]
    for what, fn in entries:
        raises("device %s out of range: %s" % (bad, what), sm.DeviceError, fn, [bad])
    raises("device cuda:-1: zeros", sm.DeviceError, lambda: sm.zeros(2, device="cuda:-1"),
           ["-1"])
    e = raises("device %s out of range: __dlpack__(dl_device=)" % bad, sm.DLPackExportError,
               lambda: h.__dlpack__(dl_device=(2, max(7, n))))
    check(isinstance(e, RuntimeError) or getattr(e, "status", None) == sm.ERR_DEVICE,
          "__dlpack__ to a missing device: SM_ERR_DEVICE",
          str(getattr(e, "status_name", None)))
    h.close()
    still_works("device out of range")

    # Out of memory: 1 PiB on the device.
    gc.collect()
    req = 1 << 50
    before = sm.memory_stats(DEV)
    live = sm.debug_live_handles()
    try:
        x = sm.empty(req, dtype="uint8", device=DEV)
        x.close()
        e = None
    except Exception as err:
        e = err
    after = sm.memory_stats(DEV)
    check(isinstance(e, sm.OutOfMemoryError) and isinstance(e, MemoryError),
          "out of memory (1 PiB on %s): OutOfMemoryError, a MemoryError" % DEV,
          "%s: %s" % (type(e).__name__, e))
    msg = getattr(e, "message", "") or ""
    check(str(req) in msg, "out of memory: the message names the request (%d bytes)" % req, msg)
    check("Held:" in msg and "allocated" in msg and "reserved" in msg and "cached free" in msg
          and "largest free block" in msg and DEV.split(":")[0] in msg,
          "out of memory: the message says what stridemem holds, reserves and caches on %s" % DEV,
          msg)
    keys = ("allocated_bytes", "active_storages", "active_views", "num_allocs", "requested_bytes")
    check(all(before[k] == after[k] for k in keys) and sm.debug_live_handles() == live,
          "out of memory: nothing live changed", "%s -> %s" % (before, after))
    still_works("out of memory")
    try:
        x = sm.zeros(req // 4, dtype="float32", device=DEV)  # 1 PiB through another entry
        x.close()
        e = None
    except Exception as err:
        e = err
    check(isinstance(e, sm.OutOfMemoryError), "out of memory again through zeros()",
          "%s: %s" % (type(e).__name__, e))
    still_works("out of memory twice")


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# another process: a shared tensor through multiprocessing (CUDA: CUDA IPC)
# ---------------------------------------------------------------------------

def _double_in_child(q_in, q_out):
    """A spawned child: doubles the view it receives, in place, and reports
    what it saw (the receiving side of CUDA IPC on a GPU, of a memfd on the
    CPU)."""
    t = q_in.get()
    before = t.numpy().tolist()
    t.mul_(2.0)
    sm.synchronize(t.device)
    q_out.put((str(t.device), t.shape, t.strides, before))
    t.close()


def section_processes():
    import multiprocessing as mp
    ref = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    t = sm.from_numpy(ref, device=DEV)
    t.share_memory_()  # the CPU: moved into shared memory; CUDA: a no-op
    check(t.is_shared(), "share_memory_ makes %s memory shareable" % DEV)
    if IS_CUDA:
        with t.storage() as st:
            desc, fd = st.export()
        check(fd == -1 and len(desc) == sm.SHARE_DESC_SIZE,
              "a CUDA export is a descriptor without an fd (CUDA IPC)")
        raises("importing this process's own CUDA export", sm.UnsupportedError,
               lambda: sm.Storage.from_shared(desc, -1), mentions=("this process",))
    v = t[1::2, ::-3]  # strided, a negative stride, an offset
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_double_in_child, args=(q_in, q_out))
    p.start()
    try:
        q_in.put(v)
        dev, shape, strides, before = q_out.get(timeout=120)
    except Exception as e:
        check(False, "a view of a shared %s tensor through a multiprocessing queue" % DEV, repr(e))
        p.kill()
        p.join(30)
        t.close()
        return
    p.join(60)
    check(p.exitcode == 0, "the spawned child exits cleanly", "exit code %s" % p.exitcode)
    check(dev == DEV and shape == v.shape and strides == v.strides,
          "the child got the same view on %s" % DEV, "%s %s %s" % (dev, shape, strides))
    check(before == ref[1::2, ::-3].tolist(), "the child read the parent's values")
    want = ref.copy()
    want[1::2, ::-3] *= 2
    check_values("the child's in-place write shows in the parent", t, want)
    t.close()


SECTIONS = [
    ("memory", section_memory),
    ("creation", section_creation),
    ("dtypes", section_dtypes),
    ("to", section_to),
    ("views", section_views),
    ("indexing", section_indexing),
    ("inplace", section_inplace),
    ("copies", section_copies),
    ("index_select", section_index_select),
    ("repr", section_repr),
    ("pickle", section_pickle),
    ("processes", section_processes),
    ("interfaces", section_interfaces),
    ("streams", section_streams),
    ("stack", section_stack),
    ("lifetimes", section_lifetimes),
    ("bad input", section_bad_input),
]


def gpu_problem(device):
    """Why `device` (a CUDA device) cannot be used, or None."""
    n = sm.cuda_device_count()
    idx = sm.Device(device).index
    why = None
    try:
        t = sm.empty(1, device=device)
        t.close()
    except sm.StrideMemError as e:
        why = e.message
    if n < 1:
        return "sm_cuda_device_count() == 0 (%s); is STRIDEMEM_LIB (%s) a CUDA build?" % (
            why or "?", sm.LIBRARY_PATH)
    if idx >= n:
        return "%s: the library sees %d CUDA device(s) (%s)" % (device, n, why)
    if why:
        return why
    return None


def write_json(path, extra):
    if not path:
        return
    doc = {"device": DEV, "library": sm.LIBRARY_PATH,
           "cuda_device_count": sm.cuda_device_count(), "results": CHECKS.results}
    doc.update(extra)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def main():
    global DEV, IS_CUDA
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0", help="cuda:N (default cuda:0) or cpu")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    try:
        dev = sm.Device(args.device)
    except ValueError as e:
        ap.error(str(e))
    if dev.type not in (sm.DEVICE_CPU, sm.DEVICE_CUDA):
        ap.error("--device must be cpu or cuda:N")
    DEV = str(dev)
    IS_CUDA = dev.type == sm.DEVICE_CUDA
    print("== stridemem %s (%s), device %s" % (".".join(map(str, sm.LIBRARY_VERSION)),
                                               sm.LIBRARY_PATH, DEV))
    if IS_CUDA:
        why = gpu_problem(DEV)
        if why:
            print("NOT RUN: no usable GPU: %s" % why)
            write_json(args.json, {"not_run": "no usable GPU: %s" % why})
            return 77
    if np is None:
        record("NumPy", "FAIL", "cannot import numpy (%s): run with an interpreter that has it"
               % NUMPY_ERROR)
        write_json(args.json, {})
        return 1
    print("== NumPy %s, Python %s" % (np.__version__, sys.version.split()[0]))

    gc.collect()
    start_stats, start_handles = snapshot()
    for title, fn in SECTIONS:
        print("-- %s" % title)
        try:
            fn()
        except Exception as e:
            tb = traceback.format_exc().strip().splitlines()
            record("%s (section)" % title, "FAIL", "raised %s: %s [%s]"
                   % (type(e).__name__, e, " | ".join(tb[-4:-1])))
        gc.collect()
    print("-- leaks")
    end_stats, end_handles = snapshot()
    for d in start_stats:
        keys = ("active_storages", "active_views", "allocated_bytes", "requested_bytes")
        check(all(start_stats[d][k] == end_stats[d][k] for k in keys),
              "leaks: %s's live storages, views and bytes are back where they started" % d,
              "%s -> %s" % ({k: start_stats[d][k] for k in keys},
                            {k: end_stats[d][k] for k in keys}))
    check(start_handles == end_handles, "leaks: live (tensor, storage, stack) handles",
          "%s -> %s" % (start_handles, end_handles))

    rc = CHECKS.finish("python_cuda_check (%s)" % DEV)
    write_json(args.json, {})
    return rc


if __name__ == "__main__":
    sys.exit(main())
