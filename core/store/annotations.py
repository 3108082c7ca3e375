"""Labels as stored: the ``annotations`` table and the one INSERT that writes it.

:func:`insert_annotation` is the only statement that adds a label row. The validated write path
is :func:`core.studies.labels.write_label` (vocabulary, target and turn checks, ``self_played``
and assignment bookkeeping in the same transaction); it calls :func:`insert_annotation` inside
its transaction. :meth:`AnnotationsRepo.add_annotation` is the raw, unvalidated form for
callers that already hold a checked value (tests, bulk tools).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from core.store.connection import StoreBase, utcnow


def insert_annotation(
    conn: sqlite3.Connection,
    *,
    annotator: str,
    target_kind: str,
    target_id: str,
    label_kind: str,
    value: Any,
    study_id: str | None = None,
    turn: int | None = None,
    self_played: bool = False,
    seconds: float | None = None,
    created_at: str | None = None,
) -> int:
    """Insert one label row on ``conn`` (inside the caller's transaction); return its id.

    Args:
        conn: A connection inside an open transaction.
        annotator: Who labels.
        target_kind: Kind of the labelled target.
        target_id: The labelled target.
        label_kind: The label kind.
        value: The label value (plain JSON types; stored as JSON text).
        study_id: The study, if any.
        turn: The turn, for per-turn labels.
        self_played: Whether the annotator played a labelled episode.
        seconds: Time spent on the label, if measured.
        created_at: UTC timestamp (default: now).

    Returns:
        The new ``annotation_id``.
    """
    cur = conn.execute(
        "INSERT INTO annotations(study_id, annotator, target_kind, target_id, label_kind,"
        " value, turn, self_played, seconds, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            study_id,
            annotator,
            target_kind,
            target_id,
            label_kind,
            json.dumps(value, ensure_ascii=False),
            turn,
            int(self_played),
            seconds,
            created_at or utcnow(),
        ),
    )
    return int(cur.lastrowid or 0)


class AnnotationsRepo(StoreBase):
    """The ``annotations`` table (raw writes; see :func:`core.studies.labels.write_label`)."""

    def add_annotation(
        self,
        *,
        annotator: str,
        target_kind: str,
        target_id: str,
        label_kind: str,
        value: Any,
        study_id: str | None = None,
        turn: int | None = None,
        self_played: bool = False,
        seconds: float | None = None,
    ) -> int:
        """Store one label as it is made, unvalidated; returns its id.

        Pages and studies use the validated :func:`core.studies.labels.write_label` instead.
        """
        with self.transaction() as conn:
            return insert_annotation(
                conn,
                annotator=annotator,
                target_kind=target_kind,
                target_id=target_id,
                label_kind=label_kind,
                value=value,
                study_id=study_id,
                turn=turn,
                self_played=self_played,
                seconds=seconds,
            )
