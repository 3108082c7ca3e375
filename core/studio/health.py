"""Store health for the Data page and ``doctor``: integrity, sizes, what is loaded."""

from __future__ import annotations

from typing import Any

from core.store import Store


def store_health(store: Store) -> dict[str, Any]:
    """Return integrity-check result, file sizes, schema version, counts and worlds."""
    conn = store.conn
    check = conn.execute("PRAGMA quick_check").fetchone()[0]
    wal = store.path.with_name(store.path.name + "-wal")
    return {
        "path": str(store.path),
        "schema_version": store.schema_version(),
        "integrity": check,
        "size_mb": round(store.path.stat().st_size / 2**20, 2) if store.path.exists() else 0.0,
        "wal_mb": round(wal.stat().st_size / 2**20, 2) if wal.exists() else 0.0,
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
        "counts": store.counts(),
        "worlds": store.list_worlds(),
    }
