"""The store's schema is a persisted format: a fresh file and a migrated v1 file must match the
golden dump byte for byte (splitting or moving the DDL must not change one character)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.store import _SCHEMA_V1, STORE_SCHEMA_VERSION, Store, _statements

GOLDEN = Path(__file__).parent / "golden" / f"schema_v{STORE_SCHEMA_VERSION}.sql"


def schema_dump(conn: sqlite3.Connection) -> str:
    """Every table, index and trigger statement as SQLite stores it, then the meta rows."""
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "ORDER BY type, name"
    ).fetchall()
    out = "".join(f"-- {t} {n} ON {tb}\n{sql};\n\n" for t, n, tb, sql in rows)
    meta = conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    return out + "".join(f"-- meta {k} = {v}\n" for k, v in meta)


def test_fresh_store_schema_matches_the_golden(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    assert schema_dump(store.conn) == GOLDEN.read_text(encoding="utf-8")


def test_migrated_v1_store_has_the_same_schema(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in _statements(_SCHEMA_V1):
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.commit()
    conn.close()
    store = Store.open(path)
    assert schema_dump(store.conn) == GOLDEN.read_text(encoding="utf-8")
