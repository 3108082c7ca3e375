"""The paper's conditions as ``driftbench run`` flags: ``--shifts``, ``--faults``, ``--source``.

Each flag is part of the run's identity (a different value is a different run), selects or
plays what it says, and is shown by ``runs`` and by the GRIP report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.grip.report import build_report
from core.model.run import RunSpec, faults_match, parse_sources
from core.runner.plan import SampleSource, select_samples
from core.store import Store


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _run(db: Path, *extra: str) -> list[str]:
    return ["--store", str(db), "run", "--seeds", "1", "--json", *extra]


def test_shifts_off_is_a_condition_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    base = ["--benchmark", "tau2_retail", "--method", "A0", "--persona", "dependent"]
    base += ["--limit", "6"]
    assert main(_run(db, *base, "--name", "on")) == 0
    on = _json(capsys)
    assert main(_run(db, *base, "--shifts", "off", "--name", "off")) == 0
    off = _json(capsys)
    assert on["run_id"] != off["run_id"]
    assert off["sources"][0]["shifts"] == "off" and on["sources"][0]["shifts"] == "on"
    store = Store.open(db)
    kinds = {
        rid: [
            json.loads(b)["kind"]
            for r in store.episode_rows(run_id=rid)
            for b in store.event_jsons(r["episode_id"])
        ]
        for rid in (on["run_id"], off["run_id"])
    }
    # a dependent user has two placements: with shifts on some fire, with shifts off none
    assert "shift_fired" in kinds[on["run_id"]]
    assert "shift_fired" not in kinds[off["run_id"]]
    report = build_report(store, ["off", "on"], by="benchmark,method")
    assert report.conditions[off["run_id"]] == {"shifts": "off", "faults": "all"}
    assert report.conditions[on["run_id"]] == {"shifts": "on", "faults": "all"}
    both = build_report(store, ["off", "on"], by="benchmark,shifts_on")
    assert sorted(c["shifts_on"] for c in both.cells) == [False, True]
    assert main(["--store", str(db), "runs", "--json"]) == 0
    listed = {r["name"]: r["conditions"] for r in _json(capsys)["runs"]}
    assert listed["off"]["shifts"] == "off" and listed["on"]["shifts"] == "on"


@pytest.mark.parametrize(
    ("condition", "ks"),
    [("single", {1}), ("composite", {2, 4}), ("k1", {1}), ("k2", {2}), ("k4", {4})],
)
def test_faults_condition_selects_by_fault_count(condition: str, ks: set[int]) -> None:
    source = SampleSource(None)  # the bundled samples (k = 1, 2 and 4 on every benchmark)
    spec = RunSpec(benchmarks=("tau2_airline",), methods=("B0",), personas=("rational",))
    every = select_samples(source, spec, "tau2_airline")
    picked = select_samples(source, spec.model_copy(update={"faults": condition}), "tau2_airline")
    assert picked and set(picked) < set(every)
    got = {len(source.sample("tau2_airline", sid).faults) for sid in picked}
    assert got == ks
    assert all(faults_match(condition, k) == (k in ks) for k in (1, 2, 4))


def test_faults_flag_is_identity_and_single_grid_has_no_composite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    args = ["--benchmark", "webshop", "--method", "B0", "--persona", "rational"]
    assert main(_run(db, *args, "--faults", "single", "--limit", "40")) == 0
    single = _json(capsys)
    assert main(_run(db, *args, "--limit", "40")) == 0
    anyk = _json(capsys)
    assert single["run_id"] != anyk["run_id"]
    store = Store.open(db)
    ks = [
        json.loads(store.event_jsons(r["episode_id"])[0])["sample"]["faults"]
        for r in store.episode_rows(run_id=single["run_id"])
    ]
    assert len(ks) == 40 and all(len(f) == 1 for f in ks)
    rep = build_report(store, [single["run_id"]], by="benchmark,k")
    assert [c["k"] for c in rep.cells] == [1]
    assert rep.conditions[single["run_id"]]["faults"] == "single"


def test_source_per_benchmark_parses_and_is_canonical() -> None:
    assert parse_sources(None) == (None, {})
    assert parse_sources("built") == ("built", {})
    assert parse_sources("webshop=bundled, tau2_retail=built") == (
        None,
        {"webshop": "bundled", "tau2_retail": "built"},
    )
    for bad in ("built,bundled", "webshop=", "webshop=a,webshop=b", "a,,b"):
        with pytest.raises(ValueError):
            parse_sources(bad)
    a = RunSpec(
        benchmarks=("webshop", "tau2_retail"),
        methods=("B0",),
        personas=("rational",),
        source="webshop=bundled,tau2_retail=built",
    )
    b = a.model_copy(update={}).model_validate(
        {**a.model_dump(), "source": "tau2_retail=built , webshop=bundled"}
    )
    assert a.run_id() == b.run_id()
    assert a.source_for("webshop") == "bundled" and a.source_for("tau2_retail") == "built"
    with pytest.raises(ValueError, match="does not include"):
        RunSpec(benchmarks=("webshop",), methods=("B0",), personas=("r",), source="tau2_x=built")


def test_source_mixes_built_and_bundled_webshop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--source built`` alone cannot include WebShop (nothing built); per benchmark it can."""
    from core.construction import worlds as W
    from core.studio.bootstrap import load_bundled_samples
    from tests.core.construction.helpers import edited_tau2_dir

    W.clear_cache()
    db = tmp_path / "s.db"
    load_bundled_samples(Store.open(db))
    build = ["build", "samples", "--benchmark", "tau2_retail", "--per-graph", "2", "--json"]
    data = edited_tau2_dir(tmp_path)
    assert main(["--store", str(db), *build, "--data", str(data)]) == 0
    capsys.readouterr()
    both = ["--benchmark", "webshop,tau2_retail", "--method", "B0", "--persona", "rational"]
    assert main(_run(db, *both, "--source", "built", "--limit", "2")) == 2
    err = capsys.readouterr().err
    assert "--source" in err and "no samples for webshop" in err
    mixed = "webshop=bundled,tau2_retail=built"
    assert main(_run(db, *both, "--source", mixed, "--limit", "2")) == 0
    out = _json(capsys)
    by = {s["benchmark"]: s for s in out["sources"]}
    assert by["webshop"]["by_source"] == {"bundled": 2}
    assert set(by["tau2_retail"]["by_source"]) == {"built"}
    assert out["completed"] == 4


def test_resume_refuses_condition_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path / "s.db"), "run", "--resume", "x", "--shifts", "off"]) == 2
    assert "--resume" in capsys.readouterr().err
