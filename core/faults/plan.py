"""Fault plans: which slot a fault acts on, with what value, and what a literal reader gets.

A :class:`FaultPlan` is decided mechanically (seeded) before any text is written; writers only
phrase it, extractors must rediscover it, and executable admission runs its literal readings.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from pydantic import Field
from rapidfuzz.fuzz import ratio

from core.faults.cue_lexicon import LEXICON
from core.faults.surface import (
    SURFACES,
    capabilities_of,
    companions_of,
    deictic_of,
    premise_ok,
    vague_of,
)
from core.faults.taxonomy import MASK_KIND
from core.graph.hosts.base import HostAdapter, tokens
from core.model.base import Strict, canonical_json
from core.model.intent import Condition, ConditionValue, GroundTruth, Intent
from core.model.sample import FaultType, MaskEntry, MaskKind

_STOP = frozenset(
    "the a an and or of for with to in on at by from my your one size pack set x inch".split()
)


class FaultPlan(Strict):
    """One fault component, decided before writing."""

    fault: FaultType = Field(description="The fault type realised.")
    target: str | None = Field(default=None, description="True slot it acts on, if any.")
    stated_value: ConditionValue | None = Field(
        default=None, description="Wrong value (FE), fallback (FP) or second sense (lexical)."
    )
    surface: str = Field(default="", description="Marker, shared token, tool or companion.")
    sub_kind: str = Field(default="", description="vague / deictic / polysemous / attachment …")
    extra: tuple[Condition, ...] = Field(default=(), description="Extra conditions (irrelevant).")
    drop_slots: tuple[str, ...] = Field(
        default=(), description="Slots a literal reader loses (capability: the whole request)."
    )

    @property
    def mask_kind(self) -> MaskKind:
        """Mask kind of this component."""
        return MASK_KIND[self.fault]


def own_atoms(adapter: HostAdapter, intent: Intent, slot: str) -> list[str]:
    """Atoms of ``slot``'s value that no other condition of ``intent`` shares."""
    cur = intent.slot_map()[slot]
    others: set[str] = set()
    for c in intent.conditions:
        if c.slot != slot:
            others.update(a.lower() for a in adapter.atoms(c))
    return [a for a in adapter.atoms(cur) if a.lower() not in others]


def _alt_ok(adapter: HostAdapter, intent: Intent, slot: str, value: ConditionValue) -> bool:
    """An alternative must not share visible atoms with the truth or other conditions."""
    cur = intent.slot_map()[slot]
    taken = {a.lower() for c in intent.conditions for a in adapter.atoms(c)}
    alt = [a.lower() for a in adapter.atoms(cur.model_copy(update={"value": value}))]
    if not alt or value == cur.value:
        return False
    true_atoms = {a.lower() for a in adapter.atoms(cur)}
    distinct = [a for a in alt if a not in taken]
    return bool(distinct) and set(alt) != true_atoms


def _near_misses(
    adapter: HostAdapter, intent: Intent, slot: str, limit: int = 3
) -> list[ConditionValue]:
    cur = intent.slot_map()[slot]
    cur_text = " ".join(adapter.atoms(cur))
    alts = [
        v
        for v in adapter.domain(intent, slot)
        if _alt_ok(adapter, intent, slot, v) and not foreign(adapter, intent, v)
    ]
    alts.sort(
        key=lambda v: (
            -ratio(cur_text, " ".join(adapter.atoms(cur.model_copy(update={"value": v})))),
            canonical_json(v),
        )
    )
    return alts[:limit]


def foreign(adapter: HostAdapter, intent: Intent, value: ConditionValue) -> bool:
    """Whether ``value`` names another customer's entity (an order, booking or card).

    Premise faults must be false about *this* customer's world (their own other order, a
    flight they do not hold), never another customer's data.
    """
    index = adapter.customer_index()
    if not index:
        return False
    who = adapter.customer(intent)
    decoded = adapter.decoded(value)
    ids = [decoded] if isinstance(decoded, str) else []
    if isinstance(decoded, list):
        ids = [x for x in decoded if isinstance(x, str)]
    return any(index.get(x) not in (None, who) for x in ids)


def family_values(adapter: HostAdapter, intent: Intent, slot: str) -> list[ConditionValue]:
    """The slot's domain plus every value its slot family takes in any seed of the world."""
    fam = adapter.slot_family(slot)
    cur = intent.slot_map()[slot].value
    seen = {canonical_json(v): v for v in adapter.domain(intent, slot)}
    for sd in adapter.seeds():
        for c in sd.conditions:
            if adapter.slot_family(c.slot) == fam and c.value != cur:
                seen.setdefault(canonical_json(c.value), c.value)
    return [seen[k] for k in sorted(seen)]


def two_way_plans(
    adapter: HostAdapter, intent: Intent, slot: str, fault: FaultType
) -> list[FaultPlan]:
    """Lexical-ambiguity plans from the two-way word list (both senses are slot values)."""
    cur = intent.slot_map()[slot]
    true_toks = {t for a in adapter.atoms(cur) for t in tokens(a)}
    out: list[FaultPlan] = []
    for tw in SURFACES.data.two_way:
        pairs = [(tw.senses, tw.raw), (tw.senses[::-1], tw.raw[::-1] if tw.raw else None)]
        for (a, b), raw in pairs:
            if true_toks != set(a):
                continue
            values = family_values(adapter, intent, slot)
            if raw is not None and isinstance(cur.value, str):
                pat = r"(?<![a-z0-9_])" + re.escape(raw[0]) + r"(?![a-z0-9_])"
                swapped = re.sub(pat, raw[1], cur.value)
                if swapped != cur.value:
                    values.append(swapped)
            for v in values:
                atoms = adapter.atoms(cur.model_copy(update={"value": v}))
                alt = {t for x in atoms for t in x.split()}
                if alt == set(b) and not foreign(adapter, intent, v):
                    out.append(
                        FaultPlan(
                            fault=fault,
                            target=slot,
                            stated_value=v,
                            surface=tw.word,
                            sub_kind="two_way",
                        )
                    )
                    break
    return out


def _targetable(adapter: HostAdapter, intent: Intent, *, markable: bool = False) -> list[str]:
    out = []
    for c in intent.conditions:
        if markable and adapter.name_reveals_value(c.slot):
            continue
        if own_atoms(adapter, intent, c.slot):
            out.append(c.slot)
    return out


def candidate_plans(
    adapter: HostAdapter,
    intent: Intent,
    gt: GroundTruth,
    fault: FaultType,
    rng: random.Random,
    *,
    exclude: Sequence[str] = (),
    waive_min_retained: bool = False,
) -> list[FaultPlan]:
    """All plans realising ``fault`` on ``intent`` (seeded order; empty = not applicable).

    Args:
        adapter: Host hooks.
        intent: The true (root) intent.
        gt: Its executed answer.
        fault: Fault type.
        rng: Random stream for ordering and marker choice.
        exclude: Slots already used by other components (composites).
        waive_min_retained: Composites may corrupt every condition.

    Returns:
        Plans in the order attempts should try them.
    """
    conds = intent.conditions
    n = len(conds)
    enough = waive_min_retained or n >= 2
    plans: list[FaultPlan] = []
    lex = LEXICON

    def slots(markable: bool = False) -> list[str]:
        return [s for s in _targetable(adapter, intent, markable=markable) if s not in exclude]

    ft = FaultType
    if fault in (ft.CONTEXTUAL_IRRELEVANCE, ft.INDIRECT_INTENT):
        plans.append(FaultPlan(fault=fault))
    elif fault is ft.FACTUAL_ERROR:
        for s in slots():
            if s == "price_upper":
                continue
            for v in _near_misses(adapter, intent, s):
                plans.append(FaultPlan(fault=fault, target=s, stated_value=v, sub_kind="near_miss"))
    elif fault is ft.FALSE_PRESUPPOSITION:
        for s in slots():
            if not premise_ok(adapter, intent.slot_map()[s]):
                continue
            for v in _near_misses(adapter, intent, s, limit=2):
                plans.append(FaultPlan(fault=fault, target=s, stated_value=v, sub_kind="fallback"))
    elif fault is ft.TOOL_CAPABILITY_MISMATCH:
        caps = list(capabilities_of(adapter.benchmark))
        if adapter.host_class == "shop":
            # the shop lacks the capability a condition is to be checked with (a filter,
            # a comparison, a size guide): a literal reader loses that condition
            for s in slots():
                if s == "price_upper":
                    continue
                for cap in rng.sample(caps, min(2, len(caps))):
                    plans.append(
                        FaultPlan(
                            fault=fault,
                            target=s,
                            surface=cap,
                            sub_kind="missing_capability",
                            drop_slots=(s,),
                        )
                    )
        elif adapter.supports_capability_fault():
            reqs: dict[str, list[str]] = {}
            for c in conds:
                r = adapter.request_of(c.slot)
                if r is not None and not c.slot.startswith("also:"):
                    reqs.setdefault(r, []).append(c.slot)
            for _r, rslots in sorted(reqs.items()):
                if rslots[0] in exclude:
                    continue
                for cap in rng.sample(caps, min(3, len(caps))):
                    plans.append(
                        FaultPlan(
                            fault=fault,
                            target=sorted(rslots)[0],
                            surface=cap,
                            sub_kind="missing_capability",
                            drop_slots=tuple(sorted(rslots)),
                        )
                    )
    elif fault is ft.INSUFFICIENT_INFORMATION:
        if enough:
            plans += [FaultPlan(fault=fault, target=s, sub_kind="omitted") for s in slots()]
    elif fault is ft.IRRELEVANT_INFORMATION:
        taken = {a.lower() for c in conds for a in adapter.atoms(c)}
        for bundle in adapter.extra_candidates(intent, gt):
            atoms = [a.lower() for c in bundle for a in adapter.atoms(c)]
            if atoms and not any(a in taken for a in atoms):
                plans.append(FaultPlan(fault=fault, extra=tuple(bundle), sub_kind="extra"))
    elif fault is ft.REFERENTIAL_AMBIGUITY:
        if enough:
            for s in slots(markable=True):
                cond = intent.slot_map()[s]
                marker = (
                    deictic_of(adapter, cond, rng.randrange(8))
                    if adapter.host_class == "service"
                    else rng.choice(lex.deictic)
                )
                plans.append(FaultPlan(fault=fault, target=s, surface=marker, sub_kind="deictic"))
    elif fault is ft.VAGUENESS_SUBJECTIVITY:
        if enough:
            for s in slots(markable=True):
                cond = intent.slot_map()[s]
                if adapter.host_class == "service":
                    options = vague_of(adapter, cond)
                    if options:
                        plans.append(
                            FaultPlan(
                                fault=fault, target=s, surface=rng.choice(options), sub_kind="vague"
                            )
                        )
                elif adapter.is_ordered(cond):
                    plans.append(
                        FaultPlan(
                            fault=fault, target=s, surface=rng.choice(lex.vague), sub_kind="vague"
                        )
                    )
    elif fault is ft.LEXICAL_AMBIGUITY:
        if enough:
            for s in slots(markable=True):
                found = two_way_plans(adapter, intent, s, fault)
                if found:
                    plans += found
                    continue
                cur = intent.slot_map()[s]
                others = {
                    t for c in conds if c.slot != s for a in adapter.atoms(c) for t in tokens(a)
                }
                whole = {a.lower() for a in adapter.atoms(cur)}
                whole |= set(tokens(adapter.slot_label(cur)))
                true_toks = [t for a in adapter.atoms(cur) for t in tokens(a) if t not in whole]
                for v in adapter.domain(intent, s):
                    if not _alt_ok(adapter, intent, s, v):
                        continue
                    alt_toks = {
                        t
                        for a in adapter.atoms(cur.model_copy(update={"value": v}))
                        for t in tokens(a)
                    }
                    shared = [
                        t
                        for t in true_toks
                        if t in alt_toks
                        and t not in others
                        and t not in _STOP
                        and len(t) >= 3
                        and not t.isdigit()
                    ]
                    if shared and len(set(true_toks)) > 1:
                        plans.append(
                            FaultPlan(
                                fault=fault,
                                target=s,
                                stated_value=v,
                                surface=shared[0],
                                sub_kind="polysemous",
                            )
                        )
                        break
    elif fault is ft.SYNTACTIC_AMBIGUITY:
        if enough:
            if adapter.host_class == "service":
                reqs_order: list[str] = []
                for c in conds:
                    r = adapter.request_of(c.slot)
                    if r is not None and r not in reqs_order:
                        reqs_order.append(r)
                if len(reqs_order) >= 2:
                    last = sorted(reqs_order)[-1]
                    for s in slots(markable=True):
                        if adapter.request_of(s) != last:
                            plans.append(FaultPlan(fault=fault, target=s, sub_kind="attachment"))
                else:
                    # one request: a trailing detail that could belong to someone else's
                    for s in slots(markable=True):
                        plans.append(
                            FaultPlan(
                                fault=fault,
                                target=s,
                                surface=rng.choice(companions_of(adapter.benchmark)),
                                sub_kind="attachment",
                            )
                        )
            else:
                for s in slots(markable=True):
                    plans.append(
                        FaultPlan(
                            fault=fault,
                            target=s,
                            surface=rng.choice(lex.companions(adapter.host_class)),
                            sub_kind="attachment",
                        )
                    )
    rng.shuffle(plans)
    # keep one plan per target first so attempts spread over slots
    firsts: list[FaultPlan] = []
    rest: list[FaultPlan] = []
    seen: set[str | None] = set()
    for p in plans:
        (rest if p.target in seen and p.target is not None else firsts).append(p)
        seen.add(p.target)
    return firsts + rest


def apply_plan(conditions: Sequence[Condition], plan: FaultPlan, sense: int = 1) -> list[Condition]:
    """Edit a condition list the way a literal reader of ``plan`` would.

    Args:
        conditions: Current conditions.
        plan: The fault component.
        sense: For ambiguous plans, 0 = the true sense, 1 = the other sense.

    Returns:
        The literal conditions.
    """
    kind = plan.mask_kind
    out = list(conditions)
    if kind in ("substituted", "presupposed"):
        out = [
            c.model_copy(update={"value": plan.stated_value})
            if c.slot == plan.target and plan.stated_value is not None
            else c
            for c in out
        ]
    elif kind in ("withheld", "marked"):
        out = [c for c in out if c.slot != plan.target]
    elif kind == "capability":
        out = [c for c in out if c.slot not in set(plan.drop_slots)]
    elif kind == "ambiguous" and sense == 1:
        if plan.stated_value is not None:
            out = [
                c.model_copy(update={"value": plan.stated_value}) if c.slot == plan.target else c
                for c in out
            ]
        else:
            out = [c for c in out if c.slot != plan.target]
    elif kind == "extra":
        out = out + list(plan.extra)
    return sorted(out, key=Condition.key)


def component_readings(intent: Intent, plan: FaultPlan) -> list[tuple[Condition, ...]]:
    """Literal readings of one component applied to the truth alone."""
    if plan.mask_kind == "ambiguous":
        return [
            tuple(apply_plan(intent.conditions, plan, 0)),
            tuple(apply_plan(intent.conditions, plan, 1)),
        ]
    return [tuple(apply_plan(intent.conditions, plan))]


def combined_readings(intent: Intent, plans: Sequence[FaultPlan]) -> list[tuple[Condition, ...]]:
    """Literal readings of the whole request (all components applied; ambiguity both ways)."""
    senses = [0, 1] if any(p.mask_kind == "ambiguous" for p in plans) else [1]
    out: list[tuple[Condition, ...]] = []
    for sense in senses:
        conds: list[Condition] = list(intent.conditions)
        for p in plans:
            conds = apply_plan(conds, p, sense)
        t = tuple(conds)
        if t not in out:
            out.append(t)
    return out


def mask_for(
    intent: Intent, plans: Sequence[FaultPlan], surfaces: dict[int, str]
) -> tuple[MaskEntry, ...]:
    """Per-slot mask for ``plans`` over ``intent`` (stated entries for untouched slots).

    Args:
        intent: The true intent.
        plans: Fault components.
        surfaces: Component index → the words of the request carrying it.

    Returns:
        Entries sorted by (slot, kind).
    """
    by_target = {p.target: (i, p) for i, p in enumerate(plans) if p.target is not None}
    entries: list[MaskEntry] = []
    for c in intent.conditions:
        hit = by_target.get(c.slot)
        if hit is None:
            entries.append(
                MaskEntry(slot=c.slot, kind="stated", true_value=c.value, stated_value=c.value)
            )
            continue
        i, p = hit
        kind = p.mask_kind
        stated: ConditionValue | None = None
        if kind in ("substituted", "presupposed"):
            stated = p.stated_value
        elif kind == "capability":
            stated = c.value
        entries.append(
            MaskEntry(
                slot=c.slot,
                kind=kind,
                fault=p.fault,
                true_value=c.value,
                stated_value=stated,
                surface=surfaces.get(i, p.surface),
            )
        )
    for i, p in enumerate(plans):
        if p.mask_kind == "extra":
            for e in p.extra:
                entries.append(
                    MaskEntry(
                        slot=e.slot,
                        kind="extra",
                        fault=p.fault,
                        stated_value=e.value,
                        surface=surfaces.get(i, ""),
                    )
                )
        elif p.mask_kind == "noise":
            entries.append(
                MaskEntry(slot="*", kind="noise", fault=p.fault, surface=surfaces.get(i, ""))
            )
    return tuple(sorted(entries, key=lambda e: (e.slot, e.kind, e.fault or "")))


def hidden_slots(mask: Sequence[MaskEntry]) -> tuple[str, ...]:
    """Canonical hidden slots: every true slot not stated truthfully (incl. presupposed)."""
    return tuple(sorted({e.slot for e in mask if e.hidden}))
