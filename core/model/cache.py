"""A small thread-safe LRU map, for state an object owns (never for module-level caches).

Objects that several threads (Streamlit sessions, a sweep's writer thread) share keep their
caches in one of these, created in their constructor: the event logs hold the engine's live
episode state in one (:attr:`core.engine.eventlog.InMemoryEventLog.live`, ``Store.live``), and
a store keeps its dashboard memos in them (:meth:`core.store.connection.StoreBase.memo`).
It depends on nothing, so any layer may own one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LockedLRU(Generic[K, V]):
    """A bounded least-recently-used map whose every operation holds one lock.

    Args:
        maxsize: Most entries kept; the least recently used one is dropped beyond it.
    """

    def __init__(self, maxsize: int = 256) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """Return the entry for ``key`` (and mark it recently used), or None."""
        with self._lock:
            got = self._data.get(key)
            if got is not None:
                self._data.move_to_end(key)
            return got

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, dropping the least recently used entry if full."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def drop(self, key: K) -> None:
        """Forget ``key`` (no error when absent)."""
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._data.clear()

    def values(self) -> list[V]:
        """A snapshot of the entries, least recently used first."""
        with self._lock:
            return list(self._data.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data
