"""Retries, backoff and the circuit breaker: one decision loop for sync and async calls.

:func:`attempts` is the whole retry policy as a generator: it yields the seconds to wait
before each attempt (0 before the first), is sent the exception of a failed attempt, and
raises the final :class:`~core.errors.LLMError` (or :class:`ProviderUnavailable`) when no
retry is left. The client's blocking and asynchronous paths only carry out the waits
(``time.sleep`` or ``asyncio.sleep``), so both retry exactly alike.

* ``Retry-After`` is honoured up to :data:`MAX_RETRY_AFTER_S`; a longer wait raises
  :class:`ProviderUnavailable` at once (the runner pauses the run, resumably);
* a :class:`CircuitBreaker` per client opens after :data:`BREAKER_THRESHOLD` consecutive
  failed attempts; while open every call raises :class:`ProviderUnavailable` without
  contacting the provider; statuses about one request (400, 404, 413, 422) never count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator
from typing import Any, NamedTuple

from core.errors import LLMError
from core.llm.openai_http import ProviderFailure

MAX_BACKOFF_S = 30.0
"""Longest own backoff between two attempts."""

MAX_RETRY_AFTER_S = 120.0
"""Longest ``Retry-After`` honoured; a provider asking for more pauses the run instead."""

BREAKER_THRESHOLD = 8
"""Consecutive failed attempts (any call of one client) that open its circuit breaker."""

BREAKER_COOLDOWN_S = 30.0
"""How long an open breaker refuses calls before letting one through again."""

NOT_PROVIDER_DOWN = frozenset({400, 404, 413, 422})
"""Statuses about one request (too long, bad parameter), not about the provider's health."""


class ProviderUnavailable(LLMError):
    """The provider is unusable for now: its breaker is open, or it asked to wait too long.

    The runner stops the sweep (status ``paused``) instead of failing episode after episode;
    the episode in flight ends as an ERROR and is played again on resume.
    """


class ContextOverflow(LLMError):
    """The prompt does not fit the model's context window (a 400 the caller can act on).

    Never retried as it is: the caller must send a shorter prompt (the agent slides its
    window further and asks again).
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


class Attempt(NamedTuple):
    """How one failed attempt is classified."""

    status: int | None
    retryable: bool
    retry_after: float | None


_OVERFLOW_WORDS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "exceeds the available context",
    "maximum context",
    "too many tokens",
    "prompt is too long",
)


def is_context_overflow(status: int | None, text: str) -> bool:
    """Whether a failure says the prompt does not fit the model's context.

    >>> is_context_overflow(400, "HTTP 400: the request exceeds the available context size")
    True
    >>> is_context_overflow(500, "context length"), is_context_overflow(400, "bad temperature")
    (False, False)
    """
    low = text.lower()
    return status in (400, 413, None) and any(word in low for word in _OVERFLOW_WORDS)


def classify(exc: BaseException, litellm: Any | None) -> Attempt:
    """Decide whether a failed attempt is worth retrying.

    Args:
        exc: What the attempt raised.
        litellm: The litellm module when the call went through litellm; None on the direct
            path, where anything but a :class:`ProviderFailure` is a bug, never retried.
    """
    if isinstance(exc, ProviderFailure):
        return Attempt(exc.status, exc.retryable, exc.retry_after)
    if litellm is None:
        return Attempt(None, False, None)
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
        return Attempt(status or 408, True, retry_after)
    if isinstance(exc, ex.RateLimitError):
        return Attempt(429, True, retry_after)
    if isinstance(exc, (ex.BadRequestError, ex.AuthenticationError, ex.NotFoundError)):
        return Attempt(status, False, None)
    if isinstance(exc, ex.APIConnectionError) and status is None:
        return Attempt(None, True, retry_after)
    if status is not None:
        return Attempt(status, status in (408, 409, 425, 429) or status >= 500, retry_after)
    return Attempt(None, isinstance(exc, (ex.APIConnectionError, ex.APIError)), retry_after)


class RetryPolicy(NamedTuple):
    """What the retry loop needs from its client.

    Attributes:
        label: The model's printable spec (named in errors).
        max_retries: Retries after the first attempt.
        backoff_s: First backoff; doubles each retry (capped, jittered per request).
        breaker: The client's circuit breaker.
        redact: Removes every known key from an error text.
        on_retry: Called once per retry (statistics).
        on_failure: Called once when the call finally fails (statistics).
    """

    label: str
    max_retries: int
    backoff_s: float
    breaker: CircuitBreaker
    redact: Callable[[str], str]
    on_retry: Callable[[], None]
    on_failure: Callable[[], None]


def attempts(
    policy: RetryPolicy, key: str, litellm: Any | None
) -> Generator[float, BaseException, None]:
    """The retry loop: yield the wait before each attempt; be sent each failure.

    The caller makes an attempt after every yielded wait; on success it stops (and tells the
    breaker); on failure it sends the exception in and receives the next wait. When no retry
    is left this generator raises the final error instead of yielding.

    Args:
        policy: Limits, breaker and statistics hooks.
        key: The request's cache key (spreads the jitter of concurrent callers).
        litellm: The litellm module when the call goes through litellm, else None.

    Raises:
        ProviderUnavailable: The provider asked to wait longer than :data:`MAX_RETRY_AFTER_S`.
        ContextOverflow: The prompt does not fit the model's context (never retried).
        LLMError: The last attempt failed, or the failure is not worth retrying.
    """
    attempt = 0
    delay = 0.0
    while True:
        exc = yield delay
        info = classify(exc, litellm)
        detail = policy.redact(f"{type(exc).__name__}: {exc}")
        if info.status not in NOT_PROVIDER_DOWN:
            policy.breaker.failure(detail)
        if info.retry_after is not None and info.retry_after > MAX_RETRY_AFTER_S:
            policy.on_failure()
            raise ProviderUnavailable(
                f"the provider asked to wait {info.retry_after:g}s (Retry-After), more than "
                f"the {MAX_RETRY_AFTER_S:g}s limit; the run pauses — resume it later "
                f"({detail[:200]})",
                model=policy.label,
                status=info.status,
                retryable=True,
            ) from None
        if not info.retryable and is_context_overflow(info.status, detail):
            policy.on_failure()
            raise ContextOverflow(
                f"the prompt does not fit the model's context ({detail[:300]})",
                model=policy.label,
                status=info.status,
                retryable=False,
            ) from None
        if info.retryable and attempt < policy.max_retries:
            policy.on_retry()
            base = policy.backoff_s * (2.0**attempt)
            spread = 0.5 + 0.5 * (int(key[:4], 16) / 0xFFFF)
            delay = min(base * spread, MAX_BACKOFF_S)
            if info.retry_after is not None:
                delay = max(delay, info.retry_after)
            attempt += 1
            continue
        policy.on_failure()
        tries = attempt + 1
        raise LLMError(
            f"{detail[:500]} (after {tries} attempt{'s' if tries > 1 else ''})",
            model=policy.label,
            status=info.status,
            retryable=info.retryable,
        ) from None
