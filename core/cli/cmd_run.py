"""``driftbench run``, ``runs`` and ``export``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.cli import _validate as V
from core.cli._common import add_json, emit, open_store, show_progress
from core.errors import ConfigError
from core.model.run import FAULT_CONDITIONS, RunOptions, RunSpec
from core.runner.costs import cost_split, model_use
from core.runner.plan import KNOWN_SPLITS
from core.runner.spec_build import build_spec


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register this module's commands."""
    p = sub.add_parser(
        "run",
        help="run (or resume) a sweep",
        description=(
            "Run a sweep. Every sample runs on the world it was built on; a sample whose world "
            "is missing or changed is refused before anything runs. The samples of a "
            "benchmark are selected by --source and --split, sorted by sample id, and --limit "
            "keeps the first N of them (deterministic). The same spec under the same --name "
            "resumes that run; under a new name it is a new run; --resume RUN continues a "
            "stored run."
        ),
    )
    p.add_argument("--benchmark", default=None, help="benchmark id(s), comma-separated")
    p.add_argument("--method", default=None, help="method id(s): B0 A0 A1 A2 A3 L0 RS LIT ORACLE")
    p.add_argument(
        "--persona", default=None, help="persona id(s), comma-separated, or 'all' (default)"
    )
    p.add_argument("--seeds", type=V.seeds, default=None, help="number of seeds 0..N-1 (3)")
    p.add_argument(
        "--agent",
        default=None,
        help="'symbolic' or MODEL[@API_BASE] (default: the models file's agent, else symbolic)",
    )
    p.add_argument(
        "--user-voice",
        default=None,
        help="'template' or MODEL[@API_BASE] (default: the models file's voice, else template)",
    )
    p.add_argument(
        "--action-format",
        choices=("text", "tools", "json"),
        default=None,
        help="LLM agents: the paper's text format (default), native tool calling, or json "
        "(the action's JSON schema sent as response_format: structured output)",
    )
    p.add_argument(
        "--base-prompt",
        choices=("strategy-free", "premise"),
        default=None,
        help="LLM agents' shared base prompt: strategy-free (default, the paper's) or with the "
        "premise sentence (the request may be faulty, the person may change their mind); "
        "recorded in the run's identity",
    )
    p.add_argument(
        "--interpreter", default=None, help="how the user reads messages: offline | MODEL"
    )
    p.add_argument(
        "--limit",
        type=V.positive,
        default=None,
        help="the first N selected samples per benchmark, in sample-id order (deterministic)",
    )
    p.add_argument(
        "--source",
        default=None,
        help="only samples of this provenance: bundled, built, release, or an import's name; "
        "per benchmark as webshop=bundled,tau2_retail=built (a bare value applies to the "
        "benchmarks not named)",
    )
    p.add_argument(
        "--shifts",
        choices=("on", "off"),
        default=None,
        help="silent intent shifts on (the paper's default) or off (Fig. 11 / Table 8); part "
        "of the run's identity (default: on)",
    )
    p.add_argument(
        "--faults",
        choices=FAULT_CONDITIONS,
        default=None,
        help="only samples with one fault (single), composites (k ≥ 2) or exactly k = 1, 2, 4 "
        "faults (default: every sample); part of the run's identity",
    )
    p.add_argument("--split", default=None, choices=KNOWN_SPLITS, help="only samples of this split")
    p.add_argument(
        "--a3-generation-size",
        type=int,
        default=None,
        metavar="N",
        help="A3: episodes per lesson-book generation (default 25); the book is rewritten "
        "after each generation and the episodes of one generation run against the same book",
    )
    p.add_argument(
        "--name",
        default=None,
        help="run name (default: the run id); the same spec under a new name is a new run",
    )
    p.add_argument(
        "--resume", default=None, metavar="RUN", help="continue the stored run RUN (name or id)"
    )
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--workers", type=V.positive, default=None, help="worker processes")
    p.add_argument("--concurrency", type=V.positive, default=16, help="concurrent LLM episodes")
    p.add_argument(
        "--max-cost",
        type=V.money,
        default=None,
        help="stop once USD spent by every role (agent, voice, reflection, …) exceeds",
    )
    add_model_flags(p)
    add_json(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("runs", help="list runs with status and progress")
    add_json(p)
    p.set_defaults(handler=cmd_runs)

    p = sub.add_parser("export", help="export a run's episodes (header, events, outcome)")
    p.add_argument("run", help="run name or id")
    p.add_argument("--format", choices=("jsonl", "csv", "parquet"), default="jsonl")
    p.add_argument(
        "--out",
        type=V.output_file,
        default=None,
        help="output file (default: stdout for jsonl/csv); never the store, a file inside "
        "$DRIFTBENCH_HOME or an input folder, nor an existing file without --force",
    )
    p.add_argument(
        "--force", action="store_true", help="replace an existing --out file (never the store)"
    )
    add_json(p)
    p.set_defaults(handler=cmd_export)


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """``--models``, ``--api-key-env`` and ``--no-cache`` (run, grip, build)."""
    p.add_argument(
        "--models",
        default=None,
        metavar="FILE.yaml",
        help="model settings per role (default: $DRIFTBENCH_MODELS); see docs/MODELS.md",
    )
    p.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the API key of every model spec that names none",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="never answer model calls from the response cache (fresh answers replace old ones)",
    )


def apply_model_flags(args: argparse.Namespace) -> None:
    """Install the model choices of ``--models`` / ``--api-key-env`` / ``--no-cache``.

    Raises:
        ConfigError: A bad models file or variable name (names the flag or the file's field).
    """
    from core.llm.models import configure

    key_env = getattr(args, "api_key_env", None)
    if key_env is not None:
        import re

        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key_env):
            raise ConfigError(
                "must name an environment variable, not hold a key", field="--api-key-env"
            )
    configure(
        getattr(args, "models", None),
        api_key_env=key_env,
        no_cache=bool(getattr(args, "no_cache", False)),
    )


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """Build the :class:`RunSpec` named by ``driftbench run`` arguments.

    The one spec construction the Runs page uses too (:func:`core.runner.spec_build.build_spec`).

    Raises:
        ConfigError: For an invalid flag value (names the flag).
    """
    for flag, value in (("--benchmark", args.benchmark), ("--method", args.method)):
        if not value:
            raise ConfigError("is required (or give --resume RUN)", field=flag)
    return build_spec(
        benchmarks=_csv(args.benchmark),
        methods=_csv(args.method),
        personas=_csv(args.persona or "all"),
        seeds=3 if args.seeds is None else args.seeds,
        agent=args.agent,
        user_voice=args.user_voice,
        interpreter=getattr(args, "interpreter", None),
        action_format=getattr(args, "action_format", None),
        limit=args.limit,
        name=args.name,
        source=getattr(args, "source", None),
        split=getattr(args, "split", None),
        shifts=getattr(args, "shifts", "on") or "on",
        faults=getattr(args, "faults", None),
        base_prompt=getattr(args, "base_prompt", None),
        a3_generation_size=getattr(args, "a3_generation_size", None),
    )


def _resolve_spec(store: Any, args: argparse.Namespace) -> RunSpec:
    """The spec to run: ``--resume RUN``'s stored spec, else the flags' spec.

    A stored run of the same name must have the same spec (then it resumes); a name never
    attaches to a different spec.
    """
    from core.errors import NotFoundError
    from core.runner.plan import named_spec, stored_spec

    if args.resume:
        try:
            stored = stored_spec(store, args.resume)
        except NotFoundError:
            raise ConfigError(
                f"no run named or with id {args.resume!r}", field="--resume"
            ) from None
        _refuse_conflicts(args, stored)
        return stored
    return named_spec(store, spec_from_args(args))


def _refuse_conflicts(args: argparse.Namespace, stored: RunSpec) -> None:
    """``--resume RUN`` plays the stored spec: a flag that says otherwise is refused, named.

    A flag given with the stored value is fine; one with another value (``--seeds 5`` on a
    run of 3 seeds, another ``--agent``, ``--limit``, ``--persona`` …) would be silently
    ignored, so it is an error (exit 2) naming the flag.

    Raises:
        ConfigError: Naming the first conflicting flag.
    """
    given: list[tuple[str, object, object]] = []
    if args.benchmark:
        given.append(("--benchmark", tuple(_csv(args.benchmark)), stored.benchmarks))
    if args.method:
        given.append(("--method", tuple(_csv(args.method)), stored.methods))
    if args.persona is not None and _csv(args.persona) != ["all"]:
        given.append(("--persona", tuple(_csv(args.persona)), stored.personas))
    if args.seeds is not None:
        given.append(("--seeds", args.seeds, len(stored.seeds)))
    if getattr(args, "shifts", None) is not None:
        given.append(("--shifts", args.shifts, stored.shifts))
    simple: tuple[tuple[str, str, object], ...] = (
        ("--agent", "agent", stored.agent),
        ("--user-voice", "user_voice", stored.user_voice),
        ("--interpreter", "interpreter", stored.interpreter),
        ("--action-format", "action_format", stored.action_format),
        ("--limit", "limit", stored.limit),
        ("--source", "source", stored.source),
        ("--split", "split", stored.split),
        ("--a3-generation-size", "a3_generation_size", stored.a3_generation_size),
        ("--faults", "faults", stored.faults),
        ("--base-prompt", "base_prompt", stored.base_prompt),
        ("--name", "name", stored.display_name()),
    )
    for flag, attr, kept in simple:
        value = getattr(args, attr, None)
        if value is not None:
            given.append((flag, value, kept))

    def text(v: object) -> str:
        return ",".join(map(str, v)) if isinstance(v, tuple) else str(v)

    for flag, value, kept in given:
        if value != kept:
            shown, was = text(value), text(kept)
            raise ConfigError(
                f"{flag} {shown} conflicts with the run being resumed ({was}); --resume plays "
                "the stored spec: leave the flag out, or start a new run with --name",
                field=flag,
            )


def _header(sources: list[dict[str, Any]]) -> str:
    parts = []
    for s in sources:
        lim = f", first {s['limit']}" if s["limit"] is not None else ""
        origin = ", ".join(f"{k} {v}" for k, v in s["by_source"].items())
        parts.append(
            f"{s['benchmark']}: {s['samples']} of {s['available']} samples (source "
            f"{s['source']}, split {s['split']}{lim}; {origin})"
        )
    return "selection: " + "; ".join(parts)


def cmd_run(args: argparse.Namespace) -> int:
    """Run or resume a sweep and print the selection and the summary."""
    from core.runner import run_sweep, validate_spec
    from core.runner.plan import SampleSource, describe_selection
    from core.store.integrity import StoreCorruptError, quick_check

    apply_model_flags(args)
    store = open_store(args)
    spec = _resolve_spec(store, args)
    validate_spec(store, spec)
    problems = quick_check(store.conn)  # never write a sweep into a damaged file
    if problems != ["ok"]:
        raise StoreCorruptError(
            f"{store.path}: failed its integrity check ({problems[0].splitlines()[-1]}); "
            "run 'driftbench doctor' and restore the store from a backup"
        )
    if args.workers is not None and args.workers < 1:
        raise ConfigError("must be at least 1", field="--workers")
    sources = describe_selection(SampleSource(store), spec)
    if not args.json:
        print(f"run {spec.display_name()} ({spec.run_id()}) — {_header(sources)}", flush=True)
    options = RunOptions(
        backend=args.backend,
        workers=args.workers,
        concurrency=max(1, args.concurrency),
        max_cost_usd=args.max_cost,
        progress=show_progress() and not args.json,
    )
    result = run_sweep(store, spec, options)
    payload: dict[str, Any] = {
        "run": result.run,
        "run_id": result.run_id,
        "episodes": result.episodes,
        "completed": result.completed,
        "errors": result.errors,
        "skipped": result.skipped,
        "seconds": round(result.seconds, 3),
        "cost_usd": round(result.cost_usd, 6),
        "status": result.status,
        "sources": sources,
        "cost_by_role": cost_split(store, result.run_id),
    }
    text = (
        f"run {result.run}: {result.completed}/{result.episodes} completed, "
        f"{result.errors} errors, {result.seconds:.1f}s, ${result.cost_usd:.4f} ({result.status})"
    )
    split = _split_text(payload["cost_by_role"])
    if split:
        text += f"\ncost by role: {split}"
    if result.status == "paused":
        text += (
            "\npaused: the model provider is unavailable (it kept failing, or asked to wait "
            "longer than the retry limit); the episodes in flight are recorded as errors. "
            "Run the same command again to resume."
        )
    elif result.status == "budget_exceeded":
        text += (
            "\nstopped at the cost limit (--max-cost); the episodes in flight are recorded as "
            f"errors. Resume with --resume {result.run} and a higher --max-cost."
        )
    emit(args, payload, text)
    return run_exit_code(result.status, result.completed, result.errors)


EXIT_ALL_ERRORS = 1
"""``run``: every episode of the run ended in ERROR (nothing was measured)."""
EXIT_STOPPED = 3
"""``run``: the run stopped before its end — the provider is unavailable (``paused``) or the
cost limit was reached (``budget_exceeded``); resume it later."""


def run_exit_code(status: str, completed: int, errors: int) -> int:
    """The exit code of ``driftbench run`` (README, "Exit codes").

    0: finished (some episodes may have ended in ERROR); 1: every episode ended in ERROR;
    2: a usage or data error (nothing ran); 3: paused or stopped at ``--max-cost``.
    """
    if status in ("paused", "budget_exceeded"):
        return EXIT_STOPPED
    if errors > 0 and completed == 0:
        return EXIT_ALL_ERRORS
    return 0


def _split_text(split: dict[str, Any]) -> str:
    return ", ".join(
        f"{role} {value if isinstance(value, str) else f'${value:.4f}'}"
        for role, value in split.items()
    )


def _use_text(use: dict[str, Any]) -> str:
    if not use.get("provider_calls"):
        return ""
    per_ep = use["tokens_per_episode"]
    return (
        f" tokens/episode={per_ep if per_ep is not None else '—'} "
        f"s/call={use['seconds_per_call']} truncated={use['truncated']}"
    )


def cmd_runs(args: argparse.Namespace) -> int:
    """List runs with status and progress."""
    from core.grip.report import run_conditions
    from core.runner.lifecycle import sweep_status

    store = open_store(args)
    runs = store.list_runs()
    for r in runs:  # a run whose owner is gone (kill -9, crash) shows as interrupted
        spec = store.conn.execute("SELECT spec FROM runs WHERE run_id=?", (r["run_id"],))
        r["status"] = sweep_status(store.path, r, str(spec.fetchone()[0]))
        r["completed"], r["errors"] = store.run_counts(r["run_id"])  # what is stored
        r["cost_by_role"] = cost_split(store, r["run_id"])
        r["conditions"] = run_conditions(store, [r["run_id"]]).get(r["run_id"], {})
        r["model_use"] = model_use(store, r["run_id"])
    lines = [
        f"{r['name']:<28} {r['status']:<22} {r['completed']}/{r['total']} "
        + (
            f"shifts={r['conditions']['shifts']} faults={r['conditions']['faults']} "
            if r["conditions"]
            else ""
        )
        + f"errors={r['errors']} ${r['cost_usd']:.4f}"
        + (f" ({_split_text(r['cost_by_role'])})" if r["cost_by_role"] else "")
        + _use_text(r["model_use"])
        for r in runs
    ]
    return emit(args, {"runs": runs}, "\n".join(lines) if lines else "no runs")


def cmd_export(args: argparse.Namespace) -> int:
    """Export a run's episodes as JSONL, CSV or Parquet."""
    from core.cli._common import store_path
    from core.runner.export import export_run
    from core.store.outputs import check_output_file, imported_from

    out = Path(args.out) if args.out else None
    if args.format == "parquet" and out is None:
        raise ConfigError("parquet needs --out PATH", field="--out")
    if out is not None:  # before the store is even opened: a refused place is never touched
        check_output_file(out, store_path=store_path(args), force=args.force)
    store = open_store(args, create=False)
    if out is not None:
        check_output_file(out, store_path=store.path, force=args.force, inputs=imported_from(store))
    n = export_run(store, args.run, args.format, out if out is not None else sys.stdout)
    if out is None:
        return 0
    return emit(args, {"run": args.run, "episodes": n, "out": str(out)}, f"{n} episodes → {out}")
