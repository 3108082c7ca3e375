"""Verifier steps 1 and 2, the generate-then-verify loop and its rejection counters."""

from __future__ import annotations

import random

import pytest

from core.construction.pipeline import applicable_plans, build_graphs
from core.faults.extract import Extraction, RuleExtractor
from core.faults.generate import GenStats, extraction_context, generate_sample
from core.faults.plan import FaultPlan
from core.faults.taxonomy import DIFF_CLASS, MASK_KIND
from core.faults.verify import check_contract, check_extractions, check_strings
from core.faults.writer import TemplateWriter, Written
from core.graph.hosts import adapter_for
from core.model.sample import FAMILY_OF, FaultFamily
from core.model.sample import FaultType as F
from tests.core.graph.fake_worlds import FakeDesk, FakeShop


@pytest.fixture(scope="module")
def shop_graphs():  # type: ignore[no-untyped-def]
    w = FakeShop()
    graphs, _ = build_graphs(w)
    return adapter_for(w), graphs


@pytest.fixture(scope="module")
def desk_graphs():  # type: ignore[no-untyped-def]
    w = FakeDesk()
    graphs, _ = build_graphs(w)
    return adapter_for(w), graphs


def _ex(name: str, **classes: tuple[str, ...]) -> Extraction:
    fam = None
    target = None
    for k, v in classes.items():
        if v:
            from core.faults.taxonomy import FAMILY_OF_CLASS

            fam = FAMILY_OF_CLASS[k]  # type: ignore[index]
            target = v[0] if v[0] != "*" else None
            break
    return Extraction(extractor=name, family=fam, target_slot=target, classes=classes)


def test_taxonomy_is_complete() -> None:
    assert len(F) == 11 and set(FAMILY_OF) == set(F)
    assert {FAMILY_OF[t] for t in F} == set(FaultFamily)
    assert set(MASK_KIND) == set(F) and set(DIFF_CLASS) == set(F)


def test_one_flaw_contract() -> None:
    plan = FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target="option:color")
    assert check_contract(_ex("a", withheld=("option:color",)), [plan]) is None
    # a second flaw (accidental noise) breaks the contract
    why = check_contract(_ex("a", withheld=("option:color",), noise=("*",)), [plan])
    assert why is not None and "unplanned ['noise']" in why
    # the right class on the wrong slot breaks it too
    assert "planned" in (check_contract(_ex("a", withheld=("price_upper",)), [plan]) or "")
    # missing class
    assert "missing ['withheld']" in (check_contract(_ex("a"), [plan]) or "")
    # other changes
    e = Extraction(extractor="a", classes={"withheld": ("option:color",)}, other_changes=("tone",))
    assert "other changes" in (check_contract(e, [plan]) or "")
    assert "unparseable" in (check_contract(Extraction(extractor="a", parsed=False), [plan]) or "")


def test_extractor_disagreement_rejects() -> None:
    plan = FaultPlan(fault=F.REFERENTIAL_AMBIGUITY, target="option:color", surface="the usual")
    a = _ex("rule", marked=("option:color",))
    assert check_extractions([plan], a, a).ok
    b = Extraction(
        extractor="m2",
        family=FaultFamily.PARAMETER,
        target_slot="option:color",
        classes={"marked": ("option:color",)},
    )
    r = check_extractions([plan], a, b)
    assert not r.ok and "disagree" in r.reason


def test_ambiguity_plausibility_veto_needs_both() -> None:
    plan = FaultPlan(
        fault=F.LEXICAL_AMBIGUITY,
        target="option:color",
        stated_value="x",
        surface="light",
        sub_kind="polysemous",
    )
    yes = _ex("a", ambiguous=("option:color",))
    no = yes.model_copy(update={"plausible": False, "extractor": "b"})
    assert check_extractions([plan], yes, no).ok
    assert not check_extractions([plan], no, no).ok


def test_string_checks(shop_graphs) -> None:  # type: ignore[no-untyped-def]
    a, graphs = shop_graphs
    root = next(g.root for g in graphs if g.root.source_record == "g1")
    plan = FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target="option:color")
    assert check_strings("I want a long sleeve cotton shirt under $30.", a, root, [plan], {}).ok
    leak = check_strings("I want attr:cotton shirts.", a, root, [plan], {})
    assert not leak.ok and "leaked" in leak.reason
    still = check_strings("I want a cotton long sleeve shirt in black.", a, root, [plan], {})
    assert not still.ok and "still present" in still.reason
    long = check_strings("word " * 200, a, root, [plan], {})
    assert not long.ok and "words" in long.reason
    fe = FaultPlan(fault=F.FACTUAL_ERROR, target="option:color", stated_value="white")
    assert check_strings("A cotton long sleeve shirt in white.", a, root, [fe], {}).ok
    assert not check_strings("A cotton long sleeve shirt in black, or white.", a, root, [fe], {}).ok


@pytest.mark.parametrize("world", ["shop", "desk"])
def test_rule_extractor_recovers_every_template_fault(world, shop_graphs, desk_graphs) -> None:  # type: ignore[no-untyped-def]
    a, graphs = shop_graphs if world == "shop" else desk_graphs
    seen: set[F] = set()
    for g in graphs:
        ctx = extraction_context(a, g)
        for t, plans in applicable_plans(a, g, random.Random(3)).items():
            p = plans[0]
            w = TemplateWriter().write(a, g.root, [p], variant=0, rng=random.Random(0))
            e = RuleExtractor().extract(w.text, a, g.root, [t], ctx)
            if check_contract(e, [p]) is None:
                assert e.family is FAMILY_OF[t]
                if p.target is not None:
                    assert e.target_slot == p.target
                seen.add(t)
    expected = {
        F.CONTEXTUAL_IRRELEVANCE,
        F.INDIRECT_INTENT,
        F.FACTUAL_ERROR,
        F.FALSE_PRESUPPOSITION,
        F.INSUFFICIENT_INFORMATION,
        F.IRRELEVANT_INFORMATION,
        F.REFERENTIAL_AMBIGUITY,
        F.SYNTACTIC_AMBIGUITY,
    }
    if world == "desk":
        expected.add(F.TOOL_CAPABILITY_MISMATCH)
    assert expected <= seen


class _BadWriter:
    """Writes a text with a second flaw (also withholds the price)."""

    name = "bad"

    def write(self, adapter, intent, plans, *, variant, rng):  # type: ignore[no-untyped-def]
        return Written(text="I'm looking for something in shirts: cotton and long sleeve.")


class _LeakyWriter:
    name = "leaky"

    def write(self, adapter, intent, plans, *, variant, rng):  # type: ignore[no-untyped-def]
        return Written(text="I'm looking for shirts: cotton, long sleeve, price_upper 30.")


class _Disagree:
    name = "other"

    def extract(self, text, adapter, intent, questionnaire, ctx):  # type: ignore[no-untyped-def]
        e = RuleExtractor().extract(text, adapter, intent, questionnaire, ctx)
        return e.model_copy(update={"extractor": "other", "target_slot": "price_upper"})


def test_rejections_are_counted_per_step(shop_graphs) -> None:  # type: ignore[no-untyped-def]
    a, graphs = shop_graphs
    g = next(g for g in graphs if g.root.source_record == "g1")
    plan = (FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target="option:color"),)
    rule = RuleExtractor()
    st = GenStats()
    assert (
        generate_sample(
            a,
            g,
            [plan],
            writer=_BadWriter(),
            extractors=(rule, rule),
            rng=random.Random(0),
            attempts=2,
            stats=st,
        )
        is None
    )
    assert st.rejected["1"] == 2 and st.candidates == 2
    st = GenStats()
    assert (
        generate_sample(
            a,
            g,
            [plan],
            writer=TemplateWriter(),
            extractors=(rule, _Disagree()),
            rng=random.Random(0),
            attempts=1,
            stats=st,
        )
        is None
    )
    assert st.rejected["1"] == 1
    st = GenStats()
    assert (
        generate_sample(
            a,
            g,
            [plan],
            writer=_LeakyWriter(),
            extractors=(rule, rule),
            rng=random.Random(0),
            attempts=1,
            stats=st,
        )
        is None
    )
    assert st.rejected["1"] + st.rejected["2"] == 1
    # a plan whose literal reading does not widen: passes steps 1-2, fails step 3
    flat = (FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target="price_upper"),)
    st = GenStats()
    assert (
        generate_sample(
            a,
            g,
            [flat],
            writer=TemplateWriter(),
            extractors=(rule, rule),
            rng=random.Random(0),
            attempts=3,
            stats=st,
        )
        is None
    )
    assert st.rejected["3"] == 3 and st.rejected["1"] == 0
    st = GenStats()
    s = generate_sample(
        a,
        g,
        [plan],
        writer=TemplateWriter(),
        extractors=(rule, rule),
        rng=random.Random(0),
        attempts=3,
        stats=st,
    )
    assert s is not None and st.samples == 1
    assert s.hidden_slots == ("option:color",) and s.verifier.passed
    assert "insufficient" not in s.sample_id and len(s.sample_id) == 16
    assert [e.kind for e in s.mask if e.slot == "option:color"] == ["withheld"]
    assert s.literal_readings and all(c.slot != "option:color" for c in s.literal_readings[0])


def test_false_presupposition_slot_is_hidden(shop_graphs) -> None:  # type: ignore[no-untyped-def]
    a, graphs = shop_graphs
    g = next(g for g in graphs if g.root.source_record == "g1")
    plan = (FaultPlan(fault=F.FALSE_PRESUPPOSITION, target="option:color", stated_value="white"),)
    rule = RuleExtractor()
    s = generate_sample(
        a,
        g,
        [plan],
        writer=TemplateWriter(),
        extractors=(rule, rule),
        rng=random.Random(0),
        attempts=2,
        stats=GenStats(),
    )
    assert s is not None and "option:color" in s.hidden_slots
    entry = next(e for e in s.mask if e.slot == "option:color")
    assert (
        entry.kind == "presupposed"
        and entry.stated_value == "white"
        and entry.true_value == "black"
    )
