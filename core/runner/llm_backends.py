"""The LLM sweep backend: episodes as asyncio tasks, in one process or several forked ones.

Store writes, cancel checks and progress updates run on a thread, off the event loop; with
several processes the parent is still the only store writer (children stream records back).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

from core.model.run import EpisodeKey, RunOptions
from core.runner.bookkeeping import (
    STATUS_BUDGET,
    STATUS_CANCELLED,
    STATUS_PAUSED,
    WRITE_INTERVAL_S,
    Sweep,
    preload,
)
from core.runner.plan import SampleSource
from core.runner.units import EpisodeRecord, play_llm_unit

LLM_EPISODES_PER_PROCESS = 16
"""An LLM sweep uses another process per this many concurrent episodes (up to the CPUs)."""


def llm_processes(options: RunOptions, n_units: int, client_given: Any = None) -> int:
    """How many processes an LLM sweep runs in.

    Each call costs CPU besides its wait (about 1 ms on the direct OpenAI-compatible path,
    several through litellm for other providers), so one event loop tops out at some hundreds
    of calls a second. Wide sweeps split their episodes over forked processes (each with its
    own loop, HTTP session and ``concurrency / processes`` episodes); the parent stays the only
    store writer. A caller-supplied client other than :class:`~core.llm.LLMClient` (a
    scripted fake) keeps everything in one process, since its state would not be shared.
    """
    if client_given is not None:
        from core.llm import LLMClient

        if not isinstance(client_given, LLMClient):
            return 1
    if sys.platform == "win32":
        return 1
    cpus = options.workers or os.cpu_count() or 1
    return max(1, min(cpus, options.concurrency // LLM_EPISODES_PER_PROCESS, n_units))


def run_llm(sw: Sweep, client: Any = None) -> str:
    """Play an LLM sweep's units (one event loop, or several processes); return a status."""
    procs = llm_processes(sw.options, len(sw.units), client)
    if client is None:
        from core.llm import make_client

        client = make_client(sw.spec.agent, cache_path=sw.store.path)
    source = SampleSource(sw.store)
    preload(source, sw.spec, sw.units)
    if procs > 1:
        warm = getattr(client, "warm", None)
        if callable(warm):
            warm()  # the forked workers inherit it instead of each loading it again
        return _run_llm_pool(sw, client, source, procs)
    return asyncio.run(_llm_main(sw, client, source))


async def _llm_loop(
    sw: Sweep,
    units: Sequence[list[EpisodeKey]],
    client: Any,
    source: SampleSource,
    concurrency: int,
    on_records: Any,
    stopped: Any,
) -> None:
    """``concurrency`` asyncio workers share one client and take units until ``stopped()``."""
    queue = iter(units)

    async def worker() -> None:
        for unit in queue:
            if stopped():
                return
            res = await play_llm_unit(
                unit,
                sw.spec,
                source,
                client,
                attempts=sw.rs.attempts,
                skip=sw.rs.done,
                max_attempts=sw.options.max_attempts,
                backoff_s=sw.options.retry_backoff_s,
                key_ids=sw.key_ids(unit),
            )
            on_records(res.records)

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(units))))))


async def _llm_main(sw: Sweep, client: Any, source: SampleSource) -> str:
    """One process: the episodes on the event loop, store writes and cancel checks on a thread."""
    writer = sw.writer()
    prog, options = sw.prog, sw.options
    status = {"value": ""}
    spent = {"usd": prog.cost}
    stop = asyncio.Event()

    def housekeeping() -> None:  # runs on a thread: SQLite never blocks the loop
        writer.flush()
        if not status["value"] and prog.cancelled():
            status["value"] = STATUS_CANCELLED

    async def flusher() -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), WRITE_INTERVAL_S)
            except TimeoutError:
                pass
            await asyncio.to_thread(housekeeping)

    def on_records(records: list[EpisodeRecord]) -> None:
        writer.add(records)
        spent["usd"] += sum(r.cost_usd for r in records if r.write)
        if options.max_cost_usd is not None and spent["usd"] > options.max_cost_usd:
            status["value"] = status["value"] or STATUS_BUDGET
        if any(r.halt for r in records):
            status["value"] = status["value"] or STATUS_PAUSED

    flush_task = asyncio.create_task(flusher())
    try:
        await _llm_loop(
            sw,
            sw.units,
            client,
            source,
            options.concurrency,
            on_records,
            lambda: bool(status["value"]),
        )
    finally:
        stop.set()
        await flush_task
        await asyncio.to_thread(writer.flush)
    return status["value"]


def _llm_child(
    sw: Sweep,
    units: list[list[EpisodeKey]],
    client: Any,
    source: SampleSource,
    concurrency: int,
    out: Any,
    stop: Any,
) -> None:
    """A forked LLM worker: play its units, stream finished records to the parent."""
    try:
        from core.llm.env import litellm_loaded, load_litellm

        if litellm_loaded():  # never reuse HTTP sessions (and sockets) inherited from the parent
            try:
                load_litellm().in_memory_llm_clients_cache.flush_cache()
            except Exception:  # noqa: BLE001 - a litellm without that cache: nothing to drop
                pass

        def on_records(records: list[EpisodeRecord]) -> None:
            out.put(("records", [r.to_wire() for r in records if r.write]))

        asyncio.run(_llm_loop(sw, units, client, source, concurrency, on_records, stop.is_set))
        out.put(("end", None))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which re-raises
        out.put(("end", f"{type(exc).__name__}: {exc}"))


def _run_llm_pool(sw: Sweep, client: Any, source: SampleSource, procs: int) -> str:
    """Several forked processes play the units; this one writes, counts spend, cancels."""
    import multiprocessing as mp
    import queue as queue_mod

    ctx = mp.get_context("fork")
    out = ctx.Queue()
    stop = ctx.Event()
    prog, options = sw.prog, sw.options
    per = -(-options.concurrency // procs)
    children = [
        ctx.Process(
            target=_llm_child,
            args=(sw, sw.units[i::procs], client, source, per, out, stop),
            daemon=True,
        )
        for i in range(procs)
    ]
    writer = sw.writer()
    status = ""
    spent = prog.cost
    failures: list[str] = []
    running = len(children)
    try:
        for c in children:
            c.start()
        while running:
            try:
                kind, payload = out.get(timeout=WRITE_INTERVAL_S)
            except queue_mod.Empty:
                if any(c.exitcode not in (None, 0) for c in children):
                    failures.append("an LLM worker process died")
                    break
                kind, payload = "", None
            if kind == "records":
                recs = [EpisodeRecord.from_wire(r) for r in payload]
                writer.add(recs)
                spent += sum(r.cost_usd for r in recs)
                if options.max_cost_usd is not None and spent > options.max_cost_usd:
                    status = status or STATUS_BUDGET
                if any(r.halt for r in recs):
                    status = status or STATUS_PAUSED
            elif kind == "end":
                running -= 1
                if payload:
                    failures.append(str(payload))
            writer.maybe_flush()
            if not status and prog.cancelled():
                status = STATUS_CANCELLED
            if status:
                stop.set()
    finally:
        stop.set()
        for c in children:
            c.join(timeout=30)
            if c.is_alive():
                c.terminate()
        writer.flush()
    if failures:
        raise RuntimeError("LLM sweep worker failed: " + "; ".join(failures))
    return status
