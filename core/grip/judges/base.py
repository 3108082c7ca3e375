"""The role-realism judge interface: user turns in, a persona pick or SAME/DIFFERENT out.

Three kinds of judges sit behind :class:`RoleJudge`: a pair of language models
(:mod:`core.grip.judges.llm`), an offline classifier over features of the user turns
(:mod:`core.grip.judges.heuristic`) and human labels from annotation studies
(:mod:`core.grip.judges.human`, read from the store rather than called).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from core.model.persona import Persona

Task = Literal["identification", "consistency"]

SAME = "SAME"
DIFFERENT = "DIFFERENT"
INVALID = "invalid"
"""Value recorded when a judge's answer cannot be parsed (counts as wrong)."""

JUDGE_ERROR = "error"
"""Value of a judgment whose model call failed: never stored, never scored, counted."""

MAX_IDENT_TURNS = 8
"""User turns shown to an Identification judge."""

MAX_PAIR_TURNS = 6
"""User turns per episode shown to a Consistency judge."""


@dataclass(frozen=True)
class UserTurn:
    """One user reply as the judges see it (text plus the structured disclosure counts)."""

    text: str
    reply_kind: str
    n_answer: int = 0
    n_volunteer: int = 0
    n_hint: int = 0
    n_asked: int = 0
    n_declined: int = 0

    @classmethod
    def from_event(cls, ev: Mapping[str, Any]) -> UserTurn:
        """Build from a stored ``user_reply`` event (JSON form)."""
        disc = ev.get("disclosures") or ()
        return cls(
            text=str(ev.get("text") or ""),
            reply_kind=str(ev.get("reply_kind") or ""),
            n_answer=sum(1 for d in disc if d.get("how") == "answer"),
            n_volunteer=sum(1 for d in disc if d.get("how") == "volunteer"),
            n_hint=sum(1 for d in disc if d.get("how") == "rejection_hint"),
            n_asked=len(ev.get("asked") or ()),
            n_declined=len(ev.get("declined") or ()),
        )


def user_turns(events: Iterable[Mapping[str, Any]]) -> list[UserTurn]:
    """The user's turns of an episode: every non-mute reply (never grader reasons)."""
    return [
        UserTurn.from_event(ev)
        for ev in events
        if ev.get("kind") == "user_reply" and ev.get("reply_kind") != "mute"
    ]


@dataclass(frozen=True)
class PersonaCard:
    """What a judge is told about one persona: the first sentence of its bio."""

    persona_id: str
    text: str


def first_sentence(text: str) -> str:
    """Return the first sentence of ``text`` (whitespace collapsed)."""
    flat = " ".join(text.split())
    m = re.search(r"(?<=[.!?])\s", flat)
    return flat[: m.start()] if m else flat


def persona_cards(personas: Mapping[str, Persona]) -> list[PersonaCard]:
    """Cards for ``personas`` sorted by id (judges shuffle them per episode)."""
    return [PersonaCard(pid, first_sentence(p.bio)) for pid, p in sorted(personas.items())]


@dataclass(frozen=True)
class Judgment:
    """One raw judgment as stored in the ``judgments`` table."""

    judge: str
    task: Task
    target_id: str
    value: str
    raw: str = ""


@runtime_checkable
class RoleJudge(Protocol):
    """A role-realism judge.

    Attributes:
        name: Stored in ``judgments.judge`` (a model spec, ``heuristic``, ``human:<who>``).
    """

    name: str

    def identify(
        self, items: Sequence[tuple[str, Sequence[UserTurn]]], cards: Sequence[PersonaCard]
    ) -> list[Judgment]:
        """Pick, for each (episode id, user turns), which persona card wrote the turns."""
        ...

    def compare(
        self, items: Sequence[tuple[str, Sequence[UserTurn], Sequence[UserTurn]]]
    ) -> list[Judgment]:
        """Say SAME or DIFFERENT persona for each ("a|b", turns of a, turns of b)."""
        ...
