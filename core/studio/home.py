"""The Home page's read model: a person's assigned study work and episodes to resume."""

from __future__ import annotations

from typing import Any

from core.store import Store
from core.studies.schema import ensure_study_schema
from core.studio.study_display import annotator_studies

_PAGE_FOR_ROLE = {"play_user": "play_user", "play_agent": "play_agent"}


def unfinished_plays(store: Store, player: str, limit: int = 20) -> list[dict[str, Any]]:
    """Episodes ``player`` started playing that have not ended, newest first, with a page path."""
    ensure_study_schema(store)
    rows = store.conn.execute(
        "SELECT p.episode_id, p.role, e.benchmark, e.persona_id, e.n_events, p.created_at "
        "FROM study_plays p JOIN episodes e ON e.episode_id = p.episode_id "
        "WHERE p.annotator_id = ? AND e.status != 'ended' ORDER BY p.created_at DESC LIMIT ?",
        (player, int(limit)),
    ).fetchall()
    return [
        {
            "episode_id": r[0],
            "role": r[1],
            "benchmark": r[2],
            "persona": r[3],
            "events": int(r[4]),
            "started": r[5],
            "link": f"/{_PAGE_FOR_ROLE.get(r[1], 'play_user')}?episode={r[0]}",
        }
        for r in rows
    ]


def my_work(store: Store, person: str) -> dict[str, Any]:
    """Return ``{"studies": [...], "resume": [...]}`` for the Home page."""
    return {"studies": annotator_studies(store, person), "resume": unfinished_plays(store, person)}
