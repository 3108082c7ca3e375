"""Crash/resume: SIGKILL a background sweep at random points, resume, compare event for event.

The reference is one uninterrupted run of the same spec. Kill points are drawn from explicit
seeds (``random.Random(seed)``): a number of finished episodes to wait for, plus a random extra
delay so some kills land inside a write. Helpers come from ``tests/core/test_runner.py``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import launch, run_sweep
from core.store import Store
from tests.core.test_runner import _logs, _mock_spec

# One transaction per finished episode, so kill points can land between any two episodes
# (the default batches a whole small sweep into one write).
OPTS = RunOptions(workers=1, progress=False, write_batch=1, write_interval_s=0.0)


def _spec() -> RunSpec:
    return _mock_spec(methods=("B0", "A0", "A2"), personas=PERSONAS, seeds=(0,))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str, int]:
    """One uninterrupted run of the spec: (store, run id, episodes)."""
    store = Store.open(tmp_path_factory.mktemp("ref") / "ref.db")
    res = run_sweep(store, _spec(), OPTS)
    assert res.status == "completed" and res.errors == 0
    return store, res.run_id, res.episodes


def _ended(store: Store, run_id: str) -> int:
    return len(store.episode_rows(run_id=run_id, status="ended"))


def _kill_at(path: Path, spec: RunSpec, rng: random.Random, total: int) -> int:
    """Launch the sweep in the background, SIGKILL it at a random point, return episodes ended."""
    store = Store.open(path)
    target = rng.randint(0, total * 2 // 3)  # the runner writes in batches: leave it room
    extra = rng.uniform(0.0, 0.02)
    pid = launch(path, spec, OPTS)
    try:
        deadline = time.monotonic() + 120
        while _ended(store, spec.run_id()) < target and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(extra)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    n = _ended(store, spec.run_id())
    store.close()
    return n


def _assert_well_formed(store: Store, run_id: str) -> None:
    """No row left running; every episode's events are contiguous and end exactly once."""
    rows = store.episode_rows(run_id=run_id)
    assert all(r["status"] == "ended" for r in rows)
    for r in rows:
        events = [json.loads(b) for b in store.event_jsons(r["episode_id"])]
        assert [e["seq"] for e in events] == list(range(len(events)))
        if r["outcome"] != "ERROR":
            assert [e["kind"] for e in events].count("episode_ended") == 1
            assert events[-1]["kind"] == "episode_ended"


def _crash_and_resume(tmp_path: Path, seed: int, kills: int, ref: tuple[Store, str, int]) -> None:
    ref_store, ref_run, total = ref
    spec = _spec()
    rng = random.Random(seed)
    for attempt in range(4):  # a kill drawn too late may land after the end: draw again
        path = tmp_path / f"killed-{seed}-{attempt}.db"
        partial = [_kill_at(path, spec, rng, total) for _ in range(kills)]
        if partial[-1] < total:
            break
    assert partial[-1] < total, f"seed {seed}: every sweep finished before its kill"
    store = Store.open(path)
    resumed = run_sweep(store, spec, OPTS)
    assert resumed.completed == total and resumed.errors == 0, resumed
    assert resumed.status == "completed"
    assert store.get_run(spec.run_id())["completed"] == total
    _assert_well_formed(store, spec.run_id())
    assert _logs(store, spec.run_id()) == _logs(ref_store, ref_run)


@pytest.mark.parametrize(
    "seed", [11, pytest.param(29, marks=pytest.mark.slow), pytest.param(47, marks=pytest.mark.slow)]
)
def test_sigkill_at_random_point_then_resume_equals_uninterrupted(
    tmp_path: Path, seed: int, reference: tuple[Store, str, int]
) -> None:
    _crash_and_resume(tmp_path, seed, kills=1, ref=reference)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 5, 8])
def test_sigkill_many_seeds(tmp_path: Path, seed: int, reference: tuple[Store, str, int]) -> None:
    _crash_and_resume(tmp_path, seed, kills=1, ref=reference)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [13, 21])
def test_repeated_sigkills_then_resume(
    tmp_path: Path, seed: int, reference: tuple[Store, str, int]
) -> None:
    """Kill, relaunch (a resume in the background), kill again, …, then resume to the end."""
    _crash_and_resume(tmp_path, seed, kills=3, ref=reference)


def test_sigkill_before_any_episode_then_resume(
    tmp_path: Path, reference: tuple[Store, str, int]
) -> None:
    """A kill right after launch (the run row exists, nothing played) resumes cleanly."""
    ref_store, ref_run, total = reference
    spec = _spec()
    path = tmp_path / "early.db"
    pid = launch(path, spec, OPTS)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    store = Store.open(path)
    assert store.get_run(spec.run_id())["status"] == "pending"
    resumed = run_sweep(store, spec, OPTS)
    assert resumed.completed == total and resumed.skipped == 0
    assert _logs(store, spec.run_id()) == _logs(ref_store, ref_run)


def _grip_json(store: Store, run_id: str) -> str:
    from core.grip.report import build_report

    report = build_report(store, [run_id], by="benchmark,method,persona", use_cache=False)
    return json.dumps(report.to_json(), ensure_ascii=False, allow_nan=False)


def test_sigkill_then_resume_gives_the_same_grip_json_byte_for_byte(
    tmp_path: Path, reference: tuple[Store, str, int]
) -> None:
    """GRIP aggregates are order-free: a resumed run reports exactly what an unbroken one does."""
    ref_store, ref_run, total = reference
    spec = _spec()
    rng = random.Random(71)
    for attempt in range(4):
        path = tmp_path / f"grip-{attempt}.db"
        if _kill_at(path, spec, rng, total) < total:
            break
    store = Store.open(path)
    resumed = run_sweep(store, spec, OPTS)
    assert resumed.completed == total
    assert _grip_json(store, spec.run_id()) == _grip_json(ref_store, ref_run)
