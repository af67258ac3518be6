#!/usr/bin/python3
"""The Python binding behaves as NumPy (and PyTorch) users expect: byte
order, copy/deepcopy/pickle, the array protocols (__array__ with NumPy 2's
copy semantics, __array_interface__, __cuda_array_interface__), dtype
objects, assignment, Python scalars, integer-array and boolean-mask reads,
repr, arange and shapes, exceptions that are also the built-ins, and a
docstring plus annotations on every public name. NumPy is the reference
wherever it does the same thing."""

import copy
import gc
import inspect
import os
import pickle
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_python_api")
RNG = np.random.default_rng(20261124)
NUMPY_DTYPES = [d for d in sm.DTYPES if d != "bfloat16"]


def raises(exc, fn, what, mentions=()):
    """fn() raises exc (a class or tuple) with a message mentioning each of
    `mentions`, in any case; returns the exception."""
    return R.raises_exc(exc, fn, what, mentions, ignore_case=True)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def sample(dtype, shape):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        return (RNG.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)


_KEEP = []  # memory and structs the read-only imports below point at


def read_only_tensor(arr):
    """A read-only float64 tensor over arr: a foreign versioned DLPack
    tensor with the READ_ONLY flag (no deleter: _KEEP holds the memory)."""
    import ctypes
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    m = sm.DLManagedTensorVersioned()
    m.version.major, m.version.minor, m.flags = 1, 0, sm.DLPACK_FLAG_READ_ONLY
    shape = (ctypes.c_int64 * arr.ndim)(*arr.shape)
    m.dl_tensor.data, m.dl_tensor.ndim = arr.ctypes.data, arr.ndim
    m.dl_tensor.device.device_type, m.dl_tensor.device.device_id = 1, 0
    m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes = 2, 64, 1
    m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    _KEEP.extend([arr, m, shape])
    out = ctypes.c_void_p()
    sm._call("sm_from_dlpack", ctypes.c_void_p(ctypes.addressof(m)), 1, ctypes.byref(out))
    return sm.Tensor._wrap(out)


def live():
    gc.collect()
    return sm.debug_live_handles()


# --------------------------------------------------------------------------
# Defects of the issue
# --------------------------------------------------------------------------


def byte_order():
    big = np.arange(3, dtype=">f4")
    R.check(same(sm.from_numpy(big).numpy(), np.arange(3, dtype=np.float32)),
            "from_numpy of a big-endian array converts to native order")
    R.check(same(sm.tensor(big).numpy(), np.arange(3, dtype=np.float32)), "tensor() of big-endian")
    raises(ValueError, lambda: sm.as_tensor(big), "as_tensor of a big-endian array",
           mentions=("byte order", "from_numpy"))
    for name in NUMPY_DTYPES:
        a = sample(name, (3, 4))
        swapped = a.astype(a.dtype.newbyteorder())
        R.check(same(sm.from_numpy(swapped).numpy(), a), "%s byte-swapped from_numpy" % name)
        R.check(sm.from_numpy(swapped).dtype == name, "%s byte-swapped keeps its dtype" % name)


def dtype_messages():
    for name in ("uint32", "complex64", "uint64", "complex128", "uint16"):
        R.equal(sm.from_numpy(np.zeros(2, dtype=name)).dtype, name, "from_numpy of %s" % name)
    for bad in ("float128", "complex256", "U3", "datetime64[s]"):
        raises(ValueError, lambda: sm.from_numpy(np.zeros(2, dtype=bad)), "from_numpy of %s" % bad,
               mentions=(np.dtype(bad).name if bad != "U3" else "<U3", "float32"))
    e = raises(ValueError, lambda: sm.from_numpy(np.zeros(2, dtype="float128")), "float128 message")
    R.check(e is not None and "bfloat16 bits" not in str(e), "the float128 message does not talk about bfloat16")


def copy_copy():
    base = live()
    t = sm.arange(6, dtype="float32").view(2, 3)
    c = copy.copy(t)
    R.check(c is not t and c.handle == t.handle, "copy.copy is a new owner of the same view")
    del c
    gc.collect()
    R.equal(t.shape, (2, 3), "the original works after its copy.copy is collected")
    c = copy.copy(t)
    t.close()
    R.equal(c.numpy().tolist(), [[0, 1, 2], [3, 4, 5]], "the copy works after the original is closed")
    del c, t
    R.equal(live(), base, "copy.copy leaks no handle")


def deep_copy():
    base = live()
    a = sm.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    p = a.permute(2, 0, 1)
    d = copy.deepcopy(p)
    R.check(not d.same_storage(a), "deepcopy has its own data")
    R.equal((d.shape, d.strides, d.storage_offset), (p.shape, p.strides, p.storage_offset),
            "deepcopy keeps shape, strides and offset")
    d.fill_(0)
    R.check(same(a.numpy(), np.arange(24, dtype=np.float32).reshape(2, 3, 4)),
            "writing the deepcopy leaves the original alone")
    # Views copied together keep sharing one new storage (as PyTorch).
    row = a[1]
    da, drow = copy.deepcopy([a, row])
    R.check(da.same_storage(drow) and not da.same_storage(a), "deepcopy keeps sharing inside one call")
    drow.fill_(-1)
    R.check(same(da.numpy()[1], np.full((3, 4), -1, np.float32)), "the shared deepcopy sees the write")
    R.check(same(a.numpy()[1], np.arange(12, 24, dtype=np.float32).reshape(3, 4)),
            "the original does not")
    # A tensor carved from a stack of views: cloned.
    with sm.Stack(1 << 12) as s:
        x = s.push((2, 3), "int32")
        x.copy_(np.arange(6, dtype=np.int32).reshape(2, 3))
        dx = copy.deepcopy(x[:, ::-1])
        x.fill_(9)
        del x
    R.check(same(dx.numpy(), np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::-1]),
            "deepcopy of a stack tensor survives the stack")
    for name in sm.DTYPES:
        t = sm.zeros(3, dtype=name)
        R.equal(copy.deepcopy(t).dtype, name, "deepcopy keeps %s" % name)
    del a, p, d, row, da, drow, dx, t
    R.equal(live(), base, "deepcopy leaks no handle")


def pickling():
    for name in sm.DTYPES:
        a = sample(name if name != "bfloat16" else "uint16", (3, 4, 5))
        t = sm.from_numpy(a, dtype=name)
        for what, v in (("row-major", t), ("permuted", t.permute(2, 0, 1)),
                        ("sliced", t[1:, ::2, ::-1]), ("0-d", t[1, 2, 3]), ("empty", t[:, :0])):
            u = pickle.loads(pickle.dumps(v))
            R.check(same(u.numpy(), v.numpy()) and u.dtype == name and u.device == v.device,
                    "%s %s pickle round trip" % (name, what))
            if what in ("row-major", "permuted", "0-d"):
                R.equal(u.strides, v.strides, "%s %s: dense strides survive pickling" % (name, what))
            else:
                R.check(u.is_contiguous(), "%s %s: a non-dense view unpickles row-major" % (name, what))
            R.check(not u.same_storage(v), "%s %s: unpickled data is new" % (name, what))
    ro = read_only_tensor(np.arange(4.0))
    R.check(same(pickle.loads(pickle.dumps(ro)).numpy(), np.arange(4.0)), "read-only tensor pickles")
    raises(ValueError, lambda: sm._unpickle_tensor(2, "float32", (1,), (1,), 0, "cpu", b"\0" * 4),
           "a newer pickle format is refused", mentions=("newer",))
    # Through another process: the handle is meaningless there, the bytes are not.
    t = sm.tensor(np.arange(24, dtype=np.int16).reshape(2, 3, 4)).permute(1, 2, 0)
    blob = pickle.dumps({"t": t, "c": sm.tensor([1 + 2j, 3 - 4j], dtype="complex64")})
    code = ("import pickle, sys; d = pickle.loads(sys.stdin.buffer.read()); "
            "t = d['t']; print(t.dtype, t.shape, t.strides, t.tolist(), d['c'].tolist())")
    r = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, timeout=60,
                       env=dict(os.environ))
    want = "int16 %s %s %s %s" % (t.shape, t.strides, t.tolist(), [1 + 2j, 3 - 4j])
    R.equal((r.returncode, r.stdout.decode().strip()), (0, want),
            "unpickled in another process (stderr: %s)" % r.stderr.decode()[-300:])


# --------------------------------------------------------------------------
# NumPy's array protocols
# --------------------------------------------------------------------------


def array_protocols():
    base = live()
    for name in sm.DTYPES:
        a = sample(name if name != "bfloat16" else "uint16", (4, 5))
        t = sm.from_numpy(a, dtype=name)
        v = t.T[::-1, 1:]
        got = np.asarray(v)
        R.check(same(got, a.T[::-1, 1:]), "%s np.asarray of a view" % name)
        R.check(got.ctypes.data == v.data_ptr, "%s np.asarray shares memory" % name)
        R.check(same(np.array(v), a.T[::-1, 1:]) and np.array(v).ctypes.data != v.data_ptr,
                "%s np.array copies" % name)
    t = sm.zeros(3, 4, dtype="float64")
    a = np.asarray(t)
    a[1, 2] = 5.0
    R.equal(t[1, 2].item(), 5.0, "a write through np.asarray shows in the tensor")
    t[0, 0] = 7.0
    R.equal(a[0, 0], 7.0, "a write through the tensor shows in the array")
    t.close()
    R.equal(float(a.sum()), 12.0, "the array stays valid after the tensor is closed")
    del a
    # __array__ with NumPy 2's copy keyword (NumPy 1.24 calls it without).
    t = sm.tensor(np.arange(6.0).reshape(2, 3))
    shared = t.__array__(copy=False)
    R.check(shared.ctypes.data == t.data_ptr, "__array__(copy=False) shares")
    fresh = t.__array__(copy=True)
    R.check(fresh.ctypes.data != t.data_ptr and same(fresh, np.arange(6.0).reshape(2, 3)),
            "__array__(copy=True) copies")
    R.check(same(t.__array__(np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)),
            "__array__(dtype) converts")
    raises(ValueError, lambda: t.__array__(np.float32, copy=False), "copy=False with another dtype",
           mentions=("copy",))
    R.check(same(np.asarray(t, dtype=np.int32), np.arange(6, dtype=np.int32).reshape(2, 3)),
            "np.asarray(t, dtype)")
    t.close()
    R.check(same(shared, np.arange(6.0).reshape(2, 3)), "__array__'s array outlives the tensor")
    del shared
    # A read-only tensor gives a read-only array.
    ro = read_only_tensor(np.arange(3.0))
    R.check(ro.is_read_only and not np.asarray(ro).flags.writeable, "read-only stays read-only")
    # Interface dicts.
    t = sm.zeros(2, 3, dtype="int32")
    ai = t.__array_interface__
    R.equal((ai["shape"], ai["typestr"], ai["strides"], ai["version"], ai["data"]),
            ((2, 3), "<i4", None, 3, (t.data_ptr, False)), "__array_interface__ of a row-major tensor")
    R.equal(t.T.__array_interface__["strides"], (4, 12), "byte strides of a transposed view")
    R.equal(t[:, ::-1].__array_interface__["strides"], (12, -4), "negative byte strides")
    R.equal(sm.zeros(2, dtype="bfloat16").__array_interface__["typestr"], "<u2", "bfloat16 as uint16 bits")
    R.check(not hasattr(t, "__cuda_array_interface__"), "no __cuda_array_interface__ on the CPU")
    cai = t.T._interface(cuda=True)  # the dict a CUDA tensor hands to CuPy
    R.equal((cai["strides"], cai["stream"], cai["version"]), ((4, 12), 1, 3),
            "CUDA array interface: byte strides and the legacy default stream as 1")
    R.equal(sm.zeros(0).__array_interface__["shape"], (0,), "size-0 interface")
    R.equal(np.asarray(sm.zeros(())).shape, (), "0-d np.asarray")
    R.equal(np.asarray(sm.zeros(0, 3)).shape, (0, 3), "size-0 np.asarray")
    # Stack tensors are reused after a pop: never shared with NumPy.
    with sm.Stack(1 << 12) as s:
        x = s.push(4, "float32")
        x.fill_(2.0)
        R.check(not hasattr(x, "__array_interface__"), "a stack tensor has no __array_interface__")
        arr = np.asarray(x)
        R.check(arr.ctypes.data != x.data_ptr and same(arr, np.full(4, 2, np.float32)),
                "np.asarray of a stack tensor copies")
        raises(ValueError, lambda: x.__array__(copy=False), "copy=False of a stack tensor")
        del x
    del t, v, got, ai, cai, ro, arr
    R.equal(live(), base, "the array protocols leak no handle")


def dtype_objects():
    for name in NUMPY_DTYPES:
        nd = np.dtype(name)
        for spelling in (nd, nd.type, name):
            t = sm.empty(2, dtype=spelling)
            R.equal(t.dtype, name, "empty(dtype=%r)" % (spelling,))
        R.check(t.dtype == nd and t.dtype == nd.type and not (t.dtype != nd),
                "%s dtype equals NumPy's" % name)
        R.check(sm.tensor([1], dtype=nd).to(dtype=np.float64).dtype == np.float64, "to(dtype=np.float64)")
    R.check(sm.zeros(1, dtype="bfloat16").dtype != np.uint16, "bfloat16 is not NumPy's uint16")
    R.check(sm.zeros(1).dtype == "f32" and sm.zeros(1).dtype == "float32", "aliases compare equal")
    R.check(sm.zeros(1).dtype != "float64" and sm.zeros(1).dtype != "nonsense", "unequal dtypes")
    R.equal({sm.zeros(1).dtype: 1}.get("float32"), 1, "a DType keys a dict like its name")
    d = sm.zeros(1, dtype="complex64").dtype
    R.equal((d.itemsize, d.is_complex, d.numpy, d.name, type(d.name)),
            (8, True, np.dtype(np.complex64), "complex64", str), "DType properties")
    with sm.Stack(1 << 12) as s:
        R.equal(s.push(3, np.uint8).dtype, "uint8", "Stack.push takes a NumPy dtype")
    R.equal(sm.full(2, 1, dtype=np.int8).dtype, "int8", "full takes a NumPy dtype")


def assignment():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = sm.tensor(a)
    cases = [
        ((slice(1, 3),), np.array([[1.5] * 6, [2.5] * 6], dtype=np.float32)),
        ((slice(1, 3),), [[9] * 6, [8] * 6]),
        ((slice(None), 2), [7, 6, 5, 4]),
        ((Ellipsis, slice(None, None, -2)), np.arange(3)),              # broadcast row
        ((slice(None), slice(0, 1)), np.array([[1], [2], [3], [4]])),   # broadcast column
        ((0,), 3.25),
        ((1, 1), np.float64(-2)),
        ((slice(None, None, -1), slice(2, 4)), np.array(11, dtype=np.int64)),  # 0-d
        ((None, 2), [0.5] * 6),
        ((slice(None), [1]), None),  # refused below
    ]
    for idx, value in cases:
        if value is None:
            continue
        a[idx] = value
        t[idx] = value
        R.check(same(t.numpy(), a), "t%r = %r matches NumPy" % (idx, value))
    i = sm.tensor(np.zeros((2, 3), dtype=np.int32))
    i[0] = [1.9, -1.9, 300.7]
    R.check(same(i.numpy()[0], np.array([1.9, -1.9, 300.7]).astype(np.int32)),
            "float values into int32 convert as NumPy's astype")
    i[1] = sm.tensor([4, 5, 6], dtype="int64")
    R.equal(i.tolist()[1], [4, 5, 6], "a tensor value")
    raises(IndexError, lambda: t.__setitem__((slice(None), [1]), 0), "assignment through an array index",
           mentions=("not supported",))
    raises(IndexError, lambda: t.__setitem__(7, 0), "assignment out of range")
    raises(ValueError, lambda: t.__setitem__(0, [1, 2]), "assignment of a shape that does not broadcast")
    raises(TypeError, lambda: t.__setitem__(0, ["a", "b"]), "assignment of strings")
    c = sm.zeros(3, dtype="complex128")
    c[1] = 1 + 2j
    c[2:] = np.array([3 - 1j])
    R.equal(c.tolist(), [0j, 1 + 2j, 3 - 1j], "complex assignment")


def python_scalars():
    for name in sm.DTYPES:
        a = sample(name if name != "bfloat16" else "float32", (2,))
        t = sm.tensor(a.tolist() if name == "bfloat16" else a, dtype=name)
        one = t[1]
        want = a[1] if name != "bfloat16" else t[1:].to(dtype="float32").numpy()[0]
        if name.startswith("complex"):
            R.equal(complex(one), complex(want), "%s complex()" % name)
        else:
            R.equal(float(one), float(want), "%s float()" % name)
            R.equal(int(one), int(want), "%s int()" % name)
        R.equal(bool(one), bool(want), "%s bool()" % name)
        R.equal(type(one.item()), type(np.asarray(want).item()) if name != "bfloat16" else float,
                "%s item() type" % name)
    R.equal(float(sm.tensor([[2.5]])), 2.5, "float() of a 1x1 tensor")
    R.equal(sm.tensor([1.0, 2.0], dtype="bfloat16")[1].item(), 2.0, "bfloat16 item() is its value")
    R.equal(sm.tensor([1.5, -2.0], dtype="bfloat16").tolist(), [1.5, -2.0], "bfloat16 tolist() values")
    raises(TypeError, lambda: float(sm.zeros(2)), "float() of two elements", mentions=("one-element",))
    raises(TypeError, lambda: int(sm.zeros(0)), "int() of no element")
    raises(ValueError, lambda: bool(sm.zeros(2)), "bool() of two elements", mentions=("ambiguous",))
    raises(ValueError, lambda: bool(sm.zeros(0)), "bool() of no element")


def advanced_reads():
    a = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    t = sm.tensor(a)
    m3 = a[:, :, 0, 0] % 3 == 0
    idx_cases = [
        [1, 0, 1], np.array([-1, 0]), (slice(None), [2, 0, 2]), (Ellipsis, [4, -5]),
        (1, slice(None), np.array([[0, 3], [1, 2]])), (None, slice(None), [2]), (0, 1, [3, 3, 3]),
        (slice(None), slice(None, None, -1), [0]), np.array([True, False]),
        (slice(None), np.array([True, False, True])), m3, (Ellipsis, np.arange(5) % 2 == 1),
        (1, Ellipsis, [0, 1], 2), (slice(1, None), None, Ellipsis, np.array([], dtype=np.int64)),
        a[:, :, 0, 0] > 30, (0, a[0, :, :, 0] > 30), (slice(None), 1, [0, 2], 3),
    ]
    for idx in idx_cases:
        want = a[idx]
        got = t[idx]
        R.check(same(got.numpy(), want), "t[%r] matches NumPy (%s vs %s)" % (idx, got.shape, want.shape))
        R.check(not got.same_storage(t), "t[%r] is a copy" % (idx,))
    # Index tensors: integer (read where they live) and boolean.
    R.check(same(t[sm.tensor([1, 0], dtype="int32")].numpy(), a[[1, 0]]), "t[int32 tensor]")
    R.check(same(t[sm.tensor(m3)].numpy(), a[m3]), "t[bool tensor]")
    R.check(same(t[:, sm.tensor([[2, 1]])].numpy(), a[:, [[2, 1]]]), "2-d int tensor index")
    raises(IndexError, lambda: t[[5]], "index out of range")
    raises(IndexError, lambda: t[np.array([True, False, True])], "mask of the wrong length",
           mentions=("does not match",))
    raises(IndexError, lambda: t[[0], [1]], "two array indices", mentions=("one",))
    raises(IndexError, lambda: t[np.array([0.5])], "float array index", mentions=("integers",))
    raises(IndexError, lambda: t[True], "boolean scalar index")
    raises(IndexError, lambda: t["a"], "string index")
    # A random differential over 1-d gathers of every dtype.
    for name in NUMPY_DTYPES:
        x = sample(name, (7, 3))
        tx = sm.tensor(x)
        for _ in range(3):
            pick = RNG.integers(-7, 7, size=RNG.integers(0, 9))
            R.check(same(tx[pick].numpy(), x[pick]), "%s t[%s]" % (name, pick.tolist()))
            mask = RNG.random(3) < 0.5
            R.check(same(tx[:, mask].numpy(), x[:, mask]), "%s t[:, %s]" % (name, mask.tolist()))


def representation():
    for shape in [(2, 3), (5,), (50, 40, 30), (2000,), (7, 1000), (3, 4, 5, 6, 7), (0, 3), (), (1001,)]:
        for name in ("float32", "int64", "bool", "complex64", "float16", "uint8", "float64"):
            a = sample(name, shape)
            t = sm.tensor(a)
            for what, v, arr in (("", t, a), (" reversed", t.flip(list(range(len(shape)))),
                                             a[(slice(None, None, -1),) * len(shape)])):
                body = np.array2string(arr, separator=", ", prefix="tensor(") if arr.size else "[]"
                r = repr(v)
                R.check(r.startswith("tensor(" + body + ", "), "%s %s%s repr is NumPy's:\n%s\n%s"
                        % (name, shape, what, r[:200], body[:200]))
                R.check(("dtype=%s" % name) in r and "device=cpu" in r
                        and ("strides=%s" % (v.strides,)) in r, "%s %s%s repr metadata" % (name, shape, what))
    v = sm.arange(24, dtype="float32").view(4, 6)[1:, ::2]
    r = repr(v)
    R.check("offset=6" in r and "view of a 96-byte storage" in r and v.is_view, "repr says view: %s" % r)
    R.check(not sm.zeros(2, 3).is_view and "view" not in repr(sm.zeros(2, 3)), "a fresh tensor is no view")
    R.check(repr(sm.tensor([1.5, 2.0], dtype="bfloat16")).startswith("tensor([1.5, 2. ]"), "bfloat16 values")
    R.check("shape=(0, 3)" in repr(sm.zeros(0, 3)), "an empty 2-d tensor shows its shape")
    c = sm.zeros(2)
    c.close()
    R.equal(repr(c), "<stridemem.Tensor (closed)>", "repr of a closed tensor")
    R.equal(str(v), repr(v), "str is repr")
    with np.printoptions(threshold=5, edgeitems=1, precision=2):
        a = RNG.standard_normal((4, 4))
        R.check(repr(sm.tensor(a)).startswith("tensor(" + np.array2string(a, separator=", ", prefix="tensor(")),
                "repr follows np.printoptions")


def arange_numpy():
    cases = [(5,), (2, 9), (9, 2), (2, 9, 3), (9, 2, -3), (0, 1, 0.1), (1.5, 4.1, 0.5), (-3, 3, 0.7),
             (10, 0, -0.25), (0, 0), (3, 3, -1), (np.int32(2), 7), (0.0, 1.0, 1 / 3), (5.5,)]
    for args in cases:
        want = np.arange(*args)
        got = sm.arange(*args)
        wd = "int64" if want.dtype.kind == "i" else "float32"
        R.equal(got.dtype, wd, "arange%r dtype" % (args,))
        R.check(got.shape == want.shape and np.allclose(got.numpy(), want.astype(wd), rtol=1e-6, atol=1e-6),
                "arange%r matches NumPy: %s vs %s" % (args, got.numpy()[:6], want[:6]))
    R.check(same(sm.arange(3, 7, dtype="float64").numpy(), np.arange(3, 7, dtype=np.float64)),
            "arange with dtype")
    R.check(same(sm.arange(1, 10, 4, dtype=np.int16).numpy(), np.arange(1, 10, 4, dtype=np.int16)),
            "arange with a NumPy dtype")
    raises(ValueError, lambda: sm.arange(0, 3, 0), "arange step 0", mentions=("zero",))
    raises(TypeError, lambda: sm.arange(0, 3, 1, "float32"), "a positional dtype is refused (keyword-only)")
    raises(TypeError, lambda: sm.arange(0, 1j), "complex bound")
    raises(TypeError, lambda: sm.arange(0, 300, dtype="int8"), "arange past int8")
    R.check(same(sm.arange_n(0.0, 0.5, 4, "float64").numpy(), np.arange(4) * 0.5), "arange_n is the C form")


def shapes():
    for make in (lambda *s: sm.zeros(*s), lambda *s: sm.empty(*s), lambda *s: sm.ones(*s)):
        forms = [make(2, 3), make((2, 3)), make([2, 3]), make(np.int64(2), 3), make(np.array([2, 3]))]
        R.check(all(f.shape == (2, 3) for f in forms), "every shape form gives (2, 3)")
        R.equal(make(()).shape, (), "() is 0-d")
        R.equal(make(4).shape, (4,), "one int")
    R.check(same(sm.ones(2, 2, dtype="int8").numpy(), np.ones((2, 2), np.int8)), "ones")
    R.equal(sm.full(3, 2.5).shape, (3,), "full takes an int shape")
    R.equal(sm.full((2, 1), 2.5).tolist(), [[2.5], [2.5]], "full takes a tuple shape")
    R.equal(sm.empty_strided(3, (2,)).strides, (2,), "empty_strided takes an int shape")
    t = sm.zeros(2, 3, dtype="int16")
    for f, v in ((sm.zeros_like, 0), (sm.ones_like, 1)):
        u = f(t)
        R.check(u.shape == (2, 3) and u.dtype == "int16" and u.tolist() == [[v] * 3] * 2, f.__name__)
    R.equal(sm.full_like(t, 7, dtype="float64").tolist(), [[7.0] * 3] * 2, "full_like with a dtype")
    R.equal(sm.empty_like(t).shape, (2, 3), "empty_like")
    with sm.Stack(1 << 12) as s:
        R.equal(s.push(5).shape, (5,), "Stack.push takes an int shape")
    raises(TypeError, lambda: sm.zeros(2.5), "a float size")
    raises(TypeError, lambda: sm.zeros((2, "3")), "a str size")
    R.equal(t.view((3, 2)).shape, (3, 2), "view takes a tuple")
    R.equal(t.reshape([6]).shape, (6,), "reshape takes a list")


def exceptions():
    mapping = {sm.ERR_OUT_OF_BOUNDS: IndexError, sm.ERR_OUT_OF_MEMORY: MemoryError,
               sm.ERR_SHAPE: ValueError, sm.ERR_DTYPE: TypeError, sm.ERR_INVALID_HANDLE: ValueError,
               sm.ERR_READ_ONLY: ValueError, sm.ERR_INVALID_ARGUMENT: ValueError,
               sm.ERR_OVERFLOW: OverflowError, sm.ERR_UNSUPPORTED: NotImplementedError,
               sm.ERR_DEVICE: RuntimeError, sm.ERR_OVERLAP: RuntimeError, sm.ERR_CUDA: RuntimeError,
               sm.ERR_INTERNAL: RuntimeError}
    R.equal(sorted(sm.ERROR_CLASSES), sorted(s for s in sm.STATUS_NAMES if s), "a class for every status")
    for status, builtin in mapping.items():
        cls = sm.ERROR_CLASSES[status]
        e = sm.error_for(status, "m", "f")
        R.check(isinstance(e, cls) and isinstance(e, builtin) and isinstance(e, sm.StrideMemError)
                and e.status == status, "%s is a %s" % (cls.__name__, builtin.__name__))
    t = sm.zeros(3)
    checks = [
        (IndexError, sm.OutOfBoundsError, lambda: t.select(0, 3)),
        (ValueError, sm.ShapeError, lambda: t.view(2, 2)),
        (TypeError, sm.DTypeError, lambda: sm.zeros(2, dtype="complex64").clamp_(0, 1)),
        (ValueError, sm.ReadOnlyError, lambda: read_only_tensor(np.arange(2.0)).fill_(1)),
        (MemoryError, sm.OutOfMemoryError, lambda: sm.empty(1 << 45, dtype="uint8")),
        (NotImplementedError, sm.UnsupportedError, lambda: sm.Stack(256).push(2).storage()),
        (OverflowError, sm.SizeOverflowError, lambda: sm.empty(1 << 62, 1 << 62)),
        (RuntimeError, sm.DeviceError, lambda: sm.zeros(2, device="cuda:7")),
    ]
    for builtin, cls, fn in checks:
        e = raises(builtin, fn, "%s as %s" % (cls.__name__, builtin.__name__))
        R.check(isinstance(e, cls), "%s raised, want %s" % (type(e).__name__, cls.__name__))
    closed = sm.zeros(1)
    closed.close()
    e = raises(ValueError, lambda: closed.shape, "a closed tensor")
    R.check(isinstance(e, sm.InvalidHandleError), "closed tensor: InvalidHandleError")
    R.check(issubclass(sm.DLPackExportError, BufferError), "DLPackExportError is a BufferError")


def documented_and_annotated():
    missing_doc, missing_ann = [], []
    public = [(n, getattr(sm, n)) for n in sm.__all__]
    public += [("Tensor." + n, getattr(sm.Tensor, n)) for n in dir(sm.Tensor)
               if not n.startswith("_") or n in ("__array__", "__dlpack__", "__getitem__",
                                                "__setitem__", "__deepcopy__", "__reduce__")]
    public += [("Stack." + n, getattr(sm.Stack, n)) for n in dir(sm.Stack) if not n.startswith("_")]
    public += [("Storage." + n, getattr(sm.Storage, n)) for n in dir(sm.Storage) if not n.startswith("_")]
    for name, obj in public:
        fn = obj.fget if isinstance(obj, property) else obj
        if not callable(fn) or isinstance(fn, type) and name in ("DTYPES",):
            continue
        if not (getattr(fn, "__doc__", None) or "").strip():
            missing_doc.append(name)
        if inspect.isfunction(fn):
            sig = inspect.signature(fn)
            params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
                      and p.kind not in (p.VAR_KEYWORD,)]
            if sig.return_annotation is inspect.Signature.empty or any(
                    p.annotation is inspect.Parameter.empty for p in params):
                missing_ann.append(name)
    R.equal(missing_doc, [], "public names without a docstring")
    R.equal(missing_ann, [], "public functions without annotations")
    pkg = os.path.dirname(sm.__file__)
    R.check(os.path.exists(os.path.join(pkg, "py.typed")), "py.typed marker in the package")


for name, fn in list(globals().items()):
    if callable(fn) and getattr(fn, "__module__", None) == "__main__" and name not in (
            "raises", "same", "sample", "live", "read_only_tensor") and inspect.isfunction(fn):
        R.run(name, fn)
sys.exit(R.finish())
