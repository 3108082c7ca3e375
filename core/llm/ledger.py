"""The cost ledger: every model call priced and attributed to a role.

Roles are what a call is for: ``agent`` (the policy's actions), ``voice`` (the simulated
user's phrasing), ``reflection`` (A3's lesson writing), ``interpreter`` (how the user reads an
agent message), ``judge`` (GRIP's role-realism judges), ``writer`` and ``extractor``
(sample construction). Each :class:`~core.llm.client.LLMClient` has a role and records every
call it answers (provider calls, cache hits and shared in-flight replies) into

* its own ledger (:attr:`LLMClient.ledger`), and
* the ledger of the current context, when one is open (:func:`recording`) — the runner opens
  one per episode, so an episode's record carries what its agent, voice, interpreter and
  reflections cost, whichever client made the call. ``asyncio.to_thread`` copies the context,
  so calls made from a worker thread land in the same ledger.

A call whose model the local cost map does not know is counted as *unpriced*: its role shows
``"unpriced"`` instead of a misleading ``$0``.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Mapping
from typing import Any

ROLES = ("agent", "voice", "reflection", "interpreter", "judge", "writer", "extractor")
"""Every role a call can be attributed to (in display order)."""

_FIELDS = (
    "calls",
    "provider_calls",
    "cached",
    "prompt_tokens",
    "completion_tokens",
    "truncated",
)

_CURRENT: contextvars.ContextVar[CostLedger | None] = contextvars.ContextVar(
    "driftbench_cost_ledger", default=None
)
_ROLE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "driftbench_cost_role", default=None
)


class CostLedger:
    """Thread-safe totals per role: calls, provider calls, cache hits, tokens, USD, unpriced."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, Any]] = {}

    def add(
        self,
        role: str,
        *,
        cost_usd: float,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cached: bool = False,
        priced: bool = True,
        truncated: bool = False,
        latency_ms: float = 0.0,
    ) -> None:
        """Record one answered call of ``role``.

        Args:
            role: What the call was for.
            cost_usd: What it cost (0.0 for cache hits).
            prompt_tokens: Provider-reported input tokens.
            completion_tokens: Provider-reported output tokens.
            cached: Answered from the cache or a shared in-flight reply (no provider call).
            priced: False when the cost map does not know the model.
            truncated: The reply stopped at the completion cap (``finish_reason: length``).
            latency_ms: Wall time of the provider call (0 for cache hits).
        """
        with self._lock:
            row = self._rows.setdefault(role, _empty())
            row["calls"] += 1
            if cached:
                row["cached"] += 1
            else:
                row["provider_calls"] += 1
                row["prompt_tokens"] += prompt_tokens
                row["completion_tokens"] += completion_tokens
                row["cost_usd"] += cost_usd
                row["seconds"] += latency_ms / 1000.0
                if truncated:
                    row["truncated"] += 1
                if not priced:
                    row["unpriced_calls"] += 1

    def merge(self, other: CostLedger | Mapping[str, Mapping[str, Any]]) -> None:
        """Add another ledger (or its :meth:`to_dict` form) into this one."""
        rows = other.to_dict() if isinstance(other, CostLedger) else other
        with self._lock:
            for role, src in rows.items():
                row = self._rows.setdefault(str(role), _empty())
                for key in (*_FIELDS, "unpriced_calls"):
                    row[key] += int(src.get(key) or 0)
                row["cost_usd"] += float(src.get("cost_usd") or 0.0)
                row["seconds"] += float(src.get("seconds") or 0.0)

    @property
    def total_usd(self) -> float:
        """Money spent over every role."""
        with self._lock:
            return sum(float(r["cost_usd"]) for r in self._rows.values())

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """A copy of the rows, by role.

        Each row: calls, provider_calls, cached, prompt and completion tokens, cost_usd,
        unpriced_calls, truncated and seconds (wall time of the provider calls). Roles with no
        call are absent.
        """
        with self._lock:
            return {role: dict(row) for role, row in self._rows.items()}

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._rows)


def _empty() -> dict[str, Any]:
    return {
        "calls": 0,
        "provider_calls": 0,
        "cached": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
        "unpriced_calls": 0,
        "truncated": 0,
        "seconds": 0.0,
    }


def split_view(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The display form of a ledger: per role the USD spent, or ``"unpriced"``.

    A role shows ``"unpriced"`` when some of its provider calls went to a model the cost map
    does not know and nothing priced was spent (a partial price is shown as the priced part,
    with ``unpriced_calls`` next to it in the full ledger).

    >>> split_view({"agent": {"cost_usd": 0.5, "unpriced_calls": 0},
    ...             "voice": {"cost_usd": 0.0, "unpriced_calls": 3}})
    {'agent': 0.5, 'voice': 'unpriced'}
    """
    out: dict[str, Any] = {}
    order = [r for r in ROLES if r in rows] + sorted(r for r in rows if r not in ROLES)
    for role in order:
        row = rows[role]
        cost = float(row.get("cost_usd") or 0.0)
        if int(row.get("unpriced_calls") or 0) and cost == 0.0:
            out[role] = "unpriced"
        else:
            out[role] = round(cost, 8)
    return out


@contextlib.contextmanager
def recording(ledger: CostLedger) -> Iterator[CostLedger]:
    """Attribute every call made in this context (and threads started from it) to ``ledger``."""
    token = _CURRENT.set(ledger)
    try:
        yield ledger
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def as_role(role: str) -> Iterator[None]:
    """Calls made in this context count for ``role``, whatever their client's role.

    A3's reflections use the agent's client but count as ``reflection``.
    """
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def current() -> CostLedger | None:
    """The ledger of this context, if one is open."""
    return _CURRENT.get()


def role_override() -> str | None:
    """The role set by :func:`as_role` in this context, if any."""
    return _ROLE.get()
