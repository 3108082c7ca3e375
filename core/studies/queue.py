"""An annotator's queue: progress, the next item, labelling an item, skipping it."""

from __future__ import annotations

from typing import Any

from core.errors import ConfigError, NotFoundError, ProtocolError
from core.store import Store, utcnow
from core.studies.labels import required_kinds, write_label
from core.studies.models import AnnotatorQueue, QueueItem, StudySpec
from core.studies.schema import ensure_study_schema
from core.studies.studies import condition_of, get_study

_ASSIGNMENT_COLS = (
    "assignment_id, study_id, annotator_id, role, target_kind, target_id, condition, position, "
    "status, opened_at, completed_at"
)


def get_assignment(store: Store, assignment_id: int) -> dict[str, Any]:
    """Return one assignment row as a dict.

    Raises:
        NotFoundError: When it does not exist.
    """
    ensure_study_schema(store)
    cur = store.conn.execute(
        f"SELECT {_ASSIGNMENT_COLS} FROM assignments WHERE assignment_id=?", (assignment_id,)
    )
    row = cur.fetchone()
    if row is None:
        raise NotFoundError(f"no assignment {assignment_id}")
    return dict(zip([d[0] for d in cur.description], row, strict=True))


def _required(spec: StudySpec, role: str, target_kind: str) -> tuple[Any, ...]:
    return required_kinds(spec.label_kinds, target_kind) if role == "label" else ()


def annotator_queue(
    store: Store, study: str, annotator: str, *, reveal_ids: bool | None = None
) -> AnnotatorQueue:
    """Return an annotator's queue in one study, with per-item label progress.

    Args:
        store: The open store.
        study: Study id or name.
        annotator: Annotator id.
        reveal_ids: Include raw target ids (episode / session ids). Default: only when the
            study is not blind (researcher tools pass True).

    Returns:
        The queue (items in order; ``next_item`` is the first pending one).
    """
    st = get_study(store, study)
    conn = store.conn
    rows = conn.execute(
        "SELECT assignment_id, position, role, target_kind, target_id, condition, status "
        "FROM assignments WHERE study_id=? AND annotator_id=? ORDER BY position",
        (st.study_id, annotator),
    ).fetchall()
    done_kinds: dict[tuple[str, str], set[str]] = {}
    for kind, tid, lk in conn.execute(
        "SELECT DISTINCT target_kind, target_id, label_kind FROM annotations "
        "WHERE study_id=? AND annotator=?",
        (st.study_id, annotator),
    ):
        done_kinds.setdefault((kind, tid), set()).add(lk)
    reveal = (not st.spec.blind) if reveal_ids is None else reveal_ids
    items = []
    for aid, pos, role, kind, tid, cond, status in rows:
        req = _required(st.spec, role, kind)
        have = done_kinds.get((kind, tid), set())
        items.append(
            QueueItem(
                assignment_id=aid,
                position=pos,
                ref=f"#{pos + 1}",
                role=role,
                target_kind=kind,
                target_id=tid if reveal else None,
                condition=condition_of(cond),
                status=status,
                labels_required=req,
                labels_done=tuple(k for k in st.spec.label_kinds if k in have),
            )
        )
    return AnnotatorQueue(
        study_id=st.study_id,
        annotator_id=annotator,
        items=tuple(items),
        done=sum(1 for i in items if i.status == "done"),
        skipped=sum(1 for i in items if i.status == "skipped"),
        total=len(items),
    )


def open_next(
    store: Store, study: str, annotator: str, *, reveal_ids: bool | None = None
) -> QueueItem | None:
    """Return the annotator's next pending item and stamp when it was first opened.

    The stamp (``opened_at``) feeds time-per-item statistics; re-opening keeps the first one.
    """
    queue = annotator_queue(store, study, annotator, reveal_ids=reveal_ids)
    item = queue.next_item
    if item is not None:
        with store.transaction() as conn:
            conn.execute(
                "UPDATE assignments SET opened_at=? WHERE assignment_id=? AND opened_at IS NULL",
                (utcnow(), item.assignment_id),
            )
    return item


def label_item(
    store: Store,
    assignment_id: int,
    label_kind: str,
    value: Any,
    *,
    turn: int | None = None,
    seconds: float | None = None,
) -> int:
    """Store one label on an assigned item (one IMMEDIATE transaction); return its id.

    The target comes from the assignment, so a page never needs (or shows) raw ids in blind
    mode. The assignment is marked done as soon as every required label kind is present.

    Args:
        store: The open store.
        assignment_id: The queue item being labelled.
        label_kind: The label kind (must be one the study asks for).
        value: The value (see :func:`core.studies.labels.validate_label`).
        turn: Turn for per-turn labels (``who_broke``, ``shift_type`` at a shift, comments).
        seconds: Time spent, as measured by the page.

    Returns:
        The new ``annotation_id``.

    Raises:
        NotFoundError: Unknown assignment.
        ProtocolError: The study is closed, or the assignment is a play item.
        ConfigError: The label kind is not asked by the study or the value is invalid.
    """
    a = get_assignment(store, assignment_id)
    st = get_study(store, a["study_id"])
    if st.status != "open":
        raise ProtocolError(f"study {st.spec.name!r} is closed")
    if a["role"] != "label" and label_kind != "comment":
        raise ProtocolError(f"assignment {assignment_id} is a {a['role']} item, not a label item")
    if label_kind not in st.spec.label_kinds and label_kind != "comment":
        raise ConfigError(
            f"study {st.spec.name!r} does not ask for {label_kind!r} labels",
            file="label",
            field="label_kind",
        )
    return write_label(
        store,
        annotator=a["annotator_id"],
        target_kind=a["target_kind"],
        target_id=a["target_id"],
        label_kind=label_kind,
        value=value,
        study_id=a["study_id"],
        turn=turn,
        seconds=seconds,
        assignment_id=assignment_id,
        required=_required(st.spec, a["role"], a["target_kind"]),
    )


def missing_labels(store: Store, assignment_id: int) -> tuple[str, ...]:
    """The required label kinds the item's annotator has not given yet (in the study's order)."""
    a = get_assignment(store, assignment_id)
    spec = get_study(store, a["study_id"]).spec
    required = _required(spec, a["role"], a["target_kind"])
    have = {
        str(r[0])
        for r in store.conn.execute(
            "SELECT DISTINCT label_kind FROM annotations WHERE study_id IS ? AND annotator=? "
            "AND target_kind=? AND target_id=?",
            (a["study_id"], a["annotator_id"], a["target_kind"], a["target_id"]),
        )
    }
    return tuple(k for k in required if k not in have)


def confirm_item(store: Store, assignment_id: int) -> bool:
    """Confirm a label item's labels unchanged: a reopened item is done again, nothing rewritten.

    A reopened item keeps its labels; re-saving them unchanged would only duplicate history,
    so this marks the item done when every required label is already there.

    Returns:
        True when the item was pending and is now done (False: it was done already).

    Raises:
        NotFoundError: Unknown assignment.
        ProtocolError: The study is closed, the item is a play item, or a required label is
            still missing (named).
    """
    a = get_assignment(store, assignment_id)
    study = get_study(store, a["study_id"])
    if study.status != "open":
        raise ProtocolError(f"study {study.spec.name!r} is closed")
    if a["role"] != "label":
        raise ProtocolError(f"assignment {assignment_id} is a {a['role']} item, not a label item")
    missing = missing_labels(store, assignment_id)
    if missing:
        raise ProtocolError("this item still needs a label for: " + ", ".join(missing))
    with store.transaction() as conn:
        cur = conn.execute(
            "UPDATE assignments SET status='done', completed_at=? "
            "WHERE assignment_id=? AND status='pending'",
            (utcnow(), assignment_id),
        )
        return bool(cur.rowcount)


def set_assignment_status(store: Store, assignment_id: int, status: str) -> None:
    """Mark an item ``done`` (submit), ``skipped``, or back to ``pending``."""
    if status not in ("pending", "done", "skipped"):
        raise ConfigError(f"unknown status {status!r}", file="assignment", field="status")
    get_assignment(store, assignment_id)
    done_at = utcnow() if status != "pending" else None
    with store.transaction() as conn:
        conn.execute(
            "UPDATE assignments SET status=?, completed_at=? WHERE assignment_id=?",
            (status, done_at, assignment_id),
        )


def study_progress(store: Store, study: str) -> list[dict[str, Any]]:
    """Per annotator: assigned, done, skipped, pending and labels stored (for a table)."""
    st = get_study(store, study)
    cur = store.conn.execute(
        """SELECT m.annotator_id,
            (SELECT count(*) FROM assignments a WHERE a.study_id=m.study_id
                AND a.annotator_id=m.annotator_id),
            (SELECT count(*) FROM assignments a WHERE a.study_id=m.study_id
                AND a.annotator_id=m.annotator_id AND a.status='done'),
            (SELECT count(*) FROM assignments a WHERE a.study_id=m.study_id
                AND a.annotator_id=m.annotator_id AND a.status='skipped'),
            (SELECT count(*) FROM annotations n WHERE n.study_id=m.study_id
                AND n.annotator=m.annotator_id)
        FROM study_annotators m WHERE m.study_id=? ORDER BY m.annotator_id""",
        (st.study_id,),
    )
    out = []
    for a, total, done, skipped, labels in cur.fetchall():
        out.append(
            {
                "annotator": a,
                "assigned": total,
                "done": done,
                "skipped": skipped,
                "pending": total - done - skipped,
                "labels": labels,
                "progress": (done + skipped) / total if total else 1.0,
            }
        )
    return out
