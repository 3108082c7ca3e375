"""Episodes and their append-only event logs: the ``episodes`` and ``events`` tables.

Every header, event body and summary passes :func:`core.model.redaction.redact` on its way in,
so no known key (nor a fragment of one, nor a credential-shaped string) is ever stored.

:class:`EpisodesRepo` implements :class:`core.engine.eventlog.EventLog` over SQLite: a header row
per episode, events appended in one transaction each with a ``seq`` that must continue the
stored sequence exactly (triggers reject UPDATE and DELETE on ``events``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.errors import NotFoundError
from core.model.redaction import redact
from core.store.connection import StoreBase, StoreError, utcnow


class EpisodesRepo(StoreBase):
    """The ``episodes`` and ``events`` tables."""

    def create_episode(self, header: Any) -> None:
        """Create an episode row from an ``EpisodeHeader``."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO episodes(episode_id, run_id, sample_id, benchmark, method, "
                "persona_id, seed, parent_episode_id, header, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    header.episode_id,
                    getattr(header, "run_id", None),
                    header.sample_id,
                    header.benchmark,
                    header.method,
                    header.persona_id,
                    header.seed,
                    getattr(header, "parent_episode_id", None),
                    redact(header.model_dump_json()),
                    utcnow(),
                ),
            )

    def append(self, episode_id: str, events: Sequence[Any]) -> None:
        """Append events; their ``seq`` must continue the stored sequence exactly."""
        if not events:
            return
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT n_events, status FROM episodes WHERE episode_id=?", (episode_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no episode {episode_id}")
            n = int(row[0])
            rows = []
            for i, ev in enumerate(events):
                if ev.seq != n + i:
                    raise StoreError(
                        f"episode {episode_id}: event seq {ev.seq} does not continue at {n + i}"
                    )
                rows.append((episode_id, ev.seq, ev.kind, ev.turn, redact(ev.model_dump_json())))
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute(
                "UPDATE episodes SET n_events=? WHERE episode_id=?", (n + len(rows), episode_id)
            )

    def header_json(self, episode_id: str) -> str:
        """Return an episode header's JSON."""
        row = self.conn.execute(
            "SELECT header FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no episode {episode_id}")
        return str(row[0])

    def event_jsons(self, episode_id: str, *, after_seq: int = -1) -> list[str]:
        """Return an episode's event bodies in order (optionally only after ``after_seq``)."""
        rows = self.conn.execute(
            "SELECT body FROM events WHERE episode_id=? AND seq>? ORDER BY seq",
            (episode_id, after_seq),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def header(self, episode_id: str) -> Any:
        """Return the typed ``EpisodeHeader``."""
        from core.model.episode import EpisodeHeader

        return EpisodeHeader.model_validate_json(self.header_json(episode_id))

    def events(self, episode_id: str) -> list[Any]:
        """Return the typed events of an episode (older versions upgraded on read)."""
        from core.model.events import parse_event

        return [parse_event(json.loads(b)) for b in self.event_jsons(episode_id)]

    def finish(self, episode_id: str, outcome: Any, summary: dict[str, Any]) -> None:
        """Mark an episode ended with its outcome and a small summary."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE episodes SET status='ended', outcome=?, summary=?, ended_at=? "
                "WHERE episode_id=?",
                (
                    str(getattr(outcome, "value", outcome)),
                    redact(json.dumps(summary)),
                    utcnow(),
                    episode_id,
                ),
            )

    def episode_rows(
        self,
        *,
        run_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """List episode index rows (no events), filtered by run and status."""
        sql = (
            "SELECT episode_id, run_id, sample_id, benchmark, method, persona_id, seed, "
            "parent_episode_id, status, outcome, n_events, summary, created_at, ended_at "
            "FROM episodes"
        )
        where, args = [], []
        if run_id is not None:
            where.append("run_id=?")
            args.append(run_id)
        if status is not None:
            where.append("status=?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at, episode_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        cur = self.conn.execute(sql, args)
        cols = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(cols, r, strict=True))
            d["summary"] = json.loads(d["summary"]) if d["summary"] else None
            out.append(d)
        return out

    def episode_status(self, episode_id: str) -> tuple[str, str | None] | None:
        """Return ``(status, outcome)`` of an episode, or None when it does not exist."""
        row = self.conn.execute(
            "SELECT status, outcome FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return (str(row[0]), row[1]) if row else None

    def count_events(self, episode_id: str) -> int:
        """Return how many events an episode has (cheap; no bodies are read)."""
        row = self.conn.execute(
            "SELECT n_events FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def episode_exists(self, episode_id: str) -> bool:
        """Return whether an episode row exists."""
        row = self.conn.execute(
            "SELECT 1 FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return row is not None
