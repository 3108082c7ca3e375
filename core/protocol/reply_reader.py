"""The reply reader: what a user's reply tells the agent, read from its words.

A reply — a person's in Play as user, or any voice's — is read over the user's *current* intent
into

* an **act**: ``answer`` (states one or more requirement values), ``decline`` (refuses, does not
  know, hands the choice back), ``confirm_yes``, ``confirm_no`` or ``other``;
* **disclosures**: the slots of the intent whose goal value the reply states (the value is the
  intent's own);
* **contradictions**: slots for which the reply states a *different* value (``said``: the words
  used; ``goal``: the intent's value) — "red" when the goal is navy, "under $80" when the cap
  is $60, "not navy" when it is navy;
* **declined**: asked slots the reply declines.

The offline reader (:func:`read_offline`) is the question interpreter's sibling: it reads the
same world lexicons (:mod:`core.protocol.reply_index`), the same stems
(:mod:`core.protocol.textnorm`), quantities in digits or words (:mod:`core.protocol.numwords`)
and the speech acts of :mod:`core.protocol.reply_acts`. It scopes negation ("not the red one"),
reads multi-slot answers, hedges and yes/no with extra words, and never returns a slot outside
the intent it is given. :func:`read_reply` picks the reader: ``offline`` or a model spec
(:mod:`core.protocol.reply_llm`, falling back to offline, recorded).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from rapidfuzz import fuzz, process

from core.envs.base import HostWorld
from core.model.intent import ConditionValue, Intent
from core.protocol.numwords import Quantity, quantities
from core.protocol.reply_acts import hedged, lead, strong_yes
from core.protocol.reply_index import (
    NEGATORS,
    Phrase,
    ReplyIndex,
    SlotEntry,
    normalise,
    raw_tokens,
    reply_index,
    stem_all,
)
from core.protocol.textnorm import variants

ReplyAct = Literal["answer", "decline", "confirm_yes", "confirm_no", "other"]
REPLY_ACTS: tuple[str, ...] = ("answer", "decline", "confirm_yes", "confirm_no", "other")
OFFLINE = "offline"
"""Reader spec of the offline reader (the default)."""
FUZZY_CUTOFF = 86.0


@dataclass(frozen=True)
class Disclosed:
    """One slot whose goal value the reply states."""

    slot: str
    value: ConditionValue
    said: str = ""


@dataclass(frozen=True)
class Contradiction:
    """One slot for which the reply states a value other than the goal."""

    slot: str
    said: str
    goal: ConditionValue


@dataclass(frozen=True)
class ReplyReading:
    """What a reply tells the agent.

    Attributes:
        act: ``answer`` / ``decline`` / ``confirm_yes`` / ``confirm_no`` / ``other``.
        disclosures: Slots whose goal value the reply states, in intent order.
        contradictions: Slots for which it states another value, in intent order.
        declined: Asked slots the reply declines.
        source: Which reader read it (``offline`` or a model spec).
        fallback: A model reader failed and the offline reading was used.
        detail: Why the model reading was not used (empty otherwise).
        raw: The model's answer (empty for the offline reader).
    """

    act: ReplyAct
    disclosures: tuple[Disclosed, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()
    declined: tuple[str, ...] = ()
    source: str = OFFLINE
    fallback: bool = False
    detail: str = ""
    raw: str = ""

    @property
    def slots(self) -> tuple[str, ...]:
        """The disclosed slot ids."""
        return tuple(d.slot for d in self.disclosures)

    def payload(self) -> dict[str, Any]:
        """The ``driftbench user read`` fields: ``act``, ``disclosures``, ``contradictions``."""
        return {
            "act": self.act,
            "disclosures": [{"slot": d.slot, "value": d.value} for d in self.disclosures],
            "contradictions": [
                {"slot": c.slot, "said": c.said, "goal": c.goal} for c in self.contradictions
            ],
        }


# ------------------------------------------------------------------------------- sentences
_SENT = re.compile(r"(?<!\d)\.(?!\d)|[?!;\n]+")
_CLAUSE_START = frozenset(
    "i we it make please just go get want need prefer would should could can let that this "
    "then also so".split()
)
_SCOPE_END = frozenset({"but", "though", "although", "however", "instead", "rather", "yet"})
_NEG_BIGRAMS = (("instead", "of"), ("rather", "than"), ("other", "than"), ("anyth", "but"))
_NEG_VERBS = frozenset({"hate", "dislik", "avoid"})


@dataclass
class _Sentence:
    raw: list[str]
    stems: list[str]
    negated: list[bool]
    negator_at: list[int]
    qty: list[Quantity]


def _split(text: str) -> list[str]:
    return [p for p in _SENT.split(normalise(text)) if p and p.strip()]


def _sentence(part: str, idx: ReplyIndex) -> _Sentence:
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
    return _Sentence(raw=raw, stems=stems, negated=negated, negator_at=negator_at, qty=qty)


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
class _Hit:
    phrase: Phrase
    positions: tuple[int, ...]
    negated: bool
    full: bool
    sentence: int


@dataclass
class _Evidence:
    """Per slot: what the reply says about it."""

    values: dict[int, list[_Hit]] = field(default_factory=dict)
    alternatives: dict[int, list[_Hit]] = field(default_factory=dict)
    negated_values: dict[int, list[_Hit]] = field(default_factory=dict)
    cue_sentences: set[int] = field(default_factory=set)
    number: tuple[Quantity, int] | None = None
    polarity: tuple[int, int, int] | None = None  # (sign, sentence, position)
    ids: list[tuple[str, int]] = field(default_factory=list)


def _positions(sent: _Sentence) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, s in enumerate(sent.stems):
        if s:
            out.setdefault(s, []).append(i)
    return out


def _candidates(sent: _Sentence, idx: ReplyIndex) -> list[int]:
    seen: dict[int, None] = {}
    for s in sent.stems:
        for pid in idx.by_stem.get(s, ()):
            seen.setdefault(pid, None)
    return list(seen)


def _pick(
    pos: dict[str, list[int]], dist: Iterable[str], want_neg: bool, sent: _Sentence
) -> tuple[int, ...] | None:
    """One position per stem, all negated or all not (None if a stem is missing)."""
    out = []
    for s in dist:
        at = [p for p in pos.get(s, ()) if sent.negated[p] == want_neg]
        if not at:
            return None
        out.append(at[0])
    return tuple(sorted(out))


def _match_sentence(
    si: int, sent: _Sentence, idx: ReplyIndex, ev: dict[str, _Evidence]
) -> set[int]:
    """Record what one sentence says per slot; return the positions its values use."""
    pos = _positions(sent)
    consumed: set[int] = set()
    partial: list[tuple[Phrase, tuple[int, ...]]] = []
    alts: list[_Hit] = []
    for pid in _candidates(sent, idx):
        p = idx.phrases[pid]
        entry = idx.slots[p.slot]
        if entry.boolean:
            continue
        hit_pos = _pick(pos, p.dist, False, sent)
        hit_neg = _pick(pos, p.dist, True, sent) if hit_pos is None else None
        if hit_pos is not None:
            h = _Hit(p, hit_pos, False, True, si)
            if p.kind == "value":
                ev[p.slot].values.setdefault(p.group, []).append(h)
                consumed.update(hit_pos)
            else:
                alts.append(h)
        elif hit_neg is not None:
            if p.kind == "value":
                ev[p.slot].negated_values.setdefault(p.group, []).append(
                    _Hit(p, hit_neg, True, True, si)
                )
        else:
            have = tuple(
                sorted(q for s in p.dist for q in pos.get(s, ())[:1] if not sent.negated[q])
            )
            if have:
                partial.append((p, have))
    for h in alts:
        if not consumed.intersection(h.positions):
            ev[h.phrase.slot].alternatives.setdefault(h.phrase.group, []).append(h)
    for p, have in partial:
        if consumed.intersection(have):
            continue
        matched = {sent.stems[q] for q in have}
        if not _distinctive(matched, p, idx):
            continue
        h = _Hit(p, have, False, False, si)
        bucket = ev[p.slot].values if p.kind == "value" else ev[p.slot].alternatives
        if p.kind == "alternative" and p.group not in idx.slots[p.slot].small:
            continue
        bucket.setdefault(p.group, []).append(h)
        if p.kind == "value":
            consumed.update(have)
    stems = set(sent.stems)
    for slot, entry in idx.slots.items():
        if stems & entry.cue_stems or any(_contains(sent.stems, c) for c in entry.cue_phrases):
            ev[slot].cue_sentences.add(si)
        if entry.boolean:
            _polarity(si, sent, entry, ev[slot])
        if entry.id_shape is not None:
            for q, w in enumerate(sent.raw):
                if q not in consumed and entry.id_shape.match(w):
                    ev[slot].ids.append((w, si))
    return consumed


def _contains(stems: Sequence[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    if n < 2:
        return False
    return any(tuple(stems[i : i + n]) == phrase for i in range(len(stems) - n + 1))


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


def _polarity(si: int, sent: _Sentence, entry: SlotEntry, ev: _Evidence) -> None:
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


def _goal_sign(entry: SlotEntry) -> int:
    vals = " ".join(entry.lexicon.values)
    return -1 if re.search(r"\b(no|without|skip|decline)\b", vals) else 1


# ------------------------------------------------------------------------------- numbers
def _claim_numbers(
    sents: Sequence[_Sentence],
    used_by: Sequence[set[int]],
    idx: ReplyIndex,
    ev: dict[str, _Evidence],
    asked: Sequence[str],
) -> None:
    numeric = [e for e in idx.slots.values() if e.number is not None]
    if not numeric:
        return
    money = [e for e in numeric if e.money]
    counts = [e for e in numeric if not e.money]
    free: list[tuple[Quantity, int]] = []
    for si, sent in enumerate(sents):
        used = used_by[si]
        for q in sent.qty:
            if any(k in used for k in range(q.start, q.end)):
                continue
            free.append((q, si))
    taken: set[int] = set()
    for n, (q, si) in enumerate(free):
        if money and (q.money or q.bound in ("<=", ">=", "~")):
            target = _closest(money, q, sents[si]) or money[0]
            if ev[target.slot].number is None:
                ev[target.slot].number = (q, si)
            taken.add(n)
    for n, (q, si) in enumerate(free):
        if n in taken or not counts:
            continue
        count = _closest(counts, q, sents[si])
        if count is not None and ev[count.slot].number is None:
            ev[count.slot].number = (q, si)
            taken.add(n)
    asked_numeric = [e for e in numeric if e.slot in asked and ev[e.slot].number is None]
    rest = [(q, si) for n, (q, si) in enumerate(free) if n not in taken]
    if len(asked_numeric) == 1 and len(rest) >= 1:
        ev[asked_numeric[0].slot].number = rest[0]


def _closest(entries: Sequence[SlotEntry], q: Quantity, sent: _Sentence) -> SlotEntry | None:
    best: tuple[float, SlotEntry] | None = None
    shared: dict[str, int] = {}
    for e in entries:
        for s in e.cue_stems:
            shared[s] = shared.get(s, 0) + 1
    for e in entries:
        score = 0.0
        for k, s in enumerate(sent.stems):
            if s not in e.cue_stems:
                continue
            d = min(abs(k - q.start), abs(k - (q.end - 1)))
            if d > 4:
                continue
            score += (1.0 / (1 + d)) * (0.5 if shared.get(s, 0) > 1 else 1.0)
        # a tie goes to the more general slot ("3 bags": all bags, not the paid ones)
        score -= len(e.cue_stems) * 1e-6
        if score > 0 and (best is None or score > best[0]):
            best = (score, e)
    return best[1] if best is not None else None


def _number_ok(entry: SlotEntry, q: Quantity) -> bool:
    goal = float(entry.number or 0.0)
    tol = max(0.01 * abs(goal), 0.005) if q.bound != "~" else max(0.1 * abs(goal), 1.0)
    if entry.op == "<=" and q.bound == ">=":
        return False
    if entry.op == ">=" and q.bound == "<=":
        return False
    return abs(q.value - goal) <= tol


# ------------------------------------------------------------------------------- reading
def _said(sent: _Sentence, positions: Iterable[int], negated_from: int = -1) -> str:
    ps = sorted(positions)
    if not ps:
        return ""
    return _dollars(_span(sent, ps, negated_from))


def _dollars(text: str) -> str:
    return re.sub(r"\bdollar (\d[\d.]*)", r"$\1", text)


def _span(sent: _Sentence, ps: list[int], negated_from: int) -> str:
    lo = min(ps[0], negated_from) if negated_from >= 0 else ps[0]
    hi = ps[-1]
    if hi - lo > 7:
        return " ".join(sent.raw[q] for q in ps)
    return " ".join(sent.raw[lo : hi + 1])


def _decide(
    entry: SlotEntry,
    e: _Evidence,
    sents: Sequence[_Sentence],
    asked: Sequence[str],
    idx: ReplyIndex,
) -> tuple[str, str]:
    """Return ("disclosed" | "contradicted" | "", the words used)."""
    slot = entry.slot
    if entry.number is not None:
        if e.number is None:
            return "", ""
        q, si = e.number
        sent = sents[si]
        hi = q.hi + 1 if q.hi < len(sent.stems) and sent.stems[q.hi] in entry.cue_stems else q.hi
        said = _dollars(" ".join(sent.raw[q.lo : hi]))
        return ("disclosed" if _number_ok(entry, q) else "contradicted"), said
    if entry.boolean:
        if e.polarity is None:
            return "", ""
        sign, si, at = e.polarity
        neg = sents[si].negator_at[at]
        said = _said(sents[si], [at], neg)
        return ("disclosed" if sign == _goal_sign(entry) else "contradicted"), said
    wrong: tuple[str, int, tuple[int, ...], int] | None = None
    right: tuple[int, tuple[int, ...]] | None = None
    for g in range(entry.groups):
        vals = e.values.get(g, [])
        if g == 0 and vals and entry.groups > 1 and slot not in asked:
            shared = idx.shared_names.get(slot, frozenset())
            vals = [h for h in vals if not h.phrase.dist <= shared]
        if vals:
            if right is None:
                right = (vals[0].sentence, vals[0].positions)
            continue
        alts = [h for h in e.alternatives.get(g, []) if _plausible(h, entry, e, asked, g)]
        if alts:
            h = alts[0]
            wrong = wrong or (h.phrase.text, h.sentence, h.positions, -1)
            continue
        negs = e.negated_values.get(g, [])
        if negs and not (g > 0 and right is None and slot not in asked):
            h = negs[0]
            at = sents[h.sentence].negator_at[h.positions[0]]
            wrong = wrong or (h.phrase.text, h.sentence, h.positions, at)
    if wrong is not None:
        _, si, ps, neg = wrong
        return "contradicted", _said(sents[si], ps, neg)
    if right is not None:
        si, ps = right
        return "disclosed", _said(sents[si], ps)
    if e.ids:
        value = str(entry.lexicon.values[0]).lower() if entry.lexicon.values else ""
        for w, _si in e.ids:
            if w != value:
                return "contradicted", w
    return "", ""


def _plausible(h: _Hit, entry: SlotEntry, e: _Evidence, asked: Sequence[str], g: int) -> bool:
    """Whether naming another value of the slot states it (rather than mentioning a word)."""
    if entry.slot in asked or h.sentence in e.cue_sentences:
        return True
    if g > 0:
        return False  # an item option: only with a cue ("instead", "new one") or when asked
    if all(s.isdigit() for s in h.phrase.dist):
        return False
    return h.phrase.closed


def read_offline(
    text: str, intent: Intent, world: HostWorld, *, asked: Sequence[str] = ()
) -> ReplyReading:
    """Read ``text`` as a reply over ``intent`` (offline, deterministic; never raises on text).

    Args:
        text: The user's reply.
        intent: The user's current intent (the only slots that can be returned).
        world: The host world (supplies the lexicons).
        asked: Slots the agent's last question asked about (ids outside ``intent`` are ignored).

    Returns:
        The reading.
    """
    idx = reply_index(world, intent)
    asked = tuple(s for s in asked if s in idx.slots)
    parts = _split(text)
    sents = [_sentence(p, idx) for p in parts]
    ev = {slot: _Evidence() for slot in idx.slots}
    used_by = [_match_sentence(si, sent, idx, ev) for si, sent in enumerate(sents)]
    _claim_numbers(sents, used_by, idx, ev, asked)
    disclosed: list[Disclosed] = []
    contradicted: list[Contradiction] = []
    for slot, entry in idx.slots.items():
        verdict, said = _decide(entry, ev[slot], sents, asked, idx)
        if verdict == "disclosed":
            disclosed.append(Disclosed(slot=slot, value=entry.condition.value, said=said))
        elif verdict == "contradicted":
            contradicted.append(Contradiction(slot=slot, said=said, goal=entry.condition.value))
    act = _act(text, disclosed, contradicted, asked, idx, ev)
    said_slots = {d.slot for d in disclosed} | {c.slot for c in contradicted}
    declined: tuple[str, ...] = ()
    if act == "decline" or (act == "answer" and hedged(text)):
        declined = tuple(s for s in asked if s not in said_slots)
    return ReplyReading(
        act=act,
        disclosures=tuple(disclosed),
        contradictions=tuple(contradicted),
        declined=declined,
    )


def _act(
    text: str,
    disclosed: Sequence[Disclosed],
    contradicted: Sequence[Contradiction],
    asked: Sequence[str],
    idx: ReplyIndex,
    ev: dict[str, _Evidence],
) -> ReplyAct:
    says = bool(disclosed or contradicted)
    yes_no = lead(text)
    hedge = hedged(text)
    if asked and says:
        return "answer"
    if yes_no == "yes" and not (says and not strong_yes(text)):
        if hedge and asked and not says:
            return "decline"
        return "confirm_yes"
    if yes_no == "no":
        return "confirm_no"
    if says:
        return "answer"
    if hedge:
        return "decline"
    return "other"


def restrict(reading: ReplyReading, intent: Intent) -> ReplyReading:
    """Return ``reading`` with every slot outside ``intent`` removed (a safety net)."""
    have = {c.slot for c in intent.conditions}
    return replace(
        reading,
        disclosures=tuple(d for d in reading.disclosures if d.slot in have),
        contradictions=tuple(c for c in reading.contradictions if c.slot in have),
        declined=tuple(s for s in reading.declined if s in have),
    )


def read_reply(
    text: str,
    intent: Intent,
    world: HostWorld,
    *,
    asked: Sequence[str] = (),
    reader: str = OFFLINE,
) -> ReplyReading:
    """Read a user's reply with ``reader`` (``offline`` or a model spec).

    This is the engine's one entry point for reading a user's words (the Play as user page,
    ``driftbench user read``, an LLM user voice). A model reader that fails or answers
    outside the contract falls back to the offline reading, recorded in ``fallback`` and
    ``detail``.

    Args:
        text: The reply.
        intent: The user's current intent.
        world: The host world.
        asked: Slots the agent's last question asked about.
        reader: ``offline`` (default) or a model spec.

    Returns:
        The reading; its slots are always slots of ``intent``.
    """
    spec = (reader or OFFLINE).strip() or OFFLINE
    if spec == OFFLINE:
        return restrict(read_offline(text, intent, world, asked=asked), intent)
    from core.protocol.reply_llm import reader_for

    return restrict(reader_for(spec).read(text, intent, world, asked=asked), intent)
