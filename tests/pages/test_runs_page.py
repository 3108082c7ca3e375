"""Runs page (AppTest): empty store, demo store, launch in the background, cancel, resume."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store

PAGE = str(PROJECT_ROOT / "pages" / "runs.py")


@pytest.fixture
def own_home(research_home: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store (this test launches runs into it)."""
    src = sqlite3.connect(research_home / "driftbench.db")
    dst = sqlite3.connect(tmp_path / "driftbench.db")
    src.backup(dst)
    src.close()
    dst.close()
    return tmp_path


def open_page(home: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    return AppTest.from_file(PAGE, default_timeout=60).run()


def frame_with(at: AppTest, column: str):  # type: ignore[no-untyped-def]
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with a {column!r} column")


def wait_for(home: Path, run: str, statuses: set[str], timeout: float = 90.0) -> str:
    store = Store.open(home / "driftbench.db")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = str(store.get_run(run)["status"])
        if status in statuses:
            return status
        time.sleep(0.1)
    raise AssertionError(f"{run} is still {store.get_run(run)['status']}")


def wait_worker_gone(home: Path, run: str, timeout: float = 30.0) -> None:
    from core.studio.jobs import worker_state

    store = Store.open(home / "driftbench.db")
    run_id = str(store.get_run(run)["run_id"])
    deadline = time.monotonic() + timeout
    while worker_state(store, run_id)[0] == "alive" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker_state(store, run_id)[0] == "exited"


def fill_form(
    at: AppTest, *, name: str, limit: int, personas: list[str], workers: int = 0
) -> AppTest:
    at.multiselect(key="runs-benchmarks").set_value(["webshop"])
    at.multiselect(key="runs-methods").set_value(["B0"])
    at.multiselect(key="runs-personas").set_value(personas)
    at.number_input(key="runs-limit").set_value(limit)
    at.text_input(key="runs-name").input(name)
    at.number_input(key="runs-workers").set_value(workers)
    return at.button(key="runs-launch").click().run()


def test_runs_page_on_an_empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(tmp_path, monkeypatch)
    assert not at.exception
    assert at.title[0].value == "Runs"
    assert any("No samples in the store" in i.value for i in at.info)
    assert any("No runs yet" in i.value for i in at.info)
    at.button(key="runs-launch").click().run()
    assert any("benchmarks" in e.value for e in at.error)  # nothing to run: named field
    assert Store.open(tmp_path / "driftbench.db").list_runs() == []


def test_runs_page_on_the_demo_store(research_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(research_home, monkeypatch)
    assert not at.exception
    table = frame_with(at, "progress")
    assert {"demo", "second"} <= set(table["name"])
    demo = table.set_index("name").loc["demo"]
    assert demo["status"] == "completed" and demo["progress"] == 1.0
    assert demo["worker"] == "unknown"  # launched by `init`, not by the studio
    at.selectbox(key="runs-selected").select("demo").run()
    assert [m.value for m in at.metric][:2] == ["completed", "90/90"]
    assert at.button(key="runs-cancel").disabled
    assert at.button(key="runs-stop").disabled
    assert at.button(key="runs-resume").disabled  # a completed run has nothing to resume
    assert any("grip?run=demo" in m.value for m in at.markdown)
    assert any("offline approximation" in c.value for c in at.caption)


def test_launch_watch_and_resume(own_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(own_home, monkeypatch)
    fill_form(at, name="tiny", limit=1, personas=["rational", "avoidant"])
    assert not at.exception
    assert any("Launched tiny in worker process" in s.value for s in at.success)
    assert at.selectbox(key="runs-selected").value == "tiny"
    assert wait_for(own_home, "tiny", {"completed", "completed_with_errors", "failed"}) == (
        "completed"
    )
    wait_worker_gone(own_home, "tiny")
    at.run()
    row = frame_with(at, "progress").set_index("name").loc["tiny"]
    assert row["done"] == "2/2" and row["worker"].startswith("exited")
    n = Store.open(own_home / "driftbench.db").counts()["episodes"]
    assert at.button(key="runs-resume").disabled  # completed: nothing to resume
    # launching the same spec again resumes it: every finished episode is skipped
    fill_form(at, name="tiny", limit=1, personas=["rational", "avoidant"])
    assert any("Launched tiny" in s.value for s in at.success)
    wait_for(own_home, "tiny", {"completed"})
    wait_worker_gone(own_home, "tiny")
    assert Store.open(own_home / "driftbench.db").counts()["episodes"] == n  # all skipped
    assert any("launch tiny" in c.value for c in at.code)  # the worker log is kept
    # the same name for a different spec is refused, naming the field
    fill_form(at, name="tiny", limit=2, personas=["rational"])
    assert any("taken by a different spec" in e.value for e in at.error)


def test_cancel_and_stop_a_long_run(own_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(own_home, monkeypatch)
    # every webshop sample, played inline (one worker) so a cancel lands between samples
    fill_form(at, name="long", limit=0, personas=["rational"], workers=1)
    assert any("Launched long" in s.value for s in at.success)
    wait_for(own_home, "long", {"running"})
    at.run()
    assert not at.button(key="runs-cancel").disabled
    at.button(key="runs-cancel").click().run()
    assert any("worker stops" in s.value for s in at.success)
    assert wait_for(own_home, "long", {"cancelled"}) == "cancelled"
    wait_worker_gone(own_home, "long")
    store = Store.open(own_home / "driftbench.db")
    run = store.get_run("long")
    assert run["completed"] < run["total"]
    # resume, then stop the worker hard
    at.run()
    at.button(key="runs-resume").click().run()
    wait_for(own_home, "long", {"running"})
    at.run()
    assert not at.button(key="runs-stop").disabled
    at.button(key="runs-stop").click().run()
    assert any("worker stopped" in s.value for s in at.success)
    assert store.get_run("long")["status"] == "cancelled"
    wait_worker_gone(own_home, "long")


def test_launch_form_offers_the_stored_provenances(
    own_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.model.run import RunSpec

    at = open_page(own_home, monkeypatch)
    options = at.selectbox(key="runs-source").options
    assert options[:2] == ["all", "bundled"]
    at.selectbox(key="runs-source").select("bundled")
    fill_form(at, name="bundledonly", limit=1, personas=["rational"])
    assert not at.exception
    assert any("Launched bundledonly" in s.value for s in at.success)
    store = Store.open(own_home / "driftbench.db")
    spec = RunSpec.model_validate_json(store.get_run("bundledonly")["spec"])
    assert spec.source == "bundled" and spec.split is None
    wait_for(own_home, "bundledonly", {"completed", "completed_with_errors", "failed"})
    wait_worker_gone(own_home, "bundledonly")


def test_launch_form_sets_the_paper_conditions(
    own_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shifts off and single-fault samples from the form land in the run's spec (identity)."""
    from core.model.run import RunSpec

    at = open_page(own_home, monkeypatch)
    assert at.selectbox(key="runs-faults").options == [
        "all",
        "single",
        "composite",
        "k1",
        "k2",
        "k4",
    ]
    at.radio(key="runs-shifts").set_value("off")
    at.selectbox(key="runs-faults").select("single")
    fill_form(at, name="conds", limit=1, personas=["rational"])
    assert not at.exception
    store = Store.open(own_home / "driftbench.db")
    spec = RunSpec.model_validate_json(store.get_run("conds")["spec"])
    assert spec.faults == "single" and spec.config.shifts_enabled is False
    assert spec.conditions() == {"shifts": "off", "faults": "single"}
    wait_for(own_home, "conds", {"completed", "completed_with_errors", "failed"})
    wait_worker_gone(own_home, "conds")
