"""Where the studio may read import data from, and how uploads are staged.

Imports from a *server path* are limited to allowed roots (``DRIFTBENCH_IMPORT_ROOTS``, a
``os.pathsep``-separated list; by default the shared host-data folder, the bundled ``data/``
folder and ``$DRIFTBENCH_HOME/uploads``), so a studio user cannot make the server read
arbitrary files. *Uploads* (a single JSON/JSONL file or a ZIP of a data folder) are size-limited
and unpacked under ``$DRIFTBENCH_HOME/uploads/<id>/`` with every member checked to stay inside.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import zipfile
import zlib
from pathlib import Path

from core.errors import ConfigError
from core.paths import DATA_DIR, home_dir, shared_dir
from core.settings import settings

MAX_UPLOAD_BYTES = 200 * 1024 * 1024
"""Largest accepted upload (matches ``server.maxUploadSize`` in .streamlit/config.toml)."""

MAX_UNPACKED_BYTES = 1024 * 1024 * 1024
"""Largest total size a ZIP upload may unpack to."""


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


def stage_upload(name: str, data: bytes) -> Path:
    """Store an uploaded file under ``$DRIFTBENCH_HOME/uploads`` and return its path.

    A ``.zip`` is unpacked into a folder (returned); anything else is written as one file.

    Raises:
        ConfigError: Too large, a corrupt ZIP, or a member escaping the target folder.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        raise ConfigError(f"upload is larger than {MAX_UPLOAD_BYTES // 2**20} MB", file=name)
    digest = hashlib.sha256(data).hexdigest()[:16]
    target = home_dir() / "uploads" / digest
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
        total = sum(info.file_size for info in archive.infolist())
        if total > MAX_UNPACKED_BYTES:
            raise ConfigError("archive unpacks to more than 1 GB", file=name)
        target.mkdir(parents=True, exist_ok=True)
        root = target.resolve()
        for info in archive.infolist():
            dest = (root / info.filename).resolve()
            if root not in dest.parents and dest != root:
                raise ConfigError(
                    "archive member escapes its folder", file=name, field=info.filename
                )
        member = ""
        try:
            for info in archive.infolist():
                member = info.filename
                archive.extract(info, root)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as exc:
            shutil.rmtree(root, ignore_errors=True)  # never leave half an archive behind
            raise ConfigError(f"corrupt archive member: {exc}", file=name, field=member) from exc
    entries = [p for p in root.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else root
