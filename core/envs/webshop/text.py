"""Text helpers shared by the shop's search, reward and generator.

Everything here is a pure function over strings: the stop-word list used by search, the
fuzzy matcher the reward uses (thefuzz's ``token_set_ratio`` semantics on top of rapidfuzz),
WebShop's colour normalisation, the noun heuristic used where no precomputed noun list exists,
and the deterministic ``price_upper`` rule.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz import utils as fuzz_utils

STOPWORDS: frozenset[str] = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
"""Lucene's English stop set (the analyzer WebShop's pyserini index uses)."""

COLOR_SET: tuple[str, ...] = tuple(
    sorted(
        """
        alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze
        brown burgundy camel camo caramel champagne charcoal cheetah chestnut chocolate christmas
        coffee cognac copper coral cranberry cream crystal dark denim eggplant elephant espresso
        fuchsia gold granite grape graphite grass gray green grey heather indigo ivory ivy khaki
        lavender lemon leopard light lilac lime magenta maroon mauve merlot midnight mint mocha
        multicolor mushroom mustard natural navy nude olive orange peach pewter pink plum purple
        rainbow red rose royal rust sand sapphire seashell silver skull slate steel stone stonewash
        sunflower tan taupe teal tiger turquoise violet walnut wheat white wine yellow
        """.split()
    )
)
"""WebShop's colour vocabulary, alphabetical; normalisation returns the first one contained."""

PRICE_RANGE: tuple[float, ...] = tuple(10.0 * i for i in range(1, 100))
"""WebShop's price-cap grid ($10 … $990)."""

FUZZ_THRESHOLD = 85
"""A fuzzy match needs a (rounded) token-set ratio strictly above this."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """Split ``text`` into lower-cased alphanumeric words (the FTS5 ``unicode61`` view).

    >>> words("Men's Slip-On, size 10.5")
    ['men', 's', 'slip', 'on', 'size', '10', '5']
    """
    return _WORD.findall(text.lower())


def search_terms(query: str) -> list[str]:
    """Return the distinct non-stop-word terms of a search query, in order.

    >>> search_terms('i need "red" shoes: size 9 -- and NOT blue')
    ['i', 'need', 'red', 'shoes', 'size', '9', 'blue']
    """
    seen: dict[str, None] = {}
    for w in words(query):
        if w not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)


@lru_cache(maxsize=262_144)
def fuzzy_score(a: str, b: str) -> int:
    """Return thefuzz-style ``token_set_ratio(a, b)``: processed strings, rounded to an int.

    thefuzz (which WebShop calls) lower-cases, strips non-alphanumerics, drops non-ASCII and
    rounds the score; an empty processed string scores 0.

    >>> fuzzy_score("Navy Blue", "blue navy"), fuzzy_score("large", "x-large")
    (100, 100)
    """
    pa = fuzz_utils.default_process(a.encode("ascii", "ignore").decode())
    pb = fuzz_utils.default_process(b.encode("ascii", "ignore").decode())
    if not pa or not pb:
        return 0
    return int(round(fuzz.token_set_ratio(pa, pb)))


def fuzzy_match(a: str, b: str) -> bool:
    """Return whether ``a`` and ``b`` match under WebShop's fuzzy rule (score > 85)."""
    return fuzzy_score(a, b) > FUZZ_THRESHOLD


@lru_cache(maxsize=65_536)
def normalize_color(value: str) -> str:
    """Return the first :data:`COLOR_SET` entry contained in ``value``, else ``value``.

    >>> normalize_color("black forest"), normalize_color("violet lavender"), normalize_color("xl")
    ('black', 'lavender', 'xl')
    """
    for color in COLOR_SET:
        if color in value:
            return color
    return value


def price_upper_for(price: float) -> float:
    """Deterministic price cap: the second $10 step above ``price`` (1e6 if none).

    WebShop draws two of the first four grid values above the price and keeps the larger; the
    Drift-Bench++ release replaced the draw with the second step, which we follow.

    >>> price_upper_for(34.99), price_upper_for(40.0), price_upper_for(985.0)
    (50.0, 60.0, 1000000.0)
    """
    above = [p for p in PRICE_RANGE if p > price][:4]
    return above[1] if len(above) >= 2 else 1_000_000.0


def price_text(price_upper: float) -> str:
    """Return WebShop's instruction suffix for a cap (empty for the 'no cap' sentinel)."""
    if price_upper >= 1_000_000:
        return ""
    return f", and price lower than {price_upper:.2f} dollars"


def format_price(price: float) -> str:
    """Format a price the way the shop shows it.

    >>> format_price(12.5), format_price(100.0)
    ('$12.50', '$100.00')
    """
    return f"${price:,.2f}"


NON_NOUNS: frozenset[str] = frozenset(
    """
    adjustable all anti assorted athletic authentic automatic baked best big bold breathable
    bright casual classic clean comfortable comfy compact compatible cool cozy crunchy cushioned
    dairy deep dimmable double dry durable easy elegant everyday extra fast fine flat foldable
    free fresh full gentle genuine gluten good great half hand healthy heavy high hot hydrating
    insulated kettle large leak light lightweight long low machine medium mini modern moisture
    multi natural new non nourishing oil organic original outdoor padded plus portable premium
    proof pure quick raw real recycled regular reusable rich roasted round safe seamless sensitive
    sharp short slim slip small smooth soft solid sparkling spicy stainless strong stylish super
    sweet thick thin tight toasted true ultra unscented vegan waterproof wide wireless womens mens
    """.split()
)
"""Adjectives and modifiers the noun heuristic never counts as nouns."""


def heuristic_nouns(name: str) -> list[str]:
    """Approximate spaCy's NOUN/PROPN tokens of a product name, lower-cased, in order.

    Used only where a catalogue does not ship ``name_nouns`` (the importer computes it once at
    import time; nothing runs spaCy). Keeps alphabetic words of two or more letters that are
    not stop words or known modifiers.

    >>> heuristic_nouns("Stridewell Men's Breathable Running Shoes with Arch Support")
    ['stridewell', 'men', 'running', 'shoes', 'arch', 'support']
    """
    out: list[str] = []
    for w in words(name):
        if len(w) < 2 or not w.isalpha() or w in STOPWORDS or w in NON_NOUNS:
            continue
        out.append(w)
    return out


def round_money(x: float) -> float:
    """Round to cents (half away from zero) without binary surprises."""
    return math.floor(x * 100 + 0.5) / 100
