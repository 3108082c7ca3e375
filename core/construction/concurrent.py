"""Building the samples of many graphs at once (LLM writers and extractors wait on the network).

Each graph is built by one thread from its own random stream (``sub_seed(seed, graph_id,
…)``), so the samples of a graph do not depend on which other graphs were built beside it;
results come back in graph order, so statistics and the stored samples are the same at any
concurrency. ``on_graph`` is called (in graph order, from the calling thread) as each graph's
result is ready, which lets the caller store progress as it goes.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from core.model.intent import IntentGraph

T = TypeVar("T")


def map_graphs(
    graphs: Sequence[IntentGraph],
    work: Callable[[IntentGraph], T],
    *,
    concurrency: int = 1,
    on_graph: Callable[[IntentGraph, T], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[T]:
    """Run ``work`` over ``graphs`` with up to ``concurrency`` graphs in flight.

    Args:
        graphs: The graphs, in the order results are returned.
        work: Builds one graph's result (thread-safe across graphs).
        concurrency: Graphs built at once (1: in this thread, one after the other).
        on_graph: Receives each graph's result, in graph order.
        stop: Checked before each graph starts; True skips the graphs not started yet.

    Returns:
        The results of the graphs that ran, in graph order.
    """
    out: list[T] = []
    if concurrency <= 1:
        for g in graphs:
            if stop is not None and stop():
                break
            res = work(g)
            out.append(res)
            if on_graph is not None:
                on_graph(g, res)
        return out

    def guarded(g: IntentGraph) -> tuple[bool, T | None]:
        if stop is not None and stop():
            return False, None
        return True, work(g)

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="build") as pool:
        # each graph runs in a copy of this context: its calls land in the caller's cost ledger
        futures: list[Future[tuple[bool, T | None]]] = [
            pool.submit(contextvars.copy_context().run, guarded, g) for g in graphs
        ]
        for g, fut in zip(graphs, futures, strict=True):
            ran, got = fut.result()
            if not ran or got is None:
                continue
            out.append(got)
            if on_graph is not None:
                on_graph(g, got)
    return out
