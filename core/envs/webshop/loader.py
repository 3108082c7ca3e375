"""Read and validate shop-world payloads (bundled file or importer output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.envs.webshop.models import WorldPayload
from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.reading import DOCUMENT, load_json
from core.paths import DATA_DIR

BUNDLED_DIR = DATA_DIR / "webshop"
"""Where the bundled, project-authored catalogue lives."""

WORLD_FILES = ("world.json.gz", "world.json")
"""File names a world folder may hold, in order of preference."""


def read_json_file(path: Path) -> Any:
    """Read JSON (optionally gzip) through the bounded reader; ConfigError names the file."""
    return load_json(path, DOCUMENT)


def validate_payload(data: Any, file: str | Path) -> WorldPayload:
    """Validate a payload dict and its cross-references.

    Args:
        data: The decoded JSON.
        file: Name used in error messages.

    Raises:
        ConfigError: naming ``file`` and the offending field (e.g. ``products.3.price``).
    """
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object with 'products' and 'goals'", file=file)
    try:
        payload = WorldPayload.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, file) from exc
    seen: set[str] = set()
    for i, p in enumerate(payload.products):
        if p.asin in seen:
            raise ConfigError(f"duplicate asin {p.asin!r}", file=file, field=f"products.{i}.asin")
        seen.add(p.asin)
    ids: set[str] = set()
    for i, g in enumerate(payload.goals):
        if g.goal_id in ids:
            raise ConfigError(
                f"duplicate goal id {g.goal_id!r}", file=file, field=f"goals.{i}.goal_id"
            )
        ids.add(g.goal_id)
        if g.asin not in seen:
            raise ConfigError(
                f"goal targets unknown asin {g.asin!r}", file=file, field=f"goals.{i}.asin"
            )
    return payload


def find_world_file(data_dir: Path) -> Path:
    """Return the world file inside ``data_dir`` (ConfigError if there is none)."""
    for name in WORLD_FILES:
        candidate = data_dir / name
        if candidate.is_file():
            return candidate
    raise ConfigError(f"no {' or '.join(WORLD_FILES)} in this folder", file=data_dir)


def load_payload_dir(data_dir: Path) -> WorldPayload:
    """Load and validate the world file of ``data_dir``."""
    path = find_world_file(data_dir)
    return validate_payload(read_json_file(path), path)
