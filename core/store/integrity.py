"""Is the store file a healthy SQLite database? Cheap open-time checks and the full check.

:func:`check_file` runs before any connection is made (``stat`` only: a directory or an
unreadable path); the first statements every open runs (``PRAGMA journal_mode``, the schema
version read) make SQLite judge the header, and their errors become one
:class:`StoreCorruptError` line naming the file: not a SQLite database (garbage, a text file,
a flipped magic string) or corrupt/truncated (SQLite compares the header's page count with the
file's size). A page flipped in the middle of the file passes those checks;
``PRAGMA quick_check`` (:func:`quick_check`, what ``driftbench doctor`` and Data → Store
health run) finds it.

:func:`describe_sqlite_error` turns the ``sqlite3`` errors a store can raise later (corrupt
pages, a full disk, a locked file) into one line that says which.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from core.errors import DriftBenchError

MIN_PAGE_BYTES = 512
"""The smallest SQLite page; a database file's size is always a multiple of it."""
QUICK_CHECK_MAX_ERRORS = 20
"""At most this many problems are listed by :func:`quick_check`."""


class StoreCorruptError(DriftBenchError):
    """The store file is not a usable SQLite database (garbage, truncated, corrupt pages)."""


class StoreFullError(DriftBenchError):
    """A write failed because the disk (or the database's size limit) is full."""


def _hint(path: Path | str) -> str:
    return f"; restore it from a backup, or move it aside and run 'driftbench --store {path} init'"


def check_file(path: Path) -> None:
    """Refuse a store path that cannot be a store file, before SQLite touches it.

    Only ``stat`` is used: this process may already hold SQLite connections to the file, and
    opening and closing another descriptor of it would drop their POSIX locks (SQLite's
    documented pitfall), so the header itself is judged by SQLite on the first read
    (:func:`describe_sqlite_error` names what it found). A missing file passes.

    Raises:
        StoreCorruptError: A directory, or a file that cannot be read.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreCorruptError(f"{path}: cannot read the store file ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreCorruptError(f"{path}: is a directory, not a store file (give a .db file)")
    if not stat.S_ISREG(st.st_mode):
        raise StoreCorruptError(f"{path}: not a regular file, so it cannot be a store")
    if st.st_size and not os.access(path, os.R_OK):
        raise StoreCorruptError(f"{path}: the store file is not readable by this user")
    if st.st_size % MIN_PAGE_BYTES:  # every SQLite file is whole pages, each 512·2^k bytes
        raise StoreCorruptError(
            f"{path}: not a SQLite database or truncated ({st.st_size} bytes is not a whole "
            f"number of pages){_hint(path)}"
        )


def quick_check(conn: sqlite3.Connection) -> list[str]:
    """``PRAGMA quick_check``: ``["ok"]`` for a healthy file, else the problems it found.

    A file too damaged to run the check at all reports the error as its one problem.
    """
    try:
        rows = conn.execute(f"PRAGMA quick_check({QUICK_CHECK_MAX_ERRORS})").fetchall()
    except sqlite3.DatabaseError as exc:
        return [f"check failed: {exc}"]
    return [str(r[0]) for r in rows] or ["ok"]


def is_full_error(exc: BaseException) -> bool:
    """Whether a sqlite3 error means the disk (or the size limit) is full."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF == 13:  # SQLITE_FULL
        return True
    text = str(exc).lower()
    return "disk is full" in text or "no space left" in text


def describe_sqlite_error(path: Path | str, exc: BaseException) -> str:
    """One line for a sqlite3 error raised while using the store at ``path``."""
    text = str(exc)
    low = text.lower()
    if is_full_error(exc):
        return (
            f"{path}: the disk is full (SQLite: {text}); free some space and run the command "
            "again — the failed write was rolled back"
        )
    if "not a database" in low:
        return f"{path}: not a SQLite database (SQLite: {text}){_hint(path)}"
    if "malformed" in low or "corrupt" in low:
        return f"{path}: the store file is corrupt or truncated (SQLite: {text}){_hint(path)}"
    if "locked" in low or "busy" in low:
        return f"{path}: the store is locked by another process (SQLite: {text}); try again"
    if "readonly" in low or "read-only" in low:
        return f"{path}: the store is read-only (SQLite: {text})"
    if "unable to open" in low:
        return f"{path}: cannot open the store file (SQLite: {text})"
    return f"{path}: store error (SQLite: {text})"
