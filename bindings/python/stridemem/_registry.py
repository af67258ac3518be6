"""The keep-alive registry: Python objects that memory shared with the
library depends on (the owners of from_blob memory, exported DLPack
capsules). One object, one lock, one key space, per-kind statistics; the
blob side lives in interop.py, the capsule side in _dlpack_export.py."""

from __future__ import annotations

import itertools
import sys
import threading


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
