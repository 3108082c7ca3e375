"""A failing LLM judge is an error, not an answer: reported, never cached, retried later.

Through ``driftbench grip`` against the fake server: HTTP 400 from one judge → exit 1, the
failures are counted in ``role_realism.judge_errors`` and excluded (no ``invalid`` rows are
stored), ``--allow-judge-errors`` exits 0; once the judge recovers the next call asks again
and the metric is computed from real answers; ``--no-cache`` makes fresh calls.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.grip.judges.base import INVALID
from core.grip.realism import read_judgments
from tests.core.grip.test_judges import _simulate
from tests.fakes.openai_server import FakeOpenAIServer, Fault


def _grip(store: Path, *argv: str) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(store), "grip", *argv])
    text = out.getvalue()
    return rc, (json.loads(text) if text.strip().startswith("{") else {}), err.getvalue()


@pytest.fixture(autouse=True)
def _fresh_llm_config() -> Any:
    """``grip --no-cache`` sets the process's model choices; leave none behind."""
    from core.llm.models import use_config

    yield
    use_config(None)


@pytest.fixture
def judged_store(tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    _simulate(path, "jrun", ("A1",), (0,)).close()
    return path


def test_failing_judge_is_reported_excluded_and_retried_after_recovery(
    judged_store: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    broken = {"on": True}

    def responder(body: dict[str, Any]) -> Any:
        if "judge-b" in body["model"] and broken["on"]:
            return Fault.http(400)
        prompt = body["messages"][-1]["content"]
        return "Answer: A" if "Persona cards:" in prompt else "Answer: DIFFERENT"

    fake_llm_server.responder = responder
    base = fake_llm_server.base_url
    judges = f"openai/judge-a@{base},openai/judge-b@{base}"
    argv = (
        "jrun",
        "--by",
        "method",
        "--judges",
        judges,
        "--per-cell",
        "1",
        "--pairs",
        "4",
        "--json",
    )
    rc, rep, err = _grip(judged_store, *argv)
    assert rc == 1 and "judge call(s) failed" in err
    realism = rep["role_realism"]
    failed_b = next(v for k, v in realism["judge_errors"].items() if "judge-b" in k)
    assert failed_b > 0 and realism["judge_errors_total"] == failed_b
    from core.store import Store

    store = Store.open(judged_store)
    jd = read_judgments(store, [rep["runs"][0]], None)
    assert not jd[jd.judge.str.contains("judge-b")].shape[0]  # nothing stored for B
    assert INVALID not in set(jd["value"])  # a failure is never an "invalid" answer
    ident = rep["cells"][0]["metrics"]["Identification"]
    assert ident["denominator"] == 5  # judge A's five episodes only

    rc2, _, _ = _grip(judged_store, *argv, "--allow-judge-errors")
    assert rc2 == 0

    broken["on"] = False  # the provider recovers: the next report asks judge B again
    n = fake_llm_server.request_count
    rc3, rep3, err3 = _grip(judged_store, *argv)
    assert rc3 == 0 and not err3
    assert fake_llm_server.request_count > n
    assert rep3["role_realism"]["judge_errors_total"] == 0
    jd = read_judgments(store, [rep3["runs"][0]], None)
    assert jd[jd.judge.str.contains("judge-b")].shape[0] > 0

    # cached now: no call; --no-cache: fresh calls to both judges
    n = fake_llm_server.request_count
    _grip(judged_store, *argv)
    assert fake_llm_server.request_count == n
    _grip(judged_store, *argv, "--no-cache")
    assert fake_llm_server.request_count > n


def test_malformed_judges_flag_leaves_the_store_untouched(judged_store: Path) -> None:
    before = judged_store.read_bytes()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(judged_store), "grip", "jrun", "--judges", "onlyone"])
    assert rc == 2 and "--judges" in err.getvalue()
    assert judged_store.read_bytes() == before


def test_invalid_answers_are_errors_counted_and_excluded_never_wrong_labels(
    judged_store: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    """Issue 29: a judge that answers nothing usable (a small model rambling) gave
    Identification 0.00 and agreement 1.0 with ``judge_errors 0`` and exit 0."""

    def responder(body: dict[str, Any]) -> Any:
        if "judge-b" in body["model"]:
            return "I think the person is nice and polite."  # no letter, no SAME/DIFFERENT
        prompt = body["messages"][-1]["content"]
        return "Answer: A" if "Persona cards:" in prompt else "Answer: DIFFERENT"

    fake_llm_server.responder = responder
    base = fake_llm_server.base_url
    argv = ("jrun", "--by", "method", "--judges", f"openai/judge-a@{base},openai/judge-b@{base}")
    rc, rep, err = _grip(judged_store, *argv, "--per-cell", "1", "--pairs", "4", "--json")
    assert rc == 1 and "invalid" in err
    realism = rep["role_realism"]
    bad = next(v for k, v in realism["judge_invalid"].items() if "judge-b" in k)
    assert bad > 0 and realism["judge_invalid_total"] == bad
    judges = realism["judges"]
    assert all("judge-b" not in name for name in judges)  # nothing of judge-b was scored
    assert "identification_agreement" not in realism  # one valid judge: no agreement
    rc, _, _ = _grip(
        judged_store, *argv, "--per-cell", "1", "--pairs", "4", "--json", "--allow-judge-errors"
    )
    assert rc == 0


def test_judges_models_takes_the_models_files_two_judges(
    judged_store: Path, fake_llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """``--judges models`` was documented but refused by the command line.

    The two entries name models of different families (the protocol refuses one model twice).
    """
    base = fake_llm_server.base_url
    models = tmp_path / "m.yaml"
    models.write_text(
        f"judges: [{{model: openai/qwen-judge, api_base: '{base}', max_tokens: 8}}, "
        f"{{model: openai/llama-judge, api_base: '{base}', max_tokens: 9}}]\n",
        encoding="utf-8",
    )

    def responder(body: dict[str, Any]) -> Any:
        prompt = body["messages"][-1]["content"]
        return "Answer: A" if "Persona cards:" in prompt else "Answer: SAME"

    fake_llm_server.responder = responder
    argv = ("jrun", "--by", "method", "--judges", "models", "--models", str(models))
    rc, rep, err = _grip(judged_store, *argv, "--per-cell", "1", "--pairs", "2", "--json")
    assert rc == 0, err
    assert {b["max_tokens"] for b in fake_llm_server.requests} == {8, 9}  # each its own entry
    assert len(rep["role_realism"]["judges"]) == 2
