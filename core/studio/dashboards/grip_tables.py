"""The GRIP dashboard's tables: grid, paired deltas, figure frames, the report of what is shown.

* :func:`table2` — one row per cell (mean ± sd over seeds), the n of every cell, the best per
  benchmark in bold, never for a cell below :data:`MIN_N_FOR_BEST` episodes;
* :func:`delta_table` — paired method deltas with bootstrap 95 % intervals, formatted;
* :func:`figure_frame` — one of the paper's figure frames by name;
* :func:`report_downloads` — the CLI-shaped GRIP report (JSON and CSV).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.grip import paired_deltas
from core.grip.metrics import METRIC_BY_NAME, METRIC_NAMES, aggregate
from core.grip.report import GripReport, cells_json, metric_definitions, report_csv
from core.model.run import METHODS, PERSONAS
from core.studio.dashboards.grip_format import UNDEFINED, fmt, num, scale_of
from core.studio.markdown import md_escape

MIN_N_FOR_BEST = 5
"""A grid cell with fewer episodes than this in a metric's denominator is never bold as best."""

NEEDS_JUDGES = "needs judges"
"""What an Identification / Consistency cell says when no role-realism judge was run."""

JUDGED: dict[str, str] = {"Identification": "identification", "Consistency": "pairs"}
"""The two metrics that exist only once judges have run (and what they need)."""


# ---------------------------------------------------------------------------------- Table 2
@dataclass(frozen=True)
class Table2:
    """The Table-2-shaped grid.

    Attributes:
        display: Rows = cells (``keys`` columns escaped), an ``n`` column (episodes in the
            cell), one column per metric; each value is ``mean ± sd`` (×100 for rates),
            followed by ``· n=K`` when the metric's denominator is not the whole cell,
            ``**bold**`` where it is the best of its benchmark block, ``"—"`` where undefined.
        best: Same shape as the metric columns: True where bold.
        second: Same shape: True where second best (underlined, as in the paper), only in a
            block with at least three distinct eligible values.
        cells: The long aggregated frame behind it.
        keys: The row keys.
        metrics: The metric columns, in order.
        n: Same shape as ``best``: the episodes (or pairs) in each metric's denominator.
    """

    display: pd.DataFrame
    best: pd.DataFrame
    cells: pd.DataFrame
    keys: tuple[str, ...]
    metrics: tuple[str, ...]
    n: pd.DataFrame | None = None
    second: pd.DataFrame | None = None


def table2(
    frame: pd.DataFrame,
    keys: Sequence[str] = ("benchmark", "method"),
    metrics: Sequence[str] = METRIC_NAMES,
    *,
    pairs: pd.DataFrame | None = None,
    min_n: int = MIN_N_FOR_BEST,
) -> Table2:
    """Build the grid: one row per cell, its n, metrics as columns, the best per benchmark bold.

    "Best" compares rows of the same benchmark (all rows when ``benchmark`` is not a key),
    honours each metric's direction (Staleness and Reaction: lower is better), ignores
    undefined values and cells with fewer than ``min_n`` episodes in the metric's denominator
    (they are shown, with their n, but never bold), and marks ties; a block with fewer than two
    eligible values gets no bold.

    Args:
        frame: Per-episode frame (already filtered).
        keys: Row keys (a subset of the groupable columns).
        metrics: Metric columns.
        pairs: Consistency pairs (role-realism judges), if any.
        min_n: The smallest denominator a cell needs to be bold as best.

    Returns:
        The :class:`Table2`.
    """
    keys = tuple(keys)
    metrics = tuple(metrics)
    cells = aggregate(frame, keys, pairs=pairs)
    if cells.empty:
        empty = pd.DataFrame(columns=[*keys, "n", *metrics])
        return Table2(empty, pd.DataFrame(columns=list(metrics)), cells, keys, metrics)
    cells = cells[cells["metric"].isin(metrics)]
    value = cells.pivot_table(
        index=list(keys), columns="metric", values="value", dropna=False, aggfunc="first"
    )
    sd = cells.pivot_table(
        index=list(keys), columns="metric", values="sd", dropna=False, aggfunc="first"
    )
    denom = cells.pivot_table(
        index=list(keys), columns="metric", values="denominator", dropna=False, aggfunc="first"
    )
    value = value.reindex(index=_ladder_order(value.index, keys), columns=list(metrics))
    sd = sd.reindex(index=value.index, columns=list(metrics))
    denom = denom.reindex(index=value.index, columns=list(metrics)).fillna(0).astype(int)
    sizes = frame.groupby(list(keys), dropna=False, sort=False).size()
    best = pd.DataFrame(False, index=value.index, columns=list(metrics))
    second = pd.DataFrame(False, index=value.index, columns=list(metrics))
    block = (
        value.index.get_level_values("benchmark")
        if "benchmark" in keys
        else pd.Index(["*"] * len(value))
    )
    for m in metrics:
        hib = METRIC_BY_NAME[m].higher_is_better
        col = value[m].where(denom[m] >= max(1, int(min_n)))
        for b in pd.unique(block):
            sel = col[block == b].dropna()
            if len(sel) < 2 or np.ptp(sel.to_numpy(dtype=float)) == 0:
                continue
            target = sel.max() if hib else sel.min()
            won = np.isclose(sel.to_numpy(dtype=float), target)
            best.loc[sel.index[won], m] = True
            rest = sel[~won]
            # second best only where it is not also the last: three or more distinct values
            if len(np.unique(sel.to_numpy(dtype=float).round(12))) >= 3:
                runner = rest.max() if hib else rest.min()
                second.loc[rest.index[np.isclose(rest.to_numpy(dtype=float), runner)], m] = True
    judged = {
        "Identification": "identification" in frame.columns,
        "Consistency": pairs is not None,
    }
    disp_rows = []
    for idx in value.index:
        parts = idx if isinstance(idx, tuple) else (idx,)
        row: dict[str, Any] = {k: md_escape(str(v)) for k, v in zip(keys, parts, strict=True)}
        n_cell = int(sizes.get(idx, 0))
        row["n"] = n_cell
        for m in metrics:
            text = fmt(m, value.at[idx, m], sd.at[idx, m])
            if text == UNDEFINED and m in JUDGED and not judged[m]:
                text = NEEDS_JUDGES
            k = int(denom.at[idx, m])
            if text not in (UNDEFINED, NEEDS_JUDGES) and k != n_cell:
                text += f" · n={k}"
            row[m] = f"**{text}**" if bool(best.at[idx, m]) else text
        disp_rows.append(row)
    display = pd.DataFrame(disp_rows, columns=[*keys, "n", *metrics])
    return Table2(
        display,
        best.reset_index(drop=True),
        cells,
        keys,
        metrics,
        denom.reset_index(drop=True),
        second.reset_index(drop=True),
    )


def grid_styler(t: Table2) -> Any:
    """The grid as a pandas ``Styler`` for an HTML table.

    The best of each block is bold and the second best underlined (the paper's style); "needs
    judges" is grey. Texts carry no markdown marks and are HTML-escaped.
    """
    plain = t.display.copy()
    for k in t.keys:
        plain[k] = plain[k].astype(str).str.replace(r"\\(.)", r"\1", regex=True)
    for m in t.metrics:
        plain[m] = plain[m].astype(str).str.replace("**", "", regex=False)
    styles = pd.DataFrame("", index=plain.index, columns=plain.columns)
    for m in t.metrics:
        for i in range(len(plain)):
            css = []
            if bool(t.best.iat[i, t.metrics.index(m)]):
                css.append("font-weight: 700")
            if t.second is not None and bool(t.second.iat[i, t.metrics.index(m)]):
                css.append("text-decoration: underline")
            if plain.at[plain.index[i], m] == NEEDS_JUDGES:
                css.append("color: #8a8f98; font-style: italic")
            styles.at[plain.index[i], m] = "; ".join(css)
    # a cell's text sits in a markdown block inside the cell: let it take the cell's underline
    inherit = [("text-decoration", "inherit")]
    return (
        plain.style.apply(lambda _: styles, axis=None)
        .format(escape="html")
        .hide(axis="index")
        .set_table_styles(
            [{"selector": "td div", "props": inherit}, {"selector": "td p", "props": inherit}]
        )
    )


def _ladder_order(index: pd.Index, keys: Sequence[str]) -> pd.Index:
    """Sort cell rows by benchmark, then methods in ladder order and personas in file order."""
    rank = {
        "method": {m: i for i, m in enumerate(METHODS)},
        "persona": {p: i for i, p in enumerate(PERSONAS)},
    }

    def key(idx: Any) -> tuple[Any, ...]:
        parts = idx if isinstance(idx, tuple) else (idx,)
        out: list[Any] = []
        for k, v in zip(keys, parts, strict=True):
            r = rank.get(k, {})
            out.append((r.get(str(v), len(r)), str(v)))
        return tuple(out)

    return (
        pd.Index(sorted(index, key=key), name=index.name)
        if len(keys) == 1
        else (pd.MultiIndex.from_tuples(sorted(index, key=key), names=index.names))
    )


# ---------------------------------------------------------------------------------- deltas
def delta_table(
    frame: pd.DataFrame,
    method_a: str,
    method_b: str,
    *,
    metrics: Sequence[str] = ("Success", "Earned", "Aim", "Recovery", "Patience"),
    by: Sequence[str] = ("benchmark",),
    n_boot: int = 2000,
) -> pd.DataFrame:
    """Paired deltas (``method_b − method_a`` on the same samples) with 95 % intervals.

    Returns:
        ``by`` columns plus ``metric, pairs, A, B, Δ, 95% CI`` as display strings (rates ×100,
        undefined "—").
    """
    raw = paired_deltas(
        frame, method_a, method_b, metrics=tuple(metrics), by=tuple(by), n_boot=n_boot
    )
    cols = [*by, "metric", "pairs", method_a, method_b, "Δ", "95% CI"]
    if raw.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for r in raw.to_dict("records"):
        m = str(r["metric"])
        s = scale_of(m)
        lo, hi = num(r["ci_low"]), num(r["ci_high"])
        d = num(r["delta"])
        rows.append(
            {
                **{k: r[k] for k in by},
                "metric": m,
                "pairs": int(r["n_pairs"]),
                method_a: fmt(m, r["mean_a"]),
                method_b: fmt(m, r["mean_b"]),
                "Δ": UNDEFINED if d is None else f"{d * s:+.2f}",
                "95% CI": (
                    UNDEFINED if lo is None or hi is None else f"[{lo * s:+.2f}, {hi * s:+.2f}]"
                ),
            }
        )
    return pd.DataFrame(rows, columns=cols)


# ---------------------------------------------------------------------------------- figures
def figure_frame(name: str, frame: pd.DataFrame, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One of the paper's figure frames by name (only that one is computed).

    Names: ``success_by_backbone``, ``persona_fans``, ``a0_to_a3``, ``earned_vs_inferred``,
    ``fault_complexity``, ``patience_by_shifts``.

    Raises:
        KeyError: On an unknown name.
    """
    from core.grip import figures, paper

    if frame.empty:
        return pd.DataFrame()
    builders: dict[str, Any] = {
        "success_by_backbone": figures.success_by_backbone,
        "persona_fans": lambda f: figures.persona_fans(f, pairs),
        "a0_to_a3": figures.method_change,
        "earned_vs_inferred": figures.earned_vs_inferred,
        "fault_complexity": paper.fault_complexity,
        "patience_by_shifts": figures.patience_by_shifts,
    }
    out: pd.DataFrame = builders[name](frame)
    return out


# ---------------------------------------------------------------------------------- downloads
def report_downloads(
    frame: pd.DataFrame,
    run_ids: Sequence[str],
    keys: Sequence[str],
    *,
    pairs: pd.DataFrame | None = None,
    judges: str | None = None,
) -> tuple[str, str]:
    """The shown cells as the ``driftbench grip`` report: (JSON text, CSV text).

    Undefined values are ``null`` in JSON and empty in CSV, never 0.
    """
    cells = aggregate(frame, tuple(keys), pairs=pairs) if not frame.empty else None
    report = GripReport(
        runs=list(run_ids),
        by=list(keys),
        judges=judges,
        metrics=metric_definitions(),
        cells=cells_json(cells, frame, tuple(keys)) if cells is not None else [],
    )
    return json.dumps(report.to_json(), indent=1, allow_nan=False), report_csv(report)
