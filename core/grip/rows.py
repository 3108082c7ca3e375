"""Typed GRIP rows: one small record per event kind GRIP reads, and the SQL that feeds them.

Each row kind names the event fields it carries as paths into the event models of
:mod:`core.model.events` (:data:`SOURCES`). The SQL of the columnar path (:data:`ROW_SQL`) is
generated from those paths and the typed path (:func:`row_of`) follows the same paths through a
stored event dict, so the two paths read the same fields by construction. :func:`schema_problems`
resolves every path against the pydantic models (the test suite asserts it finds none), so a
renamed event field fails a test instead of silently mis-scoring.

List and object fields hold either the decoded value (typed path) or its JSON text (SQLite's
``json_extract``); booleans may be 0 / 1. :func:`seq` and :func:`obj` decode them on use, so
fields the reducers never look at are never parsed.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeAlias

from pydantic import BaseModel

from core.model.episode import EpisodeHeader
from core.model.events import Event

JsonList: TypeAlias = str | Sequence[Any] | None
"""A list field: JSON text, the decoded list, or absent."""
JsonObject: TypeAlias = str | Mapping[str, Any] | None
"""An object field: JSON text, the decoded dict, or absent."""
Flag: TypeAlias = bool | int | None
"""A boolean field (SQLite returns 0 / 1)."""


class ActionRow(NamedTuple):
    """``agent_action``: what the agent did (and, for discovery, everything it wrote)."""

    turn: int
    action_kind: str | None
    asked_slots: JsonList
    action: JsonObject


class ReplyRow(NamedTuple):
    """``user_reply``: the reply's kind, the intent it reflects, asked slots, disclosures."""

    turn: int
    reply_kind: str | None
    intent_id: str | None
    asked: JsonList
    disclosures: JsonList


class ObservationRow(NamedTuple):
    """``observation``: the agent-visible text (environment discovery)."""

    turn: int
    text: str | None


class ShiftRow(NamedTuple):
    """``shift_fired``: the followed edge and the destination's slots."""

    turn: int
    dst: str
    operator: str | None
    gt_moved: Flag
    dst_slots: JsonList


class ProposalRow(NamedTuple):
    """``proposal_judged``: whether the proposal was accepted, and the host's score."""

    turn: int
    accepted: Flag
    score: float | None


class StaleRow(NamedTuple):
    """``stale_check``: whether the failed answer was right for the superseded intent."""

    turn: int
    valid_under_old: Flag


class EndRow(NamedTuple):
    """``episode_ended``: outcome, patience left and turns used."""

    turn: int
    outcome: str | None
    patience_left: float | None
    turns: int | None


Row: TypeAlias = ActionRow | ReplyRow | ObservationRow | ShiftRow | ProposalRow | StaleRow | EndRow
"""Any typed GRIP row."""


@dataclass(frozen=True)
class RowSource:
    """Where a row kind's fields come from: one event-model path per field after ``turn``."""

    row: type[Any]
    paths: tuple[str, ...]


SOURCES: dict[str, RowSource] = {
    "agent_action": RowSource(ActionRow, ("action.kind", "asked_slots", "action")),
    "user_reply": RowSource(ReplyRow, ("reply_kind", "intent_id", "asked", "disclosures")),
    "observation": RowSource(ObservationRow, ("text",)),
    "shift_fired": RowSource(ShiftRow, ("edge.dst", "edge.operator", "edge.gt_moved", "dst_slots")),
    "proposal_judged": RowSource(ProposalRow, ("accepted", "score")),
    "stale_check": RowSource(StaleRow, ("valid_under_old",)),
    "episode_ended": RowSource(EndRow, ("outcome", "patience_left", "turns")),
}
"""Row kind → its record type and the event fields (dotted paths) it carries, in order."""

ROW_KINDS: tuple[str, ...] = tuple(SOURCES)
"""Event kinds read as rows (``episode_started`` is read once per sample, see ``target``)."""

NESTED_PATHS: dict[str, tuple[str, ...]] = {
    "agent_action": ("action.action.tool", "action.action.args", "action.text", "action.raw"),
    "user_reply": ("disclosures.slot", "disclosures.how"),
    "episode_started": (
        "sample.hidden_slots",
        "sample.root_intent_id",
        "sample.faults",
        "graph.root.intent_id",
        "graph.children.intent_id",
        "graph.root.conditions.slot",
        "graph.root.conditions.op",
        "graph.root.conditions.value",
        "budget",
    ),
}
"""Fields the reducers read inside row values or from ``episode_started`` (checked likewise)."""

HEADER_PATHS: tuple[str, ...] = ("agent", "user_voice", "config.shifts_enabled", "config_hash")
"""Header fields the columnar path reads beside the ``episodes`` columns (in this order)."""

WIDTH = 4
"""Payload columns of :data:`ROW_SQL` (at least the widest row kind; the builders take four)."""
if max(len(s.paths) for s in SOURCES.values()) > WIDTH:  # pragma: no cover - a coding error
    raise RuntimeError("a row kind has more fields than ROW_SQL has columns: widen WIDTH")


def _json_path(path: str) -> str:
    return "$." + path


def _row_sql() -> str:
    cols = []
    for i in range(WIDTH):
        arms = " ".join(
            f"WHEN '{kind}' THEN json_extract(e.body, '{_json_path(src.paths[i])}')"
            for kind, src in SOURCES.items()
            if i < len(src.paths)
        )
        cols.append(f"CASE e.kind {arms} END")
    return ",\n".join(cols)


ROW_SQL = _row_sql()
"""SQL selecting the :data:`WIDTH` payload columns of every row kind from ``events e``."""

HEADER_SQL = ", ".join(f"json_extract(p.header, '{_json_path(p)}')" for p in HEADER_PATHS)
"""SQL selecting :data:`HEADER_PATHS` from ``episodes p``."""

Builder = Callable[[int, Any, Any, Any, Any], Any]


def _builder(src: RowSource) -> Builder:
    """A fast constructor from ``turn`` and the four SQL payload columns (extra ones dropped)."""
    cls, n, new = src.row, len(src.paths), tuple.__new__
    if n == 1:
        return lambda t, a, b, c, d: new(cls, (t, a))
    if n == 2:
        return lambda t, a, b, c, d: new(cls, (t, a, b))
    if n == 3:
        return lambda t, a, b, c, d: new(cls, (t, a, b, c))
    return lambda t, a, b, c, d: new(cls, (t, a, b, c, d))


BUILDERS: dict[str, Builder] = {k: _builder(s) for k, s in SOURCES.items()}
"""Row kind → function building its record from ``turn`` and the SQL payload columns."""

_SPLIT: dict[str, tuple[tuple[str, ...], ...]] = {
    k: tuple(tuple(p.split(".")) for p in s.paths) for k, s in SOURCES.items()
}


def _walk(ev: Mapping[str, Any], parts: tuple[str, ...]) -> Any:
    cur: Any = ev
    for p in parts:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


def row_of(ev: Mapping[str, Any]) -> Row | None:
    """Return the typed row of one stored event dict (None for kinds GRIP ignores)."""
    kind = str(ev.get("kind"))
    src = SOURCES.get(kind)
    if src is None:
        return None
    values = [_walk(ev, parts) for parts in _SPLIT[kind]]
    row: Row = src.row(int(ev.get("turn", 0)), *values)
    return row


def seq(v: Any) -> Any:
    """Decode a list field (JSON text or a sequence); absent or empty → ``()``."""
    if v is None or v == "[]":
        return ()
    if isinstance(v, str):
        return json.loads(v)
    return v


def obj(v: Any) -> Any:
    """Decode an object field (JSON text or a mapping); absent or null → ``{}``."""
    out = json.loads(v) if isinstance(v, str) else v
    return out or {}


# -- the schema check ------------------------------------------------------------------------


def event_models() -> dict[str, type[BaseModel]]:
    """Event kind → its pydantic model (from the ``Event`` union)."""
    union = typing.get_args(Event)[0]
    out: dict[str, type[BaseModel]] = {}
    for cls in typing.get_args(union):
        out[str(cls.model_fields["kind"].default)] = cls
    return out


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Pydantic models inside an annotation (through Annotated, unions, tuples and lists)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out.extend(_models_in(arg))
    return out


def resolve(model: type[BaseModel], path: str) -> str | None:
    """Follow a dotted path through a model's fields; return a problem, or None when it exists.

    A part may be found in any member of a union (``action.text`` exists on ``Ask``).
    """
    current: list[type[BaseModel]] = [model]
    for i, part in enumerate(path.split(".")):
        found = [m.model_fields[part] for m in current if part in m.model_fields]
        if not found:
            where = ".".join(path.split(".")[:i]) or "<event>"
            return f"{model.__name__}: no field {part!r} under {where} (path {path!r})"
        current = [m for f in found for m in _models_in(f.annotation)]
    return None


def schema_problems() -> list[str]:
    """Every row source, nested path and header path that the models do not have."""
    models = event_models()
    problems: list[str] = []
    for kind, src in SOURCES.items():
        if kind not in models:
            problems.append(f"row kind {kind!r} is not an event kind")
            continue
        fields = src.row._fields
        if fields[0] != "turn" or len(fields) != len(src.paths) + 1:
            problems.append(f"{src.row.__name__}: fields {fields} do not match {src.paths}")
        problems.extend(p for p in (resolve(models[kind], q) for q in src.paths) if p)
    for kind, paths in NESTED_PATHS.items():
        problems.extend(p for p in (resolve(models[kind], q) for q in paths) if p)
    problems.extend(p for p in (resolve(EpisodeHeader, q) for q in HEADER_PATHS) if p)
    return problems
