"""Failures are events, not results (issue 29): rejected reflections, interpreter fallbacks,
every role in the ledger, doctor's endpoint checks, one local slot per episode."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.llm.endpoints import reset_endpoints
from core.llm.models import use_config
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    use_config(None)
    reset_endpoints()
    yield
    use_config(None)
    reset_endpoints()


def _cli(store: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(store), *argv])
    return rc, out.getvalue(), err.getvalue()


def _events(db: Path, kind: str) -> list[dict[str, Any]]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn:
        sql = "SELECT body FROM events WHERE kind=? ORDER BY episode_id, seq"
        rows = conn.execute(sql, (kind,))
        return [json.loads(b) for (b,) in rows]


def test_a_rejected_reflection_is_recorded(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    def reply(body: dict[str, Any]) -> str:
        prompt = json.dumps(body["messages"])
        if "lessons" in prompt and "digests" in prompt.lower():
            return "I learned a lot today."  # no JSON: the reflection is rejected
        return "Action: Answer\nFinal Answer: a teal shirt"

    fake_llm_server.responder = reply
    db = tmp_path / "s.db"
    argv = ("run", "--benchmark", "mock", "--method", "A3", "--persona", "rational")
    argv += ("--seeds", "1", "--limit", "2", "--a3-generation-size", "1")
    rc, _, err = _cli(db, *argv, "--agent", f"openai/m@{fake_llm_server.base_url}", "--json")
    assert rc == 0, err
    repairs = [r for r in _events(db, "repair") if r["target"] == "reflection"]
    assert repairs and repairs[0]["detail"] == "rejected: parse"


def test_user_interpret_flags_its_fallbacks(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    from core.envs.mock import mock_sample
    from core.model.sample import FaultType

    fake_llm_server.responder = lambda body: "I think they ask about a shirt."  # not the contract
    sample = mock_sample(FaultType.INSUFFICIENT_INFORMATION)
    db = tmp_path / "s.db"
    _cli(db, "init", "--no-demo")
    src = tmp_path / "q.jsonl"
    src.write_text(json.dumps({"sample_id": sample.sample_id, "question": "Which colour?"}) + "\n")
    rc, out, err = _cli(
        db,
        "user",
        "interpret",
        "--from",
        str(src),
        "--interpreter",
        f"openai/m@{fake_llm_server.base_url}",
    )
    if rc != 0 and "unknown sample" in err:
        pytest.skip("the mock sample is not in the store")
    assert rc == 0, err
    (line,) = [json.loads(x) for x in out.splitlines()]
    assert line["fallback"] is True and line["fallback_reason"]
    assert "1 of 1 answers fell back" in err and "model calls" in err


def test_an_llm_voice_beside_a_symbolic_agent_is_in_the_ledger(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    fake_llm_server.responder = lambda body: "Teal, please."
    db = tmp_path / "s.db"
    argv = ("run", "--benchmark", "mock", "--method", "A1", "--persona", "rational", "--seeds")
    argv += ("1", "--limit", "1", "--workers", "1")
    rc, out, err = _cli(db, *argv, "--user-voice", f"openai/v@{fake_llm_server.base_url}", "--json")
    assert rc == 0, err
    assert "voice" in json.loads(out)["cost_by_role"]  # missing before: no ledger on this path


def test_doctor_checks_each_endpoint_of_the_models_file(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "m.yaml"
    models.write_text(
        f"agent: {{model: openai/a, api_base: '{fake_llm_server.base_url}'}}\n"
        "voice: {model: openai/v, api_base: 'http://127.0.0.1:9/v1'}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("DRIFTBENCH_MODELS", str(models))  # honoured without --models
    db = tmp_path / "s.db"
    rc, out, _ = _cli(db, "doctor", "--json")
    report = json.loads(out)["models"]
    assert report["file"] == str(models)
    rows = {r["role"]: r for r in report["endpoints"]}
    assert rows["agent"]["ok"] is True and rows["voice"]["ok"] is False
    assert rc == 2  # an unreachable endpoint fails the check


def test_one_slot_endpoints_play_one_episode_at_a_time() -> None:
    from core.llm import LLMClient, ModelSpec
    from core.model.run import RunOptions
    from core.runner.llm_backends import episode_concurrency

    one = LLMClient(ModelSpec.parse("openai/m@http://127.0.0.1:9/v1", concurrency=1))
    many = LLMClient(ModelSpec.parse("openai/m@http://127.0.0.1:9/v1"))
    assert episode_concurrency(RunOptions(concurrency=16), one) == 1
    assert episode_concurrency(RunOptions(concurrency=16), many) == 16
