"""LLM runs against the fake server: settings in the run identity, every role's entry honoured,
failures counted as events in GRIP's model health, ``runs`` tokens and seconds (issue 29)."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.llm.endpoints import reset_endpoints
from core.llm.models import use_config
from tests.fakes.openai_server import FakeOpenAIServer, Reply


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


def _models(tmp_path: Path, base: str, agent_cap: int = 64, **roles: str) -> Path:
    lines = [
        f"agent: {{model: openai/small, api_base: '{base}', max_tokens: {agent_cap}, "
        "concurrency: 1, context_tokens: 4096}",
    ]
    lines += [f"{role}: {value}" for role, value in roles.items()]
    path = tmp_path / f"models-{agent_cap}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


RUN = ("run", "--benchmark", "mock", "--method", "B0", "--persona", "rational", "--seeds", "1")


def test_model_settings_are_part_of_the_run_identity(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    """A resumed run once mixed two max_tokens caps; now the cap is part of its identity."""
    fake_llm_server.responder = lambda body: "Action: Answer\nFinal Answer: a teal shirt"
    db = tmp_path / "s.db"
    m64 = _models(tmp_path, fake_llm_server.base_url, 64)
    rc, out, err = _cli(db, *RUN, "--limit", "1", "--models", str(m64), "--name", "r", "--json")
    assert rc == 0, err
    first = json.loads(out)
    assert {b["max_tokens"] for b in fake_llm_server.requests} == {64}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        spec = json.loads(conn.execute("SELECT spec FROM runs").fetchone()[0])
    assert spec["models"]["agent"]["max_tokens"] == 64
    assert spec["models"]["agent"]["concurrency"] == 1
    m128 = _models(tmp_path, fake_llm_server.base_url, 128)
    rc, _, err = _cli(db, *RUN, "--limit", "1", "--models", str(m128), "--name", "r", "--json")
    assert rc == 2 and "different spec" in err  # the same name never resumes other settings
    rc, out, err = _cli(db, *RUN, "--limit", "1", "--models", str(m128), "--json")
    assert rc == 0 and json.loads(out)["run_id"] != first["run_id"]
    # --resume plays the stored settings, whatever the models file says now
    fake_llm_server.requests.clear()
    rc, out, err = _cli(db, "run", "--resume", "r", "--models", str(m128), "--json")
    assert rc == 0, err


def test_reflection_and_interpreter_entries_are_used(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    base = fake_llm_server.base_url

    def reply(body: dict[str, Any]) -> Any:
        model = body["model"]
        if model == "reflector":
            return '{"lessons": []}'
        if model == "reader":
            return '{"act": "open", "slots": [], "confirm": null, "wrong": []}'
        said = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if said == 0:
            return "Action: Clarify\nContent: Anything else I should know?"
        return "Action: Answer\nFinal Answer: a teal shirt"

    fake_llm_server.responder = reply
    models = _models(
        tmp_path,
        base,
        reflection=f"{{model: openai/reflector, api_base: '{base}'}}",
        interpreter=f"{{model: openai/reader, api_base: '{base}'}}",
    )
    db = tmp_path / "s.db"
    argv = ("run", "--benchmark", "mock", "--method", "A3", "--persona", "rational")
    rc, out, err = _cli(
        db,
        *argv,
        "--seeds",
        "1",
        "--limit",
        "2",
        "--a3-generation-size",
        "1",
        "--models",
        str(models),
        "--json",
    )
    assert rc == 0, err
    used = {b["model"] for b in fake_llm_server.requests}
    assert {"small", "reflector", "reader"} <= used  # not the agent's model reflecting
    split = json.loads(out)["cost_by_role"]
    assert {"agent", "reflection", "interpreter"} <= set(split)


def test_failures_are_events_in_the_grip_report_and_runs(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    calls = {"n": 0}

    def reply(body: dict[str, Any]) -> Any:
        calls["n"] += 1
        said = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if said < 2:  # rambles until the cap: a truncated, malformed reply (then a re-prompt)
            return Reply(text="well " * 40, finish_reason="length", completion_tokens=64)
        return json.dumps(
            {"action": {"kind": "answer", "answer": "a teal shirt", "predicted_user_question": ""}}
        )

    fake_llm_server.responder = reply
    db = tmp_path / "s.db"
    models = _models(tmp_path, fake_llm_server.base_url)
    rc, out, err = _cli(
        db, *RUN, "--limit", "1", "--models", str(models), "--action-format", "json", "--json"
    )
    assert rc == 0, err
    rc, out, err = _cli(db, "grip", json.loads(out)["run_id"], "--json")
    assert rc == 0, err
    (row,) = json.loads(out)["model_health"]
    assert row["action_format"] == "json" and row["agent"].startswith("openai/small@")
    assert row["malformed"] >= 1 and row["truncated"] >= 2 and row["reprompts"] >= 1
    assert 0 < row["malformed_rate"] <= 1 and row["tokens_per_episode"] > 0
    assert row["seconds_per_call"] is not None
    rc, out, _ = _cli(db, "runs", "--json")
    (run,) = json.loads(out)["runs"]
    assert run["model_use"]["truncated"] >= 2 and run["model_use"]["tokens_per_episode"] > 0
    rc, out, _ = _cli(db, "grip", run["run_id"])
    assert "model health" in out and "[json]" in out


def test_symbolic_reports_have_no_model_health(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    rc, out, err = _cli(db, *RUN, "--limit", "1", "--json")
    assert rc == 0, err
    rc, out, _ = _cli(db, "grip", json.loads(out)["run_id"], "--json")
    assert "model_health" not in json.loads(out)
