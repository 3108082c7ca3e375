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
from typing import Any, Protocol, runtime_checkable

from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, Observation, ToolSpec, Verdict


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
