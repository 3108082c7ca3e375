import json

import pytest

from core.cli import main
from core.store import Store
from tests.conftest import RELEASE, require_hostdata


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_build_graphs_and_samples_into_store(store_path, capsys) -> None:
    assert (
        main(
            ["--store", str(store_path), "build", "graphs", "--benchmark", "tau2_airline", "--json"]
        )
        == 0
    )
    graphs = _json(capsys)
    assert graphs["benchmark"] == "tau2_airline" and graphs["graphs"] > 0
    assert set(graphs["by_operator"]) <= {"refine", "relax", "substitute", "pivot"}
    code = main(
        [
            "--store",
            str(store_path),
            "build",
            "samples",
            "--benchmark",
            "tau2_airline",
            "--writer",
            "template",
            "--k",
            "1",
            "--per-graph",
            "2",
            "--json",
        ]
    )
    assert code == 0
    out = _json(capsys)
    assert set(out) >= {"benchmark", "candidates", "rejected_by_step", "samples", "by_fault_type"}
    assert out["samples"] > 0
    assert len(Store.open(store_path).sample_rows("tau2_airline")) == out["samples"]


def test_build_samples_rejects_bad_extractors(store_path, capsys) -> None:
    code = main(
        [
            "--store",
            str(store_path),
            "build",
            "samples",
            "--benchmark",
            "tau2_airline",
            "--extractors",
            "rule",
        ]
    )
    assert code == 2
    assert "--extractors" in capsys.readouterr().err
    assert Store.open(store_path).counts()["samples"] == 0


def test_build_report_table4_shape(capsys) -> None:
    assert main(["build", "report", "--json"]) == 0
    report = _json(capsys)
    names = {b["benchmark"] for b in report["benchmarks"]}
    assert {"webshop", "tau2_retail", "tau2_airline"} <= names
    for b in report["benchmarks"]:
        assert set(b) >= {
            "tasks",
            "graphs",
            "candidates",
            "rejected_by_step",
            "rejection_rate",
            "samples",
            "by_fault_type",
        }


def test_import_release_lists_unloaded_worlds(store_path, capsys) -> None:
    if not RELEASE.is_dir():
        pytest.skip("../shared/driftbench_release absent")
    assert (
        main(["--store", str(store_path), "import", "release", "--from", str(RELEASE), "--json"])
        == 0
    )
    report = _json(capsys)
    assert report["imported"] == 0
    assert report["skipped"] and all(
        "not loaded" in s["reason"] or "graph" in s["reason"] for s in report["skipped"]
    )


def test_import_release_with_tau2_airline_loaded(store_path, capsys) -> None:
    airline = require_hostdata("tau2_airline")
    if not RELEASE.is_dir():
        pytest.skip("../shared/driftbench_release absent")
    assert (
        main(
            [
                "--store",
                str(store_path),
                "import",
                "tau2",
                "--domain",
                "airline",
                "--from",
                str(airline),
                "--json",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(["--store", str(store_path), "import", "release", "--from", str(RELEASE), "--json"])
        == 0
    )
    report = _json(capsys)
    assert report["by_benchmark"].get("tau2_airline", 0) > 0
    gt = report["ground_truth_matches"]
    assert gt["checked"] > 0 and gt["matched"] == gt["checked"]
    rows = Store.open(store_path).sample_rows("tau2_airline")
    assert len(rows) == report["by_benchmark"]["tau2_airline"]


def test_import_release_malformed_is_exit_2_and_store_untouched(
    tmp_path, store_path, capsys
) -> None:
    bad = tmp_path / "rel"
    bad.mkdir()
    (bad / "bundle.json").write_text(json.dumps({"results": {"oops": 1}, "summary": {}}))
    Store.open(store_path).close()  # checkpointed: the main file holds everything
    before = store_path.read_bytes()
    assert main(["--store", str(store_path), "import", "release", "--from", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bundle.json" in err and "results" in err
    assert store_path.read_bytes() == before
