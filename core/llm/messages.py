"""Chat messages on their way out: checked, with the system prompt sent the way a model takes it.

Also the rough token arithmetic the client and the agent use to keep a prompt inside a model's
context window (:func:`estimate_tokens`), without a tokenizer: a conservative characters-per-
token ratio that over-counts English and JSON a little, so a prompt that fits by the estimate
fits the server too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.errors import LLMError
from core.llm.types import ChatMessage

CHARS_PER_TOKEN = 3.0
"""Characters per token assumed by :func:`estimate_tokens` (real tokenizers average 3.5-4.5
on English prose and JSON; 3 leaves room for the chat template's own tokens)."""

MESSAGE_OVERHEAD_TOKENS = 8
"""Tokens a chat template adds around each message (role markers, separators)."""


def normalize_messages(messages: Sequence[Mapping[str, Any] | ChatMessage]) -> list[dict[str, Any]]:
    """Return messages as plain OpenAI dicts, checking each has a role.

    Raises:
        LLMError: (not retryable) when a message is malformed.
    """
    out: list[dict[str, Any]] = []
    for index, msg in enumerate(messages):
        if isinstance(msg, ChatMessage):
            out.append(msg.to_openai())
        elif isinstance(msg, Mapping) and isinstance(msg.get("role"), str):
            out.append(dict(msg))
        else:
            raise LLMError(f"message {index} is not a chat message: {msg!r:.80}", retryable=False)
    if not out:
        raise LLMError("no messages to send", retryable=False)
    return out


def apply_system_role(messages: list[dict[str, Any]], system_role: str) -> list[dict[str, Any]]:
    """Send system messages as ``system``, ``developer`` or merged into the first user turn.

    ``user`` is for chat templates that reject a system role.

    >>> apply_system_role([{"role": "system", "content": "S"},
    ...                    {"role": "user", "content": "U"}], "user")[0]["content"].split()
    ['S', 'U']
    """
    if system_role == "system" or not any(m.get("role") == "system" for m in messages):
        return messages
    if system_role == "developer":
        return [{**m, "role": "developer"} if m.get("role") == "system" else m for m in messages]
    texts = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    head = "\n\n".join(t for t in texts if t)
    rest = [m for m in messages if m.get("role") != "system"]
    if rest and rest[0].get("role") == "user" and isinstance(rest[0].get("content"), str):
        rest[0] = {
            **rest[0],
            "content": f"{head}\n\n{rest[0]['content']}" if head else rest[0]["content"],
        }
    elif head:
        rest.insert(0, {"role": "user", "content": head})
    return rest


def estimate_tokens(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None
) -> int:
    """A conservative estimate of a request's prompt tokens (no tokenizer needed).

    >>> estimate_tokens([{"role": "user", "content": "x" * 300}])
    108
    """
    chars = 0
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif content is not None:
            chars += len(json.dumps(content, ensure_ascii=False))
        calls = msg.get("tool_calls")
        if calls:
            chars += len(json.dumps(calls, ensure_ascii=False))
    if tools:
        chars += len(json.dumps(list(tools), ensure_ascii=False))
    return int(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS * len(messages)


def chars_for_tokens(tokens: int) -> int:
    """How many characters of history :func:`estimate_tokens` counts as ``tokens``."""
    return max(0, int(tokens * CHARS_PER_TOKEN))
