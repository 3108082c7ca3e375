"""The auth seam: who is using the studio and which role they have.

Mode (``DRIFTBENCH_AUTH``):

- ``none`` — local single user with the admin role (the default);
- ``password`` — accounts in the hashed credentials file ``DRIFTBENCH_CREDENTIALS``;
- ``oidc`` — ``st.login`` with an OIDC provider configured in ``.streamlit/secrets.toml``;
  roles come from the credentials file keyed by e-mail (default annotator);
- ``header`` — behind a trusted reverse proxy that sets ``X-Forwarded-User``. The role comes
  from the credentials file (default annotator); ``X-Forwarded-Role`` is honoured only when
  ``DRIFTBENCH_TRUST_ROLE_HEADER=1`` says the proxy strips any client-sent copy of it.

Pages read :func:`current_user`; none of them knows the mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.studio.auth import Credentials, authenticate, load_credentials
from core.studio.environment import settings
from core.studio.signin_throttle import SignInThrottle


@dataclass(frozen=True)
class User:
    """The signed-in person."""

    name: str
    role: str


def auth_mode() -> str:
    """Return the configured auth mode."""
    return settings().auth


@st.cache_resource(show_spinner=False)
def _credentials(path: str, mtime: float) -> Credentials:
    return load_credentials(Path(path))


@st.cache_resource(show_spinner=False)
def throttle() -> SignInThrottle:
    """The studio process's failed sign-in bookkeeping (shared by every session)."""
    return SignInThrottle()


def credentials() -> Credentials | None:
    """Return the credentials file's accounts, if one is configured."""
    path = settings().credentials
    if path is None or not path.exists():
        return None
    return _credentials(str(path), path.stat().st_mtime)


def _role_from_file(name: str, default: str = "annotator") -> str:
    creds = credentials()
    if creds and name in creds.users:
        return creds.users[name].role
    return default


def current_user() -> User | None:
    """Return the current user, or None when nobody is signed in yet."""
    mode = auth_mode()
    if mode == "none":
        return User(name=os.environ.get("USER", "local"), role="admin")
    if mode == "password":
        data = st.session_state.get("auth_user")
        return User(**data) if data else None
    if mode == "header":
        headers = st.context.headers
        name = headers.get("X-Forwarded-User")
        if not name:
            return None
        trusted = settings().trust_role_header
        role = headers.get("X-Forwarded-Role") if trusted else None
        return User(name=name, role=role or _role_from_file(name))
    if mode == "oidc":
        if not st.user.is_logged_in:
            return None
        email = str(st.user.get("email") or st.user.get("sub") or "")
        return User(name=email, role=_role_from_file(email))
    raise RuntimeError(f"unknown DRIFTBENCH_AUTH mode '{mode}'")


def login_page() -> None:
    """Render the sign-in form for the configured mode."""
    st.title("Sign in to Drift-Bench++ Studio")
    mode = auth_mode()
    if mode == "oidc":
        st.button("Sign in with your identity provider", on_click=st.login, type="primary")
        return
    if mode == "header":
        st.error("This studio expects a reverse proxy to identify you (X-Forwarded-User).")
        return
    creds = credentials()
    if creds is None:
        st.error("No credentials file: set DRIFTBENCH_CREDENTIALS to a file of hashed accounts.")
        return
    with st.form("login"):
        name = st.text_input("User name", key="login-name")
        password = st.text_input("Password", type="password", key="login-password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        guard = throttle()
        wait = guard.retry_after(name)
        if wait > 0:  # locked: the password is not even checked
            st.error(f"Too many failed attempts for this user name. Try again in {wait:.0f} s.")
            return
        role = authenticate(creds, name, password)
        if role is None:
            lock = guard.failed(name)
            st.error(
                "Unknown user name or wrong password."
                + (f" Too many failed attempts: locked for {lock:.0f} s." if lock else "")
            )
        else:
            guard.succeeded(name)
            st.session_state["auth_user"] = {"name": name, "role": role}
            st.rerun()


def logout() -> None:
    """Sign the current user out (password and OIDC modes)."""
    if auth_mode() == "oidc":
        st.logout()
    st.session_state.pop("auth_user", None)
