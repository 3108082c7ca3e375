"""``driftbench import …``: bring host worlds and released data into the store.

Importers validate everything before they write; a malformed file names the file and the field
and exits with code 2 with the store untouched.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.cli._common import add_json, emit, existing_dir, open_store
from core.envs.base import HostWorld
from core.errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``import`` and its sub-commands."""
    p = sub.add_parser("import", help="import host worlds or released data into the store")
    isub = p.add_subparsers(dest="what", metavar="WHAT", required=True)

    t = isub.add_parser("tau2", help="import a τ²-bench domain directory")
    t.add_argument("--domain", choices=("retail", "airline"), required=True)
    t.add_argument("--from", dest="src", type=existing_dir, required=True, metavar="DIR")
    add_check(t)
    add_json(t)
    t.set_defaults(handler=cmd_import_tau2)

    w = isub.add_parser("webshop", help="import WebShop product and instruction files")
    w.add_argument("--from", dest="src", type=existing_dir, required=True, metavar="DIR")
    add_check(w)
    add_json(w)
    w.set_defaults(handler=cmd_import_webshop)

    r = isub.add_parser(
        "release",
        help="import Drift-Bench++ released samples and graphs",
        description=(
            "Import released graphs and samples. Each graph is placed on a world this store "
            "holds (imported worlds first, then the bundled one) on which its root reproduces "
            "the released state; every sample must then pass the oracle there. Everything left "
            "out is listed under 'skipped' with its reason. Samples are stored with source "
            "release:NAME (select them with `driftbench run --source NAME`)."
        ),
    )
    r.add_argument("--from", dest="src", type=existing_dir, required=True, metavar="DIR")
    r.add_argument("--name", default=None, help="import name (default: the folder's name)")
    r.add_argument(
        "--world",
        action="append",
        default=None,
        metavar="ID",
        help="only place graphs on this world id ('bundled' or a stored id; repeatable)",
    )
    add_json(r)
    r.set_defaults(handler=cmd_import_release)

    from core.cli.cmd_studies import add_import_sessions

    add_import_sessions(isub)


def add_check(parser: argparse.ArgumentParser) -> None:
    """Add ``--check``: run the world contract check on the imported world."""
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the imported world against the world contract (exit 1 on a problem)",
    )


def checked(args: argparse.Namespace, world: HostWorld, result: dict[str, Any], text: str) -> int:
    """Emit ``result`` (with ``check`` when ``--check``); 1 when the world breaks the contract.

    ``result["check"]`` is ``{"passed", "problems": [{"code", "hook", "detail", "meaning"}]}``.
    """
    if not args.check:
        return emit(args, result, text)
    from core.envs.check import check_world, describe

    problems = check_world(world)
    result = {**result, "check": {"passed": not problems, "problems": describe(problems)}}
    lines = [f"  {p}" for p in problems]
    verdict = "world check: passed" if not problems else f"world check: {len(problems)} problem(s)"
    code = emit(args, result, "\n".join([text, verdict, *lines]))
    return 1 if problems else code


def cmd_import_tau2(args: argparse.Namespace) -> int:
    """Import a τ²-bench domain directory (db.json, tasks.json, split_tasks.json, policy.md)."""
    from core.envs.tau2 import import_domain, load_tau2_world

    store = open_store(args)
    result = import_domain(args.domain, args.src, store)
    text = (
        f"imported τ² {result['domain']}: {result['tasks']} tasks, "
        f"initial state {result['initial_state_hash'][:16]}…"
    )
    if not args.check:
        return emit(args, result, text)
    return checked(args, load_tau2_world(args.domain, args.src), result, text)


def cmd_import_webshop(args: argparse.Namespace) -> int:
    """Stream WebShop's items_shuffle / items_ins_v2 / items_human_ins / human_goals files.

    A progress bar (rate, ETA) goes to stderr unless ``--json``; an interrupted import resumes.
    """
    from core.envs.webshop import import_webshop

    store = open_store(args)
    result = import_webshop(args.src, store, progress=not getattr(args, "json", False))
    if result.get("already_imported"):
        text = (
            f"already imported: world {result['world_id']} holds exactly these "
            f"{result['products']:,} products and {result['goals']:,} goals; nothing changed"
        )
    else:
        text = (
            f"imported {result['products']:,} products, {result['goals']:,} goals "
            f"({result['test_goals']} in the 500-task test split) in {result['seconds']:.1f} s"
            + (" (resumed)" if result["resumed"] else "")
            + f"; world {result['world_id']}"
        )
    if not args.check:
        return emit(args, result, text)
    from core.construction.worlds import stored

    got = stored(store, str(result["world_id"]))
    if got is None:
        raise ConfigError(f"the imported world {result['world_id']} is not in the store")
    return checked(args, got.world, result, text)


def cmd_import_release(args: argparse.Namespace) -> int:
    """Import released graphs and samples that execute on a world of this store."""
    from core.construction.pipeline import host_task_count
    from core.construction.release import read_release
    from core.construction.report import record_build
    from core.construction.worlds import LoadedWorld, bundled, imported_worlds, world_for

    store = open_store(args)
    name = (args.name or args.src.name).strip()
    if not name or ":" in name:
        raise ConfigError("an import name must be non-empty and contain no ':'", field="--name")
    candidates: dict[str, list[LoadedWorld]] = {}
    for benchmark in ("webshop", "tau2_retail", "tau2_airline"):
        if args.world:
            picked = []
            for wid in args.world:
                try:
                    picked.append(world_for(store, benchmark, world=wid))
                except ConfigError:
                    continue
            candidates[benchmark] = picked
        else:
            candidates[benchmark] = [*imported_worlds(store, benchmark), bundled(benchmark)]
    result = read_release(args.src, candidates=candidates)
    source = f"release:{name}"
    store.put_graphs_and_samples(result.graphs, result.samples, source=source)
    report = result.report
    for benchmark in sorted({g.benchmark for g in result.graphs}):
        graphs = [g for g in result.graphs if g.benchmark == benchmark]
        ref = graphs[0].world
        loaded = next(
            (c for c in candidates.get(benchmark, []) if ref and c.ref.world_id == ref.world_id),
            None,
        )
        record_build(
            store,
            benchmark=benchmark,
            source=source,
            ref=ref,
            kind="import",
            params={"from": str(args.src)},
            stats={
                "host_tasks": host_task_count(loaded.world) if loaded is not None else None,
                "graphs": len(graphs),
                "executable_seeds": len({str(g.root.base).split("+")[0] for g in graphs}),
                "gate_removed": report.get("gate", {}).get("removed"),
                "gate_removed_by_operator": report.get("gate", {}).get("removed_by_operator"),
                "samples": report["by_benchmark"].get(benchmark, 0),
            },
        )
    gt = report.get("ground_truth_matches", {})
    oracle = report.get("oracle", {})
    text = (
        f"imported {report['imported']} samples as {source} ({report['by_benchmark']}); "
        f"skipped {len(report['skipped'])}; roots reproduced {gt.get('matched', 0)}/"
        f"{gt.get('checked', 0)}; ORACLE passed {oracle.get('passed', 0)}/"
        f"{oracle.get('checked', 0)}; the policy gate removed "
        f"{report.get('gate', {}).get('removed', 0)} cross-customer nodes"
    )
    for sk in report["skipped"][:20]:
        text += f"\n  skipped {sk['source']}: {sk['reason']}"
    return emit(args, {**report, "source": source}, text)
