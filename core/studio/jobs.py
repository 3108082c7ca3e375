"""Background sweeps for the studio: compose a spec, launch, watch, cancel, stop, resume.

The runner (:mod:`core.runner`) does the work: :func:`core.runner.launch` starts a detached
``python -m core.runner`` process (its own session, so its pid is also its process-group id)
and returns its pid; progress lives in the store's ``runs`` table; cancelling is cooperative
(``request_cancel`` sets status ``cancelling`` and the sweep stops after the episodes in
flight; for a worker the studio started, :func:`cancel_job` also interrupts it); resuming
runs the same spec again, skipping finished episodes.

This module adds what a page needs on top of that:

* a launch that keeps the worker's output (``<store dir>/jobs/<run_id>.log``);
* a record of the worker each studio launch started (``<store dir>/jobs/<run_id>.json``: pid
  and the process start time, so a recycled pid is never mistaken for our worker);
* liveness of that worker (reaping it when it is our child), and reconciliation of a run whose
  worker died without writing a final status (→ ``failed``, resumable);
* a hard stop that terminates only that recorded worker's process group.

Runs launched elsewhere (the CLI) have no job record: their worker is "unknown" and is never
signalled. Branch runs (:mod:`core.studio.branches`) are listed too, with the state of their one
episode; they are never cancelled or resumed as sweeps.

What the Runs page may offer follows from a row's state (:meth:`RunRow.can_cancel`,
:meth:`RunRow.can_resume`, :meth:`RunRow.can_stop`), and its progress line carries a rate and an
ETA measured since the worker started (:func:`progress_rate`).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from core.errors import ConfigError
from core.model.base import Strict
from core.model.run import (
    RunOptions,
    RunSpec,
    agent_of_spec_json,
    is_symbolic_agent,
)
from core.runner.costs import cost_split
from core.runner.lifecycle import effective_status
from core.runner.spec_build import build_spec
from core.store import Store, utcnow
from core.studio.branches import branch_spec, sync_branch_runs

ACTIVE = frozenset({"pending", "running", "cancelling"})
"""Run statuses during which a worker should be alive."""

RESUMABLE = frozenset({"failed", "cancelled", "interrupted"})
"""Run statuses a sweep can be resumed from (a completed run has nothing left to do)."""

Worker = Literal["alive", "exited", "unknown"]
RunKind = Literal["sweep", "branch", "imported"]

Launcher = Callable[[Path, RunSpec, RunOptions | None], int]
"""``(store_path, spec, options) -> pid``; :func:`logged_launch` by default."""


class Job(Strict):
    """The worker process a studio launch started for a run."""

    run_id: str
    name: str
    pid: int
    start_ticks: int | None = None
    started_at: str
    done_at_start: int | None = None


class RunRow(Strict):
    """One run as the Runs page shows it."""

    run_id: str
    name: str
    status: str
    total: int
    completed: int
    errors: int
    cost_usd: float
    fraction: float
    agent: str
    symbolic: bool
    updated_at: str
    pid: int | None = None
    worker: Worker = "unknown"
    kind: RunKind = "sweep"
    parent_episode_id: str | None = None
    created_at: str = ""
    rate_per_s: float | None = None
    eta_s: float | None = None
    cost_by_role: dict[str, float | str] = Field(
        default_factory=dict, description="USD per role (agent, voice, …) or 'unpriced'."
    )

    @property
    def cost_split_text(self) -> str:
        """The cost by role in words, e.g. ``agent $0.0120, voice unpriced``."""
        return ", ".join(
            f"{role} {value}" if isinstance(value, str) else f"{role} ${value:.4f}"
            for role, value in self.cost_by_role.items()
        )

    @property
    def active(self) -> bool:
        """Whether the run is pending, running or cancelling."""
        return self.status in ACTIVE

    @property
    def done(self) -> int:
        """Episodes finished (completed or errored)."""
        return self.completed + self.errors

    @property
    def live(self) -> bool:
        """Whether the page should keep polling this run (active, or its worker still runs)."""
        return self.active or self.worker == "alive"

    @property
    def can_cancel(self) -> bool:
        """A sweep that is pending or running can be asked to stop."""
        return self.kind == "sweep" and self.status in ("pending", "running")

    @property
    def can_stop(self) -> bool:
        """Only a worker this studio started and that still runs can be terminated."""
        return self.kind == "sweep" and self.worker == "alive"

    @property
    def can_resume(self) -> bool:
        """A sweep that failed, was cancelled or interrupted, and has no live worker."""
        return self.kind == "sweep" and self.status in RESUMABLE and self.worker != "alive"

    def progress_text(self) -> str:
        """``status · done/total · rate · ETA`` for the progress bar."""
        parts = [self.status, f"{self.done}/{self.total} episodes"]
        if self.rate_per_s:
            per_min = self.rate_per_s * 60
            parts.append(f"{per_min:.1f}/min" if per_min < 100 else f"{per_min:.0f}/min")
        if self.eta_s is not None and self.active:
            parts.append(f"ETA {fmt_duration(self.eta_s)}")
        if self.errors:
            parts.append(f"{self.errors} errors")
        return " · ".join(parts)


def fmt_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _seconds(stamp: str | None) -> float | None:
    from datetime import datetime

    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return None


def progress_rate(
    *,
    done: int,
    total: int,
    active: bool,
    now: float,
    job: Job | None,
    created_at: str | None,
    updated_at: str | None,
) -> tuple[float | None, float | None]:
    """Episodes per second since the worker started, and the seconds left at that rate.

    With a job record (a studio launch) the rate counts the episodes finished since that
    launch (a resumed run does not claim the earlier episodes); otherwise it is the run's
    average between its creation and its last update. Unknown → (None, None).
    """
    if job is not None and job.done_at_start is not None:
        start = _seconds(job.started_at)
        gained = done - job.done_at_start
        end = now if active else (_seconds(updated_at) or now)
    else:
        start = _seconds(created_at)
        gained = done
        end = now if active else (_seconds(updated_at) or now)
    if start is None or gained <= 0 or end <= start:
        return None, None
    rate = gained / (end - start)
    eta = (total - done) / rate if active and total > done else None
    return rate, eta


# ---------------------------------------------------------------------------------- specs
def spec_from_form(*, personas: Sequence[str], limit: int | None = None, **choices: Any) -> RunSpec:
    """Build a :class:`RunSpec` from the Runs form (validated; nothing is written).

    The same construction as ``driftbench run`` (:func:`core.runner.spec_build.build_spec`,
    whose arguments the form's other fields are): the same role defaults from the models file
    (a blank agent or user voice is the file's, else symbolic / template) and every LLM role's
    settings in the spec, so a run launched here has the identity the command gives it.

    Args:
        personas: Persona ids (the form needs at least one).
        limit: Samples per benchmark (None or 0 = all).
        **choices: ``benchmarks``, ``methods``, ``seeds``, ``agent``, ``user_voice``, ``name``,
            ``source``, ``split``, ``shifts``, ``faults`` as :func:`build_spec` takes them.

    Raises:
        ConfigError: Naming the form field that is wrong (file ``run form``).
    """
    if not personas:
        raise ConfigError("choose at least one of personas", file="run form", field="personas")
    return build_spec(
        personas=personas,
        limit=int(limit) if limit else None,
        field_of=str,
        file="run form",
        **choices,
    )


# ---------------------------------------------------------------------------------- job files
def jobs_dir(store: Store | Path) -> Path:
    """Folder of the job records (beside the store file; a store or its file's path)."""
    return Path(store.path if isinstance(store, Store) else store).parent / "jobs"


def _job_path(store: Store, run_id: str) -> Path:
    return jobs_dir(store) / f"{run_id}.json"


def read_job(store: Store, run_id: str) -> Job | None:
    """The recorded worker of ``run_id`` (None if the studio never launched it)."""
    p = _job_path(store, run_id)
    if not p.exists():
        return None
    try:
        return Job.model_validate_json(p.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return None


def _write_job(store: Store, job: Job) -> None:
    d = jobs_dir(store)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{job.run_id}.json.tmp"
    tmp.write_text(job.model_dump_json(), encoding="utf-8")
    tmp.replace(_job_path(store, job.run_id))


# ---------------------------------------------------------------------------------- processes
def start_ticks(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (Linux ``/proc``), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(raw[raw.rindex(")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


def _reap(pid: int) -> None:
    """Collect ``pid``'s exit status if it is our exited child (avoids counting a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


def pid_alive(pid: int, ticks: int | None = None) -> bool:
    """Whether ``pid`` runs (and, when ``ticks`` is given, is the same process we started)."""
    _reap(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    now = start_ticks(pid)
    if now is None:
        # no /proc (or a zombie we cannot reap): trust kill(0) only when we cannot check
        return not Path("/proc").is_dir()
    if ticks is not None and now != ticks:
        return False  # the pid was recycled
    state = _proc_state(pid)
    return state not in ("Z", "X")


def _proc_state(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
        return raw[raw.rindex(")") + 2 :].split()[0]
    except (OSError, ValueError, IndexError):
        return None


def worker_state(store: Store, run_id: str) -> tuple[Worker, int | None]:
    """(``alive`` | ``exited`` | ``unknown``, pid) of a run's recorded worker."""
    job = read_job(store, run_id)
    if job is None:
        return "unknown", None
    return ("alive" if pid_alive(job.pid, job.start_ticks) else "exited"), job.pid


# ---------------------------------------------------------------------------------- actions
def logged_launch(store_path: Path, spec: RunSpec, options: RunOptions | None = None) -> int:
    """:func:`core.runner.launch` with the worker's output kept in ``<store dir>/jobs/<run>.log``.

    So a failed run can say why (:func:`worker_log`).

    Raises:
        ConfigError: Invalid spec (nothing is written).
    """
    from core.runner import launch

    return launch(store_path, spec, options, log_path=jobs_dir(store_path) / f"{spec.run_id()}.log")


def worker_log(store: Store, run_id: str, lines: int = 30) -> str:
    """The last ``lines`` lines of a run's worker log ("" when there is none)."""
    p = jobs_dir(store) / f"{run_id}.log"
    if not p.exists():
        return ""
    text = p.read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def launch_job(
    store: Store,
    spec: RunSpec,
    options: RunOptions | None = None,
    *,
    launcher: Launcher | None = None,
) -> Job:
    """Start ``spec`` in a background worker process and record it.

    Running the same spec again resumes it (finished episodes are skipped).

    Raises:
        ConfigError: Invalid spec, a name taken by a different spec, or the run is already
            being worked on by a live worker.
    """
    from core.runner.plan import named_spec

    try:  # the same name and spec resumes that run (under its stored id)
        spec = named_spec(store, spec)
    except ConfigError as exc:
        raise ConfigError(exc.detail, file="run form", field="name") from None
    run_id = spec.run_id()
    name = spec.display_name()
    row = store.conn.execute("SELECT run_id FROM runs WHERE name=?", (name,)).fetchone()
    if row is not None and row[0] != run_id:
        raise ConfigError(
            f"run name {name!r} is taken by a different spec", file="run form", field="name"
        )
    state, _ = worker_state(store, run_id)
    if state == "alive":
        raise ConfigError(f"run {name!r} is already running", file="run form", field="name")
    before = store.conn.execute(
        "SELECT completed + errors FROM runs WHERE run_id=?", (run_id,)
    ).fetchone()
    pid = (launcher or logged_launch)(Path(store.path), spec, options)
    job = Job(
        run_id=run_id,
        name=name,
        pid=pid,
        start_ticks=start_ticks(pid),
        started_at=utcnow(),
        done_at_start=int(before[0]) if before else 0,
    )
    _write_job(store, job)
    return job


def resume_job(
    store: Store,
    run: str,
    options: RunOptions | None = None,
    *,
    launcher: Launcher | None = None,
) -> Job:
    """Launch a stored run's spec again (finished episodes are skipped, errors retried)."""
    return launch_job(store, run_spec(store, run), options, launcher=launcher)


def cancel_job(store: Store, run: str) -> str:
    """Ask a run to stop; return its status right after the request.

    Sets the runner's cooperative ``cancelling`` flag and, when the studio launched the
    worker and it is alive, also interrupts it (SIGINT to that one process): the runner turns
    the interrupt into status ``cancelled`` after discarding the episodes it was playing
    (resume plays them again). The interrupt is needed because the runner's throttled progress
    writes can overwrite a bare ``cancelling`` flag with ``running`` before it is read. Runs
    without a job record (the CLI) only get the flag.
    """
    from core.runner import request_cancel

    request_cancel(store, run)
    row = store.get_run(run)
    job = read_job(store, str(row["run_id"]))
    if row["status"] == "cancelling" and job is not None and pid_alive(job.pid, job.start_ticks):
        try:
            os.kill(job.pid, signal.SIGINT)
        except (ProcessLookupError, PermissionError):
            pass
    return str(row["status"])


def stop_job(store: Store, run: str, *, grace_s: float = 5.0) -> bool:
    """Hard-stop the worker the studio started for ``run`` and mark the run cancelled.

    Only the recorded worker's process group is signalled (SIGTERM, then SIGKILL after
    ``grace_s``); episodes left half-played are recovered as ERROR ``interrupted`` on resume.

    Returns:
        True if a live worker was stopped; False if there was none to stop (a run launched
        from the CLI has no record and is never signalled).
    """
    row = store.get_run(run)
    job = read_job(store, str(row["run_id"]))
    if job is None or not pid_alive(job.pid, job.start_ticks):
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(job.pid, sig)
        except ProcessLookupError:
            break
        except PermissionError:
            return False
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and pid_alive(job.pid, job.start_ticks):
            time.sleep(0.05)
        if not pid_alive(job.pid, job.start_ticks):
            break
    store.set_run_status(str(row["run_id"]), "cancelled")
    return True


def reconcile(store: Store) -> list[str]:
    """Close active runs whose recorded worker is gone without a final status.

    ``cancelling`` becomes ``cancelled``; anything else ``failed`` (resumable).

    Returns:
        The run ids changed.
    """
    sync_branch_runs(store)
    changed = []
    for r in store.list_runs():
        if r["status"] not in ACTIVE:
            continue
        state, _ = worker_state(store, r["run_id"])
        if state != "exited":
            continue
        # re-read: the worker may have written its final status just before exiting
        status = str(store.get_run(r["run_id"])["status"])
        if status not in ACTIVE:
            continue
        store.set_run_status(r["run_id"], "cancelled" if status == "cancelling" else "failed")
        changed.append(str(r["run_id"]))
    return changed


# ---------------------------------------------------------------------------------- views
def run_rows(store: Store) -> list[RunRow]:
    """Every run with progress and its worker's state, newest first."""
    now = time.time()
    cur = store.conn.execute(
        "SELECT run_id, name, status, total, completed, errors, cost_usd, spec, updated_at, "
        "created_at FROM runs ORDER BY created_at DESC, name"
    )
    out = []
    for row in cur.fetchall():
        run_id, name, status, total, completed, errors, cost, spec, updated, created = row
        branch = branch_spec(spec)
        kind: RunKind = "branch" if branch else ("sweep" if _is_run_spec(spec) else "imported")
        agent = agent_of_spec_json(spec)
        worker, pid = worker_state(store, run_id)
        if kind == "sweep" and worker != "alive":  # no live owner → interrupted (resumable)
            status = effective_status(
                store.path, {"run_id": run_id, "status": status, "updated_at": updated}
            )
        if kind != "imported":  # what is stored, not the throttled counters (a kill loses them)
            completed, errors = store.run_counts(run_id)
        t = int(total)
        done = int(completed) + int(errors)
        rate, eta = progress_rate(
            done=done,
            total=t,
            active=status in ACTIVE,
            now=now,
            job=read_job(store, run_id),
            created_at=created,
            updated_at=updated,
        )
        out.append(
            RunRow(
                run_id=run_id,
                name=name,
                status=status,
                total=t,
                completed=int(completed),
                errors=int(errors),
                cost_usd=float(cost or 0.0),
                fraction=min(1.0, done / t) if t else 0.0,
                agent=agent,
                symbolic=is_symbolic_agent(agent),
                updated_at=updated,
                pid=pid,
                worker=worker,
                kind=kind,
                parent_episode_id=(branch or {}).get("parent_episode_id"),
                created_at=created,
                rate_per_s=rate,
                eta_s=eta,
                cost_by_role=cost_split(store, run_id),
            )
        )
    return out


def _is_run_spec(spec_json: str) -> bool:
    try:
        RunSpec.model_validate_json(spec_json)
    except ValidationError:
        return False
    return True


def run_spec(store: Store, run: str) -> RunSpec:
    """The stored spec of a run.

    Raises:
        NotFoundError: Unknown run.
        ConfigError: The stored spec is not a valid RunSpec (e.g. an imported run).
    """
    row = store.get_run(run)
    try:
        return RunSpec.model_validate_json(row["spec"])
    except ValidationError as exc:
        raise ConfigError(
            f"run {row['name']!r} has no valid spec to show or resume", field="runs.spec"
        ) from exc
