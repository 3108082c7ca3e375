"""Sweeps: an agent that raises, or whose model fails, ends its episode with a recorded error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.agents.base import AgentBase
from core.errors import LLMError
from core.llm import ScriptedLLM
from core.model.actions import AgentAction
from core.model.episode import AgentView
from core.model.run import RunOptions, RunSpec
from core.runner import run_sweep
from core.runner import units as units_mod
from core.store import Store


class _Raises(AgentBase):
    spec = "RAISE"

    def act(self, view: AgentView) -> AgentAction:
        raise RuntimeError("policy exploded")


def _endings(store: Store, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for row in store.episode_rows(run_id=run_id):
        last = json.loads(store.event_jsons(row["episode_id"])[-1])
        assert last["kind"] == "episode_ended"
        out[(row["method"], row["sample_id"])] = {"outcome": row["outcome"], **last}
    return out


def test_symbolic_sweep_records_a_raising_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = units_mod.build_agent

    def build(method: str, **kw: Any) -> Any:
        return _Raises() if method == "A0" else real(method, **kw)

    monkeypatch.setattr(units_mod, "build_agent", build)
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",), methods=("B0", "A0"), personas=("rational",), seeds=(0,), limit=2
    )
    res = run_sweep(store, spec, RunOptions(workers=1, progress=False))
    assert res.errors == 2 and res.completed == 2
    for (method, _), end in _endings(store, res.run_id).items():
        if method == "A0":
            assert end["outcome"] == "ERROR" and end["reason"] == "agent_error"
            assert end["error"] == "RuntimeError: policy exploded"
        else:
            assert end["outcome"] != "ERROR"


def _llm_spec() -> RunSpec:
    return RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        agent="openai/scripted",
        limit=2,
    )


def test_llm_sweep_records_an_agent_exception(tmp_path: Path) -> None:
    def reply(messages: Any, tools: Any) -> str:
        raise ValueError("responder bug")

    store = Store.open(tmp_path / "s.db")
    res = run_sweep(
        store, _llm_spec(), RunOptions(concurrency=2, progress=False), client=ScriptedLLM(reply)
    )
    assert res.errors == 2 and res.status == "completed_with_errors"
    for end in _endings(store, res.run_id).values():
        assert end["outcome"] == "ERROR" and end["reason"] == "agent_error"
        assert end["error"] == "ValueError: responder bug"


def test_llm_sweep_records_a_provider_failure_with_its_own_reason(tmp_path: Path) -> None:
    client = ScriptedLLM(
        [LLMError("quota gone", model="m", status=429, retryable=True)], cycle=True
    )
    store = Store.open(tmp_path / "s.db")
    opts = RunOptions(concurrency=1, progress=False, max_attempts=2, retry_backoff_s=0)
    res = run_sweep(store, _llm_spec(), opts, client=client)
    assert res.errors == 2
    assert len(client.calls) == 4  # two attempts per episode, each failing on its first call
    for end in _endings(store, res.run_id).values():
        assert end["outcome"] == "ERROR" and end["reason"] == "llm_error"
        assert "quota gone" in end["error"]
