"""Helpers shared by the CLI command modules."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.store import Store

EXIT_USAGE = 2
"""Exit code for usage and data errors."""


def fail(message: str) -> int:
    """Print one error line on stderr and return the usage exit code."""
    print(f"driftbench: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> int:
    """Print ``payload`` as JSON with ``--json``, else the human ``text``; return 0."""
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=None, ensure_ascii=False, default=str))
    else:
        print(text)
    return 0


def store_path(args: argparse.Namespace) -> Path | None:
    """Return the ``--store`` path given on the command line, if any."""
    value = getattr(args, "store", None)
    return Path(value) if value else None


def open_store(args: argparse.Namespace, *, create: bool = True) -> Store:
    """Open the store named by ``--store`` (or the default)."""
    return Store.open(store_path(args), create=create)


def add_json(parser: argparse.ArgumentParser) -> None:
    """Add the standard ``--json`` flag."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def existing_dir(value: str) -> Path:
    """Argparse type: an existing directory (clear error otherwise)."""
    path = Path(value).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{value}: no such directory")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: not a directory")
    return path


def show_progress() -> bool:
    """Whether to draw progress bars (only on an interactive terminal)."""
    return sys.stderr.isatty()
