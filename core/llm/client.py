"""The real client: cache, in-flight sharing, limits and accounting around two transports.

A call goes: response cache → identical request already in flight? → the endpoint's
concurrency gate (:mod:`core.llm.endpoints`) → the transport (:mod:`core.llm.transport`:
direct HTTP for ``openai/…@API_BASE``, else litellm) inside the retry loop
(:mod:`core.llm.retry`, the same loop for blocking and async calls) → accounting (the cost
ledger, the endpoint's speed meter).

Failure semantics (shared by every role: agent, voice, interpreter, judges, writer, extractors):

* a malformed provider reply (not JSON, an error body, no choices, no text and no tool calls,
  non-text content, broken tool calls, lone surrogates) is a *provider* fault: retried like a
  5xx, then an :class:`~core.errors.LLMError` — never a reply the caller must interpret;
* a prompt that does not fit the model's context raises :class:`ContextOverflow` (never
  retried as it is; the agent slides its window and asks again);
* ``Retry-After`` and the circuit breaker: see :mod:`core.llm.retry`;
* every call carries a completion cap (the spec's ``max_tokens``, else the role's default,
  :func:`core.llm.models.completion_cap`) and a per-attempt timeout scaled to it
  (:func:`core.llm.endpoints.timeout_for`);
* every error text and reply is redacted of every key the process knows
  (:mod:`core.llm.secrets`) before it leaves this module.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from core.errors import ConfigError, LLMError
from core.llm import ledger as cost_ledger
from core.llm import openai_http, transport
from core.llm.budget import reserve_for
from core.llm.cache import ResponseCache, request_payload
from core.llm.endpoints import Endpoint, endpoint_for, timeout_for
from core.llm.env import load_litellm, provider_key_var
from core.llm.messages import apply_system_role, normalize_messages
from core.llm.models import current_config, resolve_spec, with_completion_cap
from core.llm.openai_http import direct_eligible
from core.llm.prices import ensure_priced
from core.llm.reply_limits import check_reply
from core.llm.retry import (
    BREAKER_COOLDOWN_S,
    BREAKER_THRESHOLD,
    MAX_BACKOFF_S,
    MAX_RETRY_AFTER_S,
    CircuitBreaker,
    ContextOverflow,
    ProviderUnavailable,
    RetryPolicy,
    attempts,
)
from core.llm.secrets import known_secrets, redact
from core.llm.types import ChatMessage, DeltaCallback, LLMResponse, LLMStats, ModelSpec
from core.llm.types import is_offline_name as is_offline_name

__all__ = [
    "BREAKER_COOLDOWN_S",
    "BREAKER_THRESHOLD",
    "LOCAL_PLACEHOLDER_KEY",
    "MAX_BACKOFF_S",
    "MAX_RETRY_AFTER_S",
    "CircuitBreaker",
    "ContextOverflow",
    "LLMClient",
    "ProviderUnavailable",
    "apply_system_role",
    "make_client",
    "normalize_messages",
]

LOCAL_PLACEHOLDER_KEY = "sk-no-key-required"
"""Sent to a custom ``api_base`` without ``api_key_env``, so no real key leaks to it."""

RESERVED_PARAMS = frozenset({"api_key", "api_base", "base_url", "model", "messages", "tools"})


class _Pending:
    """A provider call in flight that identical requests wait for (sync callers)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: LLMResponse | None = None
        self.error: BaseException | None = None


class LLMClient:
    """The real model client: cache → gate → transport (with retries) → response.

    Args:
        spec: Which model to call and how (a spec without ``max_tokens`` gets the role's
            completion cap).
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
        self._spec = with_completion_cap(spec, role)
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

    @property
    def endpoint(self) -> Endpoint:
        """This process's state of the model's endpoint (gate, measured speed)."""
        return endpoint_for(self._spec)

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

    def _prepare(
        self,
        messages: Sequence[Mapping[str, Any] | ChatMessage],
        tools: list[dict[str, Any]] | None,
        namespace: str,
        params: dict[str, Any],
    ) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
        bad = RESERVED_PARAMS.intersection(params)
        if bad:
            raise ConfigError(
                "pass models and endpoints through ModelSpec; keys come from the environment",
                file="LLMClient.complete",
                field=sorted(bad)[0],
            )
        msgs = apply_system_role(normalize_messages(messages), self._spec.system_role)
        request = request_payload(self._spec, msgs, tools, params, namespace)
        key = ResponseCache.key_for(self._spec, msgs, tools, params, namespace)
        return msgs, request, key

    def _route(
        self,
        msgs: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        streamed: bool,
    ) -> transport.Route:
        cap = params.get("max_tokens") or params.get("max_completion_tokens")
        cap = cap if isinstance(cap, int) else self._spec.max_tokens
        timeout_s = timeout_for(self._spec, self.endpoint.meter, cap)
        key = self._api_key()
        return transport.route(self._spec, key, msgs, tools, params, streamed, timeout_s)

    def _policy(self) -> RetryPolicy:
        def on_retry() -> None:
            with self._stats_lock:
                self._stats.retries += 1

        def on_failure() -> None:
            with self._stats_lock:
                self._stats.failures += 1

        return RetryPolicy(
            label=self._spec.label,
            max_retries=self._spec.max_retries,
            backoff_s=self.retry_backoff_s,
            breaker=self.breaker,
            redact=self._redact,
            on_retry=on_retry,
            on_failure=on_failure,
        )

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
                    truncated=resp.finish_reason == "length",
                    latency_ms=0.0 if resp.cached else resp.latency_ms,
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

    def _account(self, resp: LLMResponse, attempt_s: float) -> None:
        self.endpoint.meter.observe(resp.usage.completion_tokens, attempt_s)
        with self._stats_lock:
            self._stats.calls += 1
            self._stats.prompt_tokens += resp.usage.prompt_tokens
            self._stats.completion_tokens += resp.usage.completion_tokens
            self._stats.cost_usd += resp.cost_usd
            if resp.finish_reason == "length":
                self._stats.truncated += 1
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
        env = self._spec.api_key_env
        own = os.environ.get(env) if env else None
        if own and own not in secrets:
            secrets.append(own)
        return redact(text, secrets)

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
            ensure_priced(litellm, self._spec.model)

    # -- the provider call: gate, retry loop, transport --------------------------------------
    # One attempt plan, one reply step and one success step serve the sync and async calls;
    # the two loops differ only in how they wait, hold the endpoint's gate and send.
    def _plan(
        self,
        msgs: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        key: str,
        streamed: bool,
    ) -> tuple[transport.Route, Generator[float, BaseException, None], float]:
        """The route, the retry loop and the wait before the first attempt."""
        route = self._route(msgs, tools, params, streamed)
        loop = attempts(self._policy(), key, route.litellm)
        return route, loop, next(loop)

    def _received(self, route: transport.Route, raw: Any, started: float) -> LLMResponse:
        """The provider's raw answer as a checked, redacted response."""
        latency = (time.perf_counter() - started) * 1000
        return self._clean(transport.reply(self._spec, route, raw, latency))

    def _succeeded(self, loop: Generator[float, BaseException, None]) -> None:
        """Close the retry loop and tell the breaker the endpoint answered."""
        loop.close()
        self.breaker.success()

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
        route, loop, delay = self._plan(msgs, tools, params, key, streamed)
        gate = self.endpoint.gate
        while True:
            if delay:
                time.sleep(delay)
            self._count_provider_call()
            with gate.held() if gate is not None else nullcontext():
                t0 = time.perf_counter()
                try:
                    resp = self._received(route, transport.send(route, msgs, on_delta), started)
                except Exception as exc:  # provider failures: the retry loop decides
                    delay = loop.send(exc)
                    continue
            break
        self._succeeded(loop)
        self._store(key, request, resp)
        self._account(resp, time.perf_counter() - t0)
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
        route, loop, delay = self._plan(msgs, tools, params, key, streamed)
        gate = self.endpoint.gate
        while True:
            if delay:
                await asyncio.sleep(delay)
            self._count_provider_call()
            async with gate.aheld() if gate is not None else nullcontext():
                t0 = time.perf_counter()
                try:
                    raw = await transport.asend(route, msgs, on_delta)
                    resp = self._received(route, raw, started)
                except Exception as exc:  # provider failures: the retry loop decides
                    delay = loop.send(exc)
                    continue
            break
        self._succeeded(loop)
        if self.cache is not None:
            await asyncio.to_thread(self._store, key, request, resp)
        self._account(resp, time.perf_counter() - t0)
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
            **params: Extra parameters (e.g. ``top_p``, ``seed``, ``response_format``).

        Returns:
            The reply with usage, cost and latency.

        Raises:
            LLMError: After ``spec.max_retries`` retries on retryable errors (429, 5xx,
                timeouts, connection errors, malformed replies), or at once on others (400,
                401, 404); :class:`ProviderUnavailable` when the breaker is open or the
                provider asks to wait longer than :data:`MAX_RETRY_AFTER_S`;
                :class:`ContextOverflow` when the prompt does not fit the model's context.
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
