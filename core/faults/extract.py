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

from core.faults.cue_lexicon import LEXICON, Lexicon
from core.faults.plan import own_atoms
from core.faults.surface import SURFACES, capabilities_of, label_of, tool_of_request, vague_of
from core.faults.taxonomy import DIFF_CLASS, DIFF_CLASSES, FAMILY_OF_CLASS
from core.graph.hosts.base import HostAdapter, contains_atom, tokens
from core.model.base import Strict
from core.model.intent import Condition, ConditionValue, Intent
from core.model.sample import FaultFamily, FaultType


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


def presupposition_cues(lex: Lexicon = LEXICON) -> tuple[str, ...]:
    """Phrases that deny a value is possible (lexicon plus the surface 'unavailable' list)."""
    extra = [u for v in SURFACES.data.unavailable.values() for u in v]
    return tuple(dict.fromkeys([*lex.cues.presupposition_cues, *extra, "out of stock"]))


def capability_pattern(benchmark: str, lex: Lexicon = LEXICON) -> re.Pattern[str]:
    """``your <name> <noun>``: a capability asked for by name (nouns from lexicon and pool)."""
    nouns = set(lex.cues.capability_nouns) | {c.split()[-1] for c in capabilities_of(benchmark)}
    alt = "|".join(re.escape(n) for n in sorted(nouns, key=len, reverse=True))
    return re.compile(rf"\byour\s+([a-z][a-z -]{{1,40}}?)\s+(?:{alt})(?![a-z0-9-])")


def goal_spots(low: str, request: str) -> list[int]:
    """Positions where any customer wording of ``request``'s operation occurs."""
    goals = SURFACES.data.goals.get(tool_of_request(request)) or ()
    return [m.start() for g in goals for m in re.finditer(re.escape(g.lower()), low)]


def marker_hit(adapter: HostAdapter, c: Condition, low: str, lex: Lexicon = LEXICON) -> bool:
    """Whether a vague or deictic reference to ``c``'s slot occurs in ``low``."""
    if adapter.host_class == "service":
        if any(contains_atom(low, v) for v in vague_of(adapter, c)):
            return True
        label = label_of(adapter, c)
        deictic = SURFACES.data.deictic
        tpls = deictic.get(c.slot.split(":")[-1]) or deictic["_default"]
        return any(contains_atom(low, t.format(label=label)) for t in tpls)
    marker = _has_any(low, lex.cues.vague_markers + lex.cues.deictic_markers)
    return marker and contains_atom(low, adapter.slot_label(c))


def two_way_hit(adapter: HostAdapter, c: Condition, low: str) -> bool:
    """Whether a two-way word one of whose senses is ``c``'s value occurs in ``low``."""
    toks = {t for a in adapter.atoms(c) for t in tokens(a)}
    return any(
        contains_atom(low, tw.word) and any(set(sense) == toks for sense in tw.senses)
        for tw in SURFACES.data.two_way
    )


class RuleExtractor:
    """Offline extractor: decides each slot's treatment from string evidence and cue words."""

    def __init__(self, name: str = "rule", lexicon: Lexicon = LEXICON) -> None:
        self.name = name
        self.lex = lexicon

    def _capability_slot(
        self, adapter: HostAdapter, intent: Intent, low: str, m: re.Match[str]
    ) -> str:
        return capability_target(adapter, intent, low, m.start(), m.end())

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
        presup_text = " ".join(
            s for s in _sentences(low) if _has_any(s, presupposition_cues(self.lex))
        )
        presup = bool(presup_text)
        companion_at = min(
            [p for p in (_pos(low, c) for c in cues.companion_cues) if p >= 0], default=-1
        )
        reqs = sorted({r for c in intent.conditions if (r := adapter.request_of(c.slot))})
        plain_reqs = [r for r in reqs if not r.startswith("also")]
        last_lead_at = (
            max(goal_spots(low, plain_reqs[-1]), default=-1) if len(plain_reqs) >= 2 else -1
        )
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
            if present:
                first = min(_pos(low, a) for a in own)
                if doubted and alt_hit is not None:
                    classes["presupposed"].append(c.slot)
                elif companion_at >= 0 and first > companion_at:
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
            if lexical or two_way_hit(adapter, c, low):
                classes["ambiguous"].append(c.slot)
            elif marker_hit(adapter, c, low, self.lex):
                classes["marked"].append(c.slot)
            else:
                classes["withheld"].append(c.slot)
        # capability: a named capability the host has no tool for
        tools = {t.replace("_", " ") for t in adapter.tool_names()}
        for m in capability_pattern(adapter.benchmark, self.lex).finditer(low):
            if m.group(1).strip() in tools:
                continue
            classes["capability"].append(self._capability_slot(adapter, intent, low, m))
        # extras: a filterable property the user does not hold
        true_atoms = {a.lower() for c in intent.conditions for a in adapter.atoms(c)}
        for bundle in ctx.extra_pool:
            atoms = [a.lower() for e in bundle for a in adapter.atoms(e)]
            atoms = [a for a in atoms if a not in true_atoms]
            if atoms and all(contains_atom(low, a) for a in atoms):
                if not set(atoms) <= used_alt_atoms:
                    classes["extra"].append(bundle[0].slot)
        # noise: a long run of sentences unrelated to the request
        labels = [label_of(adapter, c) for c in intent.conditions]
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


def _nearest(
    adapter: HostAdapter, intent: Intent, low: str, at: int, *, before: bool
) -> str | None:
    best: tuple[int, str] | None = None
    for c in intent.conditions:
        for a in own_atoms(adapter, intent, c.slot):
            for m in re.finditer(r"(?<![a-z0-9])" + re.escape(a.lower()) + r"(?![a-z0-9])", low):
                d = at - m.end() if before else m.start() - at
                if d >= 0 and (best is None or d < best[0]):
                    best = (d, c.slot)
    return best[1] if best else None


def capability_target(adapter: HostAdapter, intent: Intent, low: str, start: int, end: int) -> str:
    """Slot a capability request is about.

    A shop's checked condition is the nearest value before it; a desk's request is the one
    whose values follow it (its first slot).
    """
    if adapter.host_class != "service":
        return _nearest(adapter, intent, low, start, before=True) or "*"
    hit = _nearest(adapter, intent, low, end, before=False)
    if hit is None:
        return "*"
    req = adapter.request_of(hit)
    return sorted(c.slot for c in intent.conditions if adapter.request_of(c.slot) == req)[0]
