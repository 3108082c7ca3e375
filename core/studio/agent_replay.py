"""Rebuilding the agent of a human-user episode by replaying its past turns.

Agents keep per-episode memory (the symbolic belief, question counters and plan; an LLM agent's
MEMORY block). :func:`rebuild_agent` rebuilds it on every page rerun *by replaying*: a fresh
agent is built from the episode header and is shown, turn by turn, exactly the agent view (and
the agent-observable events) it saw when it acted; each replayed action is checked against the
recorded one. Symbolic agents are deterministic, so the replay is exact; LLM agents replay from
the response cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.agents.base import Agent, AgentBase, EpisodeBinding
from core.agents.factory import build_agent
from core.agents.llm_agent import LLMAgent
from core.agents.wire import ActionRepair
from core.engine.eventlog import EventLog
from core.errors import ConfigError
from core.model.actions import AgentAction
from core.model.episode import AgentView
from core.model.events import AgentActed, EpisodeStarted, Event, TurnStarted
from core.protocol.state import EpisodeState, evolve
from core.protocol.views import agent_view as build_agent_view
from core.runner.plan import literal_intent
from core.studio.play_worlds import episode_loader


class _PrefixLog:
    """An event-log facade that shows an agent only the events stored before it acted."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self.limit: int | None = 0

    def events(self, episode_id: str) -> list[Event]:
        events = self._log.events(episode_id)
        return events if self.limit is None else events[: self.limit]


@dataclass
class RebuiltAgent:
    """An agent rebuilt for an episode, with the outcome of its replay."""

    agent: Agent
    replayed: int = 0
    mismatches: list[int] = field(default_factory=list)


def rebuild_agent(log: EventLog, episode_id: str, *, client: Any = None) -> RebuiltAgent:
    """Rebuild the agent of a human-user episode from its header and replay its past turns.

    A fresh policy is built for the header's method (symbolic when ``client`` is None) and
    bound to a prefix of the log; for every recorded ``agent_acted`` event it is shown the
    agent view it saw then, and its action is compared with the recorded one (differences are
    reported, by turn, in :attr:`RebuiltAgent.mismatches`).

    Raises:
        ConfigError: The episode has no start event (not an episode of this engine).
    """
    header = log.header(episode_id)
    events = log.events(episode_id)
    if not events or not isinstance(events[0], EpisodeStarted):
        raise ConfigError(f"episode {episode_id} has no start event", field="episode_id")
    start = events[0]
    world = episode_loader(log, episode_id)(header.benchmark)
    agent = build_agent(
        header.method,
        world=world,
        literal=literal_intent(start.sample, start.graph),
        client=client,
        costs=header.config.costs(),
    )
    if client is not None and isinstance(agent, LLMAgent):
        from core.studio.providers import STUDIO_ACTION_FORMAT

        agent.action_format = STUDIO_ACTION_FORMAT
    prefix = _PrefixLog(log)
    feed = prefix if agent.privileged else None  # ordinary agents: the agent view only
    agent.bind(EpisodeBinding(episode_id=episode_id, feed=feed, seed=header.seed))
    out = RebuiltAgent(agent=agent)
    state = EpisodeState()
    for i, ev in enumerate(events):
        nxt = events[i + 1] if i + 1 < len(events) else None
        if isinstance(ev, TurnStarted) and isinstance(nxt, AgentActed):
            prefix.limit = i
            view = build_agent_view(state, header, world)
            action = agent.act(view)
            out.replayed += 1
            if action.model_dump(exclude={"raw"}) != nxt.action.model_dump(exclude={"raw"}):
                out.mismatches.append(nxt.turn)
        evolve(state, ev)
    prefix.limit = None
    return out


class NarratedAgent(AgentBase):
    """An agent that tells a callback about each action as it is taken (the page's progress).

    Every life-cycle hook is forwarded unchanged, so the episode is the same with or without
    the narration.
    """

    def __init__(self, inner: Agent, on_action: Callable[[AgentAction], None]) -> None:
        self.inner = inner
        self.on_action = on_action
        self.spec = inner.spec
        self.privileged = inner.privileged

    @property
    def cost_usd(self) -> float:  # type: ignore[override]
        """The wrapped agent's spend."""
        return float(self.inner.cost_usd)

    def bind(self, ctx: EpisodeBinding) -> None:
        """Bind the wrapped agent."""
        self.inner.bind(ctx)

    def act(self, view: AgentView) -> AgentAction:
        """The wrapped agent's action, reported once taken."""
        action = self.inner.act(view)
        self.on_action(action)
        return action

    def pop_repairs(self) -> list[ActionRepair]:
        """The wrapped agent's repairs."""
        return self.inner.pop_repairs()

    def observe_end(self, view: AgentView) -> None:
        """Let the wrapped agent see the end."""
        self.inner.observe_end(view)


def describe_action(action: Any) -> str:
    """One line saying what an agent did, for a person watching it work."""
    kind = getattr(action, "kind", "")
    if kind == "env":
        call = action.action
        args = ", ".join(f"{k}={v!r}" for k, v in call.args.items())
        return f"used a tool: {call.tool}({args})"[:200]
    if kind == "ask":
        return f"wrote to you: {action.text}"[:200]
    if kind == "propose":
        return f"gave its answer: {action.text}"[:200]
    return "wrote something that is not a valid action (it is recorded as malformed)"
