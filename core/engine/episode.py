"""The episode orchestrator: the only loop, event-sourced and steppable.

Every public function takes an :class:`~core.engine.eventlog.EventLog`. The state of an episode is
rebuilt from its stored events alone (:func:`replay`), so a crash, a browser refresh or a second
viewer sees the same episode; within a process a small cache keeps the live state and the
environment session between steps (and is checked against the log's length before use).

Failures of the environment, the agent or a voice become an ``episode_ended`` event with outcome
ERROR; only caller misuse raises (:class:`~core.errors.ProtocolError`).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.agents.wire import ActionRepair
from core.engine.eventlog import EventLog
from core.envs.base import EnvSession, HostWorld
from core.errors import ConfigError, DriftBenchError, ProtocolError
from core.model.actions import AgentAction, Ask, EnvOp, Malformed, Propose
from core.model.config import ProtocolConfig
from core.model.episode import (
    AgentView,
    EpisodeHeader,
    Outcome,
    ResearcherView,
    TerminationReason,
    UserView,
)
from core.model.events import (
    AgentActed,
    EpisodeEnded,
    EpisodeStarted,
    Event,
    ForcedFinal,
    ObservationRecorded,
    ProposalJudged,
    ProposalVia,
    Repair,
    StaleCheck,
    TurnStarted,
    UserReplied,
)
from core.model.intent import Intent, IntentGraph
from core.model.persona import Persona
from core.model.sample import Sample
from core.model.world import Verdict
from core.protocol import hooks, shifts, user
from core.protocol.emit import Emitter
from core.protocol.matching import Reading, read_ask
from core.protocol.matching import record as record_reading
from core.protocol.patience import affordable, charge, exhausted
from core.protocol.personas import load_persona
from core.protocol.state import EpisodeState, replay
from core.protocol.views import agent_view as _agent_view
from core.protocol.views import researcher_view as _researcher_view
from core.protocol.views import user_view as _user_view
from core.protocol.voices import HUMAN, Voice, make_voice
from core.protocol.voices.template import TemplateVoice

WorldLoader = Callable[[str], HostWorld]
VoiceFactory = Callable[[str], Voice | None]

FORMAT_REPAIR_NOTE = "That was not a final answer. Give your final answer now."

__all__ = [
    "EpisodeState",
    "agent_view",
    "fork",
    "replay",
    "researcher_view",
    "respond",
    "run",
    "start",
    "step",
    "truth",
    "user_view",
]


def _default_loader(benchmark: str) -> HostWorld:
    from core.envs.registry import load_world

    return load_world(benchmark)


class _Failure(Exception):
    """An infrastructure failure, tagged with the ending reason it maps to."""

    def __init__(self, reason: TerminationReason, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.reason = reason


@dataclass
class _Live:
    header: EpisodeHeader
    state: EpisodeState
    world: HostWorld
    session: EnvSession
    voice: Voice | None

    @property
    def config(self) -> ProtocolConfig:
        return self.header.config


_LIVE: OrderedDict[tuple[int, str], _Live] = OrderedDict()
_LIVE_MAX = 256


def _remember(log: EventLog, live: _Live) -> None:
    key = (id(log), live.header.episode_id)
    _LIVE[key] = live
    _LIVE.move_to_end(key)
    while len(_LIVE) > _LIVE_MAX:
        _LIVE.popitem(last=False)


def _rebuild_session(world: HostWorld, state: EpisodeState, events: Iterable[Event]) -> EnvSession:
    """Re-run the environment calls recorded in ``events`` on a fresh session."""
    session = world.open_session()
    for ev in events:
        if isinstance(ev, ObservationRecorded):
            session.act(ev.action)
        elif isinstance(ev, ProposalJudged):
            world.adjudicate(state.intent(ev.intent_id), session)
    return session


def _live(
    log: EventLog,
    episode_id: str,
    loader: WorldLoader | None,
    voice: Voice | None = None,
    voice_factory: VoiceFactory | None = None,
) -> _Live:
    events = log.events(episode_id)
    got = _LIVE.get((id(log), episode_id))
    if got is not None and got.state.next_seq == len(events):
        if voice is not None:
            got.voice = voice
        return got
    header = log.header(episode_id)
    state = replay(events)
    world = (loader or _default_loader)(header.benchmark)
    session = _rebuild_session(world, state, events)
    if voice is None:
        voice = (voice_factory or make_voice)(header.user_voice)
    live = _Live(header=header, state=state, world=world, session=session, voice=voice)
    _remember(log, live)
    return live


# --------------------------------------------------------------------------- start

_CONFIG_HASHES: dict[int, tuple[ProtocolConfig, str]] = {}


def _config_hash(cfg: ProtocolConfig) -> str:
    """``cfg.config_hash()``, memoised per (frozen) config object: a sweep shares one config."""
    got = _CONFIG_HASHES.get(id(cfg))
    if got is not None and got[0] is cfg:
        return got[1]
    if len(_CONFIG_HASHES) >= 64:
        _CONFIG_HASHES.clear()
    h = cfg.config_hash()
    _CONFIG_HASHES[id(cfg)] = (cfg, h)
    return h


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
    world = (world_loader or _default_loader)(sample.benchmark)
    method = method or agent_spec
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
        config_hash=_config_hash(cfg),
        created_at=datetime.now(UTC),
    )
    log.create_episode(header)
    state = EpisodeState()
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
    shifts.mark_due(em, cfg)
    log.append(eid, em.drain())
    if user_voice in ("template", "mute", HUMAN):  # LLM voices are built on first use
        _remember(
            log,
            _Live(
                header=header,
                state=state,
                world=world,
                session=world.open_session(),
                voice=make_voice(user_voice),
            ),
        )
    return eid


# --------------------------------------------------------------------------- rules


def _adjudicate(live: _Live, intent: Intent) -> Verdict:
    try:
        if live.header.benchmark.startswith("tau2") and live.config.tau2_acceptance != "actions":
            fn: Any = live.world.adjudicate
            return fn(intent, live.session, mode=live.config.tau2_acceptance)  # type: ignore[no-any-return]
        return live.world.adjudicate(intent, live.session)
    except Exception as exc:  # noqa: BLE001 - host failures end the episode as ERROR
        raise _Failure(TerminationReason.ENV_ERROR, exc) from exc


def _say(live: _Live, em: Emitter, plan: user.ReplyPlan, *, reaction: bool = False) -> None:
    st = live.state
    assert st.persona is not None
    voice = live.voice
    if voice is None or (reaction and voice.name == "mute"):
        voice = TemplateVoice()  # human users: reactions are phrased by the template voice
    if voice.name == "mute" and not reaction:
        plan = user.ReplyPlan(kind="mute", turn=plan.turn, question=plan.question, asked=plan.asked)
    try:
        out = voice.say(plan, st.persona, st.rng_key)
    except Exception as exc:  # noqa: BLE001 - LLM failures end the episode as ERROR
        raise _Failure(TerminationReason.VOICE_ERROR, exc) from exc
    for r in out.repairs:
        em.emit(
            Repair, target=r.target, detail=r.detail, original=r.original, replacement=r.replacement
        )
    em.emit(
        UserReplied,
        reply_kind=plan.kind,
        text=out.text,
        disclosures=plan.disclosures(),
        asked=plan.asked,
        declined=plan.declined,
        repeated=plan.repeated,
        hinted=plan.hinted,
        voice=voice.name,
        intent_id=st.intent_id,
    )


def _end(
    em: Emitter, outcome: Outcome, reason: TerminationReason, error: str | None = None
) -> None:
    st = em.state
    em.emit(
        EpisodeEnded,
        outcome=outcome,
        reason=reason,
        patience_left=st.patience,
        turns=st.turn,
        error=error,
    )


def _force(live: _Live, em: Emitter, reason: str) -> None:
    st = live.state
    shifts.flush(em, live.config)
    assert st.persona is not None
    message = TemplateVoice().line("forced_final", st.persona, st.rng_key, st.turn)
    em.emit(
        ForcedFinal,
        reason=reason,
        message=message,
        format_hint=hooks.final_answer_format(live.world),
    )


def _end_of_turn(live: _Live, em: Emitter) -> None:
    st = live.state
    if st.ended or st.phase != "agent":
        return
    if exhausted(st.patience, live.config.epsilon):
        _force(live, em, "exhausted")
    elif st.turn >= st.turn_cap:
        _force(live, em, "turn_cap")


def _after_exchange(live: _Live, em: Emitter, question: str, asked: Sequence[str]) -> None:
    """End of a user exchange: a triggered shift, else at most one due shift."""
    fired = shifts.try_trigger(em, question, asked, live.world, live.config)
    if fired is None:
        shifts.fire_due(em, live.config, after_reply=True)


def _stale_check(live: _Live, em: Emitter) -> None:
    st = live.state
    if st.superseded_intent_id is None:
        return
    v = _adjudicate(live, st.intent(st.superseded_intent_id))
    em.emit(
        StaleCheck,
        old_intent_id=st.superseded_intent_id,
        valid_under_old=v.accepted,
        reason=v.reason,
    )


def _judge(live: _Live, em: Emitter, via: ProposalVia) -> None:
    st, cfg = live.state, live.config
    shifts.flush(em, cfg)
    forced = via == "forced_final"
    final_shot = not forced and not affordable(st.patience, cfg.cost_rejected_proposal, cfg.epsilon)
    v = _adjudicate(live, st.current)
    em.emit(
        ProposalJudged,
        intent_id=st.intent_id,
        accepted=v.accepted,
        reason=v.reason,
        score=v.score,
        via="final_shot" if final_shot else via,
        proposal=live.session.proposal(),
    )
    if v.accepted:
        _say(live, em, user.plan_reaction(st, True, live.world, live.session), reaction=True)
        reason = (
            TerminationReason.FORCED_FINAL_ACCEPTED
            if forced
            else TerminationReason.FINAL_SHOT_ACCEPTED
            if final_shot
            else TerminationReason.ACCEPTED
        )
        _end(em, Outcome.SUCCESS, reason)
        return
    if forced or final_shot:
        _stale_check(live, em)
        if forced and st.forced_reason == "turn_cap":
            _end(em, Outcome.TURNS_EXCEEDED, TerminationReason.FORCED_FINAL_REJECTED)
        elif forced:
            _end(em, Outcome.EXHAUSTED, TerminationReason.FORCED_FINAL_REJECTED)
        else:
            _end(em, Outcome.EXHAUSTED, TerminationReason.FINAL_SHOT_REJECTED)
        return
    _say(live, em, user.plan_reaction(st, False, live.world, live.session), reaction=True)
    charge(em, "rejected_proposal", cfg)
    shifts.mark_due(em, cfg)
    _end_of_turn(live, em)


def _execute(live: _Live, em: Emitter, op: EnvOp) -> bool:
    """Run a tool call, record its observation and return whether it succeeded."""
    try:
        obs = live.session.act(op.action)
        mutating = hooks.is_mutating(live.world, op.action)
    except Exception as exc:  # noqa: BLE001 - host failures end the episode as ERROR
        raise _Failure(TerminationReason.ENV_ERROR, exc) from exc
    limit = hooks.max_observation_chars(live.world)
    em.emit(
        ObservationRecorded, action=op.action, ok=obs.ok, text=obs.text[:limit], mutating=mutating
    )
    return obs.ok


def _ask_reply(
    live: _Live, em: Emitter, action: Ask, asked: Sequence[str], reading: Reading | None = None
) -> None:
    st, cfg = live.state, live.config
    if not affordable(st.patience, cfg.cost_question, cfg.epsilon):
        _force(live, em, "unaffordable_question")
        return
    charge(em, "question", cfg)
    shifts.mark_due(em, cfg)
    if live.header.user_voice == HUMAN:
        return  # paused until respond()
    plan = user.plan_answer(st, action.text, asked, live.world, reading.act if reading else None)
    _say(live, em, plan)
    _after_exchange(live, em, action.text, asked)
    _end_of_turn(live, em)


def _forced_answer(live: _Live, em: Emitter, action: AgentAction) -> None:
    st, cfg = live.state, live.config
    if isinstance(action, Propose):
        _judge(live, em, "forced_final")
    elif isinstance(action, EnvOp):
        _execute(live, em, action)
        _judge(live, em, "forced_final")
    elif st.repairs_used < cfg.format_repairs:
        em.emit(
            Repair,
            target="final_format",
            detail=f"{action.kind} is not a final answer",
            original=getattr(action, "text", "") or getattr(action, "raw", ""),
            replacement=FORMAT_REPAIR_NOTE + " " + hooks.final_answer_format(live.world),
        )
    else:
        _judge(live, em, "forced_final")


_ACTION_TYPES = (EnvOp, Ask, Propose, Malformed)
REPAIR_TEXT_CHARS = 2000
"""How much of a repaired reply (and its replacement) a ``repair`` event keeps."""


def _apply(
    live: _Live, em: Emitter, action: AgentAction, repairs: Sequence[ActionRepair] = ()
) -> None:
    st, cfg = live.state, live.config
    forced = st.phase == "forced_final"
    asked: tuple[str, ...] = ()
    reading: Reading | None = None
    if isinstance(action, Ask) and not forced:
        reading = read_ask(action, st.current, live.world, cfg.interpreter)
        asked = reading.asked
    em.emit(TurnStarted, turn=st.turn + 1, patience=st.patience, intent_id=st.intent_id)
    if type(action) in _ACTION_TYPES and all(type(s) is str for s in asked):
        # validating a typed action against the action union costs more than the whole turn
        em.emit_typed(AgentActed, action=action, asked_slots=asked, forced_final=forced)
    else:
        em.emit(AgentActed, action=action, asked_slots=asked, forced_final=forced)
    if reading is not None:
        record_reading(em, reading)
    for r in repairs:  # how the agent's reply was turned into this action
        em.emit(
            Repair,
            target="action_format",
            detail=r.detail[:REPAIR_TEXT_CHARS],
            original=r.original[:REPAIR_TEXT_CHARS],
            replacement=r.replacement[:REPAIR_TEXT_CHARS],
        )
    if forced:
        _forced_answer(live, em, action)
    elif isinstance(action, Ask):
        _ask_reply(live, em, action, asked, reading)
    elif isinstance(action, Propose):
        _judge(live, em, "answer")
    elif isinstance(action, EnvOp):
        # a proposal action (WebShop Buy Now) is judged only when it went through; an invalid
        # click is an ordinary failed tool call
        if _execute(live, em, action) and hooks.is_proposal_action(live.world, action.action):
            _judge(live, em, "operation")
            return
        if charge(em, "env_action", cfg) is not None:
            shifts.mark_due(em, cfg)
        _end_of_turn(live, em)
    elif isinstance(action, Malformed):
        charge(em, "malformed", cfg)
        shifts.mark_due(em, cfg)
        _end_of_turn(live, em)


def _guarded(live: _Live, em: Emitter, fn: Callable[[], None]) -> None:
    try:
        fn()
    except _Failure as f:
        if not live.state.ended:
            _end(em, Outcome.ERROR, f.reason, str(f))
    except DriftBenchError as exc:
        if isinstance(exc, ProtocolError):
            raise
        if not live.state.ended:
            _end(
                em, Outcome.ERROR, TerminationReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            )
    except Exception as exc:  # noqa: BLE001 - never escape: record the failure
        if not live.state.ended:
            _end(
                em, Outcome.ERROR, TerminationReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            )


def _flush(log: EventLog, live: _Live, em: Emitter) -> None:
    events = em.drain()
    if events:
        log.append(live.header.episode_id, events)
    if live.state.ended and any(isinstance(e, EpisodeEnded) for e in events):
        assert live.state.outcome is not None
        log.finish(live.header.episode_id, live.state.outcome, live.state.summary())


def _check_can_act(live: _Live) -> None:
    if live.state.ended:
        raise ProtocolError(f"episode {live.header.episode_id} has ended")
    if live.state.phase == "awaiting_user":
        raise ProtocolError(f"episode {live.header.episode_id} is waiting for the user's reply")


def _step_live(
    log: EventLog, live: _Live, action: AgentAction, repairs: Sequence[ActionRepair] = ()
) -> None:
    _check_can_act(live)
    em = Emitter(live.state)
    _guarded(live, em, lambda: _apply(live, em, action, repairs))
    _flush(log, live, em)


def _pop_repairs(agent: Any) -> list[ActionRepair]:
    """The parser repairs an agent made since its last action (agents without any: none)."""
    pop = getattr(agent, "pop_repairs", None)
    return list(pop()) if callable(pop) else []


# --------------------------------------------------------------------------- public API


def step(
    log: EventLog,
    episode_id: str,
    action: AgentAction,
    *,
    world_loader: WorldLoader | None = None,
    voice: Voice | None = None,
    repairs: Sequence[ActionRepair] = (),
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

    Raises:
        ProtocolError: The episode has ended or is waiting for the user's reply.
    """
    live = _live(log, episode_id, world_loader, voice)
    _step_live(log, live, action, repairs)
    return _agent_view(live.state, live.header, live.world)


class Truth:
    """Privileged read access for scripted agents that play with perfect knowledge (ORACLE).

    Never given to ordinary agents; the orchestrator binds it only to agents that define
    ``bind_truth``.
    """

    def __init__(self, live: _Live) -> None:
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


def truth(log: EventLog, episode_id: str, world_loader: WorldLoader | None = None) -> Truth:
    """Return the privileged truth probe of an episode (for ORACLE / skyline agents)."""
    return Truth(_live(log, episode_id, world_loader))


def run(
    log: EventLog,
    episode_id: str,
    agent: Any,
    *,
    world_loader: WorldLoader | None = None,
    voice: Voice | None = None,
    max_steps: int = 10_000,
) -> EpisodeState:
    """Drive ``agent`` until the episode ends (or waits for a human user's reply).

    Args:
        log: The event log.
        episode_id: The episode.
        agent: An :class:`~core.agents.base.Agent`; if it defines ``bind_truth`` it receives a
            :class:`Truth` probe first; if it defines ``pop_repairs`` (LLM agents), the parser
            repairs behind each action are recorded as ``repair`` events.
        world_loader: ``benchmark -> HostWorld``.
        voice: Override the header's user voice (e.g. a scripted LLM voice in tests).
        max_steps: Safety bound on agent calls.

    Returns:
        The episode state after the loop (``state.outcome`` is set when it ended).
    """
    live = _live(log, episode_id, world_loader, voice)
    if hasattr(agent, "bind_truth"):
        agent.bind_truth(Truth(live))
    steps = 0
    while not live.state.ended and live.state.phase != "awaiting_user" and steps < max_steps:
        steps += 1
        view = _agent_view(live.state, live.header, live.world)
        try:
            action = agent.act(view)
        except Exception as exc:  # noqa: BLE001 - a crashing agent ends the episode as ERROR
            em = Emitter(live.state)
            _end(em, Outcome.ERROR, TerminationReason.AGENT_ERROR, f"{type(exc).__name__}: {exc}")
            _flush(log, live, em)
            break
        _step_live(log, live, action, _pop_repairs(agent))
    if live.state.ended and hasattr(agent, "observe_end"):
        agent.observe_end(_agent_view(live.state, live.header, live.world))
    return live.state


def respond(
    log: EventLog,
    episode_id: str,
    text: str,
    disclosed: Sequence[str] = (),
    *,
    world_loader: WorldLoader | None = None,
) -> UserView:
    """Record a human user's reply (and the requirements they ticked as disclosed).

    Raises:
        ProtocolError: The episode is not waiting for a user reply, or a ticked slot is not a
            current requirement.
    """
    live = _live(log, episode_id, world_loader)
    st = live.state
    if st.phase != "awaiting_user":
        raise ProtocolError(f"episode {episode_id} is not waiting for a user reply")
    try:
        disc = user.plan_human(st, disclosed, live.world)
    except ValueError as exc:
        raise ProtocolError(str(exc)) from exc
    question, asked = st.pending_question or "", st.pending_asked
    em = Emitter(st)

    def _go() -> None:
        em.emit(
            UserReplied,
            reply_kind="answer" if disc else "decline",
            text=text,
            disclosures=disc,
            asked=asked,
            voice=HUMAN,
            intent_id=st.intent_id,
        )
        _after_exchange(live, em, question, asked)
        _end_of_turn(live, em)

    _guarded(live, em, _go)
    _flush(log, live, em)
    return _user_view(st, live.header, live.world)


def fork(
    log: EventLog,
    episode_id: str,
    turn: int,
    agent_spec: str,
    *,
    method: str | None = None,
    episode_id_new: str | None = None,
) -> str:
    """Copy an episode's events before ``turn`` into a new episode for another agent.

    The new episode is linked to its parent (``parent_episode_id``, ``fork_turn``); the next
    agent action it receives is its turn ``turn``. Random streams are keyed by sample and seed,
    so the user behaves identically on the shared prefix and, given the same actions, after it.

    Raises:
        ProtocolError: ``turn`` < 1, or the parent had ended before ``turn``.
    """
    if turn < 1:
        raise ProtocolError("fork turn must be ≥ 1 (turn 1 is the first agent action)")
    parent = log.header(episode_id)
    events = log.events(episode_id)
    prefix = [e for e in events if e.turn < turn]
    if any(isinstance(e, EpisodeEnded) for e in prefix):
        raise ProtocolError(f"episode {episode_id} ended before turn {turn}")
    if not any(isinstance(e, TurnStarted) and e.turn == turn - 1 for e in events) and turn > 1:
        raise ProtocolError(f"episode {episode_id} has no turn {turn - 1}")
    new_id = episode_id_new or uuid.uuid4().hex[:16]
    header = parent.model_copy(
        update={
            "episode_id": new_id,
            "parent_episode_id": episode_id,
            "fork_turn": turn,
            "agent": agent_spec,
            "method": method or agent_spec,
            "created_at": datetime.now(UTC),
        }
    )
    log.create_episode(header)
    log.append(new_id, prefix)
    return new_id


def agent_view(
    log: EventLog, episode_id: str, *, world_loader: WorldLoader | None = None
) -> AgentView:
    """Return the agent-side view of an episode."""
    live = _live(log, episode_id, world_loader)
    return _agent_view(live.state, live.header, live.world, validate=True)


def user_view(
    log: EventLog, episode_id: str, *, world_loader: WorldLoader | None = None
) -> UserView:
    """Return the user-side view of an episode."""
    live = _live(log, episode_id, world_loader)
    return _user_view(live.state, live.header, live.world)


def researcher_view(
    log: EventLog, episode_id: str, *, world_loader: WorldLoader | None = None
) -> ResearcherView:
    """Return everything about an episode."""
    live = _live(log, episode_id, world_loader)
    return _researcher_view(live.state, live.header, log.events(episode_id), live.world)
