"""The C library: loading it, the signature table (``_SIGNATURES``) applied
to ``lib``'s functions, the C structs (ctypes Structures), the constants and
status codes of include/stridemem.h, and the translation of a failing status
into a Python exception whose message uses the Python names (``_PY_NAMES``)."""

from __future__ import annotations

import ctypes
import math
import os
import re
from typing import Any, Sequence, Tuple
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_size_t, c_uint8, c_uint16, c_uint32, c_uint64,
                    c_void_p)


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
