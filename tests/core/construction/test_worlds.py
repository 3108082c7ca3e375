"""World identity: what samples record, how their world is resolved, and what is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.construction import worlds as W
from core.construction.pipeline import build_graphs, build_samples, load_bundled
from core.construction.worlds import WorldRefusedError, resolve_sample_world, world_for
from core.model.intent import WorldRef
from core.model.sample import SAMPLE_SCHEMA_VERSION, Sample
from core.paths import PROJECT_ROOT
from core.store import Store
from tests.core.construction.helpers import edited_tau2_dir


@pytest.fixture(autouse=True)
def _fresh_caches():
    W.clear_cache()
    yield
    W.clear_cache()


def _built(store: Store, tmp_path: Path) -> tuple[W.LoadedWorld, list, list[Sample]]:
    loaded = world_for(store, "tau2_retail", edited_tau2_dir(tmp_path))
    graphs, _ = build_graphs(loaded.world, ref=loaded.ref, limit=3)
    samples, _ = build_samples(loaded.world, graphs, ref=loaded.ref, per_graph=2)
    store.put_graphs_and_samples(graphs, samples, source="built")
    return loaded, graphs, samples


def test_bundled_samples_and_graphs_record_their_world() -> None:
    for bench in ("webshop", "tau2_retail", "tau2_airline"):
        graphs, samples = load_bundled(bench)
        ref = W.bundled(bench).ref
        assert ref.world_id == f"bundled:{bench}" and ref.is_bundled
        assert {g.world for g in graphs} == {ref}
        assert {s.world for s in samples} == {ref}
        assert all(s.schema_version == SAMPLE_SCHEMA_VERSION for s in samples[:5])


def test_built_samples_name_the_imported_world_and_resolve_to_it(store, tmp_path) -> None:
    loaded, graphs, samples = _built(store, tmp_path)
    assert not loaded.ref.is_bundled
    assert loaded.ref.fingerprint != W.bundled("tau2_retail").ref.fingerprint
    assert store.get_world(loaded.ref.world_id) is not None  # the imported world is kept
    assert samples and all(s.world == loaded.ref for s in samples)
    assert all(g.world == loaded.ref for g in graphs)
    by_id = {g.graph_id: g for g in graphs}
    for s in samples:
        got = resolve_sample_world(store, s, by_id[s.graph_id])
        assert got.world.world_id == loaded.ref.fingerprint
    # round trip through the store keeps the reference
    again = Sample.model_validate_json(store.sample_json(samples[0].sample_id))
    assert again.world == loaded.ref


def test_any_process_loads_exactly_the_stored_world(store, tmp_path) -> None:
    loaded, _, samples = _built(store, tmp_path)
    store.close()
    code = (
        "import sys; from core.store import Store; from core.model.sample import Sample;"
        "from core.model.intent import IntentGraph;"
        "from core.construction.worlds import resolve_sample_world;"
        "s = Store.open(sys.argv[1]); smp = Sample.model_validate_json(s.sample_json(sys.argv[2]));"
        "g = IntentGraph.model_validate_json(s.graph_json(smp.graph_id));"
        "print(resolve_sample_world(s, smp, g).world.world_id)"
    )
    out = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", code, str(store.path), samples[0].sample_id],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        check=True,
        env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == loaded.ref.fingerprint


def test_missing_world_is_refused(store, tmp_path) -> None:
    _, graphs, samples = _built(store, tmp_path)
    other = Store.open(tmp_path / "other.db")  # holds the samples but not their world
    other.put_graphs_and_samples(graphs, samples, source="built")
    with pytest.raises(WorldRefusedError, match="not in this store"):
        resolve_sample_world(other, samples[0], graphs[0])


def test_changed_fingerprint_is_refused(store, tmp_path) -> None:
    loaded, graphs, samples = _built(store, tmp_path)
    s = samples[0]
    g = next(g for g in graphs if g.graph_id == s.graph_id)
    forged = s.model_copy(update={"world": loaded.ref.model_copy(update={"fingerprint": "f" * 16})})
    with pytest.raises(WorldRefusedError, match="data has changed"):
        resolve_sample_world(store, forged, g)
    # the stored payload itself changed under the same id (edited in place)
    row = store.conn.execute(
        "SELECT payload FROM worlds WHERE world_id=?", (loaded.ref.world_id,)
    ).fetchone()
    payload = json.loads(row[0])
    uid = sorted(payload["db"]["users"])[0]
    payload["db"]["users"][uid]["email"] = "someone.else@example.com"
    with store.transaction() as conn:
        conn.execute(
            "UPDATE worlds SET payload=? WHERE world_id=?",
            (json.dumps(payload), loaded.ref.world_id),
        )
    with pytest.raises(WorldRefusedError, match="data has changed"):
        resolve_sample_world(store, s, g)


def test_bundled_world_that_changed_is_refused() -> None:
    graphs, samples = load_bundled("tau2_airline")
    s = samples[0]
    g = next(g for g in graphs if g.graph_id == s.graph_id)
    stale = s.model_copy(update={"world": WorldRef.bundled("tau2_airline", "0123456789abcdef")})
    with pytest.raises(WorldRefusedError, match="bundled:tau2_airline"):
        resolve_sample_world(None, stale, g)


def test_v1_samples_resolve_by_evidence_or_are_refused(store, tmp_path) -> None:
    graphs, samples = load_bundled("tau2_retail")
    by_id = {g.graph_id: g for g in graphs}
    legacy = samples[0].model_copy(update={"world": None, "schema_version": 1})
    graph = by_id[legacy.graph_id].model_copy(update={"world": None})
    got = resolve_sample_world(store, legacy, graph)
    assert got.ref.is_bundled
    # built on an imported world: the evidence finds that world in the store
    loaded, igraphs, isamples = _built(store, tmp_path)
    ig = {g.graph_id: g.model_copy(update={"world": None}) for g in igraphs}
    moved = [s for s in isamples if s.root_ground_truth is not None]
    bundled_gt = {
        g.graph_id: g.root.ground_truth.hash for g in graphs if g.root.ground_truth is not None
    }
    s = next(s for s in moved if bundled_gt.get(s.graph_id) != s.root_ground_truth.hash)
    old = s.model_copy(update={"world": None})
    assert resolve_sample_world(store, old, ig[s.graph_id]).ref == loaded.ref
    # a v1 sample whose recorded ground truth reproduces nowhere is refused
    bogus = old.model_copy(
        update={"root_ground_truth": old.root_ground_truth.model_copy(update={"hash": "0" * 32})}
    )
    with pytest.raises(WorldRefusedError, match="records no world"):
        resolve_sample_world(
            store, bogus.model_copy(update={"sample_id": "x" * 16}), ig[s.graph_id]
        )


def test_v1_records_stay_readable_and_byte_identical() -> None:
    graphs, samples = load_bundled("tau2_retail")
    raw = json.loads(samples[0].model_dump_json())
    raw.pop("world")
    raw["schema_version"] = 1
    old = Sample.model_validate(raw)
    assert old.world is None
    assert json.loads(old.model_dump_json()) == raw  # no "world": null appears
    g = json.loads(graphs[0].model_dump_json())
    g.pop("world")
    assert "world" not in json.loads(type(graphs[0]).model_validate(g).model_dump_json())


def test_world_choice_for_builds(store, tmp_path) -> None:
    assert world_for(store, "tau2_retail").ref.is_bundled
    loaded = world_for(store, "tau2_retail", edited_tau2_dir(tmp_path))
    assert world_for(store, "tau2_retail").ref == loaded.ref  # the newest imported world
    assert world_for(store, "tau2_retail", world="bundled").ref.is_bundled
    assert world_for(store, "tau2_retail", world=loaded.ref.world_id[:6]).ref == loaded.ref
    from core.errors import ConfigError

    with pytest.raises(ConfigError, match="--world"):
        world_for(store, "tau2_retail", world="nope")
