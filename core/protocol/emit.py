"""Recording decisions: build an event, fold it into the state, buffer it for the log."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from core.model.events import Event
from core.protocol.fast import construct_defaults
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

    def emit_typed(self, cls: type[E], **fields: Any) -> E:
        """:meth:`emit` for fields that are already exactly of their declared types.

        Skips validation (the hot path's agent actions are typed models already); the event is
        the one :meth:`emit` would build.
        """
        fields.setdefault("turn", self.state.turn)
        fields["seq"] = self.state.next_seq
        ev = construct_defaults(cls, fields)
        evolve(self.state, cast(Event, ev))
        self.buffer.append(cast(Event, ev))
        return ev

    def drain(self) -> list[Event]:
        """Return and clear the buffered events."""
        out, self.buffer = self.buffer, []
        return out
