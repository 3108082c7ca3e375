"""``driftbench build graphs|samples|report``: construct verified benchmark instances."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli._common import add_json, emit, existing_dir, open_store

_BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``build`` and its sub-commands."""
    p = sub.add_parser("build", help="build intent graphs and verified faulty samples")
    bsub = p.add_subparsers(dest="what", metavar="WHAT", required=True)

    g = bsub.add_parser("graphs", help="build intent graphs from host tasks into the store")
    g.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    g.add_argument(
        "--data", type=existing_dir, metavar="DIR", help="host data (default: store/bundled)"
    )
    g.add_argument("--seed", type=int, default=42)
    g.add_argument("--branching", type=int, default=8)
    add_json(g)
    g.set_defaults(handler=cmd_build_graphs)

    s = bsub.add_parser("samples", help="generate-then-verify faulty requests into the store")
    s.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    s.add_argument("--data", type=existing_dir, metavar="DIR")
    s.add_argument("--writer", default="template", help="template or an LLM model spec")
    s.add_argument(
        "--extractors", default="rule,rule", help="two extractor specs: rule or LLM model specs"
    )
    s.add_argument("--k", type=int, choices=(1, 2, 4), default=1, help="faults per request")
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--per-graph", type=int, default=None, help="samples (k=1) or draws per graph")
    s.add_argument(
        "--bundle",
        action="store_true",
        help="rebuild the committed data/benchmark/<b> files (template writer, all k) instead",
    )
    add_json(s)
    s.set_defaults(handler=cmd_build_samples)

    r = bsub.add_parser("report", help="Table-4-shaped construction statistics")
    add_json(r)
    r.set_defaults(handler=cmd_build_report)


def cmd_build_graphs(args: argparse.Namespace) -> int:
    """Build graphs and store them."""
    from core.construction.pipeline import build_graphs
    from core.construction.worlds import world_for

    store = open_store(args)
    world = world_for(store, args.benchmark, args.data)
    graphs, stats = build_graphs(world, seed=args.seed, branching=args.branching)
    store.put_graphs_and_samples(graphs, [], source="built")
    payload = {
        "benchmark": args.benchmark,
        "graphs": len(graphs),
        "by_operator": stats.get("by_operator", {}),
        "tasks": stats.get("tasks"),
        "candidates": stats.get("candidates"),
    }
    ops = ", ".join(f"{k} {v}" for k, v in payload["by_operator"].items())
    return emit(args, payload, f"{args.benchmark}: {len(graphs)} graphs ({ops})")


def cmd_build_samples(args: argparse.Namespace) -> int:
    """Build graphs and verified samples for one benchmark and store them."""
    from core.construction.pipeline import build_bundled, build_graphs, build_samples
    from core.construction.worlds import world_for
    from core.errors import ConfigError

    store = open_store(args)
    if args.bundle:
        if args.writer != "template":
            raise ConfigError("--bundle rebuilds committed data with the template writer only")
        stats = build_bundled(args.benchmark)
        totals: dict[str, Any] = stats.get("totals", {})
        return emit(args, stats, f"{args.benchmark}: rebuilt bundled data ({totals})")
    extractors = tuple(x.strip() for x in args.extractors.split(","))
    if len(extractors) != 2 or not all(extractors):
        raise ConfigError("give exactly two extractor specs, e.g. rule,rule", field="--extractors")
    world = world_for(store, args.benchmark, args.data)
    graphs, _ = build_graphs(world, seed=args.seed)
    samples, stats = build_samples(
        world,
        graphs,
        writer=args.writer,
        extractors=(extractors[0], extractors[1]),
        k=args.k,
        seed=args.seed,
        per_graph=args.per_graph,
    )
    store.put_graphs_and_samples(graphs, samples, source="built")
    payload = {
        "benchmark": args.benchmark,
        "candidates": stats.get("candidates"),
        "rejected_by_step": stats.get("rejected_by_step"),
        "samples": len(samples),
        "by_fault_type": stats.get("by_fault_type"),
    }
    text = (
        f"{args.benchmark}: {payload['candidates']} candidates → {len(samples)} samples "
        f"(rejected by step {payload['rejected_by_step']})"
    )
    return emit(args, payload, text)


def cmd_build_report(args: argparse.Namespace) -> int:
    """Print construction statistics of the bundled benchmarks."""
    from core.construction.pipeline import bundled_stats, construction_report

    report = construction_report(bundled_stats())
    lines = [
        f"{'benchmark':<14} {'tasks':>6} {'graphs':>7} {'cands':>7} {'rej 1/2/3':>16} "
        f"{'rate':>6} {'samples':>8}"
    ]
    for b in report["benchmarks"]:
        rej = b["rejected_by_step"]
        steps = "/".join(str(rej.get(k, 0)) for k in ("1", "2", "3"))
        lines.append(
            f"{b['benchmark']:<14} {b['tasks']!s:>6} {b['graphs']!s:>7} {b['candidates']!s:>7} "
            f"{steps:>16} {b['rejection_rate']:>6.1%} {b['samples']!s:>8}"
        )
    return emit(args, report, "\n".join(lines))
