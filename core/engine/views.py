"""The three views of an episode (agent, user, researcher) and the privileged truth probe.

Views are built by :mod:`core.protocol.views` from the live state; the agent view is an
allow-list (no hidden slot, no shift, no intent id). The truth probe
(:class:`~core.agents.base.TruthProbe`) is the only way to hidden state and is handed only to
agents that declare ``privileged = True`` (see :mod:`core.engine.driver`).
"""

from __future__ import annotations

from core.engine.eventlog import EventLog
from core.engine.live import LiveEpisode, WorldLoader, load
from core.envs.base import HostWorld
from core.model.config import ProtocolConfig
from core.model.episode import AgentView, ResearcherView, UserView
from core.model.intent import Intent
from core.protocol.views import agent_view as _agent_view
from core.protocol.views import researcher_view as _researcher_view
from core.protocol.views import user_view as _user_view


class Truth:
    """Privileged read access for scripted agents that play with perfect knowledge (ORACLE).

    Never given to ordinary agents; the driver binds it only to agents with
    ``privileged = True``.
    """

    def __init__(self, live: LiveEpisode) -> None:
        self._live = live

    @property
    def world(self) -> HostWorld:
        """The host world."""
        return self._live.world

    @property
    def config(self) -> ProtocolConfig:
        """The protocol config."""
        return self._live.config

    def current_intent(self) -> Intent:
        """The user's current intent."""
        return self._live.state.current

    def due(self) -> int:
        """Number of due shifts."""
        return self._live.state.due

    def patience(self) -> float:
        """Patience left."""
        return self._live.state.patience

    def owed_hidden(self) -> list[str]:
        """Hidden (or shifted) slots of the current intent the agent does not know yet."""
        return self._live.state.owed_slots()


def live_agent_view(live: LiveEpisode) -> AgentView:
    """The agent view of a live episode (hot path: no re-validation)."""
    return _agent_view(live.state, live.header, live.world)


def truth(log: EventLog, episode_id: str, world_loader: WorldLoader | None = None) -> Truth:
    """Return the privileged truth probe of an episode (for ORACLE / skyline agents)."""
    return Truth(load(log, episode_id, world_loader))


def agent_view(
    log: EventLog, episode_id: str, *, world_loader: WorldLoader | None = None
) -> AgentView:
    """Return the agent-side view of an episode."""
    live = load(log, episode_id, world_loader)
    return _agent_view(live.state, live.header, live.world, validate=True)


def user_view(
    log: EventLog, episode_id: str, *, world_loader: WorldLoader | None = None
) -> UserView:
    """Return the user-side view of an episode."""
    live = load(log, episode_id, world_loader)
    return _user_view(live.state, live.header, live.world, live.session)


def researcher_view(
    log: EventLog, episode_id: str, *, world_loader: WorldLoader | None = None
) -> ResearcherView:
    """Return everything about an episode."""
    live = load(log, episode_id, world_loader)
    return _researcher_view(live.state, live.header, log.events(episode_id), live.world)
