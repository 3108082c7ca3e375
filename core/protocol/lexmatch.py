"""Scoring which slots a sentence is about, over compiled slot lexicons.

A :class:`Compiled` lexicon is an inverted index from stem n-grams to (slot, kind, weight). A
sentence is scored by looking up its unigrams, bigrams and trigrams (and the derivational
variants and near-spellings of unknown words), then adding up per slot:

* a *cue* (``colour``, ``how much``, ``refund``) — strong (2.0) or weak (0.6);
* a *value* phrase (the slot's own value, all of its content words present) — 1.5, or 0.8 for a
  distinctive part of it;
* an *alternative* value of the slot's family (``red`` when the colour is ``teal``) — 1.0.

A slot is asked when its score reaches 1.0. When a question word is followed closely by a strong
cue ("which colour …"), only slots with a strong cue count in that sentence: "What size do you
need for the black shirt?" asks about the size, not the colour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz, process

from core.envs.requirement_lexicon import SlotLexicon
from core.protocol.textnorm import Sentence, stems, variants

STRONG = 2.0
WEAK = 0.6
VALUE = 1.5
PARTIAL = 0.8
ALTERNATIVE = 1.0
THRESHOLD = 1.0
FUZZY_CUTOFF = 86.0
MAX_NGRAM = 6

QUESTION_WORDS = frozenset(
    "what which how where when who whom why any anything some specific particular".split()
)
GENERIC = frozenset(
    stems(
        "the a an and or of for with to in on at by from is are be it its this that these "
        "those i you your my me we our us do would could should will can want need like prefer "
        "please one ones item items product products thing things free proof safe type style "
        "pack set new old good great best high low top extra super ultra more less very just "
        "also yes no not only all each per plus made make get have has had same other another "
        "use using used look looking find buy order size color"
    )
)
"""Stems never distinctive enough to stand for a value on their own."""


@dataclass
class _Phrase:
    slot: str
    stems: tuple[str, ...]
    distinctive: tuple[str, ...]
    kind: str  # "value" | "alternative"
    group: int = 0


@dataclass
class Compiled:
    """An inverted index over the lexicons of one set of slots (plus world families)."""

    lexicons: dict[str, SlotLexicon]
    cues: dict[tuple[str, ...], list[tuple[str, float]]] = field(default_factory=dict)
    phrases: list[_Phrase] = field(default_factory=list)
    by_stem: dict[str, list[int]] = field(default_factory=dict)
    vocab: list[str] = field(default_factory=list)
    topics: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    expanded: dict[str, str] = field(default_factory=dict)

    def known(self, s: str) -> bool:
        """Whether a stem occurs anywhere in the index."""
        return (s,) in self.cues or s in self.by_stem or (s,) in self.topics


@lru_cache(maxsize=65536)
def _key(phrase: str) -> tuple[str, ...]:
    return stems(phrase)


def compile_lexicons(
    lexicons: Iterable[SlotLexicon], families: Iterable[SlotLexicon] = ()
) -> Compiled:
    """Build the index for ``lexicons`` (slots) and ``families`` (topics with no slot)."""
    lex = {x.slot: x for x in lexicons}
    c = Compiled(lexicons=lex)
    for x in lex.values():
        weak = {_key(w) for w in x.weak}
        for cue in (x.label, *x.cues) if x.cues else ():
            k = _key(cue)
            if not k:
                continue
            w = WEAK if k in weak else STRONG
            c.cues.setdefault(k, []).append((x.slot, w))
        for wc in x.weak:
            k = _key(wc)
            if k and all(s != x.slot for s, _ in c.cues.get(k, [])):
                c.cues.setdefault(k, []).append((x.slot, WEAK))
        groups = [(x.values, x.alternatives), *((d.values, d.alternatives) for d in x.dimensions)]
        for gi, (vals, alts) in enumerate(groups):
            for kind, group in (("value", vals), ("alternative", alts)):
                for v in group:
                    _add_phrase(c, x.slot, v, kind, gi)

    present = {x.family for x in lex.values()}
    for f in families:
        if f.family in present:
            continue
        weak_f = {_key(w) for w in f.weak}
        for cue in (f.label, *f.cues):
            k = _key(cue)
            if k and k not in weak_f:
                c.topics.setdefault(k, []).append(f.family)
    vocab = (
        {k[0] for k in c.cues if len(k) == 1}
        | set(c.by_stem)
        | {k[0] for k in c.topics if len(k) == 1}
    )
    c.vocab = sorted(v for v in vocab if len(v) >= 5 and v.isalpha())
    return c


def _add_phrase(c: Compiled, slot: str, v: str, kind: str, group: int) -> None:
    k = _key(v)
    dist = tuple(s for s in k if s not in GENERIC and (len(s) >= 3 or s.isdigit()))
    if not dist:
        dist = tuple(s for s in k if len(s) >= 3 or s.isdigit())
    if not dist:
        return
    c.phrases.append(_Phrase(slot, k, dist, kind, group))
    for s in dict.fromkeys(dist):
        c.by_stem.setdefault(s, []).append(len(c.phrases) - 1)


def _expand(words: Sequence[str], c: Compiled) -> list[str]:
    """Map each stem to the form the index knows (itself, a variant, a near spelling)."""
    out = []
    memo = c.expanded
    for s in words:
        got = memo.get(s)
        if got is None:
            got = _expand_one(s, c)
            if len(memo) < 20000:
                memo[s] = got
        out.append(got)
    return out


def _expand_one(s: str, c: Compiled) -> str:
    if c.known(s) or not s.isalpha():
        return s
    got = next((v for v in variants(s)[1:] if c.known(v)), None)
    if got is None and len(s) >= 5 and c.vocab:
        hit = process.extractOne(s, c.vocab, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
        if hit is not None and hit[0][0] == s[0]:
            got = hit[0]
    return got or s


@dataclass
class Score:
    """What one sentence says about the slots."""

    slots: dict[str, float] = field(default_factory=dict)
    strong: set[str] = field(default_factory=set)
    values: dict[str, set[int]] = field(default_factory=dict)
    alternatives: dict[str, set[int]] = field(default_factory=dict)
    partial: dict[str, set[int]] = field(default_factory=dict)
    topics: set[str] = field(default_factory=set)
    focus: bool = False

    def add(self, slot: str, w: float) -> None:
        """Add ``w`` to ``slot``'s score."""
        self.slots[slot] = self.slots.get(slot, 0.0) + w


def score(sentence: Sentence | Sequence[str], c: Compiled) -> Score:
    """Score one sentence (its stems) against the index."""
    raw = sentence.stems if isinstance(sentence, Sentence) else tuple(sentence)
    words = _expand(raw, c)
    out = Score()
    n = len(words)
    spans: list[tuple[int, int, str, float]] = []
    topic_spans: list[tuple[int, int, str]] = []
    for i in range(n):
        for j in range(i + 1, min(n, i + MAX_NGRAM) + 1):
            k = tuple(words[i:j])
            for slot, w in c.cues.get(k, ()):
                spans.append((i, j, slot, w))
            for fam in c.topics.get(k, ()):
                topic_spans.append((i, j, fam))
    longer = [(i, j, slot) for i, j, slot, _ in spans] + topic_spans
    cue_at = [
        (i, slot, w)
        for i, j, slot, w in spans
        if not any(a <= i and j <= b and b - a > j - i and o != slot for a, b, o in longer)
    ]
    for i, j, fam in topic_spans:
        if not any(a <= i and j <= b and b - a > j - i and o != fam for a, b, o in longer):
            out.topics.add(fam)
    best: dict[str, float] = {}
    weak_hits: dict[str, set[int]] = {}
    for i, slot, w in cue_at:
        best[slot] = max(best.get(slot, 0.0), w)
        if w >= STRONG:
            out.strong.add(slot)
        else:
            weak_hits.setdefault(slot, set()).add(i)
    for slot, w in best.items():
        # two different weak cues ("maximum … pay") add up to a reading
        out.add(slot, w if w >= STRONG else WEAK * min(len(weak_hits.get(slot, ())), 2))
    qpos = [i for i, s in enumerate(words) if s in QUESTION_WORDS]
    out.focus = any(w >= STRONG and any(0 <= i - q <= 3 for q in qpos) for i, _, w in cue_at)
    present = set(words)
    seen_phrase: dict[tuple[str, str], float] = {}
    for s in present:
        for idx in c.by_stem.get(s, ()):
            p = c.phrases[idx]
            key = (p.slot, p.kind)
            have = [d for d in p.distinctive if d in present]
            if p.kind == "value":
                if len(have) == len(p.distinctive):
                    w = VALUE
                    out.values.setdefault(p.slot, set()).add(p.group)
                elif any(len(d) >= 4 for d in have):
                    w = PARTIAL
                    out.partial.setdefault(p.slot, set()).add(p.group)
                else:
                    continue
            else:
                if len(have) != len(p.distinctive):
                    continue
                w = ALTERNATIVE
                out.alternatives.setdefault(p.slot, set()).add(p.group)
            seen_phrase[key] = max(seen_phrase.get(key, 0.0), w)
    for (slot, _kind), w in seen_phrase.items():
        out.add(slot, w)
    return out


def selected(sc: Score) -> list[str]:
    """Return the slots a scored sentence asks about.

    A slot named only through another value of its family ("medium" for a size) does not
    count when the sentence names some slot by a strong cue ("light, medium or dark roast?").
    """
    keep = [s for s, v in sc.slots.items() if v >= THRESHOLD and s]
    if sc.strong:
        keep = [
            s
            for s in keep
            if s in sc.strong or s in sc.values or s in sc.partial or s not in sc.alternatives
        ]
    if sc.focus:
        keep = [s for s in keep if s in sc.strong]
    return keep
