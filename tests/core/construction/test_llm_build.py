"""LLM construction (issue 29): frugal, failure-tolerant, concurrent, counted.

Against the fake server: the relay writer and extractors make real calls and answer as the
offline ones would, so the counts measure the pipeline. 3,529 sequential calls for one sample
per graph before; now at most 6 calls per admitted sample, a failing writer or extractor
rejects only that candidate, the allowance caps the candidates, and concurrency gives the
same samples.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.build_relay import relay_build
from core.construction.pipeline import build_graphs, build_samples, bundled_world
from core.llm.endpoints import reset_endpoints
from core.llm.models import use_config
from tests.fakes.openai_server import FakeOpenAIServer, Fault


@pytest.fixture(scope="module")
def retail() -> Any:
    world = bundled_world("tau2_retail")
    return world, sorted(build_graphs(world)[0], key=lambda g: g.graph_id)[:6]


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    use_config(None)
    reset_endpoints()
    yield
    use_config(None)


def test_calls_per_admitted_sample_and_concurrency_give_the_same_samples(
    retail: Any, fake_llm_server: FakeOpenAIServer
) -> None:
    world, graphs = retail
    fake_llm_server.responder = lambda body: "ok"
    one = relay_build(world, graphs, fake_llm_server.base_url, concurrency=1)
    many = relay_build(world, graphs, fake_llm_server.base_url, concurrency=4)
    assert one["samples"] >= len(graphs) - 1
    assert one["calls_per_sample"] <= 6
    assert many["calls"] == one["calls"] and many["stats"] == one["stats"]


def test_a_failing_writer_rejects_that_candidate_and_the_build_goes_on(
    retail: Any, fake_llm_server: FakeOpenAIServer
) -> None:
    world, graphs = retail
    calls = {"n": 0}

    def flaky(body: dict[str, Any]) -> Any:
        calls["n"] += 1
        return Fault.http(400) if calls["n"] % 3 == 1 else "Hello, I need help with an order."

    fake_llm_server.responder = flaky
    base = fake_llm_server.base_url
    samples, stats = build_samples(
        world, graphs[:3], writer=f"openai/w@{base}", extractors=("rule", "align"), per_graph=2
    )
    assert stats["llm_failures"] > 0  # recorded, and the build finished
    reasons = stats["rejection_reasons"]
    assert any(k.startswith("llm:writer") for k in reasons)
    allowance = 4 * 2 * 3  # candidates per wanted sample × samples per graph × graphs
    assert stats["candidates"] <= allowance


def test_the_models_file_gives_the_writer_its_settings(
    retail: Any, fake_llm_server: FakeOpenAIServer, tmp_path: Any
) -> None:
    from core.llm.models import configure

    world, graphs = retail
    base = fake_llm_server.base_url
    path = tmp_path / "m.yaml"
    path.write_text(
        f"writer: {{model: openai/w, api_base: '{base}', max_tokens: 77, temperature: 0.1}}\n",
        encoding="utf-8",
    )
    configure(path)
    fake_llm_server.responder = lambda body: "Hello, please cancel my order."
    build_samples(world, graphs[:1], writer=f"openai/w@{base}", per_graph=1)
    body = fake_llm_server.requests[0]
    assert body["max_tokens"] == 77 and body["temperature"] == 0.1  # not 0.7 and no cap
