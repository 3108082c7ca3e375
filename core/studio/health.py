"""Store health for the Data page and ``doctor``: integrity, sizes, what is loaded.

Every part is read on its own, so a damaged file still gets a health report: the failed
``PRAGMA quick_check`` (its problems listed) and whatever else could be read.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from core.store import Store
from core.store.integrity import describe_sqlite_error, quick_check


def store_health(store: Store) -> dict[str, Any]:
    """Integrity check (``integrity``: ``ok`` or ``FAILED``, ``problems``), sizes and counts."""
    conn = store.conn
    problems = quick_check(conn)
    ok = problems == ["ok"]
    wal = store.path.with_name(store.path.name + "-wal")
    out: dict[str, Any] = {
        "path": str(store.path),
        "integrity": "ok" if ok else "FAILED",
        "problems": [] if ok else problems,
        "size_mb": _mb(store.path),
        "wal_mb": _mb(wal),
        "schema_version": None,
        "journal_mode": None,
        "counts": {},
        "worlds": [],
    }
    for key, read in (
        ("schema_version", store.schema_version),
        ("journal_mode", lambda: conn.execute("PRAGMA journal_mode").fetchone()[0]),
        ("counts", store.counts),
        ("worlds", store.list_worlds),
    ):
        try:
            out[key] = read()
        except sqlite3.DatabaseError as exc:
            out["integrity"] = "FAILED"
            out["problems"].append(f"reading {key}: {describe_sqlite_error(store.path, exc)}")
    return out


def _mb(path: Path) -> float:
    return round(path.stat().st_size / 2**20, 2) if path.exists() else 0.0


def store_problem_text(path: Path | str, exc: BaseException) -> str:
    """What the studio shows instead of a page when the store cannot be used."""
    detail = describe_sqlite_error(path, exc) if isinstance(exc, sqlite3.Error) else str(exc)
    return (
        "The studio cannot use its store file, so no page can be shown.\n\n"
        f"**What is wrong:** {detail}\n\n"
        "**What to do:** ask whoever runs the studio to run `driftbench doctor` on the "
        "server; it names the failed check. Nothing was written to the file."
    )
