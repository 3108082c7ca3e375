"""The ``driftbench`` command: a thin shell over the engine.

Every command has ``--help``; every error is one line naming what is wrong and exits with code
2; nothing is written to the store when a command fails. ``--json`` output shapes follow
``shared/spec/CLI.md`` and are a contract.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core import __version__
from core.cli import (
    cmd_build,
    cmd_data,
    cmd_env,
    cmd_grip,
    cmd_models,
    cmd_reproduce,
    cmd_run,
    cmd_setup,
    cmd_studies,
    cmd_user,
    cmd_verify,
)
from core.cli._common import EXIT_USAGE, fail
from core.errors import DriftBenchError
from core.paths import require_checkout

_MODULES = (
    cmd_setup,
    cmd_data,
    cmd_env,
    cmd_build,
    cmd_verify,
    cmd_run,
    cmd_grip,
    cmd_reproduce,
    cmd_studies,
    cmd_user,
    cmd_models,
)


def build_parser() -> argparse.ArgumentParser:
    """Build the full argument parser (each command module registers its subcommands)."""
    parser = argparse.ArgumentParser(
        prog="driftbench",
        description="Drift-Bench++ Studio: interactive intent alignment benchmark (engine + CLI).",
    )
    parser.add_argument("--version", action="version", version=f"driftbench {__version__}")
    parser.add_argument(
        "--store", metavar="PATH", help="SQLite store (default $DRIFTBENCH_HOME/driftbench.db)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 2 usage or data error, 1 unexpected)."""
    from core.model.redaction import install_log_redaction

    install_log_redaction()  # every log record of this process passes the one redaction
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        require_checkout()
        return int(handler(args) or 0)
    except DriftBenchError as exc:
        from core.llm.secrets import redact

        return fail(redact(str(exc)))  # no key the process knows is ever printed
    except Exception as exc:  # noqa: BLE001 - known fault classes become one line (RELIABILITY)
        from core.cli._faults import one_line

        line = one_line(exc, args)
        if line is None:
            raise
        code, message = line
        from core.llm.secrets import redact

        print(f"driftbench: {redact(message)}", file=sys.stderr)
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
