"""Security in a real browser: role gating by URL, and user text rendered inert.

* Password mode, signed in as an annotator: researcher pages typed as URLs (a fresh load, and
  an in-session history navigation that keeps the sign-in) never render; the default page or
  the sign-in page shows instead.
* HTML/JS put into a stored user reply, an agent message, a persona bio and an imported session
  is shown literally: no script runs (``window.__pwned`` stays undefined) and no dialog fires.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest

from core.engine import episode
from core.envs.mock import mock_graph, mock_samples
from core.model.actions import Ask, Propose
from core.protocol.personas import load_persona
from core.store import Store
from core.studio.auth import hash_password
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

XSS = "<script>window.__pwned=1</script><img src=x onerror=alert(1)>"
RESEARCH_PATHS = ("/inspect", "/grip", "/runs", "/data")


# -- role gating --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def password_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("sec_pw_home")
    creds = home / "users.json"
    users = {
        "ann": {"role": "annotator", "password": hash_password("ann-pw")},
        "res": {"role": "researcher", "password": hash_password("res-pw")},
    }
    creds.write_text(json.dumps({"users": users}))
    Store.open(home / "driftbench.db").close()
    proc, url = start_studio(
        home, extra_env={"DRIFTBENCH_AUTH": "password", "DRIFTBENCH_CREDENTIALS": str(creds)}
    )
    yield url
    proc.terminate()
    proc.wait(timeout=15)


def _sign_in(tab, url: str, user: str, password: str) -> None:  # type: ignore[no-untyped-def]
    tab.goto(url)
    wait_for_app(tab)
    tab.get_by_role("textbox", name="User name").fill(user)
    tab.get_by_role("textbox", name="Password").fill(password)
    tab.get_by_role("button", name="Sign in").click()
    tab.get_by_text("Signed in as").first.wait_for()
    wait_for_app(tab)


def _navigate_in_session(tab, path: str) -> None:  # type: ignore[no-untyped-def]
    """Change the URL as a sidebar link would: same session, so the sign-in is kept."""
    tab.evaluate(
        "(p) => { history.pushState({}, '', p);"
        " window.dispatchEvent(new PopStateEvent('popstate', {state: {}})); }",
        path,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # let the rerun start before waiting for it to end
        state = tab.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
        if state == "running":
            break
        time.sleep(0.05)
    wait_for_app(tab)


def _main_text(tab) -> str:  # type: ignore[no-untyped-def]
    return str(tab.locator('[data-testid="stMain"]').inner_text())


def test_annotator_cannot_open_researcher_pages_by_url(password_studio: str, tab) -> None:  # type: ignore[no-untyped-def]
    url = password_studio
    _sign_in(tab, url, "ann", "ann-pw")
    nav = tab.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "Play as user" in nav
    for title in ("Inspect", "GRIP", "Runs", "Data", "Watch"):
        assert title not in nav
    for path in RESEARCH_PATHS:
        _navigate_in_session(tab, path)
        assert not tab.url.endswith(path), (path, tab.url)
        text = _main_text(tab)
        assert "Signed in as" in text and "role annotator" in text  # the default page instead
        assert "Search this transcript" not in text and "GRIP" not in text.split("\n")[0]
    _navigate_in_session(tab, "/play_user")  # the mechanism works for pages the role has
    assert tab.url.endswith("/play_user") and "Play as user" in _main_text(tab)
    for path in ("/inspect", "/data"):  # a fresh load of the URL: the sign-in cookie keeps
        tab.goto(url + path)  # the annotator signed in, and the role still gates the page
        wait_for_app(tab)
        text = _main_text(tab)
        assert "Signed in as" in text and "role annotator" in text
        assert "Search this transcript" not in text and "Store health" not in text
    screenshot(tab, "security_role_gating")


def test_researcher_reaches_the_same_urls(password_studio: str, tab) -> None:  # type: ignore[no-untyped-def]
    _sign_in(tab, password_studio, "res", "res-pw")
    _navigate_in_session(tab, "/inspect")
    assert tab.url.endswith("/inspect")
    assert "Signed in as" not in _main_text(tab)


# -- inert user text ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def xss_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """A studio whose store holds HTML/JS in a reply, an agent message, a bio and a session."""
    home = tmp_path_factory.mktemp("sec_xss_home")
    store = Store.open(home / "driftbench.db")
    persona = load_persona("rational").model_copy(update={"bio": "bio " + XSS, "name": XSS})
    sample, graph = mock_samples()[0], mock_graph()
    ended = episode.start(
        store, sample, persona, 0, "human", graph=graph, method="A2", user_voice="human"
    )
    episode.step(store, ended, Ask(text="agent " + XSS))
    episode.respond(store, ended, "reply " + XSS)
    episode.step(store, ended, Propose(text="answer " + XSS))
    waiting = episode.start(
        store, sample, persona, 1, "human", graph=graph, method="A2", user_voice="human"
    )
    episode.step(store, waiting, Ask(text="agent " + XSS))
    from core.studies.sessions import import_sessions

    sessions = home / "s.jsonl"
    line = {"session_id": "xss-1", "messages": [{"role": "user", "content": "session " + XSS}]}
    sessions.write_text(json.dumps(line) + "\n")
    assert import_sessions(store, sessions).imported == 1
    store.close()
    proc, url = start_studio(home)
    yield url, ended, waiting
    proc.terminate()
    proc.wait(timeout=15)


def _watch_for_script(tab) -> list[str]:  # type: ignore[no-untyped-def]
    dialogs: list[str] = []

    def on_dialog(d) -> None:  # type: ignore[no-untyped-def]
        dialogs.append(d.message)
        d.dismiss()

    tab.on("dialog", on_dialog)
    return dialogs


def _assert_inert(tab, dialogs: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert tab.evaluate("() => window.__pwned") is None
    assert dialogs == []
    assert tab.locator("[data-testid='stMain'] script").count() == 0
    assert tab.locator("[data-testid='stMain'] img[src='x']").count() == 0


def test_html_in_a_reply_and_an_agent_message_is_shown_literally(
    xss_studio: tuple[str, str, str], tab
) -> None:  # type: ignore[no-untyped-def]
    url, ended, _ = xss_studio
    dialogs = _watch_for_script(tab)
    tab.goto(f"{url}/inspect?episode={ended}&turn=1")
    wait_for_app(tab)
    tab.get_by_text(f"episode {ended}").first.wait_for()
    tab.get_by_text("reply " + XSS, exact=True).first.wait_for()
    tab.get_by_text("agent " + XSS, exact=True).first.wait_for()
    time.sleep(0.5)  # give an onerror handler the chance to fire
    _assert_inert(tab, dialogs)
    screenshot(tab, "security_inspect_inert")


def test_html_in_a_persona_bio_is_shown_literally(xss_studio: tuple[str, str, str], tab) -> None:  # type: ignore[no-untyped-def]
    url, _, waiting = xss_studio
    dialogs = _watch_for_script(tab)
    tab.goto(f"{url}/play_user?episode={waiting}")
    wait_for_app(tab)
    # the card names the persona (its bio invents a person, so the card shows its manner)
    tab.get_by_text(re.compile(re.escape("Persona: " + XSS))).first.wait_for()
    time.sleep(0.5)
    _assert_inert(tab, dialogs)


def test_html_in_an_imported_session_is_inert(xss_studio: tuple[str, str, str], tab) -> None:  # type: ignore[no-untyped-def]
    url, _, _ = xss_studio
    dialogs = _watch_for_script(tab)
    tab.goto(f"{url}/sessions")
    wait_for_app(tab)
    time.sleep(0.5)
    _assert_inert(tab, dialogs)
