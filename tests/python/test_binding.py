#!/usr/bin/python3
"""The Python binding itself: every function of include/stridemem.h is
declared, loading and version checks, dtype and device mapping, indexing
forms, Tensor/Storage/Stack lifetimes, zero-copy NumPy wrapping with a
deleter that runs exactly once, errors carrying status and message."""

import gc
import os
import re
import sys
import threading
import weakref

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_binding")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def api_surface():
    with open(os.path.join(REPO, "include", "stridemem.h")) as f:
        header = f.read()
    names = set(re.findall(r"SM_API\s+[^;]*?\b(sm_\w+)\s*\(", header))
    R.check(len(names) > 80, "found %d functions in the header" % len(names))
    declared = set(sm._SIGNATURES)
    R.equal(sorted(names - declared), [], "header functions without a ctypes declaration")
    R.equal(sorted(declared - names), [], "declared functions not in the header")
    for n in names & declared:
        fn = getattr(sm.lib, n)
        R.check(fn.argtypes is not None and fn.restype is not None, "%s: argtypes/restype set" % n)
    # Argument counts: a stale declaration (a C parameter added) crashes at the call.
    for name, params in re.findall(r"SM_API\s+[^;(]*?\b(sm_\w+)\s*\(([^)]*)\)\s*;", header):
        params = " ".join(params.split())
        n = 0 if params in ("", "void") else params.count(",") + 1
        if name in sm._SIGNATURES:
            R.equal(len(sm._SIGNATURES[name][1]), n, "%s: argument count" % name)
    # Status codes and dtype codes agree with the header.
    for name, value in re.findall(r"\b(SM_(?:OK|ERR_\w+))\s*=\s*(\d+)", header):
        R.equal(sm.STATUS_NAMES.get(int(value)), name, "status %s" % name)
    for name, value in re.findall(r"\bSM_(BOOL|UINT8|INT8|INT16|INT32|INT64|FLOAT16|BFLOAT16|FLOAT32|FLOAT64)\s*=\s*(\d+)", header):
        R.equal(sm.DTYPES[name.lower()][0], int(value), "dtype code %s" % name)
        R.equal(sm.lib.sm_dtype_name(int(value)).decode(), name.lower(), "sm_dtype_name(%s)" % name)
        R.equal(sm.dtype_size(name.lower()), sm.numpy_dtype(name.lower()).itemsize, "size of %s" % name)
    for name, value in re.findall(r"\bSM_OP_(\w+)\s*=\s*(\d+)", header):
        R.equal(sm.OPS[name.lower()], int(value), "op code %s" % name)
    m = re.search(r"#define SM_SLICE_NONE (\w+)", header)
    R.check(m and m.group(1) == "INT64_MIN" and sm.SLICE_NONE == -(1 << 63), "SM_SLICE_NONE")
    import ctypes
    R.equal(ctypes.sizeof(sm.SmMemoryStats), 4 + 4 + 12 * 8 + 8 * 8, "sizeof sm_memory_stats_t")
    R.equal(ctypes.sizeof(sm.DLTensor), 48, "sizeof DLTensor")
    R.equal(ctypes.sizeof(sm.DLManagedTensor), 64, "sizeof DLManagedTensor")
    R.equal(ctypes.sizeof(sm.DLManagedTensorVersioned), 8 + 8 + 8 + 8 + 48, "sizeof DLManagedTensorVersioned")


def versions_and_loading():
    with open(os.path.join(REPO, "VERSION")) as f:
        v = tuple(int(x) for x in f.read().strip().split(".")[:3])
    R.equal(sm.version(), v, "sm_version matches VERSION")
    R.equal(sm.LIBRARY_VERSION, v, "LIBRARY_VERSION")
    R.equal(sm.BINDING_VERSION[:2], v[:2], "BINDING_VERSION names the API of VERSION (major.minor)")
    for binding, library, ok in [((0, 2, 0), (0, 2, 0), True), ((0, 2, 0), (0, 2, 3), True),
                                 ((0, 2, 0), (0, 1, 0), False), ((0, 2, 0), (0, 3, 0), False),
                                 ((0, 2, 0), (1, 2, 0), False), ((1, 2, 0), (1, 3, 0), True),
                                 ((1, 2, 0), (1, 1, 9), False), ((1, 2, 0), (2, 2, 0), False)]:
        R.equal(sm.is_compatible(binding, library), ok, "is_compatible(%s, %s)" % (binding, library))
    want = os.environ.get("STRIDEMEM_LIB")
    if want:
        R.equal(sm.LIBRARY_PATH, want, "the library comes from STRIDEMEM_LIB")
    R.equal(sm.status_string(0)[:5], "SM_OK", "sm_status_string(SM_OK)")
    R.check(sm.status_string(1234) != "", "sm_status_string of an unknown code is not empty")


def dtypes_devices():
    for name in sm.DTYPES:
        R.equal(sm.dtype_name(name), name, "dtype name %s" % name)
    R.equal(sm.dtype_name(np.float16), "float16", "NumPy float16")
    R.equal(sm.dtype_name(np.dtype(bool)), "bool", "NumPy bool")
    R.equal(sm.dtype_name("f32"), "float32", "alias f32")
    R.equal(sm.numpy_dtype("bfloat16"), np.dtype(np.uint16), "bfloat16 exchanges as uint16")
    for bad in ("complex64", np.uint16, np.uint32, "nope"):
        try:
            sm.dtype_name(bad)
            R.fail("dtype %r accepted" % (bad,))
        except ValueError:
            R.ok()
    R.equal(tuple(sm.Device("cpu")), (1, 0), "cpu")
    R.equal(tuple(sm.Device("cuda")), (2, 0), "cuda")
    R.equal(tuple(sm.Device("cuda:1")), (2, 1), "cuda:1")
    R.equal(tuple(sm.Device("cuda_host")), (3, 0), "cuda_host")
    R.equal(str(sm.Device((2, 3))), "cuda:3", "str of a CUDA device")
    R.check(sm.Device("cpu") == "cpu" and sm.Device("cuda:0") != "cpu", "Device comparisons")
    for bad in ("gpu", "cuda:x", "", (1, 2, 3)):
        try:
            sm.Device(bad)
            R.fail("device %r accepted" % (bad,))
        except ValueError:
            R.ok()


def tensors_and_indexing():
    a = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    t = sm.from_numpy(a)
    R.equal((t.shape, t.strides, t.storage_offset, t.dtype, t.numel, t.nbytes, t.ndim, len(t)),
            ((3, 4, 5), (20, 5, 1), 0, "int32", 60, 240, 3, 3), "metadata")
    R.equal(t.device, sm.Device("cpu"), "device")
    R.check(t.is_contiguous() and not t.is_read_only, "flags")
    cases = [(1,), (-1,), (slice(None, None, -1),), (1, slice(1, None, 2)), (Ellipsis, 2),
             (None, 0, Ellipsis, None), (slice(None), -2, slice(4, 0, -2)), (0, 0, 0),
             (slice(10, 20),), (Ellipsis,), (slice(-100, 100, 3), None)]
    for idx in cases:
        v = t[idx]
        want = a[idx + ((Ellipsis,) if Ellipsis not in idx else ())]
        R.equal(v.shape, want.shape, "t%r shape" % (idx,))
        R.check(np.array_equal(v.numpy(), want), "t%r values" % (idx,))
        if want.size:  # strides of size-1 dims address nothing: not compared
            R.equal([st for st, n in zip(v.strides, v.shape) if n > 1],
                    [st // 4 for st, n in zip(want.strides, want.shape) if n > 1], "t%r strides" % (idx,))
        R.check(v.same_storage(t), "t%r is a view" % (idx,))
    R.equal(t[1, 2, 3].item(), int(a[1, 2, 3]), "item()")
    R.equal(t[[2, 0]].shape, (2, 4, 5), "list index = index_select")
    R.check(not t[[2, 0]].same_storage(t), "index_select is a copy")
    try:
        t[0, 0, 0, 0]
        R.fail("too many indices accepted")
    except IndexError:
        R.ok()
    t[0] = 7
    R.check(np.all(t[0].numpy() == 7) and np.array_equal(t[1:].numpy(), a[1:]), "t[0] = 7")
    t[1:, ::2] = sm.from_numpy(np.array([1, 2, 3, 4, 5], dtype=np.int32))
    R.check(np.array_equal(t[2, 2].numpy(), [1, 2, 3, 4, 5]), "t[...] = tensor broadcasts")
    rows = list(t)
    R.equal(len(rows), 3, "iteration")
    # Every view method exists and returns views.
    f = sm.arange(0, 1, 24, "float32")
    views = [f.view(2, 3, 4), f.view((4, 6)).T, f.view(4, 6).transpose(0, 1), f.view(2, 3, 4).permute(2, 0, 1),
             f.view(2, 3, 4).movedim(0, -1), f.view(1, 24).expand(3, 24), f.view(1, 24, 1).squeeze(),
             f.view(1, 24, 1).squeeze(0), f.unsqueeze(1), f.view(2, 3, 4).flatten(1),
             f.unflatten(0, (4, -1)), f.unfold(0, 5, 3), f.view(4, 6).diagonal(1), f.flip(0),
             f.narrow(0, 2, 5), f.select(0, -1), f.as_strided((3, 3), (1, 3), 2), f.slice(0, None, None, -5),
             f.view(4, 6).contiguous().view(-1), f.reshape(4, 6)]
    for i, v in enumerate(views):
        R.check(v.same_storage(f), "view method %d shares storage" % i)
    R.equal([x.shape for x in f.split(10)], [(10,), (10,), (4,)], "split")
    R.equal([x.shape for x in f.chunk(5)], [(5,), (5,), (5,), (5,), (4,)], "chunk")
    r, copied = f.view(4, 6).T.reshape(24, return_copied=True)
    R.check(copied and not r.same_storage(f), "reshape of a transpose copies and says so")
    r, copied = f.view(4, 6).reshape(6, 4, return_copied=True)
    R.check(not copied and r.same_storage(f), "reshape of a dense tensor is a view")
    R.check(f.view(4, 6).T.reshape_would_copy(24), "reshape_would_copy")
    c = f.clone()
    R.check(not c.same_storage(f) and np.array_equal(c.numpy(), f.numpy()), "clone")
    d = f.to(dtype="float64")
    R.equal(d.dtype, "float64", "to(dtype)")
    R.check(f.to().same_storage(f), "to() with no change is the same data")
    # contiguous() and to() say whether they copied, as reshape() does.
    for src, fmt, want in [(f.view(4, 6), "contiguous", False), (f.view(4, 6).T, "contiguous", True),
                           (f.view(1, 2, 3, 4), "channels_last", True),
                           (f.view(1, 2, 3, 4).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
                            "channels_last", False)]:
        c, copied = src.contiguous(fmt, return_copied=True)
        R.equal(copied, want, "contiguous(%s) of strides %s: copied" % (fmt, src.strides))
        R.equal(c.same_storage(src), not want, "contiguous(%s) of strides %s: shares storage"
                % (fmt, src.strides))
        R.check(c.is_contiguous(fmt) and np.array_equal(c.numpy(), src.numpy()),
                "contiguous(%s) of strides %s: dense, same values" % (fmt, src.strides))
    for kw, want in [({}, False), ({"device": "cpu"}, False), ({"dtype": "float32"}, False),
                     ({"dtype": "int16"}, True), ({"device": "cpu", "dtype": "float64"}, True)]:
        c, copied = f.to(return_copied=True, **kw)
        R.equal(copied, want, "to(%s): copied" % kw)
        R.equal(c.same_storage(f), not want, "to(%s): shares storage" % kw)
        R.check(np.array_equal(c.numpy(), f.numpy().astype(c.dtype)), "to(%s): values" % kw)
    R.check(not isinstance(f.contiguous(), tuple) and not isinstance(f.to(), tuple),
            "without return_copied: a tensor")
    # In-place methods, scalars and tensors, and the version counter.
    g = sm.from_numpy(np.array([-2.0, -1.0, 4.0, 9.0]))
    v0 = g.version
    g.add_(1).sub_(0.5).mul_(2).div_(4)
    R.check(np.allclose(g.numpy(), (np.array([-2.0, -1.0, 4.0, 9.0]) + 0.5) * 2 / 4), "add/sub/mul/div scalars")
    R.check(g.version >= v0 + 4, "version counter bumped per in-place op")
    g.copy_(sm.from_numpy(np.array([-2.0, -1.0, 4.0, 9.0])))
    g.clamp_(min=-1.5).relu_()
    R.check(np.array_equal(g.numpy(), [0, 0, 4, 9]), "clamp_(min)/relu_")
    g.neg_().abs_().sqrt_()
    R.check(np.array_equal(g.numpy(), [0, 0, 2, 3]), "neg/abs/sqrt")
    g.zero_().exp_()
    R.check(np.array_equal(g.numpy(), [1, 1, 1, 1]), "zero/exp")
    g.add_(sm.from_numpy(np.array([1.0, 2.0, 3.0, 4.0])), alpha=2).clamp_(max=6)
    R.check(np.array_equal(g.numpy(), [3, 5, 6, 6]), "add_(tensor, alpha)/clamp_(max)")
    g += 1
    g *= sm.from_numpy(np.array([2.0]))
    R.check(np.array_equal(g.numpy(), [8, 12, 14, 14]), "+= and *=")
    # bfloat16 as uint16 bit patterns.
    b = sm.from_numpy(np.array([0x3F80, 0x4000], dtype=np.uint16), dtype="bfloat16")
    R.check(np.array_equal(b.to(dtype="float32").numpy(), [1.0, 2.0]), "bfloat16 bits in")
    R.equal(b.numpy().dtype, np.dtype(np.uint16), "bfloat16 comes out as uint16")
    try:
        sm.from_numpy(np.array([1.0]), dtype="bfloat16")
        R.fail("float data accepted as bfloat16 bits")
    except ValueError:
        R.ok()
    # 0-d and empty tensors.
    z = sm.full((), 3.5, "float64")
    R.equal((z.shape, z.numpy().shape, z.item()), ((), (), 3.5), "0-d tensor")
    e = sm.empty(0, 3, dtype="int16")
    R.equal((e.shape, e.numel, e.numpy().shape), ((0, 3), 0, (0, 3)), "empty tensor")
    R.check(isinstance(repr(t), str) and "int32" in repr(t), "repr")


def errors():
    t = sm.zeros(2, 3)
    try:
        t.view(7)
        R.fail("view(7) of 6 elements succeeded")
    except sm.StrideMemError as e:
        R.equal(e.status, sm.ERR_SHAPE, "error status")
        R.equal(e.status_name, "SM_ERR_SHAPE", "error status name")
        R.equal(e.function, "sm_view", "error function")
        R.check("7" in e.message and e.message in str(e), "error message %r" % e.message)
    t.close()
    try:
        t.numel
        R.fail("a closed tensor answered")
    except sm.StrideMemError as e:
        R.equal(e.status, sm.ERR_INVALID_HANDLE, "closed tensor")
    # Errors are per thread.
    seen = []

    def worker():
        try:
            sm.zeros(1).select(0, 5)
        except sm.StrideMemError as e:
            seen.append(e.message)
    th = threading.Thread(target=worker)
    th.start()
    th.join()
    try:
        sm.zeros(2).view(3)
    except sm.StrideMemError as e:
        R.check(seen and "5" in seen[0] and e.message != seen[0], "sm_last_error is per thread")


def lifetimes():
    gc.collect()
    live0 = sm.debug_live_handles()
    t = sm.arange(0, 1, 100, "float64")
    v = t[10:20]
    st = t.storage()
    R.equal(st.nbytes, 800, "storage size")
    R.equal(st.device, sm.Device("cpu"), "storage device")
    R.equal(v.storage_nbytes, 800, "a view pins its whole storage")
    u = st.tensor((5,), (2,), 1, "float64")
    R.check(np.array_equal(u.numpy(), [1, 3, 5, 7, 9]), "Storage.tensor")
    t.close()
    R.check(np.array_equal(v.numpy(), np.arange(10, 20.0)), "a view outlives its source handle")
    r = v.retain()
    v.close()
    R.check(np.array_equal(r.numpy(), np.arange(10, 20.0)), "retain gives a second owner")
    del r, u, st
    gc.collect()
    R.equal(sm.debug_live_handles(), live0, "every handle released by GC or close()")
    # Stack of views.
    with sm.Stack(4096) as s:
        R.equal((s.used, s.capacity), (0, 4096), "fresh stack")
        a = s.push((10,), "float32")
        # Several stacks: one lucky 256-byte-aligned buffer proves nothing.
        others = [sm.Stack(cap) for cap in (1000, 3000, 5000, 70000, 1 << 20, 3 << 20, 100, 700)]
        addrs = [x.push((3,), "int8").data_ptr for x in others] + [a.data_ptr]
        R.equal([p % 256 for p in addrs], [0] * len(addrs),
                "pushed tensors' addresses are multiples of SM_STACK_ALIGNMENT (256)")
        for x in others:
            x.release()
        used = s.used
        with s.scope():
            b = s.push((3, 3), "int64")
            R.check(s.used > 256, "push moves the top")
            b.fill_(1)
        try:
            b.numel
            R.fail("a tensor popped by scope() still answers")
        except sm.StrideMemError as e:
            R.equal(e.status, sm.ERR_INVALID_HANDLE, "popped tensor")
        b.close()
        R.equal(s.used, used, "scope() popped back to the mark")
        try:
            s.push((10000,), "float64")
            R.fail("push past capacity succeeded")
        except sm.StrideMemError as e:
            R.equal(e.status, sm.ERR_OUT_OF_MEMORY, "push past capacity")
        a.fill_(2)
    R.check(np.all(a.numpy() == 2), "a pushed tensor outlives its released stack")
    a.close()
    gc.collect()
    R.equal(sm.debug_live_handles(), live0, "stack handles released")


def blobs():
    gc.collect()
    base = np.arange(12, dtype=np.float32)
    w = weakref.ref(base)
    freed = []
    t = sm.from_numpy_blob(base[::-2])  # negative strides over NumPy memory
    R.equal(t.strides, (-2,), "blob strides")
    R.equal(t.data_ptr, base[::-2].__array_interface__["data"][0], "blob data pointer")
    R.check(np.array_equal(t.numpy(), base[::-2]), "blob values")
    t.fill_(5)
    R.check(np.array_equal(base, np.where(np.arange(12) % 2 == 1, 5, np.arange(12)).astype(np.float32)),
            "writes through the tensor land in the NumPy array")
    v = t[1:3]
    del base
    gc.collect()
    R.check(w() is not None, "the array lives while tensors over it do")
    t.close()
    R.check(w() is not None, "a view keeps the array alive")
    v.close()
    gc.collect()
    R.check(w() is None, "the array is released when the last view dies")
    n0 = sm.BLOB_STATS["freed"]
    mem = np.zeros(8)
    t = sm.from_blob(mem.ctypes.data, (8,), "float64", owner=mem, on_free=lambda: freed.append(1))
    t2 = t.view(2, 4)
    t.close()
    R.equal(freed, [], "on_free not called while a view lives")
    t2.close()
    R.equal(freed, [1], "on_free called exactly once")
    R.equal(sm.BLOB_STATS["freed"], n0 + 1, "deleter count")
    R.equal(sm.BLOB_STATS["unknown_key"], 0, "no deleter ran twice")
    R.equal(sm.blob_live_count(), 0, "no blob left")
    # A failing from_blob does not keep the owner.
    try:
        sm.from_blob(mem.ctypes.data, (-1,), "float64", owner=mem)
        R.fail("from_blob with size -1 succeeded")
    except sm.StrideMemError:
        R.equal(sm.blob_live_count(), 0, "a failed from_blob drops its owner entry")


def one_registry():
    """Blob owners and exported capsules are kept alive by one registry: a
    NumPy array wrapped zero-copy and exported through DLPack lives until the
    last of the tensor, its views and the capsule is gone, then everything is
    released exactly once (the capsule's sweep frees the storage, whose blob
    deleter drops the array's entry, on the same thread)."""
    gc.collect()
    sm.dlpack_collect()
    blobs0, caps0 = sm.blob_live_count(), sm.dlpack_live_count()
    freed0, deleted0 = sm.BLOB_STATS["freed"], sm.DLPACK_STATS["destructor_deleted"]
    arr = np.arange(8, dtype=np.float64)
    w = weakref.ref(arr)
    on_free = []
    t = sm.from_blob(arr.ctypes.data, (8,), "float64", owner=arr, on_free=lambda: on_free.append(1))
    del arr
    v = t[2:]
    cap = v.__dlpack__(max_version=(1, 0))
    R.equal((sm.blob_live_count(), sm.dlpack_live_count()), (blobs0 + 1, caps0 + 1),
            "registry: one blob and one capsule held")
    t.close()
    v.close()
    gc.collect()
    R.check(w() is not None, "registry: the capsule keeps the wrapped array alive")
    R.equal(sm.dlpack_collect(), 0, "registry: a capsule we still hold is not swept")
    R.equal(sm.blob_live_count(), blobs0 + 1, "registry: the blob entry stays while the capsule does")
    del cap
    R.equal(sm.dlpack_collect(), 1, "registry: the dropped capsule is swept")
    gc.collect()
    R.check(w() is None, "registry: the array is released after the capsule")
    R.equal(on_free, [1], "registry: on_free ran once")
    R.equal((sm.blob_live_count(), sm.dlpack_live_count()), (blobs0, caps0), "registry: nothing left")
    R.equal((sm.BLOB_STATS["freed"], sm.DLPACK_STATS["destructor_deleted"]), (freed0 + 1, deleted0 + 1),
            "registry: statistics")
    # Blob deleters from many threads at once, while capsules are swept.
    errors = []

    def churn(k):
        try:
            for _ in range(200):
                a = np.full(16, float(k))
                x = sm.from_numpy_blob(a)
                c = x[::2].__dlpack__()
                del a, x, c
                sm.dlpack_collect()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=churn, args=(k,)) for k in range(4)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    sm.dlpack_collect()
    gc.collect()
    R.check(not errors, "registry threads: %s" % errors[:3])
    R.equal((sm.blob_live_count(), sm.dlpack_live_count()), (blobs0, caps0), "registry threads: nothing left")
    R.equal(sm.BLOB_STATS["unknown_key"], 0, "registry threads: no deleter ran twice")
    R.equal(sm.BLOB_STATS["wrapped"], sm.BLOB_STATS["freed"], "registry threads: every blob freed")


def memory():
    s = sm.memory_stats()
    for k in ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "num_allocs", "cache_hits",
              "active_views", "active_storages", "requested_bytes"):
        R.check(k in s and isinstance(s[k], int), "memory_stats has %s" % k)
    t = sm.empty(1000, dtype="float64")
    s1 = sm.memory_stats()
    R.check(s1["allocated_bytes"] >= s["allocated_bytes"] + 8000, "allocation counted")
    R.check(s1["active_views"] == s["active_views"] + 1, "active view counted")
    t.close()
    sm.empty_cache()
    R.check(sm.memory_stats()["allocated_bytes"] == s["allocated_bytes"], "freed")
    text = sm.memory_summary()
    R.check(len(text) > 50 and "alloc" in text.lower(), "memory_summary text")
    sm.reset_peak_stats()
    R.check(sm.memory_stats()["peak_allocated_bytes"] == sm.memory_stats()["allocated_bytes"], "reset_peak_stats")
    R.check(sm.cuda_device_count() >= 0, "cuda_device_count")
    sm.synchronize("cpu")
    n = sm.get_num_threads()
    sm.set_num_threads(2)
    R.equal(sm.get_num_threads(), 2, "set_num_threads")
    sm.set_num_threads(n)
    if sm.cuda_device_count() == 0:
        try:
            sm.zeros(2, device="cuda")
            R.fail("a CUDA tensor without a GPU")
        except sm.StrideMemError as e:
            R.equal(e.status, sm.ERR_DEVICE, "CUDA without a GPU: SM_ERR_DEVICE")
            R.check("cuda" in e.message.lower(), "the message names CUDA: %r" % e.message)


def main():
    for name, fn in [("api surface", api_surface), ("versions", versions_and_loading),
                     ("dtypes and devices", dtypes_devices), ("tensors and indexing", tensors_and_indexing),
                     ("errors", errors), ("lifetimes", lifetimes), ("blobs", blobs), ("one registry", one_registry),
                     ("memory", memory)]:
        R.run(name, fn)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
