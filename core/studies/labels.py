"""Label vocabularies, validation, and the one write path for labels.

Every label is stored as it is made, in one short IMMEDIATE transaction that also (a) marks a
label as ``self_played`` when the annotator played one of the labelled episodes, and (b) marks
the annotator's assignment done once every required label kind for that item is present.
The label history is append-only: a corrected label is a new row; readers take the latest
row per (annotator, target, label kind, turn).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from core.errors import ConfigError, NotFoundError, ProtocolError
from core.model.base import Strict
from core.model.intent import ShiftOperator
from core.model.sample import FaultType
from core.paths import PERSONAS_DIR
from core.store import Store, insert_annotation, utcnow
from core.studies.models import LabelKind, LabelRecord, TargetKind, split_pair
from core.studies.schema import ensure_study_schema

DEFAULT_PERSONAS: tuple[str, ...] = (
    "rational",
    "dependent",
    "avoidant",
    "intuitive",
    "spontaneous",
)
"""The five personas of DECISIONS.md (used when ``personas/`` cannot be listed)."""

NONE = "none"
"""The 'nothing of this kind' answer for fault and shift labels."""

SAME, DIFFERENT = "SAME", "DIFFERENT"

Who = Literal["agent", "simulated_user", "environment", "nobody"]
Severity = Literal["minor", "major", "critical"]

WHO_VALUES: tuple[str, ...] = ("agent", "simulated_user", "environment", "nobody")
SEVERITIES: tuple[str, ...] = ("minor", "major", "critical")


class WhoBroke(Strict):
    """Value of a ``who_broke`` label: who broke the conversation at this turn, how badly."""

    who: Who
    severity: Severity | None = Field(
        default=None, description="Required unless who is 'nobody' (then it must be empty)."
    )


class PlayUserSurvey(Strict):
    """Value of a ``play_user_survey`` label: the play-as-user page's end-of-episode survey."""

    understood: int = Field(
        strict=True, ge=1, le=5, description="The agent understood what I wanted (1-5)."
    )
    questions_worth_it: int = Field(
        strict=True, ge=1, le=5, description="The agent's questions were worth my patience (1-5)."
    )
    adapted: Literal["yes", "partly", "no", "my goal did not change"] | None = Field(
        default=None,
        description="When my goal changed, the agent adapted (asked only after a shift).",
    )
    in_character: int = Field(
        strict=True, ge=1, le=5, description="I could stay in character (1-5)."
    )
    comment: str = Field(default="", max_length=10_000, description="Anything else.")
    outcome: str = Field(min_length=1, description="The episode's outcome, as shown.")
    shifts: int = Field(strict=True, ge=0, description="Intent shifts the player saw.")

    @model_validator(mode="after")
    def _adapted_after_a_shift(self) -> PlayUserSurvey:
        if self.shifts > 0 and self.adapted is None:
            raise ValueError("adapted: required when the goal changed during the episode")
        return self


def persona_ids() -> tuple[str, ...]:
    """Return the persona ids (file names in ``personas/``), or the five defaults."""
    found = tuple(sorted(p.stem for p in PERSONAS_DIR.glob("*.yaml")))
    return found or DEFAULT_PERSONAS


FAULT_VALUES: tuple[str, ...] = (*(f.value for f in FaultType), NONE)
SHIFT_VALUES: tuple[str, ...] = (*(s.value for s in ShiftOperator), NONE)

APPLIES_TO: dict[LabelKind, frozenset[TargetKind]] = {
    "persona_id": frozenset({"episode"}),
    "same_persona": frozenset({"episode_pair"}),
    "realism": frozenset({"episode"}),
    "fault_type": frozenset({"episode", "session"}),
    "shift_type": frozenset({"episode", "session"}),
    "who_broke": frozenset({"episode", "session"}),
    "comment": frozenset({"episode", "episode_pair", "session", "sample"}),
    "intents": frozenset({"session"}),
    "play_user_survey": frozenset({"episode"}),
}
"""Which target kinds each label kind may be given on."""

ITEM_LEVEL: frozenset[LabelKind] = frozenset(
    {"persona_id", "same_persona", "realism", "fault_type", "shift_type", "intents"}
)
"""Label kinds that must be present before an item counts as done (when the study asks for
them). Per-turn ``who_broke`` and free ``comment`` are optional. ``shift_type`` is satisfied by
one label per shift (with its turn) or by a single ``none``."""


def label_choices(kind: LabelKind) -> tuple[Any, ...] | None:
    """Return the closed choices of a categorical label kind (None for free or structured ones).

    Pages build their widgets from this so the vocabulary lives in one place.
    """
    table: dict[str, tuple[Any, ...]] = {
        "persona_id": persona_ids(),
        "same_persona": (SAME, DIFFERENT),
        "realism": (1, 2, 3, 4, 5),
        "fault_type": FAULT_VALUES,
        "shift_type": SHIFT_VALUES,
    }
    return table.get(kind)


def required_kinds(study_kinds: Iterable[LabelKind], target_kind: str) -> tuple[LabelKind, ...]:
    """Return the item-level label kinds a study requires on items of ``target_kind``."""
    return tuple(k for k in study_kinds if k in ITEM_LEVEL and target_kind in APPLIES_TO[k])


def validate_label(
    kind: str, value: Any, *, target_kind: str, target_id: str, turn: int | None
) -> Any:
    """Check one label and return its normalised JSON value.

    Args:
        kind: The label kind.
        value: The raw value (from a widget or a file).
        target_kind: Kind of the labelled target.
        target_id: Id of the labelled target (pairs must read ``'epA|epB'``).
        turn: Turn for per-turn labels.

    Returns:
        The value as stored (plain JSON types).

    Raises:
        ConfigError: Naming the label kind as the field, when anything is wrong.
    """

    def bad(detail: str) -> ConfigError:
        return ConfigError(detail, file="label", field=kind)

    if kind not in APPLIES_TO:
        raise ConfigError(f"unknown label kind {kind!r}", file="label", field="label_kind")
    if target_kind not in APPLIES_TO[kind]:
        raise bad(f"cannot be given on a {target_kind!r} target")
    if not target_id:
        raise bad("empty target id")
    if target_kind == "episode_pair":
        try:
            split_pair(target_id)
        except ValueError as exc:
            raise bad(str(exc)) from exc
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 0):
        raise bad(f"turn must be a non-negative integer, got {turn!r}")
    if kind == "who_broke":
        if turn is None:
            raise bad("'who broke it' is a per-turn label: give the turn")
        try:
            wb = WhoBroke.model_validate(value)
        except ValidationError as exc:
            raise bad(f"expected {{'who': {WHO_VALUES}, 'severity': {SEVERITIES}}}") from exc
        if (wb.who == "nobody") != (wb.severity is None):
            raise bad("severity is required unless who is 'nobody' (then leave it empty)")
        return wb.model_dump()
    if kind == "comment":
        if not isinstance(value, str) or not value.strip():
            raise bad("a comment must be non-empty text")
        if len(value) > 10_000:
            raise bad("a comment is limited to 10,000 characters")
        return value.strip()
    if kind == "intents":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("expected a list of intent descriptions (text)")
        return [v.strip() for v in value if v.strip()]
    if kind == "play_user_survey":
        try:
            survey = PlayUserSurvey.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "value"
            raise bad(f"{where}: {first.get('msg', 'invalid')}") from exc
        return survey.model_dump()
    if kind == "realism":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            raise bad(f"realism is a Likert rating 1-5, got {value!r}")
        return value
    choices = label_choices(kind)
    assert choices is not None
    if kind in ("persona_id", "fault_type", "shift_type") and isinstance(value, str):
        value = value.strip().lower()
    if kind == "same_persona" and isinstance(value, str):
        value = value.strip().upper()
    if value not in choices:
        raise bad(f"{value!r} is not one of {', '.join(map(str, choices))}")
    if kind == "shift_type" and value == NONE and turn is not None:
        raise bad("'none' means the item has no shift at all: give it without a turn")
    return value


def episodes_of(target_kind: str, target_id: str) -> tuple[str, ...]:
    """Return the episode ids a target covers (one, two for a pair, none otherwise)."""
    if target_kind == "episode":
        return (target_id,)
    if target_kind == "episode_pair":
        return split_pair(target_id)
    return ()


def _is_self_played(conn: sqlite3.Connection, annotator: str, episodes: tuple[str, ...]) -> bool:
    if not episodes:
        return False
    marks = ",".join("?" * len(episodes))
    row = conn.execute(
        f"SELECT 1 FROM study_plays WHERE annotator_id=? AND episode_id IN ({marks}) LIMIT 1",
        (annotator, *episodes),
    ).fetchone()
    return row is not None


ANSWERED_ONCE: frozenset[str] = frozenset({"play_user_survey"})
"""Label kinds a person gives once per target (the end survey of a play): a second write is
refused by the store, whatever page or tab sends it."""


def stored_label(
    store: Store, *, annotator: str, target_kind: str, target_id: str, label_kind: str
) -> Any | None:
    """The value of ``annotator``'s first label of ``label_kind`` on a target (None: none yet)."""
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT value FROM annotations WHERE annotator=? AND target_kind=? AND target_id=? "
        "AND label_kind=? ORDER BY annotation_id LIMIT 1",
        (annotator, target_kind, target_id, label_kind),
    ).fetchone()
    return None if row is None else json.loads(row[0])


def write_label(
    store: Store,
    *,
    annotator: str,
    target_kind: str,
    target_id: str,
    label_kind: str,
    value: Any,
    study_id: str | None = None,
    turn: int | None = None,
    seconds: float | None = None,
    assignment_id: int | None = None,
    required: tuple[str, ...] = (),
) -> int:
    """Validate and store one label in one IMMEDIATE transaction; return its id.

    Lower-level than :func:`core.studies.queue.label_item` (which resolves the target from an
    assignment): use it for labels outside any study (``study_id=None``).

    Args:
        store: The open store.
        annotator: Who labels.
        target_kind: ``episode`` / ``episode_pair`` / ``session`` / ``sample``.
        target_id: The labelled target.
        label_kind: One of :data:`~core.studies.models.LabelKind`.
        value: The label value (see :func:`validate_label`).
        study_id: The study, if any.
        turn: The turn, for per-turn labels.
        seconds: Time the annotator spent on this label, if measured by the page.
        assignment_id: The assignment being worked on; marked done in the same transaction
            once every kind in ``required`` has a label from this annotator.
        required: Item-level kinds that complete the assignment.

    Returns:
        The new ``annotation_id``.

    Raises:
        ConfigError: When the label is invalid.
        ProtocolError: A kind given once (:data:`ANSWERED_ONCE`) is already stored for this
            annotator and target.
    """
    ensure_study_schema(store)
    clean = validate_label(
        label_kind, value, target_kind=target_kind, target_id=target_id, turn=turn
    )
    if seconds is not None and (seconds < 0 or seconds != seconds):
        raise ConfigError(f"seconds must be >= 0, got {seconds!r}", file="label", field="seconds")
    now = utcnow()
    with store.transaction() as conn:
        if label_kind in ANSWERED_ONCE:
            # checked inside the IMMEDIATE transaction: two tabs cannot both store one
            taken = conn.execute(
                "SELECT 1 FROM annotations WHERE annotator=? AND target_kind=? AND target_id=? "
                "AND label_kind=? LIMIT 1",
                (annotator, target_kind, target_id, label_kind),
            ).fetchone()
            if taken is not None:
                raise ProtocolError(
                    f"{annotator} has already answered the {label_kind.replace('_', ' ')} of "
                    f"{target_id}; it is stored once and can no longer be changed"
                )
        self_played = _is_self_played(conn, annotator, episodes_of(target_kind, target_id))
        annotation_id = insert_annotation(
            conn,
            annotator=annotator,
            target_kind=target_kind,
            target_id=target_id,
            label_kind=label_kind,
            value=clean,
            study_id=study_id,
            turn=turn,
            self_played=self_played,
            seconds=seconds,
            created_at=now,
        )
        if assignment_id is not None and required:
            marks = ",".join("?" * len(required))
            have = conn.execute(
                f"SELECT count(DISTINCT label_kind) FROM annotations WHERE study_id IS ? AND "
                f"annotator=? AND target_kind=? AND target_id=? AND label_kind IN ({marks})",
                (study_id, annotator, target_kind, target_id, *required),
            ).fetchone()
            if int(have[0]) >= len(set(required)):
                conn.execute(
                    "UPDATE assignments SET status='done', completed_at=? "
                    "WHERE assignment_id=? AND status='pending'",
                    (now, assignment_id),
                )
    return annotation_id


_COLS = (
    "annotation_id, study_id, annotator, target_kind, target_id, label_kind, value, turn, "
    "self_played, seconds, created_at"
)


def _record(row: tuple[Any, ...]) -> LabelRecord:
    return LabelRecord(
        annotation_id=row[0],
        study_id=row[1],
        annotator=row[2],
        target_kind=row[3],
        target_id=row[4],
        label_kind=row[5],
        value=json.loads(row[6]),
        turn=row[7],
        self_played=bool(row[8]),
        seconds=row[9],
        created_at=row[10],
    )


def list_labels(
    store: Store,
    *,
    study_id: str | None = None,
    annotator: str | None = None,
    target_kind: str | None = None,
    target_id: str | None = None,
    label_kind: str | None = None,
    latest_only: bool = False,
) -> list[LabelRecord]:
    """Return stored labels, oldest first, optionally only the latest per labelling slot.

    Args:
        store: The open store.
        study_id: Only this study's labels.
        annotator: Only this annotator's labels.
        target_kind: Only targets of this kind.
        target_id: Only this target.
        label_kind: Only this label kind.
        latest_only: Keep only the newest label per (annotator, target, kind, turn);
            ``comment`` labels are always all kept.

    Returns:
        The matching labels.
    """
    ensure_study_schema(store)
    where, args = [], []
    for col, val in (
        ("study_id", study_id),
        ("annotator", annotator),
        ("target_kind", target_kind),
        ("target_id", target_id),
        ("label_kind", label_kind),
    ):
        if val is not None:
            where.append(f"{col}=?")
            args.append(val)
    sql = f"SELECT {_COLS} FROM annotations"
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = [_record(r) for r in store.conn.execute(sql + " ORDER BY annotation_id", args)]
    if not latest_only:
        return rows
    latest: dict[tuple[Any, ...], LabelRecord] = {}
    for r in rows:
        key: tuple[Any, ...] = (r.annotator, r.target_kind, r.target_id, r.label_kind, r.turn)
        if r.label_kind == "comment":
            key = (*key, r.annotation_id)
        latest[key] = r
    return sorted(latest.values(), key=lambda r: r.annotation_id)


def require_target_exists(store: Store, target_kind: str, target_id: str) -> None:
    """Raise NotFoundError when an episode / pair / session / sample target does not exist."""
    ensure_study_schema(store)
    conn = store.conn
    if target_kind in ("episode", "episode_pair"):
        for ep in episodes_of(target_kind, target_id):
            if not store.episode_exists(ep):
                raise NotFoundError(f"no episode {ep}")
    elif target_kind == "session":
        if (
            conn.execute("SELECT 1 FROM sessions WHERE session_id=?", (target_id,)).fetchone()
            is None
        ):
            raise NotFoundError(f"no imported session {target_id}")
    elif target_kind == "sample":
        if conn.execute("SELECT 1 FROM samples WHERE sample_id=?", (target_id,)).fetchone() is None:
            raise NotFoundError(f"no sample {target_id}")
    else:
        raise ConfigError(f"unknown target kind {target_kind!r}", file="study", field="target_kind")
