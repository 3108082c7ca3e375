"""Studies, annotators and assignments: create, enrol, distribute, record plays."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from core.errors import ConfigError, NotFoundError, pydantic_error_to_config_error
from core.store import Store, utcnow
from core.studies.assignment import plan_assignments
from core.studies.labels import episodes_of, require_target_exists
from core.studies.models import (
    Annotator,
    Study,
    StudyCondition,
    StudyRole,
    StudySpec,
    TargetKind,
    pair_id,
)
from core.studies.schema import ensure_study_schema

ItemKey = tuple[str, str, str, str]
"""(role, target_kind, target_id, condition JSON) identifying one unit of work."""


def create_study(store: Store, spec: StudySpec | dict[str, Any], *, check: bool = True) -> Study:
    """Create a study (one transaction).

    Args:
        store: The open store.
        spec: The study spec (or its dict form, validated here).
        check: Verify that every episode, session and sample named exists.

    Returns:
        The stored study.

    Raises:
        ConfigError: When the spec is invalid or the name is taken (field named).
        NotFoundError: When ``check`` and a named target is missing.
    """
    ensure_study_schema(store)
    if not isinstance(spec, StudySpec):
        try:
            spec = StudySpec.model_validate(spec)
        except ValidationError as exc:
            raise pydantic_error_to_config_error(exc, "study spec") from exc
    if check:
        for kind, tid in _targets(spec):
            require_target_exists(store, kind, tid)
    now = utcnow()
    with store.transaction() as conn:
        taken = conn.execute("SELECT 1 FROM studies WHERE name=?", (spec.name,)).fetchone()
        if taken:
            raise ConfigError(f"a study named {spec.name!r} exists", file="study", field="name")
        conn.execute(
            "INSERT INTO studies(study_id, name, spec, status, created_at) VALUES (?,?,?,?,?)",
            (spec.study_id, spec.name, spec.model_dump_json(), "open", now),
        )
    return Study(study_id=spec.study_id, spec=spec, created_at=now)


def _targets(spec: StudySpec) -> list[tuple[TargetKind, str]]:
    out: list[tuple[TargetKind, str]] = []
    out += [("episode", e) for e in spec.episodes]
    out += [("episode_pair", pair_id(a, b)) for a, b in spec.episode_pairs]
    out += [("session", s) for s in spec.sessions]
    out += [("sample", s) for s in spec.samples]
    return out


def get_study(store: Store, study: str) -> Study:
    """Return a study by id or name.

    Raises:
        NotFoundError: When no such study exists.
    """
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT study_id, spec, status, created_at FROM studies WHERE study_id=? OR name=?",
        (study, study),
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no study named or with id '{study}'")
    return Study(
        study_id=row[0],
        spec=StudySpec.model_validate_json(row[1]),
        status=row[2],
        created_at=row[3],
    )


def list_studies(store: Store) -> list[dict[str, Any]]:
    """List studies with their size and progress, newest first.

    Returns:
        Rows with ``study_id, name, status, created_at, annotators, assignments, done,
        labels`` (plain dicts, for a table).
    """
    ensure_study_schema(store)
    cur = store.conn.execute(
        """SELECT s.study_id, s.name, s.status, s.created_at,
            (SELECT count(*) FROM study_annotators m WHERE m.study_id=s.study_id),
            (SELECT count(*) FROM assignments a WHERE a.study_id=s.study_id),
            (SELECT count(*) FROM assignments a
                WHERE a.study_id=s.study_id AND a.status!='pending'),
            (SELECT count(*) FROM annotations n WHERE n.study_id=s.study_id)
        FROM studies s ORDER BY s.created_at DESC, s.name"""
    )
    cols = ("study_id", "name", "status", "created_at", "annotators", "assignments", "done")
    return [dict(zip((*cols, "labels"), r, strict=True)) for r in cur.fetchall()]


def set_study_status(store: Store, study: str, status: str) -> None:
    """Open or close a study (closed studies accept no new labels)."""
    if status not in ("open", "closed"):
        raise ConfigError(f"status must be open or closed, got {status!r}", field="status")
    st = get_study(store, study)
    with store.transaction() as conn:
        conn.execute("UPDATE studies SET status=? WHERE study_id=?", (status, st.study_id))


def add_annotator(
    store: Store, annotator: Annotator | str, *, role: str = "annotator"
) -> Annotator:
    """Register (or update the name and role of) an annotator.

    Args:
        store: The open store.
        annotator: An :class:`Annotator` or just its id.
        role: Role when only an id is given (``annotator`` or ``researcher``).

    Returns:
        The stored annotator.
    """
    ensure_study_schema(store)
    if isinstance(annotator, str):
        try:
            annotator = Annotator.model_validate({"annotator_id": annotator, "role": role})
        except ValidationError as exc:
            raise pydantic_error_to_config_error(exc, "annotator") from exc
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO annotators(annotator_id, display_name, role, created_at) VALUES (?,?,?,?) "
            "ON CONFLICT(annotator_id) DO UPDATE SET display_name=excluded.display_name, "
            "role=excluded.role",
            (
                annotator.annotator_id,
                annotator.display_name or annotator.annotator_id,
                annotator.role,
                utcnow(),
            ),
        )
    return annotator


def list_annotators(store: Store, study: str | None = None) -> list[Annotator]:
    """Return all annotators, or the members of one study."""
    ensure_study_schema(store)
    if study is None:
        rows = store.conn.execute(
            "SELECT annotator_id, display_name, role FROM annotators ORDER BY annotator_id"
        ).fetchall()
    else:
        sid = get_study(store, study).study_id
        rows = store.conn.execute(
            "SELECT a.annotator_id, a.display_name, a.role FROM annotators a JOIN "
            "study_annotators m ON m.annotator_id=a.annotator_id WHERE m.study_id=? "
            "ORDER BY a.annotator_id",
            (sid,),
        ).fetchall()
    return [Annotator(annotator_id=r[0], display_name=r[1], role=r[2]) for r in rows]


def _items(spec: StudySpec) -> list[ItemKey]:
    items: list[ItemKey] = []
    if "label" in spec.roles:
        items += [("label", "episode", e, "") for e in spec.episodes]
        items += [("label", "episode_pair", pair_id(a, b), "") for a, b in spec.episode_pairs]
        items += [("label", "session", s, "") for s in spec.sessions]
    conditions = spec.conditions or (StudyCondition(),)
    for role in ("play_user", "play_agent"):
        if role in spec.roles:
            for sample in spec.samples:
                for cond in conditions:
                    items.append((role, "sample", sample, cond.model_dump_json()))
    return items


def assign_study(
    store: Store,
    study: str,
    annotators: Sequence[str],
    *,
    overlap: int | None = None,
) -> dict[str, int]:
    """Enrol annotators and distribute the study's items with overlap k, balanced.

    Items already assigned keep their annotators; calling again with more annotators (or
    after the spec's items grew) only adds assignments for what is missing. An annotator
    never gets to *label* an episode they played themselves (their labels on it would be
    ``self_played``); if that leaves fewer than k eligible people, the item gets fewer.

    Args:
        store: The open store.
        study: Study id or name.
        annotators: Annotator ids (registered on the fly with role ``annotator``).
        overlap: Override the spec's k.

    Returns:
        Items newly assigned per annotator.
    """
    st = get_study(store, study)
    k = overlap if overlap is not None else st.spec.overlap
    known = {a.annotator_id for a in list_annotators(store)}
    for a in annotators:
        if a not in known:
            add_annotator(store, a)
    conn = store.conn
    rows = conn.execute(
        "SELECT annotator_id, role, target_kind, target_id, condition FROM assignments "
        "WHERE study_id=?",
        (st.study_id,),
    ).fetchall()
    have: dict[ItemKey, set[str]] = {}
    load: dict[str, int] = {}
    for a, role, kind, tid, cond in rows:
        have.setdefault((role, kind, tid, cond), set()).add(a)
        load[a] = load.get(a, 0) + 1
    plays = conn.execute("SELECT annotator_id, episode_id FROM study_plays").fetchall()
    played: dict[str, set[str]] = {}
    for a, ep in plays:
        played.setdefault(ep, set()).add(a)
    todo: list[ItemKey] = []
    exclude: dict[ItemKey, frozenset[str]] = {}
    for item in _items(st.spec):
        already = have.get(item, set())
        if len(already) >= k:
            continue
        todo.append(item)
        banned = set(already)
        if item[0] == "label":
            for ep in episodes_of(item[1], item[2]):
                banned |= played.get(ep, set())
        exclude[item] = frozenset(banned)
    # Items short of k get only the missing number of new annotators: plan per shortfall.
    rng = random.Random(st.spec.seed)
    plan: dict[str, list[ItemKey]] = {a: [] for a in annotators}
    by_missing: dict[int, list[ItemKey]] = {}
    for item in todo:
        by_missing.setdefault(k - len(have.get(item, set())), []).append(item)
    for missing, group in sorted(by_missing.items()):
        part = plan_assignments(
            group, list(annotators), missing, rng, exclude=exclude, existing_load=load
        )
        for a, items in part.items():
            plan[a].extend(items)
            load[a] = load.get(a, 0) + len(items)
    now = utcnow()
    with store.transaction() as tx:
        for a in annotators:
            tx.execute(
                "INSERT OR IGNORE INTO study_annotators(study_id, annotator_id, added_at) "
                "VALUES (?,?,?)",
                (st.study_id, a, now),
            )
        for a, items in plan.items():
            start = tx.execute(
                "SELECT coalesce(max(position), -1) + 1 FROM assignments "
                "WHERE study_id=? AND annotator_id=?",
                (st.study_id, a),
            ).fetchone()[0]
            tx.executemany(
                "INSERT OR IGNORE INTO assignments(study_id, annotator_id, role, target_kind, "
                "target_id, condition, position) VALUES (?,?,?,?,?,?,?)",
                [
                    (st.study_id, a, role, kind, tid, cond, start + i)
                    for i, (role, kind, tid, cond) in enumerate(items)
                ],
            )
    return {a: len(items) for a, items in plan.items()}


def record_play(
    store: Store,
    *,
    annotator: str,
    episode_id: str,
    sample_id: str,
    role: StudyRole = "play_user",
    study: str | None = None,
    assignment_id: int | None = None,
) -> None:
    """Record that a person played an episode (marks their later labels on it self-played).

    When ``assignment_id`` is given, that play assignment is marked done in the same
    transaction.
    """
    ensure_study_schema(store)
    study_id = get_study(store, study).study_id if study else None
    now = utcnow()
    with store.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO study_plays(episode_id, study_id, annotator_id, role, "
            "sample_id, assignment_id, created_at) VALUES (?,?,?,?,?,?,?)",
            (episode_id, study_id, annotator, role, sample_id, assignment_id, now),
        )
        if assignment_id is not None:
            conn.execute(
                "UPDATE assignments SET status='done', completed_at=? WHERE assignment_id=?",
                (now, assignment_id),
            )


def plays(store: Store, *, study: str | None = None) -> list[dict[str, Any]]:
    """Return recorded plays (episode, annotator, role, sample), oldest first."""
    ensure_study_schema(store)
    sql = "SELECT episode_id, study_id, annotator_id, role, sample_id, created_at FROM study_plays"
    args: tuple[Any, ...] = ()
    if study is not None:
        sql += " WHERE study_id=?"
        args = (get_study(store, study).study_id,)
    cur = store.conn.execute(sql + " ORDER BY created_at, episode_id", args)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def condition_of(condition_json: str) -> StudyCondition | None:
    """Parse an assignment's stored condition ('' = none)."""
    return StudyCondition.model_validate(json.loads(condition_json)) if condition_json else None
