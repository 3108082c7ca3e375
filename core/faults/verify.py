"""The three-step verifier.

1. **Extraction agreement** — two independent extractions agree with each other and with the
   plan on the fault family and target slot, and each honours the one-flaw contract (exactly the
   planned diff classes are non-empty, nothing else changed).
2. **String checks** — no internal syntax leaks, a length limit, and per-component evidence in
   the text (substituted value present and true value absent, withheld value absent, …).
3. **Executable admission** — each component's literal reading is compiled and executed; it must
   move / shrink / widen / split / keep the answer as its mask kind says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.faults.cue_lexicon import LEXICON
from core.faults.extract import Extraction
from core.faults.plan import FaultPlan, component_readings, own_atoms
from core.faults.surface import forbidden_terms, leaks
from core.faults.taxonomy import ADMISSION_RULE, DIFF_CLASS, FAMILY_OF_CLASS, TARGETED
from core.graph.hosts.base import HostAdapter, contains_atom
from core.model.intent import GroundTruth, Intent
from core.model.sample import FaultType


@dataclass
class StepResult:
    """Verdict of one verifier step."""

    ok: bool
    reason: str = "ok"
    signature: dict[str, Any] = field(default_factory=dict)


def _expected_classes(plans: Sequence[FaultPlan]) -> dict[str, set[str]]:
    exp: dict[str, set[str]] = {}
    for p in plans:
        k = DIFF_CLASS[p.fault]
        if p.fault in TARGETED and p.target is not None:
            exp.setdefault(k, set()).add(p.target)
        elif k == "extra":
            exp.setdefault(k, set()).add(p.extra[0].slot if p.extra else "*")
        else:
            exp.setdefault(k, set()).add("*")
    return exp


def check_contract(e: Extraction, plans: Sequence[FaultPlan]) -> str | None:
    """One-flaw contract for one extraction; returns a rejection reason or None."""
    if not e.parsed:
        return f"{e.extractor}: unparseable extraction"
    exp = _expected_classes(plans)
    got = {k: set(v) for k, v in e.nonempty().items()}
    if set(got) != set(exp):
        missing = sorted(set(exp) - set(got))
        extra = sorted(set(got) - set(exp))
        return f"{e.extractor}: contract broken (missing {missing}, unplanned {extra})"
    for k, slots in exp.items():
        if "*" in slots:
            continue
        if got[k] != slots:
            return f"{e.extractor}: {k} on {sorted(got[k])}, planned {sorted(slots)}"
    if e.other_changes:
        return f"{e.extractor}: other changes {list(e.other_changes)}"
    return None


def check_extractions(
    plans: Sequence[FaultPlan], first: Extraction, second: Extraction
) -> StepResult:
    """Step 1: both extractions honour the contract and agree on family and target slot."""
    for e in (first, second):
        why = check_contract(e, plans)
        if why is not None:
            return StepResult(False, why)
    if first.family != second.family or first.target_slot != second.target_slot:
        return StepResult(
            False,
            f"extractors disagree ({first.family}/{first.target_slot} vs "
            f"{second.family}/{second.target_slot})",
        )
    if len(plans) == 1:
        fam = FAMILY_OF_CLASS[DIFF_CLASS[plans[0].fault]]
        if first.family != fam:
            return StepResult(False, f"family {first.family} != planned {fam}")
    if any(p.fault in (FaultType.LEXICAL_AMBIGUITY, FaultType.SYNTACTIC_AMBIGUITY) for p in plans):
        if not first.plausible and not second.plausible:
            return StepResult(False, "both extractors deny the ambiguity is plausible")
    return StepResult(True)


_LEAK = re.compile(
    r"\b(?:arg|attr|option|also):|price_upper|[{}\[\]<>]|\bslot\b|\bfault\b|\bmask\b|\bhidden slot"
)


def word_limit(intent: Intent, plans: Sequence[FaultPlan]) -> int:
    """Length limit: 130 words (220 with an off-topic passage), +12 per condition beyond 6."""
    base = 220 if any(p.fault is FaultType.CONTEXTUAL_IRRELEVANCE for p in plans) else 130
    return base + 12 * max(0, len(intent.conditions) - 6)


def check_strings(
    text: str,
    adapter: HostAdapter,
    intent: Intent,
    plans: Sequence[FaultPlan],
    surfaces: dict[int, str],
) -> StepResult:
    """Step 2: string cross-checks of the request text against each component."""
    if not text.strip():
        return StepResult(False, "empty text")
    if _LEAK.search(text):
        return StepResult(False, f"internal syntax leaked: {_LEAK.search(text).group(0)!r}")  # type: ignore[union-attr]
    slots = [c.slot for c in intent.conditions] + [e.slot for p in plans for e in p.extra]
    leaked = leaks(text, forbidden_terms(adapter, slots))
    if leaked is not None:
        return StepResult(False, f"tool name or field id leaked: {leaked!r}")
    n = len(text.split())
    limit = word_limit(intent, plans)
    if n > limit:
        return StepResult(False, f"{n} words > {limit}")
    low = text.lower()
    smap = intent.slot_map()

    def present(atoms: Sequence[str]) -> bool:
        return bool(atoms) and all(contains_atom(low, a) for a in atoms)

    def absent(atoms: Sequence[str]) -> bool:
        return not any(contains_atom(low, a) for a in atoms)

    for i, p in enumerate(plans):
        kind = p.mask_kind
        own = own_atoms(adapter, intent, p.target) if p.target in smap else []
        true_atoms = (
            {a.lower() for a in adapter.atoms(smap[p.target])} if p.target in smap else set()
        )
        stated = (
            [
                a
                for a in adapter.atoms(
                    smap[str(p.target)].model_copy(update={"value": p.stated_value})
                )
                if a.lower() not in true_atoms
            ]
            if p.stated_value is not None
            else []
        )
        surface = surfaces.get(i, "")
        name = p.fault.value
        if kind == "substituted" and not (present(stated) and absent(own)):
            return StepResult(False, f"{name}: wrong value not stated or true value present")
        if kind == "presupposed" and not (
            present(stated) and present(own) and surface and surface.lower() in low
        ):
            return StepResult(False, f"{name}: presupposition, doubted or fallback value missing")
        if kind == "withheld" and not absent(own):
            return StepResult(False, f"{name}: withheld value still present")
        if kind == "marked" and not (absent(own) and p.surface and contains_atom(low, p.surface)):
            return StepResult(False, f"{name}: exact value present or marker missing")
        if kind == "ambiguous":
            if p.sub_kind == "polysemous" and not (absent(own) and contains_atom(low, p.surface)):
                return StepResult(False, f"{name}: ambiguous word missing or exact value present")
            if p.sub_kind == "attachment" and not present(own):
                return StepResult(False, f"{name}: attached value missing")
        if kind == "extra":
            atoms = [a for e in p.extra for a in adapter.atoms(e)]
            if not present(atoms):
                return StepResult(False, f"{name}: extra detail missing")
        if (
            kind == "capability"
            and not contains_atom(low, p.surface.replace("_", " "))
            and not contains_atom(low, p.surface)
        ):
            return StepResult(False, f"{name}: capability not named")
        if p.fault is FaultType.CONTEXTUAL_IRRELEVANCE and not (surface and surface.lower() in low):
            return StepResult(False, f"{name}: off-topic passage missing")
        if p.fault is FaultType.INDIRECT_INTENT and any(
            contains_atom(low, c) for c in LEXICON.cues.request_cues
        ):
            return StepResult(False, f"{name}: a request is stated")
    return StepResult(True)


def rule_holds(rule: str, rels: Sequence[str], set_kind: bool, attachment: bool = False) -> bool:
    """Whether executed relations satisfy an admission rule, judged per fault semantics.

    * ``move`` (factual error, false presupposition, capability mismatch): the literal
      reading is a real, executable request that ends somewhere else — an unexecutable
      reading is a typo, not a premise fault, and is rejected;
    * ``shrink`` (irrelevant information): a strict subset of the answers (set hosts) or an
      executable, different state (service hosts: an extra write happens);
    * ``widen`` (insufficient information, referential ambiguity, vagueness): a strict
      superset (set hosts); on service hosts the reading lacks a detail, so it either cannot
      be carried out without asking (unexecutable) or a default lands elsewhere (different);
    * ``ambiguous``: the true sense reproduces the truth and the other sense is executable and
      different (an attachment reading on a service host that moves a detail to another
      request leaves its own request without it, so unexecutable counts there);
    * ``unchanged`` (indirect intent, contextual irrelevance): the same answer.
    """
    first = rels[0] if rels else "unexecutable"
    if rule == "move":
        return first in ("different", "subset", "superset")
    if rule == "shrink":
        return first == "subset" if set_kind else first == "different"
    if rule == "widen":
        return first == "superset" if set_kind else first in ("different", "unexecutable")
    if rule == "ambiguous":
        other: tuple[str, ...] = ("different", "subset", "superset")
        if attachment and not set_kind:
            other = (*other, "unexecutable")
        return len(rels) == 2 and rels[0] == "equal" and rels[1] in other
    return first == "equal"


def admit_component(
    adapter: HostAdapter, intent: Intent, truth: GroundTruth, plan: FaultPlan
) -> StepResult:
    """Step 3 for one component: execute its literal reading(s) and apply its rule."""
    rule = ADMISSION_RULE[plan.mask_kind]
    readings = component_readings(intent, plan)
    gts = [adapter.execute(adapter.make_intent(intent, r)) for r in readings]
    rels = [adapter.relation(truth, g) for g in gts]
    sig: dict[str, Any] = {
        "rule": rule,
        "true_card": truth.cardinality,
        "readings": len(readings),
        "reading_cards": [adapter.cardinality(g) for g in gts],
        "relations": rels,
    }
    set_kind = adapter.answer_view(truth) is not None
    ok = rule_holds(rule, rels, set_kind, attachment=plan.sub_kind == "attachment")
    sig["ok"] = ok
    sig["verdict"] = "ok" if ok else f"{rule} failed: {','.join(rels)}"
    return StepResult(ok, "ok" if ok else f"{plan.fault.value}: {sig['verdict']}", sig)


def admit(
    adapter: HostAdapter, intent: Intent, truth: GroundTruth, plans: Sequence[FaultPlan]
) -> StepResult:
    """Step 3: executable admission of every component (all must pass)."""
    comps: dict[str, Any] = {}
    for i, p in enumerate(plans):
        r = admit_component(adapter, intent, truth, p)
        comps[f"{i}:{p.fault.value}"] = r.signature
        if not r.ok:
            return StepResult(False, r.reason, {"components": comps})
    return StepResult(True, "ok", {"components": comps})
