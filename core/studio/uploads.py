"""Where the studio may read import data from, and how uploads are staged.

Imports from a *server path* are limited to allowed roots (``DRIFTBENCH_IMPORT_ROOTS``, a
``os.pathsep``-separated list; by default the shared host-data folder, the bundled ``data/``
folder and ``$DRIFTBENCH_HOME/uploads``), so a studio user cannot make the server read
arbitrary files. *Uploads* (a single JSON/JSONL file or a ZIP of a data folder) are size-limited
and unpacked under ``$DRIFTBENCH_HOME/uploads/<id>/`` with every member checked to stay inside.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import secrets
import shutil
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from core.errors import ConfigError
from core.paths import DATA_DIR, home_dir, shared_dir
from core.settings import settings

MAX_UPLOAD_BYTES = 200 * 1024 * 1024
"""Largest accepted upload (matches ``server.maxUploadSize`` in .streamlit/config.toml)."""

MAX_UNPACKED_BYTES = 1024 * 1024 * 1024
"""Largest total size a ZIP upload may unpack to (counted while unpacking, not declared)."""

MAX_ARCHIVE_MEMBERS = 10_000
"""Most members a ZIP upload may hold (a WebShop or τ² folder has a handful)."""

STAGED_MAX_AGE_S = 24 * 3600.0
"""Staged uploads older than this are removed (an import removes its own at once)."""


def allowed_roots() -> list[Path]:
    """Return the folders server-path imports may read from."""
    configured = settings().import_roots
    if configured:
        return list(configured)
    return [shared_dir().resolve(), DATA_DIR.resolve(), (home_dir() / "uploads").resolve()]


def resolve_import_path(raw: str | Path) -> Path:
    """Resolve a user-given server path, refusing anything outside :func:`allowed_roots`.

    Raises:
        ConfigError: The path does not exist or lies outside the allowed roots.
    """
    path = Path(raw).expanduser().resolve()
    roots = allowed_roots()
    if not any(path == r or r in path.parents for r in roots):
        raise ConfigError(
            "outside the allowed import folders (" + ", ".join(str(r) for r in roots) + ")",
            file=path,
        )
    if not path.exists():
        raise ConfigError("no such file or directory", file=path)
    return path


def uploads_dir() -> Path:
    """Where uploads are staged (``$DRIFTBENCH_HOME/uploads``)."""
    return home_dir() / "uploads"


def clean_stale_uploads(max_age_s: float = STAGED_MAX_AGE_S, now: float | None = None) -> int:
    """Remove staged uploads older than ``max_age_s`` (a day by default); return how many.

    Called whenever something is staged, so abandoned uploads never pile up.
    """
    root = uploads_dir()
    if not root.is_dir():
        return 0
    t = time.time() if now is None else now
    removed = 0
    for entry in root.iterdir():
        try:
            age = t - entry.lstat().st_mtime
        except OSError:
            continue
        if age <= max_age_s:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed += 1
    return removed


def discard_upload(path: Path) -> None:
    """Remove a staged upload after its import (its own folder under the uploads folder)."""
    root = uploads_dir().resolve()
    target = path.resolve()
    if root not in target.parents:
        return  # not a staged upload (a server path): never removed
    top = root / target.relative_to(root).parts[0]
    if top.is_dir():
        shutil.rmtree(top, ignore_errors=True)
    else:
        top.unlink(missing_ok=True)


@contextlib.contextmanager
def staged(name: str, data: bytes) -> Iterator[Path]:
    """Stage an upload for the length of an import, then remove it (whatever happens)."""
    path = stage_upload(name, data)
    try:
        yield path
    finally:
        discard_upload(path)


def stage_upload(name: str, data: bytes) -> Path:
    """Store an uploaded file under ``$DRIFTBENCH_HOME/uploads`` and return its path.

    A ``.zip`` is unpacked into a folder (returned); anything else is written as one file.

    Raises:
        ConfigError: Too large, a corrupt ZIP, or a member escaping the target folder.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        raise ConfigError(f"upload is larger than {MAX_UPLOAD_BYTES // 2**20} MB", file=name)
    clean_stale_uploads()
    digest = hashlib.sha256(data).hexdigest()[:16]
    target = uploads_dir() / f"{digest}-{secrets.token_hex(4)}"
    safe_name = Path(name.replace("\\", "/")).name.strip()
    if safe_name in ("", ".", ".."):
        safe_name = "upload"
    if not safe_name.lower().endswith(".zip"):
        target.mkdir(parents=True, exist_ok=True)
        out = target / safe_name
        out.write_bytes(data)
        return out
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ConfigError("not a valid ZIP archive", file=name) from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ARCHIVE_MEMBERS:
            raise ConfigError(
                f"archive has {len(infos):,} members; the limit is {MAX_ARCHIVE_MEMBERS:,}",
                file=name,
            )
        total = sum(info.file_size for info in infos)
        if total > MAX_UNPACKED_BYTES:
            raise ConfigError("archive unpacks to more than 1 GB", file=name)
        target.mkdir(parents=True, exist_ok=True)
        root = target.resolve()
        for info in infos:
            dest = (root / info.filename).resolve()
            if root not in dest.parents and dest != root:
                raise ConfigError(
                    "archive member escapes its folder", file=name, field=info.filename
                )
        member = ""
        try:
            written = 0
            for info in infos:
                member = info.filename
                written += _extract(archive, info, root, MAX_UNPACKED_BYTES - written, name)
        except ConfigError:
            shutil.rmtree(root, ignore_errors=True)
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as exc:
            shutil.rmtree(root, ignore_errors=True)  # never leave half an archive behind
            raise ConfigError(f"corrupt archive member: {exc}", file=name, field=member) from exc
    entries = [p for p in root.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else root


def _extract(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path, budget: int, name: str
) -> int:
    """Unpack one member, counting the bytes really written (a lying header cannot pass).

    Returns:
        The bytes written.

    Raises:
        ConfigError: The archive would unpack to more than :data:`MAX_UNPACKED_BYTES`.
    """
    dest = (root / info.filename).resolve()
    if info.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        return 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with archive.open(info) as src, dest.open("wb") as out:
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                return written
            written += len(chunk)
            if written > budget:
                raise ConfigError(
                    f"archive unpacks to more than {MAX_UNPACKED_BYTES // 2**30} GB",
                    file=name,
                    field=info.filename,
                )
            out.write(chunk)
