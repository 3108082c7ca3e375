"""Prompt assembly for LLM agents from the data files in ``data/prompts/agent_*.md``.

The shared base is strategy-free (the wire format and the host's domain text); each method's
guidance is its own file. Prompt text never lives in code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

from core.agents.methods import MethodSpec
from core.agents.wire import render_action
from core.errors import ConfigError
from core.model.episode import AgentView
from core.model.world import ToolSpec
from core.paths import DATA_DIR

PROMPT_DIR = DATA_DIR / "prompts"
"""Where the agent prompt files live."""


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


def system_prompt(
    method: MethodSpec,
    benchmark: str,
    tools: Sequence[ToolSpec],
    *,
    lessons: str = "",
    intent: str = "",
) -> str:
    """Assemble the system prompt: base + wire format + domain + the method's guidance.

    Args:
        method: The method spec (decides the format variant and guidance file).
        benchmark: Benchmark id (decides the domain text).
        tools: Tools offered.
        lessons: A3's rendered lesson block ('' before any lesson exists).
        intent: RS's rendered current intent.
    """
    fmt = load_prompt("format" if method.can_ask else "format_noask")
    base = fill(load_prompt("base"), format=fmt, domain=domain_text(benchmark, tools))
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
        costs = view.costs or {}
        ask = costs.get("question", 2.0)
        rej = costs.get("rejected_proposal", 4.0)
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
