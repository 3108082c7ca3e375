"""The public episode API: start, step, respond, run, abort, fork and the three views.

Every function takes an :class:`~core.engine.eventlog.EventLog`; the state of an episode is
rebuilt from its stored events alone, and the log keeps the live state between steps
(:mod:`core.engine.live`). The pieces behind this facade:

* :mod:`core.engine.driver` — the one loop an agent plays in (:func:`run`, :func:`arun`),
  the step core and the one failure ending (:func:`abort`);
* :mod:`core.engine.rules` — the protocol rule of each action (ask, tool call, proposal,
  forced final) and :func:`~core.engine.rules.guarded`, which turns a failure of the world, a
  voice or the engine into an ERROR ending;
* :mod:`core.engine.views` — the agent, user and researcher views and the truth probe;
* :mod:`core.engine.fork` — forking an episode at a turn.

Failures of the environment, the agent or a voice become an ``episode_ended`` event with outcome
ERROR; only caller misuse raises (:class:`~core.errors.ProtocolError`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from core.agents.methods import LADDER, user_voice_for
from core.agents.wire import ActionRepair
from core.engine import rules
from core.engine.driver import Drive, abort, abort_for, arun, run, step_live
from core.engine.eventlog import EventLog
from core.engine.fork import fork
from core.engine.live import (
    LiveEpisode,
    VoiceFactory,
    WorldLoader,
    commit,
    default_loader,
    load,
    remember,
)
from core.engine.rules import FORMAT_REPAIR_NOTE, REPAIR_TEXT_CHARS
from core.engine.views import Truth, agent_view, researcher_view, truth, user_view
from core.errors import ConfigError, ProtocolError
from core.model.actions import AgentAction
from core.model.config import ProtocolConfig
from core.model.episode import AgentView, EpisodeHeader, UserView
from core.model.events import (
    EpisodeStarted,
    LessonBookUsed,
    Repair,
    ReplyKind,
    ReplyRead,
    UserReplied,
)
from core.model.intent import IntentGraph
from core.model.persona import Persona
from core.model.sample import Sample
from core.protocol import shifts, user
from core.protocol.emit import Emitter
from core.protocol.personas import load_persona
from core.protocol.state import EpisodeState, replay
from core.protocol.views import agent_view as _agent_view
from core.protocol.views import prompt_number
from core.protocol.views import user_view as _user_view
from core.protocol.voices import HUMAN, SIMULATOR_FOR_HUMAN, Voice, make_voice
from core.protocol.voices.template import TemplateVoice

__all__ = [
    "FORMAT_REPAIR_NOTE",
    "REPAIR_TEXT_CHARS",
    "Drive",
    "EpisodeState",
    "StaleActionError",
    "StaleReplyError",
    "Truth",
    "VoiceFactory",
    "WorldLoader",
    "abort",
    "abort_for",
    "agent_view",
    "arun",
    "check_acts_on",
    "check_answers",
    "fork",
    "replay",
    "researcher_view",
    "respond",
    "respond_for_human",
    "run",
    "start",
    "step",
    "truth",
    "user_view",
]


def start(
    log: EventLog,
    sample: Sample,
    persona: Persona | str,
    seed: int,
    agent_spec: str,
    config: ProtocolConfig | None = None,
    *,
    graph: IntentGraph,
    method: str | None = None,
    user_voice: str = "template",
    run_id: str | None = None,
    episode_id: str | None = None,
    world_loader: WorldLoader | None = None,
    lesson_book: dict[str, Any] | None = None,
) -> str:
    """Create an episode and record its opening events.

    Args:
        log: Where to write.
        sample: The benchmark instance.
        persona: A persona or its id.
        seed: Episode seed (with the sample it keys every random stream).
        agent_spec: Agent spec for the header (``symbolic``, a model id, ``human``).
        config: Protocol config (DECISIONS.md defaults when None).
        graph: The sample's intent graph.
        method: Method id (defaults to ``agent_spec``); decides meter visibility.
        user_voice: ``template``, ``mute``, ``human`` or an LLM model spec.
        run_id: Sweep id, if any.
        episode_id: Explicit id (a random one when None).
        world_loader: ``benchmark -> HostWorld`` (the registry by default).
        lesson_book: A3's book in force (fields of
            :class:`~core.model.events.LessonBookUsed`), recorded right after the start.

    Returns:
        The episode id.

    Raises:
        ConfigError: The sample and graph do not fit together, or the world cannot load.
    """
    cfg = config or ProtocolConfig()
    pers = load_persona(persona) if isinstance(persona, str) else persona
    if sample.graph_id != graph.graph_id:
        raise ConfigError(
            f"sample {sample.sample_id} is built on graph {sample.graph_id}, not {graph.graph_id}",
            field="graph_id",
        )
    try:
        graph.node(sample.root_intent_id)
    except KeyError:
        raise ConfigError(
            f"root intent {sample.root_intent_id} is not in graph {graph.graph_id}",
            field="root_intent_id",
        ) from None
    world = (world_loader or default_loader)(sample.benchmark)
    method = method or agent_spec
    if method.upper() in LADDER and user_voice != HUMAN:
        user_voice = user_voice_for(method, user_voice)  # L0: the mute user, on every path
    eid = episode_id or uuid.uuid4().hex[:16]
    header = EpisodeHeader(
        episode_id=eid,
        run_id=run_id,
        sample_id=sample.sample_id,
        benchmark=sample.benchmark,
        persona_id=pers.id,
        seed=seed,
        method=method,
        agent=agent_spec,
        user_voice=user_voice,
        config=cfg,
        config_hash=cfg.config_hash(),
        created_at=datetime.now(UTC),
    )
    log.create_episode(header)
    state = EpisodeState(human_user=user_voice == HUMAN)
    em = Emitter(state)
    thresholds = pers.thresholds(cfg.base_patience)
    rng_key = f"{sample.graph_id}:{sample.sample_id}:{seed}"
    em.emit(
        EpisodeStarted,
        turn=0,
        sample=sample,
        graph=graph,
        persona=pers,
        rng_key=rng_key,
        budget=pers.budget(cfg.base_patience),
        thresholds=thresholds,
        fates=shifts.draw_fates(rng_key, len(thresholds), cfg.shift_fire_prob, cfg.shifts_enabled),
        turn_cap=cfg.for_benchmark(sample.benchmark).turn_cap,
        patience_visible=cfg.shows_patience(method),
        tools=tuple(t.name for t in world.tools()),
    )
    if lesson_book is not None:
        fields = dict(lesson_book)
        rejected = fields.pop("rejected", ())
        em.emit(LessonBookUsed, **fields)
        for reason, text in rejected:
            em.emit(Repair, target="reflection", detail=f"rejected: {reason}", original=text)
    shifts.mark_due(em, cfg)
    log.append(eid, em.drain())
    if user_voice in ("template", "mute", HUMAN):  # LLM voices are built on first use
        live = LiveEpisode(
            header=header,
            state=state,
            world=world,
            session=world.open_session(),
            voice=make_voice(user_voice),
        )
        remember(log, live)
    return eid


def step(
    log: EventLog,
    episode_id: str,
    action: AgentAction,
    *,
    world_loader: WorldLoader | None = None,
    voice: Voice | None = None,
    repairs: Sequence[ActionRepair] = (),
    acts_on: int | None = None,
) -> AgentView:
    """Apply one agent action (e.g. from a person playing the agent) and return the new view.

    Args:
        log: The event log.
        episode_id: The episode.
        action: The agent's action.
        world_loader: ``benchmark -> HostWorld``.
        voice: Override the header's user voice.
        repairs: How the tolerant parser fixed the reply this action came from (an LLM
            agent's ``pop_repairs()``); each becomes a ``repair`` event (target
            ``action_format``) right after the ``agent_action`` event.
        acts_on: The turn of the agent view the action was made on (``AgentView.turn`` of the
            view a person acted on); an action from a stale tab names an older turn and is
            refused before anything is recorded.

    Raises:
        ProtocolError: The episode has ended or is waiting for the user's reply.
        StaleActionError: ``acts_on`` is not the episode's current turn, or the episode has
            ended since (a stale tab).
    """
    live = load(log, episode_id, world_loader, voice)
    check_acts_on(live.state, episode_id, acts_on)
    step_live(log, live, action, repairs)
    return _agent_view(live.state, live.header, live.world)


class StaleReplyError(ProtocolError):
    """A reply answers a prompt the episode has moved past (sent from a stale tab)."""


class StaleActionError(ProtocolError):
    """An agent action was made on a view the episode has moved past (sent from a stale tab)."""


def check_acts_on(st: EpisodeState, episode_id: str, acts_on: int | None) -> None:
    """Refuse an agent action made on a view of an earlier turn (a person's stale tab).

    Every agent action starts a new turn, so the turn a person's view showed names the state
    they acted on. ``None`` (a program acting on the live state) is never refused here.

    Raises:
        StaleActionError: The episode has ended, or has moved past turn ``acts_on``.
    """
    if acts_on is None:
        return
    if st.ended:
        raise StaleActionError(
            f"episode {episode_id} has ended since this page was shown; reload the page to "
            "see how — nothing was recorded"
        )
    if acts_on != st.turn:
        raise StaleActionError(
            f"this action was made on turn {acts_on}, but episode {episode_id} has moved on "
            f"(it is now at turn {st.turn}); reload the page to see what happened — "
            "nothing was recorded"
        )


def check_answers(st: EpisodeState, episode_id: str, answers: int | None) -> None:
    """Refuse a reply that does not answer the prompt the episode is waiting on.

    Raises:
        ProtocolError: Not waiting for a reply.
        StaleReplyError: ``answers`` names an earlier (or another) prompt.
    """
    if st.phase != "awaiting_user":
        raise StaleReplyError(
            f"episode {episode_id} is not waiting for a reply any more (turn {st.turn}); "
            "reload the page to see where it is"
            if answers is not None
            else f"episode {episode_id} is not waiting for a user reply"
        )
    if answers is not None and answers != prompt_number(st):
        raise StaleReplyError(
            f"this reply answers an earlier message, but episode {episode_id} has moved on "
            f"(it now waits on turn {st.turn}); reload the page to see the new message — "
            "nothing was recorded"
        )


def respond(
    log: EventLog,
    episode_id: str,
    text: str,
    disclosed: Sequence[str] = (),
    *,
    world_loader: WorldLoader | None = None,
    answers: int | None = None,
    read: Mapping[str, Any] | None = None,
) -> UserView:
    """Record a human user's reply and the requirements it discloses.

    Args:
        log: The event log.
        episode_id: The episode.
        text: The person's words.
        disclosed: The slots the agent learns (the final disclosures).
        world_loader: Resolves the episode's world.
        answers: The prompt the reply answers (``UserView.pending_prompt`` of the view the
            person replied to); a reply from a stale tab names an older one and is refused.
        read: How the words were read (the fields of a
            :class:`~core.model.events.ReplyRead` event besides ``kind``/``seq``/``turn``):
            recorded just before the reply; its act decides a reply without disclosures
            (``decline`` or an answer such as a yes/no), and its ``declined`` slots are the
            reply's declined ones.

    Raises:
        ProtocolError: The episode is not waiting for a user reply, or a slot is not a current
            requirement.
        StaleReplyError: ``answers`` is not the prompt the episode waits on.
    """
    live = load(log, episode_id, world_loader)
    st = live.state
    check_answers(st, episode_id, answers)
    try:
        disc = user.plan_human(st, disclosed, live.world)
    except ValueError as exc:
        raise ProtocolError(str(exc)) from exc
    question, asked = st.pending_question or "", st.pending_asked
    reaction = st.pending_reaction
    em = Emitter(st)
    fields = dict(read or {})
    declined = tuple(s for s in fields.pop("declined", ()) if s in asked and s not in disclosed)
    kind: ReplyKind = "rejection" if reaction else "answer" if disc else "decline"
    if read is not None and not reaction and not disc and fields.get("act") != "decline":
        kind = "answer"  # "yes, go ahead" is an answer that discloses nothing

    def _go() -> None:
        if read is not None:
            em.emit(ReplyRead, **fields)
        em.emit(
            UserReplied,
            reply_kind=kind,
            text=text,
            disclosures=disc,
            asked=asked,
            declined=declined,
            voice=HUMAN,
            intent_id=st.intent_id,
        )
        if reaction:
            rules.after_rejection(live, em)
        else:
            rules.after_exchange(live, em, question, asked)
            rules.end_of_turn(live, em)

    rules.guarded(live, em, _go)
    commit(log, episode_id, st, em)
    return _user_view(st, live.header, live.world, live.session)


def respond_for_human(
    log: EventLog,
    episode_id: str,
    *,
    world_loader: WorldLoader | None = None,
    answers: int | None = None,
) -> UserView:
    """Let the simulated user write this one reply for the person playing the user.

    The person asked for it ("let the simulator answer this one"): the reply the simulator
    would give — an answer under the persona's rules, or the reaction to the rejected proposal
    — is phrased by the template voice and recorded with the voice
    :data:`~core.protocol.voices.SIMULATOR_FOR_HUMAN`, so it is never mistaken for the
    person's own words.

    Raises:
        ProtocolError: The episode is not waiting for a user reply.
        StaleReplyError: ``answers`` is not the prompt the episode waits on (a stale tab).
    """
    live = load(log, episode_id, world_loader)
    st = live.state
    check_answers(st, episode_id, answers)
    question, asked = st.pending_question or "", st.pending_asked
    reaction = st.pending_reaction
    em = Emitter(st)
    voice = TemplateVoice()

    def _go() -> None:
        if reaction:
            plan = user.plan_reaction(st, False, live.world, live.session)
            rules.say(live, em, plan, reaction=True, voice=voice, voice_name=SIMULATOR_FOR_HUMAN)
            rules.after_rejection(live, em)
            return
        plan = user.plan_answer(st, question, asked, live.world)
        rules.say(live, em, plan, voice=voice, voice_name=SIMULATOR_FOR_HUMAN)
        rules.after_exchange(live, em, question, asked)
        rules.end_of_turn(live, em)

    rules.guarded(live, em, _go)
    commit(log, episode_id, st, em)
    return _user_view(st, live.header, live.world, live.session)
