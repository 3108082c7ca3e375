"""Agent-side readiness for real models: reasoning blocks, Clarify text, native tool calls,
the append-only history and its sliding window."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.agents.prompts import prefix_reuse, window
from core.agents.wire import (
    ANSWER_TOOL,
    CLARIFY_TOOL,
    from_native_calls,
    parse_reply,
    strip_reasoning,
    tool_definitions,
)
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.world import ToolSpec

SEARCH = ToolSpec(
    name="search",
    description="Search.",
    kind="read",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}},
)


def test_reasoning_blocks_never_count() -> None:
    reply = (
        "<think>\nAction: Answer\nFinal Answer: wrong\n</think>\nAction: Clarify\nContent: Size?"
    )
    result = parse_reply(strip_reasoning(reply), [SEARCH])
    assert isinstance(result.action, Ask) and result.action.text == "Size?"
    assert strip_reasoning("<think>cut off while thinking Action: Answer") == ""
    assert strip_reasoning("stray thoughts</think>Action: Answer") == "Action: Answer"
    assert strip_reasoning("<Reasoning a='1'>x</Reasoning> ok") == "ok"


def test_only_the_clarify_message_reaches_the_user() -> None:
    for tail in (
        "\n\nI asked because the size matters.",
        "\n```",
        "\nNote: this is my reasoning",
        "\nStrategy: ask first",
    ):
        result = parse_reply(f"Action: Clarify\nContent: Which size?{tail}", [SEARCH])
        assert isinstance(result.action, Ask) and result.action.text == "Which size?", tail
    two = parse_reply("Action: Clarify\nContent: Which size\nand which colour?", [SEARCH])
    assert isinstance(two.action, Ask) and two.action.text == "Which size\nand which colour?"


def test_native_tool_calls_cover_the_three_actions() -> None:
    defs = tool_definitions([SEARCH], can_ask=True)
    assert [d["function"]["name"] for d in defs] == ["search", CLARIFY_TOOL, ANSWER_TOOL]
    assert CLARIFY_TOOL not in {
        d["function"]["name"] for d in tool_definitions([SEARCH], can_ask=False)
    }
    op = from_native_calls([("search", '{"query": "mug"}')], [SEARCH], can_ask=True)
    assert isinstance(op.action, EnvOp) and op.action.action.args == {"query": "mug"}
    ask = from_native_calls([(CLARIFY_TOOL, '{"content": "Size?"}')], [SEARCH], can_ask=True)
    assert isinstance(ask.action, Ask) and ask.action.text == "Size?"
    no_ask = from_native_calls([(CLARIFY_TOOL, '{"content": "Size?"}')], [SEARCH], can_ask=False)
    assert isinstance(no_ask.action, Malformed)
    done = from_native_calls(
        [(ANSWER_TOOL, '{"answer": "the mug", "predicted_user_question": "when?"}')],
        [SEARCH],
        can_ask=False,
    )
    assert isinstance(done.action, Propose) and done.action.predicted_question == "when?"
    assert isinstance(
        from_native_calls([(ANSWER_TOOL, "{")], [SEARCH], can_ask=True).action, Malformed
    )


def _turns(n: int, size: int) -> list[dict[str, str]]:
    out = [{"role": "user", "content": "USER: hi"}]
    for i in range(n):
        out += [
            {"role": "assistant", "content": f"Action: Operation {i}"},
            {"role": "user", "content": "ENVIRONMENT: " + "x" * size},
        ]
    return out


def test_window_slides_by_whole_turns_only_at_the_limit() -> None:
    small, dropped = window(_turns(5, 100), 0, limit=10_000)
    assert dropped == 0 and small == _turns(5, 100)
    turns = _turns(40, 1000)
    kept, dropped = window(turns, 0, limit=20_000)
    assert dropped > 0 and kept[0]["content"].startswith("USER: hi")
    assert f"({dropped} earlier turns omitted)" in kept[0]["content"]
    assert kept[1:] == turns[1 + 2 * dropped :]  # whole turns, oldest first
    assert sum(len(m["content"]) for m in kept[1:]) <= 10_000
    # the next turns reuse the same cut until the limit is reached again
    grown = _turns(44, 1000)
    again, d2 = window(grown, dropped, limit=20_000)
    assert d2 == dropped and again[: len(kept)] == kept


@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=8))
def test_prefix_reuse_is_one_for_append_only_requests(parts: list[str]) -> None:
    reqs = [[{"role": "user", "content": p} for p in parts[: i + 1]] for i in range(len(parts))]
    assert prefix_reuse(reqs) == 1.0
    assert 0.0 <= prefix_reuse(reqs, of="current") <= 1.0
