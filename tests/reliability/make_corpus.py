#!/usr/bin/env python3
"""Writes the hand-made seeds of the fuzz corpus (tests/reliability/corpus/seed-*).

Each seed is a small program in the byte format fuzz_api.cpp decodes: one op
byte, then that op's argument bytes in the order the harness reads them. The
encoder below mirrors the decoder; keep the two in step when either changes.
The rest of the corpus (cov-*) are inputs libFuzzer found that add coverage,
merged in with `scripts/reliability.sh fuzz-merge`.

    python3 tests/reliability/make_corpus.py [OUTDIR]
"""
import os
import random
import struct
import sys

# Ops (the op byte modulo 17).
CREATE, FROM_BLOB, VIEW_A, VIEW_B, VIEW_C, COPY, COPY_INTO, WRITE, WRITE2, RELEASE, RETAIN, \
    STORAGE, STACK, META, FAULT, DLPACK, MISC = range(17)

F32, F64, I32, I64, F16, BF16, U8, BOOL = 8, 9, 4, 5, 6, 7, 1, 0
I8, I16 = 2, 3
# Op bytes 238.. select the ops added for the bug classes of 75f5c06,
# 86a34a6 and f17a581 ((byte - 238) % 6); bytes below 238 decode as above.
GEN, REVIEW, DLADDR, EMPTYHUGE, STATS, EXPIDX = range(238, 244)
TENSOR_KIND, STORAGE_KIND, STACK_KIND = 0, 1, 2
# op DLADDR dtypes (code, bits) by index
DL_TYPES = [('i8'), ('u8'), ('bool'), ('i16'), ('i32'), ('i64'), ('f16'), ('f32'), ('f64'), ('bf16')]
# op EMPTYHUGE sizes by index
EH_SIZES = [1 << 62, 2**63 - 1, 1 << 40, 1 << 32, 6, 3, 1, 1 << 31]
# op EXPIDX index lengths by index (2^27 and 2^40 at 3 and 4 when the harness
# is built with SM_FUZZ_HUGE_EXPANDED_INDEX=1, else 2^12 there too)
EI_LENGTHS = [1, 7, 1 << 12, 1 << 27, 1 << 40]
HOSTILE_SIZE = [-1, -2, 0, 1, 65536, 1 << 20, 1 << 31, 1 << 32, 1 << 40, 1 << 62,
                2**63 - 1, -2**63, 3 << 40, 100000]
HOSTILE_STRIDE = [0, -1, 2**63 - 1, -2**63, 1 << 40, -(1 << 40), 1 << 62, 1 << 20]
HOSTILE_INDEX = [-2**63, 2**63 - 1, -2**63 + 1, 1 << 40, -(1 << 40), 1000, -1000]
SLICE_NONE = -2**63
SCALARS = [0, 1, -1, 2.5, -3, 1e10, -1e10, 0.5, 65504, 1e-10, 300, -129, 7, 1e300, -0.0,
           'nan', 'inf', '-inf']
# Op bytes that select op WIDE (kWideOpBytes in fuzz_api.cpp): the dtypes
# that an ordinary dtype byte never decodes to. They were a second byte range
# of WRITE2 (byte % 17 == 8), and no older seed has them where an op byte is read.
WIDE_BYTES = (59, 178, 229)
U16, U32, U64, C64, C128 = 10, 11, 12, 13, 14
WIDE_DTYPES = [U16, U32, U64, C64, C128]
DTYPE_SIZE = {0: 1, 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 2, 7: 2, 8: 4, 9: 8, 10: 2, 11: 4, 12: 8, 13: 8, 14: 16}
# Ops of sm_inplace_*: the byte is op + 1 (the harness subtracts one).
FILL, ZERO, ADD, SUB, MUL, DIV, CLAMP, RELU, NEG, ABS, SQRT, EXP = range(12)


def hostile_byte(table, value, first):
    for b in range(first, 256):
        if b % len(table) == table.index(value):
            return b
    raise ValueError(value)


class Prog:
    def __init__(self):
        self.b = bytearray()

    def u8(self, v):
        self.b.append(v & 0xFF)

    def size(self, n):
        self.u8(n if 0 <= n <= 8 else hostile_byte(HOSTILE_SIZE, n, 224))

    def stride(self, s):
        self.u8(s + 9 if -9 <= s <= 9 else hostile_byte(HOSTILE_STRIDE, s, 224))

    def index(self, i):
        self.u8(i + 10 if -10 <= i <= 10 else hostile_byte(HOSTILE_INDEX, i, 224))

    def dim(self, d):
        self.u8(d + 5)

    def ndim(self, n):
        table = [-1, 17, 16, -2**31, 2**31 - 1, 15]
        self.u8(n if 0 <= n <= 5 else hostile_byte(table, n, 240))

    def scalar(self, v):
        self.u8(SCALARS.index(v))

    def t(self, slot):  # a live tensor by its slot (creation order, releases shift)
        self.u8(slot)

    def t_special(self, case):  # 0 NULL, 1 released, 2 forged, 3 other kind, 4 stale gen, 5 bad index
        self.u8(next(b for b in range(216, 256) if b % 6 == case))
        if case == 2:  # kind 1, generation 5, slot 3: plausible, never issued
            self.b += bytes([0x10, 0, 0, 5, 0, 0, 0, 4])

    # ---- ops ----
    def create(self, kind, shape, dtype, value=1, strides=None, data=None, n=None):
        self.u8(CREATE)
        self.u8(kind)
        self.ndim(len(shape))
        for x in shape:
            self.size(x)
        self.u8(dtype)
        self.u8(1)  # shape not NULL
        if kind == 5:
            for s in strides:
                self.stride(s)
        elif kind == 4:
            self.b += bytes(data)
            self.u8(1)  # data not NULL
        elif kind == 3:
            self.size(n)
            self.scalar(0)
            self.scalar(1)
        else:
            self.scalar(value)

    def zeros(self, shape, dtype=F32):
        self.create(1, shape, dtype)

    def full(self, shape, dtype, value):
        self.create(2, shape, dtype, value)

    def from_blob(self, shape, dtype, strides=None, deleter=True, aligned=True):
        self.u8(FROM_BLOB)
        self.ndim(len(shape))
        for x in shape:
            self.size(x)
        self.u8(1 if strides else 0)
        for s in (strides or [1] * len(shape)):
            self.stride(s)
        self.u8(dtype)
        self.u8(1 if deleter else 0)
        self.u8(1 if aligned else 0)  # 0: one byte off

    def view(self, slot, shape):
        self.u8(VIEW_A); self.u8(0); self.ndim(len(shape))
        for x in shape:
            self.size(x)
        self.u8(0)  # no -1
        self.t(slot)

    def as_strided(self, slot, shape, strides, offset):
        self.u8(VIEW_A); self.u8(1); self.ndim(len(shape))
        for x in shape:
            self.size(x)
        for s in strides:
            self.stride(s)
        self.index(offset)
        self.t(slot)

    def slice(self, slot, dim, start, stop, step):
        self.u8(VIEW_A); self.u8(2); self.ndim(0)
        self.dim(dim); self.index(start); self.index(stop); self.index(step)
        self.t(slot)

    def select(self, slot, dim, i):
        self.u8(VIEW_A); self.u8(4); self.ndim(0)
        self.dim(dim); self.index(i)
        self.t(slot)

    def transpose(self, slot, a, b):
        self.u8(VIEW_B); self.u8(1); self.dim(a); self.dim(b); self.t(slot)

    def expand(self, slot, shape):
        self.u8(VIEW_B); self.u8(3); self.ndim(len(shape))
        for x in shape:
            self.size(x)
        for _ in shape:
            self.u8(1)  # keep the size
        self.t(slot)

    def unfold(self, slot, dim, size, step):
        self.u8(VIEW_C); self.u8(2); self.dim(dim); self.index(size); self.index(step); self.t(slot)

    def flip(self, slot, dims):
        self.u8(VIEW_C); self.u8(4); self.ndim(len(dims))
        for d in dims:
            self.dim(d)
        self.t(slot)

    def split(self, slot, size, dim, cap):
        self.u8(VIEW_C); self.u8(5); self.t(slot); self.index(size); self.dim(dim)
        self.u8(cap + 1); self.u8(1)

    def copy(self, kind, slot, fmt=0, shape=(), dtype=F32, idx=None, dim=0):
        # kind: 0 reshape, 1 contiguous, 2 clone, 3 to, 4 index_select, 5 would_copy
        self.u8(COPY); self.u8(kind); self.t(slot); self.u8(fmt + 1)
        self.ndim(len(shape))
        for x in shape:
            self.size(x)
        self.u8(dtype)
        if kind == 4:
            self.t(idx)
            self.dim(dim)
        if kind == 0:
            self.u8(1)

    def copy_into(self, dst, src):
        self.u8(COPY_INTO); self.t(dst); self.t(src); self.u8(FILL + 1)
        self.scalar(0); self.scalar(0)

    def scalar_op(self, slot, op, a=1, b=0):
        self.u8(WRITE); self.u8(0); self.t(slot); self.u8(op + 1); self.scalar(a); self.scalar(b)

    def tensor_op(self, slot, op, other, alpha=1):
        self.u8(WRITE); self.u8(1); self.t(slot); self.t(other); self.u8(op + 1)
        self.scalar(alpha); self.scalar(0)

    def release(self, slot=None, special=None):
        self.u8(RELEASE); self.u8(1)
        if special is not None:
            self.t_special(special)
        else:
            self.t(slot)

    def retain(self, slot):
        self.u8(RETAIN); self.u8(1); self.t(slot)

    def tensor_storage(self, slot):
        self.u8(STORAGE); self.u8(0); self.t(slot)

    def from_storage(self, sh, shape, offset, dtype):
        self.u8(STORAGE); self.u8(1); self.u8(sh); self.ndim(len(shape))
        for x in shape:
            self.size(x)
        self.u8(0)
        for _ in shape:
            self.stride(1)
        self.index(offset)
        self.u8(dtype)

    def storage_getters(self, sh):
        self.u8(STORAGE); self.u8(2); self.u8(sh)

    def storage_release(self, sh):
        self.u8(RELEASE); self.u8(0); self.u8(sh)

    def stack_create(self, kib):
        self.u8(STACK); self.u8(0); self.size(kib)

    def stack_push(self, k, shape, dtype):
        self.u8(STACK); self.u8(1); self.u8(k); self.ndim(len(shape))
        for x in shape:
            self.size(x)
        self.u8(dtype)

    def stack_mark(self, k):
        self.u8(STACK); self.u8(2); self.u8(k)

    def stack_pop(self, k, mark_index):
        self.u8(STACK); self.u8(3); self.u8(k); self.u8(0); self.u8(mark_index)

    def stack_release(self, k):
        self.u8(STACK); self.u8(5); self.u8(k)

    def meta(self, slot, other=0, special=None, valid=True):
        self.u8(META)
        if special is not None:
            self.t_special(special)
        else:
            self.t(slot)
        self.u8(17); self.u8(1); self.t(other)
        if special is None and valid:
            self.u8(0)  # copy_to_host mode (read only for a valid tensor)

    def fault(self, n):
        self.u8(FAULT); self.u8(n)

    # op MISC with a kind byte >= 240: tags, history, snapshot (issue 14)
    def tag_push(self, name_index):       # 0 encoder, 1 attn, 2 été, 3 quote/backslash, 4 <script>, 5 emoji, 6 256 bytes
        self.u8(MISC); self.u8(240); self.u8(name_index)

    def tag_burst(self, n):               # n pushes (1..128) of encoder/attn
        self.u8(MISC); self.u8(244); self.u8(n - 1)

    def tag_push_bad(self, bad_index):    # 0 NULL, 1 "", 2 tab, 3 DEL, 4 truncated, 5 overlong, 6 surrogate,
        self.u8(MISC); self.u8(245); self.u8(bad_index)  # 7 > U+10FFFF, 8 0xFF, 9 257 bytes

    def tag_pop(self, all_and_one_more=False):
        self.u8(MISC); self.u8(247); self.u8(0 if all_and_one_more else 1)

    def history(self, size_index):        # 0, 1, 3, 64, 1000, 0, -1, INT64_MIN, 2^24 + 1, INT64_MAX, -2^24
        self.u8(MISC); self.u8(250); self.u8(size_index)

    def snapshot(self):
        self.u8(MISC); self.u8(252)

    def export(self, slot, flags):
        self.u8(DLPACK); self.u8(0); self.t(slot); self.u8(flags)

    def hostile_import(self, shape, dtype_code, bits_shift, byte_offset=0, strides=None,
                       versioned=False):
        self.u8(DLPACK); self.u8(2); self.u8(1 if versioned else 0)
        self.ndim(len(shape))
        for x in shape:
            self.size(x)
        for x in (strides or [1] * len(shape)):
            self.stride(x)
        self.u8(1 if strides else 0)   # strides given (else row-major, NULL)
        self.u8(dtype_code)             # 0 int, 1 uint, 2 float, 4 bfloat
        self.u8(bits_shift)             # bits = 8 << shift
        self.u8(1)                      # lanes 1
        self.u8(1)                      # CPU
        if byte_offset:
            self.u8(0)
            self.b += byte_offset.to_bytes(8, 'big')
        else:
            self.u8(1)
        self.u8(0)                      # flags
        if not shape:
            self.u8(0)
        if versioned:
            self.u8(0); self.u8(1)      # version 1.0

    def import_(self, i):
        self.u8(DLPACK); self.u8(1); self.u8(i); self.u8(1)

    # ---- op WIDE: uint16/32/64, complex64/128 ----
    def wide(self, mode, dtype, byte=WIDE_BYTES[2]):
        self.u8(byte); self.u8(mode); self.u8(WIDE_DTYPES.index(dtype))

    def wide_create(self, how, shape, dtype, value=0, n=0, start=0, step=1, data=b'', fill=0):
        """how: 0 empty, 1 zeros, 2 full(value), 3 arange(start, step, n; 1-D),
        4 from_host: the first 32 bytes from data, byte k past them k * 167 + fill."""
        self.wide(0, dtype); self.u8(how); self.u8(len(shape))
        for x in shape:
            self.u8(x)
        if how == 2:
            self.scalar(value)
        elif how == 3:
            self.u8(n); self.scalar(start); self.scalar(step)
        elif how == 4:
            nbytes = DTYPE_SIZE[dtype]
            for x in shape:
                nbytes *= x
            self.u8(fill)
            self.b += bytes(data[:min(32, nbytes)])
            assert len(data) >= min(32, nbytes)

    def wide_to(self, slot, dtype, back):
        """sm_to(slot, dtype), then that result to dtype back (any)."""
        self.wide(1, dtype); self.t(slot); self.u8(back)

    def wide_copy_into(self, slot, dtype, back, flip=False, flip_back=False):
        """sm_copy_into a fresh dtype tensor (flipped or not) from slot, then
        a fresh back tensor from it."""
        self.wide(2, dtype); self.t(slot); self.u8(int(flip) | int(flip_back) << 1); self.u8(back)

    def wide_review(self, sh, dtype, shape, offset, strides=None):
        """sm_tensor_from_storage(storage handle sh, shape, strides, offset, dtype)."""
        self.wide(3, dtype); self.u8(sh); self.u8(len(shape))
        for x in shape:
            self.u8(x)
        self.u8(1 if strides else 0)
        for x in (strides or [0] * len(shape)):
            self.u8(x + 3)
        self.u8(offset)

    def wide_scalar_op(self, dtype, k, op, a=1, b=0):
        """sm_inplace_scalar on the k-th valid tensor of dtype in the pool
        (of any wide dtype when none has that one)."""
        self.wide(4, dtype); self.u8(k); self.u8(op + 1); self.scalar(a); self.scalar(b)

    def wide_tensor_op(self, dtype, k, other, op, alpha=1):
        """sm_inplace_tensor on the k-th valid tensor of dtype (as wide_scalar_op), other a slot."""
        self.wide(5, dtype); self.u8(k); self.t(other); self.u8(op + 1); self.scalar(alpha)

    # ---- ops 238.. ----
    def gen(self, kind, mode, arg=0, extra=0):
        """Handle generations: kind TENSOR/STORAGE/STACK_KIND; mode 0..4 age the
        just-released handle's slot to that many generations left and walk it to
        its limit; 5 negative, 6 too many generations; 7 a live handle (arg odd:
        one of the pool); 8 no handle (forged[(arg // 8) % 5]); 9 an older
        released handle with 0 left. Then 1 + extra plain cycles."""
        self.u8(GEN); self.u8(kind); self.u8(mode); self.u8(arg); self.u8(extra)

    def review(self, views, src=0, mis=1, dt1=U8, n=16, keep=True, versioned=False, sh=0):
        """Typed re-views (sm_tensor_from_storage) of a storage: src 0 from_blob
        / 1 DLPack import of n 1-byte elements (U8, I8, BOOL) at 16k + mis, or
        2 the pool's storage handle sh. views: (shape, strides or None, offset, dtype)."""
        self.u8(REVIEW); self.u8(src)
        if src == 2:
            self.u8(sh)
        else:
            self.u8(mis - 1); self.u8([U8, I8, BOOL].index(dt1)); self.u8(n)
            self.u8(1 if keep else 0); self.u8(1 if versioned else 0)
        self.u8(len(views) - 1)
        for shape, strides, off, dt in views:
            self.u8(len(shape))
            for x in shape:
                self.u8(x)
            self.u8(1 if strides else 0)
            for x in (strides or [0] * len(shape)):
                self.u8(x + 3)
            self.u8(off); self.u8(dt)

    def dladdr(self, mode, dtype='u8', shape=(4,), strides=None, a=0, b=0, versioned=False):
        """A DLPack producer with a hostile data/byte_offset (modes 0..7, see
        op_dlpack_address); dtype one of DL_TYPES."""
        self.u8(DLADDR); self.u8(1 if versioned else 0); self.u8(mode)
        self.u8(DL_TYPES.index(dtype)); self.u8(len(shape))
        for x in shape:
            self.u8(x)
        self.u8(1 if strides else 0)
        for x in (strides or [0] * len(shape)):
            self.u8(x + 3)
        self.u8(a); self.u8(b)

    def empty_huge(self, shape, dtype, how, ops, strides=None):
        """An empty tensor (one size 0, the others from EH_SIZES) made by how
        (0 empty, 1 zeros, 2 full, 3 empty_strided, 4 from_host(NULL)), then
        ops: (kind, byte) with kind 0 clone, 1 to, 2 contiguous, 3 copy_into
        both ways, 4 copy of a transposed view, 5 reshape to {0}."""
        self.u8(EMPTYHUGE); self.u8(len(shape) - 2); self.u8(shape.index(0))
        for x in shape:
            self.u8(EH_SIZES.index(x) if x else 0)
        self.u8(dtype); self.u8(how)
        if how == 3:
            for x in strides:
                self.stride(x)
        self.u8(len(ops) - 1)
        for kind, b in ops:
            self.u8(kind); self.u8(b)

    def stats(self, mode, a=0, b=0):
        """sm_memory_stats: mode 0 struct_size a % (sizeof + 16); 1 ending
        inside a field (8 + 8 * a + 1 + b % 7); 2 at least the whole struct;
        3 NULL."""
        self.u8(STATS); self.u8(mode); self.u8(a); self.u8(b)

    def expidx(self, length, v_mode, vb=0, i64=True, idx0d=False, src_shape=None, src_dtype=F32, dim=0, slot=None):
        """sm_index_select with a 1-element index expanded to EI_LENGTHS[length]
        (v_mode 0 in range, 1 negative in range, 2 past the end, 3 before the
        start, 4 INT_MIN/INT_MAX) over a fresh source of src_shape (sizes 0..3)
        or the pool's tensor at slot."""
        self.u8(EXPIDX); self.u8(1 if i64 else 0); self.u8(length)
        self.u8(0 if idx0d else 1); self.u8(v_mode); self.u8(vb)
        if slot is None:
            self.u8(1); self.u8(len(src_shape))
            for x in src_shape:
                self.u8(x)
            self.u8(src_dtype); self.u8(dim + 2)
        else:
            self.u8(0); self.t(slot); self.dim(dim)


def seeds():
    out = {}

    p = Prog()  # views and writes through them
    p.create(3, [], F32, n=8)          # 0: arange(8)
    p.view(0, [2, 4])                  # 1
    p.transpose(1, 0, 1)               # 2
    p.slice(2, 0, -1, SLICE_NONE, -2)  # 3: negative step
    p.scalar_op(3, ADD, 2.5)
    p.select(1, 1, 2)                  # 4
    p.zeros([2], F64)                  # 5
    p.copy_into(4, 5)
    p.tensor_op(1, MUL, 4, 1)
    p.meta(3, 1)
    p.copy(2, 3)                       # clone
    p.copy(0, 2, shape=[8])            # reshape: copy
    p.release(0)
    p.meta(0, 1)
    out['seed-views-writes'] = p

    p = Prog()  # stale, forged, NULL, wrong-kind handles
    p.zeros([3, 3])
    p.zeros([4])
    p.release(0)
    p.release(special=1)               # the released handle again
    p.meta(0, special=1)
    p.retain(0)
    p.meta(0, special=2)
    p.meta(0, special=4)
    p.meta(0, special=5)
    p.release(special=0)
    p.tensor_storage(0)
    p.meta(0, special=3)
    p.release(special=3)
    p.storage_release(0)
    p.storage_release(0)
    out['seed-stale-handles'] = p

    p = Prog()  # stack of views: push, write, pop, use after pop
    p.stack_create(4)
    p.stack_mark(0)
    p.stack_push(0, [3, 5], F32)       # 0
    p.stack_push(0, [7], I64)          # 1
    p.scalar_op(0, FILL, 7)
    p.transpose(0, 0, 1)               # 2: a view of a stack tensor
    p.stack_pop(0, 0)
    p.meta(0, 1, valid=False)          # popped
    p.meta(2, 0, valid=False)          # a view of a popped tensor
    p.scalar_op(2, ADD, 1)
    p.release(0)
    p.export(0, 1)
    p.stack_push(0, [2, 2], F64)
    p.stack_release(0)
    p.meta(1, 1, valid=False)
    out['seed-stack'] = p

    p = Prog()  # overlapping destinations and sources
    p.create(3, [], F32, n=8)          # 0
    p.as_strided(0, [3, 3], [1, 1], 0)  # 1: overlapping
    p.scalar_op(1, ADD, 1)
    p.expand(0, [2, 8])                # 2: stride 0
    p.scalar_op(2, FILL, 0)
    p.unfold(0, 0, 3, 2)               # 3: overlapping windows
    p.copy_into(3, 1)
    p.slice(0, 0, 1, SLICE_NONE, 1)    # 4
    p.slice(0, 0, 0, -1, 1)            # 5
    p.copy_into(4, 5)                  # partial overlap
    p.tensor_op(0, ADD, 0, 1)          # identical: allowed
    p.copy(2, 2)                       # clone of expanded
    out['seed-overlap'] = p

    p = Prog()  # DLPack round trips
    p.create(3, [], F64, n=6)          # 0
    p.flip(0, [0])                     # 1
    p.export(0, 1)
    p.export(1, 3)                     # versioned + normalize: a copy
    p.export(1, 0)
    p.import_(0)                       # 2
    p.import_(0)                       # 3
    p.meta(2, 0)
    p.scalar_op(2, ADD, 1)
    p.release(0)
    p.release(0)
    p.meta(1, 0)
    out['seed-dlpack'] = p

    p = Prog()  # hostile sizes and strides
    p.create(0, [2**63 - 1, 2], F32)
    p.create(1, [1 << 40], F64)
    p.create(2, [-1, 3], I32, 7)
    p.create(1, [1 << 32, 1 << 32], U8)
    p.create(5, [3, 4], F32, strides=[2**63 - 1, 1])
    p.create(5, [3, 4], F32, strides=[-4, -1])
    p.create(3, [], F32, n=1 << 62)
    p.zeros([2, 3])
    p.as_strided(1, [2, 2], [1 << 40, 1], 0)
    p.as_strided(1, [0, 5], [3, 1], 4)
    p.expand(1, [1 << 40, 2, 3])
    p.copy(2, 2)
    p.view(1, [1 << 62, 0])
    p.stack_create(1 << 40)
    out['seed-hostile-sizes'] = p

    p = Prog()  # fault injection in the middle
    p.zeros([8, 8])
    p.fault(1)
    p.copy(2, 0)
    p.copy(2, 0)
    p.fault(2)
    p.transpose(0, 0, 1)               # 2
    p.copy(1, 2)                       # contiguous: a copy (allocation 1)
    p.copy(3, 2, dtype=F16)            # allocation 2 fails
    p.copy(3, 2, dtype=F16)
    p.fault(1)
    p.stack_create(1)
    p.full([3], F32, 2.5)
    p.export(0, 1)
    out['seed-faults'] = p

    p = Prog()  # storages
    p.create(3, [], I32, n=8)          # 0
    p.tensor_storage(0)
    p.from_storage(0, [2, 2], 4, F32)  # 1
    p.from_storage(0, [3], 7, I32)     # out of bounds
    p.storage_getters(0)
    p.release(0)
    p.meta(0, 0)
    p.storage_release(0)
    p.storage_getters(0)
    out['seed-storage'] = p

    p = Prog()  # external memory: from_blob with a deleter
    p.from_blob([4, 3], F32)           # 0
    p.from_blob([3, 2], F64, strides=[-1, 3])  # 1
    p.transpose(0, 0, 1)               # 2
    p.release(0)
    p.scalar_op(1, NEG)
    p.copy_into(1, 1)
    p.release(0)
    p.export(0, 1)
    p.release(0)
    out['seed-blob'] = p

    p = Prog()  # split, index_select, dtype conversions
    p.create(3, [], F32, n=8)          # 0
    p.split(0, 3, 0, 4)                # 1..4
    p.create(4, [3], I64, data=(2).to_bytes(8, 'little', signed=True) +
             (-1).to_bytes(8, 'little', signed=True) + (0).to_bytes(8, 'little', signed=True))
    p.copy(4, 0, idx=5)
    p.copy(3, 0, dtype=BF16)
    p.copy(3, 0, dtype=I32)
    p.copy(3, 0, dtype=BOOL)
    p.copy(1, 0, fmt=1)
    out['seed-split-index'] = p
    # Regression seeds for the library bugs the reliability work found
    # (tests/RELIABILITY.md): they fail under ASan/UBSan until fixed.
    p = Prog()
    p.zeros([1 << 62, 6, 0])           # numel of a shape with a 0 overflows first
    out['seed-bug-numel-zero-dim'] = p

    p = Prog()
    p.from_blob([4], BOOL)             # bool bytes 0x11: not 0/1
    p.copy(3, 0, dtype=F32)
    p.scalar_op(0, FILL, 1)
    out['seed-bug-bool-bytes'] = p

    p = Prog()
    p.zeros([0])
    p.as_strided(0, [0], [1], 2**63 - 1)  # empty view, offset * itemsize overflows
    p.meta(1, 0)
    out['seed-bug-empty-view-offset'] = p

    p = Prog()
    p.create(5, [2], U8, strides=[-2**63])  # INT64_MIN stride
    out['seed-bug-int64min-stride'] = p

    p = Prog()
    p.zeros([1])
    p.as_strided(0, [1], [-2**63], 0)
    p.slice(1, 0, SLICE_NONE, SLICE_NONE, -1)  # negates the stride
    out['seed-bug-int64min-slice'] = p

    p = Prog()
    p.hostile_import([4], 2, 1, byte_offset=1)  # f16 at an odd address
    p.copy(3, 0, dtype=F32)
    p.scalar_op(0, ADD, 1)
    out['seed-bug-misaligned-import'] = p

    p = Prog()
    p.from_blob([4], F32, aligned=False)  # f32 at an odd address
    p.copy(3, 0, dtype=F64)
    p.scalar_op(0, ADD, 1)
    out['seed-bug-misaligned-blob'] = p

    # Regression seeds for the bug classes fixed in 75f5c06, 86a34a6, f17a581.
    p = Prog()  # handle generations: slots walked to their limit, then retired
    p.zeros([2])                                   # 0: a live tensor
    p.gen(TENSOR_KIND, 1, arg=0, extra=1)          # 1 generation left: walk 2, then 2 plain cycles
    p.gen(STORAGE_KIND, 0, arg=1, extra=0)         # its next use is its last
    p.gen(STACK_KIND, 2, arg=2, extra=1)
    p.gen(TENSOR_KIND, 4, arg=0, extra=3)
    p.gen(TENSOR_KIND, 9, arg=1, extra=1)          # the handle released before, 0 left: walked
    p.gen(TENSOR_KIND, 5, arg=1)                   # INT64_MIN generations left
    p.gen(STORAGE_KIND, 6, arg=0)                  # 2^28 - 1 left: one too many
    p.gen(TENSOR_KIND, 7, arg=1)                   # the live tensor 0
    p.gen(STACK_KIND, 7, arg=0)                    # a live stack made for it
    p.gen(STORAGE_KIND, 8, arg=8 * 2)              # kind tag 5..15: no handle
    p.gen(TENSOR_KIND, 8, arg=8 * 4)               # a slot index past every slot
    p.gen(STACK_KIND, 8, arg=0)                    # NULL
    p.meta(0, special=1)                           # released handles still refused
    out['seed-bug-generation-wrap'] = p

    p = Prog()  # typed re-views of bytes at misaligned addresses
    p.review([([4], None, 0, F32),                 # base 16k+1: refused
              ([16], None, 0, U8),                 # fine
              ([2, 2], [2, 1], 1, I8)], src=0, mis=1, dt1=U8, n=16)
    p.review([([4], None, 0, F32),                 # base 16k+2: refused (2 mod 4)
              ([3], [-1], 2, I16),                 # 2-byte elements fit
              ([0], None, 0, F64)],                # empty, still refused
             src=0, mis=2, dt1=I8, n=16, keep=False)
    p.review([([2], None, 0, I16), ([3], None, 1, BOOL), ([0, 4], None, 0, I32)],
             src=1, mis=3, dt1=BOOL, n=12)        # DLPack import at an odd byte_offset
    p.review([([2], None, 0, F32), ([2], None, 0, F64), ([4], None, 3, I32)],
             src=1, mis=4, dt1=U8, n=24, versioned=True)
    p.review([([1], None, 0, F16), ([0], None, 0, BF16)], src=0, mis=7, dt1=U8, n=0)  # 0 bytes
    p.zeros([4], F32)
    p.tensor_storage(4)
    p.review([([2], None, 1, F64), ([2, 2], [1, 2], 0, I32), ([3], None, 2, F32)], src=2, sh=5)
    p.copy(3, 1, dtype=F32)                        # the u8 view of the first blob, converted
    out['seed-bug-misaligned-review'] = p

    p = Prog()  # DLPack data + byte_offset past every buffer
    p.dladdr(0, 'u8', (4,))                        # byte_offset 2^64 - 4
    p.dladdr(1, 'f32', (2, 3), versioned=True)     # 2^63 = PTRDIFF_MAX + 1
    p.dladdr(2, 'i8', (5,), a=3)                   # 2^64 - data + 3: wraps into the buffer
    p.dladdr(2, 'f64', (2, 2), strides=[-2, 1], a=1)
    p.dladdr(3, 'bool', (3,), a=5)                 # data 2^63 + 384, byte_offset PTRDIFF_MAX
    p.dladdr(4, 'i16', (0,), a=2)                  # data 2^64 - 256 + 260: wraps (empty too)
    p.dladdr(5, 'u8', (0,), a=0)                   # NULL + 1, no elements
    p.dladdr(5, 'f32', (3,), a=2, b=1, versioned=True)  # NULL + 4096 with elements
    p.dladdr(6, 'u8', (4,), a=0, b=1)              # ends 1 byte past 2^64 - 1
    p.dladdr(6, 'f64', (3, 2), a=4, b=2)
    p.dladdr(7, 'i8', (1,), a=0, b=0)              # starts below address 0 (stride -1)
    p.dladdr(7, 'i32', (1, 2), strides=[0, 3], a=7, b=2, versioned=True)
    out['seed-bug-dlpack-offset-wrap'] = p

    p = Prog()  # empty tensors whose dense strides pass int64
    p.empty_huge([0, 1 << 62, 6], F32, 0,
                 [(0, 0), (1, F64), (2, 0), (3, I8)])      # clone, to, contiguous, copy_into
    p.empty_huge([1 << 62, 0, 1 << 40, 3], U8, 1,
                 [(0, 2), (2, 1), (4, 1), (5, 0)])         # channels_last, transposed copy, reshape
    p.empty_huge([6, 1 << 32, 1 << 31, 1 << 40, 0], I64, 4,
                 [(0, 3), (2, 2), (1, BF16), (4, 2)])      # channels_last_3d
    p.empty_huge([3, 1 << 62, 0, 6], BOOL, 3, [(0, 1), (4, 0), (3, F16), (2, 0)],
                 strides=[2**63 - 1, -1, 1 << 62, 0])      # any strides: no element reached
    p.empty_huge([0, 1 << 62, 1 << 40], F16, 2, [(3, F32), (0, 0)])
    p.empty_huge([2**63 - 1, 3, 0], I32, 1, [(4, 0), (4, 3), (1, U8)])  # transposed: [0, 3, 2^63-1]
    out['seed-bug-empty-huge-strides'] = p

    p = Prog()  # sm_memory_stats with struct_size ending inside a field
    p.zeros([3])
    p.stats(1, 1, 0)        # 17: 1 byte into reserved_bytes
    p.stats(1, 2, 6)        # 31
    p.stats(1, 0, 2)        # 11: inside allocated_bytes, too small
    p.stats(1, 11, 3)       # 100
    p.stats(1, 19, 0)       # 161: 1 byte into the last reserved field
    p.stats(0, 15)          # 15: too small
    p.stats(0, 16)          # 16: the first field exactly
    p.stats(0, 4)           # 4
    p.stats(2, 0)           # sizeof
    p.stats(2, 3)           # 0xFFFFFFFF
    p.stats(3)              # NULL
    out['seed-bug-stats-mid-field'] = p

    p = Prog()  # index_select through expanded (stride-0) indices
    p.expidx(3, 0, vb=1, src_shape=[0, 3], dim=1)            # empty result; 2^27 when enabled
    p.expidx(4, 2, vb=0, src_shape=[3, 2], dim=0)            # out of range; 2^40 when enabled
    p.expidx(2, 1, vb=0, i64=False, src_shape=[3, 2], dim=0)  # 4096 rows of row 2
    p.expidx(1, 0, vb=1, src_shape=[2, 3], src_dtype=I16, dim=-1)
    p.expidx(0, 3, vb=0, src_shape=[2], dim=0)                # before the start
    p.expidx(4, 4, vb=1, i64=True, src_shape=[0, 2, 2], dim=1)  # INT64_MIN, empty result
    p.expidx(2, 0, idx0d=True, src_shape=[], dim=0)           # a 0-d source
    p.create(3, [], F64, n=5)                                 # 4: arange (after 4 results)
    p.expidx(2, 1, vb=3, slot=4, dim=0)
    p.expidx(2, 2, slot=4, dim=0)
    p.expidx(4, 3, vb=2, slot=4, dim=-1)                     # before the start; 2^40 when enabled
    out['seed-expanded-index'] = p

    p = Prog()  # tags, history and the snapshot (issue 14)
    p.zeros([3])
    p.history(3)                # a ring of 64
    p.tag_push(0)
    p.tag_push(3)
    p.zeros([8, 8], F64)        # tagged encoder/quote"back\slash
    p.tag_push(5)
    p.create(2, [4, 4], U8, 7)  # tagged with an emoji path
    p.snapshot()
    p.tag_pop()
    p.tag_push(4)
    p.zeros([8, 8, 8])
    p.release(0)
    p.snapshot()
    for i in range(10):
        p.tag_push_bad(i)       # refused, nothing pushed
    p.tag_burst(128)
    p.tag_burst(125)            # 256 deep
    p.tag_push(6)               # the 257th: refused
    p.zeros([2])                # under the 256-name path
    p.snapshot()
    p.tag_pop(True)             # all of them, and one more: refused
    p.history(6)                # -1: refused, the ring of 64 stays
    p.history(8)                # 2^24 + 1: refused
    p.history(7)
    p.history(9)
    p.snapshot()
    p.history(1)                # a fresh ring of 1
    p.zeros([5])
    p.fault(1)
    p.zeros([6])                # injected failure: an oom event
    p.snapshot()
    p.history(0)                # off
    p.snapshot()
    p.tag_pop()                 # empty: refused
    out['seed-tags-history-snapshot'] = p

    # The wide dtypes (op WIDE): uint16/32/64 and complex64/128 made every
    # way, converted both ways, viewed, written in place, re-viewed from
    # storages at their alignments, exported.
    p = Prog()
    p.wide_create(1, [2, 3], U16)                           # 0: zeros
    p.wide_create(2, [3], U32, value=300)                   # 1: full
    p.wide_create(2, [2], U16, value=-1)                    # refused: no uint16
    p.wide_create(2, [2], C64, value=1e300)                 # refused: past float's range
    p.wide_create(2, [2, 2], C64, value='inf')              # 2
    p.wide_create(3, [], U64, n=4, start=7, step=1e10)      # 3: arange
    p.wide_create(3, [], U16, n=3, start=0, step=65504)     # refused: 131008 is no uint16
    p.wide_create(3, [], C128, n=8, start=-0.0, step=2.5)   # 4
    p.wide_create(3, [], C64, n=3, start=1e300, step=-1e10)  # 5: overflows to inf, as float aranges do
    p.wide_create(4, [2, 2], C128, fill=3,
                  data=struct.pack('<4d', 1.5, -2.0, float('nan'), -0.0))  # 6
    p.wide_create(4, [3], U64, data=bytes([0xFF] * 8) + struct.pack('<Q', 1 << 63) + bytes(range(8)))  # 7
    p.wide_create(0, [0, 3], C128)                          # 8: empty
    p.wide_create(2, [1], U64, value=1e10)                  # 9
    p.create(4, [4], F64, data=struct.pack('<4d', float('nan'), -1e10, 1e300, -0.5))  # 10
    p.wide_to(6, C64, F16)                                  # 11, 12
    p.wide_to(7, C128, U64)                                 # 13, 14
    p.wide_to(10, U64, C64)                                 # 15, 16: saturation, wrap-around, NaN
    p.wide_to(10, U16, I8)                                  # 17, 18
    p.wide_to(4, C128, C128)                                # 19, 20: the same dtype, no copy
    p.wide_to(3, U32, BF16)                                 # 21, 22
    p.wide_copy_into(10, C64, U32, flip=True)               # 23 (a full pool from here on)
    p.wide_copy_into(6, U16, BOOL, flip_back=True)
    p.wide_copy_into(7, C128, U64, flip=True, flip_back=True)
    p.wide_copy_into(0, U64, C128)
    p.meta(6, 7)
    p.meta(4, 2)
    out['seed-wide-create-convert'] = p

    p = Prog()
    p.wide_create(3, [], C128, n=6, start=1, step=2.5)      # 0
    p.view(0, [2, 3])                                       # 1
    p.transpose(1, 0, 1)                                    # 2
    p.slice(2, 0, -1, SLICE_NONE, -2)                       # 3: a negative step
    p.wide_scalar_op(C128, 3, ADD, 2.5)                     # through the strided view
    p.wide_scalar_op(C128, 2, NEG)
    p.wide_scalar_op(C128, 0, SUB, -3)
    p.wide_scalar_op(C128, 0, MUL, -3)
    p.wide_scalar_op(C128, 1, DIV, 7)
    p.wide_scalar_op(C128, 1, SQRT)
    p.wide_scalar_op(C128, 0, EXP)
    p.wide_scalar_op(C128, 0, CLAMP, 0, 1)                  # refused: no order
    p.wide_scalar_op(C128, 0, RELU)                         # refused
    p.wide_scalar_op(C128, 0, ABS)                          # refused: a real result
    p.wide_create(3, [], U32, n=8, start=0, step=7)         # 4
    p.select(4, 0, 2)                                       # 5: 0-d
    p.expand(5, [3])                                        # 6: stride 0
    p.wide_scalar_op(U32, 2, FILL, 1)                       # refused: overlapping elements
    p.wide_scalar_op(U32, 0, SUB, 300)                      # wraps
    p.wide_scalar_op(U32, 0, MUL, -129)
    p.wide_scalar_op(U32, 0, NEG)
    p.wide_scalar_op(U32, 0, DIV, 7)                        # refused: fractions
    p.wide_scalar_op(U32, 0, ADD, 2.5)                      # refused: not whole
    p.wide_scalar_op(U32, 0, FILL, -1)                      # refused: no uint32
    p.wide_scalar_op(U32, 0, CLAMP, 7, 300)
    p.wide_scalar_op(U32, 0, CLAMP, 'nan', 1e10)            # refused: 1e10 is no uint32
    p.wide_scalar_op(U32, 1, ABS)
    p.wide_scalar_op(U32, 1, RELU)
    p.wide_create(2, [2, 3], U64, value=7)                  # 7
    p.wide_scalar_op(U64, 0, ADD, 1e10)
    p.wide_scalar_op(U64, 0, MUL, -1)                       # wraps
    p.wide_scalar_op(U64, 0, CLAMP, 'nan', 65504)
    p.wide_create(2, [3], C64, value=0.5)                   # 8
    p.wide_scalar_op(C64, 0, ADD, 1e-10)
    p.wide_scalar_op(C64, 0, SUB, 65504)
    p.wide_scalar_op(C64, 0, FILL, 1e300)                   # refused: past float's range
    p.create(3, [], F32, n=3)                               # 9: f32 0, 1, 2
    p.wide_tensor_op(U32, 0, 9, ADD)                        # refused: a float into an integer tensor
    p.wide_tensor_op(C64, 0, 9, ADD, alpha=2.5)
    p.wide_tensor_op(C64, 0, 0, FILL)                       # refused: [6] into [3]
    p.wide_tensor_op(U64, 0, 7, SUB, alpha=-1)              # itself
    p.wide_tensor_op(U64, 0, 9, FILL)                       # broadcast, converted
    p.wide_tensor_op(U64, 0, 7, SUB, alpha=1e10)            # itself, a large alpha
    p.wide_tensor_op(C128, 0, 4, MUL)                       # refused: [6] and [8]
    p.wide_tensor_op(C64, 0, 9, DIV)
    p.wide_tensor_op(U16, 0, 0, ADD)                        # none is uint16: the first wide tensor, itself
    p.copy(2, 2)                                            # 10: clone of the transposed view
    p.copy(1, 3)                                            # 11: contiguous
    p.copy(3, 1, dtype=F16)                                 # 12
    p.copy(0, 2, shape=[6])                                 # 13: reshape (a copy)
    p.unfold(4, 0, 3, 2)                                    # 14: overlapping windows
    p.wide_scalar_op(U32, 3, ADD, 1)                        # refused: overlapping elements
    p.copy_into(8, 9)                                       # c64 <- f32
    p.meta(3, 1)
    p.meta(7, 8)
    out['seed-wide-views-writes'] = p

    p = Prog()
    p.wide_create(3, [], C128, n=4, start=1, step=1)        # 0
    p.tensor_storage(0)                                     # storage 0: 64 bytes
    p.wide_review(0, C128, [2], 1)                          # 1
    p.wide_review(0, C64, [3], 1)                           # 2: the parts of 1.5 elements on
    p.wide_review(0, U64, [2, 2], 0, strides=[1, 2])        # 3
    p.wide_review(0, U16, [3], 8)                           # 4
    p.wide_review(0, C128, [3], 2)                          # refused: past the end
    p.review([([8], None, 0, U8)], src=0, mis=4, dt1=U8, n=24)  # 5 and 6: bytes at 16k + 4, storage 1
    p.wide_review(1, C64, [2], 0)                           # 7: 4-byte parts fit
    p.wide_review(1, U32, [3], 1)                           # 8
    p.wide_review(1, C128, [1], 0)                          # refused: 8-byte parts
    p.wide_review(1, U64, [0], 0)                           # refused, empty too
    p.hostile_import([3], 5, 4, byte_offset=8)              # 9: complex128 at 16k + 8
    p.tensor_storage(9)                                     # storage 2
    p.wide_review(2, C128, [2], 1)                          # 10: complex128 needs 8, not 16
    p.wide_review(2, U64, [2], 3)                           # 11
    p.export(0, 1)
    p.export(4, 0)
    p.import_(0)                                            # 12
    p.import_(0)                                            # 13
    p.scalar_op(12, ADD, 1)
    p.meta(13, 12)
    p.wide_to(9, U16, C64)
    out['seed-wide-storage-dlpack'] = p
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
    os.makedirs(outdir, exist_ok=True)
    for name, p in seeds().items():
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(bytes(p.b))
    rng = random.Random(20240607)  # a few random programs, fixed seed
    for i in range(8):
        with open(os.path.join(outdir, 'seed-random-%d' % i), 'wb') as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(64, 512))))
    print('wrote %d seeds to %s' % (len(seeds()) + 8, outdir))


if __name__ == '__main__':
    main()
