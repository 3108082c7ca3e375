"""Background runs for the studio: spec form, launch records, liveness, cancel, stop, resume."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.model.run import RunOptions, RunSpec
from core.runner import request_cancel, run_sweep
from core.store import Store
from core.studio import jobs


def mock_spec(name: str = "tiny", **kw: object) -> RunSpec:
    args: dict[str, object] = {
        "name": name,
        "benchmarks": ("mock",),
        "methods": ("B0",),
        "personas": ("rational",),
        "seeds": (0,),
        "limit": 1,
    }
    args.update(kw)
    return RunSpec(**args)  # type: ignore[arg-type]


class Sleeper:
    """A launcher that starts a harmless long-lived process in its own session."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def __call__(self, path: Path, spec: RunSpec, options: RunOptions | None) -> int:
        store = Store.open(path)
        store.put_run(spec.run_id(), spec.display_name(), spec.model_dump_json(), 1)
        store.set_run_status(spec.run_id(), "running")
        p = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
        )
        self.procs.append(p)
        return p.pid

    def cleanup(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


@pytest.fixture
def sleeper():  # type: ignore[no-untyped-def]
    s = Sleeper()
    yield s
    s.cleanup()


def wait_status(store: Store, run: str, done: set[str], timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = str(store.get_run(run)["status"])
        if status in done:
            return status
        time.sleep(0.1)
    raise AssertionError(f"{run} still {store.get_run(run)['status']}")


# -- spec form -------------------------------------------------------------------------------
def test_spec_from_form_builds_a_runspec() -> None:
    spec = jobs.spec_from_form(
        benchmarks=["webshop"],
        methods=["b0", "A0"],
        personas=["rational"],
        seeds=3,
        agent="",
        user_voice="template",
        limit=0,
        name="  ",
    )
    assert spec.methods == ("B0", "A0")
    assert spec.seeds == (0, 1, 2)
    assert spec.agent == "symbolic" and spec.is_symbolic
    assert spec.limit is None and spec.name is None
    named = jobs.spec_from_form(
        benchmarks=["webshop"],
        methods=["A0"],
        personas=["rational"],
        seeds=1,
        agent="openai/gpt-4o-mini",
        limit=5,
        name="mine",
    )
    assert named.agent == "openai/gpt-4o-mini" and named.limit == 5 and named.name == "mine"


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"methods": []}, "methods"),
        ({"benchmarks": []}, "benchmarks"),
        ({"personas": []}, "personas"),
        ({"seeds": 0}, "seeds"),
        ({"methods": ["ZZ"]}, "methods"),
    ],
)
def test_spec_from_form_names_the_bad_field(kw: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "benchmarks": ["webshop"],
        "methods": ["A0"],
        "personas": ["rational"],
        "seeds": 1,
    }
    args.update(kw)
    with pytest.raises(ConfigError) as exc:
        jobs.spec_from_form(**args)  # type: ignore[arg-type]
    assert exc.value.field == field
    assert "run form" in str(exc.value)


# -- processes -------------------------------------------------------------------------------
def test_pid_alive_detects_exit_zombies_and_recycled_pids() -> None:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        ticks = jobs.start_ticks(p.pid)
        assert jobs.pid_alive(p.pid, ticks)
        assert not jobs.pid_alive(p.pid, (ticks or 0) + 1)  # another process with this pid
    finally:
        p.kill()
    deadline = time.monotonic() + 10
    while jobs.pid_alive(p.pid, ticks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not jobs.pid_alive(p.pid, ticks)  # exited child is reaped, not a live zombie


def test_launch_records_the_worker_and_refuses_a_second_live_launch(
    store: Store, sleeper: Sleeper
) -> None:
    spec = mock_spec()
    job = jobs.launch_job(store, spec, launcher=sleeper)
    assert job.run_id == spec.run_id() and job.name == "tiny"
    assert jobs.read_job(store, spec.run_id()) == job
    assert (jobs.jobs_dir(store) / f"{spec.run_id()}.json").exists()
    assert jobs.worker_state(store, spec.run_id()) == ("alive", job.pid)
    with pytest.raises(ConfigError, match="already running"):
        jobs.launch_job(store, spec, launcher=sleeper)
    [row] = jobs.run_rows(store)
    assert row.worker == "alive" and row.pid == job.pid and row.active


def test_launch_refuses_a_name_taken_by_another_spec(store: Store, sleeper: Sleeper) -> None:
    jobs.launch_job(store, mock_spec(), launcher=sleeper)
    with pytest.raises(ConfigError) as exc:
        jobs.launch_job(store, mock_spec(methods=("A0",)), launcher=sleeper)
    assert exc.value.field == "name"


def test_stop_terminates_only_the_recorded_worker(store: Store, sleeper: Sleeper) -> None:
    job = jobs.launch_job(store, mock_spec(), launcher=sleeper)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert jobs.stop_job(store, "tiny", grace_s=5)
        assert not jobs.pid_alive(job.pid, job.start_ticks)
        assert store.get_run("tiny")["status"] == "cancelled"
        assert bystander.poll() is None
        assert not jobs.stop_job(store, "tiny")  # nothing left to stop
    finally:
        bystander.kill()
        bystander.wait()


def test_stop_never_signals_a_run_without_a_record(store: Store) -> None:
    spec = mock_spec()
    store.put_run(spec.run_id(), "tiny", spec.model_dump_json(), 1)
    store.set_run_status(spec.run_id(), "running")
    assert not jobs.stop_job(store, "tiny")
    assert store.get_run("tiny")["status"] == "running"
    assert jobs.worker_state(store, spec.run_id()) == ("unknown", None)


def test_reconcile_closes_runs_whose_worker_died(store: Store, sleeper: Sleeper) -> None:
    a = jobs.launch_job(store, mock_spec("a"), launcher=sleeper)
    b = jobs.launch_job(store, mock_spec("b", seeds=(1,)), launcher=sleeper)
    cli = mock_spec("cli", seeds=(2,))
    store.put_run(cli.run_id(), "cli", cli.model_dump_json(), 1)
    store.set_run_status(cli.run_id(), "running")
    request_cancel(store, "b")  # a cancel the worker never acted on
    assert store.get_run("b")["status"] == "cancelling"
    assert jobs.reconcile(store) == []  # both workers alive
    sleeper.cleanup()
    assert not jobs.pid_alive(a.pid, a.start_ticks) and not jobs.pid_alive(b.pid, b.start_ticks)
    assert sorted(jobs.reconcile(store)) == sorted([a.run_id, b.run_id])
    assert store.get_run("a")["status"] == "failed"
    assert store.get_run("b")["status"] == "cancelled"
    assert store.get_run("cli")["status"] == "running"  # no record: left alone


def test_cancel_only_touches_pending_or_running(store: Store) -> None:
    run_sweep(store, mock_spec(), RunOptions(workers=1, progress=False))
    assert jobs.cancel_job(store, "tiny") == "completed"


# -- the real worker ------------------------------------------------------------------------
def test_real_launch_completes_and_resume_skips_finished(store: Store) -> None:
    spec = mock_spec(personas=("rational", "avoidant"))
    job = jobs.launch_job(store, spec)
    assert wait_status(store, "tiny", {"completed", "completed_with_errors", "failed"}) == (
        "completed"
    )
    deadline = time.monotonic() + 20
    while jobs.pid_alive(job.pid, job.start_ticks) and time.monotonic() < deadline:
        time.sleep(0.05)
    [row] = jobs.run_rows(store)
    assert row.worker == "exited" and row.completed == row.total == 2 and row.fraction == 1.0
    n_before = store.counts()["episodes"]
    again = jobs.resume_job(store, "tiny")
    assert again.pid != job.pid
    wait_status(store, "tiny", {"completed"})
    deadline = time.monotonic() + 20
    while jobs.pid_alive(again.pid, again.start_ticks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.counts()["episodes"] == n_before  # finished episodes were skipped
    assert jobs.run_spec(store, "tiny") == spec


def test_cancel_interrupts_a_studio_worker(store: Store) -> None:
    spec = mock_spec(
        "long",
        methods=("B0", "A0", "A1", "A2"),
        personas=("rational", "dependent", "avoidant", "intuitive", "spontaneous"),
        seeds=tuple(range(40)),
        limit=None,
    )
    job = jobs.launch_job(store, spec, RunOptions(workers=1))
    wait_status(store, "long", {"running"})
    assert jobs.cancel_job(store, "long") == "cancelling"
    try:
        status = wait_status(store, "long", {"cancelled", "completed"})
    except AssertionError as exc:  # say why: the worker's own log
        raise AssertionError(f"{exc}\n{jobs.worker_log(store, 'long', lines=80)}") from None
    assert status == "cancelled", jobs.worker_log(store, "long", lines=80)
    deadline = time.monotonic() + 20
    while jobs.pid_alive(job.pid, job.start_ticks) and time.monotonic() < deadline:
        time.sleep(0.05)
    run = store.get_run("long")
    assert run["completed"] < run["total"]
    log = jobs.worker_log(store, run["run_id"], lines=1000)
    assert "launch long" in log
    # Either the interrupt landed mid-sweep, or the runner saw the cooperative flag first and
    # finished cleanly (the SIGINT then finds it exiting): both end as "cancelled".
    assert "KeyboardInterrupt" in log or '"status": "cancelled"' in log
    assert jobs.reconcile(store) == []  # the worker wrote its final status itself


def test_a_run_without_a_valid_spec_cannot_be_resumed(store: Store) -> None:
    store.put_run("run-imported", "imported", "{}", 3)
    with pytest.raises(ConfigError) as exc:
        jobs.resume_job(store, "imported")
    assert exc.value.field == "runs.spec"
    [row] = jobs.run_rows(store)
    assert row.agent == "symbolic" and row.worker == "unknown"


def test_runs_form_and_run_command_build_one_spec_with_model_settings(tmp_path: Path) -> None:
    """Issue 29's gap: a run launched from the Runs page records the models file's settings of
    every LLM role in its identity, exactly as ``driftbench run`` does (same spec, same id)."""
    from core.cli import build_parser
    from core.cli.cmd_run import spec_from_args
    from core.llm.models import configure, current_config, use_config

    models = tmp_path / "models.yaml"
    models.write_text(
        "agent: {model: openai/m, api_base: 'http://127.0.0.1:1/v1', max_tokens: 256}\n"
        "voice: {model: openai/v, api_base: 'http://127.0.0.1:1/v1', max_tokens: 96}\n"
        "interpreter: {model: openai/i, api_base: 'http://127.0.0.1:1/v1', max_tokens: 64}\n",
        encoding="utf-8",
    )
    before = current_config()
    try:
        configure(models)
        agent = "openai/m@http://127.0.0.1:1/v1"
        form = jobs.spec_from_form(
            benchmarks=["webshop"],
            methods=["A0"],
            personas=["rational"],
            seeds=2,
            agent=agent,
            user_voice="",  # the form's blank voice: the models file's, as the command's default
        )
        args = build_parser().parse_args(
            ["run", "--benchmark", "webshop", "--method", "A0", "--persona", "rational"]
            + ["--seeds", "2", "--agent", agent]
        )
        cli = spec_from_args(args)
        assert form == cli and form.run_id() == cli.run_id()
        assert form.models is not None
        assert form.models["agent"]["max_tokens"] == 256
        assert form.models["voice"]["max_tokens"] == 96
        assert form.models["interpreter"]["model"] == "openai/i"
        assert form.interpreter == "openai/i@http://127.0.0.1:1/v1"
        # another cap in the models file is another run (never one run with two caps)
        models.write_text(models.read_text().replace("256", "128"), encoding="utf-8")
        configure(models)
        again = jobs.spec_from_form(
            benchmarks=["webshop"], methods=["A0"], personas=["rational"], seeds=2, agent=agent
        )
        assert again.run_id() != form.run_id()
    finally:
        use_config(before)
