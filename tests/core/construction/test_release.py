"""The release importer on the shared fixture, plus malformed-file errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.construction.release import read_release
from core.errors import ConfigError
from core.paths import shared_dir

RELEASE = shared_dir() / "driftbench_release"
AIRLINE = shared_dir() / "hostdata" / "tau2_airline"


def _need_release() -> Path:
    if not RELEASE.is_dir():
        pytest.skip("../shared/driftbench_release absent: release fixture not available")
    return RELEASE


def test_import_counts_and_schema() -> None:
    rel = read_release(_need_release())
    rep = rel.report
    assert rep["by_benchmark"] == {"tau2_airline": 27, "webshop": 2}
    assert rep["imported"] == 29 and rep["skipped"] == []
    assert rep["by_fault_type"]["irrelevant_information"] == 6
    assert rep["by_fault_type"]["lexical_ambiguity+irrelevant_information"] == 1
    airline = [s for s in rel.samples if s.benchmark == "tau2_airline"]
    assert all(s.split == "learn" and s.source == "release" for s in airline)
    graphs = {g.graph_id: g for g in rel.graphs}
    assert len([g for g in graphs.values() if g.benchmark == "tau2_airline"]) == 40
    fe = next(
        s
        for s in airline
        if s.faults[0].value == "factual_error" and s.graph_id == "1a0cc1281f29259a"
    )
    entry = next(e for e in fe.mask if e.kind == "substituted")
    assert entry.slot == "arg:0:update_reservation_flights:flights" and "HAT277" in str(
        entry.stated_value
    )
    assert fe.hidden_slots == ("arg:0:update_reservation_flights:flights",)
    assert fe.root_intent_id == graphs[fe.graph_id].root.intent_id
    assert fe.source_id == "1a0cc1281f29259a__factual_error"
    ws = next(s for s in rel.samples if s.source_id == "0020601ac2670baa")
    assert ws.hidden_slots == ("attr:polyester cotton",) and ws.root_ground_truth is not None
    assert ws.root_ground_truth.cardinality == 40
    comp = next(s for s in rel.samples if len(s.faults) == 2)
    assert {e.fault for e in comp.mask if e.fault} == set(comp.faults)
    # every edge of an imported graph points at one of its nodes
    for g in graphs.values():
        ids = {n.intent_id for n in g.nodes}
        assert all(e.src in ids and e.dst in ids for e in g.edges)


def test_unloaded_worlds_are_listed_not_dropped() -> None:
    rel = read_release(_need_release(), worlds={})
    assert rel.report["imported"] == 0
    reasons = {s["reason"] for s in rel.report["skipped"]}
    assert reasons == {
        "host world 'tau2_airline' is not loaded",
        "host world 'webshop' is not loaded",
    }
    assert len(rel.report["skipped"]) == 29


def test_ground_truth_re_execution_matches_release_hashes() -> None:
    _need_release()
    if not AIRLINE.is_dir():
        pytest.skip("../shared/hostdata absent: tau2_airline not available")
    from core.envs.tau2.world import load_tau2_world

    world = load_tau2_world("airline", AIRLINE)
    rel = read_release(RELEASE, worlds={"tau2_airline": world})
    assert rel.report["imported"] == 27
    assert rel.report["ground_truth_matches"] == {"checked": 6, "matched": 6, "mismatched": []}
    assert [s["source"] for s in rel.report["skipped"]] == [
        "sample_composite_003d8d1e821c966c.json",
        "sample_v2_0020601ac2670baa.json",
    ]


def _copy_fixture(tmp: Path) -> Path:
    src = _need_release()
    dst = tmp / "rel"
    (dst / "graphs").mkdir(parents=True)
    shutil.copy(src / "tau2_airline" / "airline_samples_learn.json", dst / "bundle.json")
    for gid in (
        "1a0cc1281f29259a",
        "62ec69eb49a15c77",
        "be52b8acd2475722",
        "e01d0bdad52cd3e7",
        "e446883a0e29028b",
        "fb3c80ff6119f52a",
    ):
        shutil.copy(src / "tau2_airline" / "graphs" / f"{gid}.json", dst / "graphs" / f"{gid}.json")
    return dst


def _edit(path: Path, fn) -> None:  # type: ignore[no-untyped-def]
    obj = json.loads(path.read_text())
    fn(obj)
    path.write_text(json.dumps(obj))


@pytest.mark.parametrize(
    "target,mutate,field",
    [
        ("bundle.json", lambda o: o["results"][3].pop("query"), "results[3].query"),
        (
            "bundle.json",
            lambda o: o["results"][0].__setitem__("strategy", "telepathy"),
            "results[0].strategy",
        ),
        ("bundle.json", lambda o: o.__setitem__("results", {}), "results"),
        (
            "bundle.json",
            lambda o: o["results"][1]["mask"].__setitem__("substituted", [["x"]]),
            "results[1].mask.substituted[0]",
        ),
        (
            "graphs/1a0cc1281f29259a.json",
            lambda o: o["edges"][0].__setitem__("operator", "TWIST"),
            "edges[0].operator",
        ),
        (
            "graphs/1a0cc1281f29259a.json",
            lambda o: o["root"].__setitem__("conditions", [["a", "="]]),
            "root.conditions[0]",
        ),
        ("graphs/1a0cc1281f29259a.json", lambda o: o.pop("tree_id"), "tree_id"),
    ],
)
def test_malformed_files_name_file_and_field(tmp_path: Path, target, mutate, field) -> None:  # type: ignore[no-untyped-def]
    root = _copy_fixture(tmp_path)
    _edit(root / target, mutate)
    with pytest.raises(ConfigError) as e:
        read_release(root)
    assert e.value.field == field
    assert e.value.file is not None and e.value.file.endswith(target.split("/")[-1])


def test_invalid_json_and_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(ConfigError) as e:
        read_release(tmp_path)
    assert e.value.file is not None and e.value.file.endswith("x.json")
    with pytest.raises(ConfigError):
        read_release(tmp_path / "missing")


def test_missing_graph_is_listed(tmp_path: Path) -> None:
    root = _copy_fixture(tmp_path)
    (root / "graphs" / "fb3c80ff6119f52a.json").unlink()
    rel = read_release(root)
    missing = [s for s in rel.report["skipped"] if "not found" in s["reason"]]
    assert len(missing) == 3 and rel.report["imported"] == 24
