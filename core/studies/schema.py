"""Tables of human studies and imported production sessions.

Every public function of :mod:`core.studies` calls :func:`ensure_study_schema` first, so the
tables exist before anything reads or writes them. The statements are idempotent
(``CREATE … IF NOT EXISTS``); the DDL itself lives in :mod:`core.store` (schema v2), so every
store has these tables from the moment it is opened and this check is a read-only safety net.

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

from core.store import STUDY_DDL, Store

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

_DDL: tuple[str, ...] = STUDY_DDL


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
