"""``driftbench run``, ``runs`` and ``export``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.cli._common import add_json, emit, open_store, show_progress
from core.errors import ConfigError
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner.plan import KNOWN_SPLITS


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
    p.add_argument("--persona", default="all", help="persona id(s), comma-separated, or 'all'")
    p.add_argument("--seeds", type=int, default=3, help="number of seeds (0..N-1)")
    p.add_argument("--agent", default="symbolic", help="'symbolic' or MODEL[@API_BASE]")
    p.add_argument("--user-voice", default="template", help="'template' or MODEL[@API_BASE]")
    p.add_argument(
        "--interpreter", default=None, help="how the user reads messages: offline | MODEL"
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        help="the first N selected samples per benchmark, in sample-id order (deterministic)",
    )
    p.add_argument(
        "--source",
        default=None,
        help="only samples of this provenance: bundled, built, release, or an import's name",
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
    p.add_argument("--workers", type=int, default=None, help="worker processes")
    p.add_argument("--concurrency", type=int, default=16, help="concurrent LLM episodes")
    p.add_argument("--max-cost", type=float, default=None, help="stop once USD spent exceeds")
    add_json(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("runs", help="list runs with status and progress")
    add_json(p)
    p.set_defaults(handler=cmd_runs)

    p = sub.add_parser("export", help="export a run's episodes (header, events, outcome)")
    p.add_argument("run", help="run name or id")
    p.add_argument("--format", choices=("jsonl", "csv", "parquet"), default="jsonl")
    p.add_argument("--out", default=None, help="output file (default: stdout for jsonl/csv)")
    add_json(p)
    p.set_defaults(handler=cmd_export)


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """Build the :class:`RunSpec` named by ``driftbench run`` arguments.

    Raises:
        ConfigError: For an invalid flag value (names the flag).
    """
    for flag, value in (("--benchmark", args.benchmark), ("--method", args.method)):
        if not value:
            raise ConfigError("is required (or give --resume RUN)", field=flag)
    personas = _csv(args.persona)
    if personas == ["all"] or not personas:
        personas = list(PERSONAS)
    if args.seeds < 1:
        raise ConfigError("must be at least 1", field="--seeds")
    if args.limit is not None and args.limit < 1:
        raise ConfigError("must be at least 1", field="--limit")
    gen = getattr(args, "a3_generation_size", None)
    if gen is not None and gen < 1:
        raise ConfigError("must be at least 1", field="--a3-generation-size")
    extra = {"a3_generation_size": gen} if gen is not None else {}
    from pydantic import ValidationError

    try:
        return RunSpec(
            name=args.name,
            benchmarks=tuple(_csv(args.benchmark)),
            methods=tuple(_csv(args.method)),
            personas=tuple(personas),
            seeds=tuple(range(args.seeds)),
            agent=args.agent,
            user_voice=args.user_voice,
            interpreter=getattr(args, "interpreter", None),
            limit=args.limit,
            source=getattr(args, "source", None),
            split=getattr(args, "split", None),
            **extra,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err.get("loc", ())) or "spec"
        raise ConfigError(str(err.get("msg")), field=f"--{loc.split('.')[0]}") from None


def _resolve_spec(store: Any, args: argparse.Namespace) -> RunSpec:
    """The spec to run: ``--resume RUN``'s stored spec, else the flags' spec.

    A stored run of the same name must have the same spec (then it resumes); a name never
    attaches to a different spec.
    """
    from core.errors import NotFoundError
    from core.runner.plan import named_spec, stored_spec

    if args.resume:
        if args.benchmark or args.method:
            raise ConfigError(
                "--resume runs the stored spec; leave out --benchmark and --method",
                field="--resume",
            )
        try:
            return stored_spec(store, args.resume)
        except NotFoundError:
            raise ConfigError(
                f"no run named or with id {args.resume!r}", field="--resume"
            ) from None
    return named_spec(store, spec_from_args(args))


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

    store = open_store(args)
    spec = _resolve_spec(store, args)
    validate_spec(store, spec)
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
    payload = {
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
    }
    text = (
        f"run {result.run}: {result.completed}/{result.episodes} completed, "
        f"{result.errors} errors, {result.seconds:.1f}s, ${result.cost_usd:.4f} ({result.status})"
    )
    return emit(args, payload, text)


def cmd_runs(args: argparse.Namespace) -> int:
    """List runs with status and progress."""
    store = open_store(args)
    runs = store.list_runs()
    lines = [
        f"{r['name']:<28} {r['status']:<22} {r['completed']}/{r['total']} "
        f"errors={r['errors']} ${r['cost_usd']:.4f}"
        for r in runs
    ]
    return emit(args, {"runs": runs}, "\n".join(lines) if lines else "no runs")


def cmd_export(args: argparse.Namespace) -> int:
    """Export a run's episodes as JSONL, CSV or Parquet."""
    from core.runner.export import export_run

    store = open_store(args, create=False)
    out = Path(args.out) if args.out else None
    if args.format == "parquet" and out is None:
        raise ConfigError("parquet needs --out PATH", field="--out")
    n = export_run(store, args.run, args.format, out if out is not None else sys.stdout)
    if out is None:
        return 0
    return emit(args, {"run": args.run, "episodes": n, "out": str(out)}, f"{n} episodes → {out}")
