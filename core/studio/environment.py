"""The ``DRIFTBENCH_*`` settings as the studio's pages and ``app.py`` read them.

Pages import only :mod:`core.studio`, :mod:`core.model`, :mod:`core.errors` and
:mod:`core.paths`; this module hands them the one settings model of :mod:`core.settings` (auth
mode, credentials file, whether the proxy's role header is trusted, the play-as-user model).
"""

from __future__ import annotations

from core.errors import ConfigError
from core.settings import ENV_NAMES, Settings, env_name, settings


def check_settings() -> str | None:
    """Validate the environment once, e.g. before the studio server starts.

    Returns:
        None when every variable is valid, else the one-line error naming the variable.
    """
    try:
        settings()
    except ConfigError as exc:
        return str(exc)
    return None


__all__ = ["ENV_NAMES", "Settings", "check_settings", "env_name", "settings"]
