"""``driftbench grip``: the GRIP report of one or more runs.

Undefined metric values are ``null`` in JSON and empty in CSV — never 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli import _validate as V
from core.cli._common import open_store
from core.cli.cmd_run import apply_model_flags
from core.errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``grip``."""
    p = sub.add_parser(
        "grip",
        help="GRIP report (eleven metrics, mean ± sd over seeds) of one or more runs",
        description=(
            "Score the ended episodes of RUN(s) with GRIP (grip-3) and print one row per cell. "
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
        type=V.judges,
        default=None,
        metavar="heuristic|human|MODEL_A,MODEL_B",
        help="role-realism judges (Identification, Consistency); default none",
    )
    p.add_argument(
        "--allow-same-family",
        action="store_true",
        help="accept two LLM judges of one model family (the protocol wants different families)",
    )
    p.add_argument(
        "--per-cell", type=V.positive, default=20, metavar="N", help="LLM judges: episodes per cell"
    )
    p.add_argument(
        "--pairs", type=V.positive, default=100, metavar="N", help="consistency pairs per run"
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="recompute the report and ask the LLM judges again (fresh model calls)",
    )
    p.add_argument(
        "--allow-judge-errors",
        action="store_true",
        help="exit 0 even when some judge calls failed (they are excluded and counted)",
    )
    p.add_argument("--models", default=None, metavar="FILE.yaml", help="model settings per role")
    p.add_argument(
        "--api-key-env", default=None, metavar="VAR", help="variable holding the judges' API key"
    )
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

    apply_model_flags(args)
    _check_judges(args.judges, allow_same_family=getattr(args, "allow_same_family", False))
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
    invalid = int(report.role_realism.get("judge_invalid_total") or 0)
    if invalid:
        by = report.role_realism.get("judge_invalid") or {}
        detail = ", ".join(f"{k} {v}" for k, v in by.items())
        print(
            f"{invalid} judge answer(s) were invalid ({detail}): no card letter, or neither "
            "SAME nor DIFFERENT; they are excluded from the metrics, never scored as wrong"
            + ("" if args.allow_judge_errors else " (pass --allow-judge-errors to accept)"),
            file=sys.stderr,
        )
    failed = int(report.role_realism.get("judge_errors_total") or 0)
    if invalid and not failed:
        return 0 if args.allow_judge_errors else 1
    if failed:
        by = report.role_realism.get("judge_errors") or {}
        detail = ", ".join(f"{k} {v}" for k, v in by.items())
        print(
            f"{failed} judge call(s) failed ({detail}); they are excluded from the metrics "
            "and not cached — run again to retry them"
            + ("" if args.allow_judge_errors else ", or pass --allow-judge-errors"),
            file=sys.stderr,
        )
        return 0 if args.allow_judge_errors else 1
    return 0


def _check_judges(judges: str | None, *, allow_same_family: bool = False) -> None:
    """Refuse a malformed ``--judges`` before the store is touched.

    Two model judges of one family are refused too, unless ``allow_same_family``.
    """
    if judges is None:
        return
    spec = judges.strip()
    if spec in ("heuristic", "human"):
        return
    parts = [p for p in spec.split(",") if p.strip()]
    if parts == ["models"]:  # the models file's two judges (after --models is applied)
        from core.llm.models import role_label

        parts = [p for p in (role_label("judges", 0), role_label("judges", 1)) if p]
        if len(parts) != 2:
            return  # the report names the missing judge
    if len(parts) != 2:
        raise ConfigError(
            f"expected heuristic, human, models or two model specs MODEL_A,MODEL_B, got {spec!r}",
            file="command line",
            field="--judges",
        )
    from core.model.families import check_independent

    check_independent(
        parts[0].strip(),
        parts[1].strip(),
        what="judges",
        field="--judges",
        allow_same_family=allow_same_family,
    )
