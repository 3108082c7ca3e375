"""Imported sessions and their judgments in the store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from core.errors import NotFoundError
from core.model.base import Strict
from core.model.redaction import redact
from core.store import Store, utcnow
from core.studies.schema import ensure_study_schema
from core.studies.sessions.format import LineError, SessionRecord, read_sessions_file
from core.studies.sessions.judgment import SessionJudgment

ImportMode = Literal["all_or_nothing", "partial"]


class ImportResult(Strict):
    """Outcome of ``driftbench import sessions`` (CLI JSON shape plus context)."""

    file: str
    mode: ImportMode
    imported: int = Field(description="Sessions written (0 when all-or-nothing met errors).")
    valid: int = Field(description="Lines that validated.")
    errors: tuple[LineError, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the command succeeded: no errors, or partial mode with a valid line."""
        return not self.errors or (self.mode == "partial" and self.valid > 0)

    def payload(self) -> dict[str, Any]:
        """The ``--json`` payload: ``{"imported", "errors": [{"line", "message"}], ...}``."""
        return {
            "imported": self.imported,
            "errors": [e.model_dump() for e in self.errors],
            "valid": self.valid,
            "mode": self.mode,
            "file": self.file,
        }


def put_sessions(store: Store, records: Sequence[SessionRecord], *, source: str) -> int:
    """Insert or replace sessions in one transaction (a changed session loses its judgments).

    Returns:
        How many sessions were written.
    """
    ensure_study_schema(store)
    now = utcnow()
    with store.transaction() as conn:
        for rec in records:
            body = redact(rec.model_dump_json())  # a pasted key never reaches the store
            old = conn.execute(
                "SELECT body FROM sessions WHERE session_id=?", (rec.session_id,)
            ).fetchone()
            if old is not None and old[0] != body:
                conn.execute("DELETE FROM session_judgments WHERE session_id=?", (rec.session_id,))
            conn.execute(
                "INSERT OR REPLACE INTO sessions(session_id, source, body, n_messages, "
                "n_user_turns, n_tool_calls, platform_score, metadata, imported_at) "
                "VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    rec.session_id,
                    source,
                    body,
                    len(rec.messages),
                    rec.n_user_turns,
                    rec.n_tool_calls,
                    rec.score,
                    redact(json.dumps(rec.metadata, ensure_ascii=False, default=str)),
                    now,
                ),
            )
    return len(records)


def import_sessions(store: Store, path: Path, *, partial: bool = False) -> ImportResult:
    """Import a sessions JSONL file (see docs/SESSIONS.md).

    Rule: by default the import is **all or nothing** — if any line is malformed, every
    error is reported (by line number) and nothing is written. With ``partial=True`` the
    valid lines are imported and the malformed ones reported.

    Args:
        store: The open store.
        path: The JSONL file.
        partial: Import the valid lines even when others are malformed.

    Returns:
        The result (``imported`` is 0 when all-or-nothing met errors).

    Raises:
        ConfigError: When the file cannot be read.
    """
    records, errors = read_sessions_file(path)
    mode: ImportMode = "partial" if partial else "all_or_nothing"
    imported = 0
    if records and (partial or not errors):
        imported = put_sessions(store, records, source=f"file:{Path(path).name}")
    return ImportResult(
        file=str(path), mode=mode, imported=imported, valid=len(records), errors=tuple(errors)
    )


def get_session(store: Store, session_id: str) -> SessionRecord:
    """Return one imported session.

    Raises:
        NotFoundError: When it was never imported.
    """
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT body FROM sessions WHERE session_id=?", (session_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no imported session {session_id}")
    return SessionRecord.model_validate_json(row[0])


def session_rows(store: Store) -> list[dict[str, Any]]:
    """List imported sessions (no messages): id, source, counts, score, metadata."""
    ensure_study_schema(store)
    cur = store.conn.execute(
        "SELECT session_id, source, n_messages, n_user_turns, n_tool_calls, platform_score, "
        "metadata, imported_at FROM sessions ORDER BY session_id"
    )
    cols = [d[0] for d in cur.description]
    out = []
    for r in cur.fetchall():
        d = dict(zip(cols, r, strict=True))
        d["metadata"] = json.loads(d["metadata"])
        out.append(d)
    return out


def put_judgments(store: Store, judgments: Sequence[SessionJudgment]) -> None:
    """Store (replace) judgments, one transaction."""
    ensure_study_schema(store)
    now = utcnow()
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO session_judgments(session_id, judge, value, raw, created_at) "
            "VALUES (?,?,?,?,?)",
            [
                (
                    j.session_id,
                    j.judge,
                    redact(j.model_dump_json()),
                    redact(j.raw) if j.raw else j.raw,
                    now,
                )
                for j in judgments
            ],
        )


def get_judgments(store: Store, judge: str) -> dict[str, SessionJudgment]:
    """Return one judge's stored judgments, by session id."""
    ensure_study_schema(store)
    rows = store.conn.execute(
        "SELECT session_id, value FROM session_judgments WHERE judge=?", (judge,)
    ).fetchall()
    return {sid: SessionJudgment.model_validate_json(v) for sid, v in rows}
