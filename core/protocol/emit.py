"""Recording decisions: build an event, fold it into the state, buffer it for the log."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from core.model.events import Event
from core.protocol.state import EpisodeState, evolve

E = TypeVar("E", bound=BaseModel)


class Emitter:
    """Appends events to a state (via :func:`evolve`) and keeps them for the event log."""

    def __init__(self, state: EpisodeState) -> None:
        self.state = state
        self.buffer: list[Event] = []

    def emit(self, cls: type[E], **fields: Any) -> E:
        """Create ``cls`` with the next ``seq`` (and the current turn unless given), apply it."""
        fields.setdefault("turn", self.state.turn)
        ev = cls(seq=self.state.next_seq, **fields)
        evolve(self.state, cast(Event, ev))
        self.buffer.append(cast(Event, ev))
        return ev

    def drain(self) -> list[Event]:
        """Return and clear the buffered events."""
        out, self.buffer = self.buffer, []
        return out
