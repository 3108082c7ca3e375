"""BM25 product search over an in-memory SQLite FTS5 index.

WebShop indexes ``lower(Title + ' ' + Description + ' ' + BulletPoints[0] + ' ' + options
text)`` with Lucene (English analyzer, BM25) and returns the top 50. Here the same document is
indexed by FTS5 with the ``porter unicode61`` tokenizer; the query is sanitised to its
non-stop-word terms, each quoted (so ``-``, ``:``, quotes and FTS5 keywords are inert) and
joined with ``OR`` (Lucene's bag-of-words semantics; FTS5's default is AND). FTS5's ``bm25()``
uses k1=1.2, b=0.75 rather than pyserini's 0.9/0.4, so rankings are close to but not identical
with WebShop's; what the tests pin is that every goal's target is reachable.

Speed-up: FTS5 floors the idf of a term found in half or more of the documents at 1e-6 (here
``size`` and ``color``, which the options text puts in most documents), so such a term can only
reorder near-ties. A query is therefore ranked on its other terms first; when that yields the
full top k, it is returned (same top-k set as the single full query; the order may differ
only between documents whose scores differ by less than about 1e-5), otherwise the full query
runs. This halves the latency of instruction-length queries.

The index is built once per world; a lock makes a shared world safe across threads, and a
process-id check rebuilds the connection after a fork.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from functools import lru_cache

from core.envs.webshop.models import Product
from core.envs.webshop.text import search_terms

SEARCH_RETURN_N = 50
"""How many hits a search returns (WebShop's ``SEARCH_RETURN_N``)."""

PAGE_SIZE = 10
"""Results shown per page (WebShop's ``PRODUCT_WINDOW``)."""


def options_text(options: dict[str, list[str]]) -> str:
    """Render options the way WebShop's index does: ``"color: a, b, and size: c"``."""
    parts = [f"{name}: {', '.join(values)}" for name, values in options.items()]
    return ", and ".join(parts)


def document_text(product: Product) -> str:
    """Return the indexed text of one product (lower-cased)."""
    bullet = product.bullet_points[0] if product.bullet_points else ""
    return " ".join(
        [product.title, product.description, bullet, options_text(product.options)]
    ).lower()


def fts_query(query: str) -> str:
    """Turn free text into a safe FTS5 OR-query ('' when nothing searchable is left).

    >>> fts_query('red "AND" shoes: size-9')
    '"red" OR "shoes" OR "size" OR "9"'
    """
    return " OR ".join(f'"{t}"' for t in search_terms(query))


class SearchIndex:
    """An FTS5 BM25 index over a fixed product list."""

    def __init__(self, products: Sequence[Product]) -> None:
        """Index ``products`` (their order is the tie-break order)."""
        self._asins = [p.asin for p in products]
        self._docs = [document_text(p) for p in products]
        self._n = len(self._asins)
        self._lock = threading.Lock()
        self._pid = -1
        self._conn: sqlite3.Connection | None = None
        self._df: dict[str, int] = {}
        self._cached = lru_cache(maxsize=4096)(self._search_uncached)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            self._df = {}
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            conn.execute(
                "CREATE VIRTUAL TABLE docs USING fts5(contents, tokenize='porter unicode61')"
            )
            conn.executemany(
                "INSERT INTO docs(rowid, contents) VALUES (?, ?)",
                ((i, d) for i, d in enumerate(self._docs)),
            )
            # merge the b-tree segments written by the bulk insert (~20% faster queries)
            conn.execute("INSERT INTO docs(docs) VALUES ('optimize')")
            conn.commit()
            self._conn = conn
            self._pid = os.getpid()
        return self._conn

    def _run(self, conn: sqlite3.Connection, terms: list[str], k: int) -> list[int]:
        match = " OR ".join(f'"{t}"' for t in terms)
        sql = "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank, rowid LIMIT ?"
        return [r[0] for r in conn.execute(sql, (match, k)).fetchall()]

    def _doc_freq(self, conn: sqlite3.Connection, term: str) -> int:
        df = self._df.get(term)
        if df is None:
            row = conn.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (f'"{term}"',))
            df = int(row.fetchone()[0])
            if len(self._df) < 100_000:
                self._df[term] = df
        return df

    def _search_uncached(self, query: str, k: int) -> tuple[str, ...]:
        terms = search_terms(query)
        if not terms:
            return ()
        with self._lock:
            conn = self._connection()
            n = self._n
            dfs = [self._doc_freq(conn, t) for t in terms]
            # FTS5's bm25 floors the idf of a term in half or more of the documents at 1e-6,
            # so such terms only order the tail. Rank on the others first; if that already
            # fills k hits, the full query's top k are these same documents (up to 1e-5
            # score ties); otherwise fall back to the full query.
            strong = [t for t, df in zip(terms, dfs, strict=True) if 0 < 2 * df < n]
            weak = any(2 * df >= n for df in dfs)
            rows: list[int] = []
            if strong and weak:
                rows = self._run(conn, strong, k)
            if len(rows) < k:
                rows = self._run(conn, terms, k)
        return self._asins_of(rows)

    def _asins_of(self, rows: list[int]) -> tuple[str, ...]:
        return tuple(self._asins[r] for r in rows)

    def search(self, query: str, k: int = SEARCH_RETURN_N, *, cache: bool = True) -> list[str]:
        """Return the ASINs of the top ``k`` products for ``query``, best first.

        Args:
            query: Free text (anything; it is sanitised).
            k: Number of hits.
            cache: Serve repeated queries from a small LRU (pagination repeats searches).
        """
        hits = self._cached(query, k) if cache else self._search_uncached(query, k)
        return list(hits)

    def clear_cache(self) -> None:
        """Forget cached query results (benchmarks measure cold searches)."""
        self._cached.cache_clear()

    def warm(self) -> None:
        """Build the index now (otherwise it is built by the first search)."""
        with self._lock:
            self._connection()

    def __len__(self) -> int:
        return self._n
