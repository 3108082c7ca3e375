"""The in-memory catalogue: products by ASIN and by cluster, plus the search index."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from core.envs.webshop.models import Product
from core.envs.webshop.search import PAGE_SIZE, SearchIndex


class Searcher(Protocol):
    """A product search (FTS5 in memory, or the postings of a catalogue file)."""

    def search(self, query: str, k: int = ..., *, cache: bool = ...) -> list[str]: ...  # noqa: D102
    def clear_cache(self) -> None: ...  # noqa: D102
    def warm(self) -> None: ...  # noqa: D102
    def __len__(self) -> int: ...  # noqa: D105


class CatalogueLike(Protocol):
    """What a world and its sessions need from a catalogue (in memory or on disk)."""

    @property
    def products(self) -> Sequence[Product]: ...  # noqa: D102
    @property
    def by_asin(self) -> Mapping[str, Product]: ...  # noqa: D102
    @property
    def clusters(self) -> Mapping[str, tuple[Product, ...]]: ...  # noqa: D102
    @property
    def index(self) -> Searcher: ...  # noqa: D102
    def get(self, asin: str) -> Product | None: ...  # noqa: D102
    def search(self, query: str) -> list[str]: ...  # noqa: D102
    def option_name_of(self, value: str) -> str | None: ...  # noqa: D102
    def option_counts(self) -> dict[str, Counter[str]]: ...  # noqa: D102
    def attribute_counts(self) -> Counter[str]: ...  # noqa: D102


class Catalogue:
    """Read-only product store shared by every session of a world."""

    def __init__(self, products: Sequence[Product]) -> None:
        """Index ``products`` by ASIN and cluster and build the search index."""
        self.products: tuple[Product, ...] = tuple(products)
        self.by_asin: dict[str, Product] = {p.asin: p for p in self.products}
        self._by_lower: dict[str, str] = {a.lower(): a for a in self.by_asin}
        clusters: dict[str, list[Product]] = {}
        for p in self.products:
            clusters.setdefault(p.query, []).append(p)
        self.clusters: dict[str, tuple[Product, ...]] = {
            k: tuple(v) for k, v in sorted(clusters.items())
        }
        self.index = SearchIndex(self.products)
        value_names: dict[str, dict[str, int]] = {}
        for p in self.products:
            for name, values in p.options.items():
                for v in values:
                    counts = value_names.setdefault(v, {})
                    counts[name] = counts.get(name, 0) + 1
        self._option_name_of: dict[str, str] = {
            v: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            for v, c in value_names.items()
        }

    def get(self, asin: str) -> Product | None:
        """Return the product with ``asin`` (case-insensitive), or None."""
        real = self._by_lower.get(asin.strip().lower())
        return self.by_asin[real] if real is not None else None

    def search(self, query: str) -> list[str]:
        """Return the top-50 ASINs for ``query``."""
        return self.index.search(query)

    def option_name_of(self, value: str) -> str | None:
        """Return the option name a value most often belongs to in this catalogue."""
        return self._option_name_of.get(value)

    def option_counts(self) -> dict[str, Counter[str]]:
        """Option name → how many products offer each value."""
        out: dict[str, Counter[str]] = {}
        for p in self.products:
            for name, values in p.options.items():
                out.setdefault(name, Counter()).update(values)
        return out

    def attribute_counts(self) -> Counter[str]:
        """Product attribute → how many products list it."""
        return count_attributes(self.products)


def count_attributes(products: Iterable[Product]) -> Counter[str]:
    """Product attribute → how many of ``products`` list it."""
    out: Counter[str] = Counter()
    for p in products:
        out.update(p.attributes)
    return out


def page_count(total: int) -> int:
    """Return the number of result pages for ``total`` hits (at least 1)."""
    return max(1, -(-total // PAGE_SIZE))
