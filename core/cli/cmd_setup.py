"""``driftbench init``, ``doctor`` and ``app``."""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import sys
from importlib import metadata
from typing import Any

from core import __version__
from core.cli import _validate as V
from core.cli._common import add_json, emit, open_store
from core.paths import PROJECT_ROOT


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register this module's commands."""
    p = sub.add_parser("init", help="create the store and load the bundled worlds and samples")
    p.add_argument("--no-demo", action="store_true", help="do not run the demo sweep")
    add_json(p)
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser(
        "doctor",
        help="versions, store, configured providers, offline switches, model endpoints",
    )
    p.add_argument(
        "--models",
        default=None,
        metavar="FILE.yaml",
        help="models file whose endpoints to check (default: $DRIFTBENCH_MODELS)",
    )
    add_json(p)
    p.set_defaults(handler=cmd_doctor)

    p = sub.add_parser("bench", help="run the performance harness; rewrites docs/PERFORMANCE.md")
    p.add_argument("--quick", action="store_true", help="smaller inputs (smoke run)")
    p.add_argument("--only", help="comma-separated areas, e.g. tau2,webshop")
    p.set_defaults(handler=cmd_bench)

    p = sub.add_parser("app", help="start the studio (same as 'streamlit run app.py')")
    p.add_argument("--port", type=V.int_in(1, 65535), default=8501)
    p.set_defaults(handler=cmd_app)


def cmd_init(args: argparse.Namespace) -> int:
    """Create the store, load bundled data, run the demo sweep if empty."""
    from core.cli._common import store_path
    from core.paths import default_store_path
    from core.studio.bootstrap import initialise

    path = store_path(args) or default_store_path()
    existed = path.exists() and path.stat().st_size > 0
    store = open_store(args)
    try:
        result = initialise(store, demo=not args.no_demo)
    except BaseException:
        if not existed:  # a failed first init (a full disk …) leaves no half-initialised store
            store.remove_files()
        raise
    text = (
        f"store: {result['store']}\n"
        f"worlds: {result['worlds']}  samples: {result['samples']}  runs: {result['runs']}"
    )
    return emit(args, result, text)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def doctor_report(args: argparse.Namespace) -> dict[str, Any]:
    """Collect the doctor report (no network, no key values)."""
    from core.llm import configured_providers, offline_switches
    from core.llm.models import configure
    from core.llm.probe import check_endpoints

    configure(getattr(args, "models", None))  # --models, else DRIFTBENCH_MODELS

    versions: dict[str, str | None] = {
        "driftbench": __version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }
    for dist in ("streamlit", "pydantic", "pandas", "plotly", "litellm", "sqlite-utils"):
        versions[dist] = _version(dist)
    return {
        "versions": versions,
        "store": _store_report(args),
        "providers": configured_providers(),
        "offline": offline_switches(),
        "models": check_endpoints(),
    }


def _store_report(args: argparse.Namespace) -> dict[str, Any]:
    """Path, schema version, counts and ``integrity`` (``PRAGMA quick_check``) of the store.

    A store that cannot even be opened (not a database, truncated) reports that as its one
    integrity problem instead of failing the whole report.
    """
    from core.cli._common import store_path
    from core.paths import default_store_path
    from core.store.integrity import StoreCorruptError, quick_check

    try:
        store = open_store(args)
    except StoreCorruptError as exc:
        path = store_path(args) or default_store_path()
        return {
            "path": str(path),
            "schema_version": None,
            "counts": {},
            "integrity": {"ok": False, "quick_check": [str(exc)]},
        }
    checked = quick_check(store.conn)
    out: dict[str, Any] = {"path": str(store.path)}
    try:
        out["schema_version"] = store.schema_version()
        out["counts"] = store.counts()
    except sqlite3.DatabaseError as exc:
        out.update(schema_version=None, counts={})
        checked = [*checked, f"reading the tables failed: {exc}"]
    out["integrity"] = {"ok": checked == ["ok"], "quick_check": checked}
    return out


def cmd_doctor(args: argparse.Namespace) -> int:
    """Print versions, store details, configured providers and offline switches."""
    report = doctor_report(args)
    lines = ["versions:"]
    lines += [f"  {k}: {v or 'not installed'}" for k, v in report["versions"].items()]
    st = report["store"]
    lines.append(f"store: {st['path']} (schema v{st['schema_version']})")
    lines.append("  " + "  ".join(f"{k}={v}" for k, v in st["counts"].items()))
    integrity = st["integrity"]
    lines.append(
        "  integrity: ok"
        if integrity["ok"]
        else "  integrity: FAILED — " + "; ".join(integrity["quick_check"])
    )
    providers = report["providers"]
    lines.append("providers with keys: " + (", ".join(providers) if providers else "none"))
    lines.append(
        "offline switches: "
        + ", ".join(f"{k}={'on' if on else 'off'}" for k, on in report["offline"].items())
    )
    models = report["models"]
    lines.append(f"models file: {models['file'] or 'none'}")
    for row in models["endpoints"]:
        where = row["api_base"] or "hosted"
        state = {True: "ok", False: "FAILED", None: "not contacted"}[row["ok"]]
        key = (
            f"; key {row['key_env']} {'set' if row['key_set'] else 'unset'}"
            if row["key_env"]
            else ""
        )
        lines.append(f"  {row['role']}: {row['model']} @ {where} — {state} ({row['detail']}{key})")
    emit(args, report, "\n".join(lines))
    endpoints_ok = all(row["ok"] is not False for row in models["endpoints"])
    return 0 if integrity["ok"] and endpoints_ok else 2


def cmd_app(args: argparse.Namespace) -> int:
    """Replace this process with the studio server (``streamlit run app.py``)."""
    argv = [sys.executable, "-m", "pages.common.launch", "--server.port", str(args.port)]
    os.execv(sys.executable, argv)
    return 0  # pragma: no cover - execv does not return


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``python -m bench`` in this interpreter."""
    import subprocess

    argv = [sys.executable, "-m", "bench"]
    if args.quick:
        argv.append("--quick")
    if args.only:
        argv += ["--only", args.only]
    return subprocess.call(argv, cwd=PROJECT_ROOT)
