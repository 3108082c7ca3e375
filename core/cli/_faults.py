"""Known fault classes that escape a command, turned into one line and an exit code.

Commands validate their input up front (:mod:`core.cli._validate`, :mod:`core.model.bounds`);
this is the last line of defence for faults that can surface anywhere: a store file that is
corrupt or on a full disk, SIGTERM during a sweep, a file system error, input nested too deep
for the parser. Anything else is a bug and keeps its traceback (exit 1). See
``docs/RELIABILITY.md``.
"""

from __future__ import annotations

import argparse
import sqlite3

from core.cli._common import EXIT_USAGE, store_path
from core.model.bounds import MAX_INT_DIGITS
from core.paths import default_store_path

EXIT_TERMINATED = 143
"""Exit code after SIGTERM (128 + 15)."""


def _store(args: argparse.Namespace) -> str:
    try:
        return str(store_path(args) or default_store_path())
    except Exception:  # noqa: BLE001 - only used to name the file in a message
        return "the store"


def _input(args: argparse.Namespace) -> str:
    """``"PATH: "`` for the command's input file or folder (``--from``/``--data``), or ""."""
    for name in ("src", "source", "data"):
        value = getattr(args, name, None)
        if value:
            return f"{value}: "
    return ""


def one_line(exc: BaseException, args: argparse.Namespace) -> tuple[int, str] | None:
    """``(exit code, message)`` for a known fault class, None for anything else."""
    from core.runner.lifecycle import Terminated
    from core.store.integrity import describe_sqlite_error

    if isinstance(exc, Terminated):
        run = getattr(args, "resume", None) or getattr(args, "name", None) or "RUN"
        return (
            EXIT_TERMINATED,
            f"terminated by SIGTERM; the run is interrupted — resume it with "
            f"'driftbench run --resume {run}'",
        )
    if isinstance(exc, sqlite3.Error):
        return EXIT_USAGE, f"error: {describe_sqlite_error(_store(args), exc)}"
    where = _input(args)
    if isinstance(exc, RecursionError):
        return EXIT_USAGE, f"error: {where}input nested too deeply to read (docs/RELIABILITY.md)"
    if isinstance(exc, ValueError) and "digits" in str(exc) and "integer" in str(exc):
        return EXIT_USAGE, f"error: {where}an integer has more than {MAX_INT_DIGITS} digits"
    if isinstance(exc, UnicodeError):
        return EXIT_USAGE, f"error: {where}text that is not valid Unicode ({exc})"
    if isinstance(exc, MemoryError):
        return EXIT_USAGE, f"error: {where}input too large to read into memory"
    if isinstance(exc, OSError) and (exc.filename or exc.strerror):
        where = f"{exc.filename}: " if exc.filename else ""
        return EXIT_USAGE, f"error: {where}{exc.strerror or exc}"
    return None
