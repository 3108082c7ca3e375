"""Where things live. Paths resolve from the project root or environment variables, never the cwd.

Environment variables:
    DRIFTBENCH_HOME: directory holding the store (``driftbench.db``) and the LLM cache.
        Defaults to ``<project>/var``.
    DRIFTBENCH_SHARED: directory with third-party host data (``hostdata/``,
        ``driftbench_release/``). Defaults to ``<project>/../shared``. Only tests and importers
        read it; nothing from it is committed.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The repository root (the folder holding ``pyproject.toml``)."""

DATA_DIR = PROJECT_ROOT / "data"
"""Bundled, project-authored worlds, graphs, samples and prompt templates."""

PERSONAS_DIR = PROJECT_ROOT / "personas"
"""Persona definitions (YAML), one file per persona."""

PROMPTS_DIR = DATA_DIR / "prompts"
"""Prompt templates as data files."""


def home_dir() -> Path:
    """Return the directory that holds the store, creating nothing."""
    env = os.environ.get("DRIFTBENCH_HOME")
    return Path(env).expanduser().resolve() if env else PROJECT_ROOT / "var"


def default_store_path() -> Path:
    """Return the default SQLite store path (``$DRIFTBENCH_HOME/driftbench.db``)."""
    return home_dir() / "driftbench.db"


def shared_dir() -> Path:
    """Return the folder with third-party host data (may not exist)."""
    env = os.environ.get("DRIFTBENCH_SHARED")
    return Path(env).expanduser().resolve() if env else PROJECT_ROOT.parent / "shared"
