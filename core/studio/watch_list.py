"""Which episodes the Watch live page follows, kept in the page's URL (``?watch=id,id,…``).

The list is part of the address, not of the browser session: a reload, a bookmark or a link
sent to a colleague shows the same episodes. Ids are read back against the store (unknown or
malformed ones are dropped, duplicates once), newest first, at most :data:`MAX_WATCHED`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.store import Store

MAX_WATCHED = 12
"""At most this many episodes are followed at once."""

PARAM = "watch"
"""The query parameter that carries the list."""

_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def read_watch_list(store: Store, raw: str | None) -> list[str]:
    """The watched episode ids of a ``?watch=`` value that exist in the store, in order."""
    out: list[str] = []
    for part in (raw or "").split(","):
        eid = part.strip()
        if eid and _ID.match(eid) and eid not in out and store.episode_exists(eid):
            out.append(eid)
        if len(out) >= MAX_WATCHED:
            break
    return out


def unknown_watched(store: Store, raw: str | None, *, checked: int = 100) -> int:
    """How many distinct ids of a ``?watch=`` value are malformed or not in the store.

    Only the first ``checked`` distinct ids are looked up (a link far longer than the list can
    ever be costs no more); every id beyond them counts as not found.
    """
    parts = list(dict.fromkeys(part.strip() for part in (raw or "").split(",") if part.strip()))
    looked = parts[:checked]
    missing = sum(1 for eid in looked if not (_ID.match(eid) and store.episode_exists(eid)))
    return missing + len(parts) - len(looked)


def add_watched(current: Iterable[str], new: Iterable[str]) -> list[str]:
    """``new`` ids first (in order), then the current ones, without duplicates, capped."""
    out: list[str] = []
    for eid in [*new, *current]:
        if eid not in out:
            out.append(eid)
    return out[:MAX_WATCHED]


def watch_param(ids: Iterable[str]) -> str:
    """The ``?watch=`` value of a list."""
    return ",".join(ids)
