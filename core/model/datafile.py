"""Reading a project data file (YAML under ``data/``) into its validated model.

Every table of words, templates and phrasings lives in a data file; this is the one reader, so
a missing file, broken YAML or a wrong field fails the same way everywhere: a
:class:`~core.errors.ConfigError` naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.bounds import load_yaml

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: Path) -> Any:
    """The parsed YAML of ``path`` (size-capped, no anchors or aliases: :func:`load_yaml`).

    Raises:
        ConfigError: The file is missing or not valid YAML.
    """
    if not path.is_file():
        raise ConfigError("file is missing", file=path)
    return load_yaml(path)


def read_yaml_model(path: Path, model: type[M]) -> M:
    """``path`` parsed and validated as ``model``.

    Raises:
        ConfigError: The file is missing, not valid YAML, or a field is wrong (named).
    """
    raw = read_yaml(path)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, path) from exc
