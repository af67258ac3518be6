"""Devices (the Device class and the argument forms it takes), the argument
helpers every call uses, and the runtime: CUDA devices, streams, threads."""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Tuple, Union
from ctypes import byref, c_int32, c_int64, c_void_p

from ._capi import DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, SmDevice, _T, _call


class Device(tuple):
    """(type, index) with DLPack's type codes; str() gives 'cpu', 'cuda:1', ..."""

    def __new__(cls, spec: Any = "cpu") -> "Device":
        """From 'cpu', 'cuda', 'cuda:N', 'cuda_host', a (type, index) pair
        or another Device."""
        if isinstance(spec, Device):
            return spec
        if isinstance(spec, SmDevice):
            return tuple.__new__(cls, (spec.type, spec.index))
        if isinstance(spec, str):
            s = spec.strip().lower()
            if s == "cpu":
                return tuple.__new__(cls, (DEVICE_CPU, 0))
            if s in ("cuda_host", "cuda-host", "pinned"):
                return tuple.__new__(cls, (DEVICE_CUDA_HOST, 0))
            if s == "cuda":
                return tuple.__new__(cls, (DEVICE_CUDA, 0))
            if s.startswith("cuda:"):
                try:
                    return tuple.__new__(cls, (DEVICE_CUDA, int(s[5:])))
                except ValueError:
                    pass
            raise ValueError("stridemem: unknown device %r (use 'cpu', 'cuda', "
                             "'cuda:N' or 'cuda_host')" % (spec,))
        t = tuple(spec)
        if len(t) != 2:
            raise ValueError("stridemem: a device is (type, index), got %r" % (spec,))
        return tuple.__new__(cls, (int(t[0]), int(t[1])))

    type = property(lambda self: self[0], doc="DLPack's device type code (1 CPU, 2 CUDA, 3 "
                                              "CUDA host).")
    index = property(lambda self: self[1],  # type: ignore[assignment]
                     doc="The GPU ordinal for CUDA, else 0.")

    def c(self) -> SmDevice:
        """The C API's sm_device struct."""
        return SmDevice(self[0], self[1])

    def __str__(self) -> str:
        if self[0] == DEVICE_CPU:
            return "cpu"
        if self[0] == DEVICE_CUDA:
            return "cuda:%d" % self[1]
        if self[0] == DEVICE_CUDA_HOST:
            return "cuda_host"
        return "device(%d,%d)" % (self[0], self[1])

    def __repr__(self) -> str:
        return "Device(%r)" % str(self)

    def __eq__(self, other: object) -> bool:
        try:
            return tuple.__eq__(self, Device(other))
        except (ValueError, TypeError):
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__


def _dev(device):
    return Device(device).c()


def _i64(values):
    values = [int(v) for v in values]
    return (c_int64 * max(len(values), 1))(*values), len(values)


def _i32(values):
    values = [int(v) for v in values]
    return (c_int32 * max(len(values), 1))(*values), len(values)


def _shape_arg(shape: Sequence[Any]) -> Tuple[int, ...]:
    """The *shape of f(*shape): f(2, 3), f((2, 3)), f([2, 3]), f(()),
    f(np.array([2, 3])) and f(np.int64(3)) all work; every size must be an
    integer."""
    if len(shape) == 1:
        return _shape_tuple(shape[0])
    return _shape_tuple(shape)


def _shape_tuple(shape: Any) -> Tuple[int, ...]:
    """A shape given as one int or a sequence of ints (NumPy's `shape`)."""
    try:
        return (operator.index(shape),)
    except TypeError:
        pass
    try:
        return tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError("stridemem: a shape is integers, got %r" % (shape,)) from None


def _out():
    return _T()

DeviceLike = Union[str, "Device", Tuple[int, int]]


def cuda_device_count() -> int:
    """Number of usable CUDA devices (0 when the build has no CUDA or no GPU
    is usable)."""
    v = c_int32()
    _call("sm_cuda_device_count", byref(v))
    return v.value


def synchronize(device: DeviceLike = "cpu") -> None:
    """Waits for all work queued on device (CPU: returns at once)."""
    _call("sm_synchronize", _dev(device))


def set_stream(device: DeviceLike, stream: Optional[int]) -> None:
    """Sets the calling thread's current stream for a CUDA device (its
    cudaStream_t as an int; 0 or None: the default stream)."""
    _call("sm_set_stream", _dev(device), c_void_p(stream or None))


def get_stream(device: DeviceLike) -> int:
    """The calling thread's current stream for a CUDA device as an int (0:
    the default stream)."""
    p = c_void_p()
    _call("sm_get_stream", _dev(device), byref(p))
    return p.value or 0


def set_num_threads(n: int) -> None:
    """CPU worker threads for large copies (0: one per core)."""
    _call("sm_set_num_threads", int(n))


def get_num_threads() -> int:
    """The number of CPU worker threads for large copies (after
    set_num_threads(0): one per core, capped)."""
    v = c_int32()
    _call("sm_get_num_threads", byref(v))
    return v.value
