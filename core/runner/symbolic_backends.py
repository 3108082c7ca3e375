"""Symbolic sweep backends: inline, a pool of warm forked worker processes, or Ray.

Pool workers are forked after the worlds and samples are loaded, so each starts ready (the
loaded sample source is handed to them through the fork, never pickled); units travel in
chunks grouped by sample and records come back as plain tuples. Ray workers (and any start
method but fork) open the store and load everything once per process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.model.run import EpisodeKey, RunSpec
from core.runner.bookkeeping import (
    POOL_MIN_EPISODES,
    STATUS_CANCELLED,
    WRITE_INTERVAL_S,
    BatchWriter,
    Sweep,
    freeze_heap,
    preload,
)
from core.runner.plan import SampleSource, load_world
from core.runner.units import EpisodeRecord, play_symbolic_unit
from core.store import Store

UnitWire = list[tuple[tuple[str, str, str, str, str, int], str]]
"""A unit in transit: (key fields, key id) per episode."""

_WORKER: dict[str, Any] = {}
"""The worker process's own context (spec, sample source, resume bookkeeping), set once by
:func:`_worker_init` in each pool or Ray worker; the parent process never fills it."""


def _by_sample(units: list[list[EpisodeKey]]) -> list[list[EpisodeKey]]:
    """Units grouped by (benchmark, sample), so one worker plays all episodes of a sample.

    Worlds memoise per-request work (searches, compiled plans) in each process; grouping
    does that work once per sample instead of once per worker. Each unit plays the same
    wherever it runs, so the order changes nothing but which process warms which cache.
    """
    order = sorted(
        range(len(units)), key=lambda i: (units[i][0].benchmark, units[i][0].sample_id, i)
    )
    return [units[i] for i in order]


def _unit_wire(unit: Sequence[EpisodeKey], kids: dict[int, str]) -> UnitWire:
    return [
        ((k.run_id, k.benchmark, k.sample_id, k.method, k.persona, k.seed), kids[id(k)])
        for k in unit
    ]


def _worker_init(
    store_path: str | None,
    spec_json: str,
    attempts: dict[str, int],
    skip: set[str],
    source: SampleSource | None = None,
) -> None:
    """Prepare a worker once: parse the spec, get samples and warm the worlds.

    Forked workers receive the parent's loaded sample source (``source``: the fork hands the
    object over without pickling it) and inherit its loaded worlds; Ray workers open the store
    and load them here, once per process.
    """
    spec = RunSpec.model_validate_json(spec_json)
    if source is None:
        source = SampleSource(Store.open(Path(store_path)) if store_path else None)
    for b in spec.benchmarks:
        load_world(b)
    _WORKER.update(spec=spec, source=source, attempts=attempts, skip=skip)


def _play_chunk(units: list[UnitWire]) -> list[tuple[Any, ...]]:
    """Play units in a worker; return the records to write, as plain tuples."""
    spec: RunSpec = _WORKER["spec"]
    out: list[tuple[Any, ...]] = []
    for unit in units:
        keys = [
            EpisodeKey(run_id=r, benchmark=b, sample_id=s, method=m, persona=p, seed=sd)
            for (r, b, s, m, p, sd), _ in unit
        ]
        res = play_symbolic_unit(
            keys,
            spec,
            _WORKER["source"],
            attempts=_WORKER["attempts"],
            skip=_WORKER["skip"],
            key_ids=[kid for _, kid in unit],
        )
        out.extend(r.to_wire() for r in res.records if r.write)
    return out


def _chunks(units: list[UnitWire], size: int) -> Iterator[list[UnitWire]]:
    for i in range(0, len(units), size):
        yield units[i : i + size]


def chunk_size(n_units: int, workers: int) -> int:
    """Units per pool task: about 8 tasks per worker (load balance), at most 64 units."""
    return max(1, min(64, -(-n_units // (workers * 8))))


def run_symbolic(sw: Sweep) -> str:
    """Play a symbolic sweep's units (inline, pool or Ray); return a stop status or ''."""
    workers = sw.options.workers or os.cpu_count() or 1
    n_eps = sum(len(u) for u in sw.units)
    writer = sw.writer()
    if sw.options.backend == "ray":
        return _run_ray(sw, writer)
    source = SampleSource(sw.store)
    if workers <= 1 or n_eps < POOL_MIN_EPISODES or sys.platform == "win32":
        try:
            preload(source, sw.spec, [])
            freeze_heap()
            for unit in sw.units:
                if sw.prog.cancelled():
                    return STATUS_CANCELLED
                res = play_symbolic_unit(
                    unit,
                    sw.spec,
                    source,
                    attempts=sw.rs.attempts,
                    skip=sw.rs.done,
                    key_ids=sw.key_ids(unit),
                )
                writer.add(res.records)
                writer.maybe_flush()
            return ""
        finally:
            gc.unfreeze()
            writer.flush()
    return _run_pool(sw, writer, workers, source)


def _run_pool(sw: Sweep, writer: BatchWriter, workers: int, source: SampleSource) -> str:
    import multiprocessing as mp

    prog, rs = sw.prog, sw.rs
    preload(source, sw.spec, sw.units)
    freeze_heap()  # forked workers then share the loaded worlds' pages instead of copying them
    wire = [_unit_wire(u, sw.kids) for u in _by_sample(sw.units)]
    size = chunk_size(len(wire), workers)
    ctx = mp.get_context("fork")
    status = ""
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(str(sw.store.path), sw.spec.model_dump_json(), rs.attempts, rs.done, source),
    )
    try:
        it = _chunks(wire, size)
        pending: set[Future[list[tuple[Any, ...]]]] = set()
        for chunk in it:
            pending.add(pool.submit(_play_chunk, chunk))
            if len(pending) >= workers * 3:
                break
        while pending:
            done, pending = wait(pending, timeout=WRITE_INTERVAL_S, return_when=FIRST_COMPLETED)
            for fut in done:
                writer.add(EpisodeRecord.from_wire(r) for r in fut.result())
                if not status:
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(pool.submit(_play_chunk, nxt))
            writer.maybe_flush()
            if not status and prog.cancelled():
                status = STATUS_CANCELLED
                for f in pending:
                    f.cancel()
        pool.shutdown(wait=True)
    except BaseException:
        _kill_pool(pool)  # SIGTERM, Ctrl-C, a failure: stop now, do not drain the queue
        raise
    finally:
        gc.unfreeze()
        writer.flush()
    return status


def _kill_pool(pool: ProcessPoolExecutor) -> None:
    """Kill a pool's workers and drop its queued chunks (their episodes replay on resume)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    with contextlib.suppress(Exception):
        pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(timeout=5)
    # Python 3.11's exit hook wakes every pool's manager thread through a pipe that a killed
    # pool has already closed ("Exception ignored … Bad file descriptor" on stderr after the
    # one-line SIGTERM message): once the manager thread is gone, forget its wake-up pipe.
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        with contextlib.suppress(Exception):
            manager.join(timeout=5)
            if not manager.is_alive():
                from concurrent.futures import process as cf_process

                cf_process._threads_wakeups.pop(manager, None)


def _run_ray(sw: Sweep, writer: BatchWriter) -> str:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "Ray is not installed (pip install 'driftbench-studio[ray]')", field="--backend"
        ) from None
    workers = sw.options.workers or os.cpu_count() or 1
    rs = sw.rs
    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    status = ""
    try:
        remote = ray.remote(_ray_chunk)
        ctx = ray.put(
            (str(sw.store.path), sw.spec.model_dump_json(), dict(rs.attempts), set(rs.done))
        )
        wire = [_unit_wire(u, sw.kids) for u in _by_sample(sw.units)]
        pending = [
            remote.remote(ctx, chunk) for chunk in _chunks(wire, chunk_size(len(wire), workers))
        ]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=WRITE_INTERVAL_S)
            for ref in ready:
                writer.add(EpisodeRecord.from_wire(r) for r in ray.get(ref))
            writer.maybe_flush()
            if writer.prog.cancelled():
                status = STATUS_CANCELLED
                for ref in pending:
                    ray.cancel(ref)
                break
    finally:
        writer.flush()
        if started:
            ray.shutdown()
    return status


def _ray_chunk(
    ctx: tuple[str, str, dict[str, int], set[str]], units: list[UnitWire]
) -> list[tuple[Any, ...]]:
    """A Ray task: set the worker up once (per process), then play a chunk."""
    if "spec" not in _WORKER or _WORKER.get("ctx") != ctx[1]:
        _worker_init(*ctx)
        _WORKER["ctx"] = ctx[1]
    return _play_chunk(units)
