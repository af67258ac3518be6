#!/usr/bin/python3
"""The package's surface does not change by accident: every public name of
``stridemem`` (dir(), including the standard-library and typing names the
namespace carries), ``__all__``, the public members each public class defines,
the module public classes report (``stridemem``: their repr, tracebacks and
pickles name it), and the private names tests, tools and the package's other
modules reach through ``stridemem`` are compared with the lists below. The
lists were generated from the package as one file and are kept by hand: a
change here is a change of the API. New names allowed: the package's own
submodules."""

import inspect
import sys

from _util import Results, import_stridemem  # noqa: E402

sm = import_stridemem()
R = Results("test_package_surface")

SUBMODULES = {"creation", "devices", "dlpack", "dtypes", "interop", "memory", "multiprocessing",
              "storage"}
# Private names used outside the package's own file: tests (_call,
# _SIGNATURES, the capsule helpers, _unpickle_tensor), the loader and
# signature checkers (_LOADED, _PY_NAMES), stridemem.mpi (_np), pickles
# (_unpickle_tensor, _unpickle_storage).
PRIVATE = ["_CAPSULE_VERSIONED", "_LOADED", "_PY_NAMES", "_PyCapsule_GetPointer", "_SIGNATURES",
           "_call", "_loader", "_np", "_unpickle_storage", "_unpickle_tensor"]

NAMES = ['Any', 'BINDING_MAJOR', 'BINDING_VERSION', 'BLOB_STATS', 'CFUNCTYPE', 'Callable', 'CudaError',
 'DEVICE_CPU', 'DEVICE_CUDA', 'DEVICE_CUDA_HOST', 'DLDataType', 'DLDevice', 'DLManagedTensor',
 'DLManagedTensorVersioned', 'DLPACK_COPY', 'DLPACK_FLAG_IS_COPIED', 'DLPACK_FLAG_READ_ONLY',
 'DLPACK_NORMALIZE', 'DLPACK_NO_COPY', 'DLPACK_STATS', 'DLPACK_VERSIONED', 'DLPackExportError',
 'DLPackVersion', 'DLTensor', 'DTYPES', 'DType', 'DTypeError', 'Device', 'DeviceError',
 'DeviceLike', 'Dict', 'ERROR_CLASSES', 'ERR_CUDA', 'ERR_DEVICE', 'ERR_DTYPE', 'ERR_INTERNAL',
 'ERR_INVALID_ARGUMENT', 'ERR_INVALID_HANDLE', 'ERR_OUT_OF_BOUNDS', 'ERR_OUT_OF_MEMORY',
 'ERR_OVERFLOW', 'ERR_OVERLAP', 'ERR_READ_ONLY', 'ERR_SHAPE', 'ERR_UNSUPPORTED', 'FORMATS',
 'InternalError', 'InvalidArgumentError', 'InvalidHandleError', 'Iterator', 'LIBRARY_PATH',
 'LIBRARY_SOURCE', 'LIBRARY_VERSION', 'List', 'Literal', 'MAX_DIMS', 'MISSING_SYMBOLS',
 'NUM_DTYPES', 'NamedTuple', 'NoReturn', 'OK', 'OPS', 'OomInfo', 'Optional', 'OutOfBoundsError',
 'OutOfMemoryError', 'OverlapError', 'POINTER', 'ReadOnlyError', 'SHARE_DESC_SIZE',
 'SLICE_NONE', 'STATUS_NAMES', 'Sequence', 'ShapeError', 'SizeOverflowError', 'SmDevice',
 'SmMemoryStats', 'SmOomInfo', 'Stack', 'Storage', 'StrideMemError', 'Structure', 'Tensor',
 'Tuple', 'Union', 'UnsupportedError', 'annotations', 'arange', 'arange_n', 'as_tensor',
 'atexit', 'blob_live_count', 'byref', 'c_char_p', 'c_double', 'c_int', 'c_int32', 'c_int64',
 'c_size_t', 'c_uint16', 'c_uint32', 'c_uint64', 'c_uint8', 'c_void_p', 'copy_into', 'ctypes',
 'cuda_device_count', 'debug_fail_alloc', 'debug_live_handles', 'dlpack_collect',
 'dlpack_live_count', 'dtype_name', 'dtype_size', 'empty', 'empty_cache', 'empty_like',
 'empty_shared', 'empty_strided', 'equal', 'error_for', 'from_blob', 'from_dlpack',
 'from_numpy', 'from_numpy_blob', 'full', 'full_like', 'get_num_threads', 'get_stream',
 'is_compatible', 'is_complex', 'itertools', 'json', 'last_error', 'lib', 'math',
 'memory_snapshot', 'memory_stats', 'memory_summary', 'multiprocessing', 'numpy_dtype', 'ones',
 'ones_like', 'operator', 'os', 'overload', 're', 'record_memory_history', 'reset_peak_stats',
 'save_memory_snapshot', 'set_num_threads', 'set_oom_observer', 'set_stream', 'status_string',
 'struct', 'synchronize', 'sys', 'tag', 'tensor', 'threading', 'version', 'warnings', 'zeros',
 'zeros_like']
CLASS_MEMBERS = {'CudaError': [],
 'DLDataType': ['bits', 'code', 'lanes'],
 'DLDevice': ['device_id', 'device_type'],
 'DLManagedTensor': ['deleter', 'dl_tensor', 'manager_ctx'],
 'DLManagedTensorVersioned': ['deleter', 'dl_tensor', 'flags', 'manager_ctx', 'version'],
 'DLPackExportError': [],
 'DLPackVersion': ['major', 'minor'],
 'DLTensor': ['byte_offset', 'data', 'device', 'dtype', 'ndim', 'shape', 'strides'],
 'DType': ['code', 'is_complex', 'itemsize', 'name', 'numpy'],
 'DTypeError': [],
 'Device': ['c', 'index', 'type'],
 'DeviceError': [],
 'InternalError': [],
 'InvalidArgumentError': [],
 'InvalidHandleError': [],
 'OomInfo': ['allocated_bytes', 'cached_free_bytes', 'device', 'largest_free_block', 'report',
             'requested_bytes', 'reserved_bytes'],
 'OutOfBoundsError': [],
 'OutOfMemoryError': [],
 'OverlapError': [],
 'ReadOnlyError': [],
 'ShapeError': [],
 'SizeOverflowError': [],
 'SmDevice': ['index', 'type'],
 'SmMemoryStats': ['active_storages', 'active_views', 'allocated_bytes', 'cache_hits',
                   'device_allocs', 'device_frees', 'num_allocs', 'num_frees',
                   'peak_allocated_bytes', 'peak_reserved_bytes', 'requested_bytes', 'reserved',
                   'reserved0', 'reserved_bytes', 'struct_size'],
 'SmOomInfo': ['allocated_bytes', 'cached_free_bytes', 'device', 'largest_free_block', 'report',
               'requested_bytes', 'reserved0', 'reserved_bytes', 'struct_size'],
 'Stack': ['capacity', 'close', 'handle', 'mark', 'pop_to', 'push', 'release', 'scope',
           'storage', 'used'],
 'Storage': ['close', 'data_ptr', 'device', 'export', 'from_shared', 'handle', 'id',
             'is_shared', 'nbytes', 'release', 'tensor'],
 'StrideMemError': [],
 'Tensor': ['T', 'abs_', 'add_', 'as_strided', 'chunk', 'clamp_', 'clone', 'close',
            'contiguous', 'copy_', 'cpu', 'data_ptr', 'device', 'diagonal', 'dim', 'div_',
            'dtype', 'exp_', 'expand', 'fill_', 'flatten', 'flip', 'handle', 'index_select',
            'is_contiguous', 'is_read_only', 'is_shared', 'is_view', 'item', 'itemsize',
            'movedim', 'mul_', 'narrow', 'nbytes', 'ndim', 'neg_', 'numel', 'numpy', 'permute',
            'record_stream', 'release', 'relu_', 'reshape', 'reshape_would_copy', 'retain',
            'same_storage', 'select', 'shape', 'share_memory_', 'sign_', 'size', 'slice', 'split',
            'sqrt_', 'squeeze', 'storage', 'storage_id', 'storage_nbytes', 'storage_offset',
            'stride', 'strides', 'sub_', 'to', 'tolist', 'transpose', 'unflatten', 'unfold',
            'unsqueeze', 'version', 'view', 'zero_'],
 'UnsupportedError': [],
 'tag': []}
ALL = ['CudaError', 'DLPackExportError', 'DTYPES', 'DType', 'DTypeError', 'Device', 'DeviceError',
 'InternalError', 'InvalidArgumentError', 'InvalidHandleError', 'OomInfo', 'OutOfBoundsError',
 'OutOfMemoryError', 'OverlapError', 'ReadOnlyError', 'SHARE_DESC_SIZE', 'ShapeError',
 'SizeOverflowError', 'Stack', 'Storage', 'StrideMemError', 'Tensor', 'UnsupportedError',
 'arange', 'arange_n', 'as_tensor', 'copy_into', 'cuda_device_count', 'empty', 'empty_cache',
 'empty_like', 'empty_shared', 'empty_strided', 'equal', 'from_blob', 'from_dlpack',
 'from_numpy', 'from_numpy_blob', 'full', 'full_like', 'get_num_threads', 'get_stream',
 'memory_snapshot', 'memory_stats', 'memory_summary', 'ones', 'ones_like',
 'record_memory_history', 'reset_peak_stats', 'save_memory_snapshot', 'set_num_threads',
 'set_oom_observer', 'set_stream', 'synchronize', 'tag', 'tensor', 'version', 'zeros',
 'zeros_like']
CLASS_MODULES = {'CudaError': 'stridemem',
 'DLDataType': 'stridemem',
 'DLDevice': 'stridemem',
 'DLManagedTensor': 'stridemem',
 'DLManagedTensorVersioned': 'stridemem',
 'DLPackExportError': 'stridemem',
 'DLPackVersion': 'stridemem',
 'DLTensor': 'stridemem',
 'DType': 'stridemem',
 'DTypeError': 'stridemem',
 'Device': 'stridemem',
 'DeviceError': 'stridemem',
 'InternalError': 'stridemem',
 'InvalidArgumentError': 'stridemem',
 'InvalidHandleError': 'stridemem',
 'OomInfo': 'stridemem',
 'OutOfBoundsError': 'stridemem',
 'OutOfMemoryError': 'stridemem',
 'OverlapError': 'stridemem',
 'ReadOnlyError': 'stridemem',
 'ShapeError': 'stridemem',
 'SizeOverflowError': 'stridemem',
 'SmDevice': 'stridemem',
 'SmMemoryStats': 'stridemem',
 'SmOomInfo': 'stridemem',
 'Stack': 'stridemem',
 'Storage': 'stridemem',
 'StrideMemError': 'stridemem',
 'Tensor': 'stridemem',
 'UnsupportedError': 'stridemem',
 'tag': 'stridemem'}


def own_members(cls):
    """Public members a stridemem class (or its stridemem bases) defines."""
    return sorted(m for m in dir(cls) if not m.startswith("_") and any(
        m in vars(b) for b in cls.__mro__ if (b.__module__ or "").startswith("stridemem")))


def names():
    got = sorted(n for n in dir(sm) if not n.startswith("_"))
    R.equal(sorted(set(NAMES) - set(got)), [], "public names that disappeared")
    R.equal(sorted(set(got) - set(NAMES) - SUBMODULES), [], "public names that appeared")
    R.equal(sorted(sm.__all__), ALL, "__all__")
    R.equal([n for n in sm.__all__ if not hasattr(sm, n)], [], "__all__ names that do not exist")
    R.equal([n for n in PRIVATE if not hasattr(sm, n)], [], "private names used outside")


def classes():
    for name, members in sorted(CLASS_MEMBERS.items()):
        cls = getattr(sm, name, None)
        if not R.check(inspect.isclass(cls), "stridemem.%s is a class" % name):
            continue
        R.equal(own_members(cls), members, "public members of stridemem.%s" % name)
        R.equal(cls.__module__, CLASS_MODULES[name], "stridemem.%s.__module__" % name)


def pickled_names():
    # Pickles name the reconstructors as stridemem._unpickle_*.
    for fn in (sm._unpickle_tensor, sm._unpickle_storage):
        R.equal(fn.__module__, "stridemem", "%s.__module__" % fn.__name__)
    t = sm.zeros(2)
    R.equal(t.__reduce__()[0], sm._unpickle_tensor, "Tensor.__reduce__ uses _unpickle_tensor")


for name, fn in [("names", names), ("classes", classes), ("pickled names", pickled_names)]:
    R.run(name, fn)
sys.exit(R.finish())
