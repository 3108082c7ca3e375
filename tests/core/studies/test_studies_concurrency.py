"""Reliability: 20 concurrent annotators labelling against one store lose nothing."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from core.store import Store
from core.studies import (
    StudySpec,
    annotator_queue,
    assign_study,
    create_study,
    label_item,
    list_labels,
    study_progress,
)

N_ANNOTATORS = 20


def hammer(store: Store, make_episode: Any, seconds: float) -> dict[str, Any]:
    """Run 20 annotator threads for ``seconds``; return what they wrote and any errors."""
    eps = [make_episode(f"ep{i:03d}") for i in range(40)]
    anns = [f"ann{i:02d}" for i in range(N_ANNOTATORS)]
    create_study(
        store,
        StudySpec(
            name="load",
            episodes=tuple(eps),
            label_kinds=("realism", "fault_type", "who_broke"),
            overlap=3,
        ),
    )
    assign_study(store, "load", anns)
    barrier = threading.Barrier(N_ANNOTATORS)
    written: dict[str, list[int]] = {a: [] for a in anns}
    errors: list[str] = []
    deadline_box: list[float] = []

    def work(ann: str) -> None:
        try:
            items = annotator_queue(store, "load", ann).items
            barrier.wait()
            deadline = deadline_box[0] if deadline_box else time.monotonic() + seconds
            i = 0
            while time.monotonic() < deadline:
                item = items[i % len(items)]
                kind = (i // len(items)) % 3  # every item gets every kind
                if kind == 0:
                    aid = label_item(store, item.assignment_id, "realism", 1 + i % 5, seconds=0.1)
                elif kind == 1:
                    aid = label_item(store, item.assignment_id, "fault_type", "none")
                else:
                    aid = label_item(
                        store,
                        item.assignment_id,
                        "who_broke",
                        {"who": "agent", "severity": "minor"},
                        turn=i % 4,
                    )
                written[ann].append(aid)
                if i % 10 == 0:
                    annotator_queue(store, "load", ann)  # what the page re-reads
                i += 1
        except Exception as exc:  # noqa: BLE001 - the test reports every failure
            errors.append(f"{ann}: {type(exc).__name__}: {exc}")
        finally:
            store.close()

    deadline_box.append(time.monotonic() + seconds + 1.0)  # +1 s for the barrier
    threads = [threading.Thread(target=work, args=(a,)) for a in anns]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    return {
        "written": written,
        "errors": errors,
        "elapsed": time.monotonic() - started,
        "alive": [t.name for t in threads if t.is_alive()],
    }


def check(store: Store, result: dict[str, Any]) -> None:
    assert result["alive"] == []
    assert result["errors"] == [], result["errors"][:5]  # no lock error surfaced
    ids = [i for ws in result["written"].values() for i in ws]
    assert len(ids) == len(set(ids)), "two writes got the same id"
    stored = list_labels(store, study_id=None)
    by_ann: dict[str, int] = {}
    for r in stored:
        by_ann[r.annotator] = by_ann.get(r.annotator, 0) + 1
    assert {a: len(w) for a, w in result["written"].items()} == by_ann  # nothing lost
    assert {r.annotation_id for r in stored} == set(ids)
    assert all(len(w) > 0 for w in result["written"].values()), "an annotator starved"
    progress = study_progress(store, "load")
    assert all(p["done"] == p["assigned"] for p in progress)
    assert sum(p["done"] for p in progress) == 40 * 3


def test_twenty_concurrent_annotators_short(store, make_episode) -> None:
    result = hammer(store, make_episode, seconds=5.0)
    check(store, result)


@pytest.mark.slow
def test_twenty_concurrent_annotators_sixty_seconds(store, make_episode) -> None:
    result = hammer(store, make_episode, seconds=60.0)
    check(store, result)
