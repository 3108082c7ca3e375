"""The Home page's read model: what a role can do, assigned study work, episodes to resume."""

from __future__ import annotations

from typing import Any

from core.store import Store
from core.studies.schema import ensure_study_schema
from core.studio.auth import pages_for
from core.studio.pages import PAGES, PageSpec
from core.studio.plays import expire_plays, unfinished_plays
from core.studio.study_display import annotator_studies

__all__ = ["my_work", "pages_of", "play_items", "unfinished_plays"]


def pages_of(role: str) -> list[PageSpec]:
    """The pages ``role`` may open (Home excluded), in navigation order, with their purpose."""
    return [PAGES[p] for p in pages_for(role) if p in PAGES and p != "home"]


def play_items(store: Store, person: str) -> list[dict[str, Any]]:
    """Pending play items of ``person`` in open studies (each opens a play page by assignment)."""
    ensure_study_schema(store)
    rows = store.conn.execute(
        "SELECT a.assignment_id, a.role, s.name, a.position FROM assignments a "
        "JOIN studies s ON s.study_id = a.study_id "
        "WHERE a.annotator_id = ? AND a.status = 'pending' AND s.status = 'open' "
        "AND a.role IN ('play_user', 'play_agent') ORDER BY s.name, a.position",
        (person,),
    ).fetchall()
    return [
        {
            "assignment_id": int(r[0]),
            "role": r[1],
            "page": r[1],
            "study": r[2],
            "ref": f"#{int(r[3]) + 1}",
        }
        for r in rows
    ]


def my_work(store: Store, person: str, *, expiry_hours: float = 0.0) -> dict[str, Any]:
    """Return ``{"studies", "plays", "resume"}`` for the Home page.

    Unfinished plays older than ``expiry_hours`` (0 = never) are marked expired first and are
    no longer offered. Every resume entry carries the page id, the episode and a ``link``.
    """
    expire_plays(store, expiry_hours)
    resume = unfinished_plays(store, person)
    for r in resume:
        r["link"] = f"/{r['page']}?episode={r['episode_id']}"
    return {
        "studies": annotator_studies(store, person),
        "plays": play_items(store, person),
        "resume": resume,
    }
