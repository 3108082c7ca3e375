"""Live episodes: the replayed state and open environment session of an episode being stepped.

The state of an episode is rebuilt from its stored events alone (:func:`load`), so a crash, a
browser refresh or a second viewer sees the same episode. Between steps the event log keeps the
live episode in its own locked cache (``log.live``, created by the log's constructor); an entry
is used only while its state has folded exactly the events the log holds, and it is dropped
when an append fails (:func:`commit`), so the cache can never disagree with the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from core.engine.eventlog import EventLog
from core.envs.base import EnvSession, HostWorld
from core.model.config import ProtocolConfig
from core.model.episode import EpisodeHeader
from core.model.events import EpisodeEnded, Event, ObservationRecorded, ProposalJudged
from core.protocol.emit import Emitter
from core.protocol.state import EpisodeState, replay
from core.protocol.voices import HUMAN, Voice, make_voice

WorldLoader = Callable[[str], HostWorld]
"""``benchmark -> HostWorld``."""
VoiceFactory = Callable[[str], Voice | None]
"""``user_voice spec -> Voice`` (None for a human user)."""


def default_loader(benchmark: str) -> HostWorld:
    """The registry's world for ``benchmark``."""
    from core.envs.registry import load_world

    return load_world(benchmark)


@dataclass
class LiveEpisode:
    """An episode ready to step: header, folded state, world, open session and user voice."""

    header: EpisodeHeader
    state: EpisodeState
    world: HostWorld
    session: EnvSession
    voice: Voice | None

    @property
    def config(self) -> ProtocolConfig:
        """The episode's protocol config."""
        return self.header.config

    @property
    def episode_id(self) -> str:
        """The episode id."""
        return self.header.episode_id


def remember(log: EventLog, live: LiveEpisode) -> None:
    """Keep ``live`` in the log's cache."""
    log.live.put(live.episode_id, live)


def rebuild_session(
    world: HostWorld, state: EpisodeState, events: Iterable[Event], config: ProtocolConfig
) -> EnvSession:
    """Re-run the environment calls recorded in ``events`` on a fresh session."""
    session = world.open_session()
    for ev in events:
        if isinstance(ev, ObservationRecorded):
            session.act(ev.action)
        elif isinstance(ev, ProposalJudged):
            world.judge(state.intent(ev.intent_id), session, config)
    return session


def load(
    log: EventLog,
    episode_id: str,
    loader: WorldLoader | None = None,
    voice: Voice | None = None,
    voice_factory: VoiceFactory | None = None,
) -> LiveEpisode:
    """Return the live episode: the log's cached one if it is current, else a replay.

    Args:
        log: The event log.
        episode_id: The episode.
        loader: ``benchmark -> HostWorld`` (the registry by default).
        voice: Use this user voice instead of the header's.
        voice_factory: Builds the header's voice on a replay (:func:`make_voice` by default).
    """
    events = log.events(episode_id)
    got: LiveEpisode | None = log.live.get(episode_id)
    if got is not None and got.state.next_seq == len(events):
        if voice is not None:
            got.voice = voice
        return got
    header = log.header(episode_id)
    state = replay(events, human_user=header.user_voice == HUMAN)
    world = (loader or default_loader)(header.benchmark)
    session = rebuild_session(world, state, events, header.config)
    if voice is None:
        voice = (voice_factory or make_voice)(header.user_voice)
    live = LiveEpisode(header=header, state=state, world=world, session=session, voice=voice)
    remember(log, live)
    return live


def commit(log: EventLog, episode_id: str, state: EpisodeState, em: Emitter) -> None:
    """Append what ``em`` buffered (and the outcome, once ended) to the log.

    A failed append (a concurrent writer, a full disk) drops the episode from the log's cache
    before the error propagates: the folded state is ahead of the log and must not be reused.
    """
    events = em.drain()
    if events:
        try:
            log.append(episode_id, events)
        except BaseException:
            log.live.drop(episode_id)
            raise
    if state.ended and any(isinstance(e, EpisodeEnded) for e in events):
        assert state.outcome is not None
        log.finish(episode_id, state.outcome, state.summary())
