"""core.llm: the one door to models, exercised against the local fake OpenAI server."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from pydantic import ValidationError

from core.errors import ConfigError, LLMError
from core.llm import (
    CACHE_SCHEMA,
    ChatMessage,
    ChatModel,
    LLMClient,
    LLMResponse,
    ModelSpec,
    ResponseCache,
    ScriptedLLM,
    ToolCall,
    configured_providers,
    is_offline_name,
    make_client,
    offline_switches,
)
from core.llm.client import LOCAL_PLACEHOLDER_KEY
from core.llm.openai_http import TRANSPORT_ENV
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Reply

USER = [{"role": "user", "content": "find me red running shoes"}]
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the catalogue.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}


@pytest.fixture(params=["direct", "litellm"])
def fake_llm_server(
    fake_llm_server: FakeOpenAIServer,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> FakeOpenAIServer:
    """Every test against the fake server runs through both transports to OpenAI endpoints."""
    monkeypatch.setenv(TRANSPORT_ENV, "auto" if request.param == "direct" else "litellm")
    return fake_llm_server


def client_for(
    server: FakeOpenAIServer,
    cache_path: Path | None = None,
    model: str = "openai/fake-local",
    **spec_kw: Any,
) -> LLMClient:
    spec_kw.setdefault("timeout_s", 5)
    spec = ModelSpec(model=model, api_base=server.base_url, **spec_kw)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return LLMClient(spec, cache=cache, retry_backoff_s=0.001)


# --- model specs -----------------------------------------------------------------------------


def test_model_spec_parse_splits_model_and_api_base() -> None:
    spec = ModelSpec.parse("openai/gpt-4o-mini@http://127.0.0.1:8000/v1")
    assert spec.model == "openai/gpt-4o-mini"
    assert spec.api_base == "http://127.0.0.1:8000/v1"
    assert spec.label == "openai/gpt-4o-mini@http://127.0.0.1:8000/v1"
    assert (spec.temperature, spec.timeout_s, spec.max_retries) == (0.0, 60, 2)
    plain = ModelSpec.parse("anthropic/claude-3-5-haiku-latest", max_retries=0)
    assert plain.api_base is None and plain.max_retries == 0
    # an '@' that is not followed by a URL belongs to the model name
    vertex = ModelSpec.parse("vertex_ai/claude-3-5-sonnet@20240620")
    assert vertex.model == "vertex_ai/claude-3-5-sonnet@20240620" and vertex.api_base is None


@pytest.mark.parametrize(
    ("text", "overrides", "field"),
    [
        ("", {}, "model"),
        ("symbolic", {}, "model"),
        ("openai/x", {"timeout_s": 0}, "timeout_s"),
        ("openai/x", {"api_key_env": "sk-live-abc123 xyz"}, "api_key_env"),
        ("openai/x", {"surprise": 1}, "surprise"),
    ],
)
def test_model_spec_parse_errors_name_the_field(
    text: str, overrides: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as info:
        ModelSpec.parse(text, **overrides)
    assert info.value.field == field


def test_model_spec_is_strict_and_frozen() -> None:
    spec = ModelSpec(model="openai/x")
    with pytest.raises(ValidationError):
        spec.model = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ModelSpec(model="openai/x", api_key="sk-123")  # type: ignore[call-arg]


def test_offline_names() -> None:
    assert all(is_offline_name(n) for n in ("symbolic", "Template", " heuristic "))
    assert not is_offline_name("openai/gpt-4o")
    with pytest.raises(ConfigError):
        make_client("heuristic")


def test_make_client_builds_spec_and_optional_cache(tmp_path: Path) -> None:
    client = make_client("openai/x@http://127.0.0.1:9/v1")
    assert client.spec.api_base == "http://127.0.0.1:9/v1" and client.cache is None
    cached = make_client(ModelSpec(model="openai/x"), cache_path=tmp_path / "c.db")
    assert cached.cache is not None and cached.cache.path == tmp_path / "c.db"
    assert isinstance(client, ChatModel)


# --- environment -------------------------------------------------------------------------------


def test_import_is_cheap_and_sets_offline_switches() -> None:
    env = {k: v for k, v in os.environ.items() if k not in offline_switches()}
    env["LITELLM_OFFLINE_MODE"] = "false"  # a user's explicit choice is respected
    code = (
        "import os, sys, core.llm\n"
        "assert 'litellm' not in sys.modules, 'litellm imported eagerly'\n"
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], os.environ['HF_HUB_OFFLINE'],"
        " os.environ['LITELLM_OFFLINE_MODE'])\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "1", "false"]


def test_configured_providers_reports_names_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    providers = configured_providers()
    assert "anthropic" in providers and "groq" in providers and "openai" not in providers
    assert not any("secret" in p for p in providers)


def test_offline_switches_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    switches = offline_switches()
    assert switches["LITELLM_OFFLINE_MODE"] is True
    assert switches["HF_HUB_OFFLINE"] is False
    assert set(switches) == {
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "LITELLM_OFFLINE_MODE",
        "HF_HUB_OFFLINE",
    }


# --- the fake server through core.llm ------------------------------------------------------------


def test_text_reply_through_fake_server(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script(["Which size do you wear?"])
    resp = client_for(fake_llm_server).complete(USER)
    assert resp.text == "Which size do you wear?"
    assert resp.tool_calls == [] and resp.cached is False
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens == 5
    assert resp.model == "openai/fake-local" and resp.latency_ms > 0
    body = fake_llm_server.requests[0]
    assert body["model"] == "fake-local" and body["messages"] == USER
    assert body["temperature"] == 0.0


def test_tool_call_through_fake_server(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Reply.tool_call("search", {"query": "red running shoes"})])
    resp = client_for(fake_llm_server).complete(USER, tools=[SEARCH_TOOL])
    assert resp.text == "" and resp.finish_reason == "tool_calls"
    [call] = resp.tool_calls
    assert call.name == "search"
    assert call.arguments_dict() == {"query": "red running shoes"}
    assert fake_llm_server.requests[0]["tools"] == [SEARCH_TOOL]
    # the reply can be appended to the conversation and sent back with the tool result
    follow_up = [
        *USER,
        resp.as_message(),
        {"role": "tool", "tool_call_id": call.id, "content": "[3 results]"},
    ]
    fake_llm_server.script(["I found 3 pairs."])
    again = client_for(fake_llm_server).complete(follow_up, tools=[SEARCH_TOOL])
    assert again.text == "I found 3 pairs."
    sent = fake_llm_server.requests[1]["messages"]
    assert sent[1]["tool_calls"][0]["function"]["name"] == "search"
    assert sent[2]["tool_call_id"] == call.id


def test_chat_message_models_are_accepted(fake_llm_server: FakeOpenAIServer) -> None:
    msgs = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]
    resp = client_for(fake_llm_server).complete(msgs)
    assert resp.text == "echo: hi"
    assert fake_llm_server.requests[0]["messages"][0] == {"role": "system", "content": "be brief"}


def test_second_identical_call_is_served_from_cache(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_llm_server.script(["first answer", "second answer", "third answer"])
    client = client_for(fake_llm_server, tmp_path / "cache.db")
    one = client.complete(USER, tools=[SEARCH_TOOL])
    two = client.complete(USER, tools=[SEARCH_TOOL])
    assert fake_llm_server.request_count == 1
    assert two.cached and not one.cached
    assert two.text == one.text == "first answer"
    assert two.usage == one.usage and two.cost_usd == 0.0
    stats = client.stats
    assert (stats.calls, stats.cache_hits, stats.provider_calls) == (2, 1, 1)
    # a different namespace, different params or different tools are different requests
    assert client.complete(USER, tools=[SEARCH_TOOL], namespace="run-2").text == "second answer"
    assert client.complete(USER, tools=[SEARCH_TOOL], top_p=0.5).text == "third answer"
    assert fake_llm_server.request_count == 3
    # transport settings do not change the key
    assert client.complete(USER, tools=[SEARCH_TOOL], timeout=9).cached


def test_cache_survives_a_new_client(fake_llm_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_llm_server.script(["reproducible"])
    client_for(fake_llm_server, tmp_path / "cache.db").complete(USER)
    rerun = client_for(fake_llm_server, tmp_path / "cache.db").complete(USER)
    assert rerun.cached and rerun.text == "reproducible"
    assert fake_llm_server.request_count == 1


@pytest.mark.parametrize("status", [500, 429, 503])
def test_retryable_error_becomes_llm_error_after_retries(
    fake_llm_server: FakeOpenAIServer, status: int
) -> None:
    fake_llm_server.script([Fault.http(status)] * 10)
    client = client_for(fake_llm_server, max_retries=2)
    with pytest.raises(LLMError) as info:
        client.complete(USER)
    assert fake_llm_server.request_count == 3  # retries + 1
    err = info.value
    assert err.status == status and err.retryable is True
    assert err.model == client.spec.label and "3 attempts" in str(err)
    assert (client.stats.failures, client.stats.retries, client.stats.provider_calls) == (1, 2, 3)


def test_retry_then_success(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.http(500), Fault.http(429), "finally"])
    client = client_for(fake_llm_server, max_retries=2)
    assert client.complete(USER).text == "finally"
    assert fake_llm_server.request_count == 3 and client.stats.retries == 2


def test_backoff_grows_between_attempts(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.http(500)] * 3)
    spec = ModelSpec(model="openai/fake-local", api_base=fake_llm_server.base_url, max_retries=2)
    client = LLMClient(spec, retry_backoff_s=0.1)
    started = time.perf_counter()
    with pytest.raises(LLMError):
        client.complete(USER)
    # two sleeps: >= 0.05 and >= 0.1 (jitter keeps each in [base/2, base])
    assert time.perf_counter() - started >= 0.15


@pytest.mark.parametrize("status", [400, 401, 404])
def test_non_retryable_errors_raise_at_once(fake_llm_server: FakeOpenAIServer, status: int) -> None:
    fake_llm_server.script([Fault.http(status)] * 5)
    with pytest.raises(LLMError) as info:
        client_for(fake_llm_server, max_retries=3).complete(USER)
    assert fake_llm_server.request_count == 1
    assert info.value.status == status and info.value.retryable is False


def test_timeout_is_retried_then_typed(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.timeout(3), Fault.timeout(3)])
    client = client_for(fake_llm_server, timeout_s=0.3, max_retries=1)
    started = time.perf_counter()
    with pytest.raises(LLMError) as info:
        client.complete(USER)
    assert time.perf_counter() - started < 2.5
    assert fake_llm_server.request_count == 2
    assert info.value.status == 408 and info.value.retryable


def test_dropped_connection_is_retryable(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.disconnect(), "recovered"])
    client = client_for(fake_llm_server, max_retries=1)
    assert client.complete(USER).text == "recovered"
    assert fake_llm_server.request_count == 2


def test_empty_completion_is_a_provider_fault_retried_and_never_cached(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_llm_server.script([Fault.empty(), "now with words"])
    client = client_for(fake_llm_server, tmp_path / "c.db")
    first = client.complete(USER)
    assert first.text == "now with words" and client.stats.retries == 1
    assert fake_llm_server.request_count == 2
    fake_llm_server.script([Fault.empty()] * 3)
    with pytest.raises(LLMError, match="empty completion"):
        client.complete(USER, namespace="other")
    assert client.cache is not None and len(client.cache) == 1


def test_truncated_tool_call_arguments_are_kept_raw(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.truncated_tool_call("search")])
    resp = client_for(fake_llm_server).complete(USER, tools=[SEARCH_TOOL])
    [call] = resp.tool_calls
    assert call.name == "search" and call.arguments.startswith('{"')
    assert call.arguments_dict() is None
    assert resp.finish_reason == "length"


def test_absurdly_long_reply(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Fault.long(300_000)])
    resp = client_for(fake_llm_server).complete(USER)
    assert len(resp.text) == 300_000 and resp.finish_reason == "length"


def test_callable_script_items_and_responder(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([lambda body: f"{len(body['messages'])} messages"])
    fake_llm_server.responder = lambda body: Reply.say("from responder")
    client = client_for(fake_llm_server)
    assert client.complete(USER).text == "1 messages"
    assert client.complete(USER).text == "from responder"


# --- litellm mock_response, cost ------------------------------------------------------------------


def test_litellm_mock_response_path(tmp_path: Path) -> None:
    client = LLMClient(ModelSpec(model="gpt-4o-mini"), cache=ResponseCache(tmp_path / "c.db"))
    resp = client.complete(USER, mock_response="mocked reply")
    assert resp.text == "mocked reply" and not resp.cached
    assert resp.cost_usd >= 0.0
    assert client.complete(USER, mock_response="mocked reply").cached


def test_cost_is_zero_for_unknown_local_models(fake_llm_server: FakeOpenAIServer) -> None:
    client = client_for(fake_llm_server, model="openai/my-local-llama")
    resp = client.complete(USER)
    assert resp.cost_usd == 0.0 and client.stats.cost_usd == 0.0
    assert client.stats.prompt_tokens == resp.usage.prompt_tokens > 0


def test_cost_comes_from_local_cost_map_for_known_models(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    fake_llm_server.script([Reply(text="priced", prompt_tokens=1000, completion_tokens=1000)])
    client = client_for(fake_llm_server, model="openai/gpt-4o-mini")
    resp = client.complete(USER)
    assert resp.usage.prompt_tokens == 1000 and resp.usage.completion_tokens == 1000
    assert 0.0 < resp.cost_usd < 0.1
    assert client.stats.cost_usd == pytest.approx(resp.cost_usd)


# --- streaming, async, latency ------------------------------------------------------------------


def test_streaming_delivers_deltas_and_the_whole(fake_llm_server: FakeOpenAIServer) -> None:
    text = "Sure - which colour and what budget do you have in mind?"
    fake_llm_server.script([text])
    deltas: list[str] = []
    resp = client_for(fake_llm_server).complete(USER, stream=True, on_delta=deltas.append)
    assert resp.text == text and "".join(deltas) == text and len(deltas) > 3
    assert fake_llm_server.requests[0]["stream"] is True
    assert resp.usage.completion_tokens > 0


def test_streaming_tool_call(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.script([Reply.tool_call("search", {"query": "red shoes", "limit": 5})])
    resp = client_for(fake_llm_server).complete(USER, tools=[SEARCH_TOOL], stream=True)
    [call] = resp.tool_calls
    assert call.name == "search" and call.arguments_dict() == {"query": "red shoes", "limit": 5}


def test_async_complete_cache_and_errors(fake_llm_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_llm_server.script(["async hello", Fault.http(500), Fault.http(500)])
    client = client_for(fake_llm_server, tmp_path / "c.db", max_retries=1)

    async def run() -> None:
        first = await client.acomplete(USER)
        second = await client.acomplete(USER)
        assert first.text == second.text == "async hello" and second.cached
        with pytest.raises(LLMError) as info:
            await client.acomplete(USER, namespace="other")
        assert info.value.status == 500
        deltas: list[str] = []
        streamed = await client.acomplete(
            [{"role": "user", "content": "stream please"}], stream=True, on_delta=deltas.append
        )
        assert streamed.text == "echo: stream please" == "".join(deltas)

    asyncio.run(run())
    assert fake_llm_server.request_count == 4


def test_latency_injection_and_concurrency(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.latency_s = 0.2
    client = client_for(fake_llm_server)
    assert client.complete(USER).latency_ms >= 200

    async def sweep() -> list[LLMResponse]:
        return await asyncio.gather(
            *(client.acomplete([{"role": "user", "content": f"q{i}"}]) for i in range(16))
        )

    started = time.perf_counter()
    replies = asyncio.run(sweep())
    elapsed = time.perf_counter() - started
    assert sorted(r.text for r in replies) == sorted(f"echo: q{i}" for i in range(16))
    assert elapsed < 1.5, f"16 concurrent calls at 200 ms took {elapsed:.2f}s"


# --- keys never stored --------------------------------------------------------------------------


def test_api_key_from_env_is_sent_but_never_cached(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-DO-NOT-STORE-1234567890"
    monkeypatch.setenv("DRIFTBENCH_FAKE_KEY", secret)
    db = tmp_path / "cache.db"
    client = client_for(fake_llm_server, db, api_key_env="DRIFTBENCH_FAKE_KEY")
    fake_llm_server.script(["ok", Fault.http(401)])
    client.complete(USER)
    assert fake_llm_server.headers[0]["authorization"] == f"Bearer {secret}"
    with pytest.raises(LLMError) as info:
        client.complete(USER, namespace="other")
    assert secret not in str(info.value)
    client.cache.close()  # type: ignore[union-attr]
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("cache.db*"))
    assert b"DO-NOT-STORE" not in blob
    rows = sqlite3.connect(db).execute("SELECT request FROM llm_cache").fetchall()
    assert rows and all(secret not in r[0] and "api_key" not in r[0] for r in rows)


def test_missing_key_env_fails_before_any_request(
    fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DRIFTBENCH_UNSET_KEY", raising=False)
    client = client_for(fake_llm_server, api_key_env="DRIFTBENCH_UNSET_KEY")
    with pytest.raises(LLMError, match="DRIFTBENCH_UNSET_KEY") as info:
        client.complete(USER)
    assert info.value.retryable is False and fake_llm_server.request_count == 0


def test_custom_endpoint_gets_the_providers_key_variable_or_a_placeholder(
    fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client_for(fake_llm_server).complete(USER)
    assert fake_llm_server.headers[0]["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gateway-account-key")
    client_for(fake_llm_server).complete(USER, namespace="2")
    assert fake_llm_server.headers[1]["authorization"] == "Bearer sk-gateway-account-key"


def test_keys_cannot_be_passed_as_params(fake_llm_server: FakeOpenAIServer) -> None:
    with pytest.raises(ConfigError) as info:
        client_for(fake_llm_server).complete(USER, api_key="sk-nope")
    assert info.value.field == "api_key" and fake_llm_server.request_count == 0


# --- the cache table --------------------------------------------------------------------------


def test_cache_table_layout_and_wal(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    assert len(cache) == 0
    conn = sqlite3.connect(tmp_path / "c.db")
    cols = [(r[1], r[2], r[3], r[5]) for r in conn.execute("PRAGMA table_info(llm_cache)")]
    assert cols == [
        ("key", "TEXT", 0, 1),
        ("model", "TEXT", 1, 0),
        ("namespace", "TEXT", 1, 0),
        ("request", "TEXT", 1, 0),
        ("response", "TEXT", 1, 0),
        ("prompt_tokens", "INTEGER", 0, 0),
        ("completion_tokens", "INTEGER", 0, 0),
        ("cost_usd", "REAL", 0, 0),
        ("created_at", "TEXT", 1, 0),
    ]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # the main store creates the same table with the same DDL: running it again is a no-op
    conn.execute(CACHE_SCHEMA)


def test_cache_key_is_stable_and_sensitive() -> None:
    spec = ModelSpec(model="openai/x")
    key = ResponseCache.key_for(spec, USER, None, {}, "default")
    assert key == ResponseCache.key_for(
        ModelSpec(model="openai/x"), list(USER), None, {}, "default"
    )
    assert len(key) == 64
    variants = {
        ResponseCache.key_for(spec, USER, [SEARCH_TOOL], {}, "default"),
        ResponseCache.key_for(spec, USER, None, {"top_p": 0.5}, "default"),
        ResponseCache.key_for(spec, USER, None, {}, "ns"),
        ResponseCache.key_for(ModelSpec(model="openai/y"), USER, None, {}, "default"),
        ResponseCache.key_for(
            ModelSpec(model="openai/x", temperature=0.7), USER, None, {}, "default"
        ),
    }
    assert key not in variants and len(variants) == 5
    # the seed counts only when the model samples (temperature above 0, or none sent)
    assert ResponseCache.key_for(spec, USER, None, {"seed": 1}, "default") == key
    warm = ModelSpec(model="openai/x", temperature=0.7)
    seeds = {ResponseCache.key_for(warm, USER, None, {"seed": s}, "default") for s in range(3)}
    assert len(seeds) == 3
    reasoning = ModelSpec(model="openai/o3-mini")
    assert reasoning.temperature is None
    one = ResponseCache.key_for(reasoning, USER, None, {"seed": 1}, "d")
    assert one != ResponseCache.key_for(reasoning, USER, None, {"seed": 2}, "d")
    assert key == ResponseCache.key_for(spec, USER, None, {"timeout": 3, "stream": True}, "default")


def test_cache_is_thread_safe(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    spec = ModelSpec(model="openai/x")
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(25):
                msgs = [{"role": "user", "content": f"{n}-{i}"}]
                key = ResponseCache.key_for(spec, msgs, None, {}, "default")
                cache.put(
                    key,
                    model=spec.model,
                    namespace="default",
                    request={"messages": msgs},
                    response=LLMResponse(text=f"r{n}-{i}", model=spec.model),
                )
                entry = cache.get(key)
                assert entry is not None and entry.response.text == f"r{n}-{i}"
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(cache) == 200
    assert cache.clear("default") == 200 and len(cache) == 0


# --- the scripted fake ----------------------------------------------------------------------------


def test_scripted_llm_replays_and_records() -> None:
    call = ToolCall(id="c1", name="search", arguments='{"query": "shoes"}')
    llm = ScriptedLLM(["hello", call, LLMResponse(text="full", cost_usd=0.5)])
    assert isinstance(llm, ChatModel)
    assert llm.complete(USER).text == "hello"
    assert llm.complete(USER, tools=[SEARCH_TOOL]).tool_calls == [call]
    assert llm.complete(USER).cost_usd == 0.5
    assert llm.remaining == 0
    with pytest.raises(LLMError, match="exhausted") as info:
        llm.complete(USER)
    assert info.value.retryable is False
    assert len(llm.calls) == 4 and llm.calls[1].tools == [SEARCH_TOOL]
    stats = llm.stats
    assert (stats.calls, stats.failures, stats.cost_usd) == (3, 1, 0.5)


def test_scripted_llm_function_errors_cycle_and_async(scripted_llm: Any) -> None:
    fn = scripted_llm(lambda msgs, tools: f"saw {msgs[-1]['content']}")
    assert fn.complete([{"role": "user", "content": "x"}]).text == "saw x"
    failing = scripted_llm([LLMError("boom", status=500)])
    with pytest.raises(LLMError, match="boom"):
        failing.complete(USER)
    cyc = scripted_llm(["a", "b"], cycle=True)
    assert [cyc.complete(USER).text for _ in range(5)] == ["a", "b", "a", "b", "a"]
    deltas: list[str] = []
    out = asyncio.run(cyc.acomplete(USER, on_delta=deltas.append))
    assert out.text == "b" and deltas == ["b"] and out.usage.completion_tokens == 1


def test_messages_are_validated() -> None:
    llm = ScriptedLLM(["x"])
    with pytest.raises(LLMError):
        llm.complete([])
    with pytest.raises(LLMError):
        llm.complete([{"content": "no role"}])


# --- the fake server itself ---------------------------------------------------------------------


def test_fake_server_models_endpoint_and_raw_http(fake_llm_server: FakeOpenAIServer) -> None:
    url = urlparse(fake_llm_server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    conn.request("GET", "/v1/models")
    models = json.loads(conn.getresponse().read())
    assert models["data"][0]["id"] == "fake-model"
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=json.dumps({"model": "m", "messages": USER}),
        headers={"Content-Type": "application/json"},
    )
    reply = json.loads(conn.getresponse().read())  # same keep-alive connection
    assert reply["choices"][0]["message"]["content"] == f"echo: {USER[0]['content']}"
    conn.close()


def test_fake_server_handles_64_concurrent_connections(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.latency_s = 0.2
    url = urlparse(fake_llm_server.base_url)
    results: list[str] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        body = {"model": "m", "messages": [{"role": "user", "content": f"n{i}"}]}
        conn.request("POST", "/v1/chat/completions", body=json.dumps(body))
        text = json.loads(conn.getresponse().read())["choices"][0]["message"]["content"]
        conn.close()
        with lock:
            results.append(text)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(64)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    assert sorted(results) == sorted(f"echo: n{i}" for i in range(64))
    assert fake_llm_server.request_count == 64
    assert elapsed < 2.0, f"64 concurrent requests at 200 ms took {elapsed:.2f}s"
