"""Provider faults on the fake server: the runner never crashes, episodes record what happened.

Transport faults (HTTP 500/429, timeouts, dropped connections) and malformed provider replies
(an error body with HTTP 200, no choices, ``content: null``, non-text content, junk tool calls,
lone surrogates, empty completions) exhaust the client's retries and the runner's attempts and
become ERROR episodes — never a malformed agent action, never an empty user line; a resume
against a healthy server replays only those, and one bad reply never fails a run. What the
*model* wrote (truncated JSON tool-call arguments, absurdly long replies) is agent behaviour:
recorded as malformed actions that cost patience; the episode still ends with a score. A
provider that keeps failing opens the client's circuit breaker and the run pauses (resumably);
a ``Retry-After`` beyond the documented limit pauses it at once; a key the provider echoes
back is redacted everywhere.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest

from core.model.run import RunOptions
from core.runner import run_sweep
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.reliability.conftest import (
    assert_run_well_formed,
    events_of,
    fast_client,
    good_reply,
    llm_spec,
)

MAX_ATTEMPTS = 2
PER_ATTEMPT = 2  # the fast client: one call plus one retry
OPTS = RunOptions(concurrency=1, progress=False, retry_backoff_s=0, max_attempts=MAX_ATTEMPTS)


def _choice(message: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


TRANSPORT = {
    "http500": (Fault.http(500), "500"),
    "http429": (Fault.http(429), "429"),
    "timeout": (Fault.timeout(2.0), "imeout"),
    "disconnect": (Fault.disconnect(), ""),
    "empty": (Fault.empty(), "empty completion"),
    "garbage": (Fault.garbage(), "not a JSON object"),
    "error_body_200": (Fault.body({"error": {"message": "overloaded"}}), "error body"),
    "no_choices": (Fault.body({"choices": []}), "no choices"),
    "choices_not_list": (Fault.body({"choices": {"0": "x"}}), "no choices"),
    "content_null": (Fault.body(_choice({"role": "assistant", "content": None})), "empty"),
    "content_not_text": (Fault.body(_choice({"content": {"a": 1}})), "not text"),
    "junk_tool_calls": (Fault.body(_choice({"content": None, "tool_calls": "junk"})), "tool_calls"),
    "lone_surrogate": (Fault.body(_choice({"content": "Action: Answer \ud800"})), "surrogate"),
}
CONTENT = {
    "truncated_tool_call": (Fault.truncated_tool_call("search"), "not valid JSON"),
    "long": (Fault.long(300_000), "Action:"),
}


def _sweep(store: Store, server: FakeOpenAIServer, **kw: Any) -> Any:
    spec = llm_spec(server.base_url, **kw)
    return spec, run_sweep(store, spec, OPTS, client=fast_client(spec, store.path))


@pytest.mark.parametrize("kind", sorted(TRANSPORT))
def test_transport_fault_becomes_error_and_resume_retries_only_it(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer, kind: str
) -> None:
    fault, needle = TRANSPORT[kind]
    server = fake_llm_server
    server.responder = good_reply
    server.script([fault] * (MAX_ATTEMPTS * PER_ATTEMPT))  # the first episode's every try
    store = Store.open(tmp_path / "s.db")
    spec, first = _sweep(store, server)
    assert first.status == "completed_with_errors" and first.errors == 1 and first.completed == 1
    rows = assert_run_well_formed(store, spec.run_id())
    (bad,) = [r for r in rows if r["outcome"] == "ERROR"]
    ended = events_of(store, bad["episode_id"])[-1]
    assert ended["reason"] and ended["error"] and "LLMError" in ended["error"]
    assert needle in ended["error"]
    before = {r["episode_id"]: store.event_jsons(r["episode_id"]) for r in rows}

    n_before = server.request_count
    again = run_sweep(store, spec, OPTS, client=fast_client(spec, store.path))
    assert again.errors == 0 and again.completed == 2 and again.skipped == 1
    assert again.status == "completed"
    assert server.request_count > n_before  # the ERROR episode was played again
    rows2 = assert_run_well_formed(store, spec.run_id())
    for eid, events in before.items():  # nothing already stored was touched
        assert store.event_jsons(eid) == events
    new = [r for r in rows2 if r["episode_id"] not in before]
    assert len(new) == 1 and new[0]["episode_id"] == bad["episode_id"] + "-r1"
    assert new[0]["outcome"] != "ERROR"

    # a third call has nothing left to do: no request at all
    n = server.request_count
    third = run_sweep(store, spec, OPTS, client=fast_client(spec, store.path))
    assert third.skipped == 2 and server.request_count == n


@pytest.mark.parametrize("kind", sorted(CONTENT))
def test_content_fault_is_recorded_as_malformed_action(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer, kind: str
) -> None:
    fault, problem = CONTENT[kind]
    server = fake_llm_server
    server.responder = good_reply
    server.script([fault] * 4)  # two turns: each reply and its re-prompt are bad
    store = Store.open(tmp_path / "s.db")
    spec, res = _sweep(store, server, limit=1)
    assert res.errors == 0 and res.completed == 1
    (row,) = assert_run_well_formed(store, spec.run_id())
    events = events_of(store, row["episode_id"])
    bad = [e for e in events if e["kind"] == "agent_action" and e["action"]["kind"] == "malformed"]
    assert len(bad) == 2
    assert all(any(problem in p for p in e["action"]["problems"]) for e in bad)
    charges = [e for e in events if e["kind"] == "patience_charged" and e["reason"] == "malformed"]
    assert len(charges) == 2
    # nothing to retry on resume: the episode was scored
    n = server.request_count
    again = run_sweep(store, spec, OPTS, client=fast_client(spec, store.path))
    assert again.skipped == 1 and server.request_count == n


def test_random_fault_mix_never_crashes_and_resume_heals(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    """Seeded random faults on ~30 % of requests, 4 episodes in flight, two methods."""
    rng = random.Random(7)
    lock = threading.Lock()
    faults = [f for f, _ in (*TRANSPORT.values(), *CONTENT.values())]
    healthy = threading.Event()

    def responder(body: dict[str, Any]) -> Any:
        with lock:
            roll, pick = rng.random(), rng.choice(faults)
        if healthy.is_set() or roll > 0.3:
            return good_reply(body)
        return pick

    server = fake_llm_server
    server.responder = responder
    store = Store.open(tmp_path / "s.db")
    spec = llm_spec(server.base_url, methods=("B0", "A2"), limit=2)
    opts = OPTS.model_copy(update={"concurrency": 4})
    first = run_sweep(store, spec, opts, client=fast_client(spec, store.path))
    assert first.status in ("completed", "completed_with_errors")
    assert first.completed + first.errors == first.episodes == 4
    rows = assert_run_well_formed(store, spec.run_id())
    for r in rows:
        if r["outcome"] == "ERROR":
            assert events_of(store, r["episode_id"])[-1]["error"]
    healthy.set()
    again = run_sweep(store, spec, opts, client=fast_client(spec, store.path))
    assert again.errors == 0 and again.completed == 4 and again.status == "completed"
    assert again.skipped == first.completed
    assert_run_well_formed(store, spec.run_id())


def _request_chars(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content") or "")) for m in body["messages"])


def test_absurdly_long_reply_is_not_carried_into_later_prompts(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    server = fake_llm_server
    server.responder = good_reply
    server.script([Fault.long(1_000_000)] * 2)  # a reply and its re-prompt: one malformed action
    store = Store.open(tmp_path / "s.db")
    _sweep(store, server, limit=1)
    later = server.requests[2:]
    assert later
    assert max(_request_chars(b) for b in later) < 100_000


def test_absurdly_long_reply_is_capped_in_the_stored_event(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    server = fake_llm_server
    server.responder = good_reply
    server.script([Fault.long(1_000_000)] * 2)
    store = Store.open(tmp_path / "s.db")
    spec, _ = _sweep(store, server, limit=1)
    (row,) = store.episode_rows(run_id=spec.run_id())
    assert max(len(b) for b in store.event_jsons(row["episode_id"])) < 100_000


def test_reprompt_repair_is_recorded_in_the_episode(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    server = fake_llm_server
    server.responder = good_reply
    server.script(["I will search now."])  # no action: the re-prompt's answer is good
    store = Store.open(tmp_path / "s.db")
    spec, res = _sweep(store, server, limit=1)
    (row,) = store.episode_rows(run_id=spec.run_id())
    repairs = [e for e in events_of(store, row["episode_id"]) if e["kind"] == "repair"]
    assert [r["target"] for r in repairs] == ["action_format"]
    assert res.errors == 0


def _no_agent_blame(events: list[dict[str, Any]]) -> None:
    """A provider fault never shows up as the agent's (or the user's) behaviour."""
    for e in events:
        if e["kind"] == "agent_action":
            assert e["action"]["kind"] != "malformed", e
        if e["kind"] == "patience_charged":
            assert e["reason"] != "malformed", e
        if e["kind"] == "user_reply":
            assert str(e.get("text") or "").strip(), e


@pytest.mark.parametrize("kind", ["error_body_200", "content_null", "junk_tool_calls"])
def test_malformed_provider_reply_is_an_error_never_a_malformed_action(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer, kind: str
) -> None:
    fault, needle = TRANSPORT[kind]
    server = fake_llm_server
    server.responder = good_reply
    server.script([fault] * (MAX_ATTEMPTS * PER_ATTEMPT))
    store = Store.open(tmp_path / "s.db")
    spec, res = _sweep(store, server, limit=1)
    assert res.errors == 1 and res.status == "completed_with_errors"
    (row,) = assert_run_well_formed(store, spec.run_id())
    assert row["outcome"] == "ERROR"
    events = events_of(store, row["episode_id"])
    _no_agent_blame(events)
    assert needle in events[-1]["error"] and "malformed provider reply" in events[-1]["error"]
    assert not store.conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]


def test_one_bad_reply_never_fails_a_run_and_is_retried_by_the_client(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    server = fake_llm_server
    server.responder = good_reply
    server.script([TRANSPORT["lone_surrogate"][0]])  # one bad reply, then healthy
    store = Store.open(tmp_path / "s.db")
    spec, res = _sweep(store, server, limit=2)
    assert res.status == "completed" and res.errors == 0 and res.completed == 2
    for row in assert_run_well_formed(store, spec.run_id()):
        _no_agent_blame(events_of(store, row["episode_id"]))
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    assert b"\xed\xa0\x80" not in blob  # no surrogate bytes stored anywhere


def test_lone_surrogates_everywhere_end_as_error_and_the_run_continues(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    server = fake_llm_server
    bad = TRANSPORT["lone_surrogate"][0]
    server.responder = lambda body: bad
    store = Store.open(tmp_path / "s.db")
    spec, res = _sweep(store, server, limit=2)
    assert res.status == "completed_with_errors" and res.errors == 2
    rows = assert_run_well_formed(store, spec.run_id())
    assert all(r["outcome"] == "ERROR" for r in rows)
    assert "surrogate" in events_of(store, rows[0]["episode_id"])[-1]["error"]


def test_llm_voice_fault_is_an_error_not_an_empty_user_line(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    server = fake_llm_server

    def responder(body: dict[str, Any]) -> Any:
        if body["model"] == "voice":
            return Fault.body(_choice({"role": "assistant", "content": ""}))
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        if "USER:" in text and "Action: Clarify" in text:
            return "Action: Answer\nFinal Answer: done"
        return "Action: Clarify\nContent: Which size would you like?"

    server.responder = responder
    store = Store.open(tmp_path / "s.db")
    spec = llm_spec(server.base_url, methods=("A1",), limit=1).model_copy(
        update={"user_voice": f"openai/voice@{server.base_url}"}
    )
    res = run_sweep(store, spec, OPTS, client=fast_client(spec, store.path))
    assert res.errors == 1
    (row,) = assert_run_well_formed(store, spec.run_id())
    events = events_of(store, row["episode_id"])
    assert row["outcome"] == "ERROR"
    _no_agent_blame(events)


def test_circuit_breaker_pauses_the_run_and_resume_finishes_it(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    server = fake_llm_server
    down = {"on": True}
    server.responder = lambda body: Fault.http(503) if down["on"] else good_reply(body)
    store = Store.open(tmp_path / "s.db")
    spec = llm_spec(server.base_url, limit=6)
    opts = OPTS.model_copy(update={"max_attempts": 3})
    res = run_sweep(store, spec, opts, client=fast_client(spec, store.path))
    assert res.status == "paused"
    assert res.completed == 0 and 0 < res.errors < 6  # stopped early, not one error per episode
    assert server.request_count <= 8 + 2  # the breaker's threshold, not 6 × 3 × 2 attempts
    assert store.get_run(spec.run_id())["status"] == "paused"
    ended = events_of(store, store.episode_rows(run_id=spec.run_id())[0]["episode_id"])[-1]
    assert "circuit breaker" in ended["error"] or "503" in ended["error"]
    down["on"] = False
    again = run_sweep(store, spec, opts, client=fast_client(spec, store.path))
    assert again.status == "completed" and again.errors == 0 and again.completed == 6
    assert_run_well_formed(store, spec.run_id())


def test_retry_after_beyond_the_limit_pauses_at_once(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    import time

    from core.llm.client import MAX_RETRY_AFTER_S

    server = fake_llm_server
    server.responder = lambda body: Fault.http(429, retry_after=86400)
    store = Store.open(tmp_path / "s.db")
    spec = llm_spec(server.base_url, limit=3)
    started = time.perf_counter()
    res = run_sweep(store, spec, OPTS, client=fast_client(spec, store.path))
    assert time.perf_counter() - started < 30
    assert res.status == "paused" and res.errors == 1 and server.request_count == 1
    (row,) = store.episode_rows(run_id=spec.run_id())
    error = events_of(store, row["episode_id"])[-1]["error"]
    assert "86400" in error and f"{MAX_RETRY_AFTER_S:g}s limit" in error


def test_retry_after_within_the_limit_is_honoured(fake_llm_server: FakeOpenAIServer) -> None:
    import time

    from core.llm import ModelSpec, make_client

    fake_llm_server.script([Fault.http(429, retry_after=0.6), "fine"])
    client = make_client(ModelSpec.parse(f"openai/fake@{fake_llm_server.base_url}"))
    client.retry_backoff_s = 0.0
    started = time.perf_counter()
    assert client.complete([{"role": "user", "content": "hi"}]).text == "fine"
    assert time.perf_counter() - started >= 0.6


def test_hanging_provider_costs_a_bounded_time(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    """Every call times out: the breaker stops the run after its threshold, not per episode."""
    import time

    server = fake_llm_server
    server.responder = lambda body: Fault.timeout(3.0)
    store = Store.open(tmp_path / "s.db")
    spec = llm_spec(server.base_url, limit=6)
    opts = OPTS.model_copy(update={"concurrency": 2})
    client = fast_client(spec, store.path, timeout_s=0.3)
    started = time.perf_counter()
    res = run_sweep(store, spec, opts, client=client)
    took = time.perf_counter() - started
    assert res.status == "paused" and res.completed == 0
    assert server.request_count <= 8 + 2
    assert took < 8 * 0.3 + 15  # threshold × timeout (+ slack), not 6 episodes × 2 × 2 tries
