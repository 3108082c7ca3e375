"""The bundled worlds: byte-identical regeneration, golden replays, write-tool coverage."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.envs.tau2 import generate_bundled, golden_report, load_tau2_world
from core.envs.tau2.generate import BUNDLED_SEEDS
from core.paths import DATA_DIR

FILES = ("db.json", "tasks.json", "split_tasks.json", "policy.md")


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_regenerates_byte_identically(domain: str, tmp_path: Path) -> None:
    generate_bundled(domain, BUNDLED_SEEDS[domain], tmp_path)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (
            DATA_DIR / f"tau2_{domain}" / name
        ).read_bytes(), name


def test_other_seed_differs(tmp_path: Path) -> None:
    generate_bundled("airline", 7, tmp_path)
    assert (tmp_path / "db.json").read_bytes() != (
        DATA_DIR / "tau2_airline" / "db.json"
    ).read_bytes()
    assert load_tau2_world("airline", tmp_path).seeds()


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_bundled_golden_replays(domain: str) -> None:
    world = load_tau2_world(domain)
    assert world.source.endswith(f"tau2_{domain}")
    report = golden_report(world)
    expected_failures = {
        t.id: sum(a.info == "expected lookup failure" for a in t.actions) for t in world.tasks
    }
    assert {r["task_id"]: r["tool_errors"] for r in report["tasks"]} == expected_failures
    writes = {
        world.tool_kind(a.name) and a.name
        for t in world.tasks
        for a in t.actions
        if world.tool_kind(a.name) == "write"
    }
    assert writes == {
        t.name for t in world.tools() if t.kind == "write"
    }  # every write tool covered
    assert 20 <= len(world.base.records["users"]) <= 60
    seeds = world.seeds()
    assert len(seeds) == sum(
        1 for r in report["tasks"] if r["final_state_hash"] != report["initial_state_hash"]
    )
    # every task's golden state differs per task and equals the seed ground truth
    gold = {r["task_id"]: r["final_state_hash"] for r in report["tasks"]}
    assert all(s.ground_truth is not None and s.ground_truth.value == [gold[s.base]] for s in seeds)


def test_golden_report_shape() -> None:
    world = load_tau2_world("airline")
    report = golden_report(world, task_id=world.tasks[0].id)
    assert list(report) == ["benchmark", "initial_state_hash", "tasks"]
    assert report["benchmark"] == "tau2_airline"
    [row] = report["tasks"]
    assert list(row) == ["task_id", "final_state_hash", "tool_errors", "ms"]
    assert isinstance(row["tool_errors"], int) and isinstance(row["ms"], float)
    assert row["task_id"] == world.tasks[0].id
