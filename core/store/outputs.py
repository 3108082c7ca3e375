"""Where a command may write: the one guard every ``--out`` goes through.

A command's output never lands on something it does not own. :func:`check_output_file` (one
file: ``export --out``, …) and :func:`check_output_dir` (a folder: ``env catalogue --out``, …)
refuse, with one :class:`~core.errors.ConfigError` line naming the flag:

* the store, its ``-wal``/``-shm``/``-journal`` files, and any other SQLite database (by path,
  by the file's identity — a hard link or symlink to the store is the store — and by the
  file's first bytes), whatever ``--force`` says;
* anything inside ``$DRIFTBENCH_HOME`` (the store, the response cache, the session secret,
  uploads) and the store's own lock folder;
* anything inside an input folder: the bundled ``data/`` and ``personas/``, the shared host
  data, the studio's import roots, and every folder a world in the store was imported from;
* an existing file unless ``force`` (a folder output must be new or empty).

:func:`write_atomically` then writes through a temporary file in the same folder and renames
it into place, so a failed export leaves no half file and a hard link elsewhere is never
written through.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from core.errors import ConfigError
from core.paths import DATA_DIR, PERSONAS_DIR, default_store_path, home_dir, shared_dir
from core.settings import settings

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The store file and the files SQLite keeps beside it."""

KERNEL_ROOTS = (Path("/proc"), Path("/sys"))
"""Kernel interfaces, never output files."""


def _resolved(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser())).resolve()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def store_files(store_path: Path | None) -> list[Path]:
    """The store and its SQLite companions (resolved), for the given and the default store."""
    out: list[Path] = []
    for base in {p for p in (store_path, default_store_path()) if p is not None}:
        b = _resolved(base)
        out.extend(Path(str(b) + suffix) for suffix in STORE_SUFFIXES)
        out.append(b.parent / ".driftbench-locks")
    return out


def input_folders(extra: Iterable[Path | str] = ()) -> list[Path]:
    """Folders that hold inputs the project reads (resolved): never an output place."""
    cfg = settings()
    folders: list[Path] = [DATA_DIR, PERSONAS_DIR, shared_dir(), *cfg.import_roots]
    folders.extend(Path(p) for p in extra if str(p) and str(p) != "bundled")
    return [_resolved(f) for f in folders]


def imported_from(store: object | None) -> list[str]:
    """The folders the store's worlds were imported from (``worlds.source``)."""
    if store is None:
        return []
    try:
        rows = store.conn.execute("SELECT DISTINCT source FROM worlds").fetchall()  # type: ignore[attr-defined]
    except (AttributeError, sqlite3.Error):
        return []
    return [str(r[0]) for r in rows if r[0] and str(r[0]) not in ("bundled", "mock")]


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _owned_elsewhere(
    target: Path, *, store_path: Path | None, inputs: Iterable[Path | str], field: str, shown: str
) -> None:
    """Refuse ``target`` when it is, or is inside, something a command never writes over."""
    if any(_inside(target, r) for r in KERNEL_ROOTS):
        raise ConfigError(f"{shown} is a kernel file, not an output file", field=field)
    for f in store_files(store_path):
        if target == f or _inside(target, f) or (f.exists() and _same_file(target, f)):
            raise ConfigError(
                f"{shown} is the store ({f.name}); nothing is ever written over it", field=field
            )
    home = _resolved(home_dir())
    if _inside(target, home):
        raise ConfigError(
            f"{shown} is inside DRIFTBENCH_HOME ({home}), which holds the store; "
            "write somewhere else",
            field=field,
        )
    for folder in input_folders(inputs):
        if _inside(target, folder):
            raise ConfigError(
                f"{shown} is inside the input folder {folder}; write somewhere else", field=field
            )


def check_output_file(
    path: Path | str,
    *,
    store_path: Path | None = None,
    force: bool = False,
    inputs: Iterable[Path | str] = (),
    field: str = "--out",
) -> Path:
    """The checked output file ``path`` (as given), or a one-line refusal.

    Args:
        path: Where the command wants to write.
        store_path: The store the command uses (``--store``; the default store is always
            protected too).
        force: Replace an existing ordinary file (never the store or another database).
        inputs: Further input folders of this command (``--from`` …).
        field: The flag named in the error.

    Raises:
        ConfigError: Naming ``field`` and why the place is refused.
    """
    given = Path(path).expanduser()
    shown = str(path)
    target = _resolved(given)
    if target.is_dir():
        raise ConfigError(f"{shown} is a directory; give a file name", field=field)
    _owned_elsewhere(target, store_path=store_path, inputs=inputs, field=field, shown=shown)
    if not target.parent.is_dir():
        raise ConfigError(f"{shown}: folder {given.parent} does not exist", field=field)
    if target.exists() or given.is_symlink():
        if _is_sqlite(target):
            raise ConfigError(
                f"{shown} is a SQLite database; an output never replaces one", field=field
            )
        if not force:
            raise ConfigError(f"{shown} already exists; give --force to replace it", field=field)
        mode = target.stat().st_mode if target.exists() else 0
        if target.exists() and not stat.S_ISREG(mode) and not stat.S_ISCHR(mode):
            raise ConfigError(f"{shown} is not an ordinary file", field=field)
    return given


def check_output_dir(
    path: Path | str,
    *,
    store_path: Path | None = None,
    inputs: Iterable[Path | str] = (),
    field: str = "--out",
    reuse_marker: str | None = None,
) -> Path:
    """The checked output folder ``path``: new, or existing and empty.

    Args:
        path: The folder the command wants to write into.
        store_path: The store the command uses (always protected).
        inputs: Further input folders of this command.
        field: The flag named in the error.
        reuse_marker: A file name that marks a folder this command wrote before (a resumable
            report folder): a non-empty folder holding it may be written again.

    Raises:
        ConfigError: Naming ``field``: a file, a folder with anything in it, or a protected
            place (the store, ``$DRIFTBENCH_HOME``, an input folder).
    """
    given = Path(path).expanduser()
    shown = str(path)
    target = _resolved(given)
    _owned_elsewhere(target, store_path=store_path, inputs=inputs, field=field, shown=shown)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{shown} is a file, not a folder", field=field)
    if target.is_dir():
        try:
            first = next(iter(target.iterdir()), None)
        except OSError as exc:
            raise ConfigError(
                f"{shown}: cannot list the folder ({exc.strerror})", field=field
            ) from None
        if first is not None and not (reuse_marker and (target / reuse_marker).is_file()):
            raise ConfigError(
                f"{shown} is not empty (it holds {first.name}); give a new or empty folder",
                field=field,
            )
    return given


@contextlib.contextmanager
def write_atomically(path: Path, mode: str = "w") -> Iterator[IO[str]]:
    """Write ``path`` through a temporary file in its folder, renamed into place on success.

    A failure removes the temporary file and leaves ``path`` as it was. A character device
    (``/dev/stdout``, ``/dev/null``) is written directly.
    """
    if path.exists() and stat.S_ISCHR(path.stat().st_mode):
        with path.open(mode, encoding="utf-8") as fh:
            yield fh
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with tmp.open(mode, encoding="utf-8", newline="") as fh:
            yield fh
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
