#!/usr/bin/python3
"""DLPack with NumPy (CPU): the checks test_dlpack_numpy.py does not make.

- Chains: stridemem -> stridemem -> NumPy and NumPy -> stridemem -> NumPy
  alias one block of memory; every release order of the three owners frees
  it exactly once, and only after the last one. (stridemem -> NumPy ->
  stridemem: NumPy 1.x refuses to re-export its read-only from_dlpack
  result; the refusal must be clean.)
- More layouts exported: up to 16 dims, overlapping windows (unfold),
  diagonals, as_strided with an offset, movedim; NumPy views of an exported
  array keep our storage alive.
- Exports that are copies (normalize: negative strides -> dense copy;
  copy=True) seen by NumPy: positive strides, same values, a different block,
  the original untouched.
- NumPy arrays stridemem cannot represent (complex, unsigned 16/32/64-bit,
  float128, NumPy 1.24's bool, byte-swapped, strides that are not a multiple
  of the item size): the import is refused with a clear error, and the array
  is left exactly as it was (its capsule deleter ran, its reference count is
  back, nothing of ours is alive).
- Many round trips and threads: memory statistics return to the baseline.
"""

import ctypes
import gc
import itertools
import os
import sys
import threading
import weakref

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import CapsuleHolder, Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_dlpack_roundtrip")


def addr(a):
    return a.__array_interface__["data"][0]


def stats():
    gc.collect()
    s = sm.memory_stats("cpu")
    return s["active_storages"], s["allocated_bytes"]


def live_handles():
    t, s, k = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    sm.lib.sm_debug_live_handles(ctypes.byref(t), ctypes.byref(s), ctypes.byref(k))
    return t.value, s.value, k.value


# ---------------------------------------------------------------------------
# Chains through both libraries, every release order
# ---------------------------------------------------------------------------

def numpy_reexport():
    """NumPy 1.x marks np.from_dlpack results read-only and refuses to export
    read-only arrays: ours -> NumPy -> ours must then fail cleanly (a
    BufferError, nothing leaked). A NumPy that re-exports must alias."""
    s0 = stats()
    t = sm.arange_n(0, 1, 12, "float64")
    arr = np.from_dlpack(t)
    try:
        u = sm.from_dlpack(arr)
        R.equal(u.data_ptr, t.data_ptr, "ours->numpy->ours: aliases our memory")
        u.close()
    except BufferError as e:
        R.check(not arr.flags.writeable and "readonly" in str(e).replace("-", ""),
                "ours->numpy->ours refused by NumPy for a read-only array (%s)" % e)
    t.close()
    del arr
    R.equal(stats(), s0, "ours->numpy->ours: nothing left")


def chain_ours_ours_numpy():
    """t -> u = sm.from_dlpack(t's capsule) -> arr = np.from_dlpack(u): one
    block, two export contexts chained (arr's holds u, u's storage holds t's
    export). Released in each of the 6 orders, the storage lives until the
    last owner goes, then it is freed (statistics back to the baseline)."""
    s0 = stats()
    for order in itertools.permutations(("t", "arr", "u")):
        what = "chain ours->ours->numpy, release order %s" % (order,)
        t = sm.arange_n(0, 1, 12, "float64").view(3, 4)[:, ::-1]
        ptr = t.data_ptr
        u = sm.from_dlpack(t.__dlpack__(max_version=(1, 0), normalize=False))
        arr = np.from_dlpack(CapsuleHolder(u.__dlpack__(normalize=False)))
        R.equal(addr(arr), ptr, what + ": NumPy sees our memory")
        R.equal(u.data_ptr, ptr, what + ": the re-import sees it too")
        R.equal(u.strides, t.strides, what + ": strides survive both hops")
        u.add_(100.0)
        R.check(np.array_equal(t.numpy(), arr) and np.array_equal(u.numpy(), arr),
                what + ": one write, seen by all three")
        R.equal(float(arr[0, 0]), 103.0, what + ": value after the write")
        owners = {"t": t, "arr": arr, "u": u}
        del t, arr, u
        for i, name in enumerate(order):
            obj = owners.pop(name)
            if isinstance(obj, sm.Tensor):
                obj.close()
            del obj
            gc.collect()
            alive = stats()[0] - s0[0]
            if i < 2:
                R.check(alive >= 1, what + ": storage freed after releasing only %s"
                        % (order[:i + 1],))
                # Whoever is left still reads the right values.
                for rest in owners.values():
                    vals = rest.numpy() if isinstance(rest, sm.Tensor) else np.array(rest)
                    R.equal(float(vals[0, 0]), 103.0,
                            what + ": value read after releasing %s" % (order[:i + 1],))
                    del rest, vals  # no stray reference may outlive the loop
        R.equal(stats(), s0, what + ": everything freed at the end")


def chain_numpy_ours_numpy():
    """a (NumPy) -> t = sm.from_dlpack(a) -> b = np.from_dlpack(t): b aliases
    a; the original array lives until both t and b are gone, in any order."""
    s0 = stats()
    for order in itertools.permutations(("a", "t", "b")):
        what = "chain numpy->ours->numpy, release order %s" % (order,)
        a = np.arange(20, dtype=np.int32).reshape(4, 5)[::-1, 1::2]
        w = weakref.ref(a.base if a.base is not None else a)
        t = sm.from_dlpack(a)
        b = np.from_dlpack(CapsuleHolder(t.__dlpack__(normalize=False)))
        R.check(np.shares_memory(a, b), what + ": the round trip aliases the original")
        R.equal(b.strides, a.strides, what + ": strides survive both hops")
        t.fill_(7)
        R.check(np.all(a == 7) and np.all(b == 7), what + ": our write, seen by both arrays")
        owners = {"a": a, "t": t, "b": b}
        del a, t, b
        for i, name in enumerate(order):
            obj = owners.pop(name)
            if isinstance(obj, sm.Tensor):
                obj.close()
            del obj
            gc.collect()
            if i < 2:
                R.check(w() is not None, what + ": original freed after releasing only %s"
                        % (order[:i + 1],))
        R.check(w() is None, what + ": the original array is freed at the end")
        R.equal(stats(), s0, what + ": nothing of ours left")


def numpy_views_keep_export_alive():
    s0 = stats()
    t = sm.arange_n(0, 1, 100, "float32")
    arr = np.from_dlpack(t)
    v = arr[10:20:3]
    t.close()
    del arr
    gc.collect()
    R.equal(stats()[0], s0[0] + 1, "a NumPy view of an exported array keeps our storage")
    R.check(np.array_equal(v, np.arange(10, 20, 3, dtype=np.float32)),
            "values through the NumPy view after every other owner is gone")
    del v
    R.equal(stats(), s0, "storage freed with the last NumPy view")


# ---------------------------------------------------------------------------
# More layouts
# ---------------------------------------------------------------------------

def export_more_layouts():
    base_np = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    t = sm.from_numpy(base_np)
    flat = t.view(-1)
    flat_np = base_np.reshape(-1)
    win = np.lib.stride_tricks.sliding_window_view(flat_np, 7)[::4]
    cases = [
        ("movedim", t.movedim([0, 1], [3, 2]), np.moveaxis(base_np, [0, 1], [3, 2])),
        ("diagonal", t.diagonal(1, 2, 3), np.diagonal(base_np, 1, 2, 3)),
        ("unfold (overlapping windows)", flat.unfold(0, 7, 4), win),
        ("as_strided with offset", t.as_strided((3, 4), (7, -2), 40),
         np.lib.stride_tricks.as_strided(flat_np[40:], (3, 4), (56, -16))),
        ("select middle + negative step", t[1, :, ::-1, 2], base_np[1, :, ::-1, 2]),
        ("size 0 in the middle, odd strides", t[:, 1:1, ::-2], base_np[:, 1:1, ::-2]),
    ]
    for name, v, want in cases:
        what = "export %s" % name
        # Negative strides as they are (NumPy takes them; the default refuses).
        arr = np.from_dlpack(CapsuleHolder(v.__dlpack__(normalize=False)))
        R.equal(arr.shape, want.shape, what + ": shape")
        R.check(np.array_equal(arr, want), what + ": values")
        if arr.size:
            R.equal(addr(arr), v.data_ptr, what + ": same memory")
            R.equal(arr.strides, tuple(s * 8 for s in v.strides), what + ": strides")
        del arr
        v.close()
    # 16 dims (the most we have): every dim 1 or 2.
    shape = (2, 1) * 8
    t16 = sm.arange_n(0, 1, 2 ** 8, "int16").view(*shape)
    p16 = t16.permute(*range(15, -1, -1))
    want = np.arange(2 ** 8, dtype=np.int16).reshape(shape).transpose()
    arr = np.from_dlpack(p16)
    R.equal(arr.ndim, 16, "export 16-d: ndim")
    R.check(np.array_equal(arr, want), "export 16-d permuted: values")
    R.equal(addr(arr), p16.data_ptr, "export 16-d permuted: same memory")
    back = sm.from_dlpack(want)
    R.equal(back.ndim, 16, "import 16-d: ndim")
    R.check(np.array_equal(back.numpy(), want), "import 16-d: values")
    back.close()
    del arr
    p16.close()
    t16.close()
    flat.close()
    t.close()


def copy_export_to_numpy(what, kwargs):
    """An export that is a copy (normalize of negative strides, copy=True),
    seen by NumPy: positive strides, same values, a different block, the
    original untouched by writes to the copy, the copy freed with the array."""
    s0 = stats()
    t = sm.arange_n(0, 1, 24, "int64").view(4, 6)[::-1, ::-3]
    orig = t.numpy().copy()
    cap = t.__dlpack__(**kwargs)
    arr = np.from_dlpack(CapsuleHolder(cap))
    R.check(all(s > 0 for s in arr.strides), "%s: NumPy sees positive strides %s"
            % (what, arr.strides))
    R.check(np.array_equal(arr, orig), "%s: values" % what)
    R.check(addr(arr) != t.data_ptr, "%s: a different block" % what)
    writable = np.ndarray(arr.shape, arr.dtype,
                          buffer=(ctypes.c_char * arr.nbytes).from_address(addr(arr)),
                          strides=arr.strides)
    writable[...] = -1
    R.check(np.array_equal(t.numpy(), orig), "%s: the original is untouched "
            "by writes to the copy" % what)
    del writable, arr, cap
    t.close()
    R.equal(stats(), s0, "%s: the copy is freed with NumPy's array" % what)


# ---------------------------------------------------------------------------
# NumPy arrays we cannot represent: refused, nothing changed
# ---------------------------------------------------------------------------

def refused_imports():
    s0 = stats()
    h0 = live_handles()
    # complex64/128 and uint16/32/64 are stridemem dtypes since issue 13.
    cases = [
        ("longdouble", np.arange(6, dtype=np.longdouble), (sm.ERR_DTYPE,)),
    ]
    for name, a, statuses in cases:
        what = "import of %s" % name
        before = a.copy()
        r0 = sys.getrefcount(a)
        try:
            cap = a.__dlpack__()
        except (BufferError, TypeError, ValueError) as e:
            # NumPy itself refuses to export this dtype: nothing to import.
            R.check(bool(str(e)), what + ": NumPy refused with a message")
            R.equal(sys.getrefcount(a), r0, what + ": NumPy's refusal leaked a reference")
            continue
        try:
            t = sm.from_dlpack(cap)
            R.fail("%s: imported as %s (no such dtype here)" % (what, t.dtype))
            t.close()
        except sm.StrideMemError as e:
            R.check(e.status in statuses, "%s: status %s (%s)" % (what, e.status_name, e.message))
            R.check("dlpack" in e.message.lower() or "dtype" in e.message.lower(),
                    what + ": message explains (%r)" % e.message)
        R.check("used_dltensor" not in repr(cap), what + ": a refused capsule is not consumed")
        del cap
        gc.collect()
        R.equal(sys.getrefcount(a), r0, what + ": the capsule's own deleter released the array")
        R.check(np.array_equal(a, before), what + ": the array is unchanged")
    # Arrays NumPy 1.x will not export: bool (1.24), byte-swapped, strides that
    # are not a multiple of the item size, read-only. Our call must pass the
    # refusal through as an ordinary Python error.
    rec = np.zeros(4, dtype=[("a", np.int8), ("b", np.int32)])
    odd = rec["b"]  # 5-byte strides
    cases = [("bool", np.array([True, False])),
             ("byte-swapped int32", np.arange(4, dtype=">i4" if sys.byteorder == "little"
                                                 else "<i4")),
             ("5-byte strides", odd)]
    for name, a in cases:
        what = "import of %s" % name
        r0 = sys.getrefcount(a)
        try:
            t = sm.from_dlpack(a)
            # A NumPy that does export it must give us the same values.
            R.check(np.array_equal(t.numpy(), a), what + ": imported, values match")
            R.equal(t.data_ptr, addr(a), what + ": imported zero copy")
            t.close()
        except SystemError as e:
            R.fail("%s: SystemError (a lost exception): %s" % (what, e))
        except (BufferError, TypeError, ValueError, sm.StrideMemError) as e:
            R.check(bool(str(e)), what + ": refused with a message (%s)" % type(e).__name__)
        gc.collect()
        R.equal(sys.getrefcount(a), r0, what + ": no reference leaked")
    R.equal(stats(), s0, "refused imports: nothing of ours alive")
    R.equal(live_handles(), h0, "refused imports: no handle left")


# ---------------------------------------------------------------------------
# Volume and threads
# ---------------------------------------------------------------------------

def many_round_trips():
    s0 = stats()
    h0 = live_handles()
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    r0 = sys.getrefcount(a)
    t = sm.zeros(8, 8)
    ok = True
    for i in range(2000):
        u = sm.from_dlpack(a.T)          # NumPy -> us
        arr = np.from_dlpack(u)          # us -> NumPy
        if i % 2:
            u.close()
            ok &= arr[1, 0] == 1.0
            del arr
        else:
            ok &= arr[1, 0] == 1.0
            del arr
            u.close()
        c = t.__dlpack__(max_version=(1, 0))  # ours, versioned, consumed by us
        w = sm.from_dlpack(c)
        del c
        w.close()
    R.check(ok, "many round trips: values")
    t.close()
    gc.collect()
    R.equal(sys.getrefcount(a), r0, "many round trips: every NumPy deleter ran")
    R.equal(stats(), s0, "many round trips: storages back to the baseline")
    R.equal(live_handles(), h0, "many round trips: handles back to the baseline")


def threads():
    s0 = stats()
    errors = []
    src = np.arange(1000, dtype=np.float64)
    r0 = sys.getrefcount(src)

    def work(seed):
        try:
            for i in range(300):
                t = sm.from_dlpack(src[seed::7])
                arr = np.from_dlpack(CapsuleHolder(t[::-1].__dlpack__(normalize=False)))
                if arr[-1] != float(seed):
                    errors.append("thread %d: value %r" % (seed, arr[-1]))
                del arr
                t.close()
        except Exception as e:  # pragma: no cover - reported below
            errors.append("thread %d: %s: %s" % (seed, type(e).__name__, e))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    R.check(not errors, "threads: %s" % errors[:3])
    gc.collect()
    R.equal(sys.getrefcount(src), r0, "threads: every NumPy deleter ran once")
    R.equal(stats(), s0, "threads: storages back to the baseline")


def main():
    R.run("ours->numpy->ours", numpy_reexport)
    R.run("chain ours->ours->numpy", chain_ours_ours_numpy)
    R.run("chain numpy->ours->numpy", chain_numpy_ours_numpy)
    R.run("numpy views keep the export alive", numpy_views_keep_export_alive)
    R.run("more layouts", export_more_layouts)
    R.run("normalized export to numpy", copy_export_to_numpy, "normalized export",
          {"normalize": True})
    R.run("copy=True export to numpy", copy_export_to_numpy, "copy=True export",
          {"copy": True})
    R.run("refused imports", refused_imports)
    R.run("many round trips", many_round_trips)
    R.run("threads", threads)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
