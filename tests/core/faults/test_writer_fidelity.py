"""Rulings on the LLM writer and extractors (docs/PROTOCOL.md, "paper fidelity").

* Every fault card carries a description, an example and a type-specific final rule, and the
  LLM writer's prompt shows them.
* With k ≥ 3, whole-message faults are a second, transformation-only pass of the LLM writer.
* The extractor prompt carries type-specific questions for all eleven types, and their answers
  are checked.
"""

from __future__ import annotations

import json
import random

import pytest

from core.construction.pipeline import load_bundled
from core.envs.registry import load_world
from core.faults.extract import ExtractionContext
from core.faults.llm import (
    LLMExtractor,
    LLMWriter,
    check_answers,
    extraction_questions,
    parse_extraction,
)
from core.faults.plan import FaultPlan
from core.graph.hosts import adapter_for
from core.llm import ScriptedLLM
from core.model.sample import FaultType as F


def _retail():  # type: ignore[no-untyped-def]
    world = load_world("tau2_retail")
    graphs, _ = load_bundled("tau2_retail")
    root = next(g.root for g in graphs if len(g.root.conditions) >= 3)
    return adapter_for(world), root


def _prompts(client: ScriptedLLM) -> list[str]:
    return [str(c.messages[-1]["content"]) for c in client.calls]


def test_cards_and_questions_cover_all_eleven_types() -> None:
    from core.faults.llm import _cards

    cards, qs = _cards(), extraction_questions()
    for t in F:
        assert {"name", "description", "example", "final_rule"} <= set(cards[t.value])
        assert qs[t.value], t


def test_single_fault_is_one_pass_with_example_and_final_rule() -> None:
    adapter, root = _retail()
    slot = root.conditions[0].slot
    client = ScriptedLLM(["Hi, I need help with an order."])
    w = LLMWriter("openai/w", client=client)
    w.write(
        adapter,
        root,
        [FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target=slot)],
        variant=0,
        rng=random.Random(0),
    )
    (prompt,) = _prompts(client)
    from core.faults.llm import _cards

    card = _cards()["insufficient_information"]
    assert card["example"] in prompt and card["final_rule"] in prompt


@pytest.mark.parametrize("frame", [F.CONTEXTUAL_IRRELEVANCE, F.INDIRECT_INTENT])
def test_composite_k3_plus_applies_whole_message_faults_in_a_second_pass(frame: F) -> None:
    adapter, root = _retail()
    slots = [c.slot for c in root.conditions]
    plans = [
        FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target=slots[0]),
        FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target=slots[1]),
        FaultPlan(fault=frame),
    ]
    first = "I need to change something on my order."
    final = "Long story about my garden. Anyway, I need to change something on my order."
    client = ScriptedLLM([first, final])
    out = LLMWriter("openai/w", client=client).write(
        adapter, root, plans, variant=1, rng=random.Random(0)
    )
    p1, p2 = _prompts(client)
    from core.faults.llm import _cards

    frame_name = _cards()[frame.value]["name"]
    assert frame_name not in p1 and _cards()["insufficient_information"]["name"] in p1
    assert first in p2 and frame_name in p2 and "Transform only" in p2
    assert _cards()["insufficient_information"]["name"] not in p2
    assert out.text == final


def test_composite_k2_stays_one_pass() -> None:
    adapter, root = _retail()
    plans = [
        FaultPlan(fault=F.INSUFFICIENT_INFORMATION, target=root.conditions[0].slot),
        FaultPlan(fault=F.CONTEXTUAL_IRRELEVANCE),
    ]
    client = ScriptedLLM(["x"])
    LLMWriter("openai/w", client=client).write(
        adapter, root, plans, variant=0, rng=random.Random(0)
    )
    assert len(client.calls) == 1


def test_extractor_prompt_asks_type_specific_questions_for_every_type() -> None:
    adapter, root = _retail()
    client = ScriptedLLM(['{"classes": {}}'])
    LLMExtractor("openai/e", client=client).extract(
        "text", adapter, root, list(F), ExtractionContext(alternatives={}, extra_pool=[])
    )
    (prompt,) = _prompts(client)
    for t, qs in extraction_questions().items():
        for qid, q in qs.items():
            assert f"- {t}.{qid}: {q}" in prompt


@pytest.mark.parametrize(
    ("answers", "problem"),
    [
        ({"indirect_intent": {"request_stated": True}}, "a request is stated"),
        ({"contextual_irrelevance": {"request_complete": "no"}}, "request incomplete"),
        ({"factual_error": {"true_value_present": "true"}}, "true value"),
        ({"false_presupposition": {"fallback": ""}}, "no fallback"),
        ({"tool_capability_mismatch": {"capability": ""}}, "no capability"),
        ({"insufficient_information": {"hinted": True}}, "hinted"),
        ({"irrelevant_information": {"requirements_intact": False}}, "requirement moved"),
        ({"referential_ambiguity": {"exact_value_stated": True}}, "exact value"),
        ({"vagueness_subjectivity": {"exact_value_stated": "yes"}}, "exact value"),
        ({"lexical_ambiguity": {"exact_value_stated": True, "readings": "a; b"}}, "exact value"),
    ],
)
def test_answers_that_break_a_types_contract_are_other_changes(answers, problem) -> None:  # type: ignore[no-untyped-def]
    other, _ = check_answers(answers)
    assert any(problem in o for o in other)
    ex = parse_extraction(
        "m", json.dumps({"classes": {"marked": ["s"]}, "answers": answers}), list(F), {"s"}
    )
    assert ex.parsed and any(problem in o for o in ex.other_changes)


def test_clean_answers_pass_and_a_single_reading_is_not_plausible() -> None:
    ok = {
        "referential_ambiguity": {"surface": "the usual", "exact_value_stated": False},
        "syntactic_ambiguity": {"modifier": "with the case", "attachments": ["phone", "sister"]},
    }
    assert check_answers(ok) == ([], True)
    other, plausible = check_answers({"lexical_ambiguity": {"readings": "only one"}})
    assert other == [] and plausible is False
    bad = parse_extraction("m", '{"classes": {}, "answers": []}', list(F), set())
    assert not bad.parsed
