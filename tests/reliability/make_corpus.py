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
import sys

# Ops (the op byte modulo 17).
CREATE, FROM_BLOB, VIEW_A, VIEW_B, VIEW_C, COPY, COPY_INTO, WRITE, WRITE2, RELEASE, RETAIN, \
    STORAGE, STACK, META, FAULT, DLPACK, MISC = range(17)

F32, F64, I32, I64, F16, BF16, U8, BOOL = 8, 9, 4, 5, 6, 7, 1, 0
HOSTILE_SIZE = [-1, -2, 0, 1, 65536, 1 << 20, 1 << 31, 1 << 32, 1 << 40, 1 << 62,
                2**63 - 1, -2**63, 3 << 40, 100000]
HOSTILE_STRIDE = [0, -1, 2**63 - 1, -2**63, 1 << 40, -(1 << 40), 1 << 62, 1 << 20]
HOSTILE_INDEX = [-2**63, 2**63 - 1, -2**63 + 1, 1 << 40, -(1 << 40), 1000, -1000]
SLICE_NONE = -2**63
SCALARS = [0, 1, -1, 2.5, -3, 1e10, -1e10, 0.5, 65504, 1e-10, 300, -129, 7, 1e300, -0.0,
           'nan', 'inf', '-inf']
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
