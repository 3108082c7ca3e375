"""The LLM session judges against the local fake OpenAI-compatible server."""

from __future__ import annotations

import json
from typing import Any

from core.llm import make_client
from core.studies.sessions import (
    LLMSessionJudge,
    SessionRecord,
    get_judgments,
    import_sessions,
    make_judges,
    parse_judge_reply,
    run_sessions_report,
    write_sessions_jsonl,
)
from tests.fakes.openai_server import Fault

SESSION = SessionRecord.model_validate(
    {
        "session_id": "s1",
        "messages": [
            {"role": "user", "content": "I want something nice, not too expensive."},
            {"role": "assistant", "content": "Which colour?"},
            {"role": "user", "content": "Actually, forget it, book a hotel instead."},
        ],
    }
)


def test_llm_judge_parses_the_model_reply(fake_llm_server) -> None:
    fake_llm_server.script(
        [
            "Sure! ```json\n"
            + json.dumps(
                {
                    "intents": ["buy a gift", "book a hotel"],
                    "fault_types": ["Vagueness Subjectivity", "telepathy"],
                    "shift_types": ["pivot"],
                }
            )
            + "\n```"
        ]
    )
    judge = LLMSessionJudge(make_client(f"openai/judge-a@{fake_llm_server.base_url}"))
    j = judge.judge(SESSION)
    assert j.valid and j.kind == "llm" and j.judge.startswith("llm:openai/judge-a")
    assert [f.value for f in j.fault_types] == ["vagueness_subjectivity"]
    assert [s.value for s in j.shift_types] == ["pivot"]
    assert j.intents == ("buy a gift", "book a hotel")
    assert j.error is not None and "telepathy" in j.error
    sent = fake_llm_server.requests[0]["messages"]
    assert sent[0]["role"] == "system"
    assert "forget it, book a hotel" in sent[1]["content"]
    assert "tool_capability_mismatch" in sent[1]["content"] and "{{" not in sent[1]["content"]


def test_unusable_replies_are_invalid_not_guessed(fake_llm_server) -> None:
    fake_llm_server.script(["I think it is fine.", Fault.http(400)])
    judge = LLMSessionJudge(make_client(f"openai/judge-a@{fake_llm_server.base_url}"))
    first = judge.judge(SESSION)
    assert not first.valid and "no JSON" in (first.error or "")
    second = judge.judge(SESSION)
    assert not second.valid and "model call failed" in (second.error or "")


def test_two_llm_judges_pipeline(store, tmp_path, fake_llm_server) -> None:
    path = write_sessions_jsonl(tmp_path / "s.jsonl", 12, seed=1)
    import_sessions(store, path)
    truth = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        truth[d["messages"][1]["content"]] = d["metadata"]["synthetic"]

    def responder(body: dict[str, Any]) -> str:
        # Both fake models answer with the generator's truth; model B also "finds" a refine
        # shift everywhere, which the strict rule must not count on its own.
        prompt = body["messages"][1]["content"]
        t = next(v for k, v in truth.items() if k in prompt)
        shifts = list(t["shift_types"])
        if body["model"].endswith("judge-b"):
            shifts = shifts or ["refine"]
        return json.dumps(
            {"intents": ["x"], "fault_types": t["fault_types"], "shift_types": shifts}
        )

    fake_llm_server.responder = responder
    spec = f"openai/judge-a@{fake_llm_server.base_url},openai/judge-b@{fake_llm_server.base_url}"
    a, b = make_judges(spec)
    rep = run_sessions_report(store, (a, b))
    n_true = sum(1 for t in truth.values() if t["fault_types"] or t["shift_types"])
    assert rep.counts["misaligned"] == n_true
    assert rep.counts["misaligned"] + rep.counts["contested"] == 12
    assert not rep.heuristic and all(j.startswith("llm:") for j in rep.judges)
    assert len(get_judgments(store, a.name)) == 12
    assert fake_llm_server.request_count == 24
    run_sessions_report(store, (a, b))  # stored judgments are reused: no new requests
    assert fake_llm_server.request_count == 24


def test_parse_judge_reply_errors() -> None:
    assert parse_judge_reply("[1]")[1] == "no JSON object in the reply"
    assert "invalid JSON" in (parse_judge_reply("{oops}")[1] or "")
    assert parse_judge_reply('{"fault_types": []}') == ({"fault_types": []}, None)
