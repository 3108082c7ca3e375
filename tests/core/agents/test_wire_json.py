"""The JSON action format: the schema sent as response_format, and reading what comes back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.agents.llm_agent import LLMAgent
from core.agents.wire_json import (
    action_schema,
    close_truncated,
    parse_json_reply,
    render_json_action,
    response_format,
)
from core.llm import make_client
from core.llm.models import use_config
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.episode import AgentView
from core.model.world import EnvAction, ToolSpec
from tests.fakes.openai_server import FakeOpenAIServer

SEARCH = ToolSpec(
    name="search",
    description="Search.",
    kind="read",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
)
ORDER = ToolSpec(
    name="get_order",
    description="An order.",
    kind="read",
    parameters={
        "type": "object",
        "title": "Args",
        "properties": {"order_id": {"type": "string", "title": "Order Id"}, "$defs": {}},
        "required": ["order_id"],
    },
)


def _view(**kw: Any) -> AgentView:
    data = {
        "episode_id": "e",
        "benchmark": "mock",
        "query": "find red shoes",
        "turn": 0,
        "turns_left": 5,
        "tools": [SEARCH, ORDER],
        "transcript": [],
    }
    data.update(kw)
    return AgentView.model_validate(data)


def test_schema_constrains_tool_and_arguments_together() -> None:
    schema = action_schema([SEARCH, ORDER], can_ask=True, memory=False)
    shapes = schema["properties"]["action"]["anyOf"]
    tools = [s["properties"]["tool"]["const"] for s in shapes if "tool" in s["properties"]]
    assert tools == ["search", "get_order"]
    order = shapes[1]["properties"]["arguments"]
    assert "title" not in order and order["additionalProperties"] is False
    assert order["properties"]["order_id"]["maxLength"] > 0  # unbounded strings get a bound
    kinds = [s["properties"]["kind"]["const"] for s in shapes]
    assert kinds == ["operation", "operation", "clarify", "answer"]
    noask = action_schema([SEARCH], can_ask=False, memory=True)
    kinds = [s["properties"]["kind"]["const"] for s in noask["properties"]["action"]["anyOf"]]
    assert "clarify" not in kinds and "memory" in noask["required"]


def test_response_format_is_strict_only_when_openai_would_accept_it() -> None:
    closed = response_format(action_schema([SEARCH], can_ask=True, memory=False))
    assert closed["type"] == "json_schema" and closed["json_schema"]["strict"] is True
    loose = response_format(action_schema([SEARCH], can_ask=True, memory=True))
    assert loose["json_schema"]["strict"] is True  # the record is a bounded string


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (
            '{"action": {"kind": "operation", "tool": "search", "arguments": {"query": "red"}}}',
            EnvOp,
        ),
        ('{"action": {"kind": "clarify", "content": "Which size?"}}', Ask),
        (
            '{"action": {"kind": "answer", "answer": "item 3", "predicted_user_question": ""}}',
            Propose,
        ),
        ('```json\n{"action": {"kind": "clarify", "content": "Color?"}}\n```', Ask),
        ('{"kind": "clarify", "content": "Color?"}', Ask),
        ("Action: Clarify\nContent: which colour?", Ask),
        (
            '{"action": {"kind": "operation", "tool": "search", "arguments": {"query": "red sh',
            EnvOp,
        ),
        ('{"action": {"kind": "dance"}}', Malformed),
        ('{"action": {"kind": "operation", "tool": "fly", "arguments": {}}}', Malformed),
        ("I think the best thing is to look around first.", Malformed),
        ("", Malformed),
    ],
)
def test_replies_are_read_or_malformed(reply: str, kind: type) -> None:
    result = parse_json_reply(reply, [SEARCH, ORDER])
    assert isinstance(result.action, kind), result


def test_a_method_that_cannot_ask_cannot_clarify_and_memory_is_kept() -> None:
    reply = '{"action": {"kind": "clarify", "content": "x"}}'
    assert not parse_json_reply(reply, [SEARCH], can_ask=False).ok
    answer = {"kind": "answer", "answer": "a", "predicted_user_question": ""}
    with_memory = json.dumps({"action": answer, "memory": json.dumps({"known": {"size": "9"}})})
    got = parse_json_reply(with_memory, [SEARCH], memory=True)
    assert got.ok and got.state == {"known": {"size": "9"}} and got.state_label == "MEMORY"
    note = parse_json_reply(
        json.dumps({"action": answer, "memory": "size 9"}), [SEARCH], memory=True
    )
    assert note.state == {"notes": "size 9"}


@given(st.text(max_size=200))
def test_any_text_yields_a_parse_result(text: str) -> None:
    result = parse_json_reply(text, [SEARCH])
    assert result.ok or isinstance(result.action, Malformed)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_truncation_closing_round_trips(content: str) -> None:
    full = json.dumps({"action": {"kind": "clarify", "content": content}})
    for cut in range(1, len(full)):
        closed = close_truncated(full[:cut])
        if closed is not None:
            try:
                json.loads(closed)
            except ValueError:
                continue  # cut inside an escape or a key: the reply stays malformed


def test_actions_render_as_the_json_the_model_writes() -> None:
    op = EnvOp(action=EnvAction(tool="search", args={"query": "red"}), raw="")
    again = parse_json_reply(render_json_action(op), [SEARCH])
    assert again.ok and again.action.action == op.action  # type: ignore[union-attr]


def test_the_agent_sends_the_schema_and_reads_the_reply(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    use_config(None)
    fake_llm_server.script(
        ['{"action": {"kind": "operation", "tool": "search", "arguments": {"query": "red"}}}']
    )
    agent = LLMAgent(
        "B0", make_client(f"openai/m@{fake_llm_server.base_url}"), "mock", action_format="json"
    )
    action = agent.act(_view())
    assert isinstance(action, EnvOp) and action.action.args == {"query": "red"}
    body = fake_llm_server.requests[-1]
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["action"]["anyOf"]
    assert "JSON object" in body["messages"][0]["content"]  # the JSON format's own prompt


def test_the_forced_final_answer_allows_the_answer_shape_only(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    use_config(None)
    answer = {"action": {"kind": "answer", "answer": "item 3", "predicted_user_question": ""}}
    fake_llm_server.script([json.dumps(answer)])
    agent = LLMAgent(
        "A0", make_client(f"openai/m@{fake_llm_server.base_url}"), "mock", action_format="json"
    )
    action = agent.act(_view(forced_final=True, format_hint="Give your final answer now."))
    assert isinstance(action, Propose)
    schema = fake_llm_server.requests[-1]["response_format"]["json_schema"]["schema"]
    kinds = [s["properties"]["kind"]["const"] for s in schema["properties"]["action"]["anyOf"]]
    assert kinds == ["answer"]


def test_no_clarify_in_the_schema_once_the_method_has_no_question_left(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    """A0 may ask once before its first answer: after that question the schema must not offer
    ``clarify``, or the constrained model keeps writing questions the method refuses (seen with
    SmolLM2 in Play as user: six malformed clarifies in a row, each costing patience)."""
    use_config(None)
    ask = {"action": {"kind": "clarify", "content": "Which colour?"}}
    answer = {"action": {"kind": "answer", "answer": "item 3", "predicted_user_question": ""}}
    fake_llm_server.script([json.dumps(ask), json.dumps(answer)])
    agent = LLMAgent(
        "A0", make_client(f"openai/m@{fake_llm_server.base_url}"), "mock", action_format="json"
    )

    def kinds() -> list[str]:
        schema = fake_llm_server.requests[-1]["response_format"]["json_schema"]["schema"]
        return [s["properties"]["kind"]["const"] for s in schema["properties"]["action"]["anyOf"]]

    assert isinstance(agent.act(_view()), Ask)
    assert "clarify" in kinds()
    transcript = [
        {"role": "agent", "text": "Which colour?", "turn": 1},
        {"role": "user", "text": "Red.", "turn": 1},
    ]
    assert isinstance(agent.act(_view(turn=1, transcript=transcript)), Propose)
    assert "clarify" not in kinds() and "answer" in kinds()
