"""DLPack import: ``from_dlpack`` (zero copy) of any object with
``__dlpack__``, or of a raw capsule. The export side (the capsules, their
lifetime, Tensor's ``__dlpack__``) is in _dlpack_export.py."""

from __future__ import annotations

import ctypes
from typing import Any, Dict
from ctypes import byref, c_void_p

from ._capi import DEVICE_CUDA, _call
from .devices import Device, _out, get_stream
from ._dlpack_export import (_CAPSULE_LEGACY, _CAPSULE_USED_LEGACY, _CAPSULE_USED_VERSIONED,
                             _CAPSULE_VERSIONED, _PyCapsule_GetPointer, _PyCapsule_IsValid,
                             _PyCapsule_SetName, dlpack_collect)
from ._tensor import Tensor


def from_dlpack(obj: Any) -> Tensor:
    """Zero-copy import of any object with __dlpack__ (or a raw capsule).
    Asks for a versioned capsule first and falls back to the legacy one."""
    dlpack_collect()
    if type(obj).__name__ == "PyCapsule":
        capsule = obj
    else:
        kwargs: Dict[str, Any] = {}
        if isinstance(obj, Tensor):
            kwargs["normalize"] = False  # we take negative strides: stay zero copy
        if hasattr(obj, "__dlpack_device__"):
            dtype_, index = obj.__dlpack_device__()
            if int(dtype_) == DEVICE_CUDA:
                s = get_stream(Device((DEVICE_CUDA, int(index))))
                kwargs["stream"] = s if s else 1  # NULL = legacy default stream
        try:
            capsule = obj.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:
            capsule = obj.__dlpack__(**kwargs)
    if _PyCapsule_IsValid(capsule, ctypes.addressof(_CAPSULE_VERSIONED)):
        versioned, name, used = 1, _CAPSULE_VERSIONED, _CAPSULE_USED_VERSIONED
    elif _PyCapsule_IsValid(capsule, ctypes.addressof(_CAPSULE_LEGACY)):
        versioned, name, used = 0, _CAPSULE_LEGACY, _CAPSULE_USED_LEGACY
    else:
        raise BufferError("stridemem: not a live DLPack capsule (already consumed?)")
    ptr = _PyCapsule_GetPointer(capsule, ctypes.addressof(name))
    out = _out()
    _call("sm_from_dlpack", c_void_p(ptr), versioned, byref(out))
    # The library owns the managed tensor now: the capsule must not delete it.
    _PyCapsule_SetName(capsule, ctypes.addressof(used))
    return Tensor._wrap(out)

