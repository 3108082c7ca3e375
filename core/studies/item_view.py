"""What an annotator sees of an item: built from an allow-list, blind by default.

Blind mode hides the model identity (agent spec), the method, the user voice, the run, the
episode id (replaced by a neutral reference 'A' / 'B'), the outcome, the platform score and
session metadata, and every other annotator's labels. The answer to a question being asked
(the persona for ``persona_id`` / ``same_persona`` studies, the sample's fault types for
``fault_type`` studies) is hidden even when the study is not blind. Fields are copied in from
an explicit allow-list, never deleted from a fuller object.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from core.model.base import Strict
from core.store import Store
from core.studies.labels import APPLIES_TO, episodes_of, label_choices, list_labels
from core.studies.models import LabelKind, LabelRecord, StudyCondition
from core.studies.queue import get_assignment
from core.studies.studies import condition_of, get_study

LineRole = Literal["user", "agent", "environment", "system"]


class TranscriptLine(Strict):
    """One line of a transcript as shown for labelling.

    A tool call also carries its tool name and arguments (``tool``, ``args``), so a page can
    show it as the Inspect page does (a title and ``name: value`` lines) instead of ``text``.
    """

    turn: int
    role: LineRole
    text: str
    tool: str | None = Field(default=None, description="The tool of a tool-call line.")
    args: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")


class EpisodeCard(Strict):
    """One episode as shown to an annotator."""

    ref: str = Field(description="'A' / 'B' in blind mode, else the episode id.")
    episode_id: str | None = Field(default=None, description="Only when not blind.")
    benchmark: str
    query: str = Field(description="The opening request.")
    transcript: tuple[TranscriptLine, ...]
    n_user_turns: int
    method: str | None = None
    agent: str | None = None
    user_voice: str | None = None
    persona_id: str | None = None
    outcome: str | None = None
    run_id: str | None = None


class SessionCard(Strict):
    """An imported production session as shown to an annotator."""

    ref: str
    session_id: str | None = None
    transcript: tuple[TranscriptLine, ...]
    n_tool_calls: int
    platform_score: float | None = None
    metadata: dict[str, Any] | None = None


class ShownLabel(Strict):
    """A label as shown on an item (no target ids, which could unblind)."""

    annotator: str
    label_kind: str
    value: Any
    turn: int | None = None
    created_at: str


class ItemView(Strict):
    """Everything the Annotate page needs for one queue item."""

    assignment_id: int
    study_name: str
    instructions: str
    role: str
    target_kind: str
    blind: bool
    label_kinds: tuple[LabelKind, ...] = Field(description="Kinds asked on this item.")
    choices: dict[str, list[Any]] = Field(description="Closed choices per categorical kind.")
    condition: StudyCondition | None = None
    episodes: tuple[EpisodeCard, ...] = ()
    session: SessionCard | None = None
    sample_query: str | None = None
    my_labels: tuple[ShownLabel, ...] = ()
    other_labels: tuple[ShownLabel, ...] | None = Field(
        default=None, description="None in blind mode."
    )


def _action_text(action: dict[str, Any]) -> str:
    kind = action.get("kind")
    if kind == "env":
        op = action.get("action") or {}
        args = json.dumps(op.get("args") or {}, ensure_ascii=False, sort_keys=True)
        return f"[tool] {op.get('tool', '?')}({args})"
    if kind == "ask":
        return str(action.get("text", ""))
    if kind == "propose":
        return "[proposal] " + str(action.get("text", ""))
    return "[malformed] " + str(action.get("raw", ""))


def episode_transcript(store: Store, episode_id: str) -> tuple[str, list[TranscriptLine]]:
    """Return (opening request, transcript lines) rebuilt from the episode's stored events.

    Reads events as plain JSON, so it keeps working across event-model versions; only
    agent-visible and user-visible text is taken (no hidden state).
    """
    query = ""
    lines: list[TranscriptLine] = []
    for body in store.event_jsons(episode_id):
        ev = json.loads(body)
        kind, turn = ev.get("kind"), int(ev.get("turn", 0))
        if kind == "episode_started":
            query = str((ev.get("sample") or {}).get("query", ""))
            lines.append(TranscriptLine(turn=0, role="user", text=query))
        elif kind == "agent_action":
            action = ev.get("action") or {}
            op = (action.get("action") or {}) if action.get("kind") == "env" else {}
            lines.append(
                TranscriptLine(
                    turn=turn,
                    role="agent",
                    text=_action_text(action),
                    tool=str(op["tool"]) if op.get("tool") else None,
                    args=dict(op.get("args") or {}),
                )
            )
        elif kind == "user_reply":
            lines.append(TranscriptLine(turn=turn, role="user", text=str(ev.get("text", ""))))
        elif kind == "forced_final":
            lines.append(TranscriptLine(turn=turn, role="user", text=str(ev.get("message", ""))))
        elif kind == "observation":
            lines.append(
                TranscriptLine(turn=turn, role="environment", text=str(ev.get("text", "")))
            )
    return query, lines


def episode_card(
    store: Store, episode_id: str, *, blind: bool, ref: str, hide_persona: bool
) -> EpisodeCard:
    """Build one episode card from an allow-list of header fields."""
    header = json.loads(store.header_json(episode_id))
    query, lines = episode_transcript(store, episode_id)
    row = store.conn.execute(
        "SELECT outcome FROM episodes WHERE episode_id=?", (episode_id,)
    ).fetchone()
    card: dict[str, Any] = {
        "ref": ref if blind else episode_id,
        "benchmark": str(header.get("benchmark", "")),
        "query": query,
        "transcript": tuple(lines),
        "n_user_turns": sum(1 for ln in lines if ln.role == "user"),
    }
    if not blind:
        card.update(
            episode_id=episode_id,
            method=header.get("method"),
            agent=header.get("agent"),
            user_voice=header.get("user_voice"),
            outcome=row[0] if row else None,
            run_id=header.get("run_id"),
        )
        if not hide_persona:
            card["persona_id"] = header.get("persona_id")
    return EpisodeCard(**card)


def _call_args(raw: Any) -> dict[str, Any]:
    """A logged call's arguments as a dict (JSON text is parsed; anything else is kept whole)."""
    if isinstance(raw, dict):
        return dict(raw)
    try:
        parsed = json.loads(str(raw))
    except ValueError:
        return {"arguments": str(raw)}
    return dict(parsed) if isinstance(parsed, dict) else {"arguments": parsed}


def session_card(store: Store, session_id: str, *, blind: bool) -> SessionCard:
    """Build a session card (score and metadata only when not blind)."""
    from core.studies.sessions.store import get_session

    s = get_session(store, session_id)
    lines: list[TranscriptLine] = []
    turn = 0
    for m in s.messages:
        if m.role == "user":
            turn += 1
        if m.role == "assistant":
            if m.content:
                lines.append(TranscriptLine(turn=turn, role="agent", text=m.content))
            for call in m.tool_calls:
                lines.append(
                    TranscriptLine(
                        turn=turn,
                        role="agent",
                        text=f"[tool] {call.function.name}({call.function.arguments})",
                        tool=call.function.name,
                        args=_call_args(call.function.arguments),
                    )
                )
        else:
            role: LineRole = {"user": "user", "tool": "environment"}.get(  # type: ignore[assignment]
                m.role, "system"
            )
            lines.append(TranscriptLine(turn=turn, role=role, text=m.content or ""))
    return SessionCard(
        ref="S" if blind else session_id,
        session_id=None if blind else session_id,
        transcript=tuple(lines),
        n_tool_calls=s.n_tool_calls,
        platform_score=None if blind else s.score,
        metadata=None if blind else dict(s.metadata),
    )


def _shown(r: LabelRecord) -> ShownLabel:
    return ShownLabel(
        annotator=r.annotator,
        label_kind=r.label_kind,
        value=r.value,
        turn=r.turn,
        created_at=r.created_at,
    )


def item_view(store: Store, assignment_id: int) -> ItemView:
    """Return what the assigned annotator may see of one queue item.

    Args:
        store: The open store.
        assignment_id: The queue item.

    Returns:
        The view model (blind per the study spec).
    """
    a = get_assignment(store, assignment_id)
    st = get_study(store, a["study_id"])
    spec, kind, tid = st.spec, a["target_kind"], a["target_id"]
    blind = spec.blind
    asked = (
        tuple(k for k in spec.label_kinds if kind in APPLIES_TO[k]) if a["role"] == "label" else ()
    )
    hide_persona = bool({"persona_id", "same_persona"} & set(spec.label_kinds))
    view: dict[str, Any] = {
        "assignment_id": assignment_id,
        "study_name": spec.name,
        "instructions": spec.description,
        "role": a["role"],
        "target_kind": kind,
        "blind": blind,
        "label_kinds": asked,
        "choices": {k: list(c) for k in asked if (c := label_choices(k)) is not None},
        "condition": condition_of(a["condition"]),
    }
    if kind in ("episode", "episode_pair"):
        eps = episodes_of(kind, tid)
        view["episodes"] = tuple(
            episode_card(store, ep, blind=blind, ref="AB"[i], hide_persona=hide_persona)
            for i, ep in enumerate(eps)
        )
    elif kind == "session":
        view["session"] = session_card(store, tid, blind=blind)
    elif kind == "sample":
        row = store.conn.execute("SELECT body FROM samples WHERE sample_id=?", (tid,)).fetchone()
        view["sample_query"] = json.loads(row[0]).get("query", "") if row else ""
    labels = list_labels(
        store, study_id=st.study_id, target_kind=kind, target_id=tid, latest_only=True
    )
    view["my_labels"] = tuple(_shown(r) for r in labels if r.annotator == a["annotator_id"])
    if not blind:
        view["other_labels"] = tuple(_shown(r) for r in labels if r.annotator != a["annotator_id"])
    return ItemView(**view)
