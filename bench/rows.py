"""One result row of a benchmark (the columns ``python -m bench`` writes to PERFORMANCE.md)."""

from __future__ import annotations

from typing import Any


def row(
    name: str,
    value: float,
    unit: str,
    baseline: float | None,
    target: str,
    met: bool | None,
    notes: str,
    *,
    speedup: bool = False,
) -> dict[str, Any]:
    """A row with its ratio against the baseline measured in the same run.

    Args:
        name: The measurement.
        value: What was measured.
        unit: Its unit.
        baseline: The baseline measured in the same run (None: no baseline).
        target: The target, in words.
        met: Whether the target is met (None: no target).
        notes: What the numbers mean.
        speedup: The ratio is ``baseline / value`` (how many times faster) instead of
            ``value / baseline``.
    """
    if speedup:
        ratio = baseline / value if baseline is not None and value > 0 else None
    else:
        ratio = value / baseline if baseline else None
    return {
        "name": name,
        "value": round(value, 4),
        "unit": unit,
        "baseline": round(baseline, 4) if baseline is not None else None,
        "ratio": round(ratio, 4) if ratio is not None else None,
        "target": target,
        "met": met,
        "notes": notes,
    }
