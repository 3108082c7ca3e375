"""The value types exchanged with a host world: tool specs, actions, observations, verdicts.

They live in the model layer (not in :mod:`core.envs`) because events, agents and views all carry
them; the host-world *protocols* that produce them stay in :mod:`core.envs.base`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from core.model.base import Strict

ToolKind = Literal["read", "write", "generic"]


class ToolSpec(Strict):
    """One operation an agent may perform in a host world."""

    name: str = Field(description="Tool name as the agent calls it.")
    description: str = Field(description="One-paragraph description shown to agents.")
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="JSON schema of the arguments (an 'object' schema)."
    )
    kind: ToolKind = Field(description="read / write (replayed at grading) / generic.")


class EnvAction(Strict):
    """An environment operation requested by an agent."""

    tool: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Tool arguments.")


class Observation(Strict):
    """What an environment action returned to the agent."""

    ok: bool = Field(description="False when the tool raised a (by-design) error.")
    text: str = Field(description="Agent-visible text of the result or error message.")
    data: Any = Field(default=None, description="Structured result (JSON-compatible), if any.")


class Verdict(Strict):
    """The executable judgement of a proposal against an intent."""

    accepted: bool = Field(description="Whether the proposal satisfies the intent.")
    reason: str = Field(description="Machine-readable reason, e.g. 'reward=0.667'.")
    score: float | None = Field(
        default=None, description="Host score of the proposal (WebShop reward), if defined."
    )
