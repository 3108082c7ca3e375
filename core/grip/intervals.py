"""Error bars for the GRIP figures: sd over seeds, or a bootstrap interval over episodes.

Every bar or point a figure draws for a mean gets an interval. When every cell of a metric has
at least two seeds, the bar is the **sd over seeds** (what Table 2 prints after ±). Otherwise —
one seed per cell, as in the demo sweep — it is a **95 % bootstrap interval of the mean over
the cell's episodes** (percentile method, :data:`N_BOOT` draws; above :data:`NORMAL_ABOVE`
episodes the normal approximation ±1.96·sd/√n, which the bootstrap converges to). One metric
never mixes the two kinds: the kind is chosen per metric over all its cells, and the figure's
title names it.

The resampling stream of each cell is seeded from the cell's own keys and metric and draws from
the cell's sorted values (not from the order of the rows), so an interval does not change when
runs are listed in another order. Consistency (a balanced accuracy over pairs, not a mean of
episodes) gets the sd over seeds when it has one and no interval otherwise.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.grip.metrics import COLUMN_OF

N_BOOT = 1000
"""Bootstrap draws per interval."""

NORMAL_ABOVE = 1000
"""Cells with more episodes than this use the normal approximation."""

SD_OVER_SEEDS = "sd over seeds"
CI_OVER_EPISODES = "95% bootstrap CI over episodes"


def _seed(parts: Sequence[Any]) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode("utf-8"))


def bootstrap_interval(
    values: np.ndarray,
    key: Sequence[Any],
    *,
    n_boot: int = N_BOOT,
) -> tuple[float, float]:
    """A 95 % interval of the mean over ``values`` (NaNs dropped); (NaN, NaN) when empty.

    Args:
        values: The per-episode values.
        key: What the values belong to (seeds the resampling, so it is order-free).
        n_boot: Bootstrap draws.
    """
    v = np.asarray(values, dtype=float)
    v = np.sort(v[~np.isnan(v)])  # sorted: the draws do not depend on the rows' order
    if v.size == 0:
        return float("nan"), float("nan")
    if v.size == 1:
        return float(v[0]), float(v[0])
    if v.size > NORMAL_ABOVE:
        half = 1.96 * float(v.std(ddof=1)) / float(np.sqrt(v.size))
        return float(v.mean()) - half, float(v.mean()) + half
    rng = np.random.default_rng(_seed(key))
    draws = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def error_kind(cells: pd.DataFrame) -> str:
    """The interval a figure of ``cells`` uses: sd over seeds only when every cell has ≥ 2."""
    shown = cells[cells["value"].notna()] if "value" in cells.columns else cells
    if shown.empty or "n_seeds" not in shown.columns:
        return CI_OVER_EPISODES
    return SD_OVER_SEEDS if bool((shown["n_seeds"] >= 2).all()) else CI_OVER_EPISODES


def with_errors(
    cells: pd.DataFrame, frame: pd.DataFrame, keys: Sequence[str], metric_col: str = "metric"
) -> pd.DataFrame:
    """Add ``err_minus``, ``err_plus`` and ``err_kind`` to aggregated cells.

    Args:
        cells: Long cells of :func:`core.grip.metrics.aggregate` (``keys``, metric, value, sd,
            n_seeds …), possibly filtered to some metrics.
        frame: The per-episode frame the cells were aggregated from.
        keys: The cell keys.
        metric_col: The column holding the metric name.

    Returns:
        A copy of ``cells`` with the three columns (NaN where no interval exists).
    """
    out = cells.copy()
    if out.empty:
        out["err_kind"] = pd.Series(dtype=str)
        out["err_minus"] = pd.Series(dtype=float)
        out["err_plus"] = pd.Series(dtype=float)
        return out
    # one kind per metric (a figure of one metric never mixes sd and bootstrap bars)
    kinds = {str(m): error_kind(g) for m, g in out.groupby(metric_col, sort=False)}
    out["err_kind"] = [kinds[str(m)] for m in out[metric_col]]
    groups = {
        k if isinstance(k, tuple) else (k,): g for k, g in frame.groupby(list(keys), sort=False)
    }
    minus, plus = [], []
    for row in out.to_dict("records"):
        metric = str(row[metric_col])
        value = row["value"]
        if row["err_kind"] == SD_OVER_SEEDS:
            sd = float(row["sd"]) if pd.notna(row["sd"]) else np.nan
            minus.append(sd)
            plus.append(sd)
            continue
        col = COLUMN_OF.get(metric)
        cell = tuple(row[k] for k in keys)
        episodes = groups.get(cell)
        if col is None or episodes is None or col not in episodes.columns or pd.isna(value):
            minus.append(np.nan)
            plus.append(np.nan)
            continue
        lo, hi = bootstrap_interval(
            pd.to_numeric(episodes[col], errors="coerce").to_numpy(dtype=float), (*cell, metric)
        )
        minus.append(max(0.0, float(value) - lo))
        plus.append(max(0.0, hi - float(value)))
    out["err_minus"] = minus
    out["err_plus"] = plus
    return out
