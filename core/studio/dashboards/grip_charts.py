"""Plotly figures of the GRIP results: the paper's figures and the persona-ranking heatmap.

Plain functions from tidy frames (:mod:`core.grip.figures`, :func:`heatmap_cells`) to plotly
figures — no store, no widgets — so the dashboard, the CLI and tests can all call them.

* Every bar or point that shows a mean carries an error bar: sd over seeds when every cell has
  two or more seeds, else a 95 % bootstrap interval over the cell's episodes
  (:mod:`core.grip.intervals`); the kind is named in the figure's title. The A0 → A3 change
  carries its paired bootstrap interval. Fig. 10 draws :func:`core.grip.paper.fault_complexity`
  (mean ± sd over seeds), the frame ``driftbench reproduce`` draws.
* The heatmap is faceted by benchmark (one panel each), metric names read horizontally, every
  cell carries its rank (1 = best; ties share their average rank) and its n, and the legend
  says that 1 is best.

Undefined values stay NaN: plotly leaves gaps, texts say "—", never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.studio.dashboards.grip_format import UNDEFINED, fmt, scale_of

PERSONA_COLOURS: dict[str, str] = {
    "rational": "#2f6f8f",
    "dependent": "#7b5ea7",
    "avoidant": "#b07d2b",
    "intuitive": "#2e9e5b",
    "spontaneous": "#d1495b",
}
"""One palette for personas, shared by every chart."""

FIGURES: dict[str, str] = {
    "success_by_backbone": "Success (and WebShop Score) by backbone and method",
    "persona_fans": "Per-persona metrics by method",
    "a0_to_a3": "Aim and Recovery change from A0 to A3 (paired, 95% CI)",
    "earned_vs_inferred": "Earned vs Inferred success on hidden-target episodes",
    "fault_complexity": "Fig. 10 — Success and Reaction by number of composed faults",
    "patience_by_shifts": "Remaining patience with silent shifts off vs on",
}
"""The paper's GRIP figures by frame name, with their titles."""

RANK_SCALE: list[list[Any]] = [[0.0, "#4f93c9"], [0.5, "#d7e6f3"], [1.0, "#f3cdbd"]]
"""Rank colours: 1 (best) blue, the middle pale, the last pale red; dark text stays legible."""

LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 90, "b": 10}, "height": 420}


def empty_figure(message: str) -> go.Figure:
    """A blank figure carrying a message (nothing to plot)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(xaxis_visible=False, yaxis_visible=False, **LAYOUT)
    return fig


def _scaled(df: pd.DataFrame, metric_col: str = "metric") -> pd.DataFrame:
    """Values, error bars and hover labels in display units (rates ×100)."""
    out = df.copy()
    scale = [scale_of(str(m)) for m in out[metric_col]]
    out["shown"] = out["value"].astype(float) * scale
    for col in ("err_minus", "err_plus"):
        base = out[col] if col in out.columns else out["sd"]
        out[col] = base.astype(float) * scale
    out["label"] = [
        fmt(str(m), v, s) for m, v, s in zip(out[metric_col], out["value"], out["sd"], strict=True)
    ]
    return out


def _error_note(df: pd.DataFrame) -> str:
    kinds = sorted({str(k) for k in df.get("err_kind", pd.Series(dtype=str)).dropna()})
    return f"error bars: {' / '.join(kinds)}" if kinds else ""


def _bars(d: pd.DataFrame, **kw: Any) -> go.Figure:
    return px.bar(d, y="shown", error_y="err_plus", error_y_minus="err_minus", **kw)


def grip_figure(name: str, df: pd.DataFrame, *, metric: str | None = None) -> go.Figure:
    """Plot one GRIP figure frame (see :func:`core.grip.figure_frames`).

    Args:
        name: Frame name (a key of :data:`FIGURES`).
        df: The tidy frame.
        metric: For ``persona_fans``: which metric to show.

    Returns:
        A plotly figure (an annotated blank one when the frame is empty); every trace that
        shows means has error bars, and the title names their kind.
    """
    title = FIGURES.get(name, name)
    if df is None or df.empty:
        return empty_figure(f"{title}: no data in the selected runs")
    note = _error_note(df)
    if name == "success_by_backbone":
        d = _scaled(df)
        fig = _bars(
            d,
            x="method",
            color="backbone",
            barmode="group",
            facet_col="benchmark",
            pattern_shape="metric",
            hover_data={"label": True},
            labels={"shown": "Success / Score (×100)"},
        )
    elif name == "persona_fans":
        m = metric or "Success"
        sub = df[df["metric"] == m]
        note = _error_note(sub)
        d = _scaled(sub)
        if d["shown"].isna().all():
            return empty_figure(f"{m}: undefined ({UNDEFINED}) for every cell")
        fig = _bars(
            d,
            x="persona",
            color="method",
            barmode="group",
            facet_col="benchmark",
            hover_data={"label": True},
            labels={"shown": f"{m} ({'×100' if scale_of(m) == 100 else 'raw'})"},
            category_orders={"persona": list(PERSONA_COLOURS)},
        )
    elif name == "a0_to_a3":
        d = df.copy()
        s = [scale_of(str(m)) for m in d["metric"]]
        d["Δ"] = d["delta"].astype(float) * s
        d["hi"] = (d["ci_high"].astype(float) - d["delta"].astype(float)) * s
        d["lo"] = (d["delta"].astype(float) - d["ci_low"].astype(float)) * s
        note = "error bars: paired 95% bootstrap CI"
        fig = px.bar(
            d,
            x="persona",
            y="Δ",
            error_y="hi",
            error_y_minus="lo",
            color="metric",
            barmode="group",
            facet_col="benchmark",
            hover_data={"n_pairs": True},
            category_orders={"persona": list(PERSONA_COLOURS)},
        )
    elif name == "earned_vs_inferred":
        d = _scaled(df, "component")
        fig = _bars(
            d,
            x="method",
            color="component",
            barmode="group",
            facet_col="benchmark",
            hover_data={"label": True},
            labels={"shown": "share of hidden-target episodes (×100)"},
        )
    elif name == "fault_complexity":
        d = _scaled(df)
        fig = px.line(
            d,
            x="k",
            y="shown",
            error_y="err_plus",
            error_y_minus="err_minus",
            color="method",
            markers=True,
            facet_col="benchmark",
            facet_row="metric",
            hover_data={"label": True, "n_seeds": True, "denominator": True},
            labels={"k": "composed faults", "shown": "Success (×100) / Reaction (turns)"},
            category_orders={"metric": ["Success", "Reaction"]},
        )
        fig.update_xaxes(dtick=1)
        fig.update_yaxes(matches=None, showticklabels=True)
    elif name == "patience_by_shifts":
        d = _scaled(df)
        fig = _bars(
            d,
            x="persona",
            color="shifts",
            barmode="group",
            facet_col="benchmark",
            facet_row="method",
            hover_data={"label": True},
            labels={"shown": "patience left (budget units)"},
            category_orders={"persona": list(PERSONA_COLOURS)},
        )
    else:
        return empty_figure(f"unknown figure {name}")
    height = LAYOUT["height"]
    if name == "patience_by_shifts":
        height = figure_height(df)
    elif name == "fault_complexity":
        height = 2 * height - 140  # two facet rows: Success and Reaction
    full = f"{title}<br><sup>{note}</sup>" if note else title
    fig.for_each_annotation(lambda a: a.update(text=str(a.text).split("=")[-1]))
    fig.update_layout(title=full, **{**LAYOUT, "height": height})
    return fig


def figure_height(df: pd.DataFrame, *, per_row: int = 240, minimum: int = 400) -> int:
    """Height for a faceted figure: every facet row (one per method) gets ``per_row`` pixels.

    >>> figure_height(pd.DataFrame({"method": ["A0", "A2", "B0", "A0"]}))
    800
    """
    rows = df["method"].nunique() if "method" in df.columns and not df.empty else 1
    return max(minimum, 80 + per_row * int(rows)) if rows > 1 else minimum


def rank_text(rank: Any) -> str:
    """A rank as a cell shows it: ``1``, ``2.5`` (a shared rank); ``""`` when unranked."""
    try:
        r = float(rank)
    except (TypeError, ValueError):
        return ""
    if r != r:  # NaN
        return ""
    return f"{r:g}"


def cell_label(row: Any) -> str:
    """The two lines of a heatmap cell: the rank (or why there is none) and n.

    >>> cell_label({"rank": 1.0, "n": 12, "tie": False})
    '<b>1</b><br>n=12'
    >>> cell_label({"rank": float("nan"), "n": 5, "tie": True})
    'tie<br>n=5'
    """
    rank = rank_text(row["rank"])
    if rank:
        head = f"<b>{rank}</b>"
    elif bool(row.get("tie", False)):
        head = "tie"
    else:
        head = UNDEFINED
    return f"{head}<br>n={int(row['n'])}"


def metric_tick(name: str, width: int = 9) -> str:
    """A metric name as a horizontal tick label: long names on two lines.

    >>> metric_tick("PostShift"), metric_tick("Identification"), metric_tick("Aim")
    ('PostShift', 'Identif-<br>ication', 'Aim')
    """
    if len(name) <= width:
        return name
    humps = [i for i, c in enumerate(name) if c.isupper() and i > 0]
    if humps:
        return name[: humps[0]] + "<br>" + name[humps[0] :]
    half = len(name) // 2
    return name[:half] + "-<br>" + name[half:]


def heatmap_figure(heat: pd.DataFrame, personas: Sequence[str] | None = None) -> go.Figure:
    """Persona ranking heatmap: one panel per benchmark, personas × metrics, rank and n in cells.

    Drawn as large square markers (not a heatmap trace) so that a click or a box selects
    cells through ``st.plotly_chart(on_select="rerun")``; every point carries
    ``customdata = [benchmark, metric, persona, n]`` and its text is the cell's rank (1 = best)
    and n. Colour follows the rank; a column where every persona ties is grey (nobody is
    ranked); an undefined cell is hollow.
    """
    if heat.empty:
        return empty_figure("no persona ranking: the selected runs have no ended episodes")
    rows = list(personas) if personas else [p for p in PERSONA_COLOURS if p in set(heat["persona"])]
    rows += sorted(set(heat["persona"]) - set(rows))
    benches = list(dict.fromkeys(heat["benchmark"]))
    metrics = list(dict.fromkeys(heat["metric"]))
    n_p = max(1, len(rows))
    per_panel = 46 * n_p + 80
    fig = make_subplots(
        rows=len(benches),
        cols=1,
        subplot_titles=benches,
        vertical_spacing=min(0.2, 90 / (per_panel * len(benches))),
    )
    size = max(18, min(44, int(980 / max(1, len(metrics))) - 8))
    tie = heat["tie"].astype(bool) if "tie" in heat.columns else pd.Series(False, index=heat.index)
    hover = (
        "%{customdata[2]} · %{customdata[0]} · %{customdata[1]}<br>"
        "value %{hovertext}<br>%{text}<extra></extra>"
    )
    for i, bench in enumerate(benches, start=1):
        panel = heat[heat["benchmark"] == bench]
        parts = (
            (panel[panel["rank"].notna()], "ranked"),
            (panel[panel["rank"].isna() & tie[panel.index]], "tie"),
            (panel[panel["rank"].isna() & ~tie[panel.index]], "undefined"),
        )
        for part, kind in parts:
            if part.empty:
                continue
            marker: dict[str, Any] = {"symbol": "square", "size": size, "line": {"width": 0}}
            if kind == "ranked":
                marker.update(
                    color=part["rank"].astype(float),
                    colorscale=RANK_SCALE,
                    cmin=1,
                    cmax=n_p,
                    showscale=i == 1,
                    colorbar={
                        "title": {"text": "rank<br>1 = best"},
                        "tickvals": list(range(1, n_p + 1)),
                        "len": min(1.0, 320 / (per_panel * len(benches))),
                        "y": 1.0,
                        "yanchor": "top",
                    },
                )
            elif kind == "tie":
                marker.update(color="#d5d9df")
            else:
                # an open symbol draws its outline in the marker colour and has no fill
                marker.update(color="#8a8f98", symbol="square-open", line={"width": 1.5})
            fig.add_trace(
                go.Scatter(
                    x=part["metric"],
                    y=part["persona"],
                    mode="markers+text",
                    marker=marker,
                    text=[cell_label(r) for r in part.to_dict("records")],
                    textfont={"size": 10, "color": "#1b2631"},
                    hovertext=list(part["text"]),
                    name=f"{bench} · {kind}",
                    customdata=part[["benchmark", "metric", "persona", "n"]].to_numpy(),
                    hovertemplate=hover,
                    showlegend=False,
                ),
                row=i,
                col=1,
            )
        fig.update_xaxes(
            categoryorder="array",
            categoryarray=metrics,
            tickvals=metrics,
            ticktext=[metric_tick(m) for m in metrics],
            tickangle=0,
            side="top",
            row=i,
            col=1,
        )
        fig.update_yaxes(categoryorder="array", categoryarray=rows[::-1], row=i, col=1)
    # panel titles sit above their metric names, at the left
    fig.update_annotations(yshift=34, x=0, xanchor="left", font={"size": 13})
    fig.update_layout(
        height=per_panel * len(benches) + 60,
        margin={"l": 10, "r": 10, "t": 110, "b": 20},
        clickmode="event+select",
        dragmode="zoom",  # a click selects a cell; box-select stays in the modebar
        title={
            "text": "Rank of each persona per metric (1 = best; ties share their average rank) "
            "· n = episodes in the cell",
            "font": {"size": 13},
        },
    )
    return fig
