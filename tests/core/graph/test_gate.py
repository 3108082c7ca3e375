"""The graph policy gate: shifts stay with one customer and the persona's facts never move."""

from __future__ import annotations

import json

import pytest

from core.construction.pipeline import build_graphs, load_bundled
from core.envs.registry import load_world
from core.graph.gate import GateStats, PolicyGate
from core.graph.hosts import adapter_for
from core.model.intent import Condition, Edge, Intent, IntentGraph, ShiftOperator
from tests.conftest import require_hostdata


def _intent(base: str, conds: list[tuple[str, str]], **ctx: str) -> Intent:
    return Intent.build(
        benchmark="tau2_retail",
        env_id="retail",
        base=base,
        conditions=[Condition(slot=s, value=json.dumps(v)) for s, v in conds],
        context=dict(ctx),
    )


class _Index:
    """A stand-in adapter whose database has two customers."""

    def customer_index(self) -> dict[str, str]:
        return {
            "ana": "ana",
            "#W1": "ana",
            "credit_card_1": "ana",
            "bo": "bo",
            "#W2": "bo",
            "gift_card_2": "bo",
        }


def test_gate_rules_on_a_two_customer_index() -> None:
    gate = PolicyGate(_Index())  # type: ignore[arg-type]
    root = _intent("t1", [("arg:0:cancel_pending_order:order_id", "#W1")], user_id="ana")
    own = _intent("t1", [("arg:0:modify_pending_order_payment:payment_method_id", "credit_card_1")])
    other_order = _intent("t1", [("arg:0:cancel_pending_order:order_id", "#W2")])
    other_pay = _intent(
        "t1",
        [
            ("arg:0:cancel_pending_order:order_id", "#W1"),
            ("arg:1:modify_pending_order_payment:payment_method_id", "gift_card_2"),
        ],
    )
    pivot_bo = _intent("t9", [("arg:0:cancel_pending_order:order_id", "#W2")], user_id="bo")
    new_facts = _intent(
        "t1", [("arg:0:cancel_pending_order:order_id", "#W1")], user_id="ana", zip="1"
    )
    assert gate.reason(root, own) is None
    assert gate.reason(root, other_order) == "another customer"
    assert gate.reason(root, other_pay) == "another customer"
    assert gate.reason(root, pivot_bo) == "another customer"
    assert gate.reason(root, new_facts) == "persona facts differ"
    graph = IntentGraph(
        graph_id="g",
        benchmark="tau2_retail",
        env_id="retail",
        root=root,
        children=(own, pivot_bo),
        edges=(
            Edge(
                src=root.intent_id,
                dst=own.intent_id,
                operator=ShiftOperator.SUBSTITUTE,
                delta="",
                gt_moved=True,
            ),
            Edge(
                src=root.intent_id,
                dst=pivot_bo.intent_id,
                operator=ShiftOperator.PIVOT,
                delta="",
                gt_moved=True,
            ),
        ),
    )
    st = GateStats()
    kept = gate.filter_graph(graph, st)
    assert [c.intent_id for c in kept.children] == [own.intent_id]
    assert [e.dst for e in kept.edges] == [own.intent_id]
    assert st.as_dict()["removed_by_operator"] == {"pivot": 1}


def _owners_ok(world, graphs: list[IntentGraph]) -> None:  # type: ignore[no-untyped-def]
    gate = PolicyGate(adapter_for(world))
    for g in graphs:
        mine = gate.customers(g.root)
        assert len(mine) == 1, (g.graph_id, mine)
        for node in g.children:
            assert gate.customers(node) <= mine, (g.graph_id, node.intent_id)
            assert node.context == g.root.context, (g.graph_id, node.intent_id)


@pytest.mark.parametrize("bench", ["tau2_retail", "tau2_airline"])
def test_bundled_graphs_stay_with_one_customer(bench: str) -> None:
    graphs, _ = load_bundled(bench)
    _owners_ok(load_world(bench), graphs)


@pytest.mark.parametrize("bench", ["tau2_retail", "tau2_airline"])
def test_gate_removes_cross_customer_candidates_when_building(bench: str) -> None:
    graphs, stats = build_graphs(load_world(bench))
    assert stats["gate_removed"] > 0
    assert stats["gate_removed"] == sum(stats["gate_removed_by_operator"].values())
    _owners_ok(load_world(bench), graphs)


@pytest.mark.shared
@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_real_tau2_pivots_and_substitutions_never_cross_customers(domain: str) -> None:
    from core.envs.tau2.world import load_tau2_world

    world = load_tau2_world(domain, require_hostdata(f"tau2_{domain}"))
    graphs, stats = build_graphs(world)
    _owners_ok(world, graphs)
    ops = {e.operator for g in graphs for e in g.edges}
    assert ShiftOperator.PIVOT in ops and ShiftOperator.SUBSTITUTE in ops
    assert stats["gate_removed_by_operator"]["pivot"] > 0
    # the runtime transition graph moves between any two nodes: all of them are one customer's
    gate = PolicyGate(adapter_for(world))
    users = {next(iter(gate.customers(g.root))) for g in graphs}
    assert len(users) > 1  # many customers overall, one per graph
