"""Classify how one intent relates to another (the four shift operators).

Relation of B to A (same environment): a different base is a **pivot**; a strict superset of
A's conditions is a **refinement**; a strict subset is a **relaxation**; the same (slot, op)
pairs with some value changed is a **substitution**; anything else is no edge.
"""

from __future__ import annotations

from collections import Counter

from core.model.base import canonical_json
from core.model.intent import Condition, Edge, Intent, ShiftOperator

OPERATOR_ORDER: tuple[ShiftOperator, ...] = (
    ShiftOperator.REFINE,
    ShiftOperator.RELAX,
    ShiftOperator.SUBSTITUTE,
    ShiftOperator.PIVOT,
)
"""Canonical operator order (ranking tie-break and report order)."""


def _cond_text(c: Condition) -> str:
    return f"{c.slot}{c.op}{canonical_json(c.value)}"


def classify(a: Intent, b: Intent) -> tuple[ShiftOperator, str] | None:
    """Return the shift operator taking ``a`` to ``b`` and a readable delta, or None.

    Args:
        a: Source intent.
        b: Destination intent.

    Returns:
        ``(operator, delta)``; None when the two are identical, live in different
        environments, or differ in a way no single operator expresses.
    """
    if a.env_id != b.env_id or a.intent_id == b.intent_id:
        return None
    if a.base != b.base:
        return ShiftOperator.PIVOT, f"pivot_to: {b.base}"
    ca = {canonical_json(c): c for c in a.conditions}
    cb = {canonical_json(c): c for c in b.conditions}
    ka, kb = set(ca), set(cb)
    if ka == kb:
        return None
    if kb > ka:
        added = "; ".join(_cond_text(cb[k]) for k in sorted(kb - ka))
        return ShiftOperator.REFINE, f"added {added}"
    if kb < ka:
        removed = "; ".join(_cond_text(ca[k]) for k in sorted(ka - kb))
        return ShiftOperator.RELAX, f"removed {removed}"
    sa = Counter((c.slot, c.op) for c in a.conditions)
    sb = Counter((c.slot, c.op) for c in b.conditions)
    if sa == sb:
        old = {(c.slot, c.op): c for c in a.conditions}
        changes = []
        for c in sorted(b.conditions, key=Condition.key):
            o = old.get((c.slot, c.op))
            if o is not None and o.value != c.value:
                changes.append(
                    f"{c.slot}{c.op} {canonical_json(o.value)} -> {canonical_json(c.value)}"
                )
        return ShiftOperator.SUBSTITUTE, "changed " + "; ".join(changes)
    return None


def transition_edges(nodes: tuple[Intent, ...] | list[Intent]) -> list[Edge]:
    """The runtime transition graph: every classifiable ordered pair among ``nodes``.

    ``gt_moved`` is recomputed per pair from the stored ground truths, so sibling→sibling
    moves stay executable labels.

    Args:
        nodes: Root followed by children (each with its executed ground truth).

    Returns:
        Edges sorted by (src, dst).
    """
    out: list[Edge] = []
    for a in nodes:
        for b in nodes:
            rel = classify(a, b)
            if rel is None:
                continue
            ga, gb = a.ground_truth, b.ground_truth
            moved = ga is None or gb is None or ga.hash != gb.hash
            out.append(
                Edge(
                    src=a.intent_id, dst=b.intent_id, operator=rel[0], delta=rel[1], gt_moved=moved
                )
            )
    return sorted(out, key=lambda e: (e.src, e.dst))
