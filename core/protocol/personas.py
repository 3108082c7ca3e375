"""Loading persona YAML files from ``personas/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import ConfigError, NotFoundError, pydantic_error_to_config_error
from core.model.bounds import MAX_SMALL_FILE_BYTES, load_yaml
from core.model.persona import Persona
from core.paths import PERSONAS_DIR


def _load_file(path: Path) -> Persona:
    # size-capped UTF-8 text, no YAML aliases (a "billion laughs" file), not a directory
    raw: Any = load_yaml(path, max_bytes=MAX_SMALL_FILE_BYTES, what="persona file")
    if not isinstance(raw, dict):
        raise ConfigError("a persona file must be a mapping", file=path)
    data = dict(raw)
    pid = data.setdefault("id", path.stem)
    if pid != path.stem:
        raise ConfigError(
            f"id {pid!r} differs from the file name {path.stem!r}", file=path, field="id"
        )
    try:
        return Persona.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, path) from exc


def load_personas(dir: Path | None = None) -> dict[str, Persona]:  # noqa: A002
    """Load every ``*.yaml`` persona in ``dir`` (default ``personas/``), keyed by id.

    Args:
        dir: Folder with one YAML file per persona.

    Returns:
        Personas sorted by id.

    Raises:
        ConfigError: A file is not valid YAML or fails validation (names file and field).
    """
    folder = dir or PERSONAS_DIR
    if not folder.is_dir():
        raise ConfigError("persona folder not found", file=folder)
    out = {p.stem: _load_file(p) for p in sorted(folder.glob("*.yaml"))}
    if not out:
        raise ConfigError("no persona files (*.yaml)", file=folder)
    return out


def load_persona(persona_id: str, dir: Path | None = None) -> Persona:  # noqa: A002
    """Load one persona by id.

    Raises:
        NotFoundError: No such persona file.
    """
    folder = dir or PERSONAS_DIR
    path = folder / f"{persona_id}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        raise NotFoundError(f"persona {persona_id!r} not found in {folder}; known: {known}")
    return _load_file(path)
