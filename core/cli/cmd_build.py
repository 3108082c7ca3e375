"""``driftbench build graphs|samples|report``: construct verified benchmark instances."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli import _validate as V
from core.cli._common import add_json, emit, existing_dir, open_store
from core.cli.cmd_run import add_model_flags, apply_model_flags

_BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")

_WORLD_HELP = (
    "the world to build on: 'bundled' or a stored world id (default: the newest imported "
    "world of the benchmark, else the bundled one)"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``build`` and its sub-commands."""
    p = sub.add_parser("build", help="build intent graphs and verified faulty samples")
    bsub = p.add_subparsers(dest="what", metavar="WHAT", required=True)

    g = bsub.add_parser("graphs", help="build intent graphs from host tasks into the store")
    g.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    g.add_argument(
        "--data",
        type=existing_dir,
        metavar="DIR",
        help="host data folder: imported into the store first, then built on",
    )
    g.add_argument("--world", default=None, metavar="ID", help=_WORLD_HELP)
    g.add_argument("--seed", type=V.any_int, default=42)
    g.add_argument("--branching", type=V.positive, default=8)
    add_json(g)
    g.set_defaults(handler=cmd_build_graphs)

    s = bsub.add_parser("samples", help="generate-then-verify faulty requests into the store")
    s.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    s.add_argument(
        "--data",
        type=existing_dir,
        metavar="DIR",
        help="host data folder: imported into the store first, then built on",
    )
    s.add_argument("--world", default=None, metavar="ID", help=_WORLD_HELP)
    s.add_argument(
        "--writer",
        default=None,
        help="template or an LLM model spec (default: the models file's writer, else template)",
    )
    s.add_argument(
        "--extractors",
        default=None,
        help="two different extractor specs: rule, align or LLM model specs (the same one "
        "twice, or two models of one family, is refused; default: the models file's "
        "extractors, else rule,align)",
    )
    s.add_argument(
        "--allow-same-family",
        action="store_true",
        help="accept two LLM extractors of one model family (the protocol wants different "
        "families; see docs/PROTOCOL.md)",
    )
    s.add_argument(
        "--writer-temperature",
        type=float,
        default=None,
        help="sampling temperature of an LLM writer (default: the models file's, else 0.7)",
    )
    s.add_argument(
        "--concurrency",
        type=V.positive,
        default=1,
        help="graphs built at once with an LLM writer or extractors (requests in flight)",
    )
    s.add_argument(
        "--graphs",
        type=V.positive,
        default=None,
        metavar="N",
        help="build on the first N graphs only (in graph-id order)",
    )
    s.add_argument(
        "--max-candidates",
        type=V.positive,
        default=None,
        metavar="N",
        help="LLM builds: candidates allowed per wanted sample of a graph (default 4)",
    )
    s.add_argument("--k", type=int, choices=(1, 2, 4), default=1, help="faults per request")
    s.add_argument("--seed", type=V.any_int, default=42)
    s.add_argument(
        "--per-graph", type=V.positive, default=None, help="samples (k=1) or draws per graph"
    )
    s.add_argument(
        "--bundle",
        action="store_true",
        help="rebuild the committed data/benchmark/<b> files (template writer, all k) instead",
    )
    add_json(s)
    add_model_flags(s)
    s.set_defaults(handler=cmd_build_samples)

    r = bsub.add_parser(
        "report",
        help="Table-4 construction statistics of what is in the store",
        description=(
            "One row per benchmark, source (bundled, built, release:NAME) and world: host "
            "tasks, tasks with an executable seed, graphs, candidates, rejections per verifier "
            "step, rejection rate, samples and fault-type counts."
        ),
    )
    r.add_argument(
        "--source", default=None, help="only this source: bundled, built, release or an import name"
    )
    r.add_argument(
        "--text",
        action="store_true",
        help="add request-text statistics (median words, tool-name rate, off-topic passages)",
    )
    add_json(r)
    r.set_defaults(handler=cmd_build_report)


def cmd_build_graphs(args: argparse.Namespace) -> int:
    """Build graphs on the chosen world and store them (with the world they were built on)."""
    from core.construction.pipeline import build_graphs
    from core.construction.report import record_build
    from core.construction.worlds import world_for

    store = open_store(args)
    loaded = world_for(store, args.benchmark, args.data, args.world)
    graphs, stats = build_graphs(
        loaded.world, seed=args.seed, branching=args.branching, ref=loaded.ref
    )
    store.put_graphs_and_samples(graphs, [], source="built")
    record_build(
        store,
        benchmark=args.benchmark,
        source="built",
        ref=loaded.ref,
        kind="graphs",
        params={"seed": args.seed, "branching": args.branching},
        stats=stats,
    )
    payload = {
        "benchmark": args.benchmark,
        "graphs": len(graphs),
        "by_operator": stats.get("by_operator", {}),
        "tasks": stats.get("tasks"),
        "host_tasks": stats.get("host_tasks"),
        "candidates": stats.get("candidates"),
        "gate_removed": stats.get("gate_removed"),
        "world": loaded.ref.model_dump(mode="json"),
    }
    ops = ", ".join(f"{k} {v}" for k, v in payload["by_operator"].items())
    return emit(
        args,
        payload,
        f"{args.benchmark}: {len(graphs)} graphs ({ops}) on world {loaded.ref.world_id}; "
        f"the policy gate removed {payload['gate_removed']} cross-customer candidates",
    )


def cmd_build_samples(args: argparse.Namespace) -> int:
    """Build graphs and verified samples for one benchmark and store them."""
    apply_model_flags(args)
    from core.construction.pipeline import build_bundled, build_graphs, build_samples
    from core.construction.report import record_build
    from core.construction.worlds import world_for
    from core.errors import ConfigError

    store = open_store(args)
    writer, extractors = _roles(args)
    if args.bundle:
        if writer != "template":
            raise ConfigError("--bundle rebuilds committed data with the template writer only")
        stats = build_bundled(args.benchmark)
        totals: dict[str, Any] = stats.get("totals", {})
        return emit(args, stats, f"{args.benchmark}: rebuilt bundled data ({totals})")
    import time

    from core.construction.pipeline import check_extractor_pair
    from core.llm.ledger import CostLedger, recording
    from core.llm.retry import ProviderUnavailable

    try:  # before any world is imported: a refused pair writes nothing
        check_extractor_pair(extractors, allow_same_family=args.allow_same_family)
    except ConfigError as exc:
        raise ConfigError(exc.detail, field="--extractors") from None
    loaded = world_for(store, args.benchmark, args.data, args.world)
    graphs, gstats = build_graphs(loaded.world, seed=args.seed, ref=loaded.ref)
    if args.graphs is not None:
        graphs = sorted(graphs, key=lambda g: g.graph_id)[: args.graphs]
    store.put_graphs_and_samples(graphs, [], source="built")
    halted: list[str] = []

    def keep(_graph: Any, got: list[Any]) -> None:  # each graph's samples stored as it ends
        if got:
            store.put_graphs_and_samples([], got, source="built")

    spent, t0 = CostLedger(), time.perf_counter()
    try:
        with recording(spent):
            samples, stats = build_samples(
                loaded.world,
                graphs,
                writer=writer,
                extractors=extractors,
                k=args.k,
                seed=args.seed,
                per_graph=args.per_graph,
                ref=loaded.ref,
                writer_temperature=args.writer_temperature,
                allow_same_family=args.allow_same_family,
                concurrency=args.concurrency,
                allowance=args.max_candidates,
                on_graph=keep,
                stop=lambda: bool(halted),
            )
    except ProviderUnavailable as exc:
        raise ConfigError(
            f"the model provider is unavailable ({exc}); the samples of the graphs already "
            "built are stored — run the same command again to go on (answers are cached)",
            field="--writer",
        ) from None
    seconds = time.perf_counter() - t0
    store.put_graphs_and_samples(graphs, samples, source="built")
    record_build(
        store,
        benchmark=args.benchmark,
        source="built",
        ref=loaded.ref,
        kind="graphs",
        params={"seed": args.seed, "branching": 8},
        stats=gstats,
    )
    record_build(
        store,
        benchmark=args.benchmark,
        source="built",
        ref=loaded.ref,
        kind="samples",
        params={
            "seed": args.seed,
            "k": args.k,
            "writer": writer,
            "extractors": list(extractors),
            "per_graph": args.per_graph,
        },
        stats=stats,
    )
    payload = {
        "benchmark": args.benchmark,
        "candidates": stats.get("candidates"),
        "rejected_by_step": stats.get("rejected_by_step"),
        "rejection_rate": stats.get("rejection_rate"),
        "samples": len(samples),
        "by_fault_type": stats.get("by_fault_type"),
        "graphs": len(graphs),
        "world": loaded.ref.model_dump(mode="json"),
    }
    llm = _llm_use(spent, len(samples), seconds, stats)
    if llm is not None:
        payload["llm"] = llm
    text = (
        f"{args.benchmark}: {payload['candidates']} candidates → {len(samples)} samples "
        f"(rejected by step {payload['rejected_by_step']}) on world {loaded.ref.world_id}"
    )
    if llm is not None:
        per = llm["per_sample"]
        text += (
            f"\nmodel calls: {llm['calls']} ({llm['cached']} cached, {llm['failures']} failed), "
            f"{llm['tokens']} tokens, ${llm['cost_usd']:.4f} in {seconds:.1f}s; per admitted "
            f"sample: {per['calls']} calls, {per['tokens']} tokens"
        )
    return emit(args, payload, text)


def _roles(args: argparse.Namespace) -> tuple[str, tuple[str, str]]:
    """The writer and extractors: the flags, else the models file's entries, else offline."""
    from core.errors import ConfigError
    from core.llm.models import role_label

    writer = args.writer or role_label("writer") or "template"
    if args.extractors:
        names = tuple(x.strip() for x in args.extractors.split(","))
    else:
        found = [x for x in (role_label("extractors", 0), role_label("extractors", 1)) if x]
        names = (found[0], found[1]) if len(found) == 2 else (*found, "rule", "align")[:2]
        if len(found) == 1:
            names = (found[0], "align")
    if len(names) != 2 or not all(names):
        raise ConfigError("give exactly two extractor specs, e.g. rule,align", field="--extractors")
    return writer, (names[0], names[1])


def _llm_use(
    spent: Any, samples: int, seconds: float, stats: dict[str, Any]
) -> dict[str, Any] | None:
    """Calls, tokens and cost of a build's language models, in all and per admitted sample."""
    rows = spent.to_dict()
    if not rows:
        return None
    calls = sum(int(r["calls"]) for r in rows.values())
    tokens = sum(int(r["prompt_tokens"]) + int(r["completion_tokens"]) for r in rows.values())
    cost = sum(float(r["cost_usd"]) for r in rows.values())
    busy = sum(float(r.get("seconds") or 0.0) for r in rows.values())
    return {
        "calls": calls,
        "provider_calls": sum(int(r["provider_calls"]) for r in rows.values()),
        "cached": sum(int(r["cached"]) for r in rows.values()),
        "failures": int(stats.get("llm_failures") or 0),
        "tokens": tokens,
        "cost_usd": round(cost, 6),
        "by_role": rows,
        "seconds": round(seconds, 3),
        "concurrency_achieved": round(busy / seconds, 2) if seconds > 0 else None,
        "per_sample": {
            "calls": round(calls / samples, 2) if samples else None,
            "tokens": round(tokens / samples, 1) if samples else None,
            "cost_usd": round(cost / samples, 6) if samples else None,
        },
    }


def _cell(value: Any, fmt: str = "") -> str:
    if value is None:
        return "—"
    return format(value, fmt) if fmt else str(value)


def cmd_build_report(args: argparse.Namespace) -> int:
    """Print the construction statistics of what is in the store (bundled, built, imported)."""
    from core.construction.report import store_report

    store = open_store(args)
    report = store_report(store, source=args.source, text=args.text)
    lines = [
        f"{'benchmark':<14} {'source':<28} {'host':>5} {'tasks':>6} {'graphs':>7} "
        f"{'cands':>7} {'rej 1/2/3':>16} {'rate':>6} {'samples':>8}"
    ]
    for b in report["benchmarks"]:
        rej = b["rejected_by_step"]
        steps = "/".join(str(rej.get(k, 0)) for k in ("1", "2", "3")) if rej else "—"
        lines.append(
            f"{b['benchmark']:<14} {b['source'][:28]:<28} {_cell(b['host_tasks']):>5} "
            f"{_cell(b['tasks']):>6} {_cell(b['graphs']):>7} {_cell(b['candidates']):>7} "
            f"{steps:>16} {_cell(b['rejection_rate'], '.1%'):>6} {_cell(b['samples']):>8}"
        )
    if not report["benchmarks"]:
        lines.append("(nothing matches)")
    if args.text:
        lines += _text_lines(report["benchmarks"])
    return emit(args, report, "\n".join(lines))


def _text_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The ``--text`` block: request-text statistics and top opening templates per type."""
    out: list[str] = []
    for b in rows:
        t = b.get("text") or {}
        out.append("")
        out.append(
            f"{b['benchmark']} / {b['source']}: median words {_cell(t.get('median_words'))}, "
            f"tool-name rate {_cell(t.get('tool_name_rate'), '.1%')}, distinct off-topic "
            f"passages {_cell(t.get('distinct_offtopic_passages'))}"
        )
        for ftype, tops in sorted((t.get("top_templates") or {}).items()):
            shown = "; ".join(f"“{x['template']}…” {x['share']:.0%}" for x in tops)
            out.append(f"  {ftype:<26} {shown}")
    return out
