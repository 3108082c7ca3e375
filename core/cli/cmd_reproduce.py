"""``driftbench reproduce``: the paper's experiments in one command (docs/REPRODUCE.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli import _validate as V
from core.cli._common import add_json, emit, open_store, show_progress
from core.cli.cmd_run import add_model_flags, apply_model_flags
from core.errors import ConfigError


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``reproduce``."""
    p = sub.add_parser(
        "reproduce",
        help="the paper's experiments in one command (resumable), tables and figures",
        description=(
            "Run the paper's experiments as named, resumable runs — the main grid (Rational, "
            "single fault, shifts on), backbones (one run per --model), personas, shifts off "
            "vs on, fault complexity k = 1/2/4, Earned vs Inferred and Aim -> Recovery — and "
            "write a report folder: tables (Markdown, LaTeX, CSV), figures (HTML, PNG) and "
            "index.html. Running it again resumes; --estimate prices the plan first."
        ),
    )
    p.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="SPEC",
        help="agent model spec, repeatable (the first is the main grid's); default symbolic",
    )
    p.add_argument(
        "--benchmarks",
        default="webshop,tau2_retail,tau2_airline",
        help="benchmark ids, comma-separated",
    )
    p.add_argument("--seeds", type=V.positive, default=3, help="seeds per run (default 3)")
    p.add_argument("--limit", type=V.positive, default=None, help="samples per benchmark")
    p.add_argument("--name", default="paper", help="prefix of the run names (default paper)")
    p.add_argument("--out", default=None, metavar="DIR", help="report folder (default ./report)")
    p.add_argument(
        "--estimate",
        action="store_true",
        help="play a small pilot per model, print episodes, calls, tokens and cost, and stop",
    )
    p.add_argument(
        "--max-cost",
        type=V.money,
        default=None,
        help="refuse a plan whose estimate exceeds this (USD), and stop spending past it",
    )
    p.add_argument("--workers", type=V.positive, default=None, help="worker processes")
    p.add_argument("--concurrency", type=V.positive, default=16, help="concurrent LLM episodes")
    add_model_flags(p)
    add_json(p)
    p.set_defaults(handler=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Plan, (estimate,) run and report."""
    from core.model.run import RunOptions
    from core.runner.paper_report import REPORT_MARKER
    from core.runner.reproduce import estimate, make_plan, run_plan, validate_plan
    from core.store.outputs import check_output_dir

    apply_model_flags(args)
    models = [m.strip() for m in (args.model or ["symbolic"]) if m.strip()]
    plan = make_plan(models, _csv(args.benchmarks), args.seeds, args.limit, name=args.name)
    store = open_store(args)
    out = check_output_dir(args.out or "report", store_path=store.path, reuse_marker=REPORT_MARKER)
    episodes = validate_plan(store, plan)
    quiet = bool(args.json) or not show_progress()
    options = RunOptions(
        workers=args.workers,
        concurrency=args.concurrency,
        max_cost_usd=args.max_cost,
        progress=not quiet,
    )

    def say(text: str) -> None:
        if not args.json:
            print(text, file=sys.stderr if not quiet else sys.stdout, flush=True)

    est: dict[str, Any] | None = None
    if args.estimate or args.max_cost is not None:
        say(f"pilot: {len(models)} model(s), estimating {sum(episodes.values())} episodes")
        est = estimate(store, plan, episodes, options)
        if args.estimate:
            return emit(
                args,
                {"runs": [], "tables": [], "figures": [], "estimate": est},
                _estimate_text(est),
            )
        cost = est["cost_usd"]
        if cost is None or cost > args.max_cost:
            shown = "unpriced" if cost is None else f"${cost:.4f}"
            raise ConfigError(
                f"the plan is estimated at {shown}, over the limit ${args.max_cost:.4f} "
                "(see --estimate)",
                field="--max-cost",
            )
    runs = run_plan(store, plan, options, say=say)
    from core.runner.paper_report import write_report

    files = write_report(store, plan, out, runs, est)
    payload: dict[str, Any] = {
        "runs": runs,
        "tables": files["tables"],
        "figures": files["figures"],
        "index": files["index"][0],
        "estimate": est,
    }
    done = sum(r["completed"] for r in runs)
    total = sum(r["episodes"] for r in runs)
    text = (
        f"reproduce {plan.name}: {len(runs)} runs, {done}/{total} episodes; "
        f"{len(files['tables'])} table files, {len(files['figures'])} figure files; "
        f"open {files['index'][0]}"
    )
    return emit(args, payload, text)


def _estimate_text(est: dict[str, Any]) -> str:
    cost = est["cost_usd"]
    lines = [
        f"estimate: {est['episodes']} episodes, {est['calls']:.0f} model calls, "
        f"{est['tokens']:.0f} tokens, "
        + (f"${cost:.4f}" if cost is not None else f"unpriced ({', '.join(est['unpriced'])})")
    ]
    for r in est["by_run"]:
        c = "unpriced" if r["cost_usd"] is None else f"${r['cost_usd']:.4f}"
        lines.append(
            f"  {r['run']:<40} {r['episodes']:>7} ep {r['calls']:>10.0f} calls "
            f"{r['tokens']:>12.0f} tok {c}"
        )
    return "\n".join(lines)
