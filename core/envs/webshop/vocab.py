"""Vocabulary types for the bundled shop catalogue (clusters live in ``vocab_*.py``).

Every brand, phrase and sentence here was written for this project. The generator checks the
vocabulary before use: attributes of a cluster never fuzzy-match each other, and no attribute
occurs inside another attribute, a product type, a brand or a filler sentence (so a product
only ever "has" the attributes it was given).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OptionSpec:
    """One customisation option: its name, value pool and how many values a product offers."""

    name: str
    values: tuple[str, ...]
    min_k: int
    max_k: int


@dataclass(frozen=True)
class ClusterSpec:
    """Everything needed to generate one cluster (a WebShop scrape query) of products."""

    query: str
    category: str
    breadcrumbs: tuple[str, ...]
    prefix: str
    types: tuple[tuple[str, bool], ...]  # (type phrase, is plural)
    brands: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[OptionSpec, ...]
    price_range: tuple[float, float]
    suffixes: tuple[str, ...]
    descriptions: tuple[str, ...]
    features: tuple[str, ...]


PREMIUM_WORDS: tuple[str, ...] = ("Pro", "Elite", "Signature", "Deluxe", "Premier")
"""Title words of the higher-priced edition of a product (the price-band near miss)."""

OPENERS: tuple[str, ...] = (
    "i'm looking for",
    "i need",
    "i want",
    "find me",
    "i would like",
    "looking for",
    "can you find me",
    "i am looking for",
    "please get me",
    "i want to buy",
)
