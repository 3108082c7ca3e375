"""Exporting a study: labels, plays, every turn's words and reading, surveys and timings.

``driftbench studies export STUDY --format csv|jsonl|parquet --out DIR`` writes one file per
table (empty tables too, so a script finds every file):

* ``labels`` — every label of the study (annotator, target, kind, value, turn, self-played,
  seconds, time);
* ``plays`` — the study's play episodes (episode id, annotator, role, sample, persona, method,
  agent, status, outcome, assignment);
* ``turns`` — per play episode, every user turn: the agent's message it answers, the user's
  words, who wrote them (human / simulator), and for typed replies the reader's reading
  (reader, act, slots read, contradictions, deliberate), the person's corrections (added,
  removed) and the final disclosures the agent learned;
* ``surveys`` — the end survey of each play (one per person and episode);
* ``timings`` — every assignment (status, opened, completed, seconds between).

Lists and objects are JSON text in CSV and Parquet cells; JSONL keeps them structured.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from core.errors import ConfigError
from core.model.events import AgentActed, ReplyRead, UserReplied
from core.store import Store
from core.studies.schema import ensure_study_schema
from core.studies.studies import get_study

ExportFormat = Literal["csv", "jsonl", "parquet"]
TABLES: tuple[str, ...] = ("labels", "plays", "turns", "surveys", "timings")


def _labels(store: Store, study_id: str) -> list[dict[str, Any]]:
    cur = store.conn.execute(
        "SELECT annotation_id, annotator, target_kind, target_id, label_kind, value, turn, "
        "self_played, seconds, created_at FROM annotations WHERE study_id=? "
        "ORDER BY annotation_id",
        (study_id,),
    )
    cols = [d[0] for d in cur.description]
    out = []
    for r in cur.fetchall():
        row = dict(zip(cols, r, strict=True))
        row["value"] = json.loads(row["value"]) if row["value"] is not None else None
        row["self_played"] = bool(row["self_played"])
        out.append(row)
    return out


def _plays(store: Store, study_id: str) -> list[dict[str, Any]]:
    cur = store.conn.execute(
        "SELECT p.episode_id, p.annotator_id, p.role, p.sample_id, p.assignment_id, "
        "p.created_at, e.benchmark, e.persona_id, e.method, e.status, e.outcome, e.ended_at "
        "FROM study_plays p LEFT JOIN episodes e ON e.episode_id = p.episode_id "
        "WHERE p.study_id=? ORDER BY p.created_at, p.episode_id",
        (study_id,),
    )
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    for row in rows:
        if store.episode_exists(row["episode_id"]):
            h = store.header(row["episode_id"])
            row["agent"], row["user_voice"] = h.agent, h.user_voice
        else:
            row["agent"], row["user_voice"] = None, None
    return rows


def _agent_message(action: Any) -> str:
    """What the agent did that a user turn answers: its words, or the tool call it made.

    A reply to a proposal made by a tool call (WebShop's Buy Now, a τ² write) answers that
    call: ``click {"target": "buy now"}`` (not the action's kind, ``env``).
    """
    text = getattr(action, "text", "") or ""
    if text:
        return str(text)
    call = getattr(action, "action", None)
    if call is not None and getattr(call, "tool", None):
        args = json.dumps(call.args, ensure_ascii=False, sort_keys=True)
        return f"{call.tool} {args}"
    return str(getattr(action, "raw", "") or action.kind)


def _turns(store: Store, plays: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in plays:
        eid = p["episode_id"]
        if not store.episode_exists(eid):
            continue
        question = ""
        pending: ReplyRead | None = None
        for ev in store.events(eid):
            if isinstance(ev, AgentActed):
                question = _agent_message(ev.action)
            elif isinstance(ev, ReplyRead):
                pending = ev
            elif isinstance(ev, UserReplied):
                r = pending
                out.append(
                    {
                        "episode_id": eid,
                        "annotator": p["annotator_id"],
                        "role": p["role"],
                        "turn": ev.turn,
                        "agent_message": question,
                        "text": ev.text,
                        "voice": ev.voice,
                        "reply_kind": ev.reply_kind,
                        "asked": list(ev.asked),
                        "reader": r.reader if r else None,
                        "act": r.act if r else None,
                        "read": list(r.read) if r else None,
                        "contradictions": [c.model_dump(mode="json") for c in r.contradictions]
                        if r
                        else None,
                        "deliberate": r.deliberate if r else None,
                        "added": list(r.added) if r else None,
                        "removed": list(r.removed) if r else None,
                        "final_disclosures": [d.slot for d in ev.disclosures],
                        "reader_fallback": r.fallback if r else None,
                    }
                )
                pending = None
    return out


def _surveys(labels: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for lb in labels:
        if lb["label_kind"] != "play_user_survey":
            continue
        value = lb["value"] if isinstance(lb["value"], dict) else {}
        out.append(
            {
                "episode_id": lb["target_id"],
                "annotator": lb["annotator"],
                **value,
                "created_at": lb["created_at"],
            }
        )
    return out


def _seconds(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
    except ValueError:
        return None


def _timings(store: Store, study_id: str) -> list[dict[str, Any]]:
    cur = store.conn.execute(
        "SELECT assignment_id, annotator_id, role, target_kind, target_id, condition, position, "
        "status, opened_at, completed_at FROM assignments WHERE study_id=? "
        "ORDER BY annotator_id, position",
        (study_id,),
    )
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    for row in rows:
        row["condition"] = json.loads(row["condition"]) if row["condition"] else None
        row["seconds"] = _seconds(row["opened_at"], row["completed_at"])
    return rows


def study_tables(store: Store, study: str) -> dict[str, list[dict[str, Any]]]:
    """Every export table of a study as rows (plain dicts)."""
    ensure_study_schema(store)
    sid = get_study(store, study).study_id
    labels = _labels(store, sid)
    plays = _plays(store, sid)
    return {
        "labels": labels,
        "plays": plays,
        "turns": _turns(store, plays),
        "surveys": _surveys(labels),
        "timings": _timings(store, sid),
    }


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    return {
        k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
        for k, v in row.items()
    }


EXPORT_MARKER = ".driftbench-study-export"
"""The file that marks a folder ``studies export`` wrote (a later export may write into it)."""


def export_study(store: Store, study: str, fmt: str, out: Path) -> list[Path]:
    """Write every table of a study to ``out`` (a folder, created) in ``fmt``; return the files.

    Raises:
        ConfigError: An unknown format, or ``out`` is a file.
        NotFoundError: No such study.
    """
    if fmt not in ("csv", "jsonl", "parquet"):
        raise ConfigError(f"unknown format {fmt!r}; use csv, jsonl or parquet", field="format")
    if out.exists() and not out.is_dir():
        raise ConfigError("--out must be a folder", file=out, field="out")
    tables = study_tables(store, study)
    out.mkdir(parents=True, exist_ok=True)
    (out / EXPORT_MARKER).write_text(
        "A folder written by `driftbench studies export`; exporting again rewrites it.\n",
        encoding="utf-8",
    )
    files = []
    for name in TABLES:
        rows = tables[name]
        path = out / f"{name}.{fmt}"
        if fmt == "jsonl":
            tmp = path.with_suffix(".jsonl.part")
            with tmp.open("w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            tmp.replace(path)
        else:
            import pandas as pd

            frame = pd.DataFrame([_flat(r) for r in rows])
            if fmt == "csv":
                frame.to_csv(path, index=False)
            else:
                frame.astype(object).where(frame.notna(), None).to_parquet(path, index=False)
        files.append(path)
    return files
