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
