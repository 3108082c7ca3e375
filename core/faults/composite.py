"""Composite requests (k = 2 or 4 faults): draw rules, redraws and per-component slot assignment.

Draw uniformly without replacement from the types applicable to the root; when fewer types than
k apply, the repeatable types (factual error, irrelevant / insufficient information) may appear
up to three times. A draw is redrawn when it breaks a rule:

1. detail-consuming faults (those acting on a true slot) ≤ number of conditions;
2. at most one unbound-expression fault (lexical / syntactic / referential / vague);
3. false presupposition and irrelevant information never together;
4. (k ≥ 3, shop host) indirect intent never with false presupposition or irrelevant information;
5. (k ≥ 3, shop host) factual error never with false presupposition.

Each consuming fault then gets its own slot, most-constrained type first.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from core.faults.plan import FaultPlan, candidate_plans
from core.faults.taxonomy import REPEATABLE, TARGETED, UNBOUND
from core.graph.hosts.base import HostAdapter
from core.model.intent import GroundTruth, Intent
from core.model.sample import FaultType

MAX_REDRAWS = 40
MAX_REPEATS = 3


def draw_ok(draw: Sequence[FaultType], n_conditions: int, host_class: str) -> str | None:
    """Check the redraw rules; return the broken rule or None."""
    c = Counter(draw)
    consuming = sum(v for t, v in c.items() if t in TARGETED)
    if consuming > n_conditions:
        return "1:too many detail-consuming faults"
    if sum(v for t, v in c.items() if t in UNBOUND) > 1:
        return "2:more than one unbound fault"
    fp, irr = FaultType.FALSE_PRESUPPOSITION, FaultType.IRRELEVANT_INFORMATION
    if c[fp] and c[irr]:
        return "3:false presupposition with irrelevant information"
    if len(draw) >= 3 and host_class != "service":
        if c[FaultType.INDIRECT_INTENT] and (c[fp] or c[irr]):
            return "4:indirect intent with presupposition/extras"
        if c[FaultType.FACTUAL_ERROR] and c[fp]:
            return "5:factual error with false presupposition"
    for t, v in c.items():
        if v > 1 and (t not in REPEATABLE or v > MAX_REPEATS):
            return f"repeat of {t.value}"
    return None


def draw_types(
    pool: Sequence[FaultType], k: int, rng: random.Random, n_conditions: int, host_class: str
) -> tuple[list[FaultType] | None, list[str]]:
    """Draw k types under the redraw rules.

    Args:
        pool: Applicable types.
        k: Faults per request.
        rng: Random stream.
        n_conditions: Conditions of the root.
        host_class: Host phrasing class (rules 4-5 apply outside service hosts).

    Returns:
        (sorted draw or None, broken rules of rejected draws).
    """
    urn = list(pool)
    if len(urn) < k:
        urn += [t for t in pool if t in REPEATABLE for _ in range(MAX_REPEATS - 1)]
    urn.sort(key=lambda t: t.value)
    broken: list[str] = []
    if len(urn) < k:
        return None, ["pool smaller than k"]
    for _ in range(MAX_REDRAWS):
        draw = rng.sample(urn, k)
        why = draw_ok(draw, n_conditions, host_class)
        if why is None:
            return sorted(draw, key=lambda t: t.value), broken
        broken.append(why)
    return None, broken


def assign_slots(
    adapter: HostAdapter,
    intent: Intent,
    gt: GroundTruth,
    draw: Sequence[FaultType],
    rng: random.Random,
    options: int = 3,
) -> list[tuple[FaultPlan, ...]]:
    """Assign each component its own slot (most-constrained first); up to ``options`` variants.

    Returns:
        Alternative plan tuples (each tuple in the order of ``draw``); empty when impossible.
    """
    cands = {
        t: candidate_plans(
            adapter, intent, gt, t, random.Random(rng.random()), waive_min_retained=True
        )
        for t in sorted(set(draw), key=lambda t: t.value)
    }
    order = sorted(range(len(draw)), key=lambda i: (len(cands[draw[i]]), draw[i].value, i))
    out: list[tuple[FaultPlan, ...]] = []
    for v in range(options):
        used: set[str] = set()
        used_extra: set[str] = set()
        chosen: dict[int, FaultPlan] = {}
        for i in order:
            opts = cands[draw[i]]
            if not opts:
                break
            pick = None
            for j in range(len(opts)):
                p = opts[(j + v) % len(opts)]
                tgt_slots = set(p.drop_slots) | ({p.target} if p.target else set())
                if tgt_slots & used:
                    continue
                ek = ",".join(e.slot for e in p.extra)
                if p.extra and ek in used_extra:
                    continue
                pick = p
                break
            if pick is None:
                break
            used |= set(pick.drop_slots) | ({pick.target} if pick.target else set())
            if pick.extra:
                used_extra.add(",".join(e.slot for e in pick.extra))
            chosen[i] = pick
        if len(chosen) == len(draw):
            t = tuple(chosen[i] for i in range(len(draw)))
            if t not in out:
                out.append(t)
    return out
