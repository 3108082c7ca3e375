"""Plotly figures of the research pages.

The GRIP figures and the persona heatmap are plain functions of
:mod:`core.studio.dashboards.grip_charts` (re-exported here for the pages); this module adds the
construction explorer's intent-graph network. Undefined values stay NaN: plotly leaves gaps,
hover texts say "—", never 0.
"""

from __future__ import annotations

import html
import math

import pandas as pd
import plotly.graph_objects as go

from core.studio.dashboards import (
    FIGURES,
    PERSONA_COLOURS,
    empty_figure,
    figure_height,
    grip_figure,
    heatmap_figure,
)

__all__ = [
    "FIGURES",
    "OPERATOR_COLOURS",
    "PERSONA_COLOURS",
    "empty_figure",
    "figure_height",
    "grip_figure",
    "heatmap_figure",
    "network_figure",
]

# Edge colours by shift operator.
OPERATOR_COLOURS: dict[str, str] = {
    "refine": "#2f6f8f",
    "relax": "#2e9e5b",
    "substitute": "#b07d2b",
    "pivot": "#d1495b",
}


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
