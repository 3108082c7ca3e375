"""What a world tells the simulated user about its requirements: slot lexicons and problems.

A *slot lexicon* says, for one condition of an intent, how people talk about it: a plain label
(never the value), the words and phrases that show a message is about it (synonyms, both
spellings, question words), the phrases that name its value, and the phrases that name *other*
values it could take (so a confirmation that names a different colour can be told apart from
one that names the right one). A *problem* is one thing a rejected proposal gets wrong, in plain
words that never recite a hidden value ("it's the wrong colour", "that's over my budget").

Worlds build these from plain data; the protocol's interpreter normalises and matches them. The
shared vocabularies below are written for this project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Dimension:
    """One aspect of a composite value (an item's size, its colour): its value and the others.

    A confirmation contradicts a dimension when it names one of ``alternatives`` and none of
    ``values``.
    """

    values: tuple[str, ...]
    alternatives: tuple[str, ...]


@dataclass(frozen=True)
class SlotLexicon:
    """How people talk about one requirement slot.

    Attributes:
        slot: The condition's slot id (empty for a world-level family with no condition).
        label: Plain words for the requirement, never its value (``colour``, ``budget``).
        family: The slot family (``color``, ``price``, ``feature``, ``refund``, ``bags`` …).
        cues: Words or phrases whose presence shows a message asks about the slot.
        values: Phrases naming the slot's current value.
        alternatives: Phrases naming other values the slot could take.
        number: The numeric value, for counts, amounts and caps.
        op: The condition's operator (``=``, ``<=`` …).
        weak: Cue words that only count together with a question about this family (``pay``
            for a payment method also occurs in a budget question).
        dimensions: Aspects of a composite value, each with its own alternatives (an item's
            size and colour); ``values``/``alternatives`` are one more, implicit dimension.
    """

    slot: str
    label: str
    family: str
    cues: tuple[str, ...]
    values: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()
    number: float | None = None
    op: str = "="
    weak: tuple[str, ...] = ()
    dimensions: tuple[Dimension, ...] = ()


@dataclass(frozen=True)
class Problem:
    """One thing a rejected proposal gets wrong.

    Attributes:
        slots: The requirement slots it concerns (recorded as the hint's slots).
        text: Plain words, safe to say at any time (no hidden value, no internal label).
        known_text: A more specific phrasing that may name values of ``slots``; used only when
            the agent already knows every one of them.
    """

    slots: tuple[str, ...]
    text: str
    known_text: str = ""


@dataclass(frozen=True)
class ActionLexicon:
    """What kind of action an intent asks for (τ² writes), for confirmations.

    Attributes:
        verbs: Words naming the intent's own actions (``cancel``, ``exchange``).
        others: Words naming actions the intent does not ask for.
        slot: The slot whose phrase states the action (disclosed when a confirmation names a
            different action).
        scopes: Per slot, the verbs that single out its action among the intent's actions
            (``return`` for a return's ``item_ids``): a question naming one of them asks about
            that action's slots only ("which items would you like to return?").
    """

    verbs: tuple[str, ...]
    others: tuple[str, ...]
    slot: str = ""
    scopes: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Family:
    """A slot family's shared vocabulary (cues and the pool of its values)."""

    label: str
    cues: tuple[str, ...]
    values: tuple[str, ...] = field(default=())
    weak: tuple[str, ...] = field(default=())


def words_of(*groups: Iterable[str]) -> tuple[str, ...]:
    """Concatenate phrase groups into one tuple without duplicates (order kept)."""
    out: dict[str, None] = {}
    for g in groups:
        for w in g:
            w = " ".join(str(w).lower().split())
            if w:
                out.setdefault(w, None)
    return tuple(out)


COLORS: tuple[str, ...] = tuple(
    (
        "black white gray grey silver gold red crimson maroon burgundy wine pink rose blush "
        "orange coral peach yellow mustard ochre cream ivory beige tan khaki brown chocolate "
        "camel taupe green olive sage mint emerald teal turquoise aqua cyan blue navy cobalt "
        "royal sky indigo purple violet lavender lilac plum magenta fuchsia charcoal graphite "
        "bronze copper rust champagne nude clear transparent multicolor multicolour rainbow "
        "natural sand stone slate denim"
    ).split()
)
"""Colour words (both spellings where they differ)."""

SIZES: tuple[str, ...] = tuple(
    (
        "xs xxs small medium large xl xxl xxxl 2xl 3xl 4xl x-large xx-large petite tall regular "
        "wide narrow king queen twin full california single double mini compact standard "
        "oversized slim"
    ).split()
)
"""Size words (clothing, bedding, generic)."""

COLOR = Family(
    label="colour",
    cues=(
        "color",
        "colour",
        "shade",
        "hue",
        "tone",
        "finish",
        "what color",
        "which color",
        "color option",
        "colorway",
    ),
    values=COLORS,
)
SIZE = Family(
    label="size",
    cues=(
        "size",
        "sizing",
        "fit",
        "fits",
        "how big",
        "how large",
        "how small",
        "dimension",
        "dimensions",
        "measurement",
        "measurements",
        "length",
        "width",
        "waist",
        "inseam",
    ),
    values=SIZES,
)
PRICE = Family(
    label="budget",
    cues=(
        "price",
        "budget",
        "spend",
        "cost",
        "costs",
        "afford",
        "expensive",
        "cheap",
        "pricey",
        "how much",
        "price range",
        "price limit",
        "max price",
        "maximum",
        "upper limit",
        "dollars",
        "money",
        "ceiling",
        "cap",
        "willing to pay",
        "prepared to pay",
        "looking to pay",
        "want to pay",
        "comfortable paying",
        "under",
        "less than",
        "at most",
        "no more than",
        "price point",
        "range",
        "max",
        "most you",
    ),
    weak=("pay", "paying", "under", "range", "maximum", "max"),
)
FEATURE = Family(
    label="feature",
    cues=(
        "feature",
        "features",
        "attribute",
        "attributes",
        "property",
        "properties",
        "characteristic",
        "characteristics",
        "requirement",
        "requirements",
        "must have",
        "must-have",
        "specification",
        "specifications",
        "specs",
        "spec",
        "quality",
        "qualities",
        "special",
        "particular",
        "functionality",
        "capability",
        "detail",
        "details",
    ),
    weak=("special", "particular", "detail", "details", "quality", "requirement", "requirements"),
)
FLAVOR = Family(
    label="flavour",
    cues=("flavor", "flavour", "taste", "tastes", "flavored", "what flavor", "variety"),
)
SCENT = Family(
    label="scent",
    cues=("scent", "scented", "fragrance", "smell", "smells", "aroma", "perfume", "odor"),
)
COUNT = Family(
    label="pack size",
    cues=(
        "count",
        "pack",
        "package",
        "packs",
        "pack size",
        "quantity",
        "how many",
        "number of",
        "bundle",
        "multipack",
        "set of",
        "piece",
        "pieces",
        "units",
        "bulk",
        "case",
        "pair",
        "pairs",
        "box of",
    ),
    weak=("piece", "pieces", "case", "units", "number of"),
)
MATERIAL = Family(
    label="material",
    cues=("material", "fabric", "made of", "made from", "textile", "cloth"),
)
STYLE = Family(
    label="style",
    cues=("style", "design", "look", "pattern", "type", "kind", "version", "variant", "model"),
    weak=("type", "kind", "look", "version", "variant"),
)


# ------------------------------------------------------------------ plain-word helpers
STOPWORDS = frozenset(
    "the and for with that this you your are was were have has had not but any all can "
    "what which who whom how why when where there their them they from into about would "
    "could should like want need please some more less than then also just does did "
    "arg attr option item items value".split()
)
"""Words never used to tell what a message is about."""

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Return lower-cased word tokens of ``text``."""
    return _TOKEN.findall(text.lower())


def content_words(text: str) -> set[str]:
    """Return tokens of ``text`` usable for matching (no digits, ≥ 3 chars, no stopwords)."""
    return {
        t
        for t in tokens(text)
        if len(t) >= 3 and t not in STOPWORDS and not any(ch.isdigit() for ch in t)
    }


def default_slot_label(slot: str) -> str:
    """Humanise a slot name: the last ':'-separated part, underscores to spaces."""
    tail = slot.rsplit(":", 1)[-1] if ":" in slot else slot
    return tail.replace("_", " ").strip() or slot
