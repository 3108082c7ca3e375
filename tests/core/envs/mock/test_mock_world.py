"""The mock world: tools, execution, adjudication, graph and samples."""

from __future__ import annotations

from core.envs.base import HostWorld
from core.envs.mock import load_mock_world, mock_graph, mock_samples
from core.model.config import ProtocolConfig
from core.model.intent import ShiftOperator
from core.model.sample import FaultType
from core.model.world import EnvAction


def test_implements_host_world_protocol():
    w = load_mock_world()
    assert isinstance(w, HostWorld) and w.benchmark == "mock"
    assert {t.name for t in w.tools()} == {"search", "view", "buy"}


def test_session_tools_and_adjudication():
    w = load_mock_world()
    s = w.open_session()
    assert "s01" in s.act(EnvAction(tool="search", args={"query": "teal"})).text
    assert not s.act(EnvAction(tool="buy", args={"item_id": "zz"})).ok
    root = mock_graph().root
    assert w.judge(root, s, ProtocolConfig()).reason == "nothing_bought"
    s.act(EnvAction(tool="buy", args={"item_id": "s04"}))
    v = w.judge(root, s, ProtocolConfig())
    assert not v.accepted and v.reason == "unmet:color" and w.unmet_slots(root, s) == ["color"]
    s.act(EnvAction(tool="buy", args={"item_id": "s01"}))
    assert w.judge(root, s, ProtocolConfig()).accepted


def test_graph_covers_every_operator_and_a_non_moving_edge():
    g = mock_graph()
    assert {e.operator for e in g.edges} == set(ShiftOperator)
    assert any(not e.gt_moved for e in g.edges) and any(e.gt_moved for e in g.edges)
    assert all(c.ground_truth and c.ground_truth.value for c in g.nodes)
    w = load_mock_world()
    for n in g.nodes:  # the compiled recipe reaches a ground-truth item
        s = w.open_session()
        for a in w.compile_intent(n):
            s.act(a)
        assert w.judge(n, s, ProtocolConfig()).accepted


def test_samples_cover_every_fault_and_never_state_hidden_truth():
    samples = mock_samples()
    assert {s.faults[0] for s in samples} == set(FaultType)
    kinds = {m.kind for s in samples for m in s.mask}
    assert kinds >= {
        "stated",
        "substituted",
        "presupposed",
        "withheld",
        "marked",
        "ambiguous",
        "extra",
        "noise",
        "capability",
    }
    for s in samples:
        assert s.hidden_slots == tuple(m.slot for m in s.mask if m.hidden)
        for m in s.mask:
            if m.hidden:
                assert str(m.true_value) not in s.query
    assert len({s.sample_id for s in samples}) == len(samples)
