"""``driftbench import …``: bring host worlds and released data into the store.

Importers validate everything before they write; a malformed file names the file and the field
and exits with code 2 with the store untouched.
"""

from __future__ import annotations

import argparse

from core.cli._common import add_json, emit, existing_dir, open_store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``import`` and its sub-commands."""
    p = sub.add_parser("import", help="import host worlds or released data into the store")
    isub = p.add_subparsers(dest="what", metavar="WHAT", required=True)

    t = isub.add_parser("tau2", help="import a τ²-bench domain directory")
    t.add_argument("--domain", choices=("retail", "airline"), required=True)
    t.add_argument("--from", dest="src", type=existing_dir, required=True, metavar="DIR")
    add_json(t)
    t.set_defaults(handler=cmd_import_tau2)

    w = isub.add_parser("webshop", help="import WebShop product and instruction files")
    w.add_argument("--from", dest="src", type=existing_dir, required=True, metavar="DIR")
    add_json(w)
    w.set_defaults(handler=cmd_import_webshop)

    r = isub.add_parser("release", help="import Drift-Bench++ released samples and graphs")
    r.add_argument("--from", dest="src", type=existing_dir, required=True, metavar="DIR")
    add_json(r)
    r.set_defaults(handler=cmd_import_release)

    from core.cli.cmd_studies import add_import_sessions

    add_import_sessions(isub)


def cmd_import_tau2(args: argparse.Namespace) -> int:
    """Import a τ²-bench domain directory (db.json, tasks.json, split_tasks.json, policy.md)."""
    from core.envs.tau2 import import_domain

    store = open_store(args)
    result = import_domain(args.domain, args.src, store)
    text = (
        f"imported τ² {result['domain']}: {result['tasks']} tasks, "
        f"initial state {result['initial_state_hash'][:16]}…"
    )
    return emit(args, result, text)


def cmd_import_webshop(args: argparse.Namespace) -> int:
    """Import WebShop's items_shuffle / items_ins_v2 / items_human_ins files."""
    from core.envs.webshop import import_webshop

    store = open_store(args)
    result = import_webshop(args.src, store)
    return emit(args, result, f"imported {result['products']} products, {result['goals']} goals")


def cmd_import_release(args: argparse.Namespace) -> int:
    """Import released graphs and samples whose host world is loaded; list the others."""
    from core.construction.release import read_release
    from core.construction.worlds import imported_world
    from core.envs.base import HostWorld

    store = open_store(args)
    worlds: dict[str, HostWorld] = {}
    for benchmark in ("webshop", "tau2_retail", "tau2_airline"):
        world = imported_world(store, benchmark)
        if world is not None:
            worlds[benchmark] = world
    result = read_release(args.src, worlds)
    store.put_graphs_and_samples(result.graphs, result.samples, source=f"release:{args.src.name}")
    report = result.report
    gt = report.get("ground_truth_matches", {})
    text = (
        f"imported {report['imported']} samples ({report['by_benchmark']}); "
        f"skipped {len(report['skipped'])}; ground truth re-executed "
        f"{gt.get('matched', 0)}/{gt.get('checked', 0)} matching"
    )
    return emit(args, report, text)
