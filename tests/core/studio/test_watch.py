import time

import pytest

from core.model.events import EpisodeEnded
from core.store import Store
from core.studio import watch as live
from core.studio.bootstrap import load_bundled_samples


@pytest.fixture
def loaded_store(store: Store) -> Store:
    load_bundled_samples(store)
    return store


def _sample(store: Store, benchmark: str = "webshop") -> str:
    rows = [r for r in store.sample_rows(benchmark) if r["k"] == 1]
    assert rows, f"no bundled {benchmark} samples"
    return rows[0]["sample_id"]


@pytest.mark.parametrize("benchmark", ["webshop", "tau2_retail"])
def test_watched_episode_is_stored_step_by_step(loaded_store: Store, benchmark: str) -> None:
    eid = live.start_watched(loaded_store, _sample(loaded_store, benchmark), "rational", "A2", 0)
    before = len(loaded_store.event_jsons(eid))
    assert before >= 1
    outcome = live.drive(loaded_store, eid)
    events = loaded_store.events(eid)
    assert outcome in {"SUCCESS", "EXHAUSTED", "TURNS_EXCEEDED"}
    assert isinstance(events[-1], EpisodeEnded) and len(events) > before
    assert [e.seq for e in events] == list(range(len(events)))


def test_branch_keeps_prefix_and_continues(loaded_store: Store) -> None:
    eid = live.start_watched(loaded_store, _sample(loaded_store), "dependent", "A0", 1)
    live.drive(loaded_store, eid)
    parent = loaded_store.events(eid)
    new = live.branch(loaded_store, eid, 2, "A2")
    prefix = loaded_store.events(new)
    assert [e.model_dump() for e in prefix] == [e.model_dump() for e in parent if e.turn < 2]
    assert loaded_store.header(new).parent_episode_id == eid
    live.drive(loaded_store, new)
    assert isinstance(loaded_store.events(new)[-1], EpisodeEnded)
    human = live.branch(loaded_store, eid, 2, live.HUMAN)
    with pytest.raises(Exception, match="played by a person"):
        live.make_episode_agent(loaded_store, human)


def test_spawned_driver_finishes_in_background(loaded_store: Store) -> None:
    eid = live.start_watched(loaded_store, _sample(loaded_store), "avoidant", "A0", 2)
    pid = live.spawn_driver(loaded_store.path, eid, pace_s=0.0)
    assert pid > 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if loaded_store.episode_rows()[0]["status"] == "ended" or any(
            r["status"] == "ended" for r in loaded_store.episode_rows() if r["episode_id"] == eid
        ):
            break
        time.sleep(0.1)
    assert isinstance(loaded_store.events(eid)[-1], EpisodeEnded)
