#!/usr/bin/python3
"""Differential test against PyTorch: seeded random chains of view ops,
copies, in-place ops, copy_into, index_select and DLPack exchanges run through
stridemem (the Python binding) and through torch, compared after every step.

Model. Every storage ("base") exists twice: a stridemem 1-D tensor over the
whole storage and a torch 1-D tensor over a torch storage holding the same
elements. Every chain tensor is a pair (stridemem tensor, torch tensor) made
by doing the same operation on both sides. After each step we compare, for
the pair and for every base:
  - accept / refuse: both succeed or both refuse;
  - shape, dtype, storage offset, and the strides of EVERY dim, size-0 and
    size-1 dims included (unlike test_differential.py against NumPy: this is
    what PyTorch specifies and NumPy does not);
  - is_contiguous in the contiguous, channels_last and channels_last_3d
    formats;
  - values (bit-exact, NaNs equal to NaNs; add/sub/mul/div/sqrt/exp on
    floating tensors within a few ulps of the larger result or, for add and
    sub, of the operands' scale |x| + |alpha*y| (a cancelling sum carries its
    operands' rounding), after which torch's copy takes stridemem's values
    so chains do not drift; scalar ops on float16/bfloat16 are compared
    with exact models of both sides, [torchdiff:single-rounding]);
  - storage sharing: stridemem's same_storage against "torch's result is a
    view of the same base" (`_base`), and the copied flag of reshape,
    contiguous and to against the same;
  - version counters: stridemem's version_counter against torch's `_version`.

Intentional differences. docs/PYTORCH_DIFFERENCES.md lists every deliberate
difference from PyTorch, each with an id `[torchdiff:NAME]`. This test reads
that list, and for each id runs a fixed case asserting that stridemem behaves
as the doc says AND that torch behaves differently as the doc says (a stale
entry fails). An id in the doc without a check here, or a check without an
entry, fails too. A disagreement met by the random chains is allowed only
when one listed entry explains it (the explanation is checked: e.g. an
overlap refusal must really be an overlap); any other disagreement fails
the test and is summarised at the end by kind with its first reproduction.

Torch releases. The doc describes torch 1.13 (CPU); the test has been run
with torch 1.13 and 2.11. A claim about torch that holds in some releases
only says which (Releases: "torch <= 1.13"); a claim whose releases leave
out the installed torch is replaced by what that torch does instead, which
must be stridemem's behaviour (or another documented one): the claim is
then printed as "does not apply to torch X.Y" (neither a pass nor a
failure). For a release between two that behave differently, either is
accepted and reported. The chains excuse a disagreement only by a claim
that may hold for the installed torch: where torch now agrees, its results
are compared as any other.

Devices. STRIDEMEM_TEST_DEVICE=cuda (or cuda:N) runs, after the CPU part,
the creation checks and the same chains again with stridemem tensors on
cuda:N and torch's on "cuda" (values are brought to the host to compare),
plus copies between the CPU and the GPU (to(device), copy_ from the other
device). Without a usable GPU (a CPU-only build, no device, torch without
CUDA) it says "no usable GPU: <why>", counts those chains as skipped and
exits 77 (1 if the CPU part failed). What either side does not support on
CUDA ends the chain as skipped and is listed at the end, by op.

Environment: STRIDEMEM_TORCH_CHAINS (default 5000, about a minute), STRIDEMEM_TORCH_SEED
(first seed, default 5000), STRIDEMEM_TEST_DEVICE (see above). Needs torch: a missing
torch is a failure.
"""

import os
import random
import re
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import Results, import_stridemem, stridemem_gpu_unusable  # noqa: E402

sm = import_stridemem()

try:
    import torch
    import torch.utils.dlpack
except Exception as e:  # CI installs python3-torch: missing torch is a failure
    print("FAIL: cannot import torch (%s): this test compares stridemem with PyTorch; "
          "install python3-torch (scripts/setup-deps.sh does)" % e)
    print("test_torch_differential: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)

warnings.simplefilter("ignore")
np.seterr(all="ignore")
torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "PYTORCH_DIFFERENCES.md")

INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
TORCH_DT = {"bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8,
            "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
            "float16": torch.float16, "bfloat16": torch.bfloat16,
            "float32": torch.float32, "float64": torch.float64,
            "complex64": torch.complex64, "complex128": torch.complex128}


def _cannot_create(dt):
    """Why stridemem cannot make a tensor of dt, or None."""
    try:
        sm.zeros(1, dtype=dt).close()
        return None
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)


# Every dtype torch 1.13 shares with us (uint16/32/64 are NumPy-only, not
# torch 1.13's). One the library cannot create fails the run (main), never
# leaves the comparison quietly.
DTYPES = ("bool",) + INTS + FLOATS + COMPLEX
EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
       "float64": 2.0 ** -52, "complex64": 2.0 ** -23, "complex128": 2.0 ** -52}
ITEM = {d: sm.dtype_size(d) for d in DTYPES}
# torch's refusals; OverflowError: torch 2 refuses a Python int beyond int64
# that way ("int too big to convert"; 1.13 said RuntimeError "Overflow when
# unpacking long"): a value the dtype cannot hold, refused as ours are.
TORCH_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, OverflowError)
FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
           "channels_last_3d": torch.channels_last_3d, "preserve": torch.preserve_format}
TRICKY = [1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40, 0.1, 1.0 / 3.0, 65519.999]



# ----------------------------------------------------------------------------
# torch releases
# ----------------------------------------------------------------------------

def torch_release(text):
    """(major, minor) of a torch version string ("1.13.0a0", "2.11.0+cu130")."""
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


TORCH_V = torch_release(torch.__version__)
TORCH_V_TEXT = "%d.%d" % TORCH_V
# The releases this test has been run with: what each claim about torch says
# was seen in them; nobody has looked at the releases in between.
RUN_WITH = ((1, 13), (2, 11))


class Releases(object):
    """The torch releases a claim about torch describes: an old behaviour,
    true up to `upto` and gone in `gone`, or a new one, absent in `before`
    and true from `since` on. Between the two (releases nobody ran) it is
    unknown: state() None, and either behaviour is accepted and reported.
    A gone or before of None: no release run on that side shows the other
    behaviour (every release after upto, or before since, is unknown)."""

    def __init__(self, upto=None, gone=None, before=None, since=None):
        self.upto, self.gone, self.before, self.since = upto, gone, before, since

    def state(self, v=None):
        """True: the claim holds for torch v (default: the installed one);
        False: it does not (torch does something else); None: unknown."""
        v = TORCH_V if v is None else v
        if self.upto is not None:
            if v <= self.upto:
                return True
            return False if self.gone is not None and v >= self.gone else None
        if v >= self.since:
            return True
        return False if self.before is not None and v <= self.before else None

    def may_hold(self, v=None):
        return self.state(v) is not False

    def __str__(self):
        fmt = "%d.%d"
        if self.upto is not None:
            return "torch <= %s%s" % (fmt % self.upto, " (not %s)" % (fmt % self.gone) if self.gone else "")
        return "torch >= %s%s" % (fmt % self.since, " (not %s)" % (fmt % self.before) if self.before else "")


# Torch 1.13's behaviour, gone by 2.11; 2.11's, new since 1.13; one both
# show; and 2.11's where 1.13 was never run (its CUDA side).
UPTO_1_13 = Releases(upto=(1, 13), gone=(2, 11))
SINCE_2_11 = Releases(before=(1, 13), since=(2, 11))
UPTO_2_11 = Releases(upto=(2, 11))
SEEN_IN_2_11 = Releases(since=(2, 11))

# The claims about torch that hold in some releases only. Each is used by
# its doc check and by the chains' explanation of it (one rule, one place).
TH_REFUSES_BOOL_DLPACK = UPTO_1_13       # [torchdiff:dlpack-bool]
TH_COMPLEX_BOOL_REAL_ONLY = UPTO_1_13    # [torchdiff:complex-to-bool]
TH_FILL_TENSOR_REFUSES = UPTO_1_13       # [torchdiff:fill-tensor-converts]
# [torchdiff:single-rounding]: the scalar of add_/sub_/mul_/div_ on a
# float16/bfloat16 tensor made an element of the dtype first
TH_SCALAR_TO_DTYPE = UPTO_1_13
TH_ARANGE_STEP_ZERO_REFUSED = UPTO_1_13  # [torchdiff:arange-integer]
TH_ARANGE_STEP_ZERO_REPEATS = SINCE_2_11  # [torchdiff:arange-integer]
TH_NARROW_EMPTY_TAKES_MINUS_ONE = UPTO_1_13  # [torchdiff:narrow-start-range]
TH_ABS_BOOL_REFUSED = UPTO_2_11           # [torchdiff:abs-bool]
# [torchdiff:float16-scalar-range]: fill_ of a value past float16's range
# writes inf (a one-element tensor on the CPU, 1.13 refuses it); the CUDA
# clamp_ bounds and add_/sub_ alpha are taken in float32 (1.13 not run there)
TH_F16_FILL_TAKES_OVERFLOW = SINCE_2_11
TH_F16_CUDA_TAKES_FLOAT32_SCALARS = SEEN_IN_2_11
# [torchdiff:int64-scalar-2-63]: add_/sub_/mul_ take the Python int 2**63
# on an int64 tensor and wrap (1.13 refuses the int)
TH_INT64_TAKES_2_63 = SINCE_2_11
# [torchdiff:complex-special-values] on the CPU: (1+2j)/0 and exp(inf + nan j)
TH_CPU_COMPLEX_DIV0_NAN = UPTO_1_13
TH_CPU_COMPLEX_EXP_NAN = UPTO_1_13


class ForTorch(object):
    """A claim about torch that holds in `releases` only: what/ok the claim
    and its outcome; other/other_ok what torch does instead in the other
    releases, which must be stridemem's behaviour or another documented
    difference's (never a third behaviour)."""

    def __init__(self, what, ok, releases, other, other_ok):
        self.what, self.ok, self.releases = what, bool(ok), releases
        self.other, self.other_ok = other, bool(other_ok)


NOT_APPLICABLE = []   # "[torchdiff:ID] claim" that does not apply to this torch

TRACE = bool(os.environ.get("STRIDEMEM_TORCH_TRACE"))  # each chain's seed to stderr
OP_COUNTS = {}        # op -> times run
EXPLAINED = {}        # doc id -> disagreements it explained in the chains
UNEXPLAINED = {}      # signature -> [count, first reproduction]
UNSUPPORTED = {}      # "op: who does not support it on the GPU" -> [count, first reproduction]
DEVICE_NOTES = {}     # what the CUDA chains do not run on torch, and why -> count


class Fail(Exception):
    pass


class Disagree(Fail):
    def __init__(self, signature, text):
        Fail.__init__(self, text)
        self.signature = signature


class Unsupported(Disagree):
    """One side refused on the GPU what it does on the CPU (torch's "not
    implemented for", stridemem's SM_ERR_UNSUPPORTED or SM_ERR_DEVICE): the
    chain stops, counted as skipped, and the op is listed at the end."""


# ----------------------------------------------------------------------------
# values
# ----------------------------------------------------------------------------

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}


def np_bits(a, dt):
    """An exchange array from stridemem (bf16 as uint16) -> unsigned bits."""
    a = np.ascontiguousarray(a).reshape(np.shape(a))  # keeps 0-d arrays 0-d
    if dt == "bool":
        return a.view(np.uint8)
    if dt in COMPLEX:  # two words an element (a 0-d element: a 2-word vector)
        return (a.reshape(1) if a.ndim == 0 else a).view(UINT[ITEM[dt] // 2])
    return a.view(UINT[ITEM[dt]])


def th_bits(x, dt):
    x = x.detach().contiguous().cpu()  # a CUDA tensor is compared on the host
    if dt == "bool":
        return x.numpy().view(np.uint8)
    if dt == "bfloat16":
        return x.view(torch.int16).numpy().view(np.uint16)
    if dt in COMPLEX:
        n = x.numpy()
        return (n.reshape(1) if n.ndim == 0 else n).view(UINT[ITEM[dt] // 2])
    return x.numpy().view(UINT[ITEM[dt]])


def bits_to_f64(bits, dt):
    if dt == "float16":
        return bits.view(np.float16).astype(np.float64)
    if dt == "bfloat16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if dt in ("float32", "complex64"):
        return bits.view(np.float32).astype(np.float64)
    if dt in ("float64", "complex128"):
        return bits.view(np.float64)
    if dt in INTS:
        return bits.view(np.dtype(dt)).astype(np.float64)  # signed ones as signed
    return bits.astype(np.float64)


def magnitudes(bits, dt):
    """|value| of each element (complex: |re| + |im|) from its bits."""
    a = np.abs(bits_to_f64(np.asarray(bits).ravel(), dt))
    return a.reshape(-1, 2).sum(axis=1) if dt in COMPLEX else a


def same_bits(g, w, dt):
    """Bit equality with every NaN equal to every NaN (payloads and signs of
    NaNs are not specified by either library)."""
    if g.shape != w.shape:
        return False
    if dt not in FLOATS and dt not in COMPLEX:
        return bool(np.array_equal(g, w))
    gn, wn = np.isnan(bits_to_f64(g, dt)), np.isnan(bits_to_f64(w, dt))
    return bool(np.array_equal(gn, wn) and np.array_equal(g[~gn], w[~wn]))


def close_bits(g, w, dt, ulps=4):
    if dt not in FLOATS and dt not in COMPLEX:
        return bool(np.array_equal(g, w))
    a, b = bits_to_f64(g, dt), bits_to_f64(w, dt)
    an, bn = np.isnan(a), np.isnan(b)
    if not np.array_equal(an, bn):
        return False
    a, b = a[~an], b[~bn]
    eq = a == b
    tol = ulps * EPS[dt] * np.maximum(np.abs(a), np.abs(b)) + 1e-300
    with np.errstate(all="ignore"):
        ok = eq | (np.abs(a - b) <= tol)
    return bool(np.all(ok))


def bf16_round(x):
    """float64 -> bfloat16 bits, rounded once from the exact value."""
    x = np.asarray(x, dtype=np.float64)
    m, e = np.frexp(x)
    r = np.where(e >= -125, np.ldexp(np.rint(np.ldexp(m, 8)), e - 8),
                 np.ldexp(np.rint(np.ldexp(x, 133)), -133))
    r = np.where(np.isfinite(x), r, x)
    return (r.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def single_rounding(x64, dt):
    """Bits of float64 values rounded once to f16/bf16."""
    if dt == "float16":
        return np.asarray(x64, dtype=np.float64).astype(np.float16).view(np.uint16)
    return bf16_round(x64)


def rand_values(g, dt, n):
    if dt == "bool":
        return g.random(n) < 0.5
    if dt in INTS:
        info = np.iinfo(dt)
        lo, hi = max(info.min, -2 ** 40), min(info.max, 2 ** 40)
        v = g.integers(lo, hi, n, dtype=np.int64, endpoint=True)
        small = g.random(n) < 0.5
        v[small] = np.clip(g.integers(-9, 9, int(small.sum())), info.min, info.max)
        return v.astype(dt)
    x = g.standard_normal(n) * float(g.choice([1.0, 10.0, 100.0]))
    special = g.random(n) < 0.04
    if special.any():
        x[special] = g.choice(np.array([np.inf, -np.inf, np.nan, -0.0, 0.0] + TRICKY),
                              int(special.sum()))
    if dt == "bfloat16":
        return bf16_round(x)
    if dt in COMPLEX:
        return (x + 1j * g.standard_normal(n)).astype(dt)
    return x.astype(dt)


def to_torch_1d(vals, dt, device="cpu"):
    """A fresh 1-D torch tensor on device holding the exchange array vals."""
    if dt == "bfloat16":
        t = torch.from_numpy(np.array(vals, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(np.array(vals, dtype=sm.numpy_dtype(dt)))
    return t if str(device) == "cpu" else t.to(device)


def th_device(sm_device):
    """torch's device for a stridemem device: "cpu", or "cuda:N"."""
    d = sm.Device(sm_device)
    return "cpu" if d.type == sm.DEVICE_CPU else "cuda:%d" % d[1]


def th_storage_bytes(x):
    if hasattr(x, "untyped_storage"):
        return x.untyped_storage().nbytes()
    return x.storage().size() * x.element_size()


def th_storage_ptr(x):
    """The address of the storage under a torch tensor (untyped_storage in
    torch 2; 1.13 has only the typed one)."""
    if hasattr(x, "untyped_storage"):
        return x.untyped_storage().data_ptr()
    return x.storage().data_ptr()


def offsets(shape, strides, off):
    o = np.array([off], dtype=np.int64)
    for n, s in zip(shape, strides):
        o = np.add.outer(o, np.arange(n, dtype=np.int64) * s).ravel()
    return o


def self_overlaps(t):
    o = offsets(t.shape, t.strides, t.storage_offset)
    return len(np.unique(o)) != len(o)


def partial_overlap(a, b):
    """b (read) and a (written) in the same storage touch common elements and
    are not the same layout."""
    if not a.same_storage(b) or a.numel == 0 or b.numel == 0:
        return False
    if (a.shape, a.strides, a.storage_offset) == (b.shape, b.strides, b.storage_offset):
        return False
    oa = offsets(a.shape, a.strides, a.storage_offset)
    ob = offsets(b.shape, b.strides, b.storage_offset)
    return bool(np.intersect1d(oa, ob).size)


def same_elements(t, other):
    """other, broadcast to t's shape, addresses exactly t's elements, each
    element of t reading itself (the header: other may be t itself or an
    identical view). A broadcast of one element of a larger t is not."""
    if not t.same_storage(other):
        return False
    try:
        if tuple(np.broadcast_shapes(other.shape, t.shape)) != t.shape:
            return False
    except ValueError:
        return False
    ot = offsets(other.shape, other.strides, other.storage_offset) * ITEM[other.dtype]
    ob = np.broadcast_to(ot.reshape(other.shape), t.shape).ravel()
    return bool(np.array_equal(ob, offsets(t.shape, t.strides, t.storage_offset) * ITEM[t.dtype]))


def dst_offsets(t):
    return offsets(t.shape, t.strides, t.storage_offset)


def f32_bits_to(x32, dt):
    """float32 values rounded once to dt's bits (f16/bf16)."""
    x32 = np.asarray(x32, dtype=np.float32)
    if dt == "float16":
        return x32.astype(np.float16).view(np.uint16)
    return bf16_round(x32.astype(np.float64))


F32_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def scalar_op_models(op, dt, a, pre_bits):
    """[torchdiff:single-rounding] for a scalar op on f16/bf16: (ours, torch's)
    element bits. Ours: the double scalar rounded once to float32, the op in
    float32, the result rounded once to dt (FILL: the double rounded once to
    dt). torch's: the scalar first rounded to dt (through float32), then the
    same."""
    n = pre_bits.size
    s32 = np.float32(a)
    s_dt = bits_to_f64(f32_bits_to([s32], dt), dt).astype(np.float32)[0]
    if op == "fill":
        return single_rounding(np.full(n, a), dt), f32_bits_to(np.full(n, s32), dt)
    x32 = bits_to_f64(pre_bits.ravel(), dt).astype(np.float32)
    with np.errstate(all="ignore"):
        return (f32_bits_to(F32_OPS[op](x32, s32), dt),
                f32_bits_to(F32_OPS[op](x32, np.float32(s_dt)), dt))


def close_scaled(g, w, dt, scale, ulps=4):
    """Floating values within ulps of the larger of the two results and of
    the operands' scale (|x| + |alpha*y| for add/sub: a result that cancels
    carries the rounding error of its operands, not of itself)."""
    a, b = bits_to_f64(g, dt), bits_to_f64(w, dt)
    an, bn = np.isnan(a), np.isnan(b)
    if not np.array_equal(an, bn):
        return False
    keep = ~an
    a, b, scale = a[keep], b[keep], np.asarray(scale, dtype=np.float64)[keep]
    with np.errstate(all="ignore"):
        tol = ulps * EPS[dt] * np.maximum(np.maximum(np.abs(a), np.abs(b)), scale) + 1e-300
        ok = (a == b) | (np.abs(a - b) <= tol)
    return bool(np.all(ok))


def th_fits(dt, v, alpha=False):
    """Whether torch takes v as an element of dt (its checked conversion:
    c10::overflows, the rule fill_, clamp bounds and alpha go through in
    torch 1.13); alpha=True asks add_'s alpha check itself (torch 2.11's
    float16 fill_ takes 1e30 and makes it inf, its alpha check still
    refuses it)."""
    try:
        if alpha:
            x = torch.zeros(1, dtype=TORCH_DT[dt])
            x.add_(torch.zeros(1, dtype=TORCH_DT[dt]), alpha=pyscalar(v, dt))
        else:
            torch.empty((), dtype=TORCH_DT[dt]).fill_(pyscalar(v, dt))
        return True
    except TORCH_ERRORS:
        return False


def wrap_int(v, dt):
    """An integer wrapped into dt as two's complement (torch's casts)."""
    info = np.iinfo(dt)
    span = int(info.max) - int(info.min) + 1
    return (int(v) - int(info.min)) % span + int(info.min)


def pyscalar(v, dt):
    """The Python number torch is given for the double stridemem is given:
    whole numbers as int (torch refuses float alphas on integer tensors)."""
    if v is None:
        return None
    if dt not in FLOATS and dt not in COMPLEX and np.isfinite(v) and v == int(v) \
            and (dt != "bool" or -2.0 ** 63 <= v < 2.0 ** 63):
        # beyond int64 torch refuses the int ("Overflow when unpacking long")
        # as it should; it would take the float 2^63 into int64 (its overflow
        # check compares with INT64_MAX rounded up to 2^63)
        return int(v)
    return v  # bool takes any float: a whole number beyond int64 stays a float


def device_note(text):
    DEVICE_NOTES[text] = DEVICE_NOTES.get(text, 0) + 1


def opname(what):
    """The op of a step's description ("expand([2, 3])" -> "expand"), with the
    dtype for in-place ops."""
    m = re.match(r"[A-Za-z_.]+", what)
    op = m.group(0) if m else what
    d = re.search(r" on ([a-z0-9]+)", what)
    return op + (" on " + d.group(1) if d and op.endswith("_") else "")


def status_name(e):
    return sm.STATUS_NAMES.get(e.status, str(e.status)) if isinstance(e, sm.StrideMemError) else "ok"


def terr(e):
    return "ok" if e is None else "%s(%s)" % (type(e).__name__, str(e).split("\n")[0][:90])


# ----------------------------------------------------------------------------
# Intentional differences: the doc's ids, each with a check
# ----------------------------------------------------------------------------

def doc_ids():
    try:
        text = open(DOC).read()
    except OSError as e:
        return None, str(e)
    return re.findall(r"\[torchdiff:([a-z0-9-]+)\]", text), None


def _sm_raises(fn, status):
    try:
        fn()
    except sm.StrideMemError as e:
        return e.status == status
    return False


def _th_raises(fn):
    return _th_error(fn) is not None


def _th_error(fn):
    """torch's refusal of fn(), or None."""
    try:
        fn()
    except TORCH_ERRORS as e:
        return e
    return None


def _th_value(fn):
    """fn()'s value, or None where torch refuses."""
    try:
        return fn()
    except TORCH_ERRORS:
        return None


def chk_negative_strides():
    a = sm.arange_n(0, 1, 6, "float32").view(2, 3)
    f = a.flip(1)
    s = a.slice(1, None, None, -1)
    ta = torch.arange(6.0).view(2, 3)
    tf = ta.flip(1)
    return [
        ("stridemem flip is a view with stride -1", f.strides == (3, -1) and f.same_storage(a)),
        ("stridemem slice step -1 is a view", s.strides == (3, -1) and s.same_storage(a)),
        ("stridemem as_strided takes a negative stride",
         a.as_strided((3,), (-1,), 2).numpy().tolist() == [2.0, 1.0, 0.0]),
        ("torch flip copies", tf.data_ptr() != ta.data_ptr() and tf.stride() == (3, 1)),
        ("torch refuses a negative slice step", _th_raises(lambda: ta[:, ::-1])),
        ("torch as_strided refuses a negative stride",
         _th_raises(lambda: ta.as_strided((3,), (-1,), 2))),
    ]


def chk_overlap_exact():
    a = sm.arange_n(0, 1, 4, "float32")
    ta = torch.arange(4.0)
    u, tu = a.unfold(0, 2, 1), ta.unfold(0, 2, 1)
    e, te = sm.zeros(1).expand(3), torch.zeros(1).expand(3)
    b, tb = sm.arange_n(0, 1, 6, "float32"), torch.arange(6.0)
    d, td = b.as_strided((2, 2), (3, 1), 0), tb.as_strided((2, 2), (3, 1), 0)
    s, ts = b.as_strided((2, 2), (1, 3), 1), tb.as_strided((2, 2), (1, 3), 1)
    return [
        ("stridemem refuses add_ through overlapping unfold windows",
         _sm_raises(lambda: u.add_(1), sm.ERR_OVERLAP)),
        ("torch writes through them", not _th_raises(lambda: tu.add_(1))),
        ("stridemem refuses fill_ of an expanded tensor",
         _sm_raises(lambda: e.fill_(1), sm.ERR_OVERLAP)),
        ("torch fills it", not _th_raises(lambda: te.fill_(1))),
        ("stridemem refuses copy_ from a partially overlapping, non-dense source",
         _sm_raises(lambda: d.copy_(s), sm.ERR_OVERLAP)),
        ("torch copies it", not _th_raises(lambda: td.copy_(ts))),
    ]


def chk_single_rounding():
    xs = [1 + 2.0 ** -8 + 2.0 ** -40, 1 + 2.0 ** -11 + 2.0 ** -40]
    src = sm.from_numpy(np.array(xs))
    tsrc = torch.tensor(xs, dtype=torch.float64)
    out = []
    for dt, x in (("bfloat16", xs[0]), ("float16", xs[1])):
        got = np_bits(src.to(dtype=dt).numpy(), dt)
        tgot = th_bits(tsrc.to(TORCH_DT[dt]), dt)
        once = single_rounding(np.array(xs), dt)
        twice = th_bits(tsrc.to(torch.float32).to(TORCH_DT[dt]), dt)
        i = 0 if dt == "bfloat16" else 1
        out.append(("stridemem f64->%s rounds once" % dt, got[i] == once[i]))
        out.append(("torch f64->%s rounds through f32" % dt, tgot[i] == twice[i] and twice[i] != once[i]))
    # scalars of in-place ops: bfloat16 FILL rounds the double once; float16
    # DIV rounds the double to float32 once (65519.999 -> 65520) where torch
    # first makes it a float16 (inf: every quotient 0)
    x = xs[0]
    a = sm.zeros(2, dtype="bfloat16")
    a.fill_(x)
    ta = torch.zeros(2, dtype=torch.bfloat16)
    ta.fill_(x)
    out.append(("stridemem bfloat16 fill_(1 + 2^-8 + 2^-40) is 1.0078125",
                np_bits(a.numpy(), "bfloat16").tolist() == [0x3F81] * 2))
    out.append(("torch's is 1.0", th_bits(ta, "bfloat16").tolist() == [0x3F80] * 2))
    h = sm.from_numpy(np.array([1.0, -3.0], dtype=np.float16))
    h.div_(65519.999)
    th = torch.tensor([1.0, -3.0], dtype=torch.float16)
    th.div_(65519.999)
    want = (np.array([1.0, -3.0], dtype=np.float32) / np.float32(65520.0)).astype(np.float16)
    out.append(("stridemem float16 div_(65519.999) divides by 65520 in float32",
                np_bits(h.numpy(), "float16").tolist() == want.view(np.uint16).tolist()))
    out.append(ForTorch("torch's divides by float16(65519.999) = inf", th.tolist() == [0.0, -0.0],
                        TH_SCALAR_TO_DTYPE, "torch divides by 65520 in float32, as stridemem",
                        th_bits(th, "float16").tolist() == want.view(np.uint16).tolist()))
    # tensor operands: torch rounds other (and float16 alpha*other) first
    inf = float("inf")
    h = sm.from_numpy(np.array([-inf, inf], dtype=np.float16))
    h.add_(sm.from_numpy(np.array([2 ** 40, 0], dtype=np.int64)))
    h.sub_(sm.from_numpy(np.array([0.0, 65504.0], dtype=np.float16)), 2.0)
    th = torch.tensor([-inf, inf], dtype=torch.float16)
    th.add_(torch.tensor([2 ** 40, 0]))
    th.sub_(torch.tensor([0.0, 65504.0], dtype=torch.float16), alpha=2.0)
    out.append(("stridemem float16: -inf + int64 2^40 is -inf, inf - 2*65504 is inf",
                h.numpy().tolist() == [-inf, inf]))
    out.append(("torch's are NaN (2^40 and 2*65504 become float16 inf first)",
                bool(torch.isnan(th).all())))
    return out


def chk_index_select_negative():
    a = sm.arange_n(0, 1, 3, "int64")
    r = a.index_select(0, [-1, 0])
    ta = torch.arange(3)
    return [("stridemem wraps a negative index once", r.numpy().tolist() == [2, 0]),
            ("stridemem refuses an index below -size",
             _sm_raises(lambda: a.index_select(0, [-4]), sm.ERR_OUT_OF_BOUNDS)),
            ("torch refuses negative indices",
             _th_raises(lambda: ta.index_select(0, torch.tensor([-1, 0]))))]


def chk_fill_tensor_broadcast():
    a = sm.zeros(2, 3)
    o = sm.from_numpy(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    ok = True
    try:
        a.fill_(o)
    except sm.StrideMemError:
        ok = False
    ta = torch.zeros(2, 3)
    return [("stridemem FILL with a 1-D tensor broadcasts it",
             ok and a.numpy().tolist() == [[1, 2, 3], [1, 2, 3]]),
            ("torch fill_ takes only a 0-d tensor",
             _th_raises(lambda: ta.fill_(torch.tensor([1.0, 2.0, 3.0]))))]


def chk_version_per_storage():
    a = sm.zeros(3)
    b = sm.from_dlpack(a)  # our own export coming back: a view of a's storage
    b.add_(1)
    st = a.storage()
    c = st.tensor((3,), (1,), 0, "float32")
    c.add_(1)
    st.close()
    ta = torch.zeros(3)
    tb = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(ta))
    tb.add_(1)
    return [("stridemem: a DLPack re-import and a storage view share the counter",
             a.version == 2 and b.version == 2 and c.version == 2),
            ("torch: a DLPack re-import counts its own writes only",
             ta._version == 0 and tb._version == 1 and tb.data_ptr() == ta.data_ptr())]


def chk_dlpack_bool():
    a = sm.from_numpy(np.array([True, False]))
    ok = True
    try:
        cap = a.__dlpack__()
        del cap
        sm.dlpack_collect()
    except sm.StrideMemError:
        ok = False
    exp = imp = None
    try:  # torch's bool export, through our import
        exp = sm.from_dlpack(torch.utils.dlpack.to_dlpack(torch.tensor([True, False])))
    except TORCH_ERRORS:
        pass
    try:  # our bool export, through torch's import
        imp = torch.utils.dlpack.from_dlpack(a)
    except TORCH_ERRORS:
        pass
    return [("stridemem exports bool (DLPack kDLBool)", ok),
            ForTorch("torch refuses to export bool", exp is None, TH_REFUSES_BOOL_DLPACK,
                     "torch exports bool and stridemem imports it, values kept",
                     exp is not None and exp.dtype == "bool" and exp.numpy().tolist() == [True, False]),
            ForTorch("torch refuses to import our bool", imp is None, TH_REFUSES_BOOL_DLPACK,
                     "torch imports our bool, zero copy, values kept",
                     imp is not None and imp.dtype == torch.bool and imp.tolist() == [True, False]
                     and imp.data_ptr() == a.data_ptr)]


def chk_clamp_nan_bound():
    a = sm.from_numpy(np.array([-2.0, 0.5, 3.0]))
    a.clamp_(float("nan"), 1.0)
    ta = torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64)
    ta.clamp_(float("nan"), 1.0)
    v = a.version
    a.clamp_(None, None)  # both NaN: nothing to do
    return [("stridemem: a NaN bound is no bound", a.numpy().tolist() == [-2.0, 0.5, 1.0]),
            ("stridemem: no bound at all is a no-op", a.numpy().tolist() == [-2.0, 0.5, 1.0]
             and a.version == v + 1),
            ("torch: a NaN bound makes every element NaN", bool(torch.isnan(ta).all())),
            ("torch refuses a clamp with neither bound", _th_raises(lambda: ta.clamp_(None, None)))]


def chk_unsigned_negative_scalars():
    a = sm.from_numpy(np.array([1, 200], dtype=np.uint8))
    ta = torch.tensor([1, 200], dtype=torch.uint8)
    ta2 = ta.clone()
    ta.fill_(-1)
    ta2.clamp_(-4, -1)
    # alpha wraps on both sides: x - (-1) * y
    b = sm.from_numpy(np.array([1, 200], dtype=np.uint8))
    b.sub_(sm.from_numpy(np.array([3, 100], dtype=np.uint8)), -1.0)
    tb = torch.tensor([1, 200], dtype=torch.uint8)
    tb.sub_(torch.tensor([3, 100], dtype=torch.uint8), alpha=-1)
    return [("stridemem uint8 fill_(-1) is SM_ERR_DTYPE", _sm_raises(lambda: a.fill_(-1.0), sm.ERR_DTYPE)),
            ("stridemem full(-1, uint8) is SM_ERR_DTYPE",
             _sm_raises(lambda: sm.full((2,), -1.0, "uint8"), sm.ERR_DTYPE)),
            ("stridemem uint8 clamp_(-4, -1) is SM_ERR_DTYPE",
             _sm_raises(lambda: a.clamp_(-4.0, -1.0), sm.ERR_DTYPE)),
            ("stridemem left the tensor as it was", a.numpy().tolist() == [1, 200]),
            ("torch uint8 fill_(-1) gives 255", ta.tolist() == [255, 255]),
            ("torch full(-1, uint8) gives 255",
             torch.full((2,), -1, dtype=torch.uint8).tolist() == [255, 255]),
            ("torch uint8 clamp_(-4, -1) gives 252 (bounds 252, 255)", ta2.tolist() == [252, 252]),
            ("torch refuses -256 (below -max)",
             _th_raises(lambda: torch.full((2,), -256, dtype=torch.uint8))),
            ("alpha -1 wraps on both sides",
             b.numpy().tolist() == [4, 44] and tb.tolist() == [4, 44])]


def chk_abs_bool():
    a = sm.from_numpy(np.array([True, False, True]))
    v = a.version
    a.abs_()
    ta = torch.tensor([True, False, True])
    e = _th_error(lambda: ta.abs_())
    return [("stridemem abs_ on bool is the identity (a write: the version moves)",
             a.numpy().tolist() == [True, False, True] and a.version == v + 1),
            ForTorch("torch refuses abs_ on bool", e is not None and "Bool" in str(e), TH_ABS_BOOL_REFUSED,
                     "torch's abs_ on bool is the identity, as stridemem",
                     e is None and ta.tolist() == [True, False, True])]


def f16_overflows(v):
    """A finite double past float16's largest finite value, 65504: refused
    by stridemem's rule (c10::overflows'), 65519 too, though it rounds to
    65504."""
    return v is not None and bool(np.isfinite(v)) and abs(v) > 65504.0


def f16_clamp_in_f32(pre_bits, lo, hi):
    """[torchdiff:float16-scalar-range]: torch's CUDA clamp_ on float16, the
    bounds and elements in float32, the result rounded once to float16."""
    x = bits_to_f64(np.asarray(pre_bits).ravel(), "float16").astype(np.float32)
    if lo is not None:
        x = np.maximum(x, np.float32(lo))
    if hi is not None:
        x = np.minimum(x, np.float32(hi))
    return x.astype(np.float16).view(np.uint16)


def f16_axpy_in_f32(op, pre_bits, y, alpha):
    """[torchdiff:float16-scalar-range]: torch's CUDA float16 add_/sub_ with
    an alpha past float16's range, x +- alpha*y in float32 rounded to
    float16; and the operands' scale for close_scaled."""
    x = bits_to_f64(np.asarray(pre_bits).ravel(), "float16").astype(np.float32)
    ay = np.float32(alpha) * np.asarray(y, dtype=np.float32).ravel()
    r = x + ay if op == "add" else x - ay
    return r.astype(np.float16).view(np.uint16), np.abs(x.astype(np.float64)) + np.abs(ay.astype(np.float64))


def int64_wrap_2_63(op, pre_bits):
    """[torchdiff:int64-scalar-2-63]: torch 2.11's int64 x + 2**63, x - 2**63
    and x * 2**63 (the int taken as uint64, cast to int64 INT64_MIN, the
    arithmetic wrapping), as the unsigned bits."""
    b = np.asarray(pre_bits).astype(np.uint64)
    if op in ("add", "sub"):
        return b ^ np.uint64(1 << 63)
    return (b & np.uint64(1)) << np.uint64(63)


def chk_float16_scalar_range():
    h = np.array([1.0, -3.0, 0.5], dtype=np.float16)
    y = np.array([0.0, 2.0 ** -24, -1.0], dtype=np.float16)
    refused = []
    for what, fn in (("fill_(1e30)", lambda a: a.fill_(1e30)),
                     ("clamp_(0.1, 70000)", lambda a: a.clamp_(0.1, 70000.0)),
                     ("add_(y, alpha=1e10)", lambda a: a.add_(sm.from_numpy(y), 1e10)),
                     ("sub_(y, alpha=-1e10)", lambda a: a.sub_(sm.from_numpy(y), -1e10))):
        a = sm.from_numpy(h.copy())
        refused.append(_sm_raises(lambda: fn(a), sm.ERR_DTYPE) and a.numpy().tolist() == h.tolist())
    fits = sm.from_numpy(h.copy())
    fits.fill_(65504.0)
    past = sm.from_numpy(h.copy())
    one = torch.tensor([2.0], dtype=torch.float16)
    e = _th_error(lambda: one.fill_(1e30))
    out = [("stridemem refuses float16 fill_(1e30), clamp_(0.1, 70000), add_/sub_ with alpha +-1e10 "
            "(SM_ERR_DTYPE, the tensor untouched)", all(refused)),
           ("stridemem takes fill_(65504) and refuses fill_(65519), which would round to 65504",
            fits.numpy().tolist() == [65504.0] * 3 and _sm_raises(lambda: past.fill_(65519.0), sm.ERR_DTYPE)),
           ForTorch("torch fill_(1e30) on a one-element float16 tensor writes inf",
                    e is None and one.tolist() == [float("inf")], TH_F16_FILL_TAKES_OVERFLOW,
                    "torch refuses it (value cannot be converted without overflow), as stridemem",
                    e is not None and "without overflow" in str(e)),
           ("torch's CPU refuses float16 clamp_(0.1, 70000)",
            _th_raises(lambda: torch.from_numpy(h.copy()).clamp_(0.1, 70000.0))),
           ("torch's CPU refuses float16 add_(y, alpha=1e10)",
            _th_raises(lambda: torch.from_numpy(h.copy()).add_(torch.from_numpy(y), alpha=1e10)))]
    if not torch.cuda.is_available():
        CUDA_UNCHECKED["float16-scalar-range"] = "torch.cuda.is_available() is False"
        return out
    big = np.array([-3.0, 0.05, 100.0, 65504.0, np.inf], dtype=np.float16)
    tc = torch.from_numpy(big.copy()).cuda()
    ec = _th_error(lambda: tc.clamp_(0.1, 70000.0))
    want_c = f16_clamp_in_f32(big.view(np.uint16), 0.1, 70000.0)
    ta = torch.from_numpy(h.copy()).cuda()
    ea = _th_error(lambda: ta.add_(torch.from_numpy(y).cuda(), alpha=1e10))
    want_a = f16_axpy_in_f32("add", h.view(np.uint16), y, 1e10)[0]  # 1, 593, -inf
    out += [ForTorch("torch's CUDA float16 clamp_(0.1, 70000) clamps in float32 (inf becomes 70000, "
                     "then inf)", ec is None and th_bits(tc, "float16").tolist() == want_c.tolist(),
                     TH_F16_CUDA_TAKES_FLOAT32_SCALARS, "torch's CUDA refuses it, as stridemem", ec is not None),
            ForTorch("torch's CUDA float16 add_(y, alpha=1e10) computes x + 1e10*y in float32 "
                     "(1, 593, -inf)", ea is None and th_bits(ta, "float16").tolist() == want_a.tolist()
                     and want_a.view(np.float16).tolist() == [1.0, 593.0, -np.inf],
                     TH_F16_CUDA_TAKES_FLOAT32_SCALARS, "torch's CUDA refuses it, as stridemem", ea is not None)]
    return out


def chk_int64_scalar_2_63():
    x = np.array([1, -3, 2 ** 62], dtype=np.int64)
    refused = []
    for op in ("add", "sub", "mul"):
        a = sm.from_numpy(x.copy())
        refused.append(_sm_raises(lambda: getattr(a, op + "_")(2.0 ** 63), sm.ERR_DTYPE)
                       and a.numpy().tolist() == x.tolist())
    took, errs = [], []
    for op in ("add", "sub", "mul"):
        t = torch.from_numpy(x.copy())
        e = _th_error(lambda: getattr(t, op + "_")(2 ** 63))
        errs.append(e)
        took.append(e is None and t.numpy().view(np.uint64).tolist()
                    == int64_wrap_2_63(op, x.view(np.uint64)).tolist())
    return [("stridemem refuses int64 add_/sub_/mul_(2^63) (SM_ERR_DTYPE, the tensor untouched)", all(refused)),
            ForTorch("torch takes the int 2**63 on int64: add_ and sub_ give x + 2^63 wrapped "
                     "(1 -> -2^63 + 1), mul_ x * 2^63 wrapped (odd x -> -2^63, even x -> 0)",
                     all(took), TH_INT64_TAKES_2_63,
                     "torch refuses the int beyond int64 (Overflow when unpacking long), as stridemem",
                     all(e is not None for e in errs))]


def chk_narrow_start_range():
    e = sm.zeros((0, 3))
    took = not _th_raises(lambda: torch.empty(0, 3).narrow(0, -1, 0))
    return [("stridemem refuses narrow(0, -1, 0) on a size-0 dim (start in [0, 0])",
             _sm_raises(lambda: e.narrow(0, -1, 0), sm.ERR_OUT_OF_BOUNDS)),
            ("stridemem takes narrow(0, 0, 0) there", e.narrow(0, 0, 0).shape == (0, 3)),
            ("stridemem takes narrow(0, -3, 1) on a size-3 dim", sm.zeros((3,)).narrow(0, -3, 1).shape == (1,)),
            ForTorch("torch takes narrow(0, -1, 0) on a size-0 dim (wrapped like a size-1 dim)", took,
                     TH_NARROW_EMPTY_TAKES_MINUS_ONE, "torch refuses it, as stridemem", not took)]


CUDA_UNCHECKED = {}  # doc id -> why its claim about torch's CUDA side was not checked


def chk_relu_negative_zero():
    """[torchdiff:relu-negative-zero]: ours keeps -0.0 (the same element op
    on every device); torch's CPU does too, its CUDA relu_ (a max with 0)
    gives +0.0. The CUDA claim is checked where torch has a GPU."""
    neg0 = np.array([-0.0, -1.5, 2.0])
    a = sm.from_numpy(neg0.copy())
    a.relu_()
    bits = a.numpy().view(np.uint64).tolist()
    want = [1 << 63, 0, int(np.array([2.0]).view(np.uint64)[0])]
    tc = torch.from_numpy(neg0.copy()).relu_().numpy().view(np.uint64).tolist()
    out = [("stridemem relu_ keeps -0.0 (x < 0 ? 0 : x)", bits == want),
           ("torch's CPU relu_ keeps -0.0, as stridemem", tc == want)]
    if torch.cuda.is_available():
        tg = torch.from_numpy(neg0.copy()).cuda().relu_().cpu().numpy().view(np.uint64).tolist()
        out.append(("torch's CUDA relu_ makes -0.0 +0.0", tg == [0, 0, want[2]]))
    else:
        CUDA_UNCHECKED["relu-negative-zero"] = "torch.cuda.is_available() is False"
    return out


def chk_sign_nan():
    x = np.array([np.nan, -np.nan, -0.0, -2.0], np.float32)
    a = sm.from_numpy(x.copy())
    a.sign_()
    got = a.numpy()
    tx = torch.from_numpy(x.copy()).sign_().numpy()
    return [("stridemem sign_ keeps NaN with its sign (as np.sign)",
             np.isnan(got[:2]).all() and list(np.signbit(got[:2])) == [False, True]),
            ("stridemem and torch give +0.0 for -0.0 and -1 for -2",
             got[2:].tolist() == [0.0, -1.0] and not np.signbit(got[2]) and
             tx[2:].tolist() == [0.0, -1.0] and not np.signbit(tx[2])),
            ("torch's sign_ gives 0 for NaN", tx[:2].tolist() == [0.0, 0.0])]


def chk_arange_integer():
    ok = sm.arange_n(0.0, 0.1, 7, "uint8")
    return [("stridemem int8 arange(100, 130) is SM_ERR_DTYPE",
             _sm_raises(lambda: sm.arange_n(100.0, 1.0, 30, "int8"), sm.ERR_DTYPE)),
            ("stridemem uint8 arange(0, 0.1*7, 0.1): each double truncated once",
             ok.numpy().tolist() == [0] * 7),
            ("stridemem int16 arange(-2, step 0.5): -2, -1.5, ... truncated",
             sm.arange_n(-2.0, 0.5, 6, "int16").numpy().tolist() == [-2, -1, -1, 0, 0, 0]),
            ("torch int8 arange(100, 130) wraps: ends 127, -128, -127",
             torch.arange(100, 130, dtype=torch.int8).tolist()[-3:] == [127, -128, -127]),
            ForTorch("torch converts the step first: 0.1 is 'step must be nonzero'",
                     _th_raises(lambda: torch.arange(0, 0.1 * 7, 0.1, dtype=torch.uint8)),
                     TH_ARANGE_STEP_ZERO_REFUSED, "torch gives seven zeros, as stridemem",
                     _th_value(lambda: torch.arange(0, 0.1 * 7, 0.1, dtype=torch.uint8).tolist())
                     == [0] * 7),
            # torch 2 still truncates the step, and no longer refuses a step
            # that becomes 0: every value is the start (1.13 refused it)
            ForTorch("torch converts the step first: int16 arange(-2, 1, 0.5) is -2 six times",
                     _th_value(lambda: torch.arange(-2, 1, 0.5, dtype=torch.int16).tolist())
                     == [-2] * 6, TH_ARANGE_STEP_ZERO_REPEATS,
                     "torch refuses it ('step must be nonzero', as torch 1.13 does 0.1)",
                     "step must be nonzero" in terr(_th_error(
                         lambda: torch.arange(-2, 1, 0.5, dtype=torch.int16))))]


def chk_bool_arithmetic():
    a = sm.from_numpy(np.array([True, False, False]))
    o = sm.from_numpy(np.array([True, True, False]))
    ta, to = torch.tensor([True, False, False]), torch.tensor([True, True, False])
    t1, t2 = ta.clone(), ta.clone()
    t1.add_(to)
    t2.mul_(to)
    return [("stridemem add_ on bool is SM_ERR_DTYPE", _sm_raises(lambda: a.add_(o), sm.ERR_DTYPE)),
            ("stridemem mul_ on bool is SM_ERR_DTYPE", _sm_raises(lambda: a.mul_(o), sm.ERR_DTYPE)),
            ("stridemem left the tensor as it was", a.numpy().tolist() == [True, False, False]),
            ("torch add_ on bool is a logical or", t1.tolist() == [True, True, False]),
            ("torch mul_ on bool is a logical and", t2.tolist() == [True, False, False])]


def chk_fill_tensor_converts():
    a = sm.zeros(2, dtype="int8")
    a.fill_(sm.from_numpy(np.array(300, dtype=np.int32)))
    ta = torch.zeros(2, dtype=torch.int8)
    o = torch.tensor(300, dtype=torch.int32)
    tc = torch.zeros(2, dtype=torch.int8)
    tc.copy_(o)
    e = _th_error(lambda: ta.fill_(o))
    return [("stridemem int8 fill_(0-d int32 300) converts as a copy: 44", a.numpy().tolist() == [44, 44]),
            ("torch's copy_ gives the same", tc.tolist() == [44, 44]),
            ForTorch("torch fill_ refuses the value", e is not None and "without overflow" in str(e),
                     TH_FILL_TENSOR_REFUSES, "torch fill_ converts it as a copy: 44, as stridemem",
                     e is None and ta.tolist() == [44, 44])]


def chk_same_elements():
    a = sm.arange_n(0.0, 1.0, 15, "float64").view(1, 15)
    a.add_(a.view(15))
    b = sm.from_numpy(np.array([3.0]))
    b.add_(b.view())
    c = sm.arange_n(0.0, 1.0, 4, "float64")
    ta = torch.arange(15.0, dtype=torch.float64).view(1, 15)
    tb = torch.tensor([3.0], dtype=torch.float64)
    tc = torch.arange(4.0, dtype=torch.float64)
    return [("stridemem: a (15,) view of a (1, 15) tensor adds to it", a.numpy().ravel().tolist()
             == [2.0 * i for i in range(15)]),
            ("stridemem: the 0-d view of a (1,) tensor's element adds to it", b.numpy().tolist() == [6.0]),
            ("stridemem refuses a 0-d view of one element of a larger tensor",
             _sm_raises(lambda: c.add_(c.select(0, 1)), sm.ERR_OVERLAP)),
            ("torch refuses the (15,) view", _th_raises(lambda: ta.add_(ta.view(15)))),
            ("torch refuses the 0-d view", _th_raises(lambda: tb.add_(tb.view(())))),
            ("torch takes the identical view", not _th_raises(lambda: ta.add_(ta)))]


def chk_alpha_promoted_type():
    a = sm.from_numpy(np.array([1, 2], dtype=np.uint8))
    a.sub_(sm.from_numpy(np.array(5, dtype=np.int16)), 300.0)
    ta = torch.tensor([1, 2], dtype=torch.uint8)
    t1 = ta.clone()
    t1.sub_(torch.tensor([5], dtype=torch.int16), alpha=300)
    return [("stridemem: uint8 sub_(0-d int16, alpha=300) checks alpha in int16 and wraps",
             a.numpy().tolist() == [37, 38]),
            ("stridemem refuses alpha 300 with a uint8 other",
             _sm_raises(lambda: a.sub_(sm.from_numpy(np.array(5, dtype=np.uint8)), 300.0), sm.ERR_DTYPE)),
            ("torch refuses it (result_type: a 0-d other does not promote)",
             _th_raises(lambda: ta.sub_(torch.tensor(5, dtype=torch.int16), alpha=300))),
            ("torch takes it with a (1,) other, same values", t1.tolist() == [37, 38])]


NP_COMPLEX = {"complex64": np.complex64, "complex128": np.complex128}


def complex_scalar_numpy(op, dt, a, pre):
    """[torchdiff:complex-special-values]: NumPy's complex x + a,
    x - a, x / a for the special scalars where torch differs (a non-finite a,
    or a zero divisor), as the bits of compare_written; None for other
    cases."""
    if op not in ("add", "sub", "div") or a is None:
        return None
    big = np.sqrt(np.finfo(np.float32 if dt == "complex64" else np.float64).max)
    # |a|^2 overflowing the part type: torch's complex division squares the
    # divisor (x / 1e30 is 0 in complex64), Smith's and NumPy's do not.
    if np.isfinite(a) and not (op == "div" and (a == 0 or abs(a) >= big or abs(a) <= 1 / big)):
        return None
    x = np.ascontiguousarray(pre).ravel().view(NP_COMPLEX[dt])
    z = NP_COMPLEX[dt](a)
    with np.errstate(all="ignore"):
        r = x + z if op == "add" else x - z if op == "sub" else x / z
    return np_bits(r.astype(NP_COMPLEX[dt]), dt).ravel()


def chk_complex_special_values():
    def ours(op, a):
        t = sm.from_numpy(np.array([1 + 2j], dtype=np.complex64))
        getattr(t, op + "_")(a)
        return complex(t.numpy()[0])

    def theirs(op, a):
        t = torch.tensor([1 + 2j], dtype=torch.complex64)
        getattr(t, op + "_")(a)
        return complex(t[0])

    d, td = ours("div", 0.0), theirs("div", 0.0)
    ad, tad = ours("add", float("inf")), theirs("add", float("inf"))
    e = sm.from_numpy(np.array([complex(np.inf, np.nan)], dtype=np.complex64))
    e.exp_()
    te = torch.tensor([complex(np.inf, np.nan)], dtype=torch.complex64).exp_()
    ev, tev = complex(e.numpy()[0]), complex(te[0])
    n = sm.zeros(4, dtype="complex128")  # (torch's one-element neg keeps the sign; its vector loop does not)
    n.neg_()
    nb = n.numpy().view(np.uint64).tolist()
    tnb = torch.zeros(4, dtype=torch.complex128).neg_().numpy().view(np.uint64).tolist()
    return [("stridemem (1+2j)/0 is (inf, inf), as NumPy", d == complex(np.inf, np.inf)),
            ForTorch("torch (1+2j)/0 is (nan, nan)", np.isnan(td.real) and np.isnan(td.imag),
                     TH_CPU_COMPLEX_DIV0_NAN, "torch's CPU (1+2j)/0 is (inf, inf), as stridemem",
                     td == complex(np.inf, np.inf)),
            ("stridemem (1+2j) + inf keeps the imaginary part, as NumPy",
             ad.real == np.inf and ad.imag == 2.0),
            ("torch (1+2j) + inf has a NaN imaginary part (alpha * inf in complex)",
             tad.real == np.inf and np.isnan(tad.imag)),
            ("stridemem exp(inf + nan j) is inf + nan j (C99, NumPy)",
             ev.real == np.inf and np.isnan(ev.imag)),
            ForTorch("torch exp(inf + nan j) is nan + nan j", np.isnan(tev.real) and np.isnan(tev.imag),
                     TH_CPU_COMPLEX_EXP_NAN, "torch's CPU exp(inf + nan j) is inf + nan j, as stridemem",
                     tev.real == np.inf and np.isnan(tev.imag)),
            ("stridemem -(0 + 0j) is -0 - 0j, as NumPy", nb == [1 << 63] * 8),
            ("torch -(0 + 0j) is 0 + 0j", tnb == [0] * 8)]


def chk_arange_complex():
    a = sm.arange_n(0.0, 0.5, 3, "complex64")
    return [("stridemem complex64 arange is real values, imaginary 0 (NumPy's)",
             a.numpy().tolist() == [0j, 0.5 + 0j, 1 + 0j]),
            ("torch 1.13 has no complex arange",
             _th_raises(lambda: torch.arange(0, 1.5, 0.5, dtype=torch.complex64)))]


def chk_complex_to_bool():
    z = np.array([1j, 0j, complex(0, np.nan)])
    out = [("stridemem complex128 -> bool: either part nonzero (NumPy's astype)",
            sm.from_numpy(z).to(dtype="bool").numpy().tolist() == [True, False, True]),
           ("stridemem complex64 -> bool: the same",
            sm.from_numpy(z.astype(np.complex64)).to(dtype="bool").numpy().tolist() == [True, False, True])]
    for dt, zz in (("complex128", z), ("complex64", z.astype(np.complex64))):
        got = torch.from_numpy(zz).to(torch.bool).tolist()
        out.append(ForTorch("torch %s -> bool reads the real part only" % dt,
                            got == [False, False, False], TH_COMPLEX_BOOL_REAL_ONLY,
                            "torch's is true when either part is nonzero, as stridemem",
                            got == [True, False, True]))
    return out


DIFF_CHECKS = {
    "complex-to-bool": chk_complex_to_bool,
    "complex-special-values": chk_complex_special_values,
    "arange-complex": chk_arange_complex,
    "negative-strides": chk_negative_strides,
    "overlap-exact": chk_overlap_exact,
    "single-rounding": chk_single_rounding,
    "index-select-negative": chk_index_select_negative,
    "fill-tensor-broadcast": chk_fill_tensor_broadcast,
    "version-per-storage": chk_version_per_storage,
    "dlpack-bool": chk_dlpack_bool,
    "clamp-nan-bound": chk_clamp_nan_bound,
    "unsigned-negative-scalars": chk_unsigned_negative_scalars,
    "arange-integer": chk_arange_integer,
    "narrow-start-range": chk_narrow_start_range,
    "abs-bool": chk_abs_bool,
    "relu-negative-zero": chk_relu_negative_zero,
    "sign-nan": chk_sign_nan,
    "bool-arithmetic": chk_bool_arithmetic,
    "fill-tensor-converts": chk_fill_tensor_converts,
    "same-elements": chk_same_elements,
    "alpha-promoted-type": chk_alpha_promoted_type,
    "float16-scalar-range": chk_float16_scalar_range,
    "int64-scalar-2-63": chk_int64_scalar_2_63,
}


def check_documented_differences(res):
    ids, err = doc_ids()
    if ids is None:
        res.fail("cannot read %s: %s" % (DOC, err))
        return set()
    res.check(len(ids) == len(set(ids)), "duplicate ids in %s: %s" % (DOC, ids))
    for i in sorted(set(ids) - set(DIFF_CHECKS)):
        res.fail("%s lists [torchdiff:%s] but the test has no check for it" % (DOC, i))
    for i in sorted(set(DIFF_CHECKS) - set(ids)):
        res.fail("the test checks difference %r but %s does not list it" % (i, DOC))
    for i in sorted(set(ids) & set(DIFF_CHECKS)):
        try:
            results = DIFF_CHECKS[i]()
        except Exception:
            res.fail("difference %s: its check raised\n%s" % (i, traceback.format_exc()))
            continue
        for r in results:
            if isinstance(r, ForTorch):
                judge_for_torch(res, i, r)
                continue
            what, ok = r
            res.check(bool(ok), "documented difference [torchdiff:%s] is stale: not true that %s"
                      % (i, what))
    return set(ids)


def judge_for_torch(res, doc_id, r):
    """A claim about some torch releases: checked where its releases include
    the installed torch; elsewhere torch must do r.other instead, and the
    claim is reported as not applying (neither a pass nor a failure); for a
    release nobody ran, whichever of the two holds is reported."""
    head = "documented difference [torchdiff:%s]" % doc_id
    state = r.releases.state()
    if r.ok and r.other_ok:  # the two outcomes exclude each other: a broken check
        res.fail("%s: both %r and %r hold for torch %s" % (head, r.what, r.other, TORCH_V_TEXT))
    elif state is True:
        res.check(r.ok, "%s is stale: not true that %s (%s)%s"
                  % (head, r.what, r.releases,
                     "; torch %s: %s" % (TORCH_V_TEXT, r.other) if r.other_ok else ""))
    elif r.other_ok:
        NOT_APPLICABLE.append("[torchdiff:%s] %s" % (doc_id, r.what))
        print("does not apply to torch %s: %s: %s (%s); torch %s: %s%s"
              % (TORCH_V_TEXT, head, r.what, r.releases, TORCH_V_TEXT, r.other,
                 " (a release not run before)" if state is None else ""))
    elif r.ok and state is None:
        res.ok()
        print("holds for torch %s (a release not run before): %s: %s (%s)"
              % (TORCH_V_TEXT, head, r.what, r.releases))
    elif r.ok:
        res.fail("%s: %r is listed for %s only, but torch %s does it too: widen its releases"
                 % (head, r.what, r.releases, TORCH_V_TEXT))
    else:
        res.fail("%s: torch %s does neither what the entry says (%s, for %s) nor %s"
                 % (head, TORCH_V_TEXT, r.what, r.releases, r.other))


# ----------------------------------------------------------------------------
# The chains
# ----------------------------------------------------------------------------

class Base(object):
    """A storage on both sides: `full` (stridemem, 1-D over all of it) and
    `tfull` (torch, 1-D over its storage); `troot` is the torch tensor whose
    views are views of this base; `vdelta`: torch's version minus ours, moved
    only when a listed difference let torch write where we refused."""

    def __init__(self, full, tfull, troot, dtype):
        self.full, self.tfull, self.troot, self.dtype = full, tfull, troot, dtype
        self.vdelta = 0


class Pair(object):
    def __init__(self, t, tt, base):
        self.t, self.tt, self.base = t, tt, base


class Chain(object):
    DOCUMENTED = set()

    def __init__(self, seed, device="cpu"):
        self.seed = seed
        self.device = str(sm.Device(device))  # stridemem's: "cpu" or "cuda:N"
        self.tdev = th_device(device)         # torch's
        self.cpu = self.tdev == "cpu"
        self.rng = random.Random(seed)
        self.g = np.random.default_rng(seed)
        self.log = []
        self.bases = []
        self.pairs = []
        self.ops = 0

    def note(self, text):
        self.log.append(text)

    def fail(self, text):
        raise Fail(text)

    def expect(self, cond, text):
        if not cond:
            self.fail(text)

    def disagree(self, sig, text):
        raise Disagree(sig, text)

    def explained(self, doc_id):
        if doc_id not in self.DOCUMENTED:
            self.fail("explanation %r is not listed in %s" % (doc_id, DOC))
        EXPLAINED[doc_id] = EXPLAINED.get(doc_id, 0) + 1

    # -- running both sides ------------------------------------------------
    @staticmethod
    def both(fsm, fth):
        r1 = e1 = r2 = e2 = None
        try:
            r1 = fsm()
        except sm.StrideMemError as e:
            e1 = e
        try:
            r2 = fth()
        except TORCH_ERRORS as e:
            e2 = e
        return r1, e1, r2, e2

    def agree(self, what, e1, e2):
        """Both accepted or both refused; else an (unexplained) disagreement."""
        if (e1 is None) != (e2 is None):
            self.unsupported_on_gpu(what, e1, e2)
            self.disagree("%s: stridemem %s, torch %s" % (opname(what), status_name(e1),
                                                          "refuses" if e2 else "ok"),
                          "%s: stridemem %s (%s), torch %s"
                          % (what, status_name(e1), e1.message if e1 else "", terr(e2)))
        if e1 is not None:
            key = "refused:" + status_name(e1)
            OP_COUNTS[key] = OP_COUNTS.get(key, 0) + 1
        return e1 is None

    def unsupported_on_gpu(self, what, e1, e2):
        """On the GPU, a refusal that says the op is not there (the other
        side did it) is listed, not compared: raises Unsupported."""
        if self.cpu:
            return
        who = None
        if e2 is not None and "not implemented for" in str(e2):
            who = "torch"
        elif e1 is not None and e1.status in (sm.ERR_UNSUPPORTED, sm.ERR_DEVICE):
            who = "stridemem"
        if who:
            raise Unsupported("%s: not supported by %s on %s" % (opname(what), who, self.device),
                              "%s: stridemem %s (%s), torch %s" % (what, status_name(e1),
                                                                   e1.message if e1 else "", terr(e2)))

    # -- bases and comparisons ---------------------------------------------
    def new_base(self, vals, dt, device=None):
        device = self.device if device is None else str(device)
        if device == "cpu" and self.rng.random() < 0.3 and dt != "bool":
            mem = np.array(vals, dtype=sm.numpy_dtype(dt))
            full = sm.from_numpy_blob(mem, dtype=dt)
        else:
            full = sm.from_numpy(np.asarray(vals, dtype=sm.numpy_dtype(dt)), device=device, dtype=dt)
        tfull = to_torch_1d(vals, dt, th_device(device))
        b = Base(full, tfull, tfull, dt)
        self.bases.append(b)
        return b

    def base_from_result(self, t, tt, what):
        """t and tt are fresh copies: adopt them as a new base."""
        dt = t.dtype
        st = t.storage()
        n = st.nbytes // ITEM[dt]
        full = st.tensor((n,), (1,), 0, dt)
        st.close()
        tn = th_storage_bytes(tt) // tt.element_size()
        self.expect(n == tn, "%s: storage of %d elements, torch's %d" % (what, n, tn))
        tfull = tt.as_strided((n,), (1,), 0)
        b = Base(full, tfull, tt, dt)
        self.bases.append(b)
        return b

    def th_shares(self, x, base):
        return x is base.troot or x._base is base.troot or (
            x._base is not None and x._base is base.troot._base and base.troot._base is not None)

    def check_pair(self, p, what):
        t, tt = p.t, p.tt
        self.expect(t.shape == tuple(tt.shape), "%s: shape %s, torch %s" % (what, t.shape, tuple(tt.shape)))
        self.expect(TORCH_DT[t.dtype] == tt.dtype, "%s: dtype %s, torch %s" % (what, t.dtype, tt.dtype))
        op = opname(what)
        if t.strides != tuple(tt.stride()):
            bad = [i for i, (a, b) in enumerate(zip(t.strides, tt.stride())) if a != b]
            kind = "size-0/1 dims" if all(t.shape[i] <= 1 for i in bad) else "dims of size > 1"
            if t.numel == 0:
                kind += ", empty tensor"
            self.disagree("%s: strides differ on %s" % (op, kind),
                          "%s: strides %s, torch %s (shape %s)" % (what, t.strides, tt.stride(), t.shape))
        if t.storage_offset != tt.storage_offset():
            self.disagree("%s: storage offset" % op,
                          "%s: storage offset %d, torch %d" % (what, t.storage_offset, tt.storage_offset()))
        for f in ("contiguous", "channels_last", "channels_last_3d"):
            a, b = bool(t.is_contiguous(f)), bool(tt.is_contiguous(memory_format=FORMATS[f]))
            if a != b:
                self.disagree("%s: is_contiguous(%s) %s, torch %s%s" % (op, f, a, b, ", empty" if t.numel == 0 else ""),
                              "%s: is_contiguous(%s) %s, torch %s (shape %s strides %s)"
                              % (what, f, a, b, t.shape, t.strides))
        self.expect(t.same_storage(p.base.full) and self.th_shares(tt, p.base),
                    "%s: not a view of its base on both sides" % what)
        self.expect(th_storage_ptr(tt) == th_storage_ptr(p.base.tfull) and
                    t.device == p.base.full.device and tt.device == p.base.tfull.device,
                    "%s: torch's tensor is not over its base's storage (or a device moved)" % what)
        self.expect(th_device(t.device) == str(tt.device),
                    "%s: stridemem on %s, torch on %s" % (what, t.device, tt.device))
        g, w = np_bits(t.numpy(), t.dtype), th_bits(tt, t.dtype)
        if not same_bits(g, w, t.dtype):
            self.disagree("%s: values" % op,
                          "%s: values %r, torch %r" % (what, g.ravel()[:8], w.ravel()[:8]))
        v, tv = t.version, tt._version - p.base.vdelta
        if v != tv:
            self.disagree("%s: version counter" % op,
                          "%s: version %d, torch %d" % (what, v, tv))

    def check_bases(self, what, tol_dt=None):
        """Every storage equal on both sides; with tol_dt, floating values
        may differ by a few ulps and torch then takes ours."""
        for b in self.bases:
            g, w = np_bits(b.full.numpy(), b.dtype), th_bits(b.tfull, b.dtype)
            if same_bits(g, w, b.dtype):
                continue
            if tol_dt is not None and close_bits(g, w, b.dtype):
                self.sync(b)
                continue
            bad = np.nonzero(g != w)[0][:4] if g.shape == w.shape else "?"
            at = ""
            if g.shape == w.shape and b.dtype not in COMPLEX:  # the differing values themselves
                at = " (there: stridemem %s, torch %s)" % (bits_to_f64(g[bad], b.dtype).tolist(),
                                                         bits_to_f64(w[bad], b.dtype).tolist())
            self.disagree("%s: storage values (%s)" % (opname(what), b.dtype),
                          "%s: a storage differs at %s%s: stridemem %r, torch %r"
                          % (what, bad, at, g.ravel()[:8], w.ravel()[:8]))

    def sync(self, b):
        """torch's copy of base b takes stridemem's values (through .data:
        torch's version counter is not bumped)."""
        b.tfull.data.copy_(to_torch_1d(b.full.numpy(), b.dtype))

    def adopt(self, t, tt, base, what):
        p = Pair(t, tt, base)
        self.pairs.append(p)
        self.check_pair(p, what)
        return p

    # -- start ----------------------------------------------------------------
    def random_shape(self, max_nd=6):
        nd = self.rng.randint(0, max_nd)
        return [self.rng.choice([0, 1, 1, 2, 2, 3, 4]) if self.rng.random() < 0.9 else 5
                for _ in range(nd)]

    def start(self):
        dt = self.rng.choice(DTYPES)
        shape = self.random_shape()
        while int(np.prod(shape)) > 300:
            shape = self.random_shape()
        numel = int(np.prod(shape)) if shape else 1
        extra = self.rng.choice([0, 0, 1, 3])
        base = self.new_base(rand_values(self.g, dt, numel + extra), dt)
        strides = []
        acc = 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(n, 1)
        strides = tuple(reversed(strides))
        off = self.rng.randint(0, extra)
        self.note("start %s %s offset %d (storage %d)" % (dt, tuple(shape), off, numel + extra))
        t = base.full.as_strided(shape, strides, off)
        tt = base.tfull.as_strided(shape, strides, off)
        p = self.adopt(t, tt, base, "start")
        if self.rng.random() < 0.25 and len(shape) in (4, 5):
            fmt = "channels_last" if len(shape) == 4 else "channels_last_3d"
            q = self.op_contiguous(p, fmt)
            if q is not None:
                p = q
        return p

    # -- views -----------------------------------------------------------
    def rdim(self, p, extra=0):
        nd = p.t.ndim + extra
        if nd == 0:
            return self.rng.choice([0, -1])
        return self.rng.randint(-nd - (1 if self.rng.random() < 0.05 else 0), nd - 1)

    def view_op(self, p, name, fsm, fth):
        self.note(name)
        t, e1, tt, e2 = self.both(fsm, fth)
        if not self.agree(name, e1, e2):
            return None
        return self.adopt(t, tt, p.base, name)

    def op_slice(self, p):
        rng = self.rng
        d = self.rdim(p)
        nd = p.t.ndim
        size = p.t.shape[d] if -nd <= d < nd else 3

        def b():
            return rng.choice([None, rng.randint(-size - 2, size + 2)])
        start, stop = b(), b()
        step = rng.choice([1, 1, 2, 3])
        if rng.random() < 0.08:
            return self.neg_step(p, d, start, stop)
        def idx():
            if not -nd <= d < nd:
                raise IndexError("dim %d out of range for %d dims" % (d, nd))
            return (slice(None),) * (d % nd) + (slice(start, stop, step),)
        return self.view_op(p, "slice(%d, %s, %s, %d)" % (d, start, stop, step),
                            lambda: p.t.slice(d, start, stop, step), lambda: p.tt[idx()])

    def neg_step(self, p, d, start, stop):
        """[torchdiff:negative-strides]: we view, torch refuses."""
        self.note("slice(%d, %s, %s, -1)" % (d, start, stop))
        nd = p.t.ndim
        t, e1, _, e2 = self.both(lambda: p.t.slice(d, start, stop, -1),
                                 lambda: p.tt[(slice(None),) * (d % max(nd, 1)) + (slice(start, stop, -1),)])
        if e1 is None and e2 is not None:
            self.expect(t.same_storage(p.t), "negative-step slice: not a view")
            self.explained("negative-strides")
        else:
            self.agree("slice step -1", e1, e2)
        return None

    def op_flip(self, p):
        """[torchdiff:negative-strides]: our flip is a view, torch's a copy."""
        if p.t.ndim == 0:
            return None
        dims = sorted(set(self.rng.randint(0, p.t.ndim - 1) for _ in range(self.rng.randint(1, 2))))
        self.note("flip(%s)" % dims)
        t, e1, tt, e2 = self.both(lambda: p.t.flip(dims), lambda: p.tt.flip(dims))
        if not self.agree("flip", e1, e2):
            return None
        self.expect(t.same_storage(p.t), "flip: not a view")
        self.expect(not self.th_shares(tt, p.base), "torch's flip is a view: the doc is stale")
        self.expect(same_bits(np_bits(t.numpy(), t.dtype), th_bits(tt, t.dtype), t.dtype),
                    "flip: values differ")
        for d in dims:
            self.expect(t.strides[d] == -p.t.strides[d], "flip: stride of dim %d" % d)
        self.explained("negative-strides")
        return None

    def op_narrow(self, p):
        d = self.rdim(p)
        nd = p.t.ndim
        size = p.t.shape[d] if -nd <= d < nd else 2
        start = self.rng.randint(-size - 1, size + 1)
        length = self.rng.randint(-1 if self.rng.random() < 0.05 else 0, size + 1)
        name = "narrow(%d, %d, %d)" % (d, start, length)
        if size == 0 and start < 0 and -nd <= d < nd and TH_NARROW_EMPTY_TAKES_MINUS_ONE.may_hold():
            # [torchdiff:narrow-start-range]: ours refuses a negative start on a
            # size-0 dim; torch 1.13 takes -1 there (and refuses the rest, as we do).
            self.note(name)
            t, e1, _, e2 = self.both(lambda: p.t.narrow(d, start, length),
                                     lambda: torch.narrow(p.tt, d, start, length))
            if e1 is not None and e1.status == sm.ERR_OUT_OF_BOUNDS and e2 is None and start == -1:
                self.explained("narrow-start-range")
            else:
                self.agree(name, e1, e2)
            return None
        return self.view_op(p, name, lambda: p.t.narrow(d, start, length),
                            lambda: torch.narrow(p.tt, d, start, length))

    def op_select(self, p):
        d = self.rdim(p)
        nd = p.t.ndim
        size = p.t.shape[d] if -nd <= d < nd else 2
        i = self.rng.randint(-size - 1, size)
        return self.view_op(p, "select(%d, %d)" % (d, i), lambda: p.t.select(d, i),
                            lambda: p.tt.select(d, i))

    def op_permute(self, p):
        dims = list(range(p.t.ndim))
        self.rng.shuffle(dims)
        dims = [d - p.t.ndim if self.rng.random() < 0.3 else d for d in dims]
        if self.rng.random() < 0.05 and dims:
            dims[0] = dims[-1]
        return self.view_op(p, "permute(%s)" % dims, lambda: p.t.permute(*dims),
                            lambda: p.tt.permute(tuple(dims)))

    def op_transpose(self, p):
        a, b = self.rdim(p), self.rdim(p)
        return self.view_op(p, "transpose(%d, %d)" % (a, b), lambda: p.t.transpose(a, b),
                            lambda: p.tt.transpose(a, b))

    def op_movedim(self, p):
        nd = p.t.ndim
        if nd == 0:
            return None
        k = self.rng.randint(1, nd)
        src = self.rng.sample(range(nd), k)
        dst = self.rng.sample(range(nd), k)
        return self.view_op(p, "movedim(%s, %s)" % (src, dst), lambda: p.t.movedim(src, dst),
                            lambda: torch.movedim(p.tt, src, dst))

    def op_expand(self, p):
        rng = self.rng
        shape = list(p.t.shape)
        new = [rng.choice([1, 2, 3, 0]) for _ in range(rng.randint(0, 2))]
        out = []
        for n in shape:
            if n == 1:
                out.append(rng.choice([1, 2, 3, 0, -1]))
            else:
                out.append(n if rng.random() < 0.8 else -1)
        if rng.random() < 0.05 and out:
            out[0] = rng.choice([5, 7])
        shape = new + out
        return self.view_op(p, "expand(%s)" % shape, lambda: p.t.expand(*shape),
                            lambda: p.tt.expand(tuple(shape)))

    def op_squeeze(self, p):
        if self.rng.random() < 0.4:
            return self.view_op(p, "squeeze()", lambda: p.t.squeeze(), lambda: p.tt.squeeze())
        d = self.rdim(p)
        return self.view_op(p, "squeeze(%d)" % d, lambda: p.t.squeeze(d), lambda: p.tt.squeeze(d))

    def op_unsqueeze(self, p):
        d = self.rdim(p, 1)
        return self.view_op(p, "unsqueeze(%d)" % d, lambda: p.t.unsqueeze(d),
                            lambda: p.tt.unsqueeze(d))

    def op_flatten(self, p):
        a, b = self.rdim(p), self.rdim(p)
        # flatten is a view only when the strides allow: torch's flatten
        # copies otherwise, ours refuses; compare with torch's view rule.
        def th():
            r = torch.flatten(p.tt, a, b)
            if r.numel() and not self.th_shares(r, p.base) and r.dim() != p.tt.dim():
                raise RuntimeError("flatten needs a copy")
            if r.numel() and r.data_ptr() != p.tt.data_ptr():
                raise RuntimeError("flatten needs a copy")
            return r
        return self.view_op(p, "flatten(%d, %d)" % (a, b), lambda: p.t.flatten(a, b), th)

    def op_unflatten(self, p):
        if p.t.ndim == 0:
            return None
        d = self.rdim(p)
        n = p.t.shape[d] if -p.t.ndim <= d < p.t.ndim else 1
        rng = self.rng
        cands = [[n], [1, n], [n, 1], [1, n, 1], [-1, 1], [1, -1]]
        if n % 2 == 0 and n:
            cands += [[2, n // 2], [-1, 2], [2, -1, 1]]
        if n == 0:
            cands += [[0, 3], [3, 0], [0, -1]]
        if rng.random() < 0.1:
            cands = [[n + 1], [-1, -1]]
        sizes = rng.choice(cands)
        return self.view_op(p, "unflatten(%d, %s)" % (d, sizes), lambda: p.t.unflatten(d, sizes),
                            lambda: p.tt.unflatten(d, sizes))

    def op_unfold(self, p):
        d = self.rdim(p)
        nd = p.t.ndim
        n = p.t.shape[d] if -nd <= d < nd else 1
        size = self.rng.randint(0, n + 1)
        step = self.rng.randint(1 if self.rng.random() < 0.95 else 0, 3)
        return self.view_op(p, "unfold(%d, %d, %d)" % (d, size, step),
                            lambda: p.t.unfold(d, size, step), lambda: p.tt.unfold(d, size, step))

    def op_diagonal(self, p):
        a, b = self.rdim(p), self.rdim(p)
        off = self.rng.randint(-3, 3)
        return self.view_op(p, "diagonal(%d, %d, %d)" % (off, a, b),
                            lambda: p.t.diagonal(off, a, b),
                            lambda: torch.diagonal(p.tt, off, a, b))

    def op_split(self, p, chunk=False):
        d = self.rdim(p)
        k = self.rng.randint(0 if self.rng.random() < 0.05 else 1, 4)
        name = "%s(%d, %d)" % ("chunk" if chunk else "split", k, d)
        self.note(name)
        if chunk:
            r, e1, rt, e2 = self.both(lambda: p.t.chunk(k, d), lambda: p.tt.chunk(k, d))
        else:
            r, e1, rt, e2 = self.both(lambda: p.t.split(k, d), lambda: p.tt.split(k, d))
        if not self.agree(name, e1, e2):
            return None
        self.expect(len(r) == len(rt), "%s: %d views, torch %d" % (name, len(r), len(rt)))
        out = None
        for i, (t, tt) in enumerate(zip(r, rt)):
            q = self.adopt(t, tt, p.base, "%s[%d]" % (name, i))
            if out is None or self.rng.random() < 0.4:
                out = q
        return out

    def op_chunk(self, p):
        return self.op_split(p, chunk=True)

    def op_view(self, p):
        shape = self.shape_of(p.t.numel)
        return self.view_op(p, "view(%s)" % (shape,), lambda: p.t.view(*shape),
                            lambda: p.tt.view(tuple(shape)))

    def shape_of(self, numel):
        rng = self.rng
        if rng.random() < 0.05:
            return [numel + 1]
        nd = rng.randint(0, 5)
        if numel == 0:
            s = [rng.choice([1, 2, 3]) for _ in range(max(nd, 1))]
            s[rng.randrange(len(s))] = 0
            if rng.random() < 0.2:
                s[rng.randrange(len(s))] = -1
            return s
        s, rest = [], numel
        for _ in range(nd):
            divs = [x for x in range(1, rest + 1) if rest % x == 0]
            x = rng.choice(divs + [1])
            s.append(x)
            rest //= x
        s.append(rest)
        rng.shuffle(s)
        if rng.random() < 0.2:
            s[rng.randrange(len(s))] = -1
        if numel == 1 and rng.random() < 0.3:
            return []
        return s

    def op_as_strided(self, p):
        rng = self.rng
        n = p.base.full.numel
        nd = rng.randint(0, 4)
        shape = [rng.choice([0, 1, 1, 2, 3]) for _ in range(nd)]
        strides = [rng.choice([0, 1, 2, 3, 5]) for _ in range(nd)]
        reach = sum((s - 1) * st for s, st in zip(shape, strides) if s > 0)
        empty = any(s == 0 for s in shape)
        hi = max(n - 1 - reach, 0) if not empty else n
        off = rng.randint(0, hi + (1 if rng.random() < 0.1 else 0))
        return self.view_op(p, "as_strided(%s, %s, %d)" % (shape, strides, off),
                            lambda: p.t.as_strided(shape, strides, off),
                            lambda: p.tt.as_strided(shape, strides, off))

    # -- copies ------------------------------------------------------------
    def copy_result(self, p, t, tt, copied, what):
        """A result that may be a view (copied False) or a fresh copy."""
        th_view = self.th_shares(tt, p.base) or (tt.numel() == 0 and tt.data_ptr() == p.tt.data_ptr()
                                                   and tt._base is not None)
        if bool(copied) == th_view:
            self.disagree("%s: copied flag" % opname(what),
                          "%s: stridemem copied=%s, torch %s" % (what, copied,
                                                                 "a view" if th_view else "a copy"))
        self.expect(bool(copied) != bool(t.same_storage(p.t)),
                    "%s: copied=%s but same_storage=%s" % (what, copied, t.same_storage(p.t)))
        if not copied:
            return self.adopt(t, tt, p.base, what)
        base = self.base_from_result(t, tt, what)
        return self.adopt(t, tt, base, what)

    def op_reshape(self, p):
        shape = self.shape_of(p.t.numel)
        what = "reshape(%s)" % (shape,)
        self.note(what)
        r, e1, tt, e2 = self.both(lambda: p.t.reshape(*shape, return_copied=True),
                                  lambda: p.tt.reshape(tuple(shape)))
        if not self.agree(what, e1, e2):
            return None
        t, copied = r
        self.expect(p.t.reshape_would_copy(*shape) == copied, "%s: reshape_would_copy" % what)
        return self.copy_result(p, t, tt, copied, what)

    def op_contiguous(self, p, fmt=None):
        fmt = fmt or self.rng.choice(["contiguous", "contiguous", "channels_last", "channels_last_3d"])
        what = "contiguous(%s)" % fmt
        self.note(what)
        r, e1, tt, e2 = self.both(lambda: p.t.contiguous(fmt, return_copied=True),
                                  lambda: p.tt.contiguous(memory_format=FORMATS[fmt]))
        if not self.agree(what, e1, e2):
            return None
        t, copied = r
        return self.copy_result(p, t, tt, copied, what)

    def op_clone(self, p):
        fmt = self.rng.choice(["preserve", "preserve", "contiguous", "channels_last", "channels_last_3d"])
        what = "clone(%s)" % fmt
        self.note(what)
        t, e1, tt, e2 = self.both(lambda: p.t.clone(fmt), lambda: p.tt.clone(memory_format=FORMATS[fmt]))
        if not self.agree(what, e1, e2):
            return None
        return self.copy_result(p, t, tt, True, what)

    def float_to_int_unsafe(self, p, dt):
        """float -> integer conversion of NaN/inf/out-of-range values is
        undefined in torch: such conversions are not compared."""
        if p.t.dtype not in FLOATS + COMPLEX or dt in FLOATS + COMPLEX or dt == "bool":
            return False
        x = bits_to_f64(np_bits(p.t.numpy(), p.t.dtype), p.t.dtype)
        if x.size == 0:
            return False
        info = np.iinfo(dt)
        lo, hi = (float(info.min), float(info.max)) if dt != "int64" else (-2.0 ** 62, 2.0 ** 62)
        return not (np.all(np.isfinite(x)) and np.all(np.trunc(x) >= lo) and np.all(np.trunc(x) <= hi))

    def conversion_explained(self, src_bits, src_dt, dt, g, w):
        """[torchdiff:single-rounding]: where values differ, ours is the
        single rounding of the f64 source and torch's the rounding through f32."""
        if src_dt not in ("float64", "complex128") or dt not in ("float16", "bfloat16") or \
                g.shape != w.shape:
            return False
        x = bits_to_f64(src_bits, "float64")
        if src_dt == "complex128":  # the real part, a float64, is what converts
            x = np.ascontiguousarray(x.reshape(-1, 2)[:, 0]).reshape(g.shape)
        once = single_rounding(x, dt)
        twice = th_bits(torch.from_numpy(x).to(self.tdev).to(torch.float32).to(TORCH_DT[dt]), dt)
        bad = g != w
        return bool(np.all(g[bad] == once[bad]) and np.all(w[bad] == twice[bad]))

    def op_to(self, p):
        dt = self.rng.choice(DTYPES)
        what = "to(%s)" % dt
        if self.float_to_int_unsafe(p, dt):
            return None
        self.note(what)
        r, e1, tt, e2 = self.both(lambda: p.t.to(dtype=dt, return_copied=True),
                                  lambda: p.tt.to(TORCH_DT[dt]))
        if not self.agree(what, e1, e2):
            return None
        t, copied = r
        g, w = np_bits(t.numpy(), dt), th_bits(tt, dt)
        if not same_bits(g, w, dt) and p.t.dtype in COMPLEX and dt == "bool" and \
                TH_COMPLEX_BOOL_REAL_ONLY.may_hold():
            # [torchdiff:complex-to-bool]: ours is NumPy's (either part nonzero);
            # where torch reads both parts too, the copies are compared as usual
            if np.array_equal(g.ravel(), p.t.numpy().astype(bool).ravel().view(np.uint8)) and \
                    np.array_equal(w.ravel(), (p.t.numpy().real != 0).ravel().view(np.uint8)):
                self.explained("complex-to-bool")
                return None  # not adopted: the two copies hold different values
        if not same_bits(g, w, dt):
            if self.conversion_explained(np_bits(p.t.numpy(), p.t.dtype), p.t.dtype, dt, g, w):
                self.explained("single-rounding")
                return None  # not adopted: the two copies hold different values
        return self.copy_result(p, t, tt, copied, what)

    def op_index_select(self, p):
        rng = self.rng
        d = self.rdim(p)
        nd = p.t.ndim
        size = p.t.shape[d] if -nd <= d < nd else 1
        k = rng.randint(0, 4)
        idx = [rng.randint(0, size - 1) if size else 0 for _ in range(k)]
        if rng.random() < 0.1 and k:
            idx[0] = rng.choice([size, -size - 1])
        neg = rng.random() < 0.15 and size > 0 and k
        if neg:
            idx[0] = rng.randint(-size, -1)
        idt = rng.choice(["int64", "int32"])
        what = "index_select(%d, %s %s)" % (d, idx, idt)
        self.note(what)
        it = sm.from_numpy(np.array(idx, dtype=idt), device=p.t.device)
        ti = torch.tensor(idx, dtype=TORCH_DT[idt], device=p.tt.device)
        if nd == 0 and k != 1:
            # torch 1.13 writes k elements into a 0-d result here (a heap
            # overflow); torch 2 refuses ("Index to scalar can have only 1
            # value"): the reference is the refusal, torch is not called
            try:
                r = p.t.index_select(d, it)
            except sm.StrideMemError:
                return None
            self.disagree("index_select on a 0-d tensor with %s indices: stridemem ok" % (
                "no" if k == 0 else "several"), "%s: stridemem gives shape %s, torch 2 refuses "
                "(torch 1.13 overflows its heap)" % (what, r.shape))
        th_sel = lambda: p.tt.index_select(d, ti)  # noqa: E731
        if p.tt.is_cuda and not all(0 <= i < size for i in idx):
            # torch's CUDA kernel checks indices with a device-side assert,
            # which ends the process's CUDA context: torch's CPU refusal of
            # the same call is the reference (torch 1.13 and 2 refuse them)
            device_note("index_select with an index outside [0, size): torch's CUDA kernel "
                        "asserts on the device; its CPU refusal is the reference")
            th_sel = lambda: p.tt.cpu().index_select(d, ti.cpu())  # noqa: E731
        t, e1, tt, e2 = self.both(lambda: p.t.index_select(d, it), th_sel)
        self.expect(e2 is not None or not p.tt.is_cuda or tt.is_cuda,
                    "%s: torch's CPU reference accepted an index the GPU was not given" % what)
        if neg and e1 is None and e2 is not None and all(-size <= i < size for i in idx):
            wrapped = torch.tensor([i % size for i in idx], dtype=TORCH_DT[idt], device=p.tt.device)
            tt = p.tt.index_select(d, wrapped)
            self.expect(same_bits(np_bits(t.numpy(), t.dtype), th_bits(tt, t.dtype), t.dtype),
                        "%s: values differ from torch's with the index wrapped" % what)
            self.explained("index-select-negative")
            return None
        if not self.agree(what, e1, e2):
            return None
        return self.copy_result(p, t, tt, True, what)

    # -- writes ------------------------------------------------------------
    def write(self, p, what, fsm, fth_on, tol, other=None, spec=None):
        """Runs an in-place write on both sides and compares everything.
        fth_on(x) does the op on the torch tensor x. spec describes the op
        for the explanations: op, kind ("scalar"/"tensor"), a, b (scalar
        operands, clamp bounds), alpha, to (torch's other), th(x, other)
        (the op on torch's x with another other)."""
        dt = p.t.dtype
        spec = spec or {}
        self.note(what)
        pre = np_bits(p.t.numpy(), dt)  # the destination before the write
        opre = np_bits(other.numpy(), other.dtype) if other is not None else None
        _, e1, _, e2 = self.both(fsm, lambda: fth_on(p.tt))
        if e2 is not None and "not implemented for" in str(e2) and dt in ("float16", "bfloat16") \
                and not p.tt.is_cuda:
            e2 = self.reduced_float_reference(p, fth_on, spec)
        if e1 is not None and e2 is None:
            if e1.status == sm.ERR_OVERLAP:
                # [torchdiff:overlap-exact]: torch writes where we refuse; the
                # refusal must be a real overlap.
                real = self_overlaps(p.t) or (other is not None and partial_overlap(p.t, other))
                self.expect(real, "%s: refused as overlapping, but nothing overlaps" % what)
                self.explained("overlap-exact")
                return self.torch_only_wrote()
            doc_id = self.refusal_explained(p, e1, spec, pre, opre)
            if doc_id:
                self.explained(doc_id)
                return self.torch_only_wrote()
        if e1 is None and e2 is not None:
            r = self.acceptance_explained(p, e2, spec, other)
            if r == "stop":
                return None
            if r is not None:
                e2 = r[0]
                for doc_id in r[1]:
                    self.explained(doc_id)
        self.agree(what, e1, e2)
        if e1 is None:
            self.compare_written(p, what, tol, spec, pre, opre, other)
        self.check_bases(what)
        self.check_pair(p, what)

    def torch_only_wrote(self):
        """A listed difference let torch write where we refused: torch's
        copies take our values, and the version counters' offsets move."""
        for b in self.bases:
            self.sync(b)
            b.vdelta = b.tfull._version - b.full.version

    def reduced_float_reference(self, p, fth_on, spec):
        """torch 1.13 has no CPU kernel for this op in float16: its reference
        is the op in float32, rounded back, after the checks torch makes
        before any kernel (clamp bounds must fit the dtype, as torch's
        bfloat16 clamp_ and every torch 2 clamp_ check). Returns torch's
        refusal or None."""
        dt = p.t.dtype
        if spec.get("op") == "clamp":
            for v in (spec.get("a"), spec.get("b")):
                if v is not None and not th_fits(dt, v):
                    return RuntimeError("value cannot be converted to type %s without overflow "
                                        "(torch's check of the clamp bound)" % dt)
        tmp = p.tt.float()
        fth_on(tmp)
        p.tt.copy_(tmp)
        return None

    def refusal_explained(self, p, e1, spec, pre, opre):
        """We refused, torch wrote: the id of the listed difference that
        explains it, checked (torch's result is the one the entry describes,
        ours is untouched), or None."""
        dt, op = p.t.dtype, spec.get("op")
        if e1.status != sm.ERR_DTYPE:
            return None
        if not same_bits(np_bits(p.t.numpy(), dt), pre, dt):
            self.fail("refused write changed the destination")
        got = th_bits(p.tt, dt)
        x = pre.ravel().astype(np.int64)
        if dt == "uint8" and spec.get("kind") == "scalar" and op in ("fill", "clamp"):
            # [torchdiff:unsigned-negative-scalars]
            mx = int(np.iinfo(dt).max)
            vals = [v for v in (spec.get("a"), spec.get("b") if op == "clamp" else None) if v is not None]
            if not all(np.isfinite(v) and v == int(v) and -mx <= v <= mx for v in vals) or \
                    not any(v < 0 for v in vals):
                return None
            if op == "fill":
                want = np.full(x.shape, wrap_int(vals[0], dt))
            else:
                want = x.copy()
                if spec.get("a") is not None:
                    want = np.maximum(want, wrap_int(spec["a"], dt))
                if spec.get("b") is not None:
                    want = np.minimum(want, wrap_int(spec["b"], dt))
            if not np.array_equal(got.ravel().astype(np.int64), want):
                return None
            return "unsigned-negative-scalars"
        if dt == "bool" and spec.get("kind") == "tensor" and op in ("add", "mul") and \
                spec["to"].dtype == torch.bool:
            # [torchdiff:bool-arithmetic]: torch's add_ is a logical or
            # (alpha != 0), its mul_ a logical and
            y = np.broadcast_to(opre.reshape(spec["to"].shape) != 0, p.t.shape).ravel()
            xb = x != 0
            want = (xb | (y & (spec.get("alpha", 1.0) != 0))) if op == "add" else (xb & y)
            if not np.array_equal(got.ravel() != 0, want):
                return None
            return "bool-arithmetic"
        return self.range_refusal_explained(p, spec, pre, opre, got)

    @staticmethod
    def range_refusal_explained(p, spec, pre, opre, got, v=None):
        """[torchdiff:float16-scalar-range], [torchdiff:int64-scalar-2-63]:
        we refused a scalar the dtype cannot hold where torch wrote; torch's
        result must be the one the entry describes, on the releases (and,
        for clamp_ and alpha, the CUDA side) it names. v: the torch release
        (default the installed one)."""
        dt, op, kind, a = p.t.dtype, spec.get("op"), spec.get("kind"), spec.get("a")
        g = got.ravel()
        if dt == "int64" and kind == "scalar" and op in ("add", "sub", "mul") and a == 2.0 ** 63 \
                and TH_INT64_TAKES_2_63.may_hold(v):
            ok = np.array_equal(g, int64_wrap_2_63(op, pre.ravel()))
            return "int64-scalar-2-63" if ok else None
        if dt != "float16":
            return None
        if kind == "scalar" and op == "fill" and f16_overflows(a) and TH_F16_FILL_TAKES_OVERFLOW.may_hold(v):
            want = np.full(g.shape, np.float16(np.float32(a))).view(np.uint16)  # through float32
            return "float16-scalar-range" if np.array_equal(g, want) else None
        if not p.tt.is_cuda or not TH_F16_CUDA_TAKES_FLOAT32_SCALARS.may_hold(v):
            return None
        b, alpha = spec.get("b"), spec.get("alpha")
        if kind == "scalar" and op == "clamp" and (f16_overflows(a) or f16_overflows(b)):
            ok = same_bits(g, f16_clamp_in_f32(pre, a, b), dt)
            return "float16-scalar-range" if ok else None
        to = spec.get("to")
        if kind == "tensor" and op in ("add", "sub") and f16_overflows(alpha) and \
                torch.promote_types(torch.float16, to.dtype) == torch.float16:
            odt = {v: k for k, v in TORCH_DT.items()}[to.dtype]
            y = np.broadcast_to(bits_to_f64(opre, odt).reshape(tuple(to.shape)), p.t.shape)
            want, scale = f16_axpy_in_f32(op, pre, y, alpha)
            # infinities and NaNs exactly (close_scaled takes any value near
            # an infinity), finite values within the add's rounding
            fin = np.isfinite(bits_to_f64(g, dt)) & np.isfinite(bits_to_f64(want, dt))
            ok = same_bits(g[~fin], want[~fin], dt) and close_scaled(g[fin], want[fin], dt, scale[fin])
            return "float16-scalar-range" if ok else None
        return None

    def acceptance_explained(self, p, e2, spec, other):
        """We wrote, torch refused: where a listed difference explains it,
        torch's reference result is made on its side (the write through a
        cloned other, the copy_ a FILL is, the 0-d other as a (1,) tensor)
        and (torch's new refusal or None, [ids]) is returned for the usual
        comparison; "stop" when the result cannot be compared; else None."""
        dt, op, msg = p.t.dtype, spec.get("op"), str(e2)
        to, th = spec.get("to"), spec.get("th")
        if op == "abs" and dt == "bool" and TH_ABS_BOOL_REFUSED.may_hold() and "Bool" in msg:
            # [torchdiff:abs-bool]: ours is the identity (NumPy's abs of bool);
            # torch's side gets the same write (its values stay, its version moves)
            p.tt.copy_(p.tt.clone())
            return None, ["abs-bool"]
        if other is None or to is None or th is None:
            return None
        ids = []
        if "refer to a single memory location" in msg:
            # [torchdiff:same-elements]: other addresses exactly our elements
            if not same_elements(p.t, other):
                return None
            to = to.clone()
            ids.append("same-elements")
            try:
                th(p.tt, to)
                return None, ids
            except TORCH_ERRORS as e:
                msg, e2 = str(e), e
        if "without overflow" not in msg:
            return None
        if op == "fill" and to.dim() == 0 and TH_FILL_TENSOR_REFUSES.may_hold():
            # [torchdiff:fill-tensor-converts]: our FILL converts as a copy
            if self.float_to_int_unsafe(Pair(other, to, None), dt):
                self.fail_stop(p)
                return "stop"
            p.tt.copy_(to)
            return None, ids + ["fill-tensor-converts"]
        if op in ("add", "sub") and to.dim() == 0 and p.tt.dim() > 0:
            # [torchdiff:alpha-promoted-type]: alpha is checked in
            # promote_types(t, other); torch checks it in result_type, where a
            # 0-d other does not promote a dimensioned t
            alpha = spec.get("alpha", 1.0)
            rt = torch.result_type(p.tt, to)
            pt = torch.promote_types(TORCH_DT[dt], to.dtype)
            name = {v: k for k, v in TORCH_DT.items()}
            if rt == pt or th_fits(name[rt], alpha, True) or not th_fits(name[pt], alpha, True):
                return None
            th(p.tt, to.reshape(1))  # a (1,) other promotes as ours does
            return None, ids + ["alpha-promoted-type"]
        return None

    def compare_written(self, p, what, tol, spec, pre, opre, other):
        """The written elements: bit-exact, except that a floating add, sub,
        mul, div, sqrt or exp may differ by a few ulps (of the result, or of
        the operands for add/sub), and a scalar op on f16/bf16 may differ as
        [torchdiff:single-rounding] says; either way torch's copy then takes
        ours. Elements outside the destination are compared by check_bases."""
        dt, b = p.t.dtype, p.base
        offs = dst_offsets(p.t)
        if offs.size == 0:
            return
        k = 2 if dt in COMPLEX else 1  # complex bits: two words an element
        gb, wb = np_bits(b.full.numpy(), dt), th_bits(b.tfull, dt)
        g, w = gb.reshape(-1, k)[offs].ravel(), wb.reshape(-1, k)[offs].ravel()
        if same_bits(g, w, dt):
            return
        op = spec.get("op")
        if dt in ("float16", "bfloat16") and spec.get("kind") == "scalar" and \
                (op == "fill" or (op in ("add", "sub", "mul", "div") and TH_SCALAR_TO_DTYPE.may_hold())):
            # (where torch keeps the arithmetic's scalar a float32, as ours,
            # those results are compared as any floating op's below)
            ours, theirs = scalar_op_models(op, dt, spec["a"], pre)
            if not same_bits(g, ours, dt):
                self.disagree("%s: not the single rounding" % opname(what),
                              "%s: stridemem %r, the single-rounding result %r"
                              % (what, g[:8], ours[:8]))
            bad = ~((g == w) | (np.isnan(bits_to_f64(g, dt)) & np.isnan(bits_to_f64(w, dt))))
            if same_bits(w[bad], theirs[bad], dt) and not same_bits(ours[bad], theirs[bad], dt):
                self.explained("single-rounding")
                self.sync(b)
            return
        if dt in COMPLEX and spec.get("kind") == "scalar" and \
                complex_scalar_numpy(op, dt, spec.get("a"), pre) is not None:
            ours = complex_scalar_numpy(op, dt, spec["a"], pre)
            near = np.repeat(magnitudes(ours, dt), 2)  # NumPy's division rounds differently
            if close_scaled(g, ours, dt, near) and not close_scaled(w, ours, dt, near):
                self.explained("complex-special-values")
                self.sync(b)
                return
        if dt in COMPLEX and op in ("exp", "sqrt", "neg", "div") and \
                self.complex_nonfinite_explained(op, dt, pre, g, w):
            self.explained("complex-special-values")
            self.sync(b)
            return
        if op == "relu" and dt in FLOATS and p.tt.is_cuda and \
                self.relu_negative_zero_explained(dt, pre.ravel(), g, w):
            self.explained("relu-negative-zero")
            self.sync(b)
            return
        if not tol or dt not in FLOATS + COMPLEX:
            return
        scale = np.zeros(offs.size)
        if dt in COMPLEX and op in ("mul", "div", "sqrt", "exp"):
            # A complex result's parts are accurate relative to its modulus
            # (exp's cos/sin: a part near zero is not relatively exact).
            scale = magnitudes(w, dt)
        if op in ("add", "sub"):
            x = magnitudes(pre, dt)
            alpha = abs(spec.get("alpha", 1.0))
            if spec.get("kind") == "tensor":
                y = magnitudes(opre, other.dtype).reshape(other.shape)
                y = np.broadcast_to(y, p.t.shape).ravel()
            else:
                y = abs(spec["a"])
            with np.errstate(all="ignore"):
                scale = x + alpha * y
        if close_scaled(g, w, dt, np.repeat(scale, k)):
            self.sync(b)
            return
        if dt in ("float16", "bfloat16") and spec.get("kind") == "tensor" and \
                self.other_rounding_explained(p, spec, pre, g, w, scale):
            self.explained("single-rounding")
            self.sync(b)

    @staticmethod
    def relu_negative_zero_explained(dt, pre, g, w):
        """[torchdiff:relu-negative-zero] on torch's GPU: every element that
        differs was -0.0, ours kept it and torch's is +0.0."""
        neg0 = 1 << (8 * ITEM[dt] - 1)
        bad = g != w
        return bool(bad.any() and (pre[bad] == neg0).all() and (g[bad] == neg0).all()
                    and (w[bad] == 0).all())

    @staticmethod
    def complex_nonfinite_explained(op, dt, pre, g, w):
        """[torchdiff:complex-special-values] for exp/sqrt/neg: the elements
        where ours and torch's bits differ beyond tolerance are all special
        cases where ours is NumPy's exactly and torch's is not: an input or
        a result with an infinite or NaN part (exp(inf + nan j), exp(800 +
        0j) = inf + 0j, x / (0 + 0j) = x's parts / 0: torch gives NaN
        parts), or a signed zero (-(0 + 0j) is -0 - 0j; torch's neg gives
        +0 parts)."""
        npc = NP_COMPLEX[dt]
        x = np.ascontiguousarray(pre).ravel().view(npc)
        with np.errstate(all="ignore"):
            ref = np.exp(x) if op == "exp" else np.sqrt(x) if op == "sqrt" else \
                x / npc(0) if op == "div" else -x  # div: the special elements' divisor is 0
        g2, w2 = g.reshape(-1, 2), w.reshape(-1, 2)
        r2 = np_bits(ref.astype(npc), dt).reshape(-1, 2)
        gv, wv = g2.ravel().view(npc), w2.ravel().view(npc)
        differ = np.array([not same_bits(g2[i], w2[i], dt) for i in range(len(x))], dtype=bool)
        if not differ.any():
            return False
        if op == "neg":
            special = differ & (gv == wv)  # equal values: only zero signs differ
        else:
            special = differ & ~(np.isfinite(x) & np.isfinite(gv) & np.isfinite(wv))
        if not special.any():
            return False
        if not same_bits(g2[special].ravel(), r2[special].ravel(), dt) or \
                same_bits(w2[special].ravel(), r2[special].ravel(), dt):
            return False
        rest = ~special
        scale = np.repeat(magnitudes(w2[rest].ravel(), dt), 2)
        return close_scaled(g2[rest].ravel(), w2[rest].ravel(), dt, scale)

    def other_rounding_explained(self, p, spec, pre, g, w, scale):
        """[torchdiff:single-rounding] for a tensor op on f16/bf16 where torch's
        result_type is that dtype (an integer other, a 0-d float one, the same
        dtype): torch rounds the other, alpha and (float16) alpha*other to the
        dtype before the float32 arithmetic (int64 2^40 is inf in float16, so
        -inf + 2^40 is NaN; inf - 2*65504 is NaN), ours converts them once to
        the compute type and rounds the result once. Checked: ours is torch's
        own op in float32 (float64 for a float64 other) on the unrounded
        operands, rounded once; torch's is that op on the rounded ones."""
        dt, to, op = p.t.dtype, spec["to"], spec.get("op")
        tdt = TORCH_DT[dt]
        x = to_torch_1d(pre.ravel() if dt == "bfloat16" else pre.ravel().view(np.float16),
                        dt, p.tt.device).view(tuple(p.t.shape))
        if op not in ("add", "sub", "mul", "div") or torch.result_type(x, to) != tdt:
            return False
        wide = torch.float64 if to.dtype == torch.float64 else torch.float32  # our compute type
        ref = x.to(wide)
        spec["th"](ref, to.to(wide))
        ours = th_bits(ref.to(tdt), dt).ravel()
        if not close_scaled(g, ours, dt, scale) or close_scaled(w, ours, dt, scale):
            return False
        xt, yt = x.float(), to.to(tdt).float()
        at = float(torch.tensor(spec.get("alpha", 1.0), dtype=torch.float32).to(tdt))
        if op in ("add", "sub"):
            prod = at * yt
            results = [xt + q if op == "add" else xt - q for q in (prod, prod.to(tdt).float())]
        else:
            results = [xt * yt if op == "mul" else xt / yt]
        return any(close_scaled(w, th_bits(r.to(tdt), dt).ravel(), dt, scale) for r in results)

    def scalar_value(self, dt):
        rng = self.rng
        r = rng.random()
        if dt == "bool":
            return rng.choice([0.0, 1.0, 2.0, -1.0, 0.5])
        if dt in INTS:
            info = np.iinfo(dt)
            if r < 0.7:
                return float(rng.randint(-5, 5))
            if r < 0.85:
                return float(rng.choice([info.max, info.min, info.max + 1, info.min - 1])) \
                    if dt != "int64" else float(rng.choice([2.0 ** 62, -2.0 ** 63, 2.0 ** 63]))
            return rng.choice([1.5, -0.5, float("nan"), float("inf")])
        if r < 0.7:
            return float(round(self.g.standard_normal() * 10, 3))
        return rng.choice(TRICKY + [0.0, -0.0, float("inf"), 1e30, 70000.0])

    def op_inplace_scalar(self, p):
        rng = self.rng
        dt = p.t.dtype
        op = rng.choice(["fill", "fill", "zero", "add", "sub", "mul", "div", "clamp", "relu",
                         "neg", "abs", "sqrt", "exp"])
        if dt in COMPLEX and op in ("clamp", "relu"):
            return None
        a = self.scalar_value(dt)
        b = self.scalar_value(dt)
        t, tt = p.t, p.tt
        pa = pyscalar(a, dt)
        if op == "fill":
            f, g = (lambda: t.fill_(a)), (lambda x: x.fill_(pa))
        elif op == "zero":
            f, g = t.zero_, (lambda x: x.zero_())
        elif op in ("add", "sub", "mul", "div"):
            f = lambda: getattr(t, op + "_")(a)  # noqa: E731
            g = lambda x: getattr(x, op + "_")(pa)  # noqa: E731
        elif op == "clamp":
            lo = a if rng.random() < 0.8 else None
            hi = b if rng.random() < 0.8 else None
            if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi) and lo > hi:
                lo, hi = hi, lo
            if (lo is None and hi is None) or (lo is not None and np.isnan(lo)) or \
                    (hi is not None and np.isnan(hi)):
                return None  # NaN bounds (None is NaN in the binding): [torchdiff:clamp-nan-bound]
            f = lambda: t.clamp_(lo, hi)  # noqa: E731
            g = lambda x: x.clamp_(pyscalar(lo, dt), pyscalar(hi, dt))  # noqa: E731
            a, b = lo, hi
        else:
            f, g = getattr(t, op + "_"), (lambda x: getattr(x, op + "_")())
        tol = op in ("add", "sub", "mul", "div", "sqrt", "exp")
        self.write(p, "%s_(%s%s) on %s" % (op, a, ", %s" % b if op == "clamp" else "", dt), f, g, tol,
                   spec={"op": op, "kind": "scalar", "a": a, "b": b})

    def make_other(self, p, device=None):
        """A tensor broadcastable to p (sometimes not), or a view of p's base;
        on p's device unless told."""
        rng = self.rng
        if rng.random() < 0.25 and device is None:
            cands = [q for q in self.pairs if q.base is p.base]
            q = rng.choice(cands)
            return q.t, q.tt, "a view %s strides %s offset %d" % (q.t.shape, q.t.strides, q.t.storage_offset)
        shape = list(p.t.shape)
        k = rng.randint(0, len(shape))
        oshape = [1 if rng.random() < 0.3 else n for n in shape[len(shape) - k:]]
        if rng.random() < 0.05 and shape and any(n > 1 for n in shape):
            oshape = [n + 1 for n in shape]
        odt = rng.choice(DTYPES) if rng.random() < 0.6 else p.t.dtype
        numel = int(np.prod(oshape)) if oshape else 1
        vals = rand_values(self.g, odt, numel)
        if odt in FLOATS and p.t.dtype in INTS:
            x = np.clip(np.nan_to_num(bits_to_f64(np_bits(np.asarray(vals), odt), odt)), -100, 100)
            vals = bf16_round(x) if odt == "bfloat16" else x.astype(odt)
        b = self.new_base(vals, odt, p.t.device if device is None else device)
        o, to = b.full.view(*oshape), b.tfull.view(tuple(oshape))
        if rng.random() < 0.3 and len(oshape) >= 2:
            o, to = o.transpose(0, -1), to.transpose(0, -1)
            o, to = o.transpose(0, -1), to.transpose(0, -1)
        return o, to, "%s %s" % (odt, tuple(oshape))

    def op_inplace_tensor(self, p):
        rng = self.rng
        dt = p.t.dtype
        op = rng.choice(["fill", "add", "sub", "mul", "div", "add", "sub"])
        o, to, desc = self.make_other(p)
        alpha = 1.0
        if op in ("add", "sub") and rng.random() < 0.4:
            alpha = rng.choice([2.0, -1.0, 0.5, 300.0, 1e10]) if dt != "bool" else rng.choice([1.0, 0.0, 2.0])
        t, tt = p.t, p.tt
        what = "%s_(tensor %s%s) on %s %s" % (op, desc, ", alpha=%s" % alpha if alpha != 1.0 else "",
                                            dt, t.shape)
        if op == "fill":
            if to.dim() != 0:
                return self.fill_broadcast(p, o, to, what)
            f, th = (lambda: t.fill_(o)), (lambda x, oth: x.fill_(oth))
        elif op in ("add", "sub"):
            f = lambda: getattr(t, op + "_")(o, alpha)  # noqa: E731
            th = lambda x, oth: getattr(x, op + "_")(oth, alpha=pyscalar(alpha, dt))  # noqa: E731
        else:
            f = lambda: getattr(t, op + "_")(o)  # noqa: E731
            th = lambda x, oth: getattr(x, op + "_")(oth)  # noqa: E731
        self.write(p, what, f, lambda x: th(x, to), op != "fill", other=o,
                   spec={"op": op, "kind": "tensor", "alpha": alpha, "to": to, "th": th})

    def fill_broadcast(self, p, o, to, what):
        """[torchdiff:fill-tensor-broadcast]: our FILL takes any broadcastable
        tensor, torch's fill_ only a 0-d one; ours must equal torch's copy_."""
        self.note(what)
        _, e2 = None, None
        try:
            p.tt.fill_(to)
        except TORCH_ERRORS as e:
            e2 = e
        self.expect(e2 is not None, "torch fill_ took a %d-d tensor: the doc is stale" % to.dim())
        try:
            p.t.fill_(o)
        except sm.StrideMemError:
            return  # refused like copy_into would be: compared by op_copy_into
        if self.float_to_int_unsafe(Pair(o, to, None), p.t.dtype):
            return self.fail_stop(p)
        if same_elements(p.t, o):
            to = to.clone()  # [torchdiff:same-elements]: torch's copy_ refuses them
            self.explained("same-elements")
        try:
            p.tt.copy_(to)
        except TORCH_ERRORS as e:
            self.disagree("fill_ (broadcast): stridemem ok, torch's copy_ refuses",
                          "%s: stridemem ok, torch's copy_ %s" % (what, terr(e)))
        self.explained("fill-tensor-broadcast")
        self.check_bases(what)
        self.check_pair(p, what)

    def fail_stop(self, p):
        for b in self.bases:
            self.sync(b)
            b.vdelta = b.tfull._version - b.full.version

    def other_device(self, p):
        """The device that is not p's: the GPU's for a CPU tensor (CUDA
        chains only)."""
        return sm.Device("cpu") if p.t.device.type != sm.DEVICE_CPU else sm.Device(self.device)

    def op_copy_into(self, p):
        across = not self.cpu and self.rng.random() < 0.3  # a source on the other device
        o, to, desc = self.make_other(p, self.other_device(p) if across else None)
        if self.float_to_int_unsafe(Pair(o, to, None), p.t.dtype):
            return None
        if across:
            desc += " on %s" % (o.device,)
        what = "copy_(%s) into %s %s" % (desc, p.t.dtype, p.t.shape)
        self.write(p, what, lambda: p.t.copy_(o), lambda x: x.copy_(to), False, other=o,
                   spec={"op": "copy", "kind": "tensor", "to": to, "th": lambda x, oth: x.copy_(oth)})

    def op_to_device(self, p):
        """CUDA chains: a copy to the other device (cpu <-> cuda) on both
        sides, laid out as the source (torch's preserve_format)."""
        if self.cpu:
            return None
        dev = self.other_device(p)
        what = "to(device=%s)" % (dev,)
        self.note(what)
        r, e1, tt, e2 = self.both(lambda: p.t.to(device=dev, return_copied=True),
                                  lambda: p.tt.to(th_device(dev)))
        if not self.agree(what, e1, e2):
            return None
        t, copied = r
        self.expect(t.device == dev and th_device(dev) == str(tt.device),
                    "%s: on %s, torch's on %s" % (what, t.device, tt.device))
        return self.copy_result(p, t, tt, copied, what)

    # -- DLPack --------------------------------------------------------------
    def op_dlpack(self, p):
        t, tt, dt = p.t, p.tt, p.t.dtype
        if self.rng.random() < 0.5:
            self.note("torch.from_dlpack(ours)")
            try:
                imp = torch.utils.dlpack.from_dlpack(t)
            except TORCH_ERRORS as e:
                self.expect(dt == "bool" and TH_REFUSES_BOOL_DLPACK.may_hold(),
                            "torch %s refused our %s export: %s" % (TORCH_V_TEXT, dt, e))
                self.explained("dlpack-bool")
                return None
            self.expect(dt != "bool" or TH_REFUSES_BOOL_DLPACK.state() is not True,
                        "torch %s took a bool DLPack tensor: [torchdiff:dlpack-bool] (%s) is stale"
                        % (TORCH_V_TEXT, TH_REFUSES_BOOL_DLPACK))
            self.expect(tuple(imp.shape) == t.shape and imp.dtype == TORCH_DT[dt],
                        "DLPack to torch: shape/dtype %s %s" % (tuple(imp.shape), imp.dtype))
            if t.numel:
                self.expect(imp.data_ptr() == t.data_ptr, "DLPack to torch: not zero copy")
                if tuple(imp.stride()) != t.strides:
                    self.disagree("dlpack to torch: strides", "DLPack to torch: strides %s, ours %s"
                                  % (tuple(imp.stride()), t.strides))
            self.expect(same_bits(th_bits(imp, dt), np_bits(t.numpy(), dt), dt), "DLPack to torch: values")
            if t.numel and not self_overlaps(t) and dt in FLOATS + INTS:
                imp.fill_(3)  # through torch's import into our memory ...
                tt.fill_(3)   # ... and the same on the mirror
                if imp.is_cuda:
                    torch.cuda.synchronize()  # torch's stream wrote our memory
                p.base.vdelta += 1
                self.check_bases("write through torch's DLPack import")
            del imp
            sm.dlpack_collect()
        else:
            self.note("sm.from_dlpack(torch)")
            try:
                imp = sm.from_dlpack(tt)
            except TORCH_ERRORS as e:
                self.expect(dt == "bool" and TH_REFUSES_BOOL_DLPACK.may_hold(),
                            "torch %s refused to export %s: %s" % (TORCH_V_TEXT, dt, e))
                self.explained("dlpack-bool")
                return None
            self.expect(dt != "bool" or TH_REFUSES_BOOL_DLPACK.state() is not True,
                        "torch %s exported bool: [torchdiff:dlpack-bool] (%s) is stale"
                        % (TORCH_V_TEXT, TH_REFUSES_BOOL_DLPACK))
            self.expect(imp.shape == t.shape and imp.dtype == dt, "DLPack from torch: shape/dtype")
            if t.numel:
                self.expect(imp.data_ptr == tt.data_ptr(), "DLPack from torch: not zero copy")
                # torch 1.13 exports stride 1 for size-1 dims: its own
                # re-import of its export is what ours must match
                want = tuple(torch.utils.dlpack.from_dlpack(tt.__dlpack__()).stride())
                if imp.strides != want:
                    self.disagree("dlpack from torch: strides", "DLPack from torch: strides %s, torch's "
                                  "re-import %s" % (imp.strides, want))
            self.expect(same_bits(np_bits(imp.numpy(), dt), th_bits(tt, dt), dt), "DLPack from torch: values")
            if t.numel and not self_overlaps(t):
                imp.fill_(1)  # through our import into torch's memory ...
                t.fill_(1)    # ... and the same on our side
                if not self.cpu:
                    sm.synchronize(imp.device)  # our stream wrote torch's memory
                p.base.vdelta -= 1
                self.check_bases("write through our DLPack import")
            imp.close()
        return None

    # -- the chain -----------------------------------------------------------
    VIEW_OPS = ["slice", "slice", "narrow", "select", "permute", "transpose", "movedim", "expand",
                "expand", "squeeze", "unsqueeze", "flatten", "unflatten", "unfold", "diagonal",
                "split", "chunk", "flip", "view", "view", "as_strided"]
    COPY_OPS = ["reshape", "reshape", "contiguous", "clone", "to", "index_select", "dlpack"]
    # CUDA chains also copy between the devices (the CPU chains draw the
    # same ops as before, so a seed still names the same chain)
    GPU_COPY_OPS = COPY_OPS + ["to_device", "to_device"]
    WRITE_OPS = ["inplace_scalar", "inplace_scalar", "inplace_tensor", "copy_into"]

    def run(self):
        p = self.start()
        for _ in range(self.rng.randint(2, 8)):
            r = self.rng.random()
            copies = self.COPY_OPS if self.cpu else self.GPU_COPY_OPS
            kind = self.VIEW_OPS if r < 0.55 else (copies if r < 0.72 else self.WRITE_OPS)
            name = self.rng.choice(kind)
            n_log = len(self.log)
            q = getattr(self, "op_" + name)(p)
            if len(self.log) > n_log:
                self.ops += 1
                OP_COUNTS[name] = OP_COUNTS.get(name, 0) + 1
            if q is not None:
                p = q if q.t.numel <= 400 else self.pairs[0]
        self.check_bases("end of chain")
        for q in self.pairs:
            self.check_pair(q, "end of chain")

    def close(self):
        for q in self.pairs:
            q.t.close()
        for b in self.bases:
            b.full.close()
        self.pairs, self.bases = [], []


# ----------------------------------------------------------------------------
# Creation: full and arange, every dtype, in and out of range
# ----------------------------------------------------------------------------

def creation_checks(res, device="cpu"):
    tdev = th_device(device)
    vals = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 127.0, 128.0, -129.0, 255.0, 256.0, 32768.0,
            2.0 ** 31, 2.0 ** 63, -2.0 ** 63, 65504.0, 65520.0, 1e300, float("inf"),
            float("nan")] + TRICKY
    for dt in DTYPES:
        for v in vals:
            what = "full((2,), %r, %s)" % (v, dt)
            r1 = e1 = e2 = r2 = None
            try:
                r1 = sm.full((2,), v, dt, device=device)
            except sm.StrideMemError as e:
                e1 = e
            try:
                # a value the dtype cannot hold: torch refuses it (RuntimeError,
                # or OverflowError for an int beyond int64 in torch 2), as
                # stridemem does (SM_ERR_DTYPE): both refuse, they agree
                r2 = torch.full((2,), pyscalar(v, dt), dtype=TORCH_DT[dt], device=tdev)
            except TORCH_ERRORS as e:
                e2 = e
            if e1 is not None and e1.status == sm.ERR_DTYPE and e2 is None and dt == "uint8" \
                    and v == int(v) and -255 <= v <= -1 \
                    and th_bits(r2, dt).tolist() == [wrap_int(v, dt)] * 2:
                EXPLAINED["unsigned-negative-scalars"] = EXPLAINED.get("unsigned-negative-scalars", 0) + 1
                res.ok()
                continue
            if (e1 is None) != (e2 is None):
                sig = "full: stridemem %s, torch %s" % (status_name(e1), "refuses" if e2 else "ok")
                note_unexplained(res, sig, "%s: stridemem %s, torch %s" % (what, status_name(e1), terr(e2)))
                continue
            if e1 is None:
                g, w = np_bits(r1.numpy(), dt), th_bits(r2, dt)
                if not same_bits(g, w, dt):
                    once = single_rounding(np.array([v, v]), dt) if dt in ("float16", "bfloat16") else None
                    if once is not None and np.array_equal(g, once):
                        EXPLAINED["single-rounding"] = EXPLAINED.get("single-rounding", 0) + 1
                        continue
                    note_unexplained(res, "full: values", "%s: %r, torch %r" % (what, g, w))
                    continue
            res.ok()
        for start, step, n in ((0.0, 1.0, 5), (-3.0, 2.0, 4), (250.0, 1.0, 10), (0.5, 1.0, 3),
                               (0.0, 0.1, 7), (100.0, 1.0, 30), (-2.0, 0.5, 6)):
            if dt == "bool":
                continue  # torch has no bool arange
            what = "arange(%r, %r, %d, %s)" % (start, step, n, dt)
            r1 = r2 = e1 = e2 = None
            try:
                r1 = sm.arange_n(start, step, n, dt, device=device)
            except sm.StrideMemError as e:
                e1 = e
            # the end that gives n values: torch's int64 arange converts the
            # end to int64 before counting, so integer dtypes get a whole end
            end = start + step * (n - 0.5)
            if dt in INTS and start == int(start) and step == int(step):
                end = start + step * n
            if dt == "int64" and int(step) == 0 and TH_ARANGE_STEP_ZERO_REFUSED.state() is not True:
                # torch 2.11's int64 arange divides by the truncated step: the
                # process dies of SIGFPE (seen on CPU and CUDA; 1.13 refuses
                # it). Ours is checked alone; the comparison is skipped.
                res.check(e1 is None and np.array_equal(
                    r1.numpy(), np.trunc(start + step * np.arange(n)).astype(np.int64)),
                    "%s: stridemem %s, not the truncated double sequence" % (what, status_name(e1)))
                res.skip("%s on torch %s" % (what, TORCH_V_TEXT), "torch's int64 arange with a step "
                         "that truncates to 0 dies of SIGFPE (torch 2.11; 1.13 refuses it)")
                continue
            try:
                r2 = torch.arange(pyscalar(start, dt), pyscalar(end, "float64"),
                                  pyscalar(step, dt), dtype=TORCH_DT[dt], device=tdev)
                if r2.numel() != n:
                    raise RuntimeError("the harness's end gave %d values, not %d" % (r2.numel(), n))
            except TORCH_ERRORS as e:
                r2, e2 = None, e
            if dt in COMPLEX and e1 is None and e2 is not None and "not implemented" in str(e2):
                # [torchdiff:arange-complex]: ours is NumPy's complex arange.
                want = (start + step * np.arange(n, dtype=np.float64)).astype(NP_COMPLEX[dt])
                if np.array_equal(r1.numpy(), want):  # (where torch has it, compared below)
                    EXPLAINED["arange-complex"] = EXPLAINED.get("arange-complex", 0) + 1
                    res.ok()
                    continue
            if dt in INTS and arange_explained(start, step, n, dt, r1, e1, r2, e2):
                EXPLAINED["arange-integer"] = EXPLAINED.get("arange-integer", 0) + 1
                res.ok()
                continue
            if (e1 is None) != (e2 is None):
                sig = "arange: stridemem %s, torch %s" % (status_name(e1), "refuses" if e2 else "ok")
                note_unexplained(res, sig, "%s: stridemem %s, torch %s" % (what, status_name(e1), terr(e2)))
                continue
            if e1 is None and not close_bits(np_bits(r1.numpy(), dt), th_bits(r2, dt), dt, ulps=1):
                note_unexplained(res, "arange: values", "%s: %r, torch %r" % (what, r1.numpy(), r2))
                continue
            res.ok()


def arange_explained(start, step, n, dt, r1, e1, r2, e2):
    """[torchdiff:arange-integer]: ours computes start + i*step in double and
    truncates once, refusing a value that does not fit; torch converts start
    and step to int64 first and wraps (a step that truncates to 0 is "step
    must be nonzero" in torch 1.13 and gives the start n times in torch
    2.11: TH_ARANGE_STEP_ZERO_*). True when both sides are what those rules
    give and they differ."""
    info = np.iinfo(dt)
    exact = [np.trunc(start + i * step) for i in range(n)]
    fits = all(info.min <= v <= info.max for v in exact)
    if fits:
        ours_ok = e1 is None and [int(v) for v in r1.numpy().tolist()] == [int(v) for v in exact]
    else:
        ours_ok = e1 is not None and e1.status == sm.ERR_DTYPE
    ist, isp = int(np.trunc(start)), int(np.trunc(step))
    if isp == 0 and e2 is not None:
        theirs_ok = "step must be nonzero" in str(e2) and TH_ARANGE_STEP_ZERO_REFUSED.may_hold()
        theirs = None
    elif isp == 0:
        theirs = [wrap_int(ist, dt)] * n
        theirs_ok = [int(v) for v in r2.tolist()] == theirs and TH_ARANGE_STEP_ZERO_REPEATS.may_hold()
    else:
        theirs = [wrap_int(ist + i * isp, dt) for i in range(n)]
        theirs_ok = e2 is None and [int(v) for v in r2.tolist()] == theirs
    differ = (not fits) or theirs is None or theirs != [int(v) for v in exact]
    return bool(ours_ok and theirs_ok and differ)


class _MadeUpPair(object):
    """What range_refusal_explained reads of a pair: t.dtype, t.shape and
    tt.is_cuda."""

    def __init__(self, dt, shape, cuda):
        self.t = type("T", (), {"dtype": dt, "shape": shape})()
        self.tt = type("TT", (), {"is_cuda": cuda})()


def check_range_classifier(res):
    """The chains' explanation of [torchdiff:float16-scalar-range] and
    [torchdiff:int64-scalar-2-63] on made-up torch results, whatever torch
    is installed (torch 1.13 never writes them): the result the entry
    describes is explained for torch 2.11 (clamp_ and alpha on CUDA only),
    one wrong element is not, and torch 1.13 gets no excuse for the claims
    it is known not to show."""
    explain = Chain.range_refusal_explained
    x = np.array([1, -3, 2 ** 62, -2 ** 63], dtype=np.int64)
    for op, f in (("add", lambda v: v + 2 ** 63), ("sub", lambda v: v - 2 ** 63), ("mul", lambda v: v * 2 ** 63)):
        want = np.array([wrap_int(f(int(v)), "int64") for v in x], dtype=np.int64).view(np.uint64)
        bad = want.copy()
        bad[1] ^= np.uint64(1)
        p, spec = _MadeUpPair("int64", x.shape, False), {"op": op, "kind": "scalar", "a": 2.0 ** 63}
        pre = x.view(np.uint64)
        res.check(explain(p, spec, pre, None, want, (2, 11)) == "int64-scalar-2-63" and
                  explain(p, spec, pre, None, bad, (2, 11)) is None and
                  explain(p, spec, pre, None, want, (1, 13)) is None and
                  explain(p, dict(spec, a=2.0 ** 62), pre, None, want, (2, 11)) is None,
                  "classifier: int64 %s_(2^63) explained wrongly" % op)
    h = np.array([-3.0, 0.05, 100.0, 65504.0, np.inf, np.nan], dtype=np.float16)
    inf16 = np.full(h.shape, np.inf, dtype=np.float16).view(np.uint16)
    for cuda in (False, True):
        p = _MadeUpPair("float16", h.shape, cuda)
        spec = {"op": "fill", "kind": "scalar", "a": 1e30, "b": None}
        res.check(explain(p, spec, h.view(np.uint16), None, inf16, (2, 11)) == "float16-scalar-range" and
                  explain(p, spec, h.view(np.uint16), None, inf16, (1, 13)) is None and
                  explain(p, dict(spec, a=-1e30), h.view(np.uint16), None, inf16, (2, 11)) is None,
                  "classifier: float16 fill_(1e30) explained wrongly (cuda=%s)" % cuda)
        clamped = np.array([0.1, 0.1, 100.0, 65504.0, np.inf, np.nan], dtype=np.float32).astype(np.float16)
        spec = {"op": "clamp", "kind": "scalar", "a": 0.1, "b": 70000.0}
        got = explain(p, spec, h.view(np.uint16), None, clamped.view(np.uint16), (2, 11))
        off = clamped.copy()
        off[4] = 65504.0
        res.check(got == ("float16-scalar-range" if cuda else None) and
                  explain(p, spec, h.view(np.uint16), None, off.view(np.uint16), (2, 11)) is None,
                  "classifier: float16 clamp_(0.1, 70000) on %s explained as %r" % (
                      "CUDA" if cuda else "the CPU", got))
        xs = np.array([1.0, -3.0, 0.5], dtype=np.float16)
        y = np.array([0.0, 2.0 ** -24, -1.0], dtype=np.float16)
        spec = {"op": "add", "kind": "tensor", "alpha": 1e10, "to": torch.from_numpy(y)}
        p = _MadeUpPair("float16", xs.shape, cuda)
        want = np.array([1.0, 593.0, -np.inf], dtype=np.float16).view(np.uint16)
        bad = np.array([1.0, 593.0, 65504.0], dtype=np.float16).view(np.uint16)
        got = explain(p, spec, xs.view(np.uint16), y.view(np.uint16), want, (2, 11))
        res.check(got == ("float16-scalar-range" if cuda else None) and
                  explain(p, spec, xs.view(np.uint16), y.view(np.uint16), bad, (2, 11)) is None and
                  explain(p, dict(spec, alpha=300.0), xs.view(np.uint16), y.view(np.uint16), want,
                          (2, 11)) is None,
                  "classifier: float16 add_(y, alpha=1e10) on %s explained as %r" % (
                      "CUDA" if cuda else "the CPU", got))


def note_unexplained(res, sig, text):
    e = UNEXPLAINED.setdefault(sig, [0, text])
    e[0] += 1
    res.fail(text)


def run_chains(res, first, count, device="cpu"):
    t0 = time.time()
    ok = ops = skipped = 0
    OP_COUNTS.clear()
    for i in range(count):
        seed = first + i
        c = Chain(seed, device)
        if TRACE:
            sys.stderr.write("chain %d\n" % seed)
            sys.stderr.flush()
        try:
            c.run()
            ok += 1
            res.passed += 1
        except Unsupported as e:  # listed at the end; the chain is not a pass
            u = UNSUPPORTED.setdefault(e.signature, [0, "seed %d: %s\n    chain: %s"
                                                     % (seed, e, " ; ".join(c.log))])
            u[0] += 1
            skipped += 1
            res.skipped += 1
        except Disagree as e:
            rep = "seed %d: %s\n    chain: %s" % (seed, e, " ; ".join(c.log))
            u = UNEXPLAINED.setdefault(e.signature, [0, rep])
            u[0] += 1
            res.failed += 1
            if u[0] == 1:
                res.report("DISAGREE " + rep)
        except Fail as e:
            res.failed += 1
            res.report("FAIL seed %d: %s\n    chain: %s" % (seed, e, " ; ".join(c.log)))
        except Exception:
            res.failed += 1
            res.report("FAIL seed %d: unexpected exception\n%s    chain: %s"
                       % (seed, traceback.format_exc(), " ; ".join(c.log)))
            if device != "cpu" and not gpu_alive(device):
                # a CUDA error that poisons the context (a device-side assert):
                # every later chain would fail the same way
                TORCH_ON_GPU_FAILED[0] = True
                res.fail("the GPU is no longer usable after seed %d: the %d chains left are "
                         "not run" % (seed, count - i - 1))
                break
        finally:
            ops += c.ops
            try:
                c.close()
            except Exception:
                pass
            if TRACE:
                import gc
                gc.collect()
    if TORCH_ON_GPU_FAILED[0]:
        return
    print("chains on %s: %d run (%d ops), %d agreed throughout, %d stopped at an op one side "
          "does not support there (skipped), in %.1f s"
          % (device, count, ops, ok, skipped, time.time() - t0))
    print("  ops run: %s" % ", ".join("%s %d" % kv for kv in sorted(OP_COUNTS.items())
                                      if not kv[0].startswith("refused")))
    print("  refused on both sides: %s" % ", ".join("%s %d" % (k[8:], v) for k, v in sorted(OP_COUNTS.items())
                                                    if k.startswith("refused")))


TORCH_ON_GPU_FAILED = [False]


def gpu_alive(device):
    """Whether both sides can still allocate and copy on the GPU."""
    try:
        t = sm.zeros(1, device=device)
        t.numpy()
        t.close()
        torch.zeros(1, device=th_device(device)).cpu()
        torch.cuda.synchronize()
        return True
    except Exception:
        return False


def gpu_unusable(device):
    """Why the CUDA chains cannot run on device (None: they can)."""
    if sm.Device(device).type != sm.DEVICE_CUDA:
        return "STRIDEMEM_TEST_DEVICE=%s is not a CUDA device" % device
    why = []
    mine = stridemem_gpu_unusable(sm, device)
    if mine:
        why.append("stridemem: %s" % mine)
    if not torch.cuda.is_available():
        why.append("torch %s: torch.cuda.is_available() is False (built with CUDA %s)"
                   % (torch.__version__, torch.version.cuda))
    elif sm.Device(device)[1] >= torch.cuda.device_count():
        why.append("torch sees %d GPUs, no %s" % (torch.cuda.device_count(), device))
    return "; ".join(why) or None


def main():
    res = Results("test_torch_differential")
    print("torch %s; dtypes: %s" % (torch.__version__, ", ".join(DTYPES)))
    for dt in DTYPES:
        why = _cannot_create(dt)
        res.check(why is None, "stridemem cannot create %s (%s): every dtype torch shares with "
                  "us is compared, none is dropped" % (dt, why))
    want = os.environ.get("STRIDEMEM_TEST_DEVICE", "").strip().lower()
    count = int(os.environ.get("STRIDEMEM_TORCH_CHAINS", "5000"))
    first = int(os.environ.get("STRIDEMEM_TORCH_SEED", "5000"))
    ids = check_documented_differences(res)
    Chain.DOCUMENTED = ids
    check_range_classifier(res)
    creation_checks(res)
    run_chains(res, first, count)
    gpu_skipped = False
    if want and want != "cpu":
        dev = want if ":" in want or not want.startswith("cuda") else "cuda:0"
        try:
            why = gpu_unusable(dev)
        except ValueError as e:  # not a device name
            why = str(e)
        if why is None:
            print("running on %s (%s), torch on %s" % (dev, torch.cuda.get_device_name(th_device(dev)),
                                                      th_device(dev)))
            creation_checks(res, dev)
            run_chains(res, first, count, dev)
        else:
            gpu_skipped = True
            print("*" * 78)
            print("no usable GPU: %s" % why)
            print("*" * 78)
            res.skip("creation checks and %d chains on %s" % (count, dev), "no usable GPU")
            res.skipped += count  # every chain, never a pass
    print("listed differences met by the chains: %s"
          % (", ".join("%s %d" % kv for kv in sorted(EXPLAINED.items())) or "none"))
    for doc_id, why in sorted(CUDA_UNCHECKED.items()):
        print("not checked in this run: [torchdiff:%s]'s claim about torch's CUDA side (%s)"
              % (doc_id, why))
    if NOT_APPLICABLE:
        print("claims about torch that do not apply to torch %s (neither passes nor failures; "
              "checked: torch behaves as stridemem or as another claim says):\n  %s"
              % (TORCH_V_TEXT, "\n  ".join(NOT_APPLICABLE)))
    if DEVICE_NOTES:
        print("not run on torch's GPU side (a reference instead):")
        for text, n in sorted(DEVICE_NOTES.items()):
            print("  %5d x %s" % (n, text))
    if UNSUPPORTED:
        print("NOT SUPPORTED ON THE GPU (%d kinds; each chain stopped there, counted as skipped):"
              % len(UNSUPPORTED))
        for sig, (n, rep) in sorted(UNSUPPORTED.items(), key=lambda kv: -kv[1][0]):
            print("  %5d x %s\n        first: %s" % (n, sig, rep.replace("\n", "\n        ")))
    if UNEXPLAINED:
        print("UNEXPLAINED DISAGREEMENTS (%d kinds; each fails the test):" % len(UNEXPLAINED))
        for sig, (n, rep) in sorted(UNEXPLAINED.items(), key=lambda kv: -kv[1][0]):
            print("  %5d x %s\n        first: %s" % (n, sig, rep.replace("\n", "\n        ")))
    rc = res.finish()
    if rc == 0 and gpu_skipped:
        return 77  # asked for the GPU and did not get one: skipped, not passed
    return rc


if __name__ == "__main__":
    sys.exit(main())
