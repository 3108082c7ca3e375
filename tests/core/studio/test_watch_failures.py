"""The live watcher: an agent that raises (in process or in the worker) ends the episode with the
error recorded; the worker's output goes to a log file next to the store; a stopped worker
records its episode as cancelled."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from core.agents.base import AgentBase
from core.engine import episode
from core.envs.mock import mock_graph, mock_sample
from core.model.actions import AgentAction
from core.model.episode import AgentView
from core.model.sample import FaultType
from core.paths import PROJECT_ROOT
from core.store import Store
from core.studio import watch as live
from core.studio.bootstrap import load_bundled_samples

RAISING_AGENTS = """
from core.agents.symbolic import SymbolicAgent

def _boom(self, view):
    raise RuntimeError("symbolic policy exploded in the worker")

SymbolicAgent.act = _boom
"""


@pytest.fixture
def loaded_store(store: Store) -> Store:
    load_bundled_samples(store)
    return store


def _sample(store: Store) -> str:
    rows = [r for r in store.sample_rows("webshop") if r["k"] == 1]
    assert rows, "no bundled webshop samples"
    return rows[0]["sample_id"]


def _wait_ended(store: Store, eid: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        bodies = store.event_jsons(eid)
        last = json.loads(bodies[-1])
        if last["kind"] == "episode_ended":
            return last
        time.sleep(0.1)
    raise AssertionError(f"episode {eid} never ended; worker log:\n{_log(store, eid)}")


def _log(store: Store, eid: str) -> str:
    p = live.driver_log(store.path, eid)
    return p.read_text(encoding="utf-8", errors="replace") if p.exists() else "(no log)"


class _Raises(AgentBase):
    def act(self, view: AgentView) -> AgentAction:
        raise ValueError("agent bug")


def test_drive_records_a_raising_agent(
    loaded_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "build_agent", lambda *a, **k: _Raises())
    eid = live.start_watched(loaded_store, _sample(loaded_store), "rational", "A2", 0)
    assert live.drive(loaded_store, eid) == "ERROR"
    last = json.loads(loaded_store.event_jsons(eid)[-1])
    assert last["kind"] == "episode_ended" and last["outcome"] == "ERROR"
    assert last["reason"] == "agent_error" and last["error"] == "ValueError: agent bug"
    assert loaded_store.episode_rows()[0]["status"] == "ended"


def test_drive_records_an_agent_that_cannot_be_built(store: Store) -> None:
    # the sample is not in the store: the worker cannot rebuild the agent's literal reading
    eid = episode.start(
        store,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "symbolic",
        graph=mock_graph(),
        method="A0",
    )
    assert live.drive(store, eid) == "ERROR"
    last = json.loads(store.event_jsons(eid)[-1])
    assert last["reason"] == "agent_error" and "NotFoundError" in last["error"]


def test_spawned_worker_records_a_raising_agent_and_keeps_its_output(
    loaded_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(RAISING_AGENTS, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hook), str(PROJECT_ROOT)]))
    eid = live.start_watched(loaded_store, _sample(loaded_store), "dependent", "A0", 1)
    assert live.spawn_driver(loaded_store.path, eid, pace_s=0.0) > 0
    last = _wait_ended(loaded_store, eid)
    assert last["outcome"] == "ERROR" and last["reason"] == "agent_error"
    assert last["error"] == "RuntimeError: symbolic policy exploded in the worker"
    log = live.driver_log(loaded_store.path, eid)
    assert log.parent == loaded_store.path.parent / "jobs"
    deadline = time.monotonic() + 30
    while "ERROR" not in _log(loaded_store, eid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert f"drive {eid}" in _log(loaded_store, eid) and "ERROR" in _log(loaded_store, eid)


def test_worker_errors_reach_its_log_file(loaded_store: Store) -> None:
    eid = live.start_watched(loaded_store, _sample(loaded_store), "rational", "A0", 2)
    human = live.branch(loaded_store, eid, 1, live.HUMAN)
    before = loaded_store.event_jsons(human)
    live.spawn_driver(loaded_store.path, human, pace_s=0.0)
    deadline = time.monotonic() + 60
    while "played by a person" not in _log(loaded_store, human):
        assert time.monotonic() < deadline, _log(loaded_store, human)
        time.sleep(0.1)
    assert loaded_store.event_jsons(human) == before  # a person's episode is left alone


def test_stopped_worker_records_the_episode_as_cancelled(loaded_store: Store) -> None:
    eid = live.start_watched(loaded_store, _sample(loaded_store), "avoidant", "A2", 3)
    n0 = len(loaded_store.event_jsons(eid))
    pid = live.spawn_driver(loaded_store.path, eid, pace_s=5.0)
    deadline = time.monotonic() + 60
    while len(loaded_store.event_jsons(eid)) == n0:  # the first action is stored, then a pause
        assert time.monotonic() < deadline, _log(loaded_store, eid)
        time.sleep(0.05)
    os.kill(pid, signal.SIGTERM)
    last = _wait_ended(loaded_store, eid)
    assert last["outcome"] == "ERROR" and last["reason"] == "cancelled"
    assert "SystemExit" in last["error"]
