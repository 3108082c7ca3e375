"""Sweeps as stored: the ``runs`` table (spec, status and progress counters)."""

from __future__ import annotations

from typing import Any

from core.errors import NotFoundError
from core.store.connection import StoreBase, utcnow


class RunsRepo(StoreBase):
    """The ``runs`` table."""

    def put_run(self, run_id: str, name: str, spec_json: str, total: int) -> None:
        """Create a run row, or update its spec/total when it already exists (resume)."""
        now = utcnow()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs(run_id, name, spec, status, total, created_at, updated_at) "
                "VALUES (?, ?, ?, 'pending', ?, ?, ?) "
                "ON CONFLICT(run_id) DO UPDATE SET total=excluded.total, "
                "updated_at=excluded.updated_at",
                (run_id, name, spec_json, total, now, now),
            )

    def set_run_status(
        self,
        run_id: str,
        status: str,
        *,
        completed: int | None = None,
        errors: int | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """Update a run's status and progress counters."""
        sets = ["status=?", "updated_at=?"]
        args: list[Any] = [status, utcnow()]
        for col, val in (("completed", completed), ("errors", errors), ("cost_usd", cost_usd)):
            if val is not None:
                sets.append(f"{col}=?")
                args.append(val)
        with self.transaction() as conn:
            conn.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id=?", (*args, run_id))

    def run_counts(self, run_id: str) -> tuple[int, int]:
        """(completed, errors) of a run counted from its stored episodes, not its counters.

        The run row's counters are written every half second, so a killed sweep leaves them
        behind what is stored; these counts are what a resume will see. An episode cell
        (benchmark, sample, method, persona, seed) counts as completed when any of its attempts
        ended with a scored outcome, as an error when every ended attempt was an ERROR.
        """
        row = self.conn.execute(
            "SELECT COALESCE(SUM(ok > 0), 0), COALESCE(SUM(ok = 0 AND bad > 0), 0) FROM ("
            "SELECT SUM(status = 'ended' AND outcome != 'ERROR') AS ok, "
            "SUM(status = 'ended' AND outcome = 'ERROR') AS bad FROM episodes "
            "WHERE run_id=? GROUP BY benchmark, sample_id, method, persona_id, seed)",
            (run_id,),
        ).fetchone()
        return int(row[0]), int(row[1])

    def get_run(self, run_or_name: str) -> dict[str, Any]:
        """Return a run row by id or name."""
        cur = self.conn.execute(
            "SELECT * FROM runs WHERE run_id=? OR name=?", (run_or_name, run_or_name)
        )
        row = cur.fetchone()
        if row is None:
            raise NotFoundError(f"no run named or with id '{run_or_name}'")
        return dict(zip([d[0] for d in cur.description], row, strict=True))

    def list_runs(self) -> list[dict[str, Any]]:
        """List runs, newest first."""
        cur = self.conn.execute(
            "SELECT run_id, name, status, total, completed, errors, cost_usd, created_at, "
            "updated_at FROM runs ORDER BY created_at DESC"
        )
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
