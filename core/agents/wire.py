"""The agent action wire format and its tolerant parser.

Exactly one action per reply::

    Action: Operation            Action: Clarify              Action: Answer
    ```                          Content: <message>           Predicted user question: <opt>
    search[red shoes]            Candidates: [a, b]  (opt)    Final Answer: <answer>
    ```

Operations are ``name[argument]`` (single-argument tools, e.g. the shop's ``search`` and
``click``) or ``name(key="value", ...)`` (keyword literals; τ² tools). The parser is tolerant:
well-known deviations are *repaired* and each repair is named in :attr:`ParseResult.repairs`
(the caller records them as events); anything else becomes :class:`Malformed` with the
problems listed. Stateful methods end a reply with ``LABEL: {json}`` (e.g. ``MEMORY``); the
block is brace-matched, returned in :attr:`ParseResult.state` and stripped before parsing.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from core.agents.wire_base import (
    ACTION_WORDS,
    ActionRepair,
    ActionT,
    ParseProblem,
    ParseResult,
    json_args,
    param_names,
    render_action,
    render_call,
    resolve_tool,
    scan_brackets,
    strip_reasoning,
)
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.world import EnvAction, ToolSpec

__all__ = [
    "ANSWER_TOOL",
    "CLARIFY_TOOL",
    "ActionRepair",
    "ActionT",
    "ParseResult",
    "extract_state",
    "from_native_calls",
    "from_tool_calls",
    "parse_reply",
    "render_action",
    "render_call",
    "strip_reasoning",
    "tool_definitions",
]

_Bad = ParseProblem

_ALIASES = {
    "op": "operation",
    "operate": "operation",
    "tool": "operation",
    "tool call": "operation",
    "act": "operation",
    "ask": "clarify",
    "question": "clarify",
    "message": "clarify",
    "clarification": "clarify",
    "final answer": "answer",
    "final": "answer",
    "propose": "answer",
    "proposal": "answer",
    "submit": "answer",
}

_ACTION_LINE = re.compile(r"^[ \t>*_#`-]*action[*_ \t]*:[*_ \t]*(.*?)[*_ \t]*$", re.I | re.M)
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.S)
_CONTENT = re.compile(r"^[ \t*_]*content[*_ \t]*:[*_ \t]*(.*)$", re.I | re.M)
_CANDIDATES = re.compile(r"^[ \t*_]*candidates[*_ \t]*:.*$", re.I | re.M)
_STRATEGY = re.compile(r"^[ \t*_]*strategy[*_ \t]*:.*$", re.I | re.M)
_FINAL = re.compile(r"^[ \t*_]*final[ \t]+answer[*_ \t]*:[*_ \t]*(.*)$", re.I | re.M)
_PREDICTED = re.compile(
    r"^[ \t*_]*predicted[ \t]+user[ \t]+question[*_ \t]*:[*_ \t]*(.*)$", re.I | re.M
)
_CONTENT_STOP = re.compile(
    r"(?im)^[ \t*_>#-]*(candidates|strategy|action|predicted[ \t]+user[ \t]+question|"
    r"final[ \t]+answer|memory|note|reasoning|explanation)[*_ \t]*:"
)
_BRACKET = re.compile(r"^([A-Za-z_][A-Za-z0-9_ ]*?)\s*\[(.*)\]$", re.S)
_NAME_JSON = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(\{.*\})$", re.S)
_BARE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MIN_ANSWER = 8


# -- state blocks ------------------------------------------------------------------------------
def extract_state(
    text: str, labels: Sequence[str]
) -> tuple[str, str | None, dict[str, Any] | None, bool]:
    """Strip the first ``LABEL: {json}`` block (for ``labels``) from ``text``.

    Args:
        text: The reply.
        labels: Accepted labels (case-insensitive), e.g. ``("MEMORY",)``.

    Returns:
        (text without the block, label, parsed object or None, whether a block was seen but
        failed to parse).
    """
    if not labels:
        return text, None, None, False
    alt = "|".join(re.escape(lbl) for lbl in labels)
    m = re.search(rf"(?im)^[ \t*_]*({alt})[*_ \t]*:[ \t]*(?=\{{)", text)
    if m is None:
        return text, None, None, False
    start = m.end()
    end = scan_brackets(text, start, brackets="{", stop=True).end
    if end < 0:
        return text[: m.start()].rstrip(), m.group(1).upper(), None, True
    try:
        obj = json.loads(text[start:end])
    except json.JSONDecodeError:
        obj = None
    rest = (text[: m.start()] + text[end:]).strip()
    if not isinstance(obj, dict):
        return rest, m.group(1).upper(), None, True
    return rest, m.group(1).upper(), obj, False


# -- operations --------------------------------------------------------------------------------
def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError) as exc:
        if isinstance(node, ast.Name):
            low = node.id.lower()
            if low in {"true", "false", "null", "none"}:
                return {"true": True, "false": False}.get(low)
        raise _Bad(f"argument is not a literal: {ast.unparse(node)[:60]}") from exc


def _parse_paren(code: str, tools: dict[str, ToolSpec], repairs: list[str]) -> EnvAction:
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError as exc:
        raise _Bad(f"cannot parse the call: {exc.msg}") from exc
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise _Bad("the operation must be one call 'name(key=value, ...)'")
    spec = resolve_tool(call.func.id, tools, repairs)
    args: dict[str, Any] = {}
    params = param_names(spec)
    if call.args:
        if len(call.args) > len(params):
            raise _Bad(f"{spec.name} takes keyword arguments {params}")
        repairs.append("positional_arguments")
        for name, node in zip(params, call.args, strict=False):
            args[name] = _literal(node)
    for kw in call.keywords:
        if kw.arg is None:
            raise _Bad("'**' arguments are not allowed")
        args[kw.arg] = _literal(kw.value)
    return EnvAction(tool=spec.name, args=json_args(args))


def _single_param(spec: ToolSpec) -> str:
    params = param_names(spec)
    required = [str(p) for p in spec.parameters.get("required") or params]
    if len(required) == 1:
        return required[0]
    if len(params) == 1:
        return params[0]
    raise _Bad(f"{spec.name} takes several arguments; use {spec.name}(key=value, ...)")


def _parse_call(code: str, tools: dict[str, ToolSpec], repairs: list[str]) -> EnvAction:
    text = code.strip().strip("`").strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise _Bad("empty operation")
    if len(lines) > 1 and all(_looks_like_call(ln) for ln in lines):
        raise _Bad("more than one operation in one reply")
    m = _BRACKET.match(text)
    if m is not None and "(" not in m.group(1):
        spec = resolve_tool(m.group(1).strip(), tools, repairs)
        return EnvAction(tool=spec.name, args={_single_param(spec): m.group(2).strip()})
    m = _NAME_JSON.match(text)
    if m is not None:
        spec = resolve_tool(m.group(1), tools, repairs)
        try:
            obj = json.loads(m.group(2))
        except json.JSONDecodeError as exc:
            raise _Bad(f"arguments are not valid JSON: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise _Bad("JSON arguments must be an object")
        repairs.append("json_arguments")
        return EnvAction(tool=spec.name, args=json_args(obj))
    if _BARE_NAME.match(text):
        spec = resolve_tool(text, tools, repairs)
        repairs.append("bare_tool_name")
        return EnvAction(tool=spec.name, args={})
    if "(" in text:
        return _parse_paren(text, tools, repairs)
    raise _Bad("the operation must look like name[argument] or name(key=value, ...)")


def _looks_like_call(line: str) -> bool:
    s = line.strip()
    return bool(re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*[\[(].*[\])]\s*$", s))


def _reassemble(name: str, block: str) -> str:
    """Turn ``Action: <tool>`` + a bare argument block into ``tool(args)``."""
    body = block.strip()
    if body.startswith("{"):
        return f"{name} {body}"
    if body.startswith("(") and body.endswith(")"):
        return f"{name}{body}"
    if "=" not in body and body:
        return f"{name}[{body}]"
    parts = [ln.strip().rstrip(",") for ln in body.splitlines() if ln.strip()]
    return f"{name}({', '.join(parts)})"


# -- the parser --------------------------------------------------------------------------------
def _body_after(text: str, m: re.Match[str]) -> str:
    return text[m.end() :].strip()


def _code_of(text: str, after: int) -> str | None:
    fence = _FENCE.search(text, after)
    return fence.group(1).strip() if fence else None


def parse_reply(
    text: str,
    tools: Sequence[ToolSpec],
    *,
    can_ask: bool = True,
    state_labels: Sequence[str] = (),
) -> ParseResult:
    """Parse one agent reply in the wire format (tolerantly).

    Args:
        text: The model's reply.
        tools: Tools offered in this episode.
        can_ask: False for methods without a user-message action (B0, L0, LIT): a Clarify
            becomes Malformed.
        state_labels: Labels of the stateful block this method writes (``MEMORY`` …).

    Returns:
        The action, the repairs applied and the stripped state block.
    """
    raw = text
    body, label, state, state_broken = extract_state(text or "", state_labels)
    repairs: list[str] = []
    if state_broken:
        repairs.append("state_block_unparsed")
    try:
        action = _parse(body, raw, {t.name: t for t in tools}, can_ask, repairs)
    except _Bad as exc:
        problem = str(exc)
        return ParseResult(
            Malformed(raw=raw, problems=(problem,)),
            tuple(repairs),
            state,
            label,
            (problem,),
        )
    return ParseResult(action, tuple(repairs), state, label)


def _parse(
    text: str, raw: str, tools: dict[str, ToolSpec], can_ask: bool, repairs: list[str]
) -> ActionT:
    stripped = text.strip()
    if not stripped:
        raise _Bad("empty reply")
    lines = list(_ACTION_LINE.finditer(text))
    if not lines:
        return _without_action_line(text, raw, tools, can_ask, repairs)
    words = {_word(m.group(1), tools)[0] for m in lines}
    if len(lines) > 1 and len(words) > 1:
        raise _Bad("more than one action in one reply")
    if len(lines) > 1:
        repairs.append("repeated_action_line")
    m = lines[0]
    word, rest = _word(m.group(1), tools)
    if word in _ALIASES:
        repairs.append("action_alias")
        word = _ALIASES[word]
    if word == "operation":
        return _operation(text, raw, m, rest, tools, repairs)
    if word == "clarify":
        return _clarify(text, raw, m, rest, can_ask, repairs)
    if word == "answer":
        return _answer(text, raw, m, rest, repairs)
    # Action: <tool_name> + an argument block
    head = m.group(1).strip().strip("`")
    name = re.split(r"[\s(\[{]", head, maxsplit=1)[0]
    if name and name.lower() not in ACTION_WORDS and name.lower() in {k.lower() for k in tools}:
        block = _code_of(text, m.end())
        if block is None:
            block = head[len(name) :].strip() or _body_after(text, m)
        call = _reassemble(name, block) if block else name
        repairs.append("tool_name_as_action")
        op = _parse_call(call, tools, repairs)
        return EnvOp(action=op, raw=raw)
    raise _Bad(f"unknown action '{head[:40]}'; use Operation, Clarify or Answer")


def _word(value: str, tools: dict[str, ToolSpec]) -> tuple[str, str]:
    v = value.strip().strip("`*_").strip()
    low = v.lower()
    for w in sorted([*ACTION_WORDS, *_ALIASES], key=len, reverse=True):
        if low == w or (low.startswith(w) and not low[len(w) : len(w) + 1].isalnum()):
            return w, v[len(w) :].strip(" :-")
    return low.split(" ", 1)[0] if low else "", ""


def _without_action_line(
    text: str, raw: str, tools: dict[str, ToolSpec], can_ask: bool, repairs: list[str]
) -> ActionT:
    final = _FINAL.search(text)
    if final is not None and final.group(1).strip():
        repairs.append("missing_action_line")
        pq = _PREDICTED.search(text)
        return Propose(
            text=final.group(1).strip(),
            predicted_question=pq.group(1).strip() if pq else "",
            raw=raw,
        )
    content = _CONTENT.search(text)
    if content is not None and content.group(1).strip():
        if not can_ask:
            raise _Bad("this method cannot message the user")
        repairs.append("missing_action_line")
        return Ask(text=content.group(1).strip(), raw=raw)
    block = _code_of(text, 0)
    candidates = [block] if block else []
    candidates += [ln for ln in text.splitlines() if _looks_like_call(ln)]
    for cand in candidates:
        try:
            op = _parse_call(cand, tools, repairs)
        except _Bad:
            continue
        repairs.append("missing_action_line")
        return EnvOp(action=op, raw=raw)
    raise _Bad("no 'Action:' line (use Operation, Clarify or Answer)")


def _operation(
    text: str,
    raw: str,
    m: re.Match[str],
    rest: str,
    tools: dict[str, ToolSpec],
    repairs: list[str],
) -> EnvOp:
    code = _code_of(text, m.end())
    if code is None:
        if rest:
            code = rest
            repairs.append("inline_operation")
        else:
            after = _body_after(text, m)
            calls = [ln for ln in after.splitlines() if ln.strip()]
            if not calls:
                raise _Bad("Operation without a code block")
            code = calls[0] if len(calls) == 1 or not _looks_like_call(calls[1]) else after
            repairs.append("unfenced_operation")
    return EnvOp(action=_parse_call(code, tools, repairs), raw=raw)


def _clarify(
    text: str, raw: str, m: re.Match[str], rest: str, can_ask: bool, repairs: list[str]
) -> Ask:
    if not can_ask:
        raise _Bad("this method cannot message the user (no Clarify action)")
    content = _CONTENT.search(text, m.end())
    if content is not None:
        msg = _message_of(content.group(1), text[content.end() :])
    else:
        after = _STRATEGY.sub("", _CANDIDATES.sub("", _body_after(text, m))).strip()
        msg = (rest + "\n" + after).strip() if rest else after
        if len(msg) < 3:
            raise _Bad("Clarify without 'Content:'")
        repairs.append("unlabelled_content")
    if not msg:
        raise _Bad("empty Clarify content")
    return Ask(text=msg, raw=raw)


def _message_of(first: str, tail: str) -> str:
    """The message a Clarify sends: its ``Content:`` text and the lines that continue it.

    The message ends at the first blank line, code fence or labelled line (``Candidates:``,
    ``Strategy:``, ``Note:`` …) — prose the model adds after its action, or a closing fence,
    never reaches the person.
    """
    lines = [first.strip().strip("`").strip()]
    stop = _CONTENT_STOP.search(tail)
    for line in (tail[: stop.start()] if stop else tail).splitlines()[1:]:
        if not line.strip() or line.strip().startswith("```"):
            break
        lines.append(line.rstrip())
    return "\n".join(lines).strip()


def _answer(text: str, raw: str, m: re.Match[str], rest: str, repairs: list[str]) -> Propose:
    pq = _PREDICTED.search(text, m.end())
    final = _FINAL.search(text, m.end())
    if final is not None:
        answer = (final.group(1) + text[final.end() :]).strip()
        if not answer:
            raise _Bad("empty Final Answer")
    else:
        body = _PREDICTED.sub("", _body_after(text, m)).strip()
        answer = (rest + "\n" + body).strip() if rest else body
        if len(answer) < _MIN_ANSWER:
            raise _Bad("Answer without 'Final Answer:'")
        repairs.append("unlabelled_answer")
    return Propose(text=answer, predicted_question=pq.group(1).strip() if pq else "", raw=raw)


from core.agents.wire_native import (  # noqa: E402 - re-exported for callers of the old module
    ANSWER_TOOL,
    CLARIFY_TOOL,
    from_native_calls,
    from_tool_calls,
    tool_definitions,
)
