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
is passed to ``from_numpy``; ``tensor(values, dtype="bfloat16")`` converts
values (of Python numbers and of NumPy arrays of any dtype), as
``torch.tensor`` does.

Scalars: the C API takes real doubles (``sm_full``, ``sm_arange``, the
scalar in-place ops, ``alpha``). A complex Python or NumPy scalar given to a
complex tensor (``fill_``, ``add_``, ``sub_``, ``mul_``, ``div_``, ``full``,
``copy_``, ``t[...] = z``) is sent as a 0-d tensor of the tensor's dtype
through the tensor form of the op instead; a complex scalar with a nonzero
imaginary part is refused (TypeError, nothing written) where the C API can
only take a real value: a non-complex tensor, ``clamp_`` bounds, ``alpha``
with a tensor operand, ``arange``.

The package is split by topic, in layers (each module imports only those
below it): _loader (finding the library); _capi (the C library, its signature
table, structs, constants, status codes and errors); dtypes, devices (and the
runtime: streams, threads); _handle (_Owner, the owner of a C handle, and
_TensorHandle, a tensor's handle, lifetime and metadata); _from_host (new
tensor handles from host values); _registry (the keep-alive registry);
Tensor's method groups, each a mixin over _TensorHandle: _views (views and
copies), _inplace, _host_exchange (the NumPy side), _indexing, _dlpack_export
(DLPack capsules and their export); _tensor (Tensor and Storage, which return
each other, their pickling and sharing); then creation (empty, zeros, tensor,
from_numpy, ...), interop (from_blob, from_numpy_blob), dlpack (from_dlpack),
storage (Storage and the unpickling functions under the path old pickles
name) and memory (statistics, snapshots, the allocator, the stack of views).
This module imports the public names from them.
"""

from __future__ import annotations

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

# The package version, the repository's VERSION. The build backend
# (bindings/python/_backend) reads this line without importing the package:
# keep it a plain string literal.
__version__ = "0.4.0"

from . import _loader  # noqa: E402
from ._capi import (  # noqa: E402
    BINDING_MAJOR, BINDING_VERSION, DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, DLDataType,
    DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPACK_COPY, DLPACK_FLAG_IS_COPIED,
    DLPACK_FLAG_READ_ONLY, DLPACK_NORMALIZE, DLPACK_NO_COPY, DLPACK_VERSIONED,
    DLPackExportError, DLPackVersion, DLTensor, DTYPES, DTypeError, DeviceError,
    ERROR_CLASSES, ERR_CUDA, ERR_DEVICE, ERR_DTYPE, ERR_INTERNAL, ERR_INVALID_ARGUMENT,
    ERR_INVALID_HANDLE, ERR_OUT_OF_BOUNDS, ERR_OUT_OF_MEMORY, ERR_OVERFLOW, ERR_OVERLAP,
    ERR_READ_ONLY, ERR_SHAPE, ERR_UNSUPPORTED, FORMATS, CudaError, InternalError,
    InvalidArgumentError, InvalidHandleError, LIBRARY_PATH, LIBRARY_SOURCE, LIBRARY_VERSION,
    MAX_DIMS, MISSING_SYMBOLS, NUM_DTYPES, OK, OPS, OutOfBoundsError, OutOfMemoryError,
    OverlapError, ReadOnlyError, SHARE_DESC_SIZE, SLICE_NONE, STATUS_NAMES, ShapeError,
    SizeOverflowError, SmDevice, SmMemoryStats, SmOomInfo, StrideMemError, UnsupportedError,
    error_for, is_compatible, last_error, lib, status_string, version,
    _LOADED, _PY_NAMES, _SIGNATURES, _call)
from .dtypes import DType, dtype_name, dtype_size, is_complex, numpy_dtype, _np  # noqa: E402
from .devices import (  # noqa: E402
    Device, DeviceLike, cuda_device_count, get_num_threads, get_stream, set_num_threads,
    set_stream, synchronize)
from ._registry import BLOB_STATS, DLPACK_STATS  # noqa: E402
from ._dlpack_export import (  # noqa: E402
    dlpack_collect, dlpack_live_count, _CAPSULE_VERSIONED, _PyCapsule_GetPointer)
from ._tensor import Storage, Tensor, _unpickle_storage, _unpickle_tensor  # noqa: E402
from . import storage  # noqa: E402,F401  (stridemem.storage: the path old pickles name)
from .interop import as_tensor, blob_live_count, from_blob, from_numpy_blob  # noqa: E402
from .dlpack import from_dlpack  # noqa: E402
from .memory import (  # noqa: E402
    OomInfo, Stack, debug_fail_alloc, debug_live_handles, empty_cache, memory_snapshot,
    memory_stats, memory_summary, record_memory_history, reset_peak_stats,
    save_memory_snapshot, set_oom_observer, tag)
from .creation import (  # noqa: E402
    arange, arange_n, copy_into, empty, empty_like, empty_shared, empty_strided, equal,
    from_numpy, full, full_like, ones, ones_like, tensor, zeros, zeros_like)

# The public classes keep "stridemem" as their module: their repr, the
# tracebacks that name them and pickles that refer to them by name are those
# of the package, not of the file that defines them.
for _cls in (StrideMemError, DLPackExportError, InvalidArgumentError, InvalidHandleError,
             OutOfMemoryError, ShapeError, OutOfBoundsError, DTypeError, DeviceError,
             OverlapError, SizeOverflowError, UnsupportedError, CudaError, InternalError,
             ReadOnlyError, Tensor, Storage, Stack, Device, DType, OomInfo, tag, SmDevice,
             SmMemoryStats, SmOomInfo, DLDevice, DLDataType, DLTensor, DLManagedTensor,
             DLPackVersion, DLManagedTensorVersioned, _unpickle_tensor, _unpickle_storage):
    _cls.__module__ = __name__
del _cls

# Names the package namespace carries besides its own (standard-library
# modules, typing and ctypes names): code may reach them as stridemem.X.
import atexit, ctypes, itertools, json, math, operator, os, re  # noqa: E401,E402,F401
import struct, sys, threading, warnings  # noqa: E401,E402,F401
from typing import (Any, Callable, Dict, Iterator, List, Literal, NamedTuple,  # noqa: E402,F401
                    NoReturn, Optional, Sequence, Tuple, Union, overload)
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double,  # noqa: E402,F401
                    c_int, c_int32, c_int64, c_size_t, c_uint8, c_uint16, c_uint32, c_uint64,
                    c_void_p)

# Tensors and storages sent through multiprocessing (queues, pipes, process
# arguments) travel as file descriptors when they are shared: registered
# with multiprocessing's pickler here, as torch.multiprocessing does.
from . import multiprocessing as _sm_multiprocessing  # noqa: E402

_sm_multiprocessing.register_reducers()
