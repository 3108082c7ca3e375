"""The auth seam: who is using the studio and which role they have.

Mode (``DRIFTBENCH_AUTH``, parsed with every other studio variable in ``core.studio.env``):

- ``none`` — local single user with the admin role (the default);
- ``password`` — accounts in the hashed credentials file ``DRIFTBENCH_CREDENTIALS``. A sign-in
  issues a signed, expiring token (``core.studio.session_token``) that the browser keeps in a
  cookie, so a reload, a deep link or a second tab stays signed in; signing out revokes it;
- ``oidc`` — ``st.login`` with an OIDC provider configured in ``.streamlit/secrets.toml``;
  roles come from the credentials file keyed by e-mail (default annotator);
- ``header`` — behind a reverse proxy that sets ``X-Forwarded-User``. Requests must carry the
  proxy's shared secret (``DRIFTBENCH_PROXY_SECRET``) or come from loopback or a declared proxy
  address (``DRIFTBENCH_TRUSTED_PROXIES``); the role comes from the credentials file (default
  annotator) unless ``DRIFTBENCH_TRUST_ROLE_HEADER=1`` says the proxy sets ``X-Forwarded-Role``.

Pages read :func:`current_user`; none of them knows the mode.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.studio.auth import (
    Credentials,
    authenticate,
    header_identity,
    load_credentials,
    session_account,
)
from core.studio.env import StudioEnv, studio_env
from core.studio.session_token import (
    COOKIE_NAME,
    Claims,
    Revocations,
    account_binding,
    clear_cookie_script,
    issue,
    load_secret,
    set_cookie_script,
    verify,
)
from core.studio.signin_throttle import SignInThrottle

_STATE_USER = "auth_user"
_STATE_CLAIMS = "auth_claims"
_STATE_TOKEN = "auth_token"
_STATE_SET_COOKIE = "auth_set_cookie"
_STATE_CLEAR_COOKIE = "auth_clear_cookie"
_STATE_REFUSAL = "auth_refusal"


@dataclass(frozen=True)
class User:
    """The signed-in person."""

    name: str
    role: str


def settings() -> StudioEnv:
    """The studio's parsed environment (see ``core.studio.env``)."""
    return studio_env()


def auth_mode() -> str:
    """Return the configured auth mode."""
    return settings().auth


@st.cache_resource(show_spinner=False, max_entries=4)
def _credentials(path: str, version: tuple[int, int, int]) -> Credentials:
    return load_credentials(Path(path))


@st.cache_resource(show_spinner=False)
def throttle() -> SignInThrottle:
    """The studio process's failed sign-in bookkeeping (shared by every session)."""
    return SignInThrottle()


@st.cache_resource(show_spinner=False)
def _revocations(path: str) -> Revocations:
    return Revocations(Path(path))


@st.cache_resource(show_spinner=False)
def _secret(configured: str | None, path: str) -> bytes:
    return load_secret(configured, Path(path))


def credentials() -> Credentials | None:
    """Return the credentials file's accounts, if one is configured."""
    path = settings().credentials
    if path is None or not path.exists():
        return None
    st_ = path.stat()  # any rewrite (mtime, size or a replaced file) is read again
    return _credentials(str(path), (st_.st_mtime_ns, st_.st_size, st_.st_ino))


def _role_from_file(name: str, default: str = "annotator") -> str:
    creds = credentials()
    if creds and name in creds.users:
        return creds.users[name].role
    return default


# -- what the browser sent (functions so tests can stand in for a browser) ---------------------
def request_cookies() -> Mapping[str, str]:
    """Cookies of the request that opened this session."""
    return dict(st.context.cookies)


def request_headers() -> Mapping[str, str]:
    """Headers of the request that opened this session."""
    return dict(st.context.headers)


def request_peer() -> str | None:
    """The connection's peer address (None = loopback, as ``st.context.ip_address``)."""
    return st.context.ip_address


# -- password-mode sessions ----------------------------------------------------------------------
def _binding(name: str) -> str | None:
    creds = credentials()
    account = creds.users.get(name) if creds else None
    return account_binding(account.password, account.role) if account else None


def _account_of(env: StudioEnv, token: str | None) -> tuple[str, str] | None:
    """Who ``token`` signs in *now* (credentials file re-read when it changed)."""
    return session_account(
        token,
        credentials(),
        _secret(env.session_secret, str(env.session_secret_file)),
        revoked=_revocations(str(env.revocations_file)).is_revoked,
    )


def _session_from_cookie(env: StudioEnv) -> User | None:
    token = request_cookies().get(COOKIE_NAME)
    account = _account_of(env, token)
    if account is None or token is None:
        return None
    user = User(name=account[0], role=account[1])
    st.session_state[_STATE_USER] = {"name": user.name, "role": user.role}
    st.session_state[_STATE_TOKEN] = token
    claims = verify(
        token,
        _secret(env.session_secret, str(env.session_secret_file)),
        _binding,
    )
    if claims is not None:
        st.session_state[_STATE_CLAIMS] = claims
    return user


def _end_session() -> None:
    for key in (_STATE_USER, _STATE_CLAIMS, _STATE_TOKEN, _STATE_SET_COOKIE):
        st.session_state.pop(key, None)
    st.session_state[_STATE_CLEAR_COOKIE] = True


def _password_user(env: StudioEnv) -> User | None:
    if st.session_state.get(_STATE_USER):
        # every page run checks the token again: a removed account, a password or role
        # change, expiry or a sign-out in another tab ends this sign-in now
        account = _account_of(env, st.session_state.get(_STATE_TOKEN))
        if account is None:
            _end_session()
            return None
        st.session_state[_STATE_USER] = {"name": account[0], "role": account[1]}
        return User(name=account[0], role=account[1])
    if st.session_state.get(_STATE_CLEAR_COOKIE):
        return None  # signed out (or ended): the old cookie of this session's request is dead
    return _session_from_cookie(env)


def current_user() -> User | None:
    """Return the current user, or None when nobody is signed in yet."""
    env = settings()
    mode = env.auth
    if mode == "none":
        return User(name=os.environ.get("USER", "local"), role="admin")
    if mode == "password":
        return _password_user(env)
    if mode == "header":
        decision = header_identity(
            request_headers(),
            request_peer(),
            proxy_secret=env.proxy_secret,
            trusted_proxies=env.trusted_proxies,
            trust_role_header=env.trust_role_header,
            role_of=_role_from_file,
        )
        st.session_state[_STATE_REFUSAL] = decision.refusal
        if decision.name is None or decision.role is None:
            return None
        return User(name=decision.name, role=decision.role)
    if mode == "oidc":
        if not st.user.is_logged_in:
            return None
        email = str(st.user.get("email") or st.user.get("sub") or "")
        return User(name=email, role=_role_from_file(email))
    raise RuntimeError(f"unknown DRIFTBENCH_AUTH mode '{mode}'")


def can_sign_out() -> bool:
    """Whether this mode has a sign-out (password and OIDC)."""
    return auth_mode() in ("password", "oidc")


def cookie_scripts() -> None:
    """Render the pending set/clear-cookie script of this session (password mode).

    Called by ``app.py`` on every run: the browser runs a script once per page load, and the
    element stays the same between reruns.
    """
    token = st.session_state.get(_STATE_SET_COOKIE)
    if token:
        st.html(set_cookie_script(token, settings().session_ttl_s), unsafe_allow_javascript=True)
    elif st.session_state.get(_STATE_CLEAR_COOKIE):
        st.html(clear_cookie_script(), unsafe_allow_javascript=True)


def _signed_in(name: str, role: str) -> None:
    env = settings()
    binding = _binding(name)
    st.session_state[_STATE_USER] = {"name": name, "role": role}
    st.session_state.pop(_STATE_CLEAR_COOKIE, None)
    if binding is None:
        return
    token, claims = issue(
        name,
        binding,
        _secret(env.session_secret, str(env.session_secret_file)),
        ttl_s=env.session_ttl_s,
    )
    st.session_state[_STATE_CLAIMS] = claims
    st.session_state[_STATE_TOKEN] = token
    st.session_state[_STATE_SET_COOKIE] = token


def login_page() -> None:
    """Render the sign-in form for the configured mode.

    It is served at the URL the person asked for (``app.py`` routes every page path here while
    nobody is signed in), so the page and its query parameters are still there after signing in.
    """
    st.title("Sign in to Drift-Bench++ Studio")
    mode = auth_mode()
    if mode == "oidc":
        st.button("Sign in with your identity provider", on_click=st.login, type="primary")
        return
    if mode == "header":
        refusal = st.session_state.get(_STATE_REFUSAL)
        st.error(refusal or "This studio expects its reverse proxy to identify you.")
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
            _signed_in(name, role)
            st.rerun()


def logout() -> None:
    """Sign the current user out (password and OIDC modes); the cookie is revoked and cleared."""
    if auth_mode() == "oidc":
        st.logout()
    claims = st.session_state.pop(_STATE_CLAIMS, None)
    if isinstance(claims, Claims):
        _revocations(str(settings().revocations_file)).revoke(claims)
    _end_session()
