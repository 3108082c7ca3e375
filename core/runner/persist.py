"""A sweep's store rows: batched writes of finished episodes and the resume bookkeeping.

Resume rules: an episode key whose latest row ended with a scored outcome is skipped; a key
whose attempts all ended in ERROR, or whose row was left ``running`` by a crash (marked ERROR
``interrupted`` first), is played again as a new attempt (``<key>-rN``; events are append-only,
so a husk is never rewritten).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.model.episode import Outcome
from core.model.redaction import redact
from core.model.run import EpisodeKey
from core.runner.units import EpisodeRecord, key_id
from core.store import Store, utcnow

_EPISODE_SQL = (
    "INSERT INTO episodes(episode_id, run_id, sample_id, benchmark, method, persona_id, seed, "
    "parent_episode_id, header, status, outcome, n_events, summary, created_at, ended_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 'ended', ?, ?, ?, ?, ?)"
)
_EVENT_SQL = "INSERT INTO events VALUES (?, ?, ?, ?, ?)"


def write_records(store: Store, records: Sequence[EpisodeRecord]) -> None:
    """Write finished episodes (row, events, outcome, summary) in one transaction.

    The rows are what :meth:`Store.create_episode`, :meth:`Store.append` and
    :meth:`Store.finish` would leave for each episode, written at once.
    """
    if not records:
        return
    now = utcnow()
    episodes = []
    events: list[tuple[str, int, str, int, str]] = []
    for rec in records:
        k, eid = rec.key, rec.episode_id
        summary = dict(rec.summary)
        if rec.cost_usd:
            summary["cost_usd"] = rec.cost_usd
        if rec.cost_by_role:
            summary["cost_by_role"] = rec.cost_by_role
        episodes.append(
            (
                eid,
                k.run_id,
                k.sample_id,
                k.benchmark,
                k.method,
                rec.persona_id or k.persona,
                k.seed,
                redact(rec.header_json),
                rec.outcome,
                len(rec.events_json),
                redact(json.dumps(summary)),
                now,
                now,
            )
        )
        events.extend(
            (eid, seq, kind, turn, redact(body)) for seq, kind, turn, body in rec.events_json
        )
    with store.transaction() as conn:
        conn.executemany(_EPISODE_SQL, episodes)
        conn.executemany(_EVENT_SQL, events)


@dataclass
class ResumeState:
    """Per-key bookkeeping from the store rows of a run (keys are ``EpisodeKey.key()``)."""

    done: set[str] = field(default_factory=set)
    errors: set[str] = field(default_factory=set)
    attempts: dict[str, int] = field(default_factory=dict)


def resume_state(
    store: Store, run_id: str, keys: Sequence[EpisodeKey], key_ids: Sequence[str] | None = None
) -> ResumeState:
    """Read which keys are finished, which errored, and each key's next attempt number.

    Rows left ``running`` by a crash are marked ERROR (``interrupted``) on the way.
    """
    kids = key_ids if key_ids is not None else [key_id(k) for k in keys]
    by_cell = {k.cell(): kid for k, kid in zip(keys, kids, strict=True)}
    st = ResumeState()
    rows = store.episode_rows(run_id=run_id)
    latest: dict[str, tuple[int, str | None]] = {}
    for r in rows:
        cell = (r["benchmark"], r["sample_id"], r["method"], r["persona_id"], r["seed"])
        k = by_cell.get(cell)
        if k is None:
            continue
        st.attempts[k] = st.attempts.get(k, 0) + 1
        outcome = r["outcome"]
        if r["status"] != "ended":
            store.finish(
                r["episode_id"], Outcome.ERROR, {"error": "interrupted", "superseded": True}
            )
            outcome = Outcome.ERROR.value
        eid = r["episode_id"]
        n = int(eid.rsplit("-r", 1)[1]) if "-r" in eid else 0
        if k not in latest or n >= latest[k][0]:
            latest[k] = (n, outcome)
        if outcome != Outcome.ERROR.value:
            st.done.add(k)
    st.errors = {k for k, (_, o) in latest.items() if o == Outcome.ERROR.value} - st.done
    return st
