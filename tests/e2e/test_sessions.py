"""Sign-ins that last (password mode) in Debian chromium: reload, deep link, a second tab.

The studio runs in password mode over the initialised e2e store. A person who opens a deep
link while signed out sees the sign-in form at that URL and lands on the page they asked for
(with its query parameters); a reload and a new tab of the same browser stay signed in (the
signed session cookie); signing out ends it for every tab; a forged or edited cookie is
ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.store import Store
from core.studio.auth import hash_password
from core.studio.session_token import COOKIE_NAME
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def pw_studio(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    creds = tmp_path_factory.mktemp("sessions_creds") / "users.json"
    users = {
        "res": {"role": "researcher", "password": hash_password("res-pw")},
        "ann": {"role": "annotator", "password": hash_password("ann-pw")},
    }
    creds.write_text(json.dumps({"users": users}))
    proc, url = start_studio(
        studio_home,
        extra_env={"DRIFTBENCH_AUTH": "password", "DRIFTBENCH_CREDENTIALS": str(creds)},
    )
    yield url
    proc.terminate()
    proc.wait(timeout=15)


def _main(tab: Any) -> str:
    return str(tab.locator('[data-testid="stMain"]').inner_text())


def _sign_in(tab: Any, user: str, password: str) -> None:
    tab.get_by_role("textbox", name="User name").fill(user)
    tab.get_by_role("textbox", name="Password").fill(password)
    tab.get_by_role("button", name="Sign in").click()


def _signed_in_as(tab: Any, user: str) -> None:
    tab.locator('[data-testid="stSidebar"]').get_by_text(f"{user} ·").wait_for()
    tab.get_by_role("button", name="Sign out").wait_for()


def _cookie(context: Any) -> str | None:
    return next((c["value"] for c in context.cookies() if c["name"] == COOKIE_NAME), None)


def test_deep_link_reload_and_second_tab_keep_the_sign_in(
    pw_studio: str, studio_home: Path, chromium: Any
) -> None:
    store = Store.open(studio_home / "driftbench.db")
    eid = store.episode_rows(status="ended", limit=3)[2]["episode_id"]
    store.close()
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        # a deep link while signed out: the sign-in form at that URL, then the page itself
        tab.goto(f"{pw_studio}/inspect?episode={eid}")
        wait_for_app(tab)
        assert "Sign in to Drift-Bench++ Studio" in _main(tab)
        assert tab.url.endswith(f"/inspect?episode={eid}")
        _sign_in(tab, "res", "res-pw")
        _signed_in_as(tab, "res")
        tab.get_by_role("heading", name="Inspect").wait_for()
        tab.get_by_text(f"episode {eid}").first.wait_for()
        assert f"episode={eid}" in tab.url
        tab.wait_for_function(
            "(name) => document.cookie.includes(name + '=')", arg=COOKIE_NAME, timeout=10_000
        )
        token = _cookie(ctx)
        assert token and token.startswith("v1.")

        # reload: a new Streamlit session, still signed in, same page and episode
        tab.reload()
        wait_for_app(tab)
        _signed_in_as(tab, "res")
        assert "Sign in to Drift-Bench++ Studio" not in _main(tab)
        tab.get_by_text(f"episode {eid}").first.wait_for()

        # a second tab of the same browser, opened on another page by URL
        second = ctx.new_page()
        second.set_default_timeout(30_000)
        second.goto(f"{pw_studio}/grip")
        wait_for_app(second)
        _signed_in_as(second, "res")
        second.get_by_role("heading", name="GRIP dashboard").wait_for()
        screenshot(second, "sessions_second_tab")

        # sign out in the first tab: the cookie is gone and the second tab is signed out on
        # its next load too (the token is revoked on the server)
        tab.get_by_role("button", name="Sign out").click()
        tab.get_by_role("textbox", name="User name").wait_for()
        tab.wait_for_function(
            "(name) => !document.cookie.includes(name + '=')", arg=COOKIE_NAME, timeout=10_000
        )
        second.reload()
        wait_for_app(second)
        assert "Sign in to Drift-Bench++ Studio" in _main(second)

        # the revoked token, put back by hand, is refused as well
        ctx.add_cookies([{"name": COOKIE_NAME, "value": token, "url": pw_studio}])
        tab.reload()
        wait_for_app(tab)
        assert "Sign in to Drift-Bench++ Studio" in _main(tab)
    finally:
        ctx.close()


def test_a_forged_cookie_is_ignored(pw_studio: str, chromium: Any) -> None:
    ctx = chromium.new_context()
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        tab.goto(pw_studio)
        wait_for_app(tab)
        _sign_in(tab, "ann", "ann-pw")
        _signed_in_as(tab, "ann")
        tab.wait_for_function(
            "(name) => document.cookie.includes(name + '=')", arg=COOKIE_NAME, timeout=10_000
        )
        token = _cookie(ctx)
        assert token is not None
        head, payload, mac = token.split(".")
        import base64

        body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        body["u"] = "res"  # claim to be the researcher
        forged = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
        ctx.clear_cookies()
        ctx.add_cookies(
            [{"name": COOKIE_NAME, "value": f"{head}.{forged}.{mac}", "url": pw_studio}]
        )
        tab.goto(f"{pw_studio}/inspect")
        wait_for_app(tab)
        assert "Sign in to Drift-Bench++ Studio" in _main(tab)
    finally:
        ctx.close()
