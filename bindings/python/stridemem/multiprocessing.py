"""Tensors and storages between processes with Python's multiprocessing.

Registered with multiprocessing's pickler when stridemem is imported (as
torch.multiprocessing does for torch tensors): a tensor whose storage is
shared (``empty_shared``, ``share_memory_()``, ``Stack(..., shared=True)``,
any CUDA tensor) crosses a Queue, a Pipe or a Process's arguments as a file
descriptor plus a 144-byte descriptor, never as its bytes; the receiving
process maps the same pages and rebuilds the same view (shape, strides,
offset, dtype), so writes on either side show on the other. The fd travels
by multiprocessing's own means (SCM_RIGHTS through its resource sharer, or
the fds a spawned child inherits); stridemem adds no transport.

A tensor that is not shared pickles by value, exactly as plain ``pickle``
does (a copy; nothing is moved behind your back): call ``share_memory_()``
first to send it by fd. Plain ``pickle.dumps`` always copies the values.

Each received tensor is a new mapping of the storage and holds one fd until
it is released (count them against ``ulimit -n`` when many are alive). CUDA
tensors go through CUDA IPC: the sending process keeps the tensor alive
while receivers use it, and a process cannot receive its own CUDA tensor.
"""
import multiprocessing.context as _context
import multiprocessing.reduction as _reduction
import multiprocessing.util as _util
import os

from ._capi import ERR_UNSUPPORTED, UnsupportedError
from ._tensor import Storage, Tensor

__all__ = ["register_reducers"]


def _send_fd(fd):
    """A picklable handle to fd for the process that unpickles it. In a
    queue or pipe, multiprocessing's resource sharer sends its own duplicate,
    so ours is closed at once; while a spawned or forkserver child is being
    started, that very fd is handed to the child as the launch happens, so
    it is closed when the launching Popen object goes."""
    popen = _context.get_spawning_popen()
    handle = _reduction.DupFd(fd)
    if popen is None:
        os.close(fd)
    else:
        _util.Finalize(popen, os.close, (fd,))
    return handle


def _receive(desc, fd_handle):
    fd = fd_handle.detach() if fd_handle is not None else -1
    try:
        return Storage.from_shared(desc, fd)
    finally:
        if fd >= 0:
            os.close(fd)  # the storage keeps its own duplicate


def _rebuild_tensor(desc, fd_handle, shape, strides, storage_offset, dtype):
    storage = _receive(desc, fd_handle)
    with storage:
        return storage.tensor(shape, strides, storage_offset, dtype)


def _reduce_tensor(t):
    if t.handle and t.is_shared():
        desc, fd = t._export()
        handle = _send_fd(fd) if fd >= 0 else None
        return (_rebuild_tensor, (desc, handle, t.shape, t.strides, t.storage_offset,
                                  t.dtype.name))
    return t.__reduce__()  # by value, as plain pickle


def _reduce_storage(s):
    if not s.is_shared:
        raise UnsupportedError(
            ERR_UNSUPPORTED,
            "stridemem: this storage is not in shared memory, so it cannot go to another "
            "process by fd: share a tensor of it first (Tensor.share_memory_()) or send "
            "tensors, which pickle by value when they are not shared",
            "multiprocessing")
    desc, fd = s.export()
    return (_receive, (desc, _send_fd(fd) if fd >= 0 else None))


def register_reducers():
    """Teach multiprocessing's pickler to send shared stridemem tensors and
    storages by fd (done once when stridemem is imported)."""
    _reduction.ForkingPickler.register(Tensor, _reduce_tensor)
    _reduction.ForkingPickler.register(Storage, _reduce_storage)
