"""The LLM interpreter against the local fake server: valid answers, fallback, events."""

from __future__ import annotations

import json

from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_sample
from core.model.actions import Ask
from core.model.config import ProtocolConfig
from core.model.events import QuestionRead, UserReplied
from core.model.sample import FaultType
from core.protocol.interpret_llm import LLMInterpreter, validate
from core.protocol.matching import read_message
from tests.fakes.openai_server import Reply


def _spec(server) -> str:
    return f"openai/fake-interpreter@{server.base_url}"


def test_validate_checks_slot_ids_and_shape():
    root = mock_graph().root
    ok, why = validate('{"act": "slots", "slots": ["color"], "confirm": null, "wrong": []}', root)
    assert ok is not None and ok.slots == ("color",) and why == ""
    bad, why = validate('{"act": "slots", "slots": ["colour_of_sky"]}', root)
    assert bad is None and "not requirements" in why
    bad, why = validate('{"act": "confirm", "slots": []}', root)
    assert bad is None and "confirm" in why
    bad, why = validate("sure, the colour", root)
    assert bad is None and "JSON" in why


def test_valid_answer_is_used_and_cached(fake_llm_server):
    server = fake_llm_server
    server.script([Reply.say('{"act": "slots", "slots": ["size"], "confirm": null, "wrong": []}')])
    interp = LLMInterpreter.from_spec(_spec(server))
    root = mock_graph().root
    v = interp.read("Would a medium fit you?", root, load_mock_world())
    assert v.valid and not v.fallback and v.act.slots == ("size",)
    assert v.act.source == _spec(server)
    again = interp.read("Would a medium fit you?", root, load_mock_world())
    assert again == v and server.request_count == 1
    body = server.requests[0]["messages"][-1]["content"]
    assert "- size:" in body and "Would a medium fit you?" in body


def test_invalid_answer_falls_back_to_offline(fake_llm_server):
    server = fake_llm_server
    server.script([Reply.say('{"act": "slots", "slots": ["insurance"]}')])
    v = LLMInterpreter.from_spec(_spec(server)).read(
        "Which colour?", mock_graph().root, load_mock_world()
    )
    assert not v.valid and v.fallback and v.act.slots == ("color",) and "insurance" in v.detail


def test_episode_records_question_read_either_way(fake_llm_server):
    server = fake_llm_server
    server.script(
        [
            Reply.say(
                '{"act": "confirm", "slots": ["color"], "confirm": false, "wrong": ["color"]}'
            ),
            Reply.say("no idea"),
        ]
    )
    cfg = ProtocolConfig(shift_fire_prob=0.0, interpreter=_spec(server))
    log = InMemoryEventLog()
    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "L",
        cfg,
        graph=mock_graph(),
    )
    episode.step(log, eid, Ask(text="I'll take the crimson one, alright?"))
    episode.step(log, eid, Ask(text="Which size do you wear?"))
    reads = [e for e in log.events(eid) if isinstance(e, QuestionRead)]
    assert [(r.valid, r.fallback, r.act) for r in reads] == [
        (True, False, "confirm"),
        (False, True, "slots"),
    ]
    assert reads[1].slots == ("size",) and reads[1].raw == "no idea"
    replies = [e for e in log.events(eid) if isinstance(e, UserReplied)]
    # a wrong confirmation is answered no; a hint (persona probability) names the part, never
    # the value (proto-4)
    assert "teal" not in replies[0].text.lower()
    assert all(d.value is None and d.slot == "color" for d in replies[0].disclosures)
    assert replies[1].disclosures[0].slot == "size"
    header = log.header(eid)
    assert header.config.interpreter == _spec(server)
    assert json.loads(log.events(eid)[-1].model_dump_json())["kind"]


def test_model_failure_is_a_fallback_not_a_crash(fake_llm_server):
    from tests.fakes.openai_server import Fault

    server = fake_llm_server
    server.script([Fault.http(500)] * 8)
    got = read_message("Which colour?", mock_graph().root, load_mock_world(), _spec(server))
    assert got.act.slots == ("color",) and got.verdict is not None and got.verdict.fallback
