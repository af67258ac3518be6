#!/usr/bin/python3
"""Bad input to the C calls: each must fail with the right status, a message
that names the problem (non-empty, mentions the offending value), write
nothing to its out-parameters, and change nothing (tensor values and metadata,
memory statistics, live handle counts).

The calls go through the raw ctypes functions (stridemem.lib) so that the
binding's own checks cannot hide the library's.
"""

import ctypes
import gc
import os
import sys
from ctypes import POINTER, byref, c_double, c_int, c_int32, c_int64, c_void_p

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_bad_input")
lib = sm.lib
CPU = sm.SmDevice(1, 0)
SENTINEL = 0x5EED5EED


def i64(*v):
    return (c_int64 * max(len(v), 1))(*v)


def i32(*v):
    return (c_int32 * max(len(v), 1))(*v)


class World(object):
    """Tensors whose state must survive every failing call."""

    def __init__(self):
        self.a = sm.from_numpy(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        self.b = self.a.permute(2, 0, 1)[::-1]           # a strided view
        self.i = sm.from_numpy(np.arange(6, dtype=np.int32))
        self.e = self.a.unsqueeze(0).expand(3, 2, 3, 4)  # overlapping
        self.z = sm.zeros(0, 5, dtype="int64")
        self.all = [self.a, self.b, self.i, self.e, self.z]

    def snapshot(self):
        gc.collect()
        state = []
        for t in self.all:
            state.append((t.shape, t.strides, t.storage_offset, t.dtype, t.version,
                          t.numpy().tobytes()))
        stats = sm.memory_stats("cpu")
        return state, stats, sm.debug_live_handles()


W = World()


def fails(statuses, what, fn, mentions=(), out=None, light=False):
    """fn() must return (through _call) one of statuses; check the message,
    the untouched out-parameter and the unchanged world."""
    if isinstance(statuses, int):
        statuses = (statuses,)
    before = W.snapshot()
    try:
        fn()
    except sm.StrideMemError as e:
        R.check(e.status in statuses, "%s: %s, want %s (%s)" % (
            what, e.status_name, "/".join(sm.STATUS_NAMES[s] for s in statuses), e.message))
        R.check(bool(e.message), "%s: empty message" % what)
        for m in mentions:
            R.check(str(m).lower() in e.message.lower(),
                    "%s: message %r does not mention %r" % (what, e.message, m))
        R.check(e.c_message == sm.last_error(), "%s: sm_last_error changed after the call" % what)
    except Exception as e:
        R.fail("%s: raised %s: %s" % (what, type(e).__name__, e))
    else:
        R.fail("%s: succeeded, want %s" % (what, "/".join(sm.STATUS_NAMES[s] for s in statuses)))
        return
    if out is not None:
        R.check(out.value == SENTINEL, "%s: the out-parameter was written on failure (%r)"
                % (what, out.value))
    after = W.snapshot()
    R.check(before[0] == after[0], "%s: tensor values or metadata changed" % what)
    if light:  # an allocation failure may trim the cache: compare what is live
        keys = ("allocated_bytes", "active_views", "active_storages", "num_allocs", "requested_bytes")
        R.check(all(before[1][k] == after[1][k] for k in keys),
                "%s: memory stats changed: %s -> %s" % (what, before[1], after[1]))
    else:
        R.check(before[1] == after[1], "%s: memory stats changed: %s -> %s"
                % (what, {k: v for k, v in before[1].items() if after[1][k] != v},
                   {k: v for k, v in after[1].items() if before[1][k] != v}))
    R.check(before[2] == after[2], "%s: live handles %s -> %s" % (what, before[2], after[2]))


def out_t():
    return c_void_p(SENTINEL)


def call(name, *args):
    return lambda: sm._call(name, *args)


def copied_t():
    """An int out-parameter (`copied`) that a failing call must leave alone."""
    return c_int(SENTINEL)


def untouched(flag, what):
    R.equal(flag.value, SENTINEL, "%s: copied was written on failure" % what)


# ----------------------------------------------------------------------------

def dims_and_indices():
    h = W.a.handle  # shape (2, 3, 4)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "select dim 7", call("sm_select", h, 7, 0, byref(o)), ["7"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "select dim -4", call("sm_select", h, -4, 0, byref(o)), ["-4"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "select index 3 of size 3", call("sm_select", h, 1, 3, byref(o)), ["3"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "select index -4 of size 3", call("sm_select", h, 1, -4, byref(o)), ["-4"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "slice dim 9", call("sm_slice", h, 9, 0, 1, 1, byref(o)), ["9"], o)
    o = out_t()
    fails(sm.ERR_INVALID_ARGUMENT, "slice step 0", call("sm_slice", h, 0, 0, 1, 0, byref(o)), ["step"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "narrow past the end", call("sm_narrow", h, 2, 3, 2, byref(o)), ["3"], o)
    o = out_t()
    fails((sm.ERR_OUT_OF_BOUNDS, sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "narrow negative length",
          call("sm_narrow", h, 2, 0, -3, byref(o)), ["-3"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "transpose dim 5", call("sm_transpose", h, 0, 5, byref(o)), ["5"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "permute repeated dim",
          call("sm_permute", h, i32(0, 0, 1), 3, byref(o)), ["0"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "permute dim 6", call("sm_permute", h, i32(0, 6, 1), 3, byref(o)), ["6"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_SHAPE), "permute wrong count",
          call("sm_permute", h, i32(0, 1), 2, byref(o)), ["2"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "movedim source 8",
          call("sm_movedim", h, i32(8), i32(0), 1, byref(o)), ["8"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "unsqueeze dim 4 of 3-d", call("sm_unsqueeze", h, 5, byref(o)), ["5"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "squeeze dim 11", call("sm_squeeze", h, i32(11), 1, byref(o)), ["11"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "flatten end dim 3", call("sm_flatten", h, 0, 3, byref(o)), ["3"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS, sm.ERR_SHAPE), "flatten start > end",
          call("sm_flatten", h, 2, 1, byref(o)), [], o)
    o = out_t()
    fails(sm.ERR_SHAPE, "unflatten sizes 5x5 for 4", call("sm_unflatten", h, 2, i64(5, 5), 2, byref(o)),
          ["25"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "unfold size 5 of size 4", call("sm_unfold", h, 2, 5, 1, byref(o)), ["5"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "unfold step 0",
          call("sm_unfold", h, 2, 2, 0, byref(o)), ["step"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS, sm.ERR_SHAPE), "unfold size -2",
          call("sm_unfold", h, 2, -2, 1, byref(o)), ["-2"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "diagonal dim1 == dim2",
          call("sm_diagonal", h, 0, 1, 1, byref(o)), ["1"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "diagonal dim 13", call("sm_diagonal", h, 0, 0, 13, byref(o)), ["13"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "flip repeated dim",
          call("sm_flip", h, i32(1, -2), 2, byref(o)), [], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "flip dim 3", call("sm_flip", h, i32(3), 1, byref(o)), ["3"], o)
    cnt = c_int32(77)
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS, sm.ERR_SHAPE), "split size 0",
          call("sm_split", h, 0, 0, None, 0, byref(cnt)), ["0"])
    R.equal(cnt.value, 77, "split size 0: count written on failure")
    fails(sm.ERR_OUT_OF_BOUNDS, "split dim 3", call("sm_split", h, 1, 3, None, 0, byref(cnt)), ["3"])
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "chunk 0 chunks",
          call("sm_chunk", h, 0, 0, None, 0, byref(cnt)), ["0"])
    outs = (c_void_p * 1)(SENTINEL)
    fails(sm.ERR_INVALID_ARGUMENT, "split capacity too small",
          call("sm_split", h, 1, 2, outs, 1, byref(cnt)), ["1"])
    R.equal(outs[0], SENTINEL, "split with small capacity wrote a handle")
    # index_select
    idx = sm.from_numpy(np.array([0, 5, -1], dtype=np.int64))
    W.all.append(idx)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "index_select index 5 of size 3",
          call("sm_index_select", h, 1, idx.handle, byref(o)), ["5"], o)
    o = out_t()
    fidx = sm.from_numpy(np.array([0.0, 1.0], dtype=np.float32))
    W.all.append(fidx)
    fails(sm.ERR_DTYPE, "index_select with a float32 index",
          call("sm_index_select", h, 0, fidx.handle, byref(o)), ["float32"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "index_select dim 3",
          call("sm_index_select", h, 3, W.i.handle, byref(o)), ["3"], o)
    o = out_t()
    idx2 = sm.zeros(2, 2, dtype="int64")
    W.all.append(idx2)
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "index_select with a 2-d index",
          call("sm_index_select", h, 0, idx2.handle, byref(o)), [], o)
    # shape/strides capacity
    buf = i64(SENTINEL, SENTINEL)
    fails(sm.ERR_INVALID_ARGUMENT, "sm_shape capacity 2 of 3", call("sm_shape", h, buf, 2), ["2"])
    R.equal(list(buf[:2]), [SENTINEL] * 2, "sm_shape wrote into a too small buffer")
    fails(sm.ERR_INVALID_ARGUMENT, "sm_strides capacity 1 of 3", call("sm_strides", h, buf, 1), ["1"])
    dst = (ctypes.c_char * 95)()
    fails(sm.ERR_INVALID_ARGUMENT, "copy_to_host 95 bytes of 96",
          call("sm_copy_to_host", h, dst, 95), ["95", "96"])
    R.check(bytes(dst) == b"\0" * 95, "copy_to_host wrote into a too small buffer")


def shapes_and_overflow():
    o = out_t()
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "empty with size -3",
          call("sm_empty", i64(2, -3), 2, 8, CPU, byref(o)), ["-3"], o)
    o = out_t()
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "zeros with size -1",
          call("sm_zeros", i64(-1), 1, 8, CPU, byref(o)), ["-1"], o)
    o = out_t()
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "arange with n -5",
          call("sm_arange", c_double(0), c_double(1), -5, 8, CPU, byref(o)), ["-5"], o)
    o = out_t()
    fails(sm.ERR_OVERFLOW, "empty numel overflow 2^62 x 4",
          call("sm_empty", i64(1 << 62, 4), 2, 8, CPU, byref(o)), [str(1 << 62)], o)
    o = out_t()
    fails(sm.ERR_OVERFLOW, "empty numel overflow 2^31 x 2^31 x 2^31",
          call("sm_empty", i64(1 << 31, 1 << 31, 1 << 31), 3, 1, CPU, byref(o)), [str(1 << 31)], o)
    o = out_t()
    fails(sm.ERR_OVERFLOW, "empty bytes overflow 2^61 float64",
          call("sm_empty", i64(1 << 61), 1, 9, CPU, byref(o)), [str(1 << 61)], o)
    o = out_t()
    fails(sm.ERR_OVERFLOW, "full bytes overflow 2^62 int32",
          call("sm_full", i64(1 << 62), 1, c_double(1), 4, CPU, byref(o)), [str(1 << 62)], o)
    o = out_t()
    fails(sm.ERR_OVERFLOW, "empty_strided stride product overflow",
          call("sm_empty_strided", i64(3), i64(1 << 62), 1, 8, CPU, byref(o)), [str(1 << 62)], o)
    o = out_t()
    fails(sm.ERR_OVERFLOW, "empty_strided stride x size overflow",
          call("sm_empty_strided", i64(1 << 40, 2), i64(1 << 40, 1), 2, 1, CPU, byref(o)), [], o)
    o = out_t()
    fails((sm.ERR_OVERFLOW, sm.ERR_OUT_OF_BOUNDS), "as_strided stride product overflow",
          call("sm_as_strided", W.a.handle, i64(1 << 40), i64(1 << 40), 1, 0, byref(o)), [], o)
    o = out_t()
    one = W.a[0:1, 0:1, 0:1]
    fails(sm.ERR_OVERFLOW, "expand numel overflow",
          call("sm_expand", one.handle, i64(1 << 40, 1 << 40, 1 << 40), 3, byref(o)),
          [str(1 << 40)], o)
    one.close()
    o = out_t()
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "view with -2",
          call("sm_view", W.a.handle, i64(-2, 12), 2, byref(o)), ["-2"], o)
    o = out_t()
    fails(sm.ERR_SHAPE, "view with two -1", call("sm_view", W.a.handle, i64(-1, -1), 2, byref(o)), ["-1"], o)
    o = out_t()
    fails(sm.ERR_SHAPE, "view 5 x 5 of 24", call("sm_view", W.a.handle, i64(5, 5), 2, byref(o)), ["25", "24"], o)
    o = out_t()
    fails(sm.ERR_SHAPE, "view of a permuted tensor",
          call("sm_view", W.b.handle, i64(24), 1, byref(o)), ["reshape"], o)
    o = out_t()
    fails(sm.ERR_SHAPE, "expand 3 -> 5", call("sm_expand", W.a.handle, i64(2, 5, 4), 3, byref(o)), ["5"], o)
    o = out_t()
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "expand with -7",
          call("sm_expand", W.a.handle, i64(2, -7, 4), 3, byref(o)), ["-7"], o)
    o = out_t()
    fails((sm.ERR_SHAPE, sm.ERR_INVALID_ARGUMENT), "expand to fewer dims",
          call("sm_expand", W.a.handle, i64(3, 4), 2, byref(o)), [], o)
    o = out_t()
    fails(sm.ERR_SHAPE, "reshape 7 of 24", call("sm_reshape", W.a.handle, i64(7), 1, byref(o), None), ["7"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_SHAPE), "empty with 17 dims",
          call("sm_empty", i64(*([1] * 17)), 17, 8, CPU, byref(o)), ["17"], o)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_SHAPE), "empty with ndim -1",
          call("sm_empty", i64(1), -1, 8, CPU, byref(o)), ["-1"], o)
    o = out_t()
    fails(sm.ERR_INVALID_ARGUMENT, "empty with shape NULL and ndim 2",
          call("sm_empty", None, 2, 8, CPU, byref(o)), [], o)
    fails(sm.ERR_INVALID_ARGUMENT, "empty with out NULL", call("sm_empty", i64(2), 1, 8, CPU, None), [])
    # Out of memory: too big for the machine, but no overflow.
    o = out_t()
    fails(sm.ERR_OUT_OF_MEMORY, "empty 64 TiB", call("sm_empty", i64(1 << 46), 1, 1, CPU, byref(o)),
          [], o, light=True)
    sm.debug_fail_alloc(1)
    o = out_t()
    fails(sm.ERR_OUT_OF_MEMORY, "injected allocation failure",
          call("sm_zeros", i64(16), 1, 8, CPU, byref(o)), [], o, light=True)
    sm.debug_fail_alloc(0)
    t = sm.zeros(16)
    R.check(t.numpy().sum() == 0, "allocation works after the injected failure")
    t.close()


def as_strided_bounds():
    h = W.a.handle  # storage of 24 floats
    cases = [
        ("offset 24", (1,), (1,), 24, ["24"]),
        ("last element past the end", (5,), (5,), 4, ["5"]),
        ("negative offset", (2,), (1,), -1, ["-1"]),
        ("negative stride before the start", (3,), (-2,), 3, ["-2"]),
        ("2-d past the end", (3, 4), (8, 1), 5, []),
    ]
    for name, shape, strides, off, m in cases:
        o = out_t()
        fails(sm.ERR_OUT_OF_BOUNDS, "as_strided " + name,
              call("sm_as_strided", h, i64(*shape), i64(*strides), len(shape), off, byref(o)), m, o)
    st = W.a.storage()
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "tensor_from_storage past the end",
          call("sm_tensor_from_storage", st.handle, i64(25), i64(1), 1, 0, 8, byref(o)), ["25"], o)
    o = out_t()
    fails(sm.ERR_OUT_OF_BOUNDS, "tensor_from_storage float64 over 96 bytes",
          call("sm_tensor_from_storage", st.handle, i64(13), i64(1), 1, 0, 9, byref(o)), [], o)
    st.close()


def handles():
    t = sm.zeros(4)
    dead = t.handle
    t.close()
    u = sm.zeros(4)  # likely reuses the slot with a new generation
    forged = [("released", dead), ("NULL", None), ("forged 0xdeadbeef", 0xDEADBEEF), ("forged 1", 1),
              ("forged all ones", (1 << 64) - 1), ("live + 1", u.handle + 1),
              ("live xor high bit", u.handle ^ (1 << 62)),
              ("a Python object's address", id(u))]
    st = W.a.storage()
    stack = sm.Stack(1024)
    forged.append(("a storage handle used as a tensor", st.handle))
    forged.append(("a stack handle used as a tensor", stack.handle))
    for name, h in forged:
        n = c_int32(SENTINEL & 0x7FFFFFFF)
        fails(sm.ERR_INVALID_HANDLE, "sm_ndim with a %s handle" % name, call("sm_ndim", h, byref(n)))
        R.equal(n.value, SENTINEL & 0x7FFFFFFF, "sm_ndim wrote through a %s handle" % name)
        o = out_t()
        fails(sm.ERR_INVALID_HANDLE, "sm_view with a %s handle" % name,
              call("sm_view", h, i64(4), 1, byref(o)), [], o)
        fails(sm.ERR_INVALID_HANDLE, "sm_inplace_scalar with a %s handle" % name,
              call("sm_inplace_scalar", h, 0, c_double(1), c_double(0)))
        fails(sm.ERR_INVALID_HANDLE, "sm_copy_into with a %s source" % name,
              call("sm_copy_into", W.a.handle, h))
        fails(sm.ERR_INVALID_HANDLE, "sm_same_storage with a %s handle" % name,
              call("sm_same_storage", W.a.handle, h, byref(c_int())))
        if h is not None:
            fails(sm.ERR_INVALID_HANDLE, "sm_tensor_release of a %s handle" % name,
                  call("sm_tensor_release", h))
            fails(sm.ERR_INVALID_HANDLE, "sm_tensor_retain of a %s handle" % name,
                  call("sm_tensor_retain", h))
    R.equal(lib.sm_tensor_release(None), 0, "sm_tensor_release(NULL) is a no-op")
    R.equal(lib.sm_storage_release(None), 0, "sm_storage_release(NULL) is a no-op")
    R.equal(lib.sm_stack_release(None), 0, "sm_stack_release(NULL) is a no-op")
    R.check(np.array_equal(u.numpy(), np.zeros(4, np.float32)), "the live tensor survived the forged calls")
    # Storage / stack handles: a tensor handle is not one.
    fails(sm.ERR_INVALID_HANDLE, "sm_storage_size with a tensor handle",
          call("sm_storage_size", u.handle, byref(c_int64())))
    fails(sm.ERR_INVALID_HANDLE, "sm_stack_mark with a tensor handle",
          call("sm_stack_mark", u.handle, byref(c_int64())))
    dead_st = st.handle
    st.close()
    fails(sm.ERR_INVALID_HANDLE, "sm_storage_size with a released storage",
          call("sm_storage_size", dead_st, byref(c_int64())))
    dead_stack = stack.handle
    stack.release()
    fails(sm.ERR_INVALID_HANDLE, "sm_stack_push on a released stack",
          call("sm_stack_push", dead_stack, i64(4), 1, 8, byref(out_t())))
    u.close()
    # The binding raises for a closed Tensor instead of crashing.
    t = sm.zeros(2)
    t.close()
    try:
        t.shape
        R.fail("a closed Tensor answered shape")
    except sm.StrideMemError as e:
        R.equal(e.status, sm.ERR_INVALID_HANDLE, "closed Tensor: status")
    t.close()  # a second close is harmless


def dtypes_and_devices():
    for bad in (15, -1, 99):  # 15 = SM_NUM_DTYPES
        o = out_t()
        fails((sm.ERR_DTYPE, sm.ERR_INVALID_ARGUMENT), "empty with dtype %d" % bad,
              call("sm_empty", i64(2), 1, bad, CPU, byref(o)), [str(bad)], o)
        R.equal(lib.sm_dtype_size(bad), 0, "sm_dtype_size(%d)" % bad)
        R.equal(lib.sm_dtype_name(bad), b"unknown", "sm_dtype_name(%d)" % bad)
        o, cp = out_t(), copied_t()
        fails((sm.ERR_DTYPE, sm.ERR_INVALID_ARGUMENT), "to dtype %d" % bad,
              call("sm_to", W.a.handle, CPU, bad, byref(o), byref(cp)), [str(bad)], o)
        untouched(cp, "to dtype %d" % bad)
    fails(sm.ERR_DTYPE, "div_ on an int32 tensor", call("sm_inplace_scalar", W.i.handle, 5, c_double(2), c_double(0)),
          ["int32"])
    fails(sm.ERR_DTYPE, "add_ 0.5 on an int32 tensor",
          call("sm_inplace_scalar", W.i.handle, 2, c_double(0.5), c_double(0)), ["0.5"])
    flat = W.a.view(-1)
    f6, f20, f4 = flat[0:6], flat[0:20], flat[4:24]
    fails(sm.ERR_DTYPE, "add_ float32 tensor into int32",
          call("sm_inplace_tensor", W.i.handle, 2, f6.handle, c_double(1)), ["float32"])
    fails(sm.ERR_INVALID_ARGUMENT, "inplace op 99", call("sm_inplace_scalar", W.a.handle, 99, c_double(1), c_double(0)),
          ["99"])
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_UNSUPPORTED), "inplace_tensor with op clamp",
          call("sm_inplace_tensor", W.a.handle, 6, W.a.handle, c_double(1)), [])
    fails(sm.ERR_OVERLAP, "fill_ through an expanded view",
          call("sm_inplace_scalar", W.e.handle, 0, c_double(1), c_double(0)), [])
    fails(sm.ERR_OVERLAP, "copy_into an expanded view",
          call("sm_copy_into", W.e.handle, W.a.handle), [])
    fails(sm.ERR_OVERLAP, "copy_into from a partially overlapping source",
          call("sm_copy_into", f20.handle, f4.handle), [])
    fails(sm.ERR_SHAPE, "copy_into from a non-broadcastable source",
          call("sm_copy_into", W.a.handle, W.i.handle), ["6"])
    o, cp = out_t(), copied_t()
    fails(sm.ERR_INVALID_ARGUMENT, "contiguous with format 9",
          call("sm_contiguous", W.a.handle, 9, byref(o), byref(cp)), ["9"], o)
    untouched(cp, "contiguous with format 9")
    o, cp = out_t(), copied_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_SHAPE), "channels_last of a 3-d tensor",
          call("sm_contiguous", W.a.handle, 1, byref(o), byref(cp)), [], o)
    untouched(cp, "channels_last of a 3-d tensor")
    flag = c_int(7)
    fails(sm.ERR_INVALID_ARGUMENT, "is_contiguous with format 42",
          call("sm_is_contiguous", W.a.handle, 42, byref(flag)), ["42"])
    R.equal(flag.value, 7, "is_contiguous wrote on failure")
    ndev = sm.cuda_device_count()
    devices = [("type 7", sm.SmDevice(7, 0), ["7"]), ("type 0", sm.SmDevice(0, 0), []),
               ("type -1", sm.SmDevice(-1, 0), ["-1"]), ("cuda:%d" % (ndev + 3), sm.SmDevice(2, ndev + 3), [str(ndev + 3)]),
               ("cpu index 5", sm.SmDevice(1, 5), ["5"])]
    if ndev == 0:
        devices.append(("cuda:0 without a GPU", sm.SmDevice(2, 0), ["cuda"]))
    for name, dev, m in devices:
        o = out_t()
        fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "empty on device %s" % name,
              call("sm_empty", i64(4), 1, 8, dev, byref(o)), m, o)
        o, cp = out_t(), copied_t()
        fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "to device %s" % name,
              call("sm_to", W.a.handle, dev, 8, byref(o), byref(cp)), m, o)
        untouched(cp, "to device %s" % name)
        o, cp = out_t(), copied_t()
        fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "DLPack export to device %s" % name,
              call("sm_to_dlpack_ex", W.a.handle, sm.DLPACK_VERSIONED, byref(dev), byref(o),
                   byref(cp)), m, o)
        untouched(cp, "DLPack export to device %s" % name)
        s = sm.SmMemoryStats()
        s.struct_size = ctypes.sizeof(s)
        fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "memory_stats of device %s" % name,
              call("sm_memory_stats", dev, byref(s)), m)
        o = out_t()
        fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "stack_create on device %s" % name,
              call("sm_stack_create", dev, 1024, byref(o)), m, o)
        fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "empty_cache of device %s" % name,
              call("sm_empty_cache", dev), m)
    s = sm.SmMemoryStats()
    fails(sm.ERR_INVALID_ARGUMENT, "memory_stats with struct_size 0",
          call("sm_memory_stats", CPU, byref(s)), [])


def dlpack_exports():
    h = W.a.handle
    for flags, what, mentions in [
            (sm.DLPACK_COPY | sm.DLPACK_NO_COPY, "COPY with NO_COPY", ["SM_DLPACK_COPY"]),
            (16, "unknown flag 16", ["0x10"]),
            (sm.DLPACK_VERSIONED | 1 << 31, "unknown flag 1 << 31", ["0x80000000"])]:
        o, cp = out_t(), copied_t()
        fails(sm.ERR_INVALID_ARGUMENT, "to_dlpack_ex with %s" % what,
              call("sm_to_dlpack_ex", h, flags, None, byref(o), byref(cp)), mentions, o)
        untouched(cp, "to_dlpack_ex with %s" % what)
    cp = copied_t()
    fails(sm.ERR_INVALID_ARGUMENT, "to_dlpack_ex with managed NULL",
          call("sm_to_dlpack_ex", h, sm.DLPACK_VERSIONED, None, None, byref(cp)), ["managed"])
    untouched(cp, "to_dlpack_ex with managed NULL")
    # Negative strides, NORMALIZE and NO_COPY: a copy would be needed.
    o, cp = out_t(), copied_t()
    fails(sm.ERR_UNSUPPORTED, "to_dlpack_ex NORMALIZE|NO_COPY of a flipped view",
          call("sm_to_dlpack_ex", W.b.handle, sm.DLPACK_VERSIONED | sm.DLPACK_NORMALIZE
               | sm.DLPACK_NO_COPY, None, byref(o), byref(cp)), ["negative"], o)
    untouched(cp, "to_dlpack_ex NORMALIZE|NO_COPY of a flipped view")


def stacks():
    s = sm.Stack(1024)
    t1 = s.push((64,), "float32")   # 256 bytes
    # Known values: a fresh push is uninitialised, and a NaN among its bytes
    # would make the comparison below fail whatever the stack did.
    t1.copy_(sm.arange(64, dtype="float32"))
    used = s.used
    before = t1.numpy()
    o = out_t()
    fails(sm.ERR_OUT_OF_MEMORY, "stack push past capacity",
          call("sm_stack_push", s.handle, i64(1000), 1, 8, byref(o)), ["1024"], o)
    R.equal(s.used, used, "stack push past capacity changed the top")
    o = out_t()
    fails(sm.ERR_OVERFLOW, "stack push with an overflowing shape",
          call("sm_stack_push", s.handle, i64(1 << 62, 8), 2, 8, byref(o)), [], o)
    mark = s.mark()
    t2 = s.push((8,), "int64")
    v2 = t2[2:5]
    s.pop_to(mark)
    for name, t in (("popped tensor", t2), ("view of a popped tensor", v2)):
        fails(sm.ERR_INVALID_HANDLE, "%s: numel" % name, call("sm_numel", t.handle, byref(c_int64())))
        fails(sm.ERR_INVALID_HANDLE, "%s: fill_" % name,
              call("sm_inplace_scalar", t.handle, 0, c_double(1), c_double(0)))
    R.equal(lib.sm_tensor_release(v2.handle), 0, "a popped view can still be released")
    v2._h = None
    t2.close()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "pop_to a mark above the top",
          call("sm_stack_pop_to", s.handle, 1 << 20), [str(1 << 20)])
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_BOUNDS), "pop_to a negative mark",
          call("sm_stack_pop_to", s.handle, -8), ["-8"])
    R.check(np.array_equal(t1.numpy(), before), "the live stack tensor kept its values")
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT, sm.ERR_OUT_OF_MEMORY), "stack with capacity -1",
          call("sm_stack_create", CPU, -1, byref(o)), ["-1"], o)
    t1.close()
    s.release()


# A hand-made DLManagedTensorVersioned (read-only, or malformed) whose deleter
# counts its calls.
DELETER_CALLS = []
_DL_DELETER = ctypes.CFUNCTYPE(None, c_void_p)(lambda p: DELETER_CALLS.append(p))


def make_managed(data, shape, strides, code, bits, lanes=1, flags=0, ndim=None, device=(1, 0)):
    keep = []
    m = sm.DLManagedTensorVersioned()
    m.version.major, m.version.minor = 1, 0
    m.flags = flags
    m.deleter = ctypes.cast(_DL_DELETER, c_void_p).value
    sh = (c_int64 * len(shape))(*shape)
    st = (c_int64 * len(strides))(*strides) if strides is not None else None
    keep += [sh, st]
    m.dl_tensor.data = data
    m.dl_tensor.device.device_type, m.dl_tensor.device.device_id = device
    m.dl_tensor.ndim = len(shape) if ndim is None else ndim
    m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes = code, bits, lanes
    m.dl_tensor.shape = ctypes.cast(sh, POINTER(c_int64))
    if st is not None:
        m.dl_tensor.strides = ctypes.cast(st, POINTER(c_int64))
    return m, keep


def dlpack_imports():
    buf = np.arange(6, dtype=np.float32)
    bad = [("complex32", dict(code=5, bits=32), (sm.ERR_DTYPE,)),
           ("2 lanes", dict(code=2, bits=32, lanes=2), (sm.ERR_DTYPE,)),
           ("float 24 bits", dict(code=2, bits=24), (sm.ERR_DTYPE,)),
           ("ndim -1", dict(code=2, bits=32, ndim=-1), (sm.ERR_INVALID_ARGUMENT, sm.ERR_SHAPE)),
           ("ndim 17", dict(code=2, bits=32, ndim=17), (sm.ERR_INVALID_ARGUMENT, sm.ERR_SHAPE)),
           ("device type 9", dict(code=2, bits=32, device=(9, 0)), (sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT))]
    for name, kw, statuses in bad:
        m, keep = make_managed(buf.ctypes.data, (6,), (1,), **kw)
        n0 = len(DELETER_CALLS)
        o = out_t()
        fails(statuses, "from_dlpack with %s" % name,
              call("sm_from_dlpack", c_void_p(ctypes.addressof(m)), 1, byref(o)), [], o)
        R.equal(len(DELETER_CALLS), n0, "from_dlpack with %s called the deleter (ownership stays "
                "with the caller on failure)" % name)
    o = out_t()
    fails(sm.ERR_INVALID_ARGUMENT, "from_dlpack of NULL", call("sm_from_dlpack", None, 1, byref(o)), [], o)
    # A read-only import refuses writes and frees exactly once.
    m, keep = make_managed(buf.ctypes.data, (2, 3), (3, 1), code=2, bits=32, flags=1)
    n0 = len(DELETER_CALLS)
    out = c_void_p()
    try:
        sm._call("sm_from_dlpack", c_void_p(ctypes.addressof(m)), 1, byref(out))
    except sm.StrideMemError as e:
        R.fail("read-only versioned import: %s" % e)
        return
    t = sm.Tensor._wrap(out)
    W.all.append(t)
    R.check(t.is_read_only, "a READ_ONLY import is read-only")
    R.check(np.array_equal(t.numpy(), buf.reshape(2, 3)), "read-only import: values")
    fails(sm.ERR_READ_ONLY, "fill_ on a read-only import",
          call("sm_inplace_scalar", t.handle, 0, c_double(1), c_double(0)), [])
    tt, src, row = t.T, W.a[0].T, t[1]
    fails(sm.ERR_READ_ONLY, "copy_into a read-only import", call("sm_copy_into", tt.handle, src.handle), [])
    fails(sm.ERR_READ_ONLY, "add_ on a view of a read-only import",
          call("sm_inplace_scalar", row.handle, 2, c_double(1), c_double(0)), [])
    for x in (tt, src, row):
        x.close()
    R.check(np.array_equal(buf, np.arange(6, dtype=np.float32)), "read-only memory untouched")
    W.all = [x for x in W.all if x is not t]  # tensors have no ==: remove by identity
    v = t.flip(0)
    t.close()
    R.equal(len(DELETER_CALLS), n0, "deleter ran while a view was alive")
    v.close()
    gc.collect()
    R.equal(len(DELETER_CALLS), n0 + 1, "read-only import: deleter calls after the last view")
    R.equal(DELETER_CALLS[-1] if DELETER_CALLS else None, ctypes.addressof(m),
            "the deleter got the managed tensor")


def blobs():
    a = np.arange(10, dtype=np.float64)
    o = out_t()
    fails((sm.ERR_INVALID_ARGUMENT,), "from_blob NULL data with elements",
          call("sm_from_blob", None, i64(3), None, 1, 9, CPU, None, None, byref(o)), [], o)
    o = out_t()
    fails((sm.ERR_DEVICE, sm.ERR_INVALID_ARGUMENT), "from_blob on device type 8",
          call("sm_from_blob", c_void_p(a.ctypes.data), i64(3), None, 1, 9, sm.SmDevice(8, 0), None, None,
               byref(o)), ["8"], o)
    calls = []
    cb = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)(lambda d, c: calls.append((d, c)))
    o = out_t()
    fails(sm.ERR_OVERFLOW, "from_blob with an overflowing shape",
          call("sm_from_blob", c_void_p(a.ctypes.data), i64(1 << 62, 4), None, 2, 9, CPU, cb, None, byref(o)),
          [], o)
    R.equal(calls, [], "from_blob failure called the deleter")
    # Binding-level refusals (no C call): read-only arrays, odd strides.
    ro = np.arange(3.0)
    ro.flags.writeable = False
    try:
        sm.from_numpy_blob(ro)
        R.fail("from_numpy_blob accepted a read-only array")
    except ValueError:
        R.ok()
    odd = np.zeros(10, dtype=np.uint8)[1:].view(np.uint8)
    rec = np.zeros(4, dtype=[("a", np.int32), ("b", np.int8)])["a"]
    try:
        sm.from_numpy_blob(rec)
        R.fail("from_numpy_blob accepted strides that are not a multiple of the item size")
    except ValueError:
        R.ok()
    del odd


def main():
    for name, fn in [("dims and indices", dims_and_indices), ("shapes and overflow", shapes_and_overflow),
                     ("as_strided bounds", as_strided_bounds), ("handles", handles),
                     ("dtypes and devices", dtypes_and_devices), ("stacks", stacks),
                     ("dlpack imports", dlpack_imports), ("dlpack exports", dlpack_exports),
                     ("blobs", blobs)]:
        R.run(name, fn)
    for t in W.all:
        t.close()
    return R.finish()


if __name__ == "__main__":
    sys.exit(main())
