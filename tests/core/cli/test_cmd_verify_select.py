"""``verify``, ``run --source/--split/--limit/--name/--resume`` and the store's ``build report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.construction import worlds as W
from core.store import Store
from tests.core.construction.helpers import edited_tau2_dir

TABLE4 = {
    "benchmark",
    "source",
    "host_tasks",
    "tasks",
    "graphs",
    "candidates",
    "rejected_by_step",
    "rejection_rate",
    "samples",
    "by_fault_type",
}


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.fixture
def built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A store with the bundled samples and samples built on an imported retail world."""
    W.clear_cache()
    db = tmp_path / "s.db"
    from core.studio.bootstrap import load_bundled_samples

    load_bundled_samples(Store.open(db))
    data = edited_tau2_dir(tmp_path)
    code = main(
        [
            "--store",
            str(db),
            "build",
            "samples",
            "--benchmark",
            "tau2_retail",
            "--data",
            str(data),
            "--per-graph",
            "3",
            "--json",
        ]
    )
    assert code == 0
    capsys.readouterr()
    return db


def test_verify_passes_and_lists_failures(built: Path, capsys) -> None:
    db = str(built)
    code = main(
        ["--store", db, "verify", "--benchmark", "tau2_retail", "--source", "built", "--json"]
    )
    out = _json(capsys)
    assert code == 0, out["failed"][:3]
    assert set(out) >= {"checked", "passed", "failed"}
    n = len([r for r in Store.open(built).sample_rows("tau2_retail") if r["source"] == "built"])
    assert out["checked"] == out["passed"] == n and out["failed"] == []
    # every bundled τ² sample verifies, and a deterministic slice of the (large) bundled shop
    # (all 6,954 bundled samples pass in about 45 s of CPU; see docs/CONSTRUCTION.md)
    tau2 = ["--benchmark", "tau2_retail,tau2_airline", "--source", "bundled", "--json"]
    assert main(["--store", db, "verify", *tau2]) == 0
    out = _json(capsys)
    shipped = [r for b in ("tau2_retail", "tau2_airline") for r in Store.open(built).sample_rows(b)]
    assert out["checked"] == out["passed"] == sum(r["source"] == "bundled" for r in shipped)
    shop = ["--benchmark", "webshop", "--source", "bundled", "--limit", "60", "--json"]
    assert main(["--store", db, "verify", *shop]) == 0
    assert _json(capsys)["passed"] == 60
    # a sample whose world changed fails verification (exit 1, listed with its reason)
    store = Store.open(built)
    sid, body = store.conn.execute(
        "SELECT sample_id, body FROM samples WHERE source='built' ORDER BY sample_id LIMIT 1"
    ).fetchone()
    b = json.loads(body)
    b["world"]["fingerprint"] = "0" * 16
    with store.transaction() as conn:
        conn.execute("UPDATE samples SET body=? WHERE sample_id=?", (json.dumps(b), sid))
    W.clear_cache()
    code = main(["--store", db, "verify", "--source", "built", "--limit", "3", "--json"])
    out = _json(capsys)
    assert code == 1 and out["passed"] == 2
    assert out["failed"] == [
        {
            "sample_id": sid,
            "benchmark": "tau2_retail",
            "source": "built",
            "reason": out["failed"][0]["reason"],
        }
    ]
    assert "data has changed" in out["failed"][0]["reason"]
    # and a sweep refuses it up front: exit 2, nothing written
    runs_before = store.list_runs()
    code = main(
        [
            "--store",
            db,
            "run",
            "--benchmark",
            "tau2_retail",
            "--method",
            "ORACLE",
            "--persona",
            "rational",
            "--seeds",
            "1",
            "--source",
            "built",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and sid in err and "fingerprint" in err
    assert store.list_runs() == runs_before


def test_run_selects_by_source_and_split_and_lists_the_selection(built: Path, capsys) -> None:
    db = str(built)
    base = [
        "--store",
        db,
        "run",
        "--benchmark",
        "tau2_retail",
        "--method",
        "ORACLE",
        "--persona",
        "rational",
        "--seeds",
        "1",
    ]
    assert main([*base, "--source", "built", "--json"]) == 0
    out = _json(capsys)
    sel = out["sources"][0]
    assert sel["source"] == "built" and sel["by_source"] == {"built": sel["samples"]}
    assert out["episodes"] == out["completed"] == sel["samples"]
    rows = Store.open(built).episode_rows(run_id=out["run_id"])
    assert {r["outcome"] for r in rows} == {"SUCCESS"}
    assert main([*base, "--source", "bundled", "--split", "learn", "--limit", "4", "--json"]) == 0
    out = _json(capsys)
    sel = out["sources"][0]
    assert sel["samples"] == 4 and sel["split"] == "learn" and set(sel["by_source"]) == {"bundled"}
    picked = sorted({r["sample_id"] for r in Store.open(built).episode_rows(run_id=out["run_id"])})
    learn = sorted(
        r["sample_id"]
        for r in Store.open(built).sample_rows("tau2_retail")
        if r["source"] == "bundled" and r["split"] == "learn"
    )
    assert picked == learn[:4]  # --limit keeps the first N ids of the selection
    # the text output starts with the selection header
    assert main([*base, "--source", "bundled", "--limit", "2", "--name", "hdr"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("run hdr (") and "selection: tau2_retail: 2 of" in text
    for bad, flag in ((["--source", "release"], "--source"), (["--split", "eval"], "--split")):
        assert main([*base, *bad]) == 2
        assert flag in capsys.readouterr().err


def test_run_names_never_attach_to_another_run(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "s.db")
    base = [
        "--store",
        db,
        "run",
        "--benchmark",
        "mock",
        "--method",
        "B0",
        "--persona",
        "rational",
        "--seeds",
        "1",
        "--limit",
        "2",
        "--json",
    ]
    assert main([*base, "--name", "first"]) == 0
    a = _json(capsys)
    assert main([*base, "--name", "second"]) == 0
    b = _json(capsys)
    assert a["run"] == "first" and b["run"] == "second"
    assert a["run_id"] != b["run_id"] and b["skipped"] == 0 and b["completed"] == 2
    names = {r["name"] for r in Store.open(Path(db)).list_runs()}
    assert {"first", "second"} <= names  # every printed name exists
    assert main([*base, "--name", "first"]) == 0  # the same name and spec resumes
    again = _json(capsys)
    assert again["run_id"] == a["run_id"] and again["skipped"] == 2
    assert main(["--store", db, "run", "--resume", "second", "--json"]) == 0
    res = _json(capsys)
    assert res["run"] == "second" and res["run_id"] == b["run_id"] and res["skipped"] == 2
    other = [
        "--store",
        db,
        "run",
        "--benchmark",
        "mock",
        "--method",
        "A0",
        "--persona",
        "rational",
        "--seeds",
        "1",
        "--name",
        "first",
    ]
    assert main(other) == 2
    assert "taken by a different spec" in capsys.readouterr().err
    assert main(["--store", db, "run", "--resume", "nope"]) == 2
    assert main(["--store", db, "run", "--benchmark", "mock"]) == 2  # --method missing
    assert "--method" in capsys.readouterr().err


def test_runs_stored_before_names_were_hashed_resume_under_their_id(tmp_path: Path, capsys) -> None:
    from core.model.run import RunSpec

    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        name="old",
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        limit=1,
    )
    legacy_id = "run-" + __import__("core.model.base", fromlist=["x"]).content_hash(
        spec.identity(), 12
    )
    store.put_run(legacy_id, "old", spec.model_dump_json(), 1)
    base = [
        "--store",
        str(store.path),
        "run",
        "--benchmark",
        "mock",
        "--method",
        "B0",
        "--persona",
        "rational",
        "--seeds",
        "1",
        "--limit",
        "1",
        "--name",
        "old",
        "--json",
    ]
    assert main(base) == 0
    out = _json(capsys)
    assert out["run_id"] == legacy_id and out["run"] == "old"
    assert [r["run_id"] for r in store.list_runs()] == [legacy_id]


def test_build_report_counts_what_the_store_holds(built: Path, capsys) -> None:
    db = str(built)
    assert main(["--store", db, "build", "report", "--json", "--text"]) == 0
    rows = _json(capsys)["benchmarks"]
    for r in rows:
        assert set(r) >= TABLE4 and set(r["text"]) == {
            "median_words",
            "tool_name_rate",
            "distinct_offtopic_passages",
            "top_templates",
        }
    sources = {(r["benchmark"], r["source"]) for r in rows}
    assert {("tau2_retail", "bundled"), ("tau2_retail", "built"), ("webshop", "bundled")} <= sources
    built_row = next(r for r in rows if r["source"] == "built")
    store = Store.open(built)
    n = len([r for r in store.sample_rows("tau2_retail") if r["source"] == "built"])
    assert built_row["samples"] == n and built_row["graphs"] > 0
    assert built_row["host_tasks"] == 21 and built_row["candidates"] > 0
    assert sum(built_row["rejected_by_step"].values()) == round(
        built_row["rejection_rate"] * built_row["candidates"]
    )
    assert sum(built_row["by_fault_type"].values()) == n
    assert built_row["gate_removed"] > 0
    assert main(["--store", db, "build", "report", "--source", "built", "--json"]) == 0
    only = _json(capsys)["benchmarks"]
    assert [r["source"] for r in only] == ["built"]
    assert main(["--store", db, "build", "report"]) == 0
    assert "built" in capsys.readouterr().out


def test_env_golden_replays_on_the_world_of_a_sample(built: Path, tmp_path: Path, capsys) -> None:
    db = str(built)
    store = Store.open(built)
    sid, wid = store.conn.execute(
        "SELECT sample_id, json_extract(body, '$.world.world_id') FROM samples "
        "WHERE source='built' ORDER BY sample_id LIMIT 1"
    ).fetchone()
    code = main(
        ["--store", db, "env", "golden", "--benchmark", "tau2_retail", "--sample", sid, "--json"]
    )
    out = _json(capsys)
    assert code == 0 and out["world_id"] == wid and len(out["tasks"]) == 1
    assert out["tasks"][0]["tool_errors"] == 0
    # the same sample in a store without its world is refused
    other = Store.open(tmp_path / "o.db")
    from core.model.intent import IntentGraph
    from core.model.sample import Sample

    s = Sample.model_validate_json(store.sample_json(sid))
    g = IntentGraph.model_validate_json(store.graph_json(s.graph_id))
    other.put_graphs_and_samples([g], [s], source="built")
    W.clear_cache()
    code = main(
        ["--store", str(other.path), "env", "golden", "--benchmark", "tau2_retail", "--sample", sid]
    )
    assert code == 2 and "not in this store" in capsys.readouterr().err
