"""The LLM sweep backends: asyncio tasks in one process, in forked ones, or in Ray actors.

Store writes, cancel checks and progress updates run on a thread, off the event loop; with
several processes the parent is still the only store writer (children stream records back).
On Ray (``--backend ray``) each actor holds one client and plays up to ``concurrency /
actors`` units at once on its own event loop; the driver is the one writer of episodes and
records are the same as the local backend's. Point ``ray.init`` at a cluster with
``RAY_ADDRESS`` (every node needs the project installed and the store's file reachable at the
same path, e.g. a shared volume: actors open it for the samples and the response cache).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.llm.budget import CostBudget, spend_limit
from core.model.run import EpisodeKey, RunOptions
from core.runner.bookkeeping import (
    STATUS_BUDGET,
    STATUS_CANCELLED,
    STATUS_PAUSED,
    WRITE_INTERVAL_S,
    Sweep,
    preload,
)
from core.runner.inflight import clear_board, write_board
from core.runner.plan import SampleSource
from core.runner.units import EpisodeRecord, play_llm_unit

BUDGET_HALT = "the cost limit"
"""How a :class:`~core.llm.budget.BudgetExhausted` halt begins (see :func:`halt_status`)."""

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
        if client_given.spec.concurrency is not None:
            return 1  # an endpoint limit holds per process: one process keeps it exact
    if sys.platform == "win32":
        return 1
    cpus = options.workers or os.cpu_count() or 1
    return max(1, min(cpus, options.concurrency // LLM_EPISODES_PER_PROCESS, n_units))


def halt_status(records: Sequence[EpisodeRecord]) -> str:
    """The sweep status a halted episode means: the cost limit, or an unavailable provider."""
    budget = any(r.halt.startswith(BUDGET_HALT) for r in records if r.halt)
    return STATUS_BUDGET if budget else STATUS_PAUSED


def run_llm(sw: Sweep, client: Any = None) -> str:
    """Play an LLM sweep's units (one event loop, several processes or Ray); return a status.

    With ``--max-cost`` every provider call reserves its estimated cost first
    (:mod:`core.llm.budget`), shared by the forked workers, so concurrency cannot overshoot the
    limit by more than one call's estimate.
    """
    if sw.options.backend == "ray":
        return _run_llm_ray(sw, client)
    if client is None:
        from core.llm import make_client

        client = make_client(sw.spec.agent, cache_path=sw.store.path)
    procs = llm_processes(sw.options, len(sw.units), client)
    limit = sw.options.max_cost_usd
    budget = CostBudget(limit, sw.prog.cost, shared=procs > 1) if limit is not None else None
    with spend_limit(budget):
        return _run_llm_local(sw, client, procs)


def _run_llm_local(sw: Sweep, client: Any, procs: int) -> str:
    """:func:`run_llm` in this process or forked ones (inside the sweep's spend limit)."""
    source = SampleSource(sw.store)
    preload(source, sw.spec, sw.units)
    if procs > 1:
        # warm() is offered by the local model clients only, not by every ChatModel
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


def episode_concurrency(options: RunOptions, client: Any) -> int:
    """Episodes played at once: the run's ``--concurrency``, at most the endpoint's limit.

    A local server with one slot (``concurrency: 1`` in the models file) keeps one prompt in
    its cache: episodes interleaved on it would evict each other's prefix on every call, so
    they play one after another instead (each call then reuses its episode's prefix).
    """
    # any ChatModel may play (a scripted fake has no spec): only a model spec names a limit
    limit = getattr(getattr(client, "spec", None), "concurrency", None)
    if isinstance(limit, int) and limit > 0:
        return max(1, min(options.concurrency, limit))
    return options.concurrency


async def _llm_main(sw: Sweep, client: Any, source: SampleSource) -> str:
    """One process: the episodes on the event loop, store writes and cancel checks on a thread."""
    writer = sw.writer()
    prog, options = sw.prog, sw.options
    status = {"value": ""}
    spent = {"usd": prog.cost}
    stop = asyncio.Event()

    jobs = sw.store.path.parent / "jobs"

    def housekeeping() -> None:  # runs on a thread: SQLite never blocks the loop
        writer.flush()
        write_board(jobs, sw.spec.run_id())
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
            status["value"] = status["value"] or halt_status(records)

    flush_task = asyncio.create_task(flusher())
    try:
        await _llm_loop(
            sw,
            sw.units,
            client,
            source,
            episode_concurrency(options, client),
            on_records,
            lambda: bool(status["value"]),
        )
    finally:
        stop.set()
        await flush_task
        await asyncio.to_thread(writer.flush)
        clear_board(jobs, sw.spec.run_id())
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

        jobs = sw.store.path.parent / "jobs"
        run_id = sw.spec.run_id()

        def on_records(records: list[EpisodeRecord]) -> None:
            out.put(("records", [r.to_wire() for r in records if r.write]))
            write_board(jobs, run_id)

        async def main() -> None:
            async def board() -> None:  # this child's episodes in flight, for the Runs page
                while True:
                    await asyncio.to_thread(write_board, jobs, run_id)
                    await asyncio.sleep(WRITE_INTERVAL_S * 4)

            task = asyncio.create_task(board())
            try:
                await _llm_loop(sw, units, client, source, concurrency, on_records, stop.is_set)
            finally:
                task.cancel()

        try:
            asyncio.run(main())
        finally:
            clear_board(jobs, run_id)
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
                    status = status or halt_status(recs)
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


# -- Ray: async actors, the driver the one writer -------------------------------------------
RayContext = tuple[str, str, dict[str, int], list[str], str, str, bool, bool, int, float]
"""What every actor needs: store path, spec JSON, attempts, done keys, the client's spec JSON,
the process's LLM config JSON, whether the client has a cache and reads it, max attempts,
backoff."""


class LLMRayWorker:
    """One Ray actor: a client and the sample source, playing units on its event loop."""

    def __init__(self, ctx: RayContext) -> None:
        from core.llm import LLMClient, ResponseCache
        from core.llm.models import LLMConfig, use_config
        from core.llm.types import ModelSpec
        from core.model.run import RunSpec
        from core.store import Store

        path, spec_json, attempts, done, model_json, cfg_json, cached, read, tries, backoff = ctx
        use_config(LLMConfig.model_validate_json(cfg_json))
        self.spec = RunSpec.model_validate_json(spec_json)
        self.source = SampleSource(Store.open(Path(path)))
        self.attempts, self.skip = attempts, set(done)
        self.max_attempts, self.backoff = tries, backoff
        self.client = LLMClient(
            ModelSpec.model_validate_json(model_json),
            cache=ResponseCache(Path(path)) if cached else None,
            read_cache=read,
        )

    async def play(self, unit: list[tuple[tuple[str, str, str, str, str, int], str]]) -> Any:
        """Play one unit; return its records (to write) as wire tuples."""
        keys = [
            EpisodeKey(run_id=r, benchmark=b, sample_id=s, method=m, persona=p, seed=sd)
            for (r, b, s, m, p, sd), _ in unit
        ]
        res = await play_llm_unit(
            keys,
            self.spec,
            self.source,
            self.client,
            attempts=self.attempts,
            skip=self.skip,
            max_attempts=self.max_attempts,
            backoff_s=self.backoff,
            key_ids=[kid for _, kid in unit],
        )
        return [r.to_wire() for r in res.records if r.write]


def _run_llm_ray(sw: Sweep, client: Any) -> str:
    """Units as tasks of async Ray actors; this process writes, counts spend and cancels."""
    from core.errors import ConfigError
    from core.llm import LLMClient, make_client
    from core.llm.models import current_config

    try:
        import ray
    except ImportError:
        raise ConfigError(
            "Ray is not installed (pip install 'driftbench-studio[ray]')", field="--backend"
        ) from None
    if client is None:
        client = make_client(sw.spec.agent, cache_path=sw.store.path)
    if not isinstance(client, LLMClient):
        raise ConfigError("the Ray backend needs a real model client", field="--backend")
    options, prog = sw.options, sw.prog
    actors_n = max(1, min(options.workers or os.cpu_count() or 1, len(sw.units)))
    per = max(1, -(-options.concurrency // actors_n))
    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=actors_n,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    ctx: RayContext = (
        str(sw.store.path),
        sw.spec.model_dump_json(),
        dict(sw.rs.attempts),
        sorted(sw.rs.done),
        client.spec.model_dump_json(),
        current_config().model_dump_json(),
        client.cache is not None,
        client.read_cache,
        options.max_attempts,
        options.retry_backoff_s,
    )
    writer = sw.writer()
    status = ""
    spent = prog.cost
    try:
        actor_cls: Any = ray.remote(LLMRayWorker)
        actors = [
            actor_cls.options(num_cpus=1, max_concurrency=per).remote(ctx) for _ in range(actors_n)
        ]
        wire = [
            [(k.run_id, k.benchmark, k.sample_id, k.method, k.persona, k.seed) for k in u]
            for u in sw.units
        ]
        queue = [
            [(w, kid) for w, kid in zip(u, sw.key_ids(units), strict=True)]
            for u, units in zip(wire, sw.units, strict=True)
        ]
        pending: list[Any] = []
        next_unit = 0
        window = actors_n * per
        while pending or (next_unit < len(queue) and not status):
            while not status and next_unit < len(queue) and len(pending) < window:
                actor = actors[next_unit % actors_n]
                pending.append(actor.play.remote(queue[next_unit]))
                next_unit += 1
            ready, pending = ray.wait(pending, num_returns=1, timeout=WRITE_INTERVAL_S)
            for ref in ready:
                recs = [EpisodeRecord.from_wire(r) for r in ray.get(ref)]
                writer.add(recs)
                spent += sum(r.cost_usd for r in recs)
                if options.max_cost_usd is not None and spent > options.max_cost_usd:
                    status = status or STATUS_BUDGET
                if any(r.halt for r in recs):
                    status = status or halt_status(recs)
            writer.maybe_flush()
            if not status and prog.cancelled():
                status = STATUS_CANCELLED
            if status == STATUS_CANCELLED:
                for ref in pending:
                    ray.cancel(ref)
                break
    finally:
        writer.flush()
        if started:
            ray.shutdown()
    return status
