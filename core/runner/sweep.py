"""Running a sweep: plan the keys, read the resume state, pick a backend, report the result.

The pieces:

* :mod:`core.runner.units` — one *unit* of episodes played through the episode driver;
* :mod:`core.runner.persist` — batched store writes and the resume rules;
* :mod:`core.runner.bookkeeping` — run statuses, progress, the batched writer, the shared plan;
* :mod:`core.runner.symbolic_backends` — inline, process-pool and Ray backends (symbolic);
* :mod:`core.runner.llm_backends` — asyncio backends (LLM), in one or several processes.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from core.errors import ConfigError
from core.model.run import RunOptions, RunResult, RunSpec
from core.runner.bookkeeping import (
    CANCEL_POLL_S,
    POOL_MIN_EPISODES,
    STATUS_BUDGET,
    STATUS_CANCELLED,
    STATUS_CANCELLING,
    STATUS_DONE,
    STATUS_DONE_ERRORS,
    STATUS_FAILED,
    STATUS_PENDING,
    STATUS_RUNNING,
    WRITE_BATCH,
    WRITE_INTERVAL_S,
    RunProgress,
    Sweep,
)
from core.runner.lifecycle import (
    STATUS_INTERRUPTED,
    RunLock,
    Terminated,
    guard_children,
    sigterm_interrupts,
    sweep_status,
)
from core.runner.llm_backends import LLM_EPISODES_PER_PROCESS, llm_processes, run_llm
from core.runner.persist import ResumeState, resume_state, write_records
from core.runner.plan import SampleSource, plan_keys, validate_spec
from core.runner.symbolic_backends import chunk_size, run_symbolic
from core.runner.units import key_id, units_of
from core.store import Store

__all__ = [
    "CANCEL_POLL_S",
    "LLM_EPISODES_PER_PROCESS",
    "POOL_MIN_EPISODES",
    "STATUS_BUDGET",
    "STATUS_CANCELLED",
    "STATUS_CANCELLING",
    "STATUS_DONE",
    "STATUS_DONE_ERRORS",
    "STATUS_FAILED",
    "STATUS_INTERRUPTED",
    "STATUS_PENDING",
    "STATUS_RUNNING",
    "WRITE_BATCH",
    "WRITE_INTERVAL_S",
    "ResumeState",
    "chunk_size",
    "llm_processes",
    "progress",
    "request_cancel",
    "resume_state",
    "run_sweep",
    "write_records",
]


def run_sweep(
    store: Store,
    spec: RunSpec,
    options: RunOptions | None = None,
    *,
    client: Any = None,
) -> RunResult:
    """Run (or resume) a sweep; every finished episode is written to ``store`` as it ends.

    The calling process owns the run while it plays (:mod:`core.runner.lifecycle`): an
    identical sweep started meanwhile is refused, forked workers die with this process, and
    SIGTERM leaves the run ``interrupted`` (resumable) and raises :class:`Terminated`.

    Args:
        store: The store (the only writer is this process).
        spec: What to run.
        options: How to run it.
        client: A chat model to use instead of building one from ``spec.agent`` (tests).

    Returns:
        The ``driftbench run`` summary.

    Raises:
        ConfigError: Invalid spec (nothing is written), or a run name taken by another spec.
        RunBusyError: Another live process is playing this run (nothing is written).
        Terminated: SIGTERM arrived (the run is marked interrupted first).
    """
    options = options or RunOptions()
    t0 = time.perf_counter()
    validate_spec(store, spec)
    run_id = spec.run_id()
    name = spec.display_name()
    existing = [r for r in store.list_runs() if r["name"] == name and r["run_id"] != run_id]
    if existing:
        raise ConfigError(f"run name {name!r} is taken by a different spec", field="--name")
    from core.llm.models import run_config

    with RunLock(store.path, run_id) as lock, sigterm_interrupts(), run_config(spec.models):
        lock.acquire(name)
        return _run_owned(store, spec, options, client, t0)


def _run_owned(
    store: Store, spec: RunSpec, options: RunOptions, client: Any, t0: float
) -> RunResult:
    """:func:`run_sweep` once this process holds the run's owner lock."""
    run_id = spec.run_id()
    name = spec.display_name()
    source = SampleSource(store)
    keys = plan_keys(source, spec)
    store.put_run(run_id, name, spec.model_dump_json(), len(keys))
    key_ids = [key_id(k) for k in keys]
    kids = {id(k): kid for k, kid in zip(keys, key_ids, strict=True)}
    rs = resume_state(store, run_id, keys, key_ids)
    show = options.progress if options.progress is not None else sys.stderr.isatty()
    prog = RunProgress(store, run_id, len(keys), len(rs.done), len(rs.errors), show)
    units = [u for u in units_of(keys, spec) if any(kids[id(k)] not in rs.done for k in u)]
    prog.flush(STATUS_RUNNING, force=True)
    prior_cost = float(store.get_run(run_id)["cost_usd"] or 0.0)
    prog.cost = prior_cost
    status = ""
    sw = Sweep(store, spec, units, kids, rs, prog, options)
    try:
        with guard_children():
            if spec.is_symbolic:
                status = run_symbolic(sw)
            else:
                status = run_llm(sw, client)
    except Terminated:
        prog.flush(STATUS_INTERRUPTED, force=True)
        prog.close()
        raise
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
    """The live progress row of a run (what the studio polls).

    A run whose owner is gone (killed, crashed) shows status ``interrupted`` (resumable).
    """
    r = store.get_run(run)
    total = int(r["total"]) or 1
    r["status"] = sweep_status(store.path, r)
    r["completed"], r["errors"] = store.run_counts(r["run_id"])  # stored, not the counters
    return {**r, "fraction": (int(r["completed"]) + int(r["errors"])) / total}


def request_cancel(store: Store, run: str) -> None:
    """Ask a running sweep to stop after the episodes in flight (cooperative)."""
    r = store.get_run(run)
    if r["status"] in (STATUS_RUNNING, STATUS_PENDING):
        store.set_run_status(r["run_id"], STATUS_CANCELLING)
