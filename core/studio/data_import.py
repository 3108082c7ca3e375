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


def import_upload(kind: str, domain: str | None, name: str, data: bytes, store: Store) -> Any:
    """Stage an uploaded ZIP, import it as :func:`import_world` does, and remove the staging.

    Raises:
        ConfigError: A refused archive or malformed files; the staged copy is removed anyway.
    """
    from core.studio.uploads import staged

    with staged(name, data) as src:
        return import_world(kind, domain, src, store)


def import_sessions_upload(store: Store, name: str, data: bytes, *, partial: bool) -> Any:
    """Stage an uploaded sessions file, import it, and remove the staged copy."""
    from core.studies.sessions.store import import_sessions
    from core.studio.uploads import staged

    with staged(name, data) as src:
        return import_sessions(store, src, partial=partial)
