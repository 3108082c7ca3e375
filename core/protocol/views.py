"""The three role-separated view models, each built from an explicit allow-list.

The agent view copies named, agent-safe fields only: the opening request, tools, the
transcript of what was said and observed, turn counters and (only when the method or study
condition shows it) the patience meter. It never touches the mask, the intent, persona
parameters, shift records or ground truth.
"""

from __future__ import annotations

from typing import Any

from core.envs.base import EnvSession, HostWorld
from core.model.episode import (
    AgentView,
    EpisodeHeader,
    IntentLine,
    ResearcherView,
    UserView,
)
from core.model.events import Event, dump_event
from core.protocol.fast import construct
from core.protocol.state import EpisodeState


def agent_view(
    state: EpisodeState, header: EpisodeHeader, world: HostWorld, *, validate: bool = False
) -> AgentView:
    """Build the agent-side view (allow-list only).

    Args:
        state: The episode state.
        header: The episode header.
        world: The host world (for the tool list).
        validate: Run pydantic validation (off on the hot path; the fields are typed already).
    """
    assert state.sample is not None
    show = state.patience_visible
    fields: dict[str, Any] = {
        "episode_id": header.episode_id,
        "benchmark": header.benchmark,
        "query": state.sample.query,
        "tools": tuple(world.tools()),
        "transcript": tuple(state.transcript),
        "turn": state.turn,
        "turns_left": max(state.turn_cap - state.turn, 0),
        "patience": state.patience if show else None,
        "costs": header.config.costs() if show else None,
        "forced_final": state.phase == "forced_final",
        "format_hint": state.format_hint if state.phase == "forced_final" else "",
        "awaiting_user": state.phase == "awaiting_user",
        "ended": state.ended,
        "outcome": state.outcome,
    }
    if validate:
        return AgentView.model_validate(fields)
    return construct(AgentView, fields)


def _shift_note(state: EpisodeState, i: int) -> str:
    ev = state.shift_log[i]
    assert state.graph is not None
    dst = state.graph.node(ev.edge.dst)
    return f"Your wishes changed ({ev.edge.operator}): now {len(dst.conditions)} requirements."


def user_view(
    state: EpisodeState,
    header: EpisodeHeader,
    world: HostWorld,
    session: EnvSession | None = None,
) -> UserView:
    """Build the view for the person (or voice) playing the user.

    Args:
        state: The episode state.
        header: The episode header.
        world: The episode's world.
        session: The live session; with it, a pending reaction lists what is unmet.
    """
    assert state.sample is not None and state.persona is not None
    hidden = set(state.sample.hidden_slots)
    known = state.known_slots()
    lines = tuple(
        IntentLine(
            slot=c.slot,
            label=world.slot_label(c),
            value=c.value,
            phrase=world.phrase(c),
            hidden=c.slot in hidden,
            disclosed=state.disclosed.get(c.slot) == c.value,
            known=c.slot in known,
        )
        for c in state.current.conditions
    )
    return UserView(
        episode_id=header.episode_id,
        persona=state.persona,
        query=state.sample.query,
        intent_id=state.intent_id,
        intent=lines,
        context=dict(state.current.context),
        disclosed=dict(state.disclosed),
        shift_notes=tuple(_shift_note(state, i) for i in range(len(state.shift_log))),
        due_shifts=state.due,
        patience=state.patience,
        budget=state.budget,
        pending_question=state.pending_question,
        pending_asked=state.pending_asked,
        pending_reaction=state.pending_reaction,
        pending_turn=state.turn if state.phase == "awaiting_user" else None,
        pending_prompt=prompt_number(state) if state.phase == "awaiting_user" else None,
        unmet=_unmet(state, world, session),
        transcript=tuple(state.transcript),
        ended=state.ended,
        outcome=state.outcome,
    )


def prompt_number(state: EpisodeState) -> int:
    """Which prompt a reply answers: every question and every rejection is a new one."""
    return state.questions + state.rejections


def _unmet(state: EpisodeState, world: HostWorld, session: EnvSession | None) -> tuple[str, ...]:
    """What the rejected proposal gets wrong, for the person phrasing their reaction."""
    if not state.pending_reaction or session is None:
        return ()
    problems = world.unmet_problems(state.current, session) or []
    return tuple(p.known_text or p.text for p in problems)


def state_dict(state: EpisodeState) -> dict[str, Any]:
    """Return the researcher-level state as a JSON-compatible dict."""
    return {
        "phase": state.phase,
        "turn": state.turn,
        "turn_cap": state.turn_cap,
        "budget": state.budget,
        "patience": state.patience,
        "thresholds_left": list(state.thresholds),
        "fates_left": list(state.fates),
        "all_thresholds": list(state.all_thresholds),
        "due": state.due,
        "shifts_fired": state.shifts_fired,
        "max_shifts": state.max_shifts,
        "intent_id": state.intent_id,
        "root_intent_id": state.root_intent_id,
        "visited": list(state.visited),
        "superseded_intent_id": state.superseded_intent_id,
        "disclosed": dict(state.disclosed),
        "ask_total": dict(state.ask_total),
        "questions": state.questions,
        "proposals": state.proposals,
        "rejections": state.rejections,
        "owed_slots": state.owed_slots() if state.sample else [],
        "outcome": state.outcome.value if state.outcome else None,
        "reason": state.reason.value if state.reason else None,
        "error": state.error,
    }


def researcher_view(
    state: EpisodeState, header: EpisodeHeader, events: list[Event], world: HostWorld
) -> ResearcherView:
    """Build the full view (header, every event, the state and both role views)."""
    return ResearcherView(
        header=header,
        events=[dump_event(e) for e in events],
        state=state_dict(state),
        agent_view=agent_view(state, header, world, validate=True),
        user_view=user_view(state, header, world),
    )
