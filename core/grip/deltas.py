"""Paired method deltas on the same samples, with seeded bootstrap 95 % intervals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.errors import ConfigError
from core.grip.metrics import EPISODE_METRICS

PAIR_KEYS: tuple[str, ...] = ("benchmark", "backbone", "persona", "sample_id", "seed")
"""Two episodes are paired when they agree on all of these (and differ in method)."""

N_BOOT = 2000
"""Bootstrap draws."""

BOOT_SEED = 7
"""Default bootstrap seed."""

_COLUMN = {m.name: m.column for m in EPISODE_METRICS}


def bootstrap_ci(
    diffs: np.ndarray, *, n_boot: int = N_BOOT, seed: int = BOOT_SEED, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs`` (NaN for an empty array).

    Args:
        diffs: Paired differences (order does not matter: they are sorted first).
        n_boot: Resamples.
        seed: Seed of ``numpy.random.default_rng``.
        level: Coverage.

    Returns:
        (low, high).
    """
    n = len(diffs)
    if n == 0:
        return (float("nan"), float("nan"))
    d = np.sort(np.asarray(diffs, dtype=float))
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    chunk = max(1, 2_000_000 // max(n, 1))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = d[idx].mean(axis=1)
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
    pair counts for a metric only when both sides are defined.

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
        col = _COLUMN.get(name)
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
        lo, hi = bootstrap_ci(d, n_boot=n_boot, seed=seed)
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
