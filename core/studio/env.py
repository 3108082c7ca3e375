"""The ``DRIFTBENCH_*`` settings as the studio's pages and ``app.py`` read them.

Every variable is read and validated by :mod:`core.settings` (documented in the README's
Configuration table). Pages import only :mod:`core.studio`, :mod:`core.model`, :mod:`core.errors`
and :mod:`core.paths`, so this module hands them that one model, checks it before the server
starts, and derives what the auth seam and the play pages need from it (:class:`StudioEnv`:
where the generated session secret lives, the sign-in lifetime in seconds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from core.errors import ConfigError
from core.paths import home_dir
from core.settings import ENV_NAMES, Settings, env_name, settings, settings_from

__all__ = [
    "AUTH_MODES",
    "ENV_NAMES",
    "Settings",
    "StudioEnv",
    "check_settings",
    "env_name",
    "settings",
    "studio_env",
]

AUTH_MODES: tuple[str, ...] = get_args(Settings.model_fields["auth"].annotation)
"""Accepted values of ``DRIFTBENCH_AUTH`` (the settings model's)."""


@dataclass(frozen=True)
class StudioEnv:
    """The parsed studio settings.

    Attributes:
        auth: ``DRIFTBENCH_AUTH`` — none, password, oidc or header.
        credentials: ``DRIFTBENCH_CREDENTIALS`` — the hashed accounts file (or None).
        trust_role_header: ``DRIFTBENCH_TRUST_ROLE_HEADER`` — header mode honours
            ``X-Forwarded-Role`` (only when the proxy strips client copies of it).
        session_secret: ``DRIFTBENCH_SESSION_SECRET`` — signs sign-in cookies (None = a random
            secret kept in ``session_secret_file``).
        session_secret_file: Where the generated secret lives (beside the store).
        session_hours: ``DRIFTBENCH_SESSION_HOURS`` — how long a password sign-in lasts.
        proxy_secret: ``DRIFTBENCH_PROXY_SECRET`` — header mode accepts identity headers only
            from requests that carry it in ``X-Driftbench-Proxy-Secret``.
        trusted_proxies: ``DRIFTBENCH_TRUSTED_PROXIES`` — without a proxy secret, header mode
            accepts identity headers from loopback and from these addresses only.
        play_expiry_hours: ``DRIFTBENCH_PLAY_EXPIRY_HOURS`` — unfinished play episodes older
            than this stop being offered for resuming (0 = never expire).
    """

    auth: str = "none"
    credentials: Path | None = None
    trust_role_header: bool = False
    session_secret: str | None = None
    session_secret_file: Path = field(default_factory=lambda: home_dir() / "session_secret")
    session_hours: float = 12.0
    proxy_secret: str | None = None
    trusted_proxies: tuple[str, ...] = ()
    play_expiry_hours: float = 24.0

    @property
    def session_ttl_s(self) -> int:
        """The sign-in lifetime in seconds."""
        return max(60, int(self.session_hours * 3600))

    @property
    def revocations_file(self) -> Path:
        """Where signed-out session nonces are kept."""
        return self.session_secret_file.with_name("session_revoked.json")


def _view(s: Settings) -> StudioEnv:
    return StudioEnv(
        auth=s.auth,
        credentials=s.credentials,
        trust_role_header=s.trust_role_header,
        session_secret=s.session_secret,
        session_hours=s.session_hours,
        proxy_secret=s.proxy_secret,
        trusted_proxies=s.trusted_proxies,
        play_expiry_hours=s.play_expiry_hours,
    )


def studio_env(env: Mapping[str, str] | None = None) -> StudioEnv:
    """The studio settings of ``env`` (default: the process environment, via the settings).

    Raises:
        ConfigError: A value that does not parse, naming the variable.
    """
    return _view(settings() if env is None else settings_from(env))


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
