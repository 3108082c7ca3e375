"""Role gating in password mode (AppTest): pages a role may not open are not even registered.

``app.py`` builds ``st.navigation`` from ``core.studio.auth.pages_for(role)``, so a researcher page
is unreachable for an annotator by any URL: Streamlit only routes to registered pages. The
real-browser version (typing the URLs in chromium) is in ``tests/e2e/test_security.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.studio.auth import PAGE_MIN_ROLE, hash_password

APP = str(PROJECT_ROOT / "app.py")
RESEARCH_PAGES = ("inspect", "grip", "runs", "data", "watch", "construction")
USERS = {"ann": "annotator", "res": "researcher", "adm": "admin"}


@pytest.fixture
def password_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    creds = tmp_path / "users.json"
    users = {u: {"role": r, "password": hash_password(f"pw-{u}")} for u, r in USERS.items()}
    creds.write_text(json.dumps({"users": users}))
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFTBENCH_AUTH", "password")
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))
    return creds


def _sign_in(user: str, password: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    at.text_input(key="login-name").input(user)
    at.text_input(key="login-password").input(password)
    at.button[0].click().run()
    assert not at.exception
    return at


def _switch(at: AppTest, page: str) -> AppTest:
    return at.switch_page(str(PROJECT_ROOT / "pages" / f"{page}.py")).run()


def test_signed_out_visitor_reaches_no_page(password_mode: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert at.title[0].value.startswith("Sign in")
    for page in ("home", *RESEARCH_PAGES):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            _switch(at, page)


def test_annotator_cannot_open_researcher_pages(password_mode: Path) -> None:
    at = _sign_in("ann", "pw-ann")
    assert at.session_state["auth_user"] == {"name": "ann", "role": "annotator"}
    for page in RESEARCH_PAGES:
        with pytest.raises(ValueError, match="Could not find a navigation page") as info:
            _switch(at, page)
        assert f"pages/{page}.py" not in str(info.value).split("Known pages")[1]
    _switch(at, "play_user")  # … while the annotator's own pages do open
    assert not at.exception


def test_wrong_password_gives_no_role(password_mode: Path) -> None:
    at = _sign_in("res", "pw-ann")
    assert "auth_user" not in at.session_state
    with pytest.raises(ValueError):
        _switch(at, "inspect")


@pytest.mark.parametrize("user", ["res", "adm"])
def test_researcher_and_admin_reach_research_pages(password_mode: Path, user: str) -> None:
    at = _sign_in(user, f"pw-{user}")
    for page in ("inspect", "runs"):
        _switch(at, page)
        assert not at.exception, (page, at.exception)


def test_every_research_page_needs_at_least_the_researcher_role() -> None:
    for page in RESEARCH_PAGES:
        assert PAGE_MIN_ROLE[page] in ("researcher", "admin"), page
