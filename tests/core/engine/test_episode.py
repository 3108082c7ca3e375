"""The orchestrator: steps, endings, views, replay, fork, leaks, errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "protocol"))
from protohelp import ListAgent, ask, buy, persona, search  # noqa: E402

from core.agents import make_agent  # noqa: E402
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_sample, mock_samples  # noqa: E402
from core.errors import ConfigError, ProtocolError  # noqa: E402
from core.model.actions import EnvOp, Malformed, Propose
from core.model.config import ProtocolConfig  # noqa: E402
from core.model.episode import Outcome, TerminationReason  # noqa: E402
from core.model.events import dump_event  # noqa: E402
from core.model.sample import FaultType  # noqa: E402
from core.model.world import EnvAction
from core.protocol.personas import load_personas  # noqa: E402

NEVER = ProtocolConfig(shift_fire_prob=0.0)
SAMPLE = mock_sample(FaultType.INSUFFICIENT_INFORMATION)


def _start(log, pid="rational", seed=0, config=None, **kw):
    return episode.start(
        log, SAMPLE, pid, seed, kw.pop("agent", "LIST"), config, graph=mock_graph(), **kw
    )


def test_start_records_header_and_opening(log=None):
    log = InMemoryEventLog()
    eid = _start(log, "dependent", seed=4, method="A0", run_id="r1")
    h = log.header(eid)
    assert h.persona_id == "dependent" and h.seed == 4 and h.method == "A0" and h.run_id == "r1"
    assert h.config_hash == ProtocolConfig().config_hash() and h.config.version == "proto-4"
    first = log.events(eid)[0]
    assert first.kind == "episode_started" and first.budget == 12.0 and first.seq == 0
    assert first.turn_cap == 20


def test_start_rejects_mismatched_graph():
    from core.model.intent import IntentGraph

    g = mock_graph()
    other = IntentGraph(graph_id="x" * 16, benchmark="mock", env_id="e", root=g.root)
    with pytest.raises(ConfigError):
        episode.start(InMemoryEventLog(), SAMPLE, "rational", 0, "L", graph=other)


def test_step_and_view_and_ended_misuse():
    log = InMemoryEventLog()
    eid = _start(log, config=NEVER)
    v = episode.step(log, eid, search("teal shirt"))
    assert v.turn == 1 and v.transcript[-1].role == "environment" and "s01" in v.transcript[-1].text
    episode.step(log, eid, buy("s01"))
    v = episode.step(log, eid, Propose(text="done"))
    assert v.ended and v.outcome is Outcome.SUCCESS
    with pytest.raises(ProtocolError):
        episode.step(log, eid, Propose(text="again"))
    assert log.summary(eid)["outcome"] == "SUCCESS"


def test_turn_cap_forced_final_with_one_format_repair_and_turns_exceeded():
    log = InMemoryEventLog()
    cfg = ProtocolConfig(
        shift_fire_prob=0.0, benchmarks={"mock": {"turn_cap": 3, "category_mix": {"relax": 1}}}
    )
    eid = _start(log, config=cfg)
    st = episode.run(log, eid, ListAgent([search()] * 3 + [ask("color"), ask("color")]))
    kinds = [e.kind for e in log.events(eid)]
    assert kinds.count("forced_final") == 1 and kinds.count("repair") == 1
    ff = next(e for e in log.events(eid) if e.kind == "forced_final")
    assert ff.reason == "turn_cap"
    assert (
        st.outcome is Outcome.TURNS_EXCEEDED
        and st.reason is TerminationReason.FORCED_FINAL_REJECTED
    )
    # the forced-final questions were not answered
    assert not any(e.kind == "user_reply" for e in log.events(eid))


def test_forced_final_answer_can_succeed_after_turn_cap():
    log = InMemoryEventLog()
    cfg = ProtocolConfig(
        shift_fire_prob=0.0, benchmarks={"mock": {"turn_cap": 2, "category_mix": {"relax": 1}}}
    )
    eid = _start(log, config=cfg)
    st = episode.run(log, eid, ListAgent([search(), buy("s01"), Propose(text="done")]))
    assert st.outcome is Outcome.SUCCESS and st.reason is TerminationReason.FORCED_FINAL_ACCEPTED


def test_exhaustion_goes_through_forced_final():
    log = InMemoryEventLog()
    eid = _start(log, "avoidant", config=NEVER)
    st = episode.run(log, eid, make_agent("NOOP"))
    assert st.outcome is Outcome.EXHAUSTED and st.patience == 0.0
    assert any(e.kind == "forced_final" and e.reason == "exhausted" for e in log.events(eid))


def test_agent_view_patience_meter_visibility():
    for method, shown in (("A0", False), ("B0", False), ("A2", True), ("A3", True)):
        log = InMemoryEventLog()
        eid = _start(log, method=method)
        v = episode.agent_view(log, eid)
        assert (v.patience is not None) is shown and (v.costs is not None) is shown
    log = InMemoryEventLog()
    eid = _start(log, method="human", config=ProtocolConfig(patience_visible=True))
    assert episode.agent_view(log, eid).patience == 10.0
    log = InMemoryEventLog()
    eid = _start(log, method="A2", config=ProtocolConfig(patience_visible=False))
    assert episode.agent_view(log, eid).patience is None


FORBIDDEN_KEYS = {
    "mask",
    "hidden_slots",
    "persona",
    "intent_id",
    "ground_truth",
    "thresholds",
    "fates",
    "edge",
    "graph",
    "conditions",
}


def _keys(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            _keys(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _keys(v, out)
    return out


@pytest.mark.parametrize("sample", mock_samples(), ids=lambda s: s.faults[0].value)
def test_agent_view_never_leaks_hidden_values(sample):
    """For every fault type the agent view holds none of the withheld/misstated true values."""
    hidden_values = {
        str(m.true_value).lower() for m in sample.mask if m.hidden and m.true_value is not None
    }
    for pid in load_personas():
        log = InMemoryEventLog()
        eid = episode.start(
            log, sample, pid, 1, "L", ProtocolConfig(shift_fire_prob=1.0), graph=mock_graph()
        )
        agent = ListAgent(
            [ask(None, "Is it raining where you are?"), Propose(text="x"), Malformed()] * 4
        )
        episode.run(log, eid, agent)
        views = [v.model_dump(mode="json") for v in agent.views] + [
            episode.agent_view(log, eid).model_dump(mode="json")
        ]
        for v in views:
            blob = json.dumps(v).lower()
            for val in hidden_values:
                assert not re.search(rf"\b{re.escape(val)}\b", blob), (sample.faults, pid, val)
            assert not (_keys(v, set()) & FORBIDDEN_KEYS)


def test_views_roles():
    log = InMemoryEventLog()
    eid = _start(log, "dependent", config=ProtocolConfig(shift_fire_prob=1.0))
    episode.run(log, eid, ListAgent([ask("color")] * 6))
    uv = episode.user_view(log, eid)
    assert uv.persona.id == "dependent" and uv.intent and uv.budget == 12.0
    assert any(line.hidden for line in uv.intent) or uv.shift_notes
    rv = episode.researcher_view(log, eid)
    assert rv.state["shifts_fired"] == len([e for e in rv.events if e["kind"] == "shift_fired"])
    assert rv.header.episode_id == eid and rv.agent_view.episode_id == eid


def test_state_is_rebuilt_from_stored_events_alone():
    log = InMemoryEventLog()
    eid = _start(log, "intuitive", seed=2, config=ProtocolConfig(shift_fire_prob=1.0))
    episode.step(log, eid, ask("size", "Which size?"))
    episode.step(log, eid, buy("s01"))
    before = episode.researcher_view(log, eid)
    log.live.clear()  # a crash / another process: nothing but the log survives
    after = episode.researcher_view(log, eid)
    assert before.state == after.state and before.agent_view == after.agent_view
    # the environment session is rebuilt too: the purchase is still there
    v = episode.step(log, eid, Propose(text="done"))
    assert v.ended
    judged = [e for e in log.events(eid) if e.kind == "proposal_judged"][-1]
    assert judged.proposal == {"item_id": "s01"}


def test_replay_equals_live_state():
    log = InMemoryEventLog()
    eid = _start(log, "spontaneous", seed=5, config=ProtocolConfig(shift_fire_prob=1.0))
    live = episode.run(log, eid, make_agent("ORACLE"))
    rebuilt = episode.replay(log.events(eid))
    from core.protocol.views import state_dict

    assert state_dict(live) == state_dict(rebuilt)


def _dump(log, eid):
    return [dump_event(e) for e in log.events(eid)]


def test_fork_prefix_identical_and_self_fork_reproduces_parent():
    log = InMemoryEventLog()
    actions = [
        ask("color"),
        search(),
        Propose(text="x"),
        buy("s01"),
        ask("size"),
        Propose(text="y"),
    ]
    eid = _start(log, "dependent", seed=7, config=ProtocolConfig(shift_fire_prob=1.0))
    episode.run(log, eid, ListAgent(actions))
    parent = _dump(log, eid)
    for turn in (1, 2, 4):
        fid = episode.fork(log, eid, turn, "LIST")
        h = log.header(fid)
        assert h.parent_episode_id == eid and h.fork_turn == turn
        assert _dump(log, fid) == [e for e in parent if e["turn"] < turn]
        episode.run(log, fid, ListAgent(actions[turn - 1 :]))
        assert _dump(log, fid) == parent
    # another agent continues differently from the same prefix
    fid = episode.fork(log, eid, 2, "NOOP")
    episode.run(log, fid, make_agent("NOOP"))
    assert _dump(log, fid)[: len([e for e in parent if e["turn"] < 2])] == [
        e for e in parent if e["turn"] < 2
    ]
    assert _dump(log, fid) != parent


def test_fork_misuse():
    log = InMemoryEventLog()
    eid = _start(log, config=NEVER)
    episode.run(log, eid, ListAgent([buy("s01"), Propose(text="d")]))
    with pytest.raises(ProtocolError):
        episode.fork(log, eid, 0, "X")
    with pytest.raises(ProtocolError):
        episode.fork(log, eid, 5, "X")


class _Boom:
    benchmark = "mock"

    def __init__(self):
        self.w = load_mock_world()
        self.world_id = self.w.world_id

    def __getattr__(self, name):
        return getattr(self.w, name)

    def judge(self, intent, session, config):  # the engine's acceptance call
        raise RuntimeError("host down")


def test_environment_failure_becomes_error_outcome():
    log = InMemoryEventLog()
    boom = _Boom()
    eid = episode.start(
        log, SAMPLE, "rational", 0, "L", NEVER, graph=mock_graph(), world_loader=lambda b: boom
    )
    st = episode.run(log, eid, ListAgent([Propose(text="x")]), world_loader=lambda b: boom)
    assert st.outcome is Outcome.ERROR and st.reason is TerminationReason.ENV_ERROR
    assert "host down" in log.events(eid)[-1].error


class _Crash:
    spec = "CRASH"

    def act(self, view):
        raise ValueError("agent bug")


def test_agent_failure_becomes_error_outcome():
    log = InMemoryEventLog()
    eid = _start(log)
    st = episode.run(log, eid, _Crash())
    assert st.outcome is Outcome.ERROR and st.reason is TerminationReason.AGENT_ERROR


def test_unknown_tool_is_an_observation_not_an_error():
    log = InMemoryEventLog()
    eid = _start(log, config=NEVER)
    v = episode.step(log, eid, EnvOp(action=EnvAction(tool="teleport")))
    assert not v.ended and "unknown tool" in v.transcript[-1].text


def test_oracle_recovers_hidden_slots_and_wins_every_persona():
    for pid in load_personas():
        for seed in range(3):
            log = InMemoryEventLog()
            eid = _start(log, pid, seed=seed, agent="ORACLE")
            st = episode.run(log, eid, make_agent("ORACLE"))
            assert st.outcome is Outcome.SUCCESS, (pid, seed)
            if st.shifts_fired == 0:
                assert "color" in st.disclosed


def test_persona_object_override_runs():
    log = InMemoryEventLog()
    eid = _start(log, persona("rational", patience_multiplier=2.0))
    assert log.events(eid)[0].budget == 20.0
