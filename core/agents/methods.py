"""The method ladder as data: what each method may do and which mechanism it adds.

Both implementations (symbolic and LLM) read this table, so a method's distinguishing
mechanism is declared once: B0 has no user-message action, A2/A3 see the patience meter, A1+
carry a memory block, A3 keeps a lesson book, L0 faces a mute user, RS is told the current
intent, LIT executes the literal reading and never asks.
"""

from __future__ import annotations

from pydantic import Field

from core.errors import ConfigError
from core.model.base import Strict


class MethodSpec(Strict):
    """One rung of the ladder."""

    id: str
    name: str
    can_ask: bool = Field(description="Has the user-message (Clarify) action.")
    meter: bool = Field(description="Declares budget planning (sees the patience meter).")
    memory: bool = Field(default=False, description="Carries a MEMORY block across turns.")
    planner: bool = Field(default=False, description="Plans questions; verifies before commit.")
    self_evolving: bool = Field(default=False, description="Keeps a lesson book within a run.")
    mute_user: bool = Field(default=False, description="The user never speaks (floor).")
    informed: bool = Field(default=False, description="Told the true current intent (skyline).")
    literal: bool = Field(default=False, description="Executes the literal reading only.")
    max_questions_before_first_proposal: int | None = Field(
        default=None, description="Hard cap on questions before the first proposal."
    )
    scripted: bool = Field(default=False, description="Not an LLM/symbolic policy (ORACLE).")


LADDER: dict[str, MethodSpec] = {
    m.id: m
    for m in (
        MethodSpec(id="B0", name="No-Ask", can_ask=False, meter=False),
        MethodSpec(
            id="A0",
            name="Just Ask",
            can_ask=True,
            meter=False,
            max_questions_before_first_proposal=1,
        ),
        MethodSpec(id="A1", name="+ Memory", can_ask=True, meter=False, memory=True),
        MethodSpec(
            id="A2", name="Budget Planner", can_ask=True, meter=True, memory=True, planner=True
        ),
        MethodSpec(
            id="A3",
            name="Self-Evolving",
            can_ask=True,
            meter=True,
            memory=True,
            planner=True,
            self_evolving=True,
        ),
        MethodSpec(id="L0", name="Floor", can_ask=False, meter=False, mute_user=True),
        MethodSpec(id="RS", name="Skyline", can_ask=False, meter=False, informed=True),
        MethodSpec(id="LIT", name="Literal", can_ask=False, meter=False, literal=True),
        MethodSpec(id="ORACLE", name="Oracle", can_ask=False, meter=False, scripted=True),
    )
}
"""Every method id → its spec (DECISIONS.md order)."""


def method_spec(method: str) -> MethodSpec:
    """Return the spec of ``method`` (case-insensitive).

    Raises:
        ConfigError: For an unknown method id.
    """
    got = LADDER.get(method.upper())
    if got is None:
        raise ConfigError(f"unknown method {method!r}; known: {' '.join(LADDER)}", field="method")
    return got


def user_voice_for(method: str, voice: str) -> str:
    """Return the user voice a method runs against (``mute`` for the L0 floor)."""
    return "mute" if method_spec(method).mute_user else voice
