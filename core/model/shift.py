"""The four shift operators: how one intent relates to another (the one rule of the project).

Graph construction (:mod:`core.graph.build`) labels root→child edges with it and the runtime
(:meth:`core.model.intent.IntentGraph.transitions`) derives every other move with it, so a
stored edge and a derived one can never disagree.

Relation of B to A:

* different benchmark or environment → no edge;
* different base → **pivot** (delta ``pivot_to: <B's base>``);
* otherwise the conditions compare as *sets* of (slot, op, value), values by kind: numbers as
  numbers (``40 == 40.0``; a bool is not a number), strings as strings (``"40"`` is not 40);
* equal sets → no edge (nothing really differs);
* B ⊋ A → **refine** (``added slot<op>value; …``); B ⊊ A → **relax** (``removed …``);
* the same (slot, op) pairs with some value changed → **substitute**
  (``changed slot<op> old -> new; …``);
* anything else (a change *and* an addition, an operator change) → no edge.

Hence ``refine(A, B) ⇔ relax(B, A)``, while substitute, pivot and "no edge" are symmetric.

The pure functions here read only ``benchmark``, ``env_id``, ``base`` and ``conditions``; the
intent types are imported for annotations only (this module sits below ``intent``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

    from core.model.intent import Condition, ConditionValue, Intent


class ShiftOperator(StrEnum):
    """How a destination intent relates to its source."""

    REFINE = "refine"
    RELAX = "relax"
    SUBSTITUTE = "substitute"
    PIVOT = "pivot"


OPERATOR_ORDER: tuple[ShiftOperator, ...] = (
    ShiftOperator.REFINE,
    ShiftOperator.RELAX,
    ShiftOperator.SUBSTITUTE,
    ShiftOperator.PIVOT,
)
"""Canonical operator order (ranking tie-break and report order)."""

SHIFT_GLOSSARY: dict[ShiftOperator, tuple[str, str]] = {
    ShiftOperator.REFINE: (
        "The customer adds a requirement and keeps the rest.",
        "“…and it has to be waterproof, too.”",
    ),
    ShiftOperator.RELAX: (
        "The customer drops a requirement they had.",
        "“Actually, the colour doesn't matter any more.”",
    ),
    ShiftOperator.SUBSTITUTE: (
        "The customer keeps the same kind of requirements but changes a value.",
        "“Make it the large, not the medium.”",
    ),
    ShiftOperator.PIVOT: (
        "The customer switches to a different goal altogether.",
        "“Forget the exchange — I'd rather just cancel the order.”",
    ),
}
"""Each operator in plain words with a short example: (description, example)."""


class Shift(NamedTuple):
    """The classified move from one intent to another."""

    operator: ShiftOperator
    delta: str


ValueKey = tuple[int, object]
CondKey = tuple[str, str, ValueKey]


def value_key(value: ConditionValue) -> ValueKey:
    """Return the comparison key of a condition value (numbers compare as numbers).

    >>> value_key(40) == value_key(40.0), value_key(True) == value_key(1), value_key("40")
    (True, False, (2, '40'))
    """
    if isinstance(value, bool):
        return (0, value)
    if isinstance(value, float):
        if math.isnan(value):
            return (1, "nan")
        if value.is_integer():
            return (1, int(value))
        return (1, value)
    if isinstance(value, int):
        return (1, value)
    return (2, value)


def condition_key(c: Condition) -> CondKey:
    """Return the identity of a condition for shift classification."""
    return (c.slot, c.op, value_key(c.value))


def render_value(value: ConditionValue) -> str:
    """Return the display text of a value in a delta (JSON; integral floats without ``.0``).

    >>> render_value(40.0), render_value(2.5), render_value("black"), render_value(True)
    ('40', '2.5', '"black"', 'true')
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, ensure_ascii=False)


def _conditions(intent: Intent) -> dict[CondKey, Condition]:
    return {condition_key(c): c for c in intent.conditions}


def _listing(conds: Iterable[Condition]) -> str:
    items = sorted((c.slot, c.op, render_value(c.value)) for c in conds)
    return "; ".join(f"{slot}{op}{text}" for slot, op, text in items)


def _changes(old: dict[CondKey, Condition], new: dict[CondKey, Condition]) -> str:
    """Per (slot, op) whose values differ: ``slot<op> old -> new`` (several values comma-joined)."""
    before: dict[tuple[str, str], list[str]] = {}
    after: dict[tuple[str, str], list[str]] = {}
    for k in old.keys() - new.keys():
        before.setdefault(k[:2], []).append(render_value(old[k].value))
    for k in new.keys() - old.keys():
        after.setdefault(k[:2], []).append(render_value(new[k].value))
    parts = [
        f"{slot}{op} {', '.join(sorted(before[(slot, op)]))} -> "
        f"{', '.join(sorted(after[(slot, op)]))}"
        for slot, op in sorted(before)
    ]
    return "changed " + "; ".join(parts)


def classify_shift(a: Intent, b: Intent) -> Shift | None:
    """Return the shift operator taking ``a`` to ``b`` and its delta, or None for no edge.

    Args:
        a: Source intent.
        b: Destination intent.

    Returns:
        ``Shift(operator, delta)``; None when nothing really differs, the two live in different
        benchmarks or environments, or they differ in a way no single operator expresses.
    """
    if a.benchmark != b.benchmark or a.env_id != b.env_id:
        return None
    if a.base != b.base:
        return Shift(ShiftOperator.PIVOT, f"pivot_to: {b.base}")
    ca, cb = _conditions(a), _conditions(b)
    ka, kb = ca.keys(), cb.keys()
    if ka == kb:
        return None
    if kb > ka:
        return Shift(ShiftOperator.REFINE, "added " + _listing(cb[k] for k in kb - ka))
    if kb < ka:
        return Shift(ShiftOperator.RELAX, "removed " + _listing(ca[k] for k in ka - kb))
    if Counter(k[:2] for k in ka) == Counter(k[:2] for k in kb):
        return Shift(ShiftOperator.SUBSTITUTE, _changes(ca, cb))
    return None


def delta_slots(a: Intent, b: Intent) -> list[str]:
    """Return the slots whose conditions differ between ``a`` and ``b`` (sorted, distinct).

    Values compare as in :func:`classify_shift` (a price of 40 and of 40.0 is no difference).
    """
    ka = {condition_key(c) for c in a.conditions}
    kb = {condition_key(c) for c in b.conditions}
    return sorted({k[0] for k in ka ^ kb})
