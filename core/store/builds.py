"""Construction statistics and world stamps (schema v3): what each build or import recorded."""

from __future__ import annotations

import json
from typing import Any

from core.store.connection import StoreBase, utcnow


class BuildsRepo(StoreBase):
    """The ``construction_builds`` table and the sample index behind ``build report``."""

    def put_build(
        self,
        *,
        build_id: str,
        benchmark: str,
        source: str,
        world_id: str | None,
        kind: str,
        params: dict[str, Any],
        stats: dict[str, Any],
    ) -> None:
        """Record (or replace) the statistics of one build or import (one transaction)."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO construction_builds VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    build_id,
                    benchmark,
                    source,
                    world_id,
                    kind,
                    json.dumps(params, sort_keys=True),
                    json.dumps(stats, sort_keys=True),
                    utcnow(),
                ),
            )

    def build_rows(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """Recorded builds (oldest first), with ``params`` and ``stats`` parsed."""
        sql = (
            "SELECT build_id, benchmark, source, world_id, kind, params, stats, created_at "
            "FROM construction_builds"
        )
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        cur = self.conn.execute(sql + " ORDER BY created_at, build_id", args)
        cols = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(cols, r, strict=True))
            d["params"] = json.loads(d["params"])
            d["stats"] = json.loads(d["stats"])
            out.append(d)
        return out

    def world_stamp(self, world_id: str) -> tuple[str, int] | None:
        """``(created_at, payload length)`` of a stored world without reading its payload."""
        row = self.conn.execute(
            "SELECT created_at, length(payload) FROM worlds WHERE world_id=?", (world_id,)
        ).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def sample_index(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """Sample rows with their world id and query (for selection, verify and reports)."""
        sql = (
            "SELECT sample_id, benchmark, graph_id, fault_types, k, split, source, "
            "json_extract(body, '$.world.world_id') AS world_id, "
            "json_extract(body, '$.world.fingerprint') AS world_fingerprint, "
            "json_extract(body, '$.world.name') AS world_name, "
            "json_extract(body, '$.query') AS query FROM samples"
        )
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        cur = self.conn.execute(sql + " ORDER BY benchmark, sample_id", args)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
