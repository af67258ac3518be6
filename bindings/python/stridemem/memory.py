"""Memory: the stack of views, the allocator's statistics, snapshots and
history, tags, the out-of-memory observer, and the allocator's fault
injection."""

from __future__ import annotations

import ctypes
import json
import os
import threading
import warnings
from contextlib import ContextDecorator as _ContextDecorator
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple, Union
from ctypes import CFUNCTYPE, POINTER, byref, c_int64, c_size_t, c_void_p

from ._capi import (DEVICE_CPU, DeviceError, ERR_DEVICE, SmMemoryStats, SmOomInfo,
                    _STATS_FIELDS, _call)
from .dtypes import _dtype_code
from .devices import Device, DeviceLike, _dev, _i64, _out, _shape_tuple
from ._handle import _Owner
from ._dlpack_export import dlpack_collect
from ._tensor import Storage, Tensor


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
