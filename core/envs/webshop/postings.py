"""BM25 over a catalogue file: postings built at import, searched through a mapped file.

FTS5's ``bm25()`` costs a few microseconds per matching document, so an instruction-length
query over WebShop's full catalogue (1.18M products; a common word is in a quarter of them)
takes over a second. The catalogue file therefore keeps its own postings: per term, the product
rows holding it and the term counts (``int32`` / ``uint16`` arrays, table ``post``). From them
:mod:`core.envs.webshop.postfile` derives a mapped file of finished per-posting contributions
(FTS5's parameters: k1 = 1.2, b = 0.75, idf ``log((N - df + 0.5) / (df + 0.5))`` floored at
1e-6), and :class:`PostingsIndex` returns the top-k by score, then by row (file order).

**Search** (exact MaxScore over a dense accumulator). Terms are taken rarest first. The rarest
ones (the *essential* terms) are added into a per-row ``float32`` accumulator; the others are
only looked up, by bisection, for the rows that can still make the top k. A row holding none of
the essential terms scores at most the other terms' bounds (their largest contributions) added
up, so terms are made essential until that sum is below a lower bound ``θ`` on the k-th best
score (the real score of a sample of good rows). Candidates whose partial score plus the
remaining bounds cannot reach ``θ`` are dropped after each looked-up term. The survivors are
scored afresh in float64, summing every term in one fixed order, so a row's score never depends
on which terms happened to be essential: equal scores are exactly equal and ties go to the
lower row.

Documents are :func:`search.document_text` (WebShop's indexed text: title, description, first
bullet, options) split by :func:`text.words`; queries by :func:`text.search_terms`. The one
difference from the in-memory FTS5 index is that there is no Porter stemming (``towels`` does
not match ``towel``), which documents the ranking differences between the two.

Build: each committed import batch writes its postings as one segment row per term (so a
killed import loses nothing it committed); the index stage merges segments into one row per
term. Memory stays flat: one batch's postings, then one term's list at a time.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.envs.webshop.postfile import PostingsFile, TermList, open_for
from core.envs.webshop.search import SEARCH_RETURN_N
from core.envs.webshop.text import search_terms, words

if TYPE_CHECKING:
    from core.envs.webshop.shopdb import ShopDB

SEED_POSTINGS = 20_000
SEED_SHARE = 8
"""Essential terms are first added until they hold ``max(SEED_POSTINGS, N // SEED_SHARE)``
postings (then as θ requires): adding a list is cheap, and more essential terms give a
tighter θ and fewer candidates (the fastest setting on a 1.18M-product catalogue)."""

DENSE_COST = 5.0
LOOKUP_COST = 35.0
"""Rough cost (ns) of adding one posting to the accumulator, and of looking up one candidate
by bisection: a later term is added whole when that is cheaper than looking it up."""

SAMPLE_PER_TERM = 4096
"""Rows sampled from each essential list to find good rows for the lower bound θ."""

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
        """Search the ``size`` products of ``db`` (the postings file is mapped on first use)."""
        self._db = db
        self._n = size
        self._lock = threading.Lock()
        self._file: PostingsFile | None = None
        self._cached = lru_cache(maxsize=4096)(self._search_uncached)

    def _postings(self) -> PostingsFile:
        if self._file is None:
            with self._lock:
                if self._file is None:
                    db = self._db

                    def connect() -> sqlite3.Connection:
                        return sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)

                    self._file = open_for(db.path, connect, self._n, db.meta("content_hash") or "")
        return self._file

    def term_lists(self, query: str) -> list[TermList]:
        """The postings of each distinct query term that some product holds, rarest first."""
        pf = self._postings()
        got = [t for t in (pf.lookup(w) for w in search_terms(query)) if t is not None]
        got.sort(key=lambda t: (t.df, t.term))
        return got

    def scores(self, query: str) -> dict[int, float]:
        """Every matching row's BM25 score (tests compare it with a naive implementation)."""
        lists = self.term_lists(query)
        if not lists:
            return {}
        rows = np.unique(np.concatenate([t.rows for t in lists]))
        return {int(r): float(v) for r, v in zip(rows, _exact(lists, rows), strict=True)}

    def _top(self, lists: list[TermList], k: int) -> np.ndarray:
        """The rows of the top ``k`` (best first) for the rarest-first ``lists``."""
        m = len(lists)
        bounds = np.array([t.bound for t in lists], dtype=np.float64)
        rest = np.concatenate([np.cumsum(bounds[::-1])[::-1], [0.0]])  # rest[j] = sum(bounds[j:])
        slack = 1e-6 * (m + 1) * (1.0 + float(rest[0]))  # float32 sums vs float64 scores
        acc = np.zeros(self._n, dtype=np.float32)
        j = held = 0
        seed = max(SEED_POSTINGS, self._n // SEED_SHARE)
        while j < m and (j == 0 or held < seed):
            acc[lists[j].rows] += lists[j].weights
            held += lists[j].df
            j += 1
        theta = _lower_bound(lists, acc, j, k)
        while j < m and rest[j] >= theta - slack:  # rows outside the essential lists could
            acc[lists[j].rows] += lists[j].weights  # still reach theta: one more is essential
            j += 1
            if j < m and rest[j] >= theta - slack:
                theta = max(theta, _lower_bound(lists, acc, j, k))
        floor = theta - rest[j] - slack
        cand = np.flatnonzero(acc > 0) if floor <= 0 else np.flatnonzero(acc >= floor)
        looked = np.zeros(len(cand))  # contributions of the terms looked up, per candidate
        for i in range(j, m):
            t = lists[i]
            if t.df * DENSE_COST < len(cand) * LOOKUP_COST:
                acc[t.rows] += t.weights  # cheaper to add the whole list than to look it up
            else:
                looked += _gather(t, cand)
            part = acc[cand] + looked  # a lower bound of each candidate's score
            if len(part) > k:
                theta = max(theta, float(np.partition(part, len(part) - k)[len(part) - k]) - slack)
            keep = part >= theta - rest[i + 1] - slack
            cand, looked = cand[keep], looked[keep]
        part = acc[cand] + looked  # complete now (up to float32 rounding)
        if len(cand) > k:
            kth = np.partition(part, len(part) - k)[len(part) - k]
            keep = part >= kth - 2 * slack
            cand = cand[keep]
        scores = _exact(lists, cand)
        if len(cand) > k:
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth
            cand, scores = cand[keep], scores[keep]
        return cand[np.lexsort((cand, -scores))[:k]]

    def _search_uncached(self, query: str, k: int) -> tuple[int, ...]:
        lists = self.term_lists(query)
        if not lists or k <= 0:
            return ()
        return tuple(int(r) for r in self._top(lists, k))

    def search_rows(self, query: str, k: int = SEARCH_RETURN_N, *, cache: bool = True) -> list[int]:
        """Return the row ids of the top ``k`` products for ``query``, best first."""
        hits = self._cached(query, k) if cache else self._search_uncached(query, k)
        return list(hits)

    def clear_cache(self) -> None:
        """Forget cached query results (benchmarks measure cold searches)."""
        self._cached.cache_clear()

    def warm(self) -> None:
        """Map the postings file now (building it when it is missing)."""
        self._postings()

    def __len__(self) -> int:
        return self._n


def _gather(t: TermList, rows: np.ndarray) -> np.ndarray:
    """``t``'s contribution at each of ``rows`` (ascending), 0.0 where it is absent."""
    if len(rows) == 0:
        return np.zeros(0)
    rows = rows.astype(np.int32, copy=False)  # a wider dtype would copy the whole list
    pos = np.minimum(np.searchsorted(t.rows, rows), t.df - 1)
    hit = t.rows[pos] == rows
    return np.where(hit, t.weights[pos].astype(np.float64), 0.0)


def _exact(lists: list[TermList], rows: np.ndarray) -> np.ndarray:
    """Final scores of ``rows``: every term's contribution in float64, in the lists' order."""
    total = np.zeros(len(rows))
    for t in lists:
        total += _gather(t, rows)
    return total


def _lower_bound(lists: list[TermList], acc: np.ndarray, j: int, k: int) -> float:
    """A lower bound on the k-th best score: the k-th best real score among promising rows.

    Promising rows are the best partial scores in a strided sample of the ``j`` essential
    lists. Any k real rows give a valid bound; good ones give a tight one. Returns ``-inf``
    when the sample holds fewer than ``k`` rows.
    """
    sample = np.concatenate([t.rows[:: max(1, t.df // SAMPLE_PER_TERM)] for t in lists[:j]])
    # a row is in each list at most once, so the best k*j entries hold >= k distinct rows
    want = min(len(sample), k * j)
    rows = np.unique(sample[np.argpartition(acc[sample], len(sample) - want)[len(sample) - want :]])
    if len(rows) < k:
        return float("-inf")
    scores = _exact(lists, rows)
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])
