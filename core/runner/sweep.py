"""Running a sweep: resume bookkeeping, backends (inline, process pool, asyncio, Ray), progress.

The parent process is the only writer of the store. Resume rules: an episode key whose latest
row ended with a scored outcome is skipped; a key whose attempts all ended in ERROR, or whose
row was left ``running`` by a crash (marked ERROR ``interrupted`` first), is played again as a
new attempt (``<key>-rN``; events are append-only, so a husk is never rewritten).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from core.errors import ConfigError
from core.model.episode import Outcome
from core.model.run import EpisodeKey, RunOptions, RunResult, RunSpec
from core.runner.plan import SampleSource, load_world, plan_keys, validate_spec
from core.runner.play import (
    EpisodeRecord,
    play_llm_unit,
    play_symbolic_unit,
    record_from_json,
    record_to_json,
    units_of,
)
from core.store import Store

STATUS_PENDING = "pending"
STATUS_RUNNING = "running"
STATUS_DONE = "completed"
STATUS_DONE_ERRORS = "completed_with_errors"
STATUS_CANCELLING = "cancelling"
STATUS_CANCELLED = "cancelled"
STATUS_BUDGET = "budget_exceeded"
STATUS_FAILED = "failed"


class _RawHeader:
    """A stored header JSON with the attributes :meth:`Store.create_episode` reads."""

    def __init__(self, text: str) -> None:
        d = json.loads(text)
        self._text = text
        self.episode_id: str = d["episode_id"]
        self.run_id: str | None = d.get("run_id")
        self.sample_id: str = d["sample_id"]
        self.benchmark: str = d["benchmark"]
        self.method: str = d["method"]
        self.persona_id: str = d["persona_id"]
        self.seed: int = d["seed"]
        self.parent_episode_id: str | None = d.get("parent_episode_id")

    def model_dump_json(self) -> str:
        return self._text


class _RawEvent:
    __slots__ = ("seq", "kind", "turn", "_text")

    def __init__(self, seq: int, kind: str, turn: int, text: str) -> None:
        self.seq, self.kind, self.turn, self._text = seq, kind, turn, text

    def model_dump_json(self) -> str:
        return self._text


def write_record(store: Store, rec: EpisodeRecord) -> None:
    """Write one finished episode (header, events, outcome) to the store."""
    store.create_episode(_RawHeader(rec.header_json))
    store.append(_eid(rec), [_RawEvent(*e) for e in rec.events_json])
    summary = dict(rec.summary)
    if rec.cost_usd:
        summary["cost_usd"] = rec.cost_usd
    store.finish(_eid(rec), rec.outcome, summary)


def _eid(rec: EpisodeRecord) -> str:
    return str(json.loads(rec.header_json)["episode_id"])


@dataclass
class ResumeState:
    """Per-key bookkeeping from the store rows of a run."""

    done: set[str] = field(default_factory=set)
    errors: set[str] = field(default_factory=set)
    attempts: dict[str, int] = field(default_factory=dict)


def resume_state(store: Store, run_id: str, keys: Sequence[EpisodeKey]) -> ResumeState:
    """Read which keys are finished, which errored, and each key's next attempt number.

    Rows left ``running`` by a crash are marked ERROR (``interrupted``) on the way.
    """
    by_cell = {k.cell(): k for k in keys}
    st = ResumeState()
    rows = store.episode_rows(run_id=run_id)
    latest: dict[str, tuple[int, str | None]] = {}
    for r in rows:
        cell = (r["benchmark"], r["sample_id"], r["method"], r["persona_id"], r["seed"])
        key = by_cell.get(cell)
        if key is None:
            continue
        k = key.key()
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
        self.bar: Any = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="ep", file=sys.stderr)

    def add(self, rec: EpisodeRecord, was_error: bool) -> None:
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
        self.flush()

    def flush(self, status: str = STATUS_RUNNING, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last > 0.5:
            self._last = now
            self.store.set_run_status(
                self.run_id,
                status,
                completed=self.completed,
                errors=self.errors,
                cost_usd=self.cost,
            )

    def cancelled(self) -> bool:
        return str(self.store.get_run(self.run_id)["status"]) == STATUS_CANCELLING

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# -- symbolic backends ---------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _worker_init(store_path: str | None) -> None:
    _WORKER["source"] = SampleSource(Store.open(_path(store_path)) if store_path else None)


def _path(p: str) -> Any:
    from pathlib import Path

    return Path(p)


def _play_chunk(
    spec_json: str, units: list[list[dict[str, Any]]], attempts: dict[str, int], skip: list[str]
) -> list[str]:
    spec = RunSpec.model_validate_json(spec_json)
    source = _WORKER.get("source") or SampleSource(None)
    out: list[str] = []
    for unit in units:
        keys = [EpisodeKey.model_validate(k) for k in unit]
        res = play_symbolic_unit(keys, spec, source, attempts=attempts, skip=set(skip))
        out.extend(record_to_json(r) for r in res.records if r.write)
    return out


def _chunks(units: list[list[EpisodeKey]], size: int) -> Iterator[list[list[EpisodeKey]]]:
    for i in range(0, len(units), size):
        yield units[i : i + size]


def _run_symbolic(
    store: Store,
    spec: RunSpec,
    units: list[list[EpisodeKey]],
    rs: ResumeState,
    prog: _Progress,
    options: RunOptions,
) -> str:
    workers = options.workers or os.cpu_count() or 1
    n_eps = sum(len(u) for u in units)
    skip = sorted(rs.done)
    if options.backend == "ray":
        return _run_ray(store, spec, units, rs, prog, options)
    if workers <= 1 or n_eps < 64:
        source = SampleSource(store)
        for unit in units:
            if prog.cancelled():
                return STATUS_CANCELLED
            res = play_symbolic_unit(unit, spec, source, attempts=rs.attempts, skip=rs.done)
            for rec in res.records:
                if rec.write:
                    write_record(store, rec)
                    prog.add(rec, rec.key.key() in rs.errors)
        return ""
    for b in spec.benchmarks:
        load_world(b)  # loaded once in the parent; forked workers inherit it
    size = max(1, min(64, len(units) // (workers * 4) or 1))
    spec_json = spec.model_dump_json()
    import multiprocessing as mp

    ctx = mp.get_context("fork") if sys.platform != "win32" else mp.get_context()
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_worker_init, initargs=(str(store.path),)
    ) as pool:
        pending: set[Future[list[str]]] = set()
        it = iter(_chunks(units, size))
        status = ""
        for chunk in it:
            pending.add(
                pool.submit(
                    _play_chunk,
                    spec_json,
                    [[k.model_dump() for k in u] for u in chunk],
                    rs.attempts,
                    skip,
                )
            )
            if len(pending) >= workers * 2:
                break
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                for text in fut.result():
                    rec = record_from_json(text)
                    write_record(store, rec)
                    prog.add(rec, rec.key.key() in rs.errors)
                if not status:
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(
                            pool.submit(
                                _play_chunk,
                                spec_json,
                                [[k.model_dump() for k in u] for u in nxt],
                                rs.attempts,
                                skip,
                            )
                        )
            if not status and prog.cancelled():
                status = STATUS_CANCELLED
                for f in pending:
                    f.cancel()
            prog.flush()
        return status


def _run_ray(
    store: Store,
    spec: RunSpec,
    units: list[list[EpisodeKey]],
    rs: ResumeState,
    prog: _Progress,
    options: RunOptions,
) -> str:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "Ray is not installed (pip install 'driftbench-studio[ray]')", field="--backend"
        ) from None
    if not ray.is_initialized():
        ray.init(num_cpus=options.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(_ray_chunk)
    spec_json = spec.model_dump_json()
    size = max(1, len(units) // ((options.workers or os.cpu_count() or 1) * 4) or 1)
    refs = [
        remote.remote(
            spec_json,
            str(store.path),
            [[k.model_dump() for k in u] for u in chunk],
            rs.attempts,
            sorted(rs.done),
        )
        for chunk in _chunks(units, size)
    ]
    for ref in refs:
        for text in ray.get(ref):
            rec = record_from_json(text)
            write_record(store, rec)
            prog.add(rec, rec.key.key() in rs.errors)
    return ""


def _ray_chunk(
    spec_json: str,
    store_path: str,
    units: list[list[dict[str, Any]]],
    attempts: dict[str, int],
    skip: list[str],
) -> list[str]:
    if "source" not in _WORKER:
        _worker_init(store_path)
    return _play_chunk(spec_json, units, attempts, skip)


# -- LLM backend -------------------------------------------------------------------------------
def _run_llm(
    store: Store,
    spec: RunSpec,
    units: list[list[EpisodeKey]],
    rs: ResumeState,
    prog: _Progress,
    options: RunOptions,
    client: Any = None,
) -> str:
    if client is None:
        from core.llm import make_client

        client = make_client(spec.agent, cache_path=store.path)
    return asyncio.run(_llm_main(store, spec, units, rs, prog, options, client))


async def _llm_main(
    store: Store,
    spec: RunSpec,
    units: list[list[EpisodeKey]],
    rs: ResumeState,
    prog: _Progress,
    options: RunOptions,
    client: Any,
) -> str:
    sem = asyncio.Semaphore(options.concurrency)
    source = SampleSource(store)
    status = {"value": ""}

    async def one(unit: list[EpisodeKey]) -> None:
        async with sem:
            if status["value"]:
                return
            res = await play_llm_unit(
                unit,
                spec,
                source,
                client,
                attempts=rs.attempts,
                skip=rs.done,
                max_attempts=options.max_attempts,
                backoff_s=options.retry_backoff_s,
            )
            for rec in res.records:
                if rec.write:
                    write_record(store, rec)
                    prog.add(rec, rec.key.key() in rs.errors)
            if options.max_cost_usd is not None and prog.cost > options.max_cost_usd:
                status["value"] = STATUS_BUDGET
            elif prog.cancelled():
                status["value"] = STATUS_CANCELLED

    await asyncio.gather(*(one(u) for u in units))
    return status["value"]


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
    rs = resume_state(store, run_id, keys)
    show = options.progress if options.progress is not None else sys.stderr.isatty()
    prog = _Progress(store, run_id, len(keys), len(rs.done), len(rs.errors), show)
    todo = [k for k in keys if k.key() not in rs.done]
    todo_keys = {k.key() for k in todo}
    units = [u for u in units_of(keys, spec) if any(k.key() in todo_keys for k in u)]
    prog.flush(STATUS_RUNNING, force=True)
    prior_cost = float(store.get_run(run_id)["cost_usd"] or 0.0)
    prog.cost = prior_cost
    status = ""
    try:
        if spec.is_symbolic:
            status = _run_symbolic(store, spec, units, rs, prog, options)
        else:
            status = _run_llm(store, spec, units, rs, prog, options, client)
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
