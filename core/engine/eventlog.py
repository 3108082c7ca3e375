"""The episode event-log interface and its in-memory implementation.

The SQLite store (:mod:`core.store`) implements the same :class:`EventLog` protocol; tests and
benchmarks use :class:`InMemoryEventLog`. The log is append-only and ``seq`` numbers are
contiguous from 0 per episode.

Every log owns the engine's cache of live episodes (:attr:`EventLog.live`: the replayed state
and the open environment session of recently stepped episodes, see :mod:`core.engine.live`),
created in its constructor and locked, so two sessions sharing a log share it safely and two
logs never see each other's entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from core.errors import NotFoundError, ProtocolError
from core.model.cache import LockedLRU
from core.model.episode import EpisodeHeader, Outcome
from core.model.events import Event


@runtime_checkable
class EventLog(Protocol):
    """Where episodes are written. Append-only; seq contiguous.

    Attributes:
        live: The engine's live-episode cache for this log (episode id → live state).
    """

    live: LockedLRU[str, Any]

    def create_episode(self, header: EpisodeHeader) -> None:
        """Create an empty episode (ProtocolError if the id exists)."""
        ...

    def append(self, episode_id: str, events: Sequence[Event]) -> None:
        """Append ``events``; their ``seq`` must continue the stored sequence."""
        ...

    def header(self, episode_id: str) -> EpisodeHeader:
        """Return the header (NotFoundError if unknown)."""
        ...

    def events(self, episode_id: str) -> list[Event]:
        """Return all events in ``seq`` order."""
        ...

    def finish(self, episode_id: str, outcome: Outcome, summary: dict[str, Any]) -> None:
        """Record the final outcome and a JSON summary."""
        ...


@dataclass
class _Record:
    header: EpisodeHeader
    events: list[Event] = field(default_factory=list)
    outcome: Outcome | None = None
    summary: dict[str, Any] = field(default_factory=dict)


class InMemoryEventLog:
    """A dict-backed :class:`EventLog` for tests, benchmarks and throwaway runs."""

    def __init__(self) -> None:
        self._eps: dict[str, _Record] = {}
        self.live: LockedLRU[str, Any] = LockedLRU()  # live episodes (core.engine.live)

    def create_episode(self, header: EpisodeHeader) -> None:
        """Create an empty episode."""
        if header.episode_id in self._eps:
            raise ProtocolError(f"episode {header.episode_id} already exists")
        self._eps[header.episode_id] = _Record(header=header)

    def _get(self, episode_id: str) -> _Record:
        rec = self._eps.get(episode_id)
        if rec is None:
            raise NotFoundError(f"episode {episode_id} not found")
        return rec

    def append(self, episode_id: str, events: Sequence[Event]) -> None:
        """Append events, checking that seq numbers are contiguous."""
        rec = self._get(episode_id)
        nxt = len(rec.events)
        for i, ev in enumerate(events):
            if ev.seq != nxt + i:
                raise ProtocolError(
                    f"episode {episode_id}: expected seq {nxt + i}, got {ev.seq} ({ev.kind})"
                )
        rec.events.extend(events)

    def header(self, episode_id: str) -> EpisodeHeader:
        """Return the header."""
        return self._get(episode_id).header

    def events(self, episode_id: str) -> list[Event]:
        """Return a copy of the event list."""
        return list(self._get(episode_id).events)

    def finish(self, episode_id: str, outcome: Outcome, summary: dict[str, Any]) -> None:
        """Record the outcome."""
        rec = self._get(episode_id)
        rec.outcome = outcome
        rec.summary = dict(summary)

    def outcome(self, episode_id: str) -> Outcome | None:
        """Return the recorded outcome (None while running)."""
        return self._get(episode_id).outcome

    def summary(self, episode_id: str) -> dict[str, Any]:
        """Return the recorded summary."""
        return dict(self._get(episode_id).summary)

    def episode_ids(self) -> list[str]:
        """Return all episode ids in creation order."""
        return list(self._eps)
