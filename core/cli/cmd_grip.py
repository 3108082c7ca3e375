"""``driftbench grip``: the GRIP report of one or more runs.

Undefined metric values are ``null`` in JSON and empty in CSV — never 0.
"""

from __future__ import annotations

import argparse
import json

from core.cli._common import open_store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``grip``."""
    p = sub.add_parser(
        "grip",
        help="GRIP report (eleven metrics, mean ± sd over seeds) of one or more runs",
        description=(
            "Score the ended episodes of RUN(s) with GRIP (grip-2) and print one row per cell. "
            "Undefined values print as '—' (table), null (JSON) or empty (CSV), never 0."
        ),
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run name or id")
    p.add_argument(
        "--by",
        default=None,
        metavar="KEYS",
        help="cell keys, comma-separated (default benchmark,method,persona,backbone)",
    )
    p.add_argument(
        "--format", dest="fmt", choices=("table", "json", "csv"), default="table", help="output"
    )
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument(
        "--judges",
        default=None,
        metavar="heuristic|human|MODEL_A,MODEL_B",
        help="role-realism judges (Identification, Consistency); default none",
    )
    p.add_argument(
        "--per-cell", type=int, default=20, metavar="N", help="LLM judges: episodes per cell"
    )
    p.add_argument("--pairs", type=int, default=100, metavar="N", help="consistency pairs per run")
    p.add_argument("--no-cache", action="store_true", help="recompute the report")
    p.add_argument(
        "--check-protocol",
        action="store_true",
        help=(
            "instead of GRIP: recount the persona statistics of the run(s) from their events "
            "(Wilson 99%% intervals, de-duplicated by draw key) and count rule violations; "
            "exit 1 when a departure is found"
        ),
    )
    p.set_defaults(handler=cmd_grip)


def cmd_grip(args: argparse.Namespace) -> int:
    """Build and print the report (or, with ``--check-protocol``, the protocol recount)."""
    from core.grip.report import build_report, report_csv, report_table

    store = open_store(args, create=False)
    if getattr(args, "check_protocol", False):
        from core.grip.protocol_check import check_runs, check_table

        check = check_runs(store, args.runs)
        if args.json or args.fmt == "json":
            print(json.dumps(check.to_json(), ensure_ascii=False, allow_nan=False))
        else:
            print(check_table(check))
        return 0 if check.ok else 1
    report = build_report(
        store,
        args.runs,
        by=args.by,
        judges=args.judges,
        per_cell=args.per_cell,
        n_pairs=args.pairs,
        use_cache=not args.no_cache,
    )
    fmt = "json" if args.json else args.fmt
    if fmt == "json":
        print(json.dumps(report.to_json(), ensure_ascii=False, allow_nan=False))
    elif fmt == "csv":
        print(report_csv(report), end="")
    else:
        print(report_table(report))
    return 0
