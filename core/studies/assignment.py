"""Balanced assignment of study items to annotators with overlap k (a pure function).

Each item goes to ``k`` distinct annotators (fewer only when fewer are eligible). Items are
visited in a seeded shuffled order; each slot goes to the eligible annotator with (1) the
smallest load so far, then (2) the fewest items already shared with the annotators chosen for
this item (so every pair of annotators overlaps on a similar number of items, which Cohen's κ
per pair needs), then (3) a seeded random tie-break. With nobody excluded this keeps every
annotator's load within one item of every other's.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from core.errors import ConfigError

Item = TypeVar("Item", bound=Hashable)


def plan_assignments(
    items: Sequence[Item],
    annotators: Sequence[str],
    k: int,
    rng: random.Random,
    *,
    exclude: Mapping[Item, frozenset[str]] | None = None,
    existing_load: Mapping[str, int] | None = None,
) -> dict[str, list[Item]]:
    """Distribute ``items`` over ``annotators`` so each item is seen by ``k`` of them.

    Args:
        items: The items (any hashable; order is the fallback order).
        annotators: Annotator ids (distinct).
        k: Overlap: annotators per item (``1 <= k``; capped at the number of eligible
            annotators for that item).
        rng: The seeded random source (shuffles item order, breaks ties).
        exclude: Per item, annotators who must not get it (e.g. who played that episode).
        existing_load: Items each annotator already holds (when extending a study).

    Returns:
        Per annotator, the items assigned, in queue order (every annotator is a key).

    Raises:
        ConfigError: When ``k`` < 1, there are no annotators, or ids repeat.
    """
    if k < 1:
        raise ConfigError(f"overlap k must be >= 1, got {k}", file="study", field="overlap")
    if not annotators:
        raise ConfigError("a study needs at least one annotator", file="study", field="annotators")
    if len(set(annotators)) != len(annotators):
        raise ConfigError("annotator ids repeat", file="study", field="annotators")
    exclude = exclude or {}
    load = {a: int((existing_load or {}).get(a, 0)) for a in annotators}
    shared: dict[tuple[str, str], int] = {}
    order = list(items)
    rng.shuffle(order)
    plan: dict[str, list[Item]] = {a: [] for a in annotators}
    for item in order:
        banned = exclude.get(item, frozenset())
        eligible = [a for a in annotators if a not in banned]
        chosen: list[str] = []
        for _ in range(min(k, len(eligible))):
            keys = {
                a: (
                    load[a],
                    sum(shared.get((min(a, c), max(a, c)), 0) for c in chosen),
                    rng.random(),
                )
                for a in eligible
                if a not in chosen
            }
            best = min(keys, key=keys.__getitem__)
            chosen.append(best)
            load[best] += 1
        for i, a in enumerate(chosen):
            plan[a].append(item)
            for b in chosen[i + 1 :]:
                pair = (min(a, b), max(a, b))
                shared[pair] = shared.get(pair, 0) + 1
    return plan
