"""The real client: cache, retries and accounting around two transports.

``openai/…@API_BASE`` calls go straight to the OpenAI-compatible endpoint
(:mod:`core.llm.openai_http`); every other provider, streamed replies and litellm-only
parameters go through litellm. Both paths share the cache key, the retry loop, the typed
errors and the cost map.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from core.errors import ConfigError, LLMError
from core.llm import openai_http
from core.llm.cache import ResponseCache, request_payload
from core.llm.env import load_litellm
from core.llm.openai_http import ProviderFailure, direct_eligible
from core.llm.types import (
    ChatMessage,
    DeltaCallback,
    LLMResponse,
    LLMStats,
    ModelSpec,
    ToolCall,
    Usage,
    is_offline_name,
)

LOCAL_PLACEHOLDER_KEY = "sk-no-key-required"
"""Sent to a custom ``api_base`` without ``api_key_env``, so no real key leaks to it."""

MAX_BACKOFF_S = 30.0
RESERVED_PARAMS = frozenset({"api_key", "api_base", "base_url", "model", "messages", "tools"})


class _Attempt(NamedTuple):
    status: int | None
    retryable: bool
    retry_after: float | None


class _Route(NamedTuple):
    """How one call travels: direct (``litellm`` is None) or through litellm."""

    litellm: Any | None
    where: openai_http.Endpoint | None
    body: bytes
    kwargs: dict[str, Any]
    streamed: bool


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


def _classify(exc: BaseException, litellm: Any | None) -> _Attempt:
    """Decide whether a failed attempt is worth retrying.

    Args:
        exc: What the attempt raised.
        litellm: The litellm module when the call went through litellm; None on the direct
            path, where anything but a :class:`ProviderFailure` is a bug, never retried.
    """
    if isinstance(exc, ProviderFailure):
        return _Attempt(exc.status, exc.retryable, exc.retry_after)
    if litellm is None:
        return _Attempt(None, False, None)
    ex = litellm.exceptions
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    retry_after = None
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        try:
            retry_after = float(headers.get("retry-after"))
        except (TypeError, ValueError):
            retry_after = None
    if isinstance(exc, ex.Timeout):
        return _Attempt(status or 408, True, retry_after)
    if isinstance(exc, ex.RateLimitError):
        return _Attempt(429, True, retry_after)
    if isinstance(exc, (ex.BadRequestError, ex.AuthenticationError, ex.NotFoundError)):
        return _Attempt(status, False, None)
    if isinstance(exc, ex.APIConnectionError) and status is None:
        return _Attempt(None, True, retry_after)
    if status is not None:
        return _Attempt(status, status in (408, 409, 425, 429) or status >= 500, retry_after)
    return _Attempt(None, isinstance(exc, (ex.APIConnectionError, ex.APIError)), retry_after)


_UNPRICED: set[str] = set()
"""Models the local cost map does not know (their cost is 0.0); skips repeated failed lookups."""

_PRICE_CHECKED: set[str] = set()
_PRICE_LOCK = threading.Lock()


def _ensure_priced(litellm: Any, model: str) -> None:
    """Give a model the local cost map does not know an explicit zero price, once.

    litellm prices every response; for an unmapped model (a local server's model) it searches
    its whole cost map for a near match on every call, which costs more CPU than the rest of
    the call. A zero-price entry makes that lookup direct; the cost stays 0.0 as before.
    """
    if model in _PRICE_CHECKED:
        return
    with _PRICE_LOCK:
        if model in _PRICE_CHECKED:
            return
        _PRICE_CHECKED.add(model)
        try:
            litellm.get_model_info(model)
            return  # priced (or at least mapped): leave litellm's entry alone
        except Exception:  # noqa: BLE001 - unmapped models raise; anything else: same treatment
            pass
        try:
            provider = litellm.get_llm_provider(model)[1]
            litellm.register_model(
                {
                    model: {
                        "input_cost_per_token": 0.0,
                        "output_cost_per_token": 0.0,
                        "litellm_provider": provider,
                        "mode": "chat",
                    }
                }
            )
            _UNPRICED.add(model)
        except Exception:  # noqa: BLE001 - pricing is an optimisation; never fail a call on it
            return


def _cost(litellm: Any, raw: Any, model: str) -> float:
    """Cost from litellm's local cost map; 0.0 for models it does not know."""
    hidden = getattr(raw, "_hidden_params", None)
    value: Any = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if value is None and model not in _UNPRICED:
        try:
            value = litellm.completion_cost(completion_response=raw)
        except Exception:  # unknown/local models are not in the cost map
            _UNPRICED.add(model)
    try:
        cost = float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0
    return cost if math.isfinite(cost) and cost > 0 else 0.0


def _parse(litellm: Any, spec: ModelSpec, raw: Any, latency_ms: float) -> LLMResponse:
    choices = getattr(raw, "choices", None) or []
    text, calls, finish = "", [], None
    if choices:
        choice = choices[0]
        finish = getattr(choice, "finish_reason", None)
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None) or ""
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            calls.append(
                ToolCall(
                    id=getattr(call, "id", None) or f"call_{index}",
                    name=getattr(function, "name", None) or "",
                    arguments=getattr(function, "arguments", None) or "",
                )
            )
    usage = getattr(raw, "usage", None)
    return LLMResponse(
        text=text if isinstance(text, str) else str(text),
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
        cost_usd=_cost(litellm, raw, spec.model),
        cached=False,
        model=spec.model,
        latency_ms=latency_ms,
        finish_reason=finish if isinstance(finish, str) else None,
    )


class LLMClient:
    """The real model client: cache → transport (direct or litellm, with retries) → response.

    Args:
        spec: Which model to call and how.
        cache: Optional response cache; identical requests are then served from it.
        retry_backoff_s: First backoff; doubles each retry (capped at 30 s, jittered per
            request so concurrent callers spread out).
    """

    def __init__(
        self, spec: ModelSpec, cache: ResponseCache | None = None, retry_backoff_s: float = 0.5
    ) -> None:
        self._spec = spec
        self.cache = cache
        self.retry_backoff_s = retry_backoff_s
        self._stats = LLMStats()
        self._stats_lock = threading.Lock()

    @property
    def spec(self) -> ModelSpec:
        """The model this client calls."""
        return self._spec

    @property
    def stats(self) -> LLMStats:
        """A snapshot of the running totals."""
        with self._stats_lock:
            return self._stats.model_copy()

    def __repr__(self) -> str:
        where = self.cache.path if self.cache is not None else None
        return f"LLMClient({self._spec.label!r}, cache={where})"

    # -- building the call ---------------------------------------------------------------
    def _api_key(self) -> str | None:
        spec = self._spec
        if spec.api_key_env:
            value = os.environ.get(spec.api_key_env)
            if not value:
                raise LLMError(
                    f"environment variable {spec.api_key_env} (api_key_env) is not set",
                    model=spec.label,
                    retryable=False,
                )
            return value
        return LOCAL_PLACEHOLDER_KEY if spec.api_base else None

    def _prepare(
        self,
        messages: Sequence[Mapping[str, Any] | ChatMessage],
        tools: list[dict[str, Any]] | None,
        namespace: str,
        params: dict[str, Any],
    ) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
        bad = RESERVED_PARAMS.intersection(params)
        if bad:
            raise ConfigError(
                "pass models and endpoints through ModelSpec; keys come from the environment",
                file="LLMClient.complete",
                field=sorted(bad)[0],
            )
        msgs = normalize_messages(messages)
        request = request_payload(self._spec, msgs, tools, params, namespace)
        key = (
            ResponseCache.key_for(self._spec, msgs, tools, params, namespace)
            if self.cache is not None
            else None
        )
        return msgs, request, key

    def _kwargs(
        self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]] | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        spec = self._spec
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": msgs,
            "temperature": spec.temperature,
            "timeout": spec.timeout_s,
            # our own loop retries; litellm and the openai SDK must not retry underneath it
            "num_retries": 0,
            "max_retries": 0,
        }
        if spec.max_tokens is not None:
            kwargs["max_tokens"] = spec.max_tokens
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        key = self._api_key()
        if key is not None:
            kwargs["api_key"] = key
        if tools:
            kwargs["tools"] = tools
        kwargs.update(params)
        return kwargs

    def _from_cache(self, key: str | None, started: float) -> LLMResponse | None:
        if self.cache is None or key is None:
            return None
        entry = self.cache.get(key)
        if entry is None:
            return None
        hit = entry.response.model_copy(
            update={
                "cached": True,
                "cost_usd": 0.0,
                "latency_ms": (time.perf_counter() - started) * 1000,
            }
        )
        with self._stats_lock:
            self._stats.calls += 1
            self._stats.cache_hits += 1
            self._stats.saved_usd += entry.response.cost_usd
        return hit

    def _store(self, key: str | None, request: dict[str, Any], resp: LLMResponse) -> None:
        # An empty completion is usually a provider glitch; do not pin it for future runs.
        if self.cache is not None and key is not None and (resp.text or resp.tool_calls):
            self.cache.put(
                key,
                model=self._spec.model,
                namespace=str(request["namespace"]),
                request=request,
                response=resp,
            )

    def _account(self, resp: LLMResponse) -> None:
        with self._stats_lock:
            self._stats.calls += 1
            self._stats.prompt_tokens += resp.usage.prompt_tokens
            self._stats.completion_tokens += resp.usage.completion_tokens
            self._stats.cost_usd += resp.cost_usd

    def _attempt_failed(
        self, exc: Exception, litellm: Any | None, attempt: int, key: str | None
    ) -> float:
        """Return seconds to sleep before retrying, or raise the final LLMError."""
        info = _classify(exc, litellm)
        if info.retryable and attempt < self._spec.max_retries:
            with self._stats_lock:
                self._stats.retries += 1
            base = self.retry_backoff_s * (2.0**attempt)
            spread = 0.5 + 0.5 * (int((key or "8000")[:4], 16) / 0xFFFF)
            delay = base * spread
            if info.retry_after is not None:
                delay = max(delay, info.retry_after)
            return min(delay, MAX_BACKOFF_S)
        with self._stats_lock:
            self._stats.failures += 1
        detail = f"{type(exc).__name__}: {exc}"
        secret = self._secret()
        if secret:
            detail = detail.replace(secret, "***")
        tries = attempt + 1
        raise LLMError(
            f"{detail[:500]} (after {tries} attempt{'s' if tries > 1 else ''})",
            model=self._spec.label,
            status=info.status,
            retryable=info.retryable,
        ) from None

    def _secret(self) -> str | None:
        env = self._spec.api_key_env
        return os.environ.get(env) if env else None

    def _count_provider_call(self) -> None:
        with self._stats_lock:
            self._stats.provider_calls += 1

    def warm(self) -> None:
        """Load what every call will need (litellm and the model's price), e.g. before forking."""
        litellm = load_litellm()
        if direct_eligible(self._spec, {}, False):
            openai_http.price(self._spec.model)
        else:
            _ensure_priced(litellm, self._spec.model)

    # -- transports --------------------------------------------------------------------------
    def _route(
        self,
        msgs: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        streamed: bool,
    ) -> _Route:
        """Choose the direct path or litellm for one call and prepare what it sends."""
        if direct_eligible(self._spec, params, streamed):
            where = openai_http.endpoint(self._spec, self._api_key(), params)
            body = openai_http.request_body(self._spec, msgs, tools, params)
            return _Route(None, where, body, {}, streamed)
        litellm = load_litellm()
        _ensure_priced(litellm, self._spec.model)
        return _Route(litellm, None, b"", self._kwargs(msgs, tools, params), streamed)

    def _send(
        self, route: _Route, msgs: list[dict[str, Any]], on_delta: DeltaCallback | None
    ) -> Any:
        """One attempt, blocking; returns the raw reply of the route's transport."""
        if route.litellm is None:
            assert route.where is not None
            return openai_http.post(route.where, route.body)
        if route.streamed:
            return self._stream_sync(route.litellm, route.kwargs, msgs, on_delta)
        return route.litellm.completion(**route.kwargs)

    async def _asend(
        self, route: _Route, msgs: list[dict[str, Any]], on_delta: DeltaCallback | None
    ) -> Any:
        """One attempt on the running event loop (see :meth:`_send`)."""
        if route.litellm is None:
            assert route.where is not None
            return await openai_http.apost(route.where, route.body)
        if route.streamed:
            return await self._stream_async(route.litellm, route.kwargs, msgs, on_delta)
        return await route.litellm.acompletion(**route.kwargs)

    def _reply(self, route: _Route, raw: Any, started: float) -> LLMResponse:
        latency_ms = (time.perf_counter() - started) * 1000
        if route.litellm is None:
            return openai_http.parse_reply(self._spec, raw, latency_ms)
        return _parse(route.litellm, self._spec, raw, latency_ms)

    # -- public API ------------------------------------------------------------------------
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
        """Return the model's reply, from the cache when this exact request was seen.

        Args:
            messages: OpenAI-form message dicts (or :class:`ChatMessage`).
            tools: OpenAI-form tool definitions.
            namespace: Cache namespace; change it to force fresh samples.
            stream: Stream the reply (text fragments go to ``on_delta`` as they arrive); the
                returned response is the assembled whole either way.
            on_delta: Receives streamed text fragments (the whole text once on a cache hit).
            **params: Extra litellm parameters (e.g. ``top_p``, ``seed``, ``mock_response``).

        Returns:
            The reply with usage, cost and latency.

        Raises:
            LLMError: After ``spec.max_retries`` retries on retryable errors (429, 5xx,
                timeouts, connection errors), or at once on others (400, 401, 404).
            ConfigError: When ``params`` try to set the model, endpoint or key.
        """
        started = time.perf_counter()
        msgs, request, key = self._prepare(messages, tools, namespace, params)
        hit = self._from_cache(key, started)
        if hit is not None:
            if on_delta is not None and hit.text:
                on_delta(hit.text)
            return hit
        route = self._route(msgs, tools, params, stream or on_delta is not None)
        attempt = 0
        while True:
            self._count_provider_call()
            try:
                raw = self._send(route, msgs, on_delta)
                break
            except Exception as exc:  # provider failures become LLMError below
                delay = self._attempt_failed(exc, route.litellm, attempt, key)
                attempt += 1
                time.sleep(delay)
        resp = self._reply(route, raw, started)
        self._store(key, request, resp)
        self._account(resp)
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
        """Async :meth:`complete` (same cache, retries and errors) for asyncio sweeps."""
        started = time.perf_counter()
        msgs, request, key = self._prepare(messages, tools, namespace, params)
        if self.cache is not None:
            hit = await asyncio.to_thread(self._from_cache, key, started)
            if hit is not None:
                if on_delta is not None and hit.text:
                    on_delta(hit.text)
                return hit
        route = self._route(msgs, tools, params, stream or on_delta is not None)
        attempt = 0
        while True:
            self._count_provider_call()
            try:
                raw = await self._asend(route, msgs, on_delta)
                break
            except Exception as exc:  # provider failures become LLMError below
                delay = self._attempt_failed(exc, route.litellm, attempt, key)
                attempt += 1
                await asyncio.sleep(delay)
        resp = self._reply(route, raw, started)
        if self.cache is not None:
            await asyncio.to_thread(self._store, key, request, resp)
        self._account(resp)
        return resp

    # -- streaming ---------------------------------------------------------------------------
    @staticmethod
    def _stream_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
        out = dict(kwargs, stream=True)
        out.setdefault("stream_options", {"include_usage": True})
        return out

    def _stream_sync(
        self,
        litellm: Any,
        kwargs: dict[str, Any],
        msgs: list[dict[str, Any]],
        on_delta: DeltaCallback | None,
    ) -> Any:
        chunks = []
        for chunk in litellm.completion(**self._stream_kwargs(kwargs)):
            chunks.append(chunk)
            _emit(chunk, on_delta)
        return litellm.stream_chunk_builder(chunks, messages=msgs)

    async def _stream_async(
        self,
        litellm: Any,
        kwargs: dict[str, Any],
        msgs: list[dict[str, Any]],
        on_delta: DeltaCallback | None,
    ) -> Any:
        chunks = []
        async for chunk in await litellm.acompletion(**self._stream_kwargs(kwargs)):
            chunks.append(chunk)
            _emit(chunk, on_delta)
        return litellm.stream_chunk_builder(chunks, messages=msgs)


def _emit(chunk: Any, on_delta: DeltaCallback | None) -> None:
    if on_delta is None:
        return
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        text = getattr(delta, "content", None)
        if isinstance(text, str) and text:
            on_delta(text)


def make_client(spec: str | ModelSpec, cache_path: Path | None = None) -> LLMClient:
    """Build the client for a model spec, in one place.

    Args:
        spec: A :class:`ModelSpec` or a string ``MODEL`` / ``MODEL@API_BASE``.
        cache_path: SQLite file for the response cache (may be the main store's file);
            None disables caching.

    Returns:
        A ready client. Nothing is imported or contacted until the first call.

    Raises:
        ConfigError: When the spec is invalid or names an offline implementation.
    """
    if isinstance(spec, str):
        if is_offline_name(spec):
            raise ConfigError(
                f"'{spec}' is an offline implementation, not a language model",
                file="model spec",
                field="model",
            )
        spec = ModelSpec.parse(spec)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return LLMClient(spec, cache=cache)
