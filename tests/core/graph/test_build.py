"""Graph construction: retrieval, enumeration, admission, balanced ranking, ids, determinism."""

from __future__ import annotations

from collections import Counter

from core.construction.pipeline import build_graphs
from core.graph.build import GraphStats, build_graph, enumerate_candidates, retrieve
from core.graph.hosts import adapter_for
from core.model.base import canonical_json
from core.model.intent import ShiftOperator
from tests.core.graph.fake_worlds import FakeDesk, FakeShop


def test_retrieval_finds_real_siblings_first() -> None:
    a = adapter_for(FakeShop())
    root = next(s for s in a.seeds() if s.source_record == "g1")
    real = retrieve(a, root)
    assert real and all(c.provenance == "REAL" for c in real)
    assert {c.operator for c in real} == {ShiftOperator.PIVOT}
    assert all(c.intent.env_id == "shirts" for c in real)
    g = build_graph(a, root)
    assert g is not None
    pivots = [e for e in g.edges if e.operator is ShiftOperator.PIVOT]
    assert pivots and all(e.provenance == "REAL" for e in pivots)


def test_enumeration_operators_and_witnesses() -> None:
    a = adapter_for(FakeShop())
    root = next(s for s in a.seeds() if s.source_record == "g1")
    gt = a.execute(root)
    assert gt is not None
    cands = enumerate_candidates(a, root, gt, seed=42)
    ops = Counter(c.operator for c in cands)
    assert ops[ShiftOperator.RELAX] == len(root.conditions)
    assert ops[ShiftOperator.SUBSTITUTE] > 0 and ops[ShiftOperator.REFINE] > 0
    assert ShiftOperator.PIVOT not in ops  # pivots are retrieval-only


def test_admission_rejects_empty_and_unexecutable_and_labels_moves() -> None:
    st = GraphStats()
    a = adapter_for(FakeShop())
    for s in a.seeds():
        build_graph(a, s, stats=st)
    assert st.rejected_empty > 0 and st.admitted > 0
    d = adapter_for(FakeDesk())
    st2 = GraphStats()
    graphs = [build_graph(d, s, stats=st2) for s in d.seeds()]
    assert st2.rejected_unexecutable > 0
    for g in graphs:
        assert g is not None
        for child in g.children:
            assert child.ground_truth is not None
        for e in g.edges:
            dst = g.node(e.dst)
            assert e.gt_moved == (dst.ground_truth.hash != g.root.ground_truth.hash)  # type: ignore[union-attr]
        assert any(e.gt_moved for e in g.edges)


def test_balanced_quota_and_refinement_requests_on_desk() -> None:
    graphs, stats = build_graphs(FakeShop(), branching=8)
    for g in graphs:
        per_op = Counter(e.operator for e in g.edges)
        assert all(n <= 2 for n in per_op.values())
    graphs4, _ = build_graphs(FakeShop(), branching=4)
    assert all(max(Counter(e.operator for e in g.edges).values()) <= 1 for g in graphs4)
    assert stats["tasks"] == 6 and stats["graphs"] == len(graphs)
    assert set(stats["by_operator"]) == {"refine", "relax", "substitute", "pivot"}
    desk, _ = build_graphs(FakeDesk())
    refines = [e for g in desk for e in g.edges if e.operator is ShiftOperator.REFINE]
    assert refines, "τ²-style refinements add a whole extra request of the same customer"
    for g in desk:
        for e in g.edges:
            if e.operator is ShiftOperator.REFINE:
                added = set(g.node(e.dst).conditions) - set(g.root.conditions)
                assert len({c.slot.split(":")[1] for c in added}) == 1 and len(added) >= 2


def test_graph_ids_are_content_hashes_and_build_is_deterministic() -> None:
    g1, s1 = build_graphs(FakeShop(), seed=42)
    g2, s2 = build_graphs(FakeShop(), seed=42)
    assert [canonical_json(g) for g in g1] == [canonical_json(g) for g in g2] and s1 == s2
    assert all(len(g.graph_id) == 16 for g in g1)
    assert len({g.graph_id for g in g1}) == len(g1)
