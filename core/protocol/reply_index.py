"""What a reply can say about one intent: its slots' phrases, compiled for the reply reader.

The question interpreter asks "which slots does this message ask about?"; the reply reader asks
"which values does this reply state?". Both read the same world lexicons
(:meth:`core.envs.base.WorldBase.slot_lexicon`): a slot's value phrases, the other values of its
family (alternatives) and its cues. This module compiles them, per (world, intent), into an
inverted index over the same normalised stems (:mod:`core.protocol.textnorm`), with what a
reply needs on top:

* the same spelling variants on both sides (``x-large`` = ``XL`` = ``extra large``; dates as
  people write them: ``2024-05-19`` = ``May 19``);
* *distinctive* stems per phrase (``pack of 6`` is about the ``6``);
* *boolean* slots (insurance: ``with`` / ``without``), read by polarity;
* which phrases contain a negation themselves (``no longer needed``), so the reader does not
  take their ``no`` for a negation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from core.envs.base import HostWorld
from core.envs.requirement_lexicon import COLORS, SlotLexicon
from core.model.intent import Condition, Intent
from core.protocol.lexmatch import GENERIC, QUESTION_WORDS
from core.protocol.textnorm import clean, stem, stems

NEGATORS = frozenset(
    {
        "not",
        "no",
        "never",
        "without",
        "nor",
        "neither",
        "except",
        "non",
        "skip",
        "declin",
        "waiv",
        "forgo",
    }
)
"""Stems that negate what follows them in a clause."""
POSITIVE = frozenset({"with", "add", "includ", "yes", "want"})
NEGATIVE = frozenset({"no", "not", "without", "skip", "declin", "non"})
MONEY_FAMILIES = frozenset({"price", "amount"})
CLOSED_COLORS = frozenset(COLORS) - {
    "natural",
    "clear",
    "transparent",
    "sand",
    "stone",
    "rose",
    "wine",
    "nude",
    "denim",
    "royal",
    "sky",
    "cream",
    "gold",
    "silver",
    "bronze",
    "copper",
    "rust",
    "tan",
    "blush",
    "champagne",
    "slate",
    "sage",
    "mint",
    "peach",
    "coral",
    "plum",
    "camel",
}
"""Colour words that name a colour and little else ("clear", "natural" … name other things)."""
CLOSED_SIZES = frozenset(
    "xxs xs small medium large xl xxl xxxl xxxxl petite king queen twin".split()
)
"""Size words that name a size and little else."""
SMALL_SET = 12
"""Alternative sets at most this large are the person's own options (their other orders,
cards, cabins): naming one of them without a cue is a stated value."""
_CUE_STOP = QUESTION_WORDS | frozenset(
    stems(
        "to from for back send option options receive new one ones different would like want "
        "where when who how which what kind get go going will you"
    )
)
_DISTINCT_GENERIC = GENERIC - {"no", "not", "with", "single", "pair"}

_SIZE_WORDS = (
    (re.compile(r"\b(?:xxxx-?large|4xl|4x-large|extra extra extra extra large)\b"), "xxxxl"),
    (re.compile(r"\b(?:xxx-?large|3xl|3x-large|extra extra extra large)\b"), "xxxl"),
    (re.compile(r"\b(?:xx-?large|2xl|2x-large|extra extra large|double extra large)\b"), "xxl"),
    (re.compile(r"\b(?:x-large|x large|extra[- ]large|xlarge)\b"), "xl"),
    (re.compile(r"\b(?:xx-?small|extra extra small|2xs)\b"), "xxs"),
    (re.compile(r"\b(?:x-small|x small|extra[- ]small|xsmall)\b"), "xs"),
)
_OTHER_WORDS = (
    (re.compile(r"\bdark blue\b"), "navy"),
    (re.compile(r"\bw/o\b"), "without"),
    (re.compile(r"\bw/"), "with "),
    (re.compile(r"\bmaster ?card\b"), "mastercard"),
    (re.compile(r"\bamerican express\b"), "amex"),
    (re.compile(r"\bround-trip\b"), "round trip"),
    (re.compile(r"\bone-way\b"), "one way"),
    (re.compile(r"\bt-shirts?\b|\btee shirts?\b|\btees?\b"), "tshirt"),
    (re.compile(r"\bfl\.? ?oz\b"), "fluid ounce"),
    (re.compile(r"(\d)\s*-\s*(pack|count|piece|ounce|oz|inch|foot|pound|lb|gallon)\b"), r"\1 \2"),
    (re.compile(r"(\d)(oz|ml|lb|lbs|ct|pk|in|ft|g|kg|l)\b"), r"\1 \2"),
)
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH_ABBR = {m[:3]: m for m in _MONTHS} | {"sept": "september"}
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TOKEN = re.compile(r"\d+(?:\.\d+)?[a-z]*|[a-z][a-z0-9]*|,")


def normalise(text: str) -> str:
    """Lower-case and clean ``text`` and write sizes, payment brands and units one way."""
    t = clean(text).replace("\u2014", ", ").replace("\u2013", ", ").replace(" - ", ", ")
    for rx, rep in (*_SIZE_WORDS, *_OTHER_WORDS):
        t = rx.sub(rep, t)
    return t


def raw_tokens(text: str) -> list[str]:
    """Return the tokens of ``text`` after :func:`normalise` (commas kept as clause marks)."""
    out = []
    for tok in _TOKEN.findall(normalise(text)):
        m = re.match(r"^(\d+)(st|nd|rd|th)$", tok)
        if m:
            tok = m.group(1)
        elif tok in _MONTH_ABBR:
            tok = _MONTH_ABBR[tok]
        out.append(tok)
    return out


def stem_all(tokens: list[str]) -> tuple[str, ...]:
    """Stem word tokens (numbers and commas stay as they are)."""
    return tuple(stem(t) if t.isalpha() else t for t in tokens)


def _date_variants(value: str) -> tuple[str, ...]:
    m = _ISO_DATE.match(value.strip())
    if m is None:
        return ()
    month = int(m.group(2))
    day = int(m.group(3))
    if not 1 <= month <= 12:
        return ()
    name = _MONTHS[month - 1]
    return (f"{name} {day}", f"{day} {name}", f"{month}/{day}")


@dataclass(frozen=True)
class Phrase:
    """One value (or alternative value) phrase of a slot."""

    slot: str
    kind: Literal["value", "alternative"]
    group: int
    text: str
    stems: tuple[str, ...]
    dist: frozenset[str]
    polarity: int = 0
    closed: bool = False
    contiguous: bool = False


@dataclass
class SlotEntry:
    """A slot of the intent as the reply reader sees it."""

    condition: Condition
    lexicon: SlotLexicon
    cue_stems: frozenset[str]
    cue_phrases: tuple[tuple[str, ...], ...]
    number: float | None
    op: str
    money: bool
    boolean: bool
    groups: int
    small: frozenset[int]
    id_shape: re.Pattern[str] | None = None

    @property
    def slot(self) -> str:
        """The slot id."""
        return self.condition.slot


@dataclass
class ReplyIndex:
    """Compiled phrases of one intent in one world."""

    slots: dict[str, SlotEntry]
    phrases: list[Phrase] = field(default_factory=list)
    by_stem: dict[str, list[int]] = field(default_factory=dict)
    vocab: tuple[str, ...] = ()
    protected: tuple[tuple[str, ...], ...] = ()
    shared_names: dict[str, frozenset[str]] = field(default_factory=dict)
    expanded: dict[str, str] = field(default_factory=dict)


def _distinct(stems: tuple[str, ...]) -> frozenset[str]:
    dist = {s for s in stems if s not in _DISTINCT_GENERIC and (len(s) >= 2 or s.isdigit())}
    if not dist:
        dist = {s for s in stems if len(s) >= 3 or s.isdigit()}
    return frozenset(dist)


def _shape(value: str) -> re.Pattern[str] | None:
    """A pattern for ids of the same shape (``w1850525`` → letter + 7 digits)."""
    v = value.strip().lstrip("#").lower()
    if not (5 <= len(v) <= 14) or not any(c.isdigit() for c in v) or " " in v:
        return None
    if v.isdigit():
        return re.compile(rf"^\d{{{len(v)}}}$") if len(v) >= 4 else None
    pat = "".join("[a-z]" if c.isalpha() else r"\d" if c.isdigit() else re.escape(c) for c in v)
    if re.fullmatch(r"(\[a-z\]){3,}", pat):
        return None
    return re.compile(rf"^{pat}$")


REPLY_INDEX_MEMO = "reply_index"
"""The world's memo of compiled reply phrases, one entry per intent (``world.memo``)."""


def reply_index(world: HostWorld, intent: Intent) -> ReplyIndex:
    """Return the compiled reply phrases of ``intent`` in ``world`` (kept in the world's memo)."""
    memo = world.memo(REPLY_INDEX_MEMO, size=2048)
    key = tuple(c.key() for c in intent.conditions)
    got: ReplyIndex | None = memo.get(key)
    if got is None:
        got = _build(world, intent)
        memo.put(key, got)
    return got


def _phrase_variants(text: str) -> tuple[str, ...]:
    return (text, *_date_variants(text))


def _build(world: HostWorld, intent: Intent) -> ReplyIndex:
    idx = ReplyIndex(slots={})
    protected: set[tuple[str, ...]] = set()
    names: dict[str, set[frozenset[str]]] = {}
    for cond in intent.conditions:
        lex = world.slot_lexicon(cond)
        cue_phrases = tuple(
            s for s in {stem_all(raw_tokens(c)) for c in (lex.label, *lex.cues)} if s
        )
        cue_stems = frozenset(
            s
            for p in cue_phrases
            for s in p
            if s not in GENERIC and not s.isdigit() and s not in _CUE_STOP
        )
        groups = [
            (lex.values, lex.alternatives),
            *((d.values, d.alternatives) for d in lex.dimensions),
        ]
        pol_words = {
            stem(w)
            for vals, alts in groups
            for p in (*vals, *alts)
            for w in raw_tokens(p)
            if w.isalpha()
        }
        boolean = bool(pol_words & POSITIVE) and bool(pol_words & NEGATIVE) and len(groups) == 1
        small: set[int] = set()
        for gi, (vals, alts) in enumerate(groups):
            if len(alts) <= SMALL_SET:
                small.add(gi)
            kinds: tuple[tuple[Literal["value", "alternative"], tuple[str, ...]], ...] = (
                ("value", vals),
                ("alternative", alts),
            )
            for kind, group in kinds:
                for text in group:
                    for variant in _phrase_variants(text):
                        _add(idx, cond.slot, kind, gi, variant, lex, boolean, protected)
            if gi == 0 and vals:
                names.setdefault(cond.slot, set()).update(
                    _distinct(stem_all(raw_tokens(v))) for v in vals
                )
        id_shape = None
        if lex.values and not lex.dimensions and lex.family not in ("feature",):
            id_shape = _shape(lex.values[0])
        idx.slots[cond.slot] = SlotEntry(
            condition=cond,
            lexicon=lex,
            cue_stems=cue_stems,
            cue_phrases=cue_phrases,
            number=lex.number,
            op=lex.op,
            money=lex.family in MONEY_FAMILIES,
            boolean=boolean,
            groups=len(groups),
            small=frozenset(small),
            id_shape=id_shape,
        )
    for slot, sets in names.items():
        shared: set[str] = set()
        for other, osets in names.items():
            if other == slot:
                continue
            for s in sets:
                if s in osets:
                    shared |= s
        idx.shared_names[slot] = frozenset(shared)
    idx.protected = tuple(sorted(protected))
    vocab = set(idx.by_stem)
    for entry in idx.slots.values():
        vocab |= entry.cue_stems
    idx.vocab = tuple(sorted(v for v in vocab if len(v) >= 5 and v.isalpha()))
    return idx


def _add(
    idx: ReplyIndex,
    slot: str,
    kind: Literal["value", "alternative"],
    group: int,
    text: str,
    lex: SlotLexicon,
    boolean: bool,
    protected: set[tuple[str, ...]],
) -> None:
    stems = stem_all([t for t in raw_tokens(text) if t != ","])
    if not stems:
        return
    polarity = 0
    dist = _distinct(stems)
    if boolean:
        has_neg = bool(set(stems) & NEGATIVE)
        polarity = -1 if has_neg else 1
        dist = frozenset(s for s in dist if s not in NEGATIVE and s not in POSITIVE) or dist
    contiguous = False
    if not boolean and set(stems) & NEGATORS:
        protected.add(stems)
        contiguous = True  # "not needed", "no longer need": matched as written, in order
    if not dist:
        return
    ntext = normalise(text).strip()
    closed = (
        (lex.family == "color" and ntext in CLOSED_COLORS)
        or (lex.family == "size" and ntext in CLOSED_SIZES)
        or (
            len(lex.alternatives) <= SMALL_SET
            and any(c.isalpha() for c in text)
            and lex.family not in ("feature",)
        )
    )
    phrase = Phrase(
        slot=slot,
        kind=kind,
        group=group,
        text=text,
        stems=stems,
        dist=dist,
        polarity=polarity,
        closed=bool(closed),
        contiguous=contiguous,
    )
    idx.phrases.append(phrase)
    for s in dist:
        idx.by_stem.setdefault(s, []).append(len(idx.phrases) - 1)
