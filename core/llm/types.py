"""Boundary models of the LLM door: model specs, messages, tool calls, responses, stats."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, ValidationError, field_validator, model_validator

from core.errors import ConfigError
from core.model.base import Strict, StrictMutable

OFFLINE_NAMES = frozenset({"symbolic", "template", "heuristic"})
"""Names that select an offline implementation instead of a language model."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_REASONING = re.compile(
    r"^(o\d+(-mini|-pro|-preview)?|gpt-5[\w.-]*|deepseek-reasoner|.*-thinking.*)$", re.I
)

SystemRole = Literal["system", "developer", "user"]
"""How the system prompt is sent: as ``system``, as ``developer`` (OpenAI reasoning models) or
merged into the first user message (chat templates that reject a system role)."""

ReasoningEffort = Literal["minimal", "low", "medium", "high"]

RESERVED_EXTRA = frozenset(
    {"api_key", "api_base", "base_url", "model", "messages", "tools", "stream", "temperature"}
)
"""Keys ``extra`` may not set (they have fields of their own, or are secrets)."""


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is a reasoning model that rejects a sampling temperature.

    Decided by name (the provider prefix is ignored): OpenAI's o-series and gpt-5 family,
    DeepSeek's reasoner and ``*-thinking*`` models.

    >>> is_reasoning_model("openai/o3-mini"), is_reasoning_model("gpt-5-mini")
    (True, True)
    >>> is_reasoning_model("openai/gpt-4o-mini")
    False
    """
    base = model.rsplit("/", 1)[-1]
    return bool(_REASONING.match(base))


def is_offline_name(name: str) -> bool:
    """Return whether ``name`` selects an offline implementation rather than a model.

    >>> is_offline_name("Symbolic"), is_offline_name("openai/gpt-4o-mini")
    (True, False)
    """
    return name.strip().lower() in OFFLINE_NAMES


class ModelSpec(Strict):
    """Which model to call and how: a litellm model string plus transport settings.

    The key itself is never part of a spec; ``api_key_env`` names the environment variable that
    holds it.
    """

    model: str = Field(min_length=1, description="litellm model string, e.g. 'openai/gpt-4o'.")
    api_base: str | None = Field(
        default=None, description="Base URL of an OpenAI-compatible server, e.g. a local one."
    )
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key."
    )
    temperature: float | None = Field(
        default=0.0,
        ge=0.0,
        le=2.0,
        description="Sampling temperature; None sends none. Unset: 0.0, or none for a "
        "reasoning model.",
    )
    max_tokens: int | None = Field(default=None, gt=0, description="Completion token cap.")
    timeout_s: float = Field(
        default=60, gt=0, le=3600, description="Per-attempt timeout in seconds."
    )
    max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries after the first attempt on retryable errors."
    )
    reasoning_effort: ReasoningEffort | None = Field(
        default=None, description="Sent as ``reasoning_effort`` when set (reasoning models)."
    )
    system_role: SystemRole = Field(
        default="system", description="How the system prompt is sent (see SystemRole)."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Further provider parameters, sent as they are."
    )
    context_chars: int | None = Field(
        default=None,
        ge=2000,
        description="Agent history (characters) kept before its window slides by whole turns "
        "(default 120 000); never sent.",
    )
    context_tokens: int | None = Field(
        default=None,
        ge=256,
        le=10_000_000,
        description="The model's context window (tokens; e.g. llama.cpp's n_ctx): prompts are "
        "fitted to it with room for the completion cap; never sent.",
    )
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Requests in flight to this model's endpoint at once, over every client "
        "and role of the process (None: unbounded); never sent.",
    )

    @model_validator(mode="before")
    @classmethod
    def _reasoning_default(cls, data: Any) -> Any:
        if isinstance(data, dict) and "temperature" not in data:
            model = data.get("model")
            if isinstance(model, str) and is_reasoning_model(model):
                return {**data, "temperature": None}
        return data

    @field_validator("extra")
    @classmethod
    def _extra_ok(cls, value: dict[str, Any]) -> dict[str, Any]:
        bad = sorted(RESERVED_EXTRA.intersection(value))
        if bad:
            raise ValueError(f"extra may not set {bad[0]!r} (use its own field)")
        return value

    @field_validator("model")
    @classmethod
    def _model_ok(cls, value: str) -> str:
        if value != value.strip() or any(ch.isspace() for ch in value):
            raise ValueError("model must not contain whitespace")
        if is_offline_name(value):
            raise ValueError(f"'{value}' names an offline implementation, not a model")
        return value

    @field_validator("api_base")
    @classmethod
    def _api_base_ok(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("api_base must start with http:// or https://")
        return value.rstrip("/") if value else value

    @field_validator("api_key_env")
    @classmethod
    def _key_env_ok(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError("api_key_env must be an environment variable name, not a key")
        return value

    @classmethod
    def parse(cls, text: str, **overrides: Any) -> ModelSpec:
        """Parse ``MODEL`` or ``MODEL@API_BASE`` (e.g. ``openai/x@http://127.0.0.1:8000/v1``).

        Only an ``@`` followed by ``http://`` or ``https://`` splits, so provider model names
        that contain ``@`` (``vertex_ai/claude-3-5-sonnet@20240620``) stay intact.

        Args:
            text: The spec string.
            **overrides: Other ModelSpec fields (``api_key_env``, ``timeout_s`` …).

        Returns:
            The validated spec.

        Raises:
            ConfigError: When the string or an override is invalid (names the field).
        """
        model, api_base = text.strip(), None
        match = re.search(r"@(https?://\S+)$", model)
        if match:
            model, api_base = model[: match.start()], match.group(1)
        data: dict[str, Any] = {"model": model, "api_base": api_base}
        data.update(overrides)
        try:
            return cls(**data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ())) or "model"
            raise ConfigError(
                f"{first.get('msg')}: {text!r}", file="model spec", field=loc
            ) from exc

    @property
    def label(self) -> str:
        """A printable name (``model`` or ``model@api_base``); never contains a key."""
        return f"{self.model}@{self.api_base}" if self.api_base else self.model


class ToolCall(Strict):
    """A tool call requested by the model. ``arguments`` is the raw JSON text, as sent."""

    id: str = Field(description="Provider-assigned call id (echoed in the tool reply).")
    name: str = Field(description="Tool (function) name.")
    arguments: str = Field(default="{}", description="Arguments as a JSON string, unparsed.")

    def arguments_dict(self) -> dict[str, Any] | None:
        """Return the arguments as a dict, or None when they are not a JSON object.

        Models sometimes emit truncated or malformed JSON; callers decide what to do.

        >>> ToolCall(id="c", name="f", arguments='{"a": 1').arguments_dict() is None
        True
        """
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def to_openai(self) -> dict[str, Any]:
        """Return the OpenAI wire form (for an assistant message's ``tool_calls``)."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ChatMessage(Strict):
    """One chat message in OpenAI form."""

    role: Literal["system", "user", "assistant", "tool"] = Field(description="Speaker.")
    content: str | None = Field(default=None, description="Text (None for pure tool calls).")
    tool_calls: list[ToolCall] | None = Field(default=None, description="Assistant tool calls.")
    tool_call_id: str | None = Field(default=None, description="For role 'tool': the call id.")
    name: str | None = Field(default=None, description="Optional participant or tool name.")

    def to_openai(self) -> dict[str, Any]:
        """Return the dict litellm expects (unset optional fields omitted)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


class Usage(Strict):
    """Token counts reported by the provider (0 when unknown)."""

    prompt_tokens: int = Field(default=0, ge=0, description="Input tokens.")
    completion_tokens: int = Field(default=0, ge=0, description="Output tokens.")

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.prompt_tokens + self.completion_tokens


class LLMResponse(Strict):
    """What one completion produced, plus accounting."""

    text: str = Field(default="", description="Assistant text ('' when only tool calls).")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Requested calls.")
    usage: Usage = Field(default_factory=Usage, description="Token counts.")
    cost_usd: float = Field(
        default=0.0, ge=0.0, description="Money spent by this call (0.0 when served from cache)."
    )
    cached: bool = Field(default=False, description="Served from the response cache.")
    priced: bool = Field(
        default=True, description="False when the cost map does not know the model (unpriced)."
    )
    model: str = Field(default="", description="The spec's model string.")
    latency_ms: float = Field(default=0.0, ge=0.0, description="Wall time of the call.")
    finish_reason: str | None = Field(default=None, description="Provider's finish reason.")

    def as_message(self) -> dict[str, Any]:
        """Return this reply as an assistant message dict, to append to the conversation."""
        out: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        return out


class LLMStats(StrictMutable):
    """Running totals of a client (snapshot; the client keeps the live copy)."""

    calls: int = Field(default=0, description="complete/acomplete calls that returned.")
    cache_hits: int = Field(default=0, description="Calls answered from the cache.")
    provider_calls: int = Field(default=0, description="Requests sent to the provider.")
    retries: int = Field(default=0, description="Provider requests that were retries.")
    failures: int = Field(default=0, description="Calls that ended in LLMError.")
    deduplicated: int = Field(
        default=0, description="Calls answered by an identical request already in flight."
    )
    prompt_tokens: int = Field(default=0, description="Provider-reported input tokens.")
    completion_tokens: int = Field(default=0, description="Provider-reported output tokens.")
    cost_usd: float = Field(default=0.0, description="Money spent (cache hits cost nothing).")
    truncated: int = Field(
        default=0, description="Provider replies cut at the completion cap (finish 'length')."
    )
    saved_usd: float = Field(default=0.0, description="Original cost of cache hits.")


DeltaCallback = Callable[[str], None]
"""Receives each streamed text fragment as it arrives."""


@runtime_checkable
class ChatModel(Protocol):
    """The narrow interface every model implementation (real or scripted) satisfies."""

    @property
    def spec(self) -> ModelSpec:
        """The model this implementation speaks for."""
        ...

    @property
    def stats(self) -> LLMStats:
        """A snapshot of the running totals."""
        ...

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        namespace: str = "default",
        **params: Any,
    ) -> LLMResponse:
        """Return the model's reply to ``messages``."""
        ...

    def acomplete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        namespace: str = "default",
        **params: Any,
    ) -> Awaitable[LLMResponse]:
        """Async version of :meth:`complete`."""
        ...
