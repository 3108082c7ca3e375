"""The auth seam: who is using the studio and which role they have.

Modes (``DRIFTBENCH_AUTH``): ``none`` (local single user, researcher role; the default).
Further modes (password file, OIDC via ``st.login``, trusted reverse-proxy header) plug in here
and only change what :func:`current_user` returns; pages read the role, never the mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

Role = Literal["annotator", "researcher", "admin"]


@dataclass(frozen=True)
class User:
    """The signed-in person."""

    name: str
    role: Role


def auth_mode() -> str:
    """Return the configured auth mode."""
    return os.environ.get("DRIFTBENCH_AUTH", "none")


def current_user() -> User:
    """Return the current user for the configured mode."""
    return User(name=os.environ.get("USER", "local"), role="admin")
