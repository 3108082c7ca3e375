"""ScriptedLLM: an in-process, deterministic stand-in for a model, for tests and offline demos."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias

from core.errors import LLMError
from core.llm.client import normalize_messages
from core.llm.types import (
    ChatMessage,
    DeltaCallback,
    LLMResponse,
    LLMStats,
    ModelSpec,
    ToolCall,
    Usage,
)

ScriptedReply: TypeAlias = str | LLMResponse | ToolCall | list[ToolCall] | LLMError
"""A text, a full response, one or several tool calls, or an error to raise."""

Responder: TypeAlias = Callable[
    [list[dict[str, Any]], list[dict[str, Any]] | None], str | LLMResponse
]
"""Builds a reply from (messages, tools)."""


class ScriptedCall(NamedTuple):
    """One call a ScriptedLLM received."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    namespace: str
    params: dict[str, Any]


def _words(text: str) -> int:
    return len(text.split())


class ScriptedLLM:
    """Replays a list of replies, or asks a function, behind the LLMClient interface.

    Args:
        replies: Replies consumed one per call, or a function ``(messages, tools) -> reply``.
        model: The model name reported on responses.
        cycle: Start the list again when it runs out instead of raising.
        spec: The whole spec to report (context window, cap …); default from ``model``.

    Raises (from ``complete``):
        LLMError: When the list is exhausted (not retryable), or when the scripted item is
            an LLMError.
    """

    def __init__(
        self,
        replies: Sequence[ScriptedReply] | Responder,
        *,
        model: str = "scripted/fake",
        cycle: bool = False,
        spec: ModelSpec | None = None,
    ) -> None:
        self._spec = spec or ModelSpec(model=model)
        self._replies: list[ScriptedReply] | None = None
        self._responder: Responder | None = None
        if callable(replies):
            self._responder = replies
        else:
            self._replies = list(replies)
        self.cycle = cycle
        self.calls: list[ScriptedCall] = []
        self._index = 0
        self._lock = threading.Lock()
        self._stats = LLMStats()

    @property
    def spec(self) -> ModelSpec:
        """The (fake) model spec."""
        return self._spec

    @property
    def stats(self) -> LLMStats:
        """A snapshot of the running totals."""
        with self._lock:
            return self._stats.model_copy()

    @property
    def remaining(self) -> int | None:
        """Replies left in the list (None for a function or a cycling script)."""
        if self._replies is None or self.cycle:
            return None
        with self._lock:
            return len(self._replies) - self._index

    def _next(self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Any:
        if self._responder is not None:
            return self._responder(msgs, tools)
        assert self._replies is not None
        with self._lock:
            if self._index >= len(self._replies):
                if not self.cycle or not self._replies:
                    self._stats.failures += 1
                    raise LLMError(
                        f"script exhausted after {len(self._replies)} replies",
                        model=self._spec.model,
                        retryable=False,
                    )
                self._index = 0
            item = self._replies[self._index]
            self._index += 1
        return item

    def complete(
        self,
        messages: Sequence[Mapping[str, Any] | ChatMessage],
        *,
        tools: list[dict[str, Any]] | None = None,
        namespace: str = "default",
        stream: bool = False,
        on_delta: DeltaCallback | None = None,
        **params: Any,
    ) -> LLMResponse:
        """Return the next scripted reply (same contract as :meth:`LLMClient.complete`)."""
        started = time.perf_counter()
        msgs = normalize_messages(messages)
        with self._lock:
            self.calls.append(ScriptedCall(msgs, tools, namespace, dict(params)))
        item = self._next(msgs, tools)
        if isinstance(item, LLMError):
            with self._lock:
                self._stats.failures += 1
            raise item
        prompt = sum(_words(str(m.get("content") or "")) for m in msgs)
        if isinstance(item, LLMResponse):
            resp = item.model_copy(update={"model": item.model or self._spec.model})
        elif isinstance(item, ToolCall):
            resp = LLMResponse(tool_calls=[item], finish_reason="tool_calls")
        elif isinstance(item, list):
            resp = LLMResponse(tool_calls=list(item), finish_reason="tool_calls")
        else:
            resp = LLMResponse(text=str(item), finish_reason="stop")
        if resp.usage.total_tokens == 0:
            completion = _words(resp.text) + sum(_words(c.arguments) for c in resp.tool_calls)
            resp = resp.model_copy(
                update={"usage": Usage(prompt_tokens=prompt, completion_tokens=completion)}
            )
        resp = resp.model_copy(
            update={
                "model": resp.model or self._spec.model,
                "latency_ms": (time.perf_counter() - started) * 1000,
            }
        )
        if on_delta is not None and resp.text:
            on_delta(resp.text)
        with self._lock:
            self._stats.calls += 1
            self._stats.prompt_tokens += resp.usage.prompt_tokens
            self._stats.completion_tokens += resp.usage.completion_tokens
            self._stats.cost_usd += resp.cost_usd
        return resp

    async def acomplete(
        self,
        messages: Sequence[Mapping[str, Any] | ChatMessage],
        *,
        tools: list[dict[str, Any]] | None = None,
        namespace: str = "default",
        stream: bool = False,
        on_delta: DeltaCallback | None = None,
        **params: Any,
    ) -> LLMResponse:
        """Async :meth:`complete`."""
        return self.complete(
            messages, tools=tools, namespace=namespace, stream=stream, on_delta=on_delta, **params
        )
