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
    dtype_codes = re.findall(r"\bSM_(BOOL|U?INT(?:8|16|32|64)|B?FLOAT(?:16|32|64)|COMPLEX(?:64|128))"
                             r"\s*=\s*(\d+)", header)
    R.equal(len(dtype_codes), len(sm.DTYPES), "every dtype of the header is in DTYPES")
    m = re.search(r"\bSM_NUM_DTYPES\s*=\s*(\d+)", header)
    R.check(m and int(m.group(1)) == sm.NUM_DTYPES == len(sm.DTYPES), "SM_NUM_DTYPES")
    for name, value in dtype_codes:
        R.equal(sm.DTYPES[name.lower()][0], int(value), "dtype code %s" % name)
        R.equal(sm.lib.sm_dtype_name(int(value)).decode(), name.lower(), "sm_dtype_name(%s)" % name)
        R.equal(sm.dtype_size(name.lower()), sm.numpy_dtype(name.lower()).itemsize, "size of %s" % name)
    for name, value in re.findall(r"\bSM_OP_(\w+)\s*=\s*(\d+)", header):
        R.equal(sm.OPS[name.lower()], int(value), "op code %s" % name)
    m = re.search(r"#define SM_SLICE_NONE (\w+)", header)
    R.check(m and m.group(1) == "INT64_MIN" and sm.SLICE_NONE == -(1 << 63), "SM_SLICE_NONE")
    import ctypes
    R.equal(ctypes.sizeof(sm.SmMemoryStats), 4 + 4 + 12 * 8 + 8 * 8, "sizeof sm_memory_stats_t")
    R.equal(ctypes.sizeof(sm.SmOomInfo), 4 + 8 + 4 + 5 * 8 + 8, "sizeof sm_oom_info")
    R.equal((sm.SmOomInfo.device.offset, sm.SmOomInfo.requested_bytes.offset, sm.SmOomInfo.report.offset),
            (4, 16, 56), "sm_oom_info offsets")
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
    # The new dtypes: their NumPy dtypes, names and aliases.
    for np_t, name, aliases in [(np.uint16, "uint16", ("u16",)), (np.uint32, "uint32", ("u32",)),
                                (np.uint64, "uint64", ("u64",)),
                                (np.complex64, "complex64", ("c64", "cfloat")),
                                (np.complex128, "complex128", ("c128", "cdouble", "complex"))]:
        R.equal(sm.dtype_name(np_t), name, "NumPy %s" % np.dtype(np_t))
        R.equal(sm.dtype_name(np.dtype(np_t).newbyteorder()), name, "NumPy %s swapped" % name)
        R.equal(sm.dtype_name(sm.DTYPES[name][0]), name, "code of %s" % name)
        R.equal(sm.numpy_dtype(name), np.dtype(np_t), "%s exchanges as itself" % name)
        for a in aliases:
            R.equal(sm.dtype_name(a), name, "alias %s" % a)
        R.equal(sm.is_complex(name), name.startswith("complex"), "is_complex(%s)" % name)
    R.equal(sm.dtype_name(complex), "complex128", "Python complex")
    for bad in ("complex32", np.float128, np.complex256, np.dtype([("a", np.uint16)]),
                "uint128", "nope", 15, -1):
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
    f = sm.arange_n(0, 1, 24, "float32")
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


NEW_DTYPES = ("uint16", "uint32", "uint64", "complex64", "complex128")
# Every dtype NumPy has (bfloat16 has no NumPy type to compare with).
NUMPY_DTYPES = [d for d in sm.DTYPES if d != "bfloat16"]


def _sample(dtype, n=12, seed=0, signed=True):
    """n values of dtype that every other dtype can hold closely (small
    magnitudes, halves), negative ones only with signed=True."""
    rng = np.random.default_rng(seed)
    nd = sm.numpy_dtype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    lo = -100 if signed and nd.kind in "ifc" else 0
    if nd.kind in "iu":
        return rng.integers(lo, 101, n).astype(nd)
    re = rng.integers(2 * lo, 201, n) / 2.0
    if nd.kind == "f":
        return re.astype(nd)
    im = rng.integers(2 * lo, 201, n) / 2.0
    im[::3] = 0  # some purely real elements
    re[1::4] = 0  # and some purely imaginary ones (bool: still True)
    return (re + 1j * im).astype(nd)


def _same(got, want):
    """Equal values, dtype and shape (NaNs equal)."""
    return (got.dtype == want.dtype and got.shape == want.shape
            and np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"))


def _close(got, want, rtol):
    """got within rtol of want, measured against want's largest magnitude
    (a component that cancels to near 0 has no relative accuracy)."""
    scale = float(np.abs(want).max()) if want.size else 0.0
    return got.dtype == want.dtype and got.shape == want.shape and bool(
        np.all(np.abs(got.astype(np.complex128) - want) <= rtol * scale))


def _raises_dtype(fn, what):
    return R.raises(sm.ERR_DTYPE, fn, what)


def new_dtypes_numpy_exchange():
    """from_numpy/numpy(), zero-copy wrapping and DLPack for each new dtype,
    through views, 0-d and empty tensors and non-native byte order."""
    for name in NEW_DTYPES:
        nd = sm.numpy_dtype(name)
        a = _sample(name, 24, seed=1).reshape(2, 3, 4)
        R.check(_same(sm.tensor(a.tolist(), dtype=name).numpy(), a), "%s tensor(list)" % name)
        if nd.kind == "u":  # the whole range, the top bit included
            a.flat[:3] = [np.iinfo(nd).max, np.iinfo(nd).max // 2 + 1, 0]
        t = sm.from_numpy(a)
        R.equal((t.dtype, t.itemsize, t.nbytes), (name, nd.itemsize, a.nbytes), "%s metadata" % name)
        R.equal(sm.dtype_size(name), nd.itemsize, "sm_dtype_size(%s)" % name)
        R.equal(sm.lib.sm_dtype_name(sm.DTYPES[name][0]).decode(), name, "sm_dtype_name(%s)" % name)
        R.check(_same(t.numpy(), a), "%s round trip" % name)
        v = t.permute(2, 0, 1)[1:, ::-1, ::2]
        R.check(_same(v.numpy(), a.transpose(2, 0, 1)[1:, ::-1, ::2]), "%s strided view" % name)
        R.check(_same(sm.from_numpy(a[:, ::-2].T).numpy(), a[:, ::-2].T), "%s from a strided array" % name)
        R.check(_same(t.clone().numpy(), a) and _same(t.T.contiguous().numpy(), a.T),
                "%s clone/contiguous" % name)
        R.equal(t[1, 2, 3].item(), a[1, 2, 3].item(), "%s item()" % name)
        R.equal(type(t[0, 0, 0].item()), type(a[0, 0, 0].item()), "%s item() type" % name)
        R.equal(t.tolist(), a.tolist(), "%s tolist()" % name)
        R.check(_same(sm.from_numpy(a[0, 0, 0]).numpy(), np.array(a[0, 0, 0])), "%s 0-d from a scalar" % name)
        R.check(_same(sm.from_numpy(np.array(a[1, 2, 3])).numpy(), np.array(a[1, 2, 3])), "%s 0-d" % name)
        R.check(_same(sm.empty(0, 3, dtype=name).numpy(), np.empty((0, 3), nd)), "%s empty" % name)
        R.check(_same(sm.zeros(2, 2, dtype=name).numpy(), np.zeros((2, 2), nd)), "%s zeros" % name)
        R.check(_same(sm.full((3,), 7, name).numpy(), np.full(3, 7, nd)), "%s full(7)" % name)
        R.check(_same(sm.arange_n(2, 3, 4, name).numpy(), np.arange(2, 14, 3).astype(nd)),
                "%s arange" % name)
        # A byte-swapped array is converted, never read as native bytes.
        swapped = a.astype(nd.newbyteorder())
        R.check(_same(sm.from_numpy(swapped).numpy(), a), "%s from a byte-swapped array" % name)
        try:
            sm.from_numpy_blob(swapped)
            R.fail("%s: a byte-swapped array wrapped without a copy" % name)
        except ValueError:
            R.ok()
        # Zero copy both ways: writes through the tensor show in the array.
        b = a.copy()
        w = sm.from_numpy_blob(b[:, ::2, ::-1])
        R.check(w.data_ptr == b[:, ::2, ::-1].ctypes.data and _same(w.numpy(), b[:, ::2, ::-1]),
                "%s wraps a strided array" % name)
        w[1, 0] = 5
        R.check(np.all(b[1, 0] == 5) and np.array_equal(b[0], a[0]), "%s writes through a wrap" % name)
        del w
        # DLPack both ways, zero copy.
        back = np.from_dlpack(t)
        R.check(_same(back, a), "%s: np.from_dlpack" % name)
        R.equal(back.ctypes.data, t.data_ptr, "%s: np.from_dlpack shares memory" % name)
        c = a.copy()
        d = sm.from_dlpack(c)
        R.check(d.dtype == name and _same(d.numpy(), a), "%s: from_dlpack of NumPy" % name)
        d[0, 0, 0] = 3
        R.equal(c[0, 0, 0], 3, "%s: a DLPack import shares the array's memory" % name)
        del d
        R.check(_same(np.from_dlpack(t.T).T, a), "%s: DLPack of a transposed view" % name)
    # Complex elements are (re, im) pairs: the float view NumPy's .real and
    # .imag give of the same memory sees the library's writes.
    for name, part in (("complex64", np.float32), ("complex128", np.float64)):
        z = np.zeros(4, sm.numpy_dtype(name))
        t = sm.from_numpy_blob(z)
        t.fill_(1.5 - 2j)
        R.check(np.all(z.real == 1.5) and np.all(z.imag == -2), "%s: fill_(complex) layout" % name)
        re = sm.from_numpy_blob(z.real)
        R.equal((re.dtype, re.strides), (np.dtype(part).name, (2,)), "%s: .real wraps with stride 2" % name)
        re.fill_(4)
        R.check(np.all(t.numpy() == 4 - 2j), "%s: writes through .real" % name)
    # complex128 needs the alignment of a double, not of 16 bytes (NumPy's).
    raw = np.zeros(8 * 10, np.uint8)
    base = (-raw.ctypes.data) % 16 + 8  # 8 past a 16-byte boundary
    u = np.ndarray((3,), np.complex128, buffer=raw, offset=base)
    R.check(u.flags.aligned and u.ctypes.data % 16 == 8, "an 8-aligned complex128 array")
    u[:] = [1 + 1j, 2, 3j]
    w = sm.from_numpy_blob(u)
    R.check(_same(w.numpy(), u) and _same(np.from_dlpack(w), u), "8-aligned complex128: wrap, read, export")
    w.mul_(2)
    R.check(_same(u, np.array([2 + 2j, 4, 6j])), "8-aligned complex128: written in place")
    del w
    # uint16 is NumPy's uint16 now; bfloat16 bits still come in as uint16.
    bits = np.array([0x3F80, 0xC000], np.uint16)
    R.equal(sm.from_numpy(bits).dtype, "uint16", "a uint16 array is uint16")
    R.check(np.array_equal(sm.from_numpy(bits).to(dtype="float32").numpy(), [16256, 49152]),
            "uint16 values convert as integers")
    bf = sm.from_numpy(bits, dtype="bfloat16")
    R.check(bf.dtype == "bfloat16" and np.array_equal(bf.to(dtype="float32").numpy(), [1, -2]),
            "dtype='bfloat16' still reads uint16 bit patterns")
    R.check(sm.from_numpy_blob(bits.copy(), dtype="bfloat16").dtype == "bfloat16", "bfloat16 wrap of uint16")
    R.check(np.array_equal(sm.from_numpy(bits.astype(">u2"), dtype="bfloat16").to(dtype="float32").numpy(),
                           [1, -2]), "bfloat16 bits from a byte-swapped uint16 array")
    for other in (np.uint32, np.uint8, np.int16):
        try:
            sm.from_numpy(bits.astype(other), dtype="bfloat16")
            R.fail("%s data accepted as bfloat16 bits" % np.dtype(other))
        except ValueError:
            R.ok()
    # torch 1.13 has complex64/complex128 (not uint16/32/64): DLPack with it.
    try:
        import torch
        import torch.utils.dlpack as tdl
    except ImportError:
        torch = None
        R.skip("DLPack with PyTorch", "no torch")
    if torch is not None:
        for name in ("complex64", "complex128"):
            a = _sample(name, 6, seed=3).reshape(2, 3)
            tt = tdl.from_dlpack(sm.from_numpy(a).T.__dlpack__())
            R.check(np.array_equal(tt.numpy(), a.T) and str(tt.dtype) == "torch." + name,
                    "%s: torch.from_dlpack" % name)
            src = torch.from_numpy(a.copy())
            back = sm.from_dlpack(src)
            R.check(back.dtype == name and _same(back.numpy(), a), "%s: from torch" % name)


def new_dtypes_conversions():
    """to(dtype=...) and copy_ between each new dtype and every other dtype,
    against NumPy's astype."""
    import warnings
    for src in NUMPY_DTYPES:
        for dst in NUMPY_DTYPES:
            if src not in NEW_DTYPES and dst not in NEW_DTYPES:
                continue
            nd = sm.numpy_dtype(dst)
            # Negative floats into an unsigned dtype have no defined value.
            signed = not (nd.kind == "u" and sm.numpy_dtype(src).kind in "fc")
            a = _sample(src, 16, seed=len(src) * 31 + len(dst), signed=signed).reshape(4, 4)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # NumPy's ComplexWarning: real part kept
                want = a.astype(nd)
            t = sm.from_numpy(a)
            got, copied = t.to(dtype=dst, return_copied=True)
            R.check(_same(got.numpy(), want), "%s -> %s: to()" % (src, dst))
            R.equal(copied, src != dst, "%s -> %s: copied" % (src, dst))
            out = sm.zeros(4, 4, dtype=dst)
            out[:, ::-1].copy_(t.T)
            R.check(_same(out.numpy(), want.T[:, ::-1]), "%s -> %s: copy_ through views" % (src, dst))
    # uint64 past INT64_MAX, and the wrap between int64 and uint64.
    big = np.array([2**64 - 1, 2**63, 2**63 + 2**11 + 1, 2**53 + 1, 12345], np.uint64)
    t = sm.from_numpy(big)
    for dst in ("float64", "float32", "float16", "complex64", "complex128", "int64", "uint32",
                "uint16", "uint8", "int8", "bool"):
        with np.errstate(over="ignore"):  # float16: 2^63 and up overflow to inf
            want = big.astype(sm.numpy_dtype(dst))
        R.check(_same(t.to(dtype=dst).numpy(), want), "uint64 %s -> %s" % (big.tolist(), dst))
    neg = np.array([-1, -(2**63), 5, -7], np.int64)
    for dst in ("uint64", "uint32", "uint16"):
        R.check(_same(sm.from_numpy(neg).to(dtype=dst).numpy(), neg.astype(sm.numpy_dtype(dst))),
                "int64 -> %s wraps" % dst)
    # complex -> bool: true when either part is nonzero.
    z = np.array([0, 1j, 1, -0.0 + 0j, 1e-300j], np.complex128)
    R.check(np.array_equal(sm.from_numpy(z).to(dtype="bool").numpy(), [False, True, True, False, True]),
            "complex -> bool")
    R.check(np.array_equal(sm.from_numpy(z.astype(np.complex64)).to(dtype="bool").numpy(),
                           z.astype(np.complex64).astype(bool)), "complex64 -> bool (1e-300 flushes)")
    # complex128 -> complex64 rounds each part once; NaN and inf parts survive.
    w = np.array([1 / 3 + 2j / 3, complex(np.inf, np.nan), complex(-np.inf, 1e300)], np.complex128)
    with np.errstate(over="ignore"):
        R.check(_same(sm.from_numpy(w).to(dtype="complex64").numpy(), w.astype(np.complex64)),
                "complex128 -> complex64")
        w64 = w.astype(np.complex64)
    R.check(_same(sm.from_numpy(w64).to(dtype="complex128").numpy(), w64.astype(np.complex128)),
            "complex64 -> complex128 exact")
    # bfloat16 <-> the new dtypes: through float32 (NumPy has no bfloat16).
    f = np.array([1.0, -2.5, 3.0, 0.5], np.float32)
    bf = sm.from_numpy(f).to(dtype="bfloat16")
    R.check(_same(bf.to(dtype="complex64").numpy(), f.astype(np.complex64)), "bfloat16 -> complex64")
    R.check(_same(sm.from_numpy(f.astype(np.complex128) + 1j).to(dtype="bfloat16").to(dtype="float32")
                  .numpy(), f), "complex128 -> bfloat16 keeps the real part")
    R.check(_same(sm.from_numpy(np.array([3, 65535], np.uint16)).to(dtype="bfloat16").to(dtype="float32")
                  .numpy(), np.array([3, 65536], np.float32)), "uint16 -> bfloat16 rounds")


def _bf16_bits(x):
    """The bfloat16 bit pattern nearest to the float64 x (ties to even),
    computed from x's own bits: an independent reference for normal finite
    values whose bfloat16 is normal too."""
    b = int(np.array(x, np.float64).view(np.uint64))
    sign, mag = b >> 63, b & ((1 << 63) - 1)
    if mag == 0:
        return sign << 15
    exp, frac = (mag >> 52) - 1023 + 127, mag & ((1 << 52) - 1)
    assert 0 < exp < 255, x
    keep, rest, half = frac >> 45, frac & ((1 << 45) - 1), 1 << 44
    bits = (exp << 7) + keep + (rest > half or (rest == half and keep & 1))
    return (sign << 15) | bits  # a carry out of the fraction steps the exponent up


def bfloat16_tensor_values():
    """tensor(..., dtype='bfloat16') converts values (not bits) of Python
    numbers and NumPy arrays of any dtype, rounding once to nearest even in
    the library; from_numpy(dtype='bfloat16') still takes only uint16 bits."""
    vals = [1.5, -2.0, 3.3, 1e10, 1.00390625, 1.01171875, 0.1, -0.0, 65504.0, 1e-30, -7e20,
            2.0 ** -126]
    want = np.array([_bf16_bits(v) for v in vals], np.uint16)
    R.equal(want[:6].tolist(), [0x3FC0, 0xC000, 0x4053, 0x5015, 0x3F80, 0x3F82],
            "the reference itself (ties to even: 1 + 2^-8 down, 1 + 3*2^-8 up)")
    arr = np.array(vals)
    for what, src in (("a list of Python floats", vals), ("a float64 array", arr),
                      ("a float32 array", arr.astype(np.float32)),
                      ("a reversed float64 array (negative stride)", arr[::-1].copy()[::-1]),
                      ("an object array", arr.astype(object))):
        t = sm.tensor(src, dtype="bfloat16", device="cpu")
        R.check(t.dtype == "bfloat16" and t.shape == (len(vals),) and _same(t.numpy(), want),
                "tensor(%s, dtype=bfloat16): %s, want %s" % (what, t.numpy(), want))
    two_d = sm.tensor(arr.reshape(3, 4).T, dtype="bfloat16")
    R.check(two_d.shape == (4, 3) and _same(two_d.numpy(), want.reshape(3, 4).T),
            "tensor(transposed float64 array, dtype=bfloat16)")
    ints = np.array([3, 257, 259, 65535, -300], np.int32)
    R.check(_same(sm.tensor(ints, dtype="bfloat16").numpy(),
                  np.array([_bf16_bits(v) for v in ints.tolist()], np.uint16)),
            "tensor(int32 array, dtype=bfloat16): values, rounded (257 -> 256, 259 -> 260)")
    u16 = np.array([3, 0x3F80, 65535], np.uint16)
    R.check(_same(sm.tensor(u16, dtype="bfloat16").to(dtype="float32").numpy(),
                  np.array([3, 16256, 65536], np.float32)),
            "tensor(uint16 array, dtype=bfloat16): values, not bit patterns")
    R.check(_same(sm.tensor(np.array([True, False]), dtype="bfloat16").numpy(),
                  np.array([0x3F80, 0], np.uint16)), "tensor(bool array, dtype=bfloat16)")
    R.check(_same(sm.tensor(3.3, dtype="bfloat16").numpy(), np.array(0x4053, np.uint16)),
            "tensor(Python float, dtype=bfloat16): 0-d")
    # One rounding from the float64 (docs/PYTORCH_DIFFERENCES.md, single-rounding):
    # through float32 first this would be 1.0.
    x = 1 + 2.0 ** -8 + 2.0 ** -40
    R.equal(int(sm.tensor([x], dtype="bfloat16").numpy()[0]), 0x3F81,
            "tensor([1 + 2^-8 + 2^-40], dtype=bfloat16) rounds once, up")
    bits = np.array([0x3FC0], np.uint16)
    R.check(_same(sm.from_numpy(bits, dtype="bfloat16").to(dtype="float32").numpy(),
                  np.array([1.5], np.float32)),
            "from_numpy(uint16, dtype=bfloat16) still reads bit patterns")
    try:
        import torch
    except ImportError:
        R.skip("bfloat16 tensor() against torch.tensor", "no torch")
        return
    for what, src in (("Python floats", vals), ("float32 array", arr.astype(np.float32)),
                      ("int32 array", ints)):
        ref = torch.tensor(src, dtype=torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
        got = sm.tensor(src, dtype="bfloat16").numpy()
        R.check(_same(got, ref), "tensor(%s, dtype=bfloat16) as torch.tensor: %s vs %s"
                % (what, got, ref))


def new_dtypes_inplace():
    """In-place ops on the new dtypes against NumPy, through views; the
    refused ops change nothing."""
    # Unsigned integers: integer rules, wrap-around.
    for name in ("uint16", "uint32", "uint64"):
        nd = sm.numpy_dtype(name)
        top = np.iinfo(nd).max
        a = np.array([0, 1, 2, 7, top, top - 1, top // 2 + 1, 100], nd)
        t = sm.from_numpy(a)
        with np.errstate(over="ignore"):
            want = a.copy()
            t.add_(3)
            want += nd.type(3)
            R.check(_same(t.numpy(), want), "%s add_ wraps" % name)
            t.sub_(5)
            want -= nd.type(5)
            R.check(_same(t.numpy(), want), "%s sub_ wraps" % name)
            t.mul_(3)
            want *= nd.type(3)
            R.check(_same(t.numpy(), want), "%s mul_ wraps" % name)
            t.neg_()
            want = (nd.type(0) - want).astype(nd)
            R.check(_same(t.numpy(), want), "%s neg_ wraps" % name)
            t.abs_()
            t.relu_()
            R.check(_same(t.numpy(), want), "%s abs_/relu_ are identities" % name)
            t.clamp_(10, top // 2 + 1)  # bounds exact as doubles
            R.check(_same(t.numpy(), np.clip(want, 10, top // 2 + 1)),
                    "%s clamp_ compares as unsigned" % name)
            o = sm.from_numpy(a)
            o.add_(sm.from_numpy(a[::-1].copy()), alpha=2)
            R.check(_same(o.numpy(), a + a[::-1] * nd.type(2)), "%s add_(tensor, alpha) wraps" % name)
            o.copy_(sm.from_numpy(a))
            o[::2].mul_(sm.from_numpy(a[1::2]))
            w2 = a.copy()
            w2[::2] *= a[1::2]
            R.check(_same(o.numpy(), w2), "%s mul_ through a strided view" % name)
            o.sub_(sm.from_numpy(np.array([1], nd)))
            R.check(_same(o.numpy(), w2 - nd.type(1)), "%s sub_(broadcast tensor) wraps" % name)
        o.fill_(9)
        o[1:3].zero_()
        R.check(_same(o.numpy(), np.array([9, 0, 0, 9, 9, 9, 9, 9], nd)), "%s fill_/zero_" % name)
        keep = t.numpy()
        v0 = t.version
        for what, fn in [("div_", lambda: t.div_(2)), ("sqrt_", t.sqrt_), ("exp_", t.exp_),
                         ("add_(0.5)", lambda: t.add_(0.5)),
                         ("div_(tensor)", lambda: t.div_(sm.from_numpy(a)))]:
            _raises_dtype(fn, "%s %s refused" % (name, what))
        R.check(_same(t.numpy(), keep) and t.version == v0, "%s: refusals change nothing" % name)
    # Complex: FILL, ZERO, ADD, SUB, MUL, DIV, NEG, SQRT, EXP against NumPy.
    for name, rtol in (("complex64", 2e-6), ("complex128", 1e-14)):
        nd = sm.numpy_dtype(name)
        a = _sample(name, 12, seed=5).reshape(3, 4)
        a[a == 0] = 1 + 1j  # no zero divisors
        t = sm.from_numpy(a)
        want = a.copy()
        # Exact ops: real scalars that are powers of two, negation.
        t.add_(2.5)
        want += nd.type(2.5)
        t.sub_(0.5)
        want -= nd.type(0.5)
        t.mul_(-2)
        want *= nd.type(-2)
        t.div_(4)
        want /= nd.type(4)
        t.neg_()
        want = -want
        R.check(_same(t.numpy(), want), "%s add_/sub_/mul_/div_ real scalars, neg_" % name)
        # Complex scalars travel as 0-d tensors.
        t.add_(1 - 2j)
        want += nd.type(1 - 2j)
        t.sub_(0.5j, alpha=2)
        want -= nd.type(1j)
        R.check(_same(t.numpy(), want), "%s add_/sub_ complex scalars" % name)
        t.mul_(np.complex64(0.5 + 1.5j))
        want *= nd.type(0.5 + 1.5j)
        R.check(_close(t.numpy(), want, rtol), "%s mul_(complex)" % name)
        t.div_(2 - 3j)
        want /= nd.type(2 - 3j)
        R.check(_close(t.numpy(), want, rtol), "%s div_(complex)" % name)
        want = t.numpy()
        # Tensor operands through views, broadcast, alpha real.
        b = _sample(name, 4, seed=6)
        b[b == 0] = 2j
        t[1:, ::-1].add_(sm.from_numpy(b), alpha=2)
        want[1:, ::-1] += b * nd.type(2)
        R.check(_close(t.numpy(), want, rtol), "%s add_(tensor, alpha) in a view" % name)
        t.T[::2].mul_(sm.from_numpy(b[::2, None]))
        want.T[::2] *= b[::2, None]
        R.check(_close(t.numpy(), want, rtol), "%s mul_(tensor) in a view" % name)
        t.div_(sm.from_numpy(b))
        want /= b
        R.check(_close(t.numpy(), want, rtol), "%s div_(tensor)" % name)
        s = sm.from_numpy(a)
        s.sqrt_()
        R.check(_close(s.numpy(), np.sqrt(a), rtol), "%s sqrt_" % name)
        e = sm.from_numpy(a / 40)
        e.exp_()
        R.check(_close(e.numpy(), np.exp(a / 40), 4 * rtol), "%s exp_" % name)
        # A real tensor operand converts (imag 0); FILL from real and complex.
        r = sm.from_numpy(a)
        r.add_(sm.from_numpy(np.array([1.0, 2.0, 3.0, 4.0])))
        R.check(_same(r.numpy(), a + np.array([1, 2, 3, 4], nd)), "%s add_(float64 tensor)" % name)
        r.fill_(sm.from_numpy(np.array([1, 2, 3, 4], np.int32)))
        R.check(_same(r.numpy(), np.broadcast_to(np.array([1, 2, 3, 4], nd), (3, 4))),
                "%s fill_(int32 tensor)" % name)
        r.fill_(-1.5 + 0.25j)
        R.check(_same(r.numpy(), np.full((3, 4), -1.5 + 0.25j, nd)), "%s fill_(complex)" % name)
        r[1] = 2j
        r[2, 1:3].zero_()
        R.check(_same(r.numpy()[1:], np.array([[2j] * 4, [-1.5 + 0.25j, 0, 0, -1.5 + 0.25j]], nd)),
                "%s t[i] = z, zero_ in a view" % name)
        z = sm.full((2,), 3 - 4j, name)
        R.check(_same(z.numpy(), np.full(2, 3 - 4j, nd)), "%s full(complex)" % name)
        z.copy_(1 + 1j)
        R.check(_same(z.numpy(), np.full(2, 1 + 1j, nd)), "%s copy_(complex scalar)" % name)
        # Refused: clamp, relu, abs (SM_ERR_DTYPE), nothing changes.
        keep = r.numpy()
        v0 = r.version
        for what, fn in [("clamp_", lambda: r.clamp_(0, 1)), ("clamp_(max)", lambda: r.clamp_(max=1)),
                         ("relu_", r.relu_), ("abs_", r.abs_)]:
            _raises_dtype(fn, "%s %s refused" % (name, what))
        # What the C API cannot take: complex bounds, complex alpha (TypeError).
        for what, fn in [("clamp_(complex)", lambda: r.clamp_(1j, None)),
                         ("alpha complex", lambda: r.add_(sm.from_numpy(a), alpha=1j))]:
            try:
                fn()
                R.fail("%s %s accepted" % (name, what))
            except TypeError as ex:
                R.check("real" in str(ex), "%s %s: says the C API wants a real scalar" % (name, what))
        R.check(_same(r.numpy(), keep) and r.version == v0, "%s: refusals change nothing" % name)
    # A complex value into a real tensor: refused unless its imaginary part is 0.
    f = sm.from_numpy(np.array([1.0, 2.0]))
    _raises_dtype(lambda: f.add_(sm.from_numpy(np.array([1j]))), "complex tensor into float64 add_ refused")
    for what, fn in [("add_(1j)", lambda: f.add_(1 + 1j)), ("fill_(2j)", lambda: f.fill_(2j)),
                     ("full", lambda: sm.full((2,), 1j, "float32")), ("arange", lambda: sm.arange_n(0, 1j, 3)),
                     ("add_(1, alpha=1j)", lambda: f.add_(1, alpha=1j))]:
        try:
            fn()
            R.fail("%s accepted" % what)
        except TypeError:
            R.ok()
    R.check(_same(f.numpy(), np.array([1.0, 2.0])), "refused complex scalars change nothing")
    f.add_(3 + 0j)
    f.mul_(np.complex128(2))
    R.check(_same(f.numpy(), np.array([8.0, 10.0])), "a complex scalar with imag 0 is real")
    f.copy_(1 + 5j)  # copy_ converts as NumPy's astype: the real part
    R.check(_same(f.numpy(), np.array([1.0, 1.0])), "copy_(complex scalar) into float64 keeps the real part")
    f.fill_(sm.from_numpy(np.array([2 + 7j])))  # FILL converts like a copy
    R.check(_same(f.numpy(), np.array([2.0, 2.0])), "fill_(complex tensor) into float64 keeps the real part")


def errors():
    t = sm.zeros(2, 3)
    try:
        t.view(7)
        R.fail("view(7) of 6 elements succeeded")
    except sm.StrideMemError as e:
        R.equal(e.status, sm.ERR_SHAPE, "error status")
        R.equal(e.status_name, "SM_ERR_SHAPE", "error status name")
        R.equal(e.function, "view()", "error function: the Python call")
        R.equal(e.c_function, "sm_view", "error c_function: the C call")
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
    t = sm.arange_n(0, 1, 100, "float64")
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
                     ("new dtypes: NumPy exchange", new_dtypes_numpy_exchange),
                     ("new dtypes: conversions", new_dtypes_conversions),
                     ("new dtypes: in-place ops", new_dtypes_inplace),
                     ("bfloat16 tensor() values", bfloat16_tensor_values),
                     ("errors", errors), ("lifetimes", lifetimes), ("blobs", blobs), ("one registry", one_registry),
                     ("memory", memory)]:
        R.run(name, fn)
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
