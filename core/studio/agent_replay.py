"""Rebuilding the agent of a human-user episode by replaying its past turns.

Agents keep per-episode memory (the symbolic belief, question counters and plan; an LLM agent's
MEMORY block). :func:`rebuild_agent` rebuilds it on every page rerun *by replaying*: a fresh
agent is built from the episode header and is shown, turn by turn, exactly the agent view (and
the agent-observable events) it saw when it acted; each replayed action is checked against the
recorded one. Symbolic agents are deterministic, so the replay is exact; LLM agents replay from
the response cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.agents.base import Agent, EpisodeBinding
from core.agents.factory import build_agent
from core.engine.eventlog import EventLog
from core.errors import ConfigError
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
