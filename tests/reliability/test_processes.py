"""Processes: workers die with their parent, a dead owner shows as interrupted, no double runs.

Each test starts its own ``driftbench run`` (a symbolic sweep over the mock benchmark, large
enough to last several seconds with two pool workers), kills or terminates it as soon as its
workers exist, and checks within a few seconds that nothing it started is left. Every process a
test starts is killed in a ``finally`` by its pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.model.run import PERSONAS, RunOptions, RunSpec
from core.paths import PROJECT_ROOT
from core.runner import run_sweep
from core.runner.lifecycle import (
    STATUS_INTERRUPTED,
    RunBusyError,
    RunLock,
    effective_status,
    owner_alive,
)
from core.store import Store

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")

SEEDS = 8  # 1320 episodes: about four seconds on two workers, so a kill lands mid-sweep
RUN_ARGS = [
    "run",
    "--benchmark",
    "mock",
    "--method",
    "B0,A0,A2",
    "--seeds",
    str(SEEDS),
    "--workers",
    "2",
    "--name",
    "orphans",
    "--json",
]


def _spec() -> RunSpec:
    return RunSpec(
        name="orphans",
        benchmarks=("mock",),
        methods=("B0", "A0", "A2"),
        personas=PERSONAS,
        seeds=tuple(range(SEEDS)),
    )


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            raw = (d / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return raw[raw.rindex(")") + 2 :].split()[0] not in ("Z", "X")


def _wait(cond: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def _cli(store: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 - our interpreter, our CLI
        [sys.executable, "-c", "from core.cli import run; run()", "--store", str(store), *args],
        cwd=str(PROJECT_ROOT),
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def started(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes], list[int]]]:
    """A ``driftbench run`` with its pool workers up: (store, process, worker pids)."""
    store = tmp_path / "s.db"
    Store.open(store).close()
    proc = _cli(store, *RUN_ARGS)
    workers: list[int] = []
    try:
        assert _wait(lambda: len(_children(proc.pid)) >= 2, 60), "the pool never started"
        workers = _children(proc.pid)
        yield store, proc, workers
    finally:
        for pid in [proc.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def test_kill_9_of_the_parent_takes_its_workers_and_leaves_an_interrupted_run(
    started: tuple[Path, subprocess.Popen[bytes], list[int]],
) -> None:
    store_path, proc, workers = started
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert _wait(lambda: not any(_alive(w) for w in workers), 3.0), "workers outlived the parent"
    store = Store.open(store_path)
    row = store.get_run("orphans")
    assert row["status"] == "running"  # what the dead process left behind …
    assert not owner_alive(store_path, row["run_id"])
    assert effective_status(store_path, row) == STATUS_INTERRUPTED  # … and what everyone sees
    runs = subprocess.run(  # noqa: S603
        [sys.executable, "-c", "from core.cli import run; run()", "--store", str(store_path)]
        + ["runs", "--json"],
        cwd=str(PROJECT_ROOT),
        capture_output=True,
        check=True,
    )
    listed = {r["name"]: r["status"] for r in json.loads(runs.stdout)["runs"]}
    assert listed["orphans"] == STATUS_INTERRUPTED
    resumed = run_sweep(store, _spec(), RunOptions(workers=2, progress=False))
    assert resumed.status == "completed" and resumed.completed == resumed.episodes


def test_sigterm_marks_the_run_interrupted_and_exits_143(
    started: tuple[Path, subprocess.Popen[bytes], list[int]],
) -> None:
    store_path, proc, workers = started
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert err.count("\n") == 1 and "interrupted" in err and "--resume orphans" in err, err
    assert _wait(lambda: not any(_alive(w) for w in workers), 3.0), "workers outlived SIGTERM"
    row = Store.open(store_path).get_run("orphans")
    assert row["status"] == STATUS_INTERRUPTED  # written by the runner itself


def test_a_second_identical_sweep_refuses_with_exit_2(
    started: tuple[Path, subprocess.Popen[bytes], list[int]],
) -> None:
    store_path, proc, _ = started
    before = Store.open(store_path).get_run("orphans")
    second = _cli(store_path, *RUN_ARGS)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 2, err
    text = err.decode()
    assert text.count("\n") == 1 and "already running" in text and str(proc.pid) in text
    assert "Traceback" not in text and "UNIQUE" not in text
    after = Store.open(store_path).get_run("orphans")
    assert after["created_at"] == before["created_at"]  # the run row is still the first one's


def test_the_owner_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with RunLock(store, "r1") as first:
        first.acquire("one")
        assert owner_alive(store, "r1")
        with pytest.raises(RunBusyError, match="already running"):
            RunLock(store, "r1").acquire("one")
        assert owner_alive(store, "r1")  # probing never steals or drops the owner's lock
    assert not owner_alive(store, "r1")
    assert not owner_alive(store, "never-started")


def test_a_pending_run_gets_a_grace_period_before_it_counts_as_interrupted(
    tmp_path: Path,
) -> None:
    row = {"run_id": "r", "status": "pending", "updated_at": "2026-01-01T00:00:00+00:00"}
    from datetime import datetime

    t0 = datetime.fromisoformat(row["updated_at"]).timestamp()
    assert effective_status(tmp_path / "s.db", row, now=t0 + 5) == "pending"
    assert effective_status(tmp_path / "s.db", row, now=t0 + 600) == STATUS_INTERRUPTED
    done = {**row, "status": "completed"}
    assert effective_status(tmp_path / "s.db", done, now=t0 + 600) == "completed"


def test_a_guarded_fork_dies_with_its_parent(tmp_path: Path) -> None:
    """The mechanism alone: a parent forks inside guard_children, then is kill -9'd."""
    pid_file = tmp_path / "child.pid"
    script = (
        "import os, time\n"
        "from core.runner.lifecycle import guard_children\n"
        "with guard_children():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(60); os._exit(0)\n"
        f"    open({str(pid_file)!r}, 'w').write(str(pid))\n"
        "    time.sleep(60)\n"
    )
    parent = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", script],
        cwd=str(PROJECT_ROOT),
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
    )
    child = 0
    try:
        assert _wait(lambda: pid_file.exists() and pid_file.read_text().strip(), 20)
        child = int(pid_file.read_text())
        assert _alive(child)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        assert _wait(lambda: not _alive(child), 3.0), "the child outlived its parent"
    finally:
        for pid in (parent.pid, child):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        parent.wait(timeout=10)


def test_forks_outside_a_sweep_are_left_alone() -> None:
    """Without guard_children a fork is an ordinary child (the hook is scoped to sweeps)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(r)
        import ctypes

        libc = ctypes.CDLL(None)
        sig = ctypes.c_int(0)
        libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
        os.write(w, str(sig.value).encode())
        os._exit(0)
    os.close(w)
    got = os.read(r, 16)
    os.close(r)
    os.waitpid(pid, 0)
    assert got == b"0"


def test_the_runs_page_shows_an_ownerless_running_sweep_as_interrupted(tmp_path: Path) -> None:
    from core.studio import jobs

    store = Store.open(tmp_path / "s.db")
    spec = _spec()
    store.put_run(spec.run_id(), "orphans", spec.model_dump_json(), 10)
    store.set_run_status(spec.run_id(), "running")  # what a kill -9 leaves behind
    [row] = jobs.run_rows(store)
    assert row.status == STATUS_INTERRUPTED and row.can_resume and not row.active
    with RunLock(store.path, spec.run_id()) as lock:  # while an owner lives, it is running
        lock.acquire("orphans")
        [row] = jobs.run_rows(store)
        assert row.status == "running"
    assert store.get_run("orphans")["status"] == "running"  # showing it changed nothing stored
