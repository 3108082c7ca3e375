"""Where things live. Paths resolve from the project root or the settings, never the cwd.

The project runs from a source checkout: the bundled ``data/``, ``personas/``, the studio's
``pages/`` and ``app.py`` are read from :data:`PROJECT_ROOT` (see the README's "Install").

Settings (:mod:`core.settings`):
    DRIFTBENCH_HOME: directory holding the store (``driftbench.db``) and the LLM cache.
        Defaults to ``<project>/var``.
    DRIFTBENCH_SHARED: directory with third-party host data (``hostdata/``,
        ``driftbench_release/``). Defaults to ``<project>/../shared``. Only tests and importers
        read it; nothing from it is committed.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import ConfigError
from core.settings import settings

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The repository root (the folder holding ``pyproject.toml``)."""

DATA_DIR = PROJECT_ROOT / "data"
"""Bundled, project-authored worlds, graphs, samples and prompt templates."""

PERSONAS_DIR = PROJECT_ROOT / "personas"
"""Persona definitions (YAML), one file per persona."""

PROMPTS_DIR = DATA_DIR / "prompts"
"""Prompt templates as data files."""


CHECKOUT_PARTS: tuple[str, ...] = ("data", "personas", "pages", "app.py")
"""What the project reads from its source checkout beside ``core/`` (the wheel carries none)."""


def require_checkout(root: Path = PROJECT_ROOT) -> None:
    """Check that ``root`` is a source checkout holding the bundled data and the studio.

    The project runs from a clone of its repository (``make setup`` installs it editable); a
    wheel or sdist installed elsewhere has only the ``core`` package, so every command would
    fail later on a missing file. This says so up front.

    Raises:
        ConfigError: Naming the folder and what is missing there.
    """
    missing = [part for part in CHECKOUT_PARTS if not (root / part).exists()]
    if missing:
        raise ConfigError(
            f"not a Drift-Bench++ source checkout ({', '.join(missing)} missing): the project "
            "runs from a clone of its repository installed with 'pip install -e .' (README, "
            "Install)",
            file=root,
        )


def home_dir() -> Path:
    """Return the directory that holds the store, creating nothing."""
    return settings().home or PROJECT_ROOT / "var"


def default_store_path() -> Path:
    """Return the default SQLite store path (``$DRIFTBENCH_HOME/driftbench.db``)."""
    return home_dir() / "driftbench.db"


def shared_dir() -> Path:
    """Return the folder with third-party host data (may not exist)."""
    return settings().shared or PROJECT_ROOT.parent / "shared"
