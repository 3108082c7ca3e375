"""The agent life cycle: how the episode driver talks to a policy.

One protocol, stated once (:class:`Agent`) with no-op defaults (:class:`AgentBase`); the driver
(:mod:`core.engine.driver`) calls exactly these hooks, in this order, and nothing else:

1. ``bind(ctx)`` once when a drive starts (again if a later drive continues the episode), with
   an :class:`EpisodeBinding`: the episode id and — for agents that declare
   ``privileged = True`` only (ORACLE, the RS skylines) — the event feed and the truth probe;
   every other agent learns only from the agent view handed to ``act``;
2. ``act(view)`` (sync drives) or ``await aact(view)`` (async drives) per turn, each followed by
   ``pop_repairs()``: how the agent's parser fixed the reply behind that action;
3. ``observe_end(view)`` once the episode has ended (also after an error ending);
4. ``cost_usd``: the agent's spend so far, read by the sweep when the episode is written.

An object with only ``act`` (a scripted test policy) is lifted into the life cycle by
:func:`as_agent`. The typed actions an agent returns live in :mod:`core.model.actions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from core.model.actions import AgentAction

if TYPE_CHECKING:
    from core.agents.wire import ActionRepair
    from core.envs.base import HostWorld
    from core.model.config import ProtocolConfig
    from core.model.episode import AgentView
    from core.model.events import Event
    from core.model.intent import Intent


class EventFeed(Protocol):
    """Where a bound agent reads the episode's events from (an event log, or a prefix of one)."""

    def events(self, episode_id: str) -> list[Event]:
        """Return the episode's events in ``seq`` order."""
        ...


@runtime_checkable
class TruthProbe(Protocol):
    """Privileged read access to the episode's hidden state (ORACLE and RS skylines only)."""

    @property
    def world(self) -> HostWorld:
        """The host world."""
        ...

    @property
    def config(self) -> ProtocolConfig:
        """The protocol config."""
        ...

    def current_intent(self) -> Intent:
        """The user's current intent."""
        ...

    def due(self) -> int:
        """Number of due shifts."""
        ...

    def patience(self) -> float:
        """Patience left."""
        ...

    def owed_hidden(self) -> list[str]:
        """Hidden (or shifted) slots of the current intent the agent does not know yet."""
        ...


@dataclass(frozen=True)
class EpisodeBinding:
    """What an agent receives when it is bound to an episode.

    Attributes:
        episode_id: The episode.
        feed: The event log, for privileged agents only (ORACLE, RS). Ordinary agents get
            ``None``: everything they may know arrives in the agent view passed to ``act``
            (the transcript's text, their own actions, observations), which carries no
            structured disclosure, shift record, intent id or hidden value.
        truth: The privileged probe; set only for agents with ``privileged = True``.
        seed: The episode's seed (public: an LLM agent sends it when its model samples).
    """

    episode_id: str
    feed: EventFeed | None = None
    truth: TruthProbe | None = None
    seed: int | None = None

    def events(self) -> list[Event]:
        """The episode's events as the feed shows them now (privileged agents only).

        Raises:
            PermissionError: For a binding without a feed (every ordinary agent).
        """
        if self.feed is None:
            raise PermissionError("this agent sees its agent view only, not the event log")
        return self.feed.events(self.episode_id)


@runtime_checkable
class Agent(Protocol):
    """A policy with the full life cycle (see the module docstring for the call order).

    Attributes:
        spec: The agent spec (e.g. ``ORACLE``, a model label).
        privileged: Whether the driver hands this agent the truth probe.
        cost_usd: LLM spend so far (0 for offline policies).
    """

    spec: str
    privileged: bool
    cost_usd: float

    def bind(self, ctx: EpisodeBinding) -> None:
        """Receive the episode binding before the first action of a drive."""
        ...

    def act(self, view: AgentView) -> AgentAction:
        """Return the next action for ``view``."""
        ...

    async def aact(self, view: AgentView) -> AgentAction:
        """Async :meth:`act` (same decisions)."""
        ...

    def pop_repairs(self) -> list[ActionRepair]:
        """Return (and forget) the parser repairs behind the actions since the last call."""
        ...

    def observe_end(self, view: AgentView) -> None:
        """Receive the final agent view once the episode has ended."""
        ...


class Policy(Protocol):
    """The least an agent must define: one action per view."""

    def act(self, view: AgentView) -> AgentAction:
        """Return the next action for ``view``."""
        ...


class AgentBase:
    """No-op defaults for every life-cycle hook; agents subclass it and override ``act``."""

    spec: str = "agent"
    privileged: bool = False
    cost_usd: float = 0.0

    def bind(self, ctx: EpisodeBinding) -> None:
        """Ignore the binding (agents that read events or the truth override this)."""

    def act(self, view: AgentView) -> AgentAction:
        """Return the next action (every agent defines its own)."""
        raise NotImplementedError(f"{type(self).__name__} does not define act()")

    async def aact(self, view: AgentView) -> AgentAction:
        """Run :meth:`act` (agents with real async work override this)."""
        return self.act(view)

    def pop_repairs(self) -> list[ActionRepair]:
        """No repairs (only agents that parse model replies make any)."""
        return []

    def observe_end(self, view: AgentView) -> None:
        """Ignore the end (learning agents override this)."""


class PolicyAgent(AgentBase):
    """A bare :class:`Policy` inside the life cycle: its ``act``, no-op defaults elsewhere."""

    spec = "policy"

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def act(self, view: AgentView) -> AgentAction:
        """The wrapped policy's action."""
        return self.policy.act(view)


def as_agent(obj: Agent | Policy) -> Agent:
    """Return ``obj`` as a life-cycle :class:`Agent` (a bare policy is wrapped)."""
    if isinstance(obj, AgentBase | Agent):
        return obj
    return PolicyAgent(obj)
