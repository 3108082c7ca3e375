"""Every persisted model round-trips through JSON unchanged (hypothesis)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core.model.base import canonical_json, content_hash
from core.model.intent import Condition, Edge, GroundTruth, Intent, IntentGraph, ShiftOperator
from core.model.sample import FAMILY_OF, FaultType, MaskEntry, Sample, VerifierRecord

text = st.text(min_size=1, max_size=12)
scalar = st.one_of(
    text, st.integers(-1000, 1000), st.floats(allow_nan=False, allow_infinity=False), st.booleans()
)
conditions = st.builds(
    Condition, slot=text, op=st.sampled_from(["=", "<=", ">=", "!=", "contains"]), value=scalar
)
ground_truths = st.builds(
    GroundTruth,
    kind=st.sampled_from(["purchaseset", "statehash", "rowset", "scalar"]),
    value=st.lists(text, max_size=4),
)


@st.composite
def intents(draw):  # type: ignore[no-untyped-def]
    return Intent.build(
        benchmark=draw(st.sampled_from(["webshop", "tau2_retail", "mock"])),
        env_id=draw(text),
        base=draw(text),
        conditions=draw(st.lists(conditions, max_size=5)),
        ground_truth=draw(st.none() | ground_truths),
        context=draw(st.dictionaries(text, text, max_size=2)),
    )


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    root = draw(intents())
    children = draw(
        st.lists(intents(), max_size=3, unique_by=lambda i: i.intent_id).filter(
            lambda cs: all(c.intent_id != root.intent_id for c in cs)
        )
    )
    edges = tuple(
        Edge(
            src=root.intent_id,
            dst=c.intent_id,
            operator=draw(st.sampled_from(list(ShiftOperator))),
            delta=draw(text),
            gt_moved=draw(st.booleans()),
        )
        for c in children
    )
    return IntentGraph(
        graph_id=content_hash([root.intent_id, [c.intent_id for c in children]]),
        benchmark=root.benchmark,
        env_id=root.env_id,
        root=root,
        children=tuple(children),
        edges=edges,
    )


masks = st.builds(
    MaskEntry,
    slot=text,
    kind=st.sampled_from(["stated", "substituted", "withheld", "marked", "ambiguous", "extra"]),
    fault=st.none() | st.sampled_from(list(FaultType)),
    true_value=st.none() | scalar,
    stated_value=st.none() | scalar,
)


@st.composite
def samples(draw):  # type: ignore[no-untyped-def]
    mask = tuple(draw(st.lists(masks, min_size=1, max_size=4)))
    query = draw(st.text(min_size=1, max_size=60))
    return Sample(
        sample_id=Sample.make_id("g", query, mask),
        benchmark="webshop",
        graph_id="g",
        env_id="e",
        root_intent_id="r",
        query=query,
        faults=tuple(draw(st.lists(st.sampled_from(list(FaultType)), min_size=1, max_size=4))),
        mask=mask,
        hidden_slots=tuple(m.slot for m in mask if m.hidden),
        literal_readings=(tuple(draw(st.lists(conditions, max_size=3))),),
        root_ground_truth=draw(st.none() | ground_truths),
        verifier=VerifierRecord(passed=True, attempts=draw(st.integers(1, 5))),
    )


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_graph_roundtrip(graph: IntentGraph) -> None:
    again = IntentGraph.model_validate_json(graph.model_dump_json())
    assert again == graph
    assert canonical_json(again) == canonical_json(graph)
    for node in graph.nodes:
        assert graph.node(node.intent_id) == node


@settings(max_examples=60, deadline=None)
@given(samples())
def test_sample_roundtrip(sample: Sample) -> None:
    assert Sample.model_validate_json(sample.model_dump_json()) == sample
    assert len(sample.families) == len(sample.faults)


@given(st.lists(conditions, max_size=6))
def test_intent_id_ignores_condition_order(conds: list[Condition]) -> None:
    a = Intent.build(benchmark="b", env_id="e", base="x", conditions=conds)
    b = Intent.build(benchmark="b", env_id="e", base="x", conditions=list(reversed(conds)))
    assert a.intent_id == b.intent_id and a.conditions == b.conditions


def test_models_reject_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        Condition.model_validate({"slot": "a", "value": 1, "colour": "red"})
    with pytest.raises(ValidationError):
        MaskEntry.model_validate({"slot": "a", "kind": "teleported"})


def test_ground_truth_hash_is_filled_and_stable() -> None:
    gt = GroundTruth(kind="statehash", value=["abc"])
    assert len(gt.hash) == 32 and gt.hash == GroundTruth(kind="statehash", value=["abc"]).hash
    assert gt.cardinality == 1 and gt.contains("abc")


def test_every_fault_type_has_a_family() -> None:
    assert set(FAMILY_OF) == set(FaultType) and len(FaultType) == 11
    assert len(set(FAMILY_OF.values())) == 4


def test_sample_id_does_not_reveal_fault_type() -> None:
    mask = (MaskEntry(slot="attr:x", kind="withheld", fault=FaultType.INSUFFICIENT_INFORMATION),)
    sid = Sample.make_id("g", "q", mask)
    assert all(f.value not in sid for f in FaultType) and len(sid) == 16
