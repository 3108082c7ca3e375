"""Helpers for the human-study page tests: a private copy of the demo store with a study."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.store import Store
from core.studies import add_annotator, annotator_queue, assign_study, create_study

PERSONA_A = ("rational", "rational", "dependent", "dependent")
PERSONA_B = ("rational", "dependent", "dependent", "dependent")
"""Two annotators' persona labels on four shared episodes: p_o = 3/4, p_e = 1/2, so
Cohen's κ = (3/4 - 1/2) / (1 - 1/2) = 0.5 exactly."""


def copy_store(demo_home: Path, home: Path) -> Store:
    """Copy the session-wide demo store into ``home`` (tests may write to the copy)."""
    src = sqlite3.connect(demo_home / "driftbench.db")
    dst = sqlite3.connect(home / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return Store.open(home / "driftbench.db")


def make_study(
    store: Store,
    *,
    name: str = "persona-study",
    n: int = 4,
    label_kinds: tuple[str, ...] = ("persona_id",),
    annotators: tuple[str, ...] = ("ann1", "ann2"),
    blind: bool = True,
) -> list[str]:
    """Create a study over the first ``n`` ended episodes, assigned to every annotator."""
    episodes = [r["episode_id"] for r in store.episode_rows(status="ended")[:n]]
    create_study(
        store,
        {
            "name": name,
            "description": "Read the *whole* conversation.",
            "episodes": episodes,
            "label_kinds": list(label_kinds),
            "overlap": len(annotators),
            "blind": blind,
        },
    )
    for ann in annotators:
        add_annotator(store, ann)
    assign_study(store, name, list(annotators), overlap=len(annotators))
    return episodes


def queue_order(store: Store, study: str, annotator: str) -> list[str]:
    """The episode ids of an annotator's queue, in the order the page shows them."""
    return [
        str(i.target_id) for i in annotator_queue(store, study, annotator, reveal_ids=True).items
    ]
