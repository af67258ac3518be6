#!/usr/bin/python3
"""Issue 16 benchmark: stridemem's CPU engine, PyTorch and NumPy doing the same
work on the same NumPy buffers, judged against the best 2-thread copy of the
same bytes, warm and cold.

What one run does. For each case (a copy from a permuted or transposed view, a
dtype conversion, an in-place add on a transposed view, a gather) the same
NumPy arrays are used by all three:
  stridemem  plain ctypes on libstridemem.so (so the per-call overhead is the
             C call's and nothing else): the arrays are wrapped zero-copy with
             sm_from_blob (views with their own strides), then sm_copy_into
             into a preallocated destination, sm_inplace_tensor, or
             sm_index_select (which returns a new tensor: its allocation is
             part of the call, its release is not timed);
  PyTorch    torch.from_numpy of the same arrays: dst.copy_(src.permute(p)),
             a.t().add_(b), torch.index_select(..., out=dst);
  NumPy      np.copyto, np.add(..., out=), np.take(..., out=, mode='wrap').
stridemem and PyTorch run on --threads threads, NumPy on one. Each case also
times a contiguous copy of a buffer as large as the case's larger operand, by
stridemem (sm_copy_into) and by torch (copy_): the faster of the two is the
case's "2-thread copy" reference; NumPy's one-thread copy of the same bytes is
shown for context. All of them are timed in the same rounds, alternating, so
that they see the same background load.

Memory: every timed buffer, the cases' operands and the reference copies'
alike, is a NumPy array over an mmap advised for one kind of pages (--pages
huge, the default, or 4k; see Memory), and the report says how much of it
the kernel put on huge pages. A transpose and a copy judged against each
other must run on the same kind of memory: a transpose touches a page per
row, so 4 KiB pages cost it much more than they cost the copy.

Cold: before each timed call 96 MiB of other memory is read on every CPU
(one pinned thread each; bench/cpu/copy_bench.cpp reads it on one), so no
operand is in any cache. Warm: each timed call directly follows an untimed
call of the same work. Cells show the best time of --reps (the one least
disturbed by other processes); the JSON has the median and every time too.
GB/s counts bytes read + written (in-place add: 3x the tensor; gathers: the
index, the gathered bytes read and written).

Correctness first: before timing, every case checks stridemem's result against
NumPy's (bit-exact; bfloat16 against a round-to-nearest-even model of the
conversion computed with NumPy, cross-checked with torch when present); a
stridemem mismatch aborts the run. torch's and NumPy's own results are checked
the same way (a mismatch there is reported, not fatal).

Usage (Debian's python3 has NumPy and torch):
    cmake --build build-cpu --target stridemem
    /usr/bin/python3 bench/cpu_engine_bench.py [--lib PATH] [--reps N] [--threads N]
        [--only NAME ...] [--quick] [--no-torch] [--pages huge|4k] [--json PATH]
--threads 1 gives the one-thread figures (stridemem and torch both on one
thread; the reference is then the best 1-thread copy). About 3 minutes with
--reps 5 on 2 cores. bench/cpu/copy_bench.cpp times the issue-6 subset of
these cases from C++ (for perf).
"""

import argparse
import ctypes
import datetime
import glob
import json
import math
import mmap
import os
import platform
import statistics
import sys
import threading
import time

import numpy as np

# ---------------------------------------------------------------------------
# The library, through plain ctypes
# ---------------------------------------------------------------------------

# sm_dtype codes (include/stridemem.h).
SM_BOOL, SM_UINT8, SM_INT8, SM_INT16, SM_INT32, SM_INT64 = 0, 1, 2, 3, 4, 5
SM_FLOAT16, SM_BFLOAT16, SM_FLOAT32, SM_FLOAT64 = 6, 7, 8, 9
SM_OP_ADD = 2
SM_DEVICE_CPU = 1

NUMPY_TO_SM = {
    np.dtype(np.bool_): SM_BOOL, np.dtype(np.uint8): SM_UINT8, np.dtype(np.int8): SM_INT8,
    np.dtype(np.int16): SM_INT16, np.dtype(np.int32): SM_INT32, np.dtype(np.int64): SM_INT64,
    np.dtype(np.float16): SM_FLOAT16, np.dtype(np.float32): SM_FLOAT32,
    np.dtype(np.float64): SM_FLOAT64,
}


class SmDevice(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int32), ("index", ctypes.c_int32)]


class StridememError(RuntimeError):
    pass


def find_library():
    env = os.environ.get("STRIDEMEM_LIB")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    hits = sorted(glob.glob(os.path.join(root, "build*", "libstridemem.so")),
                  key=os.path.getmtime, reverse=True)
    return hits[0] if hits else None


class Lib(object):
    """The few C calls the benchmark makes, with their signatures declared."""

    def __init__(self, path):
        self.path = path
        L = self.L = ctypes.CDLL(path)
        vp, i32, i64p = ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64)
        L.sm_last_error.restype = ctypes.c_char_p
        L.sm_last_error.argtypes = []
        for name, args in [
                ("sm_from_blob", [vp, i64p, i64p, i32, i32, SmDevice, vp, vp,
                                  ctypes.POINTER(vp)]),
                ("sm_copy_into", [vp, vp]),
                ("sm_inplace_tensor", [vp, i32, vp, ctypes.c_double]),
                ("sm_index_select", [vp, i32, vp, ctypes.POINTER(vp)]),
                ("sm_tensor_release", [vp]),
                ("sm_set_num_threads", [i32]),
                ("sm_get_num_threads", [ctypes.POINTER(i32)]),
                ("sm_data_ptr", [vp, ctypes.POINTER(vp)]),
                ("sm_nbytes", [vp, i64p])]:
            fn = getattr(L, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int32
        self.cpu = SmDevice(SM_DEVICE_CPU, 0)

    def check(self, status, what):
        if status != 0:
            raise StridememError("%s failed (status %d): %s"
                                 % (what, status, self.L.sm_last_error().decode()))

    def wrap(self, view, sm_dtype=None):
        """A stridemem tensor over view's memory (zero copy, view's strides).
        The caller keeps view's buffer alive longer than the handle."""
        dt = NUMPY_TO_SM[view.dtype] if sm_dtype is None else sm_dtype
        nd = view.ndim
        shape = (ctypes.c_int64 * nd)(*view.shape)
        strides = (ctypes.c_int64 * nd)(*[s // view.itemsize for s in view.strides])
        h = ctypes.c_void_p()
        self.check(self.L.sm_from_blob(view.ctypes.data, shape, strides, nd, dt, self.cpu,
                                       None, None, ctypes.byref(h)), "sm_from_blob")
        return h

    def release(self, h):
        self.L.sm_tensor_release(h)

    def to_numpy(self, h, dtype, shape):
        """A NumPy copy of a row-major stridemem result."""
        p, n = ctypes.c_void_p(), ctypes.c_int64()
        self.check(self.L.sm_data_ptr(h, ctypes.byref(p)), "sm_data_ptr")
        self.check(self.L.sm_nbytes(h, ctypes.byref(n)), "sm_nbytes")
        raw = ctypes.string_at(p.value, n.value)
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()

    def set_threads(self, n):
        self.check(self.L.sm_set_num_threads(n), "sm_set_num_threads")
        got = ctypes.c_int32()
        self.check(self.L.sm_get_num_threads(ctypes.byref(got)), "sm_get_num_threads")
        return got.value


# ---------------------------------------------------------------------------
# Memory: every timed buffer on one kind of pages
# ---------------------------------------------------------------------------

PAGE_KINDS = ("huge", "4k")
HUGE_PAGE = 2 << 20


class Memory(object):
    """Every buffer a timed call touches, a case's operands and its reference
    copy's, comes from here, on one kind of pages: "huge" asks the kernel for
    2 MiB transparent huge pages (as NumPy does for its large allocations,
    np.zeros excepted, and stridemem for its own storages), "4k" forbids them.

    Why one kind for all: a transpose touches a page per row where a copy
    touches one per 4 KiB, so the kind of pages moves a transpose much more
    than a copy. NumPy's own allocations differ by call: np.zeros is calloc'd
    and got 4 KiB pages, np.zeros_like and np.ascontiguousarray huge ones. A
    case whose destination came from np.zeros, judged against a copy between
    huge-page buffers, was judged on unequal memory (bench/RESULTS.md)."""

    def __init__(self, pages):
        if pages not in PAGE_KINDS:
            raise ValueError("pages must be one of %s, not %r" % (PAGE_KINDS, pages))
        self.pages = pages

    def empty(self, shape, dtype):
        """An uninitialised array, 2 MiB aligned, advised before its first touch
        (the kernel picks the page size when a page is first written)."""
        dtype = np.dtype(dtype)
        n = max(1, int(np.prod(shape))) * dtype.itemsize
        # Private: a shared anonymous mapping is shmem, which THP leaves alone.
        m = mmap.mmap(-1, n + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        m.madvise(mmap.MADV_HUGEPAGE if self.pages == "huge" else mmap.MADV_NOHUGEPAGE)
        raw = np.frombuffer(m, np.uint8)  # keeps m alive as long as any view of it
        off = (-raw.ctypes.data) % HUGE_PAGE
        return raw[off:off + n].view(dtype)[:int(np.prod(shape))].reshape(shape)

    def zeros(self, shape, dtype):
        a = self.empty(shape, dtype)
        a[...] = 0
        return a

    def copy_of(self, arr):
        a = self.empty(arr.shape, arr.dtype)
        np.copyto(a, arr)
        return a


def huge_page_share(arrays):
    """The share of the resident memory of the mappings holding `arrays` that
    is on huge pages (AnonHugePages over Rss in /proc/self/smaps), or None
    where smaps cannot be read. What the kernel granted, not what was asked:
    it falls back to 4 KiB pages when it has no free 2 MiB ones."""
    try:
        with open("/proc/self/smaps") as f:
            text = f.read()
    except OSError:
        return None
    spans = [(a.ctypes.data, a.ctypes.data + max(1, a.nbytes)) for a in arrays]
    rss = huge = 0
    lo = hi = None
    fields = {}

    def close():
        nonlocal rss, huge
        if lo is not None and any(s < hi and e > lo for s, e in spans):
            rss += fields.get("Rss", 0)
            huge += fields.get("AnonHugePages", 0)

    for line in text.splitlines():
        head = line.split(None, 1)[0]
        if "-" in head and ":" not in head:
            close()
            a, b = head.split("-")
            lo, hi, fields = int(a, 16), int(b, 16), {}
        elif head in ("Rss:", "AnonHugePages:"):
            fields[head[:-1]] = int(line.split()[1])
    close()
    return huge / rss if rss else None


# ---------------------------------------------------------------------------
# Bit-exact expectations
# ---------------------------------------------------------------------------

def f32_to_bf16_bits(x):
    """bfloat16 bits (as int16) of float32 values, rounded to nearest even:
    the conversion stridemem documents, computed independently of it."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    quiet_nan = (u >> 16) | 0x40  # NaN stays NaN (quiet), whatever its payload
    bits = np.where(np.isnan(x).reshape(u.shape), quiet_nan, rounded)
    return bits.astype(np.uint16).view(np.int16)


def bit_checker(dst, expected):
    """checker(fn) -> a check that clears dst, runs fn and compares dst with
    expected bit for bit."""
    def checker(fn):
        def run():
            dst.fill(0)
            fn()
            return same_bits(dst, expected)
        return run
    return checker


def same_bits(got, want):
    """None when got and want hold the same bytes, else a description."""
    if got.shape != want.shape:
        return "shape %s, want %s" % (got.shape, want.shape)
    g = np.ascontiguousarray(got).reshape(-1).view(np.uint8).reshape(got.size, -1)
    w = np.ascontiguousarray(want).reshape(-1).view(np.uint8).reshape(want.size, -1)
    bad = np.flatnonzero((g != w).any(axis=1))
    if bad.size == 0:
        return None
    i = int(bad[0])
    return "%d of %d elements differ; first at flat index %d: got %r, want %r" % (
        bad.size, got.size, i, got.reshape(-1)[i], want.reshape(-1)[i])


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

class Case(object):
    """One benchmark case: the same work as three callables over the same buffers.

    kind: "copy" (judged against the 2-thread copy), "context" (shown, not
    judged against the copy: it is the copy), "gather" (not judged against the
    copy: its reads are random). groups: which target lines it belongs to.
    """

    def __init__(self, name, kind, shape_text, nbytes, ref_bytes, groups=()):
        self.name, self.kind, self.shape_text = name, kind, shape_text
        self.nbytes, self.ref_bytes, self.groups = nbytes, ref_bytes, set(groups)
        self.sm = self.sm_after = self.torch = self.numpy = None
        self.numpy_note = None
        self.checks = []  # (who, callable returning None or a mismatch text)
        self.handles = []
        self.keep = []  # arrays and tensors the callables use


def perm_text(p):
    return "(%s)" % ",".join(str(i) for i in p)


class CaseFactory(object):
    def __init__(self, lib, torch, quick, memory):
        self.lib, self.torch, self.quick, self.mem = lib, torch, quick, memory
        self.rng = np.random.default_rng(16)

    def random(self, shape, dtype):
        """Random values of dtype in a buffer of self.mem."""
        n = int(np.prod(shape))
        if dtype == np.bool_:
            x = self.rng.integers(0, 2, n, dtype=np.uint8).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            x = self.rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        else:
            x = self.rng.standard_normal(n, dtype=np.float32).astype(dtype)
        return self.mem.copy_of(x.reshape(shape))

    def torch_view(self, arr, torch_dtype=None):
        t = self.torch.from_numpy(arr)
        return t.view(torch_dtype) if torch_dtype is not None else t

    def add_reference(self, case):
        """Contiguous copies of case.ref_bytes bytes: stridemem, torch, NumPy."""
        n = case.ref_bytes // 4
        src = self.random((n,), np.float32)
        dst = self.mem.zeros(src.shape, src.dtype)
        hs, hd = self.lib.wrap(src), self.lib.wrap(dst)
        case.handles += [hs, hd]
        case.keep += [src, dst]
        L, check = self.lib.L, self.lib.check
        case.ref_sm = lambda: check(L.sm_copy_into(hd, hs), "sm_copy_into (reference)")
        case.ref_numpy = lambda: np.copyto(dst, src)
        case.ref_torch = None
        if self.torch is not None:
            ts, td = self.torch.from_numpy(src), self.torch.from_numpy(dst)
            case.keep += [ts, td]
            case.ref_torch = lambda: td.copy_(ts)
        case.ref_nbytes = 2 * 4 * n

    def copy(self, name, kind, src, perm, dst_dtype, groups=(), sm_src=None, sm_dst=None,
             torch_src=None, torch_dst=None, expected=None, numpy_note=None, numpy_ok=True):
        """dst = src.transpose(perm) converted to dst_dtype, dst row-major.

        sm_src/sm_dst, torch_src/torch_dst: the dtype each library is told
        (bfloat16 data lives in int16 NumPy arrays). expected: the result
        (default: NumPy's copyto). numpy_ok False: NumPy cannot do this work.
        """
        view = src.transpose(perm)
        dst = self.mem.zeros(view.shape, dst_dtype)
        if expected is None:
            expected = np.empty_like(dst)
            np.copyto(expected, view, casting="unsafe")
        nbytes = view.size * (src.itemsize + dst.itemsize)
        case = Case(name, kind, "x".join(map(str, src.shape)) + " " + perm_text(perm), nbytes,
                    max(src.nbytes, dst.nbytes), groups)
        hs, hd = self.lib.wrap(view, sm_src), self.lib.wrap(dst, sm_dst)
        case.handles += [hs, hd]
        case.keep += [src, dst, view]
        L, check = self.lib.L, self.lib.check
        case.sm = lambda: check(L.sm_copy_into(hd, hs), "sm_copy_into")
        if numpy_ok:
            case.numpy = lambda: np.copyto(dst, view, casting="same_kind")
        case.numpy_note = numpy_note

        checker = bit_checker(dst, expected)
        case.checks.append(("stridemem", checker(case.sm)))
        if self.torch is not None:
            tv = self.torch_view(src, torch_src).permute(*perm)
            td = self.torch_view(dst, torch_dst)
            case.keep += [tv, td]
            case.torch = lambda: td.copy_(tv)
            case.checks.append(("torch", checker(case.torch)))
        if case.numpy is not None:
            case.checks.append(("numpy", checker(case.numpy)))
        self.add_reference(case)
        return case

    def inplace_add_transposed(self, name, n):
        a = self.random((n, n), np.float32)
        b = self.random((n, n), np.float32)
        a0 = a.copy()
        expected = a0.copy()
        np.add(expected.T, b, out=expected.T)
        case = Case(name, "copy", "%dx%d" % (n, n), 3 * a.nbytes, a.nbytes, ("torch",))
        hat, hb = self.lib.wrap(a.T), self.lib.wrap(b)
        case.handles += [hat, hb]
        case.keep += [a, b]
        L, check = self.lib.L, self.lib.check
        case.sm = lambda: check(L.sm_inplace_tensor(hat, SM_OP_ADD, hb, 1.0), "sm_inplace_tensor")
        case.numpy = lambda: np.add(a.T, b, out=a.T)

        def checker(fn):
            def run():
                a[...] = a0
                fn()
                return same_bits(a, expected)
            return run
        case.checks.append(("stridemem", checker(case.sm)))
        if self.torch is not None:
            tat, tb = self.torch.from_numpy(a).t(), self.torch.from_numpy(b)
            case.keep += [tat, tb]
            case.torch = lambda: tat.add_(tb)
            case.checks.append(("torch", checker(case.torch)))
        case.checks.append(("numpy", checker(case.numpy)))
        self.add_reference(case)
        return case

    def gather(self, name, src_shape, count, index_dtype, groups=()):
        src = self.random(src_shape, np.float32)
        idx = self.mem.copy_of(self.rng.integers(0, src_shape[0], count).astype(index_dtype))
        out_shape = (count,) + tuple(src_shape[1:])
        dst = self.mem.zeros(out_shape, np.float32)
        expected = np.take(src, idx.astype(np.int64), axis=0)
        nbytes = idx.nbytes + 2 * dst.nbytes
        case = Case(name, "gather", "%d of %s, %s index" % (
            count, "x".join(map(str, src_shape)), np.dtype(index_dtype).name), nbytes,
            max(src.nbytes, dst.nbytes, idx.nbytes), groups)
        hs, hi = self.lib.wrap(src), self.lib.wrap(idx)
        case.handles += [hs, hi]
        case.keep += [src, idx, dst]
        lib, L, check = self.lib, self.lib.L, self.lib.check

        def sm_gather():
            out = ctypes.c_void_p()
            check(L.sm_index_select(hs, 0, hi, ctypes.byref(out)), "sm_index_select")
            return out
        case.sm = sm_gather
        case.sm_after = lib.release  # the result's release is outside the timing

        def check_sm():
            h = sm_gather()
            try:
                return same_bits(lib.to_numpy(h, np.float32, out_shape), expected)
            finally:
                lib.release(h)
        case.checks.append(("stridemem", check_sm))

        # NumPy's fastest take: with out= and mode='raise' (the default) it
        # gathers into a temporary and copies that into out; mode='wrap' writes
        # out directly. Every index is in range, so the result is the same.
        case.numpy = lambda: np.take(src, idx, axis=0, out=dst, mode="wrap")
        case.numpy_note = "np.take(mode='wrap', out=): NumPy's fastest take"

        checker = bit_checker(dst, expected)
        if self.torch is not None:
            ts, ti, td = (self.torch.from_numpy(x) for x in (src, idx, dst))
            case.keep += [ts, ti, td]
            case.torch = lambda: self.torch.index_select(ts, 0, ti, out=td)
            case.checks.append(("torch", checker(case.torch)))
        case.checks.append(("numpy", checker(case.numpy)))
        self.add_reference(case)
        return case


def case_list(quick):
    """(name, builder) pairs in table order; builder(factory) -> Case.

    Names are stable (bench/RESULTS.md uses them); --quick keeps the names and
    shrinks the sizes (the JSON records the sizes actually run).
    """
    q = quick
    n2 = 256 if q else 4096  # 2-D transposes, 4096^2 (64 MiB of f32)
    r8, c8 = (512, 128) if q else (8192, 2048)  # 1-byte dtypes: 16 MiB
    n4 = 16 if q else 64
    nchw = (2, 16, 28, 28) if q else (32, 64, 112, 112)
    d3 = (32, 32, 16) if q else (256, 256, 128)  # f64: 64 MiB
    d5 = (4, 4, 8, 8, 4) if q else (16, 16, 32, 64, 32)  # f32: 64 MiB
    g_src = 10 ** 5 if q else 10 ** 7
    g_small, g_big = (10 ** 4, 10 ** 5) if q else (10 ** 6, 10 ** 7)
    rows_src, rows_n = ((1024, 64), 100) if q else ((1 << 16, 256), 10 ** 4)
    contiguous = (64 << 10) if q else (16 << 20)  # f32 elements: 64 MiB full size
    T2 = ("transpose2d", "torch")
    out = []

    def add(name, fn):
        out.append((name, fn))

    add("contiguous_copy_64MiB_f32", lambda f: f.copy(
        "contiguous_copy_64MiB_f32", "context", f.random((contiguous,), np.float32), (0,),
        np.float32, groups=("torch",)))
    for tag, dt, sm_dt, t_dt, np_note in [
            ("f32", np.float32, None, None, None),
            ("f16", np.float16, None, None, None),
            ("bf16", np.int16, SM_BFLOAT16, "bfloat16",
             "NumPy has no bfloat16: it moves the same bits as int16")]:
        name = "transpose2d_4096_%s" % tag

        def build(f, name=name, dt=dt, sm_dt=sm_dt, t_dt=t_dt, np_note=np_note):
            td = getattr(f.torch, t_dt) if (t_dt and f.torch is not None) else None
            # bfloat16 data: rounded normal numbers (random bits would include NaNs).
            src = (f.mem.copy_of(f32_to_bf16_bits(f.random((n2, n2), np.float32)))
                   if t_dt == "bfloat16"
                   else f.random((n2, n2), dt))
            return f.copy(name, "copy", src, (1, 0), dt, groups=T2,
                          sm_src=sm_dt, sm_dst=sm_dt, torch_src=td, torch_dst=td,
                          numpy_note=np_note)
        add(name, build)
    add("transpose2d_4096x2048_f64", lambda f: f.copy(
        "transpose2d_4096x2048_f64", "copy", f.random((n2, n2 // 2), np.float64), (1, 0),
        np.float64, groups=T2))
    for tag, dt in [("i8", np.int8), ("u8", np.uint8), ("bool", np.bool_)]:
        name = "transpose2d_8192x2048_%s" % tag
        add(name, lambda f, name=name, dt=dt: f.copy(
            name, "copy", f.random((r8, c8), dt), (1, 0), dt, groups=T2))

    # Conversions: f32 -> f16 / bf16 and f16 -> f32, from a transposed view and
    # contiguous. NumPy has no bfloat16: its cells are n/a.
    def convert(name, perm, src_dt, dst_dt):
        def build(f):
            src = f.random((n2, n2), src_dt)
            if dst_dt == "bf16":
                expected = f32_to_bf16_bits(src.transpose(perm))
                td = f.torch.bfloat16 if f.torch is not None else None
                return f.copy(name, "copy", src, perm, np.int16, groups=("torch",),
                              sm_dst=SM_BFLOAT16, torch_dst=td, expected=expected,
                              numpy_ok=False, numpy_note="NumPy has no bfloat16")
            return f.copy(name, "copy", src, perm, dst_dt, groups=("torch",))
        add(name, build)
    convert("copy_into_T_f32_to_f16_4096x4096", (1, 0), np.float32, np.float16)
    convert("copy_into_T_f32_to_bf16_4096x4096", (1, 0), np.float32, "bf16")
    convert("copy_into_T_f16_to_f32_4096x4096", (1, 0), np.float16, np.float32)
    convert("copy_into_f32_to_bf16_4096x4096", (0, 1), np.float32, "bf16")
    convert("copy_into_f32_to_f16_4096x4096", (0, 1), np.float32, np.float16)

    def permute(name, shape, perm, dt):
        add(name, lambda f: f.copy(name, "copy", f.random(shape, dt), perm, dt,
                                   groups=("torch",)))
    for p in [(0, 1, 3, 2), (3, 2, 1, 0), (0, 2, 1, 3), (1, 0, 3, 2), (2, 3, 0, 1)]:
        permute("permute4d_64_f32_%s" % perm_text(p), (n4,) * 4, p, np.float32)
    permute("nchw_to_nhwc_32x64x112x112_f32", nchw, (0, 2, 3, 1), np.float32)
    for p in [(1, 2, 0), (2, 0, 1)]:
        permute("rotate3d_256x256x128_f64_%s" % perm_text(p), d3, p, np.float64)
    for p in [(1, 2, 3, 4, 0), (4, 0, 1, 2, 3)]:
        permute("rotate5d_16x16x32x64x32_f32_%s" % perm_text(p), d5, p, np.float32)
    add("inplace_add_transposed_4096_f32",
        lambda f: f.inplace_add_transposed("inplace_add_transposed_4096_f32", n2))
    for count, ctag in [(g_small, "1e6"), (g_big, "1e7")]:
        for idt, itag in [(np.int64, "i64"), (np.int32, "i32")]:
            name = "gather1d_%s_of_1e7_f32_%s" % (ctag, itag)
            add(name, lambda f, name=name, count=count, idt=idt: f.gather(
                name, (g_src,), count, idt, groups=("torch", "scalar_gather")))
    add("gather_rows_1e4_of_65536x256_f32_i64", lambda f: f.gather(
        "gather_rows_1e4_of_65536x256_f32_i64", rows_src, rows_n, np.int64, groups=("torch",)))
    return out


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------

class Flusher(object):
    """Evicts the operands of the previous call from every cache: one thread
    pinned to each CPU this process may use reads `mib` MiB of other memory.

    Every CPU, not just the caller's: on a VM whose vCPUs sit on different
    L3 slices (chiplets), a flush from one thread leaves the other slice
    holding what the other thread of a 2-thread call touched last, so the next
    2-thread call would start partly warm and a 1-thread NumPy call not.
    Reading, not writing: the previous call's dirty lines are written back
    here, not in the next timed call. The scan is libc's memchr over a buffer
    without the byte looked for (so it reads every byte), called through
    ctypes, which releases the GIL: the threads read in parallel."""

    def __init__(self, mib):
        self.junk = np.ones((mib << 20) // 8, dtype=np.uint64)  # no 0xFF byte anywhere
        libc = ctypes.CDLL(None)
        self.memchr = libc.memchr
        self.memchr.restype = ctypes.c_void_p
        self.memchr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        self.cpus = sorted(os.sched_getaffinity(0))
        self.go = threading.Barrier(len(self.cpus) + 1)
        self.done = threading.Barrier(len(self.cpus) + 1)
        self.found = []
        for cpu in self.cpus:
            threading.Thread(target=self._reader, args=(cpu,), daemon=True).start()

    def _reader(self, cpu):
        os.sched_setaffinity(0, {cpu})  # 0: this thread (Linux)
        while True:
            self.go.wait()
            p = self.memchr(self.junk.ctypes.data, 0xFF, self.junk.nbytes)
            if p is not None:  # never: it only keeps the read from looking useless
                self.found.append(p)
            self.done.wait()

    def __call__(self):
        self.go.wait()
        self.done.wait()


def busy_cores_after(fn, window=0.05, tries=5):
    """CPU seconds this process burns while idle for `window` s after fn():
    PyTorch's OpenMP workers spin a while after each parallel region."""
    fn()
    spent = []
    for _ in range(tries):
        fn()
        c0 = time.process_time()
        time.sleep(window)
        spent.append(time.process_time() - c0)
    return statistics.median(spent)


def timed(fn, after):
    t0 = time.perf_counter()
    r = fn()
    t = time.perf_counter() - t0
    if after is not None:
        after(r)
    return t


def measure(contestants, reps, flush, pause):
    """contestants: [(label, fn, after)]. Every rep times each contestant cold
    (after flush) and warm (right after an untimed call of the same work); the
    order rotates from rep to rep so that no contestant always follows the
    same neighbour. Every timed call is preceded by the same idle pause (see
    main: it lets PyTorch's spinning workers go to sleep)."""
    cold = {c[0]: [] for c in contestants}
    warm = {c[0]: [] for c in contestants}
    for label, fn, after in contestants:  # first touch of every buffer, thread start
        timed(fn, after)
    k = len(contestants)
    for rep in range(reps):
        order = contestants[rep % k:] + contestants[:rep % k]
        for label, fn, after in order:
            time.sleep(pause)
            flush()
            cold[label].append(timed(fn, after))
        for label, fn, after in order:
            timed(fn, after)
            time.sleep(pause)
            warm[label].append(timed(fn, after))
    return cold, warm


def summary(times, nbytes):
    best, med = min(times), statistics.median(times)
    return {"best_s": best, "median_s": med, "times_s": times,
            "best_gbps": nbytes / best / 1e9, "median_gbps": nbytes / med / 1e9}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def cpu_model():
    """'model name (family F, model M)' of the first CPU in /proc/cpuinfo."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                info[k.strip()] = v.strip()
    except OSError:
        pass
    if "model name" not in info:
        return platform.processor() or "unknown"
    return "%s (family %s, model %s)" % (info["model name"], info.get("cpu family", "?"),
                                         info.get("model", "?"))


def fmt(x, spec="%.2f", none="n/a"):
    return none if x is None else spec % x


def targets(results, have_torch):
    """The issue's targets, line by line: (text, met or None, details)."""
    lines = []
    judged = [r for r in results if r["kind"] == "copy"]
    for mode in ("cold", "warm"):
        key = "copy_ratio_" + mode
        vals = [(r[key], r["name"]) for r in judged]
        if not vals:
            continue
        low = min(vals)
        lines.append(("every case >= 60%% of the 2-thread copy (%s)" % mode, low[0] >= 0.60,
                      "lowest %.0f%% (%s)" % (100 * low[0], low[1])))
        g = geomean([v for v, _ in vals])
        gm = geomean([r[key + "_median"] for r in judged])
        lowm = min((r[key + "_median"], r["name"]) for r in judged)
        lines[-1] = lines[-1][:2] + (lines[-1][2] + "; medians: %.0f%% (%s)"
                                     % (100 * lowm[0], lowm[1]),)
        lines.append(("geometric mean >= 80%% of the 2-thread copy (%s)" % mode, g >= 0.80,
                      "%.0f%% over %d cases; medians: %.0f%%" % (100 * g, len(vals), 100 * gm)))
    tor = [r for r in results if "torch" in r["groups"]]
    if not have_torch:
        lines.append((">= 2x PyTorch in geometric mean, never slower", None,
                      "torch not available: not checked"))
    elif tor:
        g = geomean([r["vs_torch_cold"] for r in tor])
        gw = geomean([r["vs_torch_warm"] for r in tor])
        gm = geomean([r["vs_torch_cold_median"] for r in tor])
        lines.append((">= 2x PyTorch in geometric mean (cold; warm in brackets)", g >= 2.0,
                      "%.2fx (%.2fx) over %d cases; medians: %.2fx" % (g, gw, len(tor), gm)))
        low = min((r["vs_torch_cold"], r["name"]) for r in tor)
        loww = min((r["vs_torch_warm"], r["name"]) for r in tor)
        lines.append(("never slower than PyTorch (cold; warm in brackets)", low[0] >= 1.0,
                      "lowest %.2fx (%s) (warm: %.2fx, %s)" % (low[0], low[1], loww[0], loww[1])))
    t2 = [r for r in results if "transpose2d" in r["groups"]]
    if t2:
        low = min((r["vs_numpy_cold"], r["name"]) for r in t2)
        lines.append((">= 5x NumPy on 2-D transposes of every dtype (cold)", low[0] >= 5.0,
                      "lowest %.1fx (%s) over %d dtypes" % (low[0], low[1], len(t2))))
    sg = [r for r in results if "scalar_gather" in r["groups"]]
    if sg:
        low = min((r["vs_numpy_cold"], r["name"]) for r in sg)
        lines.append(("scalar gather >= 5x NumPy take (cold)", low[0] >= 5.0,
                      "lowest %.1fx (%s)" % (low[0], low[1])))
        if have_torch:
            low = min((r["vs_torch_cold"], r["name"]) for r in sg)
            lines.append(("scalar gather faster than torch.index_select (cold)", low[0] > 1.0,
                          "lowest %.2fx (%s)" % (low[0], low[1])))
        else:
            lines.append(("scalar gather faster than torch.index_select", None,
                          "torch not available: not checked"))
    return lines


def print_report(meta, results, target_lines, out):
    w = out.write
    w("stridemem CPU engine vs PyTorch vs NumPy (issue 16), %s\n" % meta["date_utc"])
    w("CPU: %s, %d logical CPUs; load average before %.2f, after %.2f\n" % (
        meta["cpu"], meta["cpu_count"], meta["load_before"][0], meta["load_after"][0]))
    w("threads: stridemem %d, torch %s, NumPy 1; NumPy %s, torch %s; %d reps%s; library %s\n" % (
        meta["threads_stridemem"], meta["threads_torch"], meta["numpy"], meta["torch"],
        meta["reps"], ", QUICK sizes" if meta["quick"] else "", meta["library"]))
    shares = [r["huge_page_share"] for r in results if r["huge_page_share"] is not None]
    w("pages: %s asked for every timed buffer (the references' too); on huge pages: %s\n" % (
        meta["pages"], "%.0f-%.0f%% of each case's buffers" % (100 * min(shares), 100 * max(shares))
        if shares else "unknown (no /proc/self/smaps)"))
    for r in results:
        s = r["huge_page_share"]
        if s is not None and (s < 0.9 if meta["pages"] == "huge" else s > 0.1):
            w("WARNING %s: %.0f%% of its buffers on huge pages, %s was asked: the kernel "
              "decided otherwise, so its ratios mix page kinds\n" % (r["name"], 100 * s,
                                                                     meta["pages"]))
    if not meta["torch"]:
        w("torch: not used (%s): its columns are n/a\n" % meta["torch_missing_why"])
    else:
        w("torch workers stay busy %.1f ms (CPU) after an op; every timed call waits %.0f ms "
          "first\n" % (1e3 * meta["torch_spin_cpu_s"], 1e3 * meta["pause_s"]))
    w("GB/s of bytes read + written, best of reps, cold caches unless marked warm. "
      "copy2t = best 2-thread\ncontiguous copy of the case's larger operand "
      "(s: stridemem's, t: torch's); np1t = NumPy's 1-thread copy of it.\n\n")
    hdr = "%-40s %7s %8s %6s %6s %7s %6s %7s %6s %7s" % (
        "case", "sm", "copy2t", "/copy", "warm", "torch", "sm/t", "NumPy", "sm/np", "np1t")
    w(hdr + "\n" + "-" * len(hdr) + "\n")
    for r in results:
        ref_tag = "s" if r["copy2t_by_cold"] == "stridemem" else "t"
        mark = "" if r["kind"] == "copy" else (" (ctx)" if r["kind"] == "context" else " (gath)")
        w("%-40s %7.2f %7.2f%s %5.0f%% %5.0f%% %7s %6s %7s %6s %7.2f%s\n" % (
            r["name"], r["stridemem_gbps_cold"], r["copy2t_gbps_cold"], ref_tag,
            100 * r["copy_ratio_cold"], 100 * r["copy_ratio_warm"],
            fmt(r["torch_gbps_cold"]), fmt(r["vs_torch_cold"], "%.2fx"),
            fmt(r["numpy_gbps_cold"]), fmt(r["vs_numpy_cold"], "%.1fx"),
            r["numpy_copy1t_gbps_cold"], mark))
    w("\n(ctx): context, the contiguous copy itself, not judged against the copy; (gath): "
      "gathers read at random\nand are not judged against the copy either (their ratio is "
      "shown for information).\n")
    notes = sorted(set((r["numpy_note"]) for r in results if r["numpy_note"]))
    for n in notes:
        names = [r["name"] for r in results if r["numpy_note"] == n]
        w("NumPy: %s (%s)\n" % (n, ", ".join(names)))
    w("stridemem's sm_index_select returns a new tensor (its allocation is timed, its release "
      "is not);\ntorch.index_select and np.take write into a preallocated output.\n")
    bad = [(r["name"], c) for r in results for c in r["check_failures"]]
    for name, c in bad:
        w("WARNING %s: %s\n" % (name, c))
    w("\nIssue 16 targets, decided on the best times (gather cases are excluded from the copy "
      "ratios; the\ncontiguous copy is excluded from the copy ratios and the NumPy targets but "
      "counts against PyTorch;\n'medians': the same figure from median times):\n")
    for text, met, detail in target_lines:
        w("  %-11s %s: %s\n" % ({True: "MET", False: "NOT MET", None: "NOT CHECKED"}[met],
                                text, detail))


# ---------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", help="libstridemem.so (default: $STRIDEMEM_LIB, else the newest "
                    "build*/libstridemem.so of this checkout)")
    ap.add_argument("--reps", type=int, default=None, help="timed reps per mode (default 10; "
                    "--quick: 2)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads of stridemem and torch (default: os.cpu_count())")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="run cases whose name contains NAME (repeatable)")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes, 8 MiB flush, 2 reps: checks the driver, not the engine")
    ap.add_argument("--no-torch", action="store_true", help="run as if torch were missing")
    ap.add_argument("--pages", choices=PAGE_KINDS, default="huge",
                    help="the pages of every timed buffer, the references' included: huge "
                    "(2 MiB transparent huge pages, the default: what NumPy's large allocations "
                    "and stridemem's storages ask for) or 4k")
    ap.add_argument("--json", metavar="PATH", help="write everything machine-readable here")
    args = ap.parse_args(argv)
    reps = args.reps if args.reps is not None else (2 if args.quick else 10)
    if reps < 1:
        ap.error("--reps must be >= 1")

    path = args.lib or find_library()
    if not path or not os.path.exists(path):
        sys.exit("libstridemem.so not found: build it, or pass --lib / set STRIDEMEM_LIB")
    lib = Lib(path)

    torch = None
    torch_missing_why = "--no-torch"
    if not args.no_torch:
        try:
            import torch
        except ImportError as e:
            torch_missing_why = "import failed: %s" % e
    load_before = os.getloadavg()
    threads_sm = lib.set_threads(args.threads)
    threads_torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        threads_torch = torch.get_num_threads()

    selected = [(n, b) for n, b in case_list(args.quick)
                if not args.only or any(s in n for s in args.only)]
    if not selected:
        sys.exit("no case matches --only %s" % " ".join(args.only))

    # PyTorch's OpenMP workers (libgomp's default wait policy) spin for a few
    # milliseconds after each parallel region before they sleep: measured here
    # at about one core busy for ~10 ms. On 2 cores a stridemem call started
    # in that window loses a core to them; stridemem's own pool sleeps on a
    # condition variable at once. Forcing OMP_WAIT_POLICY=passive would change
    # torch's normal behaviour, so instead every timed call (of either
    # library, and NumPy's) starts after the same idle pause, long enough for
    # the spinning to stop: nobody's workers steal from the next call, and
    # both libraries pay the same wake-up cost a user sees after a pause.
    spin = 0.0
    pause = 0.002
    if torch is not None:
        x, y = torch.ones(64, 64, 32, 32), torch.empty(32, 32, 64, 64)
        spin = max(busy_cores_after(lambda: x.add_(1.0)),
                   busy_cores_after(lambda: y.copy_(x.permute(2, 3, 0, 1))))
        pause = min(0.2, max(0.03, 3 * spin))
    flush = Flusher(8 if args.quick else 96)

    factory = CaseFactory(lib, torch, args.quick, Memory(args.pages))
    results = []
    for i, (name, build) in enumerate(selected):
        t_case = time.time()
        case = build(factory)
        # Correctness first.
        failures, passed = [], []
        for who, check in case.checks:
            problem = check()
            if problem is None:
                passed.append(who)
                continue
            if who == "stridemem":
                sys.stderr.write("MISMATCH %s: stridemem's result differs from NumPy's: %s\n"
                                 % (name, problem))
                sys.exit(1)
            failures.append("%s's result differs from the expected one: %s" % (who, problem))
        contestants = [("stridemem", case.sm, case.sm_after),
                       ("copy_stridemem", case.ref_sm, None),
                       ("copy_numpy", case.ref_numpy, None)]
        if case.numpy is not None:
            contestants.append(("numpy", case.numpy, None))
        if case.torch is not None:
            contestants += [("torch", case.torch, None), ("copy_torch", case.ref_torch, None)]
        cold, warm = measure(contestants, reps, flush, pause)
        share = huge_page_share([x for x in case.keep if isinstance(x, np.ndarray)])
        r = {"name": name, "kind": case.kind, "groups": sorted(case.groups),
             "huge_page_share": share,
             "shape": case.shape_text, "bytes": case.nbytes, "copy_bytes": case.ref_nbytes,
             "numpy_note": case.numpy_note, "checks_passed": passed,
             "check_failures": failures, "cold": {}, "warm": {}}
        for mode, times in (("cold", cold), ("warm", warm)):
            for label, ts in times.items():
                nb = case.ref_nbytes if label.startswith("copy_") else case.nbytes
                r[mode][label] = summary(ts, nb)
            m = r[mode]
            # Keys without a suffix use the best times (the table, the targets);
            # "_median" keys the same from the medians, a check on the best
            # times' luck (see the targets' details).
            for stat, sfx in (("best_gbps", ""), ("median_gbps", "_median")):
                refs = [(m[k][stat], k[5:]) for k in ("copy_stridemem", "copy_torch") if k in m]
                best_ref = max(refs)
                key = "_" + mode + sfx
                r["copy2t_gbps" + key] = best_ref[0]
                r["copy2t_by" + key] = best_ref[1]
                sm_g = m["stridemem"][stat]
                r["stridemem_gbps" + key] = sm_g
                r["copy_ratio" + key] = sm_g / best_ref[0]
                for who in ("torch", "numpy"):
                    r[who + "_gbps" + key] = m[who][stat] if who in m else None
                    r["vs_" + who + key] = sm_g / m[who][stat] if who in m else None
                r["numpy_copy1t_gbps" + key] = m["copy_numpy"][stat]
        results.append(r)
        for h in case.handles:
            lib.release(h)
        del case
        sys.stderr.write("[%d/%d] %-40s sm %6.2f GB/s, %3.0f%% of copy2t (cold), %4.1fs\n" % (
            i + 1, len(selected), name, r["stridemem_gbps_cold"], 100 * r["copy_ratio_cold"],
            time.time() - t_case))

    meta = {
        "date_utc": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S UTC"),
        "cpu": cpu_model(), "cpu_count": os.cpu_count(), "load_before": list(load_before),
        "load_after": list(os.getloadavg()), "threads_stridemem": threads_sm,
        "threads_torch": threads_torch, "numpy": np.__version__,
        "torch": torch.__version__ if torch is not None else None,
        "torch_missing_why": None if torch is not None else torch_missing_why,
        "torch_spin_cpu_s": spin, "pause_s": pause, "reps": reps, "quick": args.quick,
        "library": os.path.abspath(path), "python": sys.version.split()[0],
        "pages": args.pages,
    }
    target_lines = targets(results, torch is not None)
    print_report(meta, results, target_lines, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cases": results,
                       "targets": [{"target": t, "met": m, "detail": d}
                                   for t, m, d in target_lines]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
