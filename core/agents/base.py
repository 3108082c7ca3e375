"""The agent protocol: how the episode driver talks to a policy.

The typed actions an agent returns live in :mod:`core.model.actions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from core.model.actions import Ask, EnvOp, Malformed, Propose

if TYPE_CHECKING:
    from core.model.episode import AgentView


@runtime_checkable
class Agent(Protocol):
    """A policy that maps the agent-side view to one action.

    Attributes:
        spec: The agent spec recorded in the episode header (e.g. ``ORACLE``, a model id).
    """

    spec: str

    def act(self, view: AgentView) -> EnvOp | Ask | Propose | Malformed:
        """Return the next action for ``view`` (never raise for ordinary situations)."""
        ...


@runtime_checkable
class EndObserver(Protocol):
    """Optional agent hook called once the episode has ended."""

    def observe_end(self, view: AgentView) -> None:
        """Receive the final agent view (e.g. to distil a lesson)."""
        ...
