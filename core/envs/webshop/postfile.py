"""The memory-mapped postings file next to a catalogue file: BM25 contributions, ready to add.

The catalogue file's ``post`` table is the truth (per term: the product rows holding it and the
term counts). Scoring straight from it means copying every posting list out of SQLite and
recomputing ``tf·(k1+1)/(tf+norm)`` per query, which at WebShop's full size (≈100M postings) is
most of a query's time. This module derives, once, a flat file ``<catalogue>.postings`` that a
search maps read-only (the OS page cache shares it between processes):

* per term: its rows (``int32``, ascending) and each row's finished BM25 contribution
  ``idf·tf·(k1+1)/(tf + k1·(1−b+b·dl/avgdl))`` as ``float32`` (idf and avgdl are fixed by the
  catalogue), plus the largest contribution (the term's MaxScore bound);
* a term directory sorted by a 64-bit BLAKE2b hash of the term, searched by bisection, so a
  lookup reads a few pages and the SQLite file is never written after its import.

Layout (little-endian): a 128-byte header (magic, version, documents, terms, postings, the
catalogue's content hash), then ``hash u64[T]``, ``offset i64[T]``, ``df i64[T]``,
``bound f64[T]``, ``rows i32[P]``, ``contribution f32[P]``.

The file is rebuilt whenever it is missing or its header does not match the catalogue (another
content hash, size or format version); it is written to a temporary name and renamed, under a
lock, so concurrent openers never see half a file. A folder that cannot be written gets an
anonymous temporary file instead.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import mmap
import os
import sqlite3
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import ConfigError

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
MAGIC = b"DBWSPOST"
VERSION = 1
HEADER = struct.Struct("<8sIIQQQ64s")
HEADER_SIZE = 128
SUFFIX = ".postings"


def term_hash(term: str) -> int:
    """The 64-bit directory key of ``term``."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")


def idf(n_docs: int, df: int) -> float:
    """FTS5's BM25 idf, floored: ``log((N - df + 0.5) / (df + 0.5))``, at least 1e-6."""
    return max(IDF_FLOOR, math.log((n_docs - df + 0.5) / (df + 0.5)))


def contributions(idf_t: float, tfs: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """One term's BM25 contribution for each posting (``norm`` already gathered per row)."""
    tf = tfs.astype(np.float64)
    out: np.ndarray = (idf_t * tf * (K1 + 1.0) / (tf + norm)).astype(np.float32)
    return out


def doc_norms(lengths: np.ndarray) -> np.ndarray:
    """``k1·(1 − b + b·dl/avgdl)`` of every document."""
    dl = lengths.astype(np.float64)
    avg = float(dl.mean()) if len(dl) else 1.0
    return K1 * (1.0 - B + B * dl / max(avg, 1e-9))


@dataclass(frozen=True)
class TermList:
    """One term's postings: rows ascending, their contributions, and the largest of them."""

    term: str
    rows: np.ndarray
    weights: np.ndarray
    bound: float

    @property
    def df(self) -> int:
        """How many products hold the term."""
        return len(self.rows)


class PostingsFile:
    """A read-only map of a postings file (see the module docstring)."""

    def __init__(self, path: Path | None, fd: int | None = None) -> None:
        """Map the postings file at ``path`` (or an open descriptor ``fd``)."""
        self.path = path
        if fd is None:
            assert path is not None
            fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            if size < HEADER_SIZE:
                raise ConfigError("postings file is truncated", file=path)
            self._map = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        self._buf = np.frombuffer(self._map, dtype=np.uint8)
        head = HEADER.unpack(self._map[: HEADER.size])
        magic, version, _pad, n_docs, n_terms, n_post, chash = head
        if magic != MAGIC:
            raise ConfigError("not a postings file", file=path)
        self.version = int(version)
        self.n_docs, self.n_terms, self.n_postings = int(n_docs), int(n_terms), int(n_post)
        self.content_hash = chash.rstrip(b"\0").decode("ascii", "replace")
        if size != expected_size(self.n_terms, self.n_postings):
            raise ConfigError("postings file has the wrong size", file=path)
        t, p = self.n_terms, self.n_postings
        o = HEADER_SIZE
        self.hashes = self._view(o, np.uint64, t)
        self.offsets = self._view(o + 8 * t, np.int64, t)
        self.dfs = self._view(o + 16 * t, np.int64, t)
        self.bounds = self._view(o + 24 * t, np.float64, t)
        self.rows = self._view(o + 32 * t, np.int32, p)
        self.weights = self._view(o + 32 * t + 4 * p, np.float32, p)

    def _view(self, offset: int, dtype: type, count: int) -> np.ndarray:
        width = np.dtype(dtype).itemsize
        return self._buf[offset : offset + width * count].view(dtype)

    def matches(self, n_docs: int, content_hash: str) -> bool:
        """Whether this file was derived from a catalogue of this size and content hash."""
        return (
            self.version == VERSION
            and self.n_docs == n_docs
            and self.content_hash == content_hash[:64]
        )

    def lookup(self, term: str) -> TermList | None:
        """The postings of ``term`` (None when no product holds it)."""
        h = np.uint64(term_hash(term))
        i = int(np.searchsorted(self.hashes, h))
        if i >= self.n_terms or self.hashes[i] != h:
            return None
        off, df = int(self.offsets[i]), int(self.dfs[i])
        return TermList(
            term,
            self.rows[off : off + df],
            self.weights[off : off + df],
            float(self.bounds[i]),
        )


def expected_size(n_terms: int, n_postings: int) -> int:
    """The byte size of a postings file with these counts."""
    return HEADER_SIZE + 32 * n_terms + 8 * n_postings


def postings_path(db_path: Path) -> Path:
    """Where the postings file of the catalogue file ``db_path`` lives."""
    return db_path.with_name(db_path.name + SUFFIX)


def build(conn: sqlite3.Connection, out: Path | int, n_docs: int, content_hash: str) -> None:
    """Derive a postings file from the ``post`` table and document lengths of ``conn``.

    Args:
        conn: A connection to a finished (or just indexed) catalogue file.
        out: The path to write, or an open writable descriptor.
        n_docs: The catalogue's number of products.
        content_hash: The catalogue's content hash (written into the header).

    Raises:
        ConfigError: the catalogue has no document lengths, or two terms share a hash.
    """
    got = conn.execute("SELECT data FROM blobs WHERE name='doclen'").fetchone()
    if got is None:
        raise ConfigError("catalogue file has no document lengths (import it again)")
    lengths = np.frombuffer(bytes(got[0]), dtype=np.uint32)
    if len(lengths) != n_docs:
        raise ConfigError("catalogue file's document lengths do not match its size")
    norm = doc_norms(lengths)
    n_terms, n_post = conn.execute("SELECT count(*), coalesce(sum(df), 0) FROM post").fetchone()
    n_terms, n_post = int(n_terms), int(n_post)
    hashes = np.empty(n_terms, dtype=np.uint64)
    offsets = np.empty(n_terms, dtype=np.int64)
    dfs = np.empty(n_terms, dtype=np.int64)
    bounds = np.empty(n_terms, dtype=np.float64)
    fh = open(out, "w+b", closefd=not isinstance(out, int))  # noqa: SIM115 - closed below
    try:
        fh.truncate(expected_size(n_terms, n_post))
        base_r = HEADER_SIZE + 32 * n_terms
        base_w = base_r + 4 * n_post
        off = 0
        i = 0
        for term, rids_b, tfs_b in conn.execute("SELECT term, rids, tfs FROM post"):
            rids = np.frombuffer(bytes(rids_b), dtype=np.int32)
            tfs = np.frombuffer(bytes(tfs_b), dtype=np.uint16)
            df = len(rids)
            w = contributions(idf(n_docs, df), tfs, norm[rids])
            fh.seek(base_r + 4 * off)
            fh.write(rids.tobytes())
            fh.seek(base_w + 4 * off)
            fh.write(w.tobytes())
            hashes[i] = term_hash(str(term))
            offsets[i], dfs[i] = off, df
            bounds[i] = float(w.max()) if df else 0.0
            off += df
            i += 1
        if i != n_terms or off != n_post:
            raise ConfigError("catalogue postings changed while being read")
        order = np.argsort(hashes, kind="stable")
        hashes, offsets, dfs, bounds = hashes[order], offsets[order], dfs[order], bounds[order]
        if n_terms > 1 and bool(np.any(hashes[1:] == hashes[:-1])):
            raise ConfigError("two search terms share a 64-bit hash (please report this)")
        fh.seek(HEADER_SIZE)
        for arr in (hashes, offsets, dfs, bounds):
            fh.write(arr.tobytes())
        fh.seek(0)
        head = HEADER.pack(
            MAGIC, VERSION, 0, n_docs, n_terms, n_post, content_hash[:64].encode("ascii")
        )
        fh.write(head.ljust(HEADER_SIZE, b"\0"))
        fh.flush()
    finally:
        fh.close()


Connect = Callable[[], sqlite3.Connection]


def open_for(db_path: Path, connect: Connect, n_docs: int, content_hash: str) -> PostingsFile:
    """Map the postings file of ``db_path``, building it first when missing or stale.

    ``connect`` returns a read connection to the catalogue (used only to build the file).
    """
    path = postings_path(db_path)
    current = _try_open(path, n_docs, content_hash)
    if current is not None:
        return current
    try:
        lock = db_path.with_name(db_path.name + SUFFIX + ".lock")
        lock_fd = os.open(lock, os.O_CREAT | os.O_RDWR)
    except OSError:
        return _anonymous(connect, n_docs, content_hash)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        current = _try_open(path, n_docs, content_hash)  # another process may have built it
        if current is not None:
            return current
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        try:
            build(connect(), tmp, n_docs, content_hash)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, path)
        return PostingsFile(path)
    finally:
        fcntl.flock(lock_fd, fcntl.LOCK_UN)
        os.close(lock_fd)


def _try_open(path: Path, n_docs: int, content_hash: str) -> PostingsFile | None:
    if not path.is_file():
        return None
    try:
        pf = PostingsFile(path)
    except ConfigError:
        return None
    return pf if pf.matches(n_docs, content_hash) else None


def _anonymous(connect: Connect, n_docs: int, content_hash: str) -> PostingsFile:
    """Build into an unlinked temporary file (the catalogue's folder is read-only)."""
    fd, name = tempfile.mkstemp(prefix="driftbench-postings-")
    os.unlink(name)
    build(connect(), fd, n_docs, content_hash)
    return PostingsFile(None, fd)
