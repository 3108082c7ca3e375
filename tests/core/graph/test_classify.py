"""Relation classification (refine / relax / substitute / pivot) and the transition graph."""

from __future__ import annotations

from core.graph.classify import transition_edges
from core.model.intent import Condition, GroundTruth, Intent, ShiftOperator
from core.model.shift import classify_shift as classify


def _i(base: str, *conds: Condition, env: str = "e", gt: str | None = None) -> Intent:
    g = GroundTruth(kind="rowset", value=[gt]) if gt else None
    return Intent.build(benchmark="b", env_id=env, base=base, conditions=conds, ground_truth=g)


A = Condition(slot="attr:cotton", value="cotton")
B = Condition(slot="option:color", value="black")
W = Condition(slot="option:color", value="white")
P = Condition(slot="price_upper", op="<=", value=30)


def test_refinement_relaxation_substitution_pivot() -> None:
    root = _i("g1", A, B)
    op, delta = classify(root, _i("g1", A, B, P)) or (None, "")
    assert op is ShiftOperator.REFINE and delta.startswith("added price_upper<=30")
    op, delta = classify(root, _i("g1", A)) or (None, "")
    assert op is ShiftOperator.RELAX and "option:color" in delta
    op, delta = classify(root, _i("g1", A, W)) or (None, "")
    assert op is ShiftOperator.SUBSTITUTE and '"black" -> "white"' in delta
    op, delta = classify(root, _i("g2", A)) or (None, "")
    assert op is ShiftOperator.PIVOT and delta == "pivot_to: g2"


def test_no_edge_cases() -> None:
    root = _i("g1", A, B)
    assert classify(root, root) is None
    assert classify(root, _i("g1", A, B, env="other")) is None
    # a changed value *and* an added condition is not one operator
    assert classify(root, _i("g1", A, W, P)) is None
    # same slots, different operator on one of them: not a substitution
    assert classify(_i("g1", P), _i("g1", Condition(slot="price_upper", op=">=", value=30))) is None


def test_transition_graph_covers_all_ordered_pairs() -> None:
    root = _i("g1", A, B, gt="r")
    kids = [_i("g1", A, gt="r"), _i("g1", A, W, gt="w"), _i("g2", A, gt="x")]
    edges = transition_edges([root, *kids])
    pairs = {(e.src, e.dst): e for e in edges}
    # root→each child and back, plus sibling→sibling moves that classify
    assert (root.intent_id, kids[0].intent_id) in pairs and (
        kids[0].intent_id,
        root.intent_id,
    ) in pairs
    assert pairs[(kids[0].intent_id, kids[1].intent_id)].operator is ShiftOperator.REFINE
    assert pairs[(kids[1].intent_id, kids[2].intent_id)].operator is ShiftOperator.PIVOT
    # gt_moved recomputed per pair from stored ground truths
    assert pairs[(root.intent_id, kids[0].intent_id)].gt_moved is False
    assert pairs[(root.intent_id, kids[1].intent_id)].gt_moved is True
    assert len(edges) == 12  # 4 nodes, every ordered pair classifies here
