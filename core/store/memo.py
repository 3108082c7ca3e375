"""Small locked LRU memos of derived read models, owned by one store object.

The studio's dashboards memoise expensive frames (GRIP records, judged realism) per store
*object*, not per process: a memo lives and dies with the :class:`~core.store.Store` that owns
it (see :meth:`core.store.connection.StoreBase.memo`), every access takes its lock, and no
module holds one. Values must be treated as read-only by every caller.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """A thread-safe least-recently-used map of at most ``size`` entries.

    Args:
        size: How many entries to keep (the least recently used is dropped first).
    """

    def __init__(self, size: int = 8) -> None:
        if size < 1:
            raise ValueError(f"a memo keeps at least one entry, got size={size}")
        self.size = size
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """Return the value under ``key`` (and mark it recently used), or None."""
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: Hashable, value: V) -> None:
        """Store ``value`` under ``key``, dropping the least recently used beyond ``size``."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
