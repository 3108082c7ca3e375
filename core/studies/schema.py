"""Tables of human studies and imported production sessions.

Every public function of :mod:`core.studies` calls :func:`ensure_study_schema` first, so the
tables exist before anything reads or writes them. The statements are idempotent
(``CREATE … IF NOT EXISTS``); the lead will later fold them into the store's migrations.

Tables:
    ``studies``: one row per study (the :class:`~core.studies.models.StudySpec` as JSON).
    ``annotators``: people who label or play (id, display name, role).
    ``study_annotators``: who belongs to which study.
    ``assignments``: one row per (study, annotator, item, role): the annotator's queue.
    ``study_plays``: episodes a person played inside a study (drives ``self_played``).
    ``sessions``: imported production sessions (OpenAI-style messages + score + metadata).
    ``session_judgments``: one judge's reading of one session (intents, faults, shifts).

Labels themselves live in the store's ``annotations`` table.
"""

from __future__ import annotations

from core.store import Store

STUDY_TABLES: tuple[str, ...] = (
    "studies",
    "annotators",
    "study_annotators",
    "assignments",
    "study_plays",
    "sessions",
    "session_judgments",
)
"""Tables created by :func:`ensure_study_schema`."""

_DDL: tuple[str, ...] = (
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


def ensure_study_schema(store: Store) -> None:
    """Create the study and session tables when any is missing (idempotent, cheap).

    A read-only look at ``sqlite_master`` comes first, so the common case (tables present)
    takes no write lock; otherwise every statement runs in one IMMEDIATE transaction.

    Args:
        store: The open store.
    """
    placeholders = ",".join("?" * len(STUDY_TABLES))
    row = store.conn.execute(
        f"SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ({placeholders})",
        STUDY_TABLES,
    ).fetchone()
    if row is not None and int(row[0]) == len(STUDY_TABLES):
        return
    with store.transaction() as conn:
        for statement in _DDL:
            conn.execute(statement)
