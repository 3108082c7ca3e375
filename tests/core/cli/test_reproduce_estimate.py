"""``driftbench reproduce --estimate`` against the local fake provider with known token counts.

Every fake completion reports 100 prompt and 7 completion tokens, so the pilot's per-episode
numbers and the plan's total are known exactly; the price comes from litellm's local cost map.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Reply

PROMPT, COMPLETION = 100, 7


def _answer(body: dict) -> Reply:  # type: ignore[type-arg]
    return Reply(
        text="Action: Answer\nFinal Answer: done",
        prompt_tokens=PROMPT,
        completion_tokens=COMPLETION,
    )


def test_estimate_prices_the_plan_from_a_pilot(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import litellm

    fake_llm_server.responder = _answer
    model = f"openai/gpt-4o-mini@{fake_llm_server.base_url}"
    db = tmp_path / "s.db"
    argv = ["--store", str(db), "reproduce", "--model", model, "--benchmarks", "mock"]
    argv += ["--seeds", "2", "--limit", "1", "--estimate", "--json", "--name", "est"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    est = out["estimate"]
    assert {"episodes", "calls", "tokens", "cost_usd"} <= set(est)
    pilot = est["pilot"][model]
    assert set(pilot) == {"B0", "A0", "A1", "A2", "A3"}
    for m in pilot.values():  # every provider call reported exactly the scripted usage
        assert m["calls"] >= 1
        assert m["prompt_tokens"] == pytest.approx(PROMPT * m["calls"])
        assert m["completion_tokens"] == pytest.approx(COMPLETION * m["calls"])
    # the plan: main, personas, shifts off, k2, k4 runs of mock (1 sample, 2 seeds)
    by_run = {r["run"]: r for r in est["by_run"]}
    assert sum(r["episodes"] for r in by_run.values()) == est["episodes"] > 0
    per_ep_tokens = sum(m["calls"] for m in pilot.values()) / 5 * (PROMPT + COMPLETION)
    assert est["tokens"] == pytest.approx(est["episodes"] * per_ep_tokens, rel=1e-3)
    price = litellm.model_cost["gpt-4o-mini"]
    calls = est["tokens"] / (PROMPT + COMPLETION)
    want = calls * (
        PROMPT * price["input_cost_per_token"] + COMPLETION * price["output_cost_per_token"]
    )
    assert est["cost_usd"] == pytest.approx(want, rel=1e-3) and est["cost_usd"] > 0
    # nothing but the pilot was played, and the server saw exactly its calls
    store = Store.open(db)
    assert [r["name"] for r in store.list_runs()] == ["est-pilot-openai-gpt-4o-mini"]
    pilot_eps = len(store.episode_rows(run_id=store.list_runs()[0]["run_id"]))
    calls = sum(m["calls"] for m in pilot.values()) / 5 * pilot_eps
    assert len(fake_llm_server.requests) == pytest.approx(calls)


def test_max_cost_refuses_a_plan_over_the_limit(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm_server.responder = _answer
    model = f"openai/gpt-4o-mini@{fake_llm_server.base_url}"
    argv = ["--store", str(tmp_path / "s.db"), "reproduce", "--model", model]
    argv += ["--benchmarks", "mock", "--seeds", "1", "--limit", "1", "--max-cost", "0.0000001"]
    assert main(argv) == 2
    assert "--max-cost" in capsys.readouterr().err
