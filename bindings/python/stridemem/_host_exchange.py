"""Tensor's NumPy side, zero copy where it can be: the _HostExchange mixin
over _Views (``numpy()``, ``__array_interface__``,
``__cuda_array_interface__``, ``__array__``, ``tolist``, ``item``)."""

from __future__ import annotations

import ctypes
import struct
from contextlib import closing as _closing
from typing import Any, Dict, Optional
from ctypes import byref, c_size_t, c_void_p

from ._capi import (DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, ERR_UNSUPPORTED, OK, _call,
                    _error, lib)
from .dtypes import _np, dtype_size, numpy_dtype
from .devices import _out, get_stream
from ._views import _Views


# The address a size-0 tensor without memory shows in its array interfaces.
_NO_ELEMENTS = ctypes.create_string_buffer(16)


class _InterfaceView(object):
    """What ``np.asarray`` reads in __array__: an owner of its own handle, so
    the array stays valid when the tensor it came from is closed."""

    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, t: "_HostExchange") -> None:
        self.tensor = t.retain()
        self.__array_interface__ = self.tensor._interface(cuda=False)


# NumPy typestrs of the exchange dtypes (little-endian hosts), for the array
# interfaces when NumPy itself is not installed.
_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4",
            "int64": "<i8", "float16": "<f2", "bfloat16": "<u2", "float32": "<f4",
            "float64": "<f8", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
            "complex64": "<c8", "complex128": "<c16"}

# struct formats of one element (native order), for item() without NumPy.
_STRUCT = {"bool": "?", "uint8": "B", "int8": "b", "int16": "h", "int32": "i",
           "int64": "q", "float16": "e", "float32": "f", "float64": "d", "uint16": "H",
           "uint32": "I", "uint64": "Q", "complex64": "ff", "complex128": "dd"}


def _decode_scalar(name: str, raw: bytes) -> Any:
    """One element's bytes as the Python scalar NumPy's item() gives."""
    if name == "bfloat16":  # the high half of a float32
        return struct.unpack("=f", struct.pack("=I", struct.unpack("=H", raw)[0] << 16))[0]
    v = struct.unpack("=" + _STRUCT[name], raw)
    return complex(v[0], v[1]) if len(v) == 2 else v[0]


class _HostExchange(_Views):
    """A tensor's exchange with NumPy and CUDA array consumers."""

    __slots__ = ()

    def numpy(self) -> Any:
        """A NumPy copy (row-major) of the same dtype. bfloat16 comes out as
        uint16 bit patterns."""
        arr = _np.empty(self.shape, dtype=numpy_dtype(self.dtype))
        _call("sm_copy_to_host", self._h, c_void_p(arr.ctypes.data), c_size_t(arr.nbytes))
        return arr

    def _stack_carved(self) -> bool:
        """A tensor carved from a stack of views: its bytes are reused after
        sm_stack_pop_to, so no foreign array may keep pointing at them."""
        out = _out()
        status = lib.sm_tensor_storage(self._h, byref(out))
        if status == OK:
            lib.sm_storage_release(out)
            return False
        if status == ERR_UNSUPPORTED:
            return True
        raise _error(status, "sm_tensor_storage")

    def _interface(self, cuda: bool) -> Dict[str, Any]:
        """The __array_interface__ / __cuda_array_interface__ dict (v3):
        shape, byte strides (None when row-major), the typestr of the NumPy
        exchange dtype (bfloat16 as '<u2' bit patterns) and the data address
        with the read-only flag. Pins this object's handle (see close())."""
        shape, strides, item = self.shape, self.strides, self.itemsize
        row_major = self.is_contiguous()
        d = {"shape": shape,
             "typestr": numpy_dtype(self.dtype).str if _np is not None
             else _TYPESTR[self.dtype.name],
             # NumPy refuses a NULL address even with no element to read.
             "data": (self.data_ptr or ctypes.addressof(_NO_ELEMENTS), self.is_read_only),
             "strides": None if row_major else tuple(s * item for s in strides),
             "version": 3}
        if cuda:
            # v3: the stream the data is produced on (1 = the legacy default
            # stream; 0 is not allowed); the consumer orders its work after it.
            d["stream"] = get_stream(self.device) or 1
        if self._pin is None:
            self._pin = True
        return d

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        """NumPy's array interface (v3) for a zero-copy view of a CPU or
        pinned-host tensor: ``np.asarray(t)`` shares memory, writes show both
        ways, a read-only tensor gives a read-only array. Absent
        (AttributeError, so NumPy falls back to __array__, a copy) for CUDA
        tensors and for tensors carved from a stack of views, whose memory is
        reused after a pop."""
        return self._exported_interface(cuda=False)

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        """The CUDA array interface (v3) of a CUDA tensor, for CuPy, Numba and
        PyTorch: zero copy, with the current stream of the tensor's device
        (``stream``; 1 for the legacy default stream). Absent for CPU
        tensors and for tensors carved from a stack of views."""
        return self._exported_interface(cuda=True)

    def _exported_interface(self, cuda: bool) -> Dict[str, Any]:
        """_interface when this tensor may be shared that way, else the
        AttributeError that tells the consumer to take another way (or
        copy)."""
        name = "__cuda_array_interface__" if cuda else "__array_interface__"
        if not self._h:
            raise AttributeError("%s of a closed tensor" % name)
        dev = self.device
        if cuda and dev[0] != DEVICE_CUDA:
            raise AttributeError("%s: the tensor is on %s, not CUDA" % (name, dev))
        if not cuda and dev[0] not in (DEVICE_CPU, DEVICE_CUDA_HOST):
            raise AttributeError("%s: the tensor is on %s; use __cuda_array_interface__, "
                                 "numpy() or np.array(t)" % (name, dev))
        if self._stack_carved():
            raise AttributeError("%s: the tensor is carved from a stack of views whose "
                                 "memory is reused after a pop; np.array(t) copies" % name)
        return self._interface(cuda)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any:
        """NumPy 2's protocol (NumPy 1.x calls it without copy): copy=None
        shares memory when it can (a CPU or pinned tensor, NumPy's dtype)
        and copies otherwise; copy=True always copies; copy=False never does
        and raises ValueError when a copy is needed (a CUDA tensor, a
        tensor carved from a stack of views, another dtype)."""
        want = None if dtype is None else _np.dtype(dtype)
        shareable = (self.device[0] in (DEVICE_CPU, DEVICE_CUDA_HOST)
                     and not self._stack_carved())
        if copy is False:
            if not shareable:
                raise ValueError("stridemem: a NumPy array of this %s tensor needs a copy "
                                 "(copy=False forbids it)" % (self.device,))
            if want is not None and want != numpy_dtype(self.dtype):
                raise ValueError("stridemem: dtype %s needs a copy of this %s tensor "
                                 "(copy=False forbids it)" % (want, self.dtype.name))
        if shareable and not copy:
            arr = _np.asarray(_InterfaceView(self))
        else:
            arr = self.numpy()
        if want is not None and want != arr.dtype:
            arr = arr.astype(want)
        return arr

    def tolist(self) -> Any:
        """The values as nested Python lists (bfloat16 as floats)."""
        if self.dtype == "bfloat16":
            with _closing(self.to(dtype="float32")) as f:
                return f.numpy().tolist()
        return self.numpy().tolist()

    def item(self) -> Any:
        """The one element as a Python bool, int, float or complex (bfloat16
        as its float value). Does not need NumPy."""
        if self.numel != 1:
            raise ValueError("stridemem: item() needs exactly one element (this tensor has "
                             "%d)" % self.numel)
        name = self.dtype.name
        one = self if self.ndim == 0 else self.reshape(())
        raw = ctypes.create_string_buffer(dtype_size(name))
        _call("sm_copy_to_host", one._h, ctypes.cast(raw, c_void_p), c_size_t(len(raw)))
        return _decode_scalar(name, raw.raw)
