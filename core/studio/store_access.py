"""How a page opens the store (the studio's one source of truth)."""

from __future__ import annotations

from pathlib import Path

from core.paths import default_store_path
from core.store import Store

__all__ = ["Store", "open_store"]


def open_store(path: Path | None = None) -> Store:
    """Open (creating on first use) the store at ``path`` (the configured default when None)."""
    return Store.open(path or default_store_path())
