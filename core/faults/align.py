"""The value-alignment reader: a second offline extractor built on a different principle.

The :class:`~core.faults.extract.RuleExtractor` asks, slot by slot, whether each of the value's
atoms occurs verbatim and then applies cue phrases. This reader instead splits the request into
clause segments and aligns every condition to the segment that covers most of its value
*tokens*; a condition counts as stated when at least :data:`STATED` of its tokens are covered
(tolerant of partial mentions), as substituted when some alternative's distinctive tokens are
covered instead, and otherwise reads the segment around its customer noun for marker tokens.
Whole-message flaws are read from segment positions (a leading unaligned run of 25+ words is
noise; no sentence performing a request act is oblique).

Because the two readers decide differently — verbatim atoms and cue phrases versus token
coverage and request acts — their agreement in verifier step 1 is evidence; on partial or
cue-less mentions they disagree and the candidate is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.faults.extract import (
    Extraction,
    ExtractionContext,
    goal_spots,
    two_way_hit,
)
from core.faults.plan import own_atoms
from core.faults.surface import SURFACES, label_of, vague_of
from core.faults.taxonomy import DIFF_CLASS, DIFF_CLASSES, FAMILY_OF_CLASS
from core.graph.hosts.base import STOPWORDS, HostAdapter, tokens
from core.model.intent import Condition, Intent
from core.model.sample import FaultType

STATED = 0.75
"""Share of a value's own tokens that must be covered for the value to count as stated."""

MARKER_TOKENS = frozenset(
    """usual same before mentioned reasonable decent sensible convenient easiest easy
    comfortable nicer suitable enough obvious normal whichever whatever""".split()
)
"""Tokens that make an unvalued mention of a slot a vague or deictic reference."""

NEGATION_TOKENS = frozenset(
    """not n't no longer sold declined locked unavailable isn't can't doesn't won't out
    discontinued full""".split()
)
"""Tokens of a sentence that denies something is possible (presupposition)."""

_ACT = re.compile(
    r"\bi(?:'m| am)\s+(?:looking|hoping you|after|shopping)\b|\bi(?:'d| would)\s+(?:like|love)\b"
    r"|\bi\s+(?:\w+\s+)?(?:need|want)\b|\bplease\b|^(?:can|could|would|will|do) you\b|\bhelp me\b"
)
"""A sentence performing a request act (asks, wishes, politeness)."""


@dataclass
class _Seg:
    start: int
    end: int
    sentence: int
    toks: set[str]
    text: str


def _segments(text: str) -> list[_Seg]:
    out: list[_Seg] = []
    low = text.lower()
    sentence = 0
    pos = 0
    for m in re.finditer(r"[^.!?;,]+[.!?;,]?", low):
        chunk = m.group(0)
        parts = re.split(r"\s+and\s+", chunk)
        off = m.start()
        for p in parts:
            i = low.find(p, off)
            if p.strip():
                out.append(_Seg(i, i + len(p), sentence, set(tokens(p)), p))
            off = i + len(p)
        if chunk.rstrip().endswith((".", "!", "?")):
            sentence += 1
        pos = m.end()
    del pos
    return out


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _toks(adapter: HostAdapter, atoms: Sequence[str]) -> set[str]:
    return {t for a in atoms for t in tokens(a) if t not in STOPWORDS}


class AlignmentExtractor:
    """Offline extractor by value-token alignment (see the module docstring)."""

    def __init__(self, name: str = "align") -> None:
        self.name = name

    def extract(
        self,
        text: str,
        adapter: HostAdapter,
        intent: Intent,
        questionnaire: Sequence[FaultType],
        ctx: ExtractionContext,
    ) -> Extraction:
        """Align every condition of ``intent`` to the text and report the flaws found."""
        low = text.lower()
        segs = _segments(text)
        all_toks = set(tokens(low))
        classes: dict[str, list[str]] = {k: [] for k in DIFF_CLASSES}
        value_toks: dict[str, set[str]] = {
            c.slot: _toks(adapter, own_atoms(adapter, intent, c.slot)) for c in intent.conditions
        }
        every = set().union(*value_toks.values()) if value_toks else set()
        sentences = _sentences(low)
        reqs = sorted({r for c in intent.conditions if (r := adapter.request_of(c.slot))})
        plain = [r for r in reqs if not r.startswith("also")]
        last_goal = max(goal_spots(low, plain[-1]), default=-1) if len(plain) >= 2 else -1
        used_alt: set[str] = set()
        for c in intent.conditions:
            vt = value_toks[c.slot]
            if not vt:
                continue
            cover = len(vt & all_toks) / len(vt)
            best = max(segs, key=lambda s: len(vt & s.toks), default=None)
            alt = self._alternative(adapter, intent, c, ctx, all_toks, value_toks)
            if cover >= STATED and best is not None:
                sent = sentences[min(best.sentence, len(sentences) - 1)] if sentences else ""
                st = set(tokens(sent)) | set(re.findall(r"n't", sent))
                if alt is not None and st & NEGATION_TOKENS and alt <= st:
                    classes["presupposed"].append(c.slot)
                    used_alt |= alt
                elif self._dangling(segs, best, every):
                    classes["ambiguous"].append(c.slot)
                elif (
                    last_goal >= 0
                    and adapter.request_of(c.slot) != plain[-1]
                    and not (adapter.request_of(c.slot) or "").startswith("also")
                    and best.start > last_goal
                ):
                    classes["ambiguous"].append(c.slot)
                continue
            if alt is not None:
                classes["substituted"].append(c.slot)
                used_alt |= alt
                continue
            if two_way_hit(adapter, c, low) or any(f"the {t} one" in low for t in vt):
                classes["ambiguous"].append(c.slot)
            elif self._marked(adapter, c, segs):
                classes["marked"].append(c.slot)
            else:
                classes["withheld"].append(c.slot)
        cap = self._capability(adapter, intent, low, segs, value_toks)
        if cap is not None:
            classes["capability"].append(cap)
        true_toks = set().union(*[_toks(adapter, adapter.atoms(c)) for c in intent.conditions])
        for bundle in ctx.extra_pool:
            bt = _toks(adapter, [a for e in bundle for a in adapter.atoms(e)]) - true_toks
            if bt and bt <= all_toks and not bt <= used_alt:
                classes["extra"].append(bundle[0].slot)
        if self._leading_noise(adapter, intent, sentences, every):
            classes["noise"].append("*")
        if not any(_ACT.search(s.strip()) or s.strip().endswith("?") for s in sentences):
            classes["oblique"].append("*")
        result = {k: tuple(dict.fromkeys(v)) for k, v in classes.items()}
        order: list[str] = [DIFF_CLASS[q] for q in questionnaire]
        main = next((k for k in order if result.get(k)), None) or next(
            (k for k, v in result.items() if v), None
        )
        target = result[main][0] if main and result[main] and result[main][0] != "*" else None
        return Extraction(
            extractor=self.name,
            family=FAMILY_OF_CLASS[main] if main else None,  # type: ignore[index]
            target_slot=target,
            classes=result,
        )

    # ------------------------------------------------------------------ pieces
    def _alternative(
        self,
        adapter: HostAdapter,
        intent: Intent,
        c: Condition,
        ctx: ExtractionContext,
        all_toks: set[str],
        value_toks: dict[str, set[str]],
    ) -> set[str] | None:
        mine = _toks(adapter, adapter.atoms(c))
        others = set().union(*[v for s, v in value_toks.items() if s != c.slot])
        for v in ctx.alternatives.get(c.slot, []):
            d = _toks(adapter, adapter.atoms(c.model_copy(update={"value": v}))) - mine - others
            if d and d <= all_toks:
                return d
        return None

    def _dangling(self, segs: list[_Seg], best: _Seg, every: set[str]) -> bool:
        """The value's segment follows one that names another thing it could belong to."""
        i = segs.index(best)
        if i == 0:
            return False
        prev = segs[i - 1]
        return (
            re.search(r"\b(?:with|for|on|match)\s+my\b", prev.text) is not None
            and not (prev.toks & every)
            and prev.sentence == best.sentence
        )

    def _marked(self, adapter: HostAdapter, c: Condition, segs: list[_Seg]) -> bool:
        label = set(tokens(label_of(adapter, c)))
        vague = {t for v in vague_of(adapter, c) for t in tokens(v)} & MARKER_TOKENS
        for s in segs:
            if s.toks & MARKER_TOKENS and (label <= s.toks or s.toks & vague):
                return True
        return False

    def _capability(
        self,
        adapter: HostAdapter,
        intent: Intent,
        low: str,
        segs: list[_Seg],
        value_toks: dict[str, set[str]],
    ) -> str | None:
        tool_toks = {t for name in adapter.tool_names() for t in name.split("_")}
        for m in re.finditer(
            r"\byour\s+((?:[a-z-]+\s+){0,5}?[a-z-]+)(?=\s+(?:to|through)\b|[,.:)?])", low
        ):
            words = {w for w in re.split(r"[\s-]+", m.group(1)) if w and w not in STOPWORDS}
            if not words or words & tool_toks:
                continue
            at = next((i for i, s in enumerate(segs) if s.start <= m.start() < s.end + 1), 0)
            if adapter.host_class == "service":
                for s in segs[at:]:
                    hit = next((c for c in intent.conditions if value_toks[c.slot] & s.toks), None)
                    if hit is not None:
                        req = adapter.request_of(hit.slot)
                        return sorted(
                            x.slot for x in intent.conditions if adapter.request_of(x.slot) == req
                        )[0]
                return "*"
            for s in reversed(segs[: at + 1]):
                hit = next(
                    (
                        c
                        for c in intent.conditions
                        if value_toks[c.slot] and value_toks[c.slot] <= s.toks
                    ),
                    None,
                )
                if hit is not None:
                    return hit.slot
            return "*"
        return None

    def _leading_noise(
        self, adapter: HostAdapter, intent: Intent, sentences: list[str], every: set[str]
    ) -> bool:
        labels = {t for c in intent.conditions for t in tokens(label_of(adapter, c))}
        run = 0
        for s in sentences:
            st = set(tokens(s))
            if st & (every | labels) or _ACT.search(s):
                break
            run += len(s.split())
        return run >= 25


__all__ = ["STATED", "AlignmentExtractor", "SURFACES"]
