"""Extractors: independent readings of how a request misrepresents the true intent.

An extractor sees the request text, the true intent and the host's vocabulary (never the plan or
the mask) and answers a per-type questionnaire with an :class:`Extraction`: which diff classes
it finds (substituted, withheld, marked, …), on which slots, and anything else that changed.
The :class:`RuleExtractor` is offline (string evidence + the cue lexicon); LLM extractors live in
:mod:`core.faults.llm`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import Field

from core.faults.lexicon import LEXICON, Lexicon
from core.faults.plan import own_atoms
from core.faults.taxonomy import DIFF_CLASS, DIFF_CLASSES, FAMILY_OF_CLASS
from core.faults.writer import request_lead
from core.graph.hosts.base import HostAdapter, contains_atom, tokens
from core.model.base import Strict
from core.model.intent import Condition, ConditionValue, Intent
from core.model.sample import FAMILY_OF, FaultFamily, FaultType


class Extraction(Strict):
    """One extractor's answer to the questionnaire of a fault type."""

    extractor: str = Field(description="Extractor spec ('rule' or a model).")
    parsed: bool = Field(default=True, description="False when the reply was unusable.")
    family: FaultFamily | None = Field(default=None, description="Family of the main flaw.")
    target_slot: str | None = Field(default=None, description="Slot of the main flaw.")
    classes: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Diff class → slots ('*' for whole-text classes)."
    )
    other_changes: tuple[str, ...] = Field(default=(), description="Unplanned differences.")
    plausible: bool = Field(default=True, description="Both readings plausible (ambiguity).")
    detail: str = Field(default="", description="Free-text note.")

    def nonempty(self) -> dict[str, tuple[str, ...]]:
        """Classes with at least one entry."""
        return {k: v for k, v in self.classes.items() if v}


@dataclass
class ExtractionContext:
    """Host vocabulary an extractor may consult (no plan, no mask, no answers)."""

    alternatives: dict[str, list[ConditionValue]]
    extra_pool: list[tuple[Condition, ...]]


class Extractor(Protocol):
    """Anything that reads a request against the true intent."""

    name: str

    def extract(
        self,
        text: str,
        adapter: HostAdapter,
        intent: Intent,
        questionnaire: Sequence[FaultType],
        ctx: ExtractionContext,
    ) -> Extraction:
        """Answer the questionnaire of ``questionnaire`` types about ``text``."""
        ...


def _has_any(text: str, phrases: Sequence[str]) -> bool:
    return any(contains_atom(text, p) for p in phrases)


def _pos(text: str, atom: str) -> int:
    m = re.search(r"(?<![a-z0-9])" + re.escape(atom.lower()) + r"(?![a-z0-9])", text.lower())
    return m.start() if m else -1


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


class RuleExtractor:
    """Offline extractor: decides each slot's treatment from string evidence and cue words."""

    def __init__(self, name: str = "rule", lexicon: Lexicon = LEXICON) -> None:
        self.name = name
        self.lex = lexicon

    def extract(
        self,
        text: str,
        adapter: HostAdapter,
        intent: Intent,
        questionnaire: Sequence[FaultType],
        ctx: ExtractionContext,
    ) -> Extraction:
        """Read ``text`` slot by slot (see module docstring)."""
        cues = self.lex.cues
        classes: dict[str, list[str]] = {k: [] for k in DIFF_CLASSES}
        other: list[str] = []
        low = text.lower()
        used_alt_atoms: set[str] = set()
        presup_text = " ".join(s for s in _sentences(low) if _has_any(s, cues.presupposition_cues))
        presup = bool(presup_text)
        companion_at = min(
            [p for p in (_pos(low, c) for c in cues.companion_cues) if p >= 0], default=-1
        )
        reqs = sorted({r for c in intent.conditions if (r := adapter.request_of(c.slot))})
        plain_reqs = [r for r in reqs if not r.startswith("also")]
        last_lead_at = low.rfind(request_lead(plain_reqs[-1])) if len(plain_reqs) >= 2 else -1
        for c in intent.conditions:
            own = own_atoms(adapter, intent, c.slot)
            if not own:
                continue
            present = all(contains_atom(low, a) for a in own)
            doubted = presup and all(contains_atom(presup_text, a) for a in own)
            scope = presup_text if doubted else low
            alt_hit = None
            for v in ctx.alternatives.get(c.slot, []) if (doubted or not present) else []:
                alt_own = [
                    a
                    for a in adapter.atoms(c.model_copy(update={"value": v}))
                    if a.lower() not in {x.lower() for x in adapter.atoms(c)}
                ]
                if alt_own and all(contains_atom(scope, a) for a in alt_own):
                    alt_hit = v
                    used_alt_atoms.update(a.lower() for a in alt_own)
                    break
            label = adapter.slot_label(c)
            if present:
                first = min(_pos(low, a) for a in own)
                if doubted and alt_hit is not None:
                    classes["presupposed"].append(c.slot)
                elif adapter.host_class != "service" and companion_at >= 0 and first > companion_at:
                    classes["ambiguous"].append(c.slot)
                elif (
                    last_lead_at >= 0
                    and adapter.request_of(c.slot) != plain_reqs[-1]
                    and not (adapter.request_of(c.slot) or "").startswith("also")
                    and first > last_lead_at
                ):
                    classes["ambiguous"].append(c.slot)
                continue
            if alt_hit is not None:
                classes["substituted"].append(c.slot)
                continue
            true_toks = {t for a in adapter.atoms(c) for t in tokens(a)}
            lexical = [t for t in true_toks if contains_atom(low, f"the {t} one")]
            marker = _has_any(low, cues.vague_markers + cues.deictic_markers)
            if lexical:
                classes["ambiguous"].append(c.slot)
            elif marker and contains_atom(low, label):
                classes["marked"].append(c.slot)
            else:
                classes["withheld"].append(c.slot)
        # capability: a named tool the desk lacks, or the wrong one
        tools = set(adapter.tool_names())
        noun = "|".join(re.escape(n) for n in cues.capability_nouns)
        for m in re.finditer(rf"(?:your|the)\s+([a-z][a-z _]{{1,40}}?)\s+(?:{noun})\b", low):
            name = m.group(1).strip().replace(" ", "_")
            after = low[m.end() :]
            hit = None
            for r in plain_reqs:
                p = _pos(after, request_lead(r))
                if p < 0:
                    continue
                # requests sharing a lead are told apart by where their own values appear
                spots = [
                    q
                    for c2 in intent.conditions
                    if adapter.request_of(c2.slot) == r
                    for a in own_atoms(adapter, intent, c2.slot)
                    if (q := _pos(after, a)) >= p
                ]
                rank = (p, min(spots) if spots else 10**9)
                if hit is None or rank < hit[0]:
                    hit = (rank, r)
            own_tool = hit[1].split(":", 1)[1] if hit else None
            if name not in tools or (own_tool is not None and name != own_tool):
                slots = sorted(
                    c.slot
                    for c in intent.conditions
                    if hit and adapter.request_of(c.slot) == hit[1]
                )
                classes["capability"].append(slots[0] if slots else "*")
        # extras: a filterable property the user does not hold
        true_atoms = {a.lower() for c in intent.conditions for a in adapter.atoms(c)}
        for bundle in ctx.extra_pool:
            atoms = [a.lower() for e in bundle for a in adapter.atoms(e)]
            atoms = [a for a in atoms if a not in true_atoms]
            if atoms and all(contains_atom(low, a) for a in atoms):
                if not set(atoms) <= used_alt_atoms:
                    classes["extra"].append(bundle[0].slot)
        # noise: a long run of sentences unrelated to the request
        labels = [adapter.slot_label(c) for c in intent.conditions]
        run, best = 0, 0
        for s in _sentences(text):
            related = (
                any(contains_atom(s, a) for a in true_atoms)
                or _has_any(s, cues.request_cues)
                or any(contains_atom(s, lb) for lb in labels)
            )
            run = 0 if related else run + len(s.split())
            best = max(best, run)
        if best >= 25:
            classes["noise"].append("*")
        if not _has_any(low, cues.request_cues):
            classes["oblique"].append("*")
        if len(set(classes["extra"])) > 1:
            other.append("several extra details")
        result = {k: tuple(dict.fromkeys(v)) for k, v in classes.items()}
        wanted: list[str] = [DIFF_CLASS[q] for q in questionnaire]
        main: str | None = next((k for k in wanted if result.get(k)), None) or next(
            (k for k, v in result.items() if v), None
        )
        family = FAMILY_OF_CLASS[main] if main else None  # type: ignore[index]
        target = None
        if main and result[main] and result[main][0] != "*":
            target = result[main][0]
        return Extraction(
            extractor=self.name,
            family=family,
            target_slot=target,
            classes=result,
            other_changes=tuple(other),
        )


def expected_family(fault: FaultType) -> FaultFamily:
    """Family an extraction must report for ``fault``."""
    return FAMILY_OF[fault]
