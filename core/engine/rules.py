"""The protocol rules of one agent action: apply it, ask the user, judge a proposal, force the end.

Each function records its decisions through an :class:`~core.protocol.emit.Emitter` on a
:class:`~core.engine.live.LiveEpisode`; nothing here touches the event log (the caller commits).
Where each rule lives:

* :func:`apply` — one agent action: its ``turn_started`` / ``agent_action`` / ``repair``
  events, then the per-kind rule below;
* :func:`ask_reply` — a question: its patience charge, the user's reply, shifts after it;
* :func:`execute` — a tool call and its observation (a successful proposal action such as
  WebShop's Buy Now is then judged);
* :func:`judge` — a proposal: the world's verdict (:meth:`HostWorld.judge
  <core.envs.base.HostWorld.judge>`), the user's reaction, the ending or the rejection charge;
* :func:`force` / :func:`end_of_turn` — the forced final answer (patience exhausted, turn cap,
  unaffordable question) and :func:`forced_answer`, how it is answered;
* :func:`guarded` — runs a rule so that a failure of the world, a voice or the engine itself
  ends the episode through :func:`end_with_error` (never an escaping exception).

Patience costs are in :mod:`core.protocol.patience`, shifts in :mod:`core.protocol.shifts`, the
simulated user's replies in :mod:`core.protocol.user`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.agents.wire import ActionRepair
from core.engine.live import LiveEpisode
from core.errors import DriftBenchError, ProtocolError
from core.model.actions import AgentAction, Ask, EnvOp, Malformed, Propose
from core.model.episode import Outcome, TerminationReason
from core.model.events import (
    AgentActed,
    Disclosure,
    EpisodeEnded,
    ForcedFinal,
    ObservationRecorded,
    ProposalJudged,
    ProposalVia,
    Repair,
    StaleCheck,
    TurnStarted,
    UserReplied,
)
from core.model.intent import Intent
from core.model.world import Verdict
from core.protocol import shifts, user
from core.protocol.emit import Emitter
from core.protocol.matching import Reading, read_ask
from core.protocol.matching import record as record_reading
from core.protocol.patience import affordable, charge, exhausted
from core.protocol.voices import HUMAN, Voice
from core.protocol.voices.template import TemplateVoice

FORMAT_REPAIR_NOTE = "That was not a final answer. Give your final answer now."

REPAIR_TEXT_CHARS = 2000
"""How much of a repaired reply (and its replacement) a ``repair`` event keeps."""

_ACTION_TYPES = (EnvOp, Ask, Propose, Malformed)


class Failure(Exception):
    """An infrastructure failure, tagged with the ending reason it maps to."""

    def __init__(self, reason: TerminationReason, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.reason = reason


def describe(exc: BaseException) -> str:
    """The error text an ERROR ending records for ``exc`` (``Type: message``)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --------------------------------------------------------------------------- endings


def end(em: Emitter, outcome: Outcome, reason: TerminationReason, error: str | None = None) -> None:
    """Record the ``episode_ended`` event."""
    st = em.state
    em.emit(
        EpisodeEnded,
        outcome=outcome,
        reason=reason,
        patience_left=st.patience,
        turns=st.turn,
        error=error,
    )


def end_with_error(em: Emitter, reason: TerminationReason, detail: str) -> None:
    """The one failure ending: outcome ERROR with ``reason`` and the error text."""
    end(em, Outcome.ERROR, reason, detail)


def guarded(live: LiveEpisode, em: Emitter, fn: Callable[[], None]) -> None:
    """Run ``fn``; a failure ends the episode as ERROR (caller misuse still raises)."""
    try:
        fn()
    except Failure as f:
        if not live.state.ended:
            end_with_error(em, f.reason, str(f))
    except DriftBenchError as exc:
        if isinstance(exc, ProtocolError):
            raise
        if not live.state.ended:
            end_with_error(em, TerminationReason.INTERNAL_ERROR, describe(exc))
    except Exception as exc:  # noqa: BLE001 - never escape: record the failure
        if not live.state.ended:
            end_with_error(em, TerminationReason.INTERNAL_ERROR, describe(exc))


# --------------------------------------------------------------------------- the user


def say(
    live: LiveEpisode,
    em: Emitter,
    plan: user.ReplyPlan,
    *,
    reaction: bool = False,
    voice: Voice | None = None,
    voice_name: str | None = None,
) -> None:
    """Phrase ``plan`` with the episode's voice and record the user's reply.

    Args:
        live: The live episode.
        em: The emitter.
        plan: What the reply does.
        reaction: The reply reacts to an adjudicated proposal.
        voice: Phrase with this voice instead of the episode's.
        voice_name: Record the reply under this voice name (the simulator answering one
            message on a person's request is recorded as
            :data:`~core.protocol.voices.SIMULATOR_FOR_HUMAN`).
    """
    st = live.state
    assert st.persona is not None
    voice = voice or live.voice
    if voice is None:
        voice = TemplateVoice()  # the simulator answering one message for a person
    if voice.name == "mute":
        # the L0 floor: no words at all from the user — answers, rejections (hints included)
        # and the acceptance are all the mute line, and nothing is disclosed
        plan = user.ReplyPlan(kind="mute", turn=plan.turn, question=plan.question, asked=plan.asked)
    try:
        out = voice.say(plan, st.persona, st.rng_key)
    except Exception as exc:  # noqa: BLE001 - LLM failures end the episode as ERROR
        raise Failure(TerminationReason.VOICE_ERROR, exc) from exc
    for r in out.repairs:
        em.emit(
            Repair, target=r.target, detail=r.detail, original=r.original, replacement=r.replacement
        )
    disclosures = plan.disclosures()
    if voice.name not in ("template", "mute") and not out.fallback and out.text.strip():
        disclosures = _read_own_words(live, em, plan, out.text, disclosures)
    em.emit(
        UserReplied,
        reply_kind=plan.kind,
        text=out.text,
        disclosures=disclosures,
        asked=plan.asked,
        declined=plan.declined,
        repeated=plan.repeated,
        hinted=plan.hinted,
        voice=voice_name or voice.name,
        intent_id=st.intent_id,
    )


def _read_own_words(
    live: LiveEpisode,
    em: Emitter,
    plan: user.ReplyPlan,
    text: str,
    planned: tuple[Disclosure, ...],
) -> tuple[Disclosure, ...]:
    """What a language-model voice's reply discloses, read from its words.

    The same reader reads a person's reply (:func:`core.protocol.reply_reader.read_reply`);
    a planned requirement the words do not state is not disclosed, and a requirement stated
    that the plan did not allow (or a value other than the goal's) is recorded as a
    ``voice_rejected`` repair. Context facts and rejection hints (not requirement values)
    stay as planned.
    """
    from core.protocol.reply_reader import read_reply

    reading = read_reply(text, live.state.current, live.world, asked=plan.asked)
    said = set(reading.slots)
    slots = {c.slot for c in live.state.current.conditions}
    allowed = {d.slot for d in planned}
    kept = tuple(d for d in planned if d.slot not in slots or d.slot in said)
    unplanned = sorted(said - allowed)
    wrong = [c.slot for c in reading.contradictions]
    if unplanned or wrong:
        detail = "; ".join(
            x
            for x in (
                f"stated requirements it was not to disclose: {unplanned}" if unplanned else "",
                f"stated other values than the goal's for: {wrong}" if wrong else "",
            )
            if x
        )
        em.emit(Repair, target="voice_rejected", detail=detail, original=text, replacement="")
    return kept


def after_exchange(live: LiveEpisode, em: Emitter, question: str, asked: Sequence[str]) -> None:
    """End of a user exchange: a triggered shift, else at most one due shift."""
    fired = shifts.try_trigger(em, question, asked, live.world, live.config)
    if fired is None:
        shifts.fire_due(em, live.config, after_reply=True)


def ask_reply(
    live: LiveEpisode,
    em: Emitter,
    action: Ask,
    asked: Sequence[str],
    reading: Reading | None = None,
) -> None:
    """A question: charge it (or force the end when unaffordable), then the user replies."""
    st, cfg = live.state, live.config
    if not affordable(st.patience, cfg.cost_question, cfg.epsilon):
        force(live, em, "unaffordable_question")
        return
    charge(em, "question", cfg)
    shifts.mark_due(em, cfg)
    if live.header.user_voice == HUMAN:
        return  # paused until respond()
    plan = user.plan_answer(st, action.text, asked, live.world, reading.act if reading else None)
    say(live, em, plan)
    after_exchange(live, em, action.text, asked)
    end_of_turn(live, em)


# --------------------------------------------------------------------------- the world


def verdict(live: LiveEpisode, intent: Intent) -> Verdict:
    """The world's judgement of the session's proposal against ``intent`` (the protocol's)."""
    try:
        return live.world.judge(intent, live.session, live.config)
    except Exception as exc:  # noqa: BLE001 - host failures end the episode as ERROR
        raise Failure(TerminationReason.ENV_ERROR, exc) from exc


def execute(live: LiveEpisode, em: Emitter, op: EnvOp) -> bool:
    """Run a tool call, record its observation and return whether it succeeded."""
    try:
        obs = live.session.act(op.action)
        mutating = live.world.is_mutating(op.action)
    except Exception as exc:  # noqa: BLE001 - host failures end the episode as ERROR
        raise Failure(TerminationReason.ENV_ERROR, exc) from exc
    limit = live.world.max_observation_chars
    em.emit(
        ObservationRecorded, action=op.action, ok=obs.ok, text=obs.text[:limit], mutating=mutating
    )
    return obs.ok


def stale_check(live: LiveEpisode, em: Emitter) -> None:
    """After a failed final answer: would it have been right for the superseded intent?"""
    st = live.state
    if st.superseded_intent_id is None:
        return
    v = verdict(live, st.intent(st.superseded_intent_id))
    em.emit(
        StaleCheck,
        old_intent_id=st.superseded_intent_id,
        valid_under_old=v.accepted,
        reason=v.reason,
    )


def judge(live: LiveEpisode, em: Emitter, via: ProposalVia) -> None:
    """Judge the current proposal; accept and end, end a last chance, or charge and go on."""
    st, cfg = live.state, live.config
    shifts.flush(em, cfg)
    forced = via == "forced_final"
    final_shot = not forced and not affordable(st.patience, cfg.cost_rejected_proposal, cfg.epsilon)
    v = verdict(live, st.current)
    em.emit(
        ProposalJudged,
        intent_id=st.intent_id,
        accepted=v.accepted,
        reason=v.reason,
        score=v.score,
        via="final_shot" if final_shot else via,
        proposal=live.session.proposal(),
    )
    human = live.header.user_voice == HUMAN
    if v.accepted:
        if not human:  # a person is never spoken for; the episode simply ends
            say(live, em, user.plan_reaction(st, True, live.world, live.session), reaction=True)
        reason = (
            TerminationReason.FORCED_FINAL_ACCEPTED
            if forced
            else TerminationReason.FINAL_SHOT_ACCEPTED
            if final_shot
            else TerminationReason.ACCEPTED
        )
        end(em, Outcome.SUCCESS, reason)
        return
    if forced or final_shot:
        stale_check(live, em)
        if forced and st.forced_reason == "turn_cap":
            end(em, Outcome.TURNS_EXCEEDED, TerminationReason.FORCED_FINAL_REJECTED)
        elif forced:
            end(em, Outcome.EXHAUSTED, TerminationReason.FORCED_FINAL_REJECTED)
        else:
            end(em, Outcome.EXHAUSTED, TerminationReason.FINAL_SHOT_REJECTED)
        return
    if human:
        return  # paused: the person phrases the reaction (respond() then calls after_rejection)
    say(live, em, user.plan_reaction(st, False, live.world, live.session), reaction=True)
    after_rejection(live, em)


def after_rejection(live: LiveEpisode, em: Emitter) -> None:
    """After the user's reaction to a rejected proposal: charge it, then the turn's end."""
    charge(em, "rejected_proposal", live.config)
    shifts.mark_due(em, live.config)
    end_of_turn(live, em)


# --------------------------------------------------------------------------- the forced end


def force(live: LiveEpisode, em: Emitter, reason: str) -> None:
    """Tell the agent to give its final answer now."""
    st = live.state
    shifts.flush(em, live.config)
    assert st.persona is not None
    message = TemplateVoice().line("forced_final", st.persona, st.rng_key, st.turn)
    em.emit(
        ForcedFinal,
        reason=reason,
        message=message,
        format_hint=live.world.final_answer_format(),
    )


def end_of_turn(live: LiveEpisode, em: Emitter) -> None:
    """Force the final answer when patience is exhausted or the turn cap is reached."""
    st = live.state
    if st.ended or st.phase != "agent":
        return
    if exhausted(st.patience, live.config.epsilon):
        force(live, em, "exhausted")
    elif st.turn >= st.turn_cap:
        force(live, em, "turn_cap")


def forced_answer(live: LiveEpisode, em: Emitter, action: AgentAction) -> None:
    """Answer the forced final: judge a proposal, or repair the format once, else judge."""
    st, cfg = live.state, live.config
    if isinstance(action, Propose):
        judge(live, em, "forced_final")
    elif isinstance(action, EnvOp):
        execute(live, em, action)
        judge(live, em, "forced_final")
    elif st.repairs_used < cfg.format_repairs:
        original = (action.text if isinstance(action, Ask) else "") or action.raw
        em.emit(
            Repair,
            target="final_format",
            detail=f"{action.kind} is not a final answer",
            original=original,
            replacement=FORMAT_REPAIR_NOTE + " " + live.world.final_answer_format(),
        )
    else:
        judge(live, em, "forced_final")


# --------------------------------------------------------------------------- one action


def apply(
    live: LiveEpisode, em: Emitter, action: AgentAction, repairs: Sequence[ActionRepair] = ()
) -> None:
    """Record one agent action (and the parser repairs behind it) and apply its rule."""
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
        forced_answer(live, em, action)
    elif isinstance(action, Ask):
        ask_reply(live, em, action, asked, reading)
    elif isinstance(action, Propose):
        judge(live, em, "answer")
    elif isinstance(action, EnvOp):
        # a proposal action (WebShop Buy Now) is judged only when it went through; an invalid
        # click is an ordinary failed tool call
        if execute(live, em, action) and live.world.is_proposal_action(action.action):
            judge(live, em, "operation")
            return
        if charge(em, "env_action", cfg) is not None:
            shifts.mark_due(em, cfg)
        end_of_turn(live, em)
    elif isinstance(action, Malformed):
        charge(em, "malformed", cfg)
        shifts.mark_due(em, cfg)
        end_of_turn(live, em)
