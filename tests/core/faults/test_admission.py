"""Executable admission (verifier step 3): accept and reject cases per mask kind."""

from __future__ import annotations

import pytest

from core.faults.plan import FaultPlan
from core.faults.verify import admit, admit_component
from core.graph.hosts import adapter_for
from core.model.intent import Condition, Intent
from core.model.sample import FaultType as F
from tests.core.graph.fake_worlds import FakeDesk, FakeShop


@pytest.fixture(scope="module")
def shop():  # type: ignore[no-untyped-def]
    w = FakeShop()
    a = adapter_for(w)
    root = next(s for s in a.seeds() if s.source_record == "g1")
    return a, root.model_copy(update={"ground_truth": a.execute(root)})


@pytest.fixture(scope="module")
def desk():  # type: ignore[no-untyped-def]
    w = FakeDesk()
    a = adapter_for(w)
    root = next(s for s in a.seeds() if s.source_record == "t1")
    return a, root.model_copy(update={"ground_truth": a.execute(root)})


def _ok(adapter, root, plan) -> bool:  # type: ignore[no-untyped-def]
    return admit_component(adapter, root, root.ground_truth, plan).ok


def test_substituted_accepts_moving_value_rejects_equivalent(shop) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    # g1: long sleeve + cotton + black + <= 30 ; white long-sleeve cotton exists (P07, P08)
    moving = FaultPlan(fault=F.FACTUAL_ERROR, target="option:color", stated_value="white")
    assert _ok(a, root, moving)
    # a cap of 31 instead of 30 keeps exactly the same answer → not a factual error
    same = FaultPlan(fault=F.FACTUAL_ERROR, target="price_upper", stated_value=31)
    r = admit_component(a, root, root.ground_truth, same)
    assert not r.ok and r.signature["relations"] == ["equal"]


def test_presupposed_follows_move_rule(shop) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    assert _ok(
        a, root, FaultPlan(fault=F.FALSE_PRESUPPOSITION, target="option:color", stated_value="navy")
    )
    assert not _ok(
        a, root, FaultPlan(fault=F.FALSE_PRESUPPOSITION, target="price_upper", stated_value=32)
    )


def test_extra_must_shrink(shop) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    shrink = FaultPlan(
        fault=F.IRRELEVANT_INFORMATION,
        extra=(Condition(slot="attr:machine wash", value="machine wash"),),
    )
    r = admit_component(a, root, root.ground_truth, shrink)
    assert r.ok and r.signature["relations"] == ["subset"]
    # every current answer is already long sleeve: adding it again cannot shrink
    noop = FaultPlan(
        fault=F.IRRELEVANT_INFORMATION, extra=(Condition(slot="attr:cotton", value="cotton"),)
    )
    assert not _ok(a, root, noop)


def test_withheld_and_marked_must_widen(shop) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    for fault in (F.INSUFFICIENT_INFORMATION, F.REFERENTIAL_AMBIGUITY, F.VAGUENESS_SUBJECTIVITY):
        widen = FaultPlan(fault=fault, target="option:color")
        r = admit_component(a, root, root.ground_truth, widen)
        assert r.ok and r.signature["relations"] == ["superset"], fault
        # dropping the price cap keeps the same answer set here → rejected
        assert not _ok(a, root, FaultPlan(fault=fault, target="price_upper")), fault


def test_ambiguous_needs_two_readings_one_true(shop) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    lexical = FaultPlan(
        fault=F.LEXICAL_AMBIGUITY,
        target="option:color",
        stated_value="white",
        surface="x",
        sub_kind="polysemous",
    )
    r = admit_component(a, root, root.ground_truth, lexical)
    assert r.ok and r.signature["readings"] == 2 and r.signature["relations"][0] == "equal"
    attach = FaultPlan(fault=F.SYNTACTIC_AMBIGUITY, target="option:color", sub_kind="attachment")
    assert _ok(a, root, attach)
    # the second sense executes to the same answer: no real ambiguity
    flat = FaultPlan(fault=F.SYNTACTIC_AMBIGUITY, target="price_upper", sub_kind="attachment")
    assert not _ok(a, root, flat)


def test_noise_must_not_move(shop, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    plan = FaultPlan(fault=F.CONTEXTUAL_IRRELEVANCE)
    assert _ok(a, root, plan)
    assert _ok(a, root, FaultPlan(fault=F.INDIRECT_INTENT))
    # a host whose execution drifts would make the literal reading move: rejected
    other = a.execute(a.make_intent(root, [c for c in root.conditions if c.slot != "option:color"]))
    monkeypatch.setattr(a, "execute", lambda intent: other)
    assert not _ok(a, root, plan)


def test_statehash_rules_on_desk(desk) -> None:  # type: ignore[no-untyped-def]
    a, root = desk
    cap = FaultPlan(
        fault=F.TOOL_CAPABILITY_MISMATCH,
        target="arg:0:cancel_order:order_id",
        surface="instant refund",
        drop_slots=("arg:0:cancel_order:order_id", "arg:0:cancel_order:reason"),
    )
    assert _ok(a, root, cap)
    assert not _ok(a, root, cap.model_copy(update={"drop_slots": ()}))
    # withheld order id: the literal reading cannot be executed (underdetermined) → widened
    assert _ok(
        a, root, FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target="arg:0:cancel_order:order_id")
    )
    # extra request from the same customer changes the state → admitted
    extra = (
        Condition(slot="arg:2:change_city:user_id", value='"u1"'),
        Condition(slot="arg:2:change_city:city", value='"Seattle"'),
    )
    assert _ok(a, root, FaultPlan(fault=F.IRRELEVANT_INFORMATION, extra=extra))
    # an extra that cannot execute is rejected (not expressible)
    bad = (
        Condition(slot="arg:2:change_city:user_id", value='"nobody"'),
        Condition(slot="arg:2:change_city:city", value='"X"'),
    )
    assert not _ok(a, root, FaultPlan(fault=F.IRRELEVANT_INFORMATION, extra=bad))


def test_composite_admission_is_per_component(shop) -> None:  # type: ignore[no-untyped-def]
    a, root = shop
    good = FaultPlan(fault=F.FACTUAL_ERROR, target="option:color", stated_value="white")
    bad = FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target="price_upper")
    ok = admit(a, root, root.ground_truth, [good, FaultPlan(fault=F.CONTEXTUAL_IRRELEVANCE)])
    assert ok.ok and len(ok.signature["components"]) == 2
    fail = admit(a, root, root.ground_truth, [good, bad])
    assert not fail.ok and "insufficient_information" in fail.reason


def test_intent_ids_are_content_hashes() -> None:
    c = (Condition(slot="attr:x", value="x"),)
    a = Intent.build(benchmark="b", env_id="e", base="g", conditions=c)
    b = Intent.build(benchmark="b", env_id="e", base="g", conditions=c)
    assert a.intent_id == b.intent_id and len(a.intent_id) == 16
