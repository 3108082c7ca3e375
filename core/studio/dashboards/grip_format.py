"""How the GRIP dashboard shows one metric value: scale, ``mean ± sd`` text, "—" when undefined.

Shared by the grid, the deltas, the heatmap and the page's charts, so a number reads the same
everywhere. Undefined values are NaN in frames and ``"—"`` in every formatted output, never 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.grip.metrics import METRIC_BY_NAME

UNDEFINED = "—"
"""How an undefined metric value is shown (never 0)."""


def scale_of(metric: str) -> float:
    """Display scale: rates ×100; Patience (budget units) and Reaction (turns) raw."""
    unit = METRIC_BY_NAME[metric].unit
    return 1.0 if unit in ("budget", "turns") else 100.0


def fmt(metric: str, value: Any, sd: Any = None) -> str:
    """Format one metric value (``mean ± sd``); undefined → "—", never 0."""
    v = num(value)
    if v is None:
        return UNDEFINED
    s = scale_of(metric)
    text = f"{v * s:.2f}"
    d = num(sd)
    if d is not None:
        text += f" ± {d * s:.2f}"
    return text


def num(v: Any) -> float | None:
    """A metric value as a float, or None when undefined (None, NaN or not a number)."""
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(f) else f
