"""core.llm.openai_http: the direct path to OpenAI-compatible endpoints, beside litellm's."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import warnings
from typing import Any

import pytest

from core.errors import LLMError
from core.llm import LLMClient, ModelSpec
from core.llm import openai_http as oh
from core.llm.env import load_litellm
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Reply

USER = [{"role": "user", "content": "a blue mug under 20 dollars"}]
TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}


def _client(server: FakeOpenAIServer, model: str = "openai/fake-local", **kw: Any) -> LLMClient:
    spec = ModelSpec(model=model, api_base=server.base_url, timeout_s=5, **kw)
    return LLMClient(spec, retry_backoff_s=0.001)


@pytest.fixture
def no_litellm_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any litellm completion fail loudly: the direct path must not need it."""
    litellm = load_litellm()

    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("litellm was called on the direct path")

    monkeypatch.setattr(litellm, "completion", boom)
    monkeypatch.setattr(litellm, "acompletion", boom)


# --- which calls go direct ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "api_base", "params", "stream", "expected"),
    [
        ("openai/llama", "http://127.0.0.1:8000/v1", {}, False, True),
        ("openai/llama", "http://127.0.0.1:8000/v1", {"top_p": 0.9, "seed": 3}, False, True),
        ("openai/llama", "http://127.0.0.1:8000/v1", {"timeout": 9}, False, True),
        ("openai/llama", "http://127.0.0.1:8000/v1", {"mock_response": "x"}, False, False),
        ("openai/llama", "http://127.0.0.1:8000/v1", {}, True, False),
        ("openai/gpt-4o", None, {}, False, False),
        ("anthropic/claude-x", "http://127.0.0.1:8000/v1", {}, False, False),
        ("hosted_vllm/llama", "http://127.0.0.1:8000/v1", {}, False, False),
    ],
)
def test_direct_eligibility(
    model: str, api_base: str | None, params: dict[str, Any], stream: bool, expected: bool
) -> None:
    spec = ModelSpec(model=model, api_base=api_base)
    assert oh.direct_eligible(spec, params, stream) is expected


def test_environment_can_force_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ModelSpec(model="openai/llama", api_base="http://127.0.0.1:8000/v1")
    monkeypatch.setenv(oh.TRANSPORT_ENV, "litellm")
    assert not oh.direct_eligible(spec, {}, False)
    monkeypatch.setenv(oh.TRANSPORT_ENV, "auto")
    assert oh.direct_eligible(spec, {}, False)


# --- the wire ---------------------------------------------------------------------------------


def test_direct_body_matches_what_litellm_sends(
    fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(fake_llm_server, max_tokens=64)
    params = {"top_p": 0.5, "seed": 7, "stop": ["\n\n"]}
    monkeypatch.setenv(oh.TRANSPORT_ENV, "litellm")
    via_litellm = client.complete(USER, tools=[TOOL], **params)
    monkeypatch.setenv(oh.TRANSPORT_ENV, "auto")
    direct = client.complete(USER, tools=[TOOL], **params)
    first, second = fake_llm_server.requests
    for field in ("model", "messages", "tools", "temperature", "max_tokens", "top_p", "seed"):
        assert second[field] == first[field], field
    assert second["stop"] == ["\n\n"] and second["model"] == "fake-local"
    assert direct.text == via_litellm.text and direct.usage == via_litellm.usage
    h1, h2 = fake_llm_server.headers
    assert h2["authorization"] == h1["authorization"]
    assert h2["content-type"] == "application/json"


def test_sync_and_async_direct_calls_never_touch_litellm(
    fake_llm_server: FakeOpenAIServer, no_litellm_calls: None
) -> None:
    fake_llm_server.script(["sync reply", Reply.tool_call("search", {"q": "blue mug"})])
    client = _client(fake_llm_server)
    assert client.complete(USER).text == "sync reply"

    async def go() -> Any:
        return await client.acomplete(USER, tools=[TOOL])

    [call] = asyncio.run(go()).tool_calls
    assert call.name == "search" and call.arguments_dict() == {"q": "blue mug"}
    assert client.stats.provider_calls == 2


def test_per_call_timeout_is_a_transport_setting(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.timeout(2), "in time"])
    client = _client(fake_llm_server, max_retries=0)
    with pytest.raises(LLMError) as info:
        client.complete(USER, timeout=0.2)
    assert info.value.status == 408 and info.value.retryable
    assert "timeout" not in fake_llm_server.requests[0]


# --- failures -----------------------------------------------------------------------------------


def test_a_non_json_reply_is_a_retryable_failure(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.garbage(), "parsed fine"])
    client = _client(fake_llm_server, max_retries=1)
    assert client.complete(USER).text == "parsed fine"
    assert client.stats.retries == 1
    fake_llm_server.script([Fault.garbage()])
    with pytest.raises(LLMError, match="not a JSON object") as info:
        _client(fake_llm_server, max_retries=0).complete(USER)
    assert info.value.retryable and info.value.status is None


def test_retry_after_is_honoured(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.http(429, retry_after=0.3), "after the wait"])

    async def go() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        resp = await _client(fake_llm_server, max_retries=1).acomplete(USER)
        assert resp.text == "after the wait"
        return loop.time() - started

    assert asyncio.run(go()) >= 0.3


def test_server_error_message_reaches_the_llm_error(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.http(400)])
    with pytest.raises(LLMError, match="fake fault: HTTP 400") as info:
        _client(fake_llm_server).complete(USER)
    assert info.value.status == 400 and not info.value.retryable


def test_unreachable_endpoint_is_a_retryable_connection_failure() -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = ModelSpec(model="openai/x", api_base=f"http://127.0.0.1:{port}/v1", max_retries=0)

    async def go() -> None:
        await LLMClient(spec).acomplete(USER)

    with pytest.raises(LLMError) as info:
        asyncio.run(go())
    assert info.value.retryable and info.value.status is None


def test_a_bug_on_the_direct_path_is_a_typed_error_not_retried(
    fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_a: Any) -> Any:
        raise KeyError("surprise")

    monkeypatch.setattr(oh, "post", broken)
    client = _client(fake_llm_server, max_retries=3)
    with pytest.raises(LLMError, match="surprise") as info:
        client.complete(USER)
    assert not info.value.retryable and client.stats.provider_calls == 1


# --- replies and prices -----------------------------------------------------------------------


def test_parse_reply_accepts_odd_but_valid_shapes_and_refuses_junk() -> None:
    spec = ModelSpec(model="openai/fake-local", api_base="http://127.0.0.1:1/v1")

    def reply(message: object) -> dict[str, object]:
        return {"choices": [{"message": message, "finish_reason": "tool_calls"}]}

    ok = {
        "content": None,
        "tool_calls": [{"function": {"name": "search", "arguments": {"q": "m"}}}],
    }
    resp = oh.parse_reply(spec, reply(ok), 12.5)
    assert resp.text == "" and resp.finish_reason == "tool_calls"
    [call] = resp.tool_calls
    assert call.id == "call_0" and json.loads(call.arguments) == {"q": "m"}
    assert resp.usage.prompt_tokens == 0 and resp.cost_usd == 0.0 and not resp.priced
    parts = oh.parse_reply(spec, reply({"content": [{"type": "text", "text": "hi"}]}), 1.0)
    assert parts.text == "hi"
    junk = [
        {"choices": []},
        {"choices": "nope"},
        {"error": {"message": "overloaded", "code": 529}},
        reply(None),
        reply({"content": None}),
        reply({"content": "   "}),
        reply({"content": {"a": 1}}),
        reply({"content": "bad \ud800 text"}),
        reply({"content": None, "tool_calls": "junk"}),
        reply({"content": None, "tool_calls": ["not a call"]}),
        reply({"content": None, "tool_calls": [{"function": {"arguments": "{}"}}]}),
    ]
    for data in junk:
        with pytest.raises(oh.ProviderBadReply, match="malformed provider reply"):
            oh.parse_reply(spec, data, 1.0)


def test_direct_cost_equals_litellms_for_a_priced_model(
    fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = Reply(text="priced", prompt_tokens=1200, completion_tokens=300)
    fake_llm_server.script([reply, reply])
    client = _client(fake_llm_server, model="openai/gpt-4o-mini")
    direct = client.complete(USER)
    monkeypatch.setenv(oh.TRANSPORT_ENV, "litellm")
    via_litellm = client.complete(USER)
    assert direct.cost_usd > 0
    assert direct.cost_usd == pytest.approx(via_litellm.cost_usd, rel=1e-9)


# --- connection lifecycle ---------------------------------------------------------------------


def test_each_event_loop_gets_a_session_that_closes_with_it(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    client = _client(fake_llm_server)
    seen: list[Any] = []

    async def go() -> None:
        await asyncio.gather(
            *(client.acomplete([{"role": "user", "content": str(i)}]) for i in range(8))
        )
        seen.append(await oh._session())

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(go())
        asyncio.run(go())
        gc.collect()
    first, second = seen
    assert first is not second and first.closed and second.closed
    assert len(oh._SESSIONS) == 0 and len(oh._KEEPERS) == 0
    assert not [w for w in caught if "Unclosed" in str(w.message)]
    assert fake_llm_server.request_count == 16


def test_a_forked_child_gets_its_own_sync_client(fake_llm_server: FakeOpenAIServer) -> None:
    client = _client(fake_llm_server)
    client.complete(USER)
    parent = oh._sync_client()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a new client, and the call still works
        ok = oh._sync_client() is not parent and client.complete(USER).text.startswith("echo")
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)
    assert oh._sync_client() is parent


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_proxy_variables_are_honoured_as_on_litellms_path(
    fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    # The fake server plays the proxy: it answers the absolute-URI request itself, so the
    # endpoint's made-up host is never resolved (the network guard would fail the test).
    proxy = fake_llm_server.base_url.removesuffix("/v1")
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)
    monkeypatch.setenv(oh.TRANSPORT_ENV, transport)
    spec = ModelSpec(model="openai/fake-local", api_base="http://llm.example.invalid/v1")
    client = LLMClient(spec, retry_backoff_s=0.001)
    assert client.complete(USER).text == "echo: a blue mug under 20 dollars"

    async def go() -> str:
        return (await client.acomplete(USER, namespace="async")).text

    assert asyncio.run(go()).startswith("echo:")
    assert fake_llm_server.request_count == 2


def test_no_proxy_bypasses_and_lookups_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    url = "http://gateway.example.invalid/v1/chat/completions"
    assert oh._proxy_for(url, oh._proxy_env()) is None
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    assert oh._proxy_for(url, oh._proxy_env()) == "http://127.0.0.1:3128"
    monkeypatch.setenv("NO_PROXY", "gateway.example.invalid")
    assert oh._proxy_for(url, oh._proxy_env()) is None


def test_warm_loads_the_price_before_any_call() -> None:
    from core.llm.env import litellm_loaded

    spec = ModelSpec(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    oh._PRICES.pop(spec.model, None)
    LLMClient(spec).warm()  # nothing is sent: port 9 is never contacted
    assert litellm_loaded() and oh._PRICES[spec.model][0] > 0
