"""The tolerant parser's repairs become ``repair`` events (target ``action_format``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.agents.factory import build_agent
from core.agents.wire import ActionRepair
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_samples
from core.llm import ScriptedLLM
from core.model.config import ProtocolConfig
from core.model.events import EVENT_ADAPTER, dump_event, parse_event
from core.runner.plan import literal_intent

GOLDEN = Path(__file__).parents[1] / "model" / "golden" / "v1" / "repair_targets"


def _play(method: str, replies: list[str], cfg: ProtocolConfig | None = None):  # type: ignore[no-untyped-def]
    log = InMemoryEventLog()
    g, w, s = mock_graph(), load_mock_world(), mock_samples()[0]
    eid = episode.start(log, s, "rational", 0, "scripted", cfg, graph=g, method=method)
    llm = ScriptedLLM(replies, cycle=True)
    agent = build_agent(method, world=w, literal=literal_intent(s, g), client=llm)
    episode.run(log, eid, agent)
    return log.events(eid), agent


def test_golden_action_format_repair_round_trips() -> None:
    data = json.loads((GOLDEN / "action_format.json").read_text())
    got = parse_event(data)
    assert got.kind == "repair" and got.target == "action_format"
    assert dump_event(got) == data
    assert EVENT_ADAPTER.validate_json(json.dumps(data)) == got


def test_repaired_action_is_recorded_after_its_agent_action() -> None:
    events, agent = _play(
        "B0", ["Action: operation\nsearch[teal shirt]", "Action: Answer\nFinal Answer: done"]
    )
    first = [e for e in events if e.turn == 1]
    kinds = [e.kind for e in first]
    assert kinds[:3] == ["turn_started", "agent_action", "repair"], kinds
    act, rep = first[1], first[2]
    assert act.action.kind == "env" and act.action.action.tool == "search"
    assert rep.target == "action_format" and rep.detail == "unfenced_operation"
    assert rep.original == "Action: operation\nsearch[teal shirt]"
    assert rep.replacement == "Action: Operation\n```\nsearch[teal shirt]\n```"
    assert agent.pop_repairs() == []  # handed over once
    assert "unfenced_operation" in agent.repairs  # the episode's history stays on the agent
    # a well-formed reply records nothing
    assert all(e.kind != "repair" for e in events if e.turn == 2)


def test_malformed_reply_costs_one_patience_and_records_the_reprompt() -> None:
    events, agent = _play("B0", ["Action: Clarify\nContent: what size?"])
    turn1 = [e for e in events if e.turn == 1]
    act = next(e for e in turn1 if e.kind == "agent_action")
    assert act.action.kind == "malformed"
    charge = next(e for e in turn1 if e.kind == "patience_charged")
    assert charge.reason == "malformed" and charge.cost == 1.0
    assert charge.before - charge.after == pytest.approx(1.0)
    reps = [e for e in turn1 if e.kind == "repair"]
    assert [r.target for r in reps] == ["action_format"]
    assert reps[0].detail.startswith("reprompt: ") and "cannot message the user" in reps[0].detail
    assert reps[0].original == reps[0].replacement == "Action: Clarify\nContent: what size?"
    assert "reprompt" in agent.repairs


def test_repair_event_texts_are_capped() -> None:
    log = InMemoryEventLog()
    g, s = mock_graph(), mock_samples()[0]
    eid = episode.start(log, s, "rational", 0, "x", graph=g, method="B0")
    from core.model.actions import Propose

    big = "x" * 50_000
    episode.step(log, eid, Propose(text="done"), repairs=[ActionRepair("d" * 5000, big, big)])
    (rep,) = [e for e in log.events(eid) if e.kind == "repair"]
    cap = episode.REPAIR_TEXT_CHARS
    assert len(rep.detail) == len(rep.original) == len(rep.replacement) == cap


def test_repairs_replay_to_the_same_state() -> None:
    events, _ = _play(
        "A2", ["Action: operation\nsearch[teal shirt]", "Action: Answer\nFinal Answer: done"]
    )
    assert any(e.kind == "repair" and e.target == "action_format" for e in events)
    live = episode.replay(events)
    assert live.repairs_used == 0  # parser repairs are not forced-final format repairs
    assert live.ended and live.turn == max(e.turn for e in events)
