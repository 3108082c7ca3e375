"""What every agent action format shares: typed results, repairs, tool lookup, rendering.

The formats themselves live beside it: the paper's text format (:mod:`core.agents.wire`),
native tool calling (:mod:`core.agents.wire_native`) and JSON-schema constrained replies
(:mod:`core.agents.wire_json`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.world import EnvAction, ToolSpec

ActionT = EnvOp | Ask | Propose | Malformed

ACTION_WORDS = frozenset({"operation", "clarify", "answer"})
"""The three action words (never treated as tool names)."""

_REASONING_BLOCK = re.compile(
    r"<(think|thinking|reasoning|reflection)\b[^>]*>.*?</\1\s*>", re.I | re.S
)
_OPEN_REASONING = re.compile(r"^\s*<(think|thinking|reasoning)\b[^>]*>.*\Z", re.I | re.S)
_STRAY_CLOSE = re.compile(r"^.*?</(think|thinking|reasoning)\s*>", re.I | re.S)


@dataclass(frozen=True)
class ActionRepair:
    """One fix between an agent's reply and its action (recorded as a ``repair`` event).

    Attributes:
        detail: What was repaired: a parser repair name (``unfenced_operation`` …) or
            ``reprompt: <the parser's complaint>``.
        original: The reply as received.
        replacement: What it became (the canonical wire form of the action, or the re-prompted
            reply); empty when nothing usable came of it.
    """

    detail: str
    original: str = ""
    replacement: str = ""


@dataclass(frozen=True)
class ParseResult:
    """The parsed action plus what was repaired and any stripped state block.

    Attributes:
        action: The typed action (``Malformed`` when it could not be understood).
        repairs: Names of the repairs applied (empty for a well-formed reply).
        state: The ``LABEL: {json}`` block's object, if one was found and parsed.
        state_label: Its label (e.g. ``MEMORY``).
    """

    action: ActionT
    repairs: tuple[str, ...] = ()
    state: dict[str, Any] | None = None
    state_label: str | None = None
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Whether the reply yielded a usable (non-malformed) action."""
        return not isinstance(self.action, Malformed)


class ParseProblem(Exception):
    """A parse problem (becomes a Malformed action)."""


def malformed(raw: str, problem: str, repairs: tuple[str, ...] = ()) -> ParseResult:
    """A :class:`ParseResult` for a reply that yielded no usable action."""
    return ParseResult(Malformed(raw=raw, problems=(problem,)), repairs, None, None, (problem,))


# -- tools --------------------------------------------------------------------------------
def param_names(spec: ToolSpec) -> list[str]:
    """The tool's parameter names, in schema order."""
    props = spec.parameters.get("properties") or {}
    return [str(k) for k in props]


def resolve_tool(name: str, tools: dict[str, ToolSpec], repairs: list[str]) -> ToolSpec:
    """The offered tool ``name`` names (case and spaces forgiven, as a named repair).

    Raises:
        ParseProblem: An action word or a tool that is not offered.
    """
    if name.lower() in ACTION_WORDS:
        raise ParseProblem(f"'{name}' is an action word, not a tool")
    spec = tools.get(name)
    if spec is not None:
        return spec
    folded = {k.lower(): v for k, v in tools.items()}
    key = name.strip().lower().replace(" ", "_")
    if key in folded:
        repairs.append("tool_name_case")
        return folded[key]
    raise ParseProblem(f"unknown tool '{name}'; available: {', '.join(sorted(tools)) or 'none'}")


def json_args(args: dict[str, Any]) -> dict[str, Any]:
    """Return ``args`` as plain JSON values, refusing what JSON cannot store exactly.

    The stored event must replay exactly as the live action ran: NaN/Infinity, tuples, sets
    and other non-JSON values would act one way live and another way after a round trip.
    """
    try:
        text = json.dumps(args, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ParseProblem(f"arguments must be plain JSON values (finite numbers): {exc}") from exc
    out: dict[str, Any] = json.loads(text)
    return out


# -- reasoning blocks ----------------------------------------------------------------------------
def strip_reasoning(text: str) -> str:
    r"""Remove ``<think>…</think>`` (and ``thinking``/``reasoning``/``reflection``) blocks.

    Reasoning models often think aloud before the action; an action word inside that block
    must not count. An unclosed block at the start (the reply was cut off while thinking)
    leaves nothing; a stray closing tag (the server stripped the opening one) drops what
    precedes it.

    >>> print(strip_reasoning("<think>maybe Action: Answer?</think>\nAction: Clarify"))
    Action: Clarify
    """
    out = _REASONING_BLOCK.sub("", text or "")
    out = _STRAY_CLOSE.sub("", out, count=1)
    if _OPEN_REASONING.match(out):
        return ""
    return out.strip()


# -- rendering ---------------------------------------------------------------------------------
def render_call(action: EnvAction, tools: Sequence[ToolSpec] = ()) -> str:
    """Render an EnvAction in the wire syntax (``name[arg]`` for single-argument tools).

    >>> render_call(EnvAction(tool="search", args={"query": "red shoes"}))
    'search[red shoes]'
    """
    spec = next((t for t in tools if t.name == action.tool), None)
    if len(action.args) == 1:
        ((key, value),) = action.args.items()
        single = spec is None or param_names(spec) == [key]
        if single and isinstance(value, str) and "]" not in value and "\n" not in value:
            if spec is not None or action.tool in {"search", "click"}:
                return f"{action.tool}[{value}]"
    parts = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in action.args.items())
    return f"{action.tool}({parts})"


def render_action(action: ActionT, tools: Sequence[ToolSpec] = ()) -> str:
    """Render a typed action in the canonical wire format (for transcripts and tests)."""
    if isinstance(action, EnvOp):
        return f"Action: Operation\n```\n{render_call(action.action, tools)}\n```"
    if isinstance(action, Ask):
        return f"Action: Clarify\nContent: {action.text}"
    if isinstance(action, Propose):
        pq = (
            f"Predicted user question: {action.predicted_question}\n"
            if action.predicted_question
            else ""
        )
        return f"Action: Answer\n{pq}Final Answer: {action.text}"
    return action.raw


@dataclass(frozen=True)
class BracketScan:
    """Where a scan of JSON-ish text stopped (string- and escape-aware)."""

    end: int
    """Index just past the bracket that closed the outermost one (``-1`` when none closed it, or
    when the scan was asked to run to the end of the text)."""
    open: tuple[str, ...]
    """The closers still expected at the end of the text, innermost last."""
    in_string: bool
    """The text ended inside a string."""
    escaped: bool
    """The text ended right after a backslash inside a string."""


def scan_brackets(
    text: str, start: int, *, brackets: str = "{[", stop: bool = False
) -> BracketScan:
    """Scan ``text`` from ``start``, tracking strings, escapes and the open ``brackets``.

    Args:
        text: The text.
        start: Where to start (an opening bracket, for ``stop``).
        brackets: The opening brackets that count (``"{"``: braces only; ``"{["``: both).
        stop: Stop where the outermost bracket closes (``end`` says where).

    >>> scan_brackets('{"a": "}"} tail', 0, brackets="{", stop=True).end
    10
    >>> scan_brackets('{"a": ["x', 0).open, scan_brackets('{"a": ["x', 0).in_string
    (('}', ']'), True)
    """
    closer_of = {"{": "}", "[": "]"}
    closers = "".join(closer_of[b] for b in brackets)
    stack: list[str] = []
    in_str = esc = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in brackets:
            stack.append(closer_of[ch])
        elif ch in closers and stack:
            stack.pop()
            if stop and not stack:
                return BracketScan(i + 1, (), False, False)
    return BracketScan(-1, tuple(stack), in_str, esc)
