"""Robust against a real (slow, small-context, one-slot) server: the defects of issue 29.

Each test fails on the code before the fix: no completion cap was sent, the timeout was a
fixed 60 s whatever the cap and the server's speed, concurrency was unbounded per endpoint,
a context overflow was an ordinary error, and the models file's per-role entries were
matched by model name only (the voice took the agent's settings).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from core.agents.llm_agent import LLMAgent
from core.errors import LLMError
from core.llm import LLMClient, ModelSpec, make_client
from core.llm.endpoints import (
    MAX_SCALED_TIMEOUT_S,
    Gate,
    SpeedMeter,
    endpoint_for,
    reset_endpoints,
    timeout_for,
)
from core.llm.models import ROLE_MAX_TOKENS, configure, resolve_spec, use_config
from core.llm.retry import ContextOverflow
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Reply

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    use_config(None)
    reset_endpoints()
    yield
    use_config(None)
    reset_endpoints()


def test_a_completion_cap_is_always_sent(fake_llm_server: FakeOpenAIServer) -> None:
    for role in ("agent", "voice", "judge", "writer", "extractor", "interpreter"):
        client = make_client(f"openai/m@{fake_llm_server.base_url}", role=role)
        client.complete(USER, namespace=role)
        body = fake_llm_server.requests[-1]
        assert body["max_tokens"] == ROLE_MAX_TOKENS[role], role
    explicit = LLMClient(ModelSpec.parse(f"openai/m@{fake_llm_server.base_url}", max_tokens=7))
    explicit.complete(USER, namespace="x")
    assert fake_llm_server.requests[-1]["max_tokens"] == 7


def test_reasoning_models_get_a_completion_cap_of_their_own(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    client = make_client(f"openai/o3-mini@{fake_llm_server.base_url}", role="voice")
    client.complete(USER)
    body = fake_llm_server.requests[-1]
    assert "max_tokens" not in body and body["max_completion_tokens"] >= 4096


def test_timeout_scales_with_the_cap_and_the_measured_speed() -> None:
    spec = ModelSpec(model="openai/x", api_base="http://127.0.0.1:9/v1", max_tokens=512)
    slow, fast = SpeedMeter(tokens_per_s=4.0), SpeedMeter(tokens_per_s=400.0)
    assert timeout_for(spec, slow, 512) > 300  # 512 tokens at 4/s need minutes, not 60 s
    assert timeout_for(spec, fast, 512) == spec.timeout_s  # a fast server keeps the default
    assert timeout_for(spec, SpeedMeter(tokens_per_s=0.01), 4096) == MAX_SCALED_TIMEOUT_S
    pinned = spec.model_copy(update={"timeout_s": 5.0})
    pinned = ModelSpec(**pinned.model_dump())  # an explicit timeout is kept as it is
    assert timeout_for(pinned, slow, 512) == 5.0


def test_the_client_measures_the_endpoint_and_sends_the_scaled_timeout(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    fake_llm_server.latency_s = 0.3
    fake_llm_server.script([Reply(text="x " * 30, completion_tokens=30)])
    client = make_client(f"openai/m@{fake_llm_server.base_url}", role="agent")
    client.complete(USER)
    speed = client.endpoint.meter.speed()
    assert 20 < speed < 150  # 30 tokens in about 0.3 s
    route = client._route([{"role": "user", "content": "x"}], None, {}, False)
    assert route.where is not None
    expected = timeout_for(client.spec, client.endpoint.meter, client.spec.max_tokens)
    assert route.where.timeout_s == pytest.approx(expected)


def test_concurrency_is_bounded_per_endpoint_across_threads_and_loops(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(body: dict[str, Any]) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Reply(text="ok")

    fake_llm_server.responder = slow
    base = fake_llm_server.base_url
    agent = LLMClient(ModelSpec.parse(f"openai/a@{base}", concurrency=1), role="agent")
    voice = LLMClient(ModelSpec.parse(f"openai/a@{base}", concurrency=1), role="voice")

    async def many() -> None:
        await asyncio.gather(
            *(agent.acomplete([{"role": "user", "content": f"a{i}"}]) for i in range(6))
        )

    threads = [
        threading.Thread(target=lambda i=i: voice.complete([{"role": "user", "content": f"v{i}"}]))
        for i in range(4)
    ]
    for t in threads:
        t.start()
    asyncio.run(many())
    for t in threads:
        t.join()
    assert fake_llm_server.request_count == 10
    assert state["peak"] == 1


def test_gate_never_leaks_a_slot_when_a_waiter_is_cancelled() -> None:
    gate = Gate(1)

    async def scenario() -> None:
        await gate.aacquire()
        waiter = asyncio.create_task(gate.aacquire())
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        gate.release()
        await asyncio.wait_for(gate.aacquire(), 1.0)  # the slot came back
        gate.release()

    asyncio.run(scenario())
    assert gate.busy == 0


def test_context_overflow_is_its_own_error_and_never_retried(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    fake_llm_server.script(
        [
            Fault.body(
                {
                    "error": {
                        "code": 400,
                        "message": "the request exceeds the available context size, try "
                        "increasing it",
                        "type": "exceed_context_size_error",
                    }
                },
                status=400,
            )
        ]
    )
    client = make_client(f"openai/m@{fake_llm_server.base_url}", max_retries=3)
    with pytest.raises(ContextOverflow):
        client.complete(USER)
    assert fake_llm_server.request_count == 1
    assert not client.breaker.is_open


def test_the_agent_slides_its_window_after_a_context_overflow(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    from core.model.episode import AgentView

    overflow = Fault.body({"error": {"code": 400, "message": "context_length_exceeded"}}, 400)
    fake_llm_server.script([overflow, "Action: Answer\nFinal Answer: the blue one please"])
    client = make_client(f"openai/m@{fake_llm_server.base_url}")
    agent = LLMAgent("B0", client, "mock")
    view = AgentView.model_validate(
        {
            "episode_id": "e",
            "benchmark": "mock",
            "query": "buy a blue mug",
            "turn": 0,
            "turns_left": 5,
            "tools": [],
            "transcript": [],
        }
    )
    before = agent.window_chars
    action = agent.act(view)
    assert type(action).__name__ == "Propose"
    assert agent.window_chars == before // 2
    notes = [r.detail for r in agent.pop_repairs()]
    assert any(n.startswith("context_window: the model's context was exceeded") for n in notes)


def test_the_window_is_fitted_to_the_models_context() -> None:
    from core.llm.scripted import ScriptedLLM

    small = ScriptedLLM(["x"], spec=ModelSpec(model="s/m", context_tokens=2048, max_tokens=256))
    big = ScriptedLLM(["x"], spec=ModelSpec(model="s/m"))
    a_small, a_big = LLMAgent("B0", small, "mock"), LLMAgent("B0", big, "mock")
    system, status = "s" * 3000, "t" * 100
    assert a_small._window_limit(system, status) < 5000 < a_big._window_limit(system, status)


def test_each_role_takes_its_own_entry_when_roles_share_one_model(tmp_path: Any) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        "agent: {model: openai/m, api_base: 'http://127.0.0.1:1/v1', max_tokens: 256}\n"
        "voice: {model: openai/m, api_base: 'http://127.0.0.1:1/v1', max_tokens: 96}\n",
        encoding="utf-8",
    )
    configure(path)
    label = "openai/m@http://127.0.0.1:1/v1"
    assert resolve_spec(label, "agent").max_tokens == 256
    assert resolve_spec(label, "voice").max_tokens == 96


def test_breaker_statuses_and_retry_loop_match_on_both_paths(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    fake_llm_server.script([Fault.http(500), Fault.http(500), "fine"])
    client = make_client(f"openai/m@{fake_llm_server.base_url}", max_retries=2)
    client.retry_backoff_s = 0.0
    assert client.complete(USER).text == "fine"
    fake_llm_server.script([Fault.http(500), Fault.http(500), "fine"])

    async def go() -> str:
        return (await client.acomplete(USER, namespace="async")).text

    assert asyncio.run(go()) == "fine"
    assert client.stats.retries == 4
    fake_llm_server.script([Fault.http(503)] * 3)
    with pytest.raises(LLMError) as err:
        client.complete(USER, namespace="fails")
    assert "after 3 attempts" in str(err.value)


def test_truncated_replies_are_counted_in_the_ledger(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.long(400)])
    client = make_client(f"openai/m@{fake_llm_server.base_url}", role="voice")
    client.complete(USER)
    row = client.ledger.to_dict()["voice"]
    assert row["truncated"] == 1 and row["seconds"] > 0
    assert client.stats.truncated == 1
    assert endpoint_for(client.spec).meter.samples >= 1
