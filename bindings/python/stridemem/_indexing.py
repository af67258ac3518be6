"""Tensor indexing (``t[idx]``, ``t[idx] = value``): NumPy's basic indexing
as views, one integer-array or boolean-mask entry as a gather. The _Indexing
mixin (Tensor inherits it) builds on the views and copies (_views), the
in-place fill (_inplace) and the NumPy side (_host_exchange)."""

from __future__ import annotations

from contextlib import closing as _closing
from typing import Any, Tuple, TypeVar

from .dtypes import _is_scalar, _np
from ._handle import _TensorHandle
from ._from_host import _host_handle
from ._inplace import _InPlace
from ._host_exchange import _HostExchange

_X = TypeVar("_X", bound="_Indexing")


def _normalize_index(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    return idx


def _is_array_index(it: Any) -> bool:
    """An integer-array or boolean-mask index entry (a gather, not a view)."""
    return isinstance(it, (list, _TensorHandle)) or (
        _np is not None and isinstance(it, _np.ndarray) and it.ndim > 0)


def _array_index_dims(it: Any) -> Tuple[bool, int]:
    """(is a boolean mask, ndim) of an integer-array or mask index entry."""
    if isinstance(it, _TensorHandle):
        return it.dtype == "bool", it.ndim
    arr = _np.asarray(it)
    return arr.dtype == _np.bool_, arr.ndim


def _index_width(it: Any) -> int:
    """How many dims of the indexed tensor an index entry consumes: a mask
    its ndim, an integer array one."""
    if it is None or it is Ellipsis:
        return 0
    if _is_array_index(it):
        mask, ndim = _array_index_dims(it)
        return ndim if mask else 1
    return 1


def _gathered_width(it: Any) -> int:
    """How many dims an array index entry leaves in the result: a mask one
    (the count of True), an integer array its ndim."""
    mask, ndim = _array_index_dims(it)
    return 1 if mask else ndim


class _Indexing(_InPlace, _HostExchange):
    """``t[idx]`` and ``t[idx] = value``."""

    __slots__ = ()

    def __getitem__(self: _X, idx: Any) -> _X:
        """NumPy's basic indexing as views (ints, slices with any step, None,
        ...); one integer-array or boolean-mask index anywhere in the index
        (a list, NumPy array or tensor) gathers a copy along its dims, as
        NumPy places it (index_select). Masks must match the dims they cover
        (IndexError otherwise)."""
        items = _normalize_index(idx)
        advanced = [k for k, it in enumerate(items) if _is_array_index(it)]
        if not advanced:
            return self._basic_index(items)
        if len(advanced) > 1:
            raise IndexError("stridemem: one integer-array or boolean-mask index per "
                             "subscript is supported (index with one, then the next)")
        if sum(1 for it in items if it is Ellipsis) > 1:
            raise IndexError("stridemem: an index can only have one ellipsis")
        ndim = self.ndim
        n_real = sum(_index_width(it) for it in items)
        expanded = []
        for it in items:
            if it is Ellipsis:
                expanded.extend([slice(None)] * max(ndim - n_real, 0))
            else:
                expanded.append(it)
        k = next(i for i, it in enumerate(expanded) if _is_array_index(it))
        # The advanced entry's first dim in the basic-indexed view: every
        # slice and None before it leaves one dim there, an int none.
        dim = sum(1 for it in expanded[:k] if it is None or isinstance(it, slice))
        before = (tuple(expanded[:k]) + (slice(None),) * _index_width(expanded[k])
                  + tuple(expanded[k + 1:]))
        with _closing(self._basic_index(before)) as base:
            out = base._advanced_index(dim, expanded[k])
        # NumPy's placement: integer scalars are advanced indices too; when
        # they and the array are not side by side, the gathered dims go first.
        positions = [i for i, it in enumerate(expanded) if i == k or (
            it is not None and it is not Ellipsis and not isinstance(it, slice))]
        if dim and positions[-1] - positions[0] + 1 != len(positions):
            w = _gathered_width(expanded[k])
            with _closing(out):
                return out.movedim(list(range(dim, dim + w)), list(range(w)))
        return out

    def _basic_index(self: _X, items: Tuple[Any, ...]) -> _X:
        n_ellipsis = sum(1 for it in items if it is Ellipsis)
        if n_ellipsis > 1:
            raise IndexError("stridemem: an index can only have one ellipsis")
        n_real = sum(1 for it in items if it is not None and it is not Ellipsis)
        ndim = self.ndim
        if n_real > ndim:
            raise IndexError("stridemem: too many indices (%d) for a %d-d tensor"
                             % (n_real, ndim))
        expanded = []
        for it in items:
            if it is Ellipsis:
                expanded.extend([slice(None)] * (ndim - n_real))
            else:
                expanded.append(it)
        t = self
        dim = 0
        for it in expanded:
            if it is None:
                t = t.unsqueeze(dim)
                dim += 1
            elif isinstance(it, slice):
                if it != slice(None):
                    t = t.slice(dim, it.start, it.stop, it.step)
                dim += 1
            elif isinstance(it, bool) or (_np is not None and isinstance(it, _np.bool_)):
                raise IndexError("stridemem: a boolean scalar index is not supported "
                                 "(use None to add a dim, or a boolean mask array)")
            elif hasattr(it, "__index__"):
                t = t.select(dim, it.__index__())
            else:
                raise IndexError("stridemem: unsupported index %r (ints, slices, None, ..., "
                                 "one integer array or boolean mask)" % (it,))
        if t is self:
            t = self.retain()
        return t

    def _advanced_index(self: _X, dim: int, index: Any) -> _X:
        """self gathered along dim by one integer array (its shape replaces
        the dim) or boolean mask (covering dims dim.. dim+mask.ndim-1,
        replaced by the number of True elements). Always a copy."""
        shape = self.shape
        if isinstance(index, _HostExchange):  # a tensor (a mask is read as NumPy's)
            if index.dtype == "bool":
                index = index.numpy()
            elif index.ndim == 1:
                return self.index_select(dim, index)
            else:
                index = index.numpy()
        arr = _np.asarray(index)
        if arr.dtype == _np.bool_:
            k = arr.ndim
            covered = shape[dim:dim + k]
            if arr.shape != covered:
                raise IndexError("stridemem: boolean index of shape %s does not match the "
                                 "indexed dims %s" % (arr.shape, covered))
            flat_index = _np.flatnonzero(arr)
            if k != 1:
                merged = shape[:dim] + (-1,) + shape[dim + k:]
                with _closing(self.reshape(*merged)) as m:
                    return m.index_select(dim, flat_index)
            return self.index_select(dim, flat_index)
        if arr.dtype.kind not in "iu" and arr.size:
            raise IndexError("stridemem: array indices must be integers or booleans, got %s"
                             % arr.dtype)
        flat_index = arr.astype(_np.int64).reshape(-1)
        if dim >= len(shape):
            raise IndexError("stridemem: too many indices for a %d-d tensor" % len(shape))
        out = self.index_select(dim, flat_index)
        if arr.ndim == 1:
            return out
        with _closing(out):
            return out.view(*(shape[:dim] + arr.shape + shape[dim + 1:]))

    def __setitem__(self: _X, idx: Any, value: Any) -> None:
        """t[idx] = value through the view t[idx] (basic indices only): a
        scalar fills it, a tensor, NumPy array or (nested) list is broadcast
        and converted to t's dtype as NumPy's assignment does."""
        items = _normalize_index(idx)
        if any(_is_array_index(it) for it in items):
            raise IndexError("stridemem: assignment through an integer-array or boolean "
                             "index is not supported (it would write a gathered copy); "
                             "assign through slices")
        with _closing(self._basic_index(items)) as dst:
            if isinstance(value, _TensorHandle):
                dst.copy_(value)
            elif _is_scalar(value):
                dst.fill_(value)
            else:
                with _closing(dst._new(_host_handle(value))) as src:
                    dst.copy_(src)
