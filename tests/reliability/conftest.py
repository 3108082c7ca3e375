"""Shared helpers for the reliability tests: LLM sweeps on the fake server, store invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.llm import LLMClient, ModelSpec, make_client
from core.model.run import RunSpec
from core.store import Store


def good_reply(body: dict[str, Any]) -> str:
    """A well-formed agent: one search, then a final answer."""
    said = [m for m in body["messages"] if m.get("role") == "assistant"]
    if any("search[" in str(m.get("content") or "") for m in said):
        return "Action: Answer\nFinal Answer: done"
    return "Action: Operation\n```\nsearch[shirt teal medium]\n```"


def llm_spec(base_url: str, *, methods: tuple[str, ...] = ("B0",), limit: int = 2) -> RunSpec:
    """A small LLM sweep over the mock benchmark against ``openai/fake@<base_url>``."""
    return RunSpec(
        benchmarks=("mock",),
        methods=methods,
        personas=("rational",),
        seeds=(0,),
        agent=f"openai/fake@{base_url}",
        limit=limit,
    )


def fast_client(spec: RunSpec, store_path: Path, *, timeout_s: float = 0.5) -> LLMClient:
    """The client ``run_sweep`` would build, with a short timeout and one transport retry."""
    return make_client(
        ModelSpec.parse(spec.agent, timeout_s=timeout_s, max_retries=1), cache_path=store_path
    )


def events_of(store: Store, episode_id: str) -> list[dict[str, Any]]:
    """An episode's events as dicts."""
    return [json.loads(b) for b in store.event_jsons(episode_id)]


def assert_episode_invariants(events: list[dict[str, Any]]) -> None:
    """seq contiguous from 0; exactly one episode_ended, last; patience never rises or goes < 0."""
    assert events, "an episode has at least its opening event"
    assert [e["seq"] for e in events] == list(range(len(events)))
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "episode_started"
    assert kinds.count("episode_ended") == 1 and kinds[-1] == "episode_ended", kinds[-5:]
    last = float(events[0]["budget"])
    assert last >= 0.0
    for e in events:
        if e["kind"] == "patience_charged":
            assert abs(float(e["before"]) - last) <= 1e-9, (e, last)
            values = [float(e["after"])]
        else:
            values = [float(e[k]) for k in ("patience", "patience_left") if e.get(k) is not None]
        for value in values:
            assert value >= 0.0, (e["kind"], value)
            assert value <= last + 1e-9, (e["kind"], value, last)
            last = value


def assert_run_well_formed(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every row of the run ended, and every episode satisfies the event invariants."""
    rows = store.episode_rows(run_id=run_id)
    assert rows
    for r in rows:
        assert r["status"] == "ended" and r["outcome"], r
        assert_episode_invariants(events_of(store, r["episode_id"]))
    return rows
