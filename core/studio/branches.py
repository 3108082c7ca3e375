"""Branches are runs of their own: a fork of an episode never joins its parent's run.

A branch (an episode forked before some turn and continued by another method, or by a person)
used to be filed under the parent episode's run, so a finished run's GRIP grid changed every
time someone branched from one of its episodes ("92 of 90 episodes", an n=1 row bolded as the
benchmark's best). Now every branch gets its own run row:

* ``run_id`` ``br-<episode id>``, ``name`` ``branch <id> of <parent> @ turn <t> · <method>``;
* ``spec`` a small JSON object (``{"kind": "branch", "parent_episode_id", "parent_run_id",
  "fork_turn", "method", "agent"}``), never a :class:`~core.model.run.RunSpec` (a branch run
  cannot be resumed as a sweep);
* ``total`` 1 and a status that follows the episode (:func:`sync_branch_runs`).

The episode header keeps its link to the parent (``parent_episode_id``, ``fork_turn``) and
carries the branch run's id. :func:`adopt_legacy_branches` moves branches made before this
change out of their parent's run (header, episode row, and their cached GRIP records).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from core.engine import episode
from core.model.episode import Outcome
from core.store import Store

BRANCH_KIND = "branch"
"""``kind`` of a branch run's spec."""

HUMAN = "human"


def branch_run_id(episode_id: str) -> str:
    """The run id of the branch episode ``episode_id``."""
    return f"br-{episode_id}"


def branch_spec(spec_json: str | None) -> dict[str, Any] | None:
    """The parsed spec of a branch run, or None for any other run."""
    try:
        spec = json.loads(spec_json or "")
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and spec.get("kind") == BRANCH_KIND else None


def _name(new_id: str, parent_id: str, turn: int, method: str) -> str:
    return f"branch {new_id[:8]} of {parent_id[:8]} @ turn {turn} · {method}"


def create_branch(store: Store, episode_id: str, turn: int, method: str) -> str:
    """Fork ``episode_id`` before ``turn`` into a new branch run; return the new episode id.

    Args:
        store: The store.
        episode_id: The parent episode.
        turn: The first turn the branch plays itself (the prefix before it is copied).
        method: The method that continues it (``human`` = a person takes over as the agent).

    Raises:
        ProtocolError: ``turn`` is out of range for the parent (nothing is written).
    """
    parent = store.header(episode_id)
    agent = HUMAN if method == HUMAN else "symbolic"
    new_id = uuid.uuid4().hex[:16]
    run_id = branch_run_id(new_id)
    spec = {
        "kind": BRANCH_KIND,
        "parent_episode_id": episode_id,
        "parent_run_id": parent.run_id,
        "fork_turn": int(turn),
        "method": method,
        "agent": agent,
    }
    store.put_run(run_id, _name(new_id, episode_id, int(turn), method), json.dumps(spec), 1)
    try:
        episode.fork(
            store, episode_id, int(turn), agent, method=method, episode_id_new=new_id, run_id=run_id
        )
    except BaseException:
        with store.transaction() as conn:  # a refused fork leaves no run behind
            conn.execute("DELETE FROM episodes WHERE episode_id=? AND n_events=0", (new_id,))
            conn.execute("DELETE FROM runs WHERE run_id=?", (run_id,))
        raise
    store.set_run_status(run_id, "running")
    return new_id


def sync_branch_runs(store: Store) -> int:
    """Bring every branch run's status and counters in line with its episode.

    ``completed`` once the episode ended (``errors`` 1 instead when it ended in ERROR),
    ``running`` before. Returns how many runs changed.
    """
    rows = store.conn.execute(
        "SELECT r.run_id, r.status, r.completed, r.errors, e.status, e.outcome FROM runs r "
        "LEFT JOIN episodes e ON e.run_id = r.run_id WHERE r.run_id LIKE 'br-%'"
    ).fetchall()
    changed = 0
    for run_id, status, completed, errors, ep_status, outcome in rows:
        if ep_status is None:
            want = ("failed", 0, 0)
        elif ep_status == "ended":
            failed = outcome == Outcome.ERROR.value
            want = ("completed", 0 if failed else 1, 1 if failed else 0)
        else:
            want = ("running", 0, 0)
        if (status, int(completed), int(errors)) != want:
            store.set_run_status(run_id, want[0], completed=want[1], errors=want[2])
            changed += 1
    return changed


def adopt_legacy_branches(store: Store) -> list[str]:
    """Move branches filed under their parent's run into branch runs of their own.

    For each such episode: a branch run is created, the episode row and its stored header get
    the new run id, and its cached GRIP records (``grip_cache``) are dropped so the parent run's
    grid no longer counts it. Idempotent.

    Returns:
        The episode ids moved.
    """
    rows = store.conn.execute(
        "SELECT c.episode_id, c.run_id, c.parent_episode_id, c.method, "
        "json_extract(c.header, '$.fork_turn'), c.status FROM episodes c "
        "JOIN episodes p ON p.episode_id = c.parent_episode_id "
        "WHERE c.parent_episode_id IS NOT NULL AND c.run_id IS NOT NULL "
        "AND c.run_id = p.run_id AND c.run_id NOT LIKE 'br-%'"
    ).fetchall()
    moved = []
    has_cache = (
        store.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='grip_cache'"
        ).fetchone()
        is not None
    )
    for eid, parent_run, parent_id, method, fork_turn, _status in rows:
        run_id = branch_run_id(eid)
        turn = int(fork_turn or 0)
        spec = {
            "kind": BRANCH_KIND,
            "parent_episode_id": parent_id,
            "parent_run_id": parent_run,
            "fork_turn": turn,
            "method": method,
            "agent": HUMAN if method == HUMAN else "symbolic",
        }
        store.put_run(run_id, _name(eid, parent_id, turn, method), json.dumps(spec), 1)
        with store.transaction() as conn:
            conn.execute(
                "UPDATE episodes SET run_id=?, header=json_set(header, '$.run_id', ?) "
                "WHERE episode_id=?",
                (run_id, run_id, eid),
            )
            if has_cache:
                conn.execute("DELETE FROM grip_cache WHERE episode_id=?", (eid,))
        moved.append(str(eid))
    if moved:
        sync_branch_runs(store)
    return moved
