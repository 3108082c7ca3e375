"""The runtime's moves equal what construction classifies, over every bundled graph.

Construction labels root→child edges with :func:`core.model.shift.classify_shift` and the
runtime (:func:`core.protocol.shifts.transitions`) derives every other move with the same rule,
so: every stored edge is what the rule says, every runtime sibling edge is exactly the edge
construction would label for that pair (operator, delta, ``gt_moved``), and the move table is
owned by the graph object (no module-level cache).
"""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

import pytest

from core.envs.mock import mock_graph
from core.graph.classify import transition_edges
from core.model.intent import Condition, GroundTruth, Intent, IntentGraph
from core.model.shift import classify_shift
from core.paths import DATA_DIR
from core.protocol import shifts
from core.protocol.shifts import transitions

BUNDLES = sorted(p for p in (DATA_DIR / "benchmark").iterdir() if (p / "graphs.jsonl.gz").is_file())


def _graphs(bundle: Path) -> list[IntentGraph]:
    with gzip.open(bundle / "graphs.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [IntentGraph.model_validate_json(line) for line in fh if line.strip()]


def test_every_benchmark_is_bundled() -> None:
    assert {p.name for p in BUNDLES} >= {"webshop", "tau2_retail", "tau2_airline"}


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_runtime_moves_equal_construction_classification(bundle: Path) -> None:
    graphs = _graphs(bundle)
    assert graphs
    n_sibling = 0
    for g in graphs:
        labelled = {(e.src, e.dst): e for e in transition_edges(g.nodes)}
        stored = {(e.src, e.dst): e for e in g.edges}
        # the bundled root edges are exactly what the one rule says
        for (src, dst), e in stored.items():
            shift = classify_shift(g.node(src), g.node(dst))
            assert shift is not None, (g.graph_id, src, dst)
            assert (shift.operator, shift.delta) == (e.operator, e.delta), (g.graph_id, dst)
        for node in g.nodes:
            moves = transitions(g, node.intent_id)
            got = {m.dst: m for m in moves}
            want = {d: e for (s, d), e in labelled.items() if s == node.intent_id}
            assert set(got) == set(want), (g.graph_id, node.intent_id)
            for dst, e in want.items():
                m = got[dst]
                if (node.intent_id, dst) in stored:
                    e = stored[(node.intent_id, dst)]
                else:
                    n_sibling += 1
                assert (m.src, m.dst, m.operator, m.delta, m.gt_moved, m.provenance) == (
                    e.src,
                    e.dst,
                    e.operator.value,
                    e.delta,
                    e.gt_moved,
                    e.provenance,
                ), (g.graph_id, node.intent_id, dst)
    assert n_sibling > 0  # sibling moves were really compared


def test_mock_graph_operators_agree_with_the_rule() -> None:
    # The mock world's root edges carry hand-written deltas; their operators must be the rule's.
    g = mock_graph()
    for e in g.edges:
        shift = classify_shift(g.node(e.src), g.node(e.dst))
        assert shift is not None and shift.operator is e.operator
    for child in g.children:
        assert {m.dst for m in transitions(g, child.intent_id)} == {
            e.dst for e in transition_edges(g.nodes) if e.src == child.intent_id
        }


def _node(base: str, price: float, *extra: Condition, gt: str = "x") -> Intent:
    conds = (Condition(slot="price_upper", op="<=", value=price), *extra)
    return Intent.build(
        benchmark="b",
        env_id="e",
        base=base,
        conditions=conds,
        ground_truth=GroundTruth(kind="rowset", value=[gt]),
    )


def test_numeric_twins_are_no_move_at_runtime() -> None:
    root = _node("g", 40)
    twin = _node("g", 40.0).model_copy(update={"intent_id": "twin"})
    colour = Condition(slot="option:color", value="black")
    refined = _node("g", 40.0, colour, gt="y")
    g = IntentGraph(graph_id="t", benchmark="b", env_id="e", root=root, children=(twin, refined))
    assert all(m.dst != "twin" for m in transitions(g, root.intent_id))
    assert all(m.dst != root.intent_id for m in transitions(g, "twin"))
    (m,) = [m for m in transitions(g, "twin") if m.dst == refined.intent_id]
    assert (m.operator, m.delta) == ("refine", 'added option:color="black"')
    assert [m.operator for m in transitions(g, refined.intent_id)] == ["relax", "relax"]


def test_move_table_is_owned_by_the_graph_object() -> None:
    mutable = (dict, list, set)
    assert not [n for n, v in vars(shifts).items() if isinstance(v, mutable) and n[:2] != "__"]
    g = mock_graph()
    first = transitions(g, g.children[0].intent_id)
    assert transitions(g, g.children[0].intent_id) is first  # built once, kept on the object
    # the table never leaks into the model: dumps and equality are unchanged
    fresh = IntentGraph.model_validate_json(g.model_dump_json())
    assert fresh == g and fresh.model_dump_json() == g.model_dump_json()
    # a copy with other children rebuilds its own table
    fewer = g.model_copy(update={"children": g.children[:2]})
    assert {m.dst for m in transitions(fewer, g.root.intent_id)} <= {
        c.intent_id for c in g.children[:2]
    }
    with pytest.raises(KeyError):
        transitions(g, "not-a-node")


def test_concurrent_first_use_builds_one_consistent_table() -> None:
    g = mock_graph()
    ids = [n.intent_id for n in g.nodes]
    results: list[list[tuple[str, ...]]] = []
    barrier = threading.Barrier(8)

    def work() -> None:
        barrier.wait()
        results.append([tuple(m.dst for m in transitions(g, i)) for i in ids])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(r == results[0] for r in results)
