"""stridemem: Python binding (pure ctypes) over the stridemem C ABI.

One storage, many strided views, on the CPU or a CUDA GPU. Every view method
returns a new :class:`Tensor` that shares storage with its source; only the
calls documented as copies allocate tensor data.

Library lookup, in order: the environment variable ``STRIDEMEM_LIB`` (a path
to ``libstridemem.so``), the repository's build directories (``build/``, then
``build-*/``), then ``libstridemem.so.<major>`` from the system's search path.
At import the library's ``sm_version`` is checked against the binding's
``BINDING_VERSION`` (the C API it declares) and the repository's ``VERSION``
file when that file is found: the major version must match, while it is 0 the
minor must match too (0.x minors break the ABI), and the library must not be
older.

Every failing C call raises :class:`StrideMemError`, carrying ``.status`` (the
frozen integer code), ``.status_name`` and ``.message`` (``sm_last_error``).

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

import atexit
import ctypes
import itertools
import os
import sys
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double,
                    c_int, c_int32, c_int64, c_size_t, c_uint8, c_uint16,
                    c_uint32, c_uint64, c_void_p)

try:  # NumPy is needed only for the NumPy exchange functions.
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None

__all__ = [
    "StrideMemError", "DLPackExportError", "Tensor", "Storage", "Stack", "Device",
    "empty", "empty_strided", "zeros", "full", "arange", "from_numpy",
    "from_blob", "from_numpy_blob", "as_tensor", "from_dlpack", "copy_into",
    "memory_stats", "reset_peak_stats", "empty_cache", "memory_summary",
    "cuda_device_count", "synchronize", "set_stream", "get_stream",
    "set_num_threads", "get_num_threads", "version", "DTYPES",
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
       "relu": 7, "neg": 8, "abs": 9, "sqrt": 10, "exp": 11}

SLICE_NONE = -(1 << 63)  # SM_SLICE_NONE == INT64_MIN
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
__version__ = "0.2.0"

# The repository root when the package is imported from the source tree
# (bindings/python/stridemem), else None.
_REPO = _loader.source_repo(_HERE)


def _read_repo_version():
    if _REPO is None:
        return None
    try:
        with open(os.path.join(_REPO, "VERSION")) as f:
            parts = f.readline().strip().split("-")[0].split(".")
        return tuple(int(p) for p in parts[:3])
    except (OSError, ValueError):
        return None


# The C API this module declares (include/stridemem_version.h). While the
# major version is 0, every minor version may break the ABI.
BINDING_VERSION = (0, 2, 0)
_REPO_VERSION = _read_repo_version()
BINDING_MAJOR = BINDING_VERSION[0]

_LOADED = _loader.load(BINDING_MAJOR, _HERE)
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
    "sm_memory_summary": (c_int32, [SmDevice, ctypes.c_char_p, c_size_t]),
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
    """A stridemem call returned a status other than SM_OK."""

    def __init__(self, status, message="", function=""):
        self.status = int(status)
        self.status_name = STATUS_NAMES.get(self.status, "SM_STATUS_%d" % self.status)
        self.message = message
        self.function = function
        text = "%s (%s)" % (self.status_name, self.status)
        if function:
            text = "%s: %s" % (function, text)
        if message:
            text += ": " + message
        super().__init__(text)


class DLPackExportError(StrideMemError, BufferError):
    """Tensor.__dlpack__ cannot export as asked (the array API's BufferError):
    a copy is needed but copy=False forbids it, the requested dl_device is not
    available, or the tensor was carved from a stack of views (export it with
    copy=True). Also a StrideMemError, with the status and message of
    sm_to_dlpack_ex."""


def last_error():
    """sm_last_error() as a str ("" when no call has failed on this thread)."""
    msg = lib.sm_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def status_string(status):
    s = lib.sm_status_string(int(status))
    return s.decode("utf-8", "replace") if s else ""


def _check(status, function):
    if status != 0:
        raise StrideMemError(status, last_error(), function)


def _call(name, *args):
    _check(getattr(lib, name)(*args), name)


def version():
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


def dtype_name(dtype):
    """Canonical dtype name for a name, alias, code or NumPy dtype."""
    if isinstance(dtype, str):
        name = _DTYPE_ALIASES.get(dtype, dtype)
        if name in DTYPES:
            return name
        raise ValueError("stridemem: unknown dtype %r" % (dtype,))
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in _DTYPE_BY_CODE:
            return _DTYPE_BY_CODE[dtype]
        raise ValueError("stridemem: unknown dtype code %d" % dtype)
    if _np is not None:
        try:
            nd = _np.dtype(dtype)
        except TypeError:
            nd = None
        if nd is not None:
            # .name ignores the byte order: callers that exchange data compare
            # the whole NumPy dtype with numpy_dtype() (native order).
            name = "bool" if nd == _np.bool_ else nd.name
            if name in DTYPES and nd.fields is None:
                return name
    raise ValueError("stridemem: unknown dtype %r (NumPy's uint16 means uint16: "
                     "pass dtype='bfloat16' to mean bfloat16 bits)" % (dtype,))


def _dtype_code(dtype):
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype  # raw codes pass through (the library validates them)
    return DTYPES[dtype_name(dtype)][0]


def numpy_dtype(dtype):
    """The NumPy dtype used to exchange a stridemem dtype (bfloat16 -> uint16)."""
    return _np.dtype(DTYPES[dtype_name(dtype)][1])


def dtype_size(dtype):
    return int(lib.sm_dtype_size(_dtype_code(dtype)))


def is_complex(dtype):
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

    def __new__(cls, spec="cpu"):
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

    type = property(lambda self: self[0])
    index = property(lambda self: self[1])

    def c(self):
        return SmDevice(self[0], self[1])

    def __str__(self):
        if self[0] == DEVICE_CPU:
            return "cpu"
        if self[0] == DEVICE_CUDA:
            return "cuda:%d" % self[1]
        if self[0] == DEVICE_CUDA_HOST:
            return "cuda_host"
        return "device(%d,%d)" % (self[0], self[1])

    def __repr__(self):
        return "Device(%r)" % str(self)

    def __eq__(self, other):
        try:
            return tuple.__eq__(self, Device(other))
        except (ValueError, TypeError):
            return False

    def __ne__(self, other):
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


def _shape_arg(shape):
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and f(()) forms."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        return tuple(shape[0])
    return tuple(shape)


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


def blob_live_count():
    """Number of wrapped blobs whose deleter has not run yet."""
    return _registry.count("blob")


def from_blob(address, shape, dtype, strides=None, device="cpu", owner=None,
              on_free=None):
    """Zero copy over memory at `address` (element [0,...,0]); `owner` is kept
    alive, and `on_free()` called, exactly once when the last view dies."""
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
        raise StrideMemError(status, msg, "sm_from_blob")
    _registry.bump("blob", "wrapped")
    return Tensor._wrap(out)


def from_numpy_blob(arr, device="cpu", dtype=None):
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
    if numpy_dtype(dtype) != arr.dtype:  # also a non-native byte order
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


class Tensor(object):
    """A strided view over a storage; owns one reference to a C handle."""

    __slots__ = ("_h", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("use stridemem.empty/zeros/from_numpy/... to make tensors")

    @classmethod
    def _wrap(cls, handle):
        t = object.__new__(cls)
        t._h = handle.value if isinstance(handle, c_void_p) else handle
        return t

    # -- lifetime --------------------------------------------------------
    @property
    def handle(self):
        """The raw sm_tensor handle (int) or None once closed."""
        return self._h

    def close(self):
        """Drop this owner now; later calls raise SM_ERR_INVALID_HANDLE."""
        h, self._h = self._h, None
        if h:
            _check(lib.sm_tensor_release(h), "sm_tensor_release")

    release = close

    def __del__(self, _release=lib.sm_tensor_release):
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            try:
                _release(h)
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def retain(self):
        """A second Python owner of the same handle (sm_tensor_retain)."""
        _call("sm_tensor_retain", self._h)
        return Tensor._wrap(self._h)

    # -- metadata --------------------------------------------------------
    @property
    def ndim(self):
        v = c_int32()
        _call("sm_ndim", self._h, byref(v))
        return v.value

    def dim(self):
        return self.ndim

    @property
    def shape(self):
        n = self.ndim
        buf = (c_int64 * max(n, 1))()
        _call("sm_shape", self._h, buf, max(n, 1))
        return tuple(buf[:n])

    size = shape

    @property
    def strides(self):
        n = self.ndim
        buf = (c_int64 * max(n, 1))()
        _call("sm_strides", self._h, buf, max(n, 1))
        return tuple(buf[:n])

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[dim]

    def _i64_prop(name):
        def get(self):
            v = c_int64()
            _call(name, self._h, byref(v))
            return v.value
        return property(get)

    storage_offset = _i64_prop("sm_storage_offset")
    numel = _i64_prop("sm_numel")
    nbytes = _i64_prop("sm_nbytes")
    storage_nbytes = _i64_prop("sm_storage_nbytes")
    version = _i64_prop("sm_version_counter")
    del _i64_prop

    @property
    def dtype(self):
        v = c_int32()
        _call("sm_dtype_of", self._h, byref(v))
        return _DTYPE_BY_CODE.get(v.value, v.value)

    @property
    def itemsize(self):
        return dtype_size(self.dtype)

    @property
    def device(self):
        d = SmDevice()
        _call("sm_device_of", self._h, byref(d))
        return Device(d)

    @property
    def data_ptr(self):
        p = c_void_p()
        _call("sm_data_ptr", self._h, byref(p))
        return p.value or 0

    @property
    def is_read_only(self):
        v = c_int()
        _call("sm_is_read_only", self._h, byref(v))
        return bool(v.value)

    def is_contiguous(self, memory_format="contiguous"):
        v = c_int()
        _call("sm_is_contiguous", self._h, FORMATS[memory_format], byref(v))
        return bool(v.value)

    def same_storage(self, other):
        v = c_int()
        _call("sm_same_storage", self._h, other._h, byref(v))
        return bool(v.value)

    def storage(self):
        out = _out()
        _call("sm_tensor_storage", self._h, byref(out))
        return Storage._wrap(out)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self.select(0, i)

    def __repr__(self):
        if not self._h:
            return "<stridemem.Tensor (closed)>"
        return ("<stridemem.Tensor shape=%s strides=%s offset=%d dtype=%s device=%s>"
                % (self.shape, self.strides, self.storage_offset, self.dtype, self.device))

    # -- views -----------------------------------------------------------
    def _unary(self, name, *args):
        out = _out()
        _call(name, self._h, *(args + (byref(out),)))
        return Tensor._wrap(out)

    def view(self, *shape):
        a, n = _i64(_shape_arg(shape))
        return self._unary("sm_view", a, n)

    def as_strided(self, shape, strides, storage_offset=None):
        if storage_offset is None:
            storage_offset = self.storage_offset
        sh, n = _i64(shape)
        st, m = _i64(strides)
        if n != m:
            raise ValueError("stridemem: shape and strides differ in length")
        return self._unary("sm_as_strided", sh, st, n, int(storage_offset))

    def slice(self, dim, start=None, stop=None, step=1):
        start = SLICE_NONE if start is None else int(start)
        stop = SLICE_NONE if stop is None else int(stop)
        step = 1 if step is None else int(step)
        return self._unary("sm_slice", int(dim), start, stop, step)

    def narrow(self, dim, start, length):
        return self._unary("sm_narrow", int(dim), int(start), int(length))

    def select(self, dim, index):
        return self._unary("sm_select", int(dim), int(index))

    def permute(self, *dims):
        a, n = _i32(_shape_arg(dims))
        return self._unary("sm_permute", a, n)

    def transpose(self, dim0, dim1):
        return self._unary("sm_transpose", int(dim0), int(dim1))

    @property
    def T(self):
        """All dims reversed (NumPy's .T)."""
        return self.permute(*range(self.ndim - 1, -1, -1))

    def movedim(self, source, destination):
        if isinstance(source, int):
            source = (source,)
        if isinstance(destination, int):
            destination = (destination,)
        s, n = _i32(source)
        d, m = _i32(destination)
        if n != m:
            raise ValueError("stridemem: movedim source and destination differ in length")
        return self._unary("sm_movedim", s, d, n)

    def expand(self, *shape):
        a, n = _i64(_shape_arg(shape))
        return self._unary("sm_expand", a, n)

    def squeeze(self, dims=None):
        if dims is None:
            return self._unary("sm_squeeze", None, 0)
        if isinstance(dims, int):
            dims = (dims,)
        a, n = _i32(dims)
        return self._unary("sm_squeeze", a, n)

    def unsqueeze(self, dim):
        return self._unary("sm_unsqueeze", int(dim))

    def flatten(self, start_dim=0, end_dim=-1):
        return self._unary("sm_flatten", int(start_dim), int(end_dim))

    def unflatten(self, dim, sizes):
        a, n = _i64(sizes)
        return self._unary("sm_unflatten", int(dim), a, n)

    def unfold(self, dim, size, step):
        return self._unary("sm_unfold", int(dim), int(size), int(step))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return self._unary("sm_diagonal", int(offset), int(dim1), int(dim2))

    def _multi(self, name, arg, dim):
        count = c_int32()
        _call(name, self._h, arg, int(dim), None, 0, byref(count))
        n = count.value
        outs = (_T * max(n, 1))()
        _call(name, self._h, arg, int(dim), outs, max(n, 1), byref(count))
        return [Tensor._wrap(outs[i]) for i in range(count.value)]

    def split(self, split_size, dim=0):
        return self._multi("sm_split", int(split_size), dim)

    def chunk(self, chunks, dim=0):
        return self._multi("sm_chunk", int(chunks), dim)

    def flip(self, dims):
        if isinstance(dims, int):
            dims = (dims,)
        a, n = _i32(dims)
        return self._unary("sm_flip", a, n)

    def __getitem__(self, idx):
        if isinstance(idx, Tensor):
            return self.index_select(0, idx)
        if isinstance(idx, list):
            return self.index_select(0, idx)
        items = _normalize_index(idx)
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
            elif hasattr(it, "__index__"):
                t = t.select(dim, it.__index__())
            else:
                raise TypeError("stridemem: unsupported index %r" % (it,))
        if t is self:
            t = self.retain()
        return t

    def __setitem__(self, idx, value):
        self[idx].fill_(value)

    # -- copies ----------------------------------------------------------
    def reshape_would_copy(self, *shape):
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

    def reshape(self, *shape, return_copied=False):
        """A view when the strides allow, else a row-major copy. With
        return_copied=True returns (tensor, copied)."""
        a, n = _i64(_shape_arg(shape))
        return self._maybe_copy("sm_reshape", (a, n), return_copied)

    def contiguous(self, memory_format="contiguous", return_copied=False):
        """A new handle to the same data when already dense in memory_format
        ("contiguous", "channels_last", "channels_last_3d"), else a copy in
        it. With return_copied=True returns (tensor, copied)."""
        return self._maybe_copy("sm_contiguous", (FORMATS[memory_format],), return_copied)

    def clone(self, memory_format="preserve"):
        return self._unary("sm_clone", FORMATS[memory_format])

    def to(self, device=None, dtype=None, return_copied=False):
        """On device and/or with dtype: a new handle to the same data when
        neither changes, else a copy. With return_copied=True returns
        (tensor, copied)."""
        dev = self.device if device is None else Device(device)
        code = _dtype_code(self.dtype if dtype is None else dtype)
        return self._maybe_copy("sm_to", (dev.c(), code), return_copied)

    def cpu(self):
        return self.to("cpu")

    def copy_(self, src):
        """self[...] = src (broadcast, dtype-converted). Returns self."""
        if not isinstance(src, Tensor):
            src = _to_tensor(src, self.dtype)
        _call("sm_copy_into", self._h, src._h)
        return self

    def index_select(self, dim, index):
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
                  _real_scalar(alpha, name + " alpha"))
        else:
            a = 0.0 if value is None else _real_scalar(value, name)
            _call("sm_inplace_scalar", self._h, OPS[op], a, float(b))
        return self

    def fill_(self, value):
        return self._inplace("fill", value)

    def zero_(self):
        return self._inplace("zero")

    def add_(self, other, alpha=1.0):
        if not isinstance(other, Tensor) and alpha != 1.0:
            other = self._scaled(other, alpha)
        return self._inplace("add", other, alpha)

    def sub_(self, other, alpha=1.0):
        if not isinstance(other, Tensor) and alpha != 1.0:
            other = self._scaled(other, alpha)
        return self._inplace("sub", other, alpha)

    @staticmethod
    def _scaled(value, alpha):
        if _is_complex_scalar(value) or _is_complex_scalar(alpha):
            return complex(value) * complex(alpha)
        return float(value) * alpha

    def mul_(self, other):
        return self._inplace("mul", other)

    def div_(self, other):
        return self._inplace("div", other)

    def clamp_(self, min=None, max=None):
        lo = float("nan") if min is None else _real_scalar(min, "clamp_")
        hi = float("nan") if max is None else _real_scalar(max, "clamp_")
        _call("sm_inplace_scalar", self._h, OPS["clamp"], lo, hi)
        return self

    def relu_(self):
        return self._inplace("relu")

    def neg_(self):
        return self._inplace("neg")

    def abs_(self):
        return self._inplace("abs")

    def sqrt_(self):
        return self._inplace("sqrt")

    def exp_(self):
        return self._inplace("exp")

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # -- host exchange -----------------------------------------------------
    def numpy(self):
        """A NumPy copy (row-major) of the same dtype. bfloat16 comes out as
        uint16 bit patterns."""
        arr = _np.empty(self.shape, dtype=numpy_dtype(self.dtype))
        _call("sm_copy_to_host", self._h, c_void_p(arr.ctypes.data), c_size_t(arr.nbytes))
        return arr

    def __array__(self, dtype=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.numel != 1:
            raise ValueError("stridemem: item() needs exactly one element")
        return self.numpy().reshape(()).item()

    def record_stream(self, stream):
        _call("sm_record_stream", self._h, c_void_p(stream))

    # -- DLPack ------------------------------------------------------------
    def __dlpack_device__(self):
        d = self.device
        return (int(d[0]), int(d[1]))

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None,
                   normalize=False):
        """Export as a PyCapsule 'dltensor' (legacy) or 'dltensor_versioned'
        (when max_version >= (1, 0)), per the Python array API. One call,
        sm_to_dlpack_ex, does the whole export.

        Zero copy unless a copy is asked for or needed: copy=True always
        exports a fresh row-major copy (SM_DLPACK_COPY); dl_device other than
        the tensor's device exports a copy there; normalize=True exports a
        negative-stride tensor as a dense copy (SM_DLPACK_NORMALIZE). The
        library flags every copy IS_COPIED in a versioned capsule. copy=False
        (SM_DLPACK_NO_COPY) forbids copies: an export that would need one
        raises BufferError (DLPackExportError) with the library's message, as
        does a dl_device this build cannot reach. On CUDA, stream None means
        the legacy default stream (1), -1 means no synchronization, and any
        other value is a consumer stream the data must be ready for (we
        synchronize the device after the export). On the CPU, stream must be
        None (or -1)."""
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
                 | (DLPACK_NORMALIZE if normalize else 0))
        if copy is not None:
            flags |= DLPACK_COPY if copy else DLPACK_NO_COPY
        target = None if dl_device is None else byref(dev.c())
        managed, copied = c_void_p(), c_int(0)
        status = lib.sm_to_dlpack_ex(self._h, flags, target, byref(managed), byref(copied))
        if status == ERR_UNSUPPORTED or (status == ERR_DEVICE and dl_device is not None):
            raise DLPackExportError(status, last_error(), "sm_to_dlpack_ex")
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


def dlpack_collect():
    """Releases exported capsules that only this module still holds (their
    destructor runs now: deleter called unless a consumer took the capsule).
    Returns how many were released."""
    return _registry.sweep("capsule")


def dlpack_live_count():
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

def from_dlpack(obj):
    """Zero-copy import of any object with __dlpack__ (or a raw capsule).
    Asks for a versioned capsule first and falls back to the legacy one."""
    dlpack_collect()
    if type(obj).__name__ == "PyCapsule":
        capsule = obj
    else:
        kwargs = {}
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


class Storage(object):
    """A refcounted block of bytes (sm_storage)."""

    __slots__ = ("_h",)

    @classmethod
    def _wrap(cls, handle):
        s = object.__new__(cls)
        s._h = handle.value if isinstance(handle, c_void_p) else handle
        return s

    @property
    def handle(self):
        return self._h

    def close(self):
        h, self._h = self._h, None
        if h:
            _check(lib.sm_storage_release(h), "sm_storage_release")

    def __del__(self, _release=lib.sm_storage_release):
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            try:
                _release(h)
            except Exception:
                pass

    @property
    def nbytes(self):
        v = c_int64()
        _call("sm_storage_size", self._h, byref(v))
        return v.value

    @property
    def data_ptr(self):
        p = c_void_p()
        _call("sm_storage_data_ptr", self._h, byref(p))
        return p.value or 0

    @property
    def device(self):
        d = SmDevice()
        _call("sm_storage_device", self._h, byref(d))
        return Device(d)

    def tensor(self, shape, strides, storage_offset, dtype):
        sh, n = _i64(shape)
        st, m = _i64(strides)
        if n != m:
            raise ValueError("stridemem: shape and strides differ in length")
        out = _out()
        _call("sm_tensor_from_storage", self._h, sh, st, n, int(storage_offset),
              _dtype_code(dtype), byref(out))
        return Tensor._wrap(out)


class Stack(object):
    """Tensors carved LIFO out of one preallocated buffer (sm_stack).

    ``with Stack(1 << 20) as s:`` releases the stack at the end;
    ``with s.scope():`` pops every push made inside the block."""

    __slots__ = ("_h",)

    def __init__(self, capacity_bytes, device="cpu"):
        self._h = None
        out = _out()
        _call("sm_stack_create", _dev(device), int(capacity_bytes), byref(out))
        self._h = out.value

    @property
    def handle(self):
        return self._h

    def push(self, shape, dtype="float32"):
        sh, n = _i64(shape)
        out = _out()
        _call("sm_stack_push", self._h, sh, n, _dtype_code(dtype), byref(out))
        return Tensor._wrap(out)

    def mark(self):
        v = c_int64()
        _call("sm_stack_mark", self._h, byref(v))
        return v.value

    def pop_to(self, mark):
        _call("sm_stack_pop_to", self._h, int(mark))

    @property
    def used(self):
        u, c = c_int64(), c_int64()
        _call("sm_stack_used", self._h, byref(u), byref(c))
        return u.value

    @property
    def capacity(self):
        u, c = c_int64(), c_int64()
        _call("sm_stack_used", self._h, byref(u), byref(c))
        return c.value

    def release(self):
        h, self._h = self._h, None
        if h:
            _check(lib.sm_stack_release(h), "sm_stack_release")

    close = release

    def __del__(self, _release=lib.sm_stack_release):
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            try:
                _release(h)
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def scope(self):
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


def empty(*shape, dtype="float32", device="cpu"):
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_empty", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def empty_strided(shape, strides, dtype="float32", device="cpu"):
    a, n = _i64(shape)
    s, m = _i64(strides)
    if n != m:
        raise ValueError("stridemem: shape and strides differ in length")
    out = _out()
    _call("sm_empty_strided", a, s, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def zeros(*shape, dtype="float32", device="cpu"):
    a, n = _i64(_shape_arg(shape))
    out = _out()
    _call("sm_zeros", a, n, _dtype_code(dtype), _dev(device), byref(out))
    return Tensor._wrap(out)


def full(shape, value, dtype="float32", device="cpu"):
    """Every element value (sm_full). A complex value for a complex dtype is
    written by fill_ (sm_full takes a real double)."""
    if _is_complex_scalar(value) and _DTYPE_BY_CODE.get(_dtype_code(dtype)) in _COMPLEX_DTYPES:
        return empty(tuple(shape), dtype=dtype, device=device).fill_(value)
    a, n = _i64(shape)
    out = _out()
    _call("sm_full", a, n, _real_scalar(value, "full"), _dtype_code(dtype), _dev(device),
          byref(out))
    return Tensor._wrap(out)


def arange(start, step, n, dtype="float32", device="cpu"):
    """n elements start, start + step, ... (sm_arange's argument order)."""
    out = _out()
    _call("sm_arange", _real_scalar(start, "arange"), _real_scalar(step, "arange"), int(n),
          _dtype_code(dtype),
          _dev(device), byref(out))
    return Tensor._wrap(out)


def from_numpy(arr, device="cpu", dtype=None):
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


def tensor(values, dtype=None, device="cpu"):
    return from_numpy(_np.asarray(values), device=device, dtype=dtype)


def copy_into(dst, src):
    """dst[...] = src, broadcast and converted (sm_copy_into)."""
    _call("sm_copy_into", dst._h, src._h)
    return dst


def cuda_device_count():
    v = c_int32()
    _call("sm_cuda_device_count", byref(v))
    return v.value


def memory_stats(device="cpu"):
    dlpack_collect()
    s = SmMemoryStats()
    s.struct_size = ctypes.sizeof(SmMemoryStats)
    _call("sm_memory_stats", _dev(device), byref(s))
    return {f: getattr(s, f) for f in _STATS_FIELDS}


def reset_peak_stats(device="cpu"):
    _call("sm_reset_peak_stats", _dev(device))


def empty_cache(device="cpu"):
    dlpack_collect()
    _call("sm_empty_cache", _dev(device))


def memory_summary(device="cpu"):
    dlpack_collect()
    size = 1 << 14
    while True:
        buf = ctypes.create_string_buffer(size)
        _call("sm_memory_summary", _dev(device), buf, size)
        text = buf.value
        if len(text) < size - 1 or size >= 1 << 24:
            return text.decode("utf-8", "replace")
        size *= 4


def synchronize(device="cpu"):
    _call("sm_synchronize", _dev(device))


def set_stream(device, stream):
    _call("sm_set_stream", _dev(device), c_void_p(stream or None))


def get_stream(device):
    p = c_void_p()
    _call("sm_get_stream", _dev(device), byref(p))
    return p.value or 0


def set_num_threads(n):
    _call("sm_set_num_threads", int(n))


def get_num_threads():
    v = c_int32()
    _call("sm_get_num_threads", byref(v))
    return v.value


def debug_fail_alloc(n):
    _call("sm_debug_fail_alloc", int(n))


def debug_live_handles():
    """(tensors, storages, stacks) handles alive in the library."""
    a, b, c = c_int64(), c_int64(), c_int64()
    _call("sm_debug_live_handles", byref(a), byref(b), byref(c))
    return (a.value, b.value, c.value)
