"""The persona-ranking heatmap of the GRIP dashboard and its drill-down to episodes.

:func:`heatmap_cells` ranks personas per benchmark × metric; :func:`selected_cell` /
:func:`cell_from_point` map a click back to its :class:`Cell`; :func:`cell_episodes` and
:func:`cell_size` list the episodes in that cell's metric denominator, each with a link to the
inspector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from core.grip.figures import persona_heatmap
from core.grip.metrics import COLUMN_OF, METRIC_BY_NAME, METRIC_NAMES
from core.model.base import Strict
from core.studio.dashboards.grip_format import fmt
from core.studio.plainwords import plain_outcome

INSPECT_PATH = "inspect"
"""URL path of the episode inspector page."""


# ---------------------------------------------------------------------------------- heatmap
HEATMAP_METRICS: tuple[str, ...] = tuple(m for m in METRIC_NAMES if m != "Score")
"""Metrics on the persona ranking heatmap."""


def heatmap_cells(
    frame: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Persona ranking per benchmark × metric, ready to plot and to click.

    Returns:
        Columns ``benchmark, metric, persona, value, rank, column, text, n, tie``: ``column``
        is the x label (``"<benchmark> · <metric>"``), ``text`` the formatted value ("—" when
        undefined), ``n`` the episodes (pairs, for Consistency) in the metric's denominator —
        0 where nothing was judged — and ``tie`` marks a column
        where every persona has the same value (then nobody is ranked). Tied values share
        their average rank.
    """
    cols = ["benchmark", "metric", "persona", "value", "rank", "column", "text", "n"]
    if frame.empty:
        return pd.DataFrame(columns=[*cols, "tie"])
    names = list(metrics) if metrics else list(HEATMAP_METRICS)
    heat = persona_heatmap(frame, metrics=names, pairs=pairs)
    if heat.empty:
        return pd.DataFrame(columns=[*cols, "tie"])
    heat = _rerank(heat.copy())
    order = {m: i for i, m in enumerate(names)}
    heat["_o"] = heat["metric"].map(order)
    heat = heat.sort_values(["benchmark", "_o", "persona"]).drop(columns="_o")
    heat["column"] = heat["benchmark"].astype(str) + " · " + heat["metric"].astype(str)
    heat["text"] = [fmt(m, v) for m, v in zip(heat["metric"], heat["value"], strict=True)]
    return heat[[*cols, "tie"]].reset_index(drop=True)


def _rerank(heat: pd.DataFrame) -> pd.DataFrame:
    """Rank personas per benchmark × metric with shared (average) ranks for ties.

    A column whose defined values are all equal ranks nobody (``rank`` NaN, ``tie`` True):
    five personas at 0 are not five winners. Undefined values stay unranked.
    """
    ranks = pd.Series(np.nan, index=heat.index, dtype=float)
    tie = pd.Series(False, index=heat.index, dtype=bool)
    for (_, metric), g in heat.groupby(["benchmark", "metric"], sort=False):
        vals = g["value"].astype(float)
        defined = vals.dropna()
        if defined.empty:
            continue
        if len(defined) > 1 and np.ptp(defined.to_numpy()) == 0:
            tie[defined.index] = True
            continue
        asc = not METRIC_BY_NAME[str(metric)].higher_is_better
        ranks[defined.index] = defined.rank(ascending=asc, method="average")
    heat["rank"] = ranks
    heat["tie"] = tie
    return heat


class Cell(Strict):
    """One heatmap cell: a benchmark, a metric and a persona."""

    benchmark: str
    metric: str
    persona: str


def cell_from_point(point: Mapping[str, Any], heat: pd.DataFrame) -> Cell | None:
    """Map a plotly selection point back to its heatmap cell.

    Uses the point's ``customdata`` (``[benchmark, metric, persona]``) when present, else its
    ``x`` (column label) and ``y`` (persona).
    """
    cd = point.get("customdata")
    if isinstance(cd, (list, tuple)) and len(cd) >= 3:
        return Cell(benchmark=str(cd[0]), metric=str(cd[1]), persona=str(cd[2]))
    x, y = point.get("x"), point.get("y")
    if x is None or y is None or heat.empty:
        return None
    hit = heat[(heat["column"] == x) & (heat["persona"] == y)]
    if hit.empty:
        return None
    r = hit.iloc[0]
    return Cell(benchmark=str(r["benchmark"]), metric=str(r["metric"]), persona=str(r["persona"]))


def selected_cell(selection: Any, heat: pd.DataFrame) -> Cell | None:
    """The first selected point of a ``st.plotly_chart(on_select=...)`` state, as a cell."""
    if selection is None:
        return None
    sel = selection.get("selection") if isinstance(selection, Mapping) else None
    if sel is None:
        sel = getattr(selection, "selection", None)
    if sel is None:
        return None
    points = sel.get("points") if isinstance(sel, Mapping) else getattr(sel, "points", None)
    for p in points or []:
        cell = cell_from_point(p, heat)
        if cell is not None:
            return cell
    return None


EPISODE_COLUMNS: tuple[str, ...] = (
    "episode_id",
    "method",
    "backbone",
    "seed",
    "sample_id",
    "outcome",
    "bucket",
    "value",
    "inspect",
)


def inspect_link(episode_id: str) -> str:
    """Relative link to the episode inspector for one episode."""
    return f"{INSPECT_PATH}?episode={quote(episode_id, safe='')}"


def cell_episodes(frame: pd.DataFrame, cell: Cell, limit: int | None = None) -> pd.DataFrame:
    """The episodes behind one heatmap cell: the metric's denominator in that benchmark × persona.

    Args:
        frame: Per-episode frame.
        cell: The cell.
        limit: At most this many rows (sorted by method, seed, episode id); None = all.

    Returns:
        Columns :data:`EPISODE_COLUMNS`; ``value`` is the episode's metric value formatted
        ("—" when undefined), ``inspect`` a relative link ``inspect?episode=<id>``.
    """
    if frame.empty:
        return pd.DataFrame(columns=list(EPISODE_COLUMNS))
    sub = frame[(frame["benchmark"] == cell.benchmark) & (frame["persona"] == cell.persona)]
    col = COLUMN_OF.get(cell.metric)
    if col is not None and col in sub.columns:
        sub = sub[sub[col].notna()]
    if limit is not None and len(sub) > limit:
        order = np.lexsort(
            (sub["episode_id"].to_numpy(), sub["seed"].to_numpy(), sub["method"].to_numpy())
        )
        sub = sub.iloc[order[:limit]]
    else:
        sub = sub.sort_values(["method", "seed", "episode_id"])
    vals = sub[col] if col is not None and col in sub.columns else [None] * len(sub)
    out = pd.DataFrame(
        {
            "episode_id": sub["episode_id"].astype(str).to_numpy(),
            "method": sub["method"].to_numpy(),
            "backbone": sub["backbone"].to_numpy(),
            "seed": sub["seed"].to_numpy(),
            "sample_id": sub["sample_id"].to_numpy(),
            "outcome": [plain_outcome(str(o)) if o else "" for o in sub["outcome"]],
            "bucket": sub["bucket"].astype(str).to_numpy(),
            "value": [fmt(cell.metric, v) for v in vals],
        }
    )
    out["inspect"] = [inspect_link(e) for e in out["episode_id"]]
    return out[list(EPISODE_COLUMNS)]


def cell_size(frame: pd.DataFrame, cell: Cell) -> int:
    """How many episodes are in the cell's metric denominator (benchmark × persona)."""
    if frame.empty:
        return 0
    mask = (frame["benchmark"] == cell.benchmark) & (frame["persona"] == cell.persona)
    col = COLUMN_OF.get(cell.metric)
    if col is not None and col in frame.columns:
        mask &= frame[col].notna()
    return int(mask.sum())
