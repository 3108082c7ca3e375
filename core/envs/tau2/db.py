"""The shared JSON-database engine: a read-only typed base plus copy-on-write overlays.

A τ²-bench database is a dict of collections (``orders``, ``users`` …), each a dict of records
keyed by id. :class:`BaseDB` holds the typed records once per process and never changes. An
episode or a ground-truth execution works on an :class:`OverlayState`: reads fall through to
the base, the first write to a record clones *that record only* into the overlay.

State hash, exactly as τ²-bench computes it: ``sha256(json.dumps(db.model_dump(),
sort_keys=True, default=str))`` — default separators and ASCII escapes. With sorted keys the
full dump is the concatenation of per-record fragments ``"<key>": <record json>`` in key
order, so :class:`BaseDB` keeps the base dump as one byte blob with the span of every record
plus SHA-256 checkpoints every :data:`CHUNK` bytes. Hashing an overlay resumes from the last
checkpoint before the first changed record and feeds unchanged spans straight from the blob:
only changed records are re-serialised, and nothing is re-parsed or deep-copied. The result is
bit-for-bit the naive full dump's hash (tested against :func:`naive_hash`).
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

CHUNK = 1 << 16
"""Distance in bytes between stored SHA-256 checkpoints of the base dump."""


def dump_record(rec: Any) -> str:
    """Serialise one record the way τ²'s hash does (sorted keys, default separators)."""
    return json.dumps(rec, sort_keys=True, default=str)


def _fragment(key: str, rec: Any) -> bytes:
    return (json.dumps(key) + ": " + dump_record(rec)).encode("utf-8")


def clone(obj: Any) -> Any:
    """Deep-copy a JSON value (dicts, lists, scalars) quickly."""
    if isinstance(obj, dict):
        return {k: clone(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clone(v) for v in obj]
    return obj


class BaseDB:
    """Typed, immutable base records of one database plus its serialised dump.

    Attributes:
        collections: Collection names in their file order.
        records: ``{collection: {key: record}}`` (shared; never mutate).
        blob: The full canonical dump, as bytes.
        hash: sha256 hex of :attr:`blob`.
    """

    def __init__(self, records: dict[str, dict[str, Any]]):
        self.collections: tuple[str, ...] = tuple(records)
        self.records = records
        parts: list[bytes] = []
        pos = 0
        self._keys: dict[str, list[str]] = {}
        self._starts: dict[str, list[int]] = {}
        self._ends: dict[str, list[int]] = {}
        self._index: dict[str, dict[str, int]] = {}
        self._body: dict[str, tuple[int, int]] = {}

        def emit(b: bytes) -> None:
            nonlocal pos
            parts.append(b)
            pos += len(b)

        emit(b"{")
        for ci, coll in enumerate(sorted(records)):
            if ci:
                emit(b", ")
            emit(json.dumps(coll).encode("utf-8") + b": {")
            body_start = pos
            keys = sorted(records[coll])
            starts: list[int] = []
            ends: list[int] = []
            for i, key in enumerate(keys):
                if i:
                    emit(b", ")
                starts.append(pos)
                emit(_fragment(key, records[coll][key]))
                ends.append(pos)
            self._body[coll] = (body_start, pos)
            emit(b"}")
            self._keys[coll] = keys
            self._starts[coll] = starts
            self._ends[coll] = ends
            self._index[coll] = {k: i for i, k in enumerate(keys)}
        emit(b"}")
        self.blob = b"".join(parts)
        self._view = memoryview(self.blob)
        h = hashlib.sha256()
        self._checkpoints = []
        for off in range(0, len(self.blob), CHUNK):
            self._checkpoints.append(h.copy())
            h.update(self._view[off : off + CHUNK])
        self.hash = h.hexdigest()

    def hash_with(self, changes: Mapping[str, Mapping[str, bytes]]) -> str:
        """Return the hash of the base with some records replaced or added.

        Args:
            changes: ``{collection: {key: fragment bytes}}``; keys absent from the base are
                inserted at their sorted position.

        Returns:
            The sha256 hex digest, equal to hashing the full dump of the changed database.
        """
        pieces: list[tuple[int, int] | bytes] = []

        def span(a: int, b: int) -> None:
            if b <= a:
                return
            last = pieces[-1] if pieces else None
            if isinstance(last, tuple) and last[1] == a:
                pieces[-1] = (last[0], b)
            else:
                pieces.append((a, b))

        cursor = 0
        view = self._view
        for coll in sorted(changes):
            ch = changes[coll]
            if not ch:
                continue
            if coll not in self._keys:
                raise KeyError(f"unknown collection {coll!r}")
            keys, starts, ends = self._keys[coll], self._starts[coll], self._ends[coll]
            index = self._index[coll]
            body_start, body_end = self._body[coll]
            n = len(keys)
            replaced: list[tuple[int, bytes]] = []
            inserted: dict[int, list[tuple[str, bytes]]] = {}
            for key, frag in ch.items():
                i = index.get(key)
                if i is None:
                    inserted.setdefault(bisect.bisect_left(keys, key), []).append((key, frag))
                else:
                    replaced.append((i, frag))
            events: list[tuple[int, int, Any]] = [(i, 1, f) for i, f in replaced]
            events += [(i, 0, sorted(v)) for i, v in inserted.items()]
            events.sort(key=lambda e: (e[0], e[1]))
            span(cursor, body_start)
            cursor = body_start
            for i, kind, payload in events:
                if kind == 1:
                    span(cursor, starts[i])
                    pieces.append(payload)
                    cursor = ends[i]
                elif i < n:
                    span(cursor, starts[i])
                    for _, frag in payload:
                        pieces.append(frag)
                        pieces.append(b", ")
                    cursor = starts[i]
                else:
                    if n:
                        span(cursor, ends[n - 1])
                        cursor = ends[n - 1]
                    for j, (_, frag) in enumerate(payload):
                        if n or j:
                            pieces.append(b", ")
                        pieces.append(frag)
        if cursor == 0:
            return self.hash
        span(cursor, len(self.blob))
        first = pieces[0]
        stop = first[1] if isinstance(first, tuple) else 0
        k = min(stop // CHUNK, len(self._checkpoints) - 1)
        h = self._checkpoints[k].copy()
        h.update(view[k * CHUNK : stop])
        for p in pieces[1:] if isinstance(first, tuple) else pieces:
            if isinstance(p, tuple):
                if p[1] > p[0]:
                    h.update(view[p[0] : p[1]])
            else:
                h.update(p)
        return h.hexdigest()


class DBState(Protocol):
    """What tools see: a mutable view of one database."""

    def has(self, coll: str, key: str) -> bool:
        """Return whether ``key`` exists in ``coll`` (raises TypeError for unhashable keys)."""
        ...

    def get(self, coll: str, key: str) -> Any:
        """Return a record for reading (never mutate it)."""
        ...

    def write(self, coll: str, key: str) -> Any:
        """Return a record that may be mutated in place."""
        ...

    def put(self, coll: str, key: str, record: Any) -> None:
        """Insert or replace a whole record."""
        ...

    def items(self, coll: str) -> Iterator[tuple[str, Any]]:
        """Iterate ``(key, record)`` in database order (read-only records)."""
        ...

    def state_hash(self) -> str:
        """Return the τ² state hash of the current contents."""
        ...


class OverlayState:
    """Copy-on-write view over a shared :class:`BaseDB`."""

    def __init__(self, base: BaseDB):
        self.base = base
        self._over: dict[str, dict[str, Any]] = {c: {} for c in base.collections}
        self._frags: dict[str, dict[str, bytes]] = {c: {} for c in base.collections}

    def _coll(self, coll: str) -> dict[str, Any]:
        try:
            return self._over[coll]
        except KeyError:
            raise KeyError(f"unknown collection {coll!r}") from None

    def has(self, coll: str, key: str) -> bool:
        """See :meth:`DBState.has`."""
        return key in self._coll(coll) or key in self.base.records[coll]

    def get(self, coll: str, key: str) -> Any:
        """See :meth:`DBState.get`."""
        over = self._coll(coll)
        if key in over:
            return over[key]
        return self.base.records[coll][key]

    def write(self, coll: str, key: str) -> Any:
        """See :meth:`DBState.write`."""
        over = self._coll(coll)
        self._frags[coll].pop(key, None)
        if key in over:
            return over[key]
        rec = clone(self.base.records[coll][key])
        over[key] = rec
        return rec

    def put(self, coll: str, key: str, record: Any) -> None:
        """See :meth:`DBState.put`."""
        self._coll(coll)[key] = record
        self._frags[coll].pop(key, None)

    def items(self, coll: str) -> Iterator[tuple[str, Any]]:
        """See :meth:`DBState.items`."""
        over = self._coll(coll)
        base = self.base.records[coll]
        for key, rec in base.items():
            yield key, over.get(key, rec)
        for key, rec in list(over.items()):
            if key not in base:
                yield key, rec

    def changed(self) -> dict[str, list[str]]:
        """Return the keys of records touched by writes, per collection."""
        return {c: list(o) for c, o in self._over.items() if o}

    def state_hash(self) -> str:
        """See :meth:`DBState.state_hash`; re-serialises only records written since last call."""
        changes: dict[str, dict[str, bytes]] = {}
        for coll, over in self._over.items():
            if not over:
                continue
            frags = self._frags[coll]
            for key, rec in over.items():
                if key not in frags:
                    frags[key] = _fragment(key, rec)
            changes[coll] = frags
        return self.base.hash_with(changes)

    def materialize(self) -> dict[str, dict[str, Any]]:
        """Return the full database as plain dicts (shares unchanged base records)."""
        return {c: dict(self.items(c)) for c in self.base.collections}


class PlainState:
    """A fully materialised, privately owned database (the naive path, for comparisons)."""

    def __init__(self, records: dict[str, dict[str, Any]]):
        self.records = records

    def has(self, coll: str, key: str) -> bool:
        """See :meth:`DBState.has`."""
        return key in self.records[coll]

    def get(self, coll: str, key: str) -> Any:
        """See :meth:`DBState.get`."""
        return self.records[coll][key]

    def write(self, coll: str, key: str) -> Any:
        """See :meth:`DBState.write`."""
        return self.records[coll][key]

    def put(self, coll: str, key: str, record: Any) -> None:
        """See :meth:`DBState.put`."""
        self.records[coll][key] = record

    def items(self, coll: str) -> Iterator[tuple[str, Any]]:
        """See :meth:`DBState.items`."""
        yield from list(self.records[coll].items())

    def state_hash(self) -> str:
        """Hash the full dump (naive)."""
        return naive_hash(self.records)


def naive_hash(records: Mapping[str, Any]) -> str:
    """Return ``sha256(json.dumps(db, sort_keys=True, default=str))`` of a full database."""
    return hashlib.sha256(
        json.dumps(records, sort_keys=True, default=str).encode("utf-8")
    ).hexdigest()
