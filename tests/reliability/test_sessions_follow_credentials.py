"""Sessions follow the credentials file (issue 32, item 3), and header mode trusts its proxy.

Before: after an account was demoted (researcher → annotator) or its password changed, its
open tab still opened Data, Inspect and Runs with the old role; the Data page was open to
researchers; a same-host proxy adding ``X-Forwarded-For`` was refused in header mode.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.studio.auth import (
    PAGE_MIN_ROLE,
    Credentials,
    account_binding_of,
    hash_password,
    header_identity,
    peer_is_trusted,
    session_account,
)
from core.studio.session_token import issue

APP = str(PROJECT_ROOT / "app.py")
SECRET = b"s" * 40


def _creds(users: dict[str, tuple[str, str]]) -> Credentials:
    return Credentials.model_validate(
        {"users": {u: {"role": r, "password": p} for u, (r, p) in users.items()}}
    )


def test_a_token_ends_when_the_role_or_password_changes_or_the_account_goes() -> None:
    pw = hash_password("pw", iterations=1000)
    creds = _creds({"res": ("researcher", pw)})
    token, claims = issue("res", account_binding_of(creds, "res") or "", SECRET)
    assert claims.credential_version
    assert session_account(token, creds, SECRET) == ("res", "researcher")
    demoted = _creds({"res": ("annotator", pw)})
    assert session_account(token, demoted, SECRET) is None
    new_pw = _creds({"res": ("researcher", hash_password("other", iterations=1000))})
    assert session_account(token, new_pw, SECRET) is None
    assert session_account(token, _creds({}), SECRET) is None
    assert session_account(token, None, SECRET) is None
    assert session_account(token, creds, SECRET, revoked=lambda _n: True) is None


def test_the_data_page_is_admin_only() -> None:
    assert PAGE_MIN_ROLE["data"] == "admin"


# -- the studio: the next page run ends a changed sign-in --------------------------------------
@pytest.fixture
def password_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import streamlit as st

    creds = tmp_path / "users.json"
    _write(creds, {"res": "researcher", "adm": "admin"})
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFTBENCH_AUTH", "password")
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))
    st.cache_resource.clear()
    return creds


def _write(path: Path, roles: dict[str, str], pw: dict[str, str] | None = None) -> None:
    pw = pw or {}
    users = {
        u: {"role": r, "password": hash_password(pw.get(u, f"pw-{u}"), salt=b"0" * 16)}
        for u, r in roles.items()
    }
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(json.dumps({"users": users}))
    os.utime(path, ns=(before + 10**9, before + 10**9))  # a visible change, however fast


def _sign_in(user: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.text_input(key="login-name").input(user)
    at.text_input(key="login-password").input(f"pw-{user}")
    at.button[0].click().run()
    assert not at.exception
    assert at.session_state["auth_user"]["name"] == user
    return at


def _page(at: AppTest, page: str) -> AppTest:
    return at.switch_page(str(PROJECT_ROOT / "pages" / f"{page}.py")).run()


def _gate() -> None:
    """A page run of a tab where ``res`` signed in once: what ``current_user`` says now."""
    import streamlit as st

    from pages.common.auth import _signed_in, current_user

    if "signed" not in st.session_state:
        _signed_in("res", "researcher")
        st.session_state["signed"] = True
    user = current_user()
    st.text(f"user={user.name if user else None} role={user.role if user else None}")


@pytest.mark.parametrize(
    "change",
    [
        lambda p: _write(p, {"res": "annotator", "adm": "admin"}),
        lambda p: _write(p, {"res": "researcher", "adm": "admin"}, {"res": "new-password"}),
        lambda p: _write(p, {"adm": "admin"}),
    ],
    ids=["demoted", "password-changed", "removed"],
)
def test_a_changed_account_is_signed_out_at_the_next_page_run(
    password_mode: Path, change: Any
) -> None:
    at = AppTest.from_function(_gate, default_timeout=60).run()
    assert at.text[0].value == "user=res role=researcher"
    at.run()
    assert at.text[0].value == "user=res role=researcher"  # still signed in while unchanged
    change(password_mode)
    at.run()  # the open tab's next page run
    assert at.text[0].value == "user=None role=None", at.text[0].value
    assert "auth_user" not in at.session_state and "auth_token" not in at.session_state
    at.run()
    assert at.text[0].value == "user=None role=None"  # and it stays signed out


def test_an_unchanged_account_stays_signed_in(password_mode: Path) -> None:
    at = AppTest.from_function(_gate, default_timeout=60).run()
    _write(password_mode, {"res": "researcher", "adm": "admin"})  # rewritten, same values
    at.run()
    assert at.text[0].value == "user=res role=researcher"


def test_researchers_cannot_open_data_admins_can(password_mode: Path) -> None:
    at = _sign_in("res")
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        _page(at, "data")
    adm = _sign_in("adm")
    _page(adm, "data")
    assert not adm.exception


# -- header mode behind a proxy on the same host ---------------------------------------------------
def _peer_after_uvicorn(headers: list[tuple[bytes, bytes]]) -> str | None:
    """What ``st.context.ip_address`` reports for a loopback connection carrying ``headers``."""
    from uvicorn.config import Config
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen["client"] = scope["client"]

    cfg = Config(app)  # reads FORWARDED_ALLOW_IPS as the studio's server does
    mw = ProxyHeadersMiddleware(app, trusted_hosts=cfg.forwarded_allow_ips)
    scope = {"type": "http", "client": ("127.0.0.1", 51000), "headers": headers}
    asyncio.run(mw(scope, None, None))  # type: ignore[arg-type]
    host = seen["client"][0]
    return None if host in ("127.0.0.1", "::1") else host


def test_a_same_host_proxy_adding_x_forwarded_for_is_trusted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pages.common.launch import server_environment

    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    server_environment()  # what `driftbench app` / `make run` do before the server starts
    assert os.environ["FORWARDED_ALLOW_IPS"] == ""
    headers = [(b"x-forwarded-for", b"203.0.113.9"), (b"x-forwarded-user", b"alice")]
    peer = _peer_after_uvicorn(headers)
    decision = header_identity(
        {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-User": "alice"},
        peer,
        proxy_secret=None,
        trusted_proxies=(),
        trust_role_header=False,
        role_of=lambda _n: "annotator",
    )
    assert decision.refusal is None and decision.name == "alice", decision


def test_a_remote_client_is_still_refused_whatever_it_sends() -> None:
    decision = header_identity(
        {"X-Forwarded-For": "127.0.0.1", "X-Forwarded-User": "adam"},
        "198.51.100.7",
        proxy_secret=None,
        trusted_proxies=("10.0.0.0/8",),
        trust_role_header=True,
        role_of=lambda _n: "admin",
    )
    assert decision.refusal is not None and decision.name is None


def test_trusted_proxy_networks() -> None:
    assert peer_is_trusted(None, ())
    assert peer_is_trusted("::ffff:127.0.0.1", ())
    assert peer_is_trusted("127.0.0.2", ())
    assert peer_is_trusted("10.1.2.3", ("10.0.0.0/8",))
    assert peer_is_trusted("10.0.0.5", ("10.0.0.5",))
    assert not peer_is_trusted("192.168.1.5", ("10.0.0.0/8",))
    assert not peer_is_trusted("not-an-ip", ())
