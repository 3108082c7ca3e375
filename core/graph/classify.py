"""Construction's use of the one shift rule (:mod:`core.model.shift`).

The rule itself (refine / relax / substitute / pivot, value comparison, delta text) lives in
:func:`core.model.shift.classify_shift`, below both construction and the runtime, so the edges a
graph stores and the moves an episode derives can never disagree. This module adds the
construction-side view of a whole node set.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.model.intent import Edge, Intent
from core.model.shift import OPERATOR_ORDER, classify_shift

__all__ = ["OPERATOR_ORDER", "classify_shift", "transition_edges"]


def transition_edges(nodes: Sequence[Intent]) -> list[Edge]:
    """Every classifiable ordered pair among ``nodes`` (what construction would label).

    ``gt_moved`` is recomputed per pair from the stored ground truths (missing = moved), so
    sibling→sibling moves stay executable labels.

    Args:
        nodes: Root followed by children (each with its executed ground truth).

    Returns:
        Edges sorted by (src, dst).
    """
    out: list[Edge] = []
    for a in nodes:
        for b in nodes:
            shift = classify_shift(a, b)
            if shift is None:
                continue
            ga, gb = a.ground_truth, b.ground_truth
            moved = ga is None or gb is None or ga.hash != gb.hash
            out.append(
                Edge(
                    src=a.intent_id,
                    dst=b.intent_id,
                    operator=shift.operator,
                    delta=shift.delta,
                    gt_moved=moved,
                )
            )
    return sorted(out, key=lambda e: (e.src, e.dst))
