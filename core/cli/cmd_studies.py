"""``driftbench import sessions``, ``driftbench sessions report`` and ``driftbench studies``.

``studies create --from STUDY.yaml`` creates and assigns a label or play study
(:mod:`core.studies.study_file`; annotators must be accounts), ``studies list`` shows every
study with progress per annotator, ``studies export STUDY --format csv|jsonl|parquet --out DIR``
writes its labels, plays, turns (words, readings, corrections, final disclosures), surveys and
timings (:mod:`core.studies.export`).

``import sessions`` lives under the ``import`` group owned by ``cmd_data``; this module only
exposes :func:`add_import_sessions` and :func:`cmd_import_sessions` for the lead to wire in.
:func:`register` adds the top-level ``sessions`` group.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.cli import _validate as V
from core.cli._common import EXIT_USAGE, add_json, emit, fail, open_store


def add_import_sessions(
    import_subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Add ``sessions`` to the ``import`` sub-command group."""
    p = import_subparsers.add_parser(
        "sessions", help="import real agent sessions (JSONL, see docs/SESSIONS.md)"
    )
    p.add_argument("--from", dest="source", required=True, type=Path, metavar="FILE.jsonl")
    p.add_argument(
        "--partial",
        action="store_true",
        help="import the valid lines even if others are malformed (default: all or nothing)",
    )
    add_json(p)
    p.set_defaults(handler=cmd_import_sessions)


def cmd_import_sessions(args: argparse.Namespace) -> int:
    """Import a sessions file; exit 2 (nothing written) when lines are malformed."""
    from core.studies.sessions import import_sessions

    store = open_store(args)
    result = import_sessions(store, args.source, partial=bool(getattr(args, "partial", False)))
    payload = result.payload()
    details = [f"  {args.source}: line {err.line}: {err.message}" for err in result.errors[:50]]
    if len(result.errors) > 50:
        details.append(f"  … and {len(result.errors) - 50} more malformed line(s)")
    if getattr(args, "json", False):
        print(json.dumps(payload, ensure_ascii=False))
    elif result.ok:
        print("\n".join([f"imported {result.imported} session(s) from {args.source}", *details]))
    if result.ok:
        return 0
    # all or nothing: one error line naming the file and the first bad line, then the details
    first = result.errors[0]
    hint = (
        "no line was valid, so nothing was imported"
        if result.mode == "partial"
        else "nothing was imported; fix the lines or pass --partial"
    )
    fail(
        f"{args.source}: line {first.line}: {first.message} ({len(result.errors)} malformed "
        f"line(s); {hint})"
    )
    if not getattr(args, "json", False):
        print("\n".join(details), file=sys.stderr)
    return EXIT_USAGE


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``sessions`` and ``studies`` command groups."""
    _register_studies(sub)
    p = sub.add_parser("sessions", help="production-log validation over imported sessions")
    ssub = p.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    r = ssub.add_parser("report", help="two-judge misalignment report (misaligned vs clean)")
    r.add_argument(
        "--judges",
        default="heuristic",
        metavar="heuristic|MODEL_A,MODEL_B",
        help="two judges: 'heuristic' (offline) or two model specs",
    )
    r.add_argument("--study", help="use the human judgments of this study instead")
    r.add_argument("--match-on", help="metadata key clean sessions must share (e.g. task)")
    r.add_argument("--seed", type=V.any_int, default=0, help="bootstrap seed")
    r.add_argument("--refresh", action="store_true", help="re-run judges on judged sessions")
    add_json(r)
    r.set_defaults(handler=cmd_sessions_report)


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def report_text(payload: dict[str, Any]) -> str:
    """Human-readable form of the sessions report."""
    out = [f"judges: {', '.join(payload['judges'])}"]
    if payload["heuristic"]:
        out.append("(heuristic judges: an offline approximation, not a measurement)")
    counts = payload["counts"]
    out.append(
        f"sessions: {payload['n_sessions']}  misaligned: {counts['misaligned']}  clean: "
        f"{counts['clean']}  contested: {counts['contested']}  unjudged: {counts['unjudged']}"
    )
    out.append(
        f"judge agreement (Cohen's kappa on the misaligned flag): {_fmt(payload['judge_kappa'])}"
    )
    out.append(f"matched pairs: {len(payload['matched_pairs'])}")
    for c in payload["comparisons"]:
        ci = c["ci95"]
        ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        out.append(
            f"  {c['measure']}: misaligned {_fmt(c['misaligned_mean'])} vs clean "
            f"{_fmt(c['clean_mean'])} (diff {_fmt(c['mean_difference'])}{ci_text}, "
            f"n={c['n_pairs']})"
        )
    faults = {k: v for k, v in payload["fault_types"].items() if v}
    shifts = {k: v for k, v in payload["shift_types"].items() if v}
    out.append("fault types: " + (", ".join(f"{k} {v}" for k, v in faults.items()) or "none"))
    out.append("shift types: " + (", ".join(f"{k} {v}" for k, v in shifts.items()) or "none"))
    return "\n".join(out)


def cmd_sessions_report(args: argparse.Namespace) -> int:
    """Judge imported sessions twice and print the validation report."""
    from core.studies.sessions import run_sessions_report, session_rows

    store = open_store(args)
    if not session_rows(store):
        from core.errors import NotFoundError

        raise NotFoundError("no imported sessions; run 'driftbench import sessions --from FILE'")
    report = run_sessions_report(
        store,
        args.judges,
        study=args.study,
        seed=args.seed,
        match_on=args.match_on,
        refresh=args.refresh,
    )
    payload = report.payload()
    return emit(args, payload, report_text(payload))


def _register_studies(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("studies", help="human studies: create from a file, list, export")
    ssub = p.add_subparsers(dest="studies_command", metavar="ACTION", required=True)
    c = ssub.add_parser("create", help="create and assign a study from STUDY.yaml")
    c.add_argument("--from", dest="source", required=True, type=Path, metavar="STUDY.yaml")
    add_json(c)
    c.set_defaults(handler=cmd_studies_create)
    ls = ssub.add_parser("list", help="studies with progress per annotator")
    add_json(ls)
    ls.set_defaults(handler=cmd_studies_list)
    e = ssub.add_parser("export", help="labels, plays, turns, surveys and timings of a study")
    e.add_argument("study", metavar="STUDY", help="study id or name")
    e.add_argument("--format", choices=("csv", "jsonl", "parquet"), default="jsonl")
    e.add_argument("--out", type=Path, default=None, metavar="DIR", help="default: ./STUDY_ID")
    add_json(e)
    e.set_defaults(handler=cmd_studies_export)


def cmd_studies_create(args: argparse.Namespace) -> int:
    """Create a study from a file; nothing is stored when anything in it is wrong."""
    from core.studies.study_file import create_from_file, load_study_file
    from core.studio.accounts import known_accounts

    path = Path(args.source)
    f = load_study_file(path)
    store = open_store(args)
    made = create_from_file(store, f, known_accounts(store), file=str(path))
    per = ", ".join(f"{a}: {n}" for a, n in made["per_annotator"].items())
    text = (
        f"created study {f.name} ({made['study_id']}): {made['items']} item(s), "
        f"{made['assignments']} assignment(s) — {per}"
    )
    payload = {k: made[k] for k in ("study_id", "items", "assignments", "per_annotator")}
    return emit(args, payload, text)


def cmd_studies_list(args: argparse.Namespace) -> int:
    """List studies with progress per annotator."""
    from core.studies import get_study, list_studies, study_progress

    store = open_store(args)
    rows = []
    for r in list_studies(store):
        spec = get_study(store, r["study_id"]).spec
        rows.append(
            {
                **r,
                "kind": ",".join(spec.roles),
                "blind": spec.blind,
                "overlap": spec.overlap,
                "progress": study_progress(store, r["study_id"]),
            }
        )
    lines = []
    for r in rows:
        lines.append(
            f"{r['name']} ({r['study_id']}, {r['kind']}, {r['status']}): "
            f"{r['done']}/{r['assignments']} done"
        )
        lines += [
            f"  {p['annotator']}: {p['done'] + p['skipped']}/{p['assigned']} ({p['progress']:.0%})"
            for p in r["progress"]
        ]
    return emit(args, {"studies": rows}, "\n".join(lines) or "no studies")


def cmd_studies_export(args: argparse.Namespace) -> int:
    """Export a study's tables."""
    from core.studies import get_study
    from core.studies.export import export_study

    store = open_store(args, create=False)
    study = get_study(store, args.study)
    from core.store.outputs import check_output_dir
    from core.studies.export import EXPORT_MARKER

    out = check_output_dir(
        args.out if args.out is not None else Path(study.study_id),
        store_path=store.path,
        reuse_marker=EXPORT_MARKER,
    )
    files = export_study(store, study.study_id, args.format, out)
    return emit(args, {"files": [str(f) for f in files]}, "\n".join(str(f) for f in files))
