"""A catalogue on disk: one SQLite file holding products, goals and the FTS5 BM25 index.

At WebShop's full size (≈1.18M products) the catalogue cannot live in memory as Python
objects, so the streaming importer (:mod:`core.envs.webshop.stream`) writes this file and a
world reads it lazily: a product is decoded only when a page shows it (with an LRU of recently
seen ones), a cluster only when an intent's ground truth needs it.

Tables: ``meta`` (key/value: import checkpoint, counts, content hash), ``attrs`` and ``human``
(the annotation files while importing), ``products`` (``rid`` = file order, which is also the
search tie-break order; ``akey`` = lower-cased ASIN; ``dl`` = indexed length; ``body`` = the
Product JSON), ``optcount`` (how often a value appears under an option name), ``attrcount``
(how many products list an attribute; trusted when meta ``attrcount`` is 1), ``goals``, and the
BM25 postings of :mod:`core.envs.webshop.postings` (``seg`` while importing, then ``post`` and
the document lengths in ``blobs``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import overload

from core.envs.webshop.catalogue import count_attributes
from core.envs.webshop.models import Goal, Product
from core.envs.webshop.postings import PostingsIndex
from core.envs.webshop.search import SEARCH_RETURN_N
from core.errors import ConfigError

DB_FORMAT = "driftbench-webshop-db"
"""Marker of a stored world payload that points at a catalogue file instead of inlining it."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attrs(asin TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS human(
    asin TEXT NOT NULL, pos INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY(asin, pos)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS products(
    rid INTEGER PRIMARY KEY, asin TEXT NOT NULL UNIQUE, akey TEXT NOT NULL, query TEXT NOT NULL,
    dl INTEGER NOT NULL, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS products_akey ON products(akey, rid);
CREATE INDEX IF NOT EXISTS products_query ON products(query, rid);
CREATE TABLE IF NOT EXISTS optcount(
    value TEXT NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(value, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS attrcount(attr TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS goals(
    pos INTEGER PRIMARY KEY, goal_id TEXT NOT NULL, body TEXT NOT NULL
);
"""  # + postings.POSTINGS_SCHEMA

CLUSTER_CACHE = 8
"""Decoded clusters kept per catalogue (ground truth of intents reads whole clusters)."""

PRODUCT_CACHE = 20_000
"""Decoded products kept per catalogue (pages and rewards revisit the same few)."""


class ShopDB:
    """A read-only connection to a catalogue file, safe across threads and forks."""

    def __init__(self, path: Path) -> None:
        """Open ``path`` (ConfigError when it is missing or not a finished import)."""
        self.path = Path(path)
        if not self.path.is_file():
            raise ConfigError("no such catalogue file", file=self.path)
        self._lock = threading.RLock()
        self._pid = -1
        self._conn: sqlite3.Connection | None = None
        if self.meta("stage") != "done":
            raise ConfigError("catalogue import is not finished (run it again)", file=self.path)

    def conn(self) -> sqlite3.Connection:
        """The process's connection (reopened after a fork)."""
        if self._conn is None or self._pid != os.getpid():
            try:
                conn = sqlite3.connect(
                    f"file:{self.path}?mode=ro", uri=True, check_same_thread=False
                )
                conn.execute("PRAGMA query_only=1")
                conn.execute("PRAGMA cache_size=-65536")  # 64 MB page cache
                conn.execute("PRAGMA mmap_size=268435456")
            except sqlite3.Error as exc:
                raise ConfigError(f"cannot open catalogue: {exc}", file=self.path) from exc
            self._conn = conn
            self._pid = os.getpid()
        return self._conn

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        """Run one read query under the lock."""
        with self._lock:
            try:
                return self.conn().execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise ConfigError(f"broken catalogue file: {exc}", file=self.path) from exc

    def meta(self, key: str) -> str | None:
        """One ``meta`` value (None when unset)."""
        rows = self.query("SELECT value FROM meta WHERE key=?", (key,))
        return str(rows[0][0]) if rows else None

    def goals(self) -> list[Goal]:
        """Every goal in its stored order."""
        rows = self.query("SELECT body FROM goals ORDER BY pos")
        return [Goal.model_validate_json(str(r[0])) for r in rows]


class _Products(Sequence[Product]):
    """The catalogue's products in file order, decoded on demand."""

    def __init__(self, cat: DiskCatalogue) -> None:
        self._cat = cat

    def __len__(self) -> int:
        return self._cat.size

    @overload
    def __getitem__(self, i: int) -> Product: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Product]: ...
    def __getitem__(self, i: int | slice) -> Product | Sequence[Product]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        rows = self._cat.db.query("SELECT body FROM products WHERE rid=?", (i,))
        if not rows:
            raise IndexError(i)
        return Product.model_validate_json(str(rows[0][0]))

    def __iter__(self) -> Iterator[Product]:
        last = -1
        while True:
            rows = self._cat.db.query(
                "SELECT rid, body FROM products WHERE rid>? ORDER BY rid LIMIT 2000", (last,)
            )
            if not rows:
                return
            for rid, body in rows:
                last = int(str(rid))
                yield Product.model_validate_json(str(body))


class _ByAsin(Mapping[str, Product]):
    """ASIN → product, looked up in the file (exact ASIN)."""

    def __init__(self, cat: DiskCatalogue) -> None:
        self._cat = cat

    def __getitem__(self, asin: str) -> Product:
        p = self._cat.get(asin)
        if p is None or p.asin != asin:
            raise KeyError(asin)
        return p

    def __contains__(self, asin: object) -> bool:
        return isinstance(asin, str) and asin in self._cat._exact(asin)

    def __iter__(self) -> Iterator[str]:
        return (p.asin for p in self._cat.products)

    def __len__(self) -> int:
        return self._cat.size


class _Clusters(Mapping[str, tuple[Product, ...]]):
    """Scrape query → its products in file order, read when asked for (recent ones kept)."""

    def __init__(self, cat: DiskCatalogue) -> None:
        self._cat = cat
        self._read = lru_cache(maxsize=CLUSTER_CACHE)(self._read_uncached)

    def __getitem__(self, query: str) -> tuple[Product, ...]:
        return self._read(query)

    def _read_uncached(self, query: str) -> tuple[Product, ...]:
        rows = self._cat.db.query("SELECT body FROM products WHERE query=? ORDER BY rid", (query,))
        if not rows:
            raise KeyError(query)
        return tuple(Product.model_validate_json(str(r[0])) for r in rows)

    def __iter__(self) -> Iterator[str]:
        rows = self._cat.db.query("SELECT DISTINCT query FROM products ORDER BY query")
        return (str(r[0]) for r in rows)

    def __len__(self) -> int:
        return int(str(self._cat.db.query("SELECT count(DISTINCT query) FROM products")[0][0]))


class DiskSearchIndex:
    """Search over a catalogue file: :class:`PostingsIndex` rows mapped to ASINs."""

    def __init__(self, db: ShopDB, size: int) -> None:
        """Search the products of ``db``."""
        self._db = db
        self.postings = PostingsIndex(db, size)

    def search(self, query: str, k: int = SEARCH_RETURN_N, *, cache: bool = True) -> list[str]:
        """Return the ASINs of the top ``k`` products for ``query``, best first."""
        rows = self.postings.search_rows(query, k, cache=cache)
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        got = self._db.query(f"SELECT rid, asin FROM products WHERE rid IN ({marks})", rows)
        by_rid = {int(str(r)): str(a) for r, a in got}
        return [by_rid[r] for r in rows]

    def clear_cache(self) -> None:
        """Forget cached results."""
        self.postings.clear_cache()

    def warm(self) -> None:
        """Load what the first search would."""
        self.postings.warm()

    def __len__(self) -> int:
        return len(self.postings)


class DiskCatalogue:
    """The :class:`~core.envs.webshop.catalogue.Catalogue` interface over a catalogue file."""

    def __init__(self, path: Path) -> None:
        """Open the catalogue file at ``path`` (ConfigError when it is unusable)."""
        self.db = ShopDB(path)
        self.size = int(self.db.meta("products") or 0)
        self.products: Sequence[Product] = _Products(self)
        self.by_asin: Mapping[str, Product] = _ByAsin(self)
        self.clusters: Mapping[str, tuple[Product, ...]] = _Clusters(self)
        self.index = DiskSearchIndex(self.db, self.size)
        self._get = lru_cache(maxsize=PRODUCT_CACHE)(self._get_uncached)
        self._option_name = lru_cache(maxsize=65536)(self._option_name_uncached)
        self._attr_counts: Counter[str] | None = None

    def _get_uncached(self, key: str) -> Product | None:
        rows = self.db.query("SELECT body FROM products WHERE akey=? ORDER BY rid LIMIT 1", (key,))
        return Product.model_validate_json(str(rows[0][0])) if rows else None

    def _exact(self, asin: str) -> set[str]:
        p = self._get(asin.strip().lower())
        return {p.asin} if p is not None else set()

    def get(self, asin: str) -> Product | None:
        """Return the product with ``asin`` (case-insensitive), or None."""
        return self._get(asin.strip().lower())

    def search(self, query: str) -> list[str]:
        """Return the top-50 ASINs for ``query``."""
        return self.index.search(query)

    def _option_name_uncached(self, value: str) -> str | None:
        rows = self.db.query(
            "SELECT name FROM optcount WHERE value=? ORDER BY n DESC, name LIMIT 1", (value,)
        )
        return str(rows[0][0]) if rows else None

    def option_name_of(self, value: str) -> str | None:
        """Return the option name a value most often belongs to in this catalogue."""
        return self._option_name(value)

    def option_counts(self) -> dict[str, Counter[str]]:
        """Option name → how many products offer each value."""
        out: dict[str, Counter[str]] = {}
        for value, name, n in self.db.query("SELECT value, name, n FROM optcount"):
            out.setdefault(str(name), Counter())[str(value)] += int(str(n))
        return out

    def attribute_counts(self) -> Counter[str]:
        """Product attribute → how many products list it.

        Files whose import did not count attributes from its first batch (made before the
        ``attrcount`` table existed) are counted from their products once per open catalogue.
        """
        if self._attr_counts is None:
            if self.db.meta("attrcount") == "1":  # counted from the first batch on
                rows = self.db.query("SELECT attr, n FROM attrcount")
                self._attr_counts = Counter({str(a): int(str(n)) for a, n in rows})
            else:
                self._attr_counts = count_attributes(self.products)
        return Counter(self._attr_counts)

    def __len__(self) -> int:
        return self.size
