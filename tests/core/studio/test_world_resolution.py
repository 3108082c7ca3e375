"""Watch live and both Play pages run a sample on the world it was built on (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.construction import worlds as W
from core.construction.pipeline import build_graphs, build_samples
from core.construction.worlds import WorldRefusedError
from core.engine import episode
from core.model.actions import EnvOp
from core.model.events import EpisodeStarted, ObservationRecorded
from core.model.world import EnvAction
from core.store import Store
from core.studio import roleplay as play
from core.studio import watch as live
from tests.core.construction.helpers import edited_tau2_dir


@pytest.fixture
def imported(store: Store, tmp_path: Path) -> tuple[Store, str, str]:
    """A store with retail samples built on an imported world; (store, sample id, user id)."""
    W.clear_cache()
    data = edited_tau2_dir(tmp_path)
    loaded = W.world_for(store, "tau2_retail", data)
    graphs, _ = build_graphs(loaded.world, ref=loaded.ref, limit=4)
    samples, _ = build_samples(loaded.world, graphs, ref=loaded.ref, per_graph=2)
    store.put_graphs_and_samples(graphs, samples, source="built")
    uid = sorted(json.loads((data / "db.json").read_text())["users"])[0]
    return store, samples[0].sample_id, uid


def test_watch_live_drives_on_the_imported_world(imported) -> None:  # type: ignore[no-untyped-def]
    store, sid, _ = imported
    eid = live.start_watched(store, sid, "rational", "ORACLE", 0)
    assert live.drive(store, eid) == "SUCCESS"
    events = store.events(eid)
    assert isinstance(events[0], EpisodeStarted) and not events[0].sample.world.is_bundled
    obs = [e for e in events if isinstance(e, ObservationRecorded)]
    assert obs and all(e.ok for e in obs)


def test_watch_refuses_a_sample_whose_world_is_missing(imported, tmp_path) -> None:  # type: ignore[no-untyped-def]
    store, sid, _ = imported
    other = Store.open(tmp_path / "other.db")
    from core.model.intent import IntentGraph
    from core.model.sample import Sample

    s = Sample.model_validate_json(store.sample_json(sid))
    g = IntentGraph.model_validate_json(store.graph_json(s.graph_id))
    other.put_graphs_and_samples([g], [s], source="built")
    with pytest.raises(WorldRefusedError):
        live.start_watched(other, sid, "rational", "ORACLE", 0)
    assert other.counts()["episodes"] == 0


def test_play_as_agent_acts_on_the_imported_world(imported) -> None:  # type: ignore[no-untyped-def]
    store, sid, uid = imported
    eid = play.start_agent_play(
        store, benchmark="tau2_retail", sample_id=sid, persona="rational", seed=0
    )
    view = play.agent_play_step(
        store,
        eid,
        EnvOp(action=EnvAction(tool="get_user_details", args={"user_id": uid})),
    )
    last = [e for e in store.events(eid) if isinstance(e, ObservationRecorded)][-1]
    assert last.ok and "imported." in last.text  # the edited e-mail: this is the imported data
    assert not view.ended


def test_play_as_user_runs_the_agent_on_the_imported_world(imported) -> None:  # type: ignore[no-untyped-def]
    store, sid, _ = imported
    eid = play.start_user_play(
        store, benchmark="tau2_retail", sample_id=sid, persona="rational", seed=0, method="A2"
    )
    page = play.user_play_view(store, eid)
    assert page.user.episode_id == eid
    play.advance(store, eid)
    view = episode.agent_view(store, eid, world_loader=W.episode_world_loader(store, store, eid))
    assert view.turn >= 1
    obs = [e for e in store.events(eid) if isinstance(e, ObservationRecorded)]
    assert all("not found" not in e.text.lower() for e in obs)
