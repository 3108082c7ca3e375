"""The real client: cache, retries and accounting around two transports.

``openai/…@API_BASE`` calls go straight to the OpenAI-compatible endpoint
(:mod:`core.llm.openai_http`); every other provider, streamed replies and litellm-only
parameters go through litellm. Both paths share the cache key, the retry loop, the typed
errors and the cost map.

Failure semantics (shared by every role: agent, voice, interpreter, judges, writer, extractors):

* a malformed provider reply (not JSON, an error body, no choices, no text and no tool calls,
  non-text content, broken tool calls, lone surrogates) is a *provider* fault: retried like a
  5xx, then an :class:`~core.errors.LLMError` — never a reply the caller must interpret;
* ``Retry-After`` is honoured up to :data:`MAX_RETRY_AFTER_S`; a longer wait raises
  :class:`ProviderUnavailable` at once (the runner pauses the run, resumably);
* a :class:`CircuitBreaker` per client opens after :data:`BREAKER_THRESHOLD` consecutive failed
  attempts; while open every call raises :class:`ProviderUnavailable` without contacting the
  provider (so a hanging provider costs a bounded time, not minutes per episode);
* every error text and reply is redacted of every key the process knows
  (:mod:`core.llm.secrets`) before it leaves this module;
* identical requests in flight at the same time share one provider call.
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
from core.llm import ledger as cost_ledger
from core.llm import openai_http
from core.llm.budget import reserve_for
from core.llm.cache import ResponseCache, request_payload
from core.llm.env import load_litellm, provider_key_var
from core.llm.models import current_config, resolve_spec
from core.llm.openai_http import ProviderBadReply, ProviderFailure, direct_eligible
from core.llm.reply_limits import check_reply
from core.llm.secrets import known_secrets, redact
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
"""Longest own backoff between two attempts."""

MAX_RETRY_AFTER_S = 120.0
"""Longest ``Retry-After`` honoured; a provider asking for more pauses the run instead."""

BREAKER_THRESHOLD = 8
"""Consecutive failed attempts (any call of one client) that open its circuit breaker."""

BREAKER_COOLDOWN_S = 30.0
"""How long an open breaker refuses calls before letting one through again."""

RESERVED_PARAMS = frozenset({"api_key", "api_base", "base_url", "model", "messages", "tools"})

_NOT_PROVIDER_DOWN = frozenset({400, 404, 413, 422})
"""Statuses about one request (too long, bad parameter), not about the provider's health."""


class ProviderUnavailable(LLMError):
    """The provider is unusable for now: its breaker is open, or it asked to wait too long.

    The runner stops the sweep (status ``paused``) instead of failing episode after episode;
    the episode in flight ends as an ERROR and is played again on resume.
    """


class CircuitBreaker:
    """Opens after ``threshold`` consecutive failed attempts; closes on the next success.

    While open (for ``cooldown_s`` after the last failure) :meth:`check` raises
    :class:`ProviderUnavailable`; then one call may try again (half-open).
    """

    def __init__(
        self, threshold: int = BREAKER_THRESHOLD, cooldown_s: float = BREAKER_COOLDOWN_S
    ) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until = 0.0
        self.last_error = ""

    @property
    def is_open(self) -> bool:
        """Whether calls are refused now."""
        with self._lock:
            return self._failures >= self.threshold and time.monotonic() < self._open_until

    def check(self, model: str) -> None:
        """Raise :class:`ProviderUnavailable` while the breaker is open."""
        if self.threshold > 0 and self.is_open:
            raise ProviderUnavailable(
                f"the provider failed {self._failures} times in a row (last: "
                f"{self.last_error[:200]}); circuit breaker open — the run pauses, resume it "
                "once the provider is back",
                model=model,
                retryable=True,
            )

    def success(self) -> None:
        """Record a successful attempt (closes the breaker)."""
        with self._lock:
            self._failures = 0
            self._open_until = 0.0

    def failure(self, detail: str) -> None:
        """Record a failed attempt."""
        with self._lock:
            self._failures += 1
            self.last_error = detail
            if self._failures >= self.threshold:
                self._open_until = time.monotonic() + self.cooldown_s


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
    """A litellm reply as an :class:`LLMResponse`, checked as strictly as the direct path's.

    Raises:
        ProviderBadReply: No choice, no text and no tool calls, non-text content or broken
            tool calls.
    """
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ProviderBadReply("no choices")
    choice = choices[0]
    finish = getattr(choice, "finish_reason", None)
    message = getattr(choice, "message", None)
    if message is None:
        raise ProviderBadReply("the first choice has no message")
    text = openai_http.check_text(getattr(message, "content", None), "content")
    calls: list[ToolCall] = []
    raw_calls = getattr(message, "tool_calls", None)
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise ProviderBadReply("tool_calls is not a list")
    for index, call in enumerate(raw_calls or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise ProviderBadReply(f"tool call {index} has no function name")
        args = getattr(function, "arguments", None)
        calls.append(
            ToolCall(
                id=getattr(call, "id", None) or f"call_{index}",
                name=openai_http.check_text(name, "tool name"),
                arguments=openai_http.check_text(args or "", "tool arguments"),
            )
        )
    openai_http.check_completion(text, calls)
    usage = getattr(raw, "usage", None)
    return LLMResponse(
        text=text,
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
        cost_usd=_cost(litellm, raw, spec.model),
        cached=False,
        priced=spec.model not in _UNPRICED and openai_http.priced(spec.model),
        model=spec.model,
        latency_ms=latency_ms,
        finish_reason=finish if isinstance(finish, str) else None,
    )


def _supports(litellm: Any, model: str, param: str) -> bool:
    """Whether litellm says the model's provider takes ``param`` (unknown: assume yes)."""
    try:
        supported = litellm.get_supported_openai_params(model=model)
    except Exception:  # noqa: BLE001 - an unknown provider: let the provider decide
        return True
    return supported is None or param in supported


class _Pending:
    """A provider call in flight that identical requests wait for (sync callers)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: LLMResponse | None = None
        self.error: BaseException | None = None


class LLMClient:
    """The real model client: cache → transport (direct or litellm, with retries) → response.

    Args:
        spec: Which model to call and how.
        cache: Optional response cache; identical requests are then served from it.
        retry_backoff_s: First backoff; doubles each retry (capped at 30 s, jittered per
            request so concurrent callers spread out).
        role: What the calls are for, in the cost ledger (:data:`core.llm.ledger.ROLES`).
        read_cache: False (``--no-cache``): never answer from the cache; fresh answers still
            replace the cached ones.
        breaker: The circuit breaker (default: one of this client's own).
    """

    def __init__(
        self,
        spec: ModelSpec,
        cache: ResponseCache | None = None,
        retry_backoff_s: float = 0.5,
        *,
        role: str = "agent",
        read_cache: bool = True,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._spec = spec
        self.cache = cache
        self.retry_backoff_s = retry_backoff_s
        self.role = role
        self.read_cache = read_cache
        self.breaker = breaker or CircuitBreaker()
        self.ledger = cost_ledger.CostLedger()
        self._stats = LLMStats()
        self._stats_lock = threading.Lock()
        self._inflight: dict[str, _Pending] = {}
        self._ainflight: dict[tuple[int, str], asyncio.Future[LLMResponse]] = {}
        self._inflight_lock = threading.Lock()

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
        return f"LLMClient({self._spec.label!r}, role={self.role!r}, cache={where})"

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without locks and in-flight calls (Ray ships the client to its workers)."""
        state = dict(self.__dict__)
        for name in ("_stats_lock", "_inflight", "_ainflight", "_inflight_lock"):
            state.pop(name, None)
        state["breaker"] = None
        state["ledger"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._stats_lock = threading.Lock()
        self._inflight, self._ainflight = {}, {}
        self._inflight_lock = threading.Lock()
        self.breaker = CircuitBreaker()
        self.ledger = cost_ledger.CostLedger()

    # -- building the call ---------------------------------------------------------------
    def _api_key(self) -> str | None:
        """The key to send: ``api_key_env``'s value, else the provider's usual variable's.

        A custom ``api_base`` with neither gets a placeholder (OpenAI-compatible servers
        without auth still expect an ``Authorization`` header).
        """
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
        var = provider_key_var(spec.model)
        if var and os.environ.get(var):
            return os.environ[var]
        return LOCAL_PLACEHOLDER_KEY if spec.api_base else None

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        bad = RESERVED_PARAMS.intersection(params)
        if bad:
            raise ConfigError(
                "pass models and endpoints through ModelSpec; keys come from the environment",
                file="LLMClient.complete",
                field=sorted(bad)[0],
            )
        return params

    def _prepare(
        self,
        messages: Sequence[Mapping[str, Any] | ChatMessage],
        tools: list[dict[str, Any]] | None,
        namespace: str,
        params: dict[str, Any],
    ) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
        self._params(params)
        msgs = apply_system_role(normalize_messages(messages), self._spec.system_role)
        request = request_payload(self._spec, msgs, tools, params, namespace)
        key = ResponseCache.key_for(self._spec, msgs, tools, params, namespace)
        return msgs, request, key

    def _kwargs(
        self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]] | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        spec = self._spec
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": msgs,
            "timeout": spec.timeout_s,
            # our own loop retries; litellm and the openai SDK must not retry underneath it
            "num_retries": 0,
            "max_retries": 0,
        }
        kwargs.update(openai_http.sampling_params(spec))
        if spec.extra:  # sent as they are, as on the direct path (litellm would refuse some)
            kwargs["allowed_openai_params"] = sorted(spec.extra)
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        key = self._api_key()
        if key is not None:
            kwargs["api_key"] = key
        if tools:
            kwargs["tools"] = tools
        kwargs.update(params)
        if "seed" in kwargs and not _supports(load_litellm(), spec.model, "seed"):
            kwargs.pop("seed")  # still part of the cache key; the provider would refuse it
        return kwargs

    # -- accounting --------------------------------------------------------------------------
    def _record(self, resp: LLMResponse) -> None:
        """Put one answered call in this client's ledger and the context's (see ledger)."""
        role = cost_ledger.role_override() or self.role
        for book in (self.ledger, cost_ledger.current()):
            if book is not None:
                book.add(
                    role,
                    cost_usd=resp.cost_usd,
                    prompt_tokens=resp.usage.prompt_tokens,
                    completion_tokens=resp.usage.completion_tokens,
                    cached=resp.cached,
                    priced=resp.priced,
                )

    def _from_cache(self, key: str, started: float) -> LLMResponse | None:
        if self.cache is None or not self.read_cache:
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
        self._record(hit)
        return hit

    def _store(self, key: str, request: dict[str, Any], resp: LLMResponse) -> None:
        if self.cache is not None:
            self.cache.put(
                key,
                model=self._spec.model,
                namespace=str(request["namespace"]),
                request=request,
                response=resp,
                replace=not self.read_cache,
            )

    def _account(self, resp: LLMResponse) -> None:
        with self._stats_lock:
            self._stats.calls += 1
            self._stats.prompt_tokens += resp.usage.prompt_tokens
            self._stats.completion_tokens += resp.usage.completion_tokens
            self._stats.cost_usd += resp.cost_usd
        self._record(resp)

    def _shared(self, resp: LLMResponse, started: float) -> LLMResponse:
        """What a caller that waited for an identical in-flight request receives."""
        out = resp.model_copy(
            update={
                "cached": True,
                "cost_usd": 0.0,
                "latency_ms": (time.perf_counter() - started) * 1000,
            }
        )
        with self._stats_lock:
            self._stats.calls += 1
            self._stats.deduplicated += 1
        self._record(out)
        return out

    def _redact(self, text: str) -> str:
        secrets = known_secrets()
        own = self._secret()
        if own and own not in secrets:
            secrets.append(own)
        return redact(text, secrets)

    def _attempt_failed(self, exc: Exception, litellm: Any | None, attempt: int, key: str) -> float:
        """Return seconds to sleep before retrying, or raise the final LLMError."""
        info = _classify(exc, litellm)
        detail = self._redact(f"{type(exc).__name__}: {exc}")
        if info.status not in _NOT_PROVIDER_DOWN:
            self.breaker.failure(detail)
        if info.retry_after is not None and info.retry_after > MAX_RETRY_AFTER_S:
            with self._stats_lock:
                self._stats.failures += 1
            raise ProviderUnavailable(
                f"the provider asked to wait {info.retry_after:g}s (Retry-After), more than "
                f"the {MAX_RETRY_AFTER_S:g}s limit; the run pauses — resume it later "
                f"({detail[:200]})",
                model=self._spec.label,
                status=info.status,
                retryable=True,
            ) from None
        if info.retryable and attempt < self._spec.max_retries:
            with self._stats_lock:
                self._stats.retries += 1
            base = self.retry_backoff_s * (2.0**attempt)
            spread = 0.5 + 0.5 * (int(key[:4], 16) / 0xFFFF)
            delay = min(base * spread, MAX_BACKOFF_S)
            if info.retry_after is not None:
                delay = max(delay, info.retry_after)
            return delay
        with self._stats_lock:
            self._stats.failures += 1
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
        self.breaker.check(self._spec.label)
        with self._stats_lock:
            self._stats.provider_calls += 1

    def _clean(self, resp: LLMResponse) -> LLMResponse:
        """The reply with any known key redacted (a provider may echo it in a completion).

        An oversized text or unbelievable usage is a provider fault (reply_limits).
        """
        check_reply(resp.text, resp.usage.prompt_tokens, resp.usage.completion_tokens)
        text = self._redact(resp.text)
        return resp if text == resp.text else resp.model_copy(update={"text": text})

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
            resp = openai_http.parse_reply(self._spec, raw, latency_ms)
        else:
            resp = _parse(route.litellm, self._spec, raw, latency_ms)
        return self._clean(resp)

    def _provider_call(
        self,
        msgs: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        request: dict[str, Any],
        key: str,
        streamed: bool,
        on_delta: DeltaCallback | None,
        started: float,
    ) -> LLMResponse:
        route = self._route(msgs, tools, params, streamed)
        attempt = 0
        while True:
            self._count_provider_call()
            try:
                resp = self._reply(route, self._send(route, msgs, on_delta), started)
                break
            except Exception as exc:  # provider failures become LLMError below
                delay = self._attempt_failed(exc, route.litellm, attempt, key)
                attempt += 1
                time.sleep(delay)
        self.breaker.success()
        self._store(key, request, resp)
        self._account(resp)
        return resp

    async def _aprovider_call(
        self,
        msgs: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        request: dict[str, Any],
        key: str,
        streamed: bool,
        on_delta: DeltaCallback | None,
        started: float,
    ) -> LLMResponse:
        route = self._route(msgs, tools, params, streamed)
        attempt = 0
        while True:
            self._count_provider_call()
            try:
                resp = self._reply(route, await self._asend(route, msgs, on_delta), started)
                break
            except Exception as exc:  # provider failures become LLMError below
                delay = self._attempt_failed(exc, route.litellm, attempt, key)
                attempt += 1
                await asyncio.sleep(delay)
        self.breaker.success()
        if self.cache is not None:
            await asyncio.to_thread(self._store, key, request, resp)
        self._account(resp)
        return resp

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
                timeouts, connection errors, malformed replies), or at once on others (400,
                401, 404); :class:`ProviderUnavailable` when the breaker is open or the
                provider asks to wait longer than :data:`MAX_RETRY_AFTER_S`.
            ConfigError: When ``params`` try to set the model, endpoint or key.
        """
        started = time.perf_counter()
        msgs, request, key = self._prepare(messages, tools, namespace, params)
        hit = self._from_cache(key, started)
        if hit is not None:
            if on_delta is not None and hit.text:
                on_delta(hit.text)
            return hit
        streamed = stream or on_delta is not None
        with self._inflight_lock:
            pending = self._inflight.get(key)
            leader = pending is None
            if pending is None:
                pending = self._inflight[key] = _Pending()
        if not leader:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            assert pending.result is not None
            return self._shared(pending.result, started)
        try:
            with reserve_for(self._spec, msgs, params) as claim:  # --max-cost, before the call
                resp = self._provider_call(
                    msgs, tools, params, request, key, streamed, on_delta, started
                )
                claim.actual = resp.cost_usd
            pending.result = resp
            return resp
        except BaseException as exc:
            pending.error = exc
            raise
        finally:
            with self._inflight_lock:
                self._inflight.pop(key, None)
            pending.done.set()

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
        """Async :meth:`complete` (same cache, retries, errors and in-flight sharing)."""
        started = time.perf_counter()
        msgs, request, key = self._prepare(messages, tools, namespace, params)
        if self.cache is not None and self.read_cache:
            hit = await asyncio.to_thread(self._from_cache, key, started)
            if hit is not None:
                if on_delta is not None and hit.text:
                    on_delta(hit.text)
                return hit
        streamed = stream or on_delta is not None
        loop = asyncio.get_running_loop()
        slot = (id(loop), key)
        waiting = self._ainflight.get(slot)
        if waiting is not None:
            resp = await asyncio.shield(waiting)
            return self._shared(resp, started)
        fut: asyncio.Future[LLMResponse] = loop.create_future()
        self._ainflight[slot] = fut
        try:
            with reserve_for(self._spec, msgs, params) as claim:  # --max-cost, before the call
                resp = await self._aprovider_call(
                    msgs, tools, params, request, key, streamed, on_delta, started
                )
                claim.actual = resp.cost_usd
            fut.set_result(resp)
            return resp
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                fut.cancel()
            else:
                fut.set_exception(exc)
                fut.exception()  # retrieved: no "never retrieved" warning without followers
            raise
        finally:
            self._ainflight.pop(slot, None)

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


def make_client(
    spec: str | ModelSpec | None,
    cache_path: Path | None = None,
    *,
    role: str = "agent",
    **overrides: Any,
) -> LLMClient:
    """Build the client for a model spec and role, in one place.

    The spec's settings come from the models file when it names this model (or, with
    ``spec=None``, from the file's entry for ``role``); ``--api-key-env`` and ``--no-cache``
    (:func:`core.llm.models.configure`) apply to every client.

    Args:
        spec: A :class:`ModelSpec`, a string ``MODEL`` / ``MODEL@API_BASE``, or None.
        cache_path: SQLite file for the response cache (may be the main store's file);
            None disables caching.
        role: What the calls are for (cost ledger; models-file entry).
        **overrides: Spec fields that win over everything (``timeout_s``, ``max_retries`` …).

    Returns:
        A ready client. Nothing is imported or contacted until the first call.

    Raises:
        ConfigError: When the spec is invalid or names an offline implementation.
    """
    if isinstance(spec, str) and is_offline_name(spec):
        raise ConfigError(
            f"'{spec}' is an offline implementation, not a language model",
            file="model spec",
            field="model",
        )
    resolved = resolve_spec(spec, role, **overrides)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return LLMClient(resolved, cache=cache, role=role, read_cache=not current_config().no_cache)
