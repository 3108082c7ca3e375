"""End to end on the real τ²-bench data and the released benchmark in ``../shared``.

import → build → verify passes on every built sample; ORACLE sweeps on ``--source built`` and
``--source release`` succeed on 100%; a sample whose world fingerprint differs is refused; the
store's ``build report`` carries Table-4 rows for what was built. Skipped with a reason when
the data is absent. About a minute on one core (measured; most of it building retail).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from core.cli import main
from core.construction import worlds as W
from core.store import Store
from tests.conftest import RELEASE, require_hostdata
from tests.core.cli.test_cmd_verify_select import TABLE4

pytestmark = pytest.mark.shared


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(argv)
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if out else {}


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    retail = require_hostdata("tau2_retail")
    airline = require_hostdata("tau2_airline")
    if not RELEASE.is_dir():
        pytest.skip("../shared/driftbench_release absent: release fixture not available")
    W.clear_cache()
    db = tmp_path_factory.mktemp("real") / "real.db"
    s = ["--store", str(db)]
    for domain, src in (("retail", retail), ("airline", airline)):
        assert main([*s, "import", "tau2", "--domain", domain, "--from", str(src), "--json"]) == 0
    for bench in ("tau2_retail", "tau2_airline"):
        assert main([*s, "build", "samples", "--benchmark", bench, "--json"]) == 0
    assert main([*s, "import", "release", "--from", str(RELEASE), "--json"]) == 0
    return db


def test_every_built_sample_verifies_on_its_own_world(real_store: Path, capsys) -> None:
    code, out = _run(["--store", str(real_store), "verify", "--source", "built", "--json"], capsys)
    store = Store.open(real_store)
    built = [r for b in ("tau2_retail", "tau2_airline") for r in store.sample_rows(b)]
    n = sum(r["source"] == "built" for r in built)
    assert code == 0, out["failed"][:5]
    assert out["checked"] == out["passed"] == n > 800


def test_oracle_sweeps_succeed_on_built_and_release_samples(real_store: Path, capsys) -> None:
    s = ["--store", str(real_store)]
    store = Store.open(real_store)
    for source, benchmarks, personas in (
        ("built", "tau2_retail,tau2_airline", "rational"),
        ("release", "tau2_airline", "all"),
    ):
        code, out = _run(
            [
                *s,
                "run",
                "--benchmark",
                benchmarks,
                "--method",
                "ORACLE",
                "--persona",
                personas,
                "--seeds",
                "1",
                "--source",
                source,
                "--name",
                f"oracle-{source}",
                "--json",
            ],
            capsys,
        )
        assert code == 0 and out["errors"] == 0
        outcomes = Counter(r["outcome"] for r in store.episode_rows(run_id=out["run_id"]))
        assert outcomes == {"SUCCESS": out["episodes"]}, outcomes
        assert all(
            set(sel["by_source"]) <= {source}
            or all(k.startswith(f"{source}:") for k in sel["by_source"])
            for sel in out["sources"]
        )
    code, out = _run([*s, "verify", "--source", "release", "--json"], capsys)
    assert code == 0 and out["checked"] == out["passed"] == 27


def test_a_sample_whose_world_fingerprint_differs_is_refused(
    real_store: Path, tmp_path: Path, capsys
) -> None:
    copy = tmp_path / "copy.db"
    src = Store.open(real_store)
    src.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(real_store, copy)
    store = Store.open(copy)
    sid, body = store.conn.execute(
        "SELECT sample_id, body FROM samples WHERE source LIKE 'release:%' ORDER BY sample_id"
    ).fetchone()
    b = json.loads(body)
    b["world"]["fingerprint"] = "f" * 16
    with store.transaction() as conn:
        conn.execute("UPDATE samples SET body=? WHERE sample_id=?", (json.dumps(b), sid))
    W.clear_cache()
    runs = store.list_runs()
    code = main(
        [
            "--store",
            str(copy),
            "run",
            "--benchmark",
            "tau2_airline",
            "--method",
            "ORACLE",
            "--persona",
            "rational",
            "--seeds",
            "1",
            "--source",
            "release",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and sid in err and "data has changed" in err
    assert store.list_runs() == runs  # refused before anything was written


def test_build_report_of_real_data_differs_from_the_bundled_one(
    real_store: Path, tmp_path: Path, capsys
) -> None:
    code, real = _run(["--store", str(real_store), "build", "report", "--json"], capsys)
    assert code == 0
    code, fresh = _run(["--store", str(tmp_path / "empty.db"), "build", "report", "--json"], capsys)
    assert code == 0 and real != fresh
    rows = {(r["benchmark"], r["source"]): r for r in real["benchmarks"]}
    for r in real["benchmarks"]:
        assert set(r) >= TABLE4
    retail, airline = rows[("tau2_retail", "built")], rows[("tau2_airline", "built")]
    assert retail["host_tasks"] == 114 and airline["host_tasks"] == 50
    assert retail["tasks"] > 90 and retail["graphs"] > 80 and retail["samples"] > 500
    assert airline["graphs"] > 20 and airline["samples"] > 150
    for r in (retail, airline):
        assert 0 < r["rejection_rate"] < 1 and r["gate_removed"] > 0
        assert sum(r["by_fault_type"].values()) == r["samples"]
    release = rows[("tau2_airline", "release:driftbench_release")]
    assert release["samples"] == 27 and release["graphs"] == 40
    assert release["candidates"] is None and release["rejection_rate"] is None
    assert ("tau2_retail", "built") not in {
        (r["benchmark"], r["source"]) for r in fresh["benchmarks"]
    }
