"""Sweeps: run specs over benchmarks × methods × personas × seeds, resumably.

Public API (the CLI and the studio pages call these):

* :func:`run_sweep` — run or resume a spec in this process; returns a :class:`RunResult`.
* :func:`launch` — start a sweep in a detached background process (the studio); returns pid.
* :func:`request_cancel` — ask a running sweep to stop after the episodes in flight.
* :func:`resume` — run a stored run's spec again (finished episodes are skipped).
* :func:`progress` — the live progress row (status, total, completed, errors, cost, fraction).
* :func:`run_demo` — the small symbolic demo sweep over the bundled data.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.model.run import RunOptions, RunResult, RunSpec
from core.paths import PROJECT_ROOT
from core.runner.plan import validate_spec
from core.runner.sweep import progress, request_cancel, run_sweep
from core.store import Store, utcnow

__all__ = [
    "DEMO_NAME",
    "launch",
    "progress",
    "request_cancel",
    "resume",
    "run_demo",
    "run_sweep",
    "validate_spec",
]

DEMO_NAME = "demo"
"""Name of the demo run."""


def demo_spec(store: Store | None = None) -> RunSpec:
    """The demo sweep: 2 samples per bundled benchmark × B0/A0/A2 × all personas × 1 seed."""
    from core.model.run import PERSONAS
    from core.runner.plan import SampleSource, select_samples

    source = SampleSource(store)
    benchmarks = []
    for b in ("webshop", "tau2_retail", "tau2_airline"):
        probe = RunSpec(benchmarks=(b,), methods=("B0",), personas=PERSONAS, limit=2)
        try:
            if select_samples(source, probe, b):
                benchmarks.append(b)
        except Exception:  # noqa: BLE001 - a benchmark without data is left out of the demo
            continue
    if not benchmarks:
        benchmarks = ["mock"]
    return RunSpec(
        name=DEMO_NAME,
        benchmarks=tuple(benchmarks),
        methods=("B0", "A0", "A2"),
        personas=PERSONAS,
        seeds=(0,),
        limit=2,
    )


def run_demo(store: Store) -> str:
    """Run the demo sweep (symbolic, a few seconds) and return its run name."""
    result = run_sweep(store, demo_spec(store), RunOptions(workers=1, progress=False))
    return result.run


def resume(store: Store, run: str, options: RunOptions | None = None) -> RunResult:
    """Run a stored run's spec again; finished episodes are skipped, errors retried."""
    from core.runner.plan import stored_spec

    return run_sweep(store, stored_spec(store, run), options)


def launch(
    store_path: Path,
    spec: RunSpec,
    options: RunOptions | None = None,
    *,
    log_path: Path | None = None,
) -> int:
    """Start a sweep in a detached background process and return its pid.

    The run row is created first, so the studio can show it at once; progress appears in the
    store as episodes finish. Cancel with :func:`request_cancel`.

    Args:
        store_path: The store file.
        spec: What to run.
        options: Runner options (the progress bar is always off in the background).
        log_path: Append the worker's stdout and stderr here (discarded when None).

    Raises:
        ConfigError: Invalid spec (nothing is written).
        RunBusyError: A live process is already playing this run (nothing is written).
    """
    from core.runner.lifecycle import RunBusyError, owner_alive
    from core.runner.plan import SampleSource, named_spec, plan_keys

    store = Store.open(store_path)
    try:
        spec = named_spec(store, spec)  # a taken name is refused; the same name resumes
        validate_spec(store, spec)
        if owner_alive(store_path, spec.run_id()):
            raise RunBusyError(f"run {spec.display_name()!r} is already running", field="--name")
        keys = plan_keys(SampleSource(store), spec)
        store.put_run(spec.run_id(), spec.display_name(), spec.model_dump_json(), len(keys))
    finally:
        store.close()
    opts = (options or RunOptions()).model_copy(update={"progress": False})
    cmd = [
        sys.executable,
        "-m",
        "core.runner",
        "--store",
        str(store_path),
        "--run",
        spec.run_id(),
        "--options",
        opts.model_dump_json(),
    ]
    with contextlib.ExitStack() as stack:
        out: Any = subprocess.DEVNULL
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            out = stack.enter_context(log_path.open("ab"))
            out.write(f"--- {utcnow()} launch {spec.display_name()}\n".encode())
            out.flush()
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if log_path is not None else subprocess.DEVNULL,
            start_new_session=True,
            cwd=str(PROJECT_ROOT),
            env=dict(os.environ),
        )
    return proc.pid
