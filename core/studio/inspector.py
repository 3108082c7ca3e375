"""Read models of the Inspect page: find episodes by facets and describe one for researchers.

Researcher-only: these functions read the sample's mask and fault types. Agent-side pages never
call them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.model.base import StrictMutable
from core.model.events import EpisodeStarted, Event
from core.store import Store

FACETS = ("run", "benchmark", "method", "persona", "outcome", "fault")
"""Filters offered by :func:`episode_index`."""


def episode_index(
    store: Store,
    *,
    run: str | None = None,
    benchmark: str | None = None,
    method: str | None = None,
    persona: str | None = None,
    outcome: str | None = None,
    fault: str | None = None,
    episode: str | None = None,
    limit: int = 5000,
) -> list[dict[str, Any]]:
    """List episodes matching every given facet, newest first, with their fault types."""
    sql = (
        "SELECT e.episode_id, e.run_id, r.name AS run, e.benchmark, e.method, e.persona_id,"
        " e.seed, e.status, e.outcome, e.n_events, e.parent_episode_id, e.sample_id,"
        " s.fault_types, e.created_at FROM episodes e"
        " LEFT JOIN runs r ON r.run_id = e.run_id"
        " LEFT JOIN samples s ON s.sample_id = e.sample_id"
    )
    where: list[str] = []
    args: list[Any] = []
    for column, value in (
        ("e.episode_id", episode),
        ("e.benchmark", benchmark),
        ("e.method", method),
        ("e.persona_id", persona),
        ("e.outcome", outcome),
    ):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if run:
        where.append("(e.run_id = ? OR r.name = ?)")
        args += [run, run]
    if fault:
        where.append("(',' || s.fault_types || ',') LIKE ?")
        args.append(f"%,{fault},%")
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY e.created_at DESC, e.episode_id LIMIT ?"
    args.append(int(limit))
    cur = store.conn.execute(sql, args)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def facet_values(store: Store) -> dict[str, list[str]]:
    """Distinct values of each facet present in the store (for the filter widgets)."""
    conn = store.conn

    def distinct(sql: str) -> list[str]:
        return [str(r[0]) for r in conn.execute(sql).fetchall() if r[0] is not None]

    faults: set[str] = set()
    for (ft,) in conn.execute(
        "SELECT DISTINCT s.fault_types FROM samples s JOIN episodes e ON e.sample_id = s.sample_id"
    ):
        faults.update(f for f in str(ft).split(",") if f)
    return {
        "run": distinct("SELECT name FROM runs ORDER BY created_at DESC"),
        "benchmark": distinct("SELECT DISTINCT benchmark FROM episodes ORDER BY 1"),
        "method": distinct("SELECT DISTINCT method FROM episodes ORDER BY 1"),
        "persona": distinct("SELECT DISTINCT persona_id FROM episodes ORDER BY 1"),
        "outcome": distinct("SELECT DISTINCT outcome FROM episodes ORDER BY 1"),
        "fault": sorted(faults),
    }


class HiddenTruth(StrictMutable):
    """What the researcher reveal shows: the hidden intent, the mask, the faults."""

    query: str
    faults: list[str]
    hidden_slots: list[str]
    mask: list[dict[str, Any]]
    root_conditions: list[dict[str, Any]]
    persona: str
    budget: float
    thresholds: list[float]
    fates: list[bool]
    graph_nodes: int = Field(description="Nodes of the intent graph (root + children).")


def hidden_truth(events: list[Event]) -> HiddenTruth:
    """Extract the researcher reveal from an episode's first event."""
    first = events[0]
    if not isinstance(first, EpisodeStarted):
        raise ValueError("episode log does not start with episode_started")
    s = first.sample
    root = first.graph.node(s.root_intent_id)
    return HiddenTruth(
        query=s.query,
        faults=[str(f) for f in s.faults],
        hidden_slots=list(s.hidden_slots),
        mask=[m.model_dump(mode="json") for m in s.mask],
        root_conditions=[c.model_dump(mode="json") for c in root.conditions],
        persona=first.persona.id,
        budget=first.budget,
        thresholds=list(first.thresholds),
        fates=list(first.fates),
        graph_nodes=len(first.graph.nodes),
    )
