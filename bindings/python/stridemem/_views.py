"""A tensor's views and copies: the _Views mixin over _TensorHandle
(view, as_strided, slice, select, permute, ... flip; reshape, contiguous,
clone, to, copy_, index_select). Every result is built with ``self._new``,
so a :class:`Tensor`'s results are Tensors."""

from __future__ import annotations

from typing import Any, List, Literal, Optional, Sequence, Tuple, TypeVar, Union, overload
from ctypes import byref, c_int, c_int32

from ._capi import FORMATS, SLICE_NONE, _T, _call
from .dtypes import _dtype_code
from .devices import Device, DeviceLike, _i32, _i64, _out, _shape_arg
from ._handle import _TensorHandle
from ._from_host import _copy_source_handle, _list_handle

_V = TypeVar("_V", bound="_Views")


class _Views(_TensorHandle):
    """Views (sharing the storage) and copies of a tensor."""

    __slots__ = ()

    # -- views -----------------------------------------------------------
    def _unary(self, name, *args):
        out = _out()
        _call(name, self._h, *(args + (byref(out),)))
        return self._new(out)

    def view(self: _V, *shape: Any) -> _V:
        """The same data with a new shape (one -1 inferred): a view, never a
        copy; ShapeError when the strides cannot express it (reshape copies)."""
        a, n = _i64(_shape_arg(shape))
        return self._unary("sm_view", a, n)

    def as_strided(self: _V, shape: Sequence[int], strides: Sequence[int],
                   storage_offset: Optional[int] = None) -> _V:
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

    def slice(self: _V, dim: int, start: Optional[int] = None, stop: Optional[int] = None,
              step: Optional[int] = 1) -> _V:
        """t[start:stop:step] along dim with Python's rules (None bounds,
        negative indices, clamping, negative steps); a view."""
        start = SLICE_NONE if start is None else int(start)
        stop = SLICE_NONE if stop is None else int(stop)
        step = 1 if step is None else int(step)
        return self._unary("sm_slice", int(dim), start, stop, step)

    def narrow(self: _V, dim: int, start: int, length: int) -> _V:
        """Elements [start, start + length) of dim, not clamped (torch.narrow);
        a view."""
        return self._unary("sm_narrow", int(dim), int(start), int(length))

    def select(self: _V, dim: int, index: int) -> _V:
        """The elements at index along dim, which is removed; a view."""
        return self._unary("sm_select", int(dim), int(index))

    def permute(self: _V, *dims: Any) -> _V:
        """The dims reordered: permute(2, 0, 1) or permute((2, 0, 1)); a view."""
        a, n = _i32(_shape_arg(dims))
        return self._unary("sm_permute", a, n)

    def transpose(self: _V, dim0: int, dim1: int) -> _V:
        """dim0 and dim1 swapped; a view."""
        return self._unary("sm_transpose", int(dim0), int(dim1))

    @property
    def T(self: _V) -> _V:
        """All dims reversed (NumPy's .T); a view."""
        return self.permute(*range(self.ndim - 1, -1, -1))

    def movedim(self: _V, source: Union[int, Sequence[int]],
                destination: Union[int, Sequence[int]]) -> _V:
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

    def expand(self: _V, *shape: Any) -> _V:
        """Broadcast to shape (-1 keeps a size, new leading dims allowed);
        expanded dims get stride 0; a view."""
        a, n = _i64(_shape_arg(shape))
        return self._unary("sm_expand", a, n)

    def squeeze(self: _V, dims: Union[int, Sequence[int], None] = None) -> _V:
        """The size-1 dims among dims (an int or a sequence; None: every
        size-1 dim) removed, the others left; a view."""
        if dims is None:
            return self._unary("sm_squeeze", None, 0)
        if isinstance(dims, int):
            dims = (dims,)
        a, n = _i32(dims)
        return self._unary("sm_squeeze", a, n)

    def unsqueeze(self: _V, dim: int) -> _V:
        """A new size-1 dim at dim; a view."""
        return self._unary("sm_unsqueeze", int(dim))

    def flatten(self: _V, start_dim: int = 0, end_dim: int = -1) -> _V:
        """Dims start_dim..end_dim merged into one: a view, or ShapeError when
        the strides do not allow it (reshape copies)."""
        return self._unary("sm_flatten", int(start_dim), int(end_dim))

    def unflatten(self: _V, dim: int, sizes: Sequence[int]) -> _V:
        """dim split into sizes (one -1 inferred); always a view."""
        a, n = _i64(sizes)
        return self._unary("sm_unflatten", int(dim), a, n)

    def unfold(self: _V, dim: int, size: int, step: int) -> _V:
        """Every window of size elements, step apart, along dim: dim becomes the
        window count and a last dim of size is added; a view (windows may
        overlap)."""
        return self._unary("sm_unfold", int(dim), int(size), int(step))

    def diagonal(self: _V, offset: int = 0, dim1: int = 0, dim2: int = 1) -> _V:
        """The diagonal of dim1 and dim2 (offset > 0 above, < 0 below), which
        are removed, as the last dim; a view."""
        return self._unary("sm_diagonal", int(offset), int(dim1), int(dim2))

    def _multi(self, name, arg, dim):
        count = c_int32()
        _call(name, self._h, arg, int(dim), None, 0, byref(count))
        n = count.value
        outs = (_T * max(n, 1))()
        _call(name, self._h, arg, int(dim), outs, max(n, 1), byref(count))
        return [self._new(outs[i]) for i in range(count.value)]

    def split(self: _V, split_size: int, dim: int = 0) -> List[_V]:
        """Views of split_size elements along dim (the last may be smaller)."""
        return self._multi("sm_split", int(split_size), dim)

    def chunk(self: _V, chunks: int, dim: int = 0) -> List[_V]:
        """Views of ceil(size / chunks) elements along dim, possibly fewer than
        chunks of them (torch.chunk)."""
        return self._multi("sm_chunk", int(chunks), dim)

    def flip(self: _V, dims: Union[int, Sequence[int]]) -> _V:
        """The listed dims reversed: a view with negative strides (NumPy's
        flip; PyTorch's copies)."""
        if isinstance(dims, int):
            dims = (dims,)
        a, n = _i32(dims)
        return self._unary("sm_flip", a, n)

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
        t = self._new(out)
        return (t, bool(copied.value)) if return_copied else t

    # return_copied changes the return type: typing.overload tells a type
    # checker which one a call gets, so t.reshape(6).numel type-checks.
    @overload
    def reshape(self: _V, *shape: Any, return_copied: Literal[False] = False) -> _V: ...

    @overload
    def reshape(self: _V, *shape: Any, return_copied: Literal[True]) -> Tuple[_V, bool]: ...

    @overload
    def reshape(self: _V, *shape: Any,
                return_copied: bool) -> Union[_V, Tuple[_V, bool]]: ...

    def reshape(self: _V, *shape: Any,
                return_copied: bool = False) -> Union[_V, Tuple[_V, bool]]:
        """A view when the strides allow, else a row-major copy. With
        return_copied=True returns (tensor, copied)."""
        a, n = _i64(_shape_arg(shape))
        return self._maybe_copy("sm_reshape", (a, n), return_copied)

    @overload
    def contiguous(self: _V, memory_format: str = "contiguous",
                   return_copied: Literal[False] = False) -> _V: ...

    @overload
    def contiguous(self: _V, memory_format: str, return_copied: Literal[True]
                   ) -> Tuple[_V, bool]: ...

    @overload
    def contiguous(self: _V, memory_format: str = "contiguous", *,
                   return_copied: Literal[True]) -> Tuple[_V, bool]: ...

    @overload
    def contiguous(self: _V, memory_format: str = "contiguous", return_copied: bool = False
                   ) -> Union[_V, Tuple[_V, bool]]: ...

    def contiguous(self: _V, memory_format: str = "contiguous", return_copied: bool = False
                   ) -> Union[_V, Tuple[_V, bool]]:
        """A new handle to the same data when already dense in memory_format
        ("contiguous", "channels_last", "channels_last_3d"), else a copy in
        it. With return_copied=True returns (tensor, copied)."""
        return self._maybe_copy("sm_contiguous", (FORMATS[memory_format],), return_copied)

    def clone(self: _V, memory_format: str = "preserve") -> _V:
        """Always a copy. "preserve" keeps the strides of a non-overlapping
        dense tensor (any other gets dense strides in its stride order);
        "contiguous", "channels_last", "channels_last_3d" lay it out so."""
        return self._unary("sm_clone", FORMATS[memory_format])

    @overload
    def to(self: _V, device: Optional[DeviceLike] = None, dtype: Any = None,
           return_copied: Literal[False] = False) -> _V: ...

    @overload
    def to(self: _V, device: Optional[DeviceLike], dtype: Any,
           return_copied: Literal[True]) -> Tuple[_V, bool]: ...

    @overload
    def to(self: _V, device: Optional[DeviceLike] = None, dtype: Any = None, *,
           return_copied: Literal[True]) -> Tuple[_V, bool]: ...

    @overload
    def to(self: _V, device: Optional[DeviceLike] = None, dtype: Any = None,
           return_copied: bool = False) -> Union[_V, Tuple[_V, bool]]: ...

    def to(self: _V, device: Optional[DeviceLike] = None, dtype: Any = None,
           return_copied: bool = False) -> Union[_V, Tuple[_V, bool]]:
        """On device and/or with dtype: a new handle to the same data when
        neither changes, else a copy. With return_copied=True returns
        (tensor, copied)."""
        dev = self.device if device is None else Device(device)
        code = _dtype_code(self.dtype if dtype is None else dtype)
        return self._maybe_copy("sm_to", (dev.c(), code), return_copied)

    def cpu(self: _V) -> _V:
        """to("cpu"): a new handle to the same data when already on the CPU,
        else a copy."""
        return self.to("cpu")

    def copy_(self: _V, src: Any) -> _V:
        """self[...] = src (broadcast, dtype-converted). Returns self."""
        if not isinstance(src, _TensorHandle):
            src = self._new(_copy_source_handle(src, self.dtype))
        _call("sm_copy_into", self._h, src._h)
        return self

    def index_select(self: _V, dim: int, index: Any) -> _V:
        """A copy of the elements at index (a 1-d integer tensor or sequence;
        negative values count from the end) along dim."""
        if not isinstance(index, _TensorHandle):
            idx = list(index)
            index = self._new(_list_handle(idx, "int64", self.device))
        return self._unary("sm_index_select", int(dim), index._h)

