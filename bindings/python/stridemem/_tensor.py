"""The Tensor class (a strided view over a storage) and what it is built
on: _Owner (one reference to a C handle) and repr's formatting. Method groups
live beside it: indexing in _indexing.py, in-place arithmetic in _inplace.py,
the NumPy side in interop.py, DLPack in dlpack.py."""

from __future__ import annotations

import ctypes
import sys
from contextlib import closing as _closing
from typing import (Any, Dict, Iterator, List, Literal, NoReturn, Optional, Sequence, Tuple,
                    Union, overload)
from ctypes import byref, c_int, c_int32, c_int64, c_void_p

from ._capi import (ERR_INVALID_HANDLE, FORMATS, MAX_DIMS, SLICE_NONE, SmDevice,
                    StrideMemError, UnsupportedError, _T, _call, lib)
from .dtypes import DType, _DTYPE_OBJECTS, _dtype_code, _np, dtype_size
from .devices import Device, DeviceLike, _i32, _i64, _out, _shape_arg
from . import _indexing, _inplace as _inplace_ops, dlpack as _dlpack, interop as _interop


# --------------------------------------------------------------------------
# Tensor
# --------------------------------------------------------------------------


def _refuse_compare(kind: str, op: str) -> NoReturn:
    if kind == "Storage":
        how = ("a.id == b.id asks whether two Storage objects own the same storage; "
               "`a is b` whether they are one Python object")
    else:
        how = ("compare values with sm.equal(a, b) (same shape and elements), "
               "elementwise with numpy.asarray(a) %s numpy.asarray(b) or a.tolist() %s "
               "b.tolist(); a.same_storage(b) asks whether two views share memory, "
               "`a is b` whether they are one Python object" % (op, op))
    raise TypeError("stridemem: %s does not support %s (there is no elementwise comparison, "
                    "and comparing the Python objects would answer wrongly): %s"
                    % (kind, op, how))


class _Owner(object):
    """One reference to a C handle in ``_h`` (None once dropped): close()
    drops it now, the end of a ``with`` block or garbage collection later.
    Subclasses name their release function in ``_RELEASE``."""

    __slots__ = ()
    _RELEASE = ""
    _h: Optional[int]  # in each subclass's __slots__

    def close(self) -> None:
        """Drop this owner now; later calls raise SM_ERR_INVALID_HANDLE
        (:class:`InvalidHandleError`). Objects sharing the memory (views,
        tensors of a storage or stack) keep it alive."""
        h, self._h = self._h, None  # type: ignore[misc]  # _h is in the subclasses' slots
        if h:
            _call(self._RELEASE, h)

    release = close

    # The handles __del__ may still own: Tensor adds its pinned one.
    _OWNED: Tuple[str, ...] = ("_h",)

    def __del__(self, _lib: Any = lib) -> None:
        # Never raises, and binds the library as a default: at interpreter
        # exit module globals may already be None.
        for name in self._OWNED:
            h = getattr(self, name, None)
            if h and h is not True:
                setattr(self, name, None)
                try:
                    getattr(_lib, self._RELEASE)(h)
                except Exception:
                    pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Tensor(_Owner):
    """A strided view over a storage; owns one reference to a C handle."""

    # _h: the handle this object owns (None once closed). _pin: a handle
    # whose release waits for this object's death because NumPy or CuPy may
    # be reading its memory through __array_interface__ /
    # __cuda_array_interface__ (they keep this object, not the handle, alive).
    __slots__ = ("_h", "_pin", "__weakref__")
    _RELEASE = "sm_tensor_release"
    _OWNED = ("_h", "_pin")
    _pin: Any  # None, True (an array interface is out) or the handle to release

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("use stridemem.empty/zeros/tensor/from_numpy/... to make tensors")

    @classmethod
    def _wrap(cls, handle: Any) -> "Tensor":
        t = object.__new__(cls)
        t._h = handle.value if isinstance(handle, c_void_p) else handle
        t._pin = None
        return t

    # -- lifetime --------------------------------------------------------
    @property
    def handle(self) -> Optional[int]:
        """The raw sm_tensor handle (int) or None once closed."""
        return self._h

    def close(self) -> None:
        """Drop this owner now; later calls raise SM_ERR_INVALID_HANDLE
        (:class:`InvalidHandleError`). Memory that a NumPy array or CuPy
        array still reads through this object's array interface stays alive
        until that array is gone."""
        h, self._h = self._h, None
        if h:
            if self._pin is True:  # an array interface was handed out
                self._pin = h
                return
            _call(self._RELEASE, h)

    release = close

    def retain(self) -> "Tensor":
        """A second Python owner of the same handle (sm_tensor_retain)."""
        _call("sm_tensor_retain", self._h)
        return Tensor._wrap(self._h)

    # -- copy, deepcopy, pickle ----------------------------------------------
    def __copy__(self) -> "Tensor":
        """copy.copy: a new owner of the same view (no data copied)."""
        return self.retain()

    def __deepcopy__(self, memo: Dict[Any, Any]) -> "Tensor":
        """copy.deepcopy: new data. As in PyTorch, the whole storage is copied
        once per deepcopy call and every view of it copied in the same call
        views the one new storage, with the same shape, strides and offset
        (so `copy.deepcopy([a, a[1:]])` keeps the two sharing). A tensor
        carved from a stack of views has no storage of its own: it is
        cloned (memory_format preserve)."""
        try:
            storage = self.storage()
        except UnsupportedError:
            return self.clone("preserve")
        with _closing(storage):
            nbytes = storage.nbytes
            key: Tuple[Any, ...] = ("stridemem.storage", storage.data_ptr,
                                    tuple(storage.device), nbytes)
            if nbytes == 0 or key[1] == 0:
                key = ("stridemem.storage.empty", id(self))
            new = memo.get(key)
            if new is None:
                with _closing(storage.tensor((nbytes,), (1,), 0, "uint8")) as raw:
                    with _closing(raw.clone()) as fresh:
                        new = fresh.storage()
                memo[key] = new
        return new.tensor(self.shape, self.strides, self.storage_offset, self.dtype)

    def __reduce__(self) -> Tuple[Any, ...]:
        """pickle by value: dtype, shape, device and the data; the strides
        too when they are non-overlapping and dense (a permuted or
        channels-last tensor unpickles with the same strides), else
        row-major. Views pickle independently (no storage sharing)."""
        dense = self.clone("preserve")  # keeps non-overlapping dense strides
        host = dense if dense.device == "cpu" else dense.to("cpu")
        with _closing(host.storage()) as st:
            nbytes = st.nbytes
            data = ctypes.string_at(st.data_ptr, nbytes) if nbytes else b""
        return (_unpickle_tensor, (1, self.dtype.name, host.shape, host.strides,
                                   host.storage_offset, str(self.device), data))

    # -- metadata --------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dims (0 for a 0-d tensor)."""
        v = c_int32()
        _call("sm_ndim", self._h, byref(v))
        return v.value

    def dim(self) -> int:
        """Number of dims (PyTorch's spelling of ndim)."""
        return self.ndim

    @property
    def shape(self) -> Tuple[int, ...]:
        """The size of every dim, a tuple."""
        n = self.ndim
        buf = (c_int64 * max(n, 1))()
        _call("sm_shape", self._h, buf, max(n, 1))
        return tuple(buf[:n])

    @property
    def size(self) -> int:
        """The number of elements, an int, as NumPy's ``ndarray.size`` (the
        same as ``numel``). The dims are ``shape`` (PyTorch's ``t.size()``)."""
        return self.numel

    @property
    def strides(self) -> Tuple[int, ...]:
        """The stride of every dim in elements (NumPy's are in bytes)."""
        n = self.ndim
        buf = (c_int64 * max(n, 1))()
        _call("sm_strides", self._h, buf, max(n, 1))
        return tuple(buf[:n])

    @overload
    def stride(self, dim: None = None) -> Tuple[int, ...]: ...

    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim: Optional[int] = None) -> Union[int, Tuple[int, ...]]:
        """The strides tuple, or the stride of dim (in elements)."""
        return self.strides if dim is None else self.strides[dim]

    def _i64_prop(name: str, doc: str) -> property:  # type: ignore[misc]
        def get(self: "Tensor") -> int:
            v = c_int64()
            _call(name, self._h, byref(v))
            return v.value
        get.__doc__ = doc  # property() takes fget's docstring
        return property(get)

    storage_offset = _i64_prop("sm_storage_offset", "Where element [0, ..., 0] lies in the "
                               "storage, in elements.")
    numel = _i64_prop("sm_numel", "Number of elements (the product of the shape).")
    nbytes = _i64_prop("sm_nbytes", "numel * itemsize: the bytes this view addresses.")
    storage_nbytes = _i64_prop("sm_storage_nbytes", "Bytes of the whole storage this view "
                               "keeps alive (a slice keeps more than it addresses).")
    version = _i64_prop("sm_version_counter", "The storage's version counter, bumped by "
                        "every in-place write through any view of it (PyTorch's _version).")
    del _i64_prop

    @property
    def dtype(self) -> DType:
        """The element type, a :class:`DType` (a str equal to NumPy spellings)."""
        v = c_int32()
        _call("sm_dtype_of", self._h, byref(v))
        d = _DTYPE_OBJECTS.get(v.value)
        return d if d is not None else DType(v.value)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return dtype_size(self.dtype)

    @property
    def device(self) -> Device:
        """The :class:`Device` the data lives on."""
        d = SmDevice()
        _call("sm_device_of", self._h, byref(d))
        return Device(d)

    @property
    def data_ptr(self) -> int:
        """Address of element [0, ..., 0] (storage base + offset * itemsize);
        0 when there is no memory."""
        p = c_void_p()
        _call("sm_data_ptr", self._h, byref(p))
        return p.value or 0

    @property
    def is_read_only(self) -> bool:
        """True when the tensor refuses writes (an import of read-only memory)."""
        v = c_int()
        _call("sm_is_read_only", self._h, byref(v))
        return bool(v.value)

    def is_contiguous(self, memory_format: str = "contiguous") -> bool:
        """True when dense in memory_format: "contiguous" (row-major),
        "channels_last", "channels_last_3d", or "preserve" (dense in some
        order, non-overlapping). A size-1 dim's stride never matters."""
        v = c_int()
        _call("sm_is_contiguous", self._h, FORMATS[memory_format], byref(v))
        return bool(v.value)

    def same_storage(self, other: "Tensor") -> bool:
        """True when other views the same storage."""
        v = c_int()
        _call("sm_same_storage", self._h, other._h, byref(v))
        return bool(v.value)

    def storage(self) -> "Storage":
        """A new owner of the storage this tensor views (no copy).
        UnsupportedError for a tensor carved from a stack of views."""
        out = _out()
        _call("sm_tensor_storage", self._h, byref(out))
        return Storage._wrap(out)

    # -- sharing with other processes (docs/SCALE_OUT.md) -------------------
    def share_memory_(self) -> "Tensor":
        """PyTorch's share_memory_(): moves this tensor's CPU storage into
        shared memory once (one copy; every view of it follows); a no-op when
        it is already shared and for CUDA tensors. Then pickling it through
        multiprocessing passes a file descriptor, not the bytes. Refused
        (UnsupportedError) for stack tensors (use Stack(..., shared=True)),
        memory stridemem does not own (from_numpy_blob, DLPack imports: use
        empty_shared and copy) and storages with a live DLPack export.
        Arrays taken before (np.asarray(t), data_ptr) point to freed memory
        afterwards: share first, then hand the memory out."""
        _call("sm_share_memory", self._h)
        return self

    def is_shared(self) -> bool:
        """True when this tensor's storage can go to another process as it
        is: shared CPU memory, or CUDA memory (through CUDA IPC)."""
        v = c_int()
        _call("sm_is_shared", self._h, byref(v))
        return bool(v.value)

    def _export(self) -> Tuple[bytes, int]:
        """(descriptor bytes, fd) of this tensor's shared storage, stack
        buffers included (Storage.export says the rest)."""
        return _export_shared("sm_tensor_export", self._h)

    @property
    def storage_id(self) -> int:
        """The id of the storage this tensor views (Storage.id): the
        ``storage`` of its block in memory_snapshot(). UnsupportedError for a
        tensor carved from a stack of views."""
        with self.storage() as s:
            return s.id

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        for i in range(len(self)):
            yield self.select(0, i)

    @property
    def is_view(self) -> bool:
        """True when this tensor does not see its storage as a fresh tensor
        would: a nonzero offset, strides other than row-major, or a storage
        larger than its elements (a slice, a permutation, an expansion...)."""
        return (self.storage_offset != 0 or not self.is_contiguous()
                or self.nbytes != self.storage_nbytes)

    def __repr__(self) -> str:
        """The values as NumPy prints them (abbreviated past NumPy's print
        threshold, without copying more than the printed edges to the host),
        then dtype, device, strides, and for views the offset and storage
        size. bfloat16 values print as floats."""
        if not self._h:
            return "<stridemem.Tensor (closed)>"
        try:
            shape, numel = self.shape, self.numel
        except StrideMemError as e:  # a repr never raises
            if e.status == ERR_INVALID_HANDLE and "Stack.pop_to()" in e.message:
                return ("<stridemem.Tensor (invalid: its stack region was popped by "
                        "Stack.pop_to(); only close() accepts it now)>")
            return "<stridemem.Tensor (invalid: %s)>" % (e.message,)
        try:
            body = _format_values(self, "tensor(")
        except Exception as e:  # never let a repr fail: show the metadata
            body = "tensor(<values unavailable: %s>" % (e,)
        meta = []
        if numel == 0 and len(shape) != 1:
            meta.append("shape=%s" % (shape,))
        meta += ["dtype=%s" % self.dtype.name, "device=%s" % (self.device,),
                 "strides=%s" % (self.strides,)]
        if self.is_view:
            meta.append("offset=%d, view of a %d-byte storage"
                        % (self.storage_offset, self.storage_nbytes))
        return "%s, %s)" % (body, ", ".join(meta))

    __str__ = __repr__

    # -- Python scalars -------------------------------------------------------
    def _one(self, what: str) -> Any:
        if self.numel != 1:
            raise TypeError("stridemem: only a one-element tensor converts to a Python "
                            "%s (this one has %d elements)" % (what, self.numel))
        return self.item()

    def __float__(self) -> float:
        return float(self._one("float"))

    def __int__(self) -> int:
        return int(self._one("int"))

    def __complex__(self) -> complex:
        return complex(self._one("complex"))

    def __bool__(self) -> bool:
        n = self.numel
        if n != 1:
            raise ValueError("stridemem: the truth value of a tensor with %d elements is "
                             "ambiguous (use a reduction on a NumPy copy)" % n)
        return bool(self.item())

    # -- comparisons ----------------------------------------------------------
    # The C library has no elementwise comparison, and Python's default ==
    # compares identity: a == a[:] and t == 1 would answer False, silently
    # and wrongly. They raise instead, saying how to compare. Hashing stays
    # by identity, so tensors still serve as dict keys and set members, and
    # `t in [t]` holds (containment checks identity before ==).
    def __eq__(self, other: object) -> bool:
        _refuse_compare("Tensor", "==")

    def __ne__(self, other: object) -> bool:
        _refuse_compare("Tensor", "!=")

    def __lt__(self, other: object) -> bool:
        _refuse_compare("Tensor", "<")

    def __le__(self, other: object) -> bool:
        _refuse_compare("Tensor", "<=")

    def __gt__(self, other: object) -> bool:
        _refuse_compare("Tensor", ">")

    def __ge__(self, other: object) -> bool:
        _refuse_compare("Tensor", ">=")

    __hash__ = _Owner.__hash__

    # -- views -----------------------------------------------------------
    def _unary(self, name, *args):
        out = _out()
        _call(name, self._h, *(args + (byref(out),)))
        return Tensor._wrap(out)

    def view(self, *shape: Any) -> "Tensor":
        """The same data with a new shape (one -1 inferred): a view, never a
        copy; ShapeError when the strides cannot express it (reshape copies)."""
        a, n = _i64(_shape_arg(shape))
        return self._unary("sm_view", a, n)

    def as_strided(self, shape: Sequence[int], strides: Sequence[int],
                   storage_offset: Optional[int] = None) -> "Tensor":
        """A view with any shape, strides (in elements) and absolute storage
        offset (None: this tensor's); every element reached must lie inside
        the storage."""
        if storage_offset is None:
            storage_offset = self.storage_offset
        sh, n = _i64(shape)
        st, m = _i64(strides)
        if n != m:
            raise ValueError("stridemem: shape and strides differ in length")
        return self._unary("sm_as_strided", sh, st, n, int(storage_offset))

    def slice(self, dim: int, start: Optional[int] = None, stop: Optional[int] = None,
              step: Optional[int] = 1) -> "Tensor":
        """t[start:stop:step] along dim with Python's rules (None bounds,
        negative indices, clamping, negative steps); a view."""
        start = SLICE_NONE if start is None else int(start)
        stop = SLICE_NONE if stop is None else int(stop)
        step = 1 if step is None else int(step)
        return self._unary("sm_slice", int(dim), start, stop, step)

    def narrow(self, dim: int, start: int, length: int) -> "Tensor":
        """Elements [start, start + length) of dim, not clamped (torch.narrow);
        a view."""
        return self._unary("sm_narrow", int(dim), int(start), int(length))

    def select(self, dim: int, index: int) -> "Tensor":
        """The elements at index along dim, which is removed; a view."""
        return self._unary("sm_select", int(dim), int(index))

    def permute(self, *dims: Any) -> "Tensor":
        """The dims reordered: permute(2, 0, 1) or permute((2, 0, 1)); a view."""
        a, n = _i32(_shape_arg(dims))
        return self._unary("sm_permute", a, n)

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        """dim0 and dim1 swapped; a view."""
        return self._unary("sm_transpose", int(dim0), int(dim1))

    @property
    def T(self) -> "Tensor":
        """All dims reversed (NumPy's .T); a view."""
        return self.permute(*range(self.ndim - 1, -1, -1))

    def movedim(self, source: Union[int, Sequence[int]],
                destination: Union[int, Sequence[int]]) -> "Tensor":
        """The dims at source moved to the positions destination (ints or
        sequences), the others kept in order; a view."""
        if isinstance(source, int):
            source = (source,)
        if isinstance(destination, int):
            destination = (destination,)
        s, n = _i32(source)
        d, m = _i32(destination)
        if n != m:
            raise ValueError("stridemem: movedim source and destination differ in length")
        return self._unary("sm_movedim", s, d, n)

    def expand(self, *shape: Any) -> "Tensor":
        """Broadcast to shape (-1 keeps a size, new leading dims allowed);
        expanded dims get stride 0; a view."""
        a, n = _i64(_shape_arg(shape))
        return self._unary("sm_expand", a, n)

    def squeeze(self, dims: Union[int, Sequence[int], None] = None) -> "Tensor":
        """The size-1 dims among dims (an int or a sequence; None: every
        size-1 dim) removed, the others left; a view."""
        if dims is None:
            return self._unary("sm_squeeze", None, 0)
        if isinstance(dims, int):
            dims = (dims,)
        a, n = _i32(dims)
        return self._unary("sm_squeeze", a, n)

    def unsqueeze(self, dim: int) -> "Tensor":
        """A new size-1 dim at dim; a view."""
        return self._unary("sm_unsqueeze", int(dim))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        """Dims start_dim..end_dim merged into one: a view, or ShapeError when
        the strides do not allow it (reshape copies)."""
        return self._unary("sm_flatten", int(start_dim), int(end_dim))

    def unflatten(self, dim: int, sizes: Sequence[int]) -> "Tensor":
        """dim split into sizes (one -1 inferred); always a view."""
        a, n = _i64(sizes)
        return self._unary("sm_unflatten", int(dim), a, n)

    def unfold(self, dim: int, size: int, step: int) -> "Tensor":
        """Every window of size elements, step apart, along dim: dim becomes the
        window count and a last dim of size is added; a view (windows may
        overlap)."""
        return self._unary("sm_unfold", int(dim), int(size), int(step))

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> "Tensor":
        """The diagonal of dim1 and dim2 (offset > 0 above, < 0 below), which
        are removed, as the last dim; a view."""
        return self._unary("sm_diagonal", int(offset), int(dim1), int(dim2))

    def _multi(self, name, arg, dim):
        count = c_int32()
        _call(name, self._h, arg, int(dim), None, 0, byref(count))
        n = count.value
        outs = (_T * max(n, 1))()
        _call(name, self._h, arg, int(dim), outs, max(n, 1), byref(count))
        return [Tensor._wrap(outs[i]) for i in range(count.value)]

    def split(self, split_size: int, dim: int = 0) -> List["Tensor"]:
        """Views of split_size elements along dim (the last may be smaller)."""
        return self._multi("sm_split", int(split_size), dim)

    def chunk(self, chunks: int, dim: int = 0) -> List["Tensor"]:
        """Views of ceil(size / chunks) elements along dim, possibly fewer than
        chunks of them (torch.chunk)."""
        return self._multi("sm_chunk", int(chunks), dim)

    def flip(self, dims: Union[int, Sequence[int]]) -> "Tensor":
        """The listed dims reversed: a view with negative strides (NumPy's
        flip; PyTorch's copies)."""
        if isinstance(dims, int):
            dims = (dims,)
        a, n = _i32(dims)
        return self._unary("sm_flip", a, n)

    # -- indexing (_indexing.py) -------------------------------------------
    __getitem__ = _indexing.__getitem__
    _basic_index = _indexing._basic_index
    _advanced_index = _indexing._advanced_index
    __setitem__ = _indexing.__setitem__

    # -- copies ----------------------------------------------------------
    def reshape_would_copy(self, *shape: Any) -> bool:
        """True when reshape(*shape) would have to copy (the strides cannot
        express the shape)."""
        a, n = _i64(_shape_arg(shape))
        v = c_int()
        _call("sm_reshape_would_copy", self._h, a, n, byref(v))
        return bool(v.value)

    def _maybe_copy(self, name, args, return_copied):
        """Calls name(self, *args, &out, &copied): the tensor, or
        (tensor, copied) with return_copied=True."""
        out, copied = _out(), c_int(-1)
        _call(name, self._h, *(args + (byref(out), byref(copied))))
        t = Tensor._wrap(out)
        return (t, bool(copied.value)) if return_copied else t

    # return_copied changes the return type: typing.overload tells a type
    # checker which one a call gets, so t.reshape(6).numel type-checks.
    @overload
    def reshape(self, *shape: Any, return_copied: Literal[False] = False) -> "Tensor": ...

    @overload
    def reshape(self, *shape: Any, return_copied: Literal[True]) -> Tuple["Tensor", bool]: ...

    @overload
    def reshape(self, *shape: Any,
                return_copied: bool) -> Union["Tensor", Tuple["Tensor", bool]]: ...

    def reshape(self, *shape: Any,
                return_copied: bool = False) -> Union["Tensor", Tuple["Tensor", bool]]:
        """A view when the strides allow, else a row-major copy. With
        return_copied=True returns (tensor, copied)."""
        a, n = _i64(_shape_arg(shape))
        return self._maybe_copy("sm_reshape", (a, n), return_copied)

    @overload
    def contiguous(self, memory_format: str = "contiguous",
                   return_copied: Literal[False] = False) -> "Tensor": ...

    @overload
    def contiguous(self, memory_format: str, return_copied: Literal[True]
                   ) -> Tuple["Tensor", bool]: ...

    @overload
    def contiguous(self, memory_format: str = "contiguous", *,
                   return_copied: Literal[True]) -> Tuple["Tensor", bool]: ...

    @overload
    def contiguous(self, memory_format: str = "contiguous", return_copied: bool = False
                   ) -> Union["Tensor", Tuple["Tensor", bool]]: ...

    def contiguous(self, memory_format: str = "contiguous", return_copied: bool = False
                   ) -> Union["Tensor", Tuple["Tensor", bool]]:
        """A new handle to the same data when already dense in memory_format
        ("contiguous", "channels_last", "channels_last_3d"), else a copy in
        it. With return_copied=True returns (tensor, copied)."""
        return self._maybe_copy("sm_contiguous", (FORMATS[memory_format],), return_copied)

    def clone(self, memory_format: str = "preserve") -> "Tensor":
        """Always a copy. "preserve" keeps the strides of a non-overlapping
        dense tensor (any other gets dense strides in its stride order);
        "contiguous", "channels_last", "channels_last_3d" lay it out so."""
        return self._unary("sm_clone", FORMATS[memory_format])

    @overload
    def to(self, device: Optional[DeviceLike] = None, dtype: Any = None,
           return_copied: Literal[False] = False) -> "Tensor": ...

    @overload
    def to(self, device: Optional[DeviceLike], dtype: Any,
           return_copied: Literal[True]) -> Tuple["Tensor", bool]: ...

    @overload
    def to(self, device: Optional[DeviceLike] = None, dtype: Any = None, *,
           return_copied: Literal[True]) -> Tuple["Tensor", bool]: ...

    @overload
    def to(self, device: Optional[DeviceLike] = None, dtype: Any = None,
           return_copied: bool = False) -> Union["Tensor", Tuple["Tensor", bool]]: ...

    def to(self, device: Optional[DeviceLike] = None, dtype: Any = None,
           return_copied: bool = False) -> Union["Tensor", Tuple["Tensor", bool]]:
        """On device and/or with dtype: a new handle to the same data when
        neither changes, else a copy. With return_copied=True returns
        (tensor, copied)."""
        dev = self.device if device is None else Device(device)
        code = _dtype_code(self.dtype if dtype is None else dtype)
        return self._maybe_copy("sm_to", (dev.c(), code), return_copied)

    def cpu(self) -> "Tensor":
        """to("cpu"): a new handle to the same data when already on the CPU,
        else a copy."""
        return self.to("cpu")

    def copy_(self, src: Any) -> "Tensor":
        """self[...] = src (broadcast, dtype-converted). Returns self."""
        if not isinstance(src, Tensor):
            src = _to_tensor(src, self.dtype)
        _call("sm_copy_into", self._h, src._h)
        return self

    def index_select(self, dim: int, index: Any) -> "Tensor":
        """A copy of the elements at index (a 1-d integer tensor or sequence;
        negative values count from the end) along dim."""
        if not isinstance(index, Tensor):
            idx = list(index)
            index = _from_list(idx, "int64", self.device)
        return self._unary("sm_index_select", int(dim), index._h)

    # -- in-place (_inplace.py) --------------------------------------------
    _inplace = _inplace_ops._inplace
    fill_ = _inplace_ops.fill_
    zero_ = _inplace_ops.zero_
    add_ = _inplace_ops.add_
    sub_ = _inplace_ops.sub_
    _scaled = staticmethod(_inplace_ops._scaled)
    mul_ = _inplace_ops.mul_
    div_ = _inplace_ops.div_
    clamp_ = _inplace_ops.clamp_
    relu_ = _inplace_ops.relu_
    neg_ = _inplace_ops.neg_
    abs_ = _inplace_ops.abs_
    sqrt_ = _inplace_ops.sqrt_
    exp_ = _inplace_ops.exp_
    sign_ = _inplace_ops.sign_
    __iadd__ = _inplace_ops.__iadd__
    __isub__ = _inplace_ops.__isub__
    __imul__ = _inplace_ops.__imul__
    __itruediv__ = _inplace_ops.__itruediv__

    # -- host exchange (interop.py) ----------------------------------------
    numpy = _interop.numpy
    _stack_carved = _interop._stack_carved
    _interface = _interop._interface
    __array_interface__ = property(_interop.__array_interface__)
    __cuda_array_interface__ = property(_interop.__cuda_array_interface__)
    _exported_interface = _interop._exported_interface
    __array__ = _interop.__array__
    tolist = _interop.tolist
    item = _interop.item

    def record_stream(self, stream: int) -> None:
        """Marks the storage as used on a CUDA stream (its cudaStream_t as an
        int): its memory is not reused until the work queued there so far
        has finished."""
        _call("sm_record_stream", self._h, c_void_p(stream))

    # -- DLPack (dlpack.py) ------------------------------------------------
    __dlpack_device__ = _dlpack.__dlpack_device__
    __dlpack__ = _dlpack.__dlpack__
    _dlpack_refusal = _dlpack._dlpack_refusal


# --------------------------------------------------------------------------
# repr: NumPy's formatting of the values, fetching only the printed edges
# --------------------------------------------------------------------------


def _edge_view(t: Tensor, edge: int) -> Tuple[Tensor, List[int]]:
    """A view of t keeping, in every dim longer than 2*edge, only the first
    and last `edge` indices: that dim becomes two dims (2, edge) with
    strides (stride * (size - edge), stride). Returns the view and the dims
    of t that were split (those whose middle NumPy elides). Dims past the
    16-dim limit stay whole."""
    shape, strides = t.shape, t.strides
    new_shape: List[int] = []
    new_strides: List[int] = []
    split: List[int] = []
    for d, (n, st) in enumerate(zip(shape, strides)):
        if n > 2 * edge and len(shape) + len(split) < MAX_DIMS:
            new_shape += [2, edge]
            new_strides += [st * (n - edge), st]
            split.append(d)
        else:
            new_shape.append(n)
            new_strides.append(st)
    return t.as_strided(new_shape, new_strides, t.storage_offset), split


def _format_values(t: Tensor, prefix: str) -> str:
    """NumPy's array2string of t's values (np.get_printoptions honoured).
    Past the print threshold only the edges NumPy prints are copied to the
    host; a dummy element stands in for each elided middle, which NumPy
    never prints nor uses to choose the number format."""
    if _np is None:
        return prefix + "<install NumPy to print values>"
    opts = _np.get_printoptions()
    edge, numel = max(int(opts["edgeitems"]), 1), t.numel
    summarize = numel > opts["threshold"]
    split: List[int] = []
    src = t
    if summarize:
        src, split = _edge_view(t, edge)
    # NumPy has no bfloat16: print its values as float32. to() is a new
    # handle, no copy, when a CPU tensor keeps its dtype.
    with _closing(src.to("cpu", "float32" if t.dtype == "bfloat16" else None)) as h:
        arr = h.numpy()
    if src is not t:
        src.close()
    if split:
        # Each split dim d (two axes (2, edge); the splits before it are
        # merged back already, so they start at axis d) becomes 2*edge+1
        # long: the first edge, one dummy, the last edge.
        for axis in split:
            merged = arr.reshape(arr.shape[:axis] + (2 * edge,) + arr.shape[axis + 2:])
            dummy = _np.take(merged, [0], axis=axis)
            arr = _np.concatenate([_np.take(merged, range(edge), axis=axis), dummy,
                                   _np.take(merged, range(edge, 2 * edge), axis=axis)],
                                  axis=axis)
        threshold = 0  # the reduced array is small: make NumPy elide anyway
    else:
        threshold = sys.maxsize if not summarize else opts["threshold"]
    if arr.size == 0:
        return prefix + "[]"
    return prefix + _np.array2string(arr, separator=", ", prefix=prefix,
                                     threshold=threshold, edgeitems=edge)


# Tensor's methods call these; they import this module for the class.
from .storage import Storage, _export_shared, _unpickle_tensor  # noqa: E402
from .creation import _from_list, _to_tensor  # noqa: E402
