"""``driftbench grip --check-protocol``: a run's persona statistics recounted from its events."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from core.cli import cmd_grip
from core.grip.protocol_check import RATES, RULES, check_episodes, check_runs, wilson
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path = Path(tmp_path_factory.mktemp("pc")) / "s.db"
    store = Store.open(path)
    spec = RunSpec(
        name="pc", benchmarks=("mock",), methods=("A1", "A2"), personas=PERSONAS, seeds=(0, 1, 2)
    )
    run_sweep(store, spec, RunOptions(workers=1, concurrency=1, progress=False))
    return store


def test_wilson_interval_by_hand() -> None:
    lo, hi = wilson(5, 10, z=1.96)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    assert wilson(0, 10)[0] == pytest.approx(0.0, abs=1e-12)
    assert wilson(10, 10)[1] == pytest.approx(1.0, abs=1e-12)


def test_a_symbolic_run_obeys_the_persona_table(swept: Store) -> None:
    check = check_runs(swept, ["pc"])
    assert check.episodes > 0
    assert {r.statistic for r in check.rates} == set(RATES)
    assert {r.persona for r in check.rates} == set(PERSONAS)
    for pid, v in check.violations.items():
        assert set(v) == set(RULES) and sum(v.values()) == 0, (pid, v)
    counted = [r for r in check.rates if r.n > 0]
    assert counted and all(r.ok for r in counted), [r for r in counted if not r.ok]
    assert all(r.table5 for r in check.rates)  # bundled personas = the published table
    # de-duplicated by draw key: never more draws than (episodes × turns) could hold
    fire = [r for r in check.rates if r.statistic == "shift_fire_prob" and r.n]
    assert fire and all(0 <= r.k <= r.n for r in fire)


def test_a_tampered_run_is_caught(swept: Store) -> None:
    rows = swept.episode_rows(run_id=None)
    pairs = []
    for row in rows:
        header, events = swept.header(row["episode_id"]), swept.events(row["episode_id"])
        start = events[0]
        if start.persona.id != "avoidant":
            continue
        # claim a decline of 0.0 and a different budget than the run really used
        lie = start.persona.model_copy(update={"decline": 0.0})
        forged = start.model_copy(update={"persona": lie, "budget": start.budget + 1})
        events = [forged, *events[1:]]
        pairs.append((header.config, events))
    check = check_episodes(pairs)
    assert not check.ok
    assert check.violations["avoidant"]["budget"] == len(pairs)
    dec = next(r for r in check.rates if r.statistic == "decline")
    assert dec.expected == 0.0 and dec.k > 0 and dec.ok is False and not dec.table5


def test_cli_check_protocol(swept: Store, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store")
    sub = parser.add_subparsers(dest="command")
    cmd_grip.register(sub)
    args = parser.parse_args(["--store", str(swept.path), "grip", "pc", "--check-protocol"])
    assert args.handler(args) == 0
    text = capsys.readouterr().out
    assert "Wilson 99%" in text and "decline" in text and "OK" in text
    args = parser.parse_args(
        ["--store", str(swept.path), "grip", "pc", "--check-protocol", "--json"]
    )
    assert args.handler(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["interval"] == "wilson-99"
    assert {r["statistic"] for r in out["rates"]} == set(RATES)
