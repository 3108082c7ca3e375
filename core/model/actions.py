"""The typed agent action model: what an agent may do in one turn.

An agent does exactly one thing per turn: operate the environment, message the user, propose a
final answer, or (as parsed from text) produce something malformed. The text wire format and its
parser live in :mod:`core.agents.wire`; this module only fixes the typed shapes every agent
returns, so events and views can carry them without depending on the agents package.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from core.model.base import Strict
from core.model.world import EnvAction

MAX_ACTION_TEXT = 4000
"""Longest agent text kept in an action (and so in events and later prompts)."""

_CUT = " … [{n} characters cut]"


def cap_text(text: str, limit: int = MAX_ACTION_TEXT) -> str:
    """Cut ``text`` to at most ``limit`` characters, saying how much was cut (idempotent).

    >>> cap_text("abcdef", 40)
    'abcdef'
    >>> len(cap_text("x" * 5000)) <= MAX_ACTION_TEXT
    True
    """
    if len(text) <= limit:
        return text
    note = _CUT.format(n=len(text) - limit)
    return text[: limit - len(note)] + note


CappedText = Annotated[str, AfterValidator(cap_text)]
"""Agent-produced text, capped so an absurdly long reply cannot bloat events or prompts."""


class EnvOp(Strict):
    """Operate the host environment (a tool call)."""

    kind: Literal["env"] = "env"
    action: EnvAction = Field(description="The tool call.")
    raw: CappedText = Field(default="", description="The agent's raw text, if parsed from text.")


class Ask(Strict):
    """Send a message (usually a question) to the user."""

    kind: Literal["ask"] = "ask"
    text: CappedText = Field(description="The message.")
    asks: tuple[str, ...] | None = Field(
        default=None,
        description="Slots the message asks about (symbolic agents); None = match by words.",
    )
    raw: CappedText = Field(default="", description="The agent's raw text, if parsed from text.")


class Propose(Strict):
    """Propose the final answer (judged by execution against the current intent)."""

    kind: Literal["propose"] = "propose"
    text: CappedText = Field(default="", description="The answer text ('done', 'buy X …').")
    predicted_question: str = Field(default="", description="Logged, never scored.")
    raw: CappedText = Field(default="", description="The agent's raw text, if parsed from text.")


class Malformed(Strict):
    """An action the parser could not understand (costs patience)."""

    kind: Literal["malformed"] = "malformed"
    raw: CappedText = Field(default="", description="The raw text.")
    problems: tuple[str, ...] = Field(default=(), description="What the parser objected to.")


AgentAction = Annotated[EnvOp | Ask | Propose | Malformed, Field(discriminator="kind")]
"""One agent action (discriminated on ``kind``)."""
