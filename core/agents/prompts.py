"""Prompt assembly for LLM agents from the data files in ``data/prompts/agent_*.md``.

The shared base is strategy-free (the wire format and the host's domain text): it tells no
method that the request may be faulty or that the person may change their mind. That premise
sentence (``agent_base_premise.md``) is added only when a run asks for it
(``RunSpec.base_prompt = "premise"``, recorded in the run's identity). Each method's guidance is
its own file. Prompt text never lives in code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from core.agents.methods import MethodSpec
from core.agents.wire import render_action
from core.errors import ConfigError
from core.model.config import DEFAULT_COSTS
from core.model.episode import AgentView
from core.model.world import ToolSpec
from core.paths import DATA_DIR

PROMPT_DIR = DATA_DIR / "prompts"
"""Where the agent prompt files live."""

BASE_PROMPTS: tuple[str, ...] = ("strategy-free", "premise")
"""Variants of the shared base: the paper's strategy-free base (default) or the base plus the
premise sentence (the request may be faulty, the person may change their mind)."""


@lru_cache(maxsize=64)
def load_prompt(name: str) -> str:
    """Return the text of ``data/prompts/agent_<name>.md``.

    Raises:
        ConfigError: If the file is missing.
    """
    path = PROMPT_DIR / f"agent_{name}.md"
    if not path.is_file():
        raise ConfigError("prompt file missing", file=path)
    return path.read_text(encoding="utf-8").strip()


def fill(template: str, **values: str) -> str:
    """Substitute ``{name}`` placeholders (other braces, e.g. JSON examples, stay as they are)."""
    out = template
    for key, val in values.items():
        out = out.replace("{" + key + "}", val)
    return out


def tool_manual(tools: Sequence[ToolSpec]) -> str:
    """One line per tool: signature, kind and description."""
    lines = []
    for t in tools:
        props = t.parameters.get("properties") or {}
        sig = ", ".join(f"{k}: {v.get('type', 'any')}" for k, v in props.items())
        lines.append(f"- {t.name}({sig}) [{t.kind}]: {t.description}")
    return "\n".join(lines)


def domain_text(benchmark: str, tools: Sequence[ToolSpec]) -> str:
    """The host's domain prompt (shop, τ² back office, or a generic tool manual)."""
    if benchmark == "webshop":
        return load_prompt("domain_webshop")
    name = "domain_tau2" if benchmark.startswith("tau2") else "domain_generic"
    return fill(load_prompt(name), tools=tool_manual(tools))


FORMAT_PROMPTS = {"text": "format", "tools": "format_tools", "json": "format_json"}
"""The prompt file describing each action format (``_noask`` for methods that cannot ask)."""


def system_prompt(
    method: MethodSpec,
    benchmark: str,
    tools: Sequence[ToolSpec],
    *,
    lessons: str = "",
    intent: str = "",
    action_format: str = "text",
    base_prompt: str | None = None,
) -> str:
    """Assemble the system prompt: base + wire format + domain + the method's guidance.

    Args:
        method: The method spec (decides the format variant and guidance file).
        benchmark: Benchmark id (decides the domain text).
        tools: Tools offered.
        lessons: A3's rendered lesson block ('' before any lesson exists).
        intent: RS's rendered current intent.
        action_format: ``text`` (the paper's wire format), ``tools`` (native tool calling) or
            ``json`` (JSON-schema constrained replies).
        base_prompt: ``strategy-free`` (None, the default) or ``premise`` (adds the premise
            sentence; a recorded run option).

    Raises:
        ConfigError: An unknown base prompt variant.
    """
    if base_prompt not in (None, *BASE_PROMPTS):
        raise ConfigError(f"unknown base prompt {base_prompt!r}", field="base_prompt")
    name = FORMAT_PROMPTS.get(action_format, "format")
    fmt = load_prompt(name if method.can_ask else name + "_noask")
    premise = ""
    if base_prompt == "premise":
        premise = " " + " ".join(load_prompt("base_premise").split())
    base = fill(
        load_prompt("base"), format=fmt, domain=domain_text(benchmark, tools), premise=premise
    )
    if method.self_evolving:
        # A3 extends the budget planner: A2's guidance in full, then the lesson book
        planner = fill(load_prompt("A2"), lessons="", intent="")
        guidance = planner + "\n\n" + fill(load_prompt(method.id), lessons=lessons, intent="")
    else:
        guidance = fill(load_prompt(method.id), lessons=lessons, intent=intent)
    return f"{base}\n\n{guidance}".strip()


def render_transcript(view: AgentView, keep_observations: int | None = None) -> str:
    """Render the conversation as ``USER:`` / ``YOU:`` / ``ENVIRONMENT:`` lines.

    Args:
        view: The agent view.
        keep_observations: Keep only the last K environment lines (None = all).
    """
    entries = list(view.transcript)
    drop: set[int] = set()
    if keep_observations is not None:
        env_idx = [i for i, e in enumerate(entries) if e.role == "environment"]
        drop = set(env_idx[: max(0, len(env_idx) - keep_observations)])
    lines = [f"USER: {view.query}"]
    for i, e in enumerate(entries):
        if i in drop:
            lines.append("ENVIRONMENT: (earlier observation omitted)")
        elif e.role == "agent":
            lines.append("YOU: " + (render_action(e.action) if e.action is not None else e.text))
        elif e.role == "user":
            lines.append(f"USER: {e.text}")
        else:
            lines.append(f"ENVIRONMENT: {e.text}")
    return "\n".join(lines)


def budget_lines(view: AgentView, benchmark: str) -> str:
    """The turn-budget note, and the patience meter when the view carries it."""
    out = [f"{view.turns_left} actions left."]
    if benchmark == "webshop":
        out.append("Buying takes several actions: open the item, click each option, then buy now.")
    if view.patience is not None:
        costs = {**DEFAULT_COSTS, **(view.costs or {})}
        ask = costs["question"]
        rej = costs["rejected_proposal"]
        out.append(
            f"The person's patience: {view.patience:g} left. A question costs {ask:g}; "
            f"a rejected final answer costs {rej:g}. At zero they stop working with you."
        )
    if view.forced_final:
        out.append(view.format_hint or "Give your final answer now.")
    return "\n".join(out) + "\n"


def turn_prompt(
    view: AgentView,
    benchmark: str,
    *,
    memory: dict[str, object] | None = None,
    keep_observations: int | None = 8,
) -> str:
    """The per-turn user message: transcript, budget note, memory block, action cue."""
    text = fill(
        load_prompt("turn"),
        transcript=render_transcript(view, keep_observations),
        budget=budget_lines(view, benchmark),
    )
    if memory is not None:
        block = "Your record so far:\nMEMORY: " + json.dumps(memory, ensure_ascii=False)
        text = text.replace("Your single action now:", block + "\n\nYour single action now:")
    return text


# -- append-only conversations -------------------------------------------------------------------
MAX_ENTRY_CHARS = 4000
"""Longest rendering of one transcript entry (an absurdly long reply is cut, not carried)."""

DEFAULT_WINDOW_CHARS = 120_000
"""History (after the system prompt) kept before the window slides (about 30k tokens)."""


def cap_entry(text: str) -> str:
    """``text`` cut to :data:`MAX_ENTRY_CHARS` (with a note of how much was cut)."""
    if len(text) <= MAX_ENTRY_CHARS:
        return text
    return text[:MAX_ENTRY_CHARS] + f" … [{len(text) - MAX_ENTRY_CHARS} more characters cut]"


def history(
    view: AgentView,
    statuses: Mapping[int, str] | None = None,
    render: Callable[[Any], str] | None = None,
) -> list[dict[str, str]]:
    """The conversation as alternating messages, append-only across turns.

    The opening request is the first user message; each agent action becomes an assistant
    message (its canonical wire form); what came back (environment observations, the
    person's replies) becomes the next user message. ``statuses`` are the status blocks
    sent at earlier turns (by number of actions so far): each stays at the end of the user
    message it was sent with. A message, once rendered, never changes on a later turn, so
    every request extends the previous one (provider prompt caches reuse the prefix).
    ``render`` writes a past action the way the agent's format writes it (default: the text
    wire format).
    """
    show = render or render_action
    out: list[dict[str, str]] = [{"role": "user", "content": cap_entry(f"USER: {view.query}")}]
    turn_of = [0]  # per message: the number of agent actions before it
    actions = 0
    for e in view.transcript:
        if e.role == "agent":
            actions += 1
            text = show(e.action) if e.action is not None else e.text
            out.append({"role": "assistant", "content": cap_entry(text)})
            turn_of.append(actions)
            continue
        line = cap_entry(f"USER: {e.text}" if e.role == "user" else f"ENVIRONMENT: {e.text}")
        if out[-1]["role"] == "user":
            out[-1] = {"role": "user", "content": out[-1]["content"] + "\n" + line}
        else:
            out.append({"role": "user", "content": line})
            turn_of.append(actions)
    for i, (msg, turn) in enumerate(zip(out, turn_of, strict=True)):
        said = (statuses or {}).get(turn)
        if msg["role"] == "user" and said and turn != view.turn:
            out[i] = {"role": "user", "content": msg["content"] + "\n\n" + said}
    return out


def status_block(view: AgentView, benchmark: str, memory: dict[str, object] | None) -> str:
    """The part of the latest user message that is about now: budget, memory, action cue."""
    text = fill(load_prompt("status"), budget=budget_lines(view, benchmark))
    if memory is not None:
        block = "Your record so far:\nMEMORY: " + json.dumps(memory, ensure_ascii=False)
        text = text.replace("Your single action now:", block + "\n\nYour single action now:")
    return text


def window(
    turns: list[dict[str, str]], dropped: int, limit: int = DEFAULT_WINDOW_CHARS
) -> tuple[list[dict[str, str]], int]:
    """Keep the history under ``limit`` characters by dropping the oldest whole turns.

    The window slides only when the limit is reached, and then by enough whole turns to
    bring the history to half the limit, so the prefix stays stable for many turns between
    slides. The opening request always stays, followed by a note of what was omitted.

    Args:
        turns: From :func:`history`.
        dropped: Turns (assistant message + reply) dropped before this call.
        limit: The configured limit in characters.

    Returns:
        The windowed messages and the new number of dropped turns.
    """
    head, rest = turns[:1], turns[1:]

    def size(k: int) -> int:
        return sum(len(m["content"]) for m in rest[2 * k :])

    if size(dropped) > limit:
        while 2 * dropped < len(rest) - 2 and size(dropped) > limit // 2:
            dropped += 1
    if dropped == 0:
        return turns, 0
    note = {
        "role": "user",
        "content": head[0]["content"] + f"\n({dropped} earlier turns omitted)",
    }
    return [note, *rest[2 * dropped :]], dropped


def _flat(messages: Sequence[dict[str, object]]) -> str:
    return "".join(f"<{m.get('role')}>{m.get('content') or ''}" for m in messages)


def prefix_reuse(requests: Sequence[Sequence[dict[str, object]]], *, of: str = "previous") -> float:
    """How much consecutive requests share as a common prefix.

    Summed over characters (role tags and contents) of every request after the first.

    ``of="previous"``: the share of each previous request that the next one repeats as its
    prefix (1.0: every request only appended — what a provider prompt cache can hit).
    ``of="current"``: the share of each request that is such a repeated prefix (the cached
    share of its prompt tokens; new content each turn keeps it below 1).
    """
    flats = [_flat(r) for r in requests]
    shared = total = 0
    for prev, cur in zip(flats, flats[1:], strict=False):
        lo, hi = 0, min(len(prev), len(cur))
        while lo < hi:  # longest common prefix by bisection (slice compares run in C)
            mid = (lo + hi + 1) // 2
            if prev[:mid] == cur[:mid]:
                lo = mid
            else:
                hi = mid - 1
        shared += lo
        total += len(prev) if of == "previous" else len(cur)
    return shared / total if total else 1.0
