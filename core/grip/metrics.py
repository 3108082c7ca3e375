"""The eleven GRIP metrics and their aggregation per cell and seed.

Every metric but Consistency is the mean of one per-episode column over the episodes where it
is defined; the column's defined count is the denominator. A cell (e.g. benchmark × method ×
persona × backbone) is computed per seed, then reported as mean ± sample standard deviation
across seeds. Undefined stays undefined (NaN in frames, ``None`` in JSON), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.errors import ConfigError


@dataclass(frozen=True)
class MetricDef:
    """One GRIP metric."""

    name: str
    dimension: str
    column: str
    denominator: str
    unit: str = "rate"
    higher_is_better: bool = True


METRICS: tuple[MetricDef, ...] = (
    MetricDef("Success", "Grounding", "success", "all scored episodes"),
    MetricDef("Earned", "Grounding", "earned", "episodes with a hidden target"),
    MetricDef("Inferred", "Grounding", "inferred", "episodes with a hidden target"),
    MetricDef("Aim", "Inquiry", "aim", "episodes with ≥1 scoreable question"),
    MetricDef("Recovery", "Inquiry", "recovery", "episodes with a hidden target"),
    MetricDef("Patience", "Inquiry", "patience", "all scored episodes", "budget"),
    MetricDef(
        "Staleness",
        "Persistence",
        "staleness",
        "failed moving-shift episodes with a stale check",
        higher_is_better=False,
    ),
    MetricDef(
        "Reaction",
        "Persistence",
        "reaction",
        "successful moving-shift episodes",
        "turns",
        higher_is_better=False,
    ),
    MetricDef("PostShift", "Persistence", "postshift", "episodes with ≥1 answer-moving shift"),
    MetricDef(
        "Identification",
        "Role-realism",
        "identification",
        "sampled episodes with ≥2 user turns (judged)",
    ),
    MetricDef("Consistency", "Role-realism", "consistency", "constructed pairs", "balanced"),
)
"""The eleven metrics of DECISIONS.md, in report order."""

SCORE_METRIC = MetricDef("Score", "Grounding", "score", "all scored WebShop episodes", "reward")
"""WebShop's Score column, reported beside Success."""

DISCOVERY_METRIC = MetricDef(
    "Discovery", "Inquiry", "discovery", "episodes with a hidden target", higher_is_better=True
)
"""Environment discovery, reported beside Recovery (``grip-3``): the target was fully known at
the final commit only because observations showed what no answer had (never Recovery)."""


def _report_order() -> tuple[MetricDef, ...]:
    out: list[MetricDef] = []
    for m in METRICS:
        out.append(m)
        if m.name == "Success":
            out.append(SCORE_METRIC)
        if m.name == "Recovery":
            out.append(DISCOVERY_METRIC)
    return tuple(out)


REPORTED: tuple[MetricDef, ...] = _report_order()
"""Every reported metric in order: the eleven, Score after Success, Discovery after Recovery."""

EPISODE_METRICS: tuple[MetricDef, ...] = tuple(m for m in REPORTED if m.name != "Consistency")
"""Metrics that are means of a per-episode column (report order)."""

METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in REPORTED)
"""Every reported metric name in order."""

METRIC_BY_NAME: dict[str, MetricDef] = {m.name: m for m in REPORTED}
"""Metric definitions by name."""

COLUMN_OF: dict[str, str] = {m.name: m.column for m in EPISODE_METRICS}
"""The per-episode frame column behind each episode-level metric."""

RECORD_METRIC_COLUMNS: tuple[str, ...] = tuple(
    m.column for m in EPISODE_METRICS if m.dimension != "Role-realism"
)
"""The metric columns an episode's cached record holds (report order; the judged role-realism
metrics are computed on samples, not cached per episode)."""

CELL_KEYS: tuple[str, ...] = ("benchmark", "method", "persona", "backbone")
"""Default cell: benchmark × method × persona × backbone."""

GROUPABLE: frozenset[str] = frozenset(
    {"benchmark", "method", "persona", "backbone", "user_voice", "k", "shifts_on", "run_id"}
)
"""Columns a report may group by."""


def parse_by(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """Parse ``--by`` (comma-separated or a sequence) into grouping keys.

    Raises:
        ConfigError: On an unknown key (names the ``--by`` field).
    """
    if text is None:
        return CELL_KEYS
    parts = [p.strip() for p in text.split(",")] if isinstance(text, str) else list(text)
    keys = tuple(p for p in parts if p)
    if not keys:
        raise ConfigError("no grouping key given", file="command line", field="--by")
    bad = [k for k in keys if k not in GROUPABLE]
    if bad:
        raise ConfigError(
            f"unknown grouping key {bad[0]!r} (choose from {', '.join(sorted(GROUPABLE))})",
            file="command line",
            field="--by",
        )
    return keys


def _clean(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def aggregate(
    frame: pd.DataFrame, by: Sequence[str] = CELL_KEYS, *, pairs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Aggregate per-episode records into cells (long format, one row per cell × metric).

    Args:
        frame: Per-episode records (see :func:`core.grip.cache.grip_frame`), optionally with an
            ``identification`` column from the role-realism judges.
        by: Grouping keys of a cell.
        pairs: Consistency judgments (see :func:`core.grip.realism.consistency_frame`).

    Returns:
        Columns ``by + [metric, value, sd, n_seeds, denominator, median]``; ``value`` is the
        mean across seeds of the per-seed metric, ``sd`` the sample sd across seeds (NaN with
        fewer than two seeds), ``n_seeds`` the seeds where the metric is defined and
        ``denominator`` the pooled count of episodes (or pairs) in the denominator.
    """
    keys = list(by)
    cols = [m.column for m in EPISODE_METRICS]
    df = frame.copy()
    for c in cols:
        if c not in df.columns:
            df[c] = np.nan
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    if not keys:
        raise ConfigError("a report needs at least one cell key", field="--by")
    if df.empty:
        return pd.DataFrame(
            columns=[*keys, "metric", "value", "sd", "n_seeds", "denominator", "median"]
        )
    group = [*keys, "seed"]
    g = df.groupby(group, dropna=False, sort=True)[cols]
    counts = g.count()
    per_seed = order_free_sums(df, group, cols, counts.index) / counts.where(counts > 0)
    levels = list(range(len(keys)))
    cg = per_seed.groupby(level=levels, dropna=False, sort=True)
    means, sds, nseeds = cg.mean(), cg.std(ddof=1), cg.count()
    denoms = counts.groupby(level=levels, dropna=False, sort=True).sum()
    react = df.groupby(keys, dropna=False, sort=True)["reaction"].median()
    cells = means.index.to_frame(index=False)
    cons = consistency_cells(pairs, cells, keys) if pairs is not None else None
    return _long(cells, (means, sds, nseeds, denoms), react, cons)


def order_free_sums(
    df: pd.DataFrame, group: Sequence[str], cols: Sequence[str], index: pd.Index
) -> pd.DataFrame:
    """Per-group sums of ``cols`` that do not depend on the order of the rows.

    Floating-point addition is not associative, so a sum over episodes in storage order can
    differ in its last bits between a run that was interrupted and resumed and one that was not
    (or between two runs of one spec). Within each group the values are added in a canonical
    order — ascending value — so the sum is a function of the multiset of values alone; NaN
    (undefined) is left out, and a group with no defined value sums to NaN.

    Args:
        df: The per-episode frame.
        group: Grouping columns (the result's index levels, sorted).
        cols: Float columns to sum.
        index: The groups, in the order of ``df.groupby(group, sort=True)``.

    Returns:
        A frame indexed like ``index`` with one column per ``cols``.
    """
    codes = df.groupby(list(group), dropna=False, sort=True).ngroup().to_numpy()
    n = len(index)
    out = np.full((n, len(cols)), np.nan)
    for j, c in enumerate(cols):
        vals = df[c].to_numpy(dtype=float)
        keep = ~np.isnan(vals)
        if not keep.any():
            continue
        v, k = vals[keep], codes[keep]
        order = np.lexsort((v, k))  # by group, then by value: canonical
        v, k = v[order], k[order]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        out[k[starts], j] = np.add.reduceat(v, starts)
    return pd.DataFrame(out, index=index, columns=list(cols))


def _long(
    cells: pd.DataFrame,
    stats: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame],
    react: pd.Series,
    cons: pd.DataFrame | None,
) -> pd.DataFrame:
    """One row per cell × metric from the per-cell (mean, sd, seeds, denominator) frames."""
    cols = [m.column for m in EPISODE_METRICS]
    n, m = len(cells), len(EPISODE_METRICS) + 1

    def wide(frame: pd.DataFrame, extra: Any) -> np.ndarray:
        arr = np.empty((n, m), dtype=float)
        arr[:, :-1] = frame[cols].to_numpy(dtype=float)
        arr[:, -1] = extra
        return arr

    def last(field: str, empty: float) -> Any:
        return cons[field].to_numpy() if cons is not None else empty

    means, sds, nseeds, denoms = stats
    long = cells.loc[np.repeat(np.arange(n), m)].reset_index(drop=True)
    long["metric"] = np.tile(np.array(METRIC_NAMES, dtype=object), n)
    long["value"] = wide(means, last("value", np.nan)).ravel()
    long["sd"] = wide(sds, last("sd", np.nan)).ravel()
    long["n_seeds"] = wide(nseeds, last("n_seeds", 0)).ravel().astype(int)
    long["denominator"] = wide(denoms, last("denominator", 0)).ravel().astype(int)
    med = np.full((n, m), np.nan)
    med[:, METRIC_NAMES.index("Reaction")] = react.to_numpy(dtype=float)
    long["median"] = med.ravel()
    return long


def balanced_accuracy(truth_same: Sequence[bool], said_same: Sequence[bool]) -> float | None:
    """Mean of the accuracy on SAME pairs and on DIFFERENT pairs (None if a class is absent).

    >>> balanced_accuracy([True, True, False, False], [True, False, False, False])
    0.75
    """
    same = [s for t, s in zip(truth_same, said_same, strict=True) if t]
    diff = [s for t, s in zip(truth_same, said_same, strict=True) if not t]
    if not same or not diff:
        return None
    return (sum(same) / len(same) + sum(1 for s in diff if not s) / len(diff)) / 2


SAME_RATE_BOUNDS = (0.1, 0.9)
"""A judge whose SAME-answer rate falls outside these bounds is invalid for Consistency."""


def valid_judges(pairs: pd.DataFrame) -> list[str]:
    """Judges whose SAME-answer rate over all their pairs lies within the bounds."""
    if pairs.empty:
        return []
    rates = pairs.groupby("judge")["said_same"].mean()
    lo, hi = SAME_RATE_BOUNDS
    return sorted(str(j) for j, r in rates.items() if lo <= float(r) <= hi)


def consistency_cells(
    pairs: pd.DataFrame, cells: pd.DataFrame, keys: Sequence[str]
) -> pd.DataFrame:
    """Consistency per cell: per seed, mean over valid judges of balanced accuracy.

    A pair belongs to a cell when both episodes share the cell's non-persona keys and (when
    ``persona`` is a key) at least one of them has the cell's persona.

    Args:
        pairs: Columns ``judge, seed, a, b, truth_same, said_same`` plus ``<key>_a`` and
            ``<key>_b`` for every grouping key.
        cells: The cells (one row per cell, columns ``keys``).
        keys: Grouping keys.

    Returns:
        One ``Consistency`` row per cell (same columns as :func:`aggregate`).
    """
    good = set(valid_judges(pairs))
    rows: list[dict[str, Any]] = []
    for cell in cells.to_dict("records"):
        sel = pairs
        for k in keys:
            if k not in pairs.columns and f"{k}_a" not in pairs.columns:
                continue
            v = cell[k]
            if k == "persona":
                sel = sel[(sel["persona_a"] == v) | (sel["persona_b"] == v)]
            else:
                sel = sel[(sel[f"{k}_a"] == v) & (sel[f"{k}_b"] == v)]
        per_seed: list[float] = []
        for _, ss in sel.groupby("seed", sort=True):
            vals = []
            for judge, sj in ss.groupby("judge", sort=True):
                if judge not in good:
                    continue
                ba = balanced_accuracy(list(sj["truth_same"]), list(sj["said_same"]))
                if ba is not None:
                    vals.append(ba)
            if vals:
                per_seed.append(sum(vals) / len(vals))
        n_pairs = int(sel[["a", "b"]].drop_duplicates().shape[0]) if not sel.empty else 0
        value = float(np.mean(per_seed)) if per_seed else np.nan
        sd = float(np.std(per_seed, ddof=1)) if len(per_seed) >= 2 else np.nan
        rows.append(
            {
                **{k: cell[k] for k in keys},
                "metric": "Consistency",
                "value": value,
                "sd": sd,
                "n_seeds": len(per_seed),
                "denominator": n_pairs,
                "median": np.nan,
            }
        )
    return pd.DataFrame(rows)


def metric_entry(row: Any) -> dict[str, Any]:
    """JSON entry of one aggregated metric row (``None`` for undefined, never 0)."""
    entry: dict[str, Any] = {
        "value": _clean(row["value"]),
        "sd": _clean(row["sd"]),
        "n_seeds": int(row["n_seeds"]),
        "denominator": int(row["denominator"]),
    }
    if row["metric"] == "Reaction":
        entry["median"] = _clean(row["median"])
    return entry
