"""Construction explorer read models: build statistics, intent graphs and samples.

Researcher-only: these views show masks, hidden slots and ground truth. Everything is read
from the store (``graphs`` / ``samples`` tables and the statistics every build and import
recorded, :func:`core.construction.report.store_report`) and, for the bundled benchmark, its
committed build statistics (``data/benchmark/<benchmark>/stats.json``); nothing here writes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from core.construction.pipeline import BUNDLED_DIR, bundled_stats
from core.construction.report import store_report
from core.model.intent import Condition, IntentGraph, ShiftOperator
from core.model.sample import FaultType, Sample
from core.store import Store

OPERATORS: tuple[str, ...] = tuple(op.value for op in ShiftOperator)
"""Shift operators in display order."""

STEP_NAMES: dict[str, str] = {
    "1": "step 1 · extractions disagree",
    "2": "step 2 · string checks",
    "3": "step 3 · executable admission",
}
"""Verifier steps, as labelled in the rejection table."""


# ---------------------------------------------------------------------------------- stats
OVERVIEW_COLUMNS: list[str] = [
    "benchmark",
    "source",
    "world",
    "host tasks",
    "tasks",
    "graphs",
    "candidates",
    "rejected step 1",
    "rejected step 2",
    "rejected step 3",
    "rejection rate",
    "samples",
    "gate removed",
    "graphs in store",
    "samples in store",
]
"""Columns of :func:`overview` (Table 4 plus what the store holds)."""


def overview(store: Store, stats_dir: Path = BUNDLED_DIR) -> pd.DataFrame:
    """One row per benchmark × source × world: Table-4 statistics of what is in the store.

    Built and imported rows come from what each build or import recorded in the store;
    bundled rows from the committed ``stats.json``. ``samples`` is what the build admitted
    (the store count when no build was recorded); the last two columns count what the store
    holds. Missing statistics are None (shown "—").
    """
    report = store_report(store, stats_dir=stats_dir)["benchmarks"]
    rows = []
    for r in report:
        rej = r["rejected_by_step"] or {}
        rows.append(
            {
                "benchmark": r["benchmark"],
                "source": r["source"],
                "world": r["world"] or r["world_id"],
                "host tasks": r["host_tasks"],
                "tasks": r["tasks"],
                "graphs": r["graphs"],
                "candidates": r["candidates"],
                "rejected step 1": rej.get("1"),
                "rejected step 2": rej.get("2"),
                "rejected step 3": rej.get("3"),
                "rejection rate": r["rejection_rate"],
                "samples": r["admitted"] if r["admitted"] is not None else r["samples"],
                "gate removed": r["gate_removed"],
                "graphs in store": _stored(store, r, "graphs"),
                "samples in store": _stored(store, r, "samples"),
            }
        )
    df = pd.DataFrame(rows, columns=OVERVIEW_COLUMNS)
    return df.astype(object).where(df.notna(), None)


def _stored(store: Store, row: dict[str, Any], table: str) -> int:
    got = store.conn.execute(
        f"SELECT count(*) FROM {table} WHERE benchmark=? AND source=? "  # noqa: S608 - fixed names
        "AND coalesce(json_extract(body, '$.world.world_id'), '')=?",
        (row["benchmark"], row["source"], row["world_id"] or ""),
    ).fetchone()
    return int(got[0])


def _store_counts(store: Store) -> dict[str, tuple[int, int]]:
    conn = store.conn
    g = dict(conn.execute("SELECT benchmark, count(*) FROM graphs GROUP BY benchmark").fetchall())
    s = dict(conn.execute("SELECT benchmark, count(*) FROM samples GROUP BY benchmark").fetchall())
    return {b: (int(g.get(b, 0)), int(s.get(b, 0))) for b in sorted(set(g) | set(s))}


def _built_parts(store: Store | None, benchmark: str) -> dict[str, Any]:
    """The latest recorded sample builds of ``benchmark`` in the store, keyed like stats.json."""
    if store is None:
        return {}
    latest: dict[str, dict[str, Any]] = {}
    for r in store.build_rows(benchmark):
        if r["kind"] != "samples":
            continue
        p = r["params"]
        key = f"k{p.get('k', 1)} {p.get('writer', '')} seed {p.get('seed', '')}".strip()
        latest[key] = r["stats"]
    return latest


def rejections(
    benchmark: str, stats_dir: Path = BUNDLED_DIR, store: Store | None = None
) -> dict[str, pd.DataFrame]:
    """Verifier rejection statistics of one benchmark's build.

    The builds recorded in ``store`` (``driftbench build samples``) when there are any, else
    the committed bundled build.

    Returns:
        ``by_step`` (k, step, rejected, candidates), ``by_fault_type`` (fault type,
        candidates, rejected, admitted, rejection rate; summed over k, a composite counted
        once per type it carries) and ``reasons`` (the most
        frequent rejection reasons with their step and fault type). Empty frames when the
        benchmark has no build statistics.
    """
    parts: dict[str, Any] = _built_parts(store, benchmark)
    if not parts:
        st = bundled_stats(stats_dir).get(benchmark, {})
        parts = st.get("samples", {})
        if isinstance(parts, dict) and "candidates" in parts:
            parts = {"k1": parts}
    steps, reasons = [], []
    cand: Counter[str] = Counter()
    rej: Counter[str] = Counter()
    adm: Counter[str] = Counter()
    for key, p in sorted(parts.items()):
        for step, n in sorted(p.get("rejected_by_step", {}).items()):
            steps.append(
                {
                    "k": key,
                    "step": STEP_NAMES.get(str(step), str(step)),
                    "rejected": int(n),
                    "candidates": int(p.get("candidates", 0)),
                }
            )
        for counter, field in (
            (cand, "candidates_by_fault_type"),
            (rej, "rejected_by_fault_type"),
            (adm, "by_fault_type"),
        ):
            # composites are keyed "a+b"; count each single type they carry
            for combo, v in p.get(field, {}).items():
                for t in str(combo).split("+"):
                    counter[t] += int(v)
        for text, n in p.get("rejection_reasons", {}).items():
            step, ftype, why = split_reason(str(text))
            reasons.append(
                {
                    "k": key,
                    "step": STEP_NAMES.get(step, step),
                    "fault type": ftype,
                    "reason": why,
                    "count": int(n),
                }
            )
    by_type = [
        {
            "fault type": t,
            "candidates": cand.get(t, 0),
            "rejected": rej.get(t, 0),
            "admitted": adm.get(t, 0),
            "rejection rate": round(rej[t] / cand[t], 4) if cand.get(t) else None,
        }
        for t in sorted(set(cand) | set(adm) | set(rej))
    ]
    reason_df = pd.DataFrame(reasons, columns=["k", "step", "fault type", "reason", "count"])
    if not reason_df.empty:
        reason_df = reason_df.sort_values(["count", "k"], ascending=[False, True]).head(50)
    return {
        "by_step": pd.DataFrame(steps, columns=["k", "step", "rejected", "candidates"]),
        "by_fault_type": pd.DataFrame(
            by_type, columns=["fault type", "candidates", "rejected", "admitted", "rejection rate"]
        ),
        "reasons": reason_df.reset_index(drop=True),
    }


_FAULT_TYPES = frozenset(t.value for t in FaultType)


def split_reason(text: str) -> tuple[str, str, str]:
    """Split a build-statistics rejection key into (step, fault types, reason).

    Keys are ``<step>:<fault types>:<reason>``, ``<step>:<fault types>`` (no reason given) or
    ``<step>:<reason>`` (a check that is not about a fault type, e.g. ``2:131 words > 130``);
    the middle part counts as fault types only when every ``+``-joined name is one.

    >>> split_reason("2:131 words > 130")
    ('2', '', '131 words > 130')
    >>> split_reason("1:factual_error+vagueness_subjectivity:contract broken")
    ('1', 'factual_error+vagueness_subjectivity', 'contract broken')
    >>> split_reason("2:factual_error")
    ('2', 'factual_error', '')
    """
    step, _, rest = text.partition(":")
    head, _, tail = rest.partition(":")
    if head and all(part in _FAULT_TYPES for part in head.split("+")):
        return step, head, tail
    return step, "", rest


# ---------------------------------------------------------------------------------- graphs
def benchmarks(store: Store) -> list[str]:
    """Benchmarks with graphs or samples in the store."""
    return sorted(_store_counts(store))


def graph_index(store: Store, benchmark: str) -> pd.DataFrame:
    """One row per stored graph of ``benchmark``: children and edges by operator.

    Computed in SQL (``json_each`` over the edge lists), so it does not parse graph bodies.

    Returns:
        Columns ``graph_id, env_id, base, children, edges, moved`` plus one per operator.
    """
    conn = store.conn
    base = conn.execute(
        "SELECT graph_id, env_id, json_extract(body, '$.root.base'), "
        "json_array_length(body, '$.children'), json_array_length(body, '$.edges') "
        "FROM graphs WHERE benchmark=? ORDER BY graph_id",
        (benchmark,),
    ).fetchall()
    ops = conn.execute(
        "SELECT g.graph_id, json_extract(e.value, '$.operator'), count(*), "
        "sum(json_extract(e.value, '$.gt_moved')) "
        "FROM graphs g, json_each(g.body, '$.edges') e WHERE g.benchmark=? GROUP BY 1, 2",
        (benchmark,),
    ).fetchall()
    by: dict[str, dict[str, int]] = {}
    for gid, op, n, moved in ops:
        d = by.setdefault(gid, {})
        d[str(op)] = int(n)
        d["moved"] = d.get("moved", 0) + int(moved or 0)
    rows = []
    for gid, env, root_base, n_children, n_edges in base:
        d = by.get(gid, {})
        rows.append(
            {
                "graph_id": gid,
                "env_id": env,
                "base": root_base,
                "children": int(n_children or 0),
                "edges": int(n_edges or 0),
                **{op: d.get(op, 0) for op in OPERATORS},
                "moved": d.get("moved", 0),
            }
        )
    cols = ["graph_id", "env_id", "base", "children", "edges", *OPERATORS, "moved"]
    return pd.DataFrame(rows, columns=cols)


def conditions_text(conditions: Sequence[Condition]) -> str:
    """Conditions as one readable line (``slot op value; …``)."""
    return "; ".join(f"{c.slot} {c.op} {c.value}" for c in conditions)


def graph_detail(store: Store, graph_id: str) -> dict[str, pd.DataFrame]:
    """Nodes and edges of one intent graph.

    Returns:
        ``nodes`` (intent_id, role, base, conditions, gt_kind, gt_size, label) and ``edges``
        (src, dst, operator, delta, provenance, gt_moved).

    Raises:
        NotFoundError: Unknown graph id.
    """
    g = IntentGraph.model_validate_json(store.graph_json(graph_id))
    nodes = []
    for role, intent in [("root", g.root), *(("child", c) for c in g.children)]:
        gt = intent.ground_truth
        nodes.append(
            {
                "intent_id": intent.intent_id,
                "role": role,
                "base": intent.base,
                "conditions": conditions_text(intent.conditions),
                "gt_kind": gt.kind if gt else None,
                "gt_size": gt.cardinality if gt else None,
                "label": f"{role} {intent.intent_id} (base {intent.base})",
            }
        )
    edges = [
        {
            "src": e.src,
            "dst": e.dst,
            "operator": e.operator.value,
            "delta": e.delta,
            "provenance": e.provenance,
            "gt_moved": e.gt_moved,
        }
        for e in g.edges
    ]
    return {
        "nodes": pd.DataFrame(
            nodes,
            columns=["intent_id", "role", "base", "conditions", "gt_kind", "gt_size", "label"],
        ),
        "edges": pd.DataFrame(
            edges, columns=["src", "dst", "operator", "delta", "provenance", "gt_moved"]
        ),
    }


# ---------------------------------------------------------------------------------- samples
def fault_type_counts(store: Store, benchmark: str) -> dict[str, int]:
    """Stored samples per fault type (a composite sample counts once per type it carries)."""
    counts: Counter[str] = Counter()
    for (types,) in store.conn.execute(
        "SELECT fault_types FROM samples WHERE benchmark=?", (benchmark,)
    ).fetchall():
        counts.update(t for t in str(types).split(",") if t)
    return dict(sorted(counts.items()))


def samples_by_fault(
    store: Store, benchmark: str, fault_type: str | None = None, *, k: int | None = None
) -> pd.DataFrame:
    """Stored samples of ``benchmark`` carrying ``fault_type`` (None = any), optionally of size k.

    Returns:
        Columns ``sample_id, graph_id, fault_types, k, split, source, query``.
    """
    sql = (
        "SELECT sample_id, graph_id, fault_types, k, split, source, "
        "json_extract(body, '$.query') FROM samples WHERE benchmark=?"
    )
    args: list[Any] = [benchmark]
    if k is not None:
        sql += " AND k=?"
        args.append(int(k))
    rows = store.conn.execute(sql + " ORDER BY k, sample_id", args).fetchall()
    cols = ["sample_id", "graph_id", "fault_types", "k", "split", "source", "query"]
    df = pd.DataFrame(rows, columns=cols)
    if fault_type:
        df = df[df["fault_types"].map(lambda s: fault_type in str(s).split(","))]
    return df.reset_index(drop=True)


def sample_detail(store: Store, sample_id: str) -> dict[str, Any]:
    """Everything about one sample (researcher view: query, mask, literal readings, verifier).

    Returns:
        ``sample`` (the model), ``mask`` (frame: slot, kind, fault, true value, stated value,
        surface, hidden), ``literal`` (frame: reading, slot, op, value) and ``verifier``
        (dict).

    Raises:
        NotFoundError: Unknown sample id.
    """
    s = Sample.model_validate_json(store.sample_json(sample_id))
    hidden = set(s.hidden_slots)
    mask = pd.DataFrame(
        [
            {
                "slot": m.slot,
                "kind": str(getattr(m.kind, "value", m.kind)),
                "fault": m.fault.value if m.fault else None,
                "true value": _show(m.true_value),
                "stated value": _show(m.stated_value),
                "surface": m.surface,
                "hidden": m.slot in hidden,
            }
            for m in s.mask
        ],
        columns=["slot", "kind", "fault", "true value", "stated value", "surface", "hidden"],
    )
    literal = pd.DataFrame(
        [
            {"reading": i + 1, "slot": c.slot, "op": c.op, "value": _show(c.value)}
            for i, reading in enumerate(s.literal_readings)
            for c in reading
        ],
        columns=["reading", "slot", "op", "value"],
    )
    return {
        "sample": s,
        "mask": mask,
        "literal": literal,
        "verifier": s.verifier.model_dump(mode="json"),
        "ground_truth_size": s.root_ground_truth.cardinality if s.root_ground_truth else None,
    }


def _show(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v)
