"""The parser table: valid, repairable and malformed replies, per host."""

from __future__ import annotations

import pytest

from core.agents.wire import parse_reply, render_action
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.world import EnvAction, ToolSpec


def _tool(name: str, *params: str, kind: str = "read") -> ToolSpec:
    props = {p: {"type": "string"} for p in params}
    return ToolSpec(
        name=name,
        description=name,
        parameters={"type": "object", "properties": props, "required": list(params)},
        kind=kind,  # type: ignore[arg-type]
    )


SHOP = [_tool("search", "query"), _tool("click", "target", kind="generic")]
TAU2 = [
    _tool("get_order_details", "order_id"),
    _tool("cancel_pending_order", "order_id", "reason", kind="write"),
]
HOSTS = {"webshop": SHOP, "tau2": TAU2}

# (host, reply, kind, expected action detail, expected repairs)
VALID = [
    (
        "webshop",
        "Action: Operation\n```\nsearch[red shoes]\n```",
        "env",
        EnvAction(tool="search", args={"query": "red shoes"}),
        (),
    ),
    (
        "webshop",
        "Action: Operation\n```\nclick[Buy Now]\n```",
        "env",
        EnvAction(tool="click", args={"target": "Buy Now"}),
        (),
    ),
    (
        "tau2",
        "Action: Operation\n```\n"
        'cancel_pending_order(order_id="#W1", reason="no longer needed")\n```',
        "env",
        EnvAction(
            tool="cancel_pending_order", args={"order_id": "#W1", "reason": "no longer needed"}
        ),
        (),
    ),
    (
        "webshop",
        "Action: Clarify\nContent: Which size do you need?",
        "ask",
        "Which size do you need?",
        (),
    ),
    (
        "tau2",
        "Action: Answer\nPredicted user question: anything else?\nFinal Answer: done",
        "propose",
        "done",
        (),
    ),
]

REPAIRABLE = [
    (
        "webshop",
        "Action: Operation\nsearch[red shoes]",
        "env",
        EnvAction(tool="search", args={"query": "red shoes"}),
        ("unfenced_operation",),
    ),
    (
        "webshop",
        "**Action:** Operation\n```text\nsearch[blue mug]\n```",
        "env",
        EnvAction(tool="search", args={"query": "blue mug"}),
        (),
    ),
    (
        "webshop",
        "Action: search\n```\nred shoes\n```",
        "env",
        EnvAction(tool="search", args={"query": "red shoes"}),
        ("tool_name_as_action",),
    ),
    (
        "webshop",
        "Let me look.\n```\nsearch[red shoes]\n```",
        "env",
        EnvAction(tool="search", args={"query": "red shoes"}),
        ("missing_action_line",),
    ),
    (
        "webshop",
        "Action: Ask\nWhat size do you need?",
        "ask",
        "What size do you need?",
        ("action_alias", "unlabelled_content"),
    ),
    (
        "webshop",
        "Action: Answer\nI bought the red shoes in medium",
        "propose",
        "I bought the red shoes in medium",
        ("unlabelled_answer",),
    ),
    (
        "tau2",
        'Action: cancel_pending_order\n```\norder_id="#W1",\nreason="ordered by mistake"\n```',
        "env",
        EnvAction(
            tool="cancel_pending_order", args={"order_id": "#W1", "reason": "ordered by mistake"}
        ),
        ("tool_name_as_action",),
    ),
    (
        "tau2",
        'Action: Operation\n```\nget_order_details("#W1")\n```',
        "env",
        EnvAction(tool="get_order_details", args={"order_id": "#W1"}),
        ("positional_arguments",),
    ),
    (
        "tau2",
        'Action: Operation\n```\nget_order_details {"order_id": "#W1"}\n```',
        "env",
        EnvAction(tool="get_order_details", args={"order_id": "#W1"}),
        ("json_arguments",),
    ),
    (
        "tau2",
        'Action: Operation\n```\nGet_Order_Details(order_id="#W1")\n```',
        "env",
        EnvAction(tool="get_order_details", args={"order_id": "#W1"}),
        ("tool_name_case",),
    ),
    ("tau2", "Final Answer: done", "propose", "done", ("missing_action_line",)),
]

MALFORMED = [
    ("webshop", "hello there", "no 'Action:' line"),
    ("webshop", "Action: Dance", "unknown action"),
    ("webshop", "Action: Operation\n```\nfly[to the moon]\n```", "unknown tool 'fly'"),
    ("webshop", "Action: Operation\n```\nOperation[x]\n```", "action word"),
    ("tau2", "Action: Operation\n```\nget_order_details(order_id=foo)\n```", "not a literal"),
    (
        "tau2",
        "Action: Operation\n```\n"
        'get_order_details(order_id="a")\nget_order_details(order_id="b")\n```',
        "more than one operation",
    ),
    (
        "tau2",
        "Action: Clarify\nContent: which one?\nAction: Answer\nFinal Answer: done",
        "more than one action",
    ),
    ("tau2", "Action: Answer\nok", "Final Answer"),
    ("tau2", "Action: Operation\n```\ncancel_pending_order[x]\n```", "several arguments"),
    ("tau2", "", "empty reply"),
]


@pytest.mark.parametrize(("host", "reply", "kind", "detail", "repairs"), VALID + REPAIRABLE)
def test_valid_and_repairable(
    host: str, reply: str, kind: str, detail: object, repairs: tuple[str, ...]
) -> None:
    r = parse_reply(reply, HOSTS[host])
    assert r.ok, r.problems
    assert r.action.kind == kind
    if isinstance(r.action, EnvOp):
        assert r.action.action == detail
    elif isinstance(r.action, Ask):
        assert r.action.text == detail
    else:
        assert isinstance(r.action, Propose)
        assert r.action.text == detail
    assert r.repairs == repairs
    assert r.action.raw == reply


@pytest.mark.parametrize(("host", "reply", "problem"), MALFORMED)
def test_malformed(host: str, reply: str, problem: str) -> None:
    r = parse_reply(reply, HOSTS[host])
    assert not r.ok
    assert isinstance(r.action, Malformed)
    assert any(problem in p for p in r.action.problems), r.action.problems


def test_no_ask_methods_cannot_clarify() -> None:
    r = parse_reply("Action: Clarify\nContent: What size?", SHOP, can_ask=False)
    assert isinstance(r.action, Malformed)
    assert "cannot message the user" in r.action.problems[0]
    r = parse_reply("Content: What size?", SHOP, can_ask=False)
    assert isinstance(r.action, Malformed)


def test_state_block_is_stripped_and_returned() -> None:
    reply = 'Action: Answer\nFinal Answer: done\nMEMORY: {"known": {"size": "M"}, "changed": []}'
    r = parse_reply(reply, TAU2, state_labels=("MEMORY",))
    assert isinstance(r.action, Propose) and r.action.text == "done"
    assert r.state == {"known": {"size": "M"}, "changed": []}
    assert r.state_label == "MEMORY"
    broken = parse_reply(
        "Action: Answer\nFinal Answer: done\nMEMORY: {oops", TAU2, state_labels=("MEMORY",)
    )
    assert broken.ok and broken.state is None and "state_block_unparsed" in broken.repairs


@pytest.mark.parametrize("host", ["webshop", "tau2"])
def test_render_round_trip(host: str) -> None:
    tools = HOSTS[host]
    actions = [
        EnvOp(
            action=EnvAction(
                tool=tools[0].name, args={next(iter(tools[0].parameters["properties"])): "x y"}
            )
        ),
        Ask(text="What colour?"),
        Propose(text="done", predicted_question="thanks?"),
    ]
    for a in actions:
        back = parse_reply(render_action(a, tools), tools).action
        assert back.model_dump(exclude={"raw"}) == a.model_dump(exclude={"raw"})
