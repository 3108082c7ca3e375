"""Who may play which episode: ownership, study assignments, blindness, discarded and stale plays.

* **Ownership.** A play episode belongs to the person who started it, or to the person whose
  study assignment it fulfils (``study_plays``). :func:`open_play` refuses anyone else who opens
  it by ``?episode=`` with a plain sentence, so one annotator can neither read nor end another's
  episode.
* **Blindness.** The hidden-intent visibility rule lives in :mod:`core.studio.blind`; opening
  an episode applies it too (an episode started before a blind assignment stops opening).
* **Abandoned plays.** An unfinished play can be discarded by its owner, and it expires after
  ``DRIFTBENCH_PLAY_EXPIRY_HOURS`` (:data:`DISCARD_TABLE`); neither is offered for resuming
  again and the play pages refuse to continue it. (Ending such an episode in the event log
  itself is the engine's job; the episode row stays "running".)
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from core.model.base import Strict
from core.store import Store, utcnow
from core.studies.schema import ensure_study_schema

PlayRole = Literal["user", "agent"]

STUDY_ROLE: dict[str, str] = {"user": "play_user", "agent": "play_agent"}
"""Play role → the ``study_plays`` / assignment role."""


DISCARD_TABLE = "play_discards"
"""Studio table of discarded and expired plays (created on first use)."""

_DDL = (
    f"CREATE TABLE IF NOT EXISTS {DISCARD_TABLE} (episode_id TEXT PRIMARY KEY, "
    "annotator_id TEXT NOT NULL, why TEXT NOT NULL, at TEXT NOT NULL)"
)

HUMAN = "human"


class PlayOwner(Strict):
    """Who an episode's play is recorded for."""

    annotator_id: str
    role: str
    sample_id: str
    study_id: str | None = None
    assignment_id: int | None = None
    created_at: str


class Access(Strict):
    """Whether a person may open a play episode, and why not."""

    ok: bool
    reason: str = ""


def _ensure(store: Store) -> None:
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (DISCARD_TABLE,)
    ).fetchone()
    if row is None:
        with store.transaction() as conn:
            conn.execute(_DDL)


def play_owner(store: Store, episode_id: str) -> PlayOwner | None:
    """The recorded player of ``episode_id`` (None when nobody is recorded)."""
    ensure_study_schema(store)
    row = store.conn.execute(
        "SELECT annotator_id, role, sample_id, study_id, assignment_id, created_at "
        "FROM study_plays WHERE episode_id=?",
        (episode_id,),
    ).fetchone()
    if row is None:
        return None
    return PlayOwner(
        annotator_id=row[0],
        role=row[1],
        sample_id=row[2],
        study_id=row[3],
        assignment_id=row[4],
        created_at=row[5],
    )


def discarded(store: Store, episode_id: str) -> str | None:
    """Why a play was set aside (``discarded`` / ``expired``), or None."""
    _ensure(store)
    row = store.conn.execute(
        f"SELECT why FROM {DISCARD_TABLE} WHERE episode_id=?", (episode_id,)
    ).fetchone()
    return str(row[0]) if row else None


def discard_play(store: Store, episode_id: str, person: str, *, why: str = "discarded") -> bool:
    """Set an unfinished play aside (only its owner may); returns True.

    Raises:
        ProtocolError: Not the person's play, or the episode has ended.
    """
    from core.errors import ProtocolError

    owner = play_owner(store, episode_id)
    if owner is None or owner.annotator_id != person:
        raise ProtocolError(f"episode {episode_id} is not one of your plays")
    status = store.episode_status(episode_id)
    if status is not None and status[0] == "ended":
        raise ProtocolError(f"episode {episode_id} has ended; there is nothing to discard")
    _ensure(store)
    with store.transaction() as conn:
        conn.execute(
            f"INSERT OR IGNORE INTO {DISCARD_TABLE}(episode_id, annotator_id, why, at) "
            "VALUES (?,?,?,?)",
            (episode_id, person, why, utcnow()),
        )
    return True


def _age_hours(stamp: str, now: datetime) -> float:
    try:
        then = datetime.fromisoformat(stamp)
    except ValueError:
        return 0.0
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return (now - then).total_seconds() / 3600.0


def expire_plays(store: Store, max_hours: float, *, now: datetime | None = None) -> list[str]:
    """Mark unfinished plays older than ``max_hours`` as expired (0 = never); return their ids."""
    if max_hours <= 0:
        return []
    _ensure(store)
    t = now or datetime.now(UTC)
    rows = store.conn.execute(
        "SELECT p.episode_id, p.annotator_id, p.created_at FROM study_plays p "
        "JOIN episodes e ON e.episode_id = p.episode_id "
        f"LEFT JOIN {DISCARD_TABLE} d ON d.episode_id = p.episode_id "
        "WHERE e.status != 'ended' AND d.episode_id IS NULL"
    ).fetchall()
    stale = [(eid, who) for eid, who, created in rows if _age_hours(created, t) > max_hours]
    if stale:
        with store.transaction() as conn:
            conn.executemany(
                f"INSERT OR IGNORE INTO {DISCARD_TABLE}(episode_id, annotator_id, why, at) "
                "VALUES (?,?,'expired',?)",
                [(eid, who, utcnow()) for eid, who in stale],
            )
    return [eid for eid, _ in stale]


def unfinished_plays(store: Store, player: str, limit: int = 20) -> list[dict[str, Any]]:
    """Episodes ``player`` is playing that have not ended, were not discarded and not expired."""
    _ensure(store)
    rows = store.conn.execute(
        "SELECT p.episode_id, p.role, e.benchmark, e.persona_id, e.n_events, p.created_at "
        "FROM study_plays p JOIN episodes e ON e.episode_id = p.episode_id "
        f"LEFT JOIN {DISCARD_TABLE} d ON d.episode_id = p.episode_id "
        "WHERE p.annotator_id = ? AND e.status != 'ended' AND d.episode_id IS NULL "
        "ORDER BY p.created_at DESC LIMIT ?",
        (player, int(limit)),
    ).fetchall()
    return [
        {
            "episode_id": r[0],
            "role": r[1],
            "page": r[1] if r[1] in ("play_user", "play_agent") else "play_user",
            "benchmark": r[2],
            "persona": r[3],
            "events": int(r[4]),
            "started": r[5],
        }
        for r in rows
    ]


def is_playable(store: Store, episode_id: str, role: PlayRole) -> bool:
    """Whether ``episode_id`` exists and was started for a person playing ``role``."""
    if not episode_id or not store.episode_exists(episode_id):
        return False
    header = store.header(episode_id)
    return bool(header.user_voice == HUMAN if role == "user" else header.agent == HUMAN)


def open_play(
    store: Store,
    episode_id: str,
    role: PlayRole,
    person: str,
    *,
    allow_unowned: bool = False,
) -> Access:
    """May ``person`` open ``episode_id`` on the play-as-``role`` page?

    Args:
        store: The store.
        episode_id: The episode from the URL.
        role: ``user`` or ``agent`` (the page).
        person: Who asks.
        allow_unowned: Accept an episode nobody is recorded as playing (single-user mode).
    """
    if not is_playable(store, episode_id, role):
        return Access(ok=False, reason=f"Episode {episode_id} is not a play-as-{role} episode.")
    owner = play_owner(store, episode_id)
    if owner is None:
        if allow_unowned:
            return Access(ok=True)
        return Access(
            ok=False, reason=f"Episode {episode_id} has no recorded player; it cannot be opened."
        )
    if owner.annotator_id != person:
        return Access(
            ok=False,
            reason=(
                f"Episode {episode_id} belongs to another person: only the one who started it "
                "(or was assigned it) can open it."
            ),
        )
    why = discarded(store, episode_id)
    if why is not None:
        return Access(ok=False, reason=f"Episode {episode_id} was {why}; start a new one.")
    from core.studio.blind import hidden_refusal

    hidden = hidden_refusal(
        store, person, owner.sample_id, role, strict=False, assignment_id=owner.assignment_id
    )
    if hidden is not None:
        return Access(ok=False, reason=hidden)
    return Access(ok=True)


def record_play(
    store: Store,
    *,
    player: str,
    episode_id: str,
    sample_id: str,
    role: PlayRole,
    study_id: str | None = None,
    assignment_id: int | None = None,
) -> None:
    """Record who plays ``episode_id`` (and, for a study, which assignment it fulfils).

    The assignment stays pending until the episode ends (:func:`complete_assignment`).
    """
    from core.studies import record_play as record

    record(
        store,
        annotator=player,
        episode_id=episode_id,
        sample_id=sample_id,
        role=STUDY_ROLE[role],  # type: ignore[arg-type]
        study=study_id,
    )
    if assignment_id is not None:
        with store.transaction() as conn:
            conn.execute(
                "UPDATE study_plays SET assignment_id=? WHERE episode_id=?",
                (int(assignment_id), episode_id),
            )
            conn.execute(
                "UPDATE assignments SET opened_at=coalesce(opened_at, ?) WHERE assignment_id=?",
                (utcnow(), int(assignment_id)),
            )


def complete_assignment(store: Store, episode_id: str) -> bool:
    """Mark the study assignment an ended play fulfils as done (idempotent).

    Returns:
        True when an assignment was marked done now.
    """
    owner = play_owner(store, episode_id)
    status = store.episode_status(episode_id)
    if owner is None or owner.assignment_id is None or status is None or status[0] != "ended":
        return False
    with store.transaction() as conn:
        cur = conn.execute(
            "UPDATE assignments SET status='done', completed_at=? "
            "WHERE assignment_id=? AND status='pending'",
            (utcnow(), owner.assignment_id),
        )
        return bool(cur.rowcount)


class AssignedPlay(Strict):
    """A pending play item of a study, as the play pages start it."""

    assignment_id: int
    study_id: str
    role: PlayRole
    sample_id: str
    benchmark: str
    persona: str | None = None
    patience_visible: bool = False
    note: str = ""
    episode_id: str | None = None
    agent: str = "symbolic"
    method: str = "A2"
    user_reader: str = "offline"

    def start_args(self) -> dict[str, Any]:
        """The role's start arguments the study fixes (agent and method, or the reader)."""
        if self.role == "user":
            return {
                "method": self.method,
                "model": None if self.agent in ("", "symbolic") else self.agent,
            }
        return {"show_patience": self.patience_visible, "interpreter": self.user_reader}


def assigned_play(store: Store, assignment_id: int, person: str, role: PlayRole) -> AssignedPlay:
    """The play assignment ``assignment_id`` of ``person`` for the ``role`` page.

    Raises:
        ProtocolError: Not this person's, not a play item for this role, already done, or the
            study is closed.
        NotFoundError: No such assignment.
    """
    from core.errors import ProtocolError
    from core.studies import get_assignment, get_study
    from core.studies.studies import condition_of

    a = get_assignment(store, int(assignment_id))
    if a["annotator_id"] != person:
        raise ProtocolError("this study item is assigned to someone else")
    if a["role"] != STUDY_ROLE[role] or a["target_kind"] != "sample":
        raise ProtocolError(f"this study item is not a play-as-{role} item")
    study = get_study(store, a["study_id"])
    if study.status != "open":
        raise ProtocolError("this study is closed")
    if a["status"] == "done":
        raise ProtocolError("this study item is already done")
    row = store.conn.execute(
        "SELECT benchmark FROM samples WHERE sample_id=?", (a["target_id"],)
    ).fetchone()
    if row is None:
        from core.errors import NotFoundError

        raise NotFoundError(f"the sample of study item {assignment_id} is not in the store")
    cond = condition_of(a["condition"] or "")
    _ensure(store)
    existing = store.conn.execute(
        "SELECT p.episode_id FROM study_plays p "
        f"LEFT JOIN {DISCARD_TABLE} d ON d.episode_id = p.episode_id "
        "WHERE p.assignment_id=? AND p.annotator_id=? AND d.episode_id IS NULL "
        "ORDER BY p.created_at DESC LIMIT 1",
        (int(assignment_id), person),
    ).fetchone()
    return AssignedPlay(
        assignment_id=int(assignment_id),
        study_id=str(a["study_id"]),
        role=role,
        sample_id=str(a["target_id"]),
        benchmark=str(row[0]),
        persona=cond.persona_id if cond else None,
        patience_visible=bool(cond.patience_visible) if cond else False,
        note=cond.note if cond else "",
        episode_id=str(existing[0]) if existing else None,
        agent=study.spec.agent,
        method=study.spec.method,
        user_reader=study.spec.user_reader,
    )
