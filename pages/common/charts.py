"""Plotly figures of the research pages (GRIP figures, persona heatmap, intent-graph network).

Pure figure builders over tidy frames computed in ``core`` (no store access, no widgets), so
they are cheap to call and easy to test. Undefined values stay NaN: plotly leaves gaps, hover
texts say "—", never 0.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from core.studio.dashboards import UNDEFINED, fmt, scale_of

# One palette for personas, shared by every chart.
PERSONA_COLOURS: dict[str, str] = {
    "rational": "#2f6f8f",
    "dependent": "#7b5ea7",
    "avoidant": "#b07d2b",
    "intuitive": "#2e9e5b",
    "spontaneous": "#d1495b",
}

# Edge colours by shift operator.
OPERATOR_COLOURS: dict[str, str] = {
    "refine": "#2f6f8f",
    "relax": "#2e9e5b",
    "substitute": "#b07d2b",
    "pivot": "#d1495b",
}

# The paper's GRIP figures by frame name, with their titles.
FIGURES: dict[str, str] = {
    "success_by_backbone": "Success (and WebShop Score) by backbone and method",
    "persona_fans": "Per-persona metrics by method",
    "a0_to_a3": "Aim and Recovery change from A0 to A3 (paired, 95% CI)",
    "earned_vs_inferred": "Earned vs Inferred success on hidden-target episodes",
    "reaction_by_faults": "Reaction (median turns) by number of composed faults",
    "patience_by_shifts": "Remaining patience with silent shifts off vs on",
}

_LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def _scaled(df: pd.DataFrame, metric_col: str = "metric") -> pd.DataFrame:
    out = df.copy()
    scale = [scale_of(str(m)) if m in ("Patience", "Reaction") else 100.0 for m in out[metric_col]]
    out["shown"] = out["value"].astype(float) * scale
    out["err"] = out["sd"].astype(float) * scale
    out["label"] = [
        fmt(str(m), v, s) for m, v, s in zip(out[metric_col], out["value"], out["sd"], strict=True)
    ]
    return out


def empty_figure(message: str) -> go.Figure:
    """A blank figure carrying a message (nothing to plot)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(xaxis_visible=False, yaxis_visible=False, **_LAYOUT)
    return fig


def grip_figure(name: str, df: pd.DataFrame, *, metric: str | None = None) -> go.Figure:
    """Plot one GRIP figure frame (see :func:`core.grip.figure_frames`).

    Args:
        name: Frame name (a key of :data:`FIGURES`).
        df: The tidy frame.
        metric: For ``persona_fans``: which metric to show.

    Returns:
        A plotly figure (an annotated blank one when the frame is empty).
    """
    title = FIGURES.get(name, name)
    if df is None or df.empty:
        return empty_figure(f"{title}: no data in the selected runs")
    if name == "success_by_backbone":
        d = _scaled(df)
        fig = px.bar(
            d,
            x="method",
            y="shown",
            error_y="err",
            color="backbone",
            barmode="group",
            facet_col="benchmark",
            pattern_shape="metric",
            hover_data={"label": True},
            labels={"shown": "Success / Score (×100)"},
        )
    elif name == "persona_fans":
        m = metric or "Success"
        d = _scaled(df[df["metric"] == m])
        if d["shown"].isna().all():
            return empty_figure(f"{m}: undefined ({UNDEFINED}) for every cell")
        fig = px.bar(
            d,
            x="persona",
            y="shown",
            error_y="err",
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
        fig = px.bar(
            d,
            x="method",
            y="shown",
            color="component",
            barmode="stack",
            facet_col="benchmark",
            hover_data={"label": True},
            labels={"shown": "share of hidden-target episodes (×100)"},
        )
    elif name == "reaction_by_faults":
        fig = px.line(
            df,
            x="k",
            y="median_reaction",
            color="method",
            markers=True,
            facet_col="benchmark",
            hover_data={"mean_reaction": True, "n": True},
            labels={"k": "composed faults", "median_reaction": "median turns to acceptance"},
        )
    elif name == "patience_by_shifts":
        d = _scaled(df)
        fig = px.bar(
            d,
            x="persona",
            y="shown",
            error_y="err",
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
    height = figure_height(df) if name == "patience_by_shifts" else _LAYOUT["height"]
    fig.update_layout(title=title, **{**_LAYOUT, "height": height})
    return fig


def figure_height(df: pd.DataFrame, *, per_row: int = 240, minimum: int = 380) -> int:
    """Height for a faceted figure: every facet row (one per method) gets ``per_row`` pixels.

    >>> figure_height(pd.DataFrame({"method": ["A0", "A2", "B0", "A0"]}))
    800
    """
    rows = df["method"].nunique() if "method" in df.columns and not df.empty else 1
    return max(minimum, 80 + per_row * int(rows)) if rows > 1 else minimum


def heatmap_figure(heat: pd.DataFrame, personas: Sequence[str] | None = None) -> go.Figure:
    """Persona ranking heatmap: personas × (benchmark · metric), colour = rank (1 = best).

    Drawn as large square markers (not a heatmap trace) so that a click or a box selects
    cells through ``st.plotly_chart(on_select="rerun")``; every point carries
    ``customdata = [benchmark, metric, persona]``.
    """
    if heat.empty:
        return empty_figure("no persona ranking: the selected runs have no ended episodes")
    rows = list(personas) if personas else [p for p in PERSONA_COLOURS if p in set(heat["persona"])]
    rows += sorted(set(heat["persona"]) - set(rows))
    columns = list(dict.fromkeys(heat["column"]))
    tie = heat["tie"] if "tie" in heat.columns else pd.Series(False, index=heat.index)
    ranked = heat[heat["rank"].notna()]
    tied = heat[heat["rank"].isna() & tie.astype(bool)]
    unranked = heat[heat["rank"].isna() & ~tie.astype(bool)]
    n_p = max(1, len(rows))
    fig = go.Figure()
    size = max(14, min(34, int(900 / max(1, len(columns)))))
    where = "%{customdata[2]} · %{customdata[0]} · %{customdata[1]}<br>"
    # ranked cells are coloured by rank; a column where every persona ties is drawn in one
    # neutral tone (nobody wins); undefined cells are hollow, so no colour can be mistaken
    # for a rank
    parts: tuple[tuple[pd.DataFrame, str], ...] = (
        (ranked, "ranked"),
        (tied, "tie"),
        (unranked, "undefined"),
    )
    for part, kind in parts:
        if part.empty:
            continue
        marker: dict[str, Any] = {"symbol": "square", "size": size, "line": {"width": 0}}
        if kind == "ranked":
            marker.update(
                color=part["rank"].astype(float),
                colorscale="RdBu",
                reversescale=True,
                cmin=1,
                cmax=n_p,
                colorbar={"title": "rank<br>(1 = best)"},
            )
            hover = where + "value %{text} · rank %{marker.color}<br>%{customdata[3]} episodes"
        elif kind == "tie":
            marker.update(color="#c9ced6", symbol="square-dot")
            hover = (
                where + "value %{text}: every persona ties (no rank)<br>%{customdata[3]} episodes"
            )
        else:
            marker.update(
                color="rgba(0,0,0,0)", symbol="square-open", line={"width": 1.5, "color": "#8a8f98"}
            )
            hover = where + f"undefined ({UNDEFINED}): no episode in the denominator"
        fig.add_trace(
            go.Scatter(
                x=part["column"],
                y=part["persona"],
                mode="markers+text" if len(columns) <= 12 else "markers",
                marker=marker,
                text=list(part["text"]),
                textfont={"size": 9},
                name=kind,
                customdata=part[["benchmark", "metric", "persona", "n"]].to_numpy(),
                hovertemplate=hover + "<extra></extra>",
                showlegend=False,
            )
        )
    fig.update_layout(
        height=120 + 42 * n_p,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"categoryorder": "array", "categoryarray": columns, "tickangle": -45},
        yaxis={"categoryorder": "array", "categoryarray": rows[::-1]},
        clickmode="event+select",
        dragmode="zoom",  # a click selects a cell; box-select stays in the modebar
    )
    return fig


def network_figure(nodes: pd.DataFrame, edges: pd.DataFrame, *, height: int = 420) -> go.Figure:
    """A small star network of one intent graph (root in the middle, edges by operator).

    Args:
        nodes: Columns ``intent_id, role, label, gt_size`` (role ``root`` or ``child``).
        edges: Columns ``src, dst, operator, delta, gt_moved``.
        height: Figure height in pixels.
    """
    if nodes.empty:
        return empty_figure("no nodes")
    pos: dict[str, tuple[float, float]] = {}
    children = [i for i, r in zip(nodes["intent_id"], nodes["role"], strict=True) if r != "root"]
    for i, r in zip(nodes["intent_id"], nodes["role"], strict=True):
        if r == "root":
            pos[i] = (0.0, 0.0)
    for k, cid in enumerate(children):
        a = 2 * math.pi * k / max(1, len(children))
        pos[cid] = (math.cos(a), math.sin(a))
    fig = go.Figure()
    for op, colour in OPERATOR_COLOURS.items():
        sub = edges[edges["operator"] == op] if not edges.empty else edges
        xs: list[float | None] = []
        ys: list[float | None] = []
        for s, d in zip(sub.get("src", []), sub.get("dst", []), strict=True):
            if s in pos and d in pos:
                xs += [pos[s][0], pos[d][0], None]
                ys += [pos[s][1], pos[d][1], None]
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line={"color": colour, "width": 2},
                    name=op,
                    hoverinfo="skip",
                )
            )
    fig.add_trace(
        go.Scatter(
            x=[pos[i][0] for i in nodes["intent_id"]],
            y=[pos[i][1] for i in nodes["intent_id"]],
            mode="markers",
            marker={
                "size": [22 if r == "root" else 12 for r in nodes["role"]],
                "color": ["#1b2631" if r == "root" else "#9fb4c2" for r in nodes["role"]],
            },
            text=[
                f"{html.escape(str(lab))}<br>ground truth: {g}"
                for lab, g in zip(nodes["label"], nodes["gt_size"], strict=True)
            ],
            hovertemplate="%{text}<extra></extra>",
            name="intents",
            showlegend=False,
        )
    )
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False, "scaleanchor": "x"},
        legend={"orientation": "h", "y": -0.05},
    )
    return fig
