"""Studio accounts: roles, hashed credentials and which pages a role may open.

The studio's auth seam (``pages/common/auth.py``) picks a mode — ``none`` (local single user),
``password`` (this module's credentials file), ``oidc`` (``st.login``) or ``header`` (a trusted
reverse proxy) — and only ever asks this module which role a person has and which pages that
role receives. Passwords are stored as salted PBKDF2-SHA256 hashes, never in clear.

Credentials file (YAML or JSON)::

    users:
      alice: {role: researcher, password: "pbkdf2_sha256$200000$<salt>$<hash>"}
      bob:   {role: annotator,  password: "pbkdf2_sha256$..."}

Create a hash with ``python -m core.studio.auth hash``. The README's "Studio accounts" section
documents the format for people who run a study.

Header mode trusts a reverse proxy, so :func:`header_identity` checks the proxy first: with a
shared secret configured, a request must carry it in :data:`PROXY_SECRET_HEADER`; without one,
identity headers are accepted only from loopback peers and from explicitly trusted proxy
addresses. Anyone else who can reach the port is refused, whatever headers they send.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import ipaddress
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.base import Strict
from core.model.bounds import parse_yaml, read_text
from core.model.reading import SMALL, loads_bounded

Role = Literal["annotator", "researcher", "admin"]

ROLE_RANK: dict[str, int] = {"annotator": 0, "researcher": 1, "admin": 2}
"""Roles in increasing order of privilege."""

PAGE_MIN_ROLE: dict[str, Role] = {
    "home": "annotator",
    "play_user": "annotator",
    "play_agent": "annotator",
    "annotate": "annotator",
    "watch": "researcher",
    "inspect": "researcher",
    "grip": "researcher",
    "construction": "researcher",
    "runs": "researcher",
    "agreement": "researcher",
    "sessions": "researcher",
    "data": "admin",
}
"""The least privileged role that may open each page."""

_ALGO = "pbkdf2_sha256"
_ITERATIONS = 200_000


class Account(Strict):
    """One person who may sign in."""

    role: Role = Field(description="annotator, researcher or admin.")
    password: str = Field(description="PBKDF2 hash as produced by hash_password().")


class Credentials(Strict):
    """The credentials file."""

    users: dict[str, Account] = Field(description="Accounts keyed by user name.")


def hash_password(
    password: str, *, salt: bytes | None = None, iterations: int = _ITERATIONS
) -> str:
    """Return a salted PBKDF2-SHA256 hash string for ``password``."""
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    b64 = base64.b64encode
    return f"{_ALGO}${iterations}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, encoded: str) -> bool:
    """Check ``password`` against a hash from :func:`hash_password` (constant time)."""
    try:
        algo, iterations, salt_b64, digest_b64 = encoded.split("$")
        if algo != _ALGO:
            return False
        salt = base64.b64decode(salt_b64)
        expected = base64.b64decode(digest_b64)
        got = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, int(iterations))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


def load_credentials(path: Path) -> Credentials:
    """Load and validate a credentials file (ConfigError naming file and field)."""
    text = read_text(path, what="credentials file")  # 1 MiB, UTF-8, no NUL bytes
    if path.suffix == ".json":
        data = loads_bounded(text, SMALL, path)
    else:
        data = parse_yaml(text, file=path)  # no anchors or aliases
    try:
        creds = Credentials.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, path) from exc
    for name, account in creds.users.items():
        if not account.password.startswith(_ALGO + "$"):
            raise ConfigError(
                "password must be a pbkdf2_sha256 hash", file=path, field=f"users.{name}.password"
            )
    return creds


def authenticate(creds: Credentials, user: str, password: str) -> Role | None:
    """Return the user's role when the password matches, else None."""
    account = creds.users.get(user)
    if account is None:
        verify_password(password, hash_password("timing-equaliser", salt=b"0" * 16))
        return None
    return account.role if verify_password(password, account.password) else None


def account_binding_of(creds: Credentials | None, user: str) -> str | None:
    """The current binding of ``user`` in ``creds`` (None when the account is gone)."""
    from core.studio.session_token import account_binding

    account = creds.users.get(user) if creds is not None else None
    return account_binding(account.password, account.role) if account is not None else None


def session_account(
    token: str | None,
    creds: Credentials | None,
    secret: bytes,
    *,
    revoked: Callable[[str], bool] = lambda _nonce: False,
    now: float | None = None,
) -> tuple[str, Role] | None:
    """Who a sign-in token belongs to *now*, checked against the current credentials file.

    The studio calls this on every page run of a signed-in session, so a removed account, a
    changed password or role (the token's credential version no longer matches), an expired or
    a revoked token ends the sign-in at once, in every open tab.

    Returns:
        ``(user name, current role)``, or None when the sign-in is over.
    """
    from core.studio.session_token import verify

    if not token or creds is None:
        return None
    claims = verify(token, secret, lambda u: account_binding_of(creds, u), revoked=revoked, now=now)
    if claims is None:
        return None
    return claims.user, creds.users[claims.user].role


def allowed(role: str, page: str) -> bool:
    """Whether ``role`` may open ``page`` (unknown pages are researcher-only)."""
    need = PAGE_MIN_ROLE.get(page, "researcher")
    return ROLE_RANK.get(role, -1) >= ROLE_RANK[need]


def pages_for(role: str) -> list[str]:
    """The page ids a role receives, in navigation order."""
    return [p for p in PAGE_MIN_ROLE if allowed(role, p)]


PROXY_SECRET_HEADER = "X-Driftbench-Proxy-Secret"
"""Header a reverse proxy sends with ``DRIFTBENCH_PROXY_SECRET`` in header mode."""

USER_HEADER = "X-Forwarded-User"
ROLE_HEADER = "X-Forwarded-Role"


@dataclass(frozen=True)
class HeaderDecision:
    """The outcome of :func:`header_identity`: a person, or why the request is refused."""

    name: str | None = None
    role: str | None = None
    refusal: str | None = None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    want = name.lower()
    for key, value in headers.items():
        if key.lower() == want:
            return value
    return None


def peer_is_trusted(peer: str | None, trusted_proxies: Sequence[str]) -> bool:
    """Whether a connection from ``peer`` may carry identity headers (no proxy secret set).

    Loopback (``None``, ``127.0.0.0/8``, ``::1``, ``::ffff:127.0.0.1``) is a proxy on the same
    host; besides it, every address or network (``10.0.0.0/8``) of ``trusted_proxies``.
    """
    if peer is None:
        return True
    try:
        addr = ipaddress.ip_address(peer.strip().strip("[]"))
    except ValueError:
        return peer in trusted_proxies
    mapped = getattr(addr, "ipv4_mapped", None)
    if addr.is_loopback or (mapped is not None and mapped.is_loopback):
        return True
    for entry in trusted_proxies:
        try:
            if addr in ipaddress.ip_network(entry.strip(), strict=False):
                return True
            if mapped is not None and mapped in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:
            if entry.strip() == peer:
                return True
    return False


def header_identity(
    headers: Mapping[str, str],
    peer: str | None,
    *,
    proxy_secret: str | None,
    trusted_proxies: Sequence[str],
    trust_role_header: bool,
    role_of: Callable[[str], str],
) -> HeaderDecision:
    """Decide who a header-mode request is, or refuse it.

    Args:
        headers: The request headers.
        peer: The TCP peer address (None = loopback: ``st.context.ip_address``).
        proxy_secret: The shared secret the proxy must send (None = rely on the peer address).
        trusted_proxies: Non-loopback peer addresses allowed to send identity headers when no
            secret is configured.
        trust_role_header: Honour ``X-Forwarded-Role`` (the proxy strips client copies).
        role_of: The role of a user name from the credentials file (default annotator).

    Returns:
        A decision with ``name``/``role`` set, or ``refusal`` set; a request without a user
        header from a trusted source has neither (nobody signed in yet).
    """
    if proxy_secret:
        sent = _header(headers, PROXY_SECRET_HEADER) or ""
        if not hmac.compare_digest(sent.encode(), proxy_secret.encode()):
            return HeaderDecision(
                refusal="This request did not come through the studio's authenticating proxy."
            )
    elif not peer_is_trusted(peer, trusted_proxies):
        return HeaderDecision(
            refusal=(
                "Identity headers are accepted only from the authenticating proxy; this "
                "connection does not come from it."
            )
        )
    name = (_header(headers, USER_HEADER) or "").strip()
    if not name:
        return HeaderDecision()
    claimed = _header(headers, ROLE_HEADER) if trust_role_header else None
    role = claimed if claimed in ROLE_RANK else role_of(name)
    return HeaderDecision(name=name, role=role)


def _main(argv: list[str]) -> int:
    if argv[:1] != ["hash"]:
        print("usage: python -m core.studio.auth hash", file=sys.stderr)
        return 2
    print(hash_password(getpass.getpass("password: ")))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
