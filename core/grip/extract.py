"""Per-episode GRIP extraction: moving target, valid extraction, final commit, bucket.

The extraction reads the stored (JSON) form of the events, so the same code serves the typed
path (:func:`score_episode`, events as pydantic models) and the fast columnar path of
:mod:`core.grip.cache` (events as dicts straight from ``json.loads``).

Rules (DECISIONS.md, GRIP ``grip-1``):

* The *target* starts as the sample's ``hidden_slots``. An edit shift (refine / relax /
  substitute) re-anchors it: ``target := (target − removed) ∪ added ∪ changed`` where the
  slot sets compare the source and destination intents of the graph; a pivot replaces it with
  the destination's ``dst_slots``. Extractions of added or changed slots become stale.
* A disclosure is a *valid extraction* when it answers a question (``how="answer"``) or a
  rejected proposal (``how="rejection_hint"``) and reflects the current intent; volunteered and
  context disclosures never count. An owed slot whose true value (≥ 3 characters, lower-cased,
  JSON lists expanded) appears in an environment observation before the agent itself ever wrote
  it counts too (environment discovery).
* The *final commit* is the last adjudicated proposal; ``full_at_commit`` = a non-empty target
  contained in the valid extractions at that moment.
* Buckets: UNSCORED (not ended, ERROR, or a shift the graph cannot replay); NO_HIDDEN_INTENT
  (empty target at the commit); success → EARNED / INFERRED; failure → RECOVERED_NOT_SOLVED
  (target fully extracted at some point), PREMATURE (proposed without ever asking), INCOMPLETE.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.grip.record import Bucket, EpisodeRecord

SCORE_BENCHMARKS: frozenset[str] = frozenset({"webshop"})
"""Benchmarks that report WebShop's Score column beside Success."""

CREDITED_HOW: frozenset[str] = frozenset({"answer", "rejection_hint"})
"""Disclosure channels that count as extraction."""

QUESTION_REPLY_KINDS: frozenset[str] = frozenset(
    {"answer", "decline", "already_asked", "confusion", "context"}
)
"""Reply kinds that answer a question (a scoreable question got one of these)."""

NEEDED_KINDS: tuple[str, ...] = (
    "episode_started",
    "agent_action",
    "user_reply",
    "observation",
    "shift_fired",
    "proposal_judged",
    "stale_check",
    "episode_ended",
)
"""Event kinds the extraction reads (the others never change a GRIP quantity)."""

MIN_DISCOVERY_CHARS = 3
"""Shortest value string that environment discovery may match."""

Cond = tuple[str, str]
"""A condition reduced to (op, canonical value text)."""


@dataclass(frozen=True)
class EpisodeMeta:
    """Index fields of an episode (from its header or the store's episode row)."""

    episode_id: str
    sample_id: str
    benchmark: str
    method: str
    persona: str
    seed: int
    backbone: str = ""
    user_voice: str = ""
    run_id: str | None = None
    shifts_on: bool = True


@dataclass(frozen=True)
class StartInfo:
    """What the extraction needs from the ``episode_started`` event (shared per sample)."""

    hidden_slots: tuple[str, ...]
    root_intent_id: str
    k: int
    budget: float | None
    nodes: Mapping[str, Mapping[str, Cond]] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)


def _value_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def discovery_strings(value: Any) -> tuple[str, ...]:
    """Return the lower-cased strings whose joint appearance reveals ``value``.

    JSON lists (τ² canonical values) expand to their elements; booleans and strings shorter
    than :data:`MIN_DISCOVERY_CHARS` cannot be discovered (empty tuple).

    >>> discovery_strings('["Red", "blue"]'), discovery_strings(40), discovery_strings("black")
    (('red', 'blue'), (), ('black',))
    """
    if isinstance(value, bool):
        return ()
    items: list[Any] = [value]
    if isinstance(value, str) and value[:1] in ("[", '"'):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        items = list(parsed) if isinstance(parsed, list) else [parsed]
    out: list[str] = []
    for item in items:
        if isinstance(item, bool):
            continue
        text = _value_text(item).strip().lower()
        if len(text) >= MIN_DISCOVERY_CHARS:
            out.append(text)
    if len(out) != len(items):
        return ()
    return tuple(out)


def start_info(start: Mapping[str, Any]) -> StartInfo:
    """Reduce an ``episode_started`` event (stored form) to what extraction needs.

    Args:
        start: The event as a JSON dict.

    Returns:
        Hidden slots, root id, fault count, budget and every graph node's conditions.
    """
    sample = start["sample"]
    graph = start.get("graph") or {}
    nodes: dict[str, dict[str, Cond]] = {}
    values: dict[str, dict[str, tuple[str, ...]]] = {}
    node_list = []
    if graph:
        node_list = [graph["root"], *graph.get("children", ())]
    for node in node_list:
        conds: dict[str, Cond] = {}
        vals: dict[str, tuple[str, ...]] = {}
        for c in node.get("conditions", ()):
            conds[c["slot"]] = (c.get("op", "="), _value_text(c["value"]))
            vals[c["slot"]] = discovery_strings(c["value"])
        nodes[node["intent_id"]] = conds
        values[node["intent_id"]] = vals
    budget = start.get("budget")
    return StartInfo(
        hidden_slots=tuple(sample.get("hidden_slots", ())),
        root_intent_id=str(sample["root_intent_id"]),
        k=len(sample.get("faults", ())),
        budget=float(budget) if budget is not None else None,
        nodes=nodes,
        values=values,
    )


def _flatten(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _flatten(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, out)
    elif value is not None:
        out.append(_value_text(value))


def _action_text(action: Mapping[str, Any]) -> str:
    """Everything the agent wrote in one action, lower-cased."""
    if action.get("kind") == "env":
        inner = action.get("action") or {}
        parts = [str(inner.get("tool", ""))]
        _flatten(inner.get("args") or {}, parts)
        return " ".join(parts).lower()
    return str(action.get("text") or action.get("raw") or "").lower()


Row = tuple[str, int, Any, Any, Any, Any]
"""One event reduced to ``(kind, turn, a, b, c, d)`` (fields per kind: see :data:`ROW_SQL`).

* ``agent_action``: action kind, asked slots, the action (for what the agent wrote), –
* ``user_reply``: reply kind, intent id, asked slots, disclosures
* ``observation``: text · ``shift_fired``: the whole event · ``stale_check``: valid_under_old
* ``proposal_judged``: accepted, score · ``episode_ended``: outcome, patience left, turns

List and object fields may be Python values or their JSON text (as SQLite returns them).
"""

ROW_SQL = """CASE e.kind
 WHEN 'agent_action' THEN json_extract(e.body, '$.action.kind')
 WHEN 'user_reply' THEN json_extract(e.body, '$.reply_kind')
 WHEN 'observation' THEN json_extract(e.body, '$.text')
 WHEN 'proposal_judged' THEN json_extract(e.body, '$.accepted')
 WHEN 'stale_check' THEN json_extract(e.body, '$.valid_under_old')
 WHEN 'episode_ended' THEN json_extract(e.body, '$.outcome')
 ELSE e.body END,
CASE e.kind
 WHEN 'agent_action' THEN json_extract(e.body, '$.asked_slots')
 WHEN 'user_reply' THEN json_extract(e.body, '$.intent_id')
 WHEN 'proposal_judged' THEN json_extract(e.body, '$.score')
 WHEN 'episode_ended' THEN json_extract(e.body, '$.patience_left') END,
CASE e.kind
 WHEN 'agent_action' THEN json_extract(e.body, '$.action')
 WHEN 'user_reply' THEN json_extract(e.body, '$.asked')
 WHEN 'episode_ended' THEN json_extract(e.body, '$.turns') END,
CASE e.kind WHEN 'user_reply' THEN json_extract(e.body, '$.disclosures') END"""
"""SQL selecting the ``a, b, c, d`` fields of :data:`Row` from ``events e`` (JSON in C)."""


def _json(v: Any) -> Any:
    if isinstance(v, str):
        return json.loads(v)
    return v


def _seq(v: Any) -> Any:
    if v is None or v == "[]":
        return ()
    return _json(v)


def to_row(ev: Mapping[str, Any]) -> Row | None:
    """Reduce one stored event dict to a :data:`Row` (None for kinds GRIP ignores)."""
    kind = str(ev.get("kind"))
    turn = int(ev.get("turn", 0))
    if kind == "agent_action":
        action = ev.get("action") or {}
        return (kind, turn, action.get("kind"), ev.get("asked_slots"), action, None)
    if kind == "user_reply":
        return (
            kind,
            turn,
            ev.get("reply_kind"),
            ev.get("intent_id"),
            ev.get("asked"),
            ev.get("disclosures"),
        )
    if kind == "observation":
        return (kind, turn, ev.get("text"), None, None, None)
    if kind == "shift_fired":
        return (kind, turn, ev, None, None, None)
    if kind == "proposal_judged":
        return (kind, turn, ev.get("accepted"), ev.get("score"), None, None)
    if kind == "stale_check":
        return (kind, turn, ev.get("valid_under_old"), None, None, None)
    if kind == "episode_ended":
        return (kind, turn, ev.get("outcome"), ev.get("patience_left"), ev.get("turns"), None)
    return None


def extract_events(meta: EpisodeMeta, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Compute the GRIP record from stored event dicts (``episode_started`` first)."""
    info: StartInfo | None = None
    rows: list[Row] = []
    for ev in events:
        if ev.get("kind") == "episode_started":
            if info is None:
                info = start_info(ev)
            continue
        row = to_row(ev)
        if row is not None:
            rows.append(row)
    return extract(meta, info, rows)


def extract(meta: EpisodeMeta, start: StartInfo | None, events: Iterable[Row]) -> dict[str, Any]:
    """Compute the GRIP record of one episode from its reduced events.

    Args:
        meta: The episode's index fields.
        start: The reduced ``episode_started`` event (None: the episode has none; UNSCORED).
        events: The other events as :data:`Row` tuples in ``seq`` order.

    Returns:
        A dict with exactly the fields of :class:`~core.grip.record.EpisodeRecord`.
    """
    info = start
    target: set[str] = set(info.hidden_slots) if info else set()
    cur_id = info.root_intent_id if info else ""
    extracted: set[str] = set()
    agent_actions: list[Any] = []
    written_parts: list[str] = []
    readable = info is not None
    ever_full = False
    n_questions = n_scoreable = n_aimed = n_proposals = 0
    n_shifts = n_moving = n_user_turns = 0
    pending_ask: Any = None
    last_moving_turn: int | None = None
    last_shift_turn: int | None = None
    accept_turns: list[int] = []
    commit: tuple[bool, bool] | None = None  # (target non-empty, full) at the last proposal
    last_score: float | None = None
    stale: bool | None = None
    outcome: str | None = None
    patience_left: float | None = None
    turns: int | None = None

    def full() -> bool:
        return bool(target) and target <= extracted

    for kind, turn, a, b, c, d in events:
        if kind == "agent_action":
            if a == "ask":
                n_questions += 1
                pending_ask = b if b is not None else ()
            else:
                pending_ask = None
            agent_actions.append(c)
        elif kind == "user_reply":
            if a != "mute":
                n_user_turns += 1
            disclosures = _seq(d)
            if pending_ask is not None and a in QUESTION_REPLY_KINDS:
                mapped = set(_seq(c) or _seq(pending_ask))
                mapped.update(x["slot"] for x in disclosures if x.get("how") == "answer")
                if readable:
                    n_scoreable += 1
                    if any(s in target and s not in extracted for s in mapped):
                        n_aimed += 1
            pending_ask = None
            if b is None or b == cur_id:
                for x in disclosures:
                    if x.get("how") in CREDITED_HOW:
                        extracted.add(x["slot"])
            ever_full = ever_full or full()
        elif kind == "observation":
            if info is not None and readable and target - extracted and a:
                vals = info.values.get(cur_id, {})
                owed = [s for s in target - extracted if vals.get(s)]
                if owed:
                    text = str(a).lower()
                    while len(written_parts) < len(agent_actions):
                        written_parts.append(
                            _action_text(_json(agent_actions[len(written_parts)]) or {})
                        )
                    written = " ".join(written_parts)
                    for slot in owed:
                        strings = vals[slot]
                        if all(x in text for x in strings) and not any(
                            x in written for x in strings
                        ):
                            extracted.add(slot)
                    ever_full = ever_full or full()
        elif kind == "shift_fired":
            ev = _json(a)
            edge = ev["edge"]
            n_shifts += 1
            last_shift_turn = turn
            if edge.get("gt_moved"):
                n_moving += 1
                last_moving_turn = turn
            src = info.nodes.get(cur_id) if info else None
            dst = info.nodes.get(edge["dst"]) if info else None
            if edge.get("operator") == "pivot":
                target = set(ev.get("dst_slots") or ())
                if src is not None and dst is not None:
                    extracted = {s for s in extracted if s in dst and src.get(s) == dst[s]}
                else:
                    extracted = set()
            elif src is None or dst is None:
                readable = False
            else:
                removed = set(src) - set(dst)
                added = set(dst) - set(src)
                changed = {s for s in set(src) & set(dst) if src[s] != dst[s]}
                target = (target - removed) | added | changed
                extracted -= added | changed | removed
            cur_id = str(edge["dst"])
            ever_full = ever_full or full()
        elif kind == "proposal_judged":
            n_proposals += 1
            accepted = bool(a)
            last_score = float(b) if b is not None else (1.0 if accepted else 0.0)
            commit = (bool(target), full())
            if accepted:
                accept_turns.append(turn)
        elif kind == "stale_check":
            stale = bool(a)
        elif kind == "episode_ended":
            outcome = str(a)
            patience_left = float(b) if b is not None else 0.0
            turns = int(c) if c is not None else 0

    scored = outcome is not None and outcome != "ERROR"
    success = outcome == "SUCCESS"
    moving = n_moving > 0
    if commit is None:
        commit = (bool(target), False)
    hidden_target: bool | None = commit[0] if (scored and readable) else None
    full_at_commit = commit[1]

    if not scored or not readable:
        bucket = Bucket.UNSCORED
    elif not hidden_target:
        bucket = Bucket.NO_HIDDEN_INTENT
    elif success:
        bucket = Bucket.EARNED if full_at_commit else Bucket.INFERRED
    elif ever_full:
        bucket = Bucket.RECOVERED_NOT_SOLVED
    elif n_proposals > 0 and n_questions == 0:
        bucket = Bucket.PREMATURE
    else:
        bucket = Bucket.INCOMPLETE

    accept_turn: int | None = None
    if success and accept_turns:
        after = [t for t in accept_turns if last_moving_turn is None or t >= last_moving_turn]
        accept_turn = after[0] if after else None

    def on_target(v: float) -> float | None:
        return v if (scored and hidden_target) else None

    score_val: float | None = None
    if scored and meta.benchmark in SCORE_BENCHMARKS:
        score_val = last_score if last_score is not None else 0.0

    reaction: float | None = None
    if scored and success and moving and accept_turn is not None and last_moving_turn is not None:
        reaction = float(accept_turn - last_moving_turn)

    return {
        "episode_id": meta.episode_id,
        "run_id": meta.run_id,
        "sample_id": meta.sample_id,
        "benchmark": meta.benchmark,
        "method": meta.method,
        "persona": meta.persona,
        "backbone": meta.backbone,
        "user_voice": meta.user_voice,
        "seed": meta.seed,
        "k": info.k if info else 0,
        "shifts_on": meta.shifts_on,
        "outcome": outcome,
        "scored": scored,
        "readable": readable,
        "bucket": bucket.value,
        "hidden_target": hidden_target,
        "n_questions": n_questions,
        "n_scoreable": n_scoreable,
        "n_aimed": n_aimed,
        "n_proposals": n_proposals,
        "n_shifts": n_shifts,
        "n_moving_shifts": n_moving,
        "n_user_turns": n_user_turns,
        "turns": turns,
        "budget": info.budget if info else None,
        "ever_full": ever_full,
        "last_shift_turn": last_shift_turn,
        "accept_turn": accept_turn,
        "success": (1.0 if success else 0.0) if scored else None,
        "score": score_val,
        "earned": on_target(1.0 if bucket == Bucket.EARNED else 0.0),
        "inferred": on_target(1.0 if bucket == Bucket.INFERRED else 0.0),
        "aim": (n_aimed / n_scoreable) if (scored and readable and n_scoreable) else None,
        "recovery": on_target(1.0 if full_at_commit else 0.0),
        "patience": patience_left if scored else None,
        "staleness": (
            (1.0 if stale else 0.0)
            if (scored and not success and moving and stale is not None)
            else None
        ),
        "reaction": reaction,
        "postshift": (1.0 if success else 0.0) if (scored and moving) else None,
    }


def meta_from_header(header: Any) -> EpisodeMeta:
    """Build :class:`EpisodeMeta` from an ``EpisodeHeader``."""
    return EpisodeMeta(
        episode_id=header.episode_id,
        sample_id=header.sample_id,
        benchmark=header.benchmark,
        method=header.method,
        persona=header.persona_id,
        seed=header.seed,
        backbone=header.agent,
        user_voice=header.user_voice,
        run_id=header.run_id,
        shifts_on=bool(header.config.shifts_enabled),
    )


def score_episode(header: Any, events: Sequence[Any]) -> EpisodeRecord:
    """Score one episode from its typed header and events (the reference path).

    Args:
        header: The ``EpisodeHeader``.
        events: The typed events in order (``EpisodeStarted`` first).

    Returns:
        The validated per-episode record.
    """
    dumped = [e.model_dump(mode="json") for e in events]
    return EpisodeRecord.model_validate(extract_events(meta_from_header(header), dumped))
