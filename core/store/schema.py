"""The store's schema: every table, index and trigger, its version and its migrations.

This module is the one definition of the file's layout. ``core.llm.cache`` creates the
``llm_cache`` table from :data:`LLM_CACHE_DDL` here (the cache may live in the store's file or
in a file of its own), and :mod:`core.studies.schema` checks the study tables of
:data:`STUDY_DDL`. The golden dump in ``tests/core/store/golden`` pins the text SQLite keeps.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

STORE_SCHEMA_VERSION = 3
"""Current store schema version. Bump it and add a migration to ``_MIGRATIONS``."""

LLM_CACHE_DDL = """CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    namespace TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost_usd REAL,
    created_at TEXT NOT NULL
)"""
"""The ``llm_cache`` table: one row per cached completion (see :class:`core.llm.ResponseCache`)."""

_SCHEMA_V1 = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS worlds (
    world_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    payload TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS worlds_benchmark ON worlds(benchmark);
CREATE TABLE IF NOT EXISTS graphs (
    graph_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    env_id TEXT NOT NULL,
    root_intent_id TEXT NOT NULL,
    source TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graphs_benchmark ON graphs(benchmark);
CREATE TABLE IF NOT EXISTS samples (
    sample_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    graph_id TEXT NOT NULL,
    fault_types TEXT NOT NULL,
    k INTEGER NOT NULL,
    split TEXT NOT NULL,
    source TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_benchmark ON samples(benchmark, k);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    completed INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    episode_id TEXT PRIMARY KEY,
    run_id TEXT REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    method TEXT NOT NULL,
    persona_id TEXT NOT NULL,
    seed INTEGER NOT NULL,
    parent_episode_id TEXT,
    header TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    outcome TEXT,
    n_events INTEGER NOT NULL DEFAULT 0,
    summary TEXT,
    created_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE INDEX IF NOT EXISTS episodes_run ON episodes(run_id, status);
CREATE INDEX IF NOT EXISTS episodes_cell ON episodes(benchmark, method, persona_id);
CREATE INDEX IF NOT EXISTS episodes_sample ON episodes(sample_id);
CREATE TABLE IF NOT EXISTS events (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    turn INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (episode_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
{LLM_CACHE_DDL};
CREATE TABLE IF NOT EXISTS annotations (
    annotation_id INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id TEXT,
    annotator TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    label_kind TEXT NOT NULL,
    value TEXT NOT NULL,
    turn INTEGER,
    self_played INTEGER NOT NULL DEFAULT 0,
    seconds REAL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS annotations_target ON annotations(target_kind, target_id);
CREATE INDEX IF NOT EXISTS annotations_study ON annotations(study_id, annotator);
CREATE TABLE IF NOT EXISTS judgments (
    judgment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    judge TEXT NOT NULL,
    task TEXT NOT NULL,
    target_id TEXT NOT NULL,
    value TEXT NOT NULL,
    raw TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_run ON judgments(run_id, judge, task);
"""

STUDY_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS studies (
        study_id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        spec TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open',
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS annotators (
        annotator_id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS study_annotators (
        study_id TEXT NOT NULL REFERENCES studies(study_id),
        annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id),
        added_at TEXT NOT NULL,
        PRIMARY KEY (study_id, annotator_id)
    )""",
    """CREATE TABLE IF NOT EXISTS assignments (
        assignment_id INTEGER PRIMARY KEY AUTOINCREMENT,
        study_id TEXT NOT NULL REFERENCES studies(study_id),
        annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id),
        role TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        target_id TEXT NOT NULL,
        condition TEXT NOT NULL DEFAULT '',
        position INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        opened_at TEXT,
        completed_at TEXT,
        UNIQUE (study_id, annotator_id, role, target_kind, target_id, condition)
    )""",
    "CREATE INDEX IF NOT EXISTS assignments_queue ON assignments(study_id, annotator_id, position)",
    "CREATE INDEX IF NOT EXISTS assignments_target ON assignments(study_id, target_kind, "
    "target_id)",
    """CREATE TABLE IF NOT EXISTS study_plays (
        episode_id TEXT PRIMARY KEY,
        study_id TEXT,
        annotator_id TEXT NOT NULL,
        role TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        assignment_id INTEGER,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS study_plays_annotator ON study_plays(annotator_id)",
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        body TEXT NOT NULL,
        n_messages INTEGER NOT NULL,
        n_user_turns INTEGER NOT NULL,
        n_tool_calls INTEGER NOT NULL,
        platform_score REAL,
        metadata TEXT NOT NULL,
        imported_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS session_judgments (
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        judge TEXT NOT NULL,
        value TEXT NOT NULL,
        raw TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, judge)
    )""",
)
"""Schema v2: human studies and imported production sessions (see :mod:`core.studies`)."""


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    for statement in STUDY_DDL:
        conn.execute(statement)


CONSTRUCTION_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS construction_builds (
        build_id TEXT PRIMARY KEY,
        benchmark TEXT NOT NULL,
        source TEXT NOT NULL,
        world_id TEXT,
        kind TEXT NOT NULL,
        params TEXT NOT NULL,
        stats TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS construction_builds_bench ON construction_builds(benchmark, "
    "source)",
)
"""Schema v3: one row per build or import (graph and verifier statistics as recorded)."""


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    for statement in CONSTRUCTION_DDL:
        conn.execute(statement)


_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
}
"""Migrations from version ``v`` to ``v + 1``, keyed by ``v``."""


def _statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (triggers keep their inner semicolons)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out
