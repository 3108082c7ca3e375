"""The closed vocabularies the pages offer in pickers: personas, methods, benchmarks, metrics."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
    "sample_selectors",
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


def sample_selectors(store: Any) -> tuple[list[str], list[str]]:
    """The run form's provenance and split choices for what the store holds.

    Returns:
        ``(sources, splits)``: ``sources`` are ``--source`` selectors — ``bundled`` (the
        project's samples are always available), then each stored kind (``built``,
        ``release``) and each import's own name; ``splits`` the stored split names.
    """
    kinds: list[str] = ["bundled"]
    names: list[str] = []
    splits: list[str] = []
    for (source,) in store.conn.execute("SELECT DISTINCT source FROM samples ORDER BY source"):
        kind, _, name = str(source).partition(":")
        if kind not in kinds:
            kinds.append(kind)
        if name and name not in names:
            names.append(name)
    for (split,) in store.conn.execute(
        "SELECT DISTINCT split FROM samples WHERE split IS NOT NULL AND split != '' ORDER BY split"
    ):
        splits.append(str(split))
    return kinds + [n for n in names if n not in kinds], splits
