"""Per-message timings shared by the reader benchmarks (interpreter, reply reader).

A shared machine's scheduler and the garbage collector add multi-millisecond pauses to single
calls, so a message's warm cost is the **median of its repetitions**, and p50 / p95 are taken
over messages. A cold cost is the first call for each distinct intent after its world's memo
table is cleared (it compiles that intent's lexicons or phrases).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def _ms(call: Callable[[T], object], item: T) -> float:
    t = time.perf_counter()
    call(item)
    return (time.perf_counter() - t) * 1000


def warm_ms(items: Sequence[T], call: Callable[[T], object], reps: int) -> list[float]:
    """Per item: the median of ``reps`` timed calls, in ms (after one untimed warm-up call)."""
    for it in items:
        call(it)
    return [statistics.median(_ms(call, it) for _ in range(reps)) for it in items]


def cold_ms(
    items: Sequence[T],
    key: Callable[[T], Hashable],
    clear: Callable[[T], object],
    call: Callable[[T], object],
) -> list[float]:
    """The first call of each distinct ``key`` right after ``clear``, in ms."""
    seen: set[Hashable] = set()
    out: list[float] = []
    for it in items:
        if key(it) in seen:
            continue
        seen.add(key(it))
        clear(it)
        out.append(_ms(call, it))
    return out


def summary(warm: Sequence[float], cold: Sequence[float]) -> dict[str, float]:
    """``p50`` and ``p95`` over messages (warm), ``cold_p50`` and ``cold_max``."""
    p95 = statistics.quantiles(warm, n=100)[94] if len(warm) > 1 else warm[0]
    return {
        "p50": statistics.median(warm),
        "p95": p95,
        "cold_p50": statistics.median(cold),
        "cold_max": max(cold),
    }
