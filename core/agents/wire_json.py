"""The JSON action format (``--action-format json``): one JSON object per reply, constrained.

The request carries the action's JSON schema as ``response_format`` (``{"type":
"json_schema", ...}``), the OpenAI-compatible structured-output field that llama.cpp, vLLM,
Ollama and OpenAI honour: the server only lets the model write objects of that shape, so even
a small open model emits a valid action. Every reply is one object::

    {"action": {"kind": "operation", "tool": "search", "arguments": {"query": "red shoes"}}}
    {"action": {"kind": "clarify", "content": "Which size?"}}
    {"action": {"kind": "answer", "answer": "...", "predicted_user_question": ""}}

Memory methods add ``"memory": "..."`` beside ``action`` — the record the text format's
``MEMORY:`` line carries, as a short text (a JSON object in it is decoded; anything else is
kept as ``{"notes": text}``), bounded so a small model cannot loop inside it. The schema
lists one ``operation`` shape per offered tool, with that tool's own argument schema (reduced
to the keywords structured-output engines share), so the tool name and its arguments are
constrained together. A reply that is not such an object — a server that ignored the
schema — is read with the text format's tolerant parser as a fallback (named repair
``json_fallback_text``), and otherwise is malformed, as in every format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.agents.wire import parse_reply
from core.agents.wire_base import (
    ParseProblem,
    ParseResult,
    json_args,
    malformed,
    resolve_tool,
    scan_brackets,
    strip_reasoning,
)
from core.model.actions import Ask, EnvOp, Propose
from core.model.world import EnvAction, ToolSpec

MAX_MESSAGE_CHARS = 240
"""Longest ``content`` of a Clarify (the server stops the string there)."""

MAX_ANSWER_CHARS = 400
"""Longest final answer."""

MAX_ARRAY_ITEMS = 4
"""Longest array argument of a tool whose own schema sets no bound."""

MAX_MEMORY_CHARS = 300
"""Longest record (``memory``) of a memory method: a short note, not a free-form object (a
small model fills a free-form object until its completion cap)."""

MAX_ARGUMENT_CHARS = 80
"""Longest string argument of a tool whose own schema sets no bound (a small model that
loops inside a string is made to close it long before its completion cap)."""

SCHEMA_NAME = "agent_action"

_KEEP = frozenset(
    {
        "type",
        "properties",
        "required",
        "enum",
        "const",
        "items",
        "anyOf",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "description",
    }
)
_FENCE = re.compile(r"^```[A-Za-z]*\s*(.*?)\s*```$", re.S)


def _reduce(schema: Any) -> dict[str, Any]:
    """A tool's argument schema, reduced to what every structured-output engine compiles.

    References and composition other than ``anyOf`` are dropped (an unknown keyword would
    make the server refuse the whole request); unbounded strings get a length bound so a
    looping model cannot fill its whole completion with one argument.
    """
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {k: v for k, v in schema.items() if k in _KEEP}
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {str(k): _reduce(v) for k, v in out["properties"].items()}
        out["additionalProperties"] = False
        out.setdefault("type", "object")
    if "items" in out:
        out["items"] = _reduce(out["items"])
    if out.get("type") == "array":
        out.setdefault("maxItems", MAX_ARRAY_ITEMS)
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [_reduce(v) for v in out["anyOf"]]
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out.setdefault("maxLength", MAX_ARGUMENT_CHARS)
    if isinstance(out.get("required"), list) and isinstance(out.get("properties"), Mapping):
        out["required"] = [r for r in out["required"] if r in out["properties"]]
    return out


def _object(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def action_schema(tools: Sequence[ToolSpec], *, can_ask: bool, memory: bool) -> dict[str, Any]:
    """The JSON schema of one reply for these tools and this method.

    Args:
        tools: The tools offered this turn.
        can_ask: Whether the method may message the person (adds the ``clarify`` shape).
        memory: Whether the method keeps a record (adds the ``memory`` object).
    """
    shapes: list[dict[str, Any]] = []
    for tool in tools:
        args = _reduce(tool.parameters or {"type": "object", "properties": {}})
        if args.get("type") != "object":
            args = _object({}, ())
        args.setdefault("properties", {})
        args.setdefault("required", [])
        args["additionalProperties"] = False
        shapes.append(
            _object(
                {
                    "kind": {"const": "operation"},
                    "tool": {"const": tool.name},
                    "arguments": args,
                },
                ("kind", "tool", "arguments"),
            )
        )
    if can_ask:
        shapes.append(
            _object(
                {
                    "kind": {"const": "clarify"},
                    "content": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_CHARS},
                },
                ("kind", "content"),
            )
        )
    shapes.append(
        _object(
            {
                "kind": {"const": "answer"},
                "answer": {"type": "string", "minLength": 1, "maxLength": MAX_ANSWER_CHARS},
                "predicted_user_question": {"type": "string", "maxLength": MAX_MESSAGE_CHARS},
            },
            ("kind", "answer", "predicted_user_question"),
        )
    )
    props: dict[str, Any] = {"action": {"anyOf": shapes}}
    required = ["action"]
    if memory:
        props["memory"] = {"type": "string", "maxLength": MAX_MEMORY_CHARS}
        required.append("memory")
    return _object(props, required)


def _strict_ok(schema: Any) -> bool:
    """Whether a schema meets OpenAI's strict mode (every object closed, every key required)."""
    if isinstance(schema, Mapping):
        if schema.get("type") == "object":
            props = schema.get("properties")
            if not isinstance(props, Mapping) or schema.get("additionalProperties") is not False:
                return False
            if sorted(schema.get("required") or []) != sorted(props):
                return False
        return all(_strict_ok(v) for v in schema.values())
    if isinstance(schema, list):
        return all(_strict_ok(v) for v in schema)
    return True


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` request field carrying ``schema``.

    ``strict`` is set only when the schema meets OpenAI's strict rules (otherwise OpenAI
    would refuse it); llama.cpp, vLLM and Ollama enforce the schema either way.
    """
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": _strict_ok(schema), "schema": schema},
    }


def close_truncated(text: str) -> str | None:
    """``text`` with its open string and brackets closed (a reply cut at the completion cap).

    >>> close_truncated('{"action": {"kind": "clarify", "content": "Which si')
    '{"action": {"kind": "clarify", "content": "Which si"}}'
    >>> close_truncated('{"a": 1}') is None
    True
    """
    start = text.find("{")
    if start < 0:
        return None
    scan = scan_brackets(text, start)
    if not scan.open and not scan.in_string:
        return None
    tail = text[start:]
    if scan.escaped:
        tail = tail[:-1]
    if scan.in_string:
        tail += '"'
    tail = tail.rstrip()
    if tail.endswith((",", ":")):
        tail = tail[:-1] + (': ""' if tail.endswith(":") else "")
    return tail + "".join(reversed(scan.open))


def _load(text: str) -> tuple[Any, bool]:
    """The reply's JSON object, and whether it had to be closed (it was cut off)."""
    body = text.strip()
    fence = _FENCE.match(body)
    if fence:
        body = fence.group(1)
    try:
        return json.loads(body), False
    except ValueError:
        pass
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(body[start : end + 1]), False
        except ValueError:
            pass
    closed = close_truncated(body)
    if closed is not None:
        try:
            return json.loads(closed), True
        except ValueError:
            return None, False
    return None, False


def _action(obj: Mapping[str, Any], tools: Sequence[ToolSpec], can_ask: bool, raw: str) -> Any:
    kind = str(obj.get("kind") or "").strip().lower()
    if kind == "operation":
        table = {t.name: t for t in tools}
        spec = resolve_tool(str(obj.get("tool") or ""), table, [])
        args = obj.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ParseProblem("arguments must be an object")
        return EnvOp(action=EnvAction(tool=spec.name, args=json_args(dict(args))), raw=raw)
    if kind == "clarify":
        if not can_ask:
            raise ParseProblem("this method cannot message the user")
        content = str(obj.get("content") or "").strip()
        if not content:
            raise ParseProblem("empty content")
        return Ask(text=content, raw=raw)
    if kind == "answer":
        answer = str(obj.get("answer") or "").strip()
        if not answer:
            raise ParseProblem("empty final answer")
        pq = str(obj.get("predicted_user_question") or "").strip()
        return Propose(text=answer, predicted_question=pq, raw=raw)
    raise ParseProblem(f"unknown action kind {kind!r}; use operation, clarify or answer")


def parse_json_reply(
    text: str, tools: Sequence[ToolSpec], *, can_ask: bool = True, memory: bool = False
) -> ParseResult:
    """Read one reply of the JSON format into an action (and the memory object, if any).

    Args:
        text: The model's reply.
        tools: The tools offered this turn.
        can_ask: Whether the method may message the person.
        memory: Whether the method keeps a record (``MEMORY``).

    Returns:
        The action, with repair ``json_fallback_text`` when the reply was not JSON but the
        text format's parser understood it; Malformed otherwise.
    """
    raw = text
    body = strip_reasoning(text or "")
    obj, closed = _load(body)
    if not isinstance(obj, dict):
        fallback = parse_reply(
            body, tools, can_ask=can_ask, state_labels=("MEMORY",) if memory else ()
        )
        if fallback.ok:
            return ParseResult(
                fallback.action,
                ("json_fallback_text", *fallback.repairs),
                fallback.state,
                fallback.state_label,
            )
        return malformed(raw, "the reply is not the JSON action object")
    inner = obj.get("action")
    repairs: tuple[str, ...] = ("json_closed_truncated",) if closed else ()
    if not isinstance(inner, dict) and "kind" in obj:
        inner, repairs = obj, (*repairs, "json_unwrapped_action")
    if not isinstance(inner, dict):
        return malformed(raw, "no 'action' object in the reply")
    try:
        action = _action(inner, tools, can_ask, raw)
    except ParseProblem as exc:
        return malformed(raw, str(exc), repairs)
    state = _memory(obj.get("memory")) if memory else None
    return ParseResult(
        action,
        repairs,
        state if isinstance(state, dict) else None,
        "MEMORY" if isinstance(state, dict) else None,
    )


def _memory(value: Any) -> dict[str, Any] | None:
    """The record as the method keeps it: an object (a JSON text is decoded), else a note."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip():
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        return decoded if isinstance(decoded, dict) else {"notes": value.strip()}
    return None


def render_json_action(action: Any) -> str:
    """The canonical JSON form of an action (the assistant turns of the JSON conversation)."""
    if isinstance(action, EnvOp):
        inner: dict[str, Any] = {
            "kind": "operation",
            "tool": action.action.tool,
            "arguments": action.action.args,
        }
    elif isinstance(action, Ask):
        inner = {"kind": "clarify", "content": action.text}
    elif isinstance(action, Propose):
        inner = {
            "kind": "answer",
            "answer": action.text,
            "predicted_user_question": action.predicted_question,
        }
    else:
        return str(getattr(action, "raw", ""))
    return json.dumps({"action": inner}, ensure_ascii=False)
