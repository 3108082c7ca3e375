"""Turn-by-turn records and shift-timeline points built from an episode's events.

These are the researcher-side read models behind the Inspect and Watch pages (and exports):
one :class:`TurnRecord` per agent turn with everything that happened in it, and tidy
:class:`TimelinePoint` rows (turn, marker, patience) for the shift timeline plot. They are pure
functions of the stored events; nothing here decides protocol rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from core.model.base import StrictMutable
from core.model.events import (
    AgentActed,
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
from core.studio.plainwords import plain_ending

Marker = Literal[
    "question",
    "tool",
    "proposal_accepted",
    "proposal_rejected",
    "malformed",
    "shift_due",
    "shift_fired",
    "shift_skipped",
    "forced_final",
    "end",
]


class TurnRecord(StrictMutable):
    """Everything that happened in one agent turn."""

    turn: int
    intent_id: str = ""
    patience_before: float | None = None
    patience_after: float | None = None
    action_kind: str = ""
    action_text: str = ""
    tool: str | None = Field(default=None, description="The tool of a tool call.")
    tool_args: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")
    asked_slots: list[str] = Field(default_factory=list)
    reply_kind: str | None = None
    reply_text: str | None = None
    disclosures: list[dict[str, Any]] = Field(default_factory=list)
    observations: list[dict[str, Any]] = Field(default_factory=list)
    charges: list[dict[str, Any]] = Field(default_factory=list)
    shifts: list[dict[str, Any]] = Field(default_factory=list)
    verdicts: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class TimelinePoint(StrictMutable):
    """One marker on the shift timeline."""

    turn: int
    marker: Marker
    patience: float | None
    label: str


_ACTION_MARKERS: dict[str, Marker] = {
    "tool": "tool",
    "question": "question",
    "malformed": "malformed",
}


def _action_text(ev: AgentActed) -> tuple[str, str]:
    a = ev.action
    if a.kind == "env":
        args = ", ".join(f"{k}={v!r}" for k, v in a.action.args.items())
        return "tool", f"{a.action.tool}({args})"
    if a.kind == "ask":
        return "question", a.text
    if a.kind == "propose":
        return "proposal", a.text or "(final answer)"
    return "malformed", a.raw or "; ".join(a.problems)


def turn_records(events: Sequence[Event]) -> list[TurnRecord]:
    """Group events by agent turn (turn 0 holds what happened before the first action)."""
    records: dict[int, TurnRecord] = {}

    def rec(turn: int) -> TurnRecord:
        if turn not in records:
            records[turn] = TurnRecord(turn=turn)
        return records[turn]

    for ev in events:
        r = rec(ev.turn)
        if isinstance(ev, EpisodeStarted):
            r.patience_before = r.patience_after = ev.budget
            r.intent_id = ev.sample.root_intent_id
            r.notes.append(f"episode started · budget {ev.budget:g} · turn cap {ev.turn_cap}")
        elif isinstance(ev, TurnStarted):
            r.patience_before = ev.patience
            r.patience_after = ev.patience
            r.intent_id = ev.intent_id
        elif isinstance(ev, AgentActed):
            r.action_kind, r.action_text = _action_text(ev)
            r.asked_slots = list(ev.asked_slots)
            if ev.action.kind == "env":
                r.tool, r.tool_args = ev.action.action.tool, dict(ev.action.action.args)
        elif isinstance(ev, UserReplied):
            r.reply_kind, r.reply_text = ev.reply_kind, ev.text
            r.disclosures += [d.model_dump(mode="json") for d in ev.disclosures]
        elif isinstance(ev, ObservationRecorded):
            r.observations.append(
                {"tool": ev.action.tool, "args": ev.action.args, "ok": ev.ok, "text": ev.text}
            )
        elif isinstance(ev, PatienceCharged):
            r.charges.append(
                ev.model_dump(mode="json", include={"reason", "cost", "before", "after"})
            )
            r.patience_after = ev.after
        elif isinstance(ev, ShiftFired):
            r.shifts.append(
                {
                    "event": "fired",
                    "operator": ev.edge.operator,
                    "delta": ev.edge.delta,
                    "gt_moved": ev.edge.gt_moved,
                    "dst": ev.edge.dst,
                    "trigger": "agent question" if ev.trigger else "scheduled",
                }
            )
        elif isinstance(ev, ShiftDue):
            r.shifts.append({"event": "due", "threshold": ev.threshold})
        elif isinstance(ev, ShiftSkipped):
            r.shifts.append({"event": "skipped", "reason": ev.reason, "threshold": ev.threshold})
        elif isinstance(ev, ProposalJudged):
            r.verdicts.append(
                ev.model_dump(
                    mode="json", include={"accepted", "reason", "score", "via", "intent_id"}
                )
            )
        elif isinstance(ev, StaleCheck):
            verdict = "valid" if ev.valid_under_old else "invalid"
            r.notes.append(f"stale check: {verdict} for the superseded goal")
        elif isinstance(ev, ForcedFinal):
            r.notes.append(f"forced final answer ({ev.reason.replace('_', ' ')})")
        elif isinstance(ev, Repair):
            r.notes.append(f"repair ({ev.target}): {ev.detail}")
        elif isinstance(ev, EpisodeEnded):
            r.notes.append(
                f"ended: {plain_ending(str(ev.outcome), str(ev.reason))} · "
                f"patience left {ev.patience_left:g}"
            )
            r.patience_after = ev.patience_left
    return [records[t] for t in sorted(records)]


def timeline_points(events: Sequence[Event]) -> list[TimelinePoint]:
    """Return the markers of the shift timeline in event order, each with current patience."""
    points: list[TimelinePoint] = []
    patience: float | None = None
    for ev in events:
        if isinstance(ev, EpisodeStarted):
            patience = ev.budget
        elif isinstance(ev, TurnStarted):
            patience = ev.patience
        elif isinstance(ev, PatienceCharged):
            patience = ev.after
        marker: Marker | None = None
        label = ""
        if isinstance(ev, AgentActed):
            kind, text = _action_text(ev)
            marker = _ACTION_MARKERS.get(kind)
            label = text[:80]
        elif isinstance(ev, ProposalJudged):
            marker = "proposal_accepted" if ev.accepted else "proposal_rejected"
            label = ev.reason
        elif isinstance(ev, ShiftDue):
            marker, label = "shift_due", f"threshold {ev.threshold:g}"
        elif isinstance(ev, ShiftFired):
            marker, label = "shift_fired", f"{ev.edge.operator}: {ev.edge.delta}"
        elif isinstance(ev, ShiftSkipped):
            marker, label = "shift_skipped", ev.reason
        elif isinstance(ev, ForcedFinal):
            marker, label = "forced_final", ev.reason
        elif isinstance(ev, EpisodeEnded):
            marker, label = "end", plain_ending(str(ev.outcome), str(ev.reason))
            patience = ev.patience_left
        if marker is not None:
            points.append(
                TimelinePoint(turn=ev.turn, marker=marker, patience=patience, label=label)
            )
    return points


def matching_turns(records: Sequence[TurnRecord], needle: str) -> list[int]:
    """Return the turns whose text (action, reply, observations, notes) contains ``needle``."""
    q = needle.casefold().strip()
    if not q:
        return []
    hits = []
    for r in records:
        texts = [r.action_text, r.reply_text or "", *r.notes]
        texts += [str(o["text"]) for o in r.observations]
        if any(q in t.casefold() for t in texts):
            hits.append(r.turn)
    return hits


def align_turns(
    left: Sequence[TurnRecord], right: Sequence[TurnRecord]
) -> list[tuple[TurnRecord | None, TurnRecord | None]]:
    """Pair two episodes' turns by turn number (for side-by-side comparison)."""
    lmap = {r.turn: r for r in left}
    rmap = {r.turn: r for r in right}
    return [(lmap.get(t), rmap.get(t)) for t in sorted(set(lmap) | set(rmap))]
