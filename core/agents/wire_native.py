"""Native tool calling (``--action-format tools``): the environment's tools as functions.

``clarify`` and ``final_answer`` functions stand for what the agent says to the person.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.agents.wire_base import (
    ParseProblem,
    ParseResult,
    json_args,
    malformed,
    resolve_tool,
)
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.world import EnvAction, ToolSpec

CLARIFY_TOOL = "clarify"
"""Native tool-calling format: the function that sends the person a message."""
ANSWER_TOOL = "final_answer"
"""Native tool-calling format: the function that gives the final answer."""


def tool_definitions(tools: Sequence[ToolSpec], *, can_ask: bool) -> list[dict[str, Any]]:
    """OpenAI function definitions of the environment tools plus the user-facing actions.

    ``clarify(content)`` (only when the method may ask) and ``final_answer(answer,
    predicted_user_question)`` stand for the text format's Clarify and Answer actions.
    """
    out = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": f"[{t.kind}] {t.description}",
                "parameters": t.parameters or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]
    if can_ask:
        out.append(
            {
                "type": "function",
                "function": {
                    "name": CLARIFY_TOOL,
                    "description": "Send the person a message (usually a question).",
                    "parameters": {
                        "type": "object",
                        "properties": {"content": {"type": "string"}},
                        "required": ["content"],
                    },
                },
            }
        )
    out.append(
        {
            "type": "function",
            "function": {
                "name": ANSWER_TOOL,
                "description": "Give your final answer; it is judged at once.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "answer": {"type": "string"},
                        "predicted_user_question": {"type": "string"},
                    },
                    "required": ["answer"],
                },
            },
        }
    )
    return out


def from_native_calls(
    calls: Sequence[tuple[str, str]], tools: Sequence[ToolSpec], *, can_ask: bool, raw: str = ""
) -> ParseResult:
    """The action of a native tool-calling reply: an environment call, Clarify or Answer."""
    if len(calls) == 1 and calls[0][0] in (CLARIFY_TOOL, ANSWER_TOOL):
        name, arguments = calls[0]
        try:
            obj = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            problem = f"tool-call arguments are not valid JSON: {exc.msg}"
            return ParseResult(
                Malformed(raw=raw or arguments, problems=(problem,)), (), None, None, (problem,)
            )
        obj = obj if isinstance(obj, dict) else {}
        text = raw or f"{name}({arguments})"
        if name == CLARIFY_TOOL:
            content = str(obj.get("content") or "").strip()
            if not can_ask or not content:
                problem = "this method cannot message the user" if not can_ask else "empty content"
                return ParseResult(
                    Malformed(raw=text, problems=(problem,)), (), None, None, (problem,)
                )
            return ParseResult(Ask(text=content, raw=text), ("native_tool_call",))
        answer = str(obj.get("answer") or "").strip()
        if not answer:
            problem = "empty final answer"
            return malformed(text, problem)
        pq = str(obj.get("predicted_user_question") or "").strip()
        return ParseResult(
            Propose(text=answer, predicted_question=pq, raw=text), ("native_tool_call",)
        )
    return from_tool_calls(calls, tools, raw=raw)


def from_tool_calls(
    calls: Sequence[tuple[str, str]], tools: Sequence[ToolSpec], raw: str = ""
) -> ParseResult:
    """Turn native (name, JSON-arguments) tool calls into one action.

    Args:
        calls: The model's tool calls as (name, arguments JSON text).
        tools: Tools offered.
        raw: Any accompanying text (recorded).

    Returns:
        An EnvOp (repair ``native_tool_call``) or Malformed.
    """
    table = {t.name: t for t in tools}
    repairs = ["native_tool_call"]
    try:
        if len(calls) != 1:
            raise ParseProblem("exactly one tool call per turn")
        name, arguments = calls[0]
        spec = resolve_tool(name, table, repairs)
        try:
            obj = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ParseProblem(f"tool-call arguments are not valid JSON: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise ParseProblem("tool-call arguments must be an object")
        text = raw or f"{name}({arguments})"
        return ParseResult(
            EnvOp(action=EnvAction(tool=spec.name, args=json_args(obj)), raw=text),
            tuple(repairs),
        )
    except ParseProblem as exc:
        return ParseResult(Malformed(raw=raw, problems=(str(exc),)), (), problems=(str(exc),))
