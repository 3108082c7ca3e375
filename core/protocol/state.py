"""The episode state and its fold over events.

:func:`evolve` is the only code that changes an :class:`EpisodeState`; the orchestrator applies
each event as it records it, and :func:`replay` folds a stored log from scratch, so both paths
yield the same state by construction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.model.episode import Outcome, TerminationReason, TranscriptEntry
from core.model.events import (
    AgentActed,
    Disclosure,
    EpisodeEnded,
    EpisodeStarted,
    Event,
    ForcedFinal,
    ObservationRecorded,
    PatienceCharged,
    ProposalJudged,
    Repair,
    ShiftDue,
    ShiftFired,
    ShiftSkipped,
    StaleCheck,
    TurnStarted,
    UserReplied,
)
from core.model.intent import ConditionValue, Intent, IntentGraph
from core.model.persona import Persona
from core.model.sample import Sample
from core.model.world import EnvAction
from core.protocol.fast import construct

Phase = Literal["new", "agent", "awaiting_user", "forced_final", "ended"]

MALFORMED_NOTE = "I didn't understand that. Could you rephrase?"
"""Environment line shown to the agent after a malformed action."""


@dataclass
class EpisodeState:
    """Everything the protocol knows about a running episode (researcher-level)."""

    sample: Sample | None = None
    graph: IntentGraph | None = None
    persona: Persona | None = None
    rng_key: str = ""
    budget: float = 0.0
    patience: float = 0.0
    thresholds: list[float] = field(default_factory=list)
    fates: list[bool] = field(default_factory=list)
    all_thresholds: tuple[float, ...] = ()
    due: int = 0
    shifts_fired: int = 0
    max_shifts: int = 0
    intent_id: str = ""
    root_intent_id: str = ""
    visited: list[str] = field(default_factory=list)
    superseded_intent_id: str | None = None
    turn: int = 0
    turn_cap: int = 0
    patience_visible: bool = False
    tools: tuple[str, ...] = ()
    next_seq: int = 0
    phase: Phase = "new"
    forced_reason: str | None = None
    format_hint: str = ""
    repairs_used: int = 0
    disclosed: dict[str, ConditionValue] = field(default_factory=dict)
    disclosures: list[tuple[int, Disclosure]] = field(default_factory=list)
    ask_total: dict[str, int] = field(default_factory=dict)
    ask_streak: dict[str, int] = field(default_factory=dict)
    last_asked: tuple[str, ...] = ()
    questions: int = 0
    pending_question: str | None = None
    pending_asked: tuple[str, ...] = ()
    human_user: bool = False
    pending_reaction: bool = False
    proposals: int = 0
    rejections: int = 0
    last_verdict: tuple[bool, str, float | None] | None = None
    shift_log: list[ShiftFired] = field(default_factory=list)
    skipped: int = 0
    outcome: Outcome | None = None
    reason: TerminationReason | None = None
    error: str | None = None
    transcript: list[TranscriptEntry] = field(default_factory=list)
    _nodes: dict[str, Intent] = field(default_factory=dict, repr=False)

    @property
    def ended(self) -> bool:
        """Whether an ``episode_ended`` event was recorded."""
        return self.phase == "ended"

    def intent(self, intent_id: str | None = None) -> Intent:
        """Return the current intent (or ``intent_id``) from the graph."""
        return self._nodes[intent_id or self.intent_id]

    @property
    def current(self) -> Intent:
        """The user's current (private) intent."""
        return self._nodes[self.intent_id]

    def stated_truthfully(self) -> dict[str, ConditionValue]:
        """Slots (with values) the opening request states truthfully (root minus hidden)."""
        assert self.sample is not None
        hidden = set(self.sample.hidden_slots)
        root = self._nodes[self.root_intent_id]
        return {c.slot: c.value for c in root.conditions if c.slot not in hidden}

    def known_slots(self) -> set[str]:
        """Slots of the current intent whose current value the agent was told."""
        stated = self.stated_truthfully()
        out = set()
        for c in self.current.conditions:
            if stated.get(c.slot, _MISSING) == c.value or self.disclosed.get(c.slot, _MISSING) == (
                c.value
            ):
                out.add(c.slot)
        return out

    def owed_slots(self) -> list[str]:
        """Slots of the current intent the agent does not know yet (intent order)."""
        known = self.known_slots()
        return [c.slot for c in self.current.conditions if c.slot not in known]

    def summary(self) -> dict[str, Any]:
        """Return a small JSON summary (stored by ``EventLog.finish``)."""
        return {
            "outcome": self.outcome.value if self.outcome else None,
            "reason": self.reason.value if self.reason else None,
            "turns": self.turn,
            "patience_left": self.patience,
            "budget": self.budget,
            "questions": self.questions,
            "proposals": self.proposals,
            "shifts": self.shifts_fired,
            "final_intent_id": self.intent_id,
            "error": self.error,
        }


_MISSING = object()


def _entry(
    turn: int, role: Literal["user", "agent", "environment"], text: str, action: Any = None
) -> TranscriptEntry:
    return construct(TranscriptEntry, {"turn": turn, "role": role, "text": text, "action": action})


def evolve(state: EpisodeState, ev: Event) -> EpisodeState:
    """Apply one event to ``state`` in place and return it.

    Raises:
        ValueError: If ``ev.seq`` does not continue the state's sequence.
    """
    if ev.seq != state.next_seq:
        raise ValueError(f"event seq {ev.seq} does not follow {state.next_seq - 1}")
    state.next_seq += 1
    if isinstance(ev, EpisodeStarted):
        state.sample, state.graph, state.persona = ev.sample, ev.graph, ev.persona
        state._nodes = {n.intent_id: n for n in ev.graph.nodes}
        state.rng_key = ev.rng_key
        state.budget = state.patience = ev.budget
        state.thresholds = list(ev.thresholds)
        state.fates = list(ev.fates)
        state.all_thresholds = ev.thresholds
        state.max_shifts = len(ev.thresholds)
        state.intent_id = state.root_intent_id = ev.sample.root_intent_id
        state.visited = [ev.sample.root_intent_id]
        state.turn_cap = ev.turn_cap
        state.patience_visible = ev.patience_visible
        state.tools = ev.tools
        state.phase = "agent"
    elif isinstance(ev, TurnStarted):
        state.turn = ev.turn
    elif isinstance(ev, AgentActed):
        a = ev.action
        state.transcript.append(_entry(ev.turn, "agent", _action_text(a), a))
        if a.kind == "ask":
            state.questions += 1
            for s in ev.asked_slots:
                state.ask_total[s] = state.ask_total.get(s, 0) + 1
                state.ask_streak[s] = state.ask_streak.get(s, 0) + 1 if s in state.last_asked else 1
            state.last_asked = ev.asked_slots
            if state.phase == "agent":
                state.pending_question = a.text
                state.pending_asked = ev.asked_slots
                state.phase = "awaiting_user"
        elif a.kind == "malformed":
            state.transcript.append(_entry(ev.turn, "environment", MALFORMED_NOTE))
    elif isinstance(ev, UserReplied):
        state.transcript.append(_entry(ev.turn, "user", ev.text))
        for d in ev.disclosures:
            state.disclosures.append((ev.turn, d))
            if d.value is not None and d.how != "context":
                state.disclosed[d.slot] = d.value
        state.pending_question = None
        state.pending_asked = ()
        state.pending_reaction = False
        if state.phase == "awaiting_user":
            state.phase = "agent"
    elif isinstance(ev, ObservationRecorded):
        state.transcript.append(_entry(ev.turn, "environment", ev.text))
    elif isinstance(ev, PatienceCharged):
        state.patience = ev.after
    elif isinstance(ev, ShiftDue):
        state.thresholds.pop(0)
        state.fates.pop(0)
        state.due += 1
    elif isinstance(ev, ShiftSkipped):
        state.skipped += 1
        if ev.reason == "fate_skip":
            state.thresholds.pop(0)
            state.fates.pop(0)
        else:
            state.due = max(0, state.due - 1)
    elif isinstance(ev, ShiftFired):
        if ev.consumed == "placement":
            state.thresholds.pop()
            state.fates.pop()
        else:
            state.due -= 1
        state.shifts_fired += 1
        state.intent_id = ev.edge.dst
        state.visited.append(ev.edge.dst)
        if ev.edge.gt_moved:
            state.superseded_intent_id = ev.edge.src
        state.shift_log.append(ev)
    elif isinstance(ev, ProposalJudged):
        state.proposals += 1
        if not ev.accepted:
            state.rejections += 1
        state.last_verdict = (ev.accepted, ev.reason, ev.score)
        if (
            state.human_user
            and not ev.accepted
            and state.phase == "agent"
            and ev.via not in ("final_shot", "forced_final")
        ):
            # A person plays the user: they phrase their own reaction to the rejected proposal.
            state.pending_reaction = True
            state.phase = "awaiting_user"
    elif isinstance(ev, StaleCheck):
        pass
    elif isinstance(ev, ForcedFinal):
        state.phase = "forced_final"
        state.forced_reason = ev.reason
        state.format_hint = ev.format_hint
        state.pending_question = None
        state.pending_asked = ()
        state.transcript.append(_entry(ev.turn, "user", ev.message))
        state.transcript.append(_entry(ev.turn, "environment", ev.format_hint))
    elif isinstance(ev, Repair):
        if ev.target == "final_format":
            state.repairs_used += 1
            state.transcript.append(_entry(ev.turn, "environment", ev.replacement))
    elif isinstance(ev, EpisodeEnded):
        state.phase = "ended"
        state.outcome = ev.outcome
        state.reason = ev.reason
        state.error = ev.error
    return state


def _action_text(a: Any) -> str:
    if a.kind == "env":
        act: EnvAction = a.action
        return a.raw or f"{act.tool}({', '.join(f'{k}={v!r}' for k, v in act.args.items())})"
    if a.kind == "ask":
        return str(a.text)
    if a.kind == "propose":
        return f"Final answer: {a.text}" if a.text else "Final answer."
    return str(a.raw)


def replay(events: Iterable[Event], *, human_user: bool = False) -> EpisodeState:
    """Rebuild the state from a stored event list (pure fold).

    Args:
        events: The episode's events in order.
        human_user: A person plays the user (their reactions to rejected proposals pause the
            episode like their answers do); from the header's ``user_voice``.
    """
    st = EpisodeState(human_user=human_user)
    for ev in events:
        evolve(st, ev)
    return st
