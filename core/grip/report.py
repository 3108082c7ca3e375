"""The GRIP report (``driftbench grip``): cells of the eleven metrics in JSON, CSV or a table.

JSON: ``{"grip_version", "runs", "by", "judges", "metrics", "cells": [{<keys>, "n_episodes",
"metrics": {"Success": {"value", "sd", "n_seeds", "denominator"}, …}}], "role_realism"}`` with
``null`` for undefined values; CSV leaves them empty; the table prints "—". Never 0.

A finished report is cached in ``grip_report_cache`` under a fingerprint of its inputs (ended
episodes, judgments and annotations of the runs), so an unchanged report is served warm.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import Field

from core.grip.cache import REPORT_COLUMNS, grip_frame, resolve_runs
from core.grip.metrics import (
    METRIC_BY_NAME,
    METRIC_NAMES,
    aggregate,
    metric_entry,
    parse_by,
)
from core.grip.model_health import health_table, model_health
from core.grip.realism import role_realism, with_identification
from core.grip.record import GRIP_VERSION
from core.model.base import Strict, content_hash
from core.store import Store

REPORT_CACHE = "grip_report_cache"
UNDEFINED = "—"


class GripReport(Strict):
    """A GRIP report over one or more runs."""

    grip_version: str = GRIP_VERSION
    runs: list[str]
    by: list[str]
    judges: str | None = None
    metrics: list[dict[str, Any]] = Field(description="Metric definitions in report order.")
    cells: list[dict[str, Any]]
    role_realism: dict[str, Any] = Field(default_factory=dict)
    conditions: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Per run id: the paper's conditions it ran under (shifts on/off, faults).",
    )
    model_health: list[dict[str, Any]] | None = Field(
        default=None,
        description="LLM runs only: malformed, truncated, rejected and fallback counts, tokens "
        "per episode and seconds per call (:mod:`core.grip.model_health`).",
    )

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of CLI.md (``model_health`` only when a run used a model)."""
        out = self.model_dump(mode="json")
        if out.get("model_health") is None:
            out.pop("model_health", None)
        return out


def metric_definitions() -> list[dict[str, Any]]:
    """Name, dimension, denominator and unit of every reported metric."""
    return [
        {
            "name": n,
            "dimension": METRIC_BY_NAME[n].dimension,
            "denominator": METRIC_BY_NAME[n].denominator,
            "unit": METRIC_BY_NAME[n].unit,
            "higher_is_better": METRIC_BY_NAME[n].higher_is_better,
        }
        for n in METRIC_NAMES
    ]


def run_conditions(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, str]]:
    """The conditions (``shifts``, ``faults``) of each run, read from its stored spec.

    A run whose spec is not a sweep spec (an import, a branch) has no entry.
    """
    from pydantic import ValidationError

    from core.model.run import RunSpec

    out: dict[str, dict[str, str]] = {}
    for rid in run_ids:
        row = store.conn.execute("SELECT spec FROM runs WHERE run_id=?", (rid,)).fetchone()
        if row is None:
            continue
        try:
            out[rid] = RunSpec.model_validate_json(row[0]).conditions()
        except (ValidationError, ValueError):
            continue
    return out


def _key_value(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v


def cells_json(cells: pd.DataFrame, frame: pd.DataFrame, by: Sequence[str]) -> list[dict[str, Any]]:
    """Nest the long cell frame into JSON cells."""
    keys = list(by)
    counts = frame.groupby(keys, dropna=False, sort=True).size() if keys else None
    out: list[dict[str, Any]] = []
    groups = cells.groupby(keys, dropna=False, sort=True) if keys else [((), cells)]
    for gkey, g in groups:
        vals = gkey if isinstance(gkey, tuple) else (gkey,)
        cell: dict[str, Any] = {k: _key_value(v) for k, v in zip(keys, vals, strict=True)}
        if counts is not None:
            n = counts.get(gkey if len(keys) > 1 else vals[0], 0)
            cell["n_episodes"] = int(n)
        else:
            cell["n_episodes"] = len(frame)
        cell["metrics"] = {row["metric"]: metric_entry(row) for row in g.to_dict("records")}
        out.append(cell)
    return out


def _fingerprint(
    store: Store, run_ids: Sequence[str], by: Sequence[str], judges: str | None
) -> str:
    ph = ",".join("?" * len(run_ids))
    conn = store.conn
    ep = conn.execute(
        f"SELECT run_id, count(*), max(ended_at) FROM episodes WHERE status='ended' "
        f"AND run_id IN ({ph}) GROUP BY run_id ORDER BY run_id",
        tuple(run_ids),
    ).fetchall()
    jd = conn.execute(
        f"SELECT count(*), max(judgment_id) FROM judgments WHERE run_id IN ({ph})",
        tuple(run_ids),
    ).fetchone()
    an = conn.execute("SELECT count(*), max(annotation_id) FROM annotations").fetchone()
    return content_hash(
        {
            "v": GRIP_VERSION,
            "runs": list(run_ids),
            "by": list(by),
            "judges": judges,
            "episodes": [list(r) for r in ep],
            "judgments": list(jd),
            "annotations": list(an) if judges == "human" else None,
        },
        32,
    )


def _cached(store: Store, key: str, fp: str) -> dict[str, Any] | None:
    conn = store.conn
    conn_exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (REPORT_CACHE,)
    ).fetchone()
    if not conn_exists:
        return None
    row = conn.execute(
        f"SELECT fingerprint, payload FROM {REPORT_CACHE} WHERE key=?", (key,)
    ).fetchone()
    if row is None or row[0] != fp:
        return None
    out: dict[str, Any] = json.loads(row[1])
    return out


def _save(store: Store, key: str, fp: str, payload: dict[str, Any]) -> None:
    with store.transaction() as conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {REPORT_CACHE} "
            "(key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, payload TEXT NOT NULL)"
        )
        conn.execute(
            f"INSERT OR REPLACE INTO {REPORT_CACHE} VALUES (?, ?, ?)",
            (key, fp, json.dumps(payload, allow_nan=False)),
        )


def build_report(
    store: Store,
    runs: Sequence[str],
    *,
    by: str | Sequence[str] | None = None,
    judges: str | None = None,
    per_cell: int | None = 20,
    n_pairs: int = 100,
    use_cache: bool = True,
) -> GripReport:
    """Compute (or serve from cache) the GRIP report of ``runs``.

    Args:
        store: The store.
        runs: Run ids or names.
        by: Cell keys (``"benchmark,method,persona"``); default benchmark × method × persona ×
            backbone.
        judges: Role-realism judges: None, ``heuristic``, ``human`` or ``MODEL_A,MODEL_B``.
        per_cell: LLM judges: episodes judged per run × cell.
        n_pairs: Consistency pairs per run.
        use_cache: Serve an unchanged report from ``grip_report_cache``; False also asks
            the LLM judges again (their answers replace the stored ones).

    Returns:
        The report.
    """
    keys = parse_by(by)
    run_ids = resolve_runs(store, runs)
    key = content_hash(
        {"runs": run_ids, "by": list(keys), "judges": judges, "layout": "conditions"}, 32
    )
    fp = _fingerprint(store, run_ids, keys, judges)
    if use_cache:
        hit = _cached(store, key, fp)
        if hit is not None:
            return GripReport.model_validate(hit)
    frame = grip_frame(store, run_ids, REPORT_COLUMNS)
    realism = role_realism(
        store, frame, judges, per_cell=per_cell, n_pairs=n_pairs, fresh=not use_cache
    )
    frame = with_identification(frame, realism.identification)
    cells = aggregate(frame, keys, pairs=realism.pairs)
    report = GripReport(
        runs=run_ids,
        by=list(keys),
        judges=judges,
        metrics=metric_definitions(),
        cells=cells_json(cells, frame, keys),
        role_realism=_finite(realism.summary),
        conditions=run_conditions(store, run_ids),
        model_health=_finite(model_health(store, run_ids)) or None,
    )
    if use_cache and not realism.summary.get("judge_errors_total"):
        # a report with failed judge calls is never cached: the next call asks again
        # judging may have added judgments: fingerprint the inputs as they are now
        _save(store, key, _fingerprint(store, run_ids, keys, judges), report.to_json())
    return report


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def report_csv(report: GripReport) -> str:
    """One row per cell; per metric ``M``, ``M_sd``, ``M_n_seeds``, ``M_denominator``.

    Undefined values are empty cells, never 0.
    """
    buf = io.StringIO()
    header = [*report.by, "n_episodes"]
    for m in METRIC_NAMES:
        header += [m, f"{m}_sd", f"{m}_n_seeds", f"{m}_denominator"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for cell in report.cells:
        row: list[Any] = [cell.get(k) for k in report.by] + [cell["n_episodes"]]
        for m in METRIC_NAMES:
            e = cell["metrics"].get(m, {})
            row += [e.get("value"), e.get("sd"), e.get("n_seeds"), e.get("denominator")]
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def format_value(name: str, value: float | None, sd: float | None) -> str:
    """Rates ×100 with two decimals; Patience and Reaction raw; undefined as "—"."""
    if value is None:
        return UNDEFINED
    scale = 1.0 if METRIC_BY_NAME[name].unit in ("budget", "turns") else 100.0
    text = f"{value * scale:.2f}"
    if sd is not None:
        text += f" ± {sd * scale:.2f}"
    return text


def report_table(report: GripReport) -> str:
    """A plain-text table (one line per cell)."""
    rows = []
    for cell in report.cells:
        row = {k: cell.get(k) for k in report.by}
        row["n"] = cell["n_episodes"]
        for m in METRIC_NAMES:
            e = cell["metrics"].get(m, {})
            row[m] = format_value(m, e.get("value"), e.get("sd"))
        rows.append(row)
    if not rows:
        return f"GRIP {report.grip_version}: no ended episodes in {', '.join(report.runs)}"
    df = pd.DataFrame(rows)
    head = (
        f"GRIP {report.grip_version} — runs: {', '.join(report.runs)} "
        "(rates ×100, mean ± sd over seeds)"
    )
    for rid, cond in report.conditions.items():
        head += f"\n  {rid}: shifts {cond['shifts']}, faults {cond['faults']}"
    health = health_table(report.model_health or [])
    return head + "\n" + str(df.to_string(index=False)) + ("\n\n" + health if health else "")
