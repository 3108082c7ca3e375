"""The Data page's imports: host worlds from a server path or an uploaded folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.store import Store


def import_world(kind: str, domain: str | None, src: Path, store: Store) -> dict[str, Any]:
    """Import a τ²-bench domain folder (``kind='tau2'``) or WebShop's item files (``webshop``).

    Raises:
        ConfigError: The files are malformed (names the file and field); nothing is stored.
    """
    if kind == "tau2":
        from core.envs.tau2 import import_domain

        return dict(import_domain(str(domain), src, store))
    from core.envs.webshop import import_webshop

    return dict(import_webshop(src, store))
