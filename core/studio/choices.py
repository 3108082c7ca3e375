"""The closed vocabularies the pages offer in pickers: personas, methods, benchmarks, metrics."""

from __future__ import annotations

from collections.abc import Iterable

from core.agents.methods import LADDER
from core.grip.metrics import GROUPABLE, METRIC_NAMES
from core.protocol.personas import load_personas

INTERNAL_BENCHMARKS: frozenset[str] = frozenset({"mock"})
"""Benchmarks that exist for tests and are never offered in a picker."""

__all__ = [
    "GROUPABLE",
    "INTERNAL_BENCHMARKS",
    "LADDER",
    "METRIC_NAMES",
    "load_personas",
    "method_label",
    "offered_benchmarks",
]


def method_label(method: str) -> str:
    """A method as pickers show it: ``A2 · Budget Planner`` (unknown ids as they are)."""
    spec = LADDER.get(method)
    if spec is None:
        return "human (a person plays the agent)" if method == "human" else method
    return f"{spec.id} · {spec.name}"


def offered_benchmarks(names: Iterable[str]) -> list[str]:
    """``names`` without the internal test benchmarks, order kept."""
    return [n for n in names if n not in INTERNAL_BENCHMARKS]
