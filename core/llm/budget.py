"""``--max-cost`` as a reservation: a provider call reserves its estimated cost before it starts.

The runner opens a :func:`spend_limit` around a sweep; every :class:`~core.llm.LLMClient` call
made inside it (agent, voice, interpreter, reflection — any role, any task or forked worker)
asks :func:`reserve` first. A call may start only while the money already spent plus the
estimates of the calls in flight is below the limit; otherwise it raises
:class:`BudgetExhausted` and the sweep stops with status ``budget_exceeded`` (the episode in
flight ends as ERROR and is played again on resume). So however many calls run at once, the
spend can pass the limit by at most the estimate of one call (before: 32 concurrent episodes
spent 13× a ``--max-cost 0.0001``).

The estimate of a call is its prompt (about 3 characters a token, rounded up) at the input
price plus ``max_tokens`` (default :data:`DEFAULT_COMPLETION_TOKENS`) at the output price; when
the call ends the reservation is replaced by what it really cost. Forked workers share one
budget through shared memory (created before the fork); Ray actors are checked by the driver
after each unit only.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import multiprocessing as mp
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import LLMError

DEFAULT_COMPLETION_TOKENS = 1024
"""Completion tokens assumed for a call that sets no ``max_tokens``."""

CHARS_PER_TOKEN = 3
"""Prompt characters per token in the estimate (cautious: real text is nearer 4)."""

_BUDGET: contextvars.ContextVar[CostBudget | None] = contextvars.ContextVar(
    "driftbench_cost_budget", default=None
)


class BudgetExhausted(LLMError):
    """``--max-cost`` is reached: no further provider call may start (resume to continue)."""


class CostBudget:
    """Money spent and reserved against a limit (thread-safe; process-shared when forked).

    Args:
        limit_usd: The limit (``--max-cost``).
        spent_usd: Already spent (a resumed run's earlier cost).
        shared: Keep the totals in shared memory so forked workers draw on the same budget.
    """

    def __init__(self, limit_usd: float, spent_usd: float = 0.0, *, shared: bool = False) -> None:
        self.limit = float(limit_usd)
        self._shared = shared
        if shared:
            ctx = mp.get_context("fork")
            self._lock: Any = ctx.Lock()
            self._spent: Any = ctx.Value("d", float(spent_usd), lock=False)
            self._reserved: Any = ctx.Value("d", 0.0, lock=False)
        else:
            self._lock = threading.Lock()
            self._spent = _Box(float(spent_usd))
            self._reserved = _Box(0.0)

    @property
    def spent_usd(self) -> float:
        """Money spent by finished calls."""
        with self._lock:
            return float(self._spent.value)

    @property
    def reserved_usd(self) -> float:
        """Estimates of the calls in flight."""
        with self._lock:
            return float(self._reserved.value)

    def reserve(self, estimate_usd: float) -> float:
        """Reserve ``estimate_usd`` for a call about to start; return it.

        Raises:
            BudgetExhausted: Spent plus reserved has reached the limit.
        """
        est = max(0.0, float(estimate_usd))
        with self._lock:
            committed = self._spent.value + self._reserved.value
            if committed >= self.limit:
                raise BudgetExhausted(
                    f"the cost limit ${self.limit:g} (--max-cost) is reached "
                    f"(${self._spent.value:.6f} spent, ${self._reserved.value:.6f} in flight); "
                    "raise it and resume the run",
                    retryable=True,
                )
            self._reserved.value += est
        return est

    def settle(self, reserved_usd: float, actual_usd: float) -> None:
        """Replace a reservation by what the call really cost."""
        with self._lock:
            self._reserved.value = max(0.0, self._reserved.value - reserved_usd)
            self._spent.value += max(0.0, float(actual_usd))


@dataclass
class _Box:
    value: float


@contextlib.contextmanager
def spend_limit(budget: CostBudget | None) -> Iterator[CostBudget | None]:
    """Make ``budget`` the one every call in this context (and forks of it) reserves from."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def estimate_usd(
    messages: Sequence[Any], max_tokens: int | None, price: tuple[float, float]
) -> float:
    """The cautious cost estimate of one call (see the module docstring)."""
    per_in, per_out = price
    if per_in <= 0 and per_out <= 0:
        return 0.0
    chars = len(json.dumps(list(messages), default=str, ensure_ascii=False))
    prompt = -(-chars // CHARS_PER_TOKEN)
    completion = max_tokens if max_tokens and max_tokens > 0 else DEFAULT_COMPLETION_TOKENS
    return prompt * per_in + completion * per_out


class Reservation:
    """One call's claim on the current budget (a no-op outside a :func:`spend_limit`)."""

    def __init__(self, budget: CostBudget | None, amount: float) -> None:
        self.budget = budget
        self.amount = amount
        self.actual = 0.0

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.budget is not None:
            self.budget.settle(self.amount, self.actual)


def reserve(
    messages: Sequence[Any], max_tokens: int | None, price: tuple[float, float]
) -> Reservation:
    """Reserve the estimate of a call on the current budget (set ``.actual`` when it ends).

    Raises:
        BudgetExhausted: The budget is used up (the call must not start).
    """
    budget = _BUDGET.get()
    if budget is None:
        return Reservation(None, 0.0)
    return Reservation(budget, budget.reserve(estimate_usd(messages, max_tokens, price)))


def reserve_for(spec: Any, messages: Sequence[Any], params: dict[str, Any]) -> Reservation:
    """:func:`reserve` for a call of model ``spec`` with request ``params`` (the client's hook).

    Raises:
        BudgetExhausted: The budget is used up (the call must not start).
    """
    if _BUDGET.get() is None:
        return Reservation(None, 0.0)
    from core.llm.openai_http import price

    cap = params.get("max_tokens") or params.get("max_completion_tokens") or spec.max_tokens
    return reserve(messages, cap if isinstance(cap, int) else None, price(spec.model))
