"""Paired method deltas on the same samples, with seeded bootstrap 95 % intervals.

Common random numbers: every coin of an episode (decline, volunteer, hint, shift fates and
triggers, voice lines) is keyed by (graph, sample, seed) and the draw counter, never by method
or persona (docs/PROTOCOL.md). Two methods on one sample and seed therefore face the same draws,
which is what makes a paired delta sharp; but the pairs of *different personas* on that sample
and seed share those draws too, so they are not independent. The bootstrap accounts for it by
resampling whole **draw clusters** — all pairs of one (benchmark, sample, seed) together —
instead of single pairs (a cluster bootstrap; with one pair per cluster it is the ordinary
paired bootstrap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.errors import ConfigError
from core.grip.metrics import COLUMN_OF

PAIR_KEYS: tuple[str, ...] = ("benchmark", "backbone", "persona", "sample_id", "seed")
"""Two episodes are paired when they agree on all of these (and differ in method)."""

DRAW_KEYS: tuple[str, ...] = ("benchmark", "sample_id", "seed")
"""Pairs that agree on these share every random draw: one bootstrap cluster."""

N_BOOT = 2000
"""Bootstrap draws."""

BOOT_SEED = 7
"""Default bootstrap seed."""


def bootstrap_ci(
    diffs: np.ndarray,
    *,
    n_boot: int = N_BOOT,
    seed: int = BOOT_SEED,
    level: float = 0.95,
    clusters: Sequence[Any] | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs`` (NaN for an empty array).

    Args:
        diffs: Paired differences.
        n_boot: Resamples.
        seed: Seed of ``numpy.random.default_rng``.
        level: Coverage.
        clusters: One hashable label per difference: differences with the same label are
            resampled together (draw clusters, see the module docstring). None = each
            difference is its own cluster.

    Returns:
        (low, high).
    """
    n = len(diffs)
    if n == 0:
        return (float("nan"), float("nan"))
    vals = np.asarray(diffs, dtype=float)
    if clusters is None:
        sums = np.sort(vals)
        counts = np.ones(n)
    else:
        labels = [repr(c) for c in clusters]
        order = sorted(set(labels))
        pos = {k: i for i, k in enumerate(order)}
        sums = np.zeros(len(order))
        counts = np.zeros(len(order))
        for v, lab in zip(vals, labels, strict=True):
            sums[pos[lab]] += v
            counts[pos[lab]] += 1
    c = len(sums)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    chunk = max(1, 2_000_000 // max(c, 1))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, c, size=(stop - start, c))
        means[start:stop] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def paired_deltas(
    frame: pd.DataFrame,
    method_a: str,
    method_b: str,
    *,
    metrics: Sequence[str] = ("Success", "Earned", "Aim", "Recovery", "Patience"),
    by: Sequence[str] = ("benchmark",),
    n_boot: int = N_BOOT,
    seed: int = BOOT_SEED,
) -> pd.DataFrame:
    """Change from ``method_a`` to ``method_b`` on the same samples, seeds and personas.

    Episodes are paired on :data:`PAIR_KEYS`; repeated episodes of one key are averaged; a
    pair counts for a metric only when both sides are defined. The interval resamples draw
    clusters (:data:`DRAW_KEYS`): pairs of several personas on one sample and seed share
    their random draws and move together.

    Args:
        frame: Per-episode records.
        method_a: Baseline method id (e.g. ``A0``).
        method_b: Compared method id (e.g. ``A3``).
        metrics: Metric names (per-episode metrics only).
        by: Grouping keys of the result (a subset of the pair keys).
        n_boot: Bootstrap resamples.
        seed: Bootstrap seed (the same for every group, so group order does not matter).

    Returns:
        Columns ``by + [metric, method_a, method_b, n_pairs, mean_a, mean_b, delta, ci_low,
        ci_high]`` (NaN where no pair exists).
    """
    keys = list(by)
    for k in keys:
        if k not in PAIR_KEYS:
            raise ConfigError(f"cannot group paired deltas by {k!r}", field="by")
    cols_of = _metric_columns(metrics)
    rows: list[dict[str, Any]] = []
    sub = frame[frame["method"].isin([method_a, method_b])]
    if sub.empty or sub["method"].nunique() < 2:
        return pd.DataFrame(rows, columns=_out_columns(keys))
    mcols = sorted(set(cols_of.values()))
    wide = sub.groupby([*PAIR_KEYS, "method"], sort=True)[mcols].mean().unstack("method")
    for name, col in cols_of.items():
        piv = pd.DataFrame(
            {method_a: wide[(col, method_a)], method_b: wide[(col, method_b)]}
        ).dropna()
        if not piv.empty:
            rows.extend(
                _delta_rows(piv.reset_index(), name, keys, (method_a, method_b), n_boot, seed)
            )
    return pd.DataFrame(rows, columns=_out_columns(keys))


def _metric_columns(metrics: Sequence[str]) -> dict[str, str]:
    """Metric name → per-episode column (raises ConfigError naming an unknown metric)."""
    cols_of = {}
    for name in metrics:
        col = COLUMN_OF.get(name)
        if col is None:
            raise ConfigError(f"no per-episode metric {name!r}", field="metrics")
        cols_of[name] = col
    return cols_of


def _delta_rows(
    piv: pd.DataFrame,
    name: str,
    keys: list[str],
    methods: tuple[str, str],
    n_boot: int,
    seed: int,
) -> list[dict[str, Any]]:
    """One result row per group of the paired values of one metric."""
    method_a, method_b = methods
    out: list[dict[str, Any]] = []
    groups = piv.groupby(keys, sort=True) if keys else [((), piv)]
    for gkey, g in groups:
        gvals = gkey if isinstance(gkey, tuple) else (gkey,)
        a = g[method_a].to_numpy(dtype=float)
        b = g[method_b].to_numpy(dtype=float)
        d = b - a
        draws = list(zip(*(g[k].tolist() for k in DRAW_KEYS), strict=True))
        lo, hi = bootstrap_ci(d, n_boot=n_boot, seed=seed, clusters=draws)
        out.append(
            {
                **dict(zip(keys, gvals, strict=True)),
                "metric": name,
                "method_a": method_a,
                "method_b": method_b,
                "n_pairs": len(d),
                "mean_a": float(a.mean()),
                "mean_b": float(b.mean()),
                "delta": float(d.mean()),
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return out


def _out_columns(keys: Sequence[str]) -> list[str]:
    return [
        *keys,
        "metric",
        "method_a",
        "method_b",
        "n_pairs",
        "mean_a",
        "mean_b",
        "delta",
        "ci_low",
        "ci_high",
    ]
