"""The verifier can fail where it matters: two extractors that read differently, and an
executable admission judged per fault semantics."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from core.construction.pipeline import bundled_world, load_bundled
from core.faults.align import AlignmentExtractor
from core.faults.extract import Extraction, RuleExtractor
from core.faults.generate import GenStats, extraction_context, generate_sample
from core.faults.plan import FaultPlan, candidate_plans
from core.faults.surface import SURFACES
from core.faults.verify import admit, check_extractions, rule_holds
from core.faults.writer import TemplateWriter
from core.graph.hosts import adapter_for
from core.graph.hosts.base import HostAdapter
from core.model.intent import IntentGraph
from core.model.sample import FaultType as F

RULE, ALIGN = RuleExtractor(), AlignmentExtractor()


def _retail() -> tuple[HostAdapter, list[IntentGraph]]:
    graphs, _ = load_bundled("tau2_retail")
    return adapter_for(bundled_world("tau2_retail")), sorted(graphs, key=lambda g: g.graph_id)


def _read(adapter: HostAdapter, g: IntentGraph, text: str) -> tuple[Extraction, Extraction]:
    ctx = extraction_context(adapter, g)
    q = list(F)
    return RULE.extract(text, adapter, g.root, q, ctx), ALIGN.extract(text, adapter, g.root, q, ctx)


def _plain(adapter: HostAdapter, g: IntentGraph) -> str:
    return TemplateWriter().write(adapter, g.root, [], variant=0, rng=random.Random(0)).text


def _graph_with(
    adapter: HostAdapter, graphs: list[IntentGraph], arg: str, tokens: int
) -> tuple[IntentGraph, str]:
    from core.faults.plan import own_atoms

    for g in graphs:
        for c in g.root.conditions:
            if c.slot.endswith(":" + arg) and len(own_atoms(adapter, g.root, c.slot)) >= tokens:
                return g, c.slot
    raise AssertionError(f"no bundled retail root with a {arg} of {tokens}+ atoms")


def test_the_two_readers_disagree_on_ambiguous_candidates() -> None:
    """A constructed set where a verbatim-atom reader and a token-alignment reader differ."""
    adapter, graphs = _retail()
    cases: list[tuple[str, list[FaultPlan], str]] = []

    # 1. a partial mention: one of the value's words is missing (withheld? or said?)
    g, slot = _graph_with(adapter, graphs, "item_ids", 6)
    from core.faults.plan import own_atoms

    text = _plain(adapter, g)
    dropped = own_atoms(adapter, g.root, slot)[-1]
    partial = text.replace(f" {dropped}", "", 1)
    cases.append(
        ("partial mention", [FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target=slot)], partial)
    )

    # 2. a reference with a marker word but none of the writer's deictic templates
    g2, pay = _graph_with(adapter, graphs, "payment_method_id", 1)
    base = _plain(adapter, g2)
    phrase = adapter.phrase(g2.root.slot_map()[pay])
    vague = base.replace(phrase, "pay with the payment method that's normal for me")
    assert vague != base
    cases.append(
        (
            "cue-less reference",
            [FaultPlan(fault=F.REFERENTIAL_AMBIGUITY, target=pay, surface="normal")],
            vague,
        )
    )

    # 3. an off-topic passage in the middle of the request instead of before it
    passage = SURFACES.passages("tau2_retail")[0]
    sentences = base.split(". ")
    middle = sentences[0] + ". " + passage + " " + ". ".join(sentences[1:])
    cases.append(("passage in the middle", [FaultPlan(fault=F.CONTEXTUAL_IRRELEVANCE)], middle))

    # 4. a wish without any of the cue phrases ("I'd love …")
    order = next(c for c in g2.root.conditions if c.slot.endswith(":order_id"))
    wish = f"I'd love it if this got sorted out soon. {adapter.phrase(order).capitalize()}."
    cases.append(("uncued wish", [FaultPlan(fault=F.INDIRECT_INTENT)], wish))

    for name, plans, candidate in cases:
        graph = g if name == "partial mention" else g2
        e1, e2 = _read(adapter, graph, candidate)
        assert e1.nonempty() != e2.nonempty(), f"{name}: both read {e1.nonempty()}"
        verdict = check_extractions(plans, e1, e2)
        assert not verdict.ok, f"{name}: step 1 admitted a candidate the readers disagree on"


def test_the_two_readers_agree_on_every_admitted_bundled_sample() -> None:
    adapter, graphs = _retail()
    by_id = {g.graph_id: g for g in graphs}
    _, samples = load_bundled("tau2_retail")
    checked = Counter[str]()
    for s in samples[:120]:
        e1, e2 = _read(adapter, by_id[s.graph_id], s.query)
        assert e1.family == e2.family and e1.target_slot == e2.target_slot, s.query
        checked["+".join(f.value for f in s.faults)] += 1
    assert len(checked) >= 5


def _unexecutable_fes(
    adapter: HostAdapter, graphs: list[IntentGraph]
) -> list[tuple[IntentGraph, FaultPlan]]:
    out = []
    for g in graphs:
        gt = g.root.ground_truth
        assert gt is not None
        for p in candidate_plans(adapter, g.root, gt, F.FACTUAL_ERROR, random.Random(0)):
            r = admit(adapter, g.root, gt, [p])
            rels = r.signature["components"][f"0:{p.fault.value}"]["relations"]
            if not r.ok and rels == ["unexecutable"]:
                out.append((g, p))
    return out


def test_step3_rejects_a_constructed_non_moving_candidate() -> None:
    adapter, graphs = _retail()
    # a factual error whose literal reading is the truth itself: nothing moves
    g = graphs[0]
    gt = g.root.ground_truth
    assert gt is not None
    c = g.root.conditions[0]
    still = FaultPlan(fault=F.FACTUAL_ERROR, target=c.slot, stated_value=c.value)
    r = admit(adapter, g.root, gt, [still])
    assert not r.ok and "move failed: equal" in r.reason

    # a factual error about the customer's own other order that cannot be executed: the old
    # rule (anything but 'equal' moves) admitted it; per fault semantics it is a typo
    found = _unexecutable_fes(adapter, graphs)
    assert found, "no factual-error plan whose literal reading fails to execute"
    reached = 0
    for g, plan in found:
        stats = GenStats()
        got = generate_sample(
            adapter,
            g,
            [(plan,)],
            writer=TemplateWriter(),
            extractors=(RULE, ALIGN),
            rng=random.Random(1),
            attempts=2,
            stats=stats,
        )
        assert got is None  # never admitted, whichever step catches it
        if stats.rejected["3"]:
            reached += 1
            assert any(
                k.startswith("3:factual_error: move failed: unexecutable") for k in stats.reasons
            )
    # some of them read as clean substitutions (steps 1 and 2 pass): only step 3 stops those
    assert reached >= 1


@pytest.mark.parametrize(
    ("rule", "rels", "set_kind", "ok"),
    [
        ("move", ["different"], False, True),
        ("move", ["unexecutable"], False, False),
        ("move", ["equal"], True, False),
        ("widen", ["unexecutable"], False, True),
        ("widen", ["superset"], True, True),
        ("widen", ["different"], True, False),
        ("shrink", ["subset"], True, True),
        ("shrink", ["unexecutable"], False, False),
        ("ambiguous", ["equal", "unexecutable"], False, False),
        ("ambiguous", ["equal", "different"], False, True),
        ("unchanged", ["equal"], False, True),
        ("unchanged", ["different"], False, False),
    ],
)
def test_admission_rules_follow_fault_semantics(
    rule: str, rels: list[str], set_kind: bool, ok: bool
) -> None:
    assert rule_holds(rule, rels, set_kind) is ok


def test_an_attachment_reading_may_leave_its_request_unexecutable() -> None:
    assert rule_holds("ambiguous", ["equal", "unexecutable"], False, attachment=True)
    assert not rule_holds("ambiguous", ["equal", "unexecutable"], True, attachment=True)
