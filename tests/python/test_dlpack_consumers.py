#!/usr/bin/python3
"""DLPack must never crash a consumer: every export that NumPy and PyTorch
(1.13 here) are handed gives them a correct tensor or a clean exception.

The matrix: every stridemem dtype (bool, 8/16/32/64-bit ints, uint16/32/64,
float16, bfloat16, float32/64, complex64/128) over dense, 0-d, size-0,
size-0 with a negative stride, expanded (stride 0), a non-compact slice,
transposed, flipped, a negative step, a flipped size-1 dim, unfolded
(overlapping windows) and expanded-then-flipped layouts, through each
consumer's own from_dlpack(t) (the call that cannot ask for anything).

What each case must give:
- a dtype the consumer takes through DLPack from its own arrays (probed,
  not listed): the right values, zero copy (same data pointer, same strides
  on every dim that steps) when the layout has no negative stride;
- a dtype it does not take (torch 1.13: uint16/32/64; NumPy 1.24: bool,
  bfloat16): a Python exception, not a SystemError;
- a negative stride on a dim of more than one element: our BufferError
  (legacy capsules, which both consumers ask for here) naming the ways out;
  copy=True, normalize=True: a correct dense copy; copy=False: BufferError;
  numpy.asarray(t) and normalize=False (NumPy): zero copy, negative strides.

Every consumer call runs in a child process (this file with --child): an
abort is seen as the child's exit status and reported as the failure of the
case it was running; the remaining cases run in a new child. A self-test
case aborts on purpose and must be reported exactly so.

Versioned exports (no consumer here takes them: NumPy < 2.1, torch < 2.4)
are checked in this process through the capsule itself: the default export
of a negative-stride tensor is a dense copy flagged IS_COPIED.
"""

import ctypes
import gc
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import CapsuleHolder, Results, import_stridemem  # noqa: E402

import numpy as np  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "uint16", "uint32", "uint64", "complex64", "complex128"]

# (name, f(stridemem or NumPy 4x6 base) -> the same view); both libraries
# spell these views alike, so one function builds ours and the reference.
LAYOUTS = [
    ("dense", lambda b: b),
    ("0-d", lambda b: b[2, 3, ...]),
    ("size 0", lambda b: b[1:1]),
    ("size 0, negative stride", lambda b: b[1:1, ::-1]),
    ("expanded (stride 0)", lambda b: _expand(b[1:2], (3, 6))),
    ("non-compact slice", lambda b: b[1:, ::2]),
    ("transposed", lambda b: b.T),
    ("flipped", lambda b: b[::-1]),
    ("negative step", lambda b: b[::-1, ::-2]),
    ("flipped size-1 dim", lambda b: b[1:2][::-1]),
    ("unfolded (overlapping)", lambda b: _unfold(b.reshape(-1) if isinstance(b, np.ndarray)
                                                 else b.view(-1), 5, 3)),
    ("expanded then flipped", lambda b: _expand(b[1:2], (3, 6))[:, ::-1]),
]

# Modes of export: how the consumer is handed our tensor.
MODES = ["default", "copy=True", "normalize=True", "copy=False", "normalize=False",
         "numpy.asarray"]


def _expand(v, shape):
    return np.broadcast_to(v, shape) if isinstance(v, np.ndarray) else v.expand(*shape)


def _unfold(flat, size, step):
    if isinstance(flat, np.ndarray):
        return np.lib.stride_tricks.sliding_window_view(flat, size)[::step]
    return flat.unfold(0, size, step)


def negative(shape, strides):
    """A negative stride that moves: on a dim of more than one element of a
    tensor that has elements."""
    return all(shape) and any(s < 0 and n > 1 for n, s in zip(shape, strides))


def cases(consumers=("numpy", "torch"), selftest=True):
    """Every case id, in order: consumer|dtype|layout|mode."""
    out = ["selftest|float32|dense|abort"] if selftest else []
    for consumer in consumers:
        if consumer == "mpi4py":
            out += ["mpi4py|float64|%s|default" % name for name in ("dense", "flipped")]
            continue
        for dt in DTYPES:
            for name, _ in LAYOUTS:
                out.append("%s|%s|%s|default" % (consumer, dt, name))
        for dt in ("float32", "int64", "complex128", "bfloat16", "bool", "uint32"):
            for name in ("flipped", "negative step", "expanded then flipped", "transposed"):
                for mode in MODES[1:]:
                    if mode == "numpy.asarray" and consumer != "numpy":
                        continue
                    if mode == "normalize=False" and consumer == "torch":
                        continue  # torch aborts on negative strides: see torch_raw below
                    out.append("%s|%s|%s|%s" % (consumer, dt, name, mode))
    return out


# ---------------------------------------------------------------------------
# The child: runs cases, one line per result, flushed before the next call
# ---------------------------------------------------------------------------

class Spy(object):
    """Our tensor as the consumer sees it, remembering what it asked for
    (a consumer that asks for max_version >= (1, 0) gets a versioned
    capsule, which may carry a flagged copy)."""

    def __init__(self, t):
        self.t, self.asked = t, {}

    def __dlpack__(self, *args, **kwargs):
        self.asked = dict(kwargs)
        return self.t.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def versioned(self):
        mv = self.asked.get("max_version")
        return mv is not None and tuple(mv)[:1] >= (1,)


class Child(object):
    def __init__(self, sm, device="cpu"):
        self.sm = sm
        self.device = device
        self.case = None
        self.torch = None
        self.cupy = None
        self.probed = {}

    def say(self, kind, text=""):
        sys.stdout.write("%s %s%s\n" % (kind, self.case, (": " + text) if text else ""))
        sys.stdout.flush()

    def check(self, cond, what):
        self.say("PASS" if cond else "FAIL", what)

    def base(self, dt):
        """Our 4x6 tensor of dt and the NumPy array of its bits (bfloat16:
        uint16 bit patterns)."""
        sm = self.sm
        vals = np.arange(24).reshape(4, 6)
        if dt == "bool":
            a = vals % 3 == 0
        elif dt == "bfloat16":
            # Small integers are exact in bfloat16: the top half of float32.
            a = (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            return sm.from_numpy(a, device=self.device, dtype="bfloat16"), a
        elif dt.startswith("complex"):
            a = (vals + 1j * (vals - 7)).astype(dt)
        elif dt.startswith("uint"):
            # Values at the top of the range, added in dt itself: next to an
            # int64 array NumPy 2 refuses a Python int past int64 and NumPy 1
            # goes through float64, which cannot hold these values.
            top = np.iinfo(dt).max - 30 if dt != "uint8" else 0
            a = vals.astype(dt) + np.array(top, dtype=dt)
            self.check(a.dtype == dt and int(a[3, 5]) == top + 23,
                       "%s values built exactly (last %d, want %d)" % (dt, int(a[3, 5]), top + 23))
        else:
            a = (vals - 5).astype(dt)
        return sm.from_numpy(a, device=self.device), a

    # -- consumers -------------------------------------------------------
    def takes(self, consumer, dt):
        """Whether the consumer takes dt through DLPack from its own arrays."""
        key = (consumer, dt)
        if key not in self.probed:
            try:
                if consumer in ("numpy", "cupy"):
                    if dt == "bfloat16":
                        raise TypeError("no bfloat16 in %s" % consumer)
                    xp = np if consumer == "numpy" else self.cupy
                    xp.from_dlpack(xp.zeros(2, dtype=dt))
                elif consumer == "mpi4py":
                    pass  # takes any dtype as bytes
                else:
                    torch = self.torch
                    x = torch.zeros(2, dtype=getattr(torch, dt),
                                    device="cuda" if self.device != "cpu" else "cpu")
                    torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x))
                self.probed[key] = True
            except Exception:
                self.probed[key] = False
        return self.probed[key]

    def consume(self, consumer, obj):
        if consumer == "numpy":
            return np.from_dlpack(obj)
        if consumer == "cupy":
            return self.cupy.from_dlpack(obj)
        if consumer == "mpi4py":
            from mpi4py import MPI
            return np.frombuffer(MPI.memory.frombuffer(obj, readonly=True), dtype=np.uint8)
        return self.torch.from_dlpack(obj)

    def bits(self, consumer, x, dt):
        """The consumer's array as NumPy, bfloat16 as uint16 bit patterns,
        whatever dtype the consumer gave it (its own bfloat16, e.g.
        ml_dtypes' in CuPy >= 14, is viewed as uint16: same item size)."""
        if consumer == "torch":
            if dt == "bfloat16":
                return x.view(self.torch.int16).cpu().numpy().view(np.uint16)
            return x.cpu().numpy()
        if consumer == "cupy":
            if dt == "bfloat16" and x.dtype.itemsize == 2:
                x = x.view(self.cupy.uint16)
            got = self.cupy.asnumpy(x)
        else:
            got = np.asarray(x)
        if dt == "bfloat16" and got.dtype != np.uint16 and got.dtype.itemsize == 2:
            got = got.view(np.uint16)
        return got

    def ptr_strides(self, consumer, x, dt):
        if consumer in ("numpy", "cupy"):
            item = x.itemsize
            ptr = x.__array_interface__["data"][0] if consumer == "numpy" else x.data.ptr
            return ptr, tuple(s // item for s in x.strides)
        return x.data_ptr(), tuple(x.stride())

    # -- one case ----------------------------------------------------------
    def run(self, case):
        self.case = case
        consumer, dt, layout, mode = case.split("|")
        self.say("BEGIN")
        try:
            if consumer == "selftest":
                os.abort()
            if consumer == "torch" and self.torch is None:
                import torch
                import torch.utils.dlpack
                self.torch = torch
            if consumer == "cupy" and self.cupy is None:
                import cupy
                self.cupy = cupy
            self.one(consumer, dt, layout, mode)
        except Exception as e:
            self.say("FAIL", "the case itself raised %s: %s" % (type(e).__name__, e))
        gc.collect()
        self.sm.dlpack_collect()
        self.say("END")

    def one(self, consumer, dt, layout, mode):
        sm = self.sm
        t, a = self.base(dt)
        fn = dict(LAYOUTS)[layout]
        v, ref = fn(t), fn(a)
        neg = negative(v.shape, v.strides)
        takes = self.takes(consumer, dt)
        what = "%s.from_dlpack(%s %s %s, %s)" % (consumer, self.device, dt, layout, mode)
        dev = v.__dlpack_device__()
        if consumer == "mpi4py":
            # mpi4py takes a legacy capsule and calls its deleter at once,
            # keeping only our tensor object: a copy would be freed under
            # it. The default export must refuse (so must mpi4py, for a
            # layout that is not one dense run).
            try:
                self.consume(consumer, v)
                self.check(not neg, what + ": mpi4py holds a buffer of a negative-stride export")
            except BufferError as e:
                self.check(True, what + ": refused (%s)" % e)
            return
        if mode == "default":
            obj = Spy(v)
            expect = None  # decided once the consumer has asked
        elif mode in ("copy=True", "normalize=True"):
            kw = {"copy": True} if mode == "copy=True" else {"normalize": True}
            obj = CapsuleHolder(v.__dlpack__(**kw), dev)
            expect = ("clean error" if not takes else
                      "copy" if neg or mode == "copy=True" else "zero copy")
        elif mode == "copy=False":
            try:
                v.__dlpack__(copy=False)
            except BufferError as e:
                self.check(neg and "contiguous()" in str(e) and "numpy.asarray" in str(e),
                           "%s: BufferError naming the ways out (%s)" % (what, e))
                return
            self.check(not neg, what + ": exported negative strides with copy=False")
            obj, expect = v, "zero copy" if takes else "clean error"
        elif mode == "normalize=False":
            obj, expect = CapsuleHolder(v.__dlpack__(normalize=False), dev), (
                "zero copy" if takes else "clean error")
        else:  # numpy.asarray: the array interface, zero copy, any strides
            x = np.asarray(v)
            ptr, strides = self.ptr_strides("numpy", x, dt)
            self.check(np.array_equal(x.view(ref.dtype), ref) and ptr == v.data_ptr,
                       what + ": same memory and values")
            return
        x = err = None
        try:
            x = self.consume(consumer, obj)
        except SystemError as e:
            self.check(False, "%s: SystemError (an exception lost in C): %s" % (what, e))
            return
        except Exception as e:
            err = e
        if expect is None:
            # The default: negative strides go out as a flagged copy in a
            # versioned capsule, and are refused in a legacy one.
            if neg and not obj.versioned():
                expect = "refused"
            elif not takes:
                expect = "clean error"
            else:
                expect = "copy" if neg else "zero copy"
            what += " (asked %s)" % ("versioned" if obj.versioned() else "legacy")
        if err is not None:
            e = err
            if expect == "refused":
                self.check(isinstance(e, BufferError) and isinstance(e, sm.StrideMemError)
                           and "contiguous()" in str(e) and "numpy.asarray" in str(e),
                           "%s: our BufferError naming the ways out, got %s: %s"
                           % (what, type(e).__name__, e))
            else:
                self.check(expect == "clean error", "%s: %s raised %s: %s (want %s)"
                           % (what, consumer, type(e).__name__, e, expect))
            return
        if expect == "clean error":
            # The probe found no DLPack path for dt in this consumer, yet it
            # took ours: then it must be right.
            expect = ("copy" if mode == "copy=True" or neg and mode in ("default", "normalize=True")
                      else "zero copy")
        self.check(expect in ("zero copy", "copy"), "%s: %s took it (want %s)"
                   % (what, consumer, expect))
        got = self.bits(consumer, x, dt)
        self.check(got.shape == ref.shape and got.dtype == ref.dtype
                   and np.array_equal(got, ref), "%s: values %r, want %r" % (what, got, ref))
        if not got.size:
            return
        ptr, strides = self.ptr_strides(consumer, x, dt)
        moving = [i for i, n in enumerate(v.shape) if n > 1]
        if expect == "zero copy":
            self.check(ptr == v.data_ptr and all(strides[i] == v.strides[i] for i in moving),
                       "%s: zero copy (pointer %#x vs %#x, strides %s vs %s)"
                       % (what, ptr, v.data_ptr, strides, v.strides))
        else:
            self.check(ptr != v.data_ptr and all(strides[i] >= 0 for i in moving),
                       "%s: a copy with no negative stride (strides %s)" % (what, strides))


def child_main(args):
    device = "cpu"
    if args and args[0].startswith("--device="):
        device, args = args[0].split("=", 1)[1], args[1:]
    ids = args
    sm = import_stridemem()
    c = Child(sm, device)
    for case in ids:
        c.run(case)
    return 0


# ---------------------------------------------------------------------------
# The parent: starts children, turns an abort into the failure of its case
# ---------------------------------------------------------------------------

def run_children(R, ids, device="cpu", timeout=600):
    """Runs ids in as few children as aborts allow, R.ok() / R.fail() for
    each check; returns {case: exit status} for the cases during which a
    child died."""
    died = {}
    todo = list(ids)
    while todo:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                            "--device=" + device] + todo,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=timeout)
        begun, ended = [], set()
        for line in p.stdout.splitlines():
            kind, _, rest = line.partition(" ")
            case, _, text = rest.partition(": ")
            if kind == "BEGIN":
                begun.append(case)
            elif kind == "END":
                ended.add(case)
            elif kind == "PASS":
                R.ok()
            elif kind == "FAIL":
                R.fail("%s: %s" % (case, text))
        if begun and begun[-1] not in ended:
            dead = begun[-1]
            died[dead] = p.returncode
            todo = todo[todo.index(dead) + 1:]
        elif p.returncode != 0 or len(ended) != len(todo):
            R.fail("a child ended with exit %d after %d of %d cases:\n%s"
                   % (p.returncode, len(ended), len(todo), p.stdout[-2000:]))
            break
        else:
            todo = []
    return died


def torch_raw():
    """What torch does with negative strides handed to it as they are
    (normalize=False): the reason for the default. Informational."""
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from _util import CapsuleHolder, import_stridemem\n"
            "import torch\n"
            "sm = import_stridemem()\n"
            "t = sm.arange_n(0, 1, 6, 'float64').flip(0)\n"
            "try:\n"
            "    x = torch.from_dlpack(CapsuleHolder(t.__dlpack__(normalize=False)))\n"
            "    print('took it: strides', x.stride(), 'values', x.tolist())\n"
            "except Exception as e:\n"
            "    print('refused:', type(e).__name__, e)\n" % HERE)
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    lines = p.stdout.strip().splitlines() or ["no output"]
    said = [x for x in lines if "what()" in x or "terminate" in x or "took it" in x
            or "refused" in x] or lines[-1:]
    print("NOTE: torch given negative strides as they are: exit %d, %s"
          % (p.returncode, said[0][:200]))


def bfloat16_bits_selftest(R):
    """Child.bits() for a consumer that takes bfloat16 as a 2-byte dtype of
    its own (CuPy >= 14 through ml_dtypes): the same uint16 bit patterns as
    for one that hands back uint16. NumPy's float16 stands in for that
    dtype, and NumPy itself for CuPy (asnumpy, view)."""
    class FakeCupy(object):
        uint16 = np.uint16
        asnumpy = staticmethod(np.asarray)

    c = Child(None)
    c.cupy = FakeCupy()
    own = np.array([[1.0, -2.0, 0.5], [3.0, 65504.0, -0.0]], np.float16)[::-1, ::2]
    want = np.array([[0x4200, 0x8000], [0x3C00, 0x3800]], np.uint16)
    for consumer in ("numpy", "cupy"):
        for what, x in (("its own 2-byte dtype", own), ("uint16", own.view(np.uint16)),
                        ("its own dtype, 0-d", own[1, 0, ...])):
            got = c.bits(consumer, x, "bfloat16")
            ref = want if x.ndim else want[1, 0, ...]
            R.check(got.dtype == np.uint16 and got.shape == ref.shape and np.array_equal(got, ref),
                    "bits(%s, bfloat16 as %s): %r, want %r" % (consumer, what, got, ref))
    got = c.bits("numpy", own, "float16")
    R.check(got.dtype == np.float16, "bits() leaves a dtype other than bfloat16 as it is")


def versioned_default(R, sm):
    """The versioned default export of a negative-stride tensor: a dense
    copy flagged IS_COPIED; of other layouts: zero copy, not flagged."""
    def managed(cap):
        return sm.DLManagedTensorVersioned.from_address(
            sm._PyCapsule_GetPointer(cap, ctypes.addressof(sm._CAPSULE_VERSIONED)))

    t = sm.arange_n(0, 1, 24, "float32").view(4, 6)
    for name, fn in LAYOUTS:
        v = fn(t.retain())
        cap = v.__dlpack__(max_version=(1, 0))
        m = managed(cap)
        dl = m.dl_tensor
        shape = tuple(dl.shape[i] for i in range(dl.ndim))
        strides = tuple(dl.strides[i] for i in range(dl.ndim))
        copied = bool(m.flags & sm.DLPACK_FLAG_IS_COPIED)
        what = "versioned default export of %s" % name
        R.check(not negative(shape, strides), "%s: no negative stride reaches the consumer "
                "(strides %s)" % (what, strides))
        if negative(v.shape, v.strides):
            R.check(copied and dl.data != v.data_ptr, what + ": a copy flagged IS_COPIED")
        else:
            R.check(not copied and (dl.data == v.data_ptr or not v.numel),
                    what + ": zero copy, not flagged")
        u = sm.from_dlpack(cap)
        R.check(np.array_equal(u.numpy(), v.numpy()), what + ": values")
        u.close()
        del m, dl, cap
        v.close()
    # copy=False refuses where the default would copy, and says why.
    f = t.flip([0])
    try:
        f.__dlpack__(max_version=(1, 0), copy=False)
        R.fail("versioned copy=False export of negative strides succeeded")
    except BufferError as e:
        R.check("copy=False" in str(e) and "contiguous()" in str(e),
                "versioned copy=False refusal names the cause and the ways out: %s" % e)
    # Our own import of our own tensor stays zero copy, negative strides and all.
    u = sm.from_dlpack(f)
    R.check(u.same_storage(f) and u.strides == f.strides and u.data_ptr == f.data_ptr,
            "sm.from_dlpack(our flipped tensor): zero copy, strides %s" % (u.strides,))
    u.close()
    f.close()
    t.close()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child_main(sys.argv[2:])
    sm = import_stridemem()
    R = Results("test_dlpack_consumers")
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        R.skip("PyTorch consumer cases", "torch is not importable (Debian: python3-torch)")
    consumers = ["numpy"] + (["torch"] if have_torch else [])
    try:
        import mpi4py  # noqa: F401  (MPI itself starts in the child)
        consumers.append("mpi4py")
    except ImportError:
        R.skip("mpi4py consumer cases", "mpi4py is not importable (Debian: python3-mpi4py)")
    ids = cases(consumers)
    died = run_children(R, ids)
    R.equal(died.pop("selftest|float32|dense|abort", None), -6,
            "the self-test case's abort is seen as the child's exit status (SIGABRT)")
    for case, rc in sorted(died.items()):
        R.fail("%s: the consumer killed the process (exit status %d)" % (case, rc))
    R.run("versioned default export", versioned_default, R, sm)
    R.run("bfloat16 bit patterns from any consumer dtype", bfloat16_bits_selftest, R)
    if have_torch:
        torch_raw()
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
