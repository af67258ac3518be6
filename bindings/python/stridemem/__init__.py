"""stridemem: Python binding (pure ctypes) over the stridemem C ABI.

One storage, many strided views, on the CPU or a CUDA GPU. Every view method
returns a new :class:`Tensor` that shares storage with its source; only the
calls documented as copies allocate tensor data.

Library lookup (stridemem._loader), in order: the environment variable
``STRIDEMEM_LIB`` (a path; when set, the only candidate), a copy bundled into
the installed wheel, the system/prefix install (pkg-config, the dynamic
linker's path), and, imported from the source tree, its ``build/`` then
``build-*/`` directories; a sanitizer build is never loaded without its
runtime, and a failure lists every place tried (``LIBRARY_PATH`` and
``LIBRARY_SOURCE`` say what was loaded).
At import the library's ``sm_version`` is checked against the binding's
``BINDING_VERSION`` (the C API it declares) and the repository's ``VERSION``
file when that file is found: the major version must match, while it is 0 the
minor must match too (0.x minors break the ABI), and the library must not be
older.

Every failing C call raises :class:`StrideMemError`, carrying ``.status`` (the
frozen integer code), ``.status_name``, ``.function`` (the Python call) and
``.message`` (``sm_last_error`` in the binding's words; ``.c_function`` and
``.c_message`` are the C library's).

Tensors have no comparison operators (``==`` raises TypeError: use
:func:`equal`); default dtypes follow PyTorch (Python floats give float32).

NumPy is optional for the core of the module; ``numpy()``, ``from_numpy`` and
the zero-copy wrappers need it. Every dtype but bfloat16 is exchanged with
NumPy as the NumPy dtype of the same name (``complex64``/``complex128`` are
NumPy's: two IEEE floats, real part first). NumPy has no bfloat16: bfloat16
tensors are exchanged as ``uint16`` arrays holding the raw bit patterns, so a
NumPy ``uint16`` array means the ``uint16`` dtype unless ``dtype="bfloat16"``
is passed.

Scalars: the C API takes real doubles (``sm_full``, ``sm_arange``, the
scalar in-place ops, ``alpha``). A complex Python or NumPy scalar given to a
complex tensor (``fill_``, ``add_``, ``sub_``, ``mul_``, ``div_``, ``full``,
``copy_``, ``t[...] = z``) is sent as a 0-d tensor of the tensor's dtype
through the tensor form of the op instead; a complex scalar with a nonzero
imaginary part is refused (TypeError, nothing written) where the C API can
only take a real value: a non-complex tensor, ``clamp_`` bounds, ``alpha``
with a tensor operand, ``arange``.
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import json
import math
import operator
import os
import re
import struct
import sys
import threading
import warnings
from contextlib import ContextDecorator as _ContextDecorator, closing as _closing
from typing import (Any, Callable, Dict, Iterator, List, Literal, NamedTuple, NoReturn,
                    Optional, Sequence, Tuple, Union, overload)
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double,
                    c_int, c_int32, c_int64, c_size_t, c_uint8, c_uint16,
                    c_uint32, c_uint64, c_void_p)

try:  # NumPy is needed only for the NumPy exchange functions.
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None  # type: ignore[assignment]

__all__ = [
    "StrideMemError", "DLPackExportError", "InvalidArgumentError", "InvalidHandleError",
    "OutOfMemoryError", "ShapeError", "OutOfBoundsError", "DTypeError", "DeviceError",
    "OverlapError", "SizeOverflowError", "UnsupportedError", "CudaError", "InternalError",
    "ReadOnlyError", "Tensor", "Storage", "Stack", "Device", "DType",
    "empty", "empty_strided", "zeros", "ones", "full", "empty_like", "zeros_like",
    "ones_like", "full_like", "arange", "arange_n", "tensor", "from_numpy", "equal",
    "from_blob", "from_numpy_blob", "as_tensor", "from_dlpack", "copy_into",
    "memory_stats", "reset_peak_stats", "empty_cache", "memory_summary",
    "memory_snapshot", "save_memory_snapshot", "tag", "record_memory_history",
    "set_oom_observer", "OomInfo",
    "cuda_device_count", "synchronize", "set_stream", "get_stream",
    "set_num_threads", "get_num_threads", "version", "DTYPES", "empty_shared",
    "SHARE_DESC_SIZE",
]

# --------------------------------------------------------------------------
# Constants (values frozen by include/stridemem.h)
# --------------------------------------------------------------------------

STATUS_NAMES = {
    0: "SM_OK", 1: "SM_ERR_INVALID_ARGUMENT", 2: "SM_ERR_INVALID_HANDLE",
    3: "SM_ERR_OUT_OF_MEMORY", 4: "SM_ERR_SHAPE", 5: "SM_ERR_OUT_OF_BOUNDS",
    6: "SM_ERR_DTYPE", 7: "SM_ERR_DEVICE", 8: "SM_ERR_OVERLAP",
    9: "SM_ERR_OVERFLOW", 10: "SM_ERR_UNSUPPORTED", 11: "SM_ERR_CUDA",
    12: "SM_ERR_INTERNAL", 13: "SM_ERR_READ_ONLY",
}
OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_INVALID_HANDLE = 2
ERR_OUT_OF_MEMORY = 3
ERR_SHAPE = 4
ERR_OUT_OF_BOUNDS = 5
ERR_DTYPE = 6
ERR_DEVICE = 7
ERR_OVERLAP = 8
ERR_OVERFLOW = 9
ERR_UNSUPPORTED = 10
ERR_CUDA = 11
ERR_INTERNAL = 12
ERR_READ_ONLY = 13

# dtype name -> (code, NumPy dtype name used for the exchange)
DTYPES = {
    "bool": (0, "bool"), "uint8": (1, "uint8"), "int8": (2, "int8"),
    "int16": (3, "int16"), "int32": (4, "int32"), "int64": (5, "int64"),
    "float16": (6, "float16"), "bfloat16": (7, "uint16"),
    "float32": (8, "float32"), "float64": (9, "float64"),
    "uint16": (10, "uint16"), "uint32": (11, "uint32"), "uint64": (12, "uint64"),
    "complex64": (13, "complex64"), "complex128": (14, "complex128"),
}
NUM_DTYPES = 15  # SM_NUM_DTYPES
_COMPLEX_DTYPES = ("complex64", "complex128")
_DTYPE_BY_CODE = {code: name for name, (code, _) in DTYPES.items()}
_DTYPE_ALIASES = {"f16": "float16", "half": "float16", "bf16": "bfloat16",
                  "f32": "float32", "float": "float32", "f64": "float64",
                  "double": "float64", "u8": "uint8", "i8": "int8",
                  "i16": "int16", "i32": "int32", "i64": "int64", "long": "int64",
                  "int": "int64", "bool_": "bool", "u16": "uint16", "u32": "uint32",
                  "u64": "uint64", "c64": "complex64", "c128": "complex128",
                  "cfloat": "complex64", "cdouble": "complex128",
                  "complex": "complex128"}

DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST = 1, 2, 3

FORMATS = {"contiguous": 0, "channels_last": 1, "channels_last_3d": 2, "preserve": 3}

OPS = {"fill": 0, "zero": 1, "add": 2, "sub": 3, "mul": 4, "div": 5, "clamp": 6,
       "relu": 7, "neg": 8, "abs": 9, "sqrt": 10, "exp": 11, "sign": 12}

SLICE_NONE = -(1 << 63)  # SM_SLICE_NONE == INT64_MIN
SHARE_DESC_SIZE = 144  # SM_SHARE_DESC_SIZE: the bytes of an sm_share_desc
MAX_DIMS = 16

# --------------------------------------------------------------------------
# C structs
# --------------------------------------------------------------------------


class SmDevice(Structure):
    _fields_ = [("type", c_int32), ("index", c_int32)]


class SmMemoryStats(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved0", c_uint32),
                ("allocated_bytes", c_int64), ("reserved_bytes", c_int64),
                ("peak_allocated_bytes", c_int64), ("peak_reserved_bytes", c_int64),
                ("num_allocs", c_int64), ("num_frees", c_int64),
                ("cache_hits", c_int64), ("device_allocs", c_int64),
                ("device_frees", c_int64), ("active_views", c_int64),
                ("active_storages", c_int64), ("requested_bytes", c_int64),
                ("reserved", c_int64 * 8)]


_STATS_FIELDS = [f for f, _ in SmMemoryStats._fields_
                 if f not in ("struct_size", "reserved0", "reserved")]


class SmOomInfo(Structure):
    """sm_oom_info: what the out-of-memory observer is told (read only the
    fields within struct_size)."""
    _fields_ = [("struct_size", c_uint32), ("device", SmDevice), ("reserved0", c_uint32),
                ("requested_bytes", c_int64), ("allocated_bytes", c_int64),
                ("reserved_bytes", c_int64), ("cached_free_bytes", c_int64),
                ("largest_free_block", c_int64), ("report", c_char_p)]


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


_DLDeleter = CFUNCTYPE(None, c_void_p)


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                ("deleter", c_void_p)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p),
                ("deleter", c_void_p), ("flags", c_uint64),
                ("dl_tensor", DLTensor)]


DLPACK_FLAG_READ_ONLY = 1
DLPACK_FLAG_IS_COPIED = 2
# sm_to_dlpack_ex flags
DLPACK_VERSIONED = 1   # a DLManagedTensorVersioned (else the legacy struct)
DLPACK_NORMALIZE = 2   # negative strides exported as a dense copy
DLPACK_COPY = 4        # always a fresh row-major copy (copy=True)
DLPACK_NO_COPY = 8     # never a copy: refused with SM_ERR_UNSUPPORTED (copy=False)

# --------------------------------------------------------------------------
# Loading the library
# --------------------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))

# Library discovery lives in _loader (standard library only, unit-tested
# without loading anything): STRIDEMEM_LIB, the copy bundled in a wheel, the
# system install, then the source tree's build directories; sanitizer builds
# are skipped unless their runtime is already loaded.
from . import _loader  # noqa: E402

# The package version, the repository's VERSION. The build backend
# (bindings/python/_backend) reads this line without importing the package:
# keep it a plain string literal.
__version__ = "0.4.0"

# The repository root when the package is imported from the source tree
# (bindings/python/stridemem), else None.
_REPO = _loader.source_repo(_HERE)


def _read_repo_version():
    text = _loader.repo_version(_REPO) if _REPO is not None else None
    try:
        return _loader.version_tuple(text) if text else None
    except ValueError:
        return None


# The C API this module declares (include/stridemem_version.h). While the
# major version is 0, every minor version may break the ABI.
BINDING_VERSION = (0, 4, 0)
_REPO_VERSION = _read_repo_version()
BINDING_MAJOR = BINDING_VERSION[0]

_LOADED = _loader.load(BINDING_VERSION, _HERE)
lib = _LOADED.handle
# The file actually opened, and how it was found: "STRIDEMEM_LIB", "bundled",
# "system" or "source tree".
LIBRARY_PATH = _LOADED.path
LIBRARY_SOURCE = _LOADED.source

_T = c_void_p  # every handle type is an opaque pointer
_P64 = POINTER(c_int64)
_P32 = POINTER(c_int32)

# name: (restype, argtypes) for every function of include/stridemem.h
_SIGNATURES = {
    "sm_status_string": (c_char_p, [c_int32]),
    "sm_last_error": (c_char_p, []),
    "sm_version": (c_int32, [POINTER(c_int), POINTER(c_int), POINTER(c_int)]),
    "sm_dtype_size": (c_size_t, [c_int32]),
    "sm_dtype_name": (c_char_p, [c_int32]),
    "sm_cuda_device_count": (c_int32, [_P32]),
    "sm_tensor_retain": (c_int32, [_T]),
    "sm_tensor_release": (c_int32, [_T]),
    "sm_empty": (c_int32, [_P64, c_int32, c_int32, SmDevice, POINTER(_T)]),
    "sm_empty_strided": (c_int32, [_P64, _P64, c_int32, c_int32, SmDevice, POINTER(_T)]),
    "sm_zeros": (c_int32, [_P64, c_int32, c_int32, SmDevice, POINTER(_T)]),
    "sm_full": (c_int32, [_P64, c_int32, c_double, c_int32, SmDevice, POINTER(_T)]),
    "sm_arange": (c_int32, [c_double, c_double, c_int64, c_int32, SmDevice, POINTER(_T)]),
    "sm_from_host": (c_int32, [c_void_p, _P64, c_int32, c_int32, SmDevice, POINTER(_T)]),
    "sm_from_blob": (c_int32, [c_void_p, _P64, _P64, c_int32, c_int32, SmDevice,
                               c_void_p, c_void_p, POINTER(_T)]),
    "sm_copy_to_host": (c_int32, [_T, c_void_p, c_size_t]),
    "sm_ndim": (c_int32, [_T, _P32]),
    "sm_shape": (c_int32, [_T, _P64, c_int32]),
    "sm_strides": (c_int32, [_T, _P64, c_int32]),
    "sm_storage_offset": (c_int32, [_T, _P64]),
    "sm_dtype_of": (c_int32, [_T, _P32]),
    "sm_device_of": (c_int32, [_T, POINTER(SmDevice)]),
    "sm_numel": (c_int32, [_T, _P64]),
    "sm_nbytes": (c_int32, [_T, _P64]),
    "sm_storage_nbytes": (c_int32, [_T, _P64]),
    "sm_data_ptr": (c_int32, [_T, POINTER(c_void_p)]),
    "sm_is_contiguous": (c_int32, [_T, c_int32, POINTER(c_int)]),
    "sm_same_storage": (c_int32, [_T, _T, POINTER(c_int)]),
    "sm_version_counter": (c_int32, [_T, _P64]),
    "sm_is_read_only": (c_int32, [_T, POINTER(c_int)]),
    "sm_tensor_storage": (c_int32, [_T, POINTER(_T)]),
    "sm_storage_retain": (c_int32, [_T]),
    "sm_storage_release": (c_int32, [_T]),
    "sm_storage_size": (c_int32, [_T, _P64]),
    "sm_storage_data_ptr": (c_int32, [_T, POINTER(c_void_p)]),
    "sm_storage_device": (c_int32, [_T, POINTER(SmDevice)]),
    "sm_storage_id": (c_int32, [_T, POINTER(c_uint64)]),
    "sm_tensor_from_storage": (c_int32, [_T, _P64, _P64, c_int32, c_int64, c_int32,
                                         POINTER(_T)]),
    "sm_view": (c_int32, [_T, _P64, c_int32, POINTER(_T)]),
    "sm_as_strided": (c_int32, [_T, _P64, _P64, c_int32, c_int64, POINTER(_T)]),
    "sm_slice": (c_int32, [_T, c_int32, c_int64, c_int64, c_int64, POINTER(_T)]),
    "sm_narrow": (c_int32, [_T, c_int32, c_int64, c_int64, POINTER(_T)]),
    "sm_select": (c_int32, [_T, c_int32, c_int64, POINTER(_T)]),
    "sm_permute": (c_int32, [_T, _P32, c_int32, POINTER(_T)]),
    "sm_transpose": (c_int32, [_T, c_int32, c_int32, POINTER(_T)]),
    "sm_movedim": (c_int32, [_T, _P32, _P32, c_int32, POINTER(_T)]),
    "sm_expand": (c_int32, [_T, _P64, c_int32, POINTER(_T)]),
    "sm_squeeze": (c_int32, [_T, _P32, c_int32, POINTER(_T)]),
    "sm_unsqueeze": (c_int32, [_T, c_int32, POINTER(_T)]),
    "sm_flatten": (c_int32, [_T, c_int32, c_int32, POINTER(_T)]),
    "sm_unflatten": (c_int32, [_T, c_int32, _P64, c_int32, POINTER(_T)]),
    "sm_unfold": (c_int32, [_T, c_int32, c_int64, c_int64, POINTER(_T)]),
    "sm_diagonal": (c_int32, [_T, c_int64, c_int32, c_int32, POINTER(_T)]),
    "sm_split": (c_int32, [_T, c_int64, c_int32, POINTER(_T), c_int32, _P32]),
    "sm_chunk": (c_int32, [_T, c_int32, c_int32, POINTER(_T), c_int32, _P32]),
    "sm_flip": (c_int32, [_T, _P32, c_int32, POINTER(_T)]),
    "sm_reshape_would_copy": (c_int32, [_T, _P64, c_int32, POINTER(c_int)]),
    "sm_reshape": (c_int32, [_T, _P64, c_int32, POINTER(_T), POINTER(c_int)]),
    "sm_contiguous": (c_int32, [_T, c_int32, POINTER(_T), POINTER(c_int)]),
    "sm_clone": (c_int32, [_T, c_int32, POINTER(_T)]),
    "sm_to": (c_int32, [_T, SmDevice, c_int32, POINTER(_T), POINTER(c_int)]),
    "sm_copy_into": (c_int32, [_T, _T]),
    "sm_index_select": (c_int32, [_T, c_int32, _T, POINTER(_T)]),
    "sm_inplace_scalar": (c_int32, [_T, c_int32, c_double, c_double]),
    "sm_inplace_tensor": (c_int32, [_T, c_int32, _T, c_double]),
    "sm_memory_stats": (c_int32, [SmDevice, POINTER(SmMemoryStats)]),
    "sm_reset_peak_stats": (c_int32, [SmDevice]),
    "sm_empty_cache": (c_int32, [SmDevice]),
    "sm_memory_summary": (c_int32, [SmDevice, ctypes.c_char_p, c_size_t, POINTER(c_size_t)]),
    "sm_memory_snapshot": (c_int32, [SmDevice, ctypes.c_char_p, c_size_t, POINTER(c_size_t)]),
    "sm_push_tag": (c_int32, [c_char_p]),
    "sm_pop_tag": (c_int32, []),
    "sm_memory_record_history": (c_int32, [SmDevice, c_int64]),
    "sm_set_oom_observer": (c_int32, [c_void_p, c_void_p]),
    "sm_stack_create": (c_int32, [SmDevice, c_int64, POINTER(_T)]),
    "sm_stack_push": (c_int32, [_T, _P64, c_int32, c_int32, POINTER(_T)]),
    "sm_stack_mark": (c_int32, [_T, _P64]),
    "sm_stack_pop_to": (c_int32, [_T, c_int64]),
    "sm_stack_used": (c_int32, [_T, _P64, _P64]),
    "sm_stack_release": (c_int32, [_T]),
    "sm_set_stream": (c_int32, [SmDevice, c_void_p]),
    "sm_get_stream": (c_int32, [SmDevice, POINTER(c_void_p)]),
    "sm_synchronize": (c_int32, [SmDevice]),
    "sm_record_stream": (c_int32, [_T, c_void_p]),
    "sm_set_num_threads": (c_int32, [c_int32]),
    "sm_get_num_threads": (c_int32, [_P32]),
    "sm_to_dlpack": (c_int32, [_T, c_int, POINTER(c_void_p)]),
    "sm_to_dlpack_ex": (c_int32, [_T, c_uint32, POINTER(SmDevice), POINTER(c_void_p),
                                  POINTER(c_int)]),
    "sm_from_dlpack": (c_int32, [c_void_p, c_int, POINTER(_T)]),
    "sm_empty_shared": (c_int32, [_P64, c_int32, c_int32, POINTER(_T)]),
    "sm_share_memory": (c_int32, [_T]),
    "sm_is_shared": (c_int32, [_T, POINTER(c_int)]),
    "sm_storage_is_shared": (c_int32, [_T, POINTER(c_int)]),
    "sm_storage_export": (c_int32, [_T, c_void_p, POINTER(c_int)]),
    "sm_tensor_export": (c_int32, [_T, c_void_p, POINTER(c_int)]),
    "sm_storage_import": (c_int32, [c_void_p, c_int, POINTER(_T)]),
    "sm_stack_create_shared": (c_int32, [c_int64, POINTER(_T)]),
    "sm_stack_storage": (c_int32, [_T, POINTER(_T)]),
    "sm_debug_fail_alloc": (c_int32, [c_int64]),
    "sm_debug_live_handles": (c_int32, [_P64, _P64, _P64]),
    "sm_debug_age_handle_slot": (c_int32, [c_void_p, c_int64]),
}

MISSING_SYMBOLS = []
for _name, (_res, _args) in _SIGNATURES.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        MISSING_SYMBOLS.append(_name)
        continue
    _fn.restype = _res
    _fn.argtypes = _args
if MISSING_SYMBOLS:
    raise ImportError("stridemem: %s lacks symbols: %s"
                      % (LIBRARY_PATH, ", ".join(MISSING_SYMBOLS)))


class StrideMemError(Exception):
    """A stridemem call returned a status other than SM_OK.

    Every failing call raises a subclass chosen by the status (see
    ``ERROR_CLASSES``) that is also the built-in exception Python users catch
    for that kind of failure: ``except IndexError`` catches an out-of-bounds
    index, ``except MemoryError`` an allocation that cannot be satisfied,
    ``except StrideMemError`` every failure of the library."""

    def __init__(self, status: int, message: str = "", function: str = "") -> None:
        self.status = int(status)
        self.status_name = STATUS_NAMES.get(self.status, "SM_STATUS_%d" % self.status)
        self.message = message
        # The Python call that failed ("reshape()") and the message in the
        # binding's words; c_function and c_message are the C library's
        # (sm_reshape, sm_last_error()) where a C call failed.
        self.function = function
        self.c_function = function
        self.c_message = message
        text = "%s (%s)" % (self.status_name, self.status)
        if function:
            text = "%s: %s" % (function, text)
        if message:
            text += ": " + message
        super().__init__(text)


class InvalidArgumentError(StrideMemError, ValueError):
    """SM_ERR_INVALID_ARGUMENT: an argument the library cannot take."""


class InvalidHandleError(StrideMemError, ValueError):
    """SM_ERR_INVALID_HANDLE: a closed (released) or foreign handle, as an
    operation on a closed file."""


class OutOfMemoryError(StrideMemError, MemoryError):
    """SM_ERR_OUT_OF_MEMORY: an allocation that cannot be satisfied."""


class ShapeError(StrideMemError, ValueError):
    """SM_ERR_SHAPE: shapes that do not fit (view, broadcast, reshape)."""


class OutOfBoundsError(StrideMemError, IndexError):
    """SM_ERR_OUT_OF_BOUNDS: a dim, index or view outside the tensor/storage."""


class DTypeError(StrideMemError, TypeError):
    """SM_ERR_DTYPE: a dtype the operation does not take, or a scalar it
    cannot hold."""


class DeviceError(StrideMemError, RuntimeError):
    """SM_ERR_DEVICE: a device this build or machine does not have, or
    tensors on devices that do not go together."""


class OverlapError(StrideMemError, RuntimeError):
    """SM_ERR_OVERLAP: a write whose destination elements overlap each other
    or its source in a way that has no defined result."""


class SizeOverflowError(StrideMemError, OverflowError):
    """SM_ERR_OVERFLOW: a shape, stride or offset whose byte size overflows."""


class UnsupportedError(StrideMemError, NotImplementedError):
    """SM_ERR_UNSUPPORTED: an operation this tensor or build cannot do."""


class CudaError(StrideMemError, RuntimeError):
    """SM_ERR_CUDA: the CUDA runtime reported an error."""


class InternalError(StrideMemError, RuntimeError):
    """SM_ERR_INTERNAL: a library bug; please report it with the message."""


class ReadOnlyError(StrideMemError, ValueError):
    """SM_ERR_READ_ONLY: a write into read-only memory (NumPy raises
    ValueError for the same)."""


# status -> the exception class a failing call raises
ERROR_CLASSES = {
    ERR_INVALID_ARGUMENT: InvalidArgumentError, ERR_INVALID_HANDLE: InvalidHandleError,
    ERR_OUT_OF_MEMORY: OutOfMemoryError, ERR_SHAPE: ShapeError,
    ERR_OUT_OF_BOUNDS: OutOfBoundsError, ERR_DTYPE: DTypeError, ERR_DEVICE: DeviceError,
    ERR_OVERLAP: OverlapError, ERR_OVERFLOW: SizeOverflowError,
    ERR_UNSUPPORTED: UnsupportedError, ERR_CUDA: CudaError, ERR_INTERNAL: InternalError,
    ERR_READ_ONLY: ReadOnlyError,
}


def error_for(status: int, message: str = "", function: str = "") -> StrideMemError:
    """The exception a failing call with this status raises (not raised)."""
    return ERROR_CLASSES.get(int(status), StrideMemError)(status, message, function)


class DLPackExportError(StrideMemError, BufferError):
    """Tensor.__dlpack__ cannot export as asked (the array API's BufferError):
    a copy is needed but copy=False forbids it, the requested dl_device is not
    available, or the tensor was carved from a stack of views (export it with
    copy=True). Also a StrideMemError, with the status and message of
    sm_to_dlpack_ex."""


def last_error() -> str:
    """sm_last_error() as a str ("" when no call has failed on this thread)."""
    msg = lib.sm_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def status_string(status: int) -> str:
    """sm_status_string(status): the status's name ("SM_OK", ...)."""
    s = lib.sm_status_string(int(status))
    return s.decode("utf-8", "replace") if s else ""


# The Python name of what each C function does, for error messages: a
# Python user called reshape(), not sm_reshape. Where several Python calls
# share one C function (ones and full call sm_full) the message names the
# most direct one; .c_function keeps the C name.
_PY_NAMES = {
    "sm_view": "view()", "sm_as_strided": "as_strided()", "sm_slice": "slice()",
    "sm_narrow": "narrow()", "sm_select": "select()", "sm_permute": "permute()",
    "sm_transpose": "transpose()", "sm_movedim": "movedim()", "sm_expand": "expand()",
    "sm_squeeze": "squeeze()", "sm_unsqueeze": "unsqueeze()", "sm_flatten": "flatten()",
    "sm_unflatten": "unflatten()", "sm_unfold": "unfold()", "sm_diagonal": "diagonal()",
    "sm_split": "split()", "sm_chunk": "chunk()", "sm_flip": "flip()",
    "sm_reshape": "reshape()", "sm_reshape_would_copy": "reshape_would_copy()",
    "sm_contiguous": "contiguous()", "sm_clone": "clone()", "sm_to": "to()",
    "sm_copy_into": "copy_()", "sm_index_select": "index_select()",
    "sm_inplace_scalar": "an in-place op", "sm_inplace_tensor": "an in-place op",
    "sm_ndim": "ndim", "sm_shape": "shape", "sm_strides": "strides",
    "sm_storage_offset": "storage_offset", "sm_numel": "numel", "sm_nbytes": "nbytes",
    "sm_storage_nbytes": "storage_nbytes", "sm_version_counter": "version",
    "sm_dtype_of": "dtype", "sm_device_of": "device", "sm_data_ptr": "data_ptr",
    "sm_is_read_only": "is_read_only", "sm_is_contiguous": "is_contiguous()",
    "sm_same_storage": "same_storage()", "sm_tensor_storage": "storage()",
    "sm_share_memory": "share_memory_()", "sm_is_shared": "is_shared()",
    "sm_tensor_export": "pickling a shared tensor", "sm_tensor_retain": "retain()",
    "sm_tensor_release": "close()", "sm_copy_to_host": "numpy()",
    "sm_from_host": "from_numpy()", "sm_empty": "empty()", "sm_empty_shared": "empty_shared()",
    "sm_empty_strided": "empty_strided()", "sm_zeros": "zeros()", "sm_full": "full()",
    "sm_arange": "arange()", "sm_from_blob": "from_blob()", "sm_from_dlpack": "from_dlpack()",
    "sm_to_dlpack": "__dlpack__()", "sm_to_dlpack_ex": "__dlpack__()",
    "sm_record_stream": "record_stream()", "sm_storage_size": "Storage.nbytes",
    "sm_storage_data_ptr": "Storage.data_ptr", "sm_storage_device": "Storage.device",
    "sm_storage_id": "Storage.id", "sm_storage_is_shared": "Storage.is_shared",
    "sm_storage_export": "Storage.export()", "sm_storage_import": "Storage.from_shared()",
    "sm_tensor_from_storage": "Storage.tensor()", "sm_storage_retain": "Storage.tensor()",
    "sm_storage_release": "Storage.close()", "sm_stack_create": "Stack()",
    "sm_stack_create_shared": "Stack(shared=True)", "sm_stack_push": "Stack.push()",
    "sm_stack_mark": "Stack.mark()", "sm_stack_pop_to": "Stack.pop_to()",
    "sm_stack_used": "Stack.used", "sm_stack_storage": "Stack.storage()",
    "sm_stack_release": "Stack.close()", "sm_memory_stats": "memory_stats()",
    "sm_reset_peak_stats": "reset_peak_stats()", "sm_empty_cache": "empty_cache()",
    "sm_memory_summary": "memory_summary()", "sm_memory_snapshot": "memory_snapshot()",
    "sm_memory_record_history": "record_memory_history()", "sm_push_tag": "tag()",
    "sm_pop_tag": "tag()", "sm_set_oom_observer": "set_oom_observer()",
    "sm_cuda_device_count": "cuda_device_count()", "sm_synchronize": "synchronize()",
    "sm_set_stream": "set_stream()", "sm_get_stream": "get_stream()",
    "sm_set_num_threads": "set_num_threads()", "sm_get_num_threads": "get_num_threads()",
    "sm_debug_fail_alloc": "debug_fail_alloc()", "sm_debug_live_handles": "debug_live_handles()",
    "sm_version": "version()", "sm_dtype_size": "dtype_size()",
}
_C_NAME = re.compile(r"\bsm_[a-z0-9_]+\b")
# "t is NULL (not a tensor handle)": the binding passes NULL only for an
# object whose close() has run.
_NULL_HANDLE = re.compile(r"\b(\w+) is NULL \(not an? (\w+) handle\)")
# The C library writes "a %s" before every dtype name.
_ARTICLE_AN = re.compile(r"\ba (?=int(?:8|16|32|64)\b)")
_ARTICLE_A = re.compile(r"\ban (?=uint)")
# Scalars reach the library as doubles and its messages print them with %g
# ("value = 1.09951e+12") and dtype ranges with %.17g.
_C_SCALAR = re.compile(r"\b(\w+) = ([-+]?(?:inf|nan|[0-9.]+(?:e[-+]?[0-9]+)?))(?=[ :;,)]|$)")
_C_RANGE = re.compile(r"\b(u?int(?:8|16|32|64)) holds \[[^\]]*\]")


def _exact(v: float) -> str:
    """A double as Python writes a number: whole values as integers
    (1099511627776, not 1.09951e+12), others as repr (shortest exact)."""
    if math.isfinite(v) and v == int(v):
        return str(int(v))
    return repr(v)


def _int_range(name: str) -> str:
    bits = int(name.lstrip("uint"))
    lo, hi = (0, (1 << bits) - 1) if name[0] == "u" else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return "%s holds [%d, %d]" % (name, lo, hi)


def _python_message(message: str, function: str = "", doubles: Sequence[float] = ()) -> str:
    """sm_last_error's text in the binding's words: without the leading name
    of the failed C function (the exception names the Python call), other C
    function names as the Python calls that run them, a NULL handle as a
    closed object, a scalar as exactly the number passed (`doubles`: the
    call's double arguments), integer ranges exactly, and "an int32"."""
    if function and message.startswith(function + ": "):
        message = message[len(function) + 2:]
    message = _NULL_HANDLE.sub(
        lambda m: "%s is closed (close(), release() or the end of a with block dropped it)"
        % ("this " + m.group(2) if m.group(1) in ("t", "s", "stack", "storage")
           else "the %s passed as %s" % (m.group(2), m.group(1))), message)

    def scalar(m: Any) -> str:
        for v in doubles:
            if "%g" % v == m.group(2):
                return "%s = %s" % (m.group(1), _exact(v))
        return m.group(0)
    message = _C_SCALAR.sub(scalar, message)
    message = _C_RANGE.sub(lambda m: _int_range(m.group(1)), message)
    message = _C_NAME.sub(lambda c: _PY_NAMES.get(c.group(0), c.group(0)), message)
    return _ARTICLE_A.sub("a ", _ARTICLE_AN.sub("an ", message))


def _error(status, function, method=None, doubles=(), raw=None):
    """The exception for a failed C call (built here and raised by the
    caller: a local name for it in the raising frame would be a reference
    cycle through its traceback, keeping tensors alive until gc runs).
    raw: sm_last_error() when the caller had to read it early."""
    if raw is None:
        raw = last_error()
    e = error_for(status, _python_message(raw, function, doubles),
                  method or _PY_NAMES.get(function, function))
    e.c_function, e.c_message = function, raw
    return e


def _check(status, function, method=None, doubles=()):
    if status != 0:
        raise _error(status, function, method, doubles)


def _call(name, *args, method=None):
    """Calls the C function `name`; a failure raises the status's exception,
    naming `method` (the Python call; by default the one _PY_NAMES gives)."""
    status = getattr(lib, name)(*args)
    if status != 0:
        _check(status, name, method, [a for a in args if type(a) is float])


def version() -> Tuple[int, int, int]:
    """The library's run-time version (major, minor, patch)."""
    a, b, c = c_int(), c_int(), c_int()
    _call("sm_version", byref(a), byref(b), byref(c))
    return (a.value, b.value, c.value)


def is_compatible(binding, library):
    """Can a binding written for version `binding` call a library of version
    `library`? The same major and a minor at least the binding's; while the
    major is 0, the same minor (semver: 0.x minors break)."""
    if binding[0] != library[0]:
        return False
    if binding[0] == 0:
        return library[1] == binding[1]
    return library[1] >= binding[1]


LIBRARY_VERSION = version()
for _want in (BINDING_VERSION, _REPO_VERSION):
    if _want is not None and not (is_compatible(_want, LIBRARY_VERSION)
                                  and LIBRARY_VERSION >= _want):
        raise ImportError("stridemem: library %s (found via %s) is version %d.%d.%d, "
                          "the binding expects %d.%d.%d (same major, same minor while "
                          "the major is 0, not older). Rebuild or reinstall the library "
                          "of this version, or point STRIDEMEM_LIB at one."
                          % ((LIBRARY_PATH, LIBRARY_SOURCE) + LIBRARY_VERSION + _want))

# --------------------------------------------------------------------------
# Small helpers: dtypes, devices, arrays
# --------------------------------------------------------------------------


def dtype_name(dtype: Any) -> str:
    """Canonical dtype name for a name, alias, code or NumPy dtype."""
    if isinstance(dtype, str):
        name = _DTYPE_ALIASES.get(dtype, dtype)
        if name in DTYPES:
            return name
        raise _unknown_dtype(dtype)
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in _DTYPE_BY_CODE:
            return _DTYPE_BY_CODE[dtype]
        raise ValueError("stridemem: unknown dtype code %d" % dtype)
    if _np is not None:
        try:
            nd = _np.dtype(dtype)  # type: ignore[arg-type]
        except TypeError:
            nd = None
        if nd is not None:
            # .name ignores the byte order: callers that exchange data compare
            # the whole NumPy dtype with numpy_dtype() (native order).
            name = "bool" if nd == _np.bool_ else nd.name
            if name in DTYPES and nd.fields is None:
                return name
            raise ValueError("stridemem: NumPy's %s maps to no stridemem dtype (the "
                            "dtypes: %s)" % (nd, ", ".join(DTYPES)))
    raise _unknown_dtype(dtype)


def _unknown_dtype(dtype):
    return ValueError("stridemem: unknown dtype %r (the dtypes: %s; NumPy dtypes and "
                      "aliases such as 'f32' are accepted)" % (dtype, ", ".join(DTYPES)))


def _dtype_code(dtype):
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype  # raw codes pass through (the library validates them)
    return DTYPES[dtype_name(dtype)][0]


def numpy_dtype(dtype: Any) -> Any:
    """The NumPy dtype used to exchange a stridemem dtype (bfloat16 -> uint16)."""
    return _np.dtype(DTYPES[dtype_name(dtype)][1])


def dtype_size(dtype: Any) -> int:
    """Bytes per element of dtype (sm_dtype_size)."""
    return int(lib.sm_dtype_size(_dtype_code(dtype)))


class DType(str):
    """A stridemem dtype: its canonical name (a str, so ``t.dtype == "float32"``
    holds) that also compares equal to every other spelling of the same dtype:
    NumPy dtypes and scalar types (``t.dtype == np.float32``), aliases
    (``"f32"``) and codes. bfloat16 equals only itself (NumPy's uint16 is
    uint16)."""

    __slots__ = ()

    def __new__(cls, dtype: Any) -> "DType":
        return str.__new__(cls, dtype_name(dtype))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            if str.__eq__(self, other):
                return True
            if other in DTYPES:  # another canonical name: no lookup needed
                return False
        try:
            return str.__eq__(self, dtype_name(other))
        except (ValueError, TypeError):
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return "stridemem.%s" % str.__str__(self)

    @property
    def name(self) -> str:
        """The canonical name as a plain str."""
        return str.__str__(self)

    @property
    def code(self) -> int:
        """The C API's sm_dtype value."""
        return DTYPES[self.name][0]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return dtype_size(self.name)

    @property
    def is_complex(self) -> bool:
        """True for complex64 and complex128."""
        return self.name in _COMPLEX_DTYPES

    @property
    def numpy(self) -> Any:
        """The NumPy dtype this dtype is exchanged as (bfloat16 -> uint16)."""
        return numpy_dtype(self.name)


_DTYPE_OBJECTS = {code: DType(name) for name, (code, _) in DTYPES.items()}


def is_complex(dtype: Any) -> bool:
    """True for complex64 and complex128."""
    return dtype_name(dtype) in _COMPLEX_DTYPES


def _is_complex_scalar(value):
    return isinstance(value, complex) or (
        _np is not None and isinstance(value, _np.complexfloating))


def _complex_scalar_tensor(value, dtype, device):
    """A 0-d complex tensor holding value (no NumPy needed): (re, im) as two
    floats or doubles, the element layout of complex64/complex128."""
    z = complex(value)
    part = ctypes.c_float if dtype_name(dtype) == "complex64" else c_double
    data = (part * 2)(z.real, z.imag)
    out = _out()
    _call("sm_from_host", ctypes.cast(data, c_void_p), None, 0, _dtype_code(dtype),
          _dev(device), byref(out))
    return Tensor._wrap(out)


def _real_scalar(value, what):
    """value as the C API's real double. A complex value is taken only when
    its imaginary part is 0 (nothing is lost); else TypeError."""
    if _is_complex_scalar(value):
        z = complex(value)
        if z.imag != 0:
            raise TypeError("stridemem: %s takes a real scalar (the C API's scalars are "
                            "doubles), got %r" % (what, value))
        return z.real
    return float(value)


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


# --------------------------------------------------------------------------
# The keep-alive registry: Python objects that memory shared with the library
# depends on. One object, one lock, one key space, per-kind statistics.
# --------------------------------------------------------------------------


class _Registry(object):
    """Holds Python objects under unique integer keys until they may go.

    Two kinds of entries share it:

    * ``"blob"``: the owner of memory wrapped by :func:`from_blob` (and its
      ``on_free``). The key is the ctx of the C deleter, which drops the entry
      when the library's last view of the memory dies, from any thread.
    * ``"capsule"``: an exported DLPack capsule, dropped by :meth:`sweep` once
      nothing but the registry refers to it (see :func:`dlpack_collect`).

    The lock is reentrant: dropping a capsule can free a storage whose blob
    deleter then drops a blob entry on the same thread, and a garbage
    collection inside a locked section can do the same. Objects released by
    :meth:`sweep` die after the lock is let go."""

    def __init__(self, stats):
        self.lock = threading.RLock()
        self._keys = itertools.count(1)
        self._held = {kind: {} for kind in stats}
        self.stats = {kind: dict.fromkeys(names, 0) for kind, names in stats.items()}

    def hold(self, kind, obj, extra=None):
        """Keeps obj (and extra) alive under a new key, which is returned."""
        entry = (obj, extra)
        with self.lock:
            key = next(self._keys)
            self._held[kind][key] = entry
        return key

    def drop(self, kind, key, stat=None, missing=None):
        """Removes key's entry and returns it as (obj, extra), or None when
        there is none; counts `stat` or `missing` in the same locked step."""
        with self.lock:
            entry = self._held[kind].pop(key, None)
            name = stat if entry is not None else missing
            if name is not None:
                self.stats[kind][name] += 1
        return entry

    def count(self, kind):
        with self.lock:
            return len(self._held[kind])

    def bump(self, kind, stat):
        with self.lock:
            self.stats[kind][stat] += 1

    def sweep(self, kind):
        """Drops the entries of `kind` whose object only the registry still
        refers to; returns how many."""
        with self.lock:
            held = self._held[kind]
            # getrefcount sees the entry tuple's reference and its own argument.
            dead = [k for k, e in list(held.items()) if sys.getrefcount(e[0]) <= 2]
            released = [held.pop(k) for k in dead]
        n = len(released)
        del released  # the objects die here, outside the lock
        return n


_registry = _Registry({
    "blob": ("wrapped", "freed", "unknown_key"),
    "capsule": ("exported", "destructor_deleted", "destructor_consumed"),
})
BLOB_STATS = _registry.stats["blob"]        # from_blob: wrapped, freed, unknown_key
DLPACK_STATS = _registry.stats["capsule"]   # __dlpack__ capsules and their destructor

# --------------------------------------------------------------------------
# Zero-copy wrapping of caller memory (sm_from_blob) with a Python deleter
# --------------------------------------------------------------------------


def _blob_deleter_impl(data, ctx):
    # Runs when the last tensor over the wrapped memory dies (any thread).
    try:
        entry = _registry.drop("blob", ctx or 0, stat="freed", missing="unknown_key")
        if entry is None:
            return
        owner, on_free = entry
        del owner, entry
        if on_free is not None:
            on_free()
    except Exception:  # pragma: no cover - must never propagate into C
        pass


_DELETER_T = CFUNCTYPE(None, c_void_p, c_void_p)
_blob_deleter = _DELETER_T(_blob_deleter_impl)
# The callback must outlive every tensor, even at interpreter shutdown: leak one
# reference on purpose so that the thunk is never freed.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_blob_deleter))


def blob_live_count() -> int:
    """Number of wrapped blobs whose deleter has not run yet."""
    return _registry.count("blob")


def from_blob(address: int, shape: Sequence[int], dtype: Any,
              strides: Optional[Sequence[int]] = None, device: DeviceLike = "cpu",
              owner: Any = None, on_free: Optional[Callable[[], Any]] = None) -> Tensor:
    """Zero copy over memory at `address` (element [0,...,0]); strides in
    elements (None: row-major). `owner` is kept alive, and `on_free()`
    called, exactly once when the last view dies."""
    shape = tuple(int(s) for s in shape)
    sh, n = _i64(shape)
    st = None
    if strides is not None:
        if len(strides) != len(shape):
            raise ValueError("stridemem: strides and shape differ in length")
        st, _ = _i64(strides)
    key = _registry.hold("blob", owner, on_free)
    out = _out()
    status = lib.sm_from_blob(c_void_p(address), sh, st, n, _dtype_code(dtype),
                              _dev(device), ctypes.cast(_blob_deleter, c_void_p),
                              c_void_p(key), byref(out))
    if status != 0:
        msg = last_error()
        _registry.drop("blob", key)  # on failure the deleter is not called
        raise _error(status, "sm_from_blob", raw=msg)
    _registry.bump("blob", "wrapped")
    return Tensor._wrap(out)


def from_numpy_blob(arr: Any, device: DeviceLike = "cpu", dtype: Any = None) -> Tensor:
    """Zero copy over a NumPy array's memory (CPU). The array is kept alive
    until the last view dies. Writes through the tensor are visible in the
    array. Read-only arrays are refused (use from_numpy to copy)."""
    if not isinstance(arr, _np.ndarray):
        raise TypeError("stridemem: from_numpy_blob needs a numpy.ndarray")
    if not arr.flags.writeable:
        raise ValueError("stridemem: the array is read-only; a zero-copy tensor "
                         "would allow writes (use from_numpy to copy)")
    if dtype is None:
        dtype = dtype_name(arr.dtype)
    if not arr.dtype.isnative:
        raise ValueError("stridemem: the array's byte order is not the machine's (%s): "
                         "wrapping it would misread every value; from_numpy converts "
                         "(a copy), or pass arr.astype(arr.dtype.newbyteorder('='))"
                         % arr.dtype.str)
    if numpy_dtype(dtype) != arr.dtype:
        raise ValueError("stridemem: array dtype %s cannot hold %s"
                         % (arr.dtype.str, dtype_name(dtype)))
    item = arr.itemsize
    if any(s % item for s in arr.strides):
        raise ValueError("stridemem: strides %r are not multiples of the item size %d"
                         % (arr.strides, item))
    strides = [s // item for s in arr.strides]
    return from_blob(arr.ctypes.data, arr.shape, dtype, strides, device, owner=arr)


as_tensor = from_numpy_blob

# --------------------------------------------------------------------------
# Tensor
# --------------------------------------------------------------------------


def _normalize_index(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    return idx


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

    def __getitem__(self, idx: Any) -> "Tensor":
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

    def _basic_index(self, items: Tuple[Any, ...]) -> "Tensor":
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

    def _advanced_index(self, dim: int, index: Any) -> "Tensor":
        """self gathered along dim by one integer array (its shape replaces
        the dim) or boolean mask (covering dims dim.. dim+mask.ndim-1,
        replaced by the number of True elements). Always a copy."""
        shape = self.shape
        if isinstance(index, Tensor):
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

    def __setitem__(self, idx: Any, value: Any) -> None:
        """t[idx] = value through the view t[idx] (basic indices only): a
        scalar fills it, a tensor, NumPy array or (nested) list is broadcast
        and converted to t's dtype as NumPy's assignment does."""
        items = _normalize_index(idx)
        if any(_is_array_index(it) for it in items):
            raise IndexError("stridemem: assignment through an integer-array or boolean "
                             "index is not supported (it would write a gathered copy); "
                             "assign through slices")
        with _closing(self._basic_index(items)) as dst:
            if isinstance(value, Tensor):
                dst.copy_(value)
            elif _is_scalar(value):
                dst.fill_(value)
            else:
                with _closing(_host_tensor(value, dst.dtype)) as src:
                    dst.copy_(src)

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

    # -- in-place ----------------------------------------------------------
    def _inplace(self, op, value=None, alpha=1.0, b=0.0):
        name = op + "_"
        if _is_complex_scalar(value) and self.dtype in _COMPLEX_DTYPES:
            # The C API's scalars are real: a complex one travels as a 0-d
            # tensor of this dtype, broadcast by the tensor form of the op
            # (add_/sub_ have already scaled a scalar by alpha).
            value, alpha = _complex_scalar_tensor(value, self.dtype, self.device), 1.0
        if isinstance(value, Tensor):
            _call("sm_inplace_tensor", self._h, OPS[op], value._h,
                  _real_scalar(alpha, name + " alpha"), method=name + "()")
        else:
            a = 0.0 if value is None else _real_scalar(value, name)
            _call("sm_inplace_scalar", self._h, OPS[op], a, float(b), method=name + "()")
        return self

    def fill_(self, value: Any) -> "Tensor":
        """Every element set to value (a scalar, or a tensor broadcast and
        converted) in place; returns self."""
        return self._inplace("fill", value)

    def zero_(self) -> "Tensor":
        """Every element set to 0 in place; returns self."""
        return self._inplace("zero")

    def add_(self, other: Any, alpha: Union[float, complex] = 1.0) -> "Tensor":
        """self += alpha * other (a scalar, or a tensor broadcast to self) in
        place; returns self."""
        if not isinstance(other, Tensor) and alpha != 1.0:
            other = self._scaled(other, alpha)
        return self._inplace("add", other, alpha)

    def sub_(self, other: Any, alpha: Union[float, complex] = 1.0) -> "Tensor":
        """self -= alpha * other (a scalar, or a tensor broadcast to self) in
        place; returns self."""
        if not isinstance(other, Tensor) and alpha != 1.0:
            other = self._scaled(other, alpha)
        return self._inplace("sub", other, alpha)

    @staticmethod
    def _scaled(value, alpha):
        if _is_complex_scalar(value) or _is_complex_scalar(alpha):
            return complex(value) * complex(alpha)
        return float(value) * alpha

    def mul_(self, other: Any) -> "Tensor":
        """self *= other (a scalar, or a tensor broadcast to self) in place;
        returns self."""
        return self._inplace("mul", other)

    def div_(self, other: Any) -> "Tensor":
        """self /= other (a scalar, or a tensor broadcast to self) in place;
        floating and complex tensors only. Returns self."""
        return self._inplace("div", other)

    def clamp_(self, min: Optional[float] = None, max: Optional[float] = None) -> "Tensor":
        """Every element clamped to [min, max] (None: no bound) in place; not
        for complex tensors. Returns self."""
        lo = float("nan") if min is None else _real_scalar(min, "clamp_")
        hi = float("nan") if max is None else _real_scalar(max, "clamp_")
        _call("sm_inplace_scalar", self._h, OPS["clamp"], lo, hi)
        return self

    def relu_(self) -> "Tensor":
        """Negative elements set to 0 in place (not for complex tensors);
        returns self."""
        return self._inplace("relu")

    def neg_(self) -> "Tensor":
        """Every element negated in place; returns self."""
        return self._inplace("neg")

    def abs_(self) -> "Tensor":
        """Every element replaced by its absolute value in place (not for
        complex tensors); returns self."""
        return self._inplace("abs")

    def sqrt_(self) -> "Tensor":
        """Every element replaced by its square root in place (floating and
        complex tensors); returns self."""
        return self._inplace("sqrt")

    def exp_(self) -> "Tensor":
        """Every element replaced by its exponential in place (floating and
        complex tensors); returns self."""
        return self._inplace("exp")

    def sign_(self) -> "Tensor":
        """Every element replaced by -1, 0 or +1 in place (torch's sign_):
        both zeros give +0.0, NaN stays NaN (as NumPy's sign; torch gives 0),
        bool tensors are unchanged; not for complex tensors (the complex sign
        x/|x| is torch's sgn, which stridemem lacks). Returns self."""
        return self._inplace("sign")

    def __iadd__(self, other: Any) -> "Tensor":
        return self.add_(other)

    def __isub__(self, other: Any) -> "Tensor":
        return self.sub_(other)

    def __imul__(self, other: Any) -> "Tensor":
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> "Tensor":
        return self.div_(other)

    # -- host exchange -----------------------------------------------------
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

    def record_stream(self, stream: int) -> None:
        """Marks the storage as used on a CUDA stream (its cudaStream_t as an
        int): its memory is not reused until the work queued there so far
        has finished."""
        _call("sm_record_stream", self._h, c_void_p(stream))

    # -- DLPack ------------------------------------------------------------
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


def _is_array_index(it: Any) -> bool:
    """An integer-array or boolean-mask index entry (a gather, not a view)."""
    return isinstance(it, (list, Tensor)) or (_np is not None and isinstance(it, _np.ndarray)
                                              and it.ndim > 0)


def _array_index_dims(it: Any) -> Tuple[bool, int]:
    """(is a boolean mask, ndim) of an integer-array or mask index entry."""
    if isinstance(it, Tensor):
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


def _is_scalar(value: Any) -> bool:
    """A Python or NumPy number (or a 0-d NumPy array)."""
    if isinstance(value, (bool, int, float, complex)):
        return True
    return _np is not None and (isinstance(value, _np.generic)
                                or (isinstance(value, _np.ndarray) and value.ndim == 0))


# PyTorch's dtypes for Python scalars, by kind (bool < int < float < complex).
_KIND_DEFAULTS = ("bool", "int64", "float32", "complex64")
_DTYPE_KIND = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1,
               "uint16": 1, "uint32": 1, "uint64": 1, "float16": 2, "bfloat16": 2,
               "float32": 2, "float64": 2, "complex64": 3, "complex128": 3}


def _python_kind(value: Any) -> int:
    """0 bool, 1 int, 2 float, 3 complex for a Python scalar (not a NumPy
    one: np.float64 subclasses float); -1 for anything else."""
    if _np is not None and isinstance(value, _np.generic):
        return -1
    for kind, cls in enumerate((bool, int, float, complex)):
        if isinstance(value, cls):
            return kind
    return -1


def _scalar_dtype(value: Any) -> str:
    """The dtype of a fill value given without dtype= (full): PyTorch's for
    Python scalars (bool, int64, float32, complex64); a NumPy scalar or 0-d
    array keeps its dtype."""
    if _np is not None and isinstance(value, (_np.generic, _np.ndarray)):
        name = _dtype_name_or_none(_np.asarray(value).dtype)
        if name is not None:
            return name
    kind = _python_kind(value)
    return _KIND_DEFAULTS[kind] if kind >= 0 else "float32"


def _promote(a: str, b: str) -> str:
    """PyTorch's promote_types for two dtypes: the higher kind wins as it
    is (int32 with float16 gives float16, not NumPy's float32), except that
    complex64 widens to complex128 for a float64; within one kind NumPy's
    promotion."""
    if a == b:
        return a
    ka, kb = _DTYPE_KIND[a], _DTYPE_KIND[b]
    if ka != kb:
        hi, lo = (a, b) if ka > kb else (b, a)
        return "complex128" if (hi, lo) == ("complex64", "float64") else hi
    if "bfloat16" in (a, b):
        other = b if a == "bfloat16" else a
        return other if other in ("float32", "float64") else "float32"
    return dtype_name(_np.result_type(a, b))


def _values_dtype(values: Any) -> Optional[str]:
    """torch.tensor's dtype for a scalar or nested lists/tuples: every Python
    scalar counts as its kind's default (bool, int64, float32, complex64),
    every NumPy scalar or array and every tensor inside as its own dtype,
    promoted as PyTorch promotes; an empty list is float32. None when a leaf
    is something else (NumPy then says what it makes of it)."""
    dtype: Optional[str] = None
    todo = [values]
    while todo:
        v = todo.pop()
        if isinstance(v, (list, tuple)):
            todo.extend(v)
            continue
        if isinstance(v, Tensor):
            name: Optional[str] = v.dtype.name
        elif _np is not None and isinstance(v, (_np.generic, _np.ndarray)):
            name = _dtype_name_or_none(v.dtype)
        else:
            kind = _python_kind(v)
            name = _KIND_DEFAULTS[kind] if kind >= 0 else None
        if name is None:
            return None
        dtype = name if dtype is None else _promote(dtype, name)
    return "float32" if dtype is None else dtype


def _host_tensor(value: Any, dtype: Any) -> Tensor:
    """A CPU tensor of what NumPy makes of value (array, nested list...),
    for an assignment that copy_into broadcasts and converts."""
    if _np is None:
        raise TypeError("stridemem: assigning a %s needs NumPy (or pass a Tensor)"
                        % type(value).__name__)
    arr = _np.asarray(value)
    if arr.dtype == object or _dtype_name_or_none(arr.dtype) is None:
        raise TypeError("stridemem: cannot assign a %s holding %s values"
                        % (type(value).__name__, arr.dtype))
    return from_numpy(arr)


def _dtype_name_or_none(dtype: Any) -> Optional[str]:
    """dtype_name(dtype), or None when it names no stridemem dtype."""
    try:
        return dtype_name(dtype)
    except (ValueError, TypeError):
        return None


# The address a size-0 tensor without memory shows in its array interfaces.
_NO_ELEMENTS = ctypes.create_string_buffer(16)


class _InterfaceView(object):
    """What ``np.asarray`` reads in __array__: an owner of its own handle, so
    the array stays valid when the tensor it came from is closed."""

    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, t: Tensor) -> None:
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


def _unpickle_storage(*tensor_args: Any) -> "Storage":
    """Rebuilds a pickled storage (Storage.__reduce__): the storage of the
    pickled uint8 tensor of all its bytes."""
    with _closing(_unpickle_tensor(*tensor_args)) as t:
        return t.storage()


def _export_shared(fn: str, handle: Any) -> Tuple[bytes, int]:
    """sm_storage_export / sm_tensor_export: (the SHARE_DESC_SIZE descriptor
    bytes, a new fd the caller closes; -1 for CUDA)."""
    desc = ctypes.create_string_buffer(SHARE_DESC_SIZE)
    fd = c_int(-1)
    _call(fn, handle, desc, byref(fd))
    return desc.raw, fd.value


def _unpickle_tensor(fmt: int, dtype: str, shape: Sequence[int], strides: Sequence[int],
                     offset: int, device: str, data: bytes) -> Tensor:
    """Rebuilds a pickled tensor (Tensor.__reduce__): the bytes go into a new
    CPU storage, viewed with the pickled shape, strides and offset, then
    moved to the pickled device."""
    if fmt != 1:
        raise ValueError("stridemem: pickle format %r comes from a newer stridemem; "
                         "this one reads format 1" % (fmt,))
    with _closing(empty(len(data), dtype="uint8")) as raw:
        if data:
            ctypes.memmove(raw.data_ptr, data, len(data))
        with _closing(raw.storage()) as st:
            t = st.tensor(shape, strides, offset, dtype)
    dev = Device(device)
    if dev == "cpu":
        return t
    with _closing(t):
        try:
            return t.to(dev)
        except StrideMemError as e:
            raise error_for(e.status, "%s (the tensor was pickled on %s; this process "
                            "cannot allocate there: unpickle where that device exists, "
                            "or pickle t.cpu())" % (e.message, dev), e.function) from None


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


def _from_list(values, dtype, device="cpu"):
    arr = _np.asarray(values, dtype=numpy_dtype(dtype))
    return from_numpy(arr, device=device, dtype=dtype)


def _to_tensor(value, dtype):
    """A source for copy_: arrays as they are, a complex scalar as a 0-d
    complex128 (copy_into converts: into a real tensor, the real part), any
    other scalar as a 0-d tensor of dtype."""
    if _np is not None and isinstance(value, _np.ndarray):
        return from_numpy(value)
    if _is_complex_scalar(value):
        return full((), value, "complex128")
    return full((), float(value), dtype)


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


# --------------------------------------------------------------------------
# Storage and stack handles
# --------------------------------------------------------------------------


class Storage(_Owner):
    """A refcounted block of bytes (sm_storage); close() drops this owner,
    the bytes live on while a tensor views them."""

    __slots__ = ("_h",)
    _RELEASE = "sm_storage_release"

    @classmethod
    def _wrap(cls, handle):
        s = object.__new__(cls)
        s._h = handle.value if isinstance(handle, c_void_p) else handle
        return s

    # Each t.storage() is a new Python owner: identity (Python's default ==)
    # would call two owners of one storage different. Refused; hashing
    # stays by identity.
    def __eq__(self, other: object) -> bool:
        _refuse_compare("Storage", "==")

    def __ne__(self, other: object) -> bool:
        _refuse_compare("Storage", "!=")

    __hash__ = _Owner.__hash__

    @property
    def handle(self) -> Optional[int]:
        """The raw sm_storage handle (int) or None once closed."""
        return self._h

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        v = c_int64()
        _call("sm_storage_size", self._h, byref(v))
        return v.value

    @property
    def data_ptr(self) -> int:
        """Address of the first byte; 0 when there is no memory."""
        p = c_void_p()
        _call("sm_storage_data_ptr", self._h, byref(p))
        return p.value or 0

    @property
    def device(self) -> Device:
        """The :class:`Device` the bytes live on."""
        d = SmDevice()
        _call("sm_storage_device", self._h, byref(d))
        return Device(d)

    @property
    def id(self) -> int:
        """A number no other storage of this process has had (from 1;
        sm_storage_id): memory_snapshot() names the storage holding each
        allocated block by it."""
        v = c_uint64()
        _call("sm_storage_id", self._h, byref(v))
        return v.value

    def __reduce__(self) -> Tuple[Any, ...]:
        """pickle by value: the device and a copy of the bytes (the raw
        handle means nothing in another process, and unpickled here it would
        be a second owner of one reference). multiprocessing sends a shared
        storage by fd instead (stridemem.multiprocessing)."""
        with _closing(self.tensor((self.nbytes,), (1,), 0, "uint8")) as raw:
            return (_unpickle_storage, raw.__reduce__()[1])

    @property
    def is_shared(self) -> bool:
        """True when another process can map these bytes (shared CPU memory,
        CUDA memory through CUDA IPC, an imported storage)."""
        v = c_int()
        _call("sm_storage_is_shared", self._h, byref(v))
        return bool(v.value)

    def export(self) -> Tuple[bytes, int]:
        """(descriptor, fd): the SHARE_DESC_SIZE bytes of an sm_share_desc
        and a new close-on-exec file descriptor that the caller owns and
        closes once it has been sent (-1 for CUDA, whose handle travels in
        the descriptor). Send both by any means that passes fds
        (multiprocessing pickling does it for tensors and storages;
        socket.send_fds); Storage.from_shared opens them on the other side.
        UnsupportedError for CPU memory that is not shared
        (Tensor.share_memory_ first)."""
        return _export_shared("sm_storage_export", self._h)

    @classmethod
    def from_shared(cls, desc: bytes, fd: int = -1) -> "Storage":
        """A storage over another process's export (desc, fd as export()
        gave them): the same pages, so writes show on both sides. fd stays
        the caller's (close it when done). A forged, corrupted or foreign
        descriptor, a wrong fd or a regular file raise with nothing mapped
        and no fd kept."""
        raw = bytes(desc)
        if len(raw) != SHARE_DESC_SIZE:
            raise InvalidArgumentError(ERR_INVALID_ARGUMENT,
                                       "stridemem: a share descriptor is %d bytes, got %d"
                                       % (SHARE_DESC_SIZE, len(raw)), "Storage.from_shared")
        buf = ctypes.create_string_buffer(raw, SHARE_DESC_SIZE)
        out = _out()
        _call("sm_storage_import", buf, int(fd), byref(out))
        return cls._wrap(out)

    def tensor(self, shape: Sequence[int], strides: Sequence[int], storage_offset: int,
               dtype: Any) -> Tensor:
        """A tensor of any dtype viewing this storage (no copy): shape,
        strides and storage_offset in elements of dtype, bounds-checked as
        as_strided."""
        sh, n = _i64(shape)
        st, m = _i64(strides)
        if n != m:
            raise ValueError("stridemem: shape and strides differ in length")
        out = _out()
        _call("sm_tensor_from_storage", self._h, sh, st, n, int(storage_offset),
              _dtype_code(dtype), byref(out))
        return Tensor._wrap(out)


class Stack(_Owner):
    """Tensors carved LIFO out of one preallocated buffer (sm_stack).

    ``with Stack(1 << 20) as s:`` releases the stack at the end (release()
    and close() do it now); tensors still pushed stay valid and keep the
    buffer alive until they are released. ``with s.scope():`` pops every
    push made inside the block."""

    __slots__ = ("_h",)
    _RELEASE = "sm_stack_release"

    def __init__(self, capacity_bytes: int, device: DeviceLike = "cpu",
                 shared: bool = False) -> None:
        """shared=True: a CPU stack whose buffer is shared memory, so its
        tensors pickle to other processes (multiprocessing) by fd, and
        workers fill regions this process pushed. Pops stay per process:
        order the reuse of a popped region yourself."""
        self._h = None
        out = _out()
        if shared:
            if _dev(device).type != DEVICE_CPU:
                raise DeviceError(ERR_DEVICE, "stridemem: a shared stack lives in CPU memory, "
                                  "not %s" % (Device(device),), "Stack")
            _call("sm_stack_create_shared", int(capacity_bytes), byref(out))
        else:
            _call("sm_stack_create", _dev(device), int(capacity_bytes), byref(out))
        self._h = out.value

    def __reduce__(self) -> Tuple[Any, ...]:
        raise TypeError("stridemem: a Stack belongs to its process (marks and pops are per "
                        "process); send its storage() or its tensors, shared with "
                        "Stack(..., shared=True)")

    def storage(self) -> "Storage":
        """A new owner of the stack's whole buffer (to export, or to view
        with Storage.tensor)."""
        out = _out()
        _call("sm_stack_storage", self._h, byref(out))
        return Storage._wrap(out)

    @property
    def handle(self) -> Optional[int]:
        """The raw sm_stack handle (int) or None once released."""
        return self._h

    def push(self, shape: Any, dtype: Any = "float32") -> Tensor:
        """A row-major tensor carved from the top of the stack (O(1))."""
        sh, n = _i64(_shape_tuple(shape))
        out = _out()
        _call("sm_stack_push", self._h, sh, n, _dtype_code(dtype), byref(out))
        return Tensor._wrap(out)

    def mark(self) -> int:
        """The current top, to return to with pop_to."""
        v = c_int64()
        _call("sm_stack_mark", self._h, byref(v))
        return v.value

    def pop_to(self, mark: int) -> None:
        """Frees every push made after mark (O(1)); tensors still alive in the
        popped region become invalid (InvalidHandleError on use)."""
        _call("sm_stack_pop_to", self._h, int(mark))

    @property
    def used(self) -> int:
        """Bytes from the buffer's start to the end of the top push (alignment
        padding included)."""
        u, c = c_int64(), c_int64()
        _call("sm_stack_used", self._h, byref(u), byref(c))
        return u.value

    @property
    def capacity(self) -> int:
        """The buffer's size in bytes."""
        u, c = c_int64(), c_int64()
        _call("sm_stack_used", self._h, byref(u), byref(c))
        return c.value

    def scope(self) -> "_StackScope":
        """A context manager that marks the stack on entry (giving the stack)
        and pops every push made inside the block on exit."""
        return _StackScope(self)


class _StackScope(object):
    def __init__(self, stack):
        self.stack = stack
        self.mark = None

    def __enter__(self):
        self.mark = self.stack.mark()
        return self.stack

    def __exit__(self, *exc):
        self.stack.pop_to(self.mark)


# --------------------------------------------------------------------------
# Module-level constructors and functions
# --------------------------------------------------------------------------


DeviceLike = Union[str, "Device", Tuple[int, int]]


def empty(*shape: Any, dtype: Any = "float32", device: DeviceLike = "cpu") -> Tensor:
    """A new row-major tensor, values unset. Shapes: empty(2, 3) or
    empty((2, 3))."""
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_empty", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def empty_shared(*shape: Any, dtype: Any = "float32") -> Tensor:
    """A new row-major CPU tensor in shared memory (zero-filled): pickled
    through multiprocessing it travels as a file descriptor, and every
    process that receives it sees the same bytes."""
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_empty_shared", a, n, _dtype_code(dtype), byref(out))
    return Tensor._wrap(out)


def empty_strided(shape: Any, strides: Sequence[int], dtype: Any = "float32",
                  device: DeviceLike = "cpu") -> Tensor:
    """A new tensor with these strides (in elements), values unset."""
    a, n = _i64(_shape_tuple(shape))
    s, m = _i64(strides)
    if n != m:
        raise ValueError("stridemem: shape and strides differ in length")
    out = _out()
    _call("sm_empty_strided", a, s, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def zeros(*shape: Any, dtype: Any = "float32", device: DeviceLike = "cpu") -> Tensor:
    """A new row-major tensor of zeros: zeros(2, 3) or zeros((2, 3))."""
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_zeros", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def ones(*shape: Any, dtype: Any = "float32", device: DeviceLike = "cpu") -> Tensor:
    """A new row-major tensor of ones: ones(2, 3) or ones((2, 3))."""
    return full(_shape_arg(shape), 1, dtype=dtype, device=device)


def full(shape: Any, value: Any, dtype: Any = None, device: DeviceLike = "cpu") -> Tensor:
    """Every element value (sm_full); shape is an int or a sequence, as
    NumPy's full. dtype None: PyTorch's rule, the value's kind (a Python
    bool gives bool, an int int64, a float float32, a complex complex64; a
    NumPy scalar keeps its dtype). A value the dtype cannot hold raises
    DTypeError. A complex value for a complex dtype is written by fill_
    (sm_full takes a real double)."""
    shape = _shape_tuple(shape)
    if dtype is None:
        dtype = _scalar_dtype(value)
    if _is_complex_scalar(value) and _DTYPE_BY_CODE.get(_dtype_code(dtype)) in _COMPLEX_DTYPES:
        return empty(shape, dtype=dtype, device=device).fill_(value)
    a, n = _i64(shape)
    out = _out()
    _call("sm_full", a, n, _real_scalar(value, "full"), _dtype_code(dtype), _dev(device),
          byref(out))
    return Tensor._wrap(out)


def _like(t: Tensor, dtype: Any, device: Any) -> Dict[str, Any]:
    """The dtype and device of a *_like call: t's unless given."""
    return {"dtype": t.dtype if dtype is None else dtype,
            "device": t.device if device is None else device}


def empty_like(t: Tensor, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """A new row-major tensor of t's shape (t's dtype and device unless
    given), values unset."""
    return empty(t.shape, **_like(t, dtype, device))


def zeros_like(t: Tensor, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """zeros of t's shape (t's dtype and device unless given)."""
    return zeros(t.shape, **_like(t, dtype, device))


def ones_like(t: Tensor, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """ones of t's shape (t's dtype and device unless given)."""
    return ones(t.shape, **_like(t, dtype, device))


def full_like(t: Tensor, value: Any, dtype: Any = None,
              device: Optional[DeviceLike] = None) -> Tensor:
    """full of t's shape (t's dtype and device unless given)."""
    return full(t.shape, value, **_like(t, dtype, device))


def _all_integers(*values: Any) -> bool:
    """Python or NumPy integers (a bool is one, as in NumPy's arange)."""
    return all(isinstance(v, int) or (_np is not None and isinstance(v, _np.integer))
               for v in values)


def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """NumPy's element count: ceil((stop - start) / step), at least 0;
    exact for integers."""
    if _all_integers(start, stop, step):
        start, stop, step = int(start), int(stop), int(step)
        return max(0, -((start - stop) // step))
    n = (float(stop) - float(start)) / float(step)
    if math.isnan(n) or math.isinf(n):
        raise ValueError("stridemem: arange(%r, %r, %r) has no finite length"
                         % (start, stop, step))
    return max(0, math.ceil(n))


def arange(start: Any, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: DeviceLike = "cpu") -> Tensor:
    """NumPy's signature: arange(stop), arange(start, stop[, step]); the
    values start + i*step for i < ceil((stop - start) / step). dtype None:
    int64 when start, stop and step are all integers, else float32 (the
    library's default float, as PyTorch; NumPy would pick float64). A value
    the dtype cannot hold raises DTypeError (see docs/PYTORCH_DIFFERENCES.md).
    arange_n is the C API's (start, step, count) form."""
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        _real_scalar(v, "arange")  # a complex bound is refused here
    if step == 0:
        raise ValueError("stridemem: arange step must not be zero")
    n = _arange_length(start, stop, step)
    if dtype is None:
        dtype = "int64" if _all_integers(start, stop, step) else "float32"
    return arange_n(start, step, n, dtype=dtype, device=device)


def arange_n(start: Any, step: Any, n: int, dtype: Any = None,
             device: DeviceLike = "cpu") -> Tensor:
    """n elements start, start + step, ... (sm_arange's argument order).
    dtype None: int64 when start and step are integers, else float32 (as
    arange)."""
    if dtype is None:
        dtype = "int64" if _all_integers(start, step) else "float32"
    out = _out()
    _call("sm_arange", _real_scalar(start, "arange"), _real_scalar(step, "arange"), int(n),
          _dtype_code(dtype),
          _dev(device), byref(out))
    return Tensor._wrap(out)


def from_numpy(arr: Any, device: DeviceLike = "cpu", dtype: Any = None) -> Tensor:
    """A copy of a NumPy array (any layout, any byte order) on device, of the
    array's dtype or converted to dtype as NumPy's astype does.
    dtype='bfloat16' takes a uint16 array of bfloat16 bit patterns."""
    arr = _np.asarray(arr)
    if dtype is None:
        dtype = dtype_name(arr.dtype)
    want = numpy_dtype(dtype)
    if arr.dtype != want:  # another dtype, or the same in non-native byte order
        if dtype_name(dtype) == "bfloat16" and (arr.dtype.kind, arr.dtype.itemsize) != ("u", 2):
            raise ValueError("stridemem: bfloat16 data must be a uint16 array of "
                             "bit patterns, got %s" % arr.dtype)
        arr = arr.astype(want)
    if not arr.flags.c_contiguous:
        # Not ascontiguousarray: it makes a 0-d array 1-d.
        arr = _np.array(arr, order="C")
    a, n = _i64(arr.shape)
    out = _out()
    _call("sm_from_host", c_void_p(arr.ctypes.data), a, n, _dtype_code(dtype),
          _dev(device), byref(out))
    return Tensor._wrap(out)


def tensor(values: Any, dtype: Any = None, device: Optional[DeviceLike] = None) -> Tensor:
    """A new tensor (always a copy) of values: nested lists and scalars, a
    NumPy array (as from_numpy) or a tensor. Without dtype, PyTorch's rule:
    Python floats give float32, ints int64, bools bool, complex numbers
    complex64; NumPy arrays, NumPy scalars and tensors keep their dtype;
    mixed values promote as torch.tensor does (an empty list is float32).
    Given dtype, values are converted (bfloat16 too: values, not bits).
    device None: a tensor's own device (as torch.tensor keeps it), else the
    CPU."""
    if device is None:
        device = values.device if isinstance(values, Tensor) else "cpu"
    if isinstance(values, Tensor):
        r, copied = values.to(device=device, dtype=dtype, return_copied=True)
        if copied:
            return r
        with _closing(r):
            return r.clone()
    if _np is not None and isinstance(values, _np.ndarray):
        return from_numpy(values, device=device, dtype=dtype)
    if dtype is None:
        dtype = _values_dtype(values)
    if dtype is None:
        arr = _np.asarray(values)
    elif dtype_name(dtype) == "bfloat16":
        with _closing(from_numpy(_np.asarray(values, dtype=_np.float32), device=device)) as f:
            return f.to(dtype="bfloat16")
    else:
        arr = _np.asarray(values, dtype=numpy_dtype(dtype))
    return from_numpy(arr, device=device, dtype=dtype)


def _host_values(x: Any) -> Any:
    """A NumPy array of x's values: a host copy of a tensor (bfloat16 as
    float32), else what NumPy makes of x."""
    if isinstance(x, Tensor):
        with _closing(x.to("cpu", "float32" if x.dtype == "bfloat16" else None)) as h:
            return h.numpy()
    return _np.asarray(x)


def equal(a: Any, b: Any) -> bool:
    """True when a and b have the same shape and equal values (PyTorch's
    torch.equal; NaN equals nothing). a and b are tensors (any device,
    copied to the host to compare), NumPy arrays or nested lists; values
    compare as numbers, whatever the dtypes (an int64 2 equals a float32
    2.0). Tensors have no ==: it raises TypeError rather than compare the
    Python objects. For an elementwise answer use NumPy:
    numpy.asarray(a) == numpy.asarray(b)."""
    if _np is None:
        raise TypeError("stridemem: equal() needs NumPy")
    x, y = _host_values(a), _host_values(b)
    return x.shape == y.shape and bool(_np.array_equal(x, y))


def copy_into(dst: Tensor, src: Tensor) -> Tensor:
    """dst[...] = src, broadcast and converted (sm_copy_into). Returns dst."""
    _call("sm_copy_into", dst._h, src._h)
    return dst


def cuda_device_count() -> int:
    """Number of usable CUDA devices (0 when the build has no CUDA or no GPU
    is usable)."""
    v = c_int32()
    _call("sm_cuda_device_count", byref(v))
    return v.value


def memory_stats(device: DeviceLike = "cpu") -> Dict[str, int]:
    """The allocator's statistics for device as a dict of the
    sm_memory_stats_t fields (allocated_bytes, reserved_bytes, peaks,
    counts, active_views...)."""
    dlpack_collect()
    s = SmMemoryStats()
    s.struct_size = ctypes.sizeof(SmMemoryStats)
    _call("sm_memory_stats", _dev(device), byref(s))
    return {f: getattr(s, f) for f in _STATS_FIELDS}


def reset_peak_stats(device: DeviceLike = "cpu") -> None:
    """Restarts device's peak statistics from the current values."""
    _call("sm_reset_peak_stats", _dev(device))


def empty_cache(device: DeviceLike = "cpu") -> None:
    """Returns every unused cached block of device to the system (never a
    live one)."""
    dlpack_collect()
    _call("sm_empty_cache", _dev(device))


def memory_summary(device: DeviceLike = "cpu") -> str:
    """A readable table of device's memory statistics."""
    dlpack_collect()
    return _read_text("sm_memory_summary", _dev(device))


def memory_snapshot(device: DeviceLike = "cpu") -> Dict[str, Any]:
    """Everything device's caching allocator holds, as the dict of the
    JSON document sm_memory_snapshot writes (docs/MEMORY_SNAPSHOT.md;
    tools/memviz draws it). Its keys:

    * ``format`` ("stridemem.memory_snapshot"), ``version`` (1), ``device``
      ("cpu:0", "cuda:N"), ``device_type``, ``device_index``, ``time_us``
      and ``start_unix_us`` (the clock: microseconds since the library
      loaded, and when that was);
    * ``totals``: the memory_stats() fields, read in the same instant as
      the segments;
    * ``fragmentation``: ``cached_free_bytes``, ``largest_free_block``,
      ``ratio`` (1 - largest / cached free), ``pools`` ("small", "large":
      segments, reserved/allocated/free bytes, largest free block, ratio)
      and ``unusable`` (per request size, the free bytes it could not use);
    * ``tags``: the holders of allocated bytes by tag, largest first
      (``{"tag": "encoder/attn" or None, "allocated_bytes",
      "requested_bytes", "blocks"}``);
    * ``segments``: each allocation from the system (``address`` as a hex
      str, ``size``, ``pool``, ``stream``, ``allocated_bytes``) with the
      ``blocks`` tiling it (``offset``, ``size``, ``requested``, ``state``:
      "allocated" / "pending_free" / "inactive_split" / "cached_free",
      ``storage``: the holder's Storage.id, ``tag``, ``seq``, ``time_us``);
    * ``history`` (only while record_memory_history is on): ``enabled``,
      ``capacity``, ``recorded``, ``dropped`` and the ``events`` (alloc,
      free, segment_map, segment_unmap, empty_cache, oom), oldest first.

    Unknown keys may be added by later versions: ignore them."""
    dlpack_collect()
    return json.loads(_read_text("sm_memory_snapshot", _dev(device)))


def save_memory_snapshot(path: Union[str, "os.PathLike[str]"],
                         device: DeviceLike = "cpu") -> Dict[str, Any]:
    """Writes device's snapshot JSON (as sm_memory_snapshot gives it) to
    path, for tools/memviz (``memviz.py SNAP.json -o OUT.html``) or a later
    look; returns it parsed, as memory_snapshot does."""
    dlpack_collect()
    text = _read_text("sm_memory_snapshot", _dev(device))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return json.loads(text)


class tag(_ContextDecorator):
    """Names the memory allocated in a scope: ``with stridemem.tag("encoder"):``
    pushes the tag on entry (sm_push_tag) and pops it on exit, also when the
    block raises (sm_pop_tag). Also a decorator: ``@stridemem.tag("encoder")``.

    Tags nest into a path (``tag("encoder")`` around ``tag("attn")``
    records "encoder/attn") that memory_snapshot() shows for every block
    allocated inside (``blocks[i]["tag"]``, ``tags``), as the out-of-memory
    report and the history do. The stack is per thread: a scope must end on
    the thread that entered it (a coroutine that moves between threads
    cannot hold one across an await), and while it is open every allocation
    of that thread is tagged, other coroutines' included. As a decorator of
    an ``async def`` it tags only the creation of the coroutine, not its
    body. name: 1 to 256 bytes of UTF-8 without control characters
    (InvalidArgumentError otherwise); at most 256 nested per thread."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError("stridemem: a tag is a str, got %r" % (name,))
        if "\0" in name:
            raise ValueError("stridemem: a tag cannot contain NUL characters: %r" % (name,))
        self.name = name
        self._bytes = name.encode("utf-8", "surrogatepass")

    def __enter__(self) -> "tag":
        _call("sm_push_tag", self._bytes)
        return self

    def __exit__(self, *exc: Any) -> None:
        _call("sm_pop_tag")

    def __repr__(self) -> str:
        return "stridemem.tag(%r)" % (self.name,)


def record_memory_history(device: DeviceLike = "cpu", max_events: int = 10000) -> None:
    """Starts recording device's last max_events allocator events (alloc,
    free, segment_map, segment_unmap, empty_cache, oom; each with time,
    size, address, tag and the totals after it) into a ring that
    memory_snapshot() returns as ``history`` (sm_memory_record_history).
    max_events 1 .. 2**24 starts afresh; 0 stops and drops the events.
    Off by default."""
    _call("sm_memory_record_history", _dev(device), int(max_events))


class OomInfo(NamedTuple):
    """What the out-of-memory observer (set_oom_observer) is told: the
    device, the bytes requested, allocated, reserved and cached free at the
    failure, the largest free block, and the report text that the raised
    OutOfMemoryError will carry as its message."""
    device: Device
    requested_bytes: int
    allocated_bytes: int
    reserved_bytes: int
    cached_free_bytes: int
    largest_free_block: int
    report: str


def _oom_info(p) -> OomInfo:
    """An OomInfo from a sm_oom_info*, reading only the fields the library
    filled (those within its struct_size; later ones read as 0 / "")."""
    raw = p.contents
    size = raw.struct_size

    def field(name, default):
        f = getattr(SmOomInfo, name)
        return getattr(raw, name) if f.offset + f.size <= size else default

    dev = field("device", None)
    report = field("report", None)
    return OomInfo(Device(dev) if dev is not None else Device("cpu"),
                   field("requested_bytes", 0), field("allocated_bytes", 0),
                   field("reserved_bytes", 0), field("cached_free_bytes", 0),
                   field("largest_free_block", 0),
                   report.decode("utf-8", "replace") if report else "")


# The Python observer, called by the one C trampoline below. The trampoline
# is made once and never freed: another binding in the process may install
# it again at any time, so the function pointer it was given stays valid.
# sm_set_oom_observer waits for the observer calls in flight (ctypes drops
# the GIL for the wait, so a Python observer running on another thread can
# finish), so it is called without _oom_lock: an observer that replaces the
# observer while another thread is replacing it would otherwise wait for the
# lock held by that thread's wait for it.
_oom_lock = threading.Lock()
_oom_observer = None  # type: Optional[Callable[[OomInfo], Any]]
_oom_changes = 0  # counts set_oom_observer calls, under _oom_lock


def _oom_trampoline_impl(info, _user):
    # Never lets an exception reach C: ctypes would print and drop it, and
    # the failing call must still fail with OutOfMemoryError.
    try:
        observer = _oom_observer
        if observer is not None:
            observer(_oom_info(info))
    except BaseException as e:  # noqa: B902 - nothing may cross into C
        try:
            warnings.warn("stridemem: the out-of-memory observer %r raised %s: %s (ignored; "
                          "the allocation fails with OutOfMemoryError)"
                          % (_oom_observer, type(e).__name__, e), RuntimeWarning, stacklevel=2)
        except BaseException:  # warnings turned into errors: still nothing into C
            pass


_OOM_OBSERVER_T = CFUNCTYPE(None, POINTER(SmOomInfo), c_void_p)
_oom_trampoline = _OOM_OBSERVER_T(_oom_trampoline_impl)
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_oom_trampoline))  # never freed, as _blob_deleter


def set_oom_observer(observer: Optional[Callable[[OomInfo], Any]]
                     ) -> Optional[Callable[[OomInfo], Any]]:
    """Calls observer(info: OomInfo) when an allocation is about to fail
    with OutOfMemoryError, before the failing call raises, on the thread
    that asked (sm_set_oom_observer); None removes it. Returns the observer
    it replaces. One observer for the process (and for every binding in
    it). The observer may use the library (memory_snapshot(), closing
    tensors); an allocation that fails inside it does not call it again.
    An exception it raises is not propagated (the call still raises
    OutOfMemoryError): it becomes a RuntimeWarning."""
    global _oom_observer, _oom_changes
    if observer is not None and not callable(observer):
        raise TypeError("stridemem: the out-of-memory observer must be callable or None, "
                        "got %r" % (observer,))
    with _oom_lock:
        previous = _oom_observer
        _oom_observer = observer
        _oom_changes += 1
    # The library's observer follows the newest Python one: a call that
    # another thread's change overtook is made again with the newer state.
    while True:
        with _oom_lock:
            install, seen = _oom_observer is not None, _oom_changes
        _call("sm_set_oom_observer",
              ctypes.cast(_oom_trampoline, c_void_p) if install else None, None)
        with _oom_lock:
            if _oom_changes == seen:
                break
    return previous


def _read_text(fn: str, *args) -> str:
    """A text under the C API's "needed" convention: ask for the size, then
    call again until the buffer holds the whole text (it may grow between
    the calls)."""
    need = c_size_t(0)
    _call(fn, *args, None, 0, byref(need))
    while True:
        size = need.value
        buf = ctypes.create_string_buffer(size)
        _call(fn, *args, buf, size, byref(need))
        if need.value <= size:
            return buf.value.decode("utf-8")


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


def debug_fail_alloc(n: int) -> None:
    """Fault injection for tests: the n-th data allocation from now (1-based,
    any device) fails as if the system were out of memory; n <= 0 disables."""
    _call("sm_debug_fail_alloc", int(n))


def debug_live_handles() -> Tuple[int, int, int]:
    """(tensors, storages, stacks) handles alive in the library."""
    a, b, c = c_int64(), c_int64(), c_int64()
    _call("sm_debug_live_handles", byref(a), byref(b), byref(c))
    return (a.value, b.value, c.value)


# Tensors and storages sent through multiprocessing (queues, pipes, process
# arguments) travel as file descriptors when they are shared: registered
# with multiprocessing's pickler here, as torch.multiprocessing does.
from . import multiprocessing as _sm_multiprocessing  # noqa: E402

_sm_multiprocessing.register_reducers()
