"""Mixed concurrency: players stepping episodes and annotators labelling against one store.

20 sessions share one :class:`~core.store.Store` (as the studio's pages do: one instance, one
connection per thread): 10 players drive episodes through ``core.engine.episode`` with the store as
their event log, 10 annotators label a study's queue. The slow version runs for 60 s with a
background sweep process writing to the same file. Afterwards: no error surfaced (in particular
no ``database is locked``), no label lost, and every played episode's stored events equal a
replay of the same actions into an in-memory log (so no event was lost, duplicated or
reordered).
"""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import mock_graph, mock_samples
from core.model.actions import Ask, EnvOp, Propose
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.model.world import EnvAction
from core.runner import launch, run_sweep
from core.store import Store
from core.studies import (
    StudySpec,
    annotator_queue,
    assign_study,
    create_study,
    label_item,
    list_labels,
)
from tests.reliability.conftest import assert_episode_invariants

N_PLAYERS = 10
N_ANNOTATORS = 10
SAMPLES = mock_samples()
GRAPH = mock_graph()


def _random_action(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.35:
        q = rng.choice(["teal shirt", "red shoes", "medium shirt", "mug"])
        return EnvOp(action=EnvAction(tool="search", args={"query": q}))
    if roll < 0.5:
        return EnvOp(action=EnvAction(tool="buy", args={"item_id": f"s0{rng.randint(1, 6)}"}))
    if roll < 0.8:
        return Ask(text=rng.choice(["Which colour?", "What size?", "Budget?", "Anything else?"]))
    return Propose(text="done")


def _play_one(store: Store, rng: random.Random, who: str, n: int) -> dict[str, Any]:
    sample = rng.choice(SAMPLES)
    persona = rng.choice(PERSONAS)
    seed = rng.randint(0, 1000)
    eid = f"{who}-{n:04d}"
    episode.start(store, sample, persona, seed, "human", graph=GRAPH, method="A2", episode_id=eid)
    actions = []
    for _ in range(60):
        view = episode.agent_view(store, eid)
        if view.ended:
            break
        action = _random_action(rng)
        actions.append(action)
        episode.step(store, eid, action)
    return {"eid": eid, "sample": sample, "persona": persona, "seed": seed, "actions": actions}


def _replayed(play: dict[str, Any]) -> list[dict[str, Any]]:
    log = InMemoryEventLog()
    eid = episode.start(
        log,
        play["sample"],
        play["persona"],
        play["seed"],
        "human",
        graph=GRAPH,
        method="A2",
        episode_id=play["eid"],
    )
    for action in play["actions"]:
        if episode.agent_view(log, eid).ended:
            break
        episode.step(log, eid, action)
    return [json.loads(e.model_dump_json()) for e in log.events(eid)]


def _study(store: Store) -> list[str]:
    spec = RunSpec(benchmarks=("mock",), methods=("B0", "A2"), personas=("rational", "avoidant"))
    res = run_sweep(store, spec.model_copy(update={"seeds": (0,)}), RunOptions(workers=1))
    eps = [r["episode_id"] for r in store.episode_rows(run_id=res.run_id)][:40]
    anns = [f"ann{i:02d}" for i in range(N_ANNOTATORS)]
    create_study(
        store,
        StudySpec(name="mixed", episodes=tuple(eps), label_kinds=("realism",), overlap=2),
    )
    assign_study(store, "mixed", anns)
    return anns


def hammer(store: Store, seconds: float) -> dict[str, Any]:
    """Run players and annotators on ``store`` for ``seconds``."""
    anns = _study(store)
    errors: list[str] = []
    plays: dict[str, list[dict[str, Any]]] = {f"p{i:02d}": [] for i in range(N_PLAYERS)}
    labels: dict[str, list[int]] = {a: [] for a in anns}
    barrier = threading.Barrier(N_PLAYERS + N_ANNOTATORS)
    deadline: list[float] = []

    def player(who: str) -> None:
        rng = random.Random(who)
        try:
            barrier.wait()
            n = 0
            while time.monotonic() < deadline[0]:
                plays[who].append(_play_one(store, rng, who, n))
                n += 1
        except Exception as exc:  # noqa: BLE001 - the test reports every failure
            errors.append(f"{who}: {type(exc).__name__}: {exc}")
        finally:
            store.close()

    def annotator(ann: str) -> None:
        try:
            items = annotator_queue(store, "mixed", ann).items
            barrier.wait()
            i = 0
            while time.monotonic() < deadline[0]:
                item = items[i % len(items)]
                labels[ann].append(label_item(store, item.assignment_id, "realism", 1 + i % 5))
                if i % 7 == 0:
                    annotator_queue(store, "mixed", ann)  # what the page re-reads
                i += 1
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{ann}: {type(exc).__name__}: {exc}")
        finally:
            store.close()

    threads = [threading.Thread(target=player, args=(w,)) for w in plays]
    threads += [threading.Thread(target=annotator, args=(a,)) for a in anns]
    deadline.append(time.monotonic() + seconds + 2.0)  # + time to reach the barrier
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    return {
        "errors": errors,
        "plays": plays,
        "labels": labels,
        "alive": [t.name for t in threads if t.is_alive()],
    }


def check(store: Store, result: dict[str, Any]) -> None:
    assert result["alive"] == []
    assert result["errors"] == [], result["errors"][:5]  # no lock error (or any other) surfaced
    # annotators: every label written is stored, once
    ids = [i for ws in result["labels"].values() for i in ws]
    assert ids and len(ids) == len(set(ids))
    stored = list_labels(store, study_id=None)
    assert {r.annotation_id for r in stored} == set(ids)
    per_ann: dict[str, int] = {}
    for r in stored:
        per_ann[r.annotator] = per_ann.get(r.annotator, 0) + 1
    assert per_ann == {a: len(w) for a, w in result["labels"].items()}
    # players: every episode stored exactly as an in-memory replay of the same actions
    played = [p for ps in result["plays"].values() for p in ps]
    assert all(ps for ps in result["plays"].values()), "a player starved"
    for play in played:
        stored_events = [json.loads(b) for b in store.event_jsons(play["eid"])]
        assert stored_events == _replayed(play), play["eid"]
        assert_episode_invariants(stored_events)
        status = store.episode_status(play["eid"])
        assert status is not None and status[0] == "ended"
        assert store.count_events(play["eid"]) == len(stored_events)


def test_players_and_annotators_short(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    check(store, hammer(store, seconds=5.0))


@pytest.mark.slow
def test_players_annotators_and_a_background_sweep_sixty_seconds(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store.open(path)
    sweep = RunSpec(benchmarks=("mock",), methods=("A0", "A2"), personas=PERSONAS, seeds=(0, 1))
    pid = launch(path, sweep, RunOptions(workers=1, progress=False))
    try:
        result = hammer(store, seconds=60.0)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the background sweep did not finish")
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    check(store, result)
    run = store.get_run(sweep.run_id())
    assert run["status"] == "completed" and run["errors"] == 0 and run["completed"] == run["total"]
