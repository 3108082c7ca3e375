"""Running a sweep: resume bookkeeping, backends (inline, process pool, asyncio, Ray), progress.

The parent process is the only writer of the store; it writes finished episodes in batches
(one transaction per batch, at most :data:`WRITE_BATCH` episodes or :data:`WRITE_INTERVAL_S`
apart), so a crash loses at most the last batch, which a resume plays again. Resume rules: an
episode key whose latest row ended with a scored outcome is skipped; a key whose attempts all
ended in ERROR, or whose row was left ``running`` by a crash (marked ERROR ``interrupted``
first), is played again as a new attempt (``<key>-rN``; events are append-only, so a husk is
never rewritten).

Backends: symbolic sweeps run inline, or in a pool of warm worker processes (forked after the
worlds and samples are loaded, so each worker starts ready; units travel in chunks and records
come back as plain tuples), or on Ray; LLM sweeps run as asyncio tasks with the store writes,
cancel checks and progress updates on a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.model.episode import Outcome
from core.model.run import EpisodeKey, RunOptions, RunResult, RunSpec
from core.runner.plan import SampleSource, load_world, plan_keys, validate_spec
from core.runner.units import EpisodeRecord, key_id, play_llm_unit, play_symbolic_unit, units_of
from core.store import Store, utcnow

STATUS_PENDING = "pending"
STATUS_RUNNING = "running"
STATUS_DONE = "completed"
STATUS_DONE_ERRORS = "completed_with_errors"
STATUS_CANCELLING = "cancelling"
STATUS_CANCELLED = "cancelled"
STATUS_BUDGET = "budget_exceeded"
STATUS_FAILED = "failed"

WRITE_BATCH = 256
"""Most episodes written in one store transaction."""
WRITE_INTERVAL_S = 0.25
"""Longest a finished episode waits in memory before it is written."""
CANCEL_POLL_S = 0.2
"""How often a running sweep reads its run row for a cancel request."""
POOL_MIN_EPISODES = 64
"""Smaller symbolic sweeps run inline (a pool's start-up would not pay off)."""

_EPISODE_SQL = (
    "INSERT INTO episodes(episode_id, run_id, sample_id, benchmark, method, persona_id, seed, "
    "parent_episode_id, header, status, outcome, n_events, summary, created_at, ended_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 'ended', ?, ?, ?, ?, ?)"
)
_EVENT_SQL = "INSERT INTO events VALUES (?, ?, ?, ?, ?)"


def write_records(store: Store, records: Sequence[EpisodeRecord]) -> None:
    """Write finished episodes (row, events, outcome, summary) in one transaction.

    The rows are what :meth:`Store.create_episode`, :meth:`Store.append` and
    :meth:`Store.finish` would leave for each episode, written at once.
    """
    if not records:
        return
    now = utcnow()
    episodes = []
    events: list[tuple[str, int, str, int, str]] = []
    for rec in records:
        k, eid = rec.key, rec.episode_id
        summary = dict(rec.summary)
        if rec.cost_usd:
            summary["cost_usd"] = rec.cost_usd
        episodes.append(
            (
                eid,
                k.run_id,
                k.sample_id,
                k.benchmark,
                k.method,
                rec.persona_id or k.persona,
                k.seed,
                rec.header_json,
                rec.outcome,
                len(rec.events_json),
                json.dumps(summary),
                now,
                now,
            )
        )
        events.extend((eid, seq, kind, turn, body) for seq, kind, turn, body in rec.events_json)
    with store.transaction() as conn:
        conn.executemany(_EPISODE_SQL, episodes)
        conn.executemany(_EVENT_SQL, events)


def write_record(store: Store, rec: EpisodeRecord) -> None:
    """Write one finished episode (header, events, outcome) to the store."""
    write_records(store, [rec])


@dataclass
class ResumeState:
    """Per-key bookkeeping from the store rows of a run (keys are ``EpisodeKey.key()``)."""

    done: set[str] = field(default_factory=set)
    errors: set[str] = field(default_factory=set)
    attempts: dict[str, int] = field(default_factory=dict)


def resume_state(
    store: Store, run_id: str, keys: Sequence[EpisodeKey], key_ids: Sequence[str] | None = None
) -> ResumeState:
    """Read which keys are finished, which errored, and each key's next attempt number.

    Rows left ``running`` by a crash are marked ERROR (``interrupted``) on the way.
    """
    kids = key_ids if key_ids is not None else [key_id(k) for k in keys]
    by_cell = {k.cell(): kid for k, kid in zip(keys, kids, strict=True)}
    st = ResumeState()
    rows = store.episode_rows(run_id=run_id)
    latest: dict[str, tuple[int, str | None]] = {}
    for r in rows:
        cell = (r["benchmark"], r["sample_id"], r["method"], r["persona_id"], r["seed"])
        k = by_cell.get(cell)
        if k is None:
            continue
        st.attempts[k] = st.attempts.get(k, 0) + 1
        outcome = r["outcome"]
        if r["status"] != "ended":
            store.finish(
                r["episode_id"], Outcome.ERROR, {"error": "interrupted", "superseded": True}
            )
            outcome = Outcome.ERROR.value
        eid = r["episode_id"]
        n = int(eid.rsplit("-r", 1)[1]) if "-r" in eid else 0
        if k not in latest or n >= latest[k][0]:
            latest[k] = (n, outcome)
        if outcome != Outcome.ERROR.value:
            st.done.add(k)
    st.errors = {k for k, (_, o) in latest.items() if o == Outcome.ERROR.value} - st.done
    return st


class _Progress:
    """Progress counters mirrored to the store (throttled) and to a tqdm bar on a TTY."""

    def __init__(
        self, store: Store, run_id: str, total: int, done: int, errors: int, show: bool
    ) -> None:
        self.store, self.run_id = store, run_id
        self.total, self.completed, self.errors = total, done, errors
        self.cost = 0.0
        self._last = 0.0
        self._polled = 0.0
        self._cancel = False
        self._lock = threading.Lock()
        self.bar: Any = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="ep", file=sys.stderr)

    def add(self, rec: EpisodeRecord, was_error: bool) -> None:
        with self._lock:
            if rec.outcome == Outcome.ERROR.value:
                if not was_error:
                    self.errors += 1
            else:
                self.completed += 1
                if was_error:
                    self.errors -= 1
            self.cost += rec.cost_usd
        if self.bar is not None:
            self.bar.update(1)

    def flush(self, status: str | None = None, force: bool = False) -> None:
        """Mirror the counters to the run row (at most every 0.5 s unless forced).

        Periodic updates leave the status alone, so a cancel request written meanwhile by
        another process is never overwritten; ``status`` is set at the start and the end.
        """
        now = time.monotonic()
        if force or now - self._last > 0.5:
            self._last = now
            with self._lock:
                completed, errors, cost = self.completed, self.errors, self.cost
            if status is not None:
                self.store.set_run_status(
                    self.run_id, status, completed=completed, errors=errors, cost_usd=cost
                )
                return
            with self.store.transaction() as conn:
                conn.execute(
                    "UPDATE runs SET completed=?, errors=?, cost_usd=?, updated_at=? "
                    "WHERE run_id=?",
                    (completed, errors, cost, utcnow(), self.run_id),
                )

    def cancelled(self, force: bool = False) -> bool:
        """Whether a cancel was requested (the run row is read at most every 0.2 s)."""
        now = time.monotonic()
        if not self._cancel and (force or now - self._polled >= CANCEL_POLL_S):
            self._polled = now
            self._cancel = str(self.store.get_run(self.run_id)["status"]) == STATUS_CANCELLING
        return self._cancel

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Writer:
    """Buffers finished episodes and writes them in batches (thread-safe ``add``)."""

    def __init__(
        self,
        store: Store,
        prog: _Progress,
        errors: set[str],
        *,
        batch: int = WRITE_BATCH,
        interval_s: float = WRITE_INTERVAL_S,
    ) -> None:
        self.store, self.prog, self.errors = store, prog, errors
        self.batch, self.interval_s = batch, interval_s
        self._buf: list[EpisodeRecord] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._since = time.monotonic()

    def add(self, records: Iterable[EpisodeRecord]) -> None:
        """Queue records for writing (episodes replayed only for an A3 book are dropped)."""
        with self._lock:
            self._buf.extend(r for r in records if r.write)

    def due(self) -> bool:
        """Whether a batch is full or the oldest queued record waited long enough."""
        with self._lock:
            n = len(self._buf)
        return n >= self.batch or (n > 0 and time.monotonic() - self._since >= self.interval_s)

    def flush(self) -> int:
        """Write everything queued (one transaction per batch); return how many were written."""
        with self._write_lock:
            with self._lock:
                batch, self._buf = self._buf, []
                self._since = time.monotonic()
            for i in range(0, len(batch), self.batch):
                part = batch[i : i + self.batch]
                write_records(self.store, part)
                for rec in part:
                    self.prog.add(rec, rec.key_id in self.errors)
            if batch:
                self.prog.flush()
            return len(batch)

    def maybe_flush(self) -> None:
        """Flush when :meth:`due`."""
        if self.due():
            self.flush()


@dataclass
class _Sweep:
    """What every backend of one sweep shares: the store, the plan and the bookkeeping.

    Forked workers inherit a copy and use only the plan (``spec``, ``kids``, ``rs``,
    ``options``); the store, progress and writer belong to the parent, the only writer.
    """

    store: Store
    spec: RunSpec
    units: list[list[EpisodeKey]]
    kids: dict[int, str]
    rs: ResumeState
    prog: _Progress
    options: RunOptions

    def writer(self) -> _Writer:
        """A batched writer configured by the run options."""
        return _Writer(
            self.store,
            self.prog,
            self.rs.errors,
            batch=self.options.write_batch,
            interval_s=self.options.write_interval_s,
        )

    def key_ids(self, unit: Sequence[EpisodeKey]) -> list[str]:
        """The key ids of a unit's episodes."""
        return [self.kids[id(k)] for k in unit]


# -- symbolic backends ---------------------------------------------------------------------------
UnitWire = list[tuple[tuple[str, str, str, str, str, int], str]]
"""A unit in transit: (key fields, key id) per episode."""

_SHARED: dict[str, Any] = {}
"""Set in the parent before the pool forks: what workers inherit ready-made."""
_WORKER: dict[str, Any] = {}
"""Per worker process: spec, sample source, resume bookkeeping."""


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
) -> None:
    """Prepare a worker once: parse the spec, get samples and warm the worlds.

    Forked workers inherit the parent's loaded worlds and parsed samples (``_SHARED``); other
    start methods (and Ray workers) open the store and load them here, once per process.
    """
    spec = RunSpec.model_validate_json(spec_json)
    source = _SHARED.get("source")
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


def _preload(source: SampleSource, spec: RunSpec, units: list[list[EpisodeKey]]) -> None:
    """Load worlds and parse every sample and graph the units need (before forking)."""
    for b in spec.benchmarks:
        load_world(b)
    for unit in units:
        for k in unit:
            s = source.sample(k.benchmark, k.sample_id)
            source.graph(k.benchmark, s.graph_id)


def _freeze_heap() -> None:
    """Move everything loaded so far (worlds, samples) out of the collector's sight.

    The loaded worlds are hundreds of thousands of long-lived objects; without this every
    full collection walks them (about a tenth of a symbolic sweep's time), and in forked
    workers the walk also copies their memory pages. Undone with ``gc.unfreeze()``.
    """
    gc.collect()
    gc.freeze()


def _run_symbolic(sw: _Sweep) -> str:
    workers = sw.options.workers or os.cpu_count() or 1
    n_eps = sum(len(u) for u in sw.units)
    writer = sw.writer()
    if sw.options.backend == "ray":
        return _run_ray(sw, writer)
    source = SampleSource(sw.store)
    if workers <= 1 or n_eps < POOL_MIN_EPISODES or sys.platform == "win32":
        try:
            _preload(source, sw.spec, [])
            _freeze_heap()
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


def _run_pool(sw: _Sweep, writer: _Writer, workers: int, source: SampleSource) -> str:
    import multiprocessing as mp

    prog, rs = sw.prog, sw.rs
    _preload(source, sw.spec, sw.units)
    _SHARED["source"] = source
    _freeze_heap()  # forked workers then share the loaded worlds' pages instead of copying them
    wire = [_unit_wire(u, sw.kids) for u in _by_sample(sw.units)]
    size = chunk_size(len(wire), workers)
    ctx = mp.get_context("fork")
    status = ""
    try:
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(str(sw.store.path), sw.spec.model_dump_json(), rs.attempts, rs.done),
        ) as pool:
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
    finally:
        gc.unfreeze()
        _SHARED.clear()
        writer.flush()
    return status


def _run_ray(sw: _Sweep, writer: _Writer) -> str:
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


# -- LLM backend -------------------------------------------------------------------------------
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


def _run_llm(sw: _Sweep, client: Any = None) -> str:
    procs = llm_processes(sw.options, len(sw.units), client)
    if client is None:
        from core.llm import make_client

        client = make_client(sw.spec.agent, cache_path=sw.store.path)
    source = SampleSource(sw.store)
    _preload(source, sw.spec, sw.units)
    if procs > 1:
        warm = getattr(client, "warm", None)
        if callable(warm):
            warm()  # the forked workers inherit it instead of each loading it again
        return _run_llm_pool(sw, client, source, procs)
    return asyncio.run(_llm_main(sw, client, source))


async def _llm_loop(
    sw: _Sweep,
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


async def _llm_main(sw: _Sweep, client: Any, source: SampleSource) -> str:
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
    sw: _Sweep,
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


def _run_llm_pool(sw: _Sweep, client: Any, source: SampleSource, procs: int) -> str:
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


# -- entry point -------------------------------------------------------------------------------
def run_sweep(
    store: Store,
    spec: RunSpec,
    options: RunOptions | None = None,
    *,
    client: Any = None,
) -> RunResult:
    """Run (or resume) a sweep; every finished episode is written to ``store`` as it ends.

    Args:
        store: The store (the only writer is this process).
        spec: What to run.
        options: How to run it.
        client: A chat model to use instead of building one from ``spec.agent`` (tests).

    Returns:
        The ``driftbench run`` summary.

    Raises:
        ConfigError: Invalid spec (nothing is written), or a run name taken by another spec.
    """
    options = options or RunOptions()
    t0 = time.perf_counter()
    validate_spec(store, spec)
    run_id = spec.run_id()
    name = spec.display_name()
    existing = [r for r in store.list_runs() if r["name"] == name and r["run_id"] != run_id]
    if existing:
        raise ConfigError(f"run name {name!r} is taken by a different spec", field="--name")
    source = SampleSource(store)
    keys = plan_keys(source, spec)
    store.put_run(run_id, name, spec.model_dump_json(), len(keys))
    key_ids = [key_id(k) for k in keys]
    kids = {id(k): kid for k, kid in zip(keys, key_ids, strict=True)}
    rs = resume_state(store, run_id, keys, key_ids)
    show = options.progress if options.progress is not None else sys.stderr.isatty()
    prog = _Progress(store, run_id, len(keys), len(rs.done), len(rs.errors), show)
    units = [u for u in units_of(keys, spec) if any(kids[id(k)] not in rs.done for k in u)]
    prog.flush(STATUS_RUNNING, force=True)
    prior_cost = float(store.get_run(run_id)["cost_usd"] or 0.0)
    prog.cost = prior_cost
    status = ""
    sw = _Sweep(store, spec, units, kids, rs, prog, options)
    try:
        if spec.is_symbolic:
            status = _run_symbolic(sw)
        else:
            status = _run_llm(sw, client)
    except KeyboardInterrupt:
        prog.flush(STATUS_CANCELLED, force=True)
        prog.close()
        raise
    except Exception:
        prog.flush(STATUS_FAILED, force=True)
        prog.close()
        raise
    if not status:
        status = STATUS_DONE_ERRORS if prog.errors else STATUS_DONE
    prog.flush(status, force=True)
    prog.close()
    return RunResult(
        run=name,
        run_id=run_id,
        episodes=len(keys),
        completed=prog.completed,
        errors=prog.errors,
        skipped=len(rs.done),
        seconds=time.perf_counter() - t0,
        cost_usd=prog.cost - prior_cost,
        status=status,
    )


def progress(store: Store, run: str) -> dict[str, Any]:
    """The live progress row of a run (what the studio polls)."""
    r = store.get_run(run)
    total = int(r["total"]) or 1
    return {**r, "fraction": (int(r["completed"]) + int(r["errors"])) / total}


def request_cancel(store: Store, run: str) -> None:
    """Ask a running sweep to stop after the episodes in flight (cooperative)."""
    r = store.get_run(run)
    if r["status"] in (STATUS_RUNNING, STATUS_PENDING):
        store.set_run_status(r["run_id"], STATUS_CANCELLING)


def iter_keys(spec: RunSpec, store: Store | None) -> Iterable[EpisodeKey]:
    """Every episode key of a spec (deterministic order)."""
    return plan_keys(SampleSource(store), spec)
