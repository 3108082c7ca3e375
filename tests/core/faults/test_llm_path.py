"""The LLM writer/extractor path against the local fake OpenAI-compatible server."""

from __future__ import annotations

import json
from typing import Any

from core.construction.pipeline import build_graphs, build_samples
from core.faults.llm import parse_extraction
from core.model.sample import FaultType as F
from tests.core.graph.fake_worlds import FakeDesk
from tests.fakes.openai_server import FakeOpenAIServer, Reply


def _script(
    server: FakeOpenAIServer,
    disagree: bool = False,
    gt: str = "",
    temperatures: dict[str, float] | None = None,
) -> list[str]:
    """Writer: a withheld-order request. Extractors: read it (optionally disagree)."""
    seen: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        seen.append(body["model"])
        if temperatures is not None:
            temperatures[body["model"]] = body.get("temperature")
        if "first message" in prompt:
            # the writer sees the requirements and the plan, never the answer set
            assert "order #A2" in prompt and "Do not mention" in prompt
            assert not gt or gt not in prompt
            return Reply.say(
                "Hi, I need some help with my account. "
                "I'd like to call off something I bought, because it is ordered by mistake."
            )
        # extractors answer the whole questionnaire; the planned fault is never named
        assert "insufficient_information" in prompt and "factual_error" in prompt
        slot = "arg:0:cancel_order:order_id"
        if disagree and body["model"] == "model-d":
            slot = "arg:0:cancel_order:reason"
        classes = {
            k: []
            for k in (
                "substituted",
                "presupposed",
                "capability",
                "withheld",
                "extra",
                "marked",
                "ambiguous",
                "noise",
                "oblique",
            )
        }
        classes["withheld"] = [slot]
        return Reply.say(
            "```json\n"
            + json.dumps({"classes": classes, "other_changes": [], "plausible": True})
            + "\n```"
        )

    server.responder = respond
    return seen


def _only_t2(graphs):  # type: ignore[no-untyped-def]
    return [g for g in graphs if g.root.source_record == "t2"]


def test_llm_writer_and_two_extractors(fake_llm_server: FakeOpenAIServer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import core.construction.pipeline as cons
    from core.faults.plan import candidate_plans

    w = FakeDesk()
    graphs = _only_t2(build_graphs(w)[0])
    temps: dict[str, float] = {}
    seen = _script(fake_llm_server, gt=graphs[0].root.ground_truth.value[0], temperatures=temps)

    def only_withhold(adapter, graph, rng):  # type: ignore[no-untyped-def]
        gt = graph.root.ground_truth
        plans = candidate_plans(adapter, graph.root, gt, F.INSUFFICIENT_INFORMATION, rng)
        return {
            F.INSUFFICIENT_INFORMATION: [
                p for p in plans if p.target == "arg:0:cancel_order:order_id"
            ]
        }

    monkeypatch.setattr(cons, "applicable_plans", only_withhold)
    base = fake_llm_server.base_url
    samples, st = build_samples(
        w,
        graphs,
        writer=f"openai/model-w@{base}",
        extractors=(f"openai/model-a@{base}", f"openai/model-b@{base}"),
    )
    assert st["samples"] == 1 and st["candidates"] == 1
    s = samples[0]
    assert s.query.startswith("Hi, I need some help") and s.hidden_slots == (
        "arg:0:cancel_order:order_id",
    )
    assert s.verifier.writer.startswith("openai/model-w") and len(s.verifier.extractors) == 2
    assert seen == ["model-w", "model-a", "model-b"]
    assert temps == {"model-w": 0.7, "model-a": 0.0, "model-b": 0.0}

    # the same build again is served from the response cache: no call reaches the server
    again, _ = build_samples(
        w,
        graphs,
        writer=f"openai/model-w@{base}",
        extractors=(f"openai/model-a@{base}", f"openai/model-b@{base}"),
    )
    assert seen == ["model-w", "model-a", "model-b"] and again == samples

    # the writer's temperature is configurable (another temperature is another request)
    temps2: dict[str, float] = {}
    _script(fake_llm_server, temperatures=temps2)
    build_samples(
        w,
        graphs,
        writer=f"openai/model-w@{base}",
        extractors=(f"openai/model-a@{base}", f"openai/model-b@{base}"),
        writer_temperature=0.2,
    )
    assert temps2.get("model-w") == 0.2

    # the second extractor names another slot: step-1 rejection on every attempt
    seen2 = _script(fake_llm_server, disagree=True)
    samples2, st2 = build_samples(
        w,
        graphs,
        writer=f"openai/model-w2@{base}",
        extractors=(f"openai/model-c@{base}", f"openai/model-d@{base}"),
    )
    assert samples2 == []
    assert st2["rejected_by_step"]["1"] == st2["candidates"] == 4
    # four writer calls (one per attempt); the identical text is read once, then from the cache
    assert seen2.count("model-w2") == 4 and seen2.count("model-c") == seen2.count("model-d") == 1


def test_parse_extraction_tolerates_fences_and_rejects_garbage() -> None:
    ok = parse_extraction(
        "m", '```json\n{"classes": {"marked": ["s1"]}}\n```', [F.REFERENTIAL_AMBIGUITY], {"s1"}
    )
    assert ok.parsed and ok.target_slot == "s1" and ok.family is not None
    assert not parse_extraction(
        "m", "I think it is vague.", [F.REFERENTIAL_AMBIGUITY], {"s1"}
    ).parsed
    bad = parse_extraction("m", '{"classes": {"marked": "s1"}}', [F.REFERENTIAL_AMBIGUITY], {"s1"})
    assert not bad.parsed
