"""DLPack export: the capsules (their names, the PyCapsule calls, the
destructor), their lifetime in the keep-alive registry (``dlpack_collect``,
``dlpack_live_count``), and the _DLPackExport mixin over _TensorHandle
(Tensor's ``__dlpack__``/``__dlpack_device__``). The import side,
``from_dlpack``, is in dlpack.py."""

from __future__ import annotations

import atexit
import ctypes
from typing import Any, Optional, Tuple
from ctypes import byref, c_int, c_void_p

from ._capi import (DEVICE_CUDA, DLManagedTensor, DLManagedTensorVersioned, DLPACK_COPY,
                    DLPACK_NORMALIZE, DLPACK_NO_COPY, DLPACK_VERSIONED, DLPackExportError,
                    ERR_DEVICE, ERR_UNSUPPORTED, _DLDeleter, _check, last_error, lib)
from .devices import Device, synchronize
from ._registry import _registry
from ._handle import _TensorHandle


# --------------------------------------------------------------------------
# DLPack capsules
# --------------------------------------------------------------------------

_CAPSULE_LEGACY = ctypes.create_string_buffer(b"dltensor")
_CAPSULE_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")
_CAPSULE_USED_LEGACY = ctypes.create_string_buffer(b"used_dltensor")
_CAPSULE_USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")
for _buf in (_CAPSULE_LEGACY, _CAPSULE_VERSIONED, _CAPSULE_USED_LEGACY,
             _CAPSULE_USED_VERSIONED):
    # PyCapsule keeps the name pointer: these buffers must never be freed.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_buf))

# Private prototypes, so that ctypes.pythonapi's shared attributes stay untouched.
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, c_void_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))
# Raw-pointer variants for the destructor (the capsule is being deallocated
# there: it must not be wrapped in a new Python reference).
_PyCapsule_IsValid_raw = ctypes.PYFUNCTYPE(c_int, c_void_p, c_void_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

# Exported capsules are held by the registry ("capsule" entries) until nobody
# else holds them. Why: a consumer may drop a capsule while a Python exception
# is pending (NumPy does so when it refuses a dtype); a ctypes callback run at
# that moment cannot work (every ctypes call inside it re-raises the pending
# exception, and the exception is then lost). Holding a reference means the
# capsule's destructor only ever runs from dlpack_collect(), in ordinary
# Python context. It is called by every export and import and by
# memory_stats, memory_summary and empty_cache, and at exit.


def dlpack_collect() -> int:
    """Releases exported capsules that only this module still holds (their
    destructor runs now: deleter called unless a consumer took the capsule).
    Returns how many were released."""
    return _registry.sweep("capsule")


def dlpack_live_count() -> int:
    """Number of exported capsules the module still holds (see dlpack_collect)."""
    return _registry.count("capsule")


atexit.register(dlpack_collect)


def _call_dl_deleter(ptr, versioned):
    if not ptr:
        return
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor
    m = cls.from_address(ptr)
    if m.deleter:
        _DLDeleter(m.deleter)(ptr)


def _capsule_destructor_impl(capsule):
    try:
        for name, versioned in ((_CAPSULE_LEGACY, False), (_CAPSULE_VERSIONED, True)):
            if _PyCapsule_IsValid_raw(capsule, ctypes.addressof(name)):
                ptr = _PyCapsule_GetPointer_raw(capsule, ctypes.addressof(name))
                _registry.bump("capsule", "destructor_deleted")
                _call_dl_deleter(ptr, versioned)
                return
        _registry.bump("capsule", "destructor_consumed")  # renamed "used_*": not ours
    except Exception:  # pragma: no cover - must never propagate into C
        pass


_capsule_destructor = ctypes.PYFUNCTYPE(None, c_void_p)(_capsule_destructor_impl)
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_capsule_destructor))
_capsule_destructor_ptr = ctypes.cast(_capsule_destructor, c_void_p)


class _DLPackExport(_TensorHandle):
    """A tensor's export as a DLPack capsule (the Python array API)."""

    __slots__ = ()

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(device type, index) with DLPack's codes (the array API)."""
        d = self.device
        return (int(d[0]), int(d[1]))

    def __dlpack__(self, stream: Optional[int] = None,
                   max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None,
                   normalize: Optional[bool] = None) -> Any:
        """Export as a PyCapsule 'dltensor' (legacy) or 'dltensor_versioned'
        (when max_version >= (1, 0)), per the Python array API. One call,
        sm_to_dlpack_ex, does the whole export.

        Zero copy unless a copy is asked for or needed: copy=True always
        exports a fresh row-major copy (SM_DLPACK_COPY); dl_device other than
        the tensor's device exports a copy there. The library flags every
        copy IS_COPIED in a versioned capsule. copy=False (SM_DLPACK_NO_COPY)
        forbids copies: an export that would need one raises BufferError
        (DLPackExportError) with the library's message, as does a dl_device
        this build cannot reach.

        Negative strides (a flip, a negative step) reach a consumer only when
        normalize=False asks for them (for consumers that take them: NumPy,
        CuPy, stridemem itself): PyTorch aborts the whole process on them, and
        torch.from_dlpack(t) has no way to say so. By default (normalize=None)
        a tensor with a negative stride on a dim of more than one element is
        exported in a versioned capsule as a dense copy flagged IS_COPIED
        (SM_DLPACK_NORMALIZE); a legacy capsule cannot say that it holds a
        copy (and mpi4py, which asks for one, releases it at once while it
        still uses the memory), so there, and with copy=False, the export
        raises DLPackExportError naming the ways out: t.contiguous(),
        numpy.asarray(t) (the array interface takes negative strides), or
        normalize=False. normalize=True makes the dense copy in a legacy
        capsule too. A negative stride that moves nothing (a dim of one
        element, an empty tensor) is exported as 1, zero copy.

        On CUDA, stream None means the legacy default stream (1), -1 means
        no synchronization, and any other value is a consumer stream the
        data must be ready for (we synchronize the device after the export).
        On the CPU, stream must be None (or -1)."""
        dev = self.device if dl_device is None else Device(tuple(dl_device))
        if dev[0] == DEVICE_CUDA:
            if stream is None:
                stream = 1
            if stream == 0:
                raise ValueError("stridemem: stream 0 is ambiguous in DLPack; "
                                 "use 1 (legacy default) or 2 (per-thread default)")
        elif stream is not None and stream != -1:
            raise BufferError("stridemem: stream must be None for a %s tensor" % (dev,))
        versioned = max_version is not None and tuple(max_version)[:1] >= (1,)
        flags = ((DLPACK_VERSIONED if versioned else 0)
                 | (DLPACK_NORMALIZE if normalize is None or normalize else 0))
        if copy is not None:
            flags |= DLPACK_COPY if copy else DLPACK_NO_COPY
        elif normalize is None and not versioned and dev == self.device:
            # Legacy: the copy a negative stride needs could not be flagged,
            # so it is refused; nothing else on the same device copies.
            flags |= DLPACK_NO_COPY
        target = None if dl_device is None else byref(dev.c())
        managed, copied = c_void_p(), c_int(0)
        status = lib.sm_to_dlpack_ex(self._h, flags, target, byref(managed), byref(copied))
        if status == ERR_UNSUPPORTED or (status == ERR_DEVICE and dl_device is not None):
            raise DLPackExportError(status, self._dlpack_refusal(flags, copy) + last_error(),
                                    "sm_to_dlpack_ex")
        _check(status, "sm_to_dlpack_ex")
        name = _CAPSULE_VERSIONED if versioned else _CAPSULE_LEGACY
        try:
            if dev[0] == DEVICE_CUDA and stream != -1:
                # The consumer will use `stream`; make every queued write (and
                # the export's copy, if any) finish first (conservative: waits
                # for the device).
                synchronize(dev)
            capsule = _PyCapsule_New(managed, ctypes.addressof(name),
                                     _capsule_destructor_ptr)
        except BaseException:
            _call_dl_deleter(managed.value, versioned)
            raise
        _registry.bump("capsule", "exported")
        dlpack_collect()
        _registry.hold("capsule", capsule)
        return capsule

    def _dlpack_refusal(self, flags: int, copy: Optional[bool]) -> str:
        """What __dlpack__ says before the library's message when it refuses
        a tensor for its negative strides ('' for other refusals)."""
        shape, strides = self.shape, self.strides
        if not (flags & DLPACK_NORMALIZE and flags & DLPACK_NO_COPY and all(shape)
                and any(s < 0 and n > 1 for n, s in zip(shape, strides))):
            return ""
        why = ("copy=False forbids the dense copy that would make it safe" if copy is False else
               "a legacy capsule (no max_version) cannot say that it holds a copy, so none "
               "is made (a versioned one carries a copy flagged IS_COPIED)")
        return ("shape %s with strides %s has a negative stride, which PyTorch cannot take "
                "(torch.from_dlpack aborts the process on one); %s. Export t.contiguous() (a "
                "copy), read it with numpy.asarray(t) (zero copy: the array interface takes "
                "negative strides), or ask __dlpack__(normalize=False) for a consumer that "
                "takes them. The library says: " % (shape, strides, why))
