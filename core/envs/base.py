"""The contract every host world implements.

A *host world* (WebShop-style shop, τ² Retail, τ² Airline, the mock world) is loaded once per
process and shared read-only. Episodes and ground-truth executions open cheap *sessions* on it
(copy-on-write for τ²; a page state machine for the shop). The world also provides the adapter
hooks that construction, the simulated user and acceptance need.

Actions reach a session as :class:`EnvAction` (a tool name plus JSON arguments). For the shop the
tools are ``search`` (``{"query": ...}``) and ``click`` (``{"target": ...}``), mirroring
WebShop's ``search[...]``/``click[...]`` strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from core.model.intent import Condition, GroundTruth, Intent


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


ToolKind = Literal["read", "write", "generic"]


class ToolSpec(_Strict):
    """One operation an agent may perform in a host world."""

    name: str = Field(description="Tool name as the agent calls it.")
    description: str = Field(description="One-paragraph description shown to agents.")
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="JSON schema of the arguments (an 'object' schema)."
    )
    kind: ToolKind = Field(description="read / write (replayed at grading) / generic.")


class EnvAction(_Strict):
    """An environment operation requested by an agent."""

    tool: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Tool arguments.")


class Observation(_Strict):
    """What an environment action returned to the agent."""

    ok: bool = Field(description="False when the tool raised a (by-design) error.")
    text: str = Field(description="Agent-visible text of the result or error message.")
    data: Any = Field(default=None, description="Structured result (JSON-compatible), if any.")


class Verdict(_Strict):
    """The executable judgement of a proposal against an intent."""

    accepted: bool = Field(description="Whether the proposal satisfies the intent.")
    reason: str = Field(description="Machine-readable reason, e.g. 'reward=0.667'.")
    score: float | None = Field(
        default=None, description="Host score of the proposal (WebShop reward), if defined."
    )


@runtime_checkable
class EnvSession(Protocol):
    """A mutable, per-episode view of a host world."""

    def act(self, action: EnvAction) -> Observation:
        """Apply one agent action and return its observation. Never raises for tool errors."""
        ...

    def proposal(self) -> dict[str, Any] | None:
        """Return what the agent has committed so far (a purchase, executed writes …)."""
        ...


@runtime_checkable
class HostWorld(Protocol):
    """A loaded host world plus its adapter hooks.

    Attributes:
        benchmark: Benchmark id (``webshop``, ``tau2_retail``, ``tau2_airline``, ``mock``).
        world_id: Content hash of the loaded data (identifies bundled vs imported worlds).
    """

    benchmark: str
    world_id: str

    def tools(self) -> Sequence[ToolSpec]:
        """Return the agent-visible tools."""
        ...

    def open_session(self) -> EnvSession:
        """Open a fresh session on the pristine initial state."""
        ...

    def seeds(self) -> list[Intent]:
        """Return one root intent per host task (conditions compiled from the task)."""
        ...

    def execute(self, intent: Intent) -> GroundTruth:
        """Execute an intent to its ground truth (raise ConfigError if not executable)."""
        ...

    def adjudicate(self, intent: Intent, session: EnvSession) -> Verdict:
        """Judge the session's current proposal against ``intent`` by execution."""
        ...

    def phrase(self, condition: Condition) -> str:
        """Phrase one condition the way a customer would say it (for template voices)."""
        ...
