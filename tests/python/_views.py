"""Random views of a given shape, built the same way over a NumPy array and a
stridemem tensor, for the MPI tests (test_mpi_datatypes.py, mpi_ranks.py).

A recipe describes a storage (a 1-D buffer) and the view ops that carve a
view of a chosen shape out of it: a reshape of a run of the buffer into a
base block, per-dimension slices with steps (negative ones written as a
negative-step slice or as a flip), an extra dimension selected away, a
permutation, and for send-side views an expand (a stride-0 dimension).
apply_np and apply_sm play the same recipe on a NumPy buffer and on a
stridemem tensor, so NumPy's view is the reference for stridemem's."""

import numpy as np

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "uint16", "uint32", "uint64", "complex64", "complex128"]


def np_dtype(dtype):
    """The NumPy dtype of the exchange (bfloat16 as its uint16 bits)."""
    return np.dtype("uint16" if dtype == "bfloat16" else dtype)


def random_shape(rng, max_ndim=4, max_size=4, allow_empty=True):
    ndim = int(rng.integers(0, max_ndim + 1))
    shape = [int(rng.integers(1, max_size + 1)) for _ in range(ndim)]
    if allow_empty and ndim and rng.random() < 0.08:
        shape[int(rng.integers(0, ndim))] = 0
    return tuple(shape)


def random_recipe(shape, rng, allow_expand=False):
    ndim = len(shape)
    perm = [int(p) for p in rng.permutation(ndim)]  # base dim j holds view dim perm[j]
    expand_dim = None
    if allow_expand and rng.random() < 0.4:
        big = [i for i, n in enumerate(shape) if n > 1]
        if big:
            expand_dim = int(rng.choice(big))
    dims = []  # per base dim j: (size in the base, start, step, negative, how)
    for j in range(ndim):
        i = perm[j]
        n = 1 if i == expand_dim else shape[i]
        step = int(rng.integers(1, 4))
        pad = int(rng.integers(0, 3))
        size = max(n - 1, 0) * step + 1 + pad if n else pad
        start = int(rng.integers(0, pad + 1)) if n else 0
        dims.append((size, start, step, n, bool(rng.random() < 0.4),
                     "flip" if rng.random() < 0.5 else "slice"))
    extra = None  # (position in the base, size, index): a dim selected away
    if rng.random() < 0.3:
        extra = (int(rng.integers(0, ndim + 1)), int(rng.integers(2, 4)), None)
        extra = (extra[0], extra[1], int(rng.integers(0, extra[1])))
    base = [d[0] for d in dims]
    if extra is not None:
        base.insert(extra[0], extra[1])
    block = int(np.prod(base)) if base else 1
    lead, tail = int(rng.integers(0, 4)), int(rng.integers(0, 4))
    return {"shape": tuple(shape), "perm": perm, "dims": dims, "extra": extra,
            "base": tuple(base), "lead": lead, "storage": lead + block + tail,
            "expand": expand_dim}


def _slices(r):
    out = []
    for size, start, step, n, neg, how in r["dims"]:
        if n == 0:
            out.append(slice(0, 0))
        elif neg and how == "slice":
            last = start + (n - 1) * step
            out.append(slice(last, start - 1 if start > 0 else None, -step))
        else:
            out.append(slice(start, start + (n - 1) * step + 1, step))
    return out


def _flips(r):
    return [j for j, d in enumerate(r["dims"]) if d[3] and d[4] and d[5] == "flip"]


def _axes(r):
    return [int(a) for a in np.argsort(r["perm"])] if r["perm"] else []


def apply_np(buf, r):
    """The recipe's view of the 1-D NumPy array buf (a view, never a copy)."""
    block = int(np.prod(r["base"])) if r["base"] else 1
    x = buf[r["lead"]:r["lead"] + block].reshape(r["base"])
    idx = list(_slices(r))
    if r["extra"] is not None:
        idx.insert(r["extra"][0], r["extra"][2])
    x = x[tuple(idx) + (Ellipsis,)]  # the Ellipsis keeps a 0-d result an array
    for j in _flips(r):
        x = np.flip(x, j)
    x = x.transpose(_axes(r)) if x.ndim else x
    if r["expand"] is not None:
        x = np.broadcast_to(x, r["shape"])
    assert x.shape == r["shape"], (x.shape, r)
    return x


def apply_sm(t, r):
    """The recipe's view of the 1-D stridemem tensor t."""
    block = int(np.prod(r["base"])) if r["base"] else 1
    x = t[r["lead"]:r["lead"] + block].view(r["base"])
    if r["extra"] is not None:
        pos, _, index = r["extra"]
        x = x.select(pos, index)
    if r["dims"]:
        x = x[tuple(_slices(r))]
    for j in _flips(r):
        x = x.flip(j)
    if x.ndim:
        x = x.permute(*_axes(r))
    if r["expand"] is not None:
        x = x.expand(*r["shape"])
    assert tuple(x.shape) == r["shape"], (x.shape, r)
    return x


def random_buffer(dtype, n, rng):
    """n random elements: random bits for every dtype but bool (0 or 1)."""
    nd = np_dtype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=n).astype(bool)
    raw = rng.integers(0, 256, size=n * nd.itemsize, dtype=np.uint8)
    return raw.view(nd).copy()


def to_sm(sm, arr, dtype):
    return sm.from_numpy(arr, dtype=dtype)


def bytes_of(a):
    """The bytes of a (any layout) in row-major order, to compare bit for bit."""
    return np.ascontiguousarray(a).view(np.uint8).tobytes()

