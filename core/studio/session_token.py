"""Signed, expiring sign-in tokens for the studio's password mode (kept in a browser cookie).

A Streamlit session ends on every reload, deep link or new tab, so the sign-in cannot live in
``st.session_state`` alone. After a successful password check the studio issues a token, the
browser keeps it in a cookie, and every new session sends it back (``st.context.cookies``):

``v1.<payload>.<mac>`` where ``payload`` is base64url JSON ``{"u": user, "iat": issued,
"exp": expires, "n": nonce, "cv": credential version}`` and ``mac`` is HMAC-SHA256 over
``v1.<payload>`` and the account's *binding* (a digest of its stored password hash and role);
the credential version is a short digest of that binding. The studio re-verifies the token on
**every page run** (not only when a session starts), so a token

* cannot be forged or edited without the server-side secret;
* stops working when it expires, when the account is removed, when its password or role
  changes (the binding changes), or when it is revoked at sign-out (its nonce is recorded
  until the token would have expired anyway).

Pure standard library; nothing here knows Streamlit. The secret comes from
``DRIFTBENCH_SESSION_SECRET`` or, when that is unset, from a random file created once beside
the store (see :func:`load_secret`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError
from core.model.reading import SMALL, load_json
from core.settings import env_name

VERSION = "v1"
"""Token format version (the first dot-separated part)."""

COOKIE_NAME = "driftbench_session"
"""Name of the browser cookie holding the token."""

DEFAULT_TTL_S = 12 * 3600
"""How long a sign-in lasts by default (12 hours)."""

MIN_SECRET_CHARS = 32
"""A configured secret shorter than this is refused."""

MAX_TOKEN_CHARS = 4096
"""Longer cookie values are rejected without parsing."""

CLOCK_SKEW_S = 60
"""Tokens issued up to this far in the future are still accepted (clock drift)."""


@dataclass(frozen=True)
class Claims:
    """What a valid token says."""

    user: str
    issued_at: int
    expires_at: int
    nonce: str
    credential_version: str = ""


def credential_version(binding: str) -> str:
    """The account's credential version a token carries (changes with the password or role)."""
    return hashlib.sha256(f"cv\x00{binding}".encode()).hexdigest()[:16]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def account_binding(password_hash: str, role: str) -> str:
    """The per-account value mixed into a token's MAC (changes with the password or role)."""
    return hashlib.sha256(f"{role}\x00{password_hash}".encode()).hexdigest()


def _mac(secret: bytes, signed: str, binding: str) -> bytes:
    return hmac.new(secret, f"{signed}\x00{binding}".encode(), hashlib.sha256).digest()


def issue(
    user: str,
    binding: str,
    secret: bytes,
    *,
    ttl_s: int = DEFAULT_TTL_S,
    now: float | None = None,
) -> tuple[str, Claims]:
    """Issue a token for ``user``.

    Args:
        user: The account name.
        binding: :func:`account_binding` of the account.
        secret: The server-side signing secret.
        ttl_s: Lifetime in seconds.
        now: Current time (tests).

    Returns:
        (token, its claims).
    """
    t = int(time.time() if now is None else now)
    claims = Claims(
        user=user,
        issued_at=t,
        expires_at=t + int(ttl_s),
        nonce=secrets.token_hex(12),
        credential_version=credential_version(binding),
    )
    body = {
        "u": claims.user,
        "iat": claims.issued_at,
        "exp": claims.expires_at,
        "n": claims.nonce,
        "cv": claims.credential_version,
    }
    payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
    signed = f"{VERSION}.{payload}"
    return f"{signed}.{_b64(_mac(secret, signed, binding))}", claims


def verify(
    token: str,
    secret: bytes,
    binding_of: Callable[[str], str | None],
    *,
    now: float | None = None,
    revoked: Callable[[str], bool] = lambda _nonce: False,
) -> Claims | None:
    """Check a token; return its claims when it is genuine, current and not revoked.

    Args:
        token: The cookie value.
        secret: The signing secret.
        binding_of: The current binding of an account name (None = no such account).
        now: Current time (tests).
        revoked: Whether a nonce was revoked (signed out).

    Returns:
        The claims, or None for anything else (never raises on bad input).
    """
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != VERSION:
        return None
    try:
        body = json.loads(_unb64(parts[1]))
        mac = _unb64(parts[2])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    user, iat, exp, nonce = body.get("u"), body.get("iat"), body.get("exp"), body.get("n")
    version = body.get("cv")
    if not (
        isinstance(user, str)
        and isinstance(nonce, str)
        and isinstance(iat, int)
        and isinstance(exp, int)
        and isinstance(version, str)
    ):
        return None
    binding = binding_of(user)
    if binding is None or not hmac.compare_digest(version, credential_version(binding)):
        return None  # removed, or its password or role changed since the token was issued
    if not hmac.compare_digest(mac, _mac(secret, f"{parts[0]}.{parts[1]}", binding)):
        return None
    t = time.time() if now is None else now
    if exp <= t or iat > t + CLOCK_SKEW_S or revoked(nonce):
        return None
    return Claims(user=user, issued_at=iat, expires_at=exp, nonce=nonce, credential_version=version)


def load_secret(configured: str | None, path: Path) -> bytes:
    """The signing secret: ``configured`` when given, else the random secret kept at ``path``.

    The file is created on first use (32 random bytes, hex, mode 0600) so sign-ins survive a
    studio restart; a configured secret must be at least :data:`MIN_SECRET_CHARS` long.

    Raises:
        ConfigError: A configured secret that is too short, or an unreadable/empty file.
    """
    if configured is not None and configured.strip():
        value = configured.strip()
        if len(value) < MIN_SECRET_CHARS:
            raise ConfigError(
                f"must be at least {MIN_SECRET_CHARS} characters",
                field=env_name("session_secret"),
            )
        return value.encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ConfigError(f"cannot create the session secret: {exc.strerror}", file=path) from exc
    else:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32))
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("cannot read the session secret", file=path) from exc
    if len(text) < MIN_SECRET_CHARS:
        raise ConfigError("the session secret file is empty or too short", file=path)
    return text.encode()


class Revocations:
    """Nonces of signed-out tokens, kept until those tokens would have expired.

    Persisted to a small JSON file (when a path is given) so a restart does not bring a
    signed-out cookie back to life. Thread-safe.

    Args:
        path: The JSON file (None = memory only).
        clock: Wall-clock seconds (tests).
    """

    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self._path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._until: dict[str, int] = {}
        self._mtime: float | None = None

    def _load(self) -> None:
        if self._path is None:
            return
        try:
            mtime = self._path.stat().st_mtime
        except OSError:
            return
        if mtime == self._mtime:
            return
        try:
            data = load_json(self._path, SMALL)  # bounded: a huge or deep file is ignored
        except (OSError, ValueError, ConfigError):
            return
        if isinstance(data, dict):
            self._until.update(
                {str(k): int(v) for k, v in data.items() if isinstance(v, (int, float))}
            )
        self._mtime = mtime

    def _prune(self) -> None:
        now = self._clock()
        self._until = {k: v for k, v in self._until.items() if v > now}

    def revoke(self, claims: Claims) -> None:
        """Revoke one token (by its nonce) until it expires."""
        with self._lock:
            self._load()
            self._until[claims.nonce] = claims.expires_at
            self._prune()
            if self._path is not None:
                tmp = self._path.with_name(f".{self._path.name}.tmp")
                try:
                    tmp.write_text(json.dumps(self._until), encoding="utf-8")
                    tmp.replace(self._path)
                    self._mtime = self._path.stat().st_mtime
                except OSError:
                    pass  # memory still holds it for this process

    def is_revoked(self, nonce: str) -> bool:
        """Whether ``nonce`` was revoked (and its token has not expired yet)."""
        with self._lock:
            self._load()
            until = self._until.get(nonce)
            return until is not None and until > self._clock()


def set_cookie_script(token: str, max_age_s: int) -> str:
    """JavaScript that stores ``token`` in the session cookie of this origin.

    ``SameSite=Strict`` (never sent on cross-site requests), ``Secure`` when the page is served
    over https. The token alphabet (base64url and dots) needs no quoting.
    """
    if not all(c.isalnum() or c in "-_." for c in token):
        raise ValueError("token has characters a cookie cannot carry")
    return (
        "<script>document.cookie = "
        f"'{COOKIE_NAME}={token}; Path=/; Max-Age={int(max_age_s)}; SameSite=Strict'"
        " + (location.protocol === 'https:' ? '; Secure' : '');</script>"
    )


def clear_cookie_script() -> str:
    """JavaScript that deletes the session cookie."""
    return (
        f"<script>document.cookie = '{COOKIE_NAME}=; Path=/; Max-Age=0; SameSite=Strict';</script>"
    )
