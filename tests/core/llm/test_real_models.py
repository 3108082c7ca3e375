"""Ready for real models, through the fake OpenAI-compatible server on both transports.

Keys (``api_key_env``, ``--api-key-env``, the provider's usual variable), reasoning models
(no temperature, ``max_completion_tokens``, ``reasoning_effort``), the system-role options,
models files, in-flight de-duplication, the cost ledger against every recorded call,
``--no-cache``, the native tool-calling format, ``<think>`` stripping and append-only prompts.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from core.agents.prompts import prefix_reuse
from core.errors import ConfigError
from core.llm import LLMClient, ModelSpec, make_client
from core.llm.models import configure, load_models, use_config
from core.llm.openai_http import TRANSPORT_ENV
from core.model.run import RunOptions, RunSpec
from core.runner import run_sweep
from core.runner.costs import run_ledger
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Reply, ToolCallSpec

USER = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
OPTS = RunOptions(concurrency=1, progress=False, retry_backoff_s=0, max_attempts=1)


@pytest.fixture(params=["direct", "litellm"])
def server(
    fake_llm_server: FakeOpenAIServer,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> FakeOpenAIServer:
    monkeypatch.setenv(TRANSPORT_ENV, "auto" if request.param == "direct" else "litellm")
    return fake_llm_server


@pytest.fixture(autouse=True)
def _fresh_config() -> Any:
    use_config(None)
    yield
    use_config(None)


def _client(server: FakeOpenAIServer, model: str = "openai/fake", **kw: Any) -> LLMClient:
    return make_client(f"{model}@{server.base_url}", **kw)


# -- keys ------------------------------------------------------------------------------------
def test_key_header_from_each_source(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-usual-variable-123456")
    monkeypatch.setenv("GATEWAY_KEY", "sk-gateway-variable-654321")
    _client(server).complete(USER, namespace="a")
    _client(server, api_key_env="GATEWAY_KEY").complete(USER, namespace="b")
    configure(api_key_env="GATEWAY_KEY")  # what --api-key-env does
    _client(server).complete(USER, namespace="c")
    got = [h["authorization"] for h in server.headers]
    assert got == [
        "Bearer sk-usual-variable-123456",
        "Bearer sk-gateway-variable-654321",
        "Bearer sk-gateway-variable-654321",
    ]


def test_api_key_env_flag_must_name_a_variable() -> None:
    with pytest.raises(ConfigError, match="api_key_env"):
        configure(api_key_env="sk-this-is-a-key")


# -- parameters ------------------------------------------------------------------------------
def test_reasoning_model_gets_no_temperature_on_either_transport(server: FakeOpenAIServer) -> None:
    spec = ModelSpec.parse(
        f"openai/o3-mini@{server.base_url}", max_tokens=300, reasoning_effort="low"
    )
    assert spec.temperature is None
    make_client(spec).complete(USER)
    body = server.requests[-1]
    assert "temperature" not in body
    assert body.get("max_completion_tokens") == 300 or body.get("max_tokens") == 300
    assert body["reasoning_effort"] == "low"
    # an explicit temperature is honoured; a normal model gets 0.0 by default
    make_client(spec.model_copy(update={"temperature": 1.0})).complete(USER, namespace="t")
    assert server.requests[-1]["temperature"] == 1.0
    _client(server).complete(USER, namespace="n")
    assert server.requests[-1]["temperature"] == 0.0


def test_system_role_options_and_extra_params(server: FakeOpenAIServer) -> None:
    _client(server, system_role="user", extra={"top_p": 0.5}).complete(USER)
    body = server.requests[-1]
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"].startswith("be brief") and body["top_p"] == 0.5
    _client(server, system_role="developer").complete(USER, namespace="d")
    assert server.requests[-1]["messages"][0]["role"] in ("developer", "system")
    assert server.requests[-1]["messages"][0]["content"] == "be brief"


def test_models_file_sets_every_role(tmp_path: Path, server: FakeOpenAIServer) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        f"agent:\n  model: openai/gpt-5-mini\n  api_base: {server.base_url}\n"
        "  max_tokens: 64\n  timeout_s: 9\n  extra: {top_p: 0.25}\n"
        f"voice: {{model: openai/fake-voice, api_base: '{server.base_url}', temperature: 0.7}}\n"
        f"judges:\n  - {{model: openai/j1, api_base: '{server.base_url}'}}\n"
        f"  - {{model: openai/j2, api_base: '{server.base_url}'}}\n"
    )
    configure(path)
    agent = make_client(None, role="agent")
    assert agent.spec.model == "openai/gpt-5-mini" and agent.spec.temperature is None
    assert agent.spec.timeout_s == 9
    agent.complete(USER)
    assert server.requests[-1]["top_p"] == 0.25 and "temperature" not in server.requests[-1]
    voice = make_client(f"openai/fake-voice@{server.base_url}", role="voice")
    assert voice.spec.temperature == 0.7 and voice.role == "voice"
    from core.grip.judges.llm import llm_pair

    assert [j.name for j in llm_pair("models")] == [
        f"openai/j1@{server.base_url}",
        f"openai/j2@{server.base_url}",
    ]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("agent: {model: 'a b'}", "agent.model"),
        ("agent: {model: openai/x, temperature: 9}", "agent.temperature"),
        ("agent: {model: openai/x, extra: {api_key: sk-x}}", "agent.extra"),
        ("judges: [{model: openai/x}]", "judges"),
        ("agnet: {model: openai/x}", "agnet"),
        ("[1, 2]", None),
    ],
)
def test_bad_models_file_is_one_line_naming_file_and_field(
    tmp_path: Path, text: str, field: str | None
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_models(path)
    assert str(path) in str(info.value)
    if field is not None:
        assert info.value.field == field


# -- in-flight de-duplication ----------------------------------------------------------------
def test_identical_requests_in_flight_share_one_call(server: FakeOpenAIServer) -> None:
    server.latency_s = 0.3
    client = _client(server)

    async def many() -> list[Any]:
        return await asyncio.gather(*(client.acomplete(USER) for _ in range(8)))

    replies = asyncio.run(many())
    assert server.request_count == 1 and len({r.text for r in replies}) == 1
    assert sum(not r.cached for r in replies) == 1 and client.stats.deduplicated == 7
    out: list[Any] = []
    threads = [
        threading.Thread(target=lambda: out.append(client.complete(USER, namespace="s")))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert server.request_count == 2 and len(out) == 6
    ledger = client.ledger.to_dict()["agent"]
    assert ledger["provider_calls"] == 2 and ledger["calls"] == 14


# -- sweeps: the ledger, --no-cache, tools, <think>, prefix reuse -----------------------------
def _searcher(turns: int) -> Any:
    """A fake agent that searches ``turns - 1`` times with new words, then answers."""

    def reply(body: dict[str, Any]) -> Any:
        if body.get("model") in ("gpt-4o-mini-voice", "voice"):
            return "I would like it in medium, please."
        done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if done + 1 >= turns:
            return "Action: Answer\nFinal Answer: done"
        return f"Action: Operation\n```\nsearch[shirt teal medium {done}]\n```"

    return reply


def _spec(server: FakeOpenAIServer, **kw: Any) -> RunSpec:
    base = dict(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        agent=f"openai/fake@{server.base_url}",
        limit=1,
    )
    base.update(kw)
    return RunSpec(**base)


def test_cost_ledger_equals_the_sum_over_every_recorded_call(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))  # the voice caches in the store file
    server.responder = lambda body: (
        "Medium, please."
        if "persona" in json.dumps(body["messages"]).lower()[:4000]
        and body["messages"][-1].get("role") == "user"
        and "Your single action now" not in str(body["messages"][-1].get("content"))
        else _searcher(4)(body)
    )
    store = Store.open(tmp_path / "driftbench.db")
    priced = f"openai/gpt-4o-mini@{server.base_url}"
    spec = _spec(server, methods=("A1", "B0"), agent=priced, user_voice=priced, limit=2)
    res = run_sweep(store, spec, OPTS)
    assert res.errors == 0
    ledger = run_ledger(store, spec.run_id())
    rows = store.conn.execute("SELECT SUM(cost_usd), COUNT(*) FROM llm_cache").fetchone()
    assert rows[1] > 0 and ledger["agent"]["provider_calls"] > 0
    total = sum(r["cost_usd"] for r in ledger.values())
    assert total == pytest.approx(rows[0], rel=1e-9) and total > 0
    assert total == pytest.approx(store.get_run(spec.run_id())["cost_usd"], rel=1e-9)
    assert sum(r["provider_calls"] for r in ledger.values()) == rows[1]
    if "voice" in ledger:  # the A1 episodes ask: the voice is priced on its own line
        assert ledger["voice"]["cost_usd"] > 0


def test_unpriced_models_say_so(tmp_path: Path, server: FakeOpenAIServer) -> None:
    from core.runner.costs import cost_split

    server.responder = _searcher(2)
    store = Store.open(tmp_path / "s.db")
    spec = _spec(server)
    run_sweep(store, spec, OPTS)
    assert cost_split(store, spec.run_id()) == {"agent": "unpriced"}


def _cli(store: Path, *argv: str) -> tuple[int, str]:
    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(store), *argv])
    return rc, out.getvalue() + err.getvalue()


def test_no_cache_makes_real_calls(tmp_path: Path, server: FakeOpenAIServer) -> None:
    server.responder = _searcher(2)
    db = tmp_path / "s.db"
    argv = ("run", "--benchmark", "mock", "--method", "B0", "--persona", "rational")
    argv += ("--seeds", "1", "--limit", "1", "--agent", f"openai/fake@{server.base_url}")
    rc, text = _cli(db, *argv, "--json")
    assert rc == 0, text
    first = server.request_count
    assert first > 0 and json.loads(text)["cost_by_role"] == {"agent": "unpriced"}
    _cli(db, *argv, "--name", "again", "--json")
    assert server.request_count == first  # replayed from the cache
    rc, text = _cli(db, *argv, "--name", "fresh", "--no-cache", "--json")
    assert rc == 0, text
    assert server.request_count == 2 * first


def test_native_tool_calling_format(tmp_path: Path, server: FakeOpenAIServer) -> None:
    def reply(body: dict[str, Any]) -> Any:
        names = {t["function"]["name"] for t in body.get("tools") or []}
        assert {"search", "final_answer"} <= names
        if any(m.get("role") == "assistant" for m in body["messages"]):
            return Reply.tool_call("final_answer", {"answer": "done"})
        return Reply(tool_calls=(ToolCallSpec("search", {"query": "teal shirt"}),))

    server.responder = reply
    store = Store.open(tmp_path / "s.db")
    spec = _spec(server, action_format="tools")
    res = run_sweep(store, spec, OPTS)
    assert res.errors == 0
    (row,) = store.episode_rows(run_id=spec.run_id())
    acts = [
        json.loads(b)["action"]
        for b in store.event_jsons(row["episode_id"])
        if json.loads(b)["kind"] == "agent_action"
    ]
    assert [a["kind"] for a in acts][:2] == ["env", "propose"], acts
    assert {a["kind"] for a in acts} == {"env", "propose"}  # no malformed action at all
    assert spec.run_id() != _spec(server).run_id()  # the format is part of the run's identity


def test_think_blocks_are_stripped_before_parsing(tmp_path: Path, server: FakeOpenAIServer) -> None:
    def reply(body: dict[str, Any]) -> str:
        said = [m for m in body["messages"] if m.get("role") == "assistant"]
        if said:
            return (
                "<think>Action: Clarify\nContent: should I ask?</think>\n"
                "Action: Answer\nFinal Answer: done"
            )
        return (
            "<think>\nMaybe Action: Answer\nFinal Answer: no\n</think>\n"
            "Action: Operation\n```\nsearch[teal]\n```"
        )

    server.responder = reply
    store = Store.open(tmp_path / "s.db")
    spec = _spec(server)
    run_sweep(store, spec, OPTS)
    (row,) = store.episode_rows(run_id=spec.run_id())
    events = [json.loads(b) for b in store.event_jsons(row["episode_id"])]
    kinds = [e["action"]["kind"] for e in events if e["kind"] == "agent_action"]
    assert kinds[:2] == ["env", "propose"] and "malformed" not in kinds


def test_prompts_are_append_only_over_a_ten_turn_episode(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.responder = _searcher(10)
    store = Store.open(tmp_path / "s.db")
    spec = _spec(server, methods=("A2",))
    res = run_sweep(store, spec, OPTS)
    assert res.errors == 0
    requests = [b["messages"] for b in server.requests][:10]
    assert len(requests) == 10  # nine searches and an answer (the episode may go on after)
    assert prefix_reuse(requests) >= 0.9
    for prev, cur in zip(requests, requests[1:], strict=False):
        assert cur[: len(prev)] == prev  # every earlier message is unchanged: append-only
    assert prefix_reuse(requests, of="current") > 0.8  # the rest is each turn's new content


def test_window_slides_at_the_configured_limit_and_is_recorded(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    fake_llm_server.responder = _searcher(12)
    store = Store.open(tmp_path / "s.db")
    spec = _spec(fake_llm_server)
    client = make_client(spec.agent, context_chars=2000)
    assert client.spec.context_chars == 2000
    run_sweep(store, spec, OPTS, client=client)
    (row,) = store.episode_rows(run_id=spec.run_id())
    events = [json.loads(b) for b in store.event_jsons(row["episode_id"])]
    slides = [e for e in events if e["kind"] == "repair" and "context_window" in e["detail"]]
    assert slides, "the window never slid"
    sizes = [sum(len(m["content"]) for m in b["messages"][1:]) for b in fake_llm_server.requests]
    assert max(sizes) < 2000 + 4000  # bounded: the limit plus the newest turn
    # between slides every request only appends
    reqs = [b["messages"] for b in fake_llm_server.requests]
    appended = sum(cur[: len(prev)] == prev for prev, cur in zip(reqs, reqs[1:], strict=False))
    assert appended >= len(reqs) - 1 - len(slides)
