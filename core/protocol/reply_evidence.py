"""What a reply's sentences say about each slot: the reply reader's evidence.

One sentence at a time (:func:`read_sentence`): normalised tokens, number words as digits,
stems mapped onto the intent's vocabulary (derivational variants, near spellings), and the
positions a negation covers (from the negator to the end of its clause; phrases that carry
their own negation, such as "no longer needed", are not negations). :func:`match_sentence`
then records per slot (:class:`Evidence`) which value phrases the sentence states, which it
negates, which *other* values of the slot it names, which ids of the goal's shape it writes,
its cues, and the polarity of yes/no slots. :mod:`core.protocol.reply_reader` decides from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from core.protocol.numwords import Quantity, quantities
from core.protocol.reply_index import (
    NEGATORS,
    Phrase,
    ReplyIndex,
    SlotEntry,
    normalise,
    raw_tokens,
    stem_all,
)
from core.protocol.textnorm import variants

FUZZY_CUTOFF = 86.0

_SENT = re.compile(r"(?<!\d)\.(?!\d)|[?!;\n]+")
_CLAUSE_START = frozenset(
    "i we it make please just go get want need prefer would should could can let that this "
    "then also so".split()
)
_SCOPE_END = frozenset({"but", "though", "although", "however", "instead", "rather", "yet"})
_NEG_BIGRAMS = (("instead", "of"), ("rather", "than"), ("other", "than"), ("anyth", "but"))
_NEG_VERBS = frozenset({"hate", "dislik", "avoid"})


@dataclass
class Sentence:
    """One sentence of a reply: its words, stems, negation scope and quantities."""

    raw: list[str]
    stems: list[str]
    negated: list[bool]
    negator_at: list[int]
    qty: list[Quantity]


def split_sentences(text: str) -> list[str]:
    """Split a normalised reply into sentences (a decimal point is not a full stop)."""
    return [p for p in _SENT.split(normalise(text)) if p and p.strip()]


def read_sentence(part: str, idx: ReplyIndex) -> Sentence:
    """Tokenise, stem and scope one sentence against the intent's vocabulary."""
    toks = raw_tokens(part)
    words: list[str] = []
    breaks: set[int] = set()
    for t in toks:
        if t == ",":
            breaks.add(len(words))
        else:
            words.append(t)
    qty = quantities(words)
    raw = list(words)
    norm = list(words)
    for q in qty:  # number words are matched as digits ("size nine" = "size 9")
        if q.end - q.start >= 1 and not words[q.start][0].isdigit() and q.value.is_integer():
            if words[q.start] in ("couple", "pair", "dozen", "both", "single", "a"):
                continue
            norm[q.start] = str(int(q.value))
            for k in range(q.start + 1, q.end):
                norm[k] = ""
    stems = [_expand(s, idx) if s else "" for s in stem_all(norm)]
    negated, negator_at = _negation(stems, breaks, idx)
    return Sentence(raw=raw, stems=stems, negated=negated, negator_at=negator_at, qty=qty)


def _expand(s: str, idx: ReplyIndex) -> str:
    """Map a stem to the form the index knows (itself, a derivational variant, a near spelling)."""
    if not s.isalpha() or s in idx.by_stem or len(s) < 4:
        return s
    got = idx.expanded.get(s)
    if got is not None:
        return got
    out = next((v for v in variants(s)[1:] if v in idx.by_stem), None)
    if out is None and len(s) >= 5 and idx.vocab:
        hit = process.extractOne(s, idx.vocab, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
        if hit is not None and hit[0][0] == s[0]:
            out = hit[0]
    out = out or s
    if len(idx.expanded) < 20000:
        idx.expanded[s] = out
    return out


def _protected(stems: Sequence[str], idx: ReplyIndex) -> set[int]:
    """Positions of negation words that belong to a phrase ("no longer needed")."""
    keep: set[int] = set()
    for phrase in idx.protected:
        n = len(phrase)
        for i in range(len(stems) - n + 1):
            if tuple(stems[i : i + n]) == phrase:
                keep.update(i + k for k, s in enumerate(phrase) if s in NEGATORS)
    return keep


def _negation(
    stems: Sequence[str], breaks: set[int], idx: ReplyIndex
) -> tuple[list[bool], list[int]]:
    """Which positions a negation covers (from the negator to the end of its clause)."""
    n = len(stems)
    negated = [False] * n
    negator_at = [-1] * n
    keep = _protected(stems, idx)
    active = -1
    i = 0
    while i < n:
        s = stems[i]
        if i in breaks or s in _SCOPE_END:
            active = -1
        elif s in ("and", "or") and i + 1 < n and stems[i + 1] in _CLAUSE_START:
            active = -1
        starts = (s in NEGATORS and i not in keep) or s in _NEG_VERBS
        if s == "no" and i + 1 < n and stems[i + 1] in ("long", "more", "matter"):
            starts = False  # "no longer", "no more than" (read as a bound)
        if s == "not" and i + 1 < n and stems[i + 1] in ("more", "over", "abov", "exceed"):
            starts = False
        if i + 1 < n and (s, stems[i + 1]) in _NEG_BIGRAMS:
            active = i
            i += 2
            continue
        if starts:
            active = i
            i += 1
            continue
        if active >= 0:
            negated[i] = True
            negator_at[i] = active
        i += 1
    return negated, negator_at


# ------------------------------------------------------------------------------- matching
@dataclass
class Hit:
    """One phrase found in a sentence (where, whether negated, whole or partial)."""

    phrase: Phrase
    positions: tuple[int, ...]
    negated: bool
    full: bool
    sentence: int


@dataclass
class Evidence:
    """Per slot: what the reply says about it."""

    values: dict[int, list[Hit]] = field(default_factory=dict)
    alternatives: dict[int, list[Hit]] = field(default_factory=dict)
    negated_values: dict[int, list[Hit]] = field(default_factory=dict)
    cue_sentences: set[int] = field(default_factory=set)
    number: tuple[Quantity, int] | None = None
    polarity: tuple[int, int, int] | None = None  # (sign, sentence, position)
    ids: list[tuple[str, int]] = field(default_factory=list)


def _positions(sent: Sentence) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, s in enumerate(sent.stems):
        if s:
            out.setdefault(s, []).append(i)
    return out


def _candidates(sent: Sentence, idx: ReplyIndex) -> list[int]:
    seen: dict[int, None] = {}
    for s in sent.stems:
        for pid in idx.by_stem.get(s, ()):
            seen.setdefault(pid, None)
    return list(seen)


def _pick(
    pos: dict[str, list[int]], dist: Iterable[str], want_neg: bool, sent: Sentence
) -> tuple[int, ...] | None:
    """One position per stem, all negated or all not (None if a stem is missing)."""
    out = []
    for s in dist:
        at = [p for p in pos.get(s, ()) if sent.negated[p] == want_neg]
        if not at:
            return None
        out.append(at[0])
    return tuple(sorted(out))


def match_sentence(si: int, sent: Sentence, idx: ReplyIndex, ev: dict[str, Evidence]) -> set[int]:
    """Record what one sentence says per slot; return the positions its values use."""
    pos = _positions(sent)
    consumed: set[int] = set()
    partial: list[tuple[Phrase, tuple[int, ...]]] = []
    alts: list[Hit] = []
    for pid in _candidates(sent, idx):
        p = idx.phrases[pid]
        entry = idx.slots[p.slot]
        if entry.boolean:
            continue
        if p.contiguous:
            at = _find(sent.stems, p.stems)
            if at is not None and p.kind == "value":
                ev[p.slot].values.setdefault(p.group, []).append(Hit(p, at, False, True, si))
                consumed.update(at)
            elif at is not None:
                alts.append(Hit(p, at, False, True, si))
            continue
        hit_pos = _pick(pos, p.dist, False, sent)
        hit_neg = _pick(pos, p.dist, True, sent) if hit_pos is None else None
        if hit_pos is not None:
            h = Hit(p, hit_pos, False, True, si)
            if p.kind == "value":
                ev[p.slot].values.setdefault(p.group, []).append(h)
                consumed.update(hit_pos)
            else:
                alts.append(h)
        elif hit_neg is not None:
            if p.kind == "value":
                ev[p.slot].negated_values.setdefault(p.group, []).append(
                    Hit(p, hit_neg, True, True, si)
                )
        else:
            have = tuple(
                sorted(q for s in p.dist for q in pos.get(s, ())[:1] if not sent.negated[q])
            )
            if have:
                partial.append((p, have))
    # partial values first (they consume their words), then whole and partial alternatives
    partial.sort(key=lambda x: x[0].kind != "value")
    whole_alts_done = False
    for p, have in partial:
        if p.kind == "alternative" and not whole_alts_done:
            _alternatives(alts, consumed, ev)
            whole_alts_done = True
        if consumed.intersection(have):
            continue
        matched = {sent.stems[q] for q in have}
        if not _distinctive(matched, p, idx):
            continue
        h = Hit(p, have, False, False, si)
        bucket = ev[p.slot].values if p.kind == "value" else ev[p.slot].alternatives
        if p.kind == "alternative" and p.group not in idx.slots[p.slot].small:
            continue
        bucket.setdefault(p.group, []).append(h)
        if p.kind == "value":
            consumed.update(have)
    if not whole_alts_done:
        _alternatives(alts, consumed, ev)
    stems = set(sent.stems)
    grams = {
        tuple(sent.stems[i : i + n]) for n in (2, 3, 4) for i in range(len(sent.stems) - n + 1)
    }
    for slot, entry in idx.slots.items():
        if stems & entry.cue_stems or grams.intersection(entry.cue_phrases):
            ev[slot].cue_sentences.add(si)
        if entry.boolean:
            _polarity(si, sent, entry, ev[slot])
        if entry.id_shape is not None:
            for q, w in enumerate(sent.raw):
                if q not in consumed and entry.id_shape.match(w):
                    ev[slot].ids.append((w, si))
    return consumed


def _alternatives(alts: Sequence[Hit], consumed: set[int], ev: dict[str, Evidence]) -> None:
    """Record whole alternative values whose words no value of any slot used."""
    for h in alts:
        if not consumed.intersection(h.positions):
            ev[h.phrase.slot].alternatives.setdefault(h.phrase.group, []).append(h)


def _find(stems: Sequence[str], phrase: tuple[str, ...]) -> tuple[int, ...] | None:
    """Positions of ``phrase`` written contiguously in ``stems`` (None if it is not)."""
    n = len(phrase)
    for i in range(len(stems) - n + 1):
        if tuple(stems[i : i + n]) == phrase:
            return tuple(range(i, i + n))
    return None


def _distinctive(matched: set[str], p: Phrase, idx: ReplyIndex) -> bool:
    """Whether a part of a phrase tells its value apart from the slot's other values."""
    if not any(len(s) >= 4 or any(c.isdigit() for c in s) for s in matched):
        return False
    ids = any(sum(c.isdigit() for c in s) >= 3 for s in matched)
    small = p.group in idx.slots[p.slot].small and bool(idx.slots[p.slot].lexicon.alternatives)
    if not (ids or small) and len(p.dist) >= 4 and len(matched) * 3 < len(p.dist):
        return False
    others = [
        q for q in idx.phrases if q.slot == p.slot and q.group == p.group and q.kind != p.kind
    ]
    return not any(matched <= q.dist for q in others)


def _polarity(si: int, sent: Sentence, entry: SlotEntry, ev: Evidence) -> None:
    core: set[str] = set()
    for vals, alts in ((entry.lexicon.values, entry.lexicon.alternatives),):
        for text in (*vals, *alts):
            core |= {s for s in stem_all(raw_tokens(text)) if s not in NEGATORS and len(s) >= 4}
    core -= {"with", "includ", "want"}
    for i, s in enumerate(sent.stems):
        if s in core:
            sign = -1 if sent.negated[i] else 1
            ev.polarity = (sign, si, i)
            return


def goal_sign(entry: SlotEntry) -> int:
    """The polarity of a yes/no slot's goal (-1 for "without …", else +1)."""
    vals = " ".join(entry.lexicon.values)
    return -1 if re.search(r"\b(no|without|skip|decline)\b", vals) else 1
