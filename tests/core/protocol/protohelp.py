"""Helpers for protocol tests: scripted action lists and persona overrides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.persona import Persona
from core.model.world import EnvAction
from core.protocol.personas import load_personas

Action = EnvOp | Ask | Propose | Malformed


class ListAgent:
    """Plays a fixed list of actions, then proposes forever."""

    spec = "LIST"

    def __init__(self, actions: Sequence[Action]) -> None:
        self.actions = list(actions)
        self.i = 0
        self.views: list[Any] = []

    def act(self, view: Any) -> Action:
        self.views.append(view)
        if self.i < len(self.actions):
            self.i += 1
            return self.actions[self.i - 1]
        return Propose(text="done")


def ask(slot: str | None = None, text: str | None = None) -> Ask:
    if slot is None:
        return Ask(text=text or "Anything else?", asks=())
    return Ask(text=text or f"Which {slot}?", asks=(slot,))


def buy(item: str) -> EnvOp:
    return EnvOp(action=EnvAction(tool="buy", args={"item_id": item}))


def search(q: str = "shirt") -> EnvOp:
    return EnvOp(action=EnvAction(tool="search", args={"query": q}))


def persona(pid: str = "rational", **over: Any) -> Persona:
    p = load_personas()[pid]
    return p.model_copy(update=over) if over else p
