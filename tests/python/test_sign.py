"""sign_ (SM_OP_SIGN) against NumPy's np.sign and torch 1.13's sign_, for
every dtype, on the values where the three could differ (-0.0, NaN of both
signs, infinities, subnormals, the integer minimum, unsigned values with the
top bit set), written through views: contiguous, transposed, reversed
(negative strides) and a reversed, transposed step-2 slice. Elements outside
the view must keep their bits; the version moves once per call.

The contract (stridemem.h, SM_OP_SIGN): -1, 0 or +1 in the tensor's dtype;
both zeros give +0.0; a NaN stays NaN with its sign (float32/float64: its
bits; float16/bfloat16 store the quiet NaN of that sign); bool is the
identity; complex is refused naming sgn. NumPy agrees everywhere it has the
dtype (it has no bfloat16 and no sign for bool). torch agrees except on NaN,
where it gives 0 ([torchdiff:sign-nan] in docs/PYTORCH_DIFFERENCES.md); it
has no uint16/32/64 in 1.13.
"""

import sys

import numpy as np

from _util import Results, import_stridemem

sm = import_stridemem()

try:
    import torch
except ImportError:  # the NumPy half still runs
    torch = None

INTS = ["int8", "int16", "int32", "int64"]
UINTS = ["uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
TORCH_DT = {"bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16",
            "int32": "int32", "int64": "int64", "float16": "float16",
            "bfloat16": "bfloat16", "float32": "float32", "float64": "float64"}
BITS = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}


def f32_to_bf16_bits(x):
    """float32 values exactly representable in bfloat16 (the specials below
    are) -> bfloat16 bit patterns."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_bits_to_f32(b):
    return (np.asarray(b, np.uint16).astype(np.uint32) << 16).view(np.float32)


def values(dt, n):
    """n values of dt as the exchange array (bfloat16: bit patterns): the
    special ones first, then small random ones of both signs."""
    rng = np.random.RandomState(sum(map(ord, dt)))
    if dt == "bool":
        v = np.array([0, 1, 1, 0] * n, dtype=np.bool_)[:n]
        return v
    if dt in INTS:
        info = np.iinfo(dt)
        special = [info.min, info.min + 1, -1, 0, 1, info.max]
        rand = rng.randint(-100, 100, size=n)
        return np.concatenate([np.array(special, dt), rand.astype(dt)])[:n]
    if dt in UINTS:
        info = np.iinfo(dt)
        special = [0, 1, info.max, info.max // 2 + 1, info.max // 2]
        rand = rng.randint(0, 3, size=n)
        return np.concatenate([np.array(special, dt), rand.astype(dt)])[:n]
    if dt in COMPLEX:
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    ft = np.float32 if dt == "bfloat16" else np.dtype(dt).type
    tiny = np.finfo(np.float32).tiny if dt == "bfloat16" else np.finfo(ft).tiny
    sub = ft(tiny) / ft(4)  # a subnormal of the type
    big = np.finfo(np.float32).max if dt == "bfloat16" else np.finfo(ft).max
    special = [-2.5, -0.0, 0.0, 3.0, np.inf, -np.inf, np.nan, -np.nan, sub, -sub, big, -big]
    rand = np.round(rng.standard_normal(n) * 4) / 2  # zeros among them
    v = np.concatenate([np.array(special, ft), rand.astype(ft)])[:n]
    return f32_to_bf16_bits(v) if dt == "bfloat16" else v


def as_float(arr, dt):
    """Exchange array -> float values (bfloat16 bits to float32)."""
    return bf16_bits_to_f32(arr) if dt == "bfloat16" else arr


def numpy_sign(x, dt):
    """The reference: np.sign, with what it lacks filled in (bool: the
    identity, as torch; bfloat16: computed in float32, exact for -1/0/1)."""
    if dt == "bool":
        return x.copy()
    if dt == "bfloat16":
        return f32_to_bf16_bits(np.sign(bf16_bits_to_f32(x)))
    with np.errstate(all="ignore"):
        return np.sign(x).astype(x.dtype)


def same(got, want, dt):
    """Element-wise agreement: exact values; NaN as NaN of the same sign (16-bit
    floats store the quiet NaN of that sign, so only float32/float64 compare
    NaN bits, which stridemem keeps)."""
    if dt not in FLOATS:
        return np.array_equal(got, want)
    g, w = as_float(got, dt), as_float(want, dt)
    gb = np.asarray(got).view(BITS[dt])
    wb = np.asarray(want).view(BITS[dt])
    gn, wn = np.isnan(g), np.isnan(w)
    if not np.array_equal(gn, wn):
        return False
    if not np.array_equal(np.signbit(g[gn]), np.signbit(w[wn])):
        return False
    return np.array_equal(gb[~gn], wb[~wn])


def layouts(base_np):
    """(name, stridemem view maker, NumPy view maker) over a (4, 6) base."""
    return [
        ("contiguous", lambda t: t, lambda a: a),
        ("transposed", lambda t: t.transpose(0, 1), lambda a: a.T),
        ("reversed rows (negative stride)", lambda t: t.flip(0), lambda a: a[::-1]),
        ("base[::-1, ::2].T", lambda t: t.flip(0).slice(1, 0, 6, 2).transpose(0, 1),
         lambda a: a[::-1, ::2].T),
        ("reversed columns of a row", lambda t: t.select(0, 2).flip(0), lambda a: a[2, ::-1]),
    ]


def check_numpy(R, dt):
    v = values(dt, 24).reshape(4, 6)
    for name, smv, npv in layouts(v):
        t = sm.from_numpy(v, dtype=dt)
        view = smv(t)
        ver = t.version
        view.sign_()
        R.equal(t.version, ver + 1, "%s %s: one version bump" % (dt, name))
        want = v.copy()
        target = npv(want)
        target[...] = numpy_sign(npv(v), dt)
        got = t.numpy()
        R.check(same(got, want, dt),
                "%s through %s: sign_ gave %r, NumPy %r (outside the view: unchanged)"
                % (dt, name, got.ravel()[:12], want.ravel()[:12]))
        t.close()


def check_torch(R, dt):
    if torch is None:
        R.skip("torch %s" % dt, "torch is not installed")
        return
    if dt not in TORCH_DT:
        R.skip("torch %s" % dt, "torch %s has no %s" % (torch.__version__, dt))
        return
    v = values(dt, 24)
    t = sm.from_numpy(v, dtype=dt)
    t.sign_()
    got = t.numpy()
    if dt == "bfloat16":
        tt = torch.from_numpy(bf16_bits_to_f32(v)).to(torch.bfloat16)
    else:
        tt = torch.from_numpy(v.copy())
    tt.sign_()
    if dt == "bfloat16":
        want = f32_to_bf16_bits(tt.to(torch.float32).numpy())
    else:
        want = tt.numpy()
    if dt in FLOATS:
        x = as_float(v, dt)
        nan = np.isnan(x)
        # [torchdiff:sign-nan]: torch gives 0 for NaN; stridemem keeps the NaN.
        R.check(np.all(as_float(want, dt)[nan] == 0),
                "%s: torch %s no longer gives 0 for NaN: update [torchdiff:sign-nan]"
                % (dt, torch.__version__))
        R.check(np.all(np.isnan(as_float(got, dt))[nan]), "%s: sign_ of NaN is NaN" % dt)
        R.check(same(got[~nan], want[~nan], dt),
                "%s: sign_ %r, torch %r" % (dt, got[~nan], want[~nan]))
    else:
        R.check(np.array_equal(got, want), "%s: sign_ %r, torch %r" % (dt, got, want))


def check_complex(R, dt):
    v = values(dt, 6)
    t = sm.from_numpy(v)
    ver = t.version
    R.raises(sm.ERR_DTYPE, t.sign_, "sign_ on %s" % dt, mentions=("sgn", dt))
    R.check(np.array_equal(t.numpy(), v) and t.version == ver, "%s: refused, nothing written" % dt)
    if torch is not None:
        try:
            torch.from_numpy(v.copy()).sign_()
            R.fail("torch %s now takes sign_ on %s: revisit the refusal" % (torch.__version__, dt))
        except RuntimeError as e:
            R.check("sgn" in str(e), "torch's refusal names sgn: %s" % e)


def check_refusals(R):
    e = sm.from_numpy(np.array([-1.0], np.float32)).expand((4,))
    R.raises(sm.ERR_OVERLAP, e.sign_, "sign_ on an expanded view")
    R.equal(sm.OPS["sign"], 12, "OPS['sign'] is SM_OP_SIGN")


def main():
    R = Results("test_sign")
    for dt in ["bool"] + UINTS + INTS + FLOATS:
        R.run("numpy " + dt, check_numpy, R, dt)
        R.run("torch " + dt, check_torch, R, dt)
    for dt in COMPLEX:
        R.run("complex " + dt, check_complex, R, dt)
    R.run("refusals", check_refusals, R)
    sys.exit(R.finish())


if __name__ == "__main__":
    main()
