"""Provider faults on the fake server: the runner never crashes, episodes record what happened.

Transport faults (HTTP 500/429, timeouts, dropped connections) exhaust the client's retries and
the runner's attempts and become ERROR episodes; a resume against a healthy server replays only
those. Content faults (empty completions, truncated JSON tool calls, absurdly long replies) are
recorded as malformed agent actions that cost patience; the episode still ends with a score.
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

TRANSPORT = {
    "http500": (Fault.http(500), "500"),
    "http429": (Fault.http(429), "429"),
    "timeout": (Fault.timeout(2.0), "imeout"),
    "disconnect": (Fault.disconnect(), ""),
}
CONTENT = {
    "empty": (Fault.empty(), "empty reply"),
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
    server.script([Fault.empty()])  # the re-prompt's answer is good
    store = Store.open(tmp_path / "s.db")
    spec, res = _sweep(store, server, limit=1)
    (row,) = store.episode_rows(run_id=spec.run_id())
    repairs = [e for e in events_of(store, row["episode_id"]) if e["kind"] == "repair"]
    assert [r["target"] for r in repairs] == ["action_format"]
    assert res.errors == 0
