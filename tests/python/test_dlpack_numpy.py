#!/usr/bin/python3
"""DLPack between stridemem and NumPy (CPU), both directions, zero copy.

Export: numpy.from_dlpack(tensor) must see the same values *and the same
memory* (a write through NumPy is visible through our handle and the other
way round) for dense, permuted, sliced (negative steps too: asked for with
__dlpack__(normalize=False), since by default they never reach NumPy: the
export is refused in a legacy capsule (NumPy 1.x asks for one) and a dense
copy flagged IS_COPIED in a versioned one (NumPy >= 2.1)), expanded (reads only), 0-d and size-0 tensors of every
dtype NumPy has. Import:
stridemem.from_dlpack(ndarray) likewise; a read-only array stays read-only
wherever NumPy can say so (versioned DLPack, NumPy >= 2.1). Deleters are counted: the NumPy
owner's reference count returns exactly to where it was (so NumPy's deleter
ran exactly once), and our storages are freed once the consumer lets go
(memory statistics return to the baseline).

If the library's sm_to_dlpack / sm_from_dlpack are not implemented, these
checks fail (they are not skipped).
"""

import ctypes
import gc
import os
import sys
import weakref

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import CapsuleHolder, Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_dlpack_numpy")

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
             "uint16", "uint32", "uint64", "complex64", "complex128"]


def addr(a):
    return a.__array_interface__["data"][0]


def writable_alias(arr):
    """NumPy 1.x marks numpy.from_dlpack results read-only (legacy DLPack has
    no read-only flag): write through a writable ndarray over the same bytes."""
    if arr.flags.writeable or arr.size == 0:
        return arr
    lo = sum(min(0, (n - 1) * s) for n, s in zip(arr.shape, arr.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(arr.shape, arr.strides)) + arr.itemsize
    buf = (ctypes.c_char * (hi - lo)).from_address(addr(arr) + lo)
    return np.ndarray(arr.shape, arr.dtype, buffer=buf, offset=-lo, strides=arr.strides)


def numpy_takes(dtype):
    """Whether this NumPy exchanges dtype through DLPack at all (NumPy 1.24
    has no bool in DLPack, and no bfloat16 ever)."""
    try:
        np.from_dlpack(np.zeros(2, dtype=dtype))
        return True
    except Exception:
        return False


def stats():
    gc.collect()
    s = sm.memory_stats("cpu")
    return s["active_storages"], s["allocated_bytes"]


def sample(dtype, shape, seed=0):
    g = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        v = g.random(n) < 0.5
    elif dtype.startswith(("int", "uint")):
        v = g.integers(0, 100, n).astype(dtype)
        if dtype in ("uint32", "uint64"):
            # Values with the top bit set: a signed reading would show them.
            v[::3] = np.iinfo(dtype).max - v[::3]
    elif dtype.startswith("complex"):
        v = (g.standard_normal(n) * 10 + 1j * g.standard_normal(n) * 10).astype(dtype)
    else:
        v = (g.standard_normal(n) * 10).astype(dtype)
    return v.reshape(shape)


def views(t, a):
    """(name, stridemem view, NumPy equivalent view) for layouts we export."""
    out = [("dense", t.retain(), a)]
    if a.ndim >= 2:
        out.append(("permuted", t.permute(*range(a.ndim - 1, -1, -1)), a.transpose()))
        out.append(("sliced", t[1:, ::2], a[1:, ::2]))
        out.append(("negative step", t[::-1, ::-2], a[::-1, ::-2]))
        out.append(("flipped", t.flip([0, 1]), np.flip(a, (0, 1))))
        out.append(("select", t.select(1, -1), a[:, -1]))
    out.append(("size 0", t.narrow(0, 1, 0), a[1:1]))
    out.append(("0-d", t.view(-1).select(0, 2), a.reshape(-1)[2, ...]))
    return out


class Asked(object):
    """A tensor as numpy.from_dlpack sees it, remembering the keywords that
    NumPy passed to __dlpack__: none in NumPy 1.x; dl_device, copy and
    max_version=(1, 1) in NumPy >= 2.1, which takes versioned capsules."""

    def __init__(self, t):
        self.t, self.kwargs = t, None

    def __dlpack__(self, *args, **kwargs):
        self.kwargs = dict(kwargs)
        return self.t.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def versioned(self):
        mv = (self.kwargs or {}).get("max_version")
        return mv is not None and tuple(mv)[:1] >= (1,)


def default_export_negative(what, v, want):
    """numpy.from_dlpack(v) of a tensor with a negative stride that moves:
    the negative strides never reach NumPy by default (PyTorch aborts on
    them, and the default is the same for every consumer). Asked for a
    legacy capsule (NumPy 1.x), the export is refused naming the way out,
    since a legacy capsule cannot say that it holds a copy; asked for a
    versioned one (NumPy >= 2.1), it is a dense copy flagged IS_COPIED."""
    asked = Asked(v)
    try:
        arr = np.from_dlpack(asked)
    except BufferError as e:
        R.check(not asked.versioned(), "%s: the default versioned export (NumPy asked %s) was "
                "refused: %s" % (what, asked.kwargs, e))
        R.check("normalize=False" in str(e), what + ": the refusal names the way out")
        return
    if not asked.versioned():
        R.fail("%s: the default legacy export (NumPy asked %s) handed out strides %s"
               % (what, asked.kwargs, tuple(s // arr.itemsize for s in arr.strides)))
        return
    R.check(arr.dtype == want.dtype and np.array_equal(arr, want),
            what + ": the default versioned export: values")
    R.check(addr(arr) != v.data_ptr and all(s >= 0 for s in arr.strides),
            "%s: the default versioned export is a copy with no negative stride (strides %s)"
            % (what, arr.strides))


def export_numpy2_call():
    """__dlpack__ called exactly as numpy.from_dlpack calls it from NumPy 2.1
    on (dl_device=None, copy=None, max_version=(1, 1)), whatever NumPy runs
    here: a versioned capsule; a negative stride that moves gives a dense
    copy flagged IS_COPIED, any other layout the tensor's own memory."""
    s0 = stats()
    t = sm.arange_n(0, 1, 12, "float32").view(3, 4)
    for name, v in (("flipped", t.flip([0])), ("negative step", t[:, ::-2]),
                    ("transposed", t.T), ("flipped size-1 dim", t[1:2].flip([0]))):
        what = "NumPy 2's __dlpack__ call, %s" % name
        cap = v.__dlpack__(dl_device=None, copy=None, max_version=(1, 1))
        R.check('"dltensor_versioned"' in repr(cap), what + ": a versioned capsule")
        m = managed_of(cap)
        dl = m.dl_tensor
        strides = tuple(dl.strides[i] for i in range(dl.ndim))
        copied = bool(m.flags & sm.DLPACK_FLAG_IS_COPIED)
        neg = any(s < 0 and n > 1 for n, s in zip(v.shape, v.strides))
        R.check(all(s >= 0 for s, n in zip(strides, v.shape) if n > 1),
                "%s: no negative stride handed out (strides %s)" % (what, strides))
        R.check(copied == neg and (dl.data != v.data_ptr) == neg,
                "%s: %s" % (what, "a copy flagged IS_COPIED" if neg else "zero copy, not flagged"))
        del m, dl
        u = sm.from_dlpack(cap)
        R.check(np.array_equal(u.numpy(), v.numpy()), what + ": values")
        u.close()
        # numpy.from_dlpack(v, copy=False) forwards copy=False: refused where a copy is needed.
        try:
            v.__dlpack__(dl_device=None, copy=False, max_version=(1, 1))
            R.check(not neg, what + ": copy=False handed out negative strides")
        except BufferError as e:
            R.check(neg and "copy=False" in str(e), "%s: copy=False refused: %s" % (what, e))
        v.close()
    t.close()
    R.equal(stats(), s0, "NumPy 2's __dlpack__ call: every export freed")


def export_to_numpy(dtype):
    base_np = sample(dtype, (4, 6), seed=3)
    t = sm.from_numpy(base_np)
    for name, v, want in views(t, base_np):
        what = "export %s %s" % (dtype, name)
        src = v
        if any(s < 0 and n > 1 for n, s in zip(v.shape, v.strides)):
            default_export_negative(what, v, want)
            # NumPy takes negative strides when asked for them as they are.
            src = CapsuleHolder(v.__dlpack__(normalize=False))
        try:
            arr = np.from_dlpack(src)
        except Exception as e:
            R.fail("%s: numpy.from_dlpack raised %s: %s" % (what, type(e).__name__, e))
            v.close()
            continue
        R.equal(arr.shape, want.shape, what + ": shape")
        R.equal(arr.dtype, want.dtype, what + ": dtype")
        R.check(np.array_equal(arr, want), what + ": values")
        if arr.size:
            R.equal(addr(arr), v.data_ptr, what + ": same memory (data pointer)")
            R.equal(tuple(s // arr.itemsize for s in arr.strides),
                    tuple(st for st, n in zip(v.strides, v.shape)) if arr.ndim else (),
                    what + ": strides")
            # NumPy writes, we read.
            flat_idx = (0,) * arr.ndim
            # (A new value of arr's own type: uint64 + 1 would go through float64.)
            newval = np.array(not arr[flat_idx] if dtype == "bool" else (7 if arr[flat_idx] != 7 else 8),
                              dtype=arr.dtype)
            writable_alias(arr)[flat_idx] = newval
            R.check(np.array_equal(v.numpy(), arr), what + ": a NumPy write is visible through us")
            # We write, NumPy reads.
            v.fill_(0 if dtype != "bool" else 1)
            R.check(np.all(arr == (0 if dtype != "bool" else True)),
                    what + ": our write is visible through NumPy")
            t.copy_(sm.from_numpy(base_np))  # restore for the next view
        v.close()
        del arr
    t.close()


def export_expanded():
    base_np = np.arange(3, dtype=np.float32)
    t = sm.from_numpy(base_np)
    v = t.unsqueeze(0).expand(4, 3)
    arr = np.from_dlpack(v)
    R.equal(arr.shape, (4, 3), "export expanded: shape")
    R.equal(arr.strides, (0, 4), "export expanded: stride 0 kept")
    R.check(np.array_equal(arr, np.broadcast_to(base_np, (4, 3))), "export expanded: values")
    R.equal(addr(arr), t.data_ptr, "export expanded: same memory")
    t.fill_(5.0)
    R.check(np.all(arr == 5.0), "export expanded: our write is visible through NumPy")
    del arr
    v.close()
    t.close()


def export_lifetime():
    s0 = stats()
    t = sm.arange_n(0, 1, 1000, "float64")
    ptr = t.data_ptr
    arr = np.from_dlpack(t)
    t.close()  # NumPy's array now owns the only reference
    R.equal(stats()[0], s0[0] + 1, "export: the storage stays alive while NumPy holds it")
    R.check(np.array_equal(arr, np.arange(1000.0)), "export: values after our handle closed")
    R.equal(addr(arr), ptr, "export: memory unchanged after our handle closed")
    consumed0 = sm.DLPACK_STATS["destructor_consumed"]
    del arr
    R.equal(stats(), s0, "export: NumPy's release ran our deleter (storage freed)")
    R.check(sm.DLPACK_STATS["destructor_consumed"] >= consumed0,
            "export: consumed capsule left alone by our destructor")

    # A capsule nobody consumed: its destructor must free it.
    t = sm.zeros(100, dtype="int32")
    for versioned in (None, (1, 0)):
        cap = t.__dlpack__(max_version=versioned)
        name = "dltensor_versioned" if versioned else "dltensor"
        R.check(("\"%s\"" % name) in repr(cap), "export: capsule named %s (%r)" % (name, cap))
        del cap
    t.close()
    R.equal(stats(), s0, "export: unconsumed capsules were deleted by their destructor")

    # Consumed by NumPy: our destructor must not delete again (refcounts stay sane).
    t = sm.zeros(10, dtype="int32")
    cap_holder = []

    class Producer(object):
        def __dlpack__(self, stream=None):
            c = t.__dlpack__(stream=stream)
            cap_holder.append(c)
            return c

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    arr = np.from_dlpack(Producer())
    R.check("used_dltensor" in repr(cap_holder[0]), "export: NumPy renamed the capsule to used_dltensor")
    del cap_holder[:]
    t.close()
    R.check(np.array_equal(arr, np.zeros(10, np.int32)), "export: array valid after capsule death")
    del arr
    R.equal(stats(), s0, "export: storage freed exactly once")


def import_from_numpy(dtype):
    base = sample(dtype, (5, 4), seed=7)
    cases = [("dense", base), ("transposed", base.T), ("sliced", base[1:4, ::2]),
             ("negative step", base[::-2, ::-1]), ("size 0", base[2:2]), ("0-d", base[1, 2, ...])]
    for name, a in cases:
        what = "import %s %s" % (dtype, name)
        r0 = sys.getrefcount(a)
        try:
            t = sm.from_dlpack(a)
        except Exception as e:
            R.fail("%s: from_dlpack raised %s: %s" % (what, type(e).__name__, e))
            continue
        R.equal(t.shape, a.shape, what + ": shape")
        R.equal(t.dtype, dtype, what + ": dtype")
        R.check(np.array_equal(t.numpy(), a), what + ": values")
        if a.size:
            R.equal(t.data_ptr, addr(a), what + ": same memory")
            R.equal(t.strides, tuple(s // a.itemsize for s in a.strides), what + ": strides")
            idx = (0,) * a.ndim
            old = a[idx].copy()
            t[idx] = 1 if dtype != "bool" else (not bool(old))
            R.equal(a[idx].item(), np.array(1 if dtype != "bool" else not bool(old), a.dtype).item(),
                    what + ": our write is visible through NumPy")
            a[idx] = old
            R.check(np.array_equal(t.numpy(), a), what + ": a NumPy write is visible through us")
        v = t.flip([0]) if t.ndim else t.retain()
        t.close()
        R.equal(sys.getrefcount(a), r0 + 1, what + ": a view of the import holds one reference "
                "to the NumPy array")
        v.close()
        gc.collect()
        R.equal(sys.getrefcount(a), r0, what + ": NumPy's deleter ran exactly once")


def import_lifetime():
    a = np.arange(12.0).reshape(3, 4)
    w = weakref.ref(a)
    t = sm.from_dlpack(a)
    del a
    gc.collect()
    R.check(w() is not None, "import: the NumPy array lives while our tensor does")
    v = t.T
    t.close()
    gc.collect()
    R.check(w() is not None, "import: a view keeps the imported memory alive")
    R.check(np.array_equal(v.numpy(), np.arange(12.0).reshape(3, 4).T), "import: view values")
    v.close()
    gc.collect()
    R.check(w() is None, "import: the NumPy array is freed when our last view dies")

    # The capsule is consumed: a second import of the same capsule is refused.
    b = np.arange(3, dtype=np.int16)
    cap = b.__dlpack__()
    t = sm.from_dlpack(cap)
    R.check("used_dltensor" in repr(cap), "import: the capsule was renamed used_dltensor")
    try:
        sm.from_dlpack(cap)
        R.fail("import: a consumed capsule was imported twice")
    except BufferError:
        R.ok()
    del cap
    R.check(np.array_equal(t.numpy(), b), "import: tensor valid after capsule death")
    t.close()


def numpy_exports_versioned():
    """Whether this NumPy's __dlpack__ takes max_version=(1, 0) and answers
    with a versioned capsule (NumPy >= 2.1), which can carry READ_ONLY."""
    try:
        cap = np.arange(1.0).__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    return '"dltensor_versioned"' in repr(cap)


def import_read_only():
    """A read-only NumPy array: its read-only-ness must survive the import
    wherever the producer can say it. Legacy (unversioned) DLPack has no
    read-only flag, so stridemem.from_dlpack asks for a versioned capsule
    first (max_version=(1, 0)): NumPy >= 2.1 gives one with READ_ONLY set, and
    the import must be a tensor that refuses writes. A NumPy with legacy DLPack
    only (1.x) refuses to export a read-only array at all (BufferError), which
    is safe but leaves nothing to check: the output says so."""
    versioned = numpy_exports_versioned()
    ro = np.arange(4.0)
    ro.flags.writeable = False
    r0 = sys.getrefcount(ro)
    try:
        t = sm.from_dlpack(ro)
    except BufferError as e:
        if versioned:
            R.fail("import read-only: NumPy %s exports versioned DLPack (it can say read-only), "
                   "yet from_dlpack failed: %s" % (np.__version__, e))
        else:
            R.ok()  # refused by the producer, nothing imported: the safe answer
            R.skip("a read-only array imported read-only", "NumPy %s has legacy DLPack only, "
                   "which cannot say read-only, so it refuses to export a read-only array (%s): "
                   "stridemem imports nothing, and keeping read-only through an import is not "
                   "exercised with this NumPy (NumPy >= 2.1 exercises it)" % (np.__version__, e))
    else:
        R.check(versioned, "import read-only: NumPy %s has no versioned DLPack, yet a read-only "
                "array was imported (through a legacy capsule, which cannot say read-only)"
                % np.__version__)
        R.check(t.is_read_only, "import read-only: NumPy %s's read-only array was imported "
                "writable (the versioned capsule's READ_ONLY flag was lost)" % np.__version__)
        R.equal(t.data_ptr, addr(ro), "import read-only: same memory (no copy)")
        R.raises(sm.ERR_READ_ONLY, lambda: t.__setitem__((0,), 9.0),
                 "import read-only: a write through the import")
        R.raises(sm.ERR_READ_ONLY, lambda: t.add_(1.0), "import read-only: an in-place add")
        v = t.flip([0])
        R.check(v.is_read_only, "import read-only: a view of the import is read-only too")
        R.raises(sm.ERR_READ_ONLY, lambda: v.fill_(7.0), "import read-only: a write through a view")
        R.check(np.array_equal(ro, np.arange(4.0)), "import read-only: the array is unchanged")
        v.close()
        t.close()
        gc.collect()
        R.equal(sys.getrefcount(ro), r0, "import read-only: NumPy's deleter ran exactly once")
    if versioned:
        t = sm.from_dlpack(ro.__dlpack__(max_version=(1, 0)))
        R.check(t.is_read_only, "import read-only: a raw versioned capsule keeps READ_ONLY")
        t.close()
    # A raw legacy capsule of a read-only array: if the producer hands one
    # out, nothing in it says read-only and the import cannot know.
    try:
        cap = ro.__dlpack__()
    except BufferError:
        R.ok()  # refused by the producer: the safe answer
    else:
        t = sm.from_dlpack(cap)
        R.skip("read-only through a raw legacy capsule", "NumPy %s exported a read-only array "
               "through legacy DLPack, which cannot say read-only: stridemem imported it %s "
               "(the capsule does not tell)"
               % (np.__version__, "read-only" if t.is_read_only else "writable"))
        t.close()
    gc.collect()
    R.equal(sys.getrefcount(ro), r0, "import read-only: no reference to the array left")


def roundtrip_self():
    s0 = stats()
    t = sm.arange_n(0, 1, 24, "float32").view(2, 3, 4).permute(2, 0, 1)[::-1]
    for versioned in (False, True):
        what = "self round trip (%s)" % ("versioned" if versioned else "legacy")
        cap = t.__dlpack__(max_version=(1, 0) if versioned else None, normalize=False)
        u = sm.from_dlpack(cap)
        R.equal((u.shape, u.strides, u.data_ptr), (t.shape, t.strides, t.data_ptr), what + ": same layout and memory")
        R.check(np.array_equal(u.numpy(), t.numpy()), what + ": values")
        u.add_(1.0)
        R.check(np.array_equal(u.numpy(), t.numpy()), what + ": writes shared")
        del cap
        u.close()
    t.close()
    R.equal(stats(), s0, "self round trip: everything freed")
    R.equal(sm.Tensor.__dlpack_device__(sm.zeros(1)), (1, 0), "__dlpack_device__ of a CPU tensor")


def managed_of(cap):
    """The DLManagedTensorVersioned inside a live versioned capsule."""
    return sm.DLManagedTensorVersioned.from_address(
        sm._PyCapsule_GetPointer(cap, ctypes.addressof(sm._CAPSULE_VERSIONED)))


def export_copies():
    s0 = stats()
    t = sm.arange_n(0, 1, 6, "float64").view(2, 3)
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    m = managed_of(cap)
    R.check(m.flags & sm.DLPACK_FLAG_IS_COPIED, "copy=True: the capsule is flagged IS_COPIED")
    R.equal((m.version.major, m.version.minor), (1, 0), "versioned capsule: DLPack 1.0")
    R.check(m.dl_tensor.data != t.data_ptr, "copy=True: the capsule's data is not the tensor's")
    u = sm.from_dlpack(cap)
    R.check(not u.same_storage(t) and np.array_equal(u.numpy(), t.numpy()), "copy=True exports a copy")
    u.fill_(-1.0)
    R.check(np.array_equal(t.numpy(), np.arange(6.0).reshape(2, 3)), "copy=True: writes to the copy stay there")
    u.close()
    # copy=True of a permuted view: a fresh row-major copy.
    cap = t.T.__dlpack__(max_version=(1, 0), copy=True)
    u = sm.from_dlpack(cap)
    R.equal((u.shape, u.strides), ((3, 2), (2, 1)), "copy=True of a transpose: row-major")
    R.check(np.array_equal(u.numpy(), np.arange(6.0).reshape(2, 3).T), "copy=True of a transpose: values")
    u.close()
    # Legacy capsules can carry a copy too (just not the flag).
    arr = np.from_dlpack(CapsuleHolder(t.__dlpack__(copy=True)))
    R.check(addr(arr) != t.data_ptr and np.array_equal(arr, t.numpy()), "legacy copy=True: a copy for NumPy")
    del arr
    for copy in (False, None):
        cap = t.__dlpack__(max_version=(1, 0), copy=copy)
        m = managed_of(cap)
        R.check(not (m.flags & sm.DLPACK_FLAG_IS_COPIED) and m.dl_tensor.data == t.data_ptr,
                "copy=%s exports the same memory, not flagged" % copy)
        del m, cap
    # Asking for the tensor's own device is no reason to copy.
    cap = t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)
    R.equal(managed_of(cap).dl_tensor.data, t.data_ptr, "dl_device = own device, copy=False: zero copy")
    del cap
    try:
        t.__dlpack__(dl_device=(2, 0), copy=False)
        R.fail("export to another device with copy=False succeeded")
    except BufferError:
        R.ok()
    try:
        t.__dlpack__(stream=5)
        R.fail("a CPU export accepted a stream")
    except BufferError:
        R.ok()
    t.close()
    R.equal(stats(), s0, "copies on export: every copy freed")


def export_no_copy_refused():
    """copy=False where the export needs a copy: BufferError carrying the
    library's message, nothing exported, nothing leaked."""
    s0 = stats()
    n0 = sm.DLPACK_STATS["exported"]
    t = sm.arange_n(0, 1, 6, "int32").flip(0)
    for versioned in (None, (1, 0)):
        try:
            t.__dlpack__(max_version=versioned, normalize=True, copy=False)
            R.fail("copy=False with normalize of a negative stride succeeded")
        except BufferError as e:
            R.check(isinstance(e, sm.StrideMemError) and e.status == sm.ERR_UNSUPPORTED,
                    "copy=False refusal: SM_ERR_UNSUPPORTED, got %r" % (e,))
            R.check("negative" in str(e) and str(e).endswith(sm.last_error()),
                    "copy=False refusal: the library's message, got %r" % str(e))
    R.equal(sm.DLPACK_STATS["exported"], n0, "refused exports made no capsule")
    # normalize=False: the negative strides travel as they are, zero copy.
    cap = t.__dlpack__(max_version=(1, 0), copy=False, normalize=False)
    m = managed_of(cap)
    R.check(m.dl_tensor.data == t.data_ptr and m.dl_tensor.strides[0] == -1,
            "copy=False, normalize=False: the negative stride itself")
    del m, cap
    t.close()
    R.equal(stats(), s0, "refused exports: nothing leaked")


def export_stack_tensor():
    """A tensor carved from a stack of views is exported only as a copy."""
    with sm.Stack(4096) as s:
        t = s.push((4,), "float32")
        t.copy_(sm.from_numpy(np.arange(4, dtype=np.float32)))
        for copy in (None, False):
            try:
                t.__dlpack__(max_version=(1, 0), copy=copy)
                R.fail("stack tensor exported without a copy (copy=%s)" % copy)
            except BufferError as e:
                R.check("stack" in str(e), "stack refusal names the stack: %r" % str(e))
        cap = t.__dlpack__(max_version=(1, 0), copy=True)
        R.check(managed_of(cap).flags & sm.DLPACK_FLAG_IS_COPIED, "stack tensor copy: flagged IS_COPIED")
        u = sm.from_dlpack(cap)
        t.close()
    # The stack is gone; the exported copy is not.
    R.check(np.array_equal(u.numpy(), np.arange(4, dtype=np.float32)), "stack tensor copy outlives the stack")
    u.close()


def export_normalized():
    t = sm.arange_n(0, 1, 6, "int32").flip(0)
    cap = t.__dlpack__(max_version=(1, 0), normalize=True)
    R.check(managed_of(cap).flags & sm.DLPACK_FLAG_IS_COPIED, "normalized copy: flagged IS_COPIED")
    u = sm.from_dlpack(cap)
    R.check(np.array_equal(u.numpy(), t.numpy()), "normalized export: values")
    R.check(all(s > 0 for s in u.strides) and not u.same_storage(t),
            "normalized export of a negative-stride tensor is a dense copy (strides %s)" % (u.strides,))
    u.close()
    d = sm.arange_n(0, 1, 6, "int32")
    cap = d.__dlpack__(max_version=(1, 0), normalize=True, copy=False)
    m = managed_of(cap)
    R.check(not (m.flags & sm.DLPACK_FLAG_IS_COPIED) and m.dl_tensor.data == d.data_ptr,
            "normalize of positive strides: zero copy, not flagged")
    del m, cap
    d.close()
    t.close()


def exported_capsules_are_swept():
    """The module holds every exported capsule until nobody else does; then
    dlpack_collect() releases it and its destructor frees the export."""
    sm.dlpack_collect()
    s0 = stats()
    live0 = sm.dlpack_live_count()
    deleted0 = sm.DLPACK_STATS["destructor_deleted"]
    t = sm.arange_n(0, 1, 100, "float32")
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    R.equal(sm.dlpack_live_count(), live0 + 1, "an exported capsule is held")
    R.equal(sm.dlpack_collect(), 0, "a capsule someone holds is not swept")
    R.equal(stats()[0], s0[0] + 2, "the tensor and its exported copy are alive")
    del cap
    R.equal(sm.dlpack_collect(), 1, "a capsule nobody holds is swept")
    R.equal(sm.dlpack_live_count(), live0, "the swept capsule left the registry")
    R.equal(sm.DLPACK_STATS["destructor_deleted"], deleted0 + 1, "its destructor ran the deleter")
    t.close()
    R.equal(stats(), s0, "swept capsule: the exported copy is freed")


def roundtrip_numpy(dtype):
    """stridemem -> NumPy -> stridemem and NumPy -> stridemem -> NumPy: the
    same memory, dtype and bits at the end (uint64 values above 2^63 and
    complex parts included)."""
    base = sample(dtype, (3, 5), seed=11)
    t = sm.from_numpy(base)
    v = t[:, ::-2]
    a = np.from_dlpack(CapsuleHolder(v.__dlpack__(normalize=False)))
    # NumPy 1.24 marks an imported array read-only and will not export it
    # again: re-export the same memory through a writable array over it.
    u = sm.from_dlpack(writable_alias(a) if not a.flags.writeable else a)
    R.equal(u.dtype, dtype, "sm -> np -> sm %s: dtype" % dtype)
    R.equal((u.data_ptr, u.shape, u.strides), (v.data_ptr, v.shape, v.strides),
            "sm -> np -> sm %s: same memory and layout" % dtype)
    R.equal(u.numpy().tobytes(), base[:, ::-2].tobytes(), "sm -> np -> sm %s: bits" % dtype)
    for x in (u, v, t):
        x.close()
    del a
    b = sample(dtype, (4, 3), seed=12).T
    w = sm.from_dlpack(b)
    c = np.from_dlpack(w)
    R.equal(c.dtype, b.dtype, "np -> sm -> np %s: dtype" % dtype)
    R.equal((addr(c), c.shape, c.strides), (addr(b), b.shape, b.strides),
            "np -> sm -> np %s: same memory and layout" % dtype)
    R.equal(c.tobytes(), b.tobytes(), "np -> sm -> np %s: bits" % dtype)
    w.close()


def refused_by_numpy(dtype):
    """NumPy cannot take dtype: the export must be refused cleanly (a Python
    exception, not a crash or a SystemError) and leak nothing."""
    s0 = stats()
    t = sm.zeros(3, dtype=dtype)
    try:
        np.from_dlpack(t)
        R.fail("numpy.from_dlpack accepted a %s tensor it cannot represent?" % dtype)
    except SystemError as e:
        R.fail("%s export refused by NumPy with a SystemError (a lost exception): %s" % (dtype, e))
    except Exception:
        R.ok()
    t.close()
    R.equal(stats(), s0, "%s export refused by NumPy: capsule freed" % dtype)


def main():
    for dt in NP_DTYPES:
        if dt == "bool" and not numpy_takes("bool"):
            R.skip("DLPack bool exchange with NumPy %s" % np.__version__,
                   "this NumPy has no bool in DLPack")
            refused_by_numpy("bool")
            continue
        R.run("export " + dt, export_to_numpy, dt)
        R.run("import " + dt, import_from_numpy, dt)
        R.run("round trip " + dt, roundtrip_numpy, dt)
    R.run("export expanded", export_expanded)
    R.run("export lifetime", export_lifetime)
    R.run("import lifetime", import_lifetime)
    R.run("import read-only", import_read_only)
    R.run("self round trip", roundtrip_self)
    R.run("normalized export", export_normalized)
    R.run("copies on export", export_copies)
    R.run("copy=False refused", export_no_copy_refused)
    R.run("NumPy 2's __dlpack__ call", export_numpy2_call)
    R.run("stack tensor export", export_stack_tensor)
    R.run("exported capsules are swept", exported_capsules_are_swept)
    # bfloat16: NumPy has no such dtype and must refuse it; nothing may leak.
    refused_by_numpy("bfloat16")
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
