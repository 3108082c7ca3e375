"""Intent graphs and samples as stored: the ``graphs`` and ``samples`` tables.

Bodies are the models' JSON; the index columns serve the pickers and the sweeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.errors import NotFoundError
from core.store.connection import StoreBase


class CatalogRepo(StoreBase):
    """The ``graphs`` and ``samples`` tables."""

    def put_graphs_and_samples(
        self, graphs: Sequence[Any], samples: Sequence[Any], *, source: str
    ) -> tuple[int, int]:
        """Insert (or replace) intent graphs and samples in one transaction.

        A graph or sample already stored as ``bundled`` keeps that provenance: building the
        same graph again (same id, same content) never relabels a bundled one as ``built``.

        Args:
            graphs: ``IntentGraph`` models.
            samples: ``Sample`` models.
            source: Where they came from (``bundled``, ``built``, ``release:<dir>``).

        Returns:
            (graphs written, samples written).
        """
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO graphs VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(graph_id) DO UPDATE "
                "SET benchmark=excluded.benchmark, env_id=excluded.env_id, "
                "root_intent_id=excluded.root_intent_id, source=excluded.source, "
                "body=excluded.body WHERE graphs.source != 'bundled' "
                "OR excluded.source = 'bundled'",
                [
                    (
                        g.graph_id,
                        g.benchmark,
                        g.env_id,
                        g.root.intent_id,
                        source,
                        g.model_dump_json(),
                    )
                    for g in graphs
                ],
            )
            conn.executemany(
                "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(sample_id) DO "
                "UPDATE SET benchmark=excluded.benchmark, graph_id=excluded.graph_id, "
                "fault_types=excluded.fault_types, k=excluded.k, split=excluded.split, "
                "source=excluded.source, body=excluded.body WHERE samples.source != 'bundled' "
                "OR excluded.source = 'bundled'",
                [
                    (
                        s.sample_id,
                        s.benchmark,
                        s.graph_id,
                        ",".join(str(f) for f in s.faults),
                        len(s.faults),
                        s.split,
                        source,
                        s.model_dump_json(),
                    )
                    for s in samples
                ],
            )
        return len(graphs), len(samples)

    def graph_json(self, graph_id: str) -> str:
        """Return one graph's JSON body."""
        row = self.conn.execute("SELECT body FROM graphs WHERE graph_id=?", (graph_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no graph {graph_id}")
        return str(row[0])

    def sample_json(self, sample_id: str) -> str:
        """Return one sample's JSON body."""
        row = self.conn.execute(
            "SELECT body FROM samples WHERE sample_id=?", (sample_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no sample {sample_id}")
        return str(row[0])

    def sample_rows(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """List sample index rows (no bodies)."""
        sql = "SELECT sample_id, benchmark, graph_id, fault_types, k, split, source FROM samples"
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        cur = self.conn.execute(sql + " ORDER BY benchmark, sample_id", args)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
