"""The handle-owning base of the package's objects: _Owner (one reference
to a C handle, for tensors, storages and stacks) and _TensorHandle, what
every Tensor-handling module needs without the full class: the tensor's
handle, its lifetime, its metadata, and the construction of results
(``_wrap``, ``self._new(handle)``: a result is of the class of the tensor it
comes from, so a :class:`Tensor`'s results are Tensors).

The layers above: _views (views and copies), the method groups _inplace,
_host_exchange, _indexing and _dlpack_export, each a mixin over this base;
_tensor puts them together as Tensor."""

from __future__ import annotations

from typing import Any, NoReturn, Optional, Tuple, Type, TypeVar, Union, overload
from ctypes import byref, c_int, c_int32, c_int64, c_void_p

from ._capi import FORMATS, SmDevice, _call, lib
from .dtypes import DType, _DTYPE_OBJECTS, dtype_size
from .devices import Device

# A method's self and result: a Tensor's results are typed Tensor.
_H = TypeVar("_H", bound="_TensorHandle")

# --------------------------------------------------------------------------
# Owners of C handles
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

    # The handles __del__ may still own: _TensorHandle adds its pinned one.
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


class _TensorHandle(_Owner):
    """A tensor's handle: lifetime, metadata and result construction (the
    base of :class:`Tensor` and of its method groups)."""

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
    def _wrap(cls: Type[_H], handle: Any) -> _H:
        t = object.__new__(cls)
        t._h = handle.value if isinstance(handle, c_void_p) else handle
        t._pin = None
        return t

    def _new(self: _H, handle: Any) -> _H:
        """A new owner of handle (a result, or a temporary) of this tensor's
        class."""
        return type(self)._wrap(handle)

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

    def retain(self: _H) -> _H:
        """A second Python owner of the same handle (sm_tensor_retain)."""
        _call("sm_tensor_retain", self._h)
        return self._new(self._h)

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
        def get(self: "_TensorHandle") -> int:
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

    def same_storage(self, other: "_TensorHandle") -> bool:
        """True when other views the same storage."""
        v = c_int()
        _call("sm_same_storage", self._h, other._h, byref(v))
        return bool(v.value)
