"""Signed session tokens: genuine, expiring, bound to the account, revocable, never crash."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ConfigError
from core.studio import session_token as tok

SECRET = b"s" * 40
BINDING = tok.account_binding("pbkdf2_sha256$1$salt$hash", "researcher")


def _bind(name: str) -> str | None:
    return BINDING if name == "res" else None


def test_a_token_verifies_until_it_expires() -> None:
    token, claims = tok.issue("res", BINDING, SECRET, ttl_s=600, now=1000)
    assert token.startswith("v1.") and token.count(".") == 2
    got = tok.verify(token, SECRET, _bind, now=1500)
    assert got == claims and got.user == "res" and got.expires_at == 1600
    assert tok.verify(token, SECRET, _bind, now=1600) is None  # expired
    assert tok.verify(token, SECRET, _bind, now=1000 - 3600) is None  # issued in the future


def test_an_edited_or_foreign_token_is_refused() -> None:
    token, _ = tok.issue("res", BINDING, SECRET, now=1000)
    head, payload, mac = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["exp"] += 10**6
    longer = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    assert tok.verify(f"{head}.{longer}.{mac}", SECRET, _bind, now=1001) is None
    assert tok.verify(token, b"x" * 40, _bind, now=1001) is None  # another server's secret
    assert tok.verify("v2." + token[3:], SECRET, _bind, now=1001) is None


def test_a_password_or_role_change_and_a_removed_account_end_the_session() -> None:
    token, _ = tok.issue("res", BINDING, SECRET, now=1000)
    changed = tok.account_binding("pbkdf2_sha256$1$salt$other", "researcher")
    assert tok.verify(token, SECRET, lambda n: changed, now=1001) is None
    demoted = tok.account_binding("pbkdf2_sha256$1$salt$hash", "annotator")
    assert tok.verify(token, SECRET, lambda n: demoted, now=1001) is None
    assert tok.verify(token, SECRET, lambda n: None, now=1001) is None


def test_revocation_survives_a_restart(tmp_path: Path) -> None:
    token, claims = tok.issue("res", BINDING, SECRET, ttl_s=600, now=1000)
    clock = [1100.0]
    first = tok.Revocations(tmp_path / "revoked.json", clock=lambda: clock[0])
    first.revoke(claims)
    again = tok.Revocations(tmp_path / "revoked.json", clock=lambda: clock[0])
    assert again.is_revoked(claims.nonce)
    assert tok.verify(token, SECRET, _bind, now=1100, revoked=again.is_revoked) is None
    clock[0] = 2000.0  # past the token's expiry the record is dropped
    assert not again.is_revoked(claims.nonce)


@given(st.text(max_size=300))
def test_any_cookie_value_is_refused_without_raising(value: str) -> None:
    assert tok.verify(value, SECRET, _bind, now=1000) is None


def test_secret_from_env_or_a_private_file(tmp_path: Path) -> None:
    assert tok.load_secret("k" * 32, tmp_path / "s") == b"k" * 32
    with pytest.raises(ConfigError, match="DRIFTBENCH_SESSION_SECRET"):
        tok.load_secret("short", tmp_path / "s")
    path = tmp_path / "home" / "session_secret"
    made = tok.load_secret(None, path)
    assert len(made) >= tok.MIN_SECRET_CHARS and path.stat().st_mode & 0o777 == 0o600
    assert tok.load_secret(None, path) == made  # kept across restarts


def test_cookie_scripts_are_attribute_safe() -> None:
    token, _ = tok.issue("res", BINDING, SECRET, now=1000)
    script = tok.set_cookie_script(token, 3600)
    assert f"{tok.COOKIE_NAME}={token}" in script and "SameSite=Strict" in script
    assert "Max-Age=0" in tok.clear_cookie_script()
    with pytest.raises(ValueError):
        tok.set_cookie_script("a';alert(1);'", 10)
