"""stridemem tensors through MPI (mpi4py), zero copy, views included.

Two ways to hand a tensor to an mpi4py buffer call (``Send``, ``Recv``,
``Isend``, ``Irecv``, ``Sendrecv``, ``Bcast``, ``Allreduce``, ...):

* **The tensor itself**, ``comm.Send(t, dest)`` / ``comm.Recv(t, source)``:
  mpi4py (3.1 and later) takes any object with ``__dlpack__`` as a buffer,
  so a CPU tensor that is contiguous goes straight from (and into) its own
  memory. mpi4py refuses a view that is not contiguous (``BufferError``), and
  it sends a Fortran-ordered view (a transpose) in *memory* order, as it does
  for NumPy arrays. mpi4py 3.1 has no MPI type for float16 (``KeyError:
  'e'``), and sends bfloat16 as bytes.
* **message(t)**, ``comm.Send(message(t), dest)`` /
  ``comm.Recv(message(t, recv=True), source)``: any view (strided, permuted,
  negative strides, expanded, at any storage offset) travels in place, in
  the row-major order of its index, described by an MPI derived datatype, so
  nothing is packed by hand and the receiver may hold the data in another
  layout. A view that is one dense row-major run becomes a plain
  ``[buffer, n, basic type]`` message, so reductions (``Allreduce``) work on
  it; Open MPI refuses reductions over derived datatypes (``MPI_ERR_OP``).

mpi4py is imported only when a function here needs it: ``import stridemem``
and ``import stridemem.mpi`` work without it, and importing this module does
not initialize MPI.

Element types: each dtype travels as the MPI type of its bits: bool as
``MPI.C_BOOL`` (one byte), float16 and bfloat16 as ``MPI.UINT16_T`` (MPI has
no 16-bit float: the bits arrive exactly, but an arithmetic reduction of them
is meaningless), complex64/complex128 as ``MPI.C_FLOAT_COMPLEX`` /
``MPI.C_DOUBLE_COMPLEX``, the others as the C type of the same width.

Writes made by MPI into a tensor do not bump the storage's version counter
(as writes through NumPy's ``__array_interface__`` do not).
"""

from __future__ import annotations

import ctypes
import itertools
from typing import Any, List, Optional, Tuple

import stridemem as _sm

__all__ = ["message", "datatype", "mpi_type", "layout", "check_receivable"]

# MPI counts are C ints.
_INT_MAX = 2 ** 31 - 1

# The predefined MPI type of each dtype's bits (attribute names of mpi4py.MPI).
_MPI_TYPE_NAMES = {
    "bool": "C_BOOL", "uint8": "UINT8_T", "int8": "INT8_T", "int16": "INT16_T",
    "int32": "INT32_T", "int64": "INT64_T", "float16": "UINT16_T", "bfloat16": "UINT16_T",
    "float32": "FLOAT", "float64": "DOUBLE", "uint16": "UINT16_T", "uint32": "UINT32_T",
    "uint64": "UINT64_T", "complex64": "C_FLOAT_COMPLEX", "complex128": "C_DOUBLE_COMPLEX",
}

# Overlap of a layout that the cheap rule cannot settle is decided by listing
# its element offsets, up to this many elements (NumPy: 32 MiB of int64; pure
# Python: a set), else the receive is refused as unprovable.
_EXACT_OVERLAP_LIMIT_NUMPY = 1 << 22
_EXACT_OVERLAP_LIMIT_PYTHON = 1 << 16


def _mpi() -> Any:
    """mpi4py.MPI, imported on first use (importing it initializes MPI)."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("stridemem.mpi needs mpi4py (Debian: apt install python3-mpi4py; "
                          "or pip install mpi4py): %s" % e) from e
    return MPI


def mpi_type(dtype: Any) -> Any:
    """The predefined MPI datatype that carries one element of `dtype` (any
    spelling stridemem takes): see the module's docstring for the table.
    Raises NotImplementedError when this MPI lacks it or its size differs
    from the element's."""
    name = _sm.dtype_name(dtype)
    MPI = _mpi()
    t = getattr(MPI, _MPI_TYPE_NAMES[name], None)
    size = _sm.dtype_size(name)
    if t is None or t == MPI.DATATYPE_NULL or t.Get_size() != size:
        raise NotImplementedError("stridemem.mpi: this MPI has no %d-byte type MPI_%s for %s"
                                  % (size, _MPI_TYPE_NAMES[name], name))
    return t


def layout(t: _sm.Tensor) -> Tuple[Tuple[int, int], ...]:
    """The walk over t's elements that its datatype describes: (size, stride)
    pairs in elements, outermost first, in the row-major order of t's index.
    Size-1 dims are dropped (they move no element) and a dim is merged into
    the next inner one when its stride is the inner size times the inner
    stride (negative strides included), so a dense row-major tensor is one
    pair (numel, 1) and a flipped one (numel, -1). A tensor without elements
    is ((0, 1),); a 0-d tensor is ()."""
    return _coalesce(t.shape, t.strides)


def _coalesce(shape, strides):
    if any(n == 0 for n in shape):
        return ((0, 1),)
    dims: List[List[int]] = []
    for n, s in zip(shape, strides):
        if n == 1:
            continue
        if dims and dims[-1][1] == n * s:
            dims[-1] = [dims[-1][0] * n, s]
        else:
            dims.append([n, s])
    return tuple((n, s) for n, s in dims)


def _overlaps(dims) -> Optional[bool]:
    """Whether two indices of a coalesced layout reach the same element:
    True, False, or None when it could not be decided. Stride 0 overlaps;
    sorted by |stride|, a layout where each stride passes the span of the
    smaller ones cannot overlap; otherwise the offsets are listed."""
    dims = [(n, s) for n, s in dims if n > 1]
    if any(s == 0 for _, s in dims):
        return True
    span = 0
    disjoint = True
    for n, s in sorted(dims, key=lambda d: abs(d[1])):
        if abs(s) <= span:
            disjoint = False
            break
        span += abs(s) * (n - 1)
    if disjoint:
        return False
    numel = 1
    for n, _ in dims:
        numel *= n
    np = _sm._np
    if np is not None and numel <= _EXACT_OVERLAP_LIMIT_NUMPY:
        offs = np.zeros(1, dtype=np.int64)
        for n, s in dims:
            offs = (offs[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).ravel()
        return int(np.unique(offs).size) != numel
    if numel <= _EXACT_OVERLAP_LIMIT_PYTHON:
        seen = set()
        for idx in itertools.product(*(range(n) for n, _ in dims)):
            off = sum(i * s for i, (_, s) in zip(idx, dims))
            if off in seen:
                return True
            seen.add(off)
        return False
    return None


def _check_host(t, what):
    dev = t.device
    if dev[0] not in (_sm.DEVICE_CPU, _sm.DEVICE_CUDA_HOST):
        raise _sm.error_for(_sm.ERR_DEVICE, "the tensor is on %s; MPI reads and writes host "
                            "memory here (copy with t.to('cpu'), or use torch.distributed with "
                            "NCCL for GPU tensors)" % (dev,), what)


def check_receivable(t: _sm.Tensor) -> None:
    """Raises unless MPI may write into t: a read-only tensor
    (ReadOnlyError), a view whose elements overlap, such as an expanded
    (stride 0) view or overlapping unfold windows (OverlapError: MPI forbids
    a receive buffer that names one byte twice), a layout too large to prove
    disjoint (OverlapError), a tensor not in host memory (DeviceError).
    Nothing is written."""
    what = "stridemem.mpi receive"
    _check_host(t, what)
    if t.is_read_only:
        raise _sm.error_for(_sm.ERR_READ_ONLY, "the tensor is read-only", what)
    verdict = _overlaps(layout(t))
    if verdict is None:
        raise _sm.error_for(_sm.ERR_OVERLAP, "shape %s with strides %s is too large to prove "
                            "that no element is reached twice; receive into a contiguous "
                            "tensor and copy_ it" % (t.shape, t.strides), what)
    if verdict:
        raise _sm.error_for(_sm.ERR_OVERLAP, "shape %s with strides %s reaches some elements "
                            "more than once (an expanded or overlapping view): it can be sent, "
                            "not received into" % (t.shape, t.strides), what)


def _count(n, t):
    if n > _INT_MAX:
        raise OverflowError("stridemem.mpi: a run of %d elements (shape %s) is more than an MPI "
                            "count holds (2**31 - 1); send the tensor in parts" % (n, t.shape))
    return n


def _hvector(MPI, inner, n, stride):
    """The types that build n `inner`s at byte stride `stride`, the result
    last. Open MPI 4.1 walks an hvector of byte stride -1 upwards (a flipped
    uint8, int8 or bool run arrives in memory order, not reversed), so that
    one stride is built from pairs (0, -1) at stride -2, plus the odd last
    element."""
    if stride != -1 or n < 2:
        return [inner.Create_hvector(n, 1, stride)]
    made = [inner.Create_hindexed_block(1, [0, -1])]
    made.append(made[-1].Create_hvector(n // 2, 1, -2))
    if n % 2:
        made.append(MPI.Datatype.Create_struct([1, 1], [0, -(n - 1)], [made[-1], inner]))
    return made


def _build(MPI, base, itemsize, dims, disp, extent, t):
    """A committed derived datatype: the coalesced walk `dims` built from
    the inside out (a contiguous run for a stride-1 innermost dim, an
    hvector per other dim: byte strides of any sign, 0 included; see
    _hvector), placed at byte displacement `disp` by an hindexed of one
    block, then resized to lower bound 0 and the given extent. Intermediate
    types are freed (MPI keeps what the result needs)."""
    made = []
    try:
        cur = base
        for i, (n, s) in enumerate(reversed(dims)):
            n = _count(n, t)
            if i == 0 and s == 1:
                cur = cur.Create_contiguous(n)
                made.append(cur)
            else:
                made += _hvector(MPI, cur, n, s * itemsize)
                cur = made[-1]
        if disp:
            cur = cur.Create_hindexed([1], [disp])
            made.append(cur)
        cur = cur.Create_resized(0, extent)
        cur.Commit()
    finally:
        for m in made:
            m.Free()
    return cur


def _storage_span(t):
    """(address of the storage's first byte, storage size in bytes, byte
    offset of element [0, ..., 0] in it). A tensor carved from a stack of
    views counts the stack's buffer as its storage."""
    item = t.itemsize
    off = t.storage_offset * item
    return t.data_ptr - off, t.storage_nbytes, off


def datatype(t: _sm.Tensor, recv: bool = False) -> Any:
    """A new committed MPI datatype (mpi4py ``Datatype``) for t's elements,
    in the row-major order of t's index: coalesced dims (layout(t)), nested
    hvectors over the element type mpi_type(t.dtype), byte strides of any
    sign, the storage offset as the displacement of element [0, ..., 0].
    Displacements count from the first byte of t's storage
    (``t.data_ptr - t.storage_offset * t.itemsize``); lower bound 0 and
    extent ``t.storage_nbytes``, so ``[storage bytes, 1, datatype(t)]`` is
    the message. The caller owns it (``Free()`` it). recv=True first checks
    check_receivable(t). A tensor without elements gives a committed type
    of size 0."""
    if recv:
        check_receivable(t)
    else:
        _check_host(t, "stridemem.mpi.datatype")
    MPI = _mpi()
    base = mpi_type(t.dtype)
    dims = layout(t)
    if dims == ((0, 1),):
        dt = base.Create_contiguous(0)
        dt.Commit()
        return dt
    _, nbytes, off = _storage_span(t)
    return _build(MPI, base, t.itemsize, dims, off, nbytes, t)


class _Keep(object):
    """What a message's buffer keeps alive: a second owner of the tensor's
    handle and the message's own derived datatype, freed when the buffer
    dies (after the caller and any request that used it have dropped it)."""

    __slots__ = ("owner", "datatype")

    def __init__(self, owner, dt):
        self.owner, self.datatype = owner, dt

    def __del__(self):
        dt, self.datatype = self.datatype, None
        if dt is None:
            return
        try:
            MPI = _mpi()
            if not MPI.Is_finalized():
                dt.Free()
        except Exception:  # interpreter shutdown: MPI_Finalize frees it anyway
            pass


def _buffer(t, address, nbytes, writable, dt=None):
    """A buffer object over [address, address + nbytes) for mpi4py that
    keeps t's memory (and dt) alive for as long as mpi4py, a pending
    request or the caller holds it: a ctypes array holding a second owner
    of t's handle, so even t.close() before a request completes cannot free
    the memory. A send buffer is a read-only memoryview of it, so passing a
    send message to a receive fails (mpi4py asks for a writable buffer)
    instead of writing through an unchecked view."""
    if nbytes == 0:
        return bytearray() if writable else b""
    arr = (ctypes.c_char * nbytes).from_address(address)
    arr._stridemem_keep = _Keep(t.retain(), dt)
    view = memoryview(arr)
    return view if writable else view.toreadonly()


def message(t: _sm.Tensor, recv: bool = False) -> List[Any]:
    """An mpi4py buffer specification ``[buffer, count, datatype]`` for t,
    to pass where mpi4py takes a buffer (``comm.Send(message(t), 1)``,
    ``comm.Irecv(message(t, recv=True), 0)``, ``Sendrecv``, ``Bcast``, ...).
    Zero copy: MPI reads (or writes) t's own memory, element by element in
    the row-major order of t's index. A view that is one dense row-major run
    (layout(t) is one (n, 1) pair) gives ``[its bytes, n, mpi_type]`` (fine
    for reductions); any other layout gives ``[its storage's bytes, 1,
    datatype]`` with a derived datatype as datatype() builds it, owned by
    the buffer: it is freed when the buffer is garbage (so keep the list, not
    the datatype alone, to send it again).

    recv=True: a receive buffer; check_receivable(t) runs first (stride-0,
    overlapping, read-only and device tensors are refused, nothing written).
    Without it the buffer is read-only, so mpi4py refuses it as a receive
    buffer. The buffer holds a second owner of t's handle until the caller
    and mpi4py drop it (a pending request holds it), so the memory outlives
    t.close(). A tensor carved from a stack of views may be
    sent or received: keep its region pushed until the request completes."""
    if recv:
        check_receivable(t)
    else:
        _check_host(t, "stridemem.mpi.message")
    MPI = _mpi()
    base = mpi_type(t.dtype)
    dims = layout(t)
    item = t.itemsize
    if dims == ((0, 1),):
        return [_buffer(t, 0, 0, recv), 0, base]
    if dims == () or (len(dims) == 1 and dims[0][1] == 1):
        n = dims[0][0] if dims else 1
        return [_buffer(t, t.data_ptr, n * item, recv), _count(n, t), base]
    address, nbytes, off = _storage_span(t)
    dt = _build(MPI, base, item, dims, off, nbytes, t)
    try:
        buf = _buffer(t, address, nbytes, recv, dt)
    except BaseException:
        dt.Free()
        raise
    return [buf, 1, dt]