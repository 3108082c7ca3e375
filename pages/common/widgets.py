"""Shared widgets: patience meter, transcript, shift timeline (UI only; data comes from core)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import streamlit as st

from core.model.episode import TranscriptEntry
from core.studio.timeline import TimelinePoint

_AVATAR = {"user": "user", "agent": "assistant", "environment": ":material/build:"}

MARKER_STYLE: dict[str, tuple[str, str, str]] = {
    # marker: (plotly symbol, colour, legend label)
    "question": ("circle", "#2f6f8f", "question"),
    "tool": ("square", "#8a8f98", "tool call"),
    "proposal_accepted": ("star", "#2e9e5b", "proposal accepted"),
    "proposal_rejected": ("x", "#d1495b", "proposal rejected"),
    "malformed": ("diamond-open", "#b07d2b", "malformed"),
    "shift_due": ("triangle-down-open", "#7b5ea7", "shift due"),
    "shift_fired": ("triangle-down", "#7b5ea7", "shift fired"),
    "shift_skipped": ("triangle-down-open", "#c2b8d6", "shift skipped"),
    "forced_final": ("hourglass", "#b07d2b", "forced final"),
    "end": ("line-ns", "#1b2631", "end"),
}


def patience_meter(patience: float, budget: float, *, key: str | None = None) -> None:
    """Show remaining patience as a labelled progress bar."""
    frac = 0.0 if budget <= 0 else max(0.0, min(1.0, patience / budget))
    st.progress(frac, text=f"Patience {patience:g} / {budget:g}")


def transcript(entries: Sequence[TranscriptEntry], *, tail: int | None = None) -> None:
    """Render a conversation; every text is shown inert (no HTML, no markdown)."""
    shown = list(entries)[-tail:] if tail else list(entries)
    for e in shown:
        with st.chat_message(_AVATAR.get(e.role, e.role)):
            st.caption(f"turn {e.turn} · {e.role}")
            st.text(e.text)


def timeline_figure(points: Sequence[TimelinePoint], *, budget: float | None = None) -> go.Figure:
    """The shift timeline: turns on x, patience line, one marker series per event kind."""
    fig = go.Figure()
    line = [(p.turn, p.patience) for p in points if p.patience is not None]
    if line:
        fig.add_trace(
            go.Scatter(
                x=[t for t, _ in line],
                y=[v for _, v in line],
                mode="lines",
                line={"shape": "hv", "color": "#9fb4c2"},
                name="patience",
            )
        )
    for marker, (symbol, colour, label) in MARKER_STYLE.items():
        pts = [p for p in points if p.marker == marker]
        if not pts:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p.turn for p in pts],
                y=[p.patience if p.patience is not None else 0 for p in pts],
                mode="markers",
                marker={"symbol": symbol, "size": 12, "color": colour},
                name=label,
                text=[p.label for p in pts],
                hovertemplate="turn %{x} · patience %{y}<br>%{text}<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(
        height=300,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        # whole turns only (no 1.2, 1.4 ticks), at most ~20 ticks
        xaxis={
            "title": "turn",
            "dtick": max(1, -(-max((p.turn for p in points), default=1) // 20)),
            "tick0": 0,
            "tickformat": "d",
            "rangemode": "tozero",
        },
        yaxis_title="patience",
        yaxis_range=[0, (budget or max((v for _, v in line), default=10)) * 1.08],
        legend={"orientation": "h", "y": -0.3},
    )
    return fig
