"""Host worlds as stored: the ``worlds`` table.

Imported τ²-bench domains, WebShop catalogues and bundled worlds, one row each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.store.connection import StoreBase, utcnow


@dataclass(frozen=True)
class WorldRecord:
    """One imported or bundled host world as stored."""

    world_id: str
    benchmark: str
    name: str
    source: str
    payload: dict[str, Any]
    summary: dict[str, Any]
    created_at: str


class WorldsRepo(StoreBase):
    """The ``worlds`` table."""

    def put_world(
        self,
        *,
        benchmark: str,
        world_id: str,
        name: str,
        source: str,
        payload: dict[str, Any],
        summary: dict[str, Any],
    ) -> None:
        """Insert or replace one host world in a single transaction."""
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO worlds VALUES (?, ?, ?, ?, ?, ?, ?)",
                (world_id, benchmark, name, source, body, json.dumps(summary), utcnow()),
            )

    def get_world(self, world_id: str) -> WorldRecord | None:
        """Return one stored world, or None."""
        row = self.conn.execute(
            "SELECT world_id, benchmark, name, source, payload, summary, created_at "
            "FROM worlds WHERE world_id=?",
            (world_id,),
        ).fetchone()
        if row is None:
            return None
        return WorldRecord(
            row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]), row[6]
        )

    def list_worlds(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """List stored worlds (without payloads), newest first."""
        sql = "SELECT world_id, benchmark, name, source, summary, created_at FROM worlds"
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        rows = self.conn.execute(sql + " ORDER BY created_at DESC", args).fetchall()
        return [
            {
                "world_id": r[0],
                "benchmark": r[1],
                "name": r[2],
                "source": r[3],
                "summary": json.loads(r[4]),
                "created_at": r[5],
            }
            for r in rows
        ]
