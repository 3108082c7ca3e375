"""Tidy data frames for each of the paper's GRIP figures (and the dashboard's drill-down).

Every function takes the per-episode frame of :func:`core.grip.cache.grip_frame` (optionally
with an ``identification`` column) and returns a long, plot-ready frame; undefined values stay
NaN (plotted as gaps, printed as "—"), never 0. Every frame of means carries its error bars
(``err_minus``, ``err_plus``, ``err_kind``: sd over seeds, or a 95 % bootstrap interval over
episodes — see :mod:`core.grip.intervals`). Fig. 10 (fault complexity) is
:func:`core.grip.paper.fault_complexity`, the same frame ``driftbench reproduce`` draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.grip.deltas import paired_deltas
from core.grip.intervals import with_errors
from core.grip.metrics import METRIC_BY_NAME, METRIC_NAMES, aggregate
from core.grip.paper import fault_complexity


def success_by_backbone(frame: pd.DataFrame) -> pd.DataFrame:
    """Success (and WebShop Score) per benchmark × backbone × method, mean ± sd over seeds."""
    keys = ("benchmark", "backbone", "method")
    cells = aggregate(frame, by=keys)
    cells = cells[cells["metric"].isin(["Success", "Score"])]
    return with_errors(cells, frame, keys).reset_index(drop=True)


def persona_fans(frame: pd.DataFrame, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every metric per benchmark × method × persona (the per-persona fan charts)."""
    keys = ("benchmark", "method", "persona")
    return with_errors(aggregate(frame, by=keys, pairs=pairs), frame, keys)


def method_change(
    frame: pd.DataFrame,
    method_a: str = "A0",
    method_b: str = "A3",
    metrics: Sequence[str] = ("Aim", "Recovery"),
) -> pd.DataFrame:
    """Aim and Recovery change from Just Ask (A0) to Self-Evolving (A3), paired, with CIs."""
    return paired_deltas(
        frame, method_a, method_b, metrics=metrics, by=("benchmark", "persona", "backbone")
    )


def earned_vs_inferred(frame: pd.DataFrame) -> pd.DataFrame:
    """Earned and Inferred components of success on hidden-target episodes per method."""
    keys = ("benchmark", "method")
    cells = aggregate(frame, by=keys)
    cells = with_errors(cells[cells["metric"].isin(["Earned", "Inferred"])], frame, keys)
    return cells.rename(columns={"metric": "component"}).reset_index(drop=True)


def patience_by_shifts(frame: pd.DataFrame) -> pd.DataFrame:
    """Remaining patience with silent shifts off vs on, per benchmark × method × persona."""
    df = frame.assign(shifts=np.where(frame["shifts_on"].astype(bool), "on", "off"))
    keys = ("benchmark", "method", "persona", "shifts")
    cells = aggregate(df, by=keys)
    return with_errors(cells[cells["metric"] == "Patience"], df, keys).reset_index(drop=True)


def persona_heatmap(
    frame: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Persona rankings per benchmark × metric (1 = best; lower-is-better metrics flipped).

    Returns:
        Columns ``benchmark, metric, persona, value, rank, n``; undefined values get no rank;
        ``n`` is the cell's denominator (episodes, or pairs for Consistency).
    """
    cells = aggregate(frame, by=("benchmark", "persona"), pairs=pairs)
    names = list(metrics) if metrics else [m for m in METRIC_NAMES if m != "Score"]
    cells = cells[cells["metric"].isin(names)].copy()
    ranks: list[Any] = []
    for (_, metric), g in cells.groupby(["benchmark", "metric"], sort=False):
        asc = not METRIC_BY_NAME[str(metric)].higher_is_better
        ranks.append(g["value"].rank(ascending=asc, method="min"))
    cells["rank"] = pd.concat(ranks) if ranks else pd.Series(dtype=float)
    cells["n"] = pd.to_numeric(cells["denominator"], errors="coerce").fillna(0).astype(int)
    return cells[["benchmark", "metric", "persona", "value", "rank", "n"]].reset_index(drop=True)


def figure_frames(
    frame: pd.DataFrame, pairs: pd.DataFrame | None = None
) -> dict[str, pd.DataFrame]:
    """All figure frames by name.

    Keys: ``success_by_backbone``, ``persona_fans``, ``a0_to_a3``, ``earned_vs_inferred``,
    ``fault_complexity``, ``patience_by_shifts``, ``persona_heatmap``.
    """
    return {
        "success_by_backbone": success_by_backbone(frame),
        "persona_fans": persona_fans(frame, pairs),
        "a0_to_a3": method_change(frame),
        "earned_vs_inferred": earned_vs_inferred(frame),
        "fault_complexity": fault_complexity(frame),
        "patience_by_shifts": patience_by_shifts(frame),
        "persona_heatmap": persona_heatmap(frame, pairs=pairs),
    }


def episodes_for_cell(frame: pd.DataFrame, **cell: Any) -> pd.DataFrame:
    """The per-episode rows behind one cell (drill-down), e.g. ``method="A0", persona=...``.

    Keys must be frame columns; ``None`` values are ignored.
    """
    mask = pd.Series(True, index=frame.index)
    for k, v in cell.items():
        if v is None:
            continue
        if k not in frame.columns:
            raise KeyError(k)
        mask &= frame[k] == v
    return frame[mask].sort_values(["seed", "episode_id"]).reset_index(drop=True)
