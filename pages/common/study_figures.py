"""Figures of the study pages: confusion matrices (Agreement) and session statistics (Sessions).

Plotly is imported on use, so pages that never draw a figure do not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from core.studio.study_display import SESSION_MEASURES

if TYPE_CHECKING:
    import plotly.graph_objects as go

_LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def confusion_figure(matrix: pd.DataFrame, row_name: str, col_name: str) -> go.Figure:
    """A confusion matrix as an annotated plotly heatmap (rows: ``row_name``'s labels)."""
    import plotly.express as px

    fig = px.imshow(
        matrix.to_numpy(),
        x=[str(c) for c in matrix.columns],
        y=[str(i) for i in matrix.index],
        text_auto=True,
        color_continuous_scale="Blues",
        labels={"x": col_name, "y": row_name, "color": "units"},
        aspect="auto",
    )
    fig.update_layout(title=f"{row_name} (rows) vs {col_name} (columns)", **_LAYOUT)
    return fig


def sessions_box_figure(frame: pd.DataFrame) -> go.Figure:
    """Figure 7: misaligned vs matched clean sessions, platform score and tool calls (boxes)."""
    import plotly.express as px

    d = frame.assign(measure=frame["measure"].map(SESSION_MEASURES))
    fig = px.box(
        d,
        x="group",
        y="value",
        color="group",
        facet_col="measure",
        points="all",
        hover_data={"session_id": True, "pair": True},
        category_orders={"group": ["misaligned", "matched clean"]},
        color_discrete_map={"misaligned": "#d1495b", "matched clean": "#2e9e5b"},
    )
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_layout(showlegend=False, **_LAYOUT)
    return fig


def distribution_figure(frame: pd.DataFrame, kind: str) -> go.Figure:
    """Counts of one distribution (fault type / fault family / shift type) as bars."""
    import plotly.express as px

    d = frame[frame["kind"] == kind]
    fig = px.bar(d, x="label", y="count", labels={"label": kind, "count": "misaligned sessions"})
    fig.update_layout(title=f"{kind.capitalize()}s over misaligned sessions", **_LAYOUT)
    return fig
