"""The models file's agent in the studio (issue 29): offered, played in JSON, visible while it
plays, waiting for the person, with the model's progress reported action by action."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from core.agents.llm_agent import LLMAgent
from core.llm import ScriptedLLM
from core.llm.models import configure, use_config
from core.model.events import EpisodeStarted, TurnStarted
from core.runner.inflight import Board, TrackedLog, read_inflight, write_board
from core.store import Store
from core.studio import roleplay as play
from core.studio import watch as live
from core.studio.providers import studio_agents
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    use_config(None)
    yield
    use_config(None)


def _models(tmp_path: Path, base: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(f"agent: {{model: openai/local, api_base: '{base}'}}\n", encoding="utf-8")
    return path


def test_the_models_file_agent_is_offered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DRIFTBENCH_PLAY_MODEL", raising=False)
    assert studio_agents() == []
    configure(_models(tmp_path, "http://127.0.0.1:9/v1"))
    assert studio_agents() == ["openai/local@http://127.0.0.1:9/v1"]


def test_play_as_user_waits_for_the_person_and_reports_progress(store: Store) -> None:
    asks = json.dumps({"action": {"kind": "clarify", "content": "Which colour would you like?"}})
    ops = json.dumps(
        {"action": {"kind": "operation", "tool": "search", "arguments": {"query": "shirt"}}}
    )
    client = ScriptedLLM([ops, asks], cycle=False)
    eid = play.start_user_play(
        store,
        benchmark="mock",
        sample_id=None,
        persona="rational",
        seed=1,
        method="A0",
        model="openai/local",
    )
    heard: list[str] = []
    view = play.advance(store, eid, client=client, on_action=lambda a: heard.append(a.kind))
    assert heard == ["env", "ask"]  # each action reported as it was taken
    assert not view.ended and view.pending_question is not None  # it waits for the person
    assert "JSON" in client.calls[0].messages[0]["content"]  # the studio plays in JSON


def test_watch_live_drives_an_llm_agent(store: Store, fake_llm_server: FakeOpenAIServer) -> None:
    answer = {"action": {"kind": "answer", "answer": "teal shirt", "predicted_user_question": ""}}
    fake_llm_server.responder = lambda body: json.dumps(answer)
    from core.studio.bootstrap import load_bundled_samples

    load_bundled_samples(store)
    sample_id = next(r["sample_id"] for r in store.sample_rows() if r["benchmark"] == "tau2_retail")
    agent_spec = f"openai/local@{fake_llm_server.base_url}"
    eid = live.start_watched(store, sample_id, "rational", "A0", 0, agent=agent_spec)
    agent = live.make_episode_agent(store, eid)
    assert isinstance(agent, LLMAgent) and agent.action_format == "json"
    assert live.drive(store, eid) != "running"
    assert fake_llm_server.request_count >= 1
    assert "response_format" in fake_llm_server.requests[0]


def test_llm_episodes_are_visible_while_they_run(tmp_path: Path) -> None:
    from core.envs.mock import mock_graph, mock_sample
    from core.model.sample import FaultType

    board = Board()
    log = TrackedLog("run-x", board)
    from core.engine import episode

    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "openai/m",
        None,
        graph=mock_graph(),
        method="A0",
    )
    assert isinstance(log.events(eid)[0], EpisodeStarted)
    write_board(tmp_path, "run-x", board)
    (row,) = read_inflight(tmp_path, "run-x")
    assert row["episode_id"] == eid and row["benchmark"] == "mock" and row["actions"] == 0
    log.append(eid, [TurnStarted(seq=len(log.events(eid)), turn=0, patience=10.0, intent_id="i")])
    write_board(tmp_path, "run-x", board)
    (row,) = read_inflight(tmp_path, "run-x")
    assert row["thinking_s"] is not None  # the model is working on its next action
    board.drop(eid)
    write_board(tmp_path, "run-x", board)
    assert read_inflight(tmp_path, "run-x") == []
    stale = tmp_path / "inflight-run-y-1.json"
    stale.write_text(json.dumps({"written": time.time() - 3600, "rows": [{"episode_id": "e"}]}))
    assert read_inflight(tmp_path, "run-y") == []
