"""Per-endpoint state shared by every client of a process: a concurrency gate and a speed meter.

* :class:`Gate` bounds the requests in flight to one endpoint (``concurrency`` in the models
  file; ``driftbench models local`` writes 1, one request per llama.cpp slot). Blocking and
  asynchronous callers, on any thread or event loop, queue on the same gate in arrival order,
  so an agent's async calls and a voice's blocking calls to one local server never pile up
  on it. A request's timeout starts when it leaves the queue, so waiting is never a timeout.
* :class:`SpeedMeter` measures the endpoint's completion speed (tokens per second of wall
  time, prompt processing included) from answered calls; :func:`timeout_for` scales each
  attempt's timeout with the call's completion cap and that speed, so a slow CPU server gets
  the time a full-length answer needs, and a fast provider keeps a short timeout.

The registry is per process (a forked worker starts with empty gates of its own).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from core.llm.types import ModelSpec

ASSUMED_TOKENS_PER_S = 10.0
"""Completion speed assumed for an endpoint before any call was measured (a slow CPU)."""

TIMEOUT_SAFETY = 2.5
"""Margin over the expected time of a full-length answer."""

TIMEOUT_FLOOR_S = 15.0
"""Added to every scaled timeout (connection, prompt processing of a cold cache)."""

MAX_SCALED_TIMEOUT_S = 1800.0
"""Longest per-attempt timeout the scaling may choose."""

_EWMA = 0.3


class _SyncWaiter:
    def __init__(self) -> None:
        self.event = threading.Event()

    def grant(self) -> bool:
        self.event.set()
        return True


class _AsyncWaiter:
    def __init__(self, gate: Gate, loop: asyncio.AbstractEventLoop) -> None:
        self.gate = gate
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()

    def grant(self) -> bool:
        try:
            self.loop.call_soon_threadsafe(self._set)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            return False
        return True

    def _set(self) -> None:
        if self.future.done():  # cancelled while the slot was on its way: hand it on
            self.gate.release()
        else:
            self.future.set_result(None)


class Gate:
    """A fair semaphore usable from threads and from any event loop.

    Args:
        limit: Requests allowed in flight at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._lock = threading.Lock()
        self._busy = 0
        self._waiters: deque[_SyncWaiter | _AsyncWaiter] = deque()
        self.peak = 0
        self.waited = 0

    @property
    def busy(self) -> int:
        """Requests in flight now."""
        with self._lock:
            return self._busy

    def _take(self) -> bool:
        if self._busy < self.limit and not self._waiters:
            self._busy += 1
            self.peak = max(self.peak, self._busy)
            return True
        self.waited += 1
        return False

    def acquire(self) -> None:
        """Wait (blocking) for a slot."""
        with self._lock:
            if self._take():
                return
            waiter = _SyncWaiter()
            self._waiters.append(waiter)
        waiter.event.wait()

    async def aacquire(self) -> None:
        """Wait (on the running loop) for a slot; cancellation never leaks one."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._take():
                return
            waiter = _AsyncWaiter(self, loop)
            self._waiters.append(waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                    raise
            if waiter.future.done() and not waiter.future.cancelled():
                self.release()  # granted, then cancelled before it was used
            raise

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the ``with`` block (blocking wait; released however it ends)."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    @asynccontextmanager
    async def aheld(self) -> AsyncIterator[None]:
        """Hold a slot for the ``async with`` block (waits on the running loop)."""
        await self.aacquire()
        try:
            yield
        finally:
            self.release()

    def release(self) -> None:
        """Free a slot: hand it to the longest waiter, or return it."""
        with self._lock:
            while self._waiters:
                if self._waiters.popleft().grant():
                    return
            self._busy = max(0, self._busy - 1)


@dataclass
class SpeedMeter:
    """Completion tokens per second of wall time, smoothed over an endpoint's calls."""

    tokens_per_s: float | None = None
    samples: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def observe(self, completion_tokens: int, latency_s: float) -> None:
        """Record one answered call (calls with too few tokens say nothing about speed)."""
        if completion_tokens < 8 or latency_s <= 0:
            return
        speed = completion_tokens / latency_s
        with self._lock:
            old = self.tokens_per_s
            self.tokens_per_s = speed if old is None else (1 - _EWMA) * old + _EWMA * speed
            self.samples += 1

    def speed(self) -> float:
        """The measured speed, or :data:`ASSUMED_TOKENS_PER_S` before any measurement."""
        with self._lock:
            return self.tokens_per_s or ASSUMED_TOKENS_PER_S


@dataclass
class Endpoint:
    """What a process knows about one endpoint."""

    key: str
    gate: Gate | None = None
    meter: SpeedMeter = field(default_factory=SpeedMeter)


_REGISTRY: dict[tuple[int, str], Endpoint] = {}
_REGISTRY_LOCK = threading.Lock()


def endpoint_key(spec: ModelSpec) -> str:
    """Which endpoint a spec talks to: its ``api_base``, else its provider's name.

    >>> endpoint_key(ModelSpec.parse("openai/x@http://127.0.0.1:8080/v1"))
    'http://127.0.0.1:8080/v1'
    >>> endpoint_key(ModelSpec.parse("anthropic/claude-3-5-sonnet"))
    'provider:anthropic'
    """
    if spec.api_base:
        return spec.api_base
    provider = spec.model.split("/", 1)[0] if "/" in spec.model else "openai"
    return f"provider:{provider}"


def endpoint_for(spec: ModelSpec) -> Endpoint:
    """This process's state of the spec's endpoint (its gate sized by ``spec.concurrency``).

    Several specs on one endpoint share one gate; the smallest limit any of them names wins.
    """
    key = endpoint_key(spec)
    slot = (os.getpid(), key)
    with _REGISTRY_LOCK:
        found = _REGISTRY.get(slot)
        if found is None:
            found = _REGISTRY[slot] = Endpoint(key)
        limit = spec.concurrency
        if limit is not None and (found.gate is None or limit < found.gate.limit):
            if found.gate is None or found.gate.busy == 0:
                found.gate = Gate(limit)
            else:
                found.gate.limit = limit
        return found


def reset_endpoints() -> None:
    """Forget every endpoint's state (tests)."""
    with _REGISTRY_LOCK:
        _REGISTRY.clear()


def timeout_for(spec: ModelSpec, meter: SpeedMeter, max_tokens: int | None) -> float:
    """The per-attempt timeout of one call.

    An explicit ``timeout_s`` (models file, ``--models``, a test) is used as it is. Otherwise
    the timeout is the time a full-length answer takes at the endpoint's measured speed, with
    :data:`TIMEOUT_SAFETY` margin and :data:`TIMEOUT_FLOOR_S` added, never below the spec's
    default and never above :data:`MAX_SCALED_TIMEOUT_S`.

    >>> slow = SpeedMeter(tokens_per_s=5.0)
    >>> timeout_for(ModelSpec(model="openai/x"), slow, 512)
    271.0
    >>> timeout_for(ModelSpec(model="openai/x", timeout_s=7), slow, 512)
    7.0
    """
    if "timeout_s" in spec.model_fields_set or not max_tokens:
        return float(spec.timeout_s)
    needed = TIMEOUT_SAFETY * max_tokens / meter.speed() + TIMEOUT_FLOOR_S
    return float(min(MAX_SCALED_TIMEOUT_S, max(spec.timeout_s, round(needed, 1))))
