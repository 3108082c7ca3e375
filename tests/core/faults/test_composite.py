"""Composite requests: draw/redraw rules, per-component slot assignment and verification."""

from __future__ import annotations

import random

import pytest

from core.construction.pipeline import build_graphs, build_samples
from core.faults.composite import assign_slots, draw_ok, draw_types
from core.graph.hosts import adapter_for
from core.model.sample import FaultType as F
from tests.core.graph.fake_worlds import FakeDesk, FakeShop


def test_draw_rules() -> None:
    assert draw_ok([F.FACTUAL_ERROR, F.CONTEXTUAL_IRRELEVANCE], 3, "shop") is None
    assert draw_ok(
        [F.FACTUAL_ERROR, F.INSUFFICIENT_INFORMATION, F.REFERENTIAL_AMBIGUITY], 2, "shop"
    ).startswith("1:")  # type: ignore[union-attr]
    assert draw_ok([F.LEXICAL_AMBIGUITY, F.VAGUENESS_SUBJECTIVITY], 4, "shop").startswith("2:")  # type: ignore[union-attr]
    assert draw_ok([F.FALSE_PRESUPPOSITION, F.IRRELEVANT_INFORMATION], 4, "service").startswith(
        "3:"
    )  # type: ignore[union-attr]
    four = [
        F.INDIRECT_INTENT,
        F.IRRELEVANT_INFORMATION,
        F.CONTEXTUAL_IRRELEVANCE,
        F.INSUFFICIENT_INFORMATION,
    ]
    assert draw_ok(four, 4, "shop").startswith("4:")  # type: ignore[union-attr]
    assert draw_ok(four, 4, "service") is None  # rules 4-5 do not apply on τ² hosts
    fe_fp = [
        F.FACTUAL_ERROR,
        F.FALSE_PRESUPPOSITION,
        F.CONTEXTUAL_IRRELEVANCE,
        F.INSUFFICIENT_INFORMATION,
    ]
    assert draw_ok(fe_fp, 5, "shop").startswith("5:")  # type: ignore[union-attr]
    assert draw_ok(fe_fp[:2], 5, "shop") is None  # rule 5 only for k >= 3
    assert draw_ok([F.CONTEXTUAL_IRRELEVANCE, F.CONTEXTUAL_IRRELEVANCE], 3, "shop") is not None
    assert draw_ok([F.FACTUAL_ERROR, F.FACTUAL_ERROR], 3, "shop") is None  # repeatable


def test_draw_redraws_and_repeats_when_pool_is_small() -> None:
    rng = random.Random(1)
    draw, broken = draw_types(
        [F.LEXICAL_AMBIGUITY, F.VAGUENESS_SUBJECTIVITY, F.CONTEXTUAL_IRRELEVANCE], 2, rng, 3, "shop"
    )
    assert draw is not None and not ({F.LEXICAL_AMBIGUITY, F.VAGUENESS_SUBJECTIVITY} <= set(draw))
    small = [F.FACTUAL_ERROR, F.CONTEXTUAL_IRRELEVANCE]
    draw4, _ = draw_types(small, 4, random.Random(2), 4, "shop")
    assert draw4 is not None and draw4.count(F.FACTUAL_ERROR) == 3
    none, why = draw_types([F.CONTEXTUAL_IRRELEVANCE], 2, random.Random(0), 3, "shop")
    assert none is None and why


def test_slot_assignment_gives_each_component_its_own_slot() -> None:
    a = adapter_for(FakeShop())
    graphs, _ = build_graphs(FakeShop())
    g = next(g for g in graphs if g.root.source_record == "g1")
    gt = g.root.ground_truth
    assert gt is not None
    sets = assign_slots(
        a,
        g.root,
        gt,
        [F.FACTUAL_ERROR, F.INSUFFICIENT_INFORMATION, F.REFERENTIAL_AMBIGUITY],
        random.Random(0),
    )
    assert sets
    for plans in sets:
        targets = [p.target for p in plans]
        assert None not in targets and len(set(targets)) == 3


@pytest.mark.parametrize("world,k", [("shop", 2), ("shop", 4), ("desk", 2), ("desk", 4)])
def test_composite_samples_are_verified_per_component(world: str, k: int) -> None:
    w = FakeShop() if world == "shop" else FakeDesk()
    graphs, _ = build_graphs(w)
    samples, st = build_samples(w, graphs, k=k, per_graph=2)
    assert st["k"] == k and st["candidates"] >= st["samples"]
    assert samples, st
    for s in samples:
        assert len(s.faults) == k
        faulted = [e for e in s.mask if e.fault is not None]
        assert {e.fault for e in faulted} == set(s.faults)
        slots = [e.slot for e in faulted if e.slot != "*" and e.kind != "extra"]
        assert len(slots) == len(set(slots)), "one slot per component"
        assert s.verifier.admission.count("=") == k  # one admission verdict per component
