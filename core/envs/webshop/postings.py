"""BM25 over a catalogue file: postings as numpy blobs, scored vectorised (exact top-k).

FTS5's ``bm25()`` costs a few microseconds per matching document, so an instruction-length
query over WebShop's full catalogue (1.18M products; a common word is in a quarter of them)
takes over a second. This index stores, per term, the product rows holding it and the term
counts (``int32`` / ``uint16`` arrays), plus every document's length, and scores a query with
numpy: exact BM25 for every matching document (k1 = 1.2, b = 0.75 and the idf
``log((N - df + 0.5) / (df + 0.5))`` floored at 1e-6, as FTS5), top-k by score then row.

Documents are :func:`search.document_text` (WebShop's indexed text: title, description, first
bullet, options) split by :func:`text.words`; queries by :func:`text.search_terms`. The one
difference from the in-memory FTS5 index is that there is no Porter stemming (``towels`` does
not match ``towel``), which documents the ranking differences between the two.

Build: each committed import batch writes its postings as one segment row per term (so a
killed import loses nothing it committed); the index stage merges segments into one row per
term. Memory stays flat: one batch's postings, then one term's list at a time.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.envs.webshop.search import SEARCH_RETURN_N
from core.envs.webshop.text import search_terms, words

if TYPE_CHECKING:
    from core.envs.webshop.shopdb import ShopDB

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
DIRECT_MAX = 150_000
"""Up to this many postings a query scores every matching row; above it MaxScore prunes."""

POSTINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS seg(
    term TEXT NOT NULL, batch INTEGER NOT NULL, rids BLOB NOT NULL, tfs BLOB NOT NULL,
    PRIMARY KEY(term, batch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS post(
    term TEXT PRIMARY KEY, df INTEGER NOT NULL, rids BLOB NOT NULL, tfs BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blobs(name TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
"""


def tokens(text: str) -> tuple[int, Counter[str]]:
    """(document length, term counts) of an indexed document."""
    toks = words(text)
    return len(toks), Counter(toks)


def segment_rows(
    batch: int, docs: Iterable[tuple[int, Counter[str]]]
) -> list[tuple[str, int, bytes, bytes]]:
    """One batch's postings as ``seg`` rows ``(term, batch, rids, tfs)``."""
    rids: dict[str, list[int]] = {}
    tfs: dict[str, list[int]] = {}
    for rid, counts in docs:
        for term, n in counts.items():
            got = rids.get(term)
            if got is None:
                rids[term] = [rid]
                tfs[term] = [n]
            else:
                got.append(rid)
                tfs[term].append(n)
    return [
        (
            t,
            batch,
            np.asarray(r, dtype=np.int32).tobytes(),
            np.minimum(np.asarray(tfs[t], dtype=np.int64), 65535).astype(np.uint16).tobytes(),
        )
        for t, r in rids.items()
    ]


def merge_segments(conn: sqlite3.Connection, doc_lengths: np.ndarray) -> int:
    """Merge ``seg`` into ``post`` (one row per term) and store the document lengths.

    Runs inside the caller's transaction. Returns the number of terms.
    """
    conn.execute("DELETE FROM post")
    terms = 0
    cur_term: str | None = None
    parts_r: list[bytes] = []
    parts_f: list[bytes] = []
    out: list[tuple[str, int, bytes, bytes]] = []

    def flush() -> None:
        nonlocal terms
        if cur_term is None:
            return
        r = b"".join(parts_r)
        out.append((cur_term, len(r) // 4, r, b"".join(parts_f)))
        terms += 1
        if len(out) >= 5000:
            conn.executemany("INSERT INTO post VALUES (?, ?, ?, ?)", out)
            out.clear()

    for term, rids, tfs in conn.execute("SELECT term, rids, tfs FROM seg ORDER BY term, batch"):
        if term != cur_term:
            flush()
            cur_term, parts_r, parts_f = term, [], []
        parts_r.append(rids)
        parts_f.append(tfs)
    flush()
    if out:
        conn.executemany("INSERT INTO post VALUES (?, ?, ?, ?)", out)
    conn.execute(
        "INSERT OR REPLACE INTO blobs VALUES ('doclen', ?)",
        (np.asarray(doc_lengths, dtype=np.uint32).tobytes(),),
    )
    conn.execute("DELETE FROM seg")
    return terms


class PostingsIndex:
    """Exact BM25 top-k over a catalogue file's postings (thread-safe, fork-safe via ShopDB)."""

    def __init__(self, db: ShopDB, size: int) -> None:
        """Read the document lengths of ``db`` (``size`` products)."""
        self._db = db
        self._n = size
        self._lock = threading.Lock()
        self._dl: np.ndarray | None = None
        self._norm: np.ndarray | None = None
        self._cached = lru_cache(maxsize=4096)(self._search_uncached)
        self._lists = lru_cache(maxsize=256)(self._postings)

    def _lengths(self) -> np.ndarray:
        if self._norm is None:
            rows = self._db.query("SELECT data FROM blobs WHERE name='doclen'")
            dl = np.frombuffer(bytes(rows[0][0]), dtype=np.uint32).astype(np.float64)  # type: ignore[call-overload]
            avg = float(dl.mean()) if len(dl) else 1.0
            self._dl = dl
            self._norm = K1 * (1.0 - B + B * dl / max(avg, 1e-9))
        return self._norm

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        rows = self._db.query("SELECT rids, tfs FROM post WHERE term=?", (term,))
        if not rows:
            return None
        rids = np.frombuffer(bytes(rows[0][0]), dtype=np.int32)  # type: ignore[call-overload]
        tfs = np.frombuffer(bytes(rows[0][1]), dtype=np.uint16).astype(np.float64)  # type: ignore[call-overload]
        return rids, tfs

    def scores(self, query: str) -> dict[int, float]:
        """Every matching row's BM25 score (tests compare it with a naive implementation)."""
        rows, scores = self._candidates(self._term_lists(search_terms(query)), 0)
        return {int(r): float(v) for r, v in zip(rows, scores, strict=True)}

    def _term_lists(self, terms: list[str]) -> list[tuple[float, np.ndarray, np.ndarray]]:
        """(idf, rows, term counts) of each query term found, rarest first."""
        n = self._n
        out = []
        for t in terms:
            got = self._lists(t)
            if got is None:
                continue
            rids, tfs = got
            df = len(rids)
            out.append((max(IDF_FLOOR, math.log((n - df + 0.5) / (df + 0.5))), rids, tfs))
        out.sort(key=lambda x: len(x[1]))
        return out

    def _candidates(
        self, lists: list[tuple[float, np.ndarray, np.ndarray]], k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows (and their full BM25 scores) that surely contain the top ``k`` (0 = all rows).

        MaxScore pruning: score the rows holding one of the ``j`` rarest terms, adding the
        other terms' contributions by binary search in their (row-sorted) lists. A row holding
        none of the ``j`` terms scores at most the sum of the others' upper bounds
        ``idf * (k1 + 1)``; once the k-th best candidate beats that, the top k is among the
        candidates. ``j`` doubles until it does (at worst every term is scored).
        """
        norm = self._lengths()
        m = len(lists)
        if m == 0:
            return np.empty(0, dtype=np.int64), np.empty(0)
        if k == 0 or sum(len(r) for _, r, _ in lists) <= DIRECT_MAX:
            return self._direct(lists)
        bounds = [idf * (K1 + 1.0) for idf, _, _ in lists]
        j = 1
        while True:
            rest = sum(bounds[j:])
            parts_r = [r for _, r, _ in lists[:j]]
            parts_s = [idf * f * (K1 + 1.0) / (f + norm[r]) for idf, r, f in lists[:j]]
            r = np.concatenate(parts_r)
            sc = np.concatenate(parts_s)
            order = np.argsort(r, kind="stable")
            r, sc = r[order], sc[order]
            first = np.ones(len(r), dtype=bool)
            first[1:] = r[1:] != r[:-1]
            starts = np.flatnonzero(first)
            rows = r[starts]
            full = np.add.reduceat(sc, starts)
            for idf, other, f in lists[j:]:
                pos = np.minimum(np.searchsorted(other, rows), len(other) - 1)
                hit = other[pos] == rows
                tf = np.where(hit, f[pos], 0.0)
                full = full + idf * tf * (K1 + 1.0) / (tf + norm[rows])
            if j >= m:
                return rows, full
            if len(rows) >= k and np.partition(full, len(full) - k)[len(full) - k] > rest:
                return rows, full
            j = min(m, j * 2)

    def _direct(
        self, lists: list[tuple[float, np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Score every matching row (one scatter-add over all postings)."""
        norm = self._lengths()
        if len(lists) == 1:
            idf, r, f = lists[0]
            return r, idf * f * (K1 + 1.0) / (f + norm[r])
        r = np.concatenate([r for _, r, _ in lists])
        sc = np.concatenate([idf * f * (K1 + 1.0) / (f + norm[r]) for idf, r, f in lists])
        acc = np.bincount(r, weights=sc, minlength=self._n)
        rows = np.flatnonzero(acc)  # every matched row scores > 0 (idf >= 1e-6, tf >= 1)
        return rows, acc[rows]

    def _search_uncached(self, query: str, k: int) -> tuple[int, ...]:
        terms = search_terms(query)
        if not terms:
            return ()
        with self._lock:
            rows, scores = self._candidates(self._term_lists(terms), k)
        if len(rows) == 0:
            return ()
        # pruned and direct scoring add the same terms in different orders: equal scores can
        # differ in the last bits, so ties are decided on scores rounded to 1e-9 (then by row)
        scores = np.round(scores, 9)
        if len(rows) > k:
            # keep every row scoring at least the k-th best (ties), then order by (-score, row)
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))[:k]
        return tuple(int(r) for r in rows[order])

    def search_rows(self, query: str, k: int = SEARCH_RETURN_N, *, cache: bool = True) -> list[int]:
        """Return the row ids of the top ``k`` products for ``query``, best first."""
        hits = self._cached(query, k) if cache else self._search_uncached(query, k)
        return list(hits)

    def clear_cache(self) -> None:
        """Forget cached query results and posting lists (benchmarks measure cold searches)."""
        self._cached.cache_clear()
        self._lists.cache_clear()

    def warm(self) -> None:
        """Load the document lengths now."""
        self._lengths()

    def __len__(self) -> int:
        return self._n
